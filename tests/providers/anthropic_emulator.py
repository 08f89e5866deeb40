"""Test helpers for the Anthropic transport: recorded streams, a mocked SDK client, and a small Messages API emulator.

The emulator speaks the wire format of ``POST /v1/messages`` with ``stream: true``: each request goes to a script
step (a function of the request body) that returns the content blocks of the reply, which are streamed as the
API streams them (text in small deltas, tool input as ``input_json_delta`` pieces).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from ai_widgets.events import StreamEvent
from ai_widgets.transports import AnthropicTransport, ChatRequest
from tests.providers.loopback import Request, Response

FIXTURES = Path(__file__).parent.parent / "fixtures" / "providers"
FAKE_KEY = "sk-" + "test-SECRET123456789"


def recorded(name: str) -> bytes:
    """The bytes of ``data/<name>.sse``."""
    return (FIXTURES / "data" / f"{name}.sse").read_bytes()


def expected(name: str) -> dict[str, Any]:
    """The parse a correct parser must produce, ``expected/<name>.expected.json``."""
    return json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text())


# --- a mocked SDK client ----------------------------------------------------------------------------------------------


class MockAPI:
    """Answers the SDK's requests in process (``httpx2.MockTransport``), recording each request body.

    Args:
        responses: One per request (the last repeats): SSE bytes (status 200), or ``(status, json_body)``.
        chunk_size: Bytes per chunk of a streamed body (1 cuts it into single bytes, mid-UTF-8 included).
        delay: Seconds before each chunk.
    """

    def __init__(self, *responses: bytes | tuple[int, Any], chunk_size: int | None = None, delay: float = 0.0) -> None:
        self.responses = list(responses)
        self.chunk_size = chunk_size
        self.delay = delay
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(dict(request.headers))
        answer = self.responses[min(len(self.bodies), len(self.responses)) - 1]
        if isinstance(answer, tuple):
            status, body = answer
            return httpx2.Response(status, json=body)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=self._chunks(answer))

    async def _chunks(self, body: bytes) -> AsyncIterator[bytes]:
        size = self.chunk_size or len(body) or 1
        for start in range(0, len(body), size):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield body[start : start + size]

    def client(self, *, api_key: str = FAKE_KEY, max_retries: int = 0) -> anthropic.AsyncAnthropic:
        http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
        return anthropic.AsyncAnthropic(api_key=api_key, max_retries=max_retries, http_client=http_client)

    def transport(self, model: str = "claude-test", **kwargs: Any) -> AnthropicTransport:
        return AnthropicTransport(model, client=self.client(), **kwargs)


class Recording:
    """A transport wrapper that keeps every event it passes on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.events: list[StreamEvent] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(request):
            self.events.append(event)
            yield event


# --- the wire format ---------------------------------------------------------------------------------------------------


def sse(events: list[dict[str, Any]]) -> bytes:
    """Messages API events as the server frames them (``event:`` line, ``data:`` line, blank line)."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def reply_events(
    blocks: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 20,
    output_tokens: int = 10,
    piece: int = 4,
    message_stop: bool = True,
) -> list[dict[str, Any]]:
    """The stream of one reply made of ``blocks`` (``text``, ``thinking``, ``tool_use`` with an ``input`` dict, or
    any other block, sent whole in its ``content_block_start``)."""
    usage = {"input_tokens": input_tokens, "cache_read_input_tokens": 0, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_emulated", "type": "message", "role": "assistant", "model": "claude-emulated"},
        }
    ]
    events[0]["message"] |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            deltas = [{"type": "text_delta", "text": t} for t in pieces(block["text"], piece)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            deltas = [{"type": "thinking_delta", "thinking": t} for t in pieces(block["thinking"], piece)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind in ("tool_use", "server_tool_use"):
            start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            arguments = json.dumps(block.get("input", {})) if block.get("input") else ""
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, piece)]
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
            deltas = []
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    if message_stop:
        events.append({"type": "message_stop"})
    return events


# --- a loopback emulator -----------------------------------------------------------------------------------------------

Step = Callable[[dict[str, Any]], list[dict[str, Any]]]


class Emulator:
    """A scripted Messages API for the loopback server: request ``n`` is answered by ``steps[n]`` (the last repeats).

    A step takes the request body and returns the reply's events (see :func:`reply_events`), or a ``Response``.
    """

    def __init__(self, *steps: Callable[[dict[str, Any]], list[dict[str, Any]] | Response]) -> None:
        self.steps = steps
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Request) -> Response:
        body = request.json()
        self.bodies.append(body)
        step = self.steps[min(len(self.bodies), len(self.steps)) - 1]
        answer = step(body)
        if isinstance(answer, Response):
            return answer
        data = sse(answer)
        return Response(chunks=pieces_bytes(data, 97))


def pieces_bytes(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the last user message of a request body."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def error_response(status: int, error_type: str, message: str) -> Response:
    payload = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    # retry-after-ms keeps the SDK's retries quick in tests (it honours the header).
    headers = {"content-type": "application/json", "retry-after-ms": "10"}
    return Response(status=status, headers=headers, chunks=[payload])
