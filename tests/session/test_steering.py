"""Steering: a message sent while a turn runs is delivered at the next tool boundary, one not delivered starts the
next turn, and a stop hands it back (issue 31, "Steering")."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from ai_widgets import ChatSession, MessageStatus, NotDeliveredError, SessionBusyError, tool
from ai_widgets.changes import SessionChange, SteeringChanged
from ai_widgets.messages import ToolCallState
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import NeverAsk, wait_for

gate = threading.Event()


@tool
def slow_step(n: int) -> str:
    """Waits until the test lets it go.

    Args:
        n: The step.
    """
    gate.wait(10)
    return f"step {n} done"


def roles(session: ChatSession) -> list[str]:
    return [m.role.value for m in session.messages]


def model(request: ChatRequest) -> ScriptedReply:
    """Calls slow_step once, then answers with the last user text it was told."""
    if not any(m.tool_calls for m in request.messages):
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="slow_step", arguments={"n": 1})])
    return ScriptedReply(text=f"heard: {request.last_user_text}")


@pytest.fixture(autouse=True)
def closed_gate() -> None:
    gate.clear()


async def test_a_message_sent_during_a_tool_round_is_delivered_after_its_results() -> None:
    transport = ScriptedTransport(model)
    session = ChatSession(transport, tools=[slow_step], approval_policy=NeverAsk())
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    steered = asyncio.create_task(session.send("also check the units"))
    await wait_for(lambda: bool(session.queued_messages))
    assert [m.text for m in session.queued_messages] == ["also check the units"]
    assert roles(session) == ["user", "assistant"]  # not in the conversation until delivered
    gate.set()
    reply = await first
    assert await steered is reply  # both senders get the last reply of the turn
    assert roles(session) == ["user", "assistant", "user", "assistant"]
    before, told, after = session.messages[1:]
    assert before.status is MessageStatus.COMPLETED
    assert before.tool_calls[0].state is ToolCallState.COMPLETED
    assert told.text == "also check the units"
    assert after is reply
    assert reply.text == "heard: also check the units"
    # The second request carried the tool's result and then the message.
    second = transport.requests[1].messages
    assert [m.role.value for m in second] == ["user", "assistant", "user", "assistant"]
    assert second[1].tool_calls[0].outcome is not None
    assert second[2].text == "also check the units"
    assert session.queued_messages == []
    queued = [c.queued for c in changes if isinstance(c, SteeringChanged)]
    assert [len(q) for q in queued] == [1, 0]


async def test_a_message_not_delivered_when_the_turn_ends_starts_the_next_turn() -> None:
    release = asyncio.Event()

    class Slow(ScriptedTransport):
        async def stream(self, request: ChatRequest):  # type: ignore[no-untyped-def, override]
            if request.last_user_text == "first":
                await release.wait()
            async for event in super().stream(request):
                yield event

    session = ChatSession(Slow(lambda r: ScriptedReply(text=f"re: {r.last_user_text}")))
    first = asyncio.create_task(session.send("first"))
    await wait_for(lambda: session.busy)
    second = asyncio.create_task(session.send("second"))
    await wait_for(lambda: bool(session.queued_messages))
    release.set()
    first_reply = await first
    second_reply = await second
    assert first_reply.text == "re: first"
    assert second_reply is not first_reply
    assert second_reply.text == "re: second"
    assert [m.text for m in session.messages] == ["first", "re: first", "second", "re: second"]
    assert not session.busy


async def test_stop_hands_undelivered_messages_back() -> None:
    session = ChatSession(ScriptedTransport(model), tools=[slow_step], approval_policy=NeverAsk())
    returned: list[str] = []
    session.subscribe(lambda c: returned.extend(m.text for m in c.returned) if isinstance(c, SteeringChanged) else None)
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    steered = asyncio.create_task(session.send("never mind"))
    await wait_for(lambda: bool(session.queued_messages))
    session.stop()
    gate.set()
    assert (await first).status is MessageStatus.CANCELLED
    with pytest.raises(NotDeliveredError):
        await steered
    assert returned == ["never mind"]
    assert roles(session) == ["user", "assistant"]  # not sent, not in the conversation
    assert not session.busy
    assert session.queued_messages == []


async def test_cancelling_a_waiting_sender_takes_its_message_out() -> None:
    session = ChatSession(ScriptedTransport(model), tools=[slow_step], approval_policy=NeverAsk())
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    steered = asyncio.create_task(session.send("drop me"))
    await wait_for(lambda: bool(session.queued_messages))
    steered.cancel()
    with pytest.raises(asyncio.CancelledError):
        await steered
    assert session.queued_messages == []
    gate.set()
    await first
    assert "drop me" not in [m.text for m in session.messages]


async def test_what_still_refuses_while_a_turn_runs() -> None:
    session = ChatSession(ScriptedTransport(model), tools=[slow_step], approval_policy=NeverAsk())
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: session.busy)
    with pytest.raises(SessionBusyError):
        await session.send("no steering", steer=False)
    with pytest.raises(SessionBusyError):
        await session.send("typed", output_type=int)  # a typed question needs a turn of its own
    with pytest.raises(SessionBusyError):
        await session.resume()
    with pytest.raises(SessionBusyError):
        await session.run_call("slow_step", {"n": 2})
    with pytest.raises(SessionBusyError):
        session.clear()
    with pytest.raises(SessionBusyError):
        await session.regenerate()
    with pytest.raises(SessionBusyError):
        await session.edit(session.messages[0].id, "other")
    with pytest.raises(SessionBusyError):
        session.check_send("x", steer=False)
    assert session.check_send("x") == []  # steering is no refusal
    gate.set()
    await first
    assert session.queued_messages == []


def test_a_steer_from_another_thread_and_loop_is_delivered() -> None:
    session = ChatSession(ScriptedTransport(model), tools=[slow_step], approval_policy=NeverAsk())
    results: dict[str, object] = {}

    def steer() -> None:
        results["steered"] = asyncio.run(session.send("from a thread"))

    async def main() -> object:
        first = asyncio.create_task(session.send("start"))
        await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
        thread = threading.Thread(target=steer)
        thread.start()
        await wait_for(lambda: bool(session.queued_messages))
        gate.set()
        reply = await first
        await asyncio.to_thread(thread.join, 10)
        return reply

    reply = asyncio.run(main())
    assert results["steered"] is reply
    assert [m.text for m in session.messages][2:] == ["from a thread", "heard: from a thread"]


async def test_a_steered_turn_is_saved_in_order(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(model), tools=[slow_step], approval_policy=NeverAsk(), history=path)
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    steered = asyncio.create_task(session.send("and the units"))
    await wait_for(lambda: bool(session.queued_messages))
    gate.set()
    await first
    await steered
    session.close()
    reopened = ChatSession(ScriptedTransport(model), history=path)
    assert [(m.role.value, m.status.value) for m in reopened.messages] == [
        ("user", "completed"),
        ("assistant", "completed"),
        ("user", "completed"),
        ("assistant", "completed"),
    ]
    assert reopened.messages[2].text == "and the units"
    reopened.close()


async def test_several_messages_sent_during_one_round_are_delivered_together_in_order() -> None:
    transport = ScriptedTransport(model)
    session = ChatSession(transport, tools=[slow_step], approval_policy=NeverAsk())
    first = asyncio.create_task(session.send("start"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    one = asyncio.create_task(session.send("one"))
    await wait_for(lambda: len(session.queued_messages) == 1)
    two = asyncio.create_task(session.send("two"))
    await wait_for(lambda: len(session.queued_messages) == 2)
    gate.set()
    reply = await first
    assert await one is reply
    assert await two is reply
    assert [m.text for m in session.messages] == ["start", "", "one", "two", "heard: two"]
    assert len(transport.requests) == 2  # both went with the round's results, in one request
