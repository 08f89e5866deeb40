"""The session loop, with the scripted transport and real tools (DESIGN.md "The loop", "Approval")."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from ai_widgets import (
    ApprovalDecision,
    ApprovalError,
    CancelError,
    ChatSession,
    DefaultApprovalPolicy,
    FinishReason,
    InputRequest,
    InputResponseError,
    Message,
    MessageStatus,
    RequestOptions,
    SessionBusyError,
    SessionOptions,
    ToolCallPart,
    ToolCallState,
    ToolChoice,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
    ToolRegistry,
    ToolRisk,
    UnknownToolCallError,
    tool,
)
from ai_widgets._threads import ToolThreads
from ai_widgets.changes import (
    BusyChanged,
    MessageUpdated,
    PartAdded,
    SessionChange,
    TextAppended,
    ToolCallArgumentsChanged,
    ToolCallUpdated,
)
from ai_widgets.events import (
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import (
    ErrorKind,
    conversation_markdown,
    dump_messages,
    load_messages,
)
from ai_widgets.outcome import CellRun
from ai_widgets.session import NoTransportError, StreamProtocolError
from ai_widgets.transports import (
    ChatRequest,
    ContextTooLongError,
    ProviderError,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
)
from tests.helpers import NeverAsk, wait_for

# --- helpers ------------------------------------------------------------------------------------------------------


def call(name: str, arguments: dict[str, Any] | str | None = None, **kwargs: Any) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments if arguments is not None else {}, **kwargs)


def calls_reply(*calls: ScriptedToolCall, text: str = "") -> ScriptedReply:
    return ScriptedReply(text=text, tool_calls=calls)


def all_calls(messages: list[Message]) -> list[ToolCallPart]:
    return [part for message in messages for part in message.tool_calls]


def assert_every_call_answered(messages: list[Message]) -> None:
    for part in all_calls(messages):
        assert part.state.terminal, part
        assert part.outcome is not None, part


class Recorder:
    """Records every change with a snapshot of what it showed then (the objects themselves are live)."""

    def __init__(self, session: ChatSession) -> None:
        self.changes: list[SessionChange] = []
        self.snapshots: list[tuple[str, Any]] = []
        session.subscribe(self.observe)

    def observe(self, change: SessionChange) -> None:
        self.changes.append(change)
        match change:
            case MessageUpdated(message=message):
                self.snapshots.append(("status", message.status_text))
            case PartAdded(part=ToolCallPart()):
                self.snapshots.append(("card", None))
            case ToolCallArgumentsChanged(part=part, patches=patches):
                self.snapshots.append(("args" if patches else "args-noop", dict(part.parsed_arguments)))
            case ToolCallUpdated(part=part):
                progress = None if part.progress is None else (part.progress.fraction, part.progress.message)
                self.snapshots.append((part.state.value, progress))
            case TextAppended() | PartAdded():
                self.snapshots.append(("text", None))
            case _:
                pass

    def progress(self) -> list[Any]:
        return [detail for kind, detail in self.snapshots if kind == "running" and detail is not None]


weather_runs: list[str] = []


@tool(icon="🌦", title="Weather")
def get_weather(city: str) -> dict[str, Any]:
    """Gets the weather for a city."""
    weather_runs.append(city)
    return {"city": city, "sky": "sunny", "temperature": 21}


def weather_answer(request: ChatRequest) -> str:
    (result,) = request.tool_results()
    assert result.outcome is not None
    value = result.outcome.value
    return f"It is {value['sky']} and {value['temperature']} °C in {value['city']}."


# --- 1. weather ---------------------------------------------------------------------------------------------------


async def test_weather_turn_is_one_busy_message_over_two_requests() -> None:
    weather_runs.clear()
    transport = ScriptedTransport(
        [
            ScriptedReply(status="Looking up the weather…", tool_calls=[call("get_weather", {"city": "Lisbon"})]),
            weather_answer,
        ]
    )
    session = ChatSession(transport, tools=[get_weather])
    recorder = Recorder(session)
    reply = await session.send("What's the weather in Lisbon?")

    assert weather_runs == ["Lisbon"]
    assert len(transport.requests) == 2
    assert reply.text == "It is sunny and 21 °C in Lisbon."
    assert reply.status is MessageStatus.COMPLETED
    assert reply.finish_reason is FinishReason.STOP
    assert [m.role.value for m in session.messages] == ["user", "assistant"]
    # usage is summed over both requests (scripted: 100 input tokens per request)
    assert reply.usage.requests == 2
    assert reply.usage.input_tokens == 200
    assert reply.usage.output_tokens > 0
    # the second request carried the in-progress reply with the result recorded on its call
    second = transport.requests[1]
    assert second.messages[-1] is reply
    (weather_call,) = second.tool_results()
    assert weather_call.outcome is not None
    assert weather_call.outcome.value["sky"] == "sunny"

    # busy from the first request to the last: one BusyChanged(True), one BusyChanged(False) at the very end
    busy = [(i, c.busy) for i, c in enumerate(recorder.changes) if isinstance(c, BusyChanged)]
    assert [b for _, b in busy] == [True, False]
    # observed order: status line, card filling in key by key, running, done, then the answer
    kinds = [
        kind
        for kind, detail in recorder.snapshots
        if kind not in ("status", "args-noop") or detail == "Looking up the weather…"
    ]
    compact = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert compact[:3] == ["status", "card", "args"]
    assert compact.index("args") < compact.index("pending") < compact.index("running")
    assert compact.index("running") < compact.index("completed") < compact.index("text")
    # the card filled in as the JSON streamed: the city grew over several deltas
    views = [detail for kind, detail in recorder.snapshots if kind == "args"]
    assert views[-1] == {"city": "Lisbon"}
    assert len(views) >= 2
    assert all(view.get("city", "") in "Lisbon" for view in views)
    assert reply.tool_calls[0].parsed_arguments == {"city": "Lisbon"}
    assert reply.tool_calls[0].run_started_at is not None
    assert reply.tool_calls[0].finished_at is not None


# --- 2. concurrency -----------------------------------------------------------------------------------------------


@tool
async def slow_async(i: int) -> int:
    """Sleeps 300 ms."""
    await asyncio.sleep(0.3)
    return i


@tool(sequential=True)
async def slow_alone(i: int) -> int:
    """Sleeps 300 ms, alone."""
    await asyncio.sleep(0.3)
    return i


@tool
def slow_sync(i: int) -> int:
    """Sleeps 300 ms in a thread."""
    time.sleep(0.3)
    return i


@pytest.mark.parametrize(
    ("tool_name", "expect_concurrent"), [("slow_async", True), ("slow_sync", True), ("slow_alone", False)]
)
async def test_two_calls_run_concurrently_unless_the_tool_runs_alone(tool_name: str, expect_concurrent: bool) -> None:
    transport = ScriptedTransport([calls_reply(call(tool_name, {"i": 1}), call(tool_name, {"i": 2})), "done"])
    session = ChatSession(transport, tools=[slow_async, slow_alone, slow_sync])
    started = time.perf_counter()
    reply = await session.send("go")
    elapsed = time.perf_counter() - started
    if expect_concurrent:
        assert 0.3 <= elapsed < 0.55, elapsed
    else:
        assert elapsed >= 0.6, elapsed
    # both results went back in one follow-up request
    assert len(transport.requests) == 2
    assert [p.outcome.value for p in transport.requests[1].tool_results() if p.outcome] == [1, 2]
    assert reply.text == "done"


async def test_concurrency_can_be_switched_off() -> None:
    transport = ScriptedTransport([calls_reply(call("slow_async", {"i": 1}), call("slow_async", {"i": 2})), "done"])
    session = ChatSession(transport, tools=[slow_async], options=SessionOptions(concurrent_tools=False))
    started = time.perf_counter()
    await session.send("go")
    assert time.perf_counter() - started >= 0.6


# --- 3. the tool-round limit --------------------------------------------------------------------------------------


async def test_max_iterations_ends_the_turn_with_every_call_answered() -> None:
    runs: list[int] = []

    @tool
    def again(n: int) -> int:
        """Runs again."""
        runs.append(n)
        return n

    counter = iter(range(100))
    transport = ScriptedTransport(lambda request: calls_reply(call("again", {"n": next(counter)})))
    session = ChatSession(transport, tools=[again], options=SessionOptions(max_iterations=3))
    reply = await session.send("loop forever")
    assert runs == [0, 1, 2]
    assert len(transport.requests) == 4
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.error is not None
    assert "max_iterations" in reply.error
    assert reply.error_kind is ErrorKind.MAX_ITERATIONS  # the reply's error offers Continue
    last = reply.tool_calls[-1]
    assert last.state is ToolCallState.SKIPPED
    assert last.outcome is not None
    assert "limit" in last.outcome.model_content()
    assert_every_call_answered(session.messages)
    # Continue: the call the limit left unrun runs first, then the model goes on, and answers this time
    transport._script = lambda request: "All done."
    resumed = await session.resume()
    assert runs == [0, 1, 2, 3]
    assert len(transport.requests) == 5  # one request: the model is not asked to redo the step
    assert resumed.text == "All done."
    assert resumed.status is MessageStatus.COMPLETED
    assert resumed.error_kind is None


async def test_the_limit_message_is_one_sentence_with_the_right_plural() -> None:
    @tool
    def again(n: int = 0) -> int:
        """Runs again."""
        return n

    two = calls_reply(call("again", {"n": 1}, id="a"), call("again", {"n": 2}, id="b"))
    transport = ScriptedTransport(lambda request: two if not request.tool_results() else calls_reply(call("again")))
    session = ChatSession(transport, tools=[again], options=SessionOptions(max_iterations=1))
    reply = await session.send("go")
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.error == (
        "Paused at the limit of 1 round of tool calls per turn (max_iterations); "
        "Continue runs the call the model asked for next."
    )
    skipped = reply.tool_calls[-1]
    assert skipped.state is ToolCallState.SKIPPED
    assert skipped.outcome is not None
    assert skipped.outcome.message == "Not run: this turn reached its limit of 1 round of tool calls."

    pair = lambda request: calls_reply(call("again", {"n": 1}), call("again", {"n": 2}))  # noqa: E731
    session = ChatSession(ScriptedTransport(pair), tools=[again], options=SessionOptions(max_iterations=2))
    reply = await session.send("go")
    assert reply.error == (
        "Paused at the limit of 2 rounds of tool calls per turn (max_iterations); "
        "Continue runs the 2 calls the model asked for next."
    )


async def test_resume_after_the_limit_runs_the_skipped_calls_before_asking_the_model() -> None:
    ran: list[str] = []

    @tool
    def step(name: str) -> str:
        """One step."""
        ran.append(name)
        return f"did {name}"

    def model(request: ChatRequest) -> ScriptedReply | str:
        done = [p for m in request.messages for p in m.tool_calls if p.state is ToolCallState.COMPLETED]
        if not done:
            return calls_reply(call("step", {"name": "first"}, id="c1"))
        if len(done) == 1:
            return calls_reply(call("step", {"name": "second"}, id="c2"), call("step", {"name": "third"}, id="c3"))
        return f"Finished after {', '.join(p.outcome.value for p in done if p.outcome is not None)}."

    transport = ScriptedTransport(model)
    session = ChatSession(transport, tools=[step], options=SessionOptions(max_iterations=1))
    recorder = Recorder(session)
    stopped = await session.send("go")
    assert stopped.status is MessageStatus.LIMIT_REACHED
    assert ran == ["first"]
    assert [p.state for p in stopped.tool_calls] == [ToolCallState.COMPLETED, *[ToolCallState.SKIPPED] * 2]
    requests = len(transport.requests)
    record = [p.to_dict() for p in stopped.tool_calls]

    resumed = await session.resume()
    # The skipped calls ran first, in the new reply, as new calls with the same tool and arguments...
    assert ran == ["first", "second", "third"]
    assert [(p.tool_name, p.parsed_arguments, p.state) for p in resumed.tool_calls] == [
        ("step", {"name": "second"}, ToolCallState.COMPLETED),
        ("step", {"name": "third"}, ToolCallState.COMPLETED),
    ]
    # ... and the model was asked once, afterwards, with their results: it did not redo the step.
    assert len(transport.requests) == requests + 1
    assert resumed.text == "Finished after did first, did second, did third."
    assert resumed.status is MessageStatus.COMPLETED
    # The stopped reply kept its record; every call the provider saw has one result, under a unique id.
    assert [p.to_dict() for p in stopped.tool_calls] == record
    request = transport.requests[-1]
    ids = [p.tool_call_id for m in request.messages for p in m.tool_calls]
    assert len(ids) == len(set(ids)) == 5
    assert all(p.outcome is not None for m in request.messages for p in m.tool_calls)
    assert_every_call_answered(session.messages)
    assert isinstance(recorder.changes[-1], BusyChanged)
    # A second resume has nothing left over: it only asks the model.
    await session.resume()
    assert ran == ["first", "second", "third"]
    assert len(transport.requests) == requests + 2


async def test_resume_after_the_limit_asks_about_a_skipped_call_that_needs_approval() -> None:
    deleted: list[str] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete(path: str) -> str:
        """Deletes."""
        deleted.append(path)
        return "deleted"

    @tool
    def look(path: str) -> str:
        """Looks."""
        return "a file"

    transport = ScriptedTransport(
        [calls_reply(call("look", {"path": "x"})), calls_reply(call("delete", {"path": "x"})), "Deleted it."]
    )
    session = ChatSession(transport, tools=[look, delete], options=SessionOptions(max_iterations=1))
    assert (await session.send("clean up")).status is MessageStatus.LIMIT_REACHED
    resuming = asyncio.ensure_future(session.resume())
    await wait_for(lambda: bool(session.pending_approvals))
    assert deleted == []  # nothing runs before the person decides, after a Continue as before
    (waiting,) = session.pending_approvals
    assert waiting.parsed_arguments == {"path": "x"}
    session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED)
    resumed = await resuming
    assert deleted == ["x"]
    assert resumed.text == "Deleted it."
    assert_every_call_answered(session.messages)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ProviderError("Could not reach the server at http://127.0.0.1:9"), ErrorKind.REQUEST),
        (ConnectionError("refused"), ErrorKind.REQUEST),
        (ContextTooLongError("too long for the model"), ErrorKind.CONTEXT_TOO_LONG),
        (StreamProtocolError("a delta for a call that never started"), ErrorKind.STREAM_PROTOCOL),
    ],
    ids=["provider", "connection", "too-long", "protocol"],
)
async def test_a_failed_request_says_what_kind_of_failure_it_was(error: Exception, kind: ErrorKind) -> None:
    """The reply's error says which kind it is, so the widget offers the action that fits (Retry) and the
    troubleshooting page's entry for it."""
    session = ChatSession(ScriptedTransport([ScriptedReply(error=error)]))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error_kind is kind


