"""What a session tells its observers: one small typed change per state change.

The widget layer subscribes to these (``ChatSession.subscribe``) and turns them into patches for the front end.
Changes refer to the live message and part objects; an observer reads what it needs when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from ai_widgets.arguments import ArgumentPatch
from ai_widgets.messages import Message, Part, ToolCallPart

__all__ = [
    "BusyChanged",
    "ConversationCleared",
    "MessageAdded",
    "MessageFinished",
    "MessageUpdated",
    "PartAdded",
    "SessionChange",
    "TextAppended",
    "ToolCallArgumentsChanged",
    "ToolCallUpdated",
]


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A message joined the conversation (a user message, or a reply starting)."""

    message: Message


@dataclass(frozen=True, slots=True)
class MessageUpdated:
    """A reply's status, status line, finish reason, usage or error changed."""

    message: Message


@dataclass(frozen=True, slots=True)
class PartAdded:
    """A part was added to a reply at ``index``."""

    message: Message
    index: int
    part: Part


@dataclass(frozen=True, slots=True)
class TextAppended:
    """Text (or reasoning) was appended to the part at ``index``."""

    message: Message
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsChanged:
    """A call's arguments grew by ``delta``; ``patches`` say how the parsed view changed."""

    message: Message
    part: ToolCallPart
    delta: str
    patches: tuple[ArgumentPatch, ...]


@dataclass(frozen=True, slots=True)
class ToolCallUpdated:
    """A call's state, progress, approval question, decision or outcome changed."""

    message: Message
    part: ToolCallPart


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """A turn ended; its reply is final (completed, limit reached, error or cancelled)."""

    message: Message


@dataclass(frozen=True, slots=True)
class BusyChanged:
    """A turn started or ended."""

    busy: bool


@dataclass(frozen=True, slots=True)
class ConversationCleared:
    """Every message was removed."""


SessionChange: TypeAlias = (
    MessageAdded
    | MessageUpdated
    | PartAdded
    | TextAppended
    | ToolCallArgumentsChanged
    | ToolCallUpdated
    | MessageFinished
    | BusyChanged
    | ConversationCleared
)
