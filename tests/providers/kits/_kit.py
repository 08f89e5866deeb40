"""The shape every provider kit has (``ProviderKit``), and what the four kits share: the recorded streams and their
expected parses, and a transport wrapper that keeps what it passes on.

The recorded streams are ``tests/fixtures/providers/data/*.sse`` (copied from ``../shared/fixtures/providers/``; see
``tests/fixtures/providers/SOURCES.md`` for where each comes from and ``licenses/`` for their licences).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from ai_widgets.events import StreamEvent
from ai_widgets.transports import ChatRequest
from tests.providers.loopback import Response

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "providers"

#: Answers one request of an SDK client in process (``httpx2.MockTransport``).
MockHandler = Callable[[httpx2.Request], httpx2.Response]


def recorded(name: str) -> bytes:
    """The bytes of the recorded stream ``data/<name>.sse``."""
    return (FIXTURES / "data" / f"{name}.sse").read_bytes()


def expected(name: str) -> dict[str, Any]:
    """The parse a correct parser must produce of a recorded stream, ``expected/<name>.expected.json``."""
    parse: dict[str, Any] = json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text(encoding="utf-8"))
    return parse


@dataclass(frozen=True)
class Wording:
    """How a transport words the failures every transport shares, for a server at ``url`` (as given to ``make``).

    Each is the whole ``str(ProviderError)`` or the start of it, as each field says.
    """

    #: The server did not answer within ``seconds`` (the whole text, retries off).
    timeout: Callable[[str, float], str]
    #: The server stopped sending mid-reply for longer than ``seconds`` (the whole text).
    stalled: Callable[[str, float], str]
    #: Nothing listens at the URL (the start of the text; the HTTP library's reason follows, when it gives one).
    refused: Callable[[str], str]
    #: The connection broke off mid-reply (the start of the text; the HTTP library's reason follows, when it gives
    #: one).
    dropped: Callable[[str], str]
    #: How the errors of an HTTP status name the provider at ``url``.
    provider: Callable[[str], str]
    #: Where those errors say the key comes from.
    key_hint: str


@dataclass(frozen=True)
class ProviderKit:
    """Everything a test needs to run one transport against a local emulator, the same shape for all four.

    The emulator is :func:`tests.providers.loopback.loopback` (a real HTTP server on 127.0.0.1, started by the test)
    serving what the kit's wire builders write; ``mock`` is the same transport on an SDK client answered in process,
    for a body a test must watch (how far it was read, whether it was closed: :class:`Body`) or one a real server
    cannot send.
    """

    #: The test id, and the kit module's name.
    name: str
    #: The transport class (``ai_widgets.transports``).
    transport: type[Any]
    #: ``make(url, **options)``: the transport for a loopback emulator at ``url`` (the kit adds the API's base path),
    #: with the kit's key unless ``api_key=`` is given; options are the transport's own.
    make: Callable[..., Any]
    #: ``mock(handler, **options)``: the transport on an SDK client whose HTTP goes to ``handler``, in process.
    mock: Callable[..., Any]
    #: The server ``mock``'s clients are for, as ``make`` and the wording take it (the provider's own API).
    mock_url: str
    #: An SDK client (in process, never called), for ``client=``.
    client: Callable[[], Any]
    #: The key the kit's transports get; it must never show.
    key: str
    #: The key as the provider's error messages quote it (OpenAI masks the middle; the tail is still a secret's).
    key_as_echoed: str
    #: The environment variable the transport reads its key from.
    key_variable: str
    #: Every environment variable that would give the transport a key or a server (cleared to have neither).
    settings: tuple[str, ...]
    #: The start of the error for no key at all, at construction.
    missing_key: str
    #: ``reply(text, pieces=3)``: a complete reply saying ``text`` in ``pieces`` text deltas, one bytes per SSE event,
    #: the last one JSON (it completes the reply).
    reply: Callable[..., list[bytes]]
    #: The event after which the transport reads nothing as the reply (the last of ``reply``, or one that may
    #: follow it); ``None`` when the wire format has none (the body's end is the reply's end).
    terminal: bytes | None
    #: The provider's HTTP error response with its own ``message`` (JSON, shaped as the provider shapes it).
    error: Callable[[int, str], Response]
    #: The connection options besides ``api_key=`` and ``base_url=`` that ``client=`` excludes.
    connection_options: tuple[Mapping[str, Any], ...]
    #: The recorded streams of this transport's wire format (names under ``fixtures/providers/data``).
    recordings: tuple[str, ...]
    #: How the transport words the shared failures.
    wording: Wording
    #: A model name, for a transport made here.
    model: str = "test-model"


class MockAPI:
    """An SDK client's HTTP answered in process (``httpx2.MockTransport``), recording each request; each kit's
    ``MockAPI`` adds ``client()`` and ``transport()`` for its SDK.

    Args:
        responses: One per request (the last repeats): SSE bytes (status 200), ``(status, json_body)``, or a
            handler that makes the response.
        chunk_size: Bytes per chunk of a streamed body (1 cuts it into single bytes, mid-UTF-8 included).
        delay: Seconds before each chunk.
    """

    def __init__(
        self, *responses: bytes | tuple[int, Any] | MockHandler, chunk_size: int | None = None, delay: float = 0.0
    ) -> None:
        self.responses = list(responses)
        self.chunk_size = chunk_size
        self.delay = delay
        self.requests: list[httpx2.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests, in order."""
        return [json.loads(request.content) for request in self.requests]

    @property
    def headers(self) -> list[dict[str, str]]:
        return [dict(request.headers) for request in self.requests]

    @property
    def urls(self) -> list[str]:
        return [str(request.url) for request in self.requests]

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        self.requests.append(request)
        answer = self.responses[min(len(self.requests), len(self.responses)) - 1]
        if isinstance(answer, tuple):
            status, body = answer
            return httpx2.Response(status, json=body)
        if isinstance(answer, bytes):
            return sse_response(answer, self.chunk_size, delay=self.delay)
        return answer(request)

    def http_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))


def sse_response(body: bytes, chunk_size: int | None = None, status: int = 200, delay: float = 0.0) -> httpx2.Response:
    """A streamed ``text/event-stream`` response, optionally in ``chunk_size``-byte pieces, ``delay`` s apart."""

    async def chunks() -> AsyncIterator[bytes]:
        size = chunk_size or len(body) or 1
        for start in range(0, len(body), size):
            if delay:
                await asyncio.sleep(delay)
            yield body[start : start + size]

    return httpx2.Response(status, headers={"content-type": "text/event-stream"}, content=chunks())


class Body(httpx2.AsyncByteStream):
    """A response body in pieces, ``stall`` seconds before the pieces after ``stall_after``, then ``error`` raised
    when given (the connection breaking as the HTTP library or the OS reports it); records how far it was read and
    whether it was closed."""

    def __init__(
        self,
        pieces: list[bytes],
        stall_after: int | None = None,
        stall: float = 0.0,
        *,
        error: Exception | None = None,
    ) -> None:
        self.pieces = pieces
        self.stall_after = stall_after
        self.stall = stall
        self.error = error
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for n, piece in enumerate(self.pieces):
            if n == self.stall_after:
                await asyncio.sleep(self.stall)
            self.read = n + 1
            yield piece
        if self.error is not None:
            raise self.error

    async def aclose(self) -> None:
        self.closed = True

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        """Answers every request with this body (status 200, ``text/event-stream``)."""
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=self)


class Recording:
    """A transport wrapper that keeps every event it passes on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.events: list[StreamEvent] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(request):
            self.events.append(event)
            yield event
