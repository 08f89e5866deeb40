"""A provider whose own run goes on across the session's rounds (an ACP agent mid-prompt that asks the person, or asks
the client to do something), and what such an agent tells beyond text and calls: its calls stay open across rounds
(``ResponseCompleted(continues=True)``), are described as they go (``ToolCallRevised``), its plan shows in place
(``PlanUpdated``), its own cost prices the request (``UsageUpdate.cost``), its state is kept in the history
(``ProviderState``), and it hears when the turn ends (``TurnAware.turn_ended``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from decimal import Decimal

import pytest

from ai_widgets import ChatSession, FinishReason, MessageStatus, ToolCallState
from ai_widgets.changes import PartAdded, PartChanged, SessionChange
from ai_widgets.events import (
    PlanUpdated,
    ProviderState,
    ProviderToolResult,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolApprovalRequested,
    ToolCallRevised,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import (
    CallDiff,
    CallLocation,
    CallTerminal,
    CallText,
    Message,
    PlanEntry,
    PlanPart,
    ToolCallView,
    conversation_markdown,
    dump_messages,
    load_messages,
)
from ai_widgets.options import SessionOptions
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session import _turn
from ai_widgets.transports import ChatRequest
from tests.helpers import wait_for

Script = Callable[[ChatRequest], list[StreamEvent]]


class Agent:
    """Answers each request with the next script's events, records what each request showed of its calls, and
    (``aware``) hears when each turn ends."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.seen: list[list[tuple[str, str, str | None]]] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.seen.append([(p.tool_call_id, p.state.value, p.decision) for p in request.tool_results()])
        for event in self.scripts.pop(0)(request):
            yield event
            await asyncio.sleep(0)


class AwareAgent(Agent):
    def __init__(self, *scripts: Script) -> None:
        super().__init__(*scripts)
        self.ended: list[tuple[str, str, list[str]]] = []

    async def turn_ended(self, conversation_id: str, reply: Message) -> None:
        self.ended.append((conversation_id, reply.status.value, [p.state.value for p in reply.tool_calls]))


def events(*items: StreamEvent) -> Script:
    return lambda request: [ResponseStarted(), *items]


def asks(call_id: str, *, start: bool = True, continues: bool = True) -> Script:
    """The agent announces a call it runs (unless it did earlier) and asks the person about it, its run going on."""
    started: list[StreamEvent] = [ToolCallStarted(call_id, "Write", "{}", provider_executed=True)] if start else []
    return events(
        *started,
        ToolApprovalRequested(call_id, f"Allow {call_id}?"),
        ResponseCompleted(FinishReason.TOOL_CALLS, continues=continues),
    )


async def decide_all(session: ChatSession, task: asyncio.Task[Message], count: int) -> None:
    for _ in range(count):
        await wait_for(lambda: bool(session.pending_approvals) or task.done())
        if task.done():
            return
        session.approve(session.pending_approvals[0].tool_call_id, "approved")
        await wait_for(lambda: not session.pending_approvals or task.done())


# --- continues ------------------------------------------------------------------------------------------------------


async def test_an_allowed_call_stays_open_across_the_next_question_and_takes_its_later_result() -> None:
    agent = Agent(
        asks("w1"),
        # w1 is allowed and running on the agent's side; before it ends, the agent asks about a second call.
        asks("w2"),
        events(
            ProviderToolResult("w1", ToolOutcome.success("wrote a.txt")),
            ProviderToolResult("w2", ToolOutcome.success("wrote b.txt")),
            TextDelta("Both written."),
            ResponseCompleted(FinishReason.STOP),
        ),
    )
    session = ChatSession(agent)
    task = asyncio.create_task(session.send("write two files"))
    await decide_all(session, task, 2)
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert agent.seen[1] == [("w1", "running", "approved")]
    assert agent.seen[2] == [("w1", "running", "approved"), ("w2", "running", "approved")]
    w1, w2 = reply.tool_calls
    assert (w1.state, w2.state) == (ToolCallState.COMPLETED, ToolCallState.COMPLETED)
    assert w1.outcome is not None
    assert w1.outcome.value == "wrote a.txt"
    assert reply.text == "Both written."


async def test_without_continues_an_open_call_is_closed_when_its_response_ends() -> None:
    """Today's rule, kept for every other transport: the allowed call got no result in its response."""
    agent = Agent(
        asks("w1", continues=False),
        asks("w2", continues=False),
        events(TextDelta("ok"), ResponseCompleted(FinishReason.STOP)),
    )
    session = ChatSession(agent)
    task = asyncio.create_task(session.send("go"))
    await decide_all(session, task, 2)
    reply = await task
    w1 = reply.tool_calls[0]
    assert w1.state is ToolCallState.FAILED
    assert w1.outcome is not None
    assert "did not send a result" in (w1.outcome.message or "")


