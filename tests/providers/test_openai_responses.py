"""OpenAIResponsesTransport: recorded streams through the real SDK, request mapping, errors, tool flows."""

from __future__ import annotations

import json
import ssl
import time
from typing import Any

import httpx2
import openai
import pytest

from ai_widgets import (
    ChatSession,
    FinishReason,
    Message,
    ReasoningPart,
    RequestOptions,
    SessionOptions,
    TextPart,
    ToolCallPart,
    ToolCallState,
    ToolChoice,
    ToolOutcome,
    ToolRisk,
    tool,
)
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, Role, dump_messages
from ai_widgets.transports import ChatRequest, OpenAIResponsesTransport, ProviderError
from tests.helpers import wait_for
from tests.providers import responses_wire as wire
from tests.providers.histories import finish
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.loopback import Request, Response, loopback, reframe

REASONING_FIXTURE = "openai_responses_reasoning_text_function_call"
ERROR_FIXTURE = "openai_responses_error_insufficient_quota"
CHUNKINGS = pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])


async def collect(transport: OpenAIResponsesTransport, request: ChatRequest | None = None) -> list[Any]:
    events = []
    async for event in transport.stream(request or ChatRequest(messages=[Message.user("hi")])):
        events.append(event)
    return events


def transport_for(*bodies: bytes, chunk_size: int | None = None, **kwargs: Any) -> tuple[Any, Any]:
    api = wire.MockAPI(*bodies, chunk_size=chunk_size)
    return OpenAIResponsesTransport("gpt-5.5", client=api.client(), **kwargs), api


def text_reply(text: str) -> bytes:
    return wire.encode([wire.created(), *wire.message([text], 0), wire.completed()])


def recorded_reasoning_item() -> dict[str, Any]:
    events = wire.sse_events(wire.fixture_bytes(REASONING_FIXTURE))
    return next(
        e["item"] for e in events if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    )


@tool
def get_capital(country: str) -> str:
    """Gets a country's capital.

    Args:
        country: The country.
    """
    return f"The capital of {country} is Spudville."


# --- recorded streams -----------------------------------------------------------------------------------------------


@CHUNKINGS
async def test_reasoning_text_function_call_events(chunk_size: int | None) -> None:
    want = wire.expected(REASONING_FIXTURE)
    transport, _ = transport_for(wire.fixture_bytes(REASONING_FIXTURE), chunk_size=chunk_size)
    events = await collect(transport)

    call = want["function_calls"][0]
    texts = [e for e in events if isinstance(e, TextDelta)]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [type(e) for e in events] == [
        ResponseStarted,
        StatusUpdate,  # "Reasoning…": the model reasons before anything shows
        ReasoningDelta,
        *[TextDelta] * len(texts),
        ToolCallStarted,
        *[ToolCallDelta] * call["arg_delta_events"],
        ToolCallArgumentsDone,
        UsageUpdate,
        ResponseCompleted,
    ]
    assert events[1] == StatusUpdate("Reasoning…")
    reasoning = events[2]
    assert reasoning.text == ""
    item = recorded_reasoning_item()
    assert reasoning.provider == "openai"
    assert reasoning.provider_data == {"items": [{"id": item["id"], "encrypted_content": item["encrypted_content"]}]}
    assert "".join(e.text for e in texts) == want["messages"][0]["text"]
    assert events[3 + len(texts)] == ToolCallStarted(call["call_id"], call["name"])
    assert {e.tool_call_id for e in deltas} == {call["call_id"]}
    assert "".join(e.delta for e in deltas) == call["arguments"]
    usage = want["usage"]
    assert events[-2] == UsageUpdate(
        input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"],
        cached_tokens=usage["input_tokens_details"]["cached_tokens"],
        reasoning_tokens=usage["output_tokens_details"]["reasoning_tokens"],
    )
    assert events[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)


@CHUNKINGS
async def test_reasoning_text_function_call_message(chunk_size: int | None) -> None:
    want = wire.expected(REASONING_FIXTURE)
    transport, _ = transport_for(wire.fixture_bytes(REASONING_FIXTURE), chunk_size=chunk_size)
    session = ChatSession(transport, tools=[get_capital], options=SessionOptions(execute_tools=False))
    reply = await session.send("What is the capital of PotatoLand?")

    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    reasoning, text, call = reply.parts
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.text == ""
    item = recorded_reasoning_item()
    assert reasoning.provider == "openai"
    assert reasoning.provider_data == {"items": [{"id": item["id"], "encrypted_content": item["encrypted_content"]}]}
    assert isinstance(text, TextPart)
    assert text.text == want["messages"][0]["text"]
    expected_call = want["function_calls"][0]
    assert isinstance(call, ToolCallPart)
    assert (call.tool_call_id, call.tool_name) == (expected_call["call_id"], expected_call["name"])
    assert call.arguments == expected_call["arguments"]
    assert call.parsed_arguments == expected_call["parsed_arguments"]
    assert call.state is ToolCallState.PENDING
    assert not call.provider_executed
    usage = want["usage"]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (usage["input_tokens"], usage["output_tokens"])
    assert reply.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert reply.usage.cached_tokens == usage["input_tokens_details"]["cached_tokens"]


