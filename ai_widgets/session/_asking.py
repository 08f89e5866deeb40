"""The session's answers to a running call's questions (``ChatSession.respond``, ``pending_inputs``): a base class of
:class:`~ai_widgets.session.ChatSession`; the call waits in its round (:meth:`ToolRound.wait_for_person`)."""

from __future__ import annotations

from typing import Any

from ai_widgets.messages import InputResponseError, Message, ToolCallPart
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

    async def respond(self, tool_call_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Answers the question a running call's server asked the person (the call is ``awaiting_input``).

        Args:
            tool_call_id: The call's id.
            action: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``.
            content: The form's values, checked against its schema (its defaults fill what is left out).

        Raises:
            InputResponseError: The call is unknown or not waiting for input, the action is not one of the three,
                or the content does not fit the form. Nothing changes: the call still waits.
        """
        self.respond_now(tool_call_id, action, content)

    def respond_now(self, tool_call_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Like :meth:`respond`, from synchronous code (a widget's message handler); safe from any thread."""
        if not isinstance(tool_call_id, str):
            raise InputResponseError(f"a tool call id is text, not {type(tool_call_id).__name__}")
        turn = self._turn
        tool_round = None if turn is None else turn.round
        if tool_round is None or not tool_round.has(tool_call_id):
            shown = tool_call_id if len(tool_call_id) <= 80 else tool_call_id[:80] + "…"
            for message in reversed(self._messages):
                part = message.tool_call(tool_call_id)
                if part is not None:
                    raise InputResponseError(
                        f"tool call {shown!r} ({part.tool_name}) is not waiting for input: it is {part.state.value}"
                    )
            raise InputResponseError(f"there is no tool call {shown!r} in this conversation")
        tool_round.respond(tool_call_id, action, content)
