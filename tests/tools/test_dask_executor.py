"""Sync tools sent to a real Dask cluster (``SessionOptions(tool_executor=client.get_executor())``).

The tools are module-level functions so the worker process imports them by reference. Progress a tool reports on
the worker comes back to the card (throttled there), and a cancel in the kernel reaches the tool's
``invocation.cancelled``; another executor (a process pool) says its progress cannot come back. A call runs at most
once: when the process running it is killed, the call fails saying its worker died, and it never runs again (Dask
would run it again on the restarted worker). A result or exception that cannot travel fails its call, saying so.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import ChatSession, Message, SessionOptions, ToolCallState, ToolInvocation, ToolProgress, tool
from ai_widgets._remote_progress import DEFAULT_INTERVAL, client_relay, register_remote_call
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.messages import ToolCallPart
from ai_widgets.tools import ToolError, ToolOutcome
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (the `dask` extra)")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executor() -> Iterator[Executor]:
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


def process_id() -> int:
    """The id of the process this runs in."""
    return os.getpid()


def crunch(steps: int, invocation: ToolInvocation, pause: float = 0.0) -> dict[str, Any]:
    """Reports progress where it runs and tells what its invocation looked like there."""
    for step in range(steps):
        invocation.progress.report((step + 1) / steps, f"step {step + 1}")
        time.sleep(pause)
    return {
        "pid": os.getpid(),
        "tool_call_id": invocation.tool_call_id,
        "arguments": invocation.get_arguments(dict),
        "fraction": invocation.progress.fraction,
        "cancelled": invocation.cancelled.is_set(),
        "context": invocation.context,
    }


def flood(seconds: float, invocation: ToolInvocation) -> int:
    """Reports progress in a tight loop for ``seconds``, then once more at 1.0; returns how many reports it made."""
    start = time.monotonic()
    count = 0
    while (elapsed := time.monotonic() - start) < seconds:
        count += 1
        invocation.progress.report(min(elapsed / seconds, 0.99), f"report {count}")
    invocation.progress.report(1.0, f"done after {count + 1}")
    return count + 1


def report_then_wait(seconds: float, invocation: ToolInvocation) -> str:
    """Reports twice at once (the second is held back by the throttle), then works on without reporting."""
    invocation.progress.report(0.1, "first")
    invocation.progress.report(0.5, "held back")
    time.sleep(seconds)
    return "done"


def wait_for_cancel(marker: str, invocation: ToolInvocation) -> str:
    """Waits until told to stop (at most 30 s) and writes what it saw to ``marker``: the kernel cannot hear it."""
    invocation.progress.report(None, "waiting")
    start = time.monotonic()
    told = invocation.cancelled.wait(30)
    Path(marker).write_text(f"{told} {invocation.cancelled.is_set()} {time.monotonic() - start:.2f}")
    return "done"


def make_session(
    executor: Executor,
    tools: list[Any],
    name: str,
    arguments: dict[str, Any],
    *more_calls: ScriptedToolCall,
    tool_timeout: float | None = None,
) -> ChatSession:
    return ChatSession(
        ScriptedTransport(
            [
                ScriptedReply(tool_calls=(ScriptedToolCall(name=name, arguments=arguments, id="c1"), *more_calls)),
                ScriptedReply(text="ok"),
            ]
        ),
        tools=tools,
        options=SessionOptions(tool_executor=executor, include_detailed_errors=True, tool_timeout=tool_timeout),
        context={"not": "sent"},
    )


class Shown:
    """What the cards showed: each call's progress as it changed, when (kernel clock), and when the call ended."""

    def __init__(self, session: ChatSession) -> None:
        self.progress: dict[str, list[tuple[float | None, str | None]]] = {}
        self.at: dict[str, list[float]] = {}
        self.ended: dict[str, float] = {}
        session.subscribe(self._observe)

    def _observe(self, change: SessionChange) -> None:
        if not isinstance(change, ToolCallUpdated):
            return
        part = change.part
        if part.state.terminal:
            self.ended.setdefault(part.tool_call_id, time.monotonic())
            return
        if part.progress is None:
            return
        seen = self.progress.setdefault(part.tool_call_id, [])
        now = (part.progress.fraction, part.progress.message)
        if not seen or seen[-1] != now:
            seen.append(now)
            self.at.setdefault(part.tool_call_id, []).append(time.monotonic())


