"""What no input, fault or race may break (DESIGN.md, "Integrity"): each test reproduces a defect of issue 8."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ai_widgets import (
    ApprovalDecision,
    ApprovalError,
    CancelError,
    ChatSession,
    MessageStatus,
    SessionOptions,
    ToolCallPart,
    ToolCallState,
    ToolChoice,
    ToolInvocation,
    ToolOutcome,
    ToolRisk,
    UnknownToolCallError,
    tool,
)
from ai_widgets._threads import ToolThreads
from ai_widgets.events import (
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import (
    FinishReason,
    InvalidTransitionError,
    Message,
    Role,
    conversation_markdown,
    dump_messages,
    load_messages,
)
from ai_widgets.options import RequestOptions
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for


class EventsTransport:
    """Plays given event lists, one per request (a transport that may break the protocol)."""

    def __init__(self, *responses: list[Any] | Callable[[ChatRequest], list[Any]]) -> None:
        self._responses = list(responses)
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        response = self._responses.pop(0)
        events = response(request) if callable(response) else response
        for event in events:
            await asyncio.sleep(0)
            yield event


def call(name: str, arguments: str, call_id: str = "c1") -> list[Any]:
    return [
        ResponseStarted(),
        ToolCallStarted(call_id, name, arguments),
        ToolCallArgumentsDone(call_id),
        ResponseCompleted(FinishReason.TOOL_CALLS),
    ]


def answer(text: str = "done") -> list[Any]:
    return [ResponseStarted(), TextDelta(text), ResponseCompleted(FinishReason.STOP)]


def assert_settled(session: ChatSession) -> None:
    """The invariants after any turn: idle, every reply final, every call with an outcome, the dump sound."""
    assert not session.busy
    for message in session.messages:
        assert message.status is not MessageStatus.IN_PROGRESS
        for part in message.tool_calls:
            assert part.state.terminal, part
            assert part.outcome is not None
    text = dump_messages(session.messages)
    text.encode("utf-8")
    assert dump_messages(load_messages(text)) == text
    conversation_markdown(session.messages)


# --- 1. what is approved is what runs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        '{"path": "notes/tmp.txt", "_": NaN, "path": "/home/user"}',
        '{"path": "notes/tmp.txt", "path": "/home/user"}',
        '{"path": "notes/tmp.txt", "size": Infinity}',
    ],
)
async def test_arguments_that_read_two_ways_are_refused_before_anyone_is_asked(arguments: str) -> None:
    ran: list[str] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete(path: str) -> str:
        """Deletes a file."""
        ran.append(path)
        return "deleted"

    session = ChatSession(EventsTransport(call("delete", arguments), answer()), tools=[delete])
    reply = await session.send("clean up")
    part = reply.tool_calls[0]
    assert ran == []
    assert part.state is ToolCallState.FAILED
    assert part.decision is None
    assert part.approval_reason is None
    assert part.outcome is not None
    assert "not valid JSON" in (part.outcome.message or "")
    assert part.parsed_arguments == {"path": "notes/tmp.txt"}
    assert_settled(session)


async def test_the_tool_runs_with_the_arguments_the_card_showed() -> None:
    seen: list[dict[str, Any]] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def write(path: str, lines: list[str]) -> str:
        """Writes."""
        seen.append({"path": path, "lines": lines})
        return "ok"

    arguments = '{"path": "a\\ud83d\\ude00.txt", "lines": ["x", "\\u00e9"]}'
    session = ChatSession(EventsTransport(call("write", arguments), answer()), tools=[write])
    task = asyncio.create_task(session.send("write"))
    await wait_for(lambda: bool(session.pending_approvals))
    shown = dict(session.pending_approvals[0].parsed_arguments)
    session.approve("c1", "approved")
    await task
    assert seen == [shown]


# --- approve with edited arguments, cancel one call --------------------------------------------------------------


async def test_edited_arguments_are_validated_run_and_told_to_the_model() -> None:
    ran: list[str] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete(path: str, force: bool = False) -> str:
        """Deletes."""
        ran.append(path)
        return f"deleted {path}"

    transport = EventsTransport(call("delete", '{"path": "/home"}'), answer())
    session = ChatSession(transport, tools=[delete])
    task = asyncio.create_task(session.send("clean"))
    await wait_for(lambda: bool(session.pending_approvals))
    with pytest.raises(ApprovalError, match="invalid"):
        session.approve("c1", "approved", arguments={"path": 5})
    with pytest.raises(ApprovalError, match="dict"):
        session.approve("c1", "approved", arguments=["x"])  # type: ignore[arg-type]
    with pytest.raises(ApprovalError, match="rejection"):
        session.approve("c1", "rejected", arguments={"path": "x"})
    assert session.pending_approvals  # nothing changed: still waiting
    session.approve("c1", "approved", arguments={"path": "/home/me/tmp"})
    reply = await task
    part = reply.tool_calls[0]
    assert ran == ["/home/me/tmp"]
    assert part.arguments == '{"path": "/home"}'  # what the model asked stays on record
    assert part.edited_arguments == {"path": "/home/me/tmp"}
    told = transport.requests[1].messages[-1].tool_calls[0].result_for_model()
    assert "changed the arguments" in told
    assert "/home/me/tmp" in told
    assert load_messages(dump_messages(session.messages))[-1].tool_calls[0].edited_arguments == {"path": "/home/me/tmp"}
    assert_settled(session)


async def test_allow_always_with_edited_arguments_is_refused_and_allows_nothing_later() -> None:
    ran: list[str] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete(path: str) -> str:
        """Deletes."""
        ran.append(path)
        return f"deleted {path}"

    transport = EventsTransport(
        call("delete", '{"path": "/home"}'), answer(), call("delete", '{"path": "/etc"}', "c2"), answer()
    )
    session = ChatSession(transport, tools=[delete])
    task = asyncio.create_task(session.send("clean"))
    await wait_for(lambda: bool(session.pending_approvals))
    with pytest.raises(ApprovalError, match=r"allowed once \('approved'\), not always"):
        session.approve("c1", "approved_always", arguments={"path": "/home/me/tmp"})
    assert [p.tool_call_id for p in session.pending_approvals] == ["c1"]  # nothing changed: still waiting
    session.approve("c1", "approved", arguments={"path": "/home/me/tmp"})
    await task
    # The next call of the tool asks again: the person decided on a changed call, not on the tool.
    second = asyncio.create_task(session.send("again"))
    await wait_for(lambda: bool(session.pending_approvals))
    assert session.pending_approvals[0].tool_call_id == "c2"
    assert ran == ["/home/me/tmp"]
    session.approve("c2", "rejected")
    await second
    assert_settled(session)


def test_the_transcript_shows_the_arguments_a_call_ran_with_and_that_they_were_edited() -> None:
    part = ToolCallPart("c1", "write_file", '{"path": "a.txt"}', state=ToolCallState.PENDING)
    part.move(ToolCallState.AWAITING_APPROVAL)
    part.edited_arguments = {"path": "b.txt"}
    part.move(ToolCallState.RUNNING)
    part.move(ToolCallState.COMPLETED, ToolOutcome.success("wrote b.txt"))
    line = conversation_markdown([Message(Role.ASSISTANT, [part])]).splitlines()[-1]
    assert line.startswith('> 🔧 `write_file` {"path": "b.txt"} *(edited by the person before it ran; the model ')
    assert 'asked for {"path": "a.txt"})* — *completed*: wrote b.txt' in line
    # A call nobody edited reads as before.
    plain = ToolCallPart("c2", "write_file", '{"path": "a.txt"}', state=ToolCallState.PENDING)
    assert conversation_markdown([Message(Role.ASSISTANT, [plain])]).endswith(
        '`write_file` {"path": "a.txt"} — *pending*'
    )


async def test_cancel_one_call_while_its_siblings_and_the_turn_go_on() -> None:
    started = threading.Event()
    saw_cancel = threading.Event()

    @tool
    def slow_sync() -> str:
        """Runs long, checking for a cancel."""
        invocation_seen.wait(1)
        return "late"

    invocation_seen = threading.Event()

    @tool
    def watcher(invocation: ToolInvocation) -> str:
        """Waits until cancelled."""
        started.set()
        if invocation.cancelled.wait(5):
            saw_cancel.set()
        return "too late"

    @tool(risk=ToolRisk.DESTRUCTIVE)
    async def risky() -> str:
        """Needs approval."""
        return "ran"

    @tool
    async def quick() -> str:
        """Fast."""
        await asyncio.sleep(0.05)
        return "quick"

    events = [
        ResponseStarted(),
        ToolCallStarted("w", "watcher", "{}"),
        ToolCallStarted("r", "risky", "{}"),
        ToolCallStarted("q", "quick", "{}"),
        ResponseCompleted(FinishReason.TOOL_CALLS),
    ]
    session = ChatSession(EventsTransport(events, answer()), tools=[watcher, risky, quick, slow_sync])
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_approvals) and started.is_set())
    session.cancel("r", "not now")
    session.cancel("w")
    with pytest.raises(CancelError, match="cannot be cancelled"):
        session.cancel("w")  # once
    with pytest.raises(UnknownToolCallError, match="no tool call"):
        session.cancel("nope")
    reply = await task
    states = {p.tool_call_id: p.state for p in reply.tool_calls}
    assert states == {"w": ToolCallState.CANCELLED, "r": ToolCallState.CANCELLED, "q": ToolCallState.COMPLETED}
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "done"
    assert saw_cancel.wait(2)
    watcher_part = reply.tool_call("w")
    assert watcher_part is not None
    assert watcher_part.outcome is not None
    assert "discarded" in (watcher_part.outcome.message or "")
    risky_part = reply.tool_call("r")
    assert risky_part is not None
    assert "not now" in risky_part.result_for_model()
    invocation_seen.set()
    assert_settled(session)


# --- 2. a session is never wedged ------------------------------------------------------------------------------


async def test_stop_before_the_turn_task_ran_leaves_the_session_usable() -> None:
    session = ChatSession(ScriptedTransport(["one", "two"]))
    task = asyncio.create_task(session.send("hi"))
    await asyncio.sleep(0)  # send() has created the turn's task, which has not run yet
    assert session.busy
    assert session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert_settled(session)
    assert (await session.send("again")).text == "one"


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5, 8])
async def test_cancelling_the_task_that_awaits_send_at_any_step(steps: int) -> None:
    @tool(risk=ToolRisk.DESTRUCTIVE)
    async def act() -> str:
        """Acts."""
        return "ok"

    transport = ScriptedTransport(
        [ScriptedReply(text="let me", tool_calls=[ScriptedToolCall(name="act")]), "done", "again"], repeat=True
    )
    session = ChatSession(transport, tools=[act])
    task = asyncio.create_task(session.send("hi"))
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_settled(session)
    if session.messages:  # with no step at all, send() never began: nothing to record
        assert session.messages[-1].status is MessageStatus.CANCELLED
    session.clear()
    session.transport = ScriptedTransport(["fine"])
    assert (await session.send("next")).text == "fine"


class Interrupting:
    """A transport interrupted (SIGINT's KeyboardInterrupt) mid-stream."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield ResponseStarted()
        yield TextDelta("half")
        raise KeyboardInterrupt


def run_interrupted(session: ChatSession) -> BaseException | None:
    """Runs ``send`` on a loop of its own in a thread, as a kernel would: a KeyboardInterrupt escapes the loop
    (asyncio re-raises it out of the task's step) and must not escape this test process's own loop."""
    caught: list[BaseException] = []

    def main() -> None:
        try:
            asyncio.run(session.send("hi"))
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=main)
    thread.start()
    thread.join(10)
    return caught[0] if caught else None


