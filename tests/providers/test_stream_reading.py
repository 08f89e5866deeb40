"""How the transports read a streamed body: the raw byte stream (or the SDK's decoding one for a compressed body),
closed however the reader leaves it, and JSON read by pydantic-core with ``json.loads``'s exact results; what cannot
be read (data Python's JSON reader refuses, an event that never ends, a Gemini chunk the SDK refuses) is a clear
provider error, and a 50 MB data line is still read."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_widgets import ChatSession, Message, SessionOptions
from ai_widgets.events import StreamEvent, TextDelta
from ai_widgets.transports import (
    AnthropicTransport,
    ChatRequest,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ProviderError,
    _sse,
)
from ai_widgets.transports._sse import body_chunks, load_json
from tests.providers.kits import KITS, ProviderKit, recorded
from tests.providers.kits import anthropic as anthropic_kit
from tests.providers.kits.gemini import MockAPI as GeminiAPI
from tests.providers.loopback import Response, loopback

KEY = "test-key-not-secret"


def summary(reply: Message) -> Any:
    """What a reply holds, without its times and the call ids made here (Gemini's calls come without one)."""

    def kept(key: str, value: Any) -> bool:
        return not key.endswith("_at") and not (key == "tool_call_id" and str(value).startswith("gemini_call_"))

    return (
        reply.status,
        reply.finish_reason,
        reply.usage.to_dict(),
        [{k: v for k, v in part.to_dict().items() if kept(k, v)} for part in reply.parts],
    )


async def reply_through(kit: ProviderKit, *, compressed: bool) -> Message:
    body = recorded(kit.recordings[0])
    headers = {"content-type": "text/event-stream"}
    data = body
    if compressed:
        headers["content-encoding"] = "gzip"
        data = gzip.compress(body)
    chunks = [data[start : start + 7] for start in range(0, len(data), 7)]
    with loopback(lambda request: Response(headers=dict(headers), chunks=list(chunks))) as server:
        session = ChatSession(kit.make(server.url), options=SessionOptions(execute_tools=False))
        return await session.send("hi")


@pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())
async def test_a_gzip_compressed_stream_gives_the_same_reply(kit: ProviderKit) -> None:
    # A proxy may compress the event stream: the body is then read through the SDK's decoding iterator.
    plain = await reply_through(kit, compressed=False)
    assert plain.status.value == "completed", plain.error
    assert plain.parts
    assert summary(await reply_through(kit, compressed=True)) == summary(plain)


class _HTTPResponse:
    def __init__(self, encoding: str | None) -> None:
        self.headers = {"content-encoding": encoding} if encoding is not None else {}
        self.closed = False
        self.stream = self

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            for piece in (b"raw 1", b"raw 2", b"raw 3"):
                yield piece
        finally:
            self.closed = True


class _SDKResponse:
    def __init__(self, encoding: str | None) -> None:
        self.http_response = _HTTPResponse(encoding)

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        yield b"decoded"


@pytest.mark.parametrize(
    ("encoding", "read"),
    [(None, [b"raw 1"]), ("identity", [b"raw 1"]), (" Identity ", [b"raw 1"]), ("gzip", [b"decoded"])],
)
async def test_body_chunks_reads_raw_bytes_unless_compressed_and_closes_on_leaving(
    encoding: str | None, read: list[bytes]
) -> None:
    response = _SDKResponse(encoding)
    got = []
    async with body_chunks(response) as chunks:
        async for chunk in chunks:
            got.append(chunk)
            break  # the reader leaves early, as a stopped turn does
    assert got == read
    assert response.http_response.closed is (encoding != "gzip")  # the raw stream was closed, not left to the GC


# --- JSON -------------------------------------------------------------------------------------------------------------

