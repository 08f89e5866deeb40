"""Test helpers for the Chat Completions transport: SDK clients on a mock HTTP transport, and a scripted
OpenAI-compatible server (SSE in the wire format) for the loopback server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai

from tests.providers.loopback import Request, Response

FIXTURES = Path(__file__).parent.parent / "fixtures" / "providers"
FAKE_KEY = "sk-" + "test-SECRET123456789"


def fixture_body(name: str) -> bytes:
    return (FIXTURES / "data" / f"{name}.sse").read_bytes()


def fixture_expected(name: str) -> dict[str, Any]:
    expected: dict[str, Any] = json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text())
    return expected


def pieces(body: bytes, size: int | None) -> Iterator[bytes]:
    """``body`` whole, or cut into ``size``-byte pieces."""
    if size is None:
        yield body
        return
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def _async_pieces(body: bytes, size: int | None) -> AsyncIterator[bytes]:
    for piece in pieces(body, size):
        yield piece


@dataclass
class Captured:
    """What a mock client was asked."""

    requests: list[httpx2.Request] = field(default_factory=list)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]


MockHandler = Callable[[httpx2.Request], httpx2.Response]


def sse_response(body: bytes, chunk_size: int | None = None, status: int = 200) -> httpx2.Response:
    """A streamed ``text/event-stream`` response, optionally in ``chunk_size``-byte pieces."""
    return httpx2.Response(
        status, headers={"content-type": "text/event-stream"}, content=_async_pieces(body, chunk_size)
    )


def mock_client(
    respond: MockHandler | bytes,
    *,
    chunk_size: int | None = None,
    base_url: str = "https://api.openai.com/v1",
    api_key: str = FAKE_KEY,
    max_retries: int = 0,
) -> tuple[openai.AsyncOpenAI, Captured]:
    """An ``AsyncOpenAI`` whose HTTP goes to ``respond`` (a handler, or an SSE body served to every request)."""
    captured = Captured()

    def handler(request: httpx2.Request) -> httpx2.Response:
        request.read()
        captured.requests.append(request)
        if isinstance(respond, bytes):
            return sse_response(respond, chunk_size)
        return respond(request)

    client = openai.AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )
    return client, captured


# --- the wire format, written by a scripted server ------------------------------------------------------------


def _chunk(choices: list[dict[str, Any]], *, usage: dict[str, Any] | None = None, rid: str) -> bytes:
    payload: dict[str, Any] = {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "emulated",
        "choices": choices,
    }
    if usage is not None:
        payload["usage"] = usage
    return f"data: {json.dumps(payload)}\n\n".encode()


def _slices(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass(frozen=True)
class Call:
    """A tool call the emulated model makes."""

    id: str
    name: str
    arguments: dict[str, Any]


def sse_reply(
    *,
    text: str = "",
    reasoning: str = "",
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (50, 20),
    finish: str | None = None,
    slice_size: int = 4,
    rid: str = "chatcmpl-emulated",
    done: bool = True,
) -> list[bytes]:
    """One streamed Chat Completions response, one SSE event per chunk, as OpenAI sends it."""
    out = [_chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}], rid=rid)]
    for piece in _slices(reasoning, slice_size) if reasoning else []:
        out.append(_chunk([{"index": 0, "delta": {"reasoning_content": piece}, "finish_reason": None}], rid=rid))
    for piece in _slices(text, slice_size) if text else []:
        out.append(_chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}], rid=rid))
    for index, call in enumerate(calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(_chunk([{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}], rid=rid))
        for piece in _slices(json.dumps(call.arguments), slice_size):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            out.append(_chunk([{"index": 0, "delta": delta, "finish_reason": None}], rid=rid))
    reason = finish or ("tool_calls" if calls else "stop")
    out.append(_chunk([{"index": 0, "delta": {}, "finish_reason": reason}], rid=rid))
    prompt, completion = usage
    usage_body = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    out.append(_chunk([], usage=usage_body, rid=rid))
    if done:
        out.append(b"data: [DONE]\n\n")
    return out


# --- a scripted model behind the loopback server --------------------------------------------------------------


class ChatEmulator:
    """An OpenAI-compatible server: the first request of a turn gets a streamed tool call; a follow-up (the last
    message is a ``tool`` result) gets text built from the tool results it carries.

    Args:
        calls: The calls made on a turn's first request (from its body).
        answer: The follow-up's text, from the ``tool`` messages after the last assistant message.
    """

    def __init__(
        self,
        calls: Callable[[dict[str, Any]], Sequence[Call]],
        answer: Callable[[list[dict[str, Any]]], str],
    ) -> None:
        self._calls = calls
        self._answer = answer
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Request) -> Response:
        body = request.json()
        self.bodies.append(body)
        rid = f"chatcmpl-{len(self.bodies)}"
        messages = body["messages"]
        if messages[-1]["role"] == "tool":
            results: list[dict[str, Any]] = []
            for message in reversed(messages):
                if message["role"] != "tool":
                    break
                results.insert(0, message)
            return Response(chunks=sse_reply(text=self._answer(results), rid=rid))
        return Response(chunks=sse_reply(calls=self._calls(body), rid=rid))
