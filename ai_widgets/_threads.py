"""Threads: the threads sync tools run on, and the one way to ask which event loop runs this thread.

A thread cannot be killed: a sync tool that times out or is cancelled keeps running until it returns. A plain
thread pool would keep counting such a thread as busy, and after enough of them every later call would only queue.
Here an abandoned call stops counting against the limit of calls that run at once, so the pool stays usable; the
threads still stuck are bounded too, and listed, so a person can be told which call never came back.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

__all__ = ["StuckCall", "ToolThreads", "default_tool_threads", "running_loop"]


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None`` when none is (another thread, or no loop at all)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@dataclass(frozen=True, slots=True)
class StuckCall:
    """A call that was abandoned (timed out or cancelled) while its thread still runs."""

    label: str
    thread_name: str


@dataclass(slots=True)
class Job:
    future: Future[Any]
    fn: Callable[[], Any]
    label: str
    abandoned: bool = False
    thread_name: str | None = None


class ToolThreads(Executor):
    """Runs sync tools on threads: at most ``max_running`` at once, plus at most ``max_stuck`` abandoned ones.

    Args:
        max_running: Calls that run at once; more wait their turn (tools mostly wait on I/O, so this is generous).
        max_stuck: Abandoned calls whose threads may still run; a call beyond that is refused with a clear error.
    """

    def __init__(self, *, max_running: int = 64, max_stuck: int = 256) -> None:
        self._max_running = max_running
        self._max_stuck = max_stuck
        self._lock = threading.Lock()
        self._queue: deque[Job] = deque()
        self._running: dict[Future[Any], Job] = {}  # started and not abandoned
        self._stuck: dict[Future[Any], Job] = {}  # abandoned while their thread still runs
        self._workers = 0
        self._counter = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Schedules ``fn(*args, **kwargs)`` (``__label__=`` names the call in :meth:`stuck`).

        Raises:
            RuntimeError: Too many abandoned calls are still running.
        """
        label = kwargs.pop("__label__", getattr(fn, "__name__", "a tool"))
        future: Future[Any] = Future()
        job = Job(future, lambda: fn(*args, **kwargs), label)
        with self._lock:
            if len(self._stuck) >= self._max_stuck:
                names = ", ".join(sorted({j.label for j in self._stuck.values()})[:5])
                raise RuntimeError(
                    f"{len(self._stuck)} sync tool calls that timed out or were cancelled are still running "
                    f"({names}); no more threads are started until they return. Restart the kernel to end them."
                )
            self._queue.append(job)
            name = self._claim_worker()
        if name is not None:
            threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Stops counting a call that timed out or was cancelled; its thread, if it still runs, is listed as stuck."""
        with self._lock:
            job = self._running.pop(future, None)
            if job is None:  # finished already, or still queued (then it never starts)
                for queued in self._queue:
                    if queued.future is future:
                        queued.abandoned = True
                return
            job.abandoned = True
            self._stuck[future] = job
            self._workers -= 1  # its thread no longer counts; it exits once the call returns
            name = self._claim_worker()
        if name is not None:
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def stuck(self) -> list[StuckCall]:
        """The abandoned calls whose threads still run."""
        with self._lock:
            return [StuckCall(job.label, job.thread_name or "?") for job in self._stuck.values()]

    def _claim_worker(self) -> str | None:
        """Counts one more worker when there is queued work and room (call with the lock held); its name."""
        if not self._queue or self._workers >= self._max_running:
            return None
        self._workers += 1
        self._counter += 1
        return f"ai_widgets-tool-{self._counter}"

    def _work(self) -> None:
        name = threading.current_thread().name
        while True:
            with self._lock:
                job = None
                while self._queue:
                    candidate = self._queue.popleft()
                    if not candidate.abandoned and candidate.future.set_running_or_notify_cancel():
                        job = candidate
                        break
                if job is None:
                    self._workers -= 1
                    return
                job.thread_name = name
                self._running[job.future] = job
            try:
                result = job.fn()
            except BaseException as exc:  # handed to the caller, whatever it is
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
            with self._lock:
                self._running.pop(job.future, None)
                if job.abandoned:
                    # Counted out when its call was abandoned (a replacement may run in its place): just leave.
                    self._stuck.pop(job.future, None)
                    return


default: ToolThreads | None = None
default_lock = threading.Lock()


def default_tool_threads() -> ToolThreads:
    """The library's own threads for sync tools, shared by every session in the process."""
    global default
    with default_lock:
        if default is None:
            default = ToolThreads()
        return default
