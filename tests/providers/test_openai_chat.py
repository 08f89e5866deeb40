"""OpenAIChatTransport: recorded provider streams through the real SDK, the request mapping, and two-request turns
against a scripted OpenAI-compatible server.

What every transport does the same way (timeouts, connections, HTTP errors, keys, how a stream ends, Stop) is in
``test_contract.py``, and this transport's quirks in ``test_openai_chat_quirks.py``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

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
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.transports import ChatRequest, OpenAIChatTransport, ProviderError
from tests.helpers import wait_for
from tests.providers.histories import finish
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.kits import expected, recorded
from tests.providers.kits.openai_chat import (
    FAKE_KEY,
    Call,
    Emulator,
    MockAPI,
    collect,
    get_time,
    pieces,
    sse_reply,
    user_request,
)
from tests.providers.loopback import Handler, Response, Server, loopback, reframe

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
    api = MockAPI(recorded(name), chunk_size=chunk_size)
    return OpenAIChatTransport(
        "gpt-4o", client=api.client(base_url=FIXTURE_HOSTS.get(name, "https://api.openai.com/v1"))
    )


# --- recorded streams -------------------------------------------------------------------------------------------------


def check_events(name: str, events: list[StreamEvent], error: Exception | None) -> None:
    want = expected(name)
    assert isinstance(events[0], ResponseStarted)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == want["text"] + (want["refusal"] or "")  # a refusal is shown as text
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.tool_call_id, s.tool_name) for s in starts] == [(c["id"], c["name"]) for c in want["tool_calls"]]
    for call in want["tool_calls"]:
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
    if want["usage"] is None:
        assert usages == []
    else:
        usage = want["usage"]
        assert usages[-1] == UsageUpdate(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            cached_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
            reasoning_tokens=(usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0),
        )
    if want["finish_reason"] is None:
        assert not any(isinstance(e, ResponseCompleted | ToolCallStarted | ToolCallArgumentsDone) for e in events)
        assert isinstance(error, ProviderError)
    else:
        assert error is None
        assert events[-1] == ResponseCompleted(FinishReason(want["finish_reason"]))
        assert isinstance(events[-2], UsageUpdate)  # the reply completes after its usage


def check_reply(name: str, reply: Message) -> None:
    want = expected(name)
    assert reply.text == want["text"] + (want["refusal"] or "")
    calls = reply.tool_calls
    assert [(c.tool_call_id, c.tool_name, c.arguments, c.parsed_arguments) for c in calls] == [
        (c["id"], c["name"], c["arguments"], c["parsed_arguments"]) for c in want["tool_calls"]
    ]
    assert all(c.state is ToolCallState.PENDING for c in calls)
    assert reply.usage.requests == 1
    if want["usage"] is not None:
        usage = want["usage"]
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )
        assert reply.usage.cached_tokens == (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        assert reply.usage.reasoning_tokens == (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    if "error" in want:
        error = want["error"]
        assert reply.status is MessageStatus.ERROR
        assert reply.error == (f"The model request failed: ProviderError: Groq: {error['code']}: {error['message']}")
        assert reply.finish_reason is None
        assert reply.reasoning == recorded_reasoning(recorded(name))
    else:
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert reply.finish_reason is FinishReason(want["finish_reason"])


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
    body = recorded(name)
    with serve(lambda request: Response(chunks=pieces(body, chunk_size))) as server:
        transport = OpenAIChatTransport("gpt-4o", base_url=server.url, api_key=FAKE_KEY, provider_name="Groq")
        events, error = await collect(transport, user_request())
    check_events(name, events, error)


@pytest.mark.parametrize("chunk_size", [None, 1, 7], ids=["whole", "1-byte", "7-byte"])
@pytest.mark.parametrize("name", CHAT_FIXTURES)
async def test_recorded_stream_framed_otherwise_gives_the_same_events(name: str, chunk_size: int | None) -> None:
    # CRLF line ends, comment lines, each payload split over two data: lines.
    plain, plain_error = await collect(transport_for(name, None), user_request())
    api = MockAPI(reframe(recorded(name)), chunk_size=chunk_size)
    client = api.client(base_url=FIXTURE_HOSTS.get(name, "https://api.openai.com/v1"))
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


# --- request building -------------------------------------------------------------------------------------------------


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Gets the weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny", "celsius": 21}


async def first_body(transport_kwargs: dict[str, Any], request: ChatRequest, model: str = "gpt-4o") -> dict[str, Any]:
    api = MockAPI(b"".join(sse_reply(text="ok")))
    transport = OpenAIChatTransport(model, client=api.client(), **transport_kwargs)
    _, error = await collect(transport, request)
    assert error is None
    return api.bodies[0]


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
    api = MockAPI(*bodies)
    session = ChatSession(OpenAIChatTransport("gpt-4o", client=api.client()), tools=[draw])
    reply = await session.send("Draw a circle")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    *_, tool_message, images = api.bodies[1]["messages"]
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


# --- tool flows against the emulator ----------------------------------------------------------------------------------


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
    emulator = Emulator(lambda body: [Call("call_w1", "get_weather", {"city": "Lisbon"})], weather_answer)
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
    emulator = Emulator(lambda body: [Call("call_d1", "delete_file", {"path": "/tmp/a"})], delete_answer)
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
    emulator = Emulator(
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
    emulator = Emulator(lambda body: calls, lambda results: " | ".join(r["tool_call_id"] for r in results))
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
