"""The session's answers to a running call's questions (``ChatSession.respond``, ``pending_inputs``): a base class of
:class:`~ai_widgets.session.ChatSession`; the call waits in its round (:meth:`ToolRound.wait_for_person`)."""

from __future__ import annotations

from typing import Any

from ai_widgets.messages import InputResponseError, Message, ToolCallPart
from ai_widgets.session._calls import known_call, shown_id
from ai_widgets.session._turn import Turn

__all__ = ["AskingSession"]


class AskingSession:
    """Answer what a call's server asks the person; the rest of the session is :class:`~ai_widgets.session.ChatSession`."""

    # Kept by ChatSession: the conversation and the running turn.
    _messages: list[Message]
    _turn: Turn | None

    @property
    def pending_inputs(self) -> list[ToolCallPart]:
        """The calls waiting for the person's input (their server asked: ``input_request``)."""
        turn = self._turn
        tool_round = None if turn is None else turn.round
        return [] if tool_round is None else tool_round.waiting_for_input()

    def respond(self, tool_call_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Answers the question a running call's server asked the person (the call is ``awaiting_input``).

        Like :meth:`~ai_widgets.ChatSession.approve` and :meth:`~ai_widgets.ChatSession.cancel`: safe from any
        thread, and returns at once; the call goes on with the answer on its own loop.

        Args:
            tool_call_id: The call's id.
            action: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``.
            content: The form's values, checked against its schema (its defaults fill what is left out).

        Raises:
            UnknownToolCallError: No call of the conversation has this id.
            InputResponseError: The call is not waiting for input, the action is not one of the three, or the
                content does not fit the form. Nothing changes: the call still waits.
        """
        turn = self._turn
        tool_round = None if turn is None else turn.round
        if tool_round is None or not isinstance(tool_call_id, str) or not tool_round.has(tool_call_id):
            _, part = known_call(self._messages, tool_call_id)
            raise InputResponseError(
                f"tool call {shown_id(part.tool_call_id)!r} ({part.tool_name}) is not waiting for input: it is "
                f"{part.state.value}"
            )
        tool_round.respond(tool_call_id, action, content)