def quota_message() -> str:
    error = wire.expected(ERROR_FIXTURE)["error_event"]
    return f"OpenAI: {error['code']}: {error['message']}"


@CHUNKINGS
async def test_error_fixture_raises_the_providers_code_and_message(chunk_size: int | None) -> None:
    transport, _ = transport_for(wire.fixture_bytes(ERROR_FIXTURE), chunk_size=chunk_size)
    events: list[Any] = []

    async def consume() -> None:
        async for event in transport.stream(ChatRequest(messages=[Message.user("hi")])):
            events.append(event)

    with pytest.raises(ProviderError) as raised:
        await consume()
    assert str(raised.value) == quota_message()
    assert events == [ResponseStarted()]


@CHUNKINGS
async def test_error_fixture_ends_the_message_in_error_and_the_session_stays_usable(chunk_size: int | None) -> None:
    transport, api = transport_for(wire.fixture_bytes(ERROR_FIXTURE), text_reply("Back."), chunk_size=chunk_size)
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == f"The model request failed: ProviderError: {quota_message()}"
    assert reply.parts == []
    assert reply.usage.input_tokens == 0

    again = await session.send("again")
    assert again.status is MessageStatus.COMPLETED
    assert again.text == "Back."
    assert [item.get("content") for item in api.requests[1]["input"]] == ["hi", "again"]


async def test_response_failed_alone_raises_its_error() -> None:
    events = [e for e in wire.sse_events(wire.fixture_bytes(ERROR_FIXTURE)) if e["type"] != "error"]
    transport, _ = transport_for(wire.encode(events))
    with pytest.raises(ProviderError) as raised:
        await collect(transport)
    failed = wire.expected(ERROR_FIXTURE)["response_failed_error"]
    assert str(raised.value) == f"OpenAI: {failed['code']}: {failed['message']}"


async def test_error_event_in_the_sdks_flat_form() -> None:
    body = wire.encode([wire.created(), {"type": "error", "code": "server_error", "message": "Boom.", "param": None}])
    transport, _ = transport_for(body)
    with pytest.raises(ProviderError, match=r"^OpenAI: server_error: Boom\.$"):
        await collect(transport)


@pytest.mark.parametrize("chunk_size", [None, 1, 7], ids=["whole", "1-byte", "7-byte"])
@pytest.mark.parametrize("name", [REASONING_FIXTURE, ERROR_FIXTURE])
async def test_recorded_streams_framed_otherwise_give_the_same_events(name: str, chunk_size: int | None) -> None:
    # CRLF line ends, comment lines, each payload split over two data: lines.
    async def run(body: bytes, size: int | None) -> tuple[list[Any], str | None]:
        transport, _ = transport_for(body, chunk_size=size)
        events: list[Any] = []
        try:
            async for event in transport.stream(ChatRequest(messages=[Message.user("hi")])):
                events.append(event)
        except ProviderError as exc:
            return events, str(exc)
        return events, None

    plain = await run(wire.fixture_bytes(name), None)
    assert await run(reframe(wire.fixture_bytes(name)), chunk_size) == plain
    if name == ERROR_FIXTURE:
        assert plain == ([ResponseStarted()], quota_message())
    else:
        assert plain[1] is None
        assert isinstance(plain[0][-1], ResponseCompleted)


async def test_done_ends_the_stream_and_an_error_as_a_string() -> None:
    # Some compatible servers end with data: [DONE]; nothing after it is read.
    body = text_reply("ok") + b"data: [DONE]\n\ndata: {not json\n\n"
    transport, _ = transport_for(body)
    events = await collect(transport)
    assert events == [ResponseStarted(), TextDelta("ok"), UsageUpdate(10, 5), ResponseCompleted(FinishReason.STOP)]
    transport, _ = transport_for(wire.encode([wire.created()]) + b'data: {"error": "Upstream overloaded"}\n\n')
    with pytest.raises(ProviderError, match=r"^OpenAI: Upstream overloaded$"):
        await collect(transport)


class _BrokenBody(httpx2.AsyncByteStream):
    def __init__(self, body: bytes, error: Exception) -> None:
        self.body = body
        self.error = error

    async def __aiter__(self) -> Any:
        yield self.body
        raise self.error


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            httpx2.RemoteProtocolError("peer closed connection"),
            "The connection to OpenAI broke off mid-reply: peer closed connection.",
        ),
        (httpx2.ReadTimeout("timed out"), "OpenAI did not answer in time (timeout 600 s)."),
    ],
)
async def test_the_connection_failing_mid_stream(error: Exception, message: str) -> None:
    # What breaks while the body streams reaches the transport as the HTTP library's own error (the SDK wraps only
    # what happens before the body): worded as the SDK's errors are.
    def handle(request: Any) -> Any:
        body = _BrokenBody(wire.encode([wire.created(), *wire.message(["Hal"], 0)[:2]]), error)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    client = openai.AsyncOpenAI(
        api_key=wire.FAKE_KEY,
        base_url="https://api.test/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        max_retries=2,
    )
    events: list[Any] = []

    async def consume() -> None:
        async for event in OpenAIResponsesTransport("gpt-4o", client=client).stream(
            ChatRequest(messages=[Message.user("hi")])
        ):
            events.append(event)

    with pytest.raises(ProviderError) as raised:
        await consume()
    assert str(raised.value) == message
    assert events == [ResponseStarted(), TextDelta("Hal")]


