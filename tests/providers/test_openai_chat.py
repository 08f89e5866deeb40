"""OpenAIChatTransport: recorded provider streams through the real SDK, the request mapping, two-request turns
against a scripted OpenAI-compatible server, HTTP failures, and keys that never leak."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx2
import pytest

from ai_widgets import (
    ChatSession,
    FinishReason,
    Message,
    RequestOptions,
    SessionOptions,
    ToolCallState,
    ToolChoice,
    ToolOutcome,
    ToolRisk,
    tool,
)
from ai_widgets.events import (
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, ReasoningPart, Role, TextPart, ToolCallPart, dump_messages
from ai_widgets.transports import ChatRequest, OpenAIChatTransport, ProviderError
from tests.helpers import wait_for
from tests.providers.histories import finish
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.loopback import Handler, Request, Response, Server, loopback, reframe
from tests.providers.openai_chat_emulator import (
    FAKE_KEY,
    Call,
    ChatEmulator,
    fixture_body,
    fixture_expected,
    mock_client,
    pieces,
    sse_reply,
    sse_response,
)

CHAT_FIXTURES = [
    "openai_chat_parallel_tools_usage",
    "openai_chat_parallel_mixed_empty_args",
    "openai_chat_refusal",
    "groq_chat_reasoning_then_error_event",
    "qwen_chat_tool_call_empty_id_deltas",
]
# Where each recording came from: the name in error messages follows the host.
FIXTURE_HOSTS = {
    "groq_chat_reasoning_then_error_event": "https://api.groq.com/openai/v1",
    "qwen_chat_tool_call_empty_id_deltas": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
}


Serve = Callable[[Handler], AbstractContextManager[Server]]


@pytest.fixture(scope="module")
def _shared_server() -> Iterator[tuple[Server, dict[str, Handler]]]:
    # One loopback server for the module: starting and stopping one costs about half a second.
    holder: dict[str, Handler] = {}
    with loopback(lambda request: holder["handler"](request)) as server:
        yield server, holder


@pytest.fixture
def serve(_shared_server: tuple[Server, dict[str, Handler]]) -> Serve:
    """Serves a handler on the module's loopback server for one test."""
    server, holder = _shared_server

    @contextmanager
    def serving(handler: Handler) -> Iterator[Server]:
        holder["handler"] = handler
        server.requests.clear()
        yield server

    return serving


def user_request(text: str = "hi", **options: Any) -> ChatRequest:
    return ChatRequest(messages=[Message.user(text)], options=RequestOptions(**options))


async def collect(transport: OpenAIChatTransport, request: ChatRequest) -> tuple[list[StreamEvent], Exception | None]:
    events: list[StreamEvent] = []
    try:
        async for event in transport.stream(request):
            events.append(event)
    except Exception as exc:
        return events, exc
    return events, None


def sse_payloads(body: bytes) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a recorded body's ``data:`` lines (an independent reading, for expectations)."""
    for line in body.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


def recorded_reasoning(body: bytes) -> str:
    return "".join(
        choice["delta"].get("reasoning") or ""
        for payload in sse_payloads(body)
        for choice in payload.get("choices", [])
    )


def transport_for(name: str, chunk_size: int | None) -> OpenAIChatTransport:
    client, _ = mock_client(
        fixture_body(name), chunk_size=chunk_size, base_url=FIXTURE_HOSTS.get(name, "https://api.openai.com/v1")
    )
    return OpenAIChatTransport("gpt-4o", client=client)


# --- 1. recorded streams ----------------------------------------------------------------------------------------


def check_events(name: str, events: list[StreamEvent], error: Exception | None) -> None:
    expected = fixture_expected(name)
    assert isinstance(events[0], ResponseStarted)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == expected["text"] + (expected["refusal"] or "")  # a refusal is shown as text
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.tool_call_id, s.tool_name) for s in starts] == [(c["id"], c["name"]) for c in expected["tool_calls"]]
    for call in expected["tool_calls"]:
        deltas = [e.delta for e in events if isinstance(e, ToolCallDelta) and e.tool_call_id == call["id"]]
        assert "".join(deltas) == call["arguments"]
        assert json.loads("".join(deltas)) == call["parsed_arguments"]
        assert len(deltas) == call["non_empty_arg_deltas"]
        position = {id(e): i for i, e in enumerate(events)}
        (completed,) = [e for e in events if isinstance(e, ToolCallArgumentsDone) and e.tool_call_id == call["id"]]
        last_delta = max(
            i for i, e in enumerate(events) if isinstance(e, ToolCallDelta) and e.tool_call_id == call["id"]
        )
        assert position[id(completed)] > last_delta
    usages = [e for e in events if isinstance(e, UsageUpdate)]
    if expected["usage"] is None:
        assert usages == []
    else:
        usage = expected["usage"]
        assert usages[-1] == UsageUpdate(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            cached_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
            reasoning_tokens=(usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0),
        )
    if expected["finish_reason"] is None:
        assert not any(isinstance(e, ResponseCompleted | ToolCallStarted | ToolCallArgumentsDone) for e in events)
        assert isinstance(error, ProviderError)
    else:
        assert error is None
        assert events[-1] == ResponseCompleted(FinishReason(expected["finish_reason"]))
        assert isinstance(events[-2], UsageUpdate)  # the reply completes after its usage


