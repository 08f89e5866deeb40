"""Attacks on the newest widget features: the turn view of ``ask(show=True)``, the bench (runs by hand), closing
widgets while things run, and arguments that are not strict JSON. Each test is the regression test of a defect."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ai_widgets import Message, MessageStatus, SessionBusyError, ToolInvocation, ToolOutcome, ToolRisk, tool
from ai_widgets.session import ChatSession
from ai_widgets.tools import Tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget, ToolRun, run_tool
from ai_widgets.widget._kernel import KernelSupport, UnsupportedKernelError, private_loop
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, finished_messages

ran: list[Any] = []


@tool
def note(text: str) -> str:
    """Notes a text."""
    ran.append(text)
    return text


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file."""
    ran.append(("deleted", path))
    return f"deleted {path}"


@tool(risk=ToolRisk.DESTRUCTIVE)
def scale(factor: float | None = None) -> str:
    """Scales by a factor (none: by one)."""
    ran.append(("scaled", factor))
    return f"scaled by {factor}"


def errors(wire: Wire, widget: Any) -> list[str]:
    return [c["message"] for c in wire.custom(widget.comm.comm_id) if c["type"] == "error"]


class GatedSource:
    """A source of tools (no tools of its own) whose listing waits until the test opens the gate."""

    def __init__(self) -> None:
        self.listing = threading.Event()
        self.gate = threading.Event()

    async def list_tools(self) -> Sequence[Tool]:
        self.listing.set()
        await asyncio.to_thread(self.gate.wait, 5)
        return []


async def note_chat(wire: Wire, source: GatedSource) -> ChatWidget:
    """A chat whose one finished call is of ``note``; its sources' listing is open until the test closes it."""
    call = ScriptedToolCall(name="note", arguments={"text": "a"}, id="c1")
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[note, source])
    source.gate.set()
    await chat.ask("go", show=False)
    source.gate.clear()
    source.listing.clear()
    ran.clear()
    return chat


# --- the turn view -------------------------------------------------------------------------------------------------


async def test_two_concurrent_asks_run_one_after_the_other_each_view_shows_its_own_turn(
    wire: Wire, shown: list[Any]
) -> None:
    """Defect: both views began on the first turn's busy signal, so the loser's view stayed open showing (a copy of)
    the winner's turn. Since an ask waits for a turn in progress, there is no loser: the second asks after the first,
    and each view shows only its own turn."""
    chat = ChatWidget(transport=ScriptedTransport(["first reply", "second reply"], delay=0.002))
    first = asyncio.create_task(chat.ask("one"))
    second = asyncio.create_task(chat.ask("two"))
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert [r.text for r in results if isinstance(r, Message)] == ["first reply", "second reply"]
    one, two = (view for view in shown if isinstance(view, TurnView))
    assert [m["parts"][0]["text"] for m in finished_messages(one)] == ["one", "first reply"]
    assert [m["parts"][0]["text"] for m in finished_messages(two)] == ["two", "second reply"]
    assert chat.session.messages[-1].status is MessageStatus.COMPLETED
    assert len(chat.session.messages) == 4


async def test_a_turn_view_shows_only_its_own_turn_when_the_input_box_wins_the_race(
    wire: Wire, shown: list[Any]
) -> None:
    """The chat's input box starts a turn after ``ask`` made its view and before its turn could start."""
    chat = ChatWidget(transport=ScriptedTransport(lambda request: f"{request.last_user_text} reply"))
    front = wire.comms[chat.comm.comm_id]
    asked = asyncio.create_task(chat.ask("asked"))
    await asyncio.sleep(0)  # ask has shown its view; its turn's task has not run yet
    (view,) = shown
    front.handle({"type": "send", "text": "boxed"})  # a turn from the input box (on the package's loop thread)
    try:
        await asked
    except SessionBusyError:
        assert view.comm is None  # lost: nothing of the other turn stays shown
    else:
        assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]
    await wait_for(lambda: not chat.session.busy and len(chat.session.messages) >= 2)


