"""The status line with any model: the session shows ``waiting_status`` from each request until the first content,
a transport's own status replaces it, and nothing of it outlives the response."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ai_widgets import ChatSession, SessionOptions, tool
from ai_widgets.changes import MessageUpdated, SessionChange
from ai_widgets.events import (
    FinishReason,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallStarted,
)
from ai_widgets.transports._base import ChatRequest


@tool
def lookup(q: str) -> str:
    """Looks something up."""
    return q.upper()


class Gated:
    """A model that says nothing until the test lets it: each request waits on its own gate."""

    def __init__(self, responses: list[list[StreamEvent]]) -> None:
        self.responses = responses
        self.gates = [asyncio.Event() for _ in responses]
        self.requests = 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        index = self.requests
        self.requests += 1
        yield ResponseStarted()
        await self.gates[index].wait()
        for event in self.responses[index]:
            yield event


class StatusLine:
    """Records the reply's status line at each update of the reply (consecutive repeats dropped)."""

    def __init__(self, session: ChatSession) -> None:
        self.seen: list[str | None] = []
        session.subscribe(self.observe)

    def observe(self, change: SessionChange) -> None:
        if not isinstance(change, MessageUpdated) or change.message.role.value != "assistant":
            return
        if not self.seen or self.seen[-1] != change.message.status_text:
            self.seen.append(change.message.status_text)


async def until(predicate: Any) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.002)
    raise AssertionError("condition not reached")


async def test_thinking_shows_from_each_request_until_its_first_content() -> None:
    done = ResponseCompleted(FinishReason.STOP)
    model = Gated(
        [
            [ToolCallStarted("c1", "lookup"), ToolCallArgumentsDone("c1"), ResponseCompleted(FinishReason.TOOL_CALLS)],
            [ReasoningDelta("hm"), TextDelta("Found it."), done],
        ]
    )
    session = ChatSession(model, tools=[lookup])  # type: ignore[arg-type]
    line = StatusLine(session)
    turn = asyncio.create_task(session.send("find x"))
    await until(lambda: model.requests == 1)
    reply = session.messages[-1]
    assert reply.status_text == "Thinking…"  # nothing from the model yet
    model.gates[0].set()
    await until(lambda: model.requests == 2)
    assert reply.status_text == "Thinking…"  # the tool ran; the second request waits
    model.gates[1].set()
    await turn
    assert reply.status_text is None
    # Cleared by the first call, shown again for the next request, cleared by the reasoning.
    assert line.seen == ["Thinking…", None, "Thinking…", None]


async def test_a_transport_status_replaces_it_and_none_shows_nothing() -> None:
    model = Gated([[StatusUpdate("Searching the web…"), TextDelta("Hi."), ResponseCompleted(FinishReason.STOP)]])
    session = ChatSession(model)  # type: ignore[arg-type]
    line = StatusLine(session)
    turn = asyncio.create_task(session.send("hi"))
    await until(lambda: model.requests == 1)
    model.gates[0].set()
    await turn
    assert line.seen == ["Thinking…", "Searching the web…", None]

    quiet = Gated([[TextDelta("Hi."), ResponseCompleted(FinishReason.STOP)]])
    session = ChatSession(quiet, options=SessionOptions(waiting_status=None))  # type: ignore[arg-type]
    line = StatusLine(session)
    turn = asyncio.create_task(session.send("hi"))
    await until(lambda: quiet.requests == 1)
    assert session.messages[-1].status_text is None
    quiet.gates[0].set()
    await turn
    assert set(line.seen) <= {None}  # only the finished reply's update


async def test_a_response_with_no_content_or_a_failure_leaves_no_status() -> None:
    empty = Gated([[ResponseCompleted(FinishReason.STOP)]])
    session = ChatSession(empty, options=SessionOptions(waiting_status="Working"))  # type: ignore[arg-type]
    turn = asyncio.create_task(session.send("hi"))
    await until(lambda: empty.requests == 1)
    assert session.messages[-1].status_text == "Working"
    empty.gates[0].set()
    reply = await turn
    assert reply.status_text is None

    broken = Gated([[TextDelta("Hi")]])  # ends without ResponseCompleted
    session = ChatSession(broken)  # type: ignore[arg-type]
    turn = asyncio.create_task(session.send("hi"))
    await until(lambda: broken.requests == 1)
    broken.gates[0].set()
    reply = await turn
    assert reply.status.value == "error"
    assert reply.status_text is None


def test_waiting_status_must_be_text() -> None:
    with pytest.raises(TypeError, match="waiting_status"):
        SessionOptions(waiting_status=3)  # type: ignore[arg-type]


async def test_a_provider_run_tool_says_what_it_does_until_its_result() -> None:
    from ai_widgets import ToolOutcome
    from ai_widgets.events import ProviderToolResult

    searched, answer = asyncio.Event(), asyncio.Event()

    class Searching:
        async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
            yield ResponseStarted()
            yield ToolCallStarted("ws_1", "web_search", "{}", provider_executed=True)
            yield StatusUpdate("Searching the web…")
            await searched.wait()
            yield ProviderToolResult("ws_1", ToolOutcome.success("results"))
            await answer.wait()  # the model composes its answer: nothing to say on the status line now
            yield TextDelta("Found it.")
            yield ResponseCompleted(FinishReason.STOP)

    session = ChatSession(Searching())  # type: ignore[arg-type]
    turn = asyncio.create_task(session.send("search"))
    await until(lambda: bool(session.messages) and session.messages[-1].status_text == "Searching the web…")
    searched.set()
    await until(lambda: session.messages[-1].tool_calls[0].state.terminal)
    assert session.messages[-1].status_text is None  # ended with the provider's result
    answer.set()
    reply = await turn
    assert reply.text == "Found it."
