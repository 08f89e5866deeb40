"""The session's edit, regenerate and branch controls (``ChatSession.edit``, ``regenerate``, ``branches``,
``switch_branch``): a base class of :class:`~ai_widgets.session.ChatSession`, whose turn machinery it uses.

An edit or a regenerate is a turn whose first step, once the session is claimed for it, cuts the active path at
the place it replaces (:class:`~ai_widgets.session._branches.ConversationBranches` keeps what it cut); a running
turn is stopped first when the caller asks for it (``stop=True``), so a call waiting for approval or running in the
replaced branch ends ``cancelled``, with its outcome, before the new branch starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager

from ai_widgets._safe import safe_text
from ai_widgets.changes import BranchesChanged, SessionChange
from ai_widgets.messages import Message, Role, TextPart
from ai_widgets.session._branches import (
    BranchPoint,
    ConversationBranches,
    branches_markdown,
    conversation_with_branches,
    message_position,
    regenerate_position,
    user_position,
)
from ai_widgets.session._turn import Turn

__all__ = ["BranchingSession"]


class BranchingSession:
    """Edit, regenerate and switch branches; the rest of the session is :class:`~ai_widgets.session.ChatSession`."""

    # Kept by ChatSession: the active path, the forks beside it, the running turn.
    _messages: list[Message]
    _branches: ConversationBranches
    _turn: Turn | None

    def notify(self, change: SessionChange) -> None:
        raise NotImplementedError  # ChatSession's

    def check_can_send(self) -> None:
        raise NotImplementedError  # ChatSession's

    def _held(self, doing: str) -> AbstractContextManager[None]:
        raise NotImplementedError  # ChatSession's: holds the session idle for a change that is not a turn

    def _check_history_writable(self) -> None:
        raise NotImplementedError  # ChatSession's

    async def _start_turn(self, *, user: Message | None = None, fork: Callable[[], None] | None = None) -> Message:
        raise NotImplementedError  # ChatSession's

    # --- reading --------------------------------------------------------------------------------------------------

    def branches(self, message_id: str) -> BranchPoint:
        """The alternatives at the place of ``message_id`` in ``messages``: the user messages edits replaced there
        (and the new one), or the replies regenerates replaced (and the new one), with the index of the active one.

        Raises:
            BranchError: No message of the active path has that id.
        """
        messages = self._messages
        return self._branches.point(messages, message_position(messages, message_id))

    def branch_points(self) -> list[BranchPoint]:
        """Every place of ``messages`` that has more than one alternative, in order (what the widget marks)."""
        return list(self._branches.points(self._messages))

    def stored_messages(self) -> list[Message]:
        """Every message kept in an earlier branch, off ``messages`` (each once, in no particular order)."""
        return list(self._branches.stored())

    def to_json(self) -> str:
        """The conversation as JSON text: :func:`~ai_widgets.messages.dump_messages`'s format (which any reader of it
        reads as the active path), with the earlier branches under ``"branches"``. ``ChatSession(history=path)``
        opens such a file with its branches."""
        return conversation_with_branches(self._messages, self._branches)

    def branches_markdown(self) -> str:
        """The earlier branches as markdown, each under a heading (``""`` when there are none)."""
        return branches_markdown(self._branches)

    # --- changing -------------------------------------------------------------------------------------------------

    async def edit(self, message_id: str, text: str, *, stop: bool = False) -> Message:
        """Replaces the user message ``message_id`` with ``text`` and runs the turn again from there.

        The message and everything after it stay as an earlier branch at that place (:meth:`branches`); the new
        message keeps the old one's attachments (its parts after the typed text). Returns the new reply, as :meth:`send` does.

        Args:
            message_id: A user message of ``messages``.
            text: The new text.
            stop: Stop a running turn first (its calls waiting for approval or running end ``cancelled``, with
                their outcome, and its reply stays in the replaced branch) instead of refusing.

        Raises:
            BranchError: No user message of ``messages`` has that id.
            ValueError: ``text`` is empty.
            SessionBusyError: A turn is running (and ``stop`` is false), or another one started first.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
            NoTransportError: The session has no transport.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("edit() needs a non-empty message")
        user_position(self._messages, message_id)  # refuse an unknown id before stopping anything
        await self._prepare(stop)
        position = user_position(self._messages, message_id)
        old = self._messages[position]
        kept = old.parts[1:] if old.parts and isinstance(old.parts[0], TextPart) else old.parts  # its attachments
        user = Message(Role.USER, [TextPart(safe_text(text)), *kept])  # as send() makes it
        return await self._start_turn(user=user, fork=lambda: self._cut(user_position(self._messages, message_id)))

    async def regenerate(self, *, stop: bool = False) -> Message:
        """Answers the last user message again (also after an error, a stop or a limit): the replies after it stay
        as an earlier branch there (:meth:`branches` of the new reply). Returns the new reply.

        Args:
            stop: Stop a running turn first (see :meth:`edit`) instead of refusing.

        Raises:
            BranchError: There is nothing to regenerate (no user message).
            SessionBusyError: A turn is running (and ``stop`` is false), or another one started first.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
            NoTransportError: The session has no transport.
        """
        regenerate_position(self._messages)
        await self._prepare(stop)
        return await self._start_turn(fork=lambda: self._cut(regenerate_position(self._messages)))

    def switch_branch(self, message_id: str, index: int) -> BranchPoint:
        """Puts alternative ``index`` (of :meth:`branches`) at the place of ``message_id`` on the active path:
        ``messages`` then follows that branch (as it was when it was left), and the one it replaces is kept.

        Returns:
            The alternatives there, now with ``index`` active.

        Raises:
            BranchError: No message of ``messages`` has that id, or there is no alternative ``index`` there.
            SessionBusyError: A turn is running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
        """
        with self._held("switch branches"):
            self._check_history_writable()
            messages = self._messages
            position = message_position(messages, message_id)
            if self._branches.switch(messages, position, index):
                self.notify(BranchesChanged(position))
            return self._branches.point(messages, position)

    async def _prepare(self, stop: bool) -> None:
        """Refuses what cannot start; with ``stop``, first stops a running turn and waits until it has ended."""
        turn = self._turn
        task = None if turn is None else turn.task
        if stop and turn is not None and task is not None:
            turn.stop()
            # The turn's end is the task's first done callback, so it has run when the wait (a later one) returns.
            loop = task.get_loop()
            if loop is asyncio.get_running_loop():
                await asyncio.wait({task})
            else:  # the turn runs on another thread's loop: wait there for it to end
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.wait({task}), loop))
        self.check_can_send()

    def _cut(self, position: int) -> None:
        """For the claimed turn, before it adds its messages: keeps ``messages[position:]`` as an earlier branch."""
        if position >= len(self._messages):
            return  # nothing after it to replace (a user message whose turn added no reply)
        self._branches.replace_from(self._messages, position)
        self.notify(BranchesChanged(position))
