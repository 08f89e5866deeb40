"""Approval: who decides whether a tool call may run, and what was decided."""

from __future__ import annotations

import threading
from enum import Enum
from typing import Protocol, runtime_checkable

from ai_widgets.tools import ToolDefinition, ToolInvocation
from ai_widgets.tools._definition import default_approval_reason

__all__ = [
    "ApprovalDecision",
    "ApprovalError",
    "ApprovalPolicy",
    "DefaultApprovalPolicy",
    "default_approval_reason",
]


class ApprovalDecision(str, Enum):
    """A person's decision on a call."""

    APPROVED = "approved"
    APPROVED_ALWAYS = "approved_always"
    REJECTED = "rejected"


class ApprovalError(ValueError):
    """An approval that cannot be taken: unknown call, a call not waiting, or a second decision."""


@runtime_checkable
class ApprovalPolicy(Protocol):
    """Decides which calls need a person's decision, and learns from the decisions made.

    A policy belongs to one session (one person); never share one between users.
    """

    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool | str:
        """Whether this call needs a decision: ``False``, ``True``, or the question to show (implies ``True``)."""
        ...

    def record_decision(
        self, definition: ToolDefinition, invocation: ToolInvocation, decision: ApprovalDecision
    ) -> None:
        """Called after a person decided on a call of this tool."""
        ...


class DefaultApprovalPolicy:
    """Asks for every destructive tool and every tool that ``requires_approval``; remembers "allow always".

    "Allow always" is remembered per policy instance, that is per session, for the tool as the person saw it: a
    tool whose definition changes afterwards (an MCP server that rewrites a tool's description or schema, a tool
    redefined with other parameters) asks again. Subclass and override :meth:`requires_approval` to decide on the
    arguments or the user, calling ``super()`` to keep the rest.
    """

    def __init__(self) -> None:
        # Case-folded name -> the definition the person allowed always.
        self._allowed_always: dict[str, ToolDefinition] = {}
        self._lock = threading.Lock()

    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool | str:
        """See :class:`ApprovalPolicy`."""
        if default_approval_reason(definition) is None:
            return False
        with self._lock:
            allowed = self._allowed_always.get(definition.name.casefold())
        if allowed is None:
            return True
        if allowed != definition:
            return (
                f"{definition.title or definition.name} changed since you allowed it always "
                f"(its {_changes(allowed, definition)}): allow it again?"
            )
        return False

    def record_decision(
        self, definition: ToolDefinition, invocation: ToolInvocation, decision: ApprovalDecision
    ) -> None:
        """See :class:`ApprovalPolicy`."""
        if decision is ApprovalDecision.APPROVED_ALWAYS:
            with self._lock:
                self._allowed_always[definition.name.casefold()] = definition

    def is_allowed_always(self, tool_name: str, definition: ToolDefinition | None = None) -> bool:
        """Whether a person chose "allow always" for this tool (and, given its current ``definition``, for this
        definition of it)."""
        with self._lock:
            allowed = self._allowed_always.get(tool_name.casefold())
        return allowed is not None and (definition is None or allowed == definition)

    @property
    def allowed_always(self) -> frozenset[str]:
        """The tools allowed always (names case-folded)."""
        with self._lock:
            return frozenset(self._allowed_always)

    def revoke(self, tool_name: str) -> bool:
        """Forgets "allow always" for a tool; returns whether it was allowed."""
        with self._lock:
            return self._allowed_always.pop(tool_name.casefold(), None) is not None


_WHAT_CHANGED = (
    ("description", "description"),
    ("parameters", "input schema"),
    ("annotations", "annotations"),
    ("risk", "risk"),
    ("title", "title"),
    ("requires_approval", "approval setting"),
)


def _changes(before: ToolDefinition, now: ToolDefinition) -> str:
    """What differs between two definitions of a tool, in words (``description and input schema``)."""
    changed = [words for field, words in _WHAT_CHANGED if getattr(before, field) != getattr(now, field)]
    if not changed:
        return "definition"
    return changed[0] if len(changed) == 1 else ", ".join(changed[:-1]) + " and " + changed[-1]
