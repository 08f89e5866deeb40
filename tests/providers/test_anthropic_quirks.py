"""AnthropicTransport's quirks: thinking and redacted thinking blocks, server tools and their results, pause_turn, the
parser's short path, in-band errors, 529 and a client without credentials.

The recorded streams, request building and tool flows are in ``test_anthropic.py``; what every transport does the
same way is in ``test_contract.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ai_widgets import ChatSession, FinishReason, Message, ReasoningPart, ToolCallPart, ToolCallState, tool
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    TextDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, Role, dump_messages
from ai_widgets.transports import AnthropicTransport, ProviderError
from ai_widgets.transports._anthropic_stream import MessagesParser
from ai_widgets.transports._sse import SSEDecoder
from tests.providers.kits import Body, recorded
from tests.providers.kits.anthropic import (
    FAKE_KEY,
    FIXTURES,
    Emulator,
    MockAPI,
    anthropic_messages,
    error_response,
    reply_events,
    sse,
)
from tests.providers.loopback import loopback

# --- quirks: the stream -----------------------------------------------------------------------------------------------


def parse(events: list[dict[str, Any]]) -> list[Any]:
    parser = MessagesParser()
    return [out for event in events for out in parser.feed_event(event)]


def test_redacted_and_consecutive_thinking_blocks_keep_every_block() -> None:
    events = reply_events([{"type": "thinking", "thinking": "one", "signature": "s1"}])
    redacted = {"type": "redacted_thinking", "data": "ENCRYPTED"}
    events[-3:-3] = [
        {"type": "content_block_start", "index": 1, "content_block": redacted},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "thinking_delta", "thinking": "two"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "signature_delta", "signature": "s2"}},
        {"type": "content_block_stop", "index": 2},
    ]
    out = parse(events)
    data = [e.provider_data for e in out if isinstance(e, ReasoningDelta) and e.provider_data is not None]
    assert all(e.provider == "anthropic" for e in out if isinstance(e, ReasoningDelta) and e.provider_data)
    assert data[0] == {"signature": "s1"}  # one thinking block: the signature as it came
    blocks = [
        {"type": "thinking", "thinking": "one", "signature": "s1"},
        redacted,
        {"type": "thinking", "thinking": "two", "signature": "s2"},
    ]
    assert data[-1] == {"blocks": blocks}
    # The session joins the three into one part; it goes back as the three blocks.
    part = ReasoningPart("onetwo", provider="anthropic", provider_data=data[-1])
    assert anthropic_messages([Message.user("q"), Message(Role.ASSISTANT, [part])])[1]["content"] == blocks
    only_redacted = parse([{"type": "content_block_start", "index": 0, "content_block": redacted}])
    assert only_redacted == [ReasoningDelta("", provider="anthropic", provider_data={"blocks": [redacted]})]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", FinishReason.STOP),
        ("stop_sequence", FinishReason.STOP),
        ("tool_use", FinishReason.TOOL_CALLS),
        ("max_tokens", FinishReason.LENGTH),
        ("refusal", FinishReason.CONTENT_FILTER),
        ("pause_turn", FinishReason.STOP),
        ("something_new", FinishReason.STOP),
    ],
)
def test_finish_reasons(reason: str, finish: FinishReason) -> None:
    assert parse(reply_events([], stop_reason=reason))[-1] == ResponseCompleted(finish)


def test_usage_counts_the_whole_prompt_and_keeps_running_totals() -> None:
    events = reply_events([], input_tokens=10)
    events[0]["message"]["usage"] |= {"cache_read_input_tokens": 90, "cache_creation_input_tokens": 5}
    events[-2]["usage"] = {"output_tokens": 42, "input_tokens": None, "output_tokens_details": {"thinking_tokens": 7}}
    usage = [e for e in parse(events) if isinstance(e, UsageUpdate)]
    assert usage[0] == UsageUpdate(input_tokens=105, output_tokens=1, cached_tokens=90, cache_write_tokens=5)
    assert usage[-1] == UsageUpdate(
        input_tokens=105, output_tokens=42, cached_tokens=90, reasoning_tokens=7, cache_write_tokens=5
    )


def test_web_search_results_become_the_calls_outcome_with_citations() -> None:
    results = [
        {"type": "web_search_result", "url": "https://a.example", "title": "A", "encrypted_content": "x"},
        {"type": "web_search_result", "url": "https://b.example", "title": "B", "encrypted_content": "y"},
    ]
    block = {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": results}
    failed = {
        "type": "web_search_tool_result",
        "tool_use_id": "srv_2",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    }
    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}}
    out = parse(reply_events([search, block, {**search, "id": "srv_2"}, failed, {"type": "text", "text": "ok"}]))
    results_events = {e.tool_call_id: e for e in out if isinstance(e, ProviderToolResult)}
    outcomes = {call_id: e.outcome for call_id, e in results_events.items()}
    assert outcomes["srv_1"].ok
    # For people: the results without their encrypted content; the block as it came is the provider data.
    assert outcomes["srv_1"].value == [
        {"type": "web_search_result", "url": "https://a.example", "title": "A"},
        {"type": "web_search_result", "url": "https://b.example", "title": "B"},
    ]
    assert results_events["srv_1"].provider_data == {"result_block": block}
    assert [(c.url, c.title) for c in outcomes["srv_1"].citations] == [
        ("https://a.example", "A"),
        ("https://b.example", "B"),
    ]
    assert not outcomes["srv_2"].ok
    assert "max_uses_exceeded" in (outcomes["srv_2"].message or "")
    assert results_events["srv_2"].provider_data == {"result_block": failed}  # kept, to go back as it came
    part = ToolCallPart(
        "srv_2", "web_search", '{"query": "q"}', provider_executed=True, provider="anthropic", provider_data=None
    )
    part.provider_data = results_events["srv_2"].provider_data
    part.finish(ToolCallState.FAILED, outcomes["srv_2"])
    content = anthropic_messages([Message.user("q"), Message(Role.ASSISTANT, [part])])[1]["content"]
    assert content == [{**search, "id": "srv_2"}, failed]


async def test_pause_turn_with_a_server_call_but_no_result() -> None:
    ran: list[str] = []

    @tool(name="web_search")
    def local_web_search(query: str) -> str:
        """A local tool that happens to share the server tool's name."""
        ran.append(query)
        return "local"

    search = {"type": "server_tool_use", "id": "srvtoolu_paused", "name": "web_search", "input": {"query": "q"}}
    paused = reply_events([{"type": "text", "text": "Searching."}, search], stop_reason="pause_turn")
    events = parse(paused)
    assert ToolCallStarted("srvtoolu_paused", "web_search", provider_executed=True) in events
    assert not any(isinstance(e, ProviderToolResult) for e in events)
    assert events[-1] == ResponseCompleted(FinishReason.STOP)

    api = MockAPI(sse(paused), sse(reply_events([{"type": "text", "text": "Found it."}])))
    session = ChatSession(api.transport(), tools=[local_web_search])
    reply = await session.send("Search for q")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (call,) = reply.tool_calls
    assert call.provider_executed
    assert call.state.terminal
    assert ran == []  # a provider-run call never runs locally, result or not
    assert len(api.bodies) == 1
    await session.send("Go on.")
    # The API rejects a server_tool_use without its result block: the call is left out, the text goes back.
    assert api.bodies[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Search for q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}]},
        {"role": "user", "content": [{"type": "text", "text": "Go on."}]},
    ]