async def test_a_kernel_interrupt_in_the_transport_ends_the_turn() -> None:
    session = ChatSession(Interrupting())
    assert isinstance(await asyncio.to_thread(run_interrupted, session), KeyboardInterrupt)
    assert_settled(session)
    assert session.messages[-1].status is MessageStatus.CANCELLED
    session.transport = ScriptedTransport(["fine"])
    assert (await session.send("again")).text == "fine"


async def test_a_kernel_interrupt_in_an_async_tool_ends_the_turn() -> None:
    @tool
    async def spin() -> str:
        """Is interrupted."""
        raise KeyboardInterrupt

    @tool
    async def sibling() -> str:
        """Runs beside it."""
        await asyncio.sleep(0.2)
        return "never"

    events = [
        ResponseStarted(),
        ToolCallStarted("a", "spin", "{}"),
        ToolCallStarted("b", "sibling", "{}"),
        ResponseCompleted(FinishReason.TOOL_CALLS),
    ]
    session = ChatSession(EventsTransport(events, answer()), tools=[spin, sibling])
    assert isinstance(await asyncio.to_thread(run_interrupted, session), KeyboardInterrupt)
    assert_settled(session)
    reply = session.messages[-1]
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_call("a").state is ToolCallState.CANCELLED  # type: ignore[union-attr]
    session.transport = ScriptedTransport(["fine"])
    assert (await session.send("again")).text == "fine"


