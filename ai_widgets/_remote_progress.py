"""The link to a Dask worker: a sync tool's progress reaches its card, a cancel reaches the tool, and a call runs
at most once.

A sync tool sent to another process gets a stand-in :class:`~ai_widgets.tools.ToolInvocation` built there. On a Dask
``distributed`` executor (``client.get_executor()``) the stand-in is linked back to the kernel:

- progress: the worker publishes each report as a Dask structured event (``Worker.log_event``) on one topic per
  client, keyed by a token unique to the call; the kernel subscribes to that topic while at least one call is
  running (``Client.subscribe_topic``) and hands each report to the real invocation's ``progress``, which hops to the
  session's event loop. Reports are throttled on the worker (at most one per ``interval``, the last one always
  sent, before the call returns), so a tight loop of reports does not flood the scheduler.
- cancel: when the call is cancelled in the kernel (a cancel, a stop, a timeout), the Dask future is cancelled, and
  the worker marks the running task cancelled. The stand-in's ``cancelled`` reads that state where it runs (no
  network round trip), so ``invocation.cancelled.is_set()`` turns true a moment after the cancel.
- at most once: Dask runs a task again when the worker running it dies (up to ``allowed-failures`` times, a setting
  of the scheduler that a client cannot change for its own tasks), and recomputes a finished one whose worker held
  its result. A tool call must not: it may have done its work already. So the kernel puts a one-time token in a Dask
  ``Queue`` of the call's own (:func:`open_run_once`), and the call, where it runs, takes it before the tool starts
  (:meth:`RunOnce.claim`): the scheduler hands it to one run only, and any later run finds the name of the worker
  that took it instead and refuses to call the tool.

Other executors (process pools, Ray, ...) have no such channel: nothing here applies to them.

``distributed`` stays optional: it is never imported here at module import; the kernel side only duck-types the
executor and calls its client, and the worker side imports it where it runs (a Dask worker has it).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ProgressSender",
    "RemoteCall",
    "RemoteLink",
    "RemoteRegistration",
    "RunOnce",
    "RunOnceHandle",
    "killed_worker",
    "open_run_once",
    "register_remote_call",
]

logger = logging.getLogger(__name__)

#: The least time between two progress events sent by a worker for one call: at most 20 a second.
DEFAULT_INTERVAL = 0.05
#: Longer progress messages are cut to this many characters before they travel.
MAX_MESSAGE = 2000
#: How often a waiting ``invocation.cancelled.wait()`` on a worker looks at the task's state.
CANCEL_POLL = 0.1

ReportProgress = Callable[[float | None, str | None], None]


# --- the kernel side ----------------------------------------------------------------------------------------------


def dask_client(executor: Executor) -> Any | None:
    """The ``distributed.Client`` behind a Dask executor (``client.get_executor()``), or ``None`` for any other.

    Duck-typed, so ``distributed`` is never imported for an executor that is not Dask's.
    """
    if not type(executor).__module__.startswith("distributed."):
        return None
    client = getattr(executor, "_client", None)
    if (
        client is None
        or not callable(getattr(client, "subscribe_topic", None))
        or not isinstance(getattr(client, "id", None), str)
    ):
        return None
    return client


@dataclass
class Listener:
    report: ReportProgress
    seq: int = 0  # the last report handed on


class ClientRelay:
    """One Dask client's progress topic: subscribed while at least one call is running, each event handed to the
    call it names. Lives as long as the client (which holds its handler)."""

    def __init__(self, client: Any) -> None:
        self._client = weakref.ref(client)
        self.topic = f"ai_widgets-progress-{client.id}"
        self._lock = threading.Lock()
        self._calls: dict[str, Listener] = {}
        self.subscribed = False
        self.received = 0  # events that reached this relay (for tests and debugging)

    @property
    def active_calls(self) -> int:
        """The calls whose progress is relayed now."""
        with self._lock:
            return len(self._calls)

    def register(self, report: ReportProgress) -> str:
        """Starts relaying one call's progress to ``report``; returns the call's token.

        Raises:
            Exception: Whatever the client raises when it cannot subscribe (it is closed).
        """
        token = uuid.uuid4().hex
        with self._lock:
            client = self._client()
            if client is None:
                raise RuntimeError("the Dask client is gone")
            if not self._calls:
                # Sent on the client's stream to the scheduler, ahead of the task that is submitted next, so no
                # event of the call can come before the subscription.
                client.subscribe_topic(self.topic, self._on_event)
                self.subscribed = True
            self._calls[token] = Listener(report)
        return token

    def unregister(self, token: str) -> None:
        """Stops relaying a call; the last call to stop unsubscribes the client from the topic."""
        with self._lock:
            if self._calls.pop(token, None) is None or self._calls:
                return
            self.subscribed = False
            client = self._client()
            if client is None:
                return
            try:
                # The scheduler stops sending the topic. The client keeps this relay as the topic's handler (one per
                # client): removing it would make Dask log an error for an event already on its way.
                client.unsubscribe_topic(self.topic)
            except Exception:  # the client is closing: there is nothing left to unsubscribe from
                logger.debug("ai_widgets: could not unsubscribe from %s", self.topic, exc_info=True)

    def _on_event(self, event: Any) -> None:
        """Runs on the Dask client's event loop thread, once per event on the topic, in the order they were sent."""
        self.received += 1
        try:
            _, payload = event
            token, seq = payload["call"], payload["seq"]
            fraction, message = payload.get("fraction"), payload.get("message")
        except (TypeError, ValueError, KeyError):
            return
        with self._lock:
            listener = self._calls.get(token) if isinstance(token, str) else None
            if listener is None or not isinstance(seq, int) or seq <= listener.seq:
                return  # a call that has ended, or a report overtaken by a later one
            listener.seq = seq
        try:
            # ToolProgress.report is safe from any thread: it hops to the session's event loop.
            listener.report(fraction, message)
        except ValueError:
            logger.debug("ai_widgets: dropped a malformed progress event on %s", self.topic)