async def test_a_turn_view_shows_only_its_own_turn_when_a_whole_box_turn_runs_before_it_claims(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    """Defect (seen once in CI): the view took where its turn starts from the conversation's length when its task
    began, so a turn from the input box that ran whole in between (on the package's loop thread) showed in it."""
    chat = ChatWidget(transport=ScriptedTransport(lambda request: f"{request.last_user_text} reply"))
    front = wire.comms[chat.comm.comm_id]
    checks = chat.session._check_can_send
    calls = 0

    def box_turn_first() -> None:  # the asking task's send: after its view began, before its turn claims the session
        nonlocal calls
        calls += 1
        if calls == 2:  # the first check is ask's own, before its view shows
            front.handle({"type": "send", "text": "boxed"})
            deadline = time.monotonic() + 5
            while len(chat.session.messages) < 2 or chat.session.busy:
                assert time.monotonic() < deadline
                time.sleep(0.005)
        checks()

    monkeypatch.setattr(chat.session, "_check_can_send", box_turn_first)
    await chat.ask("asked")
    (view,) = shown
    assert [m.parts[0].text for m in chat.session.messages] == ["boxed", "boxed reply", "asked", "asked reply"]
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]


def test_ask_sync_that_cannot_wait_leaves_no_turn_behind(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    """Defect: when the cell could not wait (a kernel that cannot process clicks while it blocks; an interrupt before
    the turn began), ``ask_sync`` stopped the session before its turn had started, then blocked 5 s while that turn
    started anyway and waited for an approval no one could give: the session stayed busy, so even ``send()``, which
    the error recommends, failed."""
    import ai_widgets.widget._chat as chat_module

    loop = private_loop()
    gate, blocked = threading.Event(), threading.Event()

    def hold() -> None:  # the package's loop is busy for a moment: the turn cannot start before the cell gives up
        blocked.set()
        gate.wait(5)

    def cannot_wait(future: Any, **_: Any) -> Any:
        threading.Timer(0.1, gate.set).start()
        raise UnsupportedKernelError("this kernel cannot process clicks while a cell blocks")

    monkeypatch.setattr(chat_module, "wait_with_comms", cannot_wait)
    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[delete_file])
    loop.call_soon_threadsafe(hold)
    assert blocked.wait(5)
    started = time.monotonic()
    with pytest.raises(UnsupportedKernelError):
        chat.ask_sync("delete it")
    assert time.monotonic() - started < 2
    gate.set()
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.01), loop).result(timeout=5)
    assert not chat.session.busy
    assert chat.session.messages == []  # the turn never started
    assert all(view.comm is None for view in shown)  # and nothing stays shown for it
    chat.session.transport = ScriptedTransport(["fine"])
    future = chat.send("and now?")
    assert future is not None
    assert future.result(timeout=5).text == "fine"


# --- the bench: a run stopped or closed before its turn began --------------------------------------------------------


async def test_closing_an_entry_while_its_run_lists_its_tools_runs_nothing(wire: Wire) -> None:
    """Defect: a bench_close (or a stop) while the run's tools were being listed (a source such as an MCP server)
    found no turn to stop, and the run started after the entry was gone: the tool ran anyway."""
    source = GatedSource()
    chat = await note_chat(wire, source)
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "bench_open", "tool_call_id": "c1"})
    entry_id = chat._bench[-1]["id"]
    entry_session = chat._bench_host._entries[entry_id].session
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"text": "after close"}})
    assert await asyncio.to_thread(source.listing.wait, 5)
    front.handle({"type": "bench_close", "id": entry_id})
    assert chat._bench == []
    source.gate.set()
    await wait_for(lambda: bool(entry_session.messages) and not entry_session.busy)
    (call,) = entry_session.messages[-1].tool_calls
    assert call.state.value == "cancelled"
    assert ran == []
    assert not errors(wire, chat)


async def test_closing_the_chat_while_a_run_lists_its_tools_runs_nothing(wire: Wire) -> None:
    source = GatedSource()
    chat = await note_chat(wire, source)
    entry_id = chat._bench_host.open("note", {"text": "x"})
    entry_session = chat._bench_host._entries[entry_id].session
    wire.comms[chat.comm.comm_id].handle({"type": "bench_run", "id": entry_id, "arguments": {"text": "after close"}})
    assert await asyncio.to_thread(source.listing.wait, 5)
    chat.close()
    source.gate.set()
    await wait_for(lambda: bool(entry_session.messages) and not entry_session.busy)
    assert ran == []


