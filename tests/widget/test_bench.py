"""The bench: tools run by hand in a widget ("Run again" on a finished card, run_tool's form), with a recording comm
in place of the kernel's (docs/protocol.md, "The bench")."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from ai_widgets import (
    ApprovalError,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
    ToolRisk,
    tool,
)
from ai_widgets.session import ChatSession
from ai_widgets.tools import Tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget, ToolRun, arun_tool, run_tool
from ai_widgets.widget._bench import field_errors
from ai_widgets.widget._kernel import private_loop
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, finished_messages


class Address(BaseModel):
    street: str
    postcode: str | None = None


ran: list[Any] = []


@tool(title="Send letter", icon="✉")
def send_letter(
    to: Address, copies: Annotated[int, Field(ge=1, description="How many.")] = 1, mode: Literal["post", "fax"] = "post"
) -> str:
    """Sends a letter."""
    ran.append({"to": to.street, "copies": copies, "mode": mode})
    return f"sent {copies} to {to.street} by {mode}"


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file."""
    ran.append({"deleted": path})
    return f"deleted {path}"


def letter_chat(arguments: dict[str, Any] | None = None) -> ChatWidget:
    call = ScriptedToolCall(name="send_letter", arguments=arguments or {"to": {"street": "Main St 1"}}, id="call_1")
    transport = ScriptedTransport([ScriptedReply(tool_calls=[call]), "Sent."])
    return ChatWidget(transport=transport, tools=[send_letter, delete_file])


def entry(widget: Any, index: int = -1) -> dict[str, Any]:
    return widget._bench[index]  # type: ignore[no-any-return]


def errors(wire: Wire, widget: Any) -> list[str]:
    return [c["message"] for c in wire.custom(widget.comm.comm_id) if c["type"] == "error"]


async def test_run_again_opens_the_call_with_its_arguments_and_runs_it_apart_from_the_history(wire: Wire) -> None:
    ran.clear()
    chat = letter_chat()
    await chat.ask("send it", show=False)
    history = finished_messages(chat)
    messages = list(chat.session.messages)
    front = wire.comms[chat.comm.comm_id]

    front.handle({"type": "bench_open", "tool_call_id": "call_1"})
    opened = entry(chat)
    assert opened["tool_name"] == "send_letter"
    assert opened["arguments"] == {"to": {"street": "Main St 1"}}
    assert opened["source"] == "call_1"
    assert opened["message"] is None
    assert opened["running"] is False
    assert opened["errors"] == {}

    front.handle({"type": "bench_run", "id": opened["id"], "arguments": {"to": {"street": "Elm 2"}, "copies": 3}})
    await wait_for(lambda: entry(chat)["message"] is not None and not entry(chat)["running"])
    shown = entry(chat)
    call = shown["message"]["parts"][0]
    assert call["state"] == "completed"
    assert call["outcome"]["value"] == "sent 3 to Elm 2 by post"
    assert shown["arguments"] == {"to": {"street": "Elm 2"}, "copies": 3}
    assert ran[-1] == {"to": "Elm 2", "copies": 3, "mode": "post"}
    # The conversation is as it was: the session's messages, the widget's history, no op about the run.
    assert chat.session.messages == messages
    assert finished_messages(chat) == history
    assert not errors(wire, chat)

    # Run again from the same entry: the latest run replaces the shown one.
    front.handle({"type": "bench_run", "id": shown["id"], "arguments": {"to": {"street": "Oak 3"}}})
    await wait_for(lambda: not entry(chat)["running"] and "Oak 3" in str(entry(chat)["message"]))
    assert entry(chat)["message"]["parts"][0]["tool_call_id"] != call["tool_call_id"]
    assert len(chat._bench) == 1
    assert chat.session.messages == messages


