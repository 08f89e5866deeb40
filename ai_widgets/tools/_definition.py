"""What the model and the card are told about a tool: its name, description, schema and risk, and whether the
default approval rule asks a person before a call."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NAME_PATTERN", "HasDefinition", "ToolDefinition", "ToolRisk", "default_approval_reason", "definition_of"]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolRisk(str, Enum):
    """How much harm a call can do; ``DESTRUCTIVE`` tools ask for approval by default."""

    READ_ONLY = "read_only"
    NORMAL = "normal"
    DESTRUCTIVE = "destructive"


class ToolDefinition(BaseModel):
    """What the model is told about a tool, and what its card shows.

    Attributes:
        name: The name the model calls it by (letters, digits, ``_`` and ``-``; at most 64).
        description: What the tool does, for the model.
        parameters: The JSON Schema of its arguments (an object schema).
        title: A human title for the card; the name is shown when ``None``.
        icon: A short icon for the card (an emoji or a single character).
        risk: How much harm a call can do.
        requires_approval: Whether every call needs a person's decision, whatever the risk.
        sequential: Whether calls of this tool run alone rather than concurrently with other calls.
        annotations: What its source claims about it (an MCP server's tool annotations, as it sent them), kept so
            that a change of them is seen; claims, never trusted by themselves.
        described_by: Who wrote its description and schema when it is not this Python code (an MCP server, by
            name), so that :meth:`~ai_widgets.tools.Tool.check` says whose they are rather than advising a docstring.
        app: The ``ui://`` resource of an MCP App its card shows (the tool's ``_meta.ui.resourceUri``), or ``None``.
            The card shows the app in a sandboxed frame; the model is never told of it.
        code_arguments: Arguments the card shows as code, by name, with their language (``{"code": "python"}``):
            monospace with line numbers, and edited as code before Allow. The model is never told of it.
        unasked: Why calls of this tool run without asking, whatever the approval policy says (e.g.
            ``"KernelTools(ask='never')"``), or ``None``. Set in code only (never from a server's listing, a history
            file or a notebook); every call it spares is marked with it (``ToolCallPart.unasked_reason``) and the
            card says so. A call a transport pauses for the person's decision still asks.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    title: str | None = None
    icon: str | None = None
    risk: ToolRisk = ToolRisk.NORMAL
    requires_approval: bool = False
    sequential: bool = False
    annotations: dict[str, Any] | None = None
    described_by: str | None = None
    app: str | None = None
    code_arguments: dict[str, str] = Field(default_factory=dict)
    unasked: str | None = None

    def model_post_init(self, context: Any, /) -> None:
        check_name(self.name)
        if self.parameters.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON Schema of type 'object'")
        if self.app is not None and not (isinstance(self.app, str) and self.app.startswith("ui://")):
            raise ValueError(f"tool {self.name!r}: app must be a ui:// URI, not {self.app!r}")
        properties = self.parameters.get("properties")
        for argument in self.code_arguments:
            if not isinstance(properties, dict) or argument not in properties:
                raise ValueError(f"tool {self.name!r}: code argument {argument!r} is not one of its parameters")
        if self.unasked is not None and not (isinstance(self.unasked, str) and self.unasked.strip()):
            raise ValueError(f"tool {self.name!r}: unasked must be a reason (non-empty text) or None")
        problem = too_deep(self.parameters)
        if problem is not None:
            raise ValueError(f"tool {self.name!r}: parameters {problem}")

    def model_schema(self) -> dict[str, Any]:
        """The definition as a provider needs it: name, description and parameters, nothing for the UI."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


class HasDefinition(Protocol):
    """Anything that carries a tool's definition (a ``Tool``): what the checks and the views read of it."""

    @property
    def definition(self) -> ToolDefinition: ...


def definition_of(item: HasDefinition | ToolDefinition) -> ToolDefinition:
    """The definition of a tool, or the definition itself."""
    return item if isinstance(item, ToolDefinition) else item.definition


def default_approval_reason(definition: ToolDefinition) -> str | None:
    """Why the default approval policy asks a person before every call of this tool, or ``None`` when it runs
    calls unasked (until a person chose "allow always", which the policy remembers per session).

    The rule belongs to the definition (its risk and ``requires_approval``), so a tool's display can say it
    without knowing the policy; ``ai_widgets.approval.DefaultApprovalPolicy`` applies it.
    """
    reasons = []
    if definition.risk is ToolRisk.DESTRUCTIVE:
        reasons.append("its risk is destructive")
    if definition.requires_approval:
        reasons.append("it is marked requires_approval")
    return " and ".join(reasons) or None


#: The deepest nesting of a parameters schema, as of any value kept in a conversation (``ai_widgets._safe``): the
#: JSON encoders, validators and checks that read a schema recurse, and none of them go deeper safely.
MAX_DEPTH = 200
MAX_NODES = 1_000_000


def too_deep(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` cannot be sent or checked (nested too deep, contains itself, or too big), or ``None``."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nest deeper than {MAX_DEPTH} levels (or contain themselves)"
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, (dict, list, tuple)):
                nodes += 1
                if nodes > MAX_NODES:
                    return f"hold more than {MAX_NODES:,} nested values"
                stack.append((child, depth + 1))
    return None


def check_name(name: str) -> None:
    if not NAME_PATTERN.match(name):
        raise ValueError(f"invalid tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' (what providers accept)")
