"""The OpenAI Responses wire format for tests: event builders, an SDK client on a mock HTTP transport, an emulator.

Event shapes follow the recorded fixture ``openai_responses_reasoning_text_function_call.sse``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import httpx2
import openai

from tests.providers.loopback import Request, Response

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "providers"
FAKE_KEY = "sk-" + "test-SECRET123456789"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / "data" / f"{name}.sse").read_bytes()


def expected(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text(encoding="utf-8"))


def frames(events: Iterable[dict[str, Any]]) -> list[bytes]:
    """Events as the API frames them (``event: <type>``, ``data: <json>``), numbered: one bytes per event."""
    out = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
    return out


def encode(events: Iterable[dict[str, Any]]) -> bytes:
    """Events as one SSE body."""
    return b"".join(frames(events))


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The data payloads of an SSE body."""
    return [json.loads(line[len("data: ") :]) for line in body.decode().splitlines() if line.startswith("data: ")]


# --- event builders -----------------------------------------------------------------------------------------------


def created(response_id: str = "resp_test") -> dict[str, Any]:
    return {
        "type": "response.created",
        "response": {"id": response_id, "object": "response", "status": "in_progress", "output": []},
    }


def message(text_pieces: Iterable[str], index: int, item_id: str = "msg_test") -> list[dict[str, Any]]:
    pieces = list(text_pieces)
    item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    events += [
        {
            "type": "response.output_text.delta",
            "content_index": 0,
            "delta": piece,
            "item_id": item_id,
            "output_index": index,
        }
        for piece in pieces
    ]
    done = {**item, "status": "completed", "content": [{"type": "output_text", "text": "".join(pieces)}]}
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def function_call(
    name: str, argument_pieces: Iterable[str], index: int, call_id: str, item_id: str | None = None
) -> list[dict[str, Any]]:
    """A function call item: added, argument deltas, arguments done, item done (as recorded)."""
    pieces = list(argument_pieces)
    item_id = item_id or f"fc_{call_id}"
    item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id}
    item["name"] = name
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    events += [
        {"type": "response.function_call_arguments.delta", "delta": p, "item_id": item_id, "output_index": index}
        for p in pieces
    ]
    arguments = "".join(pieces)
    events.append(
        {
            "type": "response.function_call_arguments.done",
            "arguments": arguments,
            "item_id": item_id,
            "output_index": index,
        }
    )
    done = {**item, "status": "completed", "arguments": arguments}
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def reasoning(index: int, item_id: str, encrypted: str, summary: Iterable[str] = ()) -> list[dict[str, Any]]:
    summaries = list(summary)
    item = {"id": item_id, "type": "reasoning", "summary": []}
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    for n, text in enumerate(summaries):
        events.append(
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": item_id,
                "output_index": index,
                "summary_index": n,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        events.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": item_id,
                "output_index": index,
                "summary_index": n,
                "delta": text,
            }
        )
    done = {
        **item,
        "encrypted_content": encrypted,
        "summary": [{"type": "summary_text", "text": t} for t in summaries],
    }
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def completed(
    input_tokens: int = 10,
    output_tokens: int = 5,
    *,
    cached: int = 0,
    reasoning_tokens: int = 0,
    status: str = "completed",
    reason: str | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": "resp_test",
        "object": "response",
        "status": status,
        "output": [],
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        },
    }
    kind = "response.completed" if status == "completed" else f"response.{status}"
    return {"type": kind, "response": response}


# --- the SDK on a mock transport ------------------------------------------------------------------------------------


class _Chunks(httpx2.AsyncByteStream):
    """A body served in pieces of ``size`` bytes (1: every multi-byte character is split)."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data = data
        self._size = size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._data), self._size):
            yield self._data[start : start + self._size]


class MockAPI:
    """Answers each request with the next body; records the requests' JSON bodies."""

    def __init__(self, *bodies: bytes, chunk_size: int | None = None) -> None:
        self.bodies = list(bodies)
        self.chunk_size = chunk_size
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        self.headers.append(dict(request.headers))
        body = self.bodies.pop(0)
        size = self.chunk_size or max(1, len(body))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_Chunks(body, size))

    def client(self, *, api_key: str = FAKE_KEY, max_retries: int = 0) -> openai.AsyncOpenAI:
        http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))
        return openai.AsyncOpenAI(
            api_key=api_key, base_url="https://api.test/v1", http_client=http_client, max_retries=max_retries
        )


# --- a scripted emulator for the loopback server --------------------------------------------------------------------

Script = Callable[[dict[str, Any]], list[dict[str, Any]]]


def emulator(script: Script) -> Callable[[Request], Response]:
    """A loopback handler: ``script(request_json)`` gives the events, streamed one event per chunk."""

    def handle(request: Request) -> Response:
        return Response(chunks=frames(script(request.json())))

    return handle


def last_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function_call_output items after the last user message of a request body."""
    items = body["input"]
    last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
    return [item for item in items[last_user:] if item.get("type") == "function_call_output"]