def test_run_tool_interrupted_before_its_run_began_runs_nothing(monkeypatch: pytest.MonkeyPatch, wire: Wire) -> None:
    """Defect: an interrupt of ``run_tool`` before its run had begun stopped nothing, and the tool ran after the
    interrupt."""
    import ai_widgets.widget._run_tool as module

    monkeypatch.setattr(module, "show", lambda widget: None)
    loop = private_loop()
    gate, blocked = threading.Event(), threading.Event()

    def hold() -> None:
        blocked.set()
        gate.wait(5)

    def interrupted(future: Any, **_: Any) -> Any:
        threading.Timer(0.05, gate.set).start()
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "wait_with_comms", interrupted)
    ran.clear()
    loop.call_soon_threadsafe(hold)
    assert blocked.wait(5)
    with pytest.raises(KeyboardInterrupt):
        run_tool(note, text="interrupted")
    gate.set()
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.05), loop).result(timeout=5)
    assert ran == []


# --- the bench: what a call's thread did after its call ended --------------------------------------------------------


@tool
def sleepy(n: int) -> int:
    """Sleeps on a thread and never looks at a cancel."""
    time.sleep(0.15)
    return n * 10


async def test_a_cancelled_bench_run_shows_its_thread_stopping_then_what_it_returned(wire: Wire) -> None:
    """Defect: the bench entry's card never said that a cancelled (or timed-out) sync call's thread was still running,
    nor what it returned: the entry's message had no ``stopping``/``late``."""
    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[sleepy], flush_interval=0.005)
    front = wire.comms[chat.comm.comm_id]
    entry_id = chat._bench_host.open("sleepy", {"n": 1})

    def part() -> dict[str, Any]:
        message = chat._bench[-1]["message"] or {"parts": [{}]}
        return message["parts"][0]  # type: ignore[no-any-return]

    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"n": 2}})
    await wait_for(lambda: part().get("state") == "running")
    front.handle({"type": "cancel", "tool_call_id": part()["tool_call_id"]})
    await wait_for(lambda: not chat._bench[-1]["running"])
    assert part()["state"] == "cancelled"
    assert part()["stopping"] is True
    await wait_for(lambda: part().get("late") is not None)
    assert part()["stopping"] is False
    assert part()["late"] == {"kind": "returned", "preview": "20"}
    assert part()["state"] == "cancelled"  # the record does not change

    # A new run shows itself alone: the earlier run's fields go, and a thread of an earlier run does not touch it.
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"n": 3}})
    await wait_for(lambda: part().get("state") == "running")
    first = part()["tool_call_id"]
    assert "stopping" not in part()
    assert "late" not in part()
    front.handle({"type": "cancel", "tool_call_id": first})
    await wait_for(lambda: not chat._bench[-1]["running"])
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"n": 4}})  # while the thread of n=3 runs
    await wait_for(lambda: not chat._bench[-1]["running"] and part().get("tool_call_id") != first)
    await asyncio.sleep(0.2)  # both threads have returned
    assert part()["state"] == "completed"
    assert part()["outcome"]["value"] == 40
    assert "late" not in part()
    assert "stopping" not in part()


# --- closing: nothing leaks ------------------------------------------------------------------------------------------


def collectable(*refs: weakref.ref[Any]) -> bool:
    for _ in range(3):
        gc.collect()
    return all(ref() is None for ref in refs)


async def test_a_closed_chat_its_session_and_its_runs_are_freed(wire: Wire, shown: list[Any]) -> None:
    """Defect: anywidget connected every widget to the change signal of its front-end file (given as a path), with
    a strong reference, so no ChatWidget, turn view or run_tool widget (nor the session and conversation each holds)
    was ever freed, closed or not."""
    refs = await close_a_chat_mid_run(wire, shown)
    wire.comms.clear()  # a kernel's comm manager forgets closed comms; the harness keeps them
    shown.clear()
    assert collectable(*refs)


async def close_a_chat_mid_run(wire: Wire, shown: list[Any]) -> list[weakref.ref[Any]]:
    """A chat with a turn view and a bench run going on, closed; weak references to what must be freed then."""
    chat = ChatWidget(transport=ScriptedTransport(["hello"], repeat=True), tools=[sleepy])
    await chat.ask("hi")
    (view,) = shown
    entry_id = chat._bench_host.open("sleepy", {"n": 1})
    wire.comms[chat.comm.comm_id].handle({"type": "bench_run", "id": entry_id, "arguments": {"n": 1}})
    await wait_for(lambda: "running" in str(chat._bench[-1]["message"]))
    entry_session = chat._bench_host._entries[entry_id].session
    refs = [weakref.ref(chat), weakref.ref(chat.session), weakref.ref(view), weakref.ref(entry_session)]
    chat.close()
    view.close()
    await wait_for(lambda: not entry_session.busy)
    await asyncio.sleep(0.2)  # the run's thread returns
    return refs