def calls(session: ChatSession) -> dict[str, ToolCallPart]:
    return {p.tool_call_id: p for m in session.messages for p in m.tool_calls}


def relay_of(executor: Executor) -> Any:
    return client_relay(executor._client)  # type: ignore[attr-defined]


def sent_to_dask(shown: list[tuple[float | None, str | None]]) -> list[tuple[float | None, str | None]]:
    assert shown[0] == (None, "sent to the Dask cluster (ClientExecutor)")
    return shown[1:]


async def test_a_sync_tool_runs_in_a_worker_process(executor: Executor) -> None:
    session = make_session(executor, [tool(process_id)], "process_id", {})
    reply = await session.send("where?")
    (part,) = [p for m in session.messages for p in m.tool_calls]
    assert part.state is ToolCallState.COMPLETED, part.outcome
    assert isinstance(part.outcome.value, int)  # type: ignore[union-attr]
    assert part.outcome.value != os.getpid()  # type: ignore[union-attr]
    assert reply.text == "ok"


async def test_progress_reported_on_a_worker_reaches_each_card_in_order(executor: Executor) -> None:
    # Two calls at once on the one worker (two threads): one subscription, each report to its own card.
    session = make_session(
        executor,
        [tool(crunch)],
        "crunch",
        {"steps": 4, "pause": 2 * DEFAULT_INTERVAL},
        ScriptedToolCall(name="crunch", arguments={"steps": 3, "pause": 2 * DEFAULT_INTERVAL}, id="c2"),
    )
    shown = Shown(session)
    reply = await session.send("crunch")
    parts = calls(session)
    assert reply.text == "ok"
    assert parts["c1"].state is ToolCallState.COMPLETED, parts["c1"].outcome
    assert parts["c2"].state is ToolCallState.COMPLETED, parts["c2"].outcome
    # Reports spaced wider than the throttle's interval all arrive, in order, the last one included.
    assert sent_to_dask(shown.progress["c1"]) == [(0.25, "step 1"), (0.5, "step 2"), (0.75, "step 3"), (1.0, "step 4")]
    assert sent_to_dask(shown.progress["c2"]) == [(1 / 3, "step 1"), (2 / 3, "step 2"), (1.0, "step 3")]
    # The stand-in ran in the worker process, with the call's own fields and nothing of the kernel's context.
    value = parts["c1"].outcome.value  # type: ignore[union-attr]
    assert value["pid"] != os.getpid()
    assert value["tool_call_id"] == "c1"
    assert value["arguments"] == {"steps": 4, "pause": 2 * DEFAULT_INTERVAL}
    assert value["fraction"] == 1.0
    assert value["cancelled"] is False
    assert value["context"] is None
    # The relay let go: no call left, the client unsubscribed from the topic.
    relay = relay_of(executor)
    assert relay.active_calls == 0
    assert relay.subscribed is False


async def test_a_tight_loop_of_reports_is_throttled_on_the_worker_and_the_last_one_arrives(
    executor: Executor,
) -> None:
    seconds = 1.0
    session = make_session(executor, [tool(flood)], "flood", {"seconds": seconds})
    shown = Shown(session)
    relay = relay_of(executor)
    received_before = relay.received
    await session.send("flood")
    part = calls(session)["c1"]
    assert part.state is ToolCallState.COMPLETED, part.outcome
    made = part.outcome.value  # type: ignore[union-attr]
    relayed = sent_to_dask(shown.progress["c1"])
    events = relay.received - received_before
    assert made > 1000  # the tool really did flood
    # At most one event per interval (plus the first and the last), however many reports the tool made.
    assert 2 <= events <= seconds / DEFAULT_INTERVAL + 3, (events, made)
    assert len(relayed) == events
    assert relayed[-1] == (1.0, f"done after {made}")
    numbers = [int(message.split()[-1]) for _, message in relayed if message and message.startswith("report ")]
    assert numbers == sorted(numbers)  # in the order they were made
    fractions = [fraction for fraction, _ in relayed]
    assert fractions == sorted(fractions)  # type: ignore[type-var]