async def test_resume_after_other_endings_only_asks_the_model() -> None:
    transport = ScriptedTransport([ScriptedReply(error=RuntimeError("down")), "Back."])
    session = ChatSession(transport)
    assert (await session.send("hi")).status is MessageStatus.ERROR
    resumed = await session.resume()
    assert resumed.tool_calls == []
    assert resumed.text == "Back."


# --- 4. failing and hanging tools ---------------------------------------------------------------------------------


@tool
def explode(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"secret token sk-{x} leaked")


async def test_raising_tool_short_message_for_model_details_for_person() -> None:
    transport = ScriptedTransport([calls_reply(call("explode", {"x": 7})), lambda r: "Sorry, that failed."])
    session = ChatSession(transport, tools=[explode])
    reply = await session.send("explode")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    told = transport.requests[1].tool_results()[0].outcome
    assert told is not None
    assert "sk-7" not in told.model_content()
    assert part.outcome.error is not None
    assert "sk-7" in part.outcome.error.message
    assert part.outcome.error.traceback is not None
    assert "explode" in part.outcome.error.traceback
    assert reply.status is MessageStatus.COMPLETED


async def test_detailed_errors_when_switched_on() -> None:
    transport = ScriptedTransport([calls_reply(call("explode", {"x": 7})), "ok"])
    session = ChatSession(transport, tools=[explode], options=SessionOptions(include_detailed_errors=True))
    await session.send("explode")
    outcome = transport.requests[1].tool_results()[0].outcome
    assert outcome is not None
    assert "RuntimeError: secret token sk-7 leaked" in outcome.model_content()


