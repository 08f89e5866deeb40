"""Nothing the session does per turn grows with the conversation, and nothing per call with the round.

The work is counted, not timed: the Python and C function calls a turn makes (``sys.setprofile``) are the same
whatever the machine, so a scan of the history or of the round shows as a count that grows.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from types import FrameType
from typing import Any

from ai_widgets import ChatSession, Message, MessageStatus, ToolCallPart, ToolCallState, Usage, tool
from ai_widgets.events import (
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, Role
from ai_widgets.transports import ChatRequest


@tool
async def echo(text: str) -> str:
    """Returns its argument.

    Args:
        text: Any text.
    """
    return text


class Calls:
    """Answers a user message with ``count`` calls of ``echo``, and their results with a short text."""

    def __init__(self, count: int = 1) -> None:
        self.count = count
        self.turns = 0
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        last = request.messages[-1]
        yield ResponseStarted()
        if last.role is Role.ASSISTANT and last.tool_calls:
            for text in ("all ", "done ", "now"):
                yield TextDelta(text)
            yield UsageUpdate(10, 3)
            yield ResponseCompleted(FinishReason.STOP)
            return
        self.turns += 1
        for k in range(self.count):
            call_id = f"call_{self.turns}_{k}"
            yield ToolCallStarted(call_id, "echo", '{"text": "hi"}')
            yield ToolCallArgumentsDone(call_id)
        yield UsageUpdate(10, 5)
        yield ResponseCompleted(FinishReason.TOOL_CALLS)


async def counted(run: Callable[[], Awaitable[Any]]) -> int:
    """The function calls (Python and C) made while ``run()`` is awaited; the garbage collector is kept out (the
    finalisers it runs belong to whatever earlier tests left behind, not to the turn)."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    gc.collect()
    gc.disable()
    sys.setprofile(profile)
    try:
        await run()
    finally:
        sys.setprofile(None)
        gc.enable()
    return count


async def test_a_turn_does_the_same_work_at_turn_300_as_at_turn_10() -> None:
    session = ChatSession(Calls(), tools=[echo])
    work: dict[int, int] = {}
    for turn in range(1, 301):
        if turn in (10, 300):
            work[turn] = await counted(lambda: session.send("again"))
        else:
            await session.send("again")
    assert session.messages[-1].status is MessageStatus.COMPLETED
    # Before, every send() looked at every earlier message: turn 300 made three times the calls of turn 10.
    assert work[300] <= work[10] * 1.02, work


async def test_the_work_per_call_of_a_round_is_the_same_for_100_and_1000_calls() -> None:
    work = {}
    for count in (100, 200, 1000):
        session = ChatSession(Calls(count), tools=[echo])
        work[count] = await counted(lambda: session.send("go"))  # noqa: B023 - awaited at once
        assert [p.state for p in session.messages[-1].tool_calls] == [ToolCallState.COMPLETED] * count
    near = (work[200] - work[100]) / 100
    far = (work[1000] - work[200]) / 800
    # Before, two scans of the round made the 1000th call cost 2.5 times the 100th.
    assert far <= near * 1.05, (near, far)


def open_reply() -> Message:
    """A reply saved while its turn ran: in progress, one call waiting, one streaming."""
    waiting = ToolCallPart("old_1", "echo", '{"text": "a"}', state=ToolCallState.PENDING)
    waiting.move(ToolCallState.AWAITING_APPROVAL)
    streaming = ToolCallPart("old_2", "echo", '{"text": "b')
    return Message(Role.ASSISTANT, [waiting, streaming], status=MessageStatus.IN_PROGRESS)


def assert_every_call_answered(requests: list[ChatRequest]) -> None:
    for request in requests:
        for message in request.messages[:-1]:
            assert message.status is not MessageStatus.IN_PROGRESS
            for part in message.tool_calls:
                assert part.state.terminal, part
                assert part.outcome is not None, part


async def test_a_conversation_given_with_open_calls_is_closed_before_any_request() -> None:
    transport = Calls()
    reply = open_reply()
    session = ChatSession(transport, tools=[echo], messages=[Message.user("hi"), reply])
    await session.send("and now?")
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state for p in reply.tool_calls] == [ToolCallState.SKIPPED, ToolCallState.SKIPPED]
    assert_every_call_answered(transport.requests)


async def test_open_calls_after_a_clear_and_a_long_conversation_are_still_closed() -> None:
    # The session remembers how far the history is known closed; a cleared (shorter) history starts again.
    transport = Calls()
    session = ChatSession(transport, tools=[echo])
    for _ in range(5):
        await session.send("grow")
    session.clear()
    await session.send("fresh")
    assert_every_call_answered(transport.requests)
    assert [m.role for m in session.messages] == [Role.USER, Role.ASSISTANT]


def summed(messages: list[Message]) -> Usage:
    total = Usage()
    for message in messages:
        total = total + message.usage
    return total


async def test_reading_the_usage_does_the_same_work_at_turn_300_as_at_turn_10_and_sums_every_message() -> None:
    # The widget reads session.usage after every turn.
    session = ChatSession(Calls(), tools=[echo])
    work: dict[int, int] = {}

    async def read() -> None:
        session.usage  # noqa: B018 - the read is what is counted

    for turn in range(1, 301):
        await session.send("again")
        if turn in (10, 300):
            work[turn] = await counted(read)
        assert session.usage == summed(session.messages)
    # Before, the usage summed every message on every read: at turn 300, 30 times the work of turn 10.
    assert work[300] <= work[10] * 1.1, work
    session.clear()
    assert session.usage == Usage()
    await session.send("fresh")
    assert session.usage == summed(session.messages)
    assert session.usage.requests == 2


async def test_the_usage_counts_the_reply_in_progress_as_it_grows() -> None:
    seen: list[tuple[Usage, Usage]] = []
    session = ChatSession(Calls(), tools=[echo])
    await session.send("first")

    def on_change(change: object) -> None:
        seen.append((session.usage, summed(session.messages)))

    session.subscribe(on_change)
    await session.send("second")
    assert seen
    for usage, expected in seen:
        assert usage == expected
