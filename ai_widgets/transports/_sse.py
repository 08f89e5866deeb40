"""Reading a provider's server-sent-event stream, the one way every SSE transport reads it: :func:`sse_stream` opens
the response, feeds its bytes to :class:`SSEDecoder`, hands each event's data to the provider's parser (a
:class:`StreamParser`), stops at the parser's ``done`` and drains the rest of the body, and closes the body however
the reading ends (the consumer stopping included).

A last event the body ends in without its blank line: the WHATWG rule (HTML, "Server-sent events", interpreting an
event stream) discards it ("If the file ends in the middle of an event, before the final empty line, the incomplete
event is not dispatched"). Here it is dispatched when its data is complete JSON, as every provider's event data is one
JSON value: servers and proxies that omit the last blank line (or a connection closed right after the data) would
otherwise lose a reply's last event, often the one that completes it. Data that is not complete JSON was cut off and is
discarded, as the rule says; the reply then lacks its end, and the session reports it as broken off ("The model's
response broke off before it was complete."), like any stream that ends before the reply finished.

Gemini's SDK reads its server-sent events itself, so ``GeminiTransport`` feeds the SDK's chunks to its parser in the
same steps without this loop; that SDK too hands on a last event without its blank line, and one cut off reaches the
transport as the SDK's parse error, which it reads as this loop reads a cut-off last event.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

import anyio  # the HTTP client of every provider SDK runs on it
from pydantic_core import from_json

from ai_widgets.events import ResponseStarted, StreamEvent
from ai_widgets.transports._errors import ProviderError, classified

__all__ = ["MAX_EVENT_BYTES", "SSEDecoder", "StreamParser", "body_chunks", "drain", "load_json", "sse_stream"]

Payload_contra = TypeVar("Payload_contra", contravariant=True)


class StreamParser(Protocol[Payload_contra]):
    """A provider's stream parser: one per response, fed each event's data in order, and told when the stream ended.

    A parser never yields ``ResponseStarted``: the loop that reads the stream yields it once, when the response has
    begun (its status and headers arrived), before any event of the parser.
    """

    @property
    def done(self) -> bool:
        """Whether the provider marked the end of its reply (an end marker or terminal event): nothing after it is
        read."""
        ...

    def feed(self, payload: Payload_contra) -> list[StreamEvent]:
        """The events of one stream event's data.

        Raises:
            ProviderError: The data is an error the provider reported, a stream that makes no sense, or data that
                cannot be read.
        """
        ...

    def end(self) -> list[StreamEvent]:
        """The events once the stream ended (at ``done`` or with the body): the reply's completion where the
        provider's stream leaves it to the end, and none for a reply that broke off (the session says so)."""
        ...


async def sse_stream(
    send: Callable[[], AbstractAsyncContextManager[Any]],
    parser: StreamParser[bytes],
    *,
    label: str,
    map_error: Callable[[Exception, bool], ProviderError | None],
) -> AsyncIterator[StreamEvent]:
    """The events of one streamed response: ``ResponseStarted`` once it began, then the parser's events.

    Args:
        send: Sends the request; its context is the streamed response (an SDK's ``with_streaming_response``, or a
            response with ``http_response``), not read yet. The SDK's retries and HTTP errors happen on entering it.
        parser: The provider's parser for this response.
        label: The provider's name, for the decoder's errors.
        map_error: A clear, key-free error for what was raised, given whether the response had begun (``None``:
            raised as it is).

    Raises:
        ProviderError: What ``map_error`` made of a failure.
    """
    decoder = SSEDecoder(label)
    responded = False  # once the response began, nothing is retried
    try:
        async with send() as response, body_chunks(response) as chunks:
            responded = True
            yield ResponseStarted()
            async for chunk in chunks:
                for payload in decoder.feed(chunk):
                    for event in parser.feed(payload):
                        yield event
                    if parser.done:
                        break
                if parser.done:
                    await drain(chunks)
                    break
            else:
                for payload in decoder.close():  # a last event without its blank line (see the module docstring)
                    if not cut_off(payload):
                        for event in parser.feed(payload):
                            yield event
        for event in parser.end():
            yield event
    except Exception as exc:
        error = map_error(exc, responded)
        if error is None:
            raise
        raise classified(error) from None


