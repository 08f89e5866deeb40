"""The turns a chat has started that have not begun yet (``chat.send``, the input box, ``edit``, ...), so that an
asking call made after them runs them first, in order, instead of overtaking them.

``chat.send`` returns at once and its turn begins on the chat's loop (the kernel's). A cell that then asks
(``await chat.ask(...)``, ``chat.ask_sync(...)``) would otherwise reach the session first: its own turn ran before
the sent one, or, with a blocking cell holding the very loop the sent turn waits to begin on, only after the cell.
Each such turn is queued here as it is started; whoever takes it first runs it: the chat's loop, or an asking call,
which takes every turn still waiting and runs them, oldest first, before its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ai_widgets.messages import Message
from ai_widgets.widget._kernel import copy_outcome

__all__ = ["Taken", "Unstarted", "UnstartedTurns", "run_ahead"]

Start = Callable[[], Coroutine[Any, Any, Message]]
#: What an asking call takes (:meth:`UnstartedTurns.take_all`): the turns waiting, and those beginning meanwhile.
Taken = tuple[list["Unstarted"], list["Unstarted"]]


@dataclass(eq=False)
class Unstarted:
    """One turn started and not begun: how to begin it, and the reply its caller holds.

    Attributes:
        start: Begins the turn; from the call to its first suspension it claims the session (or queues its message
            for the running turn, or fails) without awaiting anything else, so that once this first step has run,
            a later caller finds the session claimed.
        reply: The turn's reply as its caller holds it; cancelling it before the turn begins means it never does,
            after, stops it.
        begun: Set once the turn's first step has run (the session is claimed) or the turn will never run.
    """

    start: Start
    reply: concurrent.futures.Future[Message] = field(default_factory=concurrent.futures.Future)
    begun: concurrent.futures.Future[None] = field(default_factory=concurrent.futures.Future)
    task: asyncio.Task[Message] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    async def run(self) -> None:
        """Runs the turn on this loop, in a task of its own (its reply gets the outcome); cancelling this await
        cancels that task, and so stops the turn."""
        if self.reply.cancelled():
            self._mark_begun()
            return
        loop = asyncio.get_running_loop()
        task = loop.create_task(self.start())
        self.task, self.loop = task, loop
        loop.call_soon(self._mark_begun)  # after the task's first step, which claims the session
        task.add_done_callback(lambda done: copy_outcome(done, self.reply))
        self.reply.add_done_callback(self._stop_if_cancelled)
        await task

    def _stop_if_cancelled(self, reply: concurrent.futures.Future[Message]) -> None:
        task, loop = self.task, self.loop
        if reply.cancelled() and task is not None and loop is not None and not task.done():
            with contextlib.suppress(RuntimeError):  # its loop closed: the turn is over
                loop.call_soon_threadsafe(task.cancel)

    def _mark_begun(self) -> None:
        if not self.begun.done():
            self.begun.set_result(None)


class UnstartedTurns:
    """The chat's started turns not begun yet, oldest first; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Unstarted] = []
        self._beginning: list[Unstarted] = []  # taken by the chat's loop, first step not run yet

    def add(self, start: Start) -> Unstarted:
        """Queues a turn; the caller then has it begun by :meth:`run_if_waiting` on the chat's loop."""
        turn = Unstarted(start)
        with self._lock:
            self._waiting.append(turn)
        return turn

    async def run_if_waiting(self, turn: Unstarted) -> None:
        """Runs ``turn`` unless an asking call took it first (the chat loop's own start of it)."""
        with self._lock:
            if turn not in self._waiting:
                return
            self._waiting.remove(turn)
            self._beginning.append(turn)
        turn.begun.add_done_callback(lambda _: self._forget(turn))
        await turn.run()

    def _forget(self, turn: Unstarted) -> None:
        with self._lock:
            if turn in self._beginning:
                self._beginning.remove(turn)

    def withdraw(self, turn: Unstarted) -> None:
        """Takes ``turn`` out of the queue, never to run (it could not be begun): its reply is cancelled."""
        with self._lock:
            if turn in self._waiting:
                self._waiting.remove(turn)
        turn.reply.cancel()

    def take_all(self) -> Taken:
        """Every turn waiting now, oldest first, taken: the caller runs them (:func:`run_ahead`) or gives them
        back (:meth:`give_back`); and the turns the chat's loop (on another thread) is beginning right now, whose
        first step the caller waits for."""
        with self._lock:
            taken, self._waiting = self._waiting, []
            return taken, list(self._beginning)

    def give_back(self, turns: list[Unstarted]) -> list[Unstarted]:
        """Puts back, first in the queue, the ``turns`` an asking call took and did not run (it was cancelled
        before it ran them); returns those, which the caller has begun on the chat's loop again."""
        back = [turn for turn in turns if turn.task is None and not turn.begun.done()]
        with self._lock:
            self._waiting[:0] = back
        return back


async def run_ahead(turns: list[Unstarted], beginning: list[Unstarted], then: Start) -> Message:
    """Waits until the turns ``beginning`` on the chat's loop have claimed the session, runs ``turns`` (taken from
    the queue), oldest first, each to its end, then ``then``. A turn's failure is its caller's (told through its
    ``reply``), not this call's."""
    for turn in beginning:
        await asyncio.wrap_future(turn.begun)
    for turn in turns:
        try:
            await turn.run()
        except asyncio.CancelledError:
            cancelling = getattr(asyncio.current_task(), "cancelling", None)  # Python 3.11+
            if cancelling is None or cancelling():
                raise  # this call was cancelled (an interrupt): the turn it ran stopped with it
            # else its own caller cancelled that turn (its reply): this call goes on
        except Exception:  # the turn's caller has it, through the turn's reply
            continue
    return await then()