ODD = [
    b'{"a":1,"a":2}',
    b'{"a":NaN,"b":Infinity,"c":-Infinity}',
    b'{"a":1e400}',
    b'{"a":"\\ud800"}',  # a lone surrogate: json.loads keeps it
    b'{"a":"\\ud83d\\ude00"}',
    b'{"a":"\xed\xa0\x80"}',  # a surrogate encoded as UTF-8 bytes
    b'{"a":"\xff"}',
    b"\xef\xbb\xbf{}",  # a byte-order mark
    b"9" * 4300,
    b"9" * 4301,
    b"9" * 5000,
    b"[" * 300 + b"]" * 300,  # deeper than pydantic-core reads
    b"[" * 5000 + b"]" * 5000,  # deeper than json.loads reads
    b'{"a":"\x01"}',
    b"[1,]",
    b"{} x",
    b"",
    b" ",
    b"[DONE]",
    b"inf",
    b"-0",
    b"0.1",
    b"1E5",
    b'"\\u0000"',
    b' \t\r\n{"a": [1, 2.5, "x", null, true, false]}\n',
]


def outcome(read: Callable[[bytes], Any], data: bytes) -> Any:
    """What ``read`` makes of ``data``: its value, or the type and text of its error."""
    try:
        return ("value", read(data))
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc), str(exc))


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and ``-0.0`` apart from ``0.0``; ints apart from floats."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    return bool(a == b)


@pytest.mark.parametrize("data", ODD, ids=lambda data: repr(data[:24]))
def test_load_json_reads_odd_data_exactly_as_json_loads(data: bytes) -> None:
    assert same(outcome(load_json, data), outcome(json.loads, data))


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_VALUES = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, indent=st.sampled_from([None, 0, 2]), ascii=st.booleans(), cut=st.integers(0, 200))
def test_load_json_reads_anything_exactly_as_json_loads(value: Any, indent: int | None, ascii: bool, cut: int) -> None:
    data = json.dumps(value, indent=indent, ensure_ascii=ascii).encode("utf-8", "surrogatepass")
    for piece in (data, data[:cut], data[cut:]):  # whole, and cut short or cut into at any point
        assert same(outcome(load_json, piece), outcome(json.loads, piece))


async def test_body_chunks_reads_a_response_that_is_not_the_sdks_through_iter_bytes() -> None:
    class Plain:  # a wrapper or test double with only ``iter_bytes``
        async def iter_bytes(self) -> AsyncIterator[bytes]:
            yield b"a"
            yield b"b"

    async with body_chunks(Plain()) as chunks:
        assert [chunk async for chunk in chunks] == [b"a", b"b"]


@pytest.mark.parametrize(
    ("transport", "client", "example"),
    [
        (AnthropicTransport, lambda: anthropic.Anthropic(api_key=KEY), "anthropic.AsyncAnthropic"),
        (OpenAIChatTransport, lambda: openai.OpenAI(api_key=KEY), "openai.AsyncOpenAI"),
        (OpenAIResponsesTransport, lambda: openai.OpenAI(api_key=KEY), "openai.AsyncOpenAI"),
    ],
    ids=["anthropic", "openai-chat", "openai-responses"],
)
def test_a_synchronous_sdk_client_is_refused_when_the_transport_is_made(
    transport: Any, client: Callable[[], Any], example: str
) -> None:
    # It used to fail at the first request: "'ResponseContextManager' object does not support the asynchronous
    # context manager protocol".
    with pytest.raises(ValueError, match=f"client= must be an asynchronous client, such as {example}: "):
        transport("m", client=client())


# --- stream data no reader takes, and an event without end ------------------------------------------------------------


def request() -> ChatRequest:
    return ChatRequest(messages=[Message.user("hi")])


def streaming(body: Callable[[], AsyncIterator[bytes]]) -> Callable[[httpx2.Request], httpx2.Response]:
    """A handler whose every response streams ``body()``."""
    return lambda _request: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())