def test_a_closed_run_tool_widget_is_freed(monkeypatch: pytest.MonkeyPatch, wire: Wire) -> None:
    import ai_widgets.widget._run_tool as module

    displayed: list[Any] = []
    monkeypatch.setattr(module, "show", displayed.append)
    result = run_tool(note)
    assert isinstance(result, ToolRun)
    ref = weakref.ref(displayed[0])
    displayed[0].close()
    wire.comms.clear()
    displayed.clear()
    del result
    assert collectable(ref)


# --- arguments that are not strict JSON --------------------------------------------------------------------------------


async def test_a_bench_run_with_nan_or_infinity_is_refused_and_changes_nothing(wire: Wire) -> None:
    """Defect: NaN and Infinity in a bench_run's arguments (JSON a front end other than a browser can send; the
    kernel's JSON reader accepts them) silently became null, and the tool ran with None."""
    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[scale])
    front = wire.comms[chat.comm.comm_id]
    entry_id = chat._bench_host.open("scale", {"factor": 2})
    before = chat._bench[-1]
    ran.clear()
    for bad in (float("nan"), float("inf"), float("-inf")):
        front.handle({"type": "bench_run", "id": entry_id, "arguments": {"factor": bad}})
        message = errors(wire, chat)[-1]
        assert message.startswith("Run refused: the arguments: ")
        assert "not a JSON number" in message
        assert chat._bench[-1] == before  # the form, its attempt counter and its run are as they were
    await asyncio.sleep(0.05)
    assert ran == []


async def test_edited_arguments_with_nan_are_refused_and_the_call_keeps_waiting(wire: Wire) -> None:
    """Defect: an approval with edited arguments holding NaN ran the tool with None in its place."""
    call = ScriptedToolCall(name="scale", arguments={"factor": 2}, id="s1")
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[scale])
    front = wire.comms[chat.comm.comm_id]
    ran.clear()
    turn = asyncio.create_task(chat.ask("scale it", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    front.handle(
        {"type": "approve", "tool_call_id": "s1", "decision": "approved", "arguments": {"factor": float("nan")}}
    )
    assert errors(wire, chat)[-1].startswith("Approval refused: the edited arguments: ")
    assert [p.tool_call_id for p in chat.session.pending_approvals] == ["s1"]
    front.handle({"type": "approve", "tool_call_id": "s1", "decision": "approved", "arguments": {"factor": 3}})
    await turn
    assert ran == [("scaled", 3.0)]


async def test_run_call_refuses_nan_like_run_tool() -> None:
    session = ChatSession(ScriptedTransport(["hi"]), tools=[scale])
    with pytest.raises(ValueError, match="not a JSON number"):
        await asyncio.wait_for(session.run_call("scale", {"factor": float("nan")}), 2)  # (it would wait to be approved)
    assert session.messages == []


# --- the bench: a large result elsewhere is not sent again with every progress report -------------------------------


async def test_progress_of_one_run_does_not_resend_a_large_result_of_another_entry_30_times_a_second(
    wire: Wire,
) -> None:
    """Defect: the bench trait goes whole, and it was set about 30 times a second while any run reported progress,
    so a 1 MB result kept in one entry went over the comm with every report of another: 58 MB for a 0.6 s run."""

    @tool
    def large(n: int) -> str:
        """Returns a large text."""
        return "x" * 1_000_000

    @tool
    async def reporting(n: int, invocation: ToolInvocation) -> int:
        """Reports its progress often."""
        for i in range(60):
            invocation.progress.report(i / 60, f"step {i}")
            await asyncio.sleep(0.01)
        return n

    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[large, reporting])
    first = chat._bench_host.open("large", {"n": 1})
    started = chat._bench_host.start(first, {"n": 1})
    assert started is not None
    await asyncio.wrap_future(started)
    second = chat._bench_host.open("reporting", {"n": 2})
    mark = wire.mark()
    started = chat._bench_host.start(second, {"n": 2})
    assert started is not None
    await asyncio.wrap_future(started)
    sent = sum(s.nbytes for s in wire.since(mark))
    assert sent < 10_000_000, sent
    assert chat._bench[-1]["message"]["parts"][0]["outcome"]["value"] == 2
    # The entry shows the first MAX_SHOWN_RESULT_CHARS of the large result, and says how much more there is.
    assert chat._bench[0]["message"]["parts"][0]["outcome"]["value"] == (
        "x" * 100_000 + "… (900,000 more characters not shown here)"
    )


# --- interrupts ------------------------------------------------------------------------------------------------------


def test_an_interrupt_reaches_every_watched_turn_even_if_one_loop_is_closing() -> None:
    """Defect: the SIGINT handler raised RuntimeError into whatever the main thread was running when a watched
    turn's loop closed between its check and its call, and the turns after it in the list were not stopped."""
    import signal

    from ai_widgets.widget._interrupts import IdleInterrupts

    class Closing(asyncio.SelectorEventLoop):
        def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("Event loop is closed")

    closing, live = Closing(), asyncio.new_event_loop()
    stopped: list[str] = []
    interrupts = IdleInterrupts()
    try:
        interrupts._watched = ((closing, lambda: stopped.append("closing")), (live, lambda: stopped.append("live")))
        interrupts._handle(signal.SIGINT, None)  # must not raise
        live.run_until_complete(asyncio.sleep(0))
        assert stopped == ["live"]
    finally:
        closing.close()
        live.close()


# --- the bench: many problems at once --------------------------------------------------------------------------------


@tool
def total(values: list[int]) -> int:
    """Adds the values."""
    return sum(values)


async def test_a_run_with_tens_of_thousands_of_bad_items_is_answered_at_once_in_a_few_lines(wire: Wire) -> None:
    """Defect: each problem was appended to its field's text (quadratic) and searched for in the model's whole
    message (quadratic again): 50,000 bad items blocked the kernel for 10 s and put 4 MB in the field's error."""
    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[total])
    entry_id = chat._bench_host.open("total", {})
    started = time.monotonic()
    wire.comms[chat.comm.comm_id].handle({"type": "bench_run", "id": entry_id, "arguments": {"values": ["x"] * 50_000}})
    assert time.monotonic() - started < 3
    shown = chat._bench[-1]
    (text,) = shown["errors"].values()
    assert text.startswith("0: Input should be a valid integer")
    assert text.endswith("; and 49,997 more")
    assert len(text) < 1_000
    assert shown["error"] is None
    assert shown["message"] is None  # nothing ran


