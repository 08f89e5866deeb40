"""Kernel plumbing: widget clicks reach the kernel while a notebook cell waits for a reply.

A click in the widget arrives as a shell ``comm_msg``. The kernel normally dispatches shell messages
one at a time, so while a cell waits (``await chat.ask(...)`` or a blocking ``chat.ask_sync(...)``)
the click waits behind the cell, and the cell waits for the click: a deadlock. This module lets
*only* ``comm_open``/``comm_msg``/``comm_close`` through while a cell waits. Every other shell
message (later cells, completions, ``kernel_info``) goes on to the kernel's own FIFO queue
untouched, so it runs after the cell, in the order it arrived.

How, per kernel (private ipykernel internals; ``kernel_support()`` feature-detects them):

- ipykernel 6: the main thread reads the shell socket through ``kernel.shell_stream`` and queues
  every message on ``kernel.msg_queue``. While a cell waits, the stream's receive callback is
  swapped for a filter that handles comm messages at once and passes the rest to the original
  callback (which queues them). Comm messages queued before the wait began are handled too.
- ipykernel 7.0-7.3: a shell-channel thread forwards main-shell messages over an inproc socket;
  the same filter sits on that socket's stream. The rest queue on ``kernel._main_asyncio_lock``.
- ipykernel 7.4+: an *awaiting* cell no longer blocks comm messages, so ``await_with_comms`` is a
  plain ``await``. A *blocking* cell stops the event loop on every version, so
  ``wait_with_comms`` reads the socket itself between short waits, through the same filter.

Only message headers are parsed before a message is handed on: ``Session.deserialize`` records the
HMAC signature, and the kernel would then reject its own later dispatch as a duplicate.

Nothing here imports ipykernel, IPython or pyzmq at import time: outside a kernel both waits are
plain waits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import logging
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, Literal, TypeVar

from ai_widgets._threads import running_loop

__all__ = [
    "KernelSupport",
    "UnsupportedKernelError",
    "await_with_comms",
    "copy_outcome",
    "kernel_support",
    "main_loop",
    "private_loop",
    "run_on_main_loop",
    "wait_with_comms",
]

T = TypeVar("T")
KernelKind = Literal["none", "ipykernel6", "ipykernel7", "ipykernel7-concurrent-comms", "unknown"]

COMM_TYPES = frozenset({"comm_open", "comm_msg", "comm_close"})
POLLIN = 1  # zmq.POLLIN, without importing zmq here
WAKE_INTERVAL = 0.1  # seconds; how late a kernel interrupt of an awaiting cell may be seen
log = logging.getLogger(__name__)


class UnsupportedKernelError(RuntimeError):
    """This kernel cannot process widget clicks while a cell waits for a reply."""

    def __init__(self, detail: str) -> None:
        """Builds the message.

        Args:
            detail: What was found about the kernel.
        """
        super().__init__(
            f"This kernel cannot deliver widget clicks while a cell waits ({detail}). "
            "Use chat.send() instead: the turn runs in the background and you approve tool calls in the widget."
        )
        self.detail = detail


@dataclass(frozen=True)
class KernelSupport:
    """What this process's kernel allows while a cell waits for a reply.

    Attributes:
        kind: ``"none"`` outside a Jupyter kernel; ``"ipykernel6"`` / ``"ipykernel7"`` when comm
            messages are pumped while a cell waits; ``"ipykernel7-concurrent-comms"`` when the kernel
            itself handles comm messages while a cell awaits (7.4+); ``"unknown"`` for a kernel whose
            internals are not recognised (cells cannot wait for clicks there).
        version: The ipykernel version, if ipykernel is loaded.
        detail: A sentence on what was detected, for error messages and logs.
    """

    kind: KernelKind
    version: str | None
    detail: str


@dataclass(frozen=True)
class Internals:
    """The parts of a recognised kernel the comm filter uses."""

    kernel: Any
    stream: Any  # the ZMQStream that feeds main-shell messages to the main thread
    reply_stream: Any  # what the kernel passes to its shell handlers as ``stream``
    loop: asyncio.AbstractEventLoop
    queue: Any  # ipykernel 6's msg_queue, else None


def current_kernel() -> Any | None:
    """The kernel of this process, or ``None``; never imports IPython."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return getattr(shell, "kernel", None)


