"""A sync call sent to another executor (a process pool, a Dask cluster): what travels, what runs there, and how
what comes back is read, so a call runs at most once and every way it can go wrong fails that call, saying how.

The call travels as one picklable :class:`DetachedCall` (the handler, its arguments, the invocation's fields); it
builds the invocation where it runs. It sends back a plain tuple, never the tool's own objects: the value or the
exception pickled there into bytes, or a description of what went wrong. So nothing the tool returns or raises can
break the executor's own transport: a value that cannot be pickled on the worker, or read in the kernel (a class
only the worker has, a ``__reduce__`` that raises on load), fails the call with a clear message, where Dask would
never hand the result over (the call stayed running) and a process pool would break for every call.

Worker deaths: on Dask the call first takes its one-time token (:class:`~ai_widgets._remote_progress.RunOnce`), so a
run Dask starts again after the worker died refuses to call the tool; ``KilledWorker`` and a broken pool
(``BrokenProcessPool``) say the same. The call fails saying its worker died; it is never run twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import pickle
import uuid
from concurrent.futures import BrokenExecutor, Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._remote_progress import (
    ProgressSender,
    RemoteCall,
    RemoteRegistration,
    RunOnce,
    RunOnceHandle,
    killed_worker,
    open_run_once,
    register_remote_call,
)
from ai_widgets._safe import safe_text
from ai_widgets._traceback import user_first_traceback
from ai_widgets.outcome import ToolOutcome
from ai_widgets.tools._invocation import Handler, ToolInvocation, ToolProgress

__all__ = [
    "DetachedCall",
    "ExecutorFailedError",
    "RemoteToolError",
    "RemoteTraceback",
    "UnreadableResultError",
    "UnsendableResultError",
    "WorkerLostError",
    "run_detached",
]

logger = logging.getLogger(__name__)

#: What a detached call sends back: ``(kind, payload, text)``, builtins only, so any executor can hand it over.
#: ``pickled``: payload is the value, pickled; ``returned``: the value itself (a thread pool of this process);
#: ``raised``: payload is the exception itself (in this process) or ``(pickled or None, "Type: message")``, text
#: its traceback; ``unsendable``: the value could not be pickled, text says why;
#: ``ran_before``: another run took the call's token, text names its worker; ``unclaimed``: the token could not be
#: reached, text says why (the tool did not run).
Sent = tuple[str, Any, str]


class ExecutorFailedError(RuntimeError):
    """The executor failed a call itself (it could not send or start it); the tool's own exceptions come back in
    what the call sends."""


class WorkerLostError(RuntimeError):
    """The worker (process) running a call died before its result came back; the call was not run again."""


class UnreadableResultError(RuntimeError):
    """A call's result (or exception) came back, but could not be unpickled in the kernel."""


class UnsendableResultError(RuntimeError):
    """A call's result could not be pickled where it ran, so it could not come back."""