@pytest.mark.parametrize(
    "error", [httpx2.StreamClosed(), ssl.SSLError(1, "bad record mac"), ConnectionResetError(104, "reset")]
)
async def test_every_way_the_connection_breaks_mid_stream_is_worded_the_same(error: Exception) -> None:
    """Before: the HTTP errors were sorted three ways, and a body read after the connection closed (``StreamError``)
    or a reset connection left the OpenAI transports as they were raised, not as a ProviderError."""

    def handle(request: Any) -> Any:
        body = _BrokenBody(wire.encode([wire.created(), *wire.message(["Hal"], 0)[:2]]), error)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    client = openai.AsyncOpenAI(
        api_key=wire.FAKE_KEY,
        base_url="https://api.test/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )
    with pytest.raises(ProviderError) as raised:
        await collect(OpenAIResponsesTransport("gpt-4o", client=client))
    assert str(raised.value) == f"The connection to OpenAI broke off mid-reply: {error}."


def two_calls_events() -> list[dict[str, Any]]:
    """The recorded response with a second function call, built from the recorded call's event shapes."""
    events = wire.sse_events(wire.fixture_bytes(REASONING_FIXTURE))
    first = [e for e in events if e.get("output_index") == 2]
    second = json.loads(
        json.dumps(first)
        .replace("call_LabG58Uhrq9kZvR52BYKjToD", "call_second")
        .replace("fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb", "fc_second")
        .replace("PotatoLand", "Ruritania")
    )
    renamed = {"Pot": "Rur", "ato": "ita", "Land": "nia"}  # the recorded pieces of "PotatoLand"
    for event in second:
        event["output_index"] = 3
        if event["type"] == "response.function_call_arguments.delta":
            event["delta"] = renamed.get(event["delta"], event["delta"])
    rest = [e for e in events if e.get("output_index") != 2]
    return rest[:-1] + first + second + rest[-1:]


@CHUNKINGS
async def test_several_function_calls_in_one_response(chunk_size: int | None) -> None:
    transport, _ = transport_for(wire.encode(two_calls_events()), chunk_size=chunk_size)
    session = ChatSession(transport, tools=[get_capital], options=SessionOptions(execute_tools=False))
    reply = await session.send("Capitals of PotatoLand and Ruritania?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    calls = reply.tool_calls
    assert [(c.tool_call_id, c.parsed_arguments) for c in calls] == [
        ("call_LabG58Uhrq9kZvR52BYKjToD", {"country": "PotatoLand"}),
        ("call_second", {"country": "Ruritania"}),
    ]
    assert all(c.state is ToolCallState.PENDING for c in calls)


async def test_interleaved_argument_deltas_follow_their_item() -> None:
    one = wire.function_call("get_capital", ['{"country":', '"A"}'], 0, "call_a")
    two = wire.function_call("get_capital", ['{"country":', '"B"}'], 1, "call_b")
    # Both added first, then deltas alternating, then both done: ids map by item_id, not by order.
    events = [one[0], two[0], one[1], two[1], one[2], two[2], *one[3:], *two[3:]]
    transport, _ = transport_for(wire.encode([wire.created(), *events, wire.completed()]))
    streamed = await collect(transport)
    joined: dict[str, str] = {}
    for event in streamed:
        if isinstance(event, ToolCallDelta):
            joined[event.tool_call_id] = joined.get(event.tool_call_id, "") + event.delta
    assert joined == {"call_a": '{"country":"A"}', "call_b": '{"country":"B"}'}


async def test_arguments_only_in_the_done_item_and_a_call_with_empty_arguments() -> None:
    no_deltas = wire.function_call("get_capital", [], 0, "call_a")
    no_deltas[-1]["item"]["arguments"] = '{"country":"A"}'
    empty = wire.function_call("list_things", [], 1, "call_b")
    transport, _ = transport_for(wire.encode([wire.created(), *no_deltas, *empty, wire.completed()]))
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    reply = await session.send("go")
    assert [(c.tool_call_id, c.arguments, c.parsed_arguments) for c in reply.tool_calls] == [
        ("call_a", '{"country":"A"}', {"country": "A"}),
        ("call_b", "", {}),
    ]


# --- more stream mapping --------------------------------------------------------------------------------------------


async def test_reasoning_summary_refusal_and_usage_details() -> None:
    body = wire.encode(
        [
            wire.created(),
            *wire.reasoning(0, "rs_1", "ENC1", ["First thought.", "Second thought."]),
            *wire.reasoning(1, "rs_2", "ENC2", ["Third."]),
            {"type": "response.refusal.delta", "delta": "I can't ", "item_id": "msg_1", "output_index": 2},
            {"type": "response.refusal.delta", "delta": "help with that.", "item_id": "msg_1", "output_index": 2},
            wire.completed(100, 20, cached=64, reasoning_tokens=12),
        ]
    )
    transport, _ = transport_for(body)
    events = await collect(transport)
    first = {"id": "rs_1", "encrypted_content": "ENC1"}
    both = {"items": [first, {"id": "rs_2", "encrypted_content": "ENC2"}]}
    assert events[1] == StatusUpdate("Reasoning…")  # until the summary starts
    assert events[2:9] == [
        ReasoningDelta("First thought."),
        ReasoningDelta("\n\n"),
        ReasoningDelta("Second thought."),
        ReasoningDelta("", provider="openai", provider_data={"items": [first]}),
        ReasoningDelta("\n\n"),
        ReasoningDelta("Third."),
        ReasoningDelta("", provider="openai", provider_data=both),  # replaces the part's: both items
    ]
    assert events[9:] == [
        TextDelta("I can't "),
        TextDelta("help with that."),
        UsageUpdate(100, 20, 64, 12),
        ResponseCompleted(FinishReason.STOP),
    ]
    # Consecutive reasoning items share one part; both go back, the text with the first.
    part = ReasoningPart("First thought.\n\nSecond thought.\n\nThird.", provider="openai", provider_data=both)
    assert transport.request_messages([Message(Role.ASSISTANT, [part])]) == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": part.text}],
            "encrypted_content": "ENC1",
        },
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "ENC2"},
    ]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("max_output_tokens", FinishReason.LENGTH), ("content_filter", FinishReason.CONTENT_FILTER)],
)
async def test_incomplete_responses(reason: str, finish: FinishReason) -> None:
    body = wire.encode(
        [wire.created(), *wire.message(["Cut"], 0), wire.completed(7, 3, status="incomplete", reason=reason)]
    )
    transport, _ = transport_for(body)
    events = await collect(transport)
    assert events[-2:] == [UsageUpdate(7, 3), ResponseCompleted(finish)]