async def test_run_again_takes_the_arguments_the_person_edited(wire: Wire) -> None:
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "a"}, id="d1")]), "Ok."]
    )
    chat = ChatWidget(transport=transport, tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    turn = asyncio.create_task(chat.ask("delete", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    front.handle({"type": "bench_open", "tool_call_id": "d1"})
    assert "has not finished: it is awaiting_approval" in errors(wire, chat)[-1]
    front.handle({"type": "approve", "tool_call_id": "d1", "decision": "approved", "arguments": {"path": "b"}})
    await turn
    front.handle({"type": "bench_open", "tool_call_id": "d1"})
    assert entry(chat)["arguments"] == {"path": "b"}


async def test_a_problem_shows_at_its_field_in_the_words_the_model_gets_and_nothing_runs(wire: Wire) -> None:
    chat = letter_chat()
    await chat.ask("send it", show=False)
    ran.clear()
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "bench_open", "tool_call_id": "call_1"})
    entry_id = entry(chat)["id"]

    bad = {"to": {"postcode": "1000"}, "copies": 0, "mode": "pigeon"}
    front.handle({"type": "bench_run", "id": entry_id, "arguments": bad})
    shown = entry(chat)
    told = send_letter.bind(bad)
    assert isinstance(told, ToolOutcome)
    assert told.message is not None
    assert shown["errors"] == {
        "to": "street: Field required",
        "copies": "Input should be greater than or equal to 1 (got 0)",
        "mode": "Input should be 'post' or 'fax' (got \"pigeon\")",
    }
    for field, text in shown["errors"].items():
        where = field if field != "to" else "to.street"
        detail = text if field != "to" else "Field required"
        assert f"{where}: {detail}" in told.message  # exactly what the model would be told
    assert shown["error"] is None
    assert shown["attempt"] == 1
    assert shown["running"] is False
    assert shown["message"] is None
    assert shown["arguments"] == bad  # the form keeps what the person typed
    assert ran == []

    # Refused the same way again: the attempt counter tells the view its Run was answered.
    front.handle({"type": "bench_run", "id": entry_id, "arguments": bad})
    assert entry(chat)["attempt"] == 2
    # Fixed: the errors go, it runs.
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"to": {"street": "Main"}, "copies": 2}})
    assert entry(chat)["errors"] == {}
    await wait_for(lambda: entry(chat)["message"] is not None and not entry(chat)["running"])
    assert ran == [{"to": "Main", "copies": 2, "mode": "post"}]


def test_problems_of_a_tool_with_its_own_schema_map_to_fields() -> None:
    definition = ToolDefinition(
        name="lookup",
        description="Looks up.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
        },
    )

    def handler(invocation: ToolInvocation) -> str:
        return "ok"

    lookup = Tool(definition, handler)
    found = field_errors(lookup, {"days": 0})
    assert found is not None
    fields, general = found
    assert fields == {"city": "'city' is a required property", "days": "0 is less than the minimum of 1"}
    assert general is None
    assert field_errors(lookup, {"city": "Oslo"}) is None
    # A problem that is no field's: the model's whole message, as a general error.
    assert field_errors(send_letter, {"to": {"street": "x"}}) is None
    _, general = field_errors(lookup, {"city": "x", "days": "two"}) or ({}, None)
    assert general is None