def test_the_general_error_of_an_entry_is_clipped() -> None:
    from ai_widgets import ToolDefinition
    from ai_widgets.widget._bench import field_errors

    definition = ToolDefinition(
        name="strict",
        description="Takes nothing more.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    strict = Tool(definition, lambda invocation: "ok")
    found = field_errors(strict, {f"k{i}" * 50: i for i in range(200)})
    assert found is not None
    fields, general = found
    assert fields == {}
    assert general is not None
    assert len(general) <= 1_000


# --- the turn view: how a turn ends, and what stays --------------------------------------------------------------------


def test_ask_sync_interrupted_while_its_call_waits_stops_that_turn_and_its_view_shows_it(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    import ai_widgets.widget._chat as chat_module

    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[delete_file])

    def interrupted_while_waiting(future: Any, **_: Any) -> Any:
        deadline = time.monotonic() + 5
        while not chat.session.pending_approvals and time.monotonic() < deadline:
            time.sleep(0.005)
        raise KeyboardInterrupt

    monkeypatch.setattr(chat_module, "wait_with_comms", interrupted_while_waiting)
    ran.clear()
    with pytest.raises(KeyboardInterrupt):
        chat.ask_sync("delete it")
    assert not chat.session.busy  # the turn recorded its cancellation before the interrupt reached the caller
    reply = chat.session.messages[-1]
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state.value for p in reply.tool_calls] == ["cancelled"]
    assert ran == []
    (view,) = shown
    assert not view._busy
    assert [m["status"] for m in finished_messages(view) if m["role"] == "assistant"] == ["cancelled"]


class Failing:
    async def stream(self, request: Any) -> Any:
        raise RuntimeError("the model is down")
        yield  # pragma: no cover