# --- 3. nothing poisons the history ------------------------------------------------------------------------------


def _huge_int() -> int:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return int("9" * 5000)
    finally:
        sys.set_int_max_str_digits(limit)


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


@pytest.mark.parametrize(
    ("returned", "ok"),
    [
        ("caf\udce9.txt", True),  # os.listdir on a non-UTF-8 name
        (b"\xff\xfe\x00", True),
        (float("nan"), True),
        ("HUGE", False),
        ("CYCLE", False),
        ("RAISE", False),
        ("CANCEL", False),
    ],
)
async def test_an_odd_tool_value_fails_only_its_own_call(returned: Any, ok: bool) -> None:
    sibling_done = asyncio.Event()

    @tool
    def odd() -> Any:
        """Returns something odd."""
        match returned:
            case "HUGE":
                return _huge_int()
            case "CYCLE":
                return _cyclic()
            case "RAISE":
                raise _Unprintable
            case "CANCEL":
                raise asyncio.CancelledError
        return returned

    @tool
    async def slow() -> str:
        """Still running when odd finishes."""
        await asyncio.sleep(0.1)
        sibling_done.set()
        return "slow result"

    events = [
        ResponseStarted(),
        ToolCallStarted("odd", "odd", "{}"),
        ToolCallStarted("slow", "slow", "{}"),
        ResponseCompleted(FinishReason.TOOL_CALLS),
    ]
    transport = EventsTransport(events, answer("after"), answer("next turn"))
    session = ChatSession(transport, tools=[odd, slow])
    reply = await session.send("go")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "after"
    odd_part, slow_part = reply.tool_calls
    assert odd_part.state is (ToolCallState.COMPLETED if ok else ToolCallState.FAILED)
    assert slow_part.state is ToolCallState.COMPLETED
    assert slow_part.outcome is not None
    assert slow_part.outcome.value == "slow result"
    finished_at = slow_part.finished_at
    assert_settled(session)
    json.dumps(json.loads(dump_messages(session.messages)), allow_nan=False).encode("utf-8")
    assert (await session.send("more")).text == "next turn"
    assert slow_part.finished_at == finished_at  # the record never changes after its turn