def check_reply(name: str, reply: Message) -> None:
    expected = fixture_expected(name)
    assert reply.text == expected["text"] + (expected["refusal"] or "")
    calls = reply.tool_calls
    assert [(c.tool_call_id, c.tool_name, c.arguments, c.parsed_arguments) for c in calls] == [
        (c["id"], c["name"], c["arguments"], c["parsed_arguments"]) for c in expected["tool_calls"]
    ]
    assert all(c.state is ToolCallState.PENDING for c in calls)
    assert reply.usage.requests == 1
    if expected["usage"] is not None:
        usage = expected["usage"]
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )
        assert reply.usage.cached_tokens == (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        assert reply.usage.reasoning_tokens == (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    if "error" in expected:
        error = expected["error"]
        assert reply.status is MessageStatus.ERROR
        assert reply.error == (f"The model request failed: ProviderError: Groq: {error['code']}: {error['message']}")
        assert reply.finish_reason is None
        assert reply.reasoning == recorded_reasoning(fixture_body(name))
    else:
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert reply.finish_reason is FinishReason(expected["finish_reason"])


@pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])
@pytest.mark.parametrize("name", CHAT_FIXTURES)
async def test_recorded_stream_events(name: str, chunk_size: int | None) -> None:
    events, error = await collect(transport_for(name, chunk_size), user_request())
    check_events(name, events, error)


@pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])
@pytest.mark.parametrize("name", CHAT_FIXTURES)
async def test_recorded_stream_final_message(name: str, chunk_size: int | None) -> None:
    session = ChatSession(transport_for(name, chunk_size), options=SessionOptions(execute_tools=False))
    reply = await session.send("hi")
    check_reply(name, reply)
    assert not session.busy


@pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])
@pytest.mark.parametrize("name", CHAT_FIXTURES)
async def test_recorded_stream_over_real_http(name: str, chunk_size: int | None, serve: Serve) -> None:
    body = fixture_body(name)
    with serve(lambda request: Response(chunks=pieces(body, chunk_size))) as server:
        transport = OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY, provider_name="Groq")
        events, error = await collect(transport, user_request())
    check_events(name, events, error)


@pytest.mark.parametrize("chunk_size", [None, 1, 7], ids=["whole", "1-byte", "7-byte"])
@pytest.mark.parametrize("name", CHAT_FIXTURES)
async def test_recorded_stream_framed_otherwise_gives_the_same_events(name: str, chunk_size: int | None) -> None:
    # CRLF line ends, comment lines, each payload split over two data: lines.
    plain, plain_error = await collect(transport_for(name, None), user_request())
    client, _ = mock_client(
        reframe(fixture_body(name)),
        chunk_size=chunk_size,
        base_url=FIXTURE_HOSTS.get(name, "https://api.openai.com/v1"),
    )
    events, error = await collect(OpenAIChatTransport("gpt-4o", client=client), user_request())
    check_events(name, events, error)
    assert events == plain
    assert repr(error) == repr(plain_error)


def test_ollama_native_ndjson_is_not_this_transport() -> None:
    pytest.skip(
        "ollama_cloud_tool_call_nonstream.ndjson is Ollama's native /api/chat (NDJSON, arguments as a JSON object, "
        "not streamed): not the Chat Completions wire format. Ollama's /v1/chat/completions speaks OpenAI's format "
        "and is served by this transport with base_url='http://localhost:11434/v1'."
    )


# --- 2. request mapping -----------------------------------------------------------------------------------------


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Gets the weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny", "celsius": 21}


@tool
def get_time() -> str:
    """Gets the time."""
    return "12:00"


async def first_body(transport_kwargs: dict[str, Any], request: ChatRequest, model: str = "gpt-4o") -> dict[str, Any]:
    client, captured = mock_client(b"".join(sse_reply(text="ok")))
    transport = OpenAIChatTransport(model, client=client, **transport_kwargs)
    _, error = await collect(transport, request)
    assert error is None
    return captured.bodies[0]


async def test_request_carries_system_prompt_tools_and_options() -> None:
    request = ChatRequest(
        messages=[Message.user("weather in Lisbon?")],
        tools=[get_weather.definition],
        options=RequestOptions(system_prompt="Be brief.", temperature=0.2, max_tokens=300),
    )
    body = await first_body({}, request)
    assert body == {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "weather in Lisbon?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": get_weather.definition.model_schema()}],
        "tool_choice": "auto",
        "temperature": 0.2,
        "max_tokens": 300,
    }


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (ToolChoice.AUTO, "auto"),
        (ToolChoice.REQUIRED, "required"),
        (ToolChoice.specific("get_time"), {"type": "function", "function": {"name": "get_time"}}),
    ],
)
async def test_tool_choice(choice: ToolChoice, sent: Any) -> None:
    request = ChatRequest(
        messages=[Message.user("x")],
        tools=[get_weather.definition, get_time.definition],
        options=RequestOptions(tool_choice=choice),
    )
    body = await first_body({"parallel_tool_calls": False}, request)
    assert body["tool_choice"] == sent
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert body["parallel_tool_calls"] is False