async def test_a_later_question_may_be_about_a_call_announced_in_an_earlier_response() -> None:
    agent = Agent(
        events(
            ToolCallStarted("a", "Edit", "{}", provider_executed=True),
            ToolCallStarted("b", "Edit", "{}", provider_executed=True),
            ToolApprovalRequested("a"),
            ResponseCompleted(FinishReason.TOOL_CALLS, continues=True),
        ),
        asks("b", start=False),
        events(
            ProviderToolResult("a", ToolOutcome.success("a done")),
            ProviderToolResult("b", ToolOutcome.success("b done")),
            ResponseCompleted(FinishReason.STOP),
        ),
    )
    session = ChatSession(agent)
    task = asyncio.create_task(session.send("go"))
    await decide_all(session, task, 2)
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert [p.state for p in reply.tool_calls] == [ToolCallState.COMPLETED, ToolCallState.COMPLETED]


async def test_questions_within_one_provider_run_do_not_count_as_rounds_of_tool_calls() -> None:
    agent = Agent(
        asks("w1"),
        asks("w2"),
        asks("w3"),
        events(
            *(ProviderToolResult(f"w{i}", ToolOutcome.success("ok")) for i in (1, 2, 3)),
            ResponseCompleted(FinishReason.STOP),
        ),
    )
    session = ChatSession(agent, options=SessionOptions(max_iterations=1))
    task = asyncio.create_task(session.send("go"))
    await decide_all(session, task, 3)
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert len(agent.seen) == 4


async def test_a_transport_that_always_continues_with_nothing_to_settle_ends_in_error() -> None:
    idle = events(TextDelta("."), ResponseCompleted(FinishReason.STOP, continues=True))
    agent = Agent(*[idle] * (_turn.MAX_IDLE_CONTINUES + 5))
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.ERROR
    assert "continue" in (reply.error or "")
    assert len(agent.seen) == _turn.MAX_IDLE_CONTINUES + 1


async def test_a_continuing_response_with_execute_tools_off_ends_its_open_calls() -> None:
    agent = Agent(
        events(
            ToolCallStarted("w1", "Write", "{}", provider_executed=True),
            ResponseCompleted(FinishReason.TOOL_CALLS, continues=True),
        )
    )
    reply = await ChatSession(agent, options=SessionOptions(execute_tools=False)).send("go")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.tool_calls[0].state is ToolCallState.SKIPPED


async def test_stop_while_the_person_decides_cancels_the_open_calls_and_the_next_message_works() -> None:
    agent = AwareAgent(asks("w1"), asks("w2"), events(TextDelta("fresh"), ResponseCompleted(FinishReason.STOP)))
    session = ChatSession(agent)
    task = asyncio.create_task(session.send("go"))
    await decide_all(session, task, 1)
    await wait_for(lambda: bool(session.pending_approvals))
    session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state for p in reply.tool_calls] == [ToolCallState.CANCELLED, ToolCallState.CANCELLED]
    assert agent.ended == [(session.conversation_id, "cancelled", ["cancelled", "cancelled"])]
    again = await session.send("next")
    assert again.text == "fresh"
    assert agent.ended[-1][1] == "completed"


# --- what the agent tells about its calls ---------------------------------------------------------------------------


async def test_a_call_update_replaces_title_kind_locations_arguments_and_content() -> None:
    diff = CallDiff("/w/a.txt", "old\n", "new\n")
    agent = Agent(
        events(
            ToolCallStarted("w1", "Write", "{}", provider_executed=True),
            ToolCallRevised("w1", title="Write a.txt", kind="edit", locations=(CallLocation("/w/a.txt", 3),)),
            ToolCallRevised("w1", arguments='{"path": "/w/a.txt", "content": "new\\n"}', content=(diff,)),
            ToolCallRevised(
                "w1", content=(CallText("writing"), CallTerminal("t1", "ls", "/w", "a.txt\n", exit_code=0))
            ),
            ProviderToolResult("w1", ToolOutcome.success("done")),
            ResponseCompleted(FinishReason.STOP),
        )
    )
    session = ChatSession(agent)
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    reply = await session.send("go")
    part = reply.tool_calls[0]
    assert part.parsed_arguments == {"path": "/w/a.txt", "content": "new\n"}
    assert part.view == ToolCallView(
        "Write a.txt",
        "edit",
        (CallLocation("/w/a.txt", 3),),
        (CallText("writing"), CallTerminal("t1", "ls", "/w", "a.txt\n", exit_code=0)),
    )
    assert sum(isinstance(c, PartChanged) and c.part is part for c in changes) == 3
    loaded = load_messages(dump_messages(session.messages))[-1].tool_calls[0]
    assert loaded.view == part.view
    assert loaded.parsed_arguments == part.parsed_arguments


