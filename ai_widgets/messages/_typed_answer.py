"""The mark on a text part that holds a typed answer's JSON (``send(..., output_type=...)``): the type's name, how
the answer's check went, and a lenient parse of its text that grows as the text streams, so a card can show the
object filling in key by key (the same parser and patches as a tool call's arguments)."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeAlias

from ai_widgets.arguments import ArgumentPatch, StreamingArguments
from ai_widgets.messages._json import read_field

__all__ = ["AnswerState", "TypedAnswer"]

#: ``unchecked``: arriving, or its turn ended before the check; ``valid``: it validated (``value`` holds the
#: object); ``invalid``: it was refused (``errors`` say why) and the turn ended with that error.
AnswerState: TypeAlias = Literal["unchecked", "valid", "invalid"]
STATES: frozenset[str] = frozenset(("unchecked", "valid", "invalid"))


class TypedAnswer:
    """That a text part is a typed answer, and how its check went.

    Args:
        type_name: The output type's name (``"City"``).
        refused: The errors of the turn's earlier answers that did not validate and were asked for again, oldest
            first, as the model was told them (the refused answers themselves are not kept in the reply).
        text: The part's text so far (fed to the parse).

    Attributes:
        type_name: The output type's name.
        state: ``unchecked``, ``valid`` or ``invalid`` (:data:`AnswerState`).
        value: Once ``valid``: the validated object as JSON (pydantic's JSON mode; for a type asked for wrapped,
            the value under ``"response"``), which is what the answer means once defaults and coercions applied.
            ``None`` otherwise, or when the object has no JSON form.
        errors: Once ``invalid``: why, as the model was told.
        refused: The errors of the earlier answers of the turn, oldest first.
    """

    __slots__ = ("_parse", "errors", "refused", "state", "type_name", "value")

    def __init__(self, type_name: str, *, refused: tuple[str, ...] = (), text: str = "") -> None:
        self.type_name = type_name
        self.refused = refused
        self.state: AnswerState = "unchecked"
        self.value: Any = None
        self.errors: str | None = None
        self._parse = StreamingArguments()
        if text:
            self._parse.feed(text)

    @property
    def parsed(self) -> dict[str, Any]:
        """The lenient parse of the text so far: always a dict, at least ``{}`` (see ``StreamingArguments``)."""
        return self._parse.value

    @property
    def parse_error(self) -> str | None:
        """Why the text is not a JSON object (prose, a code fence, a syntax error), or ``None``."""
        return self._parse.error

    def feed(self, delta: str) -> tuple[ArgumentPatch, ...]:
        """Adds a piece of the part's text; returns how it changed the parse (``[op, path, value]`` patches)."""
        self._parse.feed(delta)
        return self._parse.last_patches

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the parse is derived again from the part's text on load)."""
        return {
            "type_name": self.type_name,
            "state": self.state,
            "value": self.value,
            "errors": self.errors,
            "refused": list(self.refused),
        }

    @classmethod
    def from_dict(cls, data: Any, text: str) -> TypedAnswer:
        """Rebuilds the mark from :meth:`to_dict`'s output, for a part whose text is ``text``.

        Raises:
            ValueError: A field is missing or of the wrong type.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a typed answer must be an object, not {type(data).__name__}")
        refused = read_field(data, "refused", list, [])
        if not all(isinstance(errors, str) for errors in refused):
            raise ValueError("a typed answer's refused errors must be text")
        answer = cls(read_field(data, "type_name", str), refused=tuple(refused), text=text)
        state = read_field(data, "state", str, "unchecked")
        if state not in STATES:
            raise ValueError(f"unknown typed answer state {state!r}")
        answer.state = state  # checked against STATES just above
        answer.value = data.get("value")
        answer.errors = read_field(data, "errors", (str, type(None)), None)
        return answer

    def markdown(self, text: str) -> str:
        """The answer as a JSON code block (the validated object once valid, else ``text``, the part's text), after
        what its refused tries were told."""
        name = self.type_name
        notes = [f"> *Answer {n} did not match {name}:* {' '.join(e.split())}" for n, e in enumerate(self.refused, 1)]
        if self.state == "invalid":
            notes.append(f"> *This answer does not match {name}:* {' '.join((self.errors or '').split())}")
        shown = json.dumps(self.value, ensure_ascii=False, indent=2) if self.state == "valid" else text
        fence = "`" * max([3, *(len(run) + 1 for run in re.findall("`+", shown))])
        return "\n\n".join([*notes, f"{fence}json\n{shown}\n{fence}"])

    def __repr__(self) -> str:
        return f"TypedAnswer({self.type_name!r}, state={self.state!r})"
