"""The transport to Anthropic's Messages API (``POST /v1/messages``, streamed), through the official ``anthropic``
SDK: its construction, the request it sends and how its errors read (the stream is parsed in ``_anthropic_stream``)."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.attachments import AttachmentLimits
from ai_widgets.events import StreamEvent
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.messages._usage import price_provider_for_url
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.tools._formats import anthropic_tool
from ai_widgets.transports._anthropic_stream import LABEL, PROVIDER_ID, MessagesParser, error_fields
from ai_widgets.transports._base import ChatRequest, TransportProfile
from ai_widgets.transports._client import NO_KEY, check_async_client, check_connection_arguments, import_sdk
from ai_widgets.transports._errors import (
    Failure,
    ProviderError,
    broke_off,
    describe_status,
    http_failure,
    missing_key,
    seconds_of,
    timed_out,
    unreachable,
)
from ai_widgets.transports._history import (
    ModelImage,
    RequestImages,
    file_note,
    history,
    outcome_text,
    own_data,
    user_images,
    user_parts,
)
from ai_widgets.transports._loop_clients import ClientPerLoop
from ai_widgets.transports._models import default_model
from ai_widgets.transports._output import anthropic_output_config
from ai_widgets.transports._sse import sse_stream
from ai_widgets.transports._windows import known_window

import_sdk("anthropic", "anthropic")  # says which extra to install when the SDK is missing

import anthropic  # noqa: E402
import httpx2  # noqa: E402  (the SDK's HTTP client)

__all__ = ["AnthropicTransport"]

JSON = dict[str, Any]

KEY_HINT = "ANTHROPIC_API_KEY or api_key="

MAX_IMAGE_CHARS = 5 * 1024 * 1024
#: The most base64 characters of images, and the most images, in one request: the Messages API takes requests of up
#: to 32 MB and "up to 100 images" (docs.anthropic.com, vision); room is left for the text.
MAX_REQUEST_IMAGE_CHARS = 24 * 1024 * 1024
MAX_REQUEST_IMAGES = 100
#: What a user message's files may be (docs.anthropic.com, vision and PDF support): images up to 5 MB, 100 a request;
#: PDFs up to 32 MB; by data or URL; a request at most 32 MB, so 22 MB of files (base64 makes them 4/3 as long).
#: An image at most 8,000 x 8,000 px, and 2,000 x 2,000 px in a request of more than 20 images: the API refuses a
#: larger one ("image dimensions exceed max allowed size") where it scales a smaller one down.
ATTACHMENT_LIMITS = AttachmentLimits(
    LABEL,
    max_image_bytes=5 * 1024 * 1024,
    max_images=100,
    max_document_bytes=32 * 1024 * 1024,
    max_total_bytes=22 * 1024 * 1024,
    max_image_side=8000,
    many_images=20,
    max_image_side_when_many=2000,
)

# The arguments the SDK's ``messages.create`` takes in every version.
SDK_ARGUMENTS = ("max_tokens", "messages", "model", "stream")
# The order ``messages.create`` writes the fields it knows in (its parameters' order), before every other field in
# the order given: a body written here is the SDK's byte for byte.
SDK_FIELD_ORDER = {
    name: index for index, name in enumerate(inspect.signature(anthropic.resources.AsyncMessages.create).parameters)
}

# What the API takes as a tool_use id; another provider's ids may hold other characters (Kimi's "functions.f:0").
TOOL_USE_ID = re.compile(r"[^a-zA-Z0-9_-]")


def has_credentials(client: Any) -> bool:
    """Whether the SDK found a key, a token or another credential (a profile, workload identity) for ``client``."""
    if getattr(client, "api_key", None) or getattr(client, "auth_token", None) or getattr(client, "credentials", None):
        return True
    headers = getattr(client, "default_headers", {})
    return bool(headers.get("X-Api-Key") or headers.get("Authorization"))


class AnthropicTransport:
    """A Claude model behind Anthropic's Messages API.

    Args:
        model: The model name, e.g. ``"claude-haiku-4-5"``; by default :func:`~ai_widgets.transports.default_model`
            (``AI_WIDGETS_MODEL``, else a current small model).
        client: An ``anthropic.AsyncAnthropic`` you configured (or a Bedrock/Vertex/Foundry variant); ``base_url``,
            ``api_key``, ``max_retries`` and ``timeout`` are then the client's own (a copy of it, with its own
            connections, for each further event loop). A chat sends from two event loops (``ask_sync`` from the
            package's own): a client with an ``http_client`` of your own is used from both as given, so give it one that
            works from any loop.
        base_url: Another endpoint speaking the Messages API; ``ANTHROPIC_BASE_URL`` or Anthropic's by default.
        api_key: The key; ``ANTHROPIC_API_KEY`` (or any credential the SDK finds: ``ANTHROPIC_AUTH_TOKEN``, a
            profile) by default.
        max_retries: Retries of a request that fails with 408/409/429/5xx or a connection error, with the SDK's
            backoff, before the first byte of the stream; never once the reply has begun.
        timeout: Seconds to wait to connect and between bytes of the stream.
        max_tokens: Output tokens per response (the API requires a value); ``RequestOptions.max_tokens`` overrides.
        thinking: Extended thinking, sent as ``thinking``, e.g. ``{"type": "enabled", "budget_tokens": 2048}``.
        server_tools: Tools Anthropic runs itself, sent with the local tools as given, e.g.
            ``{"type": "web_search_20250305", "name": "web_search"}``.
        tool_images: Send the images of tool results to the model (see below).

    Raises:
        ValueError: ``model`` is empty, ``max_tokens`` is below 1, or ``client`` was given together with
            ``base_url`` or ``api_key``.
        ProviderError: No key for Anthropic's own API was given or found. A ``base_url`` (or
            ``ANTHROPIC_BASE_URL``) without a key gets a placeholder instead: a local server or proxy may need none,
            and a remote one answers 401 with a message naming the key's variable.

    Mapping and provider quirks:

    - Request: the system prompt as ``system``; user text as ``text`` blocks, and attachments as ``image`` blocks and
      ``document`` blocks (a PDF, with its name as ``title``), with a ``base64`` or ``url`` source (a file the API would
      refuse, as ``attachment_limits`` says, becomes a text note saying what it was); an assistant reply as content
      blocks in the order they arrived: thinking, text, ``tool_use`` (``input``: the parsed arguments), and for a tool
      Anthropic ran, its ``server_tool_use`` block followed by its result block. After each round of local calls comes a
      ``user`` message that starts with one ``tool_result`` per call, in order (``is_error`` for failed, declined and
      cancelled calls; ``content`` is what the model is told); the next user text joins that message after the results.
      A reply holds every round of its turn, so it is split into one assistant message per round: a round ends at the
      first part after a local call that is not itself a local call. (Two rounds that each only called tools read as one
      round of parallel calls, which the API accepts.) Consecutive messages of one role are merged, as the API requires
      alternation. Local calls of any provider go as ``tool_use``, their ids with characters the API refuses replaced by
      ``_``.
    - Images in tool results go inside the ``tool_result``: with images (image attachments of successful outcomes and
      the image their display shows, a figure's PNG: PNG, JPEG, GIF or WebP, inline base64 up to 5 MB or an http(s) URL)
      its ``content`` is a list, a ``text`` block (the text the model is told; left out when empty) then one ``{"type":
      "image", "source": {"type": "base64", "media_type", "data"}}`` per image (``{"type": "url", "url"}`` for a URL);
      without, the text. Other attachments, and an image the API would refuse (another format, larger, more than 8,000
      px a side, not base64, cut short), show on the card only, as do the oldest images once a request would carry more
      than 24 MB of them or more than 100, or more than 20 with one of more than 2,000 px a side (the person's included:
      a person's image the API would refuse there goes as a note). Off with ``tool_images=False``.
    - Provider data: only parts with ``provider == "anthropic"`` send theirs back. Thinking must come back exactly
      as received: a reasoning part holds ``{"signature": ...}`` for one ``thinking`` block (its text is the part's
      text), or ``{"blocks": [...]}``, the blocks themselves as they came, when it holds a ``redacted_thinking``
      block (encrypted ``data``) or several blocks in a row (the session joins consecutive reasoning). Reasoning of
      any other provider, or without provider data (a stream that broke off), is left out: the API rejects
      thinking without Anthropic's signature. A provider-run call keeps its result block as it came
      (``{"result_block": ...}``) and goes back as ``server_tool_use`` plus that block; its outcome ``value`` is
      the block's content for people (web search results without their encrypted content, code output...) and
      its citations the result URLs. A provider-run call without a result block (``pause_turn`` paused the turn
      before it, or the stream broke off), and every provider-run call of another provider, is left out: the API
      rejects a ``server_tool_use`` without its result, and another provider's tools are not Anthropic's.
    - Tool choice: ``{"type": "auto"}``, ``{"type": "any"}`` (required), ``{"type": "tool", "name": ...}``; with no
      tools (``ToolChoice.NONE``) neither ``tools`` (local or server) nor ``tool_choice`` is sent (the API also has
      ``{"type": "none"}``; sending no tools is the sure way). With ``thinking`` on the API refuses a forced choice,
      so ``auto`` is sent instead.
    - A typed answer (``ChatRequest.output_schema``) is asked for with Anthropic's structured outputs,
      ``output_config: {"format": {"type": "json_schema", "schema": ...}}``; the answer arrives as text. The API
      refuses some JSON Schema keywords there (numeric and string bounds, among others): such a type's request fails
      with the API's message.
    - ``temperature`` and ``max_tokens`` as given; ``options.extra`` is merged into the JSON body last, so it can
      override any field (``top_k``, ``metadata``, ``container``, ...). The body is written to JSON here, as the SDK
      writes it, and sent through the client's ``post``: given as a dict, the SDK would copy the whole tree first
      (most of a long conversation's request CPU). Any client other than ``anthropic.AsyncAnthropic`` itself
      (Bedrock, Vertex, Foundry, AWS, a subclass), which may rewrite the body, gets it through ``messages.create``
      instead (the SDK's warnings about deprecated models come only there).
    - Stream: the raw server-sent events are read off the SDK's response by the loop every SSE transport shares
      (``_sse.sse_stream``) and parsed in ``_anthropic_stream`` (no pydantic model per event, several times cheaper);
      nothing after ``message_stop`` is read, the rest of the body drained briefly; an event the body ends in without
      its blank line is read when its data is whole JSON. Usage: ``input_tokens`` counts the whole prompt
      (``input_tokens`` + ``cache_creation_input_tokens`` + ``cache_read_input_tokens``), ``cached_tokens`` the cache
      reads, ``reasoning_tokens`` ``output_tokens_details.thinking_tokens`` where given; ``message_delta`` carries
      running totals; ``cache_creation_input_tokens`` is ``cache_write_tokens``, priced at the cache-write price, and
      the model ``message_start`` names is the one priced. Finish reasons: ``end_turn``/``stop_sequence`` stop, ``tool_use`` tool calls, ``max_tokens`` (and
      ``model_context_window_exceeded``) length, ``refusal`` content filter, ``pause_turn`` stop (a long server-tool
      turn paused; ask the model to continue). A ``tool_use`` whose input never streams gets ``{}``. A
      ``server_tool_use`` is a provider-run call (``provider_executed=True``) from its start, so it never runs locally,
      result or not. Citations on text are not kept.
    - ``RequestOptions(cache=True)``: ``cache_control: {"type": "ephemeral"}`` on the last tool, on the system prompt
      (sent as one text block) and on the last block of the last message (not a thinking block, nor an empty text):
      three breakpoints, so the tools, the system prompt and the conversation so far are read from the cache by the
      next request. A prompt shorter than the model's minimum (1,024 tokens for most) is not cached, silently.
    - Errors: an in-band ``error`` event (``overloaded_error``, ...) and HTTP failures raise :class:`ProviderError`
      with Anthropic's message, never the key. Nothing is retried once the stream has begun.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        max_tokens: int = 4096,
        thinking: Mapping[str, Any] | None = None,
        server_tools: Sequence[Mapping[str, Any]] = (),
        tool_images: bool = True,
    ) -> None:
        if model is None:
            model = default_model("anthropic")
        if not model:
            raise ValueError("a model name is needed, e.g. AnthropicTransport('claude-haiku-4-5')")
        check_connection_arguments(client, base_url=base_url, api_key=api_key)
        check_async_client(client, "anthropic.AsyncAnthropic")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens!r}")
        own = client is None
        if client is None:
            client = anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
            )
            if not has_credentials(client):
                if not (base_url or os.environ.get("ANTHROPIC_BASE_URL")):
                    raise missing_key(LABEL, "ANTHROPIC_API_KEY")
                # A local server or proxy may need no key; a remote one answers 401, and the message names the key.
                client = anthropic.AsyncAnthropic(
                    api_key=NO_KEY, base_url=base_url, max_retries=max_retries, timeout=timeout
                )
        self.model = model
        self.max_tokens = max_tokens
        self.thinking = dict(thinking) if thinking is not None else None
        self.server_tools = [dict(tool) for tool in server_tools]
        self.tool_images = tool_images
        #: What the files of a user message may be; ``send(..., attach=...)`` refuses others before sending.
        self.attachment_limits = ATTACHMENT_LIMITS
        self._client = client
        self._clients = ClientPerLoop(client, own=own)
        #: genai-prices' id of the provider at the client's URL (Anthropic's API, Bedrock...), for the cost.
        self.price_provider = price_provider_for_url(str(getattr(client, "base_url", "") or ""))
        # Only to scrub error texts: whatever key the client resolved (argument or environment).
        self._secrets = tuple(
            s for s in (api_key, getattr(client, "api_key", None), getattr(client, "auth_token", None)) if s
        )

    def __repr__(self) -> str:
        return f"AnthropicTransport({self.model!r})"

    @property
    def client(self) -> Any:
        """The SDK client the requests go through."""
        return self._client

    @property
    def profile(self) -> TransportProfile:
        """What this transport is: the provider that prices it (``price_provider``), the model, the model's context
        window in tokens from genai-prices' model table (or ours: ``_windows``; ``None`` for a server it does not
        know), its output limit (``max_tokens``), and the attachment limits. Read again for each request, so it follows a changed model."""
        return TransportProfile(
            provider=self.price_provider,
            model=self.model,
            context_window=known_window("anthropic", self.model, base_url=str(self._client.base_url)),
            max_output_tokens=self.max_tokens,
            attachment_limits=self.attachment_limits,
        )

    # --- request mapping ----------------------------------------------------------------------------------------------

    def request_body(self, request: ChatRequest) -> JSON:
        """The JSON body of the request for ``request``, as sent (``options.extra`` merged last)."""
        options = request.options
        body: JSON = {
            "model": self.model,
            "max_tokens": options.max_tokens or self.max_tokens,
            "messages": self.request_messages(request.messages, max_tool_result_chars=options.max_tool_result_chars),
            "stream": True,
        }
        if options.system_prompt:
            body["system"] = options.system_prompt
        if options.tool_choice.mode != "none":
            tools: list[JSON] = [anthropic_tool(definition) for definition in request.tools]
            tools += self.server_tools
            if tools:
                body["tools"] = tools
                body["tool_choice"] = self._tool_choice(options.tool_choice.mode, options.tool_choice.tool_name)
        if request.output_schema is not None:
            body["output_config"] = anthropic_output_config(request.output_schema)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if self.thinking is not None:
            body["thinking"] = self.thinking
        if options.cache:
            mark_cache_breakpoints(body)
        body.update(options.extra)
        return body

    def request_messages(
        self, messages: Iterable[Message], *, max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    ) -> list[JSON]:
        """The history as Messages API ``messages``: alternating roles, tool results right after their calls (each
        cut to ``max_tool_result_chars``, see ``RequestOptions``)."""
        out: list[JSON] = []
        messages = list(history(messages))
        images = (
            RequestImages(
                messages,
                max_chars=MAX_IMAGE_CHARS,
                max_total_chars=MAX_REQUEST_IMAGE_CHARS,
                max_count=MAX_REQUEST_IMAGES,
                limits=self.attachment_limits,
            )
            if self.tool_images
            else None
        )
        # In a request of many images each must be smaller: the person's go as notes where they would not be (the
        # tools' images are chosen above to keep within the limit the person's set).
        crowd = user_images(messages, self.attachment_limits)
        for message in messages:
            if message.role is Role.USER:
                blocks = [user_block(part, self.attachment_limits, crowd) for part in user_parts(message)]
                append(out, "user", blocks)
            else:
                for role, content in assistant_turns(message, images=images, limit=max_tool_result_chars):
                    append(out, role, content)
        return out

    def _tool_choice(self, mode: str, name: str | None) -> JSON:
        if self.thinking is not None and self.thinking.get("type") != "disabled":
            return {"type": "auto"}  # the API refuses a forced tool choice while thinking
        match mode:
            case "required":
                return {"type": "any"}
            case "tool":
                return {"type": "tool", "name": name}
            case _:
                return {"type": "auto"}

    # --- stream mapping -----------------------------------------------------------------------------------------------

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        Raises:
            ProviderError: The request failed, or Anthropic reported an error in the stream; the message says why
                and never contains the key.
        """
        parser = MessagesParser(model=self.model, provider=self.price_provider)
        return sse_stream(lambda: self._send(request), parser, label=LABEL, map_error=self._map_error)

    def _send(self, request: ChatRequest) -> contextlib.AbstractAsyncContextManager[Any]:
        """Sends the request; the streamed response, not read yet (the SDK's retries and HTTP errors included)."""
        body = self.request_body(request)
        if type(self._client) is anthropic.AsyncAnthropic:
            return self._post(body)
        # The Bedrock, Vertex, Foundry and AWS clients rewrite the JSON body (the model moves into the URL), so it
        # goes to them, and to any other client, as JSON: only what every SDK version takes as arguments (2.x has no
        # ``temperature`` argument), the rest as ``extra_body``, which the SDK merges into the JSON as it is.
        required = {key: body.pop(key) for key in SDK_ARGUMENTS}
        created: contextlib.AbstractAsyncContextManager[Any] = (
            self._clients.current().messages.with_streaming_response.create(**required, extra_body=body)
        )
        return created

    @contextlib.asynccontextmanager
    async def _post(self, body: JSON) -> AsyncIterator[Any]:
        """The body as JSON bytes written here, through the client's own ``post`` (its key, base URL, headers,
        retries and timeout): given as a dict, the SDK copies the whole tree before writing it, most of a long
        request's CPU. The bytes are the SDK's: its field order and its encoder's settings."""
        known = sorted((key for key in body if key in SDK_FIELD_ORDER), key=SDK_FIELD_ORDER.__getitem__)
        ordered = {key: body[key] for key in known} | body
        content = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        response = await self._clients.current().post(
            "/v1/messages", cast_to=httpx2.Response, content=content, stream=True, stream_cls=anthropic.AsyncStream[Any]
        )
        try:
            yield Streamed(response)
        finally:
            await response.aclose()

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, responded: bool) -> ProviderError | None:
        """A clear, key-free error for what the SDK (or the connection under it) raised (``None``: raised as it is)."""
        match exc:
            case ProviderError():  # raised while reading the stream: an in-band error, a malformed stream
                return ProviderError(redact(str(exc), *self._secrets))
            case anthropic.APIStatusError():
                error_type, message = error_fields(exc.body)
                detail = redact(message or str(exc), *self._secrets)
                if error_type and error_type not in detail:
                    detail = f"{error_type}: {detail}"
                return ProviderError(describe_status(LABEL, exc.status_code, detail, key_hint=KEY_HINT))
            case anthropic.APITimeoutError():
                return timed_out(LABEL, seconds=seconds_of(getattr(self._client, "timeout", None)), responded=False)
            case anthropic.APIConnectionError():
                return self._connection_failed(exc.__cause__ or exc, responded=False)
            case anthropic.AnthropicError():  # credentials that failed to load or refresh, and the like
                return ProviderError(f"{LABEL} request failed: {redact(str(exc), *self._secrets)}")
            case TypeError() if "authentication" in str(exc):
                # A client given without any credential (the SDK raises this before sending anything).
                return ProviderError(f"{LABEL} needs an API key: set {KEY_HINT}.")
        # The HTTP library's errors while the body streams (the SDK wraps only those before the first byte).
        match http_failure(exc):
            case Failure.TIMEOUT:
                return timed_out(LABEL, seconds=seconds_of(getattr(self._client, "timeout", None)), responded=responded)
            case Failure.CONNECTION:
                return self._connection_failed(exc, responded=responded)
        return None

    def _connection_failed(self, cause: BaseException, *, responded: bool) -> ProviderError:
        if responded:
            return broke_off(LABEL, cause=cause, secrets=self._secrets)
        return unreachable(LABEL, base_url=str(self._client.base_url), cause=cause, secrets=self._secrets)


# --- request mapping --------------------------------------------------------------------------------------------------


def append(out: list[JSON], role: str, content: list[JSON]) -> None:
    """Adds a message, merged into the previous one of the same role (the API requires alternating roles)."""
    if not content:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(content)
    else:
        out.append({"role": role, "content": content})


def user_block(part: TextPart | FilePart, limits: AttachmentLimits, images: int) -> JSON:
    """A user message's text or file as a content block: ``text``, ``image`` or ``document`` (a PDF); ``images``:
    how many images the person's messages put in the request."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    kind = limits.kind_of(part, images=images)
    if kind is None:
        return {"type": "text", "text": file_note(part, limits.provider)}
    source: JSON = (
        {"type": "url", "url": part.url}
        if part.url is not None
        else {"type": "base64", "media_type": part.media_type, "data": part.data}
    )
    if kind == "image":
        return {"type": "image", "source": source}
    block: JSON = {"type": "document", "source": source}
    if part.name:
        block["title"] = part.name
    return block


def assistant_turns(
    message: Message, *, images: RequestImages | None, limit: int | None
) -> list[tuple[str, list[JSON]]]:
    """One reply as assistant messages, each round of local calls followed by a user message with their results."""
    turns: list[tuple[str, list[JSON]]] = []
    content: list[JSON] = []
    results: list[JSON] = []
    for part in message.parts:
        local_call = isinstance(part, ToolCallPart) and not part.provider_executed
        if results and not local_call:  # the model saw these results: what follows is its next response
            turns += [("assistant", content), ("user", results)]
            content, results = [], []
        match part:
            case TextPart():
                if text := part.text:
                    content.append({"type": "text", "text": text})
            case ReasoningPart():
                content += reasoning_blocks(part)
            case ToolCallPart() if part.provider_executed:
                content += server_call_blocks(part)
            case ToolCallPart():
                call_id = tool_use_id(part.tool_call_id)
                content.append(
                    {"type": "tool_use", "id": call_id, "name": part.tool_name, "input": part.parsed_arguments}
                )
                results.append(tool_result(part, call_id, images=images, limit=limit))
    turns.append(("assistant", content))
    if results:
        turns.append(("user", results))
    return turns


def tool_use_id(call_id: str) -> str:
    """A call's id as the API takes it (another provider's ids may hold characters it refuses)."""
    return TOOL_USE_ID.sub("_", call_id) or "_"


def tool_result(part: ToolCallPart, call_id: str, *, images: RequestImages | None, limit: int | None) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": call_id}
    pictures = images.of(part) if images is not None else []
    text = outcome_text(part, limit, images=len(pictures))
    if pictures:
        content = [{"type": "text", "text": text}] if text else []
        block["content"] = content + [image_block(picture) for picture in pictures]
    elif text:  # the API rejects an empty text; no content at all is fine
        block["content"] = text
    if part.outcome is None or not part.outcome.ok:
        block["is_error"] = True
    return block


def image_block(image: ModelImage) -> JSON:
    if image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def reasoning_blocks(part: ReasoningPart) -> list[JSON]:
    """The thinking blocks a reasoning part stands for: none unless Anthropic signed them (see the class docstring)."""
    data = own_data(part, PROVIDER_ID)
    if data is None:
        return []  # another provider's reasoning, or none signed: the API rejects thinking without a signature
    blocks = data.get("blocks")
    if isinstance(blocks, list):
        if blocks and all(isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking") for b in blocks):
            return [dict(b) for b in blocks]
        return []
    signature = data.get("signature")
    if isinstance(signature, str) and signature:
        return [{"type": "thinking", "thinking": part.text, "signature": signature}]
    return []


def server_call_blocks(part: ToolCallPart) -> list[JSON]:
    """A call Anthropic ran: its ``server_tool_use`` block and its result block as it came, or nothing (no result
    block, or another provider's call)."""
    data = own_data(part, PROVIDER_ID)
    result = data.get("result_block") if data is not None else None
    if not (
        isinstance(result, dict)
        and result.get("tool_use_id") == part.tool_call_id
        and isinstance(result.get("type"), str)
    ):
        return []
    call = {"type": "server_tool_use", "id": part.tool_call_id, "name": part.tool_name, "input": part.parsed_arguments}
    return [call, dict(result)]


#: Block types the API refuses ``cache_control`` on (thinking is cached with the turn around it).
UNCACHEABLE_BLOCKS = ("thinking", "redacted_thinking")
BREAKPOINT = {"type": "ephemeral"}


def mark_cache_breakpoints(body: JSON) -> None:
    """Prompt caching (``RequestOptions(cache=True)``): ``cache_control`` breakpoints on the last tool (all the
    tools), the system prompt, and the last block of the last message (the whole conversation, read from the cache
    by the next request), three of the four the API allows (docs.anthropic.com, prompt caching)."""
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": BREAKPOINT}
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": BREAKPOINT}]
    messages = body["messages"]
    if not messages:
        return
    content = messages[-1]["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if block.get("type") not in UNCACHEABLE_BLOCKS and not (block.get("type") == "text" and not block.get("text")):
            content = [*content[:index], {**block, "cache_control": BREAKPOINT}, *content[index + 1 :]]
            messages[-1] = {**messages[-1], "content": content}
            return


# --- sending -----------------------------------------------------------------------------------------------------------


class Streamed:
    """A streamed response of the client's ``post`` as :func:`body_chunks` reads the SDK's streamed responses."""

    __slots__ = ("http_response",)

    def __init__(self, http_response: httpx2.Response) -> None:
        self.http_response = http_response

    def iter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded (a compressed one)."""
        return self.http_response.aiter_bytes()
