"""The session's switch that lets calls run without asking ("Run code without asking"): which tools it covers, and
the reason each call it spares is marked with."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ai_widgets.tools import ToolDefinition

__all__ = ["CODE_TOOLS", "UnaskedRule"]

#: The selection of every tool that runs code (a tool with ``code_arguments``: ``run_python``).
CODE_TOOLS = "code"


@dataclass(frozen=True, slots=True)
class UnaskedRule:
    """Tools whose calls run without asking, and why.

    Attributes:
        names: The tools it covers, by lower-cased name; ``None``: every tool with ``code_arguments``.
        reason: What each spared call is marked with.
    """

    names: frozenset[str] | None
    reason: str

    @classmethod
    def of(cls, tools: Iterable[str] | str, reason: str) -> UnaskedRule:
        """The rule for ``tools`` (names, or :data:`CODE_TOOLS`), checked.

        Raises:
            ValueError: ``reason`` is empty, ``tools`` names nothing, or a name is not text.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError("running without asking needs a reason (non-empty text): each spared call shows it")
        if tools == CODE_TOOLS:
            return cls(None, reason.strip())
        if isinstance(tools, str):
            raise ValueError(f"tools must be tool names or {CODE_TOOLS!r}, not the text {tools!r}")
        names = list(tools)
        if not names or not all(isinstance(name, str) and name for name in names):
            raise ValueError("tools must name at least one tool, each by its name (text)")
        return cls(frozenset(name.lower() for name in names), reason.strip())

    def reason_for(self, definition: ToolDefinition) -> str | None:
        """Why a call of ``definition`` runs without asking, or ``None`` when this rule does not cover it."""
        if self.names is None:
            return self.reason if definition.code_arguments else None
        return self.reason if definition.name.lower() in self.names else None