async def test_an_update_may_describe_an_open_call_of_an_earlier_response() -> None:
    agent = Agent(
        asks("w1"),
        events(
            ToolCallRevised("w1", content=(CallDiff("/w/a", None, "x"),)),
            ProviderToolResult("w1", ToolOutcome.success("ok")),
            ResponseCompleted(FinishReason.STOP),
        ),
    )
    session = ChatSession(agent)
    task = asyncio.create_task(session.send("go"))
    await decide_all(session, task, 1)
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    view = reply.tool_calls[0].view
    assert view is not None
    assert view.content == (CallDiff("/w/a", None, "x"),)


async def test_a_revision_is_made_safe_where_it_is_not_and_an_item_safe_already_is_kept_as_sent() -> None:
    safe = CallDiff("/w/a", "old", "new")
    agent = Agent(
        events(
            ToolCallStarted("w1", "Write", "{}", provider_executed=True),
            ToolCallRevised(
                "w1",
                title="Écrire \ud800 a",
                kind="ed\udc00it",
                content=(safe, CallDiff("/w/\ud800b", None, "x"), CallText("t\udfff")),
            ),
            ProviderToolResult("w1", ToolOutcome.success("done")),
            ResponseCompleted(FinishReason.STOP),
        )
    )
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    view = reply.tool_calls[0].view
    assert view is not None
    assert (view.title, view.kind) == ("Écrire \ufffd a", "ed\ufffdit")
    assert view.content == (safe, CallDiff("/w/\ufffdb", None, "x"), CallText("t\ufffd"))
    assert view.content[0] is safe  # frozen and safe: not copied


async def test_a_huge_terminal_output_is_kept_bounded_its_end_kept() -> None:
    output = "x" * 300_000 + "THE END"
    agent = Agent(
        events(
            ToolCallStarted("t", "Bash", "{}", provider_executed=True),
            ToolCallRevised("t", content=(CallTerminal("t1", output=output),)),
            ProviderToolResult("t", ToolOutcome.success("ok")),
            ResponseCompleted(FinishReason.STOP),
        )
    )
    reply = await ChatSession(agent).send("go")
    view = reply.tool_calls[0].view
    assert view is not None
    (terminal,) = view.content
    assert isinstance(terminal, CallTerminal)
    assert terminal.output.endswith("THE END")
    assert len(terminal.output) < 210_000
    assert "left out" in terminal.output


@pytest.mark.parametrize(
    "bad",
    [
        ToolCallRevised("nobody", title="x"),
        ToolCallRevised("w1", content=["not a tuple"]),  # type: ignore[arg-type]
        ToolCallRevised("w1", content=("text",)),  # type: ignore[arg-type]
        ToolCallRevised("w1", title=5),  # type: ignore[arg-type]
    ],
)
async def test_a_malformed_call_update_ends_the_turn_in_error_and_enters_nothing(bad: ToolCallRevised) -> None:
    agent = Agent(
        events(ToolCallStarted("w1", "Write", "{}", provider_executed=True), bad, ResponseCompleted(FinishReason.STOP))
    )
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.ERROR
    assert "stream protocol" in (reply.error or "")
    assert reply.tool_calls[0].view is None


# --- the plan -------------------------------------------------------------------------------------------------------


async def test_a_plan_shows_once_and_each_update_replaces_it_in_place() -> None:
    first = (PlanEntry("read the data"), PlanEntry("plot it", priority="high"))
    second = (PlanEntry("read the data", "completed"), PlanEntry("plot it", "in_progress", "high"))
    agent = Agent(
        events(
            PlanUpdated(first),
            TextDelta("Reading."),
            PlanUpdated(second),
            TextDelta(" Done."),
            ResponseCompleted(FinishReason.STOP),
        )
    )
    session = ChatSession(agent)
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    reply = await session.send("go")
    plans = [p for p in reply.parts if isinstance(p, PlanPart)]
    assert len(plans) == 1
    assert plans[0].entries == second
    assert [type(c) for c in changes if isinstance(c, (PartAdded, PartChanged)) and isinstance(c.part, PlanPart)] == [
        PartAdded,
        PartChanged,
    ]
    assert reply.text == "Reading. Done."
    loaded = load_messages(dump_messages(session.messages))[-1]
    assert [p.entries for p in loaded.parts if isinstance(p, PlanPart)] == [second]
    assert "- [x] read the data" in conversation_markdown([loaded])