def test_unknown_events_and_blocks_are_ignored() -> None:
    events = reply_events([{"type": "text", "text": "hi"}])
    events[2:2] = [
        {"type": "ping"},
        {"type": "brand_new_event", "x": 1},
        {"type": "content_block_start", "index": 7, "content_block": {"type": "brand_new_block"}},
        {"type": "content_block_delta", "index": 7, "delta": {"type": "brand_new_delta"}},
        {"type": "content_block_stop", "index": 7},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}},
    ]
    assert [e for e in parse(events) if isinstance(e, TextDelta)] == [TextDelta("hi")]


def test_malformed_streams_raise_clear_errors() -> None:
    with pytest.raises(ProviderError, match="not a tool call"):
        parse([{"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{"}}])
    with pytest.raises(ProviderError, match="without an id"):
        parse([{"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "name": "x"}}])
    with pytest.raises(ProviderError, match=r"overloaded_error.*Overloaded"):
        parse([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}])


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_sse_decoder_any_line_ending_any_chunking(newline: bytes) -> None:
    body = b'event: a\ndata: {"n": 1}\n\n: comment\n\nevent: b\ndata: {"t":\ndata: "\xc3\xa9 data: x"}\n\ndata:{"n": 3}'
    body = body.replace(b"\n", newline)
    for size in (1, 2, 3, len(body)):
        decoder = SSEDecoder()
        payloads = [p for start in range(0, len(body), size) for p in decoder.feed(body[start : start + size])]
        payloads += decoder.close()
        assert [json.loads(p) for p in payloads] == [{"n": 1}, {"t": "é data: x"}, {"n": 3}], (newline, size)


# --- quirks: the parser -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_reading_payloads_gives_what_reading_their_json_gives(name: str) -> None:
    # ``feed`` reads the JSON itself and takes text deltas on a short path: the same events as ``feed_event``.
    payloads = SSEDecoder().feed(recorded(name))
    odd = [
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":7}}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}',
        b'{"type":"content_block_delta","index":0,"delta":"text_delta"}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\ud83d"}}',
        b'["content_block_delta"]',
    ]
    short, general = MessagesParser(), MessagesParser()
    for payload in payloads + odd:
        assert short.feed(payload) == general.feed_event(json.loads(payload)), payload
    with pytest.raises(ProviderError, match="not JSON"):
        short.feed(b'{"type": "content_block_delta", ')


@pytest.mark.parametrize(
    "payload",
    [
        b'{"type":"message_start","message":"msg"}',
        b'{"type":"message_delta","delta":["end_turn"],"usage":7}',
        b'{"type":"message_delta","delta":{"stop_reason":["end_turn"]}}',
        b'{"type":"content_block_start","index":[0],"content_block":{"type":"text","text":"x"}}',
        b'{"type":"content_block_start","index":0,"content_block":"text"}',
        b'{"type":"content_block_delta","index":{"a":1},"delta":{"type":"thinking_delta","thinking":"x"}}',
        b'{"type":"content_block_stop","index":[1]}',
    ],
)
def test_malformed_fields_are_ignored_rather_than_crash_the_parser(payload: bytes) -> None:
    parser = MessagesParser()
    parser.feed(b'{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}')
    parser.feed(payload)  # no TypeError or AttributeError: a malformed event means nothing
    assert parser.feed(b'{"type":"message_stop"}') == [ResponseCompleted(FinishReason.STOP)]


# --- quirks: errors ---------------------------------------------------------------------------------------------------


async def test_error_event_mid_stream_ends_the_message_and_the_session_goes_on() -> None:
    events = reply_events([{"type": "text", "text": "Partial answer"}])[:4]
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    api = MockAPI(sse(events), sse(reply_events([{"type": "text", "text": "Back."}])))
    session = ChatSession(api.transport())
    failed = await session.send("hi")
    assert failed.status is MessageStatus.ERROR
    assert failed.error is not None
    assert "overloaded_error" in failed.error
    assert "Overloaded" in failed.error
    assert (await session.send("again")).text == "Back."


async def test_an_error_event_after_message_stop_does_not_fail_the_finished_reply() -> None:
    """Before: the stream went on past ``message_stop``, so an error event a server sent after it failed a finished
    reply (the contract checks the rest of the body is drained for every transport)."""
    late = {"type": "error", "error": {"type": "overloaded_error", "message": "late"}}
    body = Body([sse(reply_events([{"type": "text", "text": "ok"}])), sse([late]), b": trailing comment\n\n"])
    reply = await ChatSession(MockAPI(body.handler).transport()).send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "ok"
    assert body.read == len(body.pieces)  # read to its end, so the HTTP/1.1 connection goes back to the pool
    assert body.closed


async def test_overloaded_529_is_a_server_error_retried_with_the_error_type(monkeypatch: pytest.MonkeyPatch) -> None:
    # Anthropic's own status for "overloaded" (the shared statuses: tests/providers/test_contract.py).
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    message = f"overloaded_error ({FAKE_KEY} should never show)"
    emulator = Emulator(lambda body: error_response(529, "overloaded_error", message))
    with loopback(emulator) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, max_retries=1)
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    for word in ["529", "overloaded_error"]:
        assert word in reply.error
    assert FAKE_KEY not in reply.error
    assert "SECRET" not in dump_messages(session.messages)
    assert len(emulator.bodies) == 2


@pytest.fixture
def no_anthropic_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


async def test_a_client_without_credentials_says_which_key(no_anthropic_credentials: None) -> None:
    import anthropic

    transport = AnthropicTransport("claude-x", client=anthropic.AsyncAnthropic(base_url="http://127.0.0.1:9"))
    reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "needs an API key: set ANTHROPIC_API_KEY or api_key=" in reply.error