class RemoteToolError(Exception):
    """A tool raised where it ran, and its exception could not be unpickled here: its type, text and traceback."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised where a call ran, as text (tracebacks do not travel)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


# --- where it runs ------------------------------------------------------------------------------------------------


class DetachedProgress(ToolProgress):
    """The progress of a call running where an executor sent it: sent back to the card through ``sender`` (on a
    Dask worker), or else kept there and not shown on the card (logged once)."""

    __slots__ = ("_logged", "_sender")

    def __init__(self, sender: ProgressSender | None = None) -> None:
        super().__init__()
        self._sender = sender
        self._logged = False

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        super().report(fraction, message)
        if self._sender is not None:
            self._sender.send(self.fraction, self.message)
            return
        if not self._logged:
            self._logged = True
            logger.info("progress reported by a tool running on another executor is not shown on its card")


@dataclass
class DetachedCall:
    """One call, as it travels to the executor and runs there (picklable when the handler and arguments are).

    Attributes:
        tool_name: The tool's name (also the Dask task's name).
        handler: The tool's function.
        args: Its positional arguments.
        kwargs: Its keyword arguments (never the executor's: ``Client.submit`` would take ``key=`` for its own).
        fields: The invocation's fields, when the handler takes one; ``None`` when it does not.
        invocation_parameter: The keyword the invocation goes to; ``None``: it is the only argument.
        remote: The way back for progress and cancel (Dask only).
        run_once: The call's one-time token (Dask only).
        pickled: Whether what comes back is pickled here (any executor but a thread pool in this process).
        token: Unique to the call.
    """

    tool_name: str
    handler: Handler
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    fields: dict[str, Any] | None = None
    invocation_parameter: str | None = None
    remote: RemoteCall | None = None
    run_once: RunOnce | None = None
    pickled: bool = True
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def __name__(self) -> str:
        """The tool's name: what Dask names the task after."""
        return self.tool_name

    def __dask_tokenize__(self) -> str:
        # Unique per call, and cheap: Dask would otherwise pickle the whole call to name its task.
        return self.token

    def __call__(self) -> Sent:
        """Runs where the executor sends it: takes the call's token, builds its invocation, calls the handler.

        ``context`` is ``None`` (it stays in the kernel). On a Dask worker ``progress`` goes back to the card and
        ``cancelled`` is set once the kernel has cancelled the call; elsewhere ``progress`` is not shown and
        ``cancelled`` is never set (nothing crosses back over the process boundary).
        """
        if self.run_once is not None:
            try:
                earlier = self.run_once.claim()
            except Exception as exc:
                return ("unclaimed", None, describe(exc))
            if earlier is not None:
                return ("ran_before", None, earlier)
        try:
            value = self._run()
        except Exception as exc:
            return self._raised(exc)
        if not self.pickled:
            return ("returned", value, "")
        try:
            return ("pickled", dumps(value), "")
        except Exception as exc:
            return ("unsendable", None, f"a {type(value).__qualname__}: {describe(exc)}")

    def _run(self) -> Any:
        if self.fields is None:
            return self.handler(*self.args, **self.kwargs)
        link = None if self.remote is None else self.remote.attach()
        if link is None:
            invocation = ToolInvocation(**self.fields, progress=DetachedProgress())
        else:
            invocation = ToolInvocation(**self.fields, progress=DetachedProgress(link.sender), cancelled=link.cancelled)
        try:
            if self.invocation_parameter is None:
                return self.handler(invocation, *self.args, **self.kwargs)
            return self.handler(*self.args, **self.kwargs, **{self.invocation_parameter: invocation})
        finally:
            if link is not None:
                link.close()

    def _raised(self, exc: Exception) -> Sent:
        try:
            trace = user_first_traceback(exc)
        except Exception:
            trace = describe(exc)
        if not self.pickled:
            return ("raised", exc, trace)
        try:
            pickled: bytes | None = dumps(exc)
        except Exception:
            pickled = None
        return ("raised", (pickled, describe(exc)), trace)


def dumps(value: Any) -> bytes:
    """``value`` pickled; by value with cloudpickle where plain pickle refuses (a class or function defined only
    where it runs), as Dask does."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        try:
            import cloudpickle  # type: ignore[import-untyped]  # optional (Dask brings it): without it, plain pickle's refusal stands
        except ImportError:
            raise
        return bytes(cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "(its text could not be read)"
    name = type(exc).__qualname__
    return safe_text(f"{name}: {text}" if text else name)


# --- the kernel side ----------------------------------------------------------------------------------------------


async def run_detached(
    executor: Executor,
    call: DetachedCall,
    invocation: ToolInvocation,
    *,
    include_detailed_errors: bool,
) -> Any:
    """Sends ``call`` to ``executor`` and gives back what the tool returned, or a failed outcome saying why there is
    nothing to give back (its worker died, its result could not be read, it could not run only once).

    Raises:
        RuntimeError: The call could not be sent (the handler or its arguments cannot be pickled, the executor is
            broken or shut down).
        Exception: What the tool raised.
        asyncio.CancelledError: The call was cancelled here; a call the executor cannot stop any more is handed to
            ``invocation``'s abandon hook, to be followed until it ends.
    """
    where = type(executor).__name__
    call.pickled = not isinstance(executor, ThreadPoolExecutor)
    remote: RemoteRegistration | None = None
    run_once: RunOnceHandle | None = None
    try:
        try:
            run_once = await open_run_once(executor)
        except Exception as exc:
            raise RuntimeError(
                f"could not send the call of {call.tool_name} to the executor {where}: its Dask scheduler could not "
                f"set it up to run only once ({describe(exc)})"
            ) from exc
        call.run_once = None if run_once is None else run_once.claim
        if call.fields is not None:
            remote = register_remote_call(executor, invocation.progress.report)
            if remote is None:
                invocation.progress.report(
                    None, f"running on {where}: its progress cannot come back to this card (only Dask's can)"
                )
            else:
                invocation.progress.report(None, f"sent to the Dask cluster ({where})")
                call.remote = remote.call
        try:
            sent = executor.submit(call)
        except BrokenExecutor as exc:
            raise RuntimeError(
                f"could not send the call of {call.tool_name} to the executor {where}: it is broken "
                f"({describe(exc)}); a worker of it died earlier. Make a new one."
            ) from exc
        except Exception as exc:
            raise RuntimeError(
                f"could not send the call of {call.tool_name} to the executor {where}: {describe(exc)} "
                "(the handler and its arguments must be picklable)"
            ) from exc
        read: concurrent.futures.Future[Any] = concurrent.futures.Future()
        # Read on the executor's thread as the call ends (the unpickling stays off the session's event loop).
        sent.add_done_callback(
            functools.partial(read_into, read, tool_name=call.tool_name, where=where, detailed=include_detailed_errors)
        )
        try:
            # Shielded: a cancel here must reach ``sent`` (below), and leave ``read`` to tell what a call that runs
            # on said when it ended.
            return await asyncio.shield(asyncio.wrap_future(read))
        except ExecutorFailedError as failed:
            error = failed.__cause__ or failed
        except BaseException:
            # Given up (a cancel, a stop, a timeout): cancelling ``sent`` cancels the Dask task, or a queued call; a
            # call the executor cannot cancel any more (a thread pool's started call) runs on, and its card says so
            # until it returns.
            if not sent.done() and not sent.cancel() and invocation._on_abandoned is not None:
                invocation._on_abandoned(read)
            raise
        # Raised here, outside the handler above, so the executor's exception keeps its own cause and context.
        if isinstance(error, pickle.PicklingError) or (
            isinstance(error, (TypeError, AttributeError)) and "pickl" in str(error)
        ):
            raise RuntimeError(
                f"could not send the call of {call.tool_name} to the executor {where}: {describe(error)} "
                "(the handler and its arguments must be picklable)"
            ) from error
        raise error
    finally:
        # Every report the worker sent before the call returned has been handed on by now (Dask delivers them ahead
        # of the result); later ones are for a call that has ended.
        if remote is not None:
            remote.close()
        if run_once is not None:
            run_once.close()


def read_into(
    read: concurrent.futures.Future[Any],
    sent: concurrent.futures.Future[Any],
    *,
    tool_name: str,
    where: str,
    detailed: bool,
) -> None:
    """Hands what ``sent`` brought back to ``read``: the value, the tool's exception, or a failed outcome. Never
    raises (``read`` must end however ``sent`` did)."""
    try:
        if sent.cancelled():
            read.cancel()
            return
        error = sent.exception()
        if error is not None:
            lost = lost_worker_outcome(error, tool_name, where)
            if lost is None:
                # The executor's own failure, not the tool's (which comes back in what was sent): told apart.
                failed = ExecutorFailedError(f"{where} could not run the call: {describe(error)}")
                failed.__cause__ = error
                read.set_exception(failed)
            else:
                read.set_result(lost)
            return
        result = read_sent(sent.result(), tool_name=tool_name, where=where, detailed=detailed)
    except BaseException as exc:  # never into the executor's callback machinery
        if not read.done():
            read.set_exception(exc)
        return
    if isinstance(result, BaseException):
        read.set_exception(result)
    else:
        read.set_result(result)


def lost_worker_outcome(error: BaseException, tool_name: str, where: str) -> ToolOutcome | None:
    """The failure of a call whose worker died, told by the executor (a broken pool, Dask's ``KilledWorker``)."""
    address = killed_worker(error)
    if address is not None:
        detail = (
            f"the Dask worker running it ({address}) died before its result came back, and Dask gave up on it "
            f"({describe(error)})"
        )
    elif isinstance(error, BrokenExecutor):
        detail = (
            f"a worker process of {where} died while it ran ({describe(error)}); {where} cannot run anything more, "
            "make a new one"
        )
    else:
        return None
    return worker_lost(tool_name, where, detail, error)


def worker_lost(tool_name: str, where: str, detail: str, cause: BaseException | None = None) -> ToolOutcome:
    error = WorkerLostError(f"The call of {tool_name} on {where} did not finish: {detail}. It was not run again.")
    error.__cause__ = cause
    return ToolOutcome.failure(
        f"The tool {tool_name} did not finish: the worker running it died before its result came back. It was not "
        "run again; it may have done part of its work.",
        retryable=False,
        error=error,
    )


def read_sent(sent: Any, *, tool_name: str, where: str, detailed: bool) -> Any:
    """What a :class:`DetachedCall` sent back: the value, the exception to raise (returned), or a failed outcome."""
    if not (isinstance(sent, tuple) and len(sent) == 3 and isinstance(sent[2], str)):
        raise UnreadableResultError(f"the executor {where} gave back a {type(sent).__qualname__}, not a call's result")
    kind, payload, text = sent
    if kind == "returned":
        return payload
    if kind == "pickled" and isinstance(payload, bytes):
        try:
            return pickle.loads(payload)
        except Exception as exc:
            problem = describe(exc)
            error: Exception = UnreadableResultError(f"the tool's result could not be read in the kernel: {problem}")
            error.__cause__ = exc
            told = f"The tool {tool_name} ran on {where}, but its result could not be read in the kernel"
            return ToolOutcome.failure(told + (f": {problem}." if detailed else "."), retryable=False, error=error)
    if kind == "raised":
        if isinstance(payload, BaseException):
            return payload  # a thread pool of this process: the exception itself
        pickled, described = payload
        trace = RemoteTraceback(text)
        problem = "it could not be pickled where it ran"
        if pickled is not None:
            try:
                raised = pickle.loads(pickled)
            except Exception as exc:
                problem = f"it could not be read in the kernel: {describe(exc)}"
            else:
                if isinstance(raised, BaseException):
                    raised.__cause__ = trace
                    return raised
                problem = f"it came back as a {type(raised).__qualname__}"
        stand_in = RemoteToolError(f"{described} (raised on {where}; the exception itself is not here: {problem})")
        stand_in.__cause__ = trace
        return stand_in
    if kind == "unsendable":
        error = UnsendableResultError(f"the tool's result could not be pickled on {where} to come back: {text}")
        told = f"The tool {tool_name} ran on {where}, but its result could not be sent back"
        return ToolOutcome.failure(told + (f": {text}." if detailed else "."), retryable=False, error=error)
    if kind == "ran_before":
        return worker_lost(
            tool_name,
            where,
            f"the worker that ran it ({text}) died before its result came back; Dask started it again, and that "
            "second run refused to call the tool (a call runs at most once)",
        )
    if kind == "unclaimed":
        error = WorkerLostError(f"the call's one-time token on {where} could not be reached: {text}")
        return ToolOutcome.failure(
            f"The tool {tool_name} was not run: {where} could not make sure it runs only once.",
            retryable=True,
            error=error,
        )
    raise UnreadableResultError(f"the executor {where} gave back a result of an unknown kind {kind!r}")
