"""Moving a tool call between states: the one place a call changes state in a session, and the observers are told."""

from __future__ import annotations

from collections.abc import Callable

from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.messages import Message, MessageStatus, ToolCallPart, ToolCallState
from ai_widgets.outcome import ToolOutcome, safe_outcome

__all__ = ["Notify", "end_open_calls", "move_call", "reply_in_progress"]

#: How a turn tells the session's observers of a change.
Notify = Callable[[SessionChange], None]


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
