"""OpenAIChatTransport's quirks: the stream dialects of the many servers it speaks to (calls without ids or names,
reasoning fields, usage variants, in-band errors), and who its errors name (OpenAI at OpenAI's host).

The recorded streams, request building and tool flows are in ``test_openai_chat.py``; what every transport does
the same way is in ``test_contract.py``."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from ai_widgets import ChatSession, FinishReason, ToolCallState
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
from ai_widgets.messages import MessageStatus, dump_messages
from ai_widgets.transports import OpenAIChatTransport, ProviderError
from tests.providers.kits.openai_chat import FAKE_KEY, Call, MockAPI, collect, get_time, sse_reply, user_request
from tests.providers.loopback import Request, Response, loopback

# --- quirks: the stream -----------------------------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps({'id': 'chatcmpl-q', 'object': 'chat.completion.chunk', 'choices': choices, **top})}\n\n".encode()


async def stream_of(
    *chunks: bytes, base_url: str = "https://api.openai.com/v1"
) -> tuple[list[StreamEvent], Exception | None]:
    client = MockAPI(b"".join(chunks)).client(base_url=base_url)
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
    session = ChatSession(OpenAIChatTransport("m", client=MockAPI(cut).client()), tools=[get_time])
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."
    assert reply.text == "Hello there, this is long"
    assert [c.state for c in reply.tool_calls] == [ToolCallState.SKIPPED]  # started, never run: nobody stopped it
    # The session stays usable.
    session.transport = OpenAIChatTransport("m", client=MockAPI(b"".join(sse_reply(text="fine"))).client())
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


# --- quirks: who the errors name --------------------------------------------------------------------------------------


def status_handler(status: int, body: dict[str, Any]) -> Any:
    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json=body, headers={"retry-after-ms": "1"})

    return handle


@pytest.mark.parametrize(
    ("status", "head"),
    [
        (401, "OpenAI rejected the API key (401): check OPENAI_API_KEY or api_key=."),
        (403, "OpenAI refused access (403): the key in OPENAI_API_KEY or api_key= lacks permission for this model."),
        (404, "OpenAI: not found (404), often a wrong model name or base_url."),
        (400, "OpenAI refused the request (400)."),
        (429, "OpenAI is rate limiting or out of quota (429), even after retries."),
        (500, "OpenAI had a server error (500), even after retries."),
    ],
)
async def test_errors_at_openais_own_host_name_openai_and_its_key_variable(status: int, head: str) -> None:
    # The transport serves many hosts: a server it does not know is "the server at <url>" (tests/providers/
    # test_contract.py), OpenAI's own host is OpenAI, whose key comes from OPENAI_API_KEY.
    body = {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}. Bearer {FAKE_KEY}", "type": "x"}}
    api = MockAPI(status_handler(status, body))
    events, error = await collect(OpenAIChatTransport("gpt-4o", client=api.client(max_retries=2)), user_request())
    assert events == []
    assert str(error) == f"{head} Incorrect API key provided: [redacted]. Bearer [redacted]"
    assert len(api.requests) == (3 if status in (429, 500) else 1)  # 4xx other than 408/409/429 is not retried


async def test_a_provider_name_names_the_provider_and_the_key_still_never_shows() -> None:
    def echo_key(request: Request) -> Response:
        body = json.dumps({"error": {"message": f"bad key {request.headers['authorization']}"}}).encode()
        return Response(status=401, headers={"content-type": "application/json"}, chunks=[body])

    with loopback(echo_key) as server:
        transport = OpenAIChatTransport("m", base_url=server.url, api_key=FAKE_KEY, provider_name="OpenAI")
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert (reply.error or "").startswith("The model request failed: ProviderError: OpenAI rejected the API key")
    for text in (reply.error or "", dump_messages(session.messages), repr(transport)):
        assert "SECRET" not in text
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"


# --- quirks: keys -----------------------------------------------------------------------------------------------------


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