async def test_a_surrogate_pair_split_across_text_deltas_is_kept_whole() -> None:
    events = [ResponseStarted(), TextDelta("smile \ud83d"), TextDelta("\ude00 and \ud800"), TextDelta("x")]
    session = ChatSession(EventsTransport([*events, ResponseCompleted(FinishReason.STOP)]))
    reply = await session.send("hi")
    assert reply.text == "smile 😀 and \ufffdx"
    dump_messages(session.messages).encode("utf-8")


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([TextDelta(None)], "TextDelta.text must be text"),  # type: ignore[arg-type]
        ([ToolCallStarted(5, "x", "{}")], "tool_call_id must be text"),  # type: ignore[arg-type]
        ([ToolCallStarted("c", None, "{}")], "tool_name must be text"),  # type: ignore[arg-type]
        ([UsageUpdate("10", 3)], "input_tokens must be a non-negative integer"),  # type: ignore[arg-type]
        ([ResponseCompleted(FinishReason.STOP), TextDelta("more")], "after the response completed"),
        (
            [ResponseCompleted(FinishReason.STOP), ToolCallStarted("c", "act", "{}")],
            "after the response completed",
        ),
        ([ResponseCompleted(FinishReason.STOP), ResponseCompleted(FinishReason.STOP)], "after the response completed"),
        ([ToolCallStarted("c", "act", "{}"), ToolCallStarted("c", "act", "{}")], "used twice"),
        ([ResponseCompleted("finished")], "unknown finish reason"),  # type: ignore[arg-type]
        (["not an event"], "not a stream event"),
    ],
)
async def test_a_transport_that_breaks_the_protocol_ends_the_turn_cleanly(events: list[Any], problem: str) -> None:
    ran: list[str] = []

    @tool
    def act() -> str:
        """Acts."""
        ran.append("ran")
        return "acted"

    session = ChatSession(EventsTransport([ResponseStarted(), *events]), tools=[act])
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "stream protocol" in reply.error
    assert problem in reply.error
    assert ran == []
    assert_settled(session)