relays: weakref.WeakKeyDictionary[Any, ClientRelay] = weakref.WeakKeyDictionary()
relays_lock = threading.Lock()


def client_relay(client: Any) -> ClientRelay:
    """The progress relay of a Dask client (one per client)."""
    with relays_lock:
        relay = relays.get(client)
        if relay is None:
            relay = relays[client] = ClientRelay(client)
        return relay


@dataclass(frozen=True)
class RemoteCall:
    """What a call sent to a Dask worker needs to send its progress back: picklable, small.

    Attributes:
        topic: The Dask event topic the kernel listens on.
        token: The call's key on that topic (unique to the call).
        interval: The least seconds between two progress events sent for the call.
    """

    topic: str
    token: str
    interval: float = DEFAULT_INTERVAL

    def attach(self) -> RemoteLink | None:
        """Where the call runs: the link back to the kernel, or ``None`` outside a Dask worker."""
        try:
            from distributed import get_worker

            worker = get_worker()
            key = worker.get_current_task()
        except Exception:  # not on a Dask worker (distributed missing, or the call runs elsewhere)
            return None
        return RemoteLink(ProgressSender(worker, self), TaskCancelled(worker, key))


class RemoteRegistration:
    """A call whose progress the kernel relays; :meth:`close` it when the call has ended (however it ended)."""

    def __init__(self, relay: ClientRelay, token: str) -> None:
        self._relay = relay
        self.call = RemoteCall(relay.topic, token)
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._relay.unregister(self.call.token)


def register_remote_call(executor: Executor, report: ReportProgress) -> RemoteRegistration | None:
    """Starts relaying the progress of a call about to be sent to ``executor``; ``None`` when it cannot be relayed
    (not a Dask executor, or its client cannot subscribe)."""
    client = dask_client(executor)
    if client is None:
        return None
    relay = client_relay(client)
    try:
        token = relay.register(report)
    except Exception:
        logger.debug("ai_widgets: cannot relay progress through %r", client, exc_info=True)
        return None
    return RemoteRegistration(relay, token)


class RunOnceHandle:
    """The kernel's hold on a call's one-time token (see :func:`open_run_once`); :meth:`close` it once the call has
    ended. Until then the scheduler keeps the token's queue, so every later run of the call finds it taken."""

    def __init__(self, queue: Any, claim: RunOnce) -> None:
        self._queue = queue
        self.claim = claim
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._queue.close()  # a message to the scheduler, not a round trip
        except Exception:  # the client is closing: the scheduler drops the queue with it
            logger.debug("ai_widgets: could not release %s", self.claim.queue, exc_info=True)


async def open_run_once(executor: Executor) -> RunOnceHandle | None:
    """Before a call is sent to a Dask executor: its one-time token, put in a Dask queue of its own on the scheduler.
    ``None`` for any other executor.

    Raises:
        Exception: Whatever the Dask client raises when the scheduler cannot be reached.
    """
    client = dask_client(executor)
    if client is None:
        return None
    claim = RunOnce(f"ai_widgets-run-once-{uuid.uuid4().hex}", uuid.uuid4().hex)
    if getattr(client, "asynchronous", False):
        queue = await open_queue_async(client, claim)
    else:
        # Two round trips to the scheduler, made off the session's event loop.
        queue = await asyncio.to_thread(open_queue, client, claim)
    return RunOnceHandle(queue, claim)


def open_queue(client: Any, claim: RunOnce) -> Any:
    queue = dask_queue()(claim.queue, client=client)
    queue.put(claim.token)
    return queue


async def open_queue_async(client: Any, claim: RunOnce) -> Any:
    queue = await dask_queue()(claim.queue, client=client)
    await queue.put(claim.token)
    return queue