async def test_a_report_held_back_by_the_throttle_is_sent_while_the_tool_still_runs(executor: Executor) -> None:
    session = make_session(executor, [tool(report_then_wait)], "report_then_wait", {"seconds": 1.5})
    shown = Shown(session)
    await session.send("go")
    assert calls(session)["c1"].state is ToolCallState.COMPLETED
    assert sent_to_dask(shown.progress["c1"]) == [(0.1, "first"), (0.5, "held back")]
    # "held back" came an interval after "first", not only when the tool returned 1.5 s later.
    held_back_at = shown.at["c1"][-1]
    assert shown.ended["c1"] - held_back_at > 1.0


async def test_the_relay_hands_on_events_only_while_a_call_is_registered(executor: Executor) -> None:
    client = executor._client  # type: ignore[attr-defined]
    relay = relay_of(executor)
    got: list[tuple[float | None, str | None]] = []
    # The kernel-side progress of a call, as the session makes it: report() checks the values and hops to this loop.
    progress = ToolProgress(lambda fraction, message: got.append((fraction, message)))
    registration = register_remote_call(executor, progress.report)
    assert registration is not None
    try:
        assert relay.subscribed is True
        token, topic = registration.call.token, registration.call.topic
        # client.log_event is a request of its own that can overtake the subscription (a worker's events come after
        # its task, so after the subscription): probe until the scheduler sends the topic here.
        deadline = time.monotonic() + 10
        received = relay.received
        while relay.received == received:
            assert time.monotonic() < deadline, "the client never got the topic's events"
            client.log_event(topic, {"call": "a probe", "seq": 1, "fraction": None, "message": "probe"})
            await asyncio.sleep(0.05)
        client.log_event(topic, {"call": token, "seq": 2, "fraction": 0.5, "message": "two"})
        client.log_event(topic, {"call": token, "seq": 1, "fraction": 0.2, "message": "one, overtaken"})
        client.log_event(topic, {"call": "someone else", "seq": 9, "fraction": 0.9, "message": "not ours"})
        client.log_event(topic, {"call": token, "seq": 3, "fraction": 2.0, "message": "malformed"})
        client.log_event(topic, {"call": token, "seq": 4, "fraction": None, "message": "four"})
        while len(got) < 2:
            assert time.monotonic() < deadline, got
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        assert got == [(0.5, "two"), (None, "four")]
    finally:
        registration.close()
    registration.close()  # closing twice is harmless
    assert relay.subscribed is False
    assert relay.active_calls == 0
    # Unsubscribed: once the scheduler has it, it no longer sends the topic to this client at all.
    await asyncio.sleep(0.5)
    received = relay.received
    client.log_event(topic, {"call": token, "seq": 5, "fraction": 1.0, "message": "after"})
    await asyncio.sleep(1.0)
    assert relay.received == received
    assert got == [(0.5, "two"), (None, "four")]


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_a_cancel_in_the_kernel_sets_cancelled_on_the_worker(
    executor: Executor, tmp_path: Path, how: str
) -> None:
    marker = tmp_path / "marker"
    session = make_session(
        executor,
        [tool(wait_for_cancel)],
        "wait_for_cancel",
        {"marker": str(marker)},
        tool_timeout=1.0 if how == "timeout" else None,
    )
    shown = Shown(session)
    turn = asyncio.create_task(session.send("go"))
    deadline = time.monotonic() + 30
    while (None, "waiting") not in shown.progress.get("c1", []):  # it runs on the worker
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    if how == "cancel":
        session.cancel("c1")
    await turn
    part = calls(session)["c1"]
    assert part.state is (ToolCallState.CANCELLED if how == "cancel" else ToolCallState.FAILED), part.outcome
    while not marker.exists():
        assert time.monotonic() < deadline, "the tool on the worker was never told to stop"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)  # written in full
    told, is_set, waited = marker.read_text().split()
    assert (told, is_set) == ("True", "True")
    assert float(waited) < 10
    assert relay_of(executor).active_calls == 0


@pytest.fixture(scope="module")
def process_pool() -> Iterator[Executor]:
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


