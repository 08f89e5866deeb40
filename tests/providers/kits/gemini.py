"""The Gemini kit: the transport against a loopback emulator, clients of the real SDK answered in process, the wire
format of ``streamGenerateContent?alt=sse`` to script replies with, and an emulator for the loopback server; and
what the Gemini test files share (a recorded stream's name, a key no generic pattern recognises, tools).
"""

from __future__ import annotations

import json
from typing import Any

from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from ai_widgets import (
    tool,
)
from ai_widgets.transports import GeminiTransport
from tests.providers.kits._kit import MockAPI as _MockAPI
from tests.providers.kits._kit import ProviderKit, Wording, recorded
from tests.providers.loopback import Request, Response

# A key in Google's format, so the generic key pattern would catch it too; tests check it never shows.
FAKE_KEY = "AIza" + "SyTEST-SECRET-0123456789abcdefghijk"


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


class MockAPI(_MockAPI):
    """``genai.Client``s whose HTTP is answered in process (see :class:`tests.providers.kits._kit.MockAPI`)."""

    def http_options(self, *, attempts: int = 1) -> types.HttpOptions:
        return types.HttpOptions(
            httpx_async_client=self.http_client(),
            retry_options=types.HttpRetryOptions(attempts=attempts, initial_delay=0.01, max_delay=0.02, jitter=0),
        )

    def client(self, *, api_key: str = FAKE_KEY, attempts: int = 1) -> genai.Client:
        """A Gemini Developer API client."""
        return genai.Client(api_key=api_key, http_options=self.http_options(attempts=attempts))

    def vertex_client(self, *, attempts: int = 1) -> genai.Client:
        """A Vertex AI client with a fixed access token (no Google Cloud credentials are looked up)."""
        return genai.Client(
            vertexai=True,
            project="test-project",
            location="us-central1",
            credentials=Credentials(token="ya29.test-token"),  # type: ignore[no-untyped-call]
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
    """Google's error response."""
    payload = json.dumps(error_body(code, status, message, details)).encode()
    return Response(status=code, headers={"content-type": "application/json"}, chunks=[payload])


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``functionResponse``s of the request's last user content that has any."""
    for content in reversed(body["contents"]):
        found = [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]
        if found:
            return found
    return []


def text_events(text: str, *, pieces: int = 3) -> list[bytes]:
    """:func:`text_reply`, one bytes per chunk; the last chunk has the finish reason (Gemini's end of a reply)."""
    body = text_reply(text, pieces=pieces)
    return [event + b"\r\n\r\n" for event in body.split(b"\r\n\r\n") if event]


_STATUS = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


KIT = ProviderKit(
    name="gemini",
    transport=GeminiTransport,
    make=lambda url, **options: GeminiTransport(
        "gemini-test", base_url=url, **({"api_key": FAKE_KEY, "max_retries": 0} | options)
    ),
    mock=lambda handler, **options: GeminiTransport("gemini-test", client=MockAPI(handler).client(), **options),
    mock_url="https://generativelanguage.googleapis.com",
    client=lambda: MockAPI().client(),
    key=FAKE_KEY,
    key_as_echoed=FAKE_KEY,
    key_variable="GEMINI_API_KEY",
    settings=(
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ),
    missing_key="No API key for Gemini: set GEMINI_API_KEY or GOOGLE_API_KEY, or pass api_key= or",
    terminal=None,
    reply=text_events,
    error=lambda status, message: error_response(status, _STATUS.get(status, "INTERNAL"), message),
    connection_options=({"vertexai": True}, {"project": "p"}),
    recordings=("gemini_function_call_empty_args_thought_signature", "vertex_gemini_partial_args_multi_call"),
    wording=Wording(
        timeout=lambda url, seconds: f"Gemini did not answer within {seconds:g} s, even after retries.",
        stalled=lambda url, seconds: "Gemini stopped sending the reply (read timeout).",
        refused=lambda url: "Could not reach Gemini, even after retries",
        dropped=lambda url: "The connection to Gemini broke off mid-reply",
        provider=lambda url: "Gemini",
        key_hint="GEMINI_API_KEY or GOOGLE_API_KEY, or api_key=",
    ),
)


# A key no generic pattern recognises: only the transport's own redaction keeps it out.
PLAIN_KEY = "gm" + "SECRET-plain-0123456789"


GEMINI_FIXTURE = "gemini_function_call_empty_args_thought_signature"


@tool
def get_country() -> str:
    """The country the person is in."""
    return "Mexico"


@tool
def read_screen(id: str) -> str:
    """Reads a screen.

    Args:
        id: The screen.
    """
    return f"screen {id}"