async def test_no_tools_sends_neither_tools_nor_tool_choice() -> None:
    request = ChatRequest(messages=[Message.user("x")], tools=[], options=RequestOptions(tool_choice=ToolChoice.NONE))
    body = await first_body({"parallel_tool_calls": True}, request)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & body.keys()


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("gpt-4o", "max_tokens"),
        ("llama3.2", "max_tokens"),
        ("o3-mini", "max_completion_tokens"),
        ("o1", "max_completion_tokens"),
        ("o4-mini", "max_completion_tokens"),
        ("gpt-5-mini", "max_completion_tokens"),
    ],
)
async def test_max_tokens_field_follows_the_model(model: str, field: str) -> None:
    body = await first_body({}, user_request(max_tokens=64), model=model)
    assert body[field] == 64
    assert {"max_tokens", "max_completion_tokens"} & body.keys() == {field}


async def test_extra_is_merged_into_the_body_last_and_usage_can_be_off() -> None:
    extra = {"top_p": 0.5, "reasoning_effort": "low", "options": {"num_ctx": 8192}, "temperature": 0.9}
    body = await first_body({"stream_usage": False}, user_request(temperature=0.1, extra=extra))
    assert body["top_p"] == 0.5
    assert body["reasoning_effort"] == "low"
    assert body["options"] == {"num_ctx": 8192}
    assert body["temperature"] == 0.9
    assert "stream_options" not in body


def finished(part: ToolCallPart, state: ToolCallState, outcome: ToolOutcome) -> ToolCallPart:
    return finish(part, state, outcome)


async def test_history_maps_every_call_with_its_result_in_order() -> None:
    first = Message(
        Role.ASSISTANT,
        [
            ReasoningPart("let me look", provider="anthropic", provider_data={"signature": "sig"}),
            TextPart("Looking"),
            TextPart(" it up."),
            finished(
                ToolCallPart("c1", "get_weather", '{"city": "Lisbon"}'),
                ToolCallState.COMPLETED,
                ToolOutcome.success({"sky": "sunny"}),
            ),
            finished(
                ToolCallPart("c2", "delete_file", '{"path": "/"}'),
                ToolCallState.REJECTED,
                ToolOutcome.failure("The person declined this call, so nothing was done. Their reason: no"),
            ),
            finished(
                ToolCallPart("c3", "slow", ""), ToolCallState.CANCELLED, ToolOutcome.failure("Stopped before it ran.")
            ),
            finished(
                ToolCallPart("c4", "web_search", '{"q": "x"'), ToolCallState.FAILED, ToolOutcome.failure("It broke.")
            ),
            ReasoningPart("now answer"),
            TextPart("It is sunny."),
        ],
    )
    first.parts[6].provider_executed = True  # type: ignore[union-attr]
    in_progress = Message(
        Role.ASSISTANT,
        [finished(ToolCallPart("c5", "get_time", "{}"), ToolCallState.COMPLETED, ToolOutcome.success("12:00"))],
        status=MessageStatus.IN_PROGRESS,
    )
    request = ChatRequest(
        messages=[Message.user("a"), first, Message.user("b"), in_progress],
        options=RequestOptions(system_prompt="sys"),
    )
    body = await first_body({}, request)
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": "Looking it up.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "delete_file", "arguments": '{"path": "/"}'}},
                {"id": "c3", "type": "function", "function": {"name": "slow", "arguments": "{}"}},
                {"id": "c4", "type": "function", "function": {"name": "web_search", "arguments": '{"q": "x"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"sky":"sunny"}'},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "The person declined this call, so nothing was done. Their reason: no",
        },
        {"role": "tool", "tool_call_id": "c3", "content": "Stopped before it ran."},
        {"role": "tool", "tool_call_id": "c4", "content": "It broke."},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c5", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c5", "content": "12:00"},
    ]
    assert "now answer" not in json.dumps(body)
    assert "let me look" not in json.dumps(body)
    assert "sig" not in json.dumps(body)


async def test_images_of_tool_results_follow_the_results_as_a_user_message() -> None:
    history = image_history()
    assert history[1].tool_calls[0].result_for_model() == CHART_TEXT
    body = await first_body({}, ChatRequest(messages=history))
    calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in [
            ("call_chart", "plot", '{"series": "a"}'),
            ("call_plain", "lookup", "{}"),
            ("call_photo", "snap", "{}"),
            ("call_failed", "snap", "{}"),
        ]
    ]
    assert body["messages"] == [
        {"role": "user", "content": "plot"},
        {"role": "assistant", "content": "Plotting.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_chart", "content": CHART_TEXT},
        {"role": "tool", "tool_call_id": "call_plain", "content": '{"n":1}'},
        {"role": "tool", "tool_call_id": "call_photo", "content": ""},
        {"role": "tool", "tool_call_id": "call_failed", "content": "It broke."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The result of plot (call call_chart) includes these 2 images:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "image_url", "image_url": {"url": PHOTO_URL}},
                {"type": "text", "text": "The result of snap (call call_photo) includes this image:"},
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{JPEG}"}},
            ],
        },
        {"role": "assistant", "content": "Done."},
    ]
    without = await first_body({"tool_images": False}, ChatRequest(messages=history))
    assert without["messages"] == [m for m in body["messages"] if not isinstance(m["content"], list)]