async def test_consecutive_failures_end_the_turn_showing_the_error() -> None:
    transport = ScriptedTransport(lambda request: calls_reply(call("explode", {"x": 1})))
    session = ChatSession(transport, tools=[explode], options=SessionOptions(max_consecutive_errors=2))
    reply = await session.send("explode repeatedly")
    assert reply.status is MessageStatus.ERROR
    assert len(reply.tool_calls) == 2
    assert reply.error is not None
    assert "2 rounds in a row" in reply.error
    assert reply.error_kind is ErrorKind.TOOL_FAILURES
    assert "RuntimeError: secret token sk-1 leaked" in reply.error  # the person sees it
    assert_every_call_answered(session.messages)


async def test_a_success_resets_the_failure_count() -> None:
    script = [
        calls_reply(call("explode", {"x": 1})),
        calls_reply(call("get_weather", {"city": "Oslo"})),
        calls_reply(call("explode", {"x": 1})),
        "recovered",
    ]
    session = ChatSession(
        ScriptedTransport(script), tools=[explode, get_weather], options=SessionOptions(max_consecutive_errors=2)
    )
    reply = await session.send("mixed")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "recovered"


async def test_hanging_tool_times_out_cleanly() -> None:
    @tool
    async def hang() -> str:
        """Never returns."""
        await asyncio.sleep(3600)
        return "never"

    @tool
    def hang_sync() -> str:
        """Blocks for a while in a thread."""
        time.sleep(1.0)
        return "late"

    transport = ScriptedTransport([calls_reply(call("hang"), call("hang_sync")), "gave up"])
    session = ChatSession(transport, tools=[hang, hang_sync], options=SessionOptions(tool_timeout=0.2))
    started = time.perf_counter()
    reply = await session.send("hang")
    assert time.perf_counter() - started < 0.9
    for part in reply.tool_calls:
        assert part.state is ToolCallState.FAILED
        assert part.outcome is not None
        assert "did not finish within 0.2 seconds" in part.outcome.model_content()
        assert part.outcome.retryable
    assert reply.text == "gave up"


# --- 5. unknown tools ---------------------------------------------------------------------------------------------


async def test_unknown_tool_is_a_failure_the_model_sees() -> None:
    transport = ScriptedTransport([calls_reply(call("get_wether", {"city": "Paris"})), "let me fix that"])
    session = ChatSession(transport, tools=[get_weather])
    reply = await session.send("weather")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert "no tool named 'get_wether'" in part.outcome.model_content()
    assert "get_weather" in part.outcome.model_content()
    assert reply.status is MessageStatus.COMPLETED


async def test_unknown_tool_ends_the_turn_where_configured() -> None:
    weather_runs.clear()
    transport = ScriptedTransport([calls_reply(call("nope"), call("get_weather", {"city": "Rome"})), "unreachable"])
    session = ChatSession(transport, tools=[get_weather], options=SessionOptions(terminate_on_unknown_calls=True))
    reply = await session.send("weather")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "'nope'" in reply.error
    assert weather_runs == []
    assert len(transport.requests) == 1
    assert_every_call_answered(session.messages)


async def test_the_siblings_of_an_unknown_call_that_ended_the_turn_are_skipped_not_cancelled() -> None:
    weather_runs.clear()

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete_everything() -> str:
        """Deletes everything."""
        raise AssertionError("never runs")

    transport = ScriptedTransport(
        [calls_reply(call("get_weather", {"city": "Rome"}), call("nope"), call("delete_everything")), "unreachable"]
    )
    session = ChatSession(
        transport, tools=[get_weather, delete_everything], options=SessionOptions(terminate_on_unknown_calls=True)
    )
    reply = await session.send("weather")
    states = [part.state for part in reply.tool_calls]
    # Nobody cancelled the siblings (one of them waited for a decision): they never ran because the turn ended.
    assert states == [ToolCallState.SKIPPED, ToolCallState.FAILED, ToolCallState.SKIPPED]
    for part in (reply.tool_calls[0], reply.tool_calls[2]):
        assert part.outcome is not None
        assert "unknown tool" in part.outcome.model_content()
    assert weather_runs == []


