"""What the provider transports share: clear errors without secrets, keys and clients set up the same way, the
history as providers need it (tool results with their images), and the server-sent-event decoding of streams."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic_core import from_json

from ai_widgets._safe import redact
from ai_widgets.messages import Message, Role, ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS

__all__ = [
    "NO_KEY",
    "ModelImage",
    "ProviderError",
    "RequestImages",
    "SSEDecoder",
    "arguments_json",
    "body_chunks",
    "check_async_client",
    "check_connection_arguments",
    "describe_status",
    "drain",
    "history",
    "import_sdk",
    "load_json",
    "missing_key",
    "outcome_images",
    "outcome_text",
    "own_data",
    "redact",
    "unreadable_payload",
]

#: The key a transport gives its SDK for a server named by ``base_url`` when no key is configured: the SDKs refuse to
#: build a client without one, a local server needs none, and a remote one answers 401 with a message naming the key.
NO_KEY = "not-needed"


class ProviderError(RuntimeError):
    """A provider request failed; the message says why and what to do, and never contains a key."""


def describe_status(provider: str, status: int, detail: str, *, key_hint: str) -> str:
    """A clear message for an HTTP failure.

    Args:
        provider: The provider's name, e.g. "OpenAI".
        status: The HTTP status.
        detail: The provider's own message (already redacted).
        key_hint: Where the key comes from, e.g. "OPENAI_API_KEY or api_key=".
    """
    if status == 401:
        return f"{provider} rejected the API key (401): check {key_hint}. {detail}".strip()
    if status == 403:
        return (
            f"{provider} refused access (403): the key in {key_hint} lacks permission for this model. {detail}".strip()
        )
    if status == 404:
        return f"{provider}: not found (404), often a wrong model name or base_url. {detail}".strip()
    if status == 429:
        return f"{provider} is rate limiting or out of quota (429), even after retries. {detail}".strip()
    if status >= 500:
        return f"{provider} had a server error ({status}), even after retries. {detail}".strip()
    return f"{provider} refused the request ({status}). {detail}".strip()


def missing_key(provider: str, variable: str) -> ProviderError:
    """The error a transport raises at construction when it has no key for the provider's own API."""
    return ProviderError(f"No API key for {provider}: set {variable}, or pass api_key= or client=.")


def check_connection_arguments(client: object, **connection: object) -> None:
    """Refuses ``client=`` together with arguments that configure a client (``base_url=``, ``api_key=``, ...).

    Raises:
        ValueError: Both were given.
    """
    given = [f"{name}=" for name, value in connection.items() if value is not None]
    if client is not None and given:
        raise ValueError(
            f"pass either client= or {'/'.join(given)}, not both: a client brings its own base URL and key"
        )


def check_async_client(client: object, example: str) -> None:
    """Refuses an SDK's synchronous client as ``client=``: the transports stream on the event loop.

    Raises:
        ValueError: ``client`` is a synchronous client of the anthropic or openai SDK (both build their clients on
            a ``SyncAPIClient`` or an ``AsyncAPIClient`` base).
    """
    if client is not None and any(cls.__name__ == "SyncAPIClient" for cls in type(client).__mro__):
        raise ValueError(
            f"client= must be an asynchronous client, such as {example}: {type(client).__name__} is the SDK's "
            "synchronous one, and the transport streams on the event loop"
        )


def own_data(part: Any, provider: str) -> dict[str, Any] | None:
    """A part's ``provider_data`` when it is a dict that ``provider`` stored, else ``None`` (another provider's, or
    none at all): a transport sends back only its own provider's data."""
    data = part.provider_data
    return data if part.provider == provider and isinstance(data, dict) else None