# --- 4. deep arguments -----------------------------------------------------------------------------------------


async def test_arguments_two_thousand_levels_deep_are_refused_clearly() -> None:
    @tool
    def take(data: Any) -> str:
        """Takes data."""
        return "took"

    deep = '{"data": ' + "[" * 2000 + "]" * 2000 + "}"
    session = ChatSession(EventsTransport(call("take", deep), answer()), tools=[take])
    reply = await session.send("go")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "deeper than 200 levels" in (part.outcome.message or "")  # type: ignore[union-attr]
    assert_settled(session)


# --- 5. provider-run calls -------------------------------------------------------------------------------------


async def test_a_provider_call_without_its_result_never_runs_locally() -> None:
    ran: list[str] = []

    @tool
    def web_search(query: str) -> str:
        """A local tool with the provider tool's name."""
        ran.append(query)
        return "local"

    events = [
        ResponseStarted(),
        ToolCallStarted("srv_1", "web_search", '{"query": "x"}', provider_executed=True),
        ResponseCompleted(FinishReason.STOP),  # pause_turn: the server paused before its result
    ]
    session = ChatSession(EventsTransport(events, answer()), tools=[web_search])
    reply = await session.send("search")
    assert ran == []
    assert reply.tool_calls[0].state is ToolCallState.SKIPPED
    assert_settled(session)


# --- 6. stuck sync tools ---------------------------------------------------------------------------------------


async def test_sync_tools_that_time_out_do_not_exhaust_the_threads() -> None:
    release = threading.Event()
    told: list[bool] = []

    @tool
    def stuck(invocation: ToolInvocation) -> str:
        """Never returns in time."""
        release.wait(10)
        told.append(invocation.cancelled.is_set())
        return "late"

    @tool
    def fine() -> str:
        """Returns at once."""
        return "fine"

    threads = ToolThreads(max_running=3, max_stuck=20)
    calls = [ToolCallStarted(f"s{i}", "stuck", "{}") for i in range(6)]
    events = [ResponseStarted(), *calls, ResponseCompleted(FinishReason.TOOL_CALLS)]
    session = ChatSession(
        EventsTransport(events, call("fine", "{}", "f1"), answer()),
        tools=[stuck, fine],
        options=SessionOptions(tool_timeout=0.2, tool_executor=threads, max_consecutive_errors=5),
    )
    started = time.monotonic()
    reply = await session.send("go")
    assert time.monotonic() - started < 5
    assert [p.state for p in reply.tool_calls[:6]] == [ToolCallState.FAILED] * 6
    assert reply.tool_calls[6].state is ToolCallState.COMPLETED  # the pool was still usable
    assert "still running" in (reply.tool_calls[0].outcome.error.message or "")  # type: ignore[union-attr]
    assert len(threads.stuck()) >= 3
    release.set()
    await wait_for(lambda: len(told) >= 3 and not threads.stuck(), timeout=5)
    assert all(told)