async def test_tool_name_in_another_case_resolves() -> None:
    weather_runs.clear()
    session = ChatSession(
        ScriptedTransport([calls_reply(call("GET_Weather", {"city": "Bern"})), "ok"]), tools=[get_weather]
    )
    reply = await session.send("weather")
    assert weather_runs == ["Bern"]
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED


# --- 6. bad arguments ---------------------------------------------------------------------------------------------

forecast_runs: list[int] = []


@tool
def forecast(city: str, days: int) -> str:
    """Forecast."""
    forecast_runs.append(days)
    return f"{days} days"


@pytest.mark.parametrize(
    ("arguments", "ran", "fragment"),
    [
        ({"city": "Lisbon", "days": "three"}, [], "days: Input should be a valid integer"),
        ({"city": "Lisbon", "days": "2"}, [2], None),
        ({"city": "Lisbon"}, [], "days: Field required"),
        ({"city": "Lisbon", "days": 2, "extra": True}, [2], None),
        ('{"city": "Lisbon", "days": ', [], "not valid JSON"),
    ],
)
async def test_arguments_are_validated_before_anything_runs(
    arguments: dict[str, Any] | str, ran: list[int], fragment: str | None
) -> None:
    forecast_runs.clear()
    transport = ScriptedTransport([calls_reply(call("forecast", arguments)), "ok"])
    session = ChatSession(transport, tools=[forecast])
    reply = await session.send("forecast")
    assert forecast_runs == ran
    part = reply.tool_calls[0]
    assert part.outcome is not None
    if fragment is None:
        assert part.state is ToolCallState.COMPLETED
    else:
        assert part.state is ToolCallState.FAILED
        assert fragment in part.outcome.model_content()
        assert part.outcome.retryable


# --- 7. approval --------------------------------------------------------------------------------------------------

deleted: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE, title="Delete file")
def delete_file(path: str) -> str:
    """Deletes a file."""
    deleted.append(path)
    return f"deleted {path}"


@tool(risk=ToolRisk.READ_ONLY)
def read_file(path: str) -> str:
    """Reads a file."""
    return "contents"


def declined_or_done(request: ChatRequest) -> str:
    part = request.tool_results()[-1]
    if part.state is ToolCallState.REJECTED:
        assert part.outcome is not None
        return f"I did not delete it. ({part.outcome.model_content()})"
    return "Deleted."


async def start(session: ChatSession, text: str) -> asyncio.Task[Message]:
    task = asyncio.create_task(session.send(text))
    await wait_for(lambda: bool(session.pending_approvals) or task.done())
    return task


async def test_destructive_call_waits_and_the_turn_is_paused() -> None:
    deleted.clear()
    transport = ScriptedTransport([calls_reply(call("delete_file", {"path": "/tmp/a"})), declined_or_done])
    session = ChatSession(transport, tools=[delete_file])
    task = await start(session, "delete /tmp/a")
    (waiting,) = session.pending_approvals
    assert waiting.state is ToolCallState.AWAITING_APPROVAL
    assert waiting.approval_reason == "Allow Delete file?"
    await asyncio.sleep(0.1)
    assert deleted == []
    assert len(transport.requests) == 1  # the model has not been asked again
    assert session.busy
    session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED)
    reply = await task
    assert deleted == ["/tmp/a"]
    assert reply.text == "Deleted."
    assert waiting.decision == "approved"
    assert waiting.state is ToolCallState.COMPLETED


async def test_approved_always_is_remembered_for_this_session_only() -> None:
    deleted.clear()
    script = [
        calls_reply(call("delete_file", {"path": "a"})),
        "Deleted.",
        calls_reply(call("delete_file", {"path": "b"})),
        "Deleted.",
    ]
    session = ChatSession(ScriptedTransport(script), tools=[delete_file])
    task = await start(session, "delete a")
    session.approve(session.pending_approvals[0].tool_call_id, "approved_always")
    await task
    first = session.messages[1].tool_calls[0]
    assert (first.decision, first.decision_remembered) == ("approved_always", False)  # the person clicked
    reply = await session.send("delete b")  # runs without a prompt
    assert deleted == ["a", "b"]
    # ... and the call says why: the "allow always" chosen before, remembered (never asked, so no wait)
    second = reply.tool_calls[0]
    assert (second.decision, second.decision_remembered) == ("approved_always", True)
    assert second.approval_requested_at is None
    assert second.to_dict()["decision_remembered"] is True
    assert ToolCallPart.from_dict(second.to_dict()).decision_remembered
    assert isinstance(session.approval_policy, DefaultApprovalPolicy)
    assert session.approval_policy.allowed_always == frozenset({"delete_file"})

    other = ChatSession(
        ScriptedTransport([calls_reply(call("delete_file", {"path": "c"})), "Deleted."]), tools=[delete_file]
    )
    task = await start(other, "delete c")
    assert other.pending_approvals, "a second session must ask again"
    other.stop()
    await task
    assert deleted == ["a", "b"]


async def test_revoking_allow_always_asks_again() -> None:
    policy = DefaultApprovalPolicy()
    script = [
        calls_reply(call("delete_file", {"path": "a"})),
        "ok",
        calls_reply(call("delete_file", {"path": "b"})),
        "ok",
    ]
    session = ChatSession(ScriptedTransport(script), tools=[delete_file], approval_policy=policy)
    task = await start(session, "a")
    session.approve(session.pending_approvals[0].tool_call_id, "approved_always")
    await task
    assert policy.revoke("DELETE_FILE")
    task = await start(session, "b")
    assert session.pending_approvals
    session.approve(session.pending_approvals[0].tool_call_id, "rejected")
    await task


async def test_rejected_with_reason_tells_the_model() -> None:
    deleted.clear()
    transport = ScriptedTransport([calls_reply(call("delete_file", {"path": "/etc"})), declined_or_done])
    session = ChatSession(transport, tools=[delete_file])
    task = await start(session, "delete /etc")
    part = session.pending_approvals[0]
    session.approve(part.tool_call_id, ApprovalDecision.REJECTED, reason="that is the system folder")
    reply = await task
    assert deleted == []
    assert part.state is ToolCallState.REJECTED
    assert part.decision == "rejected"
    assert part.decision_reason == "that is the system folder"
    assert "declined" in reply.text
    assert "that is the system folder" in reply.text
    assert part.outcome is not None
    assert not part.outcome.retryable


