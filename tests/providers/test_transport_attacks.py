"""Hostile streams and tool results for the provider transports: data Python's JSON reader refuses, an event that
never ends, a 50 MB data line, images that are cut short or empty, images a conversation gathers past what one request
may carry, and Gemini chunks the SDK cannot read. Each test here failed before the fix it guards (the 50 MB line and
the whole images guard that the new limits leave room for what is fine)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from ai_widgets import Message, ToolCallState, ToolOutcome
from ai_widgets.events import StreamEvent, TextDelta
from ai_widgets.messages import Role
from ai_widgets.transports import (
    AnthropicTransport,
    ChatRequest,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ProviderError,
    _sse,
)
from ai_widgets.transports._history import outcome_images
from ai_widgets.transports._sse import SSEDecoder
from tests.providers.histories import finished_call
from tests.providers.images import GIF, JPEG, PNG, WEBP
from tests.providers.kits import KITS, ProviderKit
from tests.providers.kits import anthropic as anthropic_kit
from tests.providers.kits.gemini import MockAPI as GeminiAPI
from tests.providers.kits.openai_chat import MockAPI as ChatAPI


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


def test_the_decoders_limit_counts_an_event_across_chunks() -> None:
    decoder = SSEDecoder("Example", max_event=100)
    assert decoder.feed(b"data: " + b"x" * 50) == []
    with pytest.raises(ProviderError, match="Example sent a stream event of more than"):
        decoder.feed(b"x" * 60)
    fine = SSEDecoder("Example", max_event=100)
    assert fine.feed(b"data: " + b"x" * 90 + b"\n\n" + b"data: 1") == [b" " + b"x" * 90]  # complete events are fine
    assert fine.feed(b"\n\n") == [b" 1"]


async def test_a_50_mb_data_line_in_small_chunks_is_read() -> None:
    text = "x" * 50_000_000
    line = b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}).encode() + b"\n\n"
    end = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    body = line + end
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    events, error = await collect(KITS["openai_chat"].mock(streaming(lambda: pieces(*chunks))), timeout=60)
    assert error is None
    assert [len(e.text) for e in events if isinstance(e, TextDelta)] == [50_000_000]


# --- images a provider would refuse, which would fail every later request --------------------------------------------


def image_call(*attachments: dict[str, Any]) -> Any:
    return finished_call(
        "call_img", "snap", "{}", state=ToolCallState.COMPLETED, outcome=ToolOutcome.success(attachments=attachments)
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


WHOLE = {"png": PNG, "jpeg": JPEG, "gif": GIF, "webp": WEBP}
CUT_SHORT = {
    "empty": "",
    "png-signature-only": b64(base64.b64decode(PNG)[:8]),
    "png-cut-before-its-end": b64(base64.b64decode(PNG)[:40]),
    "jpeg-three-bytes": b64(b"\xff\xd8\xff"),
    "jpeg-without-its-end": b64(base64.b64decode(JPEG)[:-2]),
    "gif-without-its-trailer": b64(base64.b64decode(GIF)[:-1]),
    "webp-shorter-than-its-riff-size": b64(base64.b64decode(WEBP)[:-4]),
}


@pytest.mark.parametrize("data", CUT_SHORT.values(), ids=CUT_SHORT.keys())
def test_an_image_cut_short_stays_on_the_card(data: str) -> None:
    """Before: anything with an image's first bytes was sent, and the provider's refusal ("could not process image")
    failed that request and every later one, as the image stays in the history."""
    assert outcome_images(image_call({"mime_type": "image/png", "data": data}), max_chars=10**8) == []


@pytest.mark.parametrize("data", WHOLE.values(), ids=WHOLE.keys())
def test_whole_images_still_go_also_with_bytes_after_their_end(data: str) -> None:
    assert len(outcome_images(image_call({"mime_type": "image/png", "data": data}), max_chars=10**8)) == 1
    padded = b64(base64.b64decode(data) + b"\x00" * 7)  # bytes after the end: decoders ignore them
    assert len(outcome_images(image_call({"mime_type": "image/png", "data": padded}), max_chars=10**8)) == 1


@pytest.mark.parametrize(
    "url", ["https://", "https://example.com/a b.png", "https://example.com/\nx.png", "http://[::1"]
)
def test_a_url_no_provider_can_fetch_stays_on_the_card(url: str) -> None:
    assert outcome_images(image_call({"mime_type": "image/png", "url": url}), max_chars=10**8) == []


def test_a_cut_short_image_is_not_in_any_providers_request() -> None:
    cut = b64(base64.b64decode(PNG)[:40])
    history = [Message.user("snap"), Message(Role.ASSISTANT, [image_call({"mime_type": "image/png", "data": cut})])]
    client = ChatAPI().client()
    for transport in (OpenAIChatTransport("m", client=client), OpenAIResponsesTransport("m", client=client)):
        assert cut not in json.dumps(transport.request_messages(history))
    assert cut not in json.dumps(
        GeminiTransport("gemini-3-flash", client=GeminiAPI().client()).request_messages(history)
    )


# --- Gemini -----------------------------------------------------------------------------------------------------------


async def test_a_gemini_chunk_the_sdk_cannot_read_is_said_to_be_the_replys() -> None:
    """Before: "the SDK could not read the request", for a chunk of the reply (a signature that is not base64)."""
    body = b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi", "thoughtSignature": "!!"}]}}]}\r\n\r\n'
    _, error = await collect(GeminiAPI(body).transport())
    assert isinstance(error, ProviderError), repr(error)
    assert "the SDK could not read a chunk of the reply" in str(error)


# --- images a conversation gathers, past a whole request's limits -----------------------------------------------------


def big_png(index: int, size: int) -> str:
    """A whole PNG of about ``size`` base64 characters (a private chunk pads it; decoders skip it), unique by index."""
    raw = base64.b64decode(PNG)
    padding = b"\x00" * (size * 3 // 4)
    chunk = len(padding).to_bytes(4, "big") + b"prVt" + padding + index.to_bytes(4, "big")
    return b64(raw[:33] + chunk + raw[33:])


def screenshots(count: int, size: int) -> tuple[list[Message], list[str]]:
    """A conversation in which a tool returned one image per call, ``count`` calls, oldest first."""
    images = [big_png(i, size) for i in range(count)]
    parts = [
        finished_call(
            f"call_{i}",
            "screenshot",
            "{}",
            outcome=ToolOutcome.success("shot", attachments=[{"mime_type": "image/png", "data": image}]),
        )
        for i, image in enumerate(images)
    ]
    return [Message.user("browse"), Message(Role.ASSISTANT, parts)], images


#: The model each kit's transport is made for here, and the base64 characters of images its provider takes in one
#: request (with room for text).
LIMITS: dict[str, tuple[str, int]] = {
    "openai_chat": ("m", 40 * 1024 * 1024),
    "openai_responses": ("m", 40 * 1024 * 1024),
    "anthropic": ("claude", 24 * 1024 * 1024),
    "gemini": ("gemini-3-flash", 14 * 1024 * 1024),
}


@pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())
def test_images_gathered_over_a_conversation_stay_within_one_requests_limit(kit: ProviderKit) -> None:
    """Before: each image was checked alone, so a conversation of screenshots (here 12 of 4.5 MB) grew past what one
    request may carry (Gemini's 20 MB, Anthropic's 32 MB, OpenAI's 50 MB), and the provider refused that request and
    every later one. Now the newest images that fit go; the oldest stay on their cards."""
    model, limit = LIMITS[kit.name]
    history, images = screenshots(12, 4_500_000)
    body = json.dumps(kit.transport(model, client=kit.client()).request_messages(history))
    sent = [i for i, image in enumerate(images) if image in body]
    assert sent, "no image went at all"
    assert sent == list(range(12 - len(sent), 12))  # the newest ones
    assert len(sent) * 4_500_000 <= limit
    assert len(sent) < 12


def test_anthropics_limit_on_the_number_of_images() -> None:
    history, images = screenshots(130, 100)
    body = json.dumps(AnthropicTransport("claude", client=anthropic_kit.MockAPI().client()).request_messages(history))
    sent = [i for i, image in enumerate(images) if image in body]
    assert sent == list(range(30, 130))  # the newest 100