def web_search_events(call_id: str = "ws_1") -> list[dict[str, Any]]:
    action = {
        "type": "search",
        "query": "weather Lisbon",
        "sources": [{"type": "url", "url": "https://example.com/lisbon"}],
    }
    item = {"id": call_id, "type": "web_search_call", "status": "in_progress"}
    return [
        {"type": "response.output_item.added", "item": item, "output_index": 0},
        {"type": "response.web_search_call.in_progress", "item_id": call_id, "output_index": 0},
        {"type": "response.web_search_call.searching", "item_id": call_id, "output_index": 0},
        {"type": "response.web_search_call.completed", "item_id": call_id, "output_index": 0},
        {
            "type": "response.output_item.done",
            "item": {**item, "status": "completed", "action": action},
            "output_index": 0,
        },
    ]


async def test_provider_run_web_search() -> None:
    body = wire.encode([wire.created(), *web_search_events(), *wire.message(["Sunny."], 1), wire.completed()])
    transport, api = transport_for(body, text_reply("Still sunny."), builtin_tools=[{"type": "web_search"}])
    events = await collect(transport)
    # The query comes only with the item's end: until then the call's arguments are open, so no progress shows
    # (a running call's arguments are fixed); they arrive whole, just before the result.
    assert events[1:5] == [
        ToolCallStarted("ws_1", "web_search", None, provider_executed=True),
        StatusUpdate("Searching…"),  # the status line, until the result or the next text
        ToolCallDelta("ws_1", '{"type": "search", "query": "weather Lisbon"}'),
        ToolCallArgumentsDone("ws_1"),
    ]
    result = events[5]
    assert isinstance(result, ProviderToolResult)
    assert result.tool_call_id == "ws_1"
    assert result.outcome.ok
    assert result.outcome.value["query"] == "weather Lisbon"
    assert [c.url for c in result.outcome.citations] == ["https://example.com/lisbon"]
    assert events[-1] == ResponseCompleted(FinishReason.STOP)
    assert api.requests[0]["tools"] == [{"type": "web_search"}]


async def test_provider_run_calls_are_never_run_locally_nor_sent_back() -> None:
    first = wire.encode([wire.created(), *web_search_events(), *wire.message(["Sunny."], 1), wire.completed()])
    transport, api = transport_for(first, text_reply("You're welcome."), builtin_tools=[{"type": "web_search"}])
    session = ChatSession(transport)
    reply = await session.send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (call,) = reply.tool_calls
    assert call.provider_executed
    assert call.state is ToolCallState.COMPLETED
    assert call.parsed_arguments == {"type": "search", "query": "weather Lisbon"}
    assert len(api.requests) == 1  # the reply ended with text: no second request
    await session.send("Thanks")
    assert api.requests[1]["input"] == [
        {"role": "user", "content": "Weather in Lisbon?"},
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "Thanks"},
    ]