async def pieces(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def collect(transport: Any, timeout: float = 10) -> tuple[list[StreamEvent], BaseException | None]:
    events: list[StreamEvent] = []

    async def run() -> None:
        async for event in transport.stream(request()):
            events.append(event)

    try:
        await asyncio.wait_for(run(), timeout)
    except Exception as exc:
        return events, exc
    return events, None


OPENAI = [KITS["openai_chat"], KITS["openai_responses"]]


BOTH = pytest.mark.parametrize("kit", OPENAI, ids=[kit.name for kit in OPENAI])


UNREADABLE = {
    # Valid JSON that Python refuses to read: an integer of more than 4,300 digits, nesting past the recursion limit.
    "5000-digit-integer": (b'data: {"type": "x", "n": ' + b"9" * 5000 + b"}\n\n", "cannot be read"),
    "nested-100000-deep": (b'data: {"type": "x", "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n\n", "too deeply"),
}


@BOTH
@pytest.mark.parametrize("case", UNREADABLE.values(), ids=UNREADABLE.keys())
async def test_stream_data_python_will_not_read_is_a_clear_provider_error(
    kit: ProviderKit, case: tuple[bytes, str]
) -> None:
    """Before: a raw ``ValueError`` (digits) or ``RecursionError`` left the transport, not a ``ProviderError``."""
    body, words = case
    _, error = await collect(kit.mock(streaming(lambda: pieces(body))))
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith("OpenAI sent stream data")
    assert words in str(error)


@BOTH
@pytest.mark.parametrize("case", UNREADABLE.values(), ids=UNREADABLE.keys())
async def test_whole_json_python_will_not_read_is_an_error_also_as_the_last_event_without_its_blank_line(
    kit: ProviderKit, case: tuple[bytes, str]
) -> None:
    """The last event of a body without its blank line is read when its JSON is whole (before, it was dropped): data
    Python will not read is then the same clear error, not a reply that silently broke off."""
    body, words = case
    _, error = await collect(kit.mock(streaming(lambda: pieces(body.rstrip(b"\n")))))
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith("OpenAI sent stream data")
    assert words in str(error)


async def test_anthropic_stream_data_nested_too_deeply_is_a_clear_provider_error() -> None:
    body = b'event: message_start\ndata: {"type": "message_start", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n\n"
    transport = AnthropicTransport("claude", client=anthropic_kit.MockAPI(body).client())
    _, error = await collect(transport)
    assert isinstance(error, ProviderError), repr(error)
    assert "not JSON" in str(error)


@BOTH
async def test_an_event_that_never_ends_is_an_error_not_a_buffer_growing_forever(
    kit: ProviderKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: bytes without a blank line were buffered without limit (the read timeout never fires while bytes
    come), until memory ran out."""
    monkeypatch.setattr(_sse, "MAX_EVENT_BYTES", 1024 * 1024)
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'data: {"type": "response.output_text.delta", "delta": "'
        while True:
            sent += 65536
            yield b"x" * 65536
            await asyncio.sleep(0)

    _, error = await collect(kit.mock(streaming(endless)))
    assert isinstance(error, ProviderError), repr(error)
    assert "sent a stream event of more than 1 MB without ending it" in str(error)
    assert sent < 2 * 1024 * 1024


async def test_a_50_mb_data_line_in_small_chunks_is_read() -> None:
    text = "x" * 50_000_000
    line = b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}).encode() + b"\n\n"
    end = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    body = line + end
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    events, error = await collect(KITS["openai_chat"].mock(streaming(lambda: pieces(*chunks))), timeout=60)
    assert error is None
    assert [len(e.text) for e in events if isinstance(e, TextDelta)] == [50_000_000]


async def test_a_gemini_chunk_the_sdk_cannot_read_is_said_to_be_the_replys() -> None:
    """Before: "the SDK could not read the request", for a chunk of the reply (a signature that is not base64)."""
    body = b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi", "thoughtSignature": "!!"}]}}]}\r\n\r\n'
    _, error = await collect(GeminiAPI(body).transport())
    assert isinstance(error, ProviderError), repr(error)
    assert "the SDK could not read a chunk of the reply" in str(error)