async def test_transport_requested_approval_waits_even_for_read_only_and_after_always() -> None:
    script = [
        calls_reply(call("delete_file", {"path": "a"})),
        "ok",
        calls_reply(call("read_file", {"path": "x"}, approval_reason="This file holds credentials. Read it?")),
        "ok",
        calls_reply(call("delete_file", {"path": "b"}, approval_reason="Really?")),
        "ok",
    ]
    deleted.clear()
    session = ChatSession(ScriptedTransport(script), tools=[delete_file, read_file])
    task = await start(session, "a")
    session.approve(session.pending_approvals[0].tool_call_id, "approved_always")
    await task

    task = await start(session, "read")
    (part,) = session.pending_approvals
    assert part.tool_name == "read_file"
    assert part.approval_reason == "This file holds credentials. Read it?"
    assert part.approval_requested_by_transport
    session.approve(part.tool_call_id, "approved")
    await task

    task = await start(session, "b")
    (part,) = session.pending_approvals
    assert part.tool_name == "delete_file"  # allowed always, but the transport asked
    session.approve(part.tool_call_id, "approved")
    await task
    assert deleted == ["a", "b"]
    assert (part.decision, part.decision_remembered) == ("approved", False)
    read = session.messages[3].tool_calls[0]  # the transport asked: decided by the person, not remembered
    assert (read.decision, read.decision_remembered) == ("approved", False)


async def test_approve_respond_and_cancel_refuse_an_unknown_call_alike() -> None:
    """A decision about a call this conversation does not have is one error, whichever decision it is; a cancel of
    a call that has ended is a cancel's own refusal, not an approval's."""
    deleted.clear()
    session = ChatSession(
        ScriptedTransport([calls_reply(call("delete_file", {"path": "x"})), "ok"]), tools=[delete_file]
    )
    for decide in (
        lambda: session.approve("ghost", "approved"),
        lambda: session.respond("ghost", "accept", {}),
        lambda: session.cancel("ghost"),
        lambda: session.cancel(5),  # type: ignore[arg-type]
    ):
        with pytest.raises(UnknownToolCallError, match=r"no tool call 'ghost'|a tool call id is text, not int"):
            decide()
    task = await start(session, "delete")
    part = session.pending_approvals[0]
    session.approve(part.tool_call_id, "approved")
    await task
    with pytest.raises(CancelError, match=r"cannot be cancelled: it is completed") as refused:
        session.cancel(part.tool_call_id)
    assert not isinstance(refused.value, ApprovalError)
    assert issubclass(UnknownToolCallError, LookupError)
    assert not issubclass(UnknownToolCallError, ApprovalError)


@tool
async def book_table(invocation: ToolInvocation) -> str:
    """Books a table, asking the person for the day."""
    form = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
    answer = await invocation.ask_person(InputRequest("Which day?", schema=form))
    return f"{answer.action} {None if answer.content is None else answer.content.get('date')}"


async def test_respond_is_sync_and_answers_from_another_thread() -> None:
    """Like approve and cancel: it acts when called, from any thread (a comm's, a cell's), and refuses at once."""
    session = ChatSession(ScriptedTransport([calls_reply(call("book_table")), "Booked."]), tools=[book_table])
    task = asyncio.create_task(session.send("book a table"))
    await wait_for(lambda: bool(session.pending_inputs))
    [part] = session.pending_inputs
    returned: list[object] = []
    thread = threading.Thread(
        target=lambda: returned.append(session.respond(part.tool_call_id, "accept", {"date": "Fri"}))
    )
    thread.start()
    thread.join()
    assert returned == [None]
    reply = await task
    outcome = reply.tool_calls[0].outcome
    assert outcome is not None
    assert outcome.value == "accept Fri"
    with pytest.raises(InputResponseError, match="not waiting for input"):
        session.respond(part.tool_call_id, "accept", {"date": "Sat"})
    assert not hasattr(session, "respond_now")  # one name


async def test_stop_while_waiting_cancels_and_nothing_runs() -> None:
    deleted.clear()
    transport = ScriptedTransport([calls_reply(call("delete_file", {"path": "x"})), "ok", "next turn works"])
    session = ChatSession(transport, tools=[delete_file])
    task = await start(session, "delete x")
    part = session.pending_approvals[0]
    assert session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert part.state is ToolCallState.CANCELLED
    assert deleted == []
    with pytest.raises(ApprovalError, match="not waiting"):
        session.approve(part.tool_call_id, "approved")
    assert deleted == []
    assert_every_call_answered(session.messages)
    assert not session.busy
    transport._script = ["next turn works"]
    transport._position = 0
    assert (await session.send("again")).text == "next turn works"


async def test_bad_approvals_are_refused_and_nothing_runs_twice() -> None:
    deleted.clear()
    session = ChatSession(
        ScriptedTransport([calls_reply(call("delete_file", {"path": "x"})), "ok"]), tools=[delete_file]
    )
    with pytest.raises(UnknownToolCallError, match="no tool call 'ghost'"):
        session.approve("ghost", "approved")
    task = await start(session, "delete")
    part = session.pending_approvals[0]
    with pytest.raises(ApprovalError, match="unknown decision 'yes'"):
        session.approve(part.tool_call_id, "yes")
    session.approve(part.tool_call_id, "approved")
    with pytest.raises(ApprovalError, match="already decided"):
        session.approve(part.tool_call_id, "approved")
    await task
    with pytest.raises(ApprovalError, match="already decided: approved"):
        session.approve(part.tool_call_id, "rejected")
    assert deleted == ["x"]


async def test_approval_from_another_thread() -> None:
    deleted.clear()
    session = ChatSession(
        ScriptedTransport([calls_reply(call("delete_file", {"path": "t"})), "ok"]), tools=[delete_file]
    )
    task = await start(session, "delete")
    part_id = session.pending_approvals[0].tool_call_id
    thread = threading.Thread(target=session.approve, args=(part_id, "approved"))
    thread.start()
    thread.join()
    reply = await asyncio.wait_for(task, 2)
    assert reply.status is MessageStatus.COMPLETED
    assert deleted == ["t"]


async def test_custom_policy_decides_on_the_arguments() -> None:
    paid: list[int] = []

    @tool
    def pay(amount: int) -> str:
        """Pays."""
        paid.append(amount)
        return "paid"

    class AmountPolicy(DefaultApprovalPolicy):
        async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool | str:
            amount = invocation.get_arguments(dict)["amount"]
            if definition.name == "pay" and amount > 1000:
                return f"Pay {amount}? That is over 1000."
            return await super().requires_approval(definition, invocation)

    script = [calls_reply(call("pay", {"amount": 10})), "ok", calls_reply(call("pay", {"amount": 5000})), "ok"]
    session = ChatSession(ScriptedTransport(script), tools=[pay], approval_policy=AmountPolicy())
    await session.send("pay 10")
    assert paid == [10]
    task = await start(session, "pay 5000")
    (part,) = session.pending_approvals
    assert part.approval_reason == "Pay 5000? That is over 1000."
    session.approve(part.tool_call_id, "rejected")
    await task
    assert paid == [10]