async def test_a_bench_run_asks_for_approval_and_the_click_reaches_its_own_session(wire: Wire) -> None:
    ran.clear()
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "a"}, id="d1")]), "Ok."]
    )
    chat = ChatWidget(transport=transport, tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    turn = asyncio.create_task(chat.ask("delete", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    front.handle({"type": "approve", "tool_call_id": "d1", "decision": "rejected"})
    await turn
    messages = list(chat.session.messages)

    front.handle({"type": "bench_open", "tool_call_id": "d1"})
    entry_id = entry(chat)["id"]
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"path": "x.txt"}})
    await wait_for(lambda: str(entry(chat)["message"]).count("awaiting_approval") > 0)
    call = entry(chat)["message"]["parts"][0]
    assert entry(chat)["running"] is True
    front.handle({"type": "bench_run", "id": entry_id, "arguments": {"path": "y"}})
    assert "still running" in errors(wire, chat)[-1]
    front.handle({"type": "approve", "tool_call_id": call["tool_call_id"], "decision": "approved_always"})
    await wait_for(lambda: not entry(chat)["running"])
    assert entry(chat)["message"]["parts"][0]["outcome"]["value"] == "deleted x.txt"
    assert ran == [{"deleted": "x.txt"}]
    assert chat._allowed_always == ["delete_file"]  # the chat's own policy: it remembers
    assert chat.session.messages == messages

    # Cancel reaches the bench run too.
    @tool(requires_approval=True)
    def asks(n: int) -> int:
        """Asks first."""
        return n

    chat.session.tools.register(asks)
    slow_id = chat._bench_host.open("asks", {"n": 1})  # an entry of another tool, opened from Python
    front.handle({"type": "bench_run", "id": slow_id, "arguments": {"n": 2}})
    await wait_for(lambda: "awaiting_approval" in str(entry(chat)["message"]))
    front.handle({"type": "cancel", "tool_call_id": entry(chat)["message"]["parts"][0]["tool_call_id"]})
    await wait_for(lambda: not entry(chat)["running"])
    assert entry(chat)["message"]["parts"][0]["state"] == "cancelled"
    assert chat.session.messages == messages


async def test_malformed_bench_actions_get_clear_errors_and_change_nothing(wire: Wire) -> None:
    chat = letter_chat()
    await chat.ask("send it", show=False)
    front = wire.comms[chat.comm.comm_id]
    before = finished_messages(chat)
    cases: list[tuple[Any, str]] = [
        ({"type": "bench_open"}, "tool_call_id: Field required"),
        ({"type": "bench_open", "tool_call_id": "ghost"}, "Run again refused: there is no tool call 'ghost'"),
        ({"type": "bench_run", "id": "bench_9", "arguments": {}}, "Run refused: there is no bench entry 'bench_9'"),
        ({"type": "bench_run", "id": "bench_1"}, "arguments: Field required"),
        ({"type": "bench_run", "id": "bench_1", "arguments": [1]}, "arguments: Input should be a valid dictionary"),
        ({"type": "bench_close", "id": "nope"}, "Close refused: there is no bench entry 'nope'"),
        ({"type": "bench_open", "tool_call_id": "call_1", "extra": 1}, "extra: Extra inputs are not permitted"),
    ]
    for content, expected in cases:
        front.handle(content)
        assert expected in errors(wire, chat)[-1], (content, errors(wire, chat)[-1])
    assert chat._bench == []
    front.handle({"type": "bench_run", "id": "x" * 500, "arguments": {}})
    assert len(errors(wire, chat)[-1]) < 400
    assert finished_messages(chat) == before

    # A tool that is gone: refused at open.
    chat.session.tools.unregister("send_letter")
    front.handle({"type": "bench_open", "tool_call_id": "call_1"})
    assert "not registered" in errors(wire, chat)[-1]
    assert chat._bench == []


async def test_close_stops_a_run_and_the_bench_keeps_at_most_its_limit(wire: Wire) -> None:
    chat = letter_chat()
    await chat.ask("send it", show=False)
    front = wire.comms[chat.comm.comm_id]
    for _ in range(22):
        front.handle({"type": "bench_open", "tool_call_id": "call_1"})
    ids = [e["id"] for e in chat._bench]
    assert len(ids) == 20
    assert ids[0] == "bench_3"
    assert ids[-1] == "bench_22"
    front.handle({"type": "bench_close", "id": "bench_3"})
    assert [e["id"] for e in chat._bench] == ids[1:]


