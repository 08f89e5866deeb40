"""OpenAIResponsesTransport's quirks: errors as the stream says them, provider-run tools, reasoning summaries, odd
and unknown events, and the key from the environment.

The recorded streams, request building and tool flows are in ``test_openai_responses.py``; what every transport
does the same way is in ``test_contract.py``."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from ai_widgets import ChatSession, FinishReason, Message, ReasoningPart, SessionOptions, ToolCallState, ToolOutcome
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
from tests.providers.kits import openai_responses as wire
from tests.providers.kits import recorded
from tests.providers.kits.openai_responses import (
    CHUNKINGS,
    REASONING_FIXTURE,
    collect,
    get_capital,
    text_reply,
    transport_for,
)
from tests.providers.loopback import Request, Response, loopback

# --- quirks: the stream -----------------------------------------------------------------------------------------------


async def test_an_error_as_a_string() -> None:
    transport, _ = transport_for(wire.sse([wire.created()]) + b'data: {"error": "Upstream overloaded"}\n\n')
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
        body = _BrokenBody(wire.sse([wire.created(), *wire.message(["Hal"], 0)[:2]]), error)
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


def two_calls_events() -> list[dict[str, Any]]:
    """The recorded response with a second function call, built from the recorded call's event shapes."""
    events = wire.sse_events(recorded(REASONING_FIXTURE))
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
    transport, _ = transport_for(wire.sse(two_calls_events()), chunk_size=chunk_size)
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
    transport, _ = transport_for(wire.sse([wire.created(), *events, wire.completed()]))
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
    transport, _ = transport_for(wire.sse([wire.created(), *no_deltas, *empty, wire.completed()]))
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    reply = await session.send("go")
    assert [(c.tool_call_id, c.arguments, c.parsed_arguments) for c in reply.tool_calls] == [
        ("call_a", '{"country":"A"}', {"country": "A"}),
        ("call_b", "", {}),
    ]


# --- quirks: reasoning, provider-run tools, odd events ----------------------------------------------------------------


async def test_reasoning_summary_refusal_and_usage_details() -> None:
    body = wire.sse(
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
    body = wire.sse(
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
    body = wire.sse([wire.created(), *web_search_events(), *wire.message(["Sunny."], 1), wire.completed()])
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
    assert api.bodies[0]["tools"] == [{"type": "web_search"}]


async def test_provider_run_calls_are_never_run_locally_nor_sent_back() -> None:
    first = wire.sse([wire.created(), *web_search_events(), *wire.message(["Sunny."], 1), wire.completed()])
    transport, api = transport_for(first, text_reply("You're welcome."), builtin_tools=[{"type": "web_search"}])
    session = ChatSession(transport)
    reply = await session.send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (call,) = reply.tool_calls
    assert call.provider_executed
    assert call.state is ToolCallState.COMPLETED
    assert call.parsed_arguments == {"type": "search", "query": "weather Lisbon"}
    assert len(api.bodies) == 1  # the reply ended with text: no second request
    await session.send("Thanks")
    assert api.bodies[1]["input"] == [
        {"role": "user", "content": "Weather in Lisbon?"},
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "Thanks"},
    ]


async def test_other_provider_run_tools_mcp_and_a_failed_search() -> None:
    mcp = {"id": "mcp_1", "type": "mcp_call", "name": "lookup", "server_label": "docs", "arguments": ""}
    search = {"id": "fs_1", "type": "file_search_call", "status": "in_progress", "queries": ["q"]}
    body = wire.sse(
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
    body = wire.sse(
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
    transport, _ = transport_for(wire.sse([wire.created()]) + b"event: response.output_text.delta\ndata: {oops\n\n")
    with pytest.raises(ProviderError, match="not JSON"):
        await collect(transport)
    stray = {"type": "response.function_call_arguments.delta", "delta": "{}", "item_id": "fc_x", "output_index": 0}
    transport, _ = transport_for(wire.sse([wire.created(), stray]))
    with pytest.raises(ProviderError, match="never started"):
        await collect(transport)


async def test_a_stream_that_breaks_off() -> None:
    events = wire.sse_events(recorded(REASONING_FIXTURE))[:20]
    transport, _ = transport_for(wire.sse(events))
    session = ChatSession(transport, tools=[get_capital])
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."


# --- quirks: keys -----------------------------------------------------------------------------------------------------


def status_handler(status: int, message: str, counter: list[int]) -> Any:
    def handle(request: Request) -> Response:
        counter.append(1)
        body = json.dumps({"error": {"message": message, "type": "x", "code": None}}).encode()
        headers = {"content-type": "application/json", "retry-after-ms": "5"}
        return Response(status=status, headers=headers, chunks=[body])

    return handle


async def test_key_from_the_environment_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", wire.FAKE_KEY)
    with loopback(status_handler(401, f"bad key {wire.FAKE_KEY}", [])) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1")
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "OPENAI_API_KEY" in (reply.error or "")
    assert wire.FAKE_KEY not in (reply.error or "") + dump_messages(session.messages) + repr(vars(transport))
