"""``TurnView``: one turn of a chat, shown live in the cell that asked for it (``chat.ask(..., show=True)``).

It mirrors the session from the message the turn adds on: the person's message, the streaming reply and its tool
cards, with the same approval, Cancel and Stop controls as the chat (they act on the same session, so a click in
either place decides once and the other shows the decision). When the turn ends it stops mirroring and keeps what
it showed, so the asking cell's output is a record of that turn, also in a saved notebook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from ai_widgets.attachments import AttachmentPart
from ai_widgets.messages import Message
from ai_widgets.session import ChatSession
from ai_widgets.widget._branch_view import BUSY_REFUSAL
from ai_widgets.widget._view import SessionView

__all__ = ["TurnView"]


class TurnView(SessionView):
    """One turn of ``session``, from the message at position ``start`` on.

    Args:
        session: The chat's session.
        start: Where the turn's first message will be (the conversation's length before it starts); ``None``: the
            asking call says so with :meth:`begin`, from its own turn's task, and only that turn is shown (another
            turn that starts first, from another task or the chat's input box, is not this view's).
        collapse_tool_calls: Cards start collapsed to a one-line summary.
        flush_interval: Seconds between patches to the front end while a reply streams.
    """

    def __init__(
        self,
        session: ChatSession,
        *,
        start: int | None,
        collapse_tool_calls: bool = True,
        flush_interval: float = 1 / 30,
    ) -> None:
        self._began = False
        self._owner: asyncio.Task[object] | None = None
        super().__init__(
            session,
            start=start,
            flush_interval=flush_interval,
            _scope="turn",
            collapse_tool_calls=collapse_tool_calls,
        )

    def begin(self) -> None:
        """Called by the asking call in its own turn's task, right before it sends: this view shows the turn that
        task starts, from the first message that task adds (not from where the conversation stands now: a turn the
        input box starts on another thread may add its messages first)."""
        owner = self._owner = current_task()
        self._bridge.begin_with(lambda: current_task() is owner)

    def _set_busy(self, busy: bool) -> None:
        if busy:
            if self._owner is not None and current_task() is not self._owner:
                return  # a turn another caller started: not this view's
            self._began = True
            self._busy = True
        elif self._began:
            self._busy = False
            self._stop_mirroring()  # this turn is over: what follows belongs to other turns

    def settle(self) -> None:
        """Called when the asking call returns: a turn that never started (another one won the race, or the kernel
        cannot wait) leaves nothing behind; a turn that did keeps mirroring until it has ended."""
        if not self._began:
            self.close()

    def _on_send(self, text: str, attach: list[AttachmentPart], send_id: str | None) -> None:
        del text, attach
        self._send_error("This shows one turn of a chat: type your message in the chat's own input box.", send_id)

    def _on_continue(self) -> None:
        self._send_error("This shows one turn of a chat: press Continue in the chat itself.")

    def _on_branch_turn(self, start: Callable[[], Coroutine[Any, Any, Message]], *, regenerate: bool) -> None:
        """An Edit or a Regenerate clicked here runs this turn again, and this view shows it (mirroring again from
        its first message); a Regenerate only while this turn is the conversation's last."""
        if self.session.busy:
            self._send_error(BUSY_REFUSAL)
            return
        if regenerate and not self._is_last_turn():
            self._send_error("This turn is no longer the chat's last one: regenerate there, or edit its message here.")
            return
        if self._began and self._bridge.closed:
            self._mirror(self._bridge.start)
        self._owner = None  # the turn the click starts is this view's
        super()._on_branch_turn(start, regenerate=regenerate)

    def _is_last_turn(self) -> bool:
        shown = self._shown_messages
        messages = self.session.messages
        return bool(shown) and bool(messages) and messages[-1] is shown[-1]


def current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no loop running in this thread
        return None