async def test_another_executor_says_progress_cannot_come_back_and_why(process_pool: Executor) -> None:
    session = make_session(process_pool, [tool(crunch)], "crunch", {"steps": 3})
    shown = Shown(session)
    await session.send("crunch")
    part = calls(session)["c1"]
    assert part.state is ToolCallState.COMPLETED, part.outcome
    value = part.outcome.value  # type: ignore[union-attr]
    assert value["pid"] != os.getpid()
    assert value["fraction"] == 1.0  # report() works there ...
    assert value["cancelled"] is False
    assert value["context"] is None
    # ... but the card only ever shows an indeterminate bar saying where the call runs and why nothing comes back.
    assert shown.progress["c1"] == [
        (None, "running on ProcessPoolExecutor: its progress cannot come back to this card (only Dask's can)")
    ]


async def test_an_unpicklable_handler_fails_that_call_naming_the_executor(executor: Executor) -> None:
    lock = threading.Lock()

    def locked() -> str:
        """Holds a lock, which cannot be pickled."""
        with lock:
            return "never"

    session = make_session(executor, [tool(locked)], "locked", {})
    reply = await session.send("go")
    (part,) = [p for m in session.messages for p in m.tool_calls]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert part.outcome.error is not None
    assert "ClientExecutor" in (part.outcome.error.message or "")
    assert "picklable" in (part.outcome.error.message or "")
    assert reply.text == "ok"  # the turn went on


# --- at most once, and what cannot travel ---------------------------------------------------------------------------


def append_pid_and_block(path: str) -> str:
    """Appends the id of its process to ``path`` (one line per run), then blocks while it is the only run: the test
    kills its process. A second run (the bug) returns at once, so the test sees it without waiting."""
    ledger = Path(path)
    with ledger.open("a") as file:
        file.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + 60
    while len(ledger.read_text().split()) == 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    return "ran again"


def refuse_to_load(text: str) -> None:
    """What unpickling a :class:`LoadFails` calls: it raises, in the kernel."""
    raise RuntimeError(text)


class LoadFails:
    """Pickles fine where it is made, and cannot be unpickled anywhere."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (refuse_to_load, ("made on the worker, refused on load",))


class RefusesToPickle:
    """Cannot be pickled at all (cloudpickle neither)."""

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("this value refuses to be pickled")


class LoadFailsError(Exception):
    """An exception that pickles where it is raised, and cannot be unpickled."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (refuse_to_load, ("the exception refused on load",))


def unreadable_result() -> Any:
    """Returns a value the kernel cannot unpickle (its ``__reduce__`` raises on load)."""
    return LoadFails()


def class_only_on_the_worker(directory: str, module: str) -> Any:
    """Writes a module where it runs, imports it there, and returns an instance of its class: the kernel has no such
    module."""
    Path(directory, f"{module}.py").write_text("class OnlyHere:\n    pass\n")
    sys.path.insert(0, directory)
    try:
        return __import__(module).OnlyHere()
    finally:
        sys.path.remove(directory)


def unsendable_result() -> Any:
    """Returns a value that cannot be pickled where it runs."""
    return RefusesToPickle()


def raises_unreadable() -> None:
    """Raises an exception the kernel cannot unpickle."""
    raise LoadFailsError("the tool failed its own way")


def runs(ledger: Path) -> list[str]:
    """The process ids the runs of :func:`append_pid_and_block` wrote, one per run."""
    return ledger.read_text().split()


async def first_run(ledger: Path, *, timeout: float = 60) -> int:
    """The process id the first run wrote to ``ledger``, once it has (the call is running)."""
    deadline = time.monotonic() + timeout
    while not runs(ledger):
        assert time.monotonic() < deadline, "the tool never started"
        await asyncio.sleep(0.02)
    return int(runs(ledger)[0])


def failed_call(reply: Message, tool_call_id: str = "c1") -> tuple[ToolOutcome, ToolError]:
    """The outcome of a call that failed, and the error the person sees."""
    part = reply.tool_call(tool_call_id)
    assert part is not None
    assert part.state is ToolCallState.FAILED, (part.state, part.outcome)
    assert part.outcome is not None
    assert part.outcome.error is not None
    return part.outcome, part.outcome.error


def session_with_a_next_turn(executor: Executor, tools: list[Any], name: str, arguments: dict[str, Any]) -> ChatSession:
    """A call of ``name``, then (the next send) a call of ``process_id`` on the same executor."""
    return ChatSession(
        ScriptedTransport(
            [
                ScriptedReply(tool_calls=(ScriptedToolCall(name=name, arguments=arguments, id="c1"),)),
                ScriptedReply(text="ok"),
                ScriptedReply(tool_calls=(ScriptedToolCall(name="process_id", arguments={}, id="c2"),)),
                ScriptedReply(text="still ok"),
            ]
        ),
        tools=[*tools, tool(process_id)],
        options=SessionOptions(tool_executor=executor, include_detailed_errors=True),
    )


