"""Moving a tool call between states: the one place a call changes state in a session, and the observers are told;
and finding the call a person's decision names (a decision about a call the conversation does not have is refused
alike by ``approve``, ``respond`` and ``cancel``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.messages import Message, MessageStatus, ToolCallPart, ToolCallState
from ai_widgets.outcome import ToolOutcome, safe_outcome

__all__ = [
    "CancelError",
    "Notify",
    "UnknownToolCallError",
    "end_open_calls",
    "known_call",
    "move_call",
    "reply_in_progress",
    "shown_id",
]

#: How a turn tells the session's observers of a change.
Notify = Callable[[SessionChange], None]


class UnknownToolCallError(LookupError):
    """No call with this id is in the conversation (or the id is not text): ``approve``, ``respond`` and ``cancel``
    refuse it alike, and nothing changes."""


class CancelError(ValueError):
    """A cancel that cannot be done: the call has ended, a cancel of it is under way, or it is not the running turn's
    (or the reason is not text). Nothing changes."""


def shown_id(tool_call_id: str) -> str:
    """A call's id as an error message quotes it (a long one cut)."""
    return tool_call_id if len(tool_call_id) <= 80 else tool_call_id[:80] + "…"


def known_call(messages: Sequence[Message], tool_call_id: object) -> tuple[Message, ToolCallPart]:
    """The message and call with this id, newest first.

    Raises:
        UnknownToolCallError: ``tool_call_id`` is not text, or no call of ``messages`` has it.
    """
    if not isinstance(tool_call_id, str):
        raise UnknownToolCallError(f"a tool call id is text, not {type(tool_call_id).__name__}")
    for message in reversed(messages):
        part = message.tool_call(tool_call_id)
        if part is not None:
            return message, part
    raise UnknownToolCallError(f"there is no tool call {shown_id(tool_call_id)!r} in this conversation")


def move_call(
    notify: Notify, reply: Message, part: ToolCallPart, state: ToolCallState, outcome: ToolOutcome | None = None
) -> None:
    """Moves a call to ``state`` and tells the observers: the one place calls change state in a session.

    The outcome is made safe to keep first (:func:`ai_widgets.outcome.safe_outcome`).

    Raises:
        InvalidTransitionError: The state table does not allow the move.
    """
    part.move(state, None if outcome is None else safe_outcome(outcome))
    notify(ToolCallUpdated(reply, part))


def end_open_calls(notify: Notify, reply: Message, state: ToolCallState, message: str) -> None:
    """Gives every call of ``reply`` that has no outcome yet one, in ``state`` (``skipped`` where it never ran)."""
    for part in reply.tool_calls:
        if part.state.terminal:
            continue
        final = state
        ran = part.state in (ToolCallState.RUNNING, ToolCallState.AWAITING_INPUT)
        if ran and state is ToolCallState.SKIPPED:
            final = ToolCallState.FAILED  # it ran, so it was not skipped: it was cut short
        if not ran and state is ToolCallState.FAILED:
            final = ToolCallState.SKIPPED
        move_call(notify, reply, part, final, ToolOutcome.failure(message, retryable=True))


def reply_in_progress(reply: Message) -> bool:
    """Whether the reply's turn is still running (calls of a finished turn never change again)."""
    return reply.status is MessageStatus.IN_PROGRESS
