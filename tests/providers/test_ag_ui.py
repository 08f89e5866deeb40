"""AGUITransport against a real AG-UI server: pydantic-ai's adapter (``AGUIAdapter.dispatch_request``) on uvicorn on
loopback, its agent on a ``FunctionModel`` (no keys). Streaming, the agent's own tools, the session's tools offered
as frontend tools, approvals with an edit and a decline, a stop mid-stream, a server that is down, ``RUN_ERROR``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ai_widgets import ChatSession, MessageStatus, ToolCallState, tool
from ai_widgets.changes import SessionChange, TextAppended
from ai_widgets.transports import AGUITransport, ChatRequest
from tests.helpers import wait_for
from tests.providers.ag_ui_server import AGUIServer, free_port, serve_agent

Stream = AsyncIterator[str | DeltaToolCalls]


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool results in the model's last request."""
    return [part for part in messages[-1].parts if isinstance(part, ToolReturnPart)]


@pytest.fixture
def served() -> Iterator[list[AGUIServer]]:
    servers: list[AGUIServer] = []
    yield servers
    for server in servers:
        server.stop()


def serve(served: list[AGUIServer], agent: Agent[Any, Any], **kwargs: Any) -> AGUIServer:
    server = serve_agent(agent, **kwargs)
    served.append(server)
    return server


async def test_text_streams_in_several_deltas_before_the_end(served: list[AGUIServer]) -> None:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        for piece in ("Hello", " from", " far", " away."):
            yield piece
            await asyncio.sleep(0.02)

    server = serve(served, Agent(FunctionModel(stream_function=model)))
    session = ChatSession(AGUITransport(server.url))
    appended_while_streaming: list[str] = []

    def watch(change: SessionChange) -> None:
        if isinstance(change, TextAppended) and change.message.status is MessageStatus.IN_PROGRESS:
            appended_while_streaming.append(change.text)

    session.subscribe(watch)
    reply = await session.send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "Hello from far away."
    assert len(appended_while_streaming) >= 3  # the text arrived piece by piece, not at the end