@pytest.mark.parametrize("ending", ["error", "limit_reached", "cancelled"])
async def test_a_turn_view_shows_how_its_turn_ended_and_keeps_it(wire: Wire, shown: list[Any], ending: str) -> None:
    from ai_widgets import SessionOptions

    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    if ending == "error":
        chat = ChatWidget(transport=Failing())
    elif ending == "limit_reached":
        again = ScriptedToolCall(name="note", arguments={"text": "a"})
        transport = ScriptedTransport([ScriptedReply(tool_calls=[again])], repeat=True)
        chat = ChatWidget(transport=transport, tools=[note], options=SessionOptions(max_iterations=1))
    else:
        chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call])]), tools=[delete_file])
    asked = asyncio.create_task(chat.ask("go"))
    if ending == "cancelled":
        await wait_for(lambda: bool(chat.session.pending_approvals))
        wire.comms[shown[0].comm.comm_id].handle({"type": "stop"})
    reply = await asked
    assert reply.status.value == ending
    (view,) = shown
    assert not view._busy
    turn = finished_messages(view)
    assert [m["role"] for m in turn] == ["user", "assistant"]
    assert turn[1]["status"] == ending

    # A view of it opened later (a new page) gets the turn; the chat going on, or cleared, changes nothing there.
    chat.session.transport = ScriptedTransport(["later"], repeat=True)
    chat.clear()
    await chat.ask("another", show=False)
    sent = len(wire.custom(view.comm.comm_id))
    wire.comms[view.comm.comm_id].handle({"type": "sync", "have": 0})
    (snapshot,) = [c for c in wire.custom(view.comm.comm_id)[sent:] if c["type"] == "snapshot"]
    assert snapshot["finished"] == turn
    assert snapshot["live"] == []
    assert finished_messages(view) == turn


async def test_two_bench_runs_of_one_entry_from_two_threads_start_one_run(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[sleepy])
    entry_id = chat._bench_host.open("sleepy", {"n": 1})
    front = wire.comms[chat.comm.comm_id]
    barrier = threading.Barrier(6)

    def run() -> None:
        barrier.wait()
        front.handle({"type": "bench_run", "id": entry_id, "arguments": {"n": 5}})

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    await wait_for(lambda: not chat._bench[-1]["running"])
    refused = [e for e in errors(wire, chat) if "still running" in e]
    assert chat._bench[-1]["attempt"] + len(refused) == 6
    assert chat._bench[-1]["attempt"] == 1
    assert chat._bench[-1]["message"]["parts"][0]["outcome"]["value"] == 50


async def test_run_again_is_refused_for_a_running_a_provider_run_or_an_unregistered_call_and_changes_nothing(
    wire: Wire,
) -> None:
    @tool
    def web_search(query: str) -> str:
        """Searches (run by the provider)."""
        return "never here"

    calls = [
        ScriptedToolCall(name="web_search", arguments={"query": "q"}, id="p1", provider_result="found"),
        ScriptedToolCall(name="sleepy", arguments={"n": 1}, id="s1"),
        ScriptedToolCall(name="note", arguments={"text": "t"}, id="n1"),
    ]
    chat = ChatWidget(
        transport=ScriptedTransport([ScriptedReply(tool_calls=calls), "done"]), tools=[web_search, sleepy, note]
    )
    front = wire.comms[chat.comm.comm_id]
    turn = asyncio.create_task(chat.ask("go", show=False))
    found = chat.session.tool_call
    await wait_for(lambda: (f := found("s1")) is not None and f.state.value == "running")
    front.handle({"type": "bench_open", "tool_call_id": "s1"})
    assert errors(wire, chat)[-1] == "Run again refused: the call of sleepy has not finished: it is running"
    await turn
    history = finished_messages(chat)
    front.handle({"type": "bench_open", "tool_call_id": "p1"})
    assert errors(wire, chat)[-1] == "Run again refused: web_search ran at the provider: it cannot be run again here"
    chat.session.tools.unregister("note")
    front.handle({"type": "bench_open", "tool_call_id": "n1"})
    assert "the tool 'note' is not registered" in errors(wire, chat)[-1]
    assert chat._bench == []
    assert finished_messages(chat) == history
    assert all(len(e) <= 1000 for e in errors(wire, chat))


