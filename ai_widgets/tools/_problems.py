"""What is wrong with a call's arguments: one list of problems, from which both the model's message and a form's
field errors (the widget's bench) are worded, so the two never say different things."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ai_widgets.outcome import ToolOutcome

__all__ = ["LISTED", "PROBLEMS_TOLD", "ArgumentProblem", "ArgumentProblems", "InvalidArguments"]

#: Problems told to the model per call of a tool built from a function: enough to act on, and a bound on what a
#: flood of bad values costs.
PROBLEMS_TOLD = 20
#: Problems told to the model per call of a tool built from a definition (its own JSON Schema), each at most
#: :data:`SCHEMA_DETAIL` characters.
SCHEMA_PROBLEMS_TOLD = 5
SCHEMA_DETAIL = 200
#: Problems worded one by one; those past them are only counted (by parameter): a list of 100,000 bad items is
#: answered at once, in a few lines, not item by item.
LISTED = 50


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One thing wrong with a call's arguments.

    Attributes:
        location: The path to the value, the top-level parameter first (``("to", "street")``); ``()`` for the
            arguments as a whole.
        detail: What is wrong, as the model is told it (``Field required``, ``Input should be a valid integer
            (got "two")``).
        field: The top-level parameter it is about, also for a required one that is missing (whose location is the
            arguments as a whole); ``None`` when it is about none.
    """

    location: tuple[str, ...]
    detail: str
    field: str | None

    @property
    def where(self) -> str:
        """The location as the model reads it: ``to.street``, or ``(arguments)``."""
        return ".".join(self.location) or "(arguments)"

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


@dataclass(frozen=True, slots=True)
class ArgumentProblems:
    """Everything wrong with a call's arguments: the first problems worded, the rest counted.

    Attributes:
        listed: The first problems (at most :data:`LISTED`), in order.
        more: How many problems come after ``listed``, by top-level parameter (``""``: about none).
        told: How many of ``listed`` the model is told, one by one.
        tells_more: Whether the model is also told how many more there are.
    """

    listed: tuple[ArgumentProblem, ...]
    more: Mapping[str, int]
    told: int
    tells_more: bool

    @property
    def count(self) -> int:
        """How many problems there are in all."""
        return len(self.listed) + sum(self.more.values())

    def message(self, tool_name: str) -> str:
        """What the model is told: ``Invalid arguments for <tool>: <problem>; <problem>. Correct them and call
        again.``"""
        said = [str(problem) for problem in self.listed[: self.told]]
        untold = self.count - self.told
        if self.tells_more and untold > 0:
            said.append(f"and {untold:,} more problems of the same kind")
        return f"Invalid arguments for {tool_name}: " + "; ".join(said) + ". Correct them and call again."

    @classmethod
    def from_validation_error(cls, exc: ValidationError) -> ArgumentProblems:
        """The problems pydantic found (a tool built from a function): each with the value it got, briefly."""
        errors = exc.errors(include_url=False, include_input=True)
        listed = []
        for error in errors[:LISTED]:
            location = tuple(str(step) for step in error["loc"])
            detail = error["msg"]
            if error["type"] != "missing":
                detail += f" (got {json.dumps(brief(error.get('input')), default=repr, ensure_ascii=False)[:80]})"
            listed.append(ArgumentProblem(location, detail, location[0] if location else None))
        more = Counter(str(error["loc"][0]) if error["loc"] else "" for error in errors[LISTED:])
        return cls(tuple(listed), more, told=PROBLEMS_TOLD, tells_more=True)

    @classmethod
    def from_schema_errors(cls, errors: Sequence[Any]) -> ArgumentProblems:
        """The problems ``jsonschema`` found (a tool built from a definition), in the order given; a required
        property that is missing is about that property."""
        listed = []
        for error in errors[:LISTED]:
            location = tuple(str(step) for step in error.absolute_path)
            detail = error.message[:SCHEMA_DETAIL]
            field = location[0] if location else None
            if not location and error.validator == "required" and isinstance(error.validator_value, list):
                missing = [n for n in error.validator_value if isinstance(n, str) and f"{n!r} is a required" in detail]
                if missing:  # "'city' is a required property": the field that is missing
                    field = missing[0]
            listed.append(ArgumentProblem(location, detail, field))
        more = Counter(str(error.absolute_path[0]) if error.absolute_path else "" for error in errors[LISTED:])
        return cls(tuple(listed), more, told=SCHEMA_PROBLEMS_TOLD, tells_more=False)


@dataclass(frozen=True, slots=True)
class InvalidArguments:
    """Arguments that do not bind.

    Attributes:
        outcome: The failure the model is told.
        problems: What is wrong, value by value; ``None`` when it is not about values (not JSON, a schema that
            cannot be used).
    """

    outcome: ToolOutcome
    problems: ArgumentProblems | None = None


def brief(value: Any, depth: int = 0) -> Any:
    """``value`` cut down to what an 80-character preview can show (a 1 MB string or 50,000 items cost nothing)."""
    if isinstance(value, str):
        return value[:100]
    if depth >= 3:
        return "…"
    if isinstance(value, (list, tuple)):
        return [brief(item, depth + 1) for item in value[:6]]
    if isinstance(value, dict):
        return {str(key)[:40]: brief(item, depth + 1) for key, item in list(value.items())[:6]}
    return value