# --- 8. progress, provider-run tools, execute_tools=False ---------------------------------------------------------


async def test_local_tool_progress_is_observed() -> None:
    @tool
    async def crunch(call: ToolInvocation) -> str:
        """Crunches."""
        for fraction, message in [(0.25, "reading"), (0.5, "thinking"), (1.0, "writing")]:
            call.progress.report(fraction, message)
            await asyncio.sleep(0)
        return "crunched"

    session = ChatSession(ScriptedTransport([calls_reply(call("crunch")), "ok"]), tools=[crunch])
    recorder = Recorder(session)
    await session.send("crunch")
    assert recorder.progress() == [(0.25, "reading"), (0.5, "thinking"), (1.0, "writing")]


async def test_provider_run_tool_is_never_run_locally() -> None:
    searched: list[str] = []

    @tool
    def web_search(query: str) -> str:
        """Searches."""
        searched.append(query)
        return "local"

    provider_call = call(
        "web_search",
        {"query": "jupyter"},
        provider_result=ToolOutcome.success({"hits": 3}, citations=["https://jupyter.org"]),
        progress=[(None, "searching"), (0.5, "reading results")],
    )
    transport = ScriptedTransport(
        [ScriptedReply(text="Searching. ", tool_calls=[provider_call], finish_reason=FinishReason.STOP)]
    )
    session = ChatSession(transport, tools=[web_search])
    recorder = Recorder(session)
    reply = await session.send("search")
    assert searched == []
    part = reply.tool_calls[0]
    assert part.provider_executed
    assert part.state is ToolCallState.COMPLETED
    assert part.outcome is not None
    assert part.outcome.value == {"hits": 3}
    assert recorder.progress() == [(None, "searching"), (0.5, "reading results")]
    assert len(transport.requests) == 1


async def test_local_and_provider_tools_mix_in_one_reply() -> None:
    weather_runs.clear()
    provider_call = call("web_search", {"q": "x"}, provider_result="provider data")
    transport = ScriptedTransport([calls_reply(provider_call, call("get_weather", {"city": "Nice"})), "both"])
    session = ChatSession(transport, tools=[get_weather])
    reply = await session.send("mix")
    assert weather_runs == ["Nice"]
    assert [p.state for p in reply.tool_calls] == [ToolCallState.COMPLETED, ToolCallState.COMPLETED]
    assert reply.text == "both"


async def test_execute_tools_false_runs_nothing_locally() -> None:
    weather_runs.clear()
    transport = ScriptedTransport([calls_reply(call("get_weather", {"city": "Oslo"})), "next"])
    session = ChatSession(transport, tools=[get_weather], options=SessionOptions(execute_tools=False))
    reply = await session.send("weather")
    assert weather_runs == []
    assert reply.tool_calls[0].state is ToolCallState.PENDING
    assert reply.status is MessageStatus.COMPLETED
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    # the next request never carries a call without a result
    await session.send("go on")
    assert_every_call_answered(transport.requests[1].messages)


# --- 9. failures of the stream ------------------------------------------------------------------------------------


async def test_transport_raising_mid_reply_ends_in_error_and_the_next_turn_works() -> None:
    script = [
        ScriptedReply(
            text="Let me check",
            tool_calls=[call("get_weather", {"city": "Oslo"})],
            error=ConnectionError("reset by peer"),
            error_after=6,
        ),
        "fine now",
    ]
    transport = ScriptedTransport(script)
    session = ChatSession(transport, tools=[get_weather])
    reply = await session.send("weather")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "ConnectionError: reset by peer" in reply.error
    assert reply.text.startswith("Let")
    assert_every_call_answered(session.messages)
    assert not session.busy
    assert (await session.send("again")).text == "fine now"
    assert_every_call_answered(transport.requests[-1].messages)


async def test_stream_ending_without_completion_is_an_error() -> None:
    transport = ScriptedTransport(
        [calls_reply(call("get_weather", {"city": "Oslo"})).__class__(text="partial", truncate=True), "ok"]
    )
    session = ChatSession(transport, tools=[get_weather])
    reply = await session.send("x")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."
    assert (await session.send("y")).status is MessageStatus.COMPLETED


async def test_broken_transport_events_are_clear_errors() -> None:
    class Broken:
        async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
            yield ResponseStarted()
            yield ToolCallDelta("never_started", "{}")

    session = ChatSession(Broken())
    reply = await session.send("x")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "never started" in reply.error


async def test_model_reported_error_finish() -> None:
    session = ChatSession(ScriptedTransport([ScriptedReply(text="hm", finish_reason=FinishReason.ERROR)]))
    reply = await session.send("x")
    assert reply.status is MessageStatus.ERROR


def test_transport_must_have_stream() -> None:
    with pytest.raises(TypeError, match="stream"):
        ChatSession(object())  # type: ignore[arg-type]


# --- 10. stop -----------------------------------------------------------------------------------------------------


class SlowText:
    """Streams text forever until cancelled; records whether its stream was closed."""

    def __init__(self) -> None:
        self.closed = False

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        try:
            yield ResponseStarted()
            while True:
                yield TextDelta("word ")
                await asyncio.sleep(0.01)
        finally:
            self.closed = True


async def test_stop_mid_stream() -> None:
    transport = SlowText()
    session = ChatSession(transport)
    task = asyncio.create_task(session.send("talk"))
    await wait_for(lambda: bool(session.messages) and "word word" in session.messages[-1].text)
    assert session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert transport.closed
    assert reply.text.startswith("word word")
    assert not session.busy
    assert not session.stop()  # stop when idle is harmless


async def test_stop_mid_tool_cancels_async_and_discards_late_sync_results() -> None:
    finished: list[str] = []

    @tool
    async def long_async() -> str:
        """Long."""
        await asyncio.sleep(5)
        finished.append("async")
        return "late"

    @tool
    def long_sync() -> str:
        """Long, in a thread."""
        time.sleep(0.3)
        finished.append("sync")
        return "late"

    transport = ScriptedTransport([calls_reply(call("long_async"), call("long_sync")), "after stop"])
    session = ChatSession(transport, tools=[long_async, long_sync])
    task = asyncio.create_task(session.send("run"))
    await wait_for(
        lambda: (
            len(session.messages) == 2
            and all(p.state is ToolCallState.RUNNING for p in session.messages[-1].tool_calls)
            and len(session.messages[-1].tool_calls) == 2
        )
    )
    session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state for p in reply.tool_calls] == [ToolCallState.CANCELLED, ToolCallState.CANCELLED]
    await asyncio.sleep(0.4)  # the sync tool's thread finishes; its result is discarded
    assert finished == ["sync"]
    assert [p.state for p in reply.tool_calls] == [ToolCallState.CANCELLED, ToolCallState.CANCELLED]
    assert len(transport.requests) == 1
    assert (await session.send("again")).text == "after stop"
    assert_every_call_answered(transport.requests[-1].messages)