async def test_a_turn_view_that_could_not_be_displayed_is_closed(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: when displaying the turn view failed, ``ask`` raised and left the view open, subscribed to the session
    for good."""
    import IPython.display

    import ai_widgets.widget._chat as chat_module

    def broken(*objects: Any, **_: Any) -> None:
        raise RuntimeError("no display here")

    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", broken)
    chat = ChatWidget(transport=ScriptedTransport(["hi"]))
    subscribers = len(chat.session._subscribers)
    with pytest.raises(RuntimeError, match="no display here"):
        await chat.ask("hello")
    opened = [s.comm_id for s in wire.sent if s.msg_type == "comm_open" and s.data["state"].get("_scope") == "turn"]
    closed = {s.comm_id for s in wire.sent if s.msg_type == "comm_close"}
    assert opened
    assert set(opened) <= closed
    assert len(chat.session._subscribers) == subscribers
    assert chat.session.messages == []


# --- a call's thread that returns what cannot be shown -------------------------------------------------------------


class Unshowable:
    def __repr__(self) -> str:
        raise TypeError("no repr")


@tool
def returns_unshowable(invocation: ToolInvocation) -> object:
    """Returns, late, a value that cannot even be described."""
    time.sleep(0.1)
    return [Unshowable()]


async def test_a_late_value_that_cannot_be_described_still_ends_the_stopping_note(wire: Wire) -> None:
    """Defect: describing what a given-up call's thread returned raised (a value whose repr raises), the error was
    only logged, and the card said "stopping" for ever (a view that stopped mirroring also stayed subscribed)."""
    call = ScriptedToolCall(name="returns_unshowable", id="u1")
    transport = ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"])
    chat = ChatWidget(transport=transport, tools=[returns_unshowable], flush_interval=0.001)
    turn = asyncio.create_task(chat.ask("go", show=False))
    found = chat.session.tool_call
    await wait_for(lambda: (f := found("u1")) is not None and f.state.value == "running")
    wire.comms[chat.comm.comm_id].handle({"type": "cancel", "tool_call_id": "u1"})
    await turn

    def shown() -> dict[str, Any]:
        reply = finished_messages(chat)[1]
        return next(p for p in reply["parts"] if p.get("tool_call_id") == "u1")  # type: ignore[no-any-return]

    await wait_for(lambda: shown().get("late") is not None)
    assert shown()["stopping"] is False
    assert shown()["late"] == {"kind": "returned", "preview": "(a list that cannot be shown: TypeError)"}
    assert shown()["state"] == "cancelled"


# --- large results -----------------------------------------------------------------------------------------------


# Each result is made by its test, not when the tests are collected: collected, the 300,000 rows would stay in
# memory (and in every garbage collection) for the rest of the run.
@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("text", lambda: "x" * 10_000_000),
        pytest.param(
            "value", lambda: [{"row": n, "name": f"name {n}" * 20} for n in range(300_000)], marks=pytest.mark.slow
        ),
        ("markdown", lambda: ToolOutcome.success(text="# Log\n" + "line\n" * 2_000_000)),
        ("failure", lambda: ToolOutcome.failure("E" * 5_000_000)),
    ],
    ids=["text", "value", "markdown", "failure"],
)
async def test_a_huge_tool_result_is_shown_in_part_and_kept_whole_by_the_session(
    wire: Wire, kind: str, make: Callable[[], Any]
) -> None:
    """Defect: a 10 MB result went over the comm twice (the call op and the history trait: 20 MB) and into the
    notebook file whole, for the browser to lay out as one text."""
    result = make()

    @tool
    def dump() -> Any:
        """Returns a huge result."""
        return result

    reply = ScriptedReply(tool_calls=[ScriptedToolCall(name="dump", arguments={})])
    chat = ChatWidget(transport=ScriptedTransport([reply, ScriptedReply(text="Read it.")]), tools=[dump])
    mark = wire.mark()
    done = await chat.session.send("dump it")
    assert done.text.endswith("Read it.")
    sent = sum(s.nbytes for s in wire.since(mark))
    assert sent < 1_500_000, sent
    shown = finished_messages(chat)[-1]["parts"][0]["outcome"]
    (call,) = done.tool_calls
    assert call.outcome is not None
    match kind:
        case "text":
            assert shown["value"] == "x" * 100_000 + "… (9,900,000 more characters not shown here)"
            assert call.outcome.value == result
        case "value":
            assert shown["value"][:2] == [{"row": 0, "name": "name 0" * 20}, {"row": 1, "name": "name 1" * 20}]
            assert len(shown["value"]) == 1_001
            assert shown["value"][-1] == "… (299,000 more items not shown here)"
            assert call.outcome.value == result
        case "markdown":
            assert shown["text"].endswith("… (9,900,006 more characters not shown here)")
            assert call.outcome.text == result.text
        case "failure":
            assert shown["message"].endswith("… (4,900,000 more characters not shown here)")
            assert call.outcome.message == result.message