def kernel_loop(kernel: Any) -> asyncio.AbstractEventLoop | None:
    loop = getattr(getattr(kernel, "io_loop", None), "asyncio_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


def has_concurrent_comms(kernel: Any) -> bool:
    try:
        return "concurrent" in inspect.signature(kernel.dispatch_shell).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def find_internals(kernel: Any) -> tuple[Internals | None, str]:
    """The kernel's comm-filter internals, or ``None`` and what is missing."""
    session = getattr(kernel, "session", None)
    if not all(hasattr(session, name) for name in ("feed_identities", "deserialize", "unpack")):
        return None, "no recognised message session"
    handlers = getattr(kernel, "shell_handlers", None)
    if not isinstance(handlers, dict) or not handlers.keys() >= COMM_TYPES:
        return None, "no comm handlers"
    if not (callable(getattr(kernel, "set_parent", None)) and callable(getattr(kernel, "get_parent", None))):
        return None, "no set_parent/get_parent"
    if not hasattr(kernel, "_parent_ident"):
        return None, "no shell parent identity"
    loop = kernel_loop(kernel)
    if loop is None:
        return None, "no asyncio loop on kernel.io_loop"
    channel_thread = getattr(kernel, "shell_channel_thread", None)
    queue = None
    try:
        if channel_thread is not None:  # ipykernel 7: the shell-channel thread forwards over inproc sockets
            manager = channel_thread.manager
            get_pair = getattr(manager, "get_shell_channel_to_subshell_pair", None)
            pair = get_pair(None) if callable(get_pair) else manager._shell_channel_to_main
            stream = pair.to_stream
            reply_stream = manager.get_subshell_to_shell_channel_socket(None)
        else:
            stream = reply_stream = kernel.shell_stream
            if not hasattr(kernel, "_main_asyncio_lock"):  # ipykernel 6: everything goes through msg_queue
                queue = kernel.msg_queue
                if not all(hasattr(queue, name) for name in ("empty", "get_nowait", "put_nowait")):
                    return None, "unrecognised msg_queue"
    except Exception as exc:  # any missing or changed internal means "not recognised"
        return None, f"shell internals not recognised ({type(exc).__name__}: {exc})"
    if not (
        callable(getattr(stream, "_recv_callback", None)) and hasattr(stream, "flush") and hasattr(stream, "socket")
    ):
        return None, "the main shell stream is not a recognised ZMQStream"
    return Internals(kernel, stream, reply_stream, loop, queue), ""


def probe() -> tuple[KernelSupport, Internals | None]:
    kernel = current_kernel()
    if kernel is None:
        return KernelSupport("none", None, "not running inside a Jupyter kernel"), None
    version = getattr(sys.modules.get("ipykernel"), "__version__", None)
    name = f"ipykernel {version}" if version else type(kernel).__qualname__
    internals, missing = find_internals(kernel)
    if has_concurrent_comms(kernel):
        if internals is None:
            detail = f"{name}: an awaiting cell receives comm messages; a blocking wait cannot ({missing})"
        else:
            detail = f"{name}: an awaiting cell receives comm messages; a blocking wait pumps them"
        return KernelSupport("ipykernel7-concurrent-comms", version, detail), internals
    if internals is None:
        return KernelSupport("unknown", version, f"{name}: {missing}"), None
    if internals.queue is not None:
        return KernelSupport(
            "ipykernel6", version, f"{name}: comm messages are pumped from the shell stream"
        ), internals
    return KernelSupport(
        "ipykernel7", version, f"{name}: comm messages are pumped from the main shell's socket"
    ), internals


def kernel_support() -> KernelSupport:
    """Detects what the kernel of this process allows while a cell waits.

    Returns:
        The kind of kernel, found from its internals rather than from its version string alone.
    """
    return probe()[0]


MAIN_LOOP: asyncio.AbstractEventLoop | None = None


def main_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's main asyncio loop (the one cells run on), or ``None`` outside a kernel.

    Works from any thread: the loop is read from the kernel, or captured when first called on the
    kernel's main thread.

    Returns:
        The loop, or ``None`` outside a kernel.
    """
    global MAIN_LOOP
    kernel = current_kernel()
    if kernel is None:
        return None
    loop = kernel_loop(kernel)
    if loop is None and threading.current_thread() is threading.main_thread():
        loop = running_loop()
    if loop is not None and not loop.is_closed():
        MAIN_LOOP = loop
    return MAIN_LOOP if MAIN_LOOP is not None and not MAIN_LOOP.is_closed() else None


class PrivateLoop:
    """An event loop on a daemon thread, for turns that must run while the cell's thread blocks."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="ai_widgets-turns", daemon=True).start()
                self._loop = loop
            return self._loop


package_loop = PrivateLoop()


def private_loop() -> asyncio.AbstractEventLoop:
    """An event loop of this package on a daemon thread (started on first use), for turns that must run while the
    cell's thread blocks."""
    return package_loop.get()


def copy_outcome(done: asyncio.Future[T] | concurrent.futures.Future[T], into: concurrent.futures.Future[T]) -> None:
    """Ends ``into`` as ``done`` ended (its result, its exception, or cancelled); nothing when ``into`` has ended
    already (cancelled meanwhile by its holder)."""
    try:
        if done.cancelled():
            into.cancel()
        elif (exc := done.exception()) is not None:
            into.set_exception(exc)
        else:
            into.set_result(done.result())
    except concurrent.futures.InvalidStateError:
        pass


def wrap_task(task: asyncio.Future[T], loop: asyncio.AbstractEventLoop) -> concurrent.futures.Future[T]:
    """A thread-safe future that follows ``task``; cancelling it cancels the task."""
    result: concurrent.futures.Future[T] = concurrent.futures.Future()

    def cancel_task(done: concurrent.futures.Future[T]) -> None:
        if done.cancelled() and not task.done():
            loop.call_soon_threadsafe(task.cancel)

    task.add_done_callback(lambda done: copy_outcome(done, result))
    result.add_done_callback(cancel_task)
    return result


def run_on_main_loop(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Runs a coroutine on the kernel's main loop, from any thread.

    Comm callbacks may run on a subshell thread (ipykernel 7 with JupyterLab >= 4.4), so anything
    they start must be handed to the main loop. On the main loop's own thread this creates a task.
    Outside a kernel, the running loop of the calling thread is used.

    Args:
        coro: The coroutine to run.

    Returns:
        A thread-safe future of its result; cancelling it cancels the coroutine.

    Raises:
        RuntimeError: There is no kernel loop and no running loop in this thread.
    """
    running = running_loop()
    loop = main_loop() or running
    if loop is None or loop.is_closed():
        coro.close()
        raise RuntimeError("no kernel event loop, and no running event loop in this thread")
    if running is loop:
        return wrap_task(loop.create_task(coro), loop)
    return asyncio.run_coroutine_threadsafe(coro, loop)


class CommFilter:
    """Sits on the main shell's stream: handles comm messages now, passes the rest on untouched.

    Used only on the kernel's main thread. Reference-counted, so nested and overlapping waits share
    one installation; the original callback comes back when the last wait ends.
    """

    def __init__(self, internals: Internals) -> None:
        self.internals = internals
        self.depth = 0
        self._original: Callable[[Any], Any] | None = None
        self._copy = False
        self._context = contextvars.copy_context()
        self._tasks: set[asyncio.Future[Any]] = set()

    def acquire(self) -> None:
        if self.depth == 0:
            stream = self.internals.stream
            self._original = stream._recv_callback
            self._copy = bool(getattr(stream, "_recv_copy", False))
            self._context = contextvars.copy_context()  # the waiting cell's parent header and outputs
            stream.on_recv(self._on_recv, copy=self._copy)
            self.depth = 1
            try:
                self._take_queued_comms()
            except BaseException:
                self.release()
                raise
            return
        self.depth += 1

    def release(self) -> None:
        self.depth -= 1
        if self.depth > 0:
            return
        stream = self.internals.stream
        if stream._recv_callback == self._on_recv:
            stream.on_recv(self._original, copy=self._copy)
        else:  # swapped meanwhile by someone else; if they hand back to us, we only pass messages on
            log.warning("the kernel's shell stream callback was replaced while a cell waited")

    def _msg_type(self, frames: list[Any]) -> str | None:
        """The message type, from the header alone (no signature check: see the module docstring)."""
        try:
            _, parts = self.internals.kernel.session.feed_identities(frames, copy=self._copy)
            header = parts[1] if isinstance(parts[1], bytes) else parts[1].bytes
            msg_type = self.internals.kernel.session.unpack(header).get("msg_type")
        except Exception:  # not a message we understand: the kernel decides
            return None
        return msg_type if isinstance(msg_type, str) else None

    def _on_recv(self, frames: list[Any]) -> None:
        if self.depth > 0 and self._msg_type(frames) in COMM_TYPES:
            self._run_comm(frames)
            return
        assert self._original is not None
        result = self._original(frames)
        if inspect.isawaitable(result):  # ipykernel 7: a shell_main task, queued on the cell's lock
            self._keep(asyncio.ensure_future(result, loop=self.internals.loop))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("shell message handler failed", exc_info=exc)

    def _take_queued_comms(self) -> None:
        """ipykernel 6: handle comm messages already queued behind the cell; requeue the rest in order."""
        queue, kernel = self.internals.queue, self.internals.kernel
        if queue is None:
            return
        items = []
        while not queue.empty():
            items.append(queue.get_nowait())
        comms = []
        for item in items:
            _, dispatch, args = item
            if dispatch == kernel.dispatch_shell and args and self._msg_type(args[0]) in COMM_TYPES:
                comms.append(args[0])
            else:
                queue.put_nowait(item)
        for frames in comms:
            self._run_comm(frames)

    def _run_comm(self, frames: list[Any]) -> None:
        """Handles a comm message in a copy of the waiting cell's context; never raises (the pump goes on)."""
        try:
            self._context.copy().run(self._handle_comm, frames)
        except Exception:
            log.exception("could not handle a comm message while a cell waited")

    def _parent_ident(self) -> Any:
        try:  # a dict on ipykernel 6, a view of context variables on 7
            return self.internals.kernel._parent_ident["shell"]
        except LookupError:
            return b""

    def _handle_comm(self, frames: list[Any]) -> None:
        """Dispatches one comm message as the kernel would, then gives the cell its parent back."""
        kernel = self.internals.kernel
        try:
            idents, parts = kernel.session.feed_identities(frames, copy=self._copy)
            msg = kernel.session.deserialize(parts, content=True, copy=self._copy)
        except Exception:
            kernel.log.error("Invalid Message", exc_info=True)
            return
        parent, ident = kernel.get_parent("shell"), self._parent_ident()
        kernel.set_parent(idents, msg, channel="shell")
        try:
            result = kernel.shell_handlers[msg["header"]["msg_type"]](self.internals.reply_stream, idents, msg)
            if inspect.isawaitable(result):
                self._keep(asyncio.ensure_future(result, loop=self.internals.loop))
        except Exception:
            kernel.log.error("Exception in message handler:", exc_info=True)
        finally:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
            kernel.set_parent(ident, parent, channel="shell")


FILTER: CommFilter | None = None


def filter_for(internals: Internals) -> CommFilter:
    global FILTER
    if FILTER is None or FILTER.internals.stream is not internals.stream:
        FILTER = CommFilter(internals)
    return FILTER


def close_unawaited(awaitable: Awaitable[Any]) -> None:
    if inspect.iscoroutine(awaitable):
        awaitable.close()


class Waker:
    """Wakes the loop every ``WAKE_INTERVAL`` seconds while a cell awaits.

    SIGINT may be delivered to one of the kernel's other threads; the main thread then runs
    ipykernel's handler (which cancels the awaiting cell) only when its loop next wakes up. Without
    this, an interrupt of a cell waiting for a click would wait for the click.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._handle = loop.call_later(WAKE_INTERVAL, self._tick)

    def _tick(self) -> None:
        self._handle = self._loop.call_later(WAKE_INTERVAL, self._tick)

    def cancel(self) -> None:
        self._handle.cancel()


async def await_with_comms(awaitable: Awaitable[T]) -> T:
    """Awaits ``awaitable`` in a cell while widget clicks (comm messages) keep reaching the kernel.

    Outside a kernel, or off the kernel's main loop, this is a plain ``await``; on ipykernel 7.4+
    the kernel itself handles comm messages while a cell awaits. On ipykernel 6 and 7.0-7.3, comm
    messages for the main shell are handled while waiting; other shell messages queue in the kernel
    as usual and run after the cell, in order. In a kernel the loop is also woken every 0.1 s, so
    a kernel interrupt (ipykernel cancels the awaiting cell) is seen promptly; cancellation stops
    the filtering and propagates.

    Args:
        awaitable: What the cell waits for, for example the task of a chat turn.

    Returns:
        The awaitable's result.

    Raises:
        UnsupportedKernelError: The kernel is not one this module recognises; raised before
            anything is awaited (a coroutine passed in is closed).
    """
    support, internals = probe()
    if support.kind == "none":
        return await awaitable
    concurrent_comms = support.kind == "ipykernel7-concurrent-comms"
    if internals is None and not concurrent_comms:
        close_unawaited(awaitable)
        raise UnsupportedKernelError(support.detail)
    loop = asyncio.get_running_loop()
    if loop is not main_loop():  # e.g. a private loop thread: this wait does not block the main shell
        return await awaitable
    comm_filter = None if concurrent_comms or internals is None else filter_for(internals)
    waker = Waker(loop)
    try:
        if comm_filter is not None:
            comm_filter.acquire()
        try:
            return await awaitable
        finally:
            if comm_filter is not None:
                comm_filter.release()
    finally:
        waker.cancel()


class DeferredInterrupt:
    """Turns SIGINT into a flag while comm messages are pumped, so no message is half-handled.

    A second SIGINT before the first is acted on raises ``KeyboardInterrupt`` at once.
    """

    def __init__(self) -> None:
        self.pending = False
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.pending:
            raise KeyboardInterrupt
        self.pending = True

    def __enter__(self) -> DeferredInterrupt:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # respect SIG_IGN / SIG_DFL
                self._previous = signal.signal(signal.SIGINT, self._handle)
                self._installed = True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)


def wait_with_comms(future: concurrent.futures.Future[T], *, poll_interval: float = 0.02) -> T:
    """Blocks the calling cell until ``future`` is done, handling widget clicks (comm messages) meanwhile.

    A blocking cell stops the kernel's event loop on every ipykernel version, so between waits of
    ``poll_interval`` seconds this reads the main shell's pending messages itself: comm messages are
    handled at once, the rest queue in the kernel and run after the cell, in order. Outside a
    kernel, or off the kernel's main thread, this is ``future.result()``.

    Args:
        future: The result to wait for; its work must run on another thread (the kernel's loop is
            blocked meanwhile).
        poll_interval: Longest time, in seconds, between two checks of ``future``.

    Returns:
        The future's result.

    Raises:
        KeyboardInterrupt: The kernel was interrupted; the kernel's state is restored first, and
            the caller should cancel its work.
        UnsupportedKernelError: The kernel is not one this module recognises; raised before
            waiting (the caller should cancel its work).
    """
    if poll_interval <= 0:
        raise ValueError("poll_interval must be positive")
    support, internals = probe()
    if support.kind == "none" or future.done():
        return future.result()
    if internals is None:
        raise UnsupportedKernelError(support.detail)
    if running_loop() is not internals.loop:
        return future.result()
    comm_filter = filter_for(internals)
    stream = internals.stream
    timeout_ms = max(1, round(poll_interval * 1000))
    with DeferredInterrupt() as interrupt:
        comm_filter.acquire()
        try:
            while not future.done() and not interrupt.pending:
                if stream.socket.poll(timeout_ms, POLLIN):
                    stream.flush(POLLIN)
            if interrupt.pending:
                raise KeyboardInterrupt
        finally:
            comm_filter.release()
    return future.result()