async def test_cancelling_the_caller_stops_the_turn() -> None:
    session = ChatSession(SlowText())
    task = asyncio.create_task(session.send("talk"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not session.busy
    assert session.messages[-1].status is MessageStatus.CANCELLED


async def test_one_turn_at_a_time() -> None:
    session = ChatSession(SlowText())
    task = asyncio.create_task(session.send("talk"))
    await asyncio.sleep(0.02)
    with pytest.raises(SessionBusyError):
        await session.send("interleave", steer=False)
    with pytest.raises(SessionBusyError):
        session.clear()
    session.stop()
    await task
    assert [m.role.value for m in session.messages] == ["user", "assistant"]


async def test_empty_message_is_refused() -> None:
    session = ChatSession(ScriptedTransport(["x"]))
    with pytest.raises(ValueError, match="non-empty"):
        await session.send("   ")
    assert session.messages == []


# --- 11. registry changes between requests ------------------------------------------------------------------------


async def test_registry_changes_are_seen_on_the_next_request() -> None:
    registry = ToolRegistry()

    @registry.tool
    def version() -> str:
        """Version."""
        return "v1"

    def answer(request: ChatRequest) -> ScriptedReply | str:
        return (
            calls_reply(call("version")) if not request.tool_results() else str(request.tool_results()[0].outcome.value)
        )  # type: ignore[union-attr]

    transport = ScriptedTransport(answer)
    session = ChatSession(transport, tools=registry)
    assert (await session.send("which?")).text == "v1"

    @registry.tool(name="version")
    def version_two() -> str:
        """Version, rewritten."""
        return "v2"

    assert (await session.send("which now?")).text == "v2"
    assert [d.description for d in transport.requests[-1].tools] == ["Version, rewritten."]
    registry.unregister("version")
    reply = await session.send("and now?")
    assert reply.tool_calls[0].state is ToolCallState.FAILED
    assert transport.requests[-1].tools == []


async def test_tool_choice_none_sends_no_tools_and_forced_choice_applies_once() -> None:
    transport = ScriptedTransport(["plain"])
    session = ChatSession(transport, tools=[get_weather], request_options=RequestOptions(tool_choice=ToolChoice.NONE))
    await session.send("x")
    assert transport.requests[0].tools == []

    transport = ScriptedTransport([calls_reply(call("get_weather", {"city": "Oslo"})), "answer"])
    session = ChatSession(
        transport, tools=[get_weather], request_options=RequestOptions(tool_choice=ToolChoice.specific("get_weather"))
    )
    await session.send("x")
    assert transport.requests[0].options.tool_choice == ToolChoice.specific("get_weather")
    assert transport.requests[1].options.tool_choice == ToolChoice.AUTO
    session.request_options = RequestOptions(tool_choice=ToolChoice.specific("missing"))
    with pytest.raises(ValueError, match="'missing', which is not registered"):
        await session.send("y")


# --- 12. what a tool sees and returns -----------------------------------------------------------------------------


async def test_tool_reads_its_invocation_and_returns_rich_outcomes() -> None:
    seen: dict[str, Any] = {}

    class Report(BaseModel):
        title: str
        pages: int

    @tool
    def research(topic: str, invocation: ToolInvocation) -> ToolOutcome:
        """Researches."""
        seen.update(
            call_id=invocation.tool_call_id,
            conversation=invocation.conversation_id,
            message=invocation.message_id,
            context=invocation.context,
        )
        return ToolOutcome.success(
            text=f"Found **2** sources on {topic}", citations=["https://a.example", "https://b.example"]
        )

    @tool
    def report() -> Report:
        """Reports."""
        return Report(title="T", pages=3)

    transport = ScriptedTransport([calls_reply(call("research", {"topic": "owls"}, id="call_r"), call("report")), "ok"])
    session = ChatSession(transport, tools=[research, report], context={"user": "ada"}, conversation_id="conv_1")
    reply = await session.send("research owls")
    assert seen == {"call_id": "call_r", "conversation": "conv_1", "message": reply.id, "context": {"user": "ada"}}
    research_part, report_part = reply.tool_calls
    assert research_part.outcome is not None
    assert research_part.outcome.model_content() == "Found **2** sources on owls"
    assert [c.url for c in research_part.outcome.citations] == ["https://a.example", "https://b.example"]
    assert report_part.outcome is not None
    assert report_part.outcome.model_content() == '{"title":"T","pages":3}'


async def test_a_failing_observer_does_not_break_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    session = ChatSession(ScriptedTransport(["hello"]))

    def broken(change: SessionChange) -> None:
        raise RuntimeError("observer bug")

    session.subscribe(broken)
    reply = await session.send("hi")
    assert reply.text == "hello"
    assert "observer failed" in caplog.text


async def test_non_streaming_call_with_complete_arguments() -> None:
    class Whole:
        async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
            yield ResponseStarted()
            if request.tool_results():
                yield TextDelta("done")
                yield ResponseCompleted(FinishReason.STOP)
                return
            yield ToolCallStarted("c1", "get_weather", '{"city": "Kyiv"}')
            yield ResponseCompleted(FinishReason.TOOL_CALLS)

    weather_runs.clear()
    reply = await ChatSession(Whole(), tools=[get_weather]).send("x")
    assert weather_runs == ["Kyiv"]
    assert reply.text == "done"


async def test_a_call_cancelled_before_its_task_first_ran_is_recorded_and_never_runs_later() -> None:
    """A sequential call whose task is cancelled in the moment between its creation and its first step: its own
    code never runs, so the round records the cancel (found by the property test: the call stayed pending, and
    ran in the next round)."""
    ran: list[str] = []

    @tool
    async def first() -> str:
        """First."""
        await asyncio.sleep(0.01)
        return "1"

    @tool
    async def second() -> str:
        """Second."""
        ran.append("second")
        return "2"

    transport = ScriptedTransport([calls_reply(call("first", id="a"), call("second", id="b")), "ok"])
    session = ChatSession(transport, tools=[first, second], options=SessionOptions(concurrent_tools=False))

    async def person() -> None:
        while True:  # polls every loop iteration; cancels as soon as the task exists, before it has run
            tool_round = None if session._turn is None else session._turn.round
            found = None if tool_round is None else tool_round._calls.get("b")
            if found is not None and found.task is not None and not found.task.done():
                assert found.part.state is ToolCallState.PENDING
                session.cancel("b", "changed my mind")
                return
            await asyncio.sleep(0)

    clicking = asyncio.create_task(person())
    reply = await session.send("go")
    await clicking
    assert [(p.tool_call_id, p.state) for p in reply.tool_calls] == [
        ("a", ToolCallState.COMPLETED),
        ("b", ToolCallState.CANCELLED),
    ]
    assert reply.tool_calls[1].outcome is not None
    assert reply.tool_calls[1].outcome.message == "Cancelled by the person: changed my mind"
    assert ran == []
    assert reply.status is MessageStatus.COMPLETED
    assert len(transport.requests) == 2


async def test_a_session_without_a_transport_runs_a_persons_calls_and_refuses_to_ask_a_model() -> None:
    @tool
    def double(n: int) -> int:
        """Doubles a number."""
        return n * 2

    session = ChatSession(tools=[double])
    reply = await session.run_call("double", {"n": 21})
    assert reply.status is MessageStatus.COMPLETED
    [call] = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert call.outcome is not None
    assert call.outcome.value == 42
    with pytest.raises(NoTransportError, match="no transport"):
        session._check_can_send()
    with pytest.raises(NoTransportError, match="no transport"):
        await session.send("hi")
    with pytest.raises(NoTransportError):
        await session.resume()
    assert session.messages == [reply]  # nothing was added by the refusals
    assert not session.busy


# --- a transport's raw events: what no input, fault or race may break (DESIGN.md, "Integrity") ------------------------


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


def call_events(name: str, arguments: str, call_id: str = "c1") -> list[Any]:
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


# --- what is approved is what runs ------------------------------------------------------------------------------------


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

    session = ChatSession(EventsTransport(call_events("delete", arguments), answer()), tools=[delete])
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
    session = ChatSession(EventsTransport(call_events("write", arguments), answer()), tools=[write])
    task = asyncio.create_task(session.send("write"))
    await wait_for(lambda: bool(session.pending_approvals))
    shown = dict(session.pending_approvals[0].parsed_arguments)
    session.approve("c1", "approved")
    await task
    assert seen == [shown]


# --- approve with edited arguments, cancel one call -------------------------------------------------------------------


async def test_edited_arguments_are_validated_run_and_told_to_the_model() -> None:
    ran: list[str] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete(path: str, force: bool = False) -> str:
        """Deletes."""
        ran.append(path)
        return f"deleted {path}"

    transport = EventsTransport(call_events("delete", '{"path": "/home"}'), answer())
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
        call_events("delete", '{"path": "/home"}'), answer(), call_events("delete", '{"path": "/etc"}', "c2"), answer()
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


# --- a session is never wedged ----------------------------------------------------------------------------------------


@tool
async def counts_steps(invocation: ToolInvocation) -> str:
    """Counts steps until stopped, then says where it stopped (as KernelTools' run_python does)."""
    step = 0
    try:
        while True:
            step += 1
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        cell = CellRun(code="count()", stopped_at=f"step {step}")
        invocation.stopped_outcome = ToolOutcome.failure(f"Stopped at step {step}.", cell=cell)
        raise


@tool
async def gives_up(invocation: ToolInvocation) -> str:
    """Stops itself after a while (a timeout of its own), saying so."""
    await asyncio.sleep(0.05)
    invocation.stopped_outcome = ToolOutcome.failure("Ran out of its own time at step 5.")
    raise asyncio.CancelledError


@tool
def says_if_edited(invocation: ToolInvocation, text: str) -> str:
    """Echoes the text, and whether the person edited it."""
    return f"{text} edited={invocation.edited}"


async def test_a_stopped_tools_own_account_reaches_the_model_and_the_card() -> None:
    session = ChatSession(
        ScriptedTransport([calls_reply(call("counts_steps")), "ok"]), tools=[counts_steps], approval_policy=NeverAsk()
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    await asyncio.sleep(0.05)
    [part] = [p for m in session.messages for p in m.tool_calls]
    session.cancel(part.tool_call_id)
    await task
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is not None
    assert part.outcome.message is not None
    assert part.outcome.message.startswith("Cancelled by the person. Stopped at step ")
    assert part.outcome.cell is not None
    assert part.outcome.cell.stopped_at is not None
    assert part.outcome.cell.stopped_at.startswith("step ")


async def test_a_tool_that_stops_itself_with_an_account_ends_cancelled() -> None:
    session = ChatSession(
        ScriptedTransport([calls_reply(call("gives_up")), "ok"]), tools=[gives_up], approval_policy=NeverAsk()
    )
    reply = await session.send("go")
    [part] = [p for m in session.messages for p in m.tool_calls]
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is not None
    assert part.outcome.message == "Ran out of its own time at step 5."


async def test_the_handler_knows_the_person_edited_the_arguments() -> None:
    said = tool(risk=ToolRisk.DESTRUCTIVE)(says_if_edited.handler)
    session = ChatSession(
        ScriptedTransport(
            [calls_reply(call("says_if_edited", {"text": "a"}), call("says_if_edited", {"text": "b"})), "ok"]
        ),
        tools=[said],
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: len(session.pending_approvals) == 2)
    first, second = session.pending_approvals
    session.approve(first.tool_call_id, "approved", arguments={"text": "A"})
    session.approve(second.tool_call_id, "approved")
    await task
    assert first.outcome is not None
    assert second.outcome is not None
    assert (first.outcome.value, second.outcome.value) == ("A edited=True", "b edited=False")


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


# --- nothing poisons the history --------------------------------------------------------------------------------------


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


# --- deep arguments, provider-run calls, stuck sync tools -------------------------------------------------------------


async def test_arguments_two_thousand_levels_deep_are_refused_clearly() -> None:
    @tool
    def take(data: Any) -> str:
        """Takes data."""
        return "took"

    deep = '{"data": ' + "[" * 2000 + "]" * 2000 + "}"
    session = ChatSession(EventsTransport(call_events("take", deep), answer()), tools=[take])
    reply = await session.send("go")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "deeper than 200 levels" in (part.outcome.message or "")  # type: ignore[union-attr]
    assert_settled(session)


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
        EventsTransport(events, call_events("fine", "{}", "f1"), answer()),
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


# --- tool choice, errors, a second click ------------------------------------------------------------------------------


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

    transport = EventsTransport(call_events("act", "{}"), answer())
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


async def test_a_second_approval_click_is_refused_and_runs_nothing_twice() -> None:
    ran: list[int] = []

    @tool(risk=ToolRisk.DESTRUCTIVE)
    def act() -> str:
        """Acts."""
        ran.append(1)
        return "ok"

    session = ChatSession(EventsTransport(call_events("act", "{}"), answer()), tools=[act])
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve("c1", ApprovalDecision.APPROVED)
    with pytest.raises(ApprovalError, match="already decided"):
        session.approve("c1", ApprovalDecision.REJECTED)
    await task
    assert ran == [1]
    with pytest.raises(ApprovalError, match="already decided"):
        session.approve("c1", "approved")