# --- 7. the smaller defects ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"role": "user"}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [5]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", "parts": '
        '[{"kind": "text", "text": 5}]}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", "parts": '
        '[{"kind": "tool_call", "tool_call_id": "c", "tool_name": "t", "state": "completed"}]}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", '
        '"usage": {"input_tokens": "many"}}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"format": "ai_widgets.conversation", "version": 2, "messages": {}}',
        '{"format": "ai_widgets.conversation", "version": 9, "messages": []}',
        "not json",
    ],
)
def test_a_corrupt_dump_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"conversation|message|field|part|version|must|outcome"):
        load_messages(text)


def test_a_version_1_dump_loads_with_its_provider_data_moved() -> None:
    v1 = {
        "format": "ai_widgets.conversation",
        "version": 1,
        "messages": [
            {
                "id": "m1",
                "role": "assistant",
                "parts": [
                    {"kind": "reasoning", "text": "hmm", "signature": "sig-abc"},
                    {"kind": "reasoning", "text": "", "signature": '[{"id": "rs_1", "encrypted_content": "e"}]'},
                    {"kind": "text", "text": "hello"},
                ],
            }
        ],
    }
    (message,) = load_messages(json.dumps(v1))
    first, second, _ = message.parts
    assert (first.provider, first.provider_data) == ("anthropic", {"signature": "sig-abc"})  # type: ignore[union-attr]
    assert (second.provider, second.provider_data) == (  # type: ignore[union-attr]
        "openai",
        {"items": [{"id": "rs_1", "encrypted_content": "e"}]},
    )
    assert json.loads(dump_messages([message]))["version"] == 2


async def test_a_specific_tool_choice_is_sent_as_registered() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return "sunny"

    transport = EventsTransport(answer())
    session = ChatSession(
        transport, tools=[get_weather], request_options=RequestOptions(tool_choice=ToolChoice.specific("GET_WEATHER"))
    )
    await session.send("hi")
    assert transport.requests[0].options.tool_choice == ToolChoice.specific("get_weather")


async def test_a_call_despite_tool_choice_none_does_not_run() -> None:
    ran: list[str] = []

    @tool
    def act() -> str:
        """Acts."""
        ran.append("x")
        return "acted"

    transport = EventsTransport(call("act", "{}"), answer())
    session = ChatSession(transport, tools=[act], request_options=RequestOptions(tool_choice=ToolChoice.NONE))
    reply = await session.send("hi")
    assert ran == []
    assert transport.requests[0].tools == []
    assert reply.tool_calls[0].state is ToolCallState.FAILED
    assert_settled(session)


async def test_the_too_many_errors_message_has_no_secret() -> None:
    key = "sk-" + "live" + "Q1w2E3r4T5y6U7i8O9p0"

    @tool
    def leaky() -> str:
        """Leaks."""
        raise RuntimeError(f"bad key {key}")

    session = ChatSession(
        ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="leaky")])], repeat=True),
        tools=[leaky],
        options=SessionOptions(max_consecutive_errors=1),
    )
    reply = await session.send("go")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "RuntimeError" in reply.error
    assert key not in reply.error
    assert key not in dump_messages(session.messages)


def test_a_move_the_state_table_does_not_allow_raises() -> None:
    part = ToolCallPart("c", "t", "{}")
    part.move(ToolCallState.PENDING)
    part.move(ToolCallState.AWAITING_APPROVAL)
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.COMPLETED, ToolOutcome.success(1))
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.REJECTED)  # a terminal state needs an outcome
    part.move(ToolCallState.REJECTED, ToolOutcome.failure("no"))
    assert part.finished_at is not None
    assert part.approval_requested_at is not None
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.RUNNING)


async def test_a_second_approval_click_is_refused_and_runs_nothing_twice() -> None:
    ran: list[int] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def act() -> str:
        """Acts."""
        ran.append(1)
        return "ok"

    session = ChatSession(EventsTransport(call("act", "{}"), answer()), tools=[act])
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve("c1", ApprovalDecision.APPROVED)
    with pytest.raises(ApprovalError, match="already decided"):
        session.approve("c1", ApprovalDecision.REJECTED)
    await task
    assert ran == [1]
    with pytest.raises(ApprovalError, match="already decided"):
        session.approve("c1", "approved")
