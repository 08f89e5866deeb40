"""OpenAI's Responses API (``POST /responses``, streamed), through the official ``openai`` SDK."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.outcome import ToolOutcome
from ai_widgets.tools._formats import openai_responses_tool
from ai_widgets.transports._base import ChatRequest
from ai_widgets.transports._common import (
    NO_KEY,
    ProviderError,
    RequestImages,
    SSEDecoder,
    arguments_json,
    body_chunks,
    check_async_client,
    check_connection_arguments,
    drain,
    history,
    import_sdk,
    load_json,
    missing_key,
    outcome_text,
    own_data,
    redact,
    unreadable_payload,
)
from ai_widgets.transports._models import default_model
from ai_widgets.transports._openai_errors import in_band_error, map_openai_error, stream_error

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

__all__ = ["OpenAIResponsesTransport"]

JSON = dict[str, Any]

_LABEL = "OpenAI"
_KEY_HINT = "OPENAI_API_KEY or api_key="
#: The ``provider`` of the provider data this transport stores, and the only provider data it sends back.
_PROVIDER_ID = "openai"
_ENCRYPTED_REASONING = "reasoning.encrypted_content"

# Models that reason by default (o-series, GPT-5 but its non-reasoning chat variant, later GPTs, gpt-oss): for
# these the encrypted reasoning is requested even without ``reasoning=``, so it can be sent back with store=False.
_REASONING_MODELS = re.compile(r"^(o\d|gpt-5(?!-chat)|gpt-[6-9]|gpt-\d\d|gpt-oss)")

#: The largest image of a tool's result sent, in base64 characters (OpenAI takes images up to 20 MB).
_MAX_IMAGE_CHARS = 20 * 1024 * 1024
#: The most base64 characters of images, and the most images, in one request: OpenAI takes "up to 50 MB total
#: payload per request" and 500 images (platform.openai.com/docs/guides/images-vision); room is left for the text.
_MAX_REQUEST_IMAGE_CHARS = 40 * 1024 * 1024
_MAX_REQUEST_IMAGES = 500

_INCOMPLETE_REASONS = {"max_output_tokens": FinishReason.LENGTH, "content_filter": FinishReason.CONTENT_FILTER}


class OpenAIResponsesTransport:
    """A model behind OpenAI's Responses API (``client.responses.create(stream=True, ...)``).

    Args:
        model: The model, e.g. ``"gpt-5.4-mini"``; by default :func:`~ai_widgets.transports.default_model`
            (``AI_WIDGETS_MODEL``, else a current small model).
        client: An ``openai.AsyncOpenAI`` you configured (its own key, base URL, retries and timeout are used).
        base_url: The API's base URL, for a client this transport makes; ``OPENAI_BASE_URL`` or OpenAI's by default.
        api_key: The key, for a client this transport makes; ``OPENAI_API_KEY`` by default.
        max_retries: Retries of a request that fails with 408/409/429/5xx or a connection error, with the SDK's
            backoff, before the first byte of the stream; never once the reply has begun.
        timeout: Seconds to wait to connect and between bytes of the stream.
        store: Let OpenAI keep the responses (``store=True``); off by default, so reasoning travels encrypted.
        reasoning: The ``reasoning`` request field, e.g. ``{"effort": "low", "summary": "auto"}``.
        builtin_tools: Tools OpenAI runs itself, sent as given, e.g. ``{"type": "web_search"}``.
        include_encrypted_reasoning: Ask for encrypted reasoning when reasoning is used, to send it back.
        tool_images: Send the images of tool results to the model (see below); turn off for a model without image
            input, which would refuse every later request.

    Raises:
        ValueError: ``model`` is empty, or ``client`` was given together with ``base_url`` or ``api_key``.
        ProviderError: No key for OpenAI's own API was given or found (nor any other credential the SDK takes). A
            ``base_url`` (or ``OPENAI_BASE_URL``) without a key gets a placeholder instead: local servers need none,
            and a remote one answers 401 with a message naming the key's variable.

    Mapping and provider quirks:

    - Request: the system prompt as ``instructions``; user messages as ``{"role": "user", "content": text}``; the
      assistant's text as ``{"role": "assistant", "content": text}`` (the SDK's simple message form); every local
      tool call (another provider's included) as a ``function_call`` item (``call_id``, ``name``, ``arguments``)
      followed by its ``function_call_output`` (what the model is told about the outcome, for failed, declined and
      cancelled calls too), in the order of the reply's parts.
    - Images in tool results go in the ``function_call_output`` itself: with images (image attachments of
      successful outcomes: PNG, JPEG, GIF or WebP, inline base64 up to 20 MB or an http(s) URL) its ``output`` is a
      list, ``{"type": "input_text", "text": ...}`` (the text the model is told; left out when empty) then one
      ``{"type": "input_image", "image_url": ...}`` per image (a ``data:`` URL for inline images); without, the
      text. Other attachments, and an image the API would refuse (another format, larger, not base64, cut short),
      show on the card only, as do the oldest images once a request would carry more than 40 MB of them or more than
      500. Off with ``tool_images=False``.
    - Provider data: only parts with ``provider == "openai"`` send theirs back. A reasoning part keeps the reasoning
      items the model produced as ``provider_data={"items": [{"id": "rs_...", "encrypted_content": "..."}, ...]}``
      (consecutive items land on one part), sent back before the items they preceded as ``{"type": "reasoning",
      "id", "encrypted_content", "summary"}`` (the part's text as the first item's summary). With ``store=False``
      (the default, so nothing is kept at OpenAI) an item goes back only with its encrypted content, which is asked
      for with ``include=["reasoning.encrypted_content"]`` whenever reasoning is used (``reasoning=`` given, or a
      model that reasons by default: o-series, GPT-5 and later, gpt-oss); with ``store=True`` the id alone
      suffices. Reasoning of any other provider (an Anthropic signature, a stream without provider data) is left
      out: a reasoning item needs an id OpenAI issued.
    - Provider-run calls are not sent back, this API's own (``web_search_call`` and the like: output items the API
      produced, whose results the model's text already carries) nor another provider's (an Anthropic server tool):
      they store no provider data here. Their results are shown locally (``ProviderToolResult``) and kept in the
      transcript.
    - Tools: ``{"type": "function", "name", "description", "parameters", "strict": False}`` for each definition,
      plus ``builtin_tools`` as given. Tool choice: ``auto`` -> ``"auto"``, ``required`` -> ``"required"``, a
      specific tool -> ``{"type": "function", "name": ...}``; ``none`` sends no tools (the built-in ones neither)
      and no tool choice, as does a request with no tools at all.
    - ``temperature``, ``max_output_tokens`` (from ``max_tokens``); ``options.extra`` is merged into the JSON body
      last, so it can set or override any field. The body goes to the SDK as it is built (``extra_body``), not as
      typed arguments, which the SDK would walk against its types (most of a long conversation's request CPU) only
      to write the same JSON.
    - Stream: the raw server-sent events are read off the SDK's response and parsed here (no pydantic model per
      event, several times cheaper); an event the body ends in without its blank line is incomplete, as for the
      SDK. Text and refusals as text, reasoning summaries and reasoning text as reasoning, function calls with
      their arguments delta by delta (several per response), provider-run tools as calls with a result
      (web_search, file_search, code_interpreter, image_generation, mcp; tools that need the client to act, such as
      computer use or shell, are not supported) and with progress once their arguments are known (a web search's
      query and an MCP call's arguments come with the item's end, just before its result), usage (input, output,
      cached and reasoning tokens), and the finish reason (``incomplete`` for ``max_output_tokens`` is ``length``,
      for ``content_filter`` is ``content_filter``). Message ``phase`` (commentary / final answer) is not kept.
    - Errors: an in-band ``error`` event or ``response.failed`` raises :class:`ProviderError` with the provider's
      code and message; HTTP failures, after the SDK's retries (429, 5xx, timeouts and connection errors, before any
      byte of the stream, never mid-stream), raise one that says what happened, never with the key (the wording is
      shared with the Chat Completions transport).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        store: bool = False,
        reasoning: Mapping[str, Any] | None = None,
        builtin_tools: Iterable[Mapping[str, Any]] = (),
        include_encrypted_reasoning: bool = True,
        tool_images: bool = True,
    ) -> None:
        if model is None:
            model = default_model("openai-responses")
        if not model:
            raise ValueError("a model name is needed, e.g. OpenAIResponsesTransport('gpt-5.4-mini')")
        check_connection_arguments(client, base_url=base_url, api_key=api_key)
        check_async_client(client, "openai.AsyncOpenAI")
        self.model = model
        self.store = store
        self.reasoning = dict(reasoning) if reasoning is not None else None
        self.builtin_tools = [dict(tool) for tool in builtin_tools]
        self.include_encrypted_reasoning = include_encrypted_reasoning
        self.tool_images = tool_images
        if client is None:
            try:
                client = openai.AsyncOpenAI(
                    api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
                )
            except openai.OpenAIError as exc:
                if "api_key" not in str(exc):
                    raise ProviderError(redact(f"{_LABEL} client could not be created: {exc}", api_key)) from None
                if not (base_url or os.environ.get("OPENAI_BASE_URL")):
                    raise missing_key(_LABEL, "OPENAI_API_KEY") from None
                # A local server needs no key; a remote one answers 401, and the message names the key.
                client = openai.AsyncOpenAI(api_key=NO_KEY, base_url=base_url, max_retries=max_retries, timeout=timeout)
        self._client: openai.AsyncOpenAI = client

    def __repr__(self) -> str:
        return f"OpenAIResponsesTransport({self.model!r}, store={self.store!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client the requests go through."""
        return self._client

    # --- request mapping ----------------------------------------------------------------------------------------------

    def request_body(self, request: ChatRequest) -> JSON:
        """The JSON body of the request for ``request``, as sent (``options.extra`` merged last)."""
        options = request.options
        body: JSON = {
            "model": self.model,
            "input": self.request_messages(request.messages, max_tool_result_chars=options.max_tool_result_chars),
            "store": self.store,
            "stream": True,
        }
        if options.system_prompt:
            body["instructions"] = options.system_prompt
        tools = self._tools(request)
        if tools:
            body["tools"] = tools
            body["tool_choice"] = _tool_choice(request)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        if self.reasoning is not None:
            body["reasoning"] = self.reasoning
        if self.include_encrypted_reasoning and (self.reasoning is not None or _REASONING_MODELS.match(self.model)):
            body["include"] = [_ENCRYPTED_REASONING]
        body.update(options.extra)
        return body

    def request_messages(
        self, messages: Iterable[Message], *, max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    ) -> list[JSON]:
        """The history as Responses ``input`` items, each tool result cut to ``max_tool_result_chars`` (see
        ``RequestOptions``)."""
        items: list[JSON] = []
        messages = list(history(messages))
        images = (
            RequestImages(
                messages,
                max_chars=_MAX_IMAGE_CHARS,
                max_total_chars=_MAX_REQUEST_IMAGE_CHARS,
                max_count=_MAX_REQUEST_IMAGES,
            )
            if self.tool_images
            else None
        )
        for message in messages:
            if message.role is Role.USER:
                items.append({"role": "user", "content": message.text})
            else:
                items.extend(self._assistant_items(message, images, max_tool_result_chars))
        return items

    def _tools(self, request: ChatRequest) -> list[JSON]:
        if request.options.tool_choice.mode == "none":
            return []
        tools: list[JSON] = [openai_responses_tool(definition) for definition in request.tools]
        return tools + self.builtin_tools

    def _assistant_items(self, message: Message, images: RequestImages | None, limit: int | None) -> Iterator[JSON]:
        for part in message.parts:
            match part:
                case TextPart():
                    if part.text:
                        yield {"role": "assistant", "content": part.text}
                case ReasoningPart():
                    yield from self._reasoning_items(part)
                case ToolCallPart():
                    if part.provider_executed:
                        continue  # this API's own output item, or another provider's: not sent (class docstring)
                    yield {
                        "type": "function_call",
                        "call_id": part.tool_call_id,
                        "name": part.tool_name,
                        "arguments": arguments_json(part),
                    }
                    output = self._output(part, images, limit)
                    yield {"type": "function_call_output", "call_id": part.tool_call_id, "output": output}

    def _output(self, part: ToolCallPart, chosen: RequestImages | None, limit: int | None) -> str | list[JSON]:
        """A call's ``function_call_output``: the text the model is told, or with images, content items."""
        text = outcome_text(part, limit)
        images = chosen.of(part) if chosen is not None else []
        if not images:
            return text
        content: list[JSON] = [{"type": "input_text", "text": text}] if text else []
        return content + [{"type": "input_image", "image_url": image.data_url} for image in images]

    def _reasoning_items(self, part: ReasoningPart) -> Iterator[JSON]:
        data = own_data(part, _PROVIDER_ID)
        entries = data.get("items") if data is not None else None
        if not isinstance(entries, list):
            return  # another provider's reasoning, or none recorded: nothing the Responses API can take
        summary = [{"type": "summary_text", "text": part.text}] if part.text else []
        for entry in entries:
            if not (isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]):
                continue
            encrypted = entry.get("encrypted_content")
            if not (isinstance(encrypted, str) and encrypted) and not self.store:
                continue  # without storage the API cannot find the item by its id
            item: JSON = {"type": "reasoning", "id": entry["id"], "summary": summary}
            if isinstance(encrypted, str) and encrypted:
                item["encrypted_content"] = encrypted
            summary = []  # the part's text goes with its first item
            yield item

    # --- stream mapping -----------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, an in-band error, data that is not
                JSON); the message says why and never contains the key.
        """
        body = self.request_body(request)
        # The body goes whole as ``extra_body``, which the SDK merges into the JSON as it is, over its arguments: the
        # input given as an argument would be walked against the SDK's types (nine tenths of a long request's CPU)
        # to the same JSON, so that argument is empty. The raw response: the SDK sends the request (retries, HTTP
        # errors) and the SSE is read here, with no pydantic model per event.
        create: Any = self._client.responses.with_streaming_response.create
        required = {"model": body["model"], "input": (), "stream": body["stream"]}
        mapper = _StreamMapper()
        decoder = SSEDecoder(_LABEL)
        responded = False  # once the response began, nothing is retried
        try:
            async with create(**required, extra_body=body) as response, body_chunks(response) as chunks:
                responded = True
                async for chunk in chunks:
                    for payload in decoder.feed(chunk):
                        for event in mapper.feed(payload):
                            yield event
                    if mapper.done:
                        await drain(chunks)
                        break
                # An event the body ended in, without its blank line, is incomplete: not read (as the SDK does).
        except Exception as exc:
            error = self._map_error(exc, responded=responded)
            if error is None:
                raise
            raise error from None

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, responded: bool) -> ProviderError | None:
        """A clear, key-free error for what the SDK raised (``None``: not the SDK's, raised as it is)."""
        return map_openai_error(exc, label=_LABEL, key_hint=_KEY_HINT, client=self._client, responded=responded)


# --- request mapping --------------------------------------------------------------------------------------------------


def _tool_choice(request: ChatRequest) -> Any:
    choice = request.options.tool_choice
    if choice.mode == "tool":
        return {"type": "function", "name": choice.tool_name}
    return choice.mode


# --- stream mapping ---------------------------------------------------------------------------------------------------


def _dump(value: Any) -> Any:
    """An item's field as people see it, as the SDK's typed path showed it: an object without its ``None`` fields,
    at every depth (``model_dump(exclude_none=True)``); a list as it came."""
    return _without_none(value) if isinstance(value, dict) else value


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _without(data: Any, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys} if isinstance(data, dict) else {}


def _web_search_arguments(item: JSON) -> dict[str, Any]:
    return _without(_dump(item.get("action")), "sources")


def _web_search_outcome(item: JSON) -> ToolOutcome:
    action = _dump(item.get("action")) or {}
    sources = (action.get("sources") or []) if isinstance(action, dict) else []
    urls = [s["url"] for s in sources if isinstance(s, dict) and isinstance(s.get("url"), str)]
    return ToolOutcome.success(action, citations=urls)


def _file_search_arguments(item: JSON) -> dict[str, Any]:
    queries = item.get("queries")
    return {"queries": list(queries)} if queries and isinstance(queries, list) else {}


def _file_search_outcome(item: JSON) -> ToolOutcome:
    return ToolOutcome.success({"results": _dump(item.get("results")) or []})


def _code_arguments(item: JSON) -> dict[str, Any]:
    code = item.get("code")
    return {"code": code} if code else {}


def _code_outcome(item: JSON) -> ToolOutcome:
    return ToolOutcome.success({"outputs": _dump(item.get("outputs")) or []})


def _image_arguments(item: JSON) -> dict[str, Any]:
    return {}


def _image_outcome(item: JSON) -> ToolOutcome:
    # The image goes to the card as an attachment, not into the value: a base64 image is no text for anyone.
    result = _str(item.get("result"))
    image_format = _str(item.get("output_format")) or "png"
    attachments = [{"mime_type": f"image/{image_format}", "data": result}] if result else []
    prompt = item.get("revised_prompt")
    return ToolOutcome.success(
        {"revised_prompt": prompt} if prompt else None, text="Image generated.", attachments=attachments
    )


def _mcp_arguments(item: JSON) -> dict[str, Any]:
    try:
        parsed = json.loads(_str(item.get("arguments")) or "")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _mcp_outcome(item: JSON) -> ToolOutcome:
    error = item.get("error")
    if error:
        return ToolOutcome.failure(str(error), retryable=False)
    return ToolOutcome.success(item.get("output"))


@dataclass(frozen=True)
class _BuiltinTool:
    """How one kind of provider-run call shows: its tool name, arguments, progress text and result.

    A call whose arguments are not in its ``added`` item gets them from its ``done`` item, before its result; until
    then it shows no progress (a call's arguments are fixed once it runs). A tool that takes no arguments
    (``takes_arguments=False``) starts complete, so its progress shows at once.
    """

    name: str
    progress: str
    arguments: Callable[[JSON], dict[str, Any]]
    outcome: Callable[[JSON], ToolOutcome]
    takes_arguments: bool = True


# Output items of tools OpenAI runs itself. Tools that need the client to act (computer use, shell, apply_patch,
# custom tools) are not among them and are not supported: their items are ignored like any unknown item.
_BUILTIN_TOOLS = {
    "web_search_call": _BuiltinTool("web_search", "searching…", _web_search_arguments, _web_search_outcome),
    "file_search_call": _BuiltinTool("file_search", "searching files…", _file_search_arguments, _file_search_outcome),
    "code_interpreter_call": _BuiltinTool("code_interpreter", "running code…", _code_arguments, _code_outcome),
    "image_generation_call": _BuiltinTool(
        "image_generation", "generating the image…", _image_arguments, _image_outcome, takes_arguments=False
    ),
    "mcp_call": _BuiltinTool("mcp", "calling the MCP server…", _mcp_arguments, _mcp_outcome),
}

# ``response.<item type>.<phase>`` events that mean a provider-run call is working.
_PROGRESS_PHASES = frozenset({"in_progress", "searching", "interpreting", "generating"})


def _builtin_failed(item: JSON) -> ToolOutcome | None:
    if item.get("status") == "failed":
        return ToolOutcome.failure(f"The provider's {item.get('type')} failed.", retryable=False)
    return None


@dataclass
class _Call:
    """A function call being streamed: its call id and how many argument characters were sent."""

    call_id: str
    sent: int = 0
    completed: bool = False


class _StreamMapper:
    """Turns the Responses stream's events (the JSON of each ``data:`` line) into ai_widgets events, one response
    at a time.

    Reasoning items become the provider data of their ReasoningPart: ``provider="openai"``,
    ``provider_data={"items": [{"id": ..., "encrypted_content": ...}, ...]}`` (every consecutive reasoning item
    that landed on the part, in order).
    """

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}  # output item id -> function call
        self.item_ids: dict[int, str] = {}  # output index -> output item id, for events without an item id
        self.builtin: dict[str, bool] = {}  # provider-run item id -> whether its arguments are complete
        self.local_calls = False
        # The reasoning items whose part is the reply's last part (consecutive items land on one part).
        self.reasoning_items: list[dict[str, str]] = []
        self.reasoning_open = False
        self.reasoning_text = False
        self.done = False  # ``[DONE]`` came: nothing after it is read

    def feed(self, payload: bytes) -> tuple[StreamEvent, ...]:
        """The events of one ``data:`` payload.

        Raises:
            ProviderError: The payload is an error the provider reported, a stream that makes no sense, or data
                that cannot be read.
        """
        if self.done:
            return ()
        try:
            event = load_json(payload)
        except (ValueError, RecursionError) as exc:
            if payload.strip().startswith(b"[DONE]"):  # not sent by OpenAI's Responses API, but by some servers
                self.done = True
                return ()
            raise unreadable_payload(_LABEL, exc) from None
        if not isinstance(event, dict):
            return ()
        if event.get("error"):  # an error event, {"type": "error", "error": {...}}
            raise stream_error(_LABEL, event["error"])
        return self.map(event)

    def map(self, event: JSON) -> tuple[StreamEvent, ...]:
        """The ai_widgets events for one stream event (none for events that change nothing we show)."""
        match event.get("type"):
            case "response.output_text.delta" | "response.refusal.delta":
                return self._text(event.get("delta"))
            case "response.function_call_arguments.delta":
                return self._arguments(event)
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                return self._reasoning(event.get("delta"))
            case "response.reasoning_summary_part.added":
                # Summary parts are paragraphs: keep them apart in the one reasoning part.
                return self._reasoning("\n\n") if event.get("summary_index") and self.reasoning_text else ()
            case "response.output_item.added":
                item = event.get("item")
                return self._item_added(item, event.get("output_index")) if isinstance(item, dict) else ()
            case "response.output_item.done":
                item = event.get("item")
                return self._item_done(item, event.get("output_index")) if isinstance(item, dict) else ()
            case "response.created":
                return (ResponseStarted(),)
            case "response.completed" | "response.incomplete":
                response = event.get("response")
                return self._finished(response if isinstance(response, dict) else {})
            case "response.failed":
                error = _field(event.get("response"), "error")
                raise ProviderError(in_band_error(_LABEL, _field(error, "code"), _field(error, "message")))
            case "error":  # the flat form: {"type": "error", "code": ..., "message": ...}
                raise ProviderError(in_band_error(_LABEL, _str(event.get("code")), _str(event.get("message"))))
            case str() as other:
                return self._progress(other, event)
            case _:
                return ()

    # -- text and reasoning --

    def _text(self, delta: Any) -> tuple[StreamEvent, ...]:
        if not delta or not isinstance(delta, str):
            return ()
        self.reasoning_open = False
        return (TextDelta(delta),)

    def _reasoning(self, delta: Any) -> tuple[StreamEvent, ...]:
        if not delta or not isinstance(delta, str):
            return ()
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        self.reasoning_text = True
        return (ReasoningDelta(delta),)

    def _reasoning_done(self, item: JSON) -> tuple[StreamEvent, ...]:
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        entry = {"id": _str(item.get("id")) or ""}
        encrypted = _str(item.get("encrypted_content"))
        if encrypted:
            entry["encrypted_content"] = encrypted
        self.reasoning_items.append(entry)
        data = {"items": [dict(e) for e in self.reasoning_items]}
        return (ReasoningDelta("", provider=_PROVIDER_ID, provider_data=data),)

    # -- items --

    def _item_added(self, item: JSON, index: Any) -> tuple[StreamEvent, ...]:
        kind = item.get("type")
        if kind == "function_call":
            return self._start_call(item, index)
        if kind == "reasoning":
            if self.reasoning_open and self.reasoning_text:
                return (ReasoningDelta("\n\n"),)  # a further reasoning item continues the same part
            # A reasoning model may think for a while before its summary (if any) or its answer: say so.
            return (StatusUpdate("Reasoning…"),)
        builtin = _BUILTIN_TOOLS.get(kind) if isinstance(kind, str) else None
        item_id = _str(item.get("id"))
        if builtin is None or item_id is None:
            return ()
        self.reasoning_open = False
        arguments = builtin.arguments(item)
        complete = bool(arguments) or not builtin.takes_arguments
        self.builtin[item_id] = complete
        # An MCP call names the server's tool; the other built-in tools are named by their kind.
        name = (_str(item.get("name")) or builtin.name) if kind == "mcp_call" else builtin.name
        text = json.dumps(arguments, ensure_ascii=False) if complete else None
        # The status line says what the provider is doing until its result (or the next text) comes.
        status = StatusUpdate(builtin.progress[:1].upper() + builtin.progress[1:])
        return (ToolCallStarted(item_id, name, text, provider_executed=True), status)

    def _start_call(self, item: JSON, index: Any) -> tuple[StreamEvent, ...]:
        call_id, name = _str(item.get("call_id")) or _str(item.get("id")), _str(item.get("name"))
        if call_id is None or name is None:
            raise ProviderError("OpenAI sent a function call without a call id or a name.")
        key = _str(item.get("id")) or call_id
        call = _Call(call_id)
        self.calls[key] = call
        if isinstance(index, int):
            self.item_ids[index] = key
        self.local_calls = True
        self.reasoning_open = False
        events: list[StreamEvent] = [ToolCallStarted(call_id, name)]
        arguments = _str(item.get("arguments"))
        if arguments:
            call.sent = len(arguments)
            events.append(ToolCallDelta(call_id, arguments))
        return tuple(events)

    def _arguments(self, event: JSON) -> tuple[StreamEvent, ...]:
        item_id = event.get("item_id")
        if not isinstance(item_id, str) or not item_id:
            index = event.get("output_index")
            item_id = self.item_ids.get(index) if isinstance(index, int) else None
        call = self.calls.get(item_id) if item_id is not None else None
        if call is None:
            raise ProviderError(f"OpenAI sent arguments for a function call it never started ({item_id!r}).")
        delta = event.get("delta")
        if not delta or not isinstance(delta, str):
            return ()
        call.sent += len(delta)
        return (ToolCallDelta(call.call_id, delta),)

    def _item_done(self, item: JSON, index: Any) -> tuple[StreamEvent, ...]:
        kind = item.get("type")
        if kind == "function_call":
            return self._finish_call(item, index)
        if kind == "reasoning":
            return self._reasoning_done(item)
        builtin = _BUILTIN_TOOLS.get(kind) if isinstance(kind, str) else None
        item_id = _str(item.get("id"))
        if builtin is None or item_id is None:
            return ()
        events: list[StreamEvent] = []
        if item_id not in self.builtin:  # done without added: start it now
            events += self._item_added(item, index)
        if not self.builtin[item_id]:
            # The arguments (say, the search query) are often only known once the call is done.
            arguments = builtin.arguments(item)
            events.append(ToolCallDelta(item_id, json.dumps(arguments, ensure_ascii=False)))
            events.append(ToolCallArgumentsDone(item_id))
            self.builtin[item_id] = True
        events.append(ProviderToolResult(item_id, _builtin_failed(item) or builtin.outcome(item)))
        return tuple(events)

    def _finish_call(self, item: JSON, index: Any) -> tuple[StreamEvent, ...]:
        events: list[StreamEvent] = []
        call = self.calls.get(_str(item.get("id")) or _str(item.get("call_id")) or "")
        if call is None:  # done without added (seen from compatible servers): the whole call at once
            events += self._start_call(item, index)
            call = self.calls[_str(item.get("id")) or _str(item.get("call_id")) or ""]
        if call.completed:
            return ()
        arguments = _str(item.get("arguments")) or ""
        if len(arguments) > call.sent:  # arguments that never came as deltas
            events.append(ToolCallDelta(call.call_id, arguments[call.sent :]))
            call.sent = len(arguments)
        call.completed = True
        events.append(ToolCallArgumentsDone(call.call_id))
        return tuple(events)

    def _progress(self, kind: str, event: JSON) -> tuple[StreamEvent, ...]:
        # ``response.web_search_call.searching`` and the like; anything else is an event we do not show.
        parts = kind.split(".")
        if len(parts) != 3 or parts[2] not in _PROGRESS_PHASES:
            return ()
        builtin = _BUILTIN_TOOLS.get(parts[1])
        item_id = event.get("item_id")
        if builtin is None or not isinstance(item_id, str) or not self.builtin.get(item_id):
            return ()  # not started, or its arguments are still to come (a running call's are fixed)
        return (ToolProgressUpdate(item_id, message=builtin.progress),)

    # -- the end --

    def _finished(self, response: JSON) -> tuple[StreamEvent, ...]:
        events: list[StreamEvent] = []
        usage = response.get("usage")
        if isinstance(usage, dict):
            events.append(
                UsageUpdate(
                    input_tokens=_int(usage.get("input_tokens")),
                    output_tokens=_int(usage.get("output_tokens")),
                    cached_tokens=_int(_field(usage.get("input_tokens_details"), "cached_tokens")),
                    reasoning_tokens=_int(_field(usage.get("output_tokens_details"), "reasoning_tokens")),
                )
            )
        events.append(ResponseCompleted(self._finish_reason(response)))
        return tuple(events)

    def _finish_reason(self, response: JSON) -> FinishReason:
        if response.get("status") == "incomplete":
            reason = _field(response.get("incomplete_details"), "reason")
            return _INCOMPLETE_REASONS.get(reason if isinstance(reason, str) else "", FinishReason.LENGTH)
        return FinishReason.TOOL_CALLS if self.local_calls else FinishReason.STOP


# --- error mapping ----------------------------------------------------------------------------------------------------
# The OpenAI SDK's errors become ProviderErrors in ``_openai_errors``, shared with the Chat Completions transport.