async def test_a_tools_image_reaches_the_model_in_the_follow_up_request() -> None:
    bodies = [
        b"".join(sse_reply(calls=[Call("call_d", "draw", {"shape": "circle"})])),
        b"".join(sse_reply(text="A circle.")),
    ]
    client, captured = mock_client(lambda request: sse_response(bodies[len(captured.requests) - 1]))
    session = ChatSession(OpenAIChatTransport("gpt-4o", client=client), tools=[draw])
    reply = await session.send("Draw a circle")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    *_, tool_message, images = captured.bodies[1]["messages"]
    assert tool_message == {"role": "tool", "tool_call_id": "call_d", "content": "A circle."}
    assert images == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The result of draw (call call_d) includes this image:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        ],
    }


async def test_empty_assistant_message_is_skipped() -> None:
    request = ChatRequest(messages=[Message.user("a"), Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS)])
    body = await first_body({}, request)
    assert body["messages"] == [{"role": "user", "content": "a"}]


# --- 3. two-request turns against a scripted OpenAI-compatible server -------------------------------------------


def weather_answer(results: list[dict[str, Any]]) -> str:
    data = json.loads(results[0]["content"])
    return f"It is {data['sky']} in {data['city']}, {data['celsius']} °C."


def check_follow_up(body: dict[str, Any], call_id: str, name: str, arguments: dict[str, Any], result: str) -> None:
    *_, assistant, tool_message = body["messages"]
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }
    assert tool_message == {"role": "tool", "tool_call_id": call_id, "content": result}


async def test_weather_flow_two_requests(serve: Serve) -> None:
    emulator = ChatEmulator(lambda body: [Call("call_w1", "get_weather", {"city": "Lisbon"})], weather_answer)
    with serve(emulator) as server:
        session = ChatSession(OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY), tools=[get_weather])
        reply = await session.send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "It is sunny in Lisbon, 21 °C."
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert reply.usage.requests == 2
    assert reply.usage.input_tokens == 100
    first, second = emulator.bodies
    assert first["messages"] == [{"role": "user", "content": "Weather in Lisbon?"}]
    check_follow_up(
        second, "call_w1", "get_weather", {"city": "Lisbon"}, '{"city":"Lisbon","sky":"sunny","celsius":21}'
    )
    assert second["messages"][0] == {"role": "user", "content": "Weather in Lisbon?"}
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["user", "assistant", "tool"]


deleted: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE, title="Delete file")
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


def delete_answer(results: list[dict[str, Any]]) -> str:
    return f"Result: {results[0]['content']}"


@pytest.mark.parametrize("decision", ["approved", "rejected"])
async def test_destructive_flow_waits_for_approval(decision: str, serve: Serve) -> None:
    deleted.clear()
    emulator = ChatEmulator(lambda body: [Call("call_d1", "delete_file", {"path": "/tmp/a"})], delete_answer)
    with serve(emulator) as server:
        session = ChatSession(OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY), tools=[delete_file])
        task = asyncio.create_task(session.send("delete /tmp/a"))
        await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=5)
        (waiting,) = session.pending_approvals
        assert waiting.tool_call_id == "call_d1"
        assert len(emulator.bodies) == 1  # the model is not asked again while the call waits
        session.approve("call_d1", decision, reason="not that one" if decision == "rejected" else None)
        reply = await task
    assert reply.status is MessageStatus.COMPLETED, reply.error
    if decision == "approved":
        assert deleted == ["/tmp/a"]
        result = "deleted /tmp/a"
    else:
        assert deleted == []
        assert waiting.state is ToolCallState.REJECTED
        result = "The person declined this call, so nothing was done. Their reason: not that one"
    assert reply.text == f"Result: {result}"
    check_follow_up(emulator.bodies[1], "call_d1", "delete_file", {"path": "/tmp/a"}, result)


