"""An agent's plan in a reply: a checklist of entries that the agent replaces whole as it goes (ACP's ``plan``
update), shown in place rather than appended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ai_widgets.messages._json import read_field

__all__ = ["MAX_PLAN_ENTRIES", "MAX_PLAN_ENTRY_CHARS", "PlanEntry", "PlanPart"]

#: The most entries a plan keeps, and the most characters of each: a plan is a checklist, never a document.
MAX_PLAN_ENTRIES = 200
MAX_PLAN_ENTRY_CHARS = 2_000

PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
PRIORITIES: tuple[str, ...] = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One step of a plan.

    Attributes:
        content: What the step is, as the agent wrote it.
        status: ``pending``, ``in_progress`` or ``completed``.
        priority: ``high``, ``medium`` or ``low``.

    Raises:
        ValueError: ``content`` is not text, or the status or priority is not one of the above.
    """

    content: str
    status: PlanStatus = "pending"
    priority: PlanPriority = "medium"

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise ValueError(f"a plan entry's content must be text, not {type(self.content).__name__}")
        if self.status not in STATUSES:
            raise ValueError(f"a plan entry's status must be one of {', '.join(STATUSES)}, not {self.status!r}")
        if self.priority not in PRIORITIES:
            raise ValueError(f"a plan entry's priority must be one of {', '.join(PRIORITIES)}, not {self.priority!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"content": self.content, "status": self.status, "priority": self.priority}

    @classmethod
    def from_dict(cls, data: Any) -> PlanEntry:
        """Rebuilds an entry from :meth:`to_dict`'s output.

        Raises:
            ValueError: A field is missing or wrong.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a plan entry must be an object, not {type(data).__name__}")
        return cls(
            read_field(data, "content", str),
            read_field(data, "status", str, "pending"),
            read_field(data, "priority", str, "medium"),
        )


class PlanPart:
    """An agent's plan in a reply: the latest checklist it sent. A reply has at most one; a new plan replaces its
    entries in place.

    Attributes:
        entries: The steps, in the agent's order.
    """

    __slots__ = ("entries",)
    kind: Literal["plan"] = "plan"

    def __init__(self, entries: tuple[PlanEntry, ...] = ()) -> None:
        self.entries = entries

    @property
    def done(self) -> int:
        """How many entries are completed."""
        return sum(entry.status == "completed" for entry in self.entries)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"kind": "plan", "entries": [entry.to_dict() for entry in self.entries]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlanPart:
        """Rebuilds a plan from :meth:`to_dict`'s output.

        Raises:
            ValueError: A field is missing or wrong.
        """
        return cls(tuple(PlanEntry.from_dict(entry) for entry in read_field(data, "entries", list)))

    def markdown(self) -> str:
        """The plan as a markdown checklist."""
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        return "\n".join(f"- {marks[entry.status]} {entry.content}" for entry in self.entries) or "*(empty plan)*"

    def __repr__(self) -> str:
        return f"PlanPart({len(self.entries)} entries, {self.done} done)"