async def kill_the_running_call(session: ChatSession, ledger: Path) -> tuple[Message, int]:
    """Starts the turn, kills the process running the call as soon as it has started, and waits for the turn."""
    turn = asyncio.create_task(session.send("go"))
    pid = await first_run(ledger)
    assert pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    return await asyncio.wait_for(turn, 90), pid


@pytest.mark.parametrize("client_kind", ["synchronous", "asynchronous"])
async def test_a_call_whose_dask_worker_is_killed_fails_saying_so_and_never_runs_again(
    executor: Executor, tmp_path: Path, client_kind: str
) -> None:
    if client_kind == "synchronous":
        await killed_once(executor, tmp_path)
        return
    # A client made on the session's own event loop sets up the call's token there.
    address = executor._client.scheduler.address  # type: ignore[attr-defined]
    async with distributed.Client(address, asynchronous=True) as client:
        await killed_once(client.get_executor(), tmp_path)


async def killed_once(executor: Executor, tmp_path: Path) -> None:
    ledger = tmp_path / "runs"
    ledger.touch()
    session = session_with_a_next_turn(
        executor, [tool(append_pid_and_block)], "append_pid_and_block", {"path": str(ledger)}
    )
    reply, pid = await kill_the_running_call(session, ledger)
    outcome, error = failed_call(reply)
    assert "the worker running it died before its result came back" in (outcome.message or "")
    assert "It was not run again" in (outcome.message or "")
    assert error.type == "WorkerLostError"
    assert "ClientExecutor" in error.message
    assert "refused to call the tool" in error.message
    assert "tcp://" in error.message  # the worker that died
    assert reply.text == "ok"  # the turn went on
    # With one worker, the call failed only once Dask had run it again on the restarted worker, and that run did not
    # call the tool; nor does anything later.
    await asyncio.sleep(1.0)
    assert runs(ledger) == [str(pid)]
    # The next send works, on the restarted worker.
    again = await asyncio.wait_for(session.send("again"), 60)
    assert again.text == "still ok"
    second = again.tool_call("c2")
    assert second is not None
    assert second.state is ToolCallState.COMPLETED, second.outcome
    assert second.outcome is not None
    assert second.outcome.value not in (pid, os.getpid())
    assert runs(ledger) == [str(pid)]


def append_pid_and_fail(path: str, retries: int = 0, key: str = "") -> None:
    """Appends the id of its process to ``path`` and raises. Its parameters share names with ``Client.submit``'s."""
    with Path(path).open("a") as file:
        file.write(f"{os.getpid()} {retries} {key}\n")
    raise RuntimeError("failed once, on purpose")


async def test_arguments_named_like_dask_options_reach_the_tool_and_do_not_rerun_it(
    executor: Executor, tmp_path: Path
) -> None:
    # Before, they went to Client.submit: Dask took retries=2 as its own and ran the failing tool three times, and
    # key= as the task's name.
    ledger = tmp_path / "runs"
    ledger.touch()
    arguments = {"path": str(ledger), "retries": 2, "key": "mine"}
    session = make_session(executor, [tool(append_pid_and_fail)], "append_pid_and_fail", arguments)
    reply = await asyncio.wait_for(session.send("go"), 60)
    outcome, error = failed_call(reply)
    assert error.type == "RuntimeError"
    assert "failed once, on purpose" in (outcome.message or "")
    assert [line.split()[1:] for line in ledger.read_text().splitlines()] == [["2", "mine"]]


UNREADABLE = {
    "a result whose unpickling raises": (
        unreadable_result,
        "UnreadableResultError",
        "the tool's result could not be read in the kernel: RuntimeError: made on the worker, refused on load",
        "its result could not be read in the kernel",
    ),
    "a result of a class only the worker has": (
        class_only_on_the_worker,
        "UnreadableResultError",
        "the tool's result could not be read in the kernel: ModuleNotFoundError: No module named 'only_on_the_worker",
        "its result could not be read in the kernel",
    ),
    "a result that cannot be pickled on the worker": (
        unsendable_result,
        "UnsendableResultError",
        "could not be pickled on {where} to come back: a RefusesToPickle: TypeError: this value refuses to be pickled",
        "its result could not be sent back",
    ),
    "an exception that cannot be unpickled": (
        raises_unreadable,
        "RemoteToolError",
        "LoadFailsError: the tool failed its own way (raised on {where}; the exception itself is not here: it could "
        "not be read in the kernel: RuntimeError: the exception refused on load)",
        "failed: RemoteToolError: LoadFailsError: the tool failed its own way",
    ),
}