async def test_stop_while_waiting_leaves_no_call_without_a_result(serve: Serve) -> None:
    deleted.clear()
    emulator = ChatEmulator(
        lambda body: [Call("call_s1", "delete_file", {"path": "/tmp/b"})] if len(emulator.bodies) == 1 else [],
        delete_answer,
    )
    with serve(emulator) as server:
        session = ChatSession(OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY), tools=[delete_file])
        task = asyncio.create_task(session.send("delete /tmp/b"))
        await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=5)
        session.stop()
        stopped = await task
        assert stopped.status is MessageStatus.CANCELLED
        reply = await session.send("never mind")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert deleted == []
    messages = emulator.bodies[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_s1", "content": "Stopped before it ran."}


async def test_parallel_calls_each_get_their_result_in_order(serve: Serve) -> None:
    calls = [Call("call_a", "get_weather", {"city": "Lisbon"}), Call("call_b", "get_time", {})]
    emulator = ChatEmulator(lambda body: calls, lambda results: " | ".join(r["tool_call_id"] for r in results))
    with serve(emulator) as server:
        session = ChatSession(
            OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY), tools=[get_weather, get_time]
        )
        reply = await session.send("both")
    assert reply.text == "call_a | call_b"
    messages = emulator.bodies[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_a", "call_b"]
    assert [m["tool_call_id"] for m in messages[2:]] == ["call_a", "call_b"]


# --- 4. stream quirks -------------------------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps({'id': 'chatcmpl-q', 'object': 'chat.completion.chunk', 'choices': choices, **top})}\n\n".encode()


async def stream_of(
    *chunks: bytes, base_url: str = "https://api.openai.com/v1"
) -> tuple[list[StreamEvent], Exception | None]:
    client, _ = mock_client(b"".join(chunks), base_url=base_url)
    return await collect(OpenAIChatTransport("m", client=client), user_request())


def tool_delta(
    index: int | None, *, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    call: dict[str, Any] = {"function": {}}
    if index is not None:
        call["index"] = index
    if id is not None:
        call["id"] = id
    if name is not None:
        call["function"]["name"] = name
    if arguments is not None:
        call["function"]["arguments"] = arguments
    return {"tool_calls": [call]}


def calls_of(events: list[StreamEvent]) -> list[tuple[str, str, str]]:
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    return [
        (
            s.tool_call_id,
            s.tool_name,
            "".join(e.delta for e in events if isinstance(e, ToolCallDelta) and e.tool_call_id == s.tool_call_id),
        )
        for s in starts
    ]


async def test_calls_without_ids_get_stable_generated_ids() -> None:
    events, error = await stream_of(
        chunk(tool_delta(0, name="a", arguments='{"x"')),
        chunk(tool_delta(0, arguments=": 1}")),
        chunk(tool_delta(1, id="", name="b")),
        chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    )
    assert error is None
    (id_a, name_a, args_a), (id_b, name_b, args_b) = calls_of(events)
    assert (name_a, args_a, name_b, args_b) == ("a", '{"x": 1}', "b", "{}")  # no arguments: {}
    assert id_a.startswith("call_")
    assert id_b.startswith("call_")
    assert id_a != id_b
    assert [e.tool_call_id for e in events if isinstance(e, ToolCallArgumentsDone)] == [id_a, id_b]
    assert events[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)  # no usage chunk: completes at the end


async def test_every_call_at_index_zero_with_distinct_ids() -> None:
    events, _ = await stream_of(
        chunk(tool_delta(0, id="c1", name="a", arguments="{}")),
        chunk(tool_delta(0, id="c2", name="b", arguments='{"y": 2}')),
        chunk(tool_delta(0, id="c2", arguments="")),
        chunk({}, "tool_calls"),
    )
    assert calls_of(events) == [("c1", "a", "{}"), ("c2", "b", '{"y": 2}')]


async def test_arguments_before_the_name_and_an_id_that_comes_late() -> None:
    events, _ = await stream_of(
        chunk(tool_delta(0, id="", arguments='{"q": ')),
        chunk(tool_delta(0, id="call_late", name="search", arguments='"x"}')),
        chunk({}, "tool_calls"),
    )
    assert calls_of(events) == [("call_late", "search", '{"q": "x"}')]


async def test_arguments_sent_as_an_object_are_taken_as_its_json() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "search", "arguments": {"q": "é"}}}
    empty = {"index": 1, "id": "c2", "function": {"name": "now", "arguments": {}}}
    events, error = await stream_of(chunk({"tool_calls": [call, empty]}), chunk({}, "tool_calls"))
    assert error is None
    assert calls_of(events) == [("c1", "search", '{"q": "é"}'), ("c2", "now", "{}")]


async def test_a_call_that_never_gets_a_name_is_a_clear_error() -> None:
    _, error = await stream_of(chunk(tool_delta(0, id="c1", arguments="{}")), chunk({}, "tool_calls"))
    assert isinstance(error, ProviderError)
    assert "without a function name" in str(error)


async def test_reasoning_fields_usage_variants_and_unknown_fields() -> None:
    events, error = await stream_of(
        chunk(
            {"role": "assistant", "content": None, "reasoning_content": "think", "reasoning": "think"}
        ),  # vLLM sends both
        chunk({"reasoning": " more"}),
        chunk({"content": "Hi", "audio": None, "annotations": []}, None, obfuscation="xx", service_tier="default"),
        chunk(
            {},
            "stop",
            usage={
                "prompt_tokens": 9,
                "completion_tokens": 3,
                "prompt_cache_hit_tokens": 4,
                "prompt_cache_miss_tokens": 5,
            },
        ),
        chunk(None, unknown_event=True),
        b"data: [DONE]\n\n",
        base_url="https://api.deepseek.com/v1",
    )
    assert error is None
    assert [e for e in events if isinstance(e, ReasoningDelta)] == [ReasoningDelta("think"), ReasoningDelta(" more")]
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("Hi")]
    assert events[-2:] == [UsageUpdate(9, 3, 4, 0), ResponseCompleted(FinishReason.STOP)]


async def test_content_as_typed_parts() -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    events, _ = await stream_of(
        chunk({"content": [thinking]}), chunk({"content": [{"type": "text", "text": "Hi"}]}), chunk({}, "stop")
    )
    assert [e for e in events if isinstance(e, ReasoningDelta | TextDelta)] == [ReasoningDelta("hmm"), TextDelta("Hi")]


async def test_groq_usage_in_x_groq() -> None:
    events, _ = await stream_of(
        chunk({"content": "ok"}),
        chunk({}, "stop", x_groq={"id": "req_1", "usage": {"prompt_tokens": 7, "completion_tokens": 2}}),
        b"data: [DONE]\n\n",
    )
    assert events[-2:] == [UsageUpdate(7, 2), ResponseCompleted(FinishReason.STOP)]


@pytest.mark.parametrize(
    ("reason", "mapped"),
    [
        ("length", FinishReason.LENGTH),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("function_call", FinishReason.TOOL_CALLS),
        ("eos", FinishReason.STOP),
    ],
)
async def test_finish_reasons(reason: str, mapped: FinishReason) -> None:
    events, _ = await stream_of(
        chunk({"content": "x"}), chunk({}, reason), chunk(None, usage={"prompt_tokens": 1, "completion_tokens": 1})
    )
    assert events[-1] == ResponseCompleted(mapped)


