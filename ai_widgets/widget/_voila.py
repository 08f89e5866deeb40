"""A cell that waits for a reply while Voilà runs the notebook on its server: a call there that asks for approval is
cancelled, saying why, instead of waiting for a click that cannot come.

Voilà (in its default rendering) executes the whole notebook first and sends the page after it, and the page
connects to the kernel only then. So a cell that awaits ``chat.ask(...)`` (or blocks in ``chat.ask_sync``) whose
turn needs an approval would wait for ever, and the page would never load. A turn started with ``chat.send(...)``
is not touched: its approval waits for the page, which shows it. Outside Voilà, or once a view of a chat has opened
in this kernel (a page is there to click: Voilà's progressive rendering, a callback after the page connected),
nothing changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Coroutine, Mapping
from typing import Any

from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.messages import Message, ToolCallState
from ai_widgets.session import CancelError, ChatSession

__all__ = ["CANCEL_REASON", "PAGE_GRACE", "VIEW_OPENED", "served_by_voila", "without_a_page"]

#: What the call's outcome tells the model and the card shows.
CANCEL_REASON = (
    "no page was open to approve it: Voilà runs the notebook before it shows the page. Start a turn that needs "
    "approval with chat.send(...), and approve it in the page"
)

#: Seconds a call waits for a view to open before it is cancelled: with Voilà's progressive rendering the page is
#: there while cells run, and the view a cell shows opens a moment later.
PAGE_GRACE = 3.0

#: Set when a view of a chat opened in a page (its first message to the kernel): someone can click from then on.
VIEW_OPENED = threading.Event()


def served_by_voila(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this kernel was started by Voilà, which puts ``SERVER_SOFTWARE=voila/<version>`` (and the
    ``VOILA_*`` variables) in the environment of each kernel it starts.

    Args:
        environ: The environment to read; this process's by default.
    """
    env = os.environ if environ is None else environ
    return env.get("SERVER_SOFTWARE", "").startswith("voila/") or "VOILA_PREHEAT" in env


async def without_a_page(
    session: ChatSession,
    turn: Coroutine[Any, Any, Message],
    *,
    environ: Mapping[str, str] | None = None,
    grace: float | None = None,
) -> Message:
    """Runs an asking cell's ``turn``; under Voilà with no view opened yet, each call of it that still waits for
    approval after ``grace`` seconds (:data:`PAGE_GRACE`) with no view opened is cancelled with
    :data:`CANCEL_REASON`: the call ends with an outcome that tells the model, and the turn goes on.

    Args:
        session: The chat's session, which runs ``turn``.
        turn: The asking call's turn (``session.send(...)``), not started yet.
        environ: The environment that says whether Voilà started this kernel; this process's by default.
        grace: Seconds a call waits for a view before it is cancelled; :data:`PAGE_GRACE` by default.

    Returns:
        The turn's reply.
    """
    if VIEW_OPENED.is_set() or not served_by_voila(environ):
        return await turn
    loop = asyncio.get_running_loop()
    wait = PAGE_GRACE if grace is None else grace

    def cancel_unless_a_page(tool_call_id: str) -> None:
        if VIEW_OPENED.is_set() or all(p.tool_call_id != tool_call_id for p in session.pending_approvals):
            return  # someone can click now, or it was decided meanwhile
        with contextlib.suppress(CancelError):  # it ended between the look and the cancel
            session.cancel(tool_call_id, CANCEL_REASON)

    def on_change(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.state is ToolCallState.AWAITING_APPROVAL:
            loop.call_soon_threadsafe(loop.call_later, wait, cancel_unless_a_page, change.part.tool_call_id)

    unsubscribe = session.subscribe(on_change)
    try:
        return await turn
    finally:
        unsubscribe()
