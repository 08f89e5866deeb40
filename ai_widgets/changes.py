"""What a session tells its observers: one small typed change per state change.

The widget layer subscribes to these (``ChatSession.subscribe``) and turns them into patches for the front end.
Changes refer to the live message and part objects; an observer reads what it needs when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from ai_widgets._quick_init import quick_init
from ai_widgets.arguments import ArgumentPatch
from ai_widgets.messages import Message, Part, ToolCallPart

__all__ = [
    "LATE_PREVIEW_CHARS",
    "BranchesChanged",
    "BusyChanged",
    "ContextCut",
    "ContextShortened",
    "ConversationCleared",
    "MessageAdded",
    "MessageFinished",
    "MessageUpdated",
    "PartAdded",
    "PartChanged",
    "PartsRemoved",
    "SessionChange",
    "SessionNotice",
    "SteeringChanged",
    "TextAppended",
    "ToolCallArgumentsChanged",
    "ToolCallStraggling",
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


@quick_init  # one per part: a reply that switches between thought and text makes many
@dataclass(frozen=True, slots=True)
class PartAdded:
    """A part was added to a reply at ``index``."""

    message: Message
    index: int
    part: Part


@quick_init  # one per delta of text
@dataclass(frozen=True, slots=True)
class TextAppended:
    """Text (or reasoning) was appended to the part at ``index``; for a typed answer's part (``TextPart.answer``),
    ``patches`` say how the text changed its parse (as a tool call's argument patches)."""

    message: Message
    index: int
    text: str
    patches: tuple[ArgumentPatch, ...] = ()


@dataclass(frozen=True, slots=True)
class PartChanged:
    """The part at ``index`` changed in place other than by appended text: a typed answer was checked, or its text
    turned out not to be the answer (its response called tools), so it is ordinary text again."""

    message: Message
    index: int
    part: Part


@dataclass(frozen=True, slots=True)
class PartsRemoved:
    """The reply's parts from ``start`` on were taken out: a typed answer that did not validate, asked for again
    (the errors go with the next answer, ``TypedAnswer.refused``)."""

    message: Message
    start: int


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
class ToolCallStraggling:
    """A sync call ended (cancelled, stopped or timed out) while its thread still ran, which no one can stop.

    Told twice: ``phase`` ``"stopping"`` as the call ends (its thread has not returned yet), then ``"returned"``
    or ``"raised"`` when the thread ends, with ``preview``: a short, safe text of what it returned or raised
    (lone surrogates replaced, secrets redacted, at most :data:`LATE_PREVIEW_CHARS` characters). That result was
    discarded: the call's record (state, outcome) is the one it ended with and never changes. The second change may
    come after the turn ended, when the call's message is finished.
    """

    message: Message
    part: ToolCallPart
    phase: Literal["stopping", "returned", "raised"]
    preview: str | None = None


#: The longest preview of a late result (:class:`ToolCallStraggling`), in characters.
LATE_PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """A reply is final (completed, limit reached, error or cancelled): its turn ended, or a message sent while it
    ran was delivered after its tool results, and the turn goes on in a new reply after that message."""

    message: Message


@dataclass(frozen=True, slots=True)
class BusyChanged:
    """A turn started or ended."""

    busy: bool


@dataclass(frozen=True, slots=True)
class SteeringChanged:
    """The messages sent while a turn runs, not yet delivered, changed: one was queued, delivered at a tool boundary
    (it is then added to the conversation: ``MessageAdded``), taken by the next turn, or handed back by a stop.

    Attributes:
        queued: The messages waiting now, oldest first (not in the conversation).
        returned: The messages a stop handed back, not sent: a view puts their text back where it was typed.
    """

    queued: tuple[Message, ...]
    returned: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class BranchesChanged:
    """The conversation from ``position`` on was replaced, the replaced messages kept as an earlier branch: an edit
    or a regenerate cut it there (the new branch's messages follow as ``MessageAdded``), or a switch of branch put
    another one there (its messages are ``session.messages[position:]``, all finished). An observer drops what it
    shows from ``position`` on and shows what is there now; ``session.branches(message_id)`` says what is where."""

    position: int


@dataclass(frozen=True, slots=True)
class ConversationCleared:
    """Every message was removed."""


@dataclass(frozen=True, slots=True)
class SessionNotice:
    """Something the person should know about the session itself, not one message: e.g. that a newer session in this
    kernel took its history file over, so this one no longer saves and refuses to send. May come from any thread."""

    text: str


@dataclass(frozen=True, slots=True)
class ContextCut:
    """How a request was shortened to fit the model's context window (the history itself keeps everything).

    Attributes:
        first_sent_id: The first message the request carried: the ones before it were left out.
        left_out_messages: How many messages were left out (the oldest).
        left_out_turns: How many turns (a user message and the replies to it) those were.
        shortened_results: How many older tool results were sent shortened.
        left_out_tokens: About how many tokens were not sent (the messages left out, the parts of results cut).
        sent_tokens: About how many tokens the request took, by the session's estimate (tools and output included).
        window: The context window it was fitted to, in tokens.
    """

    first_sent_id: str | None
    left_out_messages: int
    left_out_turns: int
    shortened_results: int
    left_out_tokens: int
    sent_tokens: int
    window: int


@dataclass(frozen=True, slots=True)
class ContextShortened:
    """The last request was shortened to fit the model's context window (``cut``), or, ``None``, it carried the whole
    conversation again. Told when that changes, before the request goes."""

    cut: ContextCut | None


SessionChange: TypeAlias = (
    MessageAdded
    | MessageUpdated
    | PartAdded
    | PartChanged
    | PartsRemoved
    | TextAppended
    | ToolCallArgumentsChanged
    | ToolCallUpdated
    | ToolCallStraggling
    | MessageFinished
    | BusyChanged
    | BranchesChanged
    | ConversationCleared
    | SessionNotice
    | ContextShortened
    | SteeringChanged
)