async def test_a_stream_that_breaks_off_ends_the_message_in_error() -> None:
    body = b"".join(sse_reply(text="Hello there, this is long", calls=[Call("c1", "get_time", {})]))
    cut = body[: body.index(b'"finish_reason": "tool_calls"')]  # mid-event, before the finish
    client, _ = mock_client(cut)
    session = ChatSession(OpenAIChatTransport("m", client=client), tools=[get_time])
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."
    assert reply.text == "Hello there, this is long"
    assert [c.state for c in reply.tool_calls] == [ToolCallState.SKIPPED]  # started, never run: nobody stopped it
    # The session stays usable.
    session.transport = OpenAIChatTransport("m", client=mock_client(b"".join(sse_reply(text="fine")))[0])
    assert (await session.send("again")).text == "fine"


async def test_data_that_is_not_json_is_a_clear_error() -> None:
    _, error = await stream_of(chunk({"content": "a"}), b"data: {not json\n\n")
    assert isinstance(error, ProviderError)
    assert str(error).startswith("OpenAI sent stream data that is not JSON")


async def test_in_band_error_without_code_and_after_a_started_call() -> None:
    events, error = await stream_of(
        chunk(tool_delta(0, id="c1", name="a", arguments="{")),
        b'data: {"error": {"message": "Provider disconnected"}, "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}]}\n\n',
        base_url="https://openrouter.ai/api/v1",
    )
    assert str(error) == "OpenRouter: Provider disconnected"
    assert not any(isinstance(e, ToolCallArgumentsDone | ResponseCompleted) for e in events)


async def test_in_band_error_as_a_string_and_data_that_is_not_utf8() -> None:
    events, error = await stream_of(chunk({"content": "a"}), b'data: {"error": "Upstream overloaded"}\n\n')
    assert events == [ResponseStarted(), TextDelta("a")]
    assert str(error) == "OpenAI: Upstream overloaded"
    _, error = await stream_of(chunk({"content": "a"}), b'data: {"choices": "\xff"}\n\n')
    assert str(error).startswith("OpenAI sent stream data that is not UTF-8")


async def test_nothing_after_done_is_read_as_the_reply() -> None:
    events, error = await stream_of(
        *sse_reply(text="ok"), chunk({"content": "late"}), b"data: {not json\n\n", b'data: {"error": "late"}\n\n'
    )
    assert error is None
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("ok")]
    assert events[-1] == ResponseCompleted(FinishReason.STOP)


class Body(httpx2.AsyncByteStream):
    """A response body in pieces; ``stall`` seconds before the pieces after ``stall_after``; records how far it was
    read and whether it was closed."""

    def __init__(self, pieces: list[bytes], stall_after: int | None = None, stall: float = 0.0) -> None:
        self.pieces = pieces
        self.stall_after = stall_after
        self.stall = stall
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> Any:
        for n, piece in enumerate(self.pieces):
            if n == self.stall_after:
                await asyncio.sleep(self.stall)
            self.read = n + 1
            yield piece

    async def aclose(self) -> None:
        self.closed = True


def body_client(body: Body) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    return mock_client(handler)[0]


async def test_the_body_is_read_to_its_end_after_done_so_the_connection_can_be_reused() -> None:
    body = Body([*sse_reply(text="ok"), b": trailing comment\n\n", b"\n"])
    events, error = await collect(OpenAIChatTransport("m", client=body_client(body)), user_request())
    assert error is None
    assert events[-1] == ResponseCompleted(FinishReason.STOP)
    assert body.read == len(body.pieces)
    assert body.closed


async def test_a_server_that_stalls_after_done_does_not_hold_the_reply() -> None:
    pieces = sse_reply(text="ok")
    body = Body([*pieces, b": more\n\n"], stall_after=len(pieces), stall=30)
    session = ChatSession(OpenAIChatTransport("m", client=body_client(body)))
    started = time.monotonic()
    reply = await asyncio.wait_for(session.send("hi"), 10)
    assert time.monotonic() - started < 5  # the drain gives up after a moment
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "ok"
    assert body.read == len(pieces)
    assert body.closed


async def test_a_last_event_without_its_blank_line_is_read_when_its_data_is_whole_json() -> None:
    """Before: an event the body ended in without its blank line was dropped (the WHATWG rule), so a server or proxy
    that omits the last blank line lost the finish, and the reply read as broken off."""
    events, error = await stream_of(chunk({"content": "ok"}), chunk({}, "stop").rstrip(b"\n"))
    assert error is None
    assert events == [ResponseStarted(), TextDelta("ok"), ResponseCompleted(FinishReason.STOP)]


async def test_a_last_event_cut_off_mid_json_leaves_the_reply_broken_off() -> None:
    cut = chunk({}, "stop")
    session = ChatSession(OpenAIChatTransport("m", client=mock_client(chunk({"content": "ok"}) + cut[:-9])[0]))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."
    assert reply.text == "ok"


# --- 5. HTTP failures, retries, timeouts ----------------------------------------------------------------------------