async def fails_clearly_and_the_executor_goes_on(executor: Executor, case: str, tmp_path: Path) -> None:
    function, error_type, error_text, told = UNREADABLE[case]
    arguments = {"directory": str(tmp_path), "module": f"only_on_the_worker_{tmp_path.name.replace('-', '_')}"}
    session = session_with_a_next_turn(
        executor, [tool(function)], function.__name__, arguments if function is class_only_on_the_worker else {}
    )
    # Before: Dask never handed such a result over (the call stayed running until Stop) and a process pool broke.
    reply = await asyncio.wait_for(session.send("go"), 60)
    outcome, error = failed_call(reply)
    assert error.type == error_type
    assert error_text.format(where=type(executor).__name__) in error.message
    assert told in (outcome.message or "")
    assert reply.text == "ok"  # the turn went on
    again = await asyncio.wait_for(session.send("again"), 60)  # and so does the executor
    second = again.tool_call("c2")
    assert second is not None
    assert second.state is ToolCallState.COMPLETED, second.outcome
    assert again.text == "still ok"


@pytest.mark.parametrize("case", list(UNREADABLE))
async def test_what_cannot_travel_back_from_a_dask_worker_fails_that_call(
    executor: Executor, case: str, tmp_path: Path
) -> None:
    await fails_clearly_and_the_executor_goes_on(executor, case, tmp_path)


@pytest.mark.parametrize("case", list(UNREADABLE))
async def test_what_cannot_travel_back_from_a_process_pool_fails_that_call(
    process_pool: Executor, case: str, tmp_path: Path
) -> None:
    await fails_clearly_and_the_executor_goes_on(process_pool, case, tmp_path)


async def test_a_call_whose_pool_process_is_killed_fails_saying_so(tmp_path: Path) -> None:
    ledger = tmp_path / "runs"
    ledger.touch()
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        session = session_with_a_next_turn(
            pool, [tool(append_pid_and_block)], "append_pid_and_block", {"path": str(ledger)}
        )
        reply, pid = await kill_the_running_call(session, ledger)
        outcome, error = failed_call(reply)
        assert "the worker running it died before its result came back" in (outcome.message or "")
        assert error.type == "WorkerLostError"
        assert "a worker process of ProcessPoolExecutor died while it ran" in error.message
        assert "BrokenProcessPool" in error.message
        assert reply.text == "ok"
        await asyncio.sleep(0.5)
        assert runs(ledger) == [str(pid)]
        # The pool is broken for good: the next call fails at once, saying so (not that it cannot be pickled).
        again = await asyncio.wait_for(session.send("again"), 30)
        assert again.text == "still ok"
        _, refused = failed_call(again, "c2")
        assert "the executor ProcessPoolExecutor: it is broken" in refused.message
        assert "Make a new one" in refused.message
        assert "picklable" not in refused.message
    finally:
        pool.shutdown(cancel_futures=True)


async def test_a_call_dask_gives_up_on_after_its_worker_died_fails_saying_so(tmp_path: Path) -> None:
    # A scheduler that allows no worker death per task: Dask fails the task itself (KilledWorker), no second run.
    ledger = tmp_path / "runs"
    ledger.touch()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        session = session_with_a_next_turn(
            client.get_executor(), [tool(append_pid_and_block)], "append_pid_and_block", {"path": str(ledger)}
        )
        reply, pid = await kill_the_running_call(session, ledger)
        outcome, error = failed_call(reply)
        assert "the worker running it died before its result came back" in (outcome.message or "")
        assert error.type == "WorkerLostError"
        assert "died before its result came back, and Dask gave up on it (KilledWorker:" in error.message
        assert reply.text == "ok"
        assert runs(ledger) == [str(pid)]
    finally:
        client.close()
        cluster.close()