async def test_other_provider_run_tools_mcp_and_a_failed_search() -> None:
    mcp = {"id": "mcp_1", "type": "mcp_call", "name": "lookup", "server_label": "docs", "arguments": ""}
    search = {"id": "fs_1", "type": "file_search_call", "status": "in_progress", "queries": ["q"]}
    body = wire.encode(
        [
            wire.created(),
            {"type": "response.output_item.added", "item": mcp, "output_index": 0},
            {"type": "response.mcp_call.in_progress", "item_id": "mcp_1", "output_index": 0},
            {
                "type": "response.output_item.done",
                "item": {**mcp, "arguments": '{"q": "x"}', "output": "found"},
                "output_index": 0,
            },
            {"type": "response.output_item.added", "item": search, "output_index": 1},
            {"type": "response.file_search_call.searching", "item_id": "fs_1", "output_index": 1},
            {"type": "response.output_item.done", "item": {**search, "status": "failed"}, "output_index": 1},
            wire.completed(),
        ]
    )
    transport, _ = transport_for(body)
    events = await collect(transport)
    assert events[1:5] == [
        ToolCallStarted("mcp_1", "lookup", None, provider_executed=True),
        StatusUpdate("Calling the MCP server…"),
        ToolCallDelta("mcp_1", '{"q": "x"}'),
        ToolCallArgumentsDone("mcp_1"),
    ]
    assert events[5] == ProviderToolResult("mcp_1", ToolOutcome.success("found"))
    # Arguments known from the start: the call starts complete, and its progress shows.
    assert events[6:9] == [
        ToolCallStarted("fs_1", "file_search", '{"queries": ["q"]}', provider_executed=True),
        StatusUpdate("Searching files…"),
        ToolProgressUpdate("fs_1", message="searching files…"),
    ]
    assert isinstance(events[9], ProviderToolResult)
    assert not events[9].outcome.ok
    assert events[-1] == ResponseCompleted(FinishReason.STOP)


async def test_unknown_events_and_items_are_ignored() -> None:
    body = wire.encode(
        [
            wire.created(),
            {"type": "response.brand_new_event", "whatever": [1, 2]},
            {"type": "response.output_item.added", "item": {"id": "x_1", "type": "brand_new_item"}, "output_index": 0},
            {"type": "response.output_item.done", "item": {"id": "x_1", "type": "brand_new_item"}, "output_index": 0},
            {"type": "response.in_progress", "response": {"id": "resp_test", "status": "in_progress"}},
            *wire.message(["ok"], 1),
            wire.completed(),
        ]
    )
    transport, _ = transport_for(body)
    events = await collect(transport)
    assert events == [ResponseStarted(), TextDelta("ok"), UsageUpdate(10, 5), ResponseCompleted(FinishReason.STOP)]


async def test_malformed_data_raises_a_clear_error() -> None:
    transport, _ = transport_for(wire.encode([wire.created()]) + b"event: response.output_text.delta\ndata: {oops\n\n")
    with pytest.raises(ProviderError, match="not JSON"):
        await collect(transport)
    stray = {"type": "response.function_call_arguments.delta", "delta": "{}", "item_id": "fc_x", "output_index": 0}
    transport, _ = transport_for(wire.encode([wire.created(), stray]))
    with pytest.raises(ProviderError, match="never started"):
        await collect(transport)


async def test_a_stream_that_breaks_off() -> None:
    events = wire.sse_events(wire.fixture_bytes(REASONING_FIXTURE))[:20]
    transport, _ = transport_for(wire.encode(events))
    session = ChatSession(transport, tools=[get_capital])
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."


async def test_a_last_event_without_its_blank_line_is_read_when_its_data_is_whole_json() -> None:
    """Before: the body's last event without its blank line was dropped, here ``response.completed``: the reply read
    as broken off."""
    transport, _ = transport_for(text_reply("ok").rstrip(b"\n"))
    events = await collect(transport)
    assert events == [ResponseStarted(), TextDelta("ok"), UsageUpdate(10, 5), ResponseCompleted(FinishReason.STOP)]


async def test_response_started_comes_first_from_the_response_not_from_response_created() -> None:
    """Before: ``ResponseStarted`` came only with a ``response.created`` event, which compatible servers may leave
    out; now the stream yields it once the response begins, as every transport does."""
    transport, _ = transport_for(wire.encode([*wire.message(["ok"], 0), wire.completed()]))
    events = await collect(transport)
    assert events == [ResponseStarted(), TextDelta("ok"), UsageUpdate(10, 5), ResponseCompleted(FinishReason.STOP)]
    transport, _ = transport_for(text_reply("ok"))
    assert sum(isinstance(e, ResponseStarted) for e in await collect(transport)) == 1


async def test_nothing_after_response_completed_is_read() -> None:
    body = text_reply("ok") + wire.encode([*wire.message(["late"], 1)]) + b'data: {"error": "late"}\n\n'
    transport, _ = transport_for(body)
    events = await collect(transport)
    assert events == [ResponseStarted(), TextDelta("ok"), UsageUpdate(10, 5), ResponseCompleted(FinishReason.STOP)]


# --- the request ----------------------------------------------------------------------------------------------------


