"""Test helpers for the Gemini transport: the recorded streams, a client of the real SDK answered in process, and
the wire format of ``streamGenerateContent?alt=sse`` to script replies with.

The recorded streams are ``tests/fixtures/providers/data/gemini_*.sse`` and ``vertex_gemini_*.sse`` (see
``tests/fixtures/providers/SOURCES.md`` for where they come from and ``licenses/`` for their licences).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from google import genai
from google.genai import types

from ai_widgets.transports import GeminiTransport
from tests.providers.loopback import Request, Response

FIXTURES = Path(__file__).parent.parent / "fixtures" / "providers"
# A key in Google's format, so the generic key pattern would catch it too; tests check it never shows.
FAKE_KEY = "AIza" + "SyTEST-SECRET-0123456789abcdefghijk"


def recorded(name: str) -> bytes:
    """The bytes of ``data/<name>.sse``."""
    return (FIXTURES / "data" / f"{name}.sse").read_bytes()


def expected(name: str) -> dict[str, Any]:
    """The parse a correct parser must produce, ``expected/<name>.expected.json``."""
    return json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text())


def recorded_chunks(name: str) -> list[dict[str, Any]]:
    """The JSON chunks of a recorded stream, in order."""
    text = recorded(name).decode().replace("\r\n", "\n")
    return [json.loads(block[len("data: ") :]) for block in text.split("\n\n") if block.startswith("data: ")]


# --- the wire format ---------------------------------------------------------------------------------------------------


def sse(chunks: list[dict[str, Any]]) -> bytes:
    """Chunks as Gemini frames them (``data: <json>`` and a blank line, CRLF line ends)."""
    return b"".join(f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in chunks)


def chunk(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """One streamed ``GenerateContentResponse`` with these parts."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    data: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "resp-test"}
    if usage is not None:
        data["usageMetadata"] = usage
    return data


def text_reply(text: str, *, pieces: int = 3, signature: str | None = None) -> bytes:
    """A reply of text in ``pieces`` chunks, then a final chunk (with a thought signature, when given)."""
    size = max(1, -(-len(text) // pieces))
    chunks = [chunk({"text": text[i : i + size]}) for i in range(0, len(text), size)]
    last: dict[str, Any] = {"text": ""}
    if signature is not None:
        last["thoughtSignature"] = signature
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 7, "totalTokenCount": 19}
    chunks.append(chunk(last, finish="STOP", usage=usage))
    return sse(chunks)


def call_reply(*calls: dict[str, Any], text: str | None = None) -> bytes:
    """A reply with (optional text and) whole function calls: each ``{"name", "args", "id"?, "thoughtSignature"?}``."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for call in calls:
        part: dict[str, Any] = {"functionCall": {k: v for k, v in call.items() if k != "thoughtSignature"}}
        if "thoughtSignature" in call:
            part["thoughtSignature"] = call["thoughtSignature"]
        parts.append(part)
    usage = {"promptTokenCount": 30, "candidatesTokenCount": 9, "totalTokenCount": 39}
    return sse([chunk(*parts), chunk({"text": ""}, finish="STOP", usage=usage)])


def error_body(code: int, status: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
    """Google's error body."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        error["details"] = details
    return {"error": error}


# --- the real SDK, answered in process ------------------------------------------------------------------------------


class MockAPI:
    """Answers the SDK's requests in process (``httpx2.MockTransport``), recording each request.

    Args:
        responses: One per request (the last repeats): SSE bytes (status 200), or ``(status, json_body)``.
        chunk_size: Bytes per chunk of a streamed body (1 cuts it into single bytes, mid-UTF-8 and mid-CRLF included).
        delay: Seconds before each chunk.
    """

    def __init__(self, *responses: bytes | tuple[int, Any], chunk_size: int | None = None, delay: float = 0.0) -> None:
        self.responses = list(responses)
        self.chunk_size = chunk_size
        self.delay = delay
        self.bodies: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.headers: list[dict[str, str]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.urls.append(str(request.url))
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

    def http_options(self, *, attempts: int = 1) -> types.HttpOptions:
        return types.HttpOptions(
            httpx_async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)),
            retry_options=types.HttpRetryOptions(attempts=attempts, initial_delay=0.01, max_delay=0.02, jitter=0),
        )

    def client(self, *, api_key: str = FAKE_KEY, attempts: int = 1) -> genai.Client:
        """A Gemini Developer API client."""
        return genai.Client(api_key=api_key, http_options=self.http_options(attempts=attempts))

    def vertex_client(self, *, attempts: int = 1) -> genai.Client:
        """A Vertex AI client with a fixed access token (no Google Cloud credentials are looked up)."""
        from google.oauth2.credentials import Credentials

        return genai.Client(
            vertexai=True,
            project="test-project",
            location="us-central1",
            credentials=Credentials(token="ya29.test-token"),
            http_options=self.http_options(attempts=attempts),
        )

    def transport(self, model: str = "gemini-3-flash-preview", **kwargs: Any) -> GeminiTransport:
        return GeminiTransport(model, client=self.client(), **kwargs)

    def vertex_transport(self, model: str = "gemini-3-flash-preview", **kwargs: Any) -> GeminiTransport:
        return GeminiTransport(model, client=self.vertex_client(), **kwargs)


# --- a loopback emulator (the transport's own client, over real HTTP) ------------------------------------------------


class Emulator:
    """A scripted Gemini API for the loopback server: request ``n`` is answered by ``steps[n]`` (the last repeats).

    A step takes the request body and returns SSE bytes, or a ``Response``.
    """

    def __init__(self, *steps: Any) -> None:
        self.steps = steps
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []

    def __call__(self, request: Request) -> Response:
        self.bodies.append(request.json())
        self.paths.append(request.path)
        step = self.steps[min(len(self.bodies), len(self.steps)) - 1]
        answer = step(self.bodies[-1]) if callable(step) else step
        if isinstance(answer, Response):
            return answer
        return Response(chunks=[answer[i : i + 97] for i in range(0, len(answer), 97)])


def error_response(code: int, status: str, message: str, details: list[Any] | None = None) -> Response:
    payload = json.dumps(error_body(code, status, message, details)).encode()
    return Response(status=code, headers={"content-type": "application/json"}, chunks=[payload])


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``functionResponse``s of the request's last user content that has any."""
    for content in reversed(body["contents"]):
        found = [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]
        if found:
            return found
    return []
