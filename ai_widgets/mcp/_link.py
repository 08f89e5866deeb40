"""The parts a connection is made of: its state (``Link``), the loop thread it lives on, the read stream that
notices the server's end, and a stdio server's stderr, kept for errors. How they are put together over a
connection's life is :mod:`ai_widgets.mcp._connection`."""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ai_widgets.mcp._base import CLOSE_TIMEOUT, STDERR_KEPT, MCPServerError, T, logger
from ai_widgets.mcp._wire import TaskWire

__all__: list[str] = ["Link", "LoopThread", "StderrTail", "Stopped", "watched"]


@dataclass(eq=False)
class Link:
    """One connection, owned by one task on the server's loop."""

    ready: asyncio.Future[None]
    stop: asyncio.Event
    task: asyncio.Task[None] | None = None
    client: Any = None
    stderr: StderrTail | None = None
    lost: bool = False  # the server ended the connection (a stdio server's process exited)
    closing: bool = False  # a close (ours) ends it
    cacheable: bool = True  # the tool list's changes can be followed, so a listing may be kept
    junk_said: bool = False  # a line on the server's stdout that is not a message was reported
    refused: int | None = None  # the HTTP status (401, 403) with which the server refused a request, if it did
    wire: TaskWire = field(default_factory=TaskWire)  # its requests past the SDK (task-augmented tool calls)


class WatchedReads:
    """A transport's read stream that says when the server has ended it (a process that exited): the connection
    is then closed at once, and the process reaped, instead of when it is next used."""

    def __init__(self, inner: Any, on_end: Any) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> WatchedReads:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise
        except Exception as exc:
            import anyio

            if isinstance(exc, anyio.ClosedResourceError):
                self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedReads:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc_info)
        return result


@contextlib.asynccontextmanager
async def watched(transport: Any, on_end: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (reads, writes):
        yield WatchedReads(reads, on_end), writes


class StderrTail:
    """A stdio server's stderr, read on a thread of its own: the end of it kept for error messages, every line
    logged at DEBUG (a server's log lines stay out of the notebook)."""

    def __init__(self, label: str) -> None:
        read_end, write_end = os.pipe()
        self.writer = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")  # the child's stderr
        self.done = threading.Event()
        self._label = label
        self._kept: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()
        threading.Thread(
            target=self._pump, args=(read_end,), name=f"ai_widgets MCP stderr {label}", daemon=True
        ).start()

    def close_writer(self) -> None:
        """Closes this process's copy of the pipe's write end, so the pipe ends when the child's does."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def text(self) -> str:
        with self._lock:
            return "".join(self._kept)

    def _pump(self, fd: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                text = decoder.decode(chunk, final=not chunk)
                if text:
                    self._keep(text)
                    if logger.isEnabledFor(logging.DEBUG):
                        for line in text.splitlines():
                            logger.debug("MCP server %s (stderr): %s", self._label, line)
                if not chunk:
                    break
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
            self.done.set()

    def _keep(self, text: str) -> None:
        with self._lock:
            self._kept.append(text)
            self._size += len(text)
            while self._size > STDERR_KEPT and len(self._kept) > 1:
                self._size -= len(self._kept.popleft())
            if self._size > STDERR_KEPT:
                only = self._kept.pop()[-STDERR_KEPT:]
                self._kept.append(only)
                self._size = len(only)


class Stopped(RuntimeError):
    """The loop thread was stopped (a close) before a request could be sent to it."""


class LoopThread:
    """A thread running an event loop of its own, where one server's connection lives.

    Every request sent to it is remembered until it is done: a request the loop never ran, because a close stopped
    the loop first, is failed by :meth:`stop`, so nobody waits for it forever.
    """

    def __init__(self, label: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._stopped = False
        self._label = label
        self._thread = threading.Thread(target=self._run, name=label, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Runs ``coroutine`` on the loop.

        Raises:
            Stopped: The loop was stopped (``coroutine`` was not started).
        """
        with self._lock:
            if self._stopped:
                raise Stopped(self._label)
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def stop(self) -> None:
        """Stops the loop (its tasks cancelled), waits for the thread, and fails the requests it never finished."""
        with self._lock:
            self._stopped = True
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self._thread is not threading.current_thread():
            self._thread.join(CLOSE_TIMEOUT)
        with self._lock:
            left = [future for future in self._pending if not future.done()]
        for future in left:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(MCPServerError(f"{self._label}: the connection was closed"))

    def _run(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            try:
                pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
