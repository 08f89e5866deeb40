"""What a view shows of the conversation's branches: the ``< 1/2 >`` of a message that has alternatives (its dict's
``branch``), and the person's Edit, Regenerate / Retry, switch and New chat clicks, run on the session."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any

from ai_widgets.messages import Message
from ai_widgets.session import BranchError, ChatSession, HistoryTakenOverError, SessionBusyError

__all__ = ["BUSY_REFUSAL", "branch_marked", "branch_marks", "new_chat", "run_branch_turn", "switch_branch"]

#: What a click that races a running turn is told.
BUSY_REFUSAL = "A reply is still running: wait for it, or press Stop, then try again."


def branch_marked(session: ChatSession, shown: dict[str, Any]) -> dict[str, Any]:
    """``shown`` (a message's dict) with ``branch`` (``{"active": i, "count": n}``) when its place has alternatives."""
    try:
        point = session.branches(shown["id"])
    except BranchError:
        return shown  # not on the active path (any more): nothing to switch there
    if point.count > 1:
        shown["branch"] = {"active": point.active, "count": point.count}
    return shown


def branch_marks(session: ChatSession) -> dict[str, dict[str, int]]:
    """The ``branch`` of every message of the active path that has alternatives, by message id (one pass)."""
    messages = session.messages
    return {
        messages[point.position].id: {"active": point.active, "count": point.count} for point in session.all_branches()
    }


def run_branch_turn(
    session: ChatSession,
    start: Callable[[], Coroutine[Any, Any, Message]],
    loop: asyncio.AbstractEventLoop,
    refuse: Callable[[str], None],
) -> concurrent.futures.Future[Message] | None:
    """Starts an edit or a regenerate on ``loop`` (a click: no cell waits for it); one that cannot start, or fails
    before its turn does (an unknown message, a turn that started first), is told through ``refuse``."""
    if session.busy:
        refuse(BUSY_REFUSAL)
        return None
    future = asyncio.run_coroutine_threadsafe(start(), loop)

    def told(done: concurrent.futures.Future[Message]) -> None:
        if done.cancelled():
            return
        exc = done.exception()
        if isinstance(exc, SessionBusyError):
            refuse(BUSY_REFUSAL)
        elif exc is not None:
            refuse(f"Refused: {exc}")

    future.add_done_callback(told)
    return future


def switch_branch(session: ChatSession, message_id: str, index: int, refuse: Callable[[str], None]) -> None:
    """Shows branch ``index`` at ``message_id``'s place; a switch that cannot be done is told through ``refuse``."""
    try:
        session.switch_branch(message_id, index)
    except SessionBusyError:
        refuse(BUSY_REFUSAL)
    except BranchError as exc:
        refuse(f"Switch refused: {exc}")


def new_chat(session: ChatSession, refuse: Callable[[str], None], told: Callable[[int], None]) -> None:
    """Starts a new chat (the conversation so far kept as an earlier branch at its start); ``told`` gets how many
    messages were set aside, and one that cannot be done is told through ``refuse``."""
    try:
        kept = session.new_chat()
    except SessionBusyError:
        refuse(BUSY_REFUSAL)
        return
    except HistoryTakenOverError as exc:
        refuse(f"New chat refused: {exc}")
        return
    told(kept)
