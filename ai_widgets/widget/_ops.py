"""The kernel's patch ops, typed: one TypedDict per op, sent as a positional list (docs/protocol.md, "Patches").

Ops are built and merged as dicts here, where names catch mistakes, and leave as compact lists (``to_wire``), where
every streamed delta costs a few bytes. The front end types the same ops as a discriminated union of tuples
(``PatchOp`` in js/src/types.ts), and a test replays a trace this side recorded into that side.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "WIRE_ORDER",
    "AnswerOp",
    "ArgsOp",
    "CallOp",
    "ClearOp",
    "CutOp",
    "FinishOp",
    "MsgOp",
    "Op",
    "PartOp",
    "StartOp",
    "TextOp",
    "to_wire",
]


class StartOp(TypedDict):
    """A message in progress, whole."""

    op: Literal["start"]
    message: dict[str, Any]


class MsgOp(TypedDict):
    """A message's changed fields (``MESSAGE_FIELDS``)."""

    op: Literal["msg"]
    message_id: str
    fields: dict[str, Any]


class PartOp(TypedDict):
    """A part added (or replaced) at ``index``."""

    op: Literal["part"]
    message_id: str
    index: int
    part: dict[str, Any]


class TextOp(TypedDict):
    """Text appended to the text or reasoning part at ``index``."""

    op: Literal["text"]
    message_id: str
    index: int
    text: str


class AnswerOp(TypedDict):
    """Text appended to the typed answer's part at ``index``, and the patches it made to the answer's parse."""

    op: Literal["answer"]
    message_id: str
    index: int
    text: str
    patches: list[list[Any]]


class ArgsOp(TypedDict):
    """A call's argument patches (``[op, path, value]`` lists)."""

    op: Literal["args"]
    message_id: str
    tool_call_id: str
    patches: list[list[Any]]


class CallOp(TypedDict):
    """A call's changed fields (``CALL_FIELDS``)."""

    op: Literal["call"]
    message_id: str
    tool_call_id: str
    fields: dict[str, Any]


class FinishOp(TypedDict):
    """Finished message number ``position``, whole; it replaces the live copy."""

    op: Literal["finish"]
    position: int
    message: dict[str, Any]


class ClearOp(TypedDict):
    """Every message was removed."""

    op: Literal["clear"]


class CutOp(TypedDict):
    """The finished messages from number ``position`` on left the conversation's active path (an edit, a regenerate
    or a switch of branch replaced them; they are kept in the session as an earlier branch)."""

    op: Literal["cut"]
    position: int


Op = StartOp | MsgOp | PartOp | TextOp | AnswerOp | ArgsOp | CallOp | FinishOp | ClearOp | CutOp

#: Each op's fields in wire order, after its name: the one place the positions are written on this side.
WIRE_ORDER: dict[str, tuple[str, ...]] = {
    "start": ("message",),
    "msg": ("message_id", "fields"),
    "part": ("message_id", "index", "part"),
    "text": ("message_id", "index", "text"),
    "answer": ("message_id", "index", "text", "patches"),
    "args": ("message_id", "tool_call_id", "patches"),
    "call": ("message_id", "tool_call_id", "fields"),
    "finish": ("position", "message"),
    "clear": (),
    "cut": ("position",),
}


def to_wire(op: Op) -> list[Any]:
    """The op as it travels: ``[name, *fields in WIRE_ORDER]``."""
    fields: dict[str, Any] = op  # type: ignore[assignment]
    return [op["op"], *(fields[name] for name in WIRE_ORDER[op["op"]])]
