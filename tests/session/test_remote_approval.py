"""A call the provider runs, paused for the person's decision (DESIGN.md "Agents built elsewhere": a remote AG-UI
agent's interrupts): it waits in ``awaiting_approval`` like any other call, is never run here, and the turn's next
request carries the decision; the provider's result in that response completes it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ai_widgets import ApprovalError, ChatSession, FinishReason, MessageStatus, ToolCallState, tool
from ai_widgets.events import (
    ProviderToolResult,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolApprovalRequested,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
)
from ai_widgets.messages import ToolCallPart, dump_messages, load_messages
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports import ChatRequest
from tests.helpers import wait_for

Script = Callable[[ChatRequest], list[StreamEvent]]

_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


class FakeRemote:
    """Answers each request with the next script's events, and records what each request showed of the calls."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.requests: list[ChatRequest] = []
        self.seen: list[list[tuple[str, str, str | None, dict[str, Any] | None]]] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        calls = request.tool_results()
        self.seen.append([(p.tool_call_id, p.state.value, p.decision, p.edited_arguments) for p in calls])
        for event in self.scripts.pop(0)(request):
            yield event
            await asyncio.sleep(0)


def paused(call_id: str = "r1", name: str = "wire_money", schema: dict[str, Any] | None = _SCHEMA) -> Script:
    def script(request: ChatRequest) -> list[StreamEvent]:
        return [
            ResponseStarted(),
            ToolCallStarted(call_id, name, provider_executed=True),
            ToolCallDelta(call_id, '{"x": 1}'),
            ToolCallArgumentsDone(call_id),
            ToolApprovalRequested(
                call_id, "Wire it?", arguments_schema=schema, provider="remote", provider_data={"pause": call_id}
            ),
            ResponseCompleted(FinishReason.TOOL_CALLS),
        ]

    return script


def result_then(text: str, call_id: str = "r1", *, result: bool = True) -> Script:
    def script(request: ChatRequest) -> list[StreamEvent]:
        events: list[StreamEvent] = [ResponseStarted()]
        if result:
            events.append(ProviderToolResult(call_id, ToolOutcome.success("done remotely")))
        return [*events, TextDelta(text), ResponseCompleted(FinishReason.STOP)]

    return script


async def started(session: ChatSession, text: str = "go") -> asyncio.Task[Any]:
    task = asyncio.create_task(session.send(text))
    await wait_for(lambda: bool(session.pending_approvals) or task.done())
    return task


async def test_a_paused_remote_call_waits_is_never_run_here_and_the_next_request_carries_the_decision() -> None:
    transport = FakeRemote(paused(), result_then("Sent."))
    session = ChatSession(transport)
    task = await started(session)
    (waiting,) = session.pending_approvals
    assert (waiting.state, waiting.provider_executed) == (ToolCallState.AWAITING_APPROVAL, True)
    assert waiting.approval_reason == "Wire it?"
    assert waiting.provider_data == {"pause": "r1"}  # what the transport needs back with the decision
    await asyncio.sleep(0.05)
    assert len(transport.requests) == 1  # nobody asked the provider again while the person decides
    session.approve("r1", "approved")
    reply = await task
    assert transport.seen[1] == [("r1", "running", "approved", None)]  # allowed, run by the provider now
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "Sent."
    assert waiting.state is ToolCallState.COMPLETED
    assert waiting.outcome is not None
    assert waiting.outcome.value == "done remotely"


async def test_an_edit_is_checked_against_the_providers_schema_and_sent_with_the_decision() -> None:
    transport = FakeRemote(paused(), result_then("Sent."))
    session = ChatSession(transport)
    task = await started(session)
    with pytest.raises(ApprovalError, match="invalid"):
        session.approve("r1", "approved", arguments={"x": "many"})
    assert session.pending_approvals[0].edited_arguments is None  # nothing changed
    session.approve("r1", "approved", arguments={"x": 5})
    await task
    assert transport.seen[1] == [("r1", "running", "approved", {"x": 5})]


async def test_without_a_schema_any_object_is_an_edit() -> None:
    transport = FakeRemote(paused(schema=None), result_then("Sent."))
    session = ChatSession(transport)
    task = await started(session)
    session.approve("r1", "approved", arguments={"anything": [1, 2]})
    await task
    assert transport.seen[1] == [("r1", "running", "approved", {"anything": [1, 2]})]


async def test_a_decline_is_recorded_and_told_on_the_next_request() -> None:
    transport = FakeRemote(paused(), result_then("Not sent.", result=False))
    session = ChatSession(transport)
    task = await started(session)
    session.approve("r1", "rejected", reason="wrong account")
    reply = await task
    part = reply.tool_calls[0]
    assert transport.seen[1] == [("r1", "rejected", "rejected", None)]
    assert part.state is ToolCallState.REJECTED
    assert part.decision_reason == "wrong account"
    assert reply.status is MessageStatus.COMPLETED


async def test_allow_always_answers_the_next_pause_of_that_tool_unasked() -> None:
    transport = FakeRemote(paused("r1"), result_then("One."), paused("r2"), result_then("Two.", "r2"))
    session = ChatSession(transport)
    task = await started(session)
    session.approve("r1", "approved_always")
    await task
    second = await session.send("again")
    part = second.tool_calls[0]
    assert (part.decision, part.decision_remembered, part.state) == ("approved_always", True, ToolCallState.COMPLETED)
    assert transport.seen[3] == [("r2", "running", "approved_always", None)]


async def test_a_stop_while_waiting_leaves_a_valid_history() -> None:
    transport = FakeRemote(paused())
    session = ChatSession(transport)
    task = await started(session)
    assert session.stop()
    reply = await task
    part = reply.tool_calls[0]
    assert reply.status is MessageStatus.CANCELLED
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is not None
    assert len(transport.requests) == 1
    again = load_messages(dump_messages(session.messages))
    assert [m.status for m in again] == [m.status for m in session.messages]
    assert not session.busy


async def test_an_allowed_call_without_a_result_in_the_next_response_failed() -> None:
    transport = FakeRemote(paused(), result_then("Hm.", result=False))
    session = ChatSession(transport)
    task = await started(session)
    session.approve("r1", "approved")
    reply = await task
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert "did not send a result" in (part.outcome.message or "")


async def test_a_provider_call_that_did_not_pause_is_still_never_asked_about() -> None:
    def unpaused(request: ChatRequest) -> list[StreamEvent]:
        return [
            ResponseStarted(),
            ToolCallStarted("s1", "web_search", arguments="{}", provider_executed=True),
            ResponseCompleted(FinishReason.STOP),
        ]

    session = ChatSession(FakeRemote(unpaused))
    reply = await session.send("go")
    assert reply.tool_calls[0].state is ToolCallState.SKIPPED


async def test_a_local_call_and_a_paused_remote_call_share_a_round() -> None:
    ran: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Adds."""
        ran.append(a + b)
        return a + b

    def both(request: ChatRequest) -> list[StreamEvent]:
        events = paused()(request)
        return [*events[:-1], ToolCallStarted("l1", "add", arguments='{"a": 1, "b": 2}'), events[-1]]

    transport = FakeRemote(both, result_then("Both."))
    session = ChatSession(transport, tools=[add])
    task = await started(session)
    session.approve("r1", "approved")
    reply = await task
    assert ran == [3]
    states = {p.tool_call_id: p.state for p in reply.tool_calls}
    assert states == {"r1": ToolCallState.COMPLETED, "l1": ToolCallState.COMPLETED}
    assert isinstance(reply.tool_calls[0], ToolCallPart)