async def test_the_agents_own_tool_runs_on_the_server_and_shows_as_provider_run(served: list[AGUIServer]) -> None:
    ran: list[str] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if results := returns(messages):
            yield f"It is {results[0].content}."
            return
        yield {0: DeltaToolCall(name="forecast", json_args='{"city": ', tool_call_id="call_f")}
        yield {0: DeltaToolCall(json_args='"Oslo"}')}

    agent = Agent(FunctionModel(stream_function=model))

    @agent.tool_plain
    def forecast(city: str) -> str:
        ran.append(city)
        return f"snowing in {city}"

    server = serve(served, agent)
    reply = await ChatSession(AGUITransport(server.url)).send("weather?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (card,) = reply.tool_calls
    assert ran == ["Oslo"]
    assert (card.tool_name, card.provider_executed, card.state) == ("forecast", True, ToolCallState.COMPLETED)
    assert card.parsed_arguments == {"city": "Oslo"}
    assert card.outcome is not None
    assert card.outcome.value == "snowing in Oslo"
    assert reply.text == "It is snowing in Oslo."


async def test_a_kernel_tool_is_offered_runs_here_and_its_result_reaches_the_remote_model(
    served: list[AGUIServer],
) -> None:
    seen: list[tuple[list[str], list[str]]] = []
    ran: list[tuple[int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Adds two numbers in the kernel."""
        ran.append((a, b))
        return a + b

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        seen.append(([t.name for t in info.function_tools], [str(r.content) for r in returns(messages)]))
        if returns(messages):
            yield "The sum is in."
            return
        yield {0: DeltaToolCall(name="add", json_args='{"a": 2, "b": 40}', tool_call_id="call_add")}

    server = serve(served, Agent(FunctionModel(stream_function=model), output_type=[str, DeferredToolRequests]))
    reply = await ChatSession(AGUITransport(server.url), tools=[add]).send("add them")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (card,) = reply.tool_calls
    assert ran == [(2, 40)]
    assert (card.provider_executed, card.state) == (False, ToolCallState.COMPLETED)
    assert seen[0][0] == ["add"]  # offered as a frontend tool
    assert seen[1][1] == ["42"]  # the remote model got the kernel's result
    assert reply.text == "The sum is in."


@pytest.mark.parametrize(("second", "product"), [("mul", 20), ("add", 9)])
async def test_a_call_id_the_agent_reuses_in_a_later_run_is_a_new_call_that_runs(
    served: list[AGUIServer], second: str, product: int
) -> None:
    ran: list[tuple[str, int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Adds two numbers in the kernel."""
        ran.append(("add", a, b))
        return a + b

    @tool
    def mul(a: int, b: int) -> int:
        """Multiplies two numbers in the kernel."""
        ran.append(("mul", a, b))
        return a * b

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        # The ids restart with each response, as some model servers' do: both calls are "call_0", for another tool
        # or for the same tool with other arguments.
        if not returns(messages):
            yield {0: DeltaToolCall(name="add", json_args='{"a": 2, "b": 3}', tool_call_id="call_0")}
        elif len(messages) < 4:
            yield {0: DeltaToolCall(name=second, json_args='{"a": 5, "b": 4}', tool_call_id="call_0")}
        else:
            yield f"It is {returns(messages)[0].content}."

    server = serve(served, Agent(FunctionModel(stream_function=model), output_type=[str, DeferredToolRequests]))
    session = ChatSession(AGUITransport(server.url), tools=[add, mul])
    reply = await session.send("add, then again")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert ran == [("add", 2, 3), (second, 5, 4)]
    first, then = reply.tool_calls
    assert (first.tool_name, then.tool_name) == ("add", second)
    assert first.tool_call_id == "call_0"
    assert then.tool_call_id != "call_0"  # the session's ids stay unique
    assert then.state is ToolCallState.COMPLETED
    assert reply.text == f"It is {product}."
    # The agent is told of both calls under the id it gave them, each in a response of its own.
    last = json.loads(server.bodies[-1])["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [call["id"] for m in last for call in m.get("toolCalls") or ()] == ["call_0", "call_0"]
    assert [(m["toolCallId"], m["content"]) for m in last if m["role"] == "tool"] == [
        ("call_0", "5"),
        ("call_0", str(product)),
    ]
    assert len({m["id"] for m in last}) == len(last)  # each message keeps an id of its own
    # The next turn's call with the same id again gets another id of its own, and runs.
    again = await session.send("once more")
    assert again.status is MessageStatus.COMPLETED, again.error
    assert ran[2:] == [("add", 2, 3)]
    ids = [part.tool_call_id for message in session.messages for part in message.tool_calls]
    assert len(set(ids)) == len(ids) == 3


def approval_agent(ran: list[int], seen: list[list[str]]) -> Agent[Any, Any]:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if results := returns(messages):
            seen.append([str(r.content) for r in results])
            yield "Done."
            return
        if len(messages) > 1:  # a later turn: the conversation goes on
            yield "Fine."
            return
        yield {0: DeltaToolCall(name="transfer", json_args='{"amount": 10}', tool_call_id="call_t")}

    agent = Agent(FunctionModel(stream_function=model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int) -> str:
        ran.append(amount)
        return f"sent {amount}"

    return agent


async def test_an_approval_with_edited_arguments_runs_the_remote_tool_with_them(served: list[AGUIServer]) -> None:
    ran: list[int] = []
    seen: list[list[str]] = []
    server = serve(served, approval_agent(ran, seen))
    session = ChatSession(AGUITransport(server.url))
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=10)
    (card,) = session.pending_approvals
    assert (card.state, card.provider_executed) == (ToolCallState.AWAITING_APPROVAL, True)
    assert card.approval_reason is not None
    assert "transfer" in card.approval_reason
    assert ran == []  # nothing ran while the person decides
    session.approve(card.tool_call_id, "approved", arguments={"amount": 3})
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert ran == [3]
    assert card.state is ToolCallState.COMPLETED
    assert card.outcome is not None
    assert card.outcome.value == "sent 3"
    assert card.edited_arguments == {"amount": 3}
    assert card.parsed_arguments == {"amount": 10}
    assert seen == [["sent 3"]]
    assert reply.text == "Done."


async def test_a_decline_never_runs_the_remote_tool_and_the_model_hears_why(served: list[AGUIServer]) -> None:
    ran: list[int] = []
    seen: list[list[str]] = []
    server = serve(served, approval_agent(ran, seen))
    session = ChatSession(AGUITransport(server.url))
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=10)
    session.approve(session.pending_approvals[0].tool_call_id, "rejected", reason="too much")
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert ran == []
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    assert seen == [["too much"]]  # the agent's model was told the person's reason
    assert reply.text == "Done."
    # The next turn sends the declined call with its result, and the conversation goes on.
    again = await session.send("ok")
    assert again.status is MessageStatus.COMPLETED, again.error
    assert again.text == "Fine."


async def test_a_pause_on_a_call_id_the_agent_reuses_in_a_later_run_resumes_that_call(
    served: list[AGUIServer],
) -> None:
    ran: list[tuple[str, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Adds two numbers in the kernel."""
        ran.append(("add", a + b))
        return a + b

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        done = returns(messages)
        if not done:
            yield {0: DeltaToolCall(name="add", json_args='{"a": 2, "b": 3}', tool_call_id="call_0")}
        elif done[0].tool_name == "add":  # the next response's ids start again at "call_0"
            yield {0: DeltaToolCall(name="transfer", json_args='{"amount": 5}', tool_call_id="call_0")}
        else:
            yield f"Done: {done[0].content}."

    agent = Agent(FunctionModel(stream_function=model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int) -> str:
        ran.append(("transfer", amount))
        return f"sent {amount}"

    server = serve(served, agent)
    session = ChatSession(AGUITransport(server.url), tools=[add])
    task = asyncio.create_task(session.send("add, then pay"))
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=10)
    (card,) = session.pending_approvals
    assert (card.tool_name, card.provider_executed) == ("transfer", True)
    assert card.tool_call_id != "call_0"
    session.approve(card.tool_call_id, "approved", arguments={"amount": 7})
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert ran == [("add", 5), ("transfer", 7)]
    assert card.state is ToolCallState.COMPLETED
    assert reply.text == "Done: sent 7."
    resumed = json.loads(server.bodies[-1])
    assert resumed["messages"][-1]["toolCalls"][0]["id"] == "call_0"  # the call the agent paused on, by its id
    assert resumed["resume"][0]["payload"] == {"approved": True, "editedArgs": {"amount": 7}}


async def test_a_pause_on_a_call_id_the_agent_reuses_in_a_later_turn_is_answered_too(
    served: list[AGUIServer],
) -> None:
    ran: list[int] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if returns(messages):
            yield "Done."
            return
        # Each turn's call is "call_0", so the agent's pause (its id made from the call's) has the same id too.
        amount = 10 * (len(messages) // 3 + 1)
        yield {0: DeltaToolCall(name="transfer", json_args=json.dumps({"amount": amount}), tool_call_id="call_0")}

    agent = Agent(FunctionModel(stream_function=model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int) -> str:
        ran.append(amount)
        return f"sent {amount}"

    server = serve(served, agent)
    session = ChatSession(AGUITransport(server.url))

    async def pay(text: str) -> None:
        task = asyncio.create_task(session.send(text))
        await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=10)
        (card,) = session.pending_approvals
        session.approve(card.tool_call_id, "approved")
        reply = await asyncio.wait_for(task, timeout=10)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert reply.tool_calls[0].state is ToolCallState.COMPLETED

    await pay("pay")
    await pay("pay again")
    assert ran == [10, 20]
    first, second = (part for message in session.messages for part in message.tool_calls)
    assert first.tool_call_id != second.tool_call_id


async def test_a_stop_mid_stream_closes_the_connection_and_the_server_sees_it(served: list[AGUIServer]) -> None:
    cancelled: list[bool] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        try:
            for index in range(500):
                yield f"word{index} "
                await asyncio.sleep(0.02)
        except BaseException:
            cancelled.append(True)
            raise

    server = serve(served, Agent(FunctionModel(stream_function=model)))
    session = ChatSession(AGUITransport(server.url))
    task = asyncio.create_task(session.send("talk"))
    await wait_for(lambda: bool(session.messages) and len(session.messages[-1].text) > 20, timeout=10)
    assert session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    kept = reply.text
    assert kept.startswith("word0 word1")
    await wait_for(lambda: bool(server.disconnects) and bool(cancelled), timeout=10)
    assert reply.text == kept


async def test_a_server_that_is_down_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/agent"
    started = time.monotonic()
    reply = await ChatSession(AGUITransport(url)).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    # Before: "Could not reach The AG-UI agent at ...", a capital mid-sentence.
    assert f"Could not reach the AG-UI agent at {url}: " in reply.error
    assert "Is the server running" in reply.error
    assert time.monotonic() - started < 10


async def test_run_error_ends_the_reply_with_the_agents_message_and_keeps_what_streamed(
    served: list[AGUIServer],
) -> None:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        yield "Starting"
        raise RuntimeError("the model backend fell over")

    server = serve(served, Agent(FunctionModel(stream_function=model)))
    reply = await ChatSession(AGUITransport(server.url)).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "reported an error" in reply.error
    assert "fell over" in reply.error
    assert reply.text == "Starting"


@pytest.mark.parametrize(
    ("status", "words"),
    [(401, "unauthenticated (401): check the headers="), (403, "(403)"), (404, "check the URL"), (503, "(503)")],
)
async def test_http_failures_are_clear_and_never_show_the_headers(
    served: list[AGUIServer], status: int, words: str
) -> None:
    def refuse(request: Request) -> Response | None:
        return JSONResponse({"detail": f"no entry for {request.headers.get('authorization')}"}, status_code=status)

    async def never(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        raise AssertionError("the request was refused before the agent ran")
        yield ""

    server = serve(served, Agent(FunctionModel(stream_function=never)), before=refuse)
    transport = AGUITransport(server.url, headers={"Authorization": "Bearer very-secret-value-123"})
    reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert words in reply.error
    assert "very-secret-value-123" not in reply.error


async def test_the_thread_is_the_conversation_and_each_request_a_new_run(served: list[AGUIServer]) -> None:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        yield "ok"

    server = serve(served, Agent(FunctionModel(stream_function=model)))
    session = ChatSession(AGUITransport(server.url))
    await session.send("one")
    await session.send("two")
    first, second = (json.loads(body) for body in server.bodies)
    assert first["threadId"] == second["threadId"] == session.conversation_id
    assert first["runId"] != second["runId"]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["protocolVersion"] == "1.0"


def canned(*lines: str, content_type: str = "text/event-stream") -> Any:
    """A ``before`` hook that answers every run with these server-sent-event data lines instead of the agent's."""

    def answer(request: Request) -> Response:
        return Response("".join(f"data: {line}\n\n" for line in lines), media_type=content_type)

    return answer


def idle_agent() -> Agent[Any, Any]:
    async def never(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        raise AssertionError("the canned answer stands in for the agent")
        yield ""

    return Agent(FunctionModel(stream_function=never))


_RUN = '{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}'
_TEXT = [
    '{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}',
    '{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "kept "}',
]


@pytest.mark.parametrize(
    ("rest", "words"),
    [
        (['{"type": "TOOL_CALL_ARGS", "toolCallId": "c"}'], "sent a malformed TOOL_CALL_ARGS event"),
        (["{oops"], "sent stream data that is not JSON"),
        ([], "ended its event stream before the run finished"),
    ],
)
async def test_a_broken_stream_is_a_clear_error_that_keeps_what_streamed(
    served: list[AGUIServer], rest: list[str], words: str
) -> None:
    server = serve(served, idle_agent(), before=canned(_RUN, *_TEXT, *rest))
    reply = await ChatSession(AGUITransport(server.url)).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert words in reply.error
    assert reply.text == "kept "


async def test_an_answer_that_is_not_an_event_stream_is_a_clear_error(served: list[AGUIServer]) -> None:
    server = serve(served, idle_agent(), before=canned("<html>", content_type="text/html"))
    reply = await ChatSession(AGUITransport(server.url)).send("hi")
    assert reply.error is not None
    assert "answered with text/html" in reply.error
    assert "not an event stream" in reply.error


async def test_each_pause_is_answered_once(served: list[AGUIServer]) -> None:
    interrupt = '{"id": "int-c", "reason": "tool_call", "toolCallId": "c", "message": "Pay?"}'
    pause = [
        '{"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "pay"}',
        '{"type": "TOOL_CALL_END", "toolCallId": "c"}',
        '{"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "interrupt", "interrupts": ['
        + interrupt
        + "]}}",
    ]
    answers = iter([[_RUN, *pause], [_RUN, '{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}']])

    def next_answer(request: Request) -> Response:
        return canned(*next(answers))(request)  # type: ignore[no-any-return]

    server = serve(served, idle_agent(), before=next_answer)
    transport = AGUITransport(server.url)
    session = ChatSession(transport)
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=10)
    session.approve("c", "rejected")
    reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    resumed = json.loads(server.bodies[1])
    assert resumed["resume"] == [{"interruptId": "int-c", "status": "resolved", "payload": {"approved": False}}]
    # The same reply asked about again (a later request of the turn) carries the declined call as a result instead.
    again = transport.run_input(
        ChatRequest(messages=session.messages, conversation_id=session.conversation_id)
    ).model_dump(by_alias=True)
    assert again.get("resume") is None
    assert [m["role"] for m in again["messages"]][-1] == "tool"


def test_importing_ai_widgets_loads_neither_ag_ui_nor_pydantic_ai() -> None:
    code = "import sys, ai_widgets; print([m for m in ('ag_ui', 'pydantic_ai') if m in sys.modules])"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "ag_ui" not in shown
    assert "pydantic_ai" not in shown