async def test_first_request_body() -> None:
    transport, api = transport_for(text_reply("ok"), reasoning={"effort": "low", "summary": "auto"})
    options = RequestOptions(
        system_prompt="Be brief.", temperature=0.3, max_tokens=200, extra={"metadata": {"k": "v"}, "store": True}
    )
    session = ChatSession(transport, tools=[get_capital], request_options=options)
    await session.send("hi")
    body = api.requests[0]
    assert body == {
        "model": "gpt-5.5",
        "stream": True,
        "input": [{"role": "user", "content": "hi"}],
        "instructions": "Be brief.",
        "tools": [
            {
                "type": "function",
                "name": "get_capital",
                "description": get_capital.definition.description,
                "parameters": get_capital.definition.parameters,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "temperature": 0.3,
        "max_output_tokens": 200,
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": True,  # extra is merged last
        "metadata": {"k": "v"},
    }


@pytest.mark.parametrize(
    ("choice", "builtin", "expected"),
    [
        (ToolChoice.AUTO, False, ("auto", ["get_capital"])),
        (ToolChoice.REQUIRED, False, ("required", ["get_capital"])),
        (ToolChoice.specific("get_capital"), False, ({"type": "function", "name": "get_capital"}, ["get_capital"])),
        (ToolChoice.NONE, False, None),
        (ToolChoice.NONE, True, None),
        (ToolChoice.AUTO, True, ("auto", ["get_capital", "web_search"])),
    ],
)
async def test_tool_choice(choice: ToolChoice, builtin: bool, expected: Any) -> None:
    builtin_tools = [{"type": "web_search"}] if builtin else []
    transport, api = transport_for(text_reply("ok"), builtin_tools=builtin_tools)
    session = ChatSession(transport, tools=[get_capital], request_options=RequestOptions(tool_choice=choice))
    await session.send("hi")
    body = api.requests[0]
    if expected is None:
        assert "tools" not in body
        assert "tool_choice" not in body
    else:
        assert body["tool_choice"] == expected[0]
        assert [t.get("name", t["type"]) for t in body["tools"]] == expected[1]


async def test_no_tools_sends_neither_tools_nor_choice() -> None:
    transport, api = transport_for(text_reply("ok"))
    await ChatSession(transport).send("hi")
    assert "tools" not in api.requests[0]
    assert "tool_choice" not in api.requests[0]


def test_include_follows_reasoning_use() -> None:
    request = ChatRequest(messages=[Message.user("hi")])
    for model, reasoning, include in [
        ("gpt-4o", None, False),
        ("gpt-4o", {"effort": "low"}, True),
        ("o4-mini", None, True),
        ("gpt-5-mini", None, True),
        ("gpt-5-chat-latest", None, False),
    ]:
        transport = OpenAIResponsesTransport(model, api_key=wire.FAKE_KEY, reasoning=reasoning)
        assert ("include" in transport.request_body(request)) is include, model
    quiet = OpenAIResponsesTransport("o4-mini", api_key=wire.FAKE_KEY, include_encrypted_reasoning=False)
    assert "include" not in quiet.request_body(request)


async def test_follow_up_request_sends_reasoning_text_call_and_result_in_order() -> None:
    transport, api = transport_for(wire.fixture_bytes(REASONING_FIXTURE), text_reply("Spudville."), chunk_size=1)
    session = ChatSession(transport, tools=[get_capital])
    reply = await session.send("What is the capital of PotatoLand?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text.endswith("Spudville.")
    item = recorded_reasoning_item()
    assert api.requests[1]["input"] == [
        {"role": "user", "content": "What is the capital of PotatoLand?"},
        {"type": "reasoning", "id": item["id"], "summary": [], "encrypted_content": item["encrypted_content"]},
        {"role": "assistant", "content": "I’ll check the capital lookup tool for “PotatoLand.”"},
        {
            "type": "function_call",
            "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
            "name": "get_capital",
            "arguments": '{"country":"PotatoLand"}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
            "output": "The capital of PotatoLand is Spudville.",
        },
    ]


def finished_call(call_id: str, state: ToolCallState, outcome: ToolOutcome, arguments: str = "{}") -> ToolCallPart:
    return finish(ToolCallPart(call_id, "do_it", arguments), state, outcome)


async def test_images_of_tool_results_go_in_the_function_call_output() -> None:
    history = image_history()
    assert history[1].tool_calls[0].result_for_model() == CHART_TEXT
    transport, api = transport_for(text_reply("ok"))
    await collect(transport, ChatRequest(messages=history))
    calls = [
        (
            "call_chart",
            "plot",
            '{"series": "a"}',
            [
                {"type": "input_text", "text": CHART_TEXT},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                {"type": "input_image", "image_url": PHOTO_URL},
            ],
        ),
        ("call_plain", "lookup", "{}", '{"n":1}'),
        ("call_photo", "snap", "{}", [{"type": "input_image", "image_url": f"data:image/jpeg;base64,{JPEG}"}]),
        ("call_failed", "snap", "{}", "It broke."),
    ]
    items = [{"role": "user", "content": "plot"}, {"role": "assistant", "content": "Plotting."}]
    for call_id, name, arguments, output in calls:
        items.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    items.append({"role": "assistant", "content": "Done."})
    assert api.requests[0]["input"] == items

    transport, api = transport_for(text_reply("ok"), tool_images=False)
    await collect(transport, ChatRequest(messages=history))
    outputs = [item["output"] for item in api.requests[0]["input"] if item.get("type") == "function_call_output"]
    assert outputs == [CHART_TEXT, '{"n":1}', "", "It broke."]


async def test_a_tools_image_reaches_the_model_in_the_follow_up_request() -> None:
    first = wire.encode(
        [wire.created(), *wire.function_call("draw", ['{"shape": "circle"}'], 0, "call_d"), wire.completed()]
    )
    transport, api = transport_for(first, text_reply("A circle."))
    reply = await ChatSession(transport, tools=[draw]).send("Draw a circle")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert wire.last_outputs(api.requests[1]) == [
        {
            "type": "function_call_output",
            "call_id": "call_d",
            "output": [
                {"type": "input_text", "text": "A circle."},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            ],
        }
    ]


def test_every_call_gets_its_result_including_failed_declined_and_cancelled() -> None:
    transport = OpenAIResponsesTransport("gpt-4o", api_key=wire.FAKE_KEY)
    provider_call = ToolCallPart("ws_1", "web_search", "{}", provider_executed=True)
    provider_call.finish(ToolCallState.COMPLETED, ToolOutcome.success({"query": "x"}))
    reply = Message(
        Role.ASSISTANT,
        [
            ReasoningPart(  # another provider's: left out
                "from another provider", provider="anthropic", provider_data={"signature": "EqsDCpQBCBAYAipA"}
            ),
            provider_call,  # the API's own item: left out
            finished_call("c1", ToolCallState.COMPLETED, ToolOutcome.success({"ok": True}), '{"a": 1}'),
            finished_call("c2", ToolCallState.FAILED, ToolOutcome.failure("Bad input."), "{not json"),
            finished_call("c3", ToolCallState.REJECTED, ToolOutcome.failure("The person declined this call.")),
            finished_call("c4", ToolCallState.CANCELLED, ToolOutcome.failure("Stopped before it ran.")),
        ],
    )
    items = transport.request_messages([Message.user("go"), Message(Role.ASSISTANT), reply])
    assert items == [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c1", "name": "do_it", "arguments": '{"a": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": '{"ok":true}'},
        {"type": "function_call", "call_id": "c2", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "Bad input."},
        {"type": "function_call", "call_id": "c3", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c3", "output": "The person declined this call."},
        {"type": "function_call", "call_id": "c4", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c4", "output": "Stopped before it ran."},
    ]


def test_reasoning_without_encrypted_content_goes_back_only_when_stored() -> None:
    part = ReasoningPart("Thinking.", provider="openai", provider_data={"items": [{"id": "rs_9"}]})
    messages = [Message(Role.ASSISTANT, [part])]
    assert OpenAIResponsesTransport("o3", api_key=wire.FAKE_KEY).request_messages(messages) == []
    stored = OpenAIResponsesTransport("o3", api_key=wire.FAKE_KEY, store=True)
    assert stored.request_messages(messages) == [
        {"type": "reasoning", "id": "rs_9", "summary": [{"type": "summary_text", "text": "Thinking."}]}
    ]


# --- tool flows against a loopback emulator -------------------------------------------------------------------------


@tool(risk=ToolRisk.READ_ONLY)
def get_weather(city: str) -> dict[str, Any]:
    """Gets the current weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny", "celsius": 24}


DELETED: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file's path.
    """
    DELETED.append(path)
    return f"deleted {path}"


def scripted(name: str, arguments: dict[str, Any]) -> wire.Script:
    """First request: a streamed call; follow-up: text made from the tool's result in the request."""

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        outputs = wire.last_outputs(body)
        if not outputs:
            text = json.dumps(arguments)
            pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
            return [wire.created(), *wire.function_call(name, pieces, 0, "call_1"), wire.completed()]
        answer = f"Result: {outputs[0]['output']}"
        return [wire.created(), *wire.message([answer[:7], answer[7:]], 0), wire.completed()]

    return script


async def test_weather_flow_on_loopback() -> None:
    with loopback(wire.emulator(scripted("get_weather", {"city": "Lisbon"}))) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY)
        session = ChatSession(transport, tools=[get_weather])
        reply = await session.send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == 'Result: {"city":"Lisbon","sky":"sunny","celsius":24}'
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert call.parsed_arguments == {"city": "Lisbon"}
    assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
    follow_up = server.requests[1].json()["input"]
    assert follow_up[-2:] == [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Lisbon"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"city":"Lisbon","sky":"sunny","celsius":24}'},
    ]
    assert server.requests[0].headers["authorization"] == f"Bearer {wire.FAKE_KEY}"


@pytest.mark.parametrize("decision", ["approved", "rejected"])
async def test_destructive_tool_flow_on_loopback(decision: str) -> None:
    import asyncio

    DELETED.clear()
    with loopback(wire.emulator(scripted("delete_file", {"path": "/tmp/x"}))) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY)
        session = ChatSession(transport, tools=[delete_file])
        turn = asyncio.ensure_future(session.send("Delete /tmp/x"))
        await wait_for(lambda: bool(session.pending_approvals), timeout=5)
        (waiting,) = session.pending_approvals
        assert waiting.state is ToolCallState.AWAITING_APPROVAL
        assert len(server.requests) == 1
        session.approve(waiting.tool_call_id, decision, reason="keep it" if decision == "rejected" else None)
        reply = await turn
    assert reply.status is MessageStatus.COMPLETED, reply.error
    output = wire.last_outputs(server.requests[1].json())[0]
    if decision == "approved":
        assert DELETED == ["/tmp/x"]
        assert output == {"type": "function_call_output", "call_id": "call_1", "output": "deleted /tmp/x"}
    else:
        assert DELETED == []
        assert reply.tool_calls[0].state is ToolCallState.REJECTED
        assert output["call_id"] == "call_1"
        assert "declined" in output["output"]
        assert "keep it" in output["output"]
        assert reply.text == f"Result: {output['output']}"


# --- HTTP failures and keys -----------------------------------------------------------------------------------------


def status_handler(status: int, message: str, counter: list[int]) -> Any:
    def handle(request: Request) -> Response:
        counter.append(1)
        body = json.dumps({"error": {"message": message, "type": "x", "code": None}}).encode()
        headers = {"content-type": "application/json", "retry-after-ms": "5"}
        return Response(status=status, headers=headers, chunks=[body])

    return handle


@pytest.mark.parametrize(
    ("status", "retried", "needle"),
    [
        (401, False, "rejected the API key (401): check OPENAI_API_KEY or api_key="),
        (403, False, "refused access (403)"),
        (429, True, "rate limiting or out of quota (429), even after retries"),
        (500, True, "server error (500), even after retries"),
    ],
)
async def test_http_failures(status: int, retried: bool, needle: str) -> None:
    counter: list[int] = []
    masked = wire.FAKE_KEY[:8] + "*" * 10 + wire.FAKE_KEY[-4:]
    message = f"Incorrect API key provided: {masked} / {wire.FAKE_KEY}."
    with loopback(status_handler(status, message, counter)) as server:
        transport = OpenAIResponsesTransport(
            "gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY, max_retries=2
        )
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert len(counter) == (3 if retried else 1)
    assert reply.status is MessageStatus.ERROR
    assert needle in (reply.error or "")
    everything = (reply.error or "") + dump_messages(session.messages) + repr(transport)
    assert wire.FAKE_KEY not in everything
    assert masked not in everything
    assert "SECRET" not in everything


async def test_key_from_the_environment_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", wire.FAKE_KEY)
    with loopback(status_handler(401, f"bad key {wire.FAKE_KEY}", [])) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1")
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "OPENAI_API_KEY" in (reply.error or "")
    assert wire.FAKE_KEY not in (reply.error or "") + dump_messages(session.messages) + repr(vars(transport))


def test_missing_key_is_a_clear_error_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match=r"^No API key for OpenAI: set OPENAI_API_KEY, or pass api_key= or client="):
        OpenAIResponsesTransport("gpt-4o")


async def test_a_server_given_by_base_url_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with loopback(
        wire.emulator(lambda body: [wire.created(), *wire.message(["Local."], 0), wire.completed()])
    ) as server:
        reply = await ChatSession(OpenAIResponsesTransport("gpt-oss", base_url=server.url + "/v1")).send("hi")
        assert reply.text == "Local."
        assert server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_timeout_mid_stream() -> None:
    def handle(request: Request) -> Response:
        def chunks() -> Any:
            yield wire.encode([wire.created()])
            time.sleep(1.0)  # the server stalls longer than the client's timeout
            yield wire.encode([wire.completed()])

        return Response(chunks=chunks())

    with loopback(handle) as server:
        transport = OpenAIResponsesTransport(
            "gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY, timeout=0.3, max_retries=0
        )
        reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model request failed: ProviderError: OpenAI did not answer in time (timeout 0.3 s)."


async def test_connection_refused() -> None:
    with loopback(lambda request: Response()) as server:
        url = server.url
    transport = OpenAIResponsesTransport("gpt-4o", base_url=url + "/v1", api_key=wire.FAKE_KEY, max_retries=0)
    reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert f"Could not reach OpenAI at {url}/v1, even after retries" in (reply.error or "")


# --- construction -------------------------------------------------------------------------------------------------


def test_exported_lazily_and_constructor_checks() -> None:
    import ai_widgets.transports as transports

    assert transports.OpenAIResponsesTransport is OpenAIResponsesTransport
    for connection in ({"api_key": wire.FAKE_KEY}, {"base_url": "http://127.0.0.1:9/v1"}):
        with pytest.raises(ValueError, match=r"pass either client= or .*, not both"):
            OpenAIResponsesTransport("gpt-4o", client=wire.MockAPI().client(), **connection)
    with pytest.raises(ValueError, match="model"):
        OpenAIResponsesTransport("")
    assert wire.FAKE_KEY not in repr(OpenAIResponsesTransport("gpt-4o", api_key=wire.FAKE_KEY))
