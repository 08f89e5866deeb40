"""Approval: who decides whether a tool call may run, and what was decided."""

from __future__ import annotations

import threading
from enum import Enum
from typing import Protocol, runtime_checkable

from ai_widgets.tools import ToolDefinition, ToolInvocation, ToolRisk

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


def default_approval_reason(definition: ToolDefinition) -> str | None:
    """Why :class:`DefaultApprovalPolicy` asks a person before every call of this tool, or ``None`` when it runs
    calls unasked (until a person chose "allow always", which the policy remembers per session)."""
    reasons = []
    if definition.risk is ToolRisk.DESTRUCTIVE:
        reasons.append("its risk is destructive")
    if definition.requires_approval:
        reasons.append("it is marked requires_approval")
    return " and ".join(reasons) or None


class DefaultApprovalPolicy:
    """Asks for every destructive tool and every tool that ``requires_approval``; remembers "allow always".

    "Allow always" is remembered per policy instance, that is per session. Subclass and override
    :meth:`requires_approval` to decide on the arguments or the user, calling ``super()`` to keep the rest.
    """

    def __init__(self) -> None:
        self._allowed_always: set[str] = set()
        self._lock = threading.Lock()

    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool | str:
        """See :class:`ApprovalPolicy`."""
        if default_approval_reason(definition) is None:
            return False
        return not self.is_allowed_always(definition.name)

    def record_decision(
        self, definition: ToolDefinition, invocation: ToolInvocation, decision: ApprovalDecision
    ) -> None:
        """See :class:`ApprovalPolicy`."""
        if decision is ApprovalDecision.APPROVED_ALWAYS:
            with self._lock:
                self._allowed_always.add(definition.name.casefold())

    def is_allowed_always(self, tool_name: str) -> bool:
        """Whether a person chose "allow always" for this tool."""
        with self._lock:
            return tool_name.casefold() in self._allowed_always

    @property
    def allowed_always(self) -> frozenset[str]:
        """The tools allowed always (names case-folded)."""
        with self._lock:
            return frozenset(self._allowed_always)

    def revoke(self, tool_name: str) -> bool:
        """Forgets "allow always" for a tool; returns whether it was allowed."""
        with self._lock:
            key = tool_name.casefold()
            found = key in self._allowed_always
            self._allowed_always.discard(key)
            return found