def dask_queue() -> Any:
    """``distributed.Queue`` (untyped), imported only where a Dask executor is used: distributed is optional."""
    import distributed

    return distributed.Queue


def killed_worker(exc: BaseException) -> str | None:
    """The address of the last worker that died running a task, when ``exc`` is Dask's ``KilledWorker`` (the
    scheduler gave up on the task after ``allowed-failures`` workers died running it); ``None`` for anything else."""
    if type(exc).__name__ != "KilledWorker" or not type(exc).__module__.startswith("distributed."):
        return None
    address = getattr(getattr(exc, "last_worker", None), "address", None)
    return address if isinstance(address, str) else "an unknown worker"


# --- the worker side ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOnce:
    """A call's one-time token and the Dask queue that holds it: picklable, small.

    Attributes:
        queue: The name of the call's queue on the scheduler.
        token: What the first run takes from it.
    """

    queue: str
    token: str

    def claim(self) -> str | None:
        """Where the call runs, before the tool starts: ``None`` when this run took the token (the only run
        allowed); otherwise the worker that took it before (this is a second run, after that worker died).

        Raises:
            Exception: The queue could not be reached (the call must not run then: nobody can tell whether it ran).
        """
        from distributed import get_worker  # on a Dask worker, where distributed is installed

        try:
            here = str(get_worker().address)
        except ValueError:  # a task run by the client itself (a local or synchronous scheduler)
            here = "this process"
        queue = dask_queue()(self.queue)
        try:
            # One step on the scheduler: of two runs, only one can get the token.
            taken = queue.get(batch=True)
            if self.token in taken:
                queue.put(here)  # what a later run is told: who ran the call
                return None
            for item in taken:  # put back for any run after this one
                queue.put(item)
            # None taken: the kernel let go of the queue (the call ended) and this is a recompute of a finished call.
            return next((item for item in taken if isinstance(item, str)), "an earlier run")
        finally:
            queue.close()


@dataclass(frozen=True)
class RemoteLink:
    """A call's link back to the kernel, on the worker where it runs."""

    sender: ProgressSender
    cancelled: threading.Event

    def close(self) -> None:
        """Sends the last report still held back; later reports (a thread the tool left behind) are dropped."""
        self.sender.close()


class ProgressSender:
    """Sends a call's progress reports as Dask events: at once when the last one went at least ``interval`` ago,
    otherwise the latest is held and sent when the interval is up (so the last report always arrives)."""

    def __init__(self, worker: Any, call: RemoteCall) -> None:
        self._worker = worker
        self._call = call
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._pending: dict[str, Any] | None = None
        self._last_sent = -math.inf
        self._timer: threading.Timer | None = None
        self._closed = False
        self._failed = False
        self.sent = 0

    def send(self, fraction: float | None, message: str | None) -> None:
        """Sends (or holds) one report, already checked by ``ToolProgress.report``; safe from any thread."""
        if message is not None and len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 1] + "…"
        with self._lock:
            if self._closed:
                return
            self._pending = {"call": self._call.token, "seq": next(self._seq), "fraction": fraction, "message": message}
            if self._timer is not None:
                return  # the timer sends the latest report when the interval is up
            wait = self._last_sent + self._call.interval - time.monotonic()
            if wait <= 0:
                self._flush_locked()
            else:
                self._timer = threading.Timer(wait, self._flush_later)
                self._timer.daemon = True
                self._timer.start()

    def close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._flush_locked()
            self._closed = True

    def _flush_later(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._flush_locked()

    def _flush_locked(self) -> None:
        payload, self._pending = self._pending, None
        if payload is None:
            return
        self._last_sent = time.monotonic()
        try:
            # Queued on the worker's event loop, in order, ahead of the task's own result when sent before it.
            self._worker.log_event(self._call.topic, payload)
            self.sent += 1
        except Exception:
            if not self._failed:
                self._failed = True
                logger.warning("ai_widgets: could not send a tool's progress to the kernel", exc_info=True)


class TaskCancelled(threading.Event):
    """``invocation.cancelled`` on a Dask worker: also set once the worker has marked the call's task cancelled
    (the kernel cancelled its future), which it looks up on each ``is_set()``, in memory."""

    def __init__(self, worker: Any, key: Any) -> None:
        super().__init__()
        self._worker = worker
        self._key = key

    def is_set(self) -> bool:
        if super().is_set():
            return True
        if self._task_cancelled():
            self.set()
            return True
        return False

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = CANCEL_POLL if deadline is None else min(CANCEL_POLL, deadline - time.monotonic())
            if left <= 0:
                return False
            super().wait(left)
        return True

    def _task_cancelled(self) -> bool:
        try:
            task = self._worker.state.tasks.get(self._key)
        except Exception:  # a distributed without this state: the cancel is not relayed
            return False
        return task is not None and getattr(task, "state", None) == "cancelled"