def cut_off(payload: bytes) -> bool:
    """Whether an event's data ends before its JSON does (or mid-character). Whole JSON that Python will not read (an
    integer of 5,000 digits, nesting too deep) is not cut off: the parser reports it as it reports any event's."""
    try:
        load_json(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return True
    except (ValueError, RecursionError):
        return False
    return False


def load_json(payload: bytes) -> Any:
    """``json.loads(payload)``, read by pydantic-core's parser where it can (four to five times faster on a stream
    event).

    Whatever that parser refuses is read by ``json.loads`` instead, so the result, and the error of data neither
    reads, are exactly ``json.loads``'s: lone surrogates, a byte-order mark, nesting deeper than its 200 levels.

    Raises:
        ValueError: ``payload`` is not JSON, not UTF-8, or holds an integer of more than 4,300 digits.
        RecursionError: ``payload`` is nested deeper than the interpreter's recursion limit.
    """
    try:
        return from_json(payload)
    except ValueError:
        return json.loads(payload)


@contextlib.asynccontextmanager
async def body_chunks(response: Any) -> AsyncIterator[AsyncIterator[bytes]]:
    """The byte chunks of an SDK's streamed response (``with_streaming_response``) as they arrive; the iterator is
    closed on leaving, however that happens.

    An uncompressed body is read straight off the HTTP client's stream: the SDK's ``iter_bytes`` adds three
    generator layers (its own, and the HTTP client's decoding and byte counting), which every chunk pays for and
    which do nothing to an identity body. A compressed body goes through ``iter_bytes``, which decodes it, and so
    does a response that is not the SDK's (without ``http_response.stream``).
    """
    http_response: Any = getattr(response, "http_response", None)
    stream = getattr(http_response, "stream", None)
    encoding = http_response.headers.get("content-encoding", "").strip().lower() if stream is not None else None
    chunks: AsyncIterator[bytes] = (
        stream.__aiter__() if stream is not None and encoding in ("", "identity") else response.iter_bytes()
    )
    try:
        yield chunks
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


#: The most bytes one server-sent event may take before its blank line: a stream that never ends its event (a broken
#: server or proxy) is an error at this size rather than a buffer that grows until memory runs out. Far above any
#: provider's largest event (a Responses ``response.completed`` repeating generated images is a few MB).
MAX_EVENT_BYTES = 128 * 1024 * 1024


class SSEDecoder:
    """Splits a server-sent-event byte stream into its events' ``data``, whatever the chunking.

    Chunks may end anywhere, mid-line or mid-UTF-8 character: events are cut only at blank lines (ASCII), and each
    payload is left as bytes for ``json.loads``. Lines end with LF, CRLF or CR. Only ``data:`` lines are kept (an
    event's several ``data:`` lines joined by line breaks); ``event:``, ``id:``, ``retry:`` and ``:`` comment lines
    are dropped, and so is an event without data: every provider's payload carries its own ``type``. A payload keeps
    the space after ``data:``, which JSON ignores.

    Args:
        label: The provider's name, for the error of an event that grows past ``max_event`` bytes unfinished.
        max_event: The most bytes an unfinished event may hold (:data:`MAX_EVENT_BYTES` by default).
    """

    __slots__ = ("_buffer", "_cr", "_label", "_max")

    def __init__(self, label: str = "The server", *, max_event: int | None = None) -> None:
        self._buffer = bytearray()
        self._cr = False
        self._label = label
        self._max = MAX_EVENT_BYTES if max_event is None else max_event

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events this chunk completes.

        Raises:
            ProviderError: An event grew past ``max_event`` bytes without its blank line.
        """
        if not chunk:
            return []
        if self._cr or b"\r" in chunk:
            chunk = self._normalize(chunk)
        buffer = self._buffer
        if buffer:
            start = len(buffer) - 1  # a blank line may straddle the previous chunk and this one
            buffer += chunk
            if buffer.find(b"\n\n", start) < 0:
                if len(buffer) > self._max:
                    self._too_large()
                return []
            chunk = bytes(buffer)
            buffer.clear()
        elif chunk.endswith(b"\n\n") and chunk.find(b"\n\n") == (end := len(chunk) - 2):
            # One whole event, the usual chunk; its one data line, when that is its last line, sliced out directly.
            start = chunk.find(b"data:")
            if (start == 0 or (start > 0 and chunk[start - 1] == 0x0A)) and chunk.find(b"\n", start, end) < 0:
                return [chunk[start + 5 : end]] if start + 5 < end else []
            return [payload] if (payload := sse_data(chunk[:end])) else []
        *blocks, rest = chunk.split(b"\n\n")
        buffer += rest
        if len(buffer) > self._max:
            self._too_large()
        return [payload for block in blocks if (payload := sse_data(block))]

    def _too_large(self) -> None:
        size = len(self._buffer)
        self._buffer = bytearray()
        raise ProviderError(
            f"{self._label} sent a stream event of more than {self._max / 1024 / 1024:g} MB without ending it "
            f"({size:,} bytes so far): the stream is broken."
        )

    def close(self) -> list[bytes]:
        """The payload of a last event the stream ended in, without the blank line that completes it."""
        rest = bytes(self._buffer)
        self._buffer = bytearray()
        payload = sse_data(rest)
        return [payload] if payload else []

    def _normalize(self, chunk: bytes) -> bytes:
        # CRLF and CR end lines too. A CR that ends a chunk ends its line at once; if the next chunk starts with the
        # LF of that CRLF, the LF is dropped.
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith(b"\r")
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def sse_data(block: bytes) -> bytes:
    """An event's data: its ``data:`` lines, joined (JSON does not mind the leading space or the line breaks)."""
    start = block.find(b"data:")
    if start == 0 or (start > 0 and block[start - 1] == 0x0A):  # the usual one data line, found without a split
        end = block.find(b"\n", start)
        if end < 0:
            return block[start + 5 :]
        if block.find(b"\ndata:", end) < 0:
            return block[start + 5 : end]
    return b"\n".join(line[5:] for line in block.split(b"\n") if line.startswith(b"data:"))


async def drain(chunks: AsyncIterator[bytes], seconds: float = 0.1) -> None:
    """Reads what is left of a response body after the stream's end marker (OpenAI's ``data: [DONE]``), for at
    most ``seconds`` and ignoring errors, as the SDK does: a body read to its end lets the HTTP/1.1 connection go
    back to the pool for the next request, instead of being closed."""
    try:
        with anyio.move_on_after(seconds):
            async for _ in chunks:
                pass
    except Exception:  # the connection failing after the reply was complete changes nothing
        pass