async def test_a_plan_entry_with_an_unknown_status_is_refused() -> None:
    with pytest.raises(ValueError, match="status"):
        PlanEntry("x", "done")  # type: ignore[arg-type]
    agent = Agent(events(PlanUpdated(["x"]), ResponseCompleted(FinishReason.STOP)))  # type: ignore[arg-type]
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.ERROR
    assert not any(isinstance(p, PlanPart) for p in reply.parts)


# --- cost and provider state ----------------------------------------------------------------------------------------


async def test_the_providers_own_cost_prices_the_request() -> None:
    agent = Agent(
        events(TextDelta("hi"), UsageUpdate(10, 5, cost=Decimal("0.0125")), ResponseCompleted(FinishReason.STOP)),
        events(TextDelta("again"), UsageUpdate(1, 1, cost=Decimal("0.01")), ResponseCompleted(FinishReason.STOP)),
    )
    session = ChatSession(agent)
    reply = await session.send("go")
    assert reply.usage.cost == Decimal("0.0125")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (10, 5)
    await session.send("more")
    assert session.usage.cost == Decimal("0.0225")


async def test_a_negative_cost_is_refused() -> None:
    agent = Agent(events(UsageUpdate(cost=Decimal("-1")), ResponseCompleted(FinishReason.STOP)))
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.ERROR


async def test_provider_state_is_kept_with_the_reply_and_in_the_history() -> None:
    agent = Agent(
        events(ProviderState("acp", {"session_id": "s-1"}), TextDelta("hi"), ResponseCompleted(FinishReason.STOP)),
        events(ProviderState("acp", {"session_id": "s-2"}), ResponseCompleted(FinishReason.STOP)),
    )
    session = ChatSession(agent)
    reply = await session.send("go")
    assert reply.provider_state == {"acp": {"session_id": "s-1"}}
    second = await session.send("again")
    assert second.provider_state == {"acp": {"session_id": "s-2"}}
    loaded = load_messages(dump_messages(session.messages))
    assert [m.provider_state for m in loaded] == [
        {},
        {"acp": {"session_id": "s-1"}},
        {},
        {"acp": {"session_id": "s-2"}},
    ]
    assert "provider_state" not in loaded[0].to_dict()  # absent, not empty: older readers see what they know


async def test_provider_state_that_is_not_json_is_refused() -> None:
    agent = Agent(events(ProviderState("acp", object()), ResponseCompleted(FinishReason.STOP)))
    reply = await ChatSession(agent).send("go")
    assert reply.status is MessageStatus.ERROR
    assert reply.provider_state == {}


# --- turn_ended -----------------------------------------------------------------------------------------------------


async def test_turn_ended_is_told_once_per_turn_with_the_final_reply_whether_it_finished_or_failed() -> None:
    agent = AwareAgent(
        events(TextDelta("ok"), ResponseCompleted(FinishReason.STOP)),
        lambda request: [ResponseStarted(), TextDelta("half")],  # broke off
    )
    session = ChatSession(agent)
    await session.send("one")
    await session.send("two")
    assert [status for _, status, _ in agent.ended] == ["completed", "error"]


async def test_a_transport_without_turn_ended_is_not_asked_and_one_that_fails_or_hangs_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reply = await ChatSession(Agent(events(TextDelta("ok"), ResponseCompleted(FinishReason.STOP)))).send("go")
    assert reply.status is MessageStatus.COMPLETED

    class Failing(Agent):
        async def turn_ended(self, conversation_id: str, reply: Message) -> None:
            raise RuntimeError("agent gone")

    class Hanging(Agent):
        async def turn_ended(self, conversation_id: str, reply: Message) -> None:
            await asyncio.sleep(60)

    monkeypatch.setattr(_turn, "TURN_ENDED_TIMEOUT", 0.1)
    for kind in (Failing, Hanging):
        session = ChatSession(kind(*[events(TextDelta("ok"), ResponseCompleted(FinishReason.STOP))] * 2))
        with caplog.at_level(logging.WARNING, logger="ai_widgets"):
            first = await asyncio.wait_for(session.send("go"), 5)
        assert first.status is MessageStatus.COMPLETED
        assert "turn_ended failed" in caplog.text
        assert (await session.send("again")).text == "ok"  # the session stays usable
        caplog.clear()
