"""A cell that asks while another turn runs waits for that turn to end, then asks: the note it shows meanwhile, and
the wait itself (``chat.ask`` and ``chat.ask_sync``, which never steer the running turn; ``session.send`` and
``chat.send`` do)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from ai_widgets._threads import running_loop
from ai_widgets.changes import BusyChanged, SessionChange
from ai_widgets.messages import Message
from ai_widgets.session import ChatSession, SessionBusyError, turn_loop

__all__ = ["GAVE_UP", "WAITED", "WAITING", "WaitingNote", "check_can_block", "start_when_idle", "wait_until_idle"]

WAITING = "Waiting for the turn in progress…"
WAITED = "Waited for the turn in progress, then asked."
GAVE_UP = "Stopped waiting for the turn in progress: nothing was asked."
#: How often the wait looks at ``busy`` besides being told: a change told on another thread can race the subscribe.
LOOK_EVERY = 0.25


class WaitingNote:
    """The line a waiting cell shows in its output ("Waiting for the turn in progress…"), updated once it asks.

    Only in a Jupyter kernel (elsewhere a display goes nowhere a person looks); nothing is shown when the session
    is idle as the cell asks.

    Args:
        session: The chat's session.
        in_kernel: Whether this runs in a Jupyter kernel, whose cell output shows the note.
        live: The turn starts on the asking cell's own thread (``ask``), so the note changes as it starts; else
            (``ask_sync``, whose turn starts on another thread) when the call returns.
        ahead: Turns started before this call and not begun yet (``chat.send``'s) go first: it waits for them too.
    """

    def __init__(self, session: ChatSession, *, in_kernel: bool, live: bool, ahead: bool = False) -> None:
        self._handle: Any = None
        self._live = live
        self._started = False
        if in_kernel and (session.busy or ahead):
            from IPython.display import display

            self._handle = display({"text/plain": WAITING}, raw=True, display_id=True)

    def started(self) -> None:
        """The turn this cell waited for ended and its own is starting (from any thread)."""
        self._started = True
        if self._live:
            self.settle()

    def settle(self) -> None:
        """The asking call returns (on its own thread): the note says whether it asked or gave up waiting."""
        if self._handle is not None:
            self._handle.update({"text/plain": WAITED if self._started else GAVE_UP}, raw=True)
            self._handle = None


def check_can_block(session: ChatSession) -> None:
    """For a call that blocks its thread while it waits (``ask_sync``): refuses to wait for a turn that runs on
    this thread's own event loop (in a kernel, the input box's turns and ``chat.send``'s run on the kernel's loop),
    which the block would stop: that turn could never end.

    Raises:
        SessionBusyError: The turn in progress runs on the loop this thread would block.
    """
    loop = turn_loop(session)
    if session.busy and loop is not None and loop is running_loop():
        raise SessionBusyError(
            "a turn is in progress on the kernel's event loop, which this blocking cell would stop: use "
            "`await chat.ask(...)`, which waits for it, then asks"
        )


async def wait_until_idle(session: ChatSession) -> None:
    """Returns once no turn runs on ``session``, whichever thread or loop runs that turn."""
    if not session.busy:
        return
    loop = asyncio.get_running_loop()
    idle = asyncio.Event()

    def on_change(change: SessionChange) -> None:
        if isinstance(change, BusyChanged) and not change.busy:
            with contextlib.suppress(RuntimeError):  # this loop closed meanwhile: nobody waits any more
                loop.call_soon_threadsafe(idle.set)

    unsubscribe = session.subscribe(on_change)
    try:
        while session.busy:
            idle.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(idle.wait(), LOOK_EVERY)
    finally:
        unsubscribe()


async def start_when_idle(
    session: ChatSession,
    start: Callable[[], Coroutine[Any, Any, Message]],
    before: Callable[[], None] = lambda: None,
) -> Message:
    """Waits for the running turn, if any, then starts this one with ``start``; ``before`` runs right before each
    try. Another caller may win the race to start once the session is idle: then this waits again."""
    while True:
        await wait_until_idle(session)
        before()
        with contextlib.suppress(SessionBusyError):  # raised only as a turn is claimed: lost the race, wait again
            return await start()
