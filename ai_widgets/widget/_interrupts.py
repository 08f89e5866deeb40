"""A kernel interrupt stops the turns started from a widget's input box.

ipykernel ignores SIGINT while no cell runs: it sets ``SIG_IGN`` when it starts, and each request installs Python's
default handler for its own duration only, then puts back what was there. A turn started from the input box runs
while no cell does, so its interrupt would be lost. While such turns run, a handler on the kernel's main thread
stops them; with none running it ignores the signal, as before. It only ever replaces ``SIG_IGN`` (ipykernel's idle
state) or itself: where something else handles SIGINT, or the turn's loop is not on the main thread (Python runs
signal handlers there only), the interrupt is not observed and Stop is the way to stop such a turn.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["watch_interrupts"]


class IdleInterrupts:
    def __init__(self) -> None:
        # Replaced, never mutated: the handler may run between any two bytecodes of the main thread.
        self._watched: tuple[tuple[asyncio.AbstractEventLoop, Callable[[], object]], ...] = ()
        self._lock = threading.Lock()

    def watch(self, loop: asyncio.AbstractEventLoop, stop: Callable[[], object]) -> tuple[bool, Callable[[], None]]:
        entry = (loop, stop)
        with self._lock:
            self._watched = (*self._watched, entry)

        def unwatch() -> None:
            with self._lock:
                self._watched = tuple(e for e in self._watched if e is not entry)

        return self._install(), unwatch

    def _install(self) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return False
        current = signal.getsignal(signal.SIGINT)
        if current == self._handle:
            return True
        if current is not signal.SIG_IGN:
            return False
        signal.signal(signal.SIGINT, self._handle)
        return True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Runs between any two bytecodes of the main thread: it must never raise into what runs there.
        del signum, frame
        for loop, stop in self._watched:
            try:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(stop)
            except RuntimeError:  # the loop closed meanwhile: its turn is over
                pass


interrupts = IdleInterrupts()


def watch_interrupts(stop: Callable[[], object]) -> tuple[bool, Callable[[], None]]:
    """While the returned ``unwatch`` is not called, a kernel interrupt calls ``stop`` on the running loop.

    Call it from the coroutine of the turn (on its loop).

    Returns:
        Whether an interrupt will be observed here, and the function that stops watching.
    """
    return interrupts.watch(asyncio.get_running_loop(), stop)