async def test_bench_updates_are_coalesced_while_a_run_reports_progress(wire: Wire) -> None:
    @tool
    async def chatty(n: int, invocation: ToolInvocation) -> int:
        """Reports often."""
        for i in range(200):
            invocation.progress.report(i / 200, f"step {i}")
            if i % 20 == 0:
                await asyncio.sleep(0.01)
        return n

    chat = ChatWidget(transport=ScriptedTransport(["hi"]), tools=[chatty])
    entry_id = chat._bench_host.open("chatty", {})
    mark = wire.mark()
    future = chat._bench_host.start(entry_id, {"n": 1})
    assert future is not None
    await asyncio.wrap_future(future)
    updates = [s for s in wire.since(mark) if s.data.get("method") == "update" and "_bench" in s.data["state"]]
    assert 2 <= len(updates) < 30, len(updates)
    assert entry(chat)["message"]["parts"][0]["outcome"]["value"] == 1


# --- run_tool ---------------------------------------------------------------------------------------------------


@pytest.fixture
def benches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The workbench widgets ``run_tool`` displays."""
    import ai_widgets.widget._run_tool as module

    displayed: list[Any] = []
    monkeypatch.setattr(module, "show", displayed.append)
    return displayed


def test_run_tool_with_missing_arguments_shows_the_form_and_runs_nothing(wire: Wire, benches: list[Any]) -> None:
    ran.clear()
    result = run_tool(send_letter, copies=2)
    assert isinstance(result, ToolRun)
    (widget,) = benches
    assert widget._scope == "bench"
    assert [(e["tool_name"], e["arguments"], e["message"]) for e in widget._bench] == [
        ("send_letter", {"copies": 2}, None)
    ]
    assert ran == []
    assert result.outcome is None
    assert not result.running
    assert repr(result) == "ToolRun('send_letter', not run yet)"
    front = wire.comms[widget.comm.comm_id]
    front.handle({"type": "bench_run", "id": widget._bench[0]["id"], "arguments": {"copies": 2}})
    assert widget._bench[0]["errors"] == {"to": "Field required"}
    front.handle({"type": "bench_run", "id": widget._bench[0]["id"], "arguments": {"to": {"street": "A"}, "copies": 2}})
    deadline = time.monotonic() + 5
    while result.outcome is None and time.monotonic() < deadline:
        time.sleep(0.01)  # the run goes on the package's own loop
    assert result.outcome is not None
    assert result.outcome.value == "sent 2 to A by post"
    assert repr(result) == "ToolRun('send_letter', success)"
    front.handle({"type": "bench_close", "id": widget._bench[0]["id"]})
    assert "stays for the next run" in errors(wire, widget)[-1]
    front.handle({"type": "send", "text": "hi"})
    assert "no conversation" in errors(wire, widget)[-1]


def test_run_tool_with_every_required_argument_runs_at_once_and_keeps_the_form(wire: Wire, benches: list[Any]) -> None:
    outcome = run_tool(send_letter, to={"street": "B"})
    assert isinstance(outcome, ToolOutcome)
    assert outcome.value == "sent 1 to B by post"
    (widget,) = benches
    (only,) = widget._bench
    assert only["arguments"] == {"to": {"street": "B"}}
    assert only["message"]["parts"][0]["state"] == "completed"
    assert only["running"] is False
    # Invalid arguments from code run anyway, as a model's call would: the failure is the outcome, and the form
    # shows the problem at its field.
    failed = run_tool(send_letter, to={"street": "B"}, copies=0)
    assert isinstance(failed, ToolOutcome)
    assert failed.status == "failure"
    assert "copies: Input should be greater than or equal to 1 (got 0)" in (failed.message or "")
    assert benches[1]._bench[0]["errors"] == {"copies": "Input should be greater than or equal to 1 (got 0)"}


async def test_arun_tool_is_consistent(wire: Wire, benches: list[Any]) -> None:
    outcome = await arun_tool(send_letter, to={"street": "C"}, mode="fax")
    assert isinstance(outcome, ToolOutcome)
    assert outcome.value == "sent 1 to C by fax"
    pending = await arun_tool(send_letter)
    assert isinstance(pending, ToolRun)
    assert pending.outcome is None
    assert benches[1]._bench[0]["message"] is None


def test_a_tool_run_shows_nothing_as_its_cells_value_and_one_line_later(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, benches: list[Any]
) -> None:
    import IPython.display

    import ai_widgets.widget._run_tool as module

    count = [3]
    monkeypatch.setattr(module, "cell", lambda: count[0])
    displayed: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: displayed.append(objs))
    result = run_tool(send_letter)
    assert isinstance(result, ToolRun)
    result._ipython_display_()
    assert displayed == []
    count[0] = 4
    result._ipython_display_()
    assert displayed == [({"text/plain": "ToolRun('send_letter', not run yet)"},)]


def test_run_tool_outside_a_kernel_refuses_a_call_that_needs_approval_instead_of_waiting_forever(
    wire: Wire, benches: list[Any]
) -> None:
    # Outside a Jupyter kernel (a script, marimo) no click can reach a cell while run_tool waits.
    started = time.monotonic()
    with pytest.raises(
        ApprovalError, match=r"run_tool\(delete_file\): this call needs approval, and outside a Jupyter kernel"
    ):
        run_tool(delete_file, path="notes.txt")
    assert time.monotonic() - started < 5
    (widget,) = benches
    part = widget._bench[0]["message"]["parts"][0]
    assert part["state"] == "cancelled"  # stopped before it ran
    assert {"deleted": "notes.txt"} not in ran
    # With a policy that allows it, it runs; an awaited run is refused the same way.
    allowed = run_tool(delete_file, path="notes.txt", approval_policy=AllowEverything())
    assert isinstance(allowed, ToolOutcome)
    assert allowed.status == "success"
    assert {"deleted": "notes.txt"} in ran
    with pytest.raises(ApprovalError, match="outside a Jupyter kernel nothing can approve it"):
        asyncio.run(arun_tool(delete_file, path="other.txt"))
    assert {"deleted": "other.txt"} not in ran


class AllowEverything:
    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool:
        return False

    def record_decision(self, definition: ToolDefinition, invocation: ToolInvocation, decision: Any) -> None:
        pass


def test_run_tool_refuses_arguments_that_share_lists_exponentially_at_once(wire: Wire, benches: list[Any]) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match="run_tool needs JSON arguments: the arguments: more than 10,000,000 values"):
        run_tool(send_letter, to={"street": "A"}, copies=[[[[[1] * 100] * 100] * 100] * 100] * 100)
    assert time.monotonic() - started < 5
    assert benches == []  # nothing was benches


def test_the_fields_and_the_models_message_come_from_one_list_of_problems() -> None:
    """Before: the bench checked a definition's schema again with its own validator (Python's backtracking regex
    engine), found a problem the tool's binding never tells the model (a lookahead pattern, which the linear-time
    engine does not check), and showed the model's whole message as an error that no field explained."""
    definition = ToolDefinition(
        name="lookup",
        description="Looks up.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "code": {"type": "string", "pattern": "^(?=.*[0-9])"}},
            "required": ["city"],
        },
    )
    lookup = Tool(definition, lambda invocation: "ok")
    told = lookup.bind({"code": "abc"})
    assert isinstance(told, ToolOutcome)
    assert told.message == (
        "Invalid arguments for lookup: (arguments): 'city' is a required property. Correct them and call again."
    )
    assert field_errors(lookup, {"code": "abc"}) == ({"city": "'city' is a required property"}, None)


# --- a run stopped or closed before its turn began --------------------------------------------------------------------


@tool
def note(text: str) -> str:
    """Notes a text."""
    ran.append(text)
    return text


@tool(risk=ToolRisk.DESTRUCTIVE)
def scale(factor: float | None = None) -> str:
    """Scales by a factor (none: by one)."""
    ran.append(("scaled", factor))
    return f"scaled by {factor}"


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


# --- what a call's thread did after its call ended --------------------------------------------------------------------


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


# --- closing: nothing leaks -------------------------------------------------------------------------------------------


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


# --- arguments that are not strict JSON -------------------------------------------------------------------------------


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


# --- a large result elsewhere is not sent again with every progress report --------------------------------------------


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


# --- many problems at once --------------------------------------------------------------------------------------------


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