def status_handler(status: int, body: dict[str, Any], then: bytes | None = None) -> Any:
    count = {"n": 0}

    def handle(request: httpx2.Request) -> httpx2.Response:
        count["n"] += 1
        if then is not None and count["n"] > 1:
            return sse_response(then)
        return httpx2.Response(status, json=body, headers={"retry-after-ms": "1"})

    return handle


@pytest.mark.parametrize(
    ("status", "needle"),
    [
        (401, "OpenAI rejected the API key (401): check OPENAI_API_KEY or api_key=."),
        (403, "OpenAI refused access (403): the key in OPENAI_API_KEY or api_key= lacks permission"),
        (404, "OpenAI: not found (404)"),
        (400, "OpenAI refused the request (400)."),
    ],
)
async def test_http_errors_are_clear_and_key_free(status: int, needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {FAKE_KEY}. Bearer {FAKE_KEY}",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    client, captured = mock_client(status_handler(status, body))
    session = ChatSession(OpenAIChatTransport("gpt-4o", client=client))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert needle in reply.error  # type: ignore[operator]
    assert "Incorrect API key provided" in reply.error  # type: ignore[operator]  # the provider's own words
    assert "SECRET" not in reply.error  # type: ignore[operator]
    assert FAKE_KEY not in dump_messages(session.messages)
    assert len(captured.requests) == 1  # 4xx other than 408/409/429 is not retried


async def test_429_is_retried_then_reported() -> None:
    client, captured = mock_client(status_handler(429, {"error": {"message": "Rate limit reached"}}), max_retries=2)
    events, error = await collect(OpenAIChatTransport("gpt-4o", client=client), user_request())
    assert len(captured.requests) == 3
    assert events == []
    assert str(error) == "OpenAI is rate limiting or out of quota (429), even after retries. Rate limit reached"


async def test_5xx_is_retried_before_the_stream_and_then_succeeds() -> None:
    client, captured = mock_client(
        status_handler(503, {"error": {"message": "overloaded"}}, then=b"".join(sse_reply(text="ok"))), max_retries=2
    )
    session = ChatSession(OpenAIChatTransport("gpt-4o", client=client))
    reply = await session.send("hi")
    assert reply.text == "ok"
    assert reply.status is MessageStatus.COMPLETED
    assert len(captured.requests) == 2


async def test_5xx_after_retries() -> None:
    client, captured = mock_client(status_handler(500, {"error": {"message": "boom"}}), max_retries=1)
    _, error = await collect(OpenAIChatTransport("gpt-4o", client=client), user_request())
    assert str(error) == "OpenAI had a server error (500), even after retries. boom"
    assert len(captured.requests) == 2


async def test_timeout_before_the_first_byte(serve: Serve) -> None:
    def slow(request: Request) -> Response:
        time.sleep(1.0)
        return Response(chunks=sse_reply(text="late"))

    with serve(slow) as server:
        transport = OpenAIChatTransport("m", base_url=server.url, timeout=0.2, max_retries=0)
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == (
        f"The model request failed: ProviderError: the server at {server.url} did not answer in time "
        "(timeout 0.2 s, even after retries)."
    )


async def test_timeout_mid_stream_is_not_retried(serve: Serve) -> None:
    def stalls(request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            yield from sse_reply(text="partial", done=False)[:2]
            time.sleep(1.0)

        return Response(chunks=chunks())

    with serve(stalls) as server:
        transport = OpenAIChatTransport("m", base_url=server.url, timeout=0.3, max_retries=2)
        events, error = await collect(transport, user_request())
    assert len(server.requests) == 1
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("part")]
    assert str(error) == f"the server at {server.url} did not answer in time (timeout 0.3 s)."


async def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    transport = OpenAIChatTransport("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    _, error = await collect(transport, user_request())
    assert isinstance(error, ProviderError)
    assert str(error).startswith(f"Could not reach the server at http://127.0.0.1:{port}/v1, even after retries")


async def test_connection_dropped_mid_stream() -> None:
    server_sock = socket.socket()
    server_sock.bind(("127.0.0.1", 0))
    server_sock.listen(1)
    port = server_sock.getsockname()[1]

    def serve() -> None:
        conn, _ = server_sock.accept()
        conn.recv(65536)
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 100000\r\n\r\n"
        conn.sendall(head + sse_reply(text="abcd")[1])
        time.sleep(0.1)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        transport = OpenAIChatTransport("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2)
        events, error = await collect(transport, user_request())
    finally:
        thread.join(2)
        server_sock.close()
    assert TextDelta("abcd") in events
    assert isinstance(error, ProviderError)
    assert str(error).startswith(f"The connection to the server at http://127.0.0.1:{port}/v1 broke off mid-reply")


async def test_stop_mid_stream_closes_the_response(serve: Serve) -> None:
    sent: list[int] = []
    finished_serving = threading.Event()

    def endless(request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            try:
                yield from sse_reply(text="x", done=False)[:2]
                for n in range(500):
                    time.sleep(0.01)
                    sent.append(n)
                    yield chunk({"content": "y"})
            finally:
                finished_serving.set()  # the server saw the connection go (or sent everything)

        return Response(chunks=chunks())

    with serve(endless) as server:
        session = ChatSession(OpenAIChatTransport("m", base_url=server.url, api_key=FAKE_KEY))
        task = asyncio.create_task(session.send("go"))
        await wait_for(lambda: len(session.messages) == 2 and len(session.messages[1].text) > 3, timeout=5)
        session.stop()
        reply = await task
        assert await asyncio.to_thread(finished_serving.wait, 5)
    assert reply.status is MessageStatus.CANCELLED
    assert not session.busy
    assert len(sent) < 500  # the response was closed, not read to the end


# --- 6. keys and construction ---------------------------------------------------------------------------------


def echo_key(request: Request) -> Response:
    """A 401 whose message repeats the Authorization header, as a careless proxy might."""
    body = json.dumps({"error": {"message": f"bad key {request.headers['authorization']}"}}).encode()
    return Response(status=401, headers={"content-type": "application/json"}, chunks=[body])


async def test_keys_never_reach_messages_transcripts_or_errors(monkeypatch: pytest.MonkeyPatch, serve: Serve) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    with serve(echo_key) as server:
        for transport in (
            OpenAIChatTransport("m", base_url=server.url, api_key=FAKE_KEY, provider_name="OpenAI"),
            OpenAIChatTransport("m", base_url=server.url, api_key="sk-" + "other-SECRET987654321"),
        ):
            session = ChatSession(transport)
            reply = await session.send("hi")
            assert reply.status is MessageStatus.ERROR
            for text in (reply.error or "", dump_messages(session.messages), repr(transport)):
                assert "SECRET" not in text
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"


async def test_keys_never_enter_widget_state(serve: Serve) -> None:
    from ai_widgets.widget import ChatWidget

    with serve(echo_key) as server:
        chat = ChatWidget(transport=OpenAIChatTransport("m", base_url=server.url, api_key=FAKE_KEY))
        reply = await chat.ask("hi")
    assert reply.status is MessageStatus.ERROR
    # The widget's state: the finished messages (history) are in it.
    state = json.dumps(chat.get_state(), default=repr)
    assert "rejected the API key (401)" in state
    assert "SECRET" not in state


def test_missing_openai_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match="No API key for OpenAI: set OPENAI_API_KEY"):
        OpenAIChatTransport("gpt-4o")


async def test_local_server_without_key_gets_a_placeholder(monkeypatch: pytest.MonkeyPatch, serve: Serve) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve(lambda request: Response(chunks=sse_reply(text="hi"))) as server:
        transport = OpenAIChatTransport("llama3.2", base_url=server.url)
        _, error = await collect(transport, user_request())
    assert error is None
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_known_hosts_use_their_own_key_never_openais(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("GROQ_API_KEY", "gsk_groq")
    groq = OpenAIChatTransport("llama-3.3-70b-versatile", base_url="https://api.groq.com/openai/v1")
    assert groq.client.api_key == "gsk_groq"
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    deepseek = OpenAIChatTransport("deepseek-chat", base_url="https://api.deepseek.com/v1")
    assert deepseek.client.api_key == "not-needed"  # answered by a 401 naming DEEPSEEK_API_KEY
    assert deepseek._key_hint == "DEEPSEEK_API_KEY or api_key="
    ollama = OpenAIChatTransport("llama3.2", base_url="http://localhost:11434/v1")
    assert ollama.client.api_key == "not-needed"
    assert ollama._label == "Ollama"
    # OpenAI's key never goes to another server given as base_url= ...
    other = OpenAIChatTransport("m", base_url="http://gpu-box:8000/v1")
    assert other.client.api_key == "not-needed"
    # ... but OPENAI_BASE_URL with OPENAI_API_KEY is the SDK's convention: both were set on purpose.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-box:8000/v1")
    assert OpenAIChatTransport("m").client.api_key == FAKE_KEY


@pytest.mark.parametrize(
    "connection", [{"api_key": FAKE_KEY}, {"base_url": "http://127.0.0.1:9/v1"}, {"organization": "org-x"}]
)
def test_client_and_connection_arguments_exclude_each_other(connection: dict[str, str]) -> None:
    client, _ = mock_client(b"")
    with pytest.raises(ValueError, match=r"pass either client= or .*, not both"):
        OpenAIChatTransport("gpt-4o", client=client, **connection)
    with pytest.raises(ValueError, match="model"):
        OpenAIChatTransport("", api_key=FAKE_KEY)


def test_exported_lazily_from_transports() -> None:
    import ai_widgets.transports as transports

    assert transports.OpenAIChatTransport is OpenAIChatTransport


def test_whitespace_after_a_call_is_text_only_if_text_follows() -> None:
    """vLLM's hermes parser streams the newline between two calls as content: held back, it never becomes a text part
    between the calls; followed by words, it is text as sent."""
    from ai_widgets.events import TextDelta
    from ai_widgets.transports._openai_chat_stream import ChatCompletionsParser

    def chunk(delta: dict[str, Any]) -> bytes:
        return json.dumps({"choices": [{"index": 0, "delta": delta}]}).encode()

    def call(index: int, name: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, "id": f"c{index}", "function": {"name": name, "arguments": "{}"}}]}

    parser = ChatCompletionsParser("vLLM")
    events = [
        e
        for d in ({"content": "\n"}, call(0, "a"), {"content": "\n"}, call(1, "b"), {"content": " "})
        for e in parser.feed(chunk(d))
    ]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["\n"]  # before any call: text as sent
    parser = ChatCompletionsParser("vLLM")
    events = [e for d in (call(0, "a"), {"content": "\n"}, {"content": "Done."}) for e in parser.feed(chunk(d))]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["\nDone."]