def import_sdk(module: str, extra: str) -> Any:
    """Imports a provider SDK, or says which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'this transport needs the {module!r} package: pip install "ai_widgets[{extra}]"') from exc


def history(messages: Iterable[Message]) -> Iterator[Message]:
    """The messages a provider should see: empty assistant messages (a reply that has not started) left out."""
    for message in messages:
        if message.role is Role.ASSISTANT and not message.parts:
            continue
        yield message


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


def unreadable_payload(label: str, exc: BaseException) -> ProviderError:
    """The error for a stream event's data that ``json.loads`` could not read: not UTF-8, not JSON, or JSON Python will
    not read (an integer of more than 4,300 digits, nesting deeper than the interpreter's recursion limit)."""
    if isinstance(exc, UnicodeDecodeError):
        return ProviderError(f"{label} sent stream data that is not UTF-8 ({exc.reason}).")
    if isinstance(exc, json.JSONDecodeError):
        return ProviderError(f"{label} sent stream data that is not JSON ({exc.msg}).")
    if isinstance(exc, RecursionError):
        return ProviderError(f"{label} sent stream data nested too deeply to be read.")
    return ProviderError(f"{label} sent stream data that cannot be read ({' '.join(str(exc).split())[:200]}).")


def outcome_text(part: ToolCallPart, limit: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS) -> str:
    """What the model is told about a call's result (every call in a request has an outcome), including that the
    person edited its arguments, when they did; cut in the middle, with a note, when longer than ``limit``
    characters (``RequestOptions.max_tool_result_chars``)."""
    text = part.result_for_model()
    if limit is None or len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    note = (
        f"[… {len(text) - limit:,} characters of this result left out here: it is {len(text):,} characters long, "
        f"and at most {limit:,} are sent …]"
    )
    return f"{text[:head]}\n\n{note}\n\n{text[len(text) - tail :]}"


def arguments_json(part: ToolCallPart) -> str:
    """A call's arguments as valid JSON text for the provider (``{}`` when what the model sent was not JSON)."""
    text = part.arguments.strip()
    if not text:
        return "{}"
    try:
        json.loads(text)
    except ValueError:
        return json.dumps(part.parsed_arguments)
    return text


# --- tool results' images ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelImage:
    """An image of a tool's result as a model can take it: base64 ``data`` of a ``media_type`` the providers accept
    (PNG, JPEG, GIF, WebP), or an http(s) ``url``."""

    media_type: str
    data: str | None = None
    url: str | None = None

    @property
    def data_url(self) -> str:
        """The image as OpenAI's image inputs take it: its URL, or a ``data:`` URL."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.data}"


# The first bytes of the image formats every provider accepts; the longest (WebP) needs 12, 16 base64 characters.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_ACCEPTED_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def outcome_images(part: ToolCallPart, *, max_chars: int) -> list[ModelImage]:
    """The images a call's result gives the model: the image attachments of a successful outcome, in order.

    An attachment goes only when the provider surely takes it, as one that fails would fail every later request of
    the conversation: inline data must be valid base64 of a whole PNG, JPEG, GIF or WebP (its type read from the data,
    so a JPEG labelled ``image/png`` still goes, as JPEG; cut short, empty or only a header, it does not: the
    providers refuse an image they cannot decode) of at most ``max_chars`` base64 characters; a URL must be http(s),
    with a host and no spaces, with one of those types, or a ``data:`` URL. Other attachments (other files, other
    image formats) stay on the card only.

    Args:
        part: The call.
        max_chars: The provider's limit on one image, in base64 characters.
    """
    outcome = part.outcome
    if outcome is None or not outcome.ok or not outcome.attachments:
        return []
    images: list[ModelImage] = []
    for attachment in outcome.attachments:
        if not attachment.mime_type.lower().startswith("image/"):
            continue
        if attachment.data is not None:
            image = _inline_image(attachment.data, max_chars)
        else:
            image = _linked_image(attachment.url or "", attachment.mime_type, max_chars)
        if image is not None:
            images.append(image)
    return images


class RequestImages:
    """The images of tool results that one request carries: the newest first, as long as they fit the provider's
    limits on a whole request (its size, its number of images). Each image that fits on its own
    (:func:`outcome_images`) is not enough: a conversation that gathers images (a screenshot each step) would grow past
    the request's limit, and the provider would then refuse that request and every later one. Older images beyond
    the limits stay on their cards only; the model still has their calls' text.

    Args:
        messages: The history the request carries.
        max_chars: The provider's limit on one image, in base64 characters.
        max_total_chars: The most base64 characters of inline images in one request (URLs count nothing here).
        max_count: The most images in one request.
        accept: Which images the provider takes at all (say, not GIF); all by default.
    """

    __slots__ = ("_chosen",)

    def __init__(
        self,
        messages: Iterable[Message],
        *,
        max_chars: int,
        max_total_chars: int,
        max_count: int,
        accept: Callable[[ModelImage], bool] | None = None,
    ) -> None:
        found: list[tuple[ToolCallPart, list[ModelImage]]] = []
        for message in messages:
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    images = [i for i in outcome_images(part, max_chars=max_chars) if accept is None or accept(i)]
                    if images:
                        found.append((part, images))
        self._chosen: dict[int, list[ModelImage]] = {}
        total = count = 0
        for part, images in reversed(found):  # the newest first
            kept: list[ModelImage] = []
            for image in reversed(images):
                size = len(image.data or "")
                if count < max_count and total + size <= max_total_chars:
                    kept.append(image)
                    count += 1
                    total += size
            self._chosen[id(part)] = kept[::-1]

    def of(self, part: ToolCallPart) -> list[ModelImage]:
        """The images of this call's result that the request carries, in order."""
        return self._chosen.get(id(part), [])


def _inline_image(data: str, max_chars: int) -> ModelImage | None:
    if data.startswith("data:"):
        head, comma, data = data.partition(",")
        if not comma or not head.endswith(";base64"):
            return None
    raw = _base64(data, max_chars)
    if raw is None:
        data = "".join(data.split())  # base64 in MIME-style lines (base64.encodebytes)
        raw = _base64(data, max_chars)
        if raw is None:
            return None
    media_type = _sniff(raw[:16])
    if media_type is None or not _whole(media_type, raw):
        return None
    return ModelImage(media_type, data=data)


def _base64(data: str, max_chars: int) -> bytes | None:
    """The bytes of ``data`` when it is valid base64 of at most ``max_chars`` characters, else ``None``."""
    if len(data) > max_chars:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:  # not base64 (binascii.Error), or not ASCII
        return None


def _whole(media_type: str, raw: bytes) -> bool:
    """Whether an image's bytes reach the end its format marks (an image cut short, or a bare header, is refused by
    every provider, and would then fail every later request of the conversation). Bytes after the end are allowed,
    as decoders ignore them."""
    if media_type == "image/png":
        # The IHDR chunk first, and the IEND chunk (its type and CRC) somewhere after it.
        return raw[12:16] == b"IHDR" and raw.rfind(b"IEND\xaeB`\x82") >= 33
    if media_type == "image/jpeg":
        return raw.rfind(b"\xff\xd9") > 2  # the end-of-image marker (it cannot occur inside the coded data)
    if media_type == "image/gif":
        return len(raw) > 13 and raw.rstrip(b"\x00").endswith(b";")  # the trailer
    if media_type == "image/webp":
        return len(raw) >= 20 and int.from_bytes(raw[4:8], "little") + 8 <= len(raw)  # the RIFF size is all there
    return False


def _linked_image(url: str, mime_type: str, max_chars: int) -> ModelImage | None:
    if url.startswith("data:"):
        return _inline_image(url, max_chars)
    media_type = mime_type.split(";")[0].strip().lower()
    if not url.startswith(("https://", "http://")) or media_type not in _ACCEPTED_TYPES:
        return None
    if any(c.isspace() or ord(c) < 0x20 for c in url):
        return None  # not a URL a provider can fetch (and refuses: "invalid image URL")
    try:
        host = urlsplit(url).hostname
    except ValueError:  # a malformed port or IPv6 address
        return None
    return ModelImage(media_type, url=url) if host else None


def _sniff(head: bytes) -> str | None:
    for signature, media_type in _SIGNATURES:
        if head.startswith(signature):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


# --- server-sent events -----------------------------------------------------------------------------------------------


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
            return [payload] if (payload := _sse_data(chunk[:end])) else []
        *blocks, rest = chunk.split(b"\n\n")
        buffer += rest
        if len(buffer) > self._max:
            self._too_large()
        return [payload for block in blocks if (payload := _sse_data(block))]

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
        payload = _sse_data(rest)
        return [payload] if payload else []

    def _normalize(self, chunk: bytes) -> bytes:
        # CRLF and CR end lines too. A CR that ends a chunk ends its line at once; if the next chunk starts with the
        # LF of that CRLF, the LF is dropped.
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith(b"\r")
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _sse_data(block: bytes) -> bytes:
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
    import anyio  # every provider SDK's HTTP client runs on it

    try:
        with anyio.move_on_after(seconds):
            async for _ in chunks:
                pass
    except Exception:  # the connection failing after the reply was complete changes nothing
        pass
