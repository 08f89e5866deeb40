"""The transport to OpenAI's Responses API (``POST /responses``, streamed), through the official ``openai`` SDK: its
construction and the request it sends (the stream is parsed in ``_openai_responses_stream``, the SDK's errors read in
``_openai_errors``)."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.attachments import AttachmentLimits
from ai_widgets.events import StreamEvent
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.messages._usage import price_provider_for_url
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.tools._formats import openai_responses_tool
from ai_widgets.transports._base import ChatRequest, TransportProfile
from ai_widgets.transports._client import NO_KEY, check_async_client, check_connection_arguments, import_sdk
from ai_widgets.transports._errors import ProviderError, missing_key
from ai_widgets.transports._history import (
    RequestImages,
    arguments_json,
    file_note,
    history,
    outcome_text,
    own_data,
    user_parts,
)
from ai_widgets.transports._loop_clients import ClientPerLoop
from ai_widgets.transports._models import default_model
from ai_widgets.transports._openai_errors import map_openai_error
from ai_widgets.transports._openai_responses_stream import LABEL, PROVIDER_ID, ResponsesParser
from ai_widgets.transports._output import openai_responses_text_format
from ai_widgets.transports._sse import sse_stream
from ai_widgets.transports._windows import known_window

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

__all__ = ["OpenAIResponsesTransport"]

#: The providers whose Responses API takes ``prompt_cache_key`` (developers.openai.com/docs/guides/prompt-caching;
#: Azure's Responses objects carry it too).
PROMPT_CACHE_KEY_PROVIDERS = ("openai", "azure")

JSON = dict[str, Any]

KEY_HINT = "OPENAI_API_KEY or api_key="
ENCRYPTED_REASONING = "reasoning.encrypted_content"

# Models that reason by default (o-series, GPT-5 but its non-reasoning chat variant, later GPTs, gpt-oss): for
# these the encrypted reasoning is requested even without ``reasoning=``, so it can be sent back with store=False.
REASONING_MODELS = re.compile(r"^(o\d|gpt-5(?!-chat)|gpt-[6-9]|gpt-\d\d|gpt-oss)")

#: The largest image of a tool's result sent, in base64 characters (OpenAI takes images up to 20 MB).
MAX_IMAGE_CHARS = 20 * 1024 * 1024
#: The most base64 characters of images, and the most images, in one request: OpenAI takes "up to 50 MB total
#: payload per request" and 500 images (platform.openai.com/docs/guides/images-vision); room is left for the text.
MAX_REQUEST_IMAGE_CHARS = 40 * 1024 * 1024
MAX_REQUEST_IMAGES = 500
#: What a user message's files may be: as the Chat Completions API's (images up to 20 MB, 500 a request; PDFs of at
#: most 32 MB a request; 36 MB of files in all, a 50 MB request in base64), and a PDF may be a URL (``file_url``).
ATTACHMENT_LIMITS = AttachmentLimits(
    LABEL,
    max_image_bytes=20 * 1024 * 1024,
    max_images=500,
    max_document_bytes=32 * 1024 * 1024,
    max_total_bytes=36 * 1024 * 1024,
)


class OpenAIResponsesTransport:
    """A model behind OpenAI's Responses API (``client.responses.create(stream=True, ...)``).

    Args:
        model: The model, e.g. ``"gpt-5.4-mini"``; by default :func:`~ai_widgets.transports.default_model`
            (``AI_WIDGETS_MODEL``, else a current small model).
        client: An ``openai.AsyncOpenAI`` you configured (its own key, base URL, retries and timeout are used; a copy of
            it, with its own connections, for each further event loop). A chat sends from two event loops (``ask_sync``
            from the package's own): a client with an ``http_client`` of your own is used from both as given, so give it
            one that works from any loop.
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

    - Request: the system prompt as ``instructions``; user messages as ``{"role": "user", "content": text}`` (with
      attachments, ``content`` items: ``input_text``, ``input_image`` with its URL or a ``data:`` URL, ``input_file``
      with ``file_data`` or ``file_url`` for a PDF; a file the API would refuse, as ``attachment_limits`` says, becomes
      a text note saying what it was); the assistant's text as ``{"role": "assistant", "content": text}`` (the SDK's
      simple message form); every local tool call (another provider's included) as a ``function_call`` item
      (``call_id``, ``name``, ``arguments``) followed by its ``function_call_output`` (what the model is told about the
      outcome, for failed, declined and cancelled calls too), in the order of the reply's parts.
    - Images in tool results go in the ``function_call_output`` itself: with images (image attachments of successful
      outcomes and the image their display shows, a figure's PNG: PNG, JPEG, GIF or WebP, inline base64 up to 20 MB or
      an http(s) URL) its ``output`` is a list, ``{"type": "input_text", "text": ...}`` (the text the model is told;
      left out when empty) then one ``{"type": "input_image", "image_url": ...}`` per image (a ``data:`` URL for inline
      images); without, the text. Other attachments, and an image the API would refuse (another format, larger, not
      base64, cut short), show on the card only, as do the oldest images once a request would carry more than 40 MB of
      them or more than 500. Off with ``tool_images=False``.
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
    - A typed answer (``ChatRequest.output_schema``) is asked for as ``text: {"format": {"type": "json_schema",
      name, schema, strict}}``, ``strict`` as for Chat Completions (when strict mode takes the schema).
    - ``temperature``, ``max_output_tokens`` (from ``max_tokens``); ``options.extra`` is merged into the JSON body
      last, so it can set or override any field. The body goes to the SDK as it is built (``extra_body``), not as
      typed arguments, which the SDK would walk against its types (most of a long conversation's request CPU) only
      to write the same JSON.
    - Stream: the raw server-sent events are read off the SDK's response by the loop every SSE transport shares
      (``_sse.sse_stream``) and parsed in ``_openai_responses_stream`` (no pydantic model per event, several times
      cheaper); nothing after ``response.completed`` (or ``response.incomplete``) is read, the rest of the body drained
      briefly; an event the body ends in without its blank line is read when its data is whole JSON. Text and refusals
      as text, reasoning summaries and reasoning text as reasoning, function calls with their arguments delta by delta
      (several per response), provider-run tools as calls with a result (web_search, file_search, code_interpreter,
      image_generation, mcp; tools that need the client to act, such as computer use or shell, are not supported) and
      with progress once their arguments are known (a web search's query and an MCP call's arguments come with the
      item's end, just before its result), usage (input, output, cached and reasoning tokens, with the model the
      response names and the provider genai-prices knows at the client's URL, for the price), and the finish reason
      (``incomplete`` for ``max_output_tokens`` is ``length``, for ``content_filter`` is ``content_filter``). Message
      ``phase`` (commentary / final answer) is not kept.
    - ``RequestOptions(cache=True)``: on OpenAI's API (and Azure's), ``prompt_cache_key`` is the conversation's id,
      so its requests reach the same prompt cache; the hits are ``usage.input_tokens_details.cached_tokens``. Another
      server (a local one speaking this API) gets no such field, which it might refuse.
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
        own = client is None
        if client is None:
            try:
                client = openai.AsyncOpenAI(
                    api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
                )
            except openai.OpenAIError as exc:
                if "api_key" not in str(exc):
                    raise ProviderError(redact(f"{LABEL} client could not be created: {exc}", api_key)) from None
                if not (base_url or os.environ.get("OPENAI_BASE_URL")):
                    raise missing_key(LABEL, "OPENAI_API_KEY") from None
                # A local server needs no key; a remote one answers 401, and the message names the key.
                client = openai.AsyncOpenAI(api_key=NO_KEY, base_url=base_url, max_retries=max_retries, timeout=timeout)
        self._client: openai.AsyncOpenAI = client
        self._clients = ClientPerLoop(client, own=own)
        #: genai-prices' id of the server's provider, by its URL (``None``: a server it does not price), for the cost.
        self.price_provider = price_provider_for_url(str(client.base_url))
        #: What the files of a user message may be; ``send(..., attach=...)`` refuses others before sending.
        self.attachment_limits = ATTACHMENT_LIMITS

    def __repr__(self) -> str:
        return f"OpenAIResponsesTransport({self.model!r}, store={self.store!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client the requests go through."""
        return self._client

    @property
    def profile(self) -> TransportProfile:
        """What this transport is: the provider that prices it (``price_provider``), the model, the model's context
        window in tokens from genai-prices' model table (or ours: ``_windows``; ``None`` for a server it does not
        know), and the attachment limits. Read again for each request, so it follows a changed model."""
        return TransportProfile(
            provider=self.price_provider,
            model=self.model,
            context_window=known_window("openai", self.model, base_url=str(self._client.base_url)),
            max_output_tokens=None,
            attachment_limits=self.attachment_limits,
        )

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
            body["tool_choice"] = tool_choice(request)
        if request.output_schema is not None:
            body["text"] = {"format": openai_responses_text_format(request.output_schema)}
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        if self.reasoning is not None:
            body["reasoning"] = self.reasoning
        if self.include_encrypted_reasoning and (self.reasoning is not None or REASONING_MODELS.match(self.model)):
            body["include"] = [ENCRYPTED_REASONING]
        if options.cache and request.conversation_id and self.price_provider in PROMPT_CACHE_KEY_PROVIDERS:
            body["prompt_cache_key"] = request.conversation_id  # the conversation's requests share a prompt cache
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
                max_chars=MAX_IMAGE_CHARS,
                max_total_chars=MAX_REQUEST_IMAGE_CHARS,
                max_count=MAX_REQUEST_IMAGES,
            )
            if self.tool_images
            else None
        )
        for message in messages:
            if message.role is Role.USER:
                items.append({"role": "user", "content": self._user_content(message)})
            else:
                items.extend(self._assistant_items(message, images, max_tool_result_chars))
        return items

    def _user_content(self, message: Message) -> str | list[JSON]:
        """A user message's ``content``: its text, or with files or several texts (attachments' text views), input
        items."""
        parts = user_parts(message)
        if len(parts) <= 1 and not any(isinstance(p, FilePart) for p in parts):
            return message.text
        content: list[JSON] = []
        for part in parts:
            if isinstance(part, TextPart):
                content.append({"type": "input_text", "text": part.text})
                continue
            kind = self.attachment_limits.kind_of(part)
            if kind == "image":
                content.append({"type": "input_image", "image_url": part.data_url})
            elif kind == "document" and part.url is not None:
                content.append({"type": "input_file", "file_url": part.url})
            elif kind == "document":
                name = part.name or "document.pdf"
                content.append({"type": "input_file", "filename": name, "file_data": part.data_url})
            else:
                content.append({"type": "input_text", "text": file_note(part, self.attachment_limits.provider)})
        return content

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
        images = chosen.of(part) if chosen is not None else []
        text = outcome_text(part, limit, images=len(images))
        if not images:
            return text
        content: list[JSON] = [{"type": "input_text", "text": text}] if text else []
        return content + [{"type": "input_image", "image_url": image.data_url} for image in images]

    def _reasoning_items(self, part: ReasoningPart) -> Iterator[JSON]:
        data = own_data(part, PROVIDER_ID)
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

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, an in-band error, data that is not
                JSON); the message says why and never contains the key.
        """
        return sse_stream(
            lambda: self._send(request),
            ResponsesParser(model=self.model, provider=self.price_provider),
            label=LABEL,
            map_error=self._map_error,
        )

    def _send(self, request: ChatRequest) -> Any:
        """Sends the request; the SDK's streamed response, not read yet."""
        body = self.request_body(request)
        # The body goes whole as ``extra_body``, which the SDK merges into the JSON as it is, over its arguments: the
        # input given as an argument would be walked against the SDK's types (nine tenths of a long request's CPU)
        # to the same JSON, so that argument is empty. The raw response: the SDK sends the request (retries, HTTP
        # errors) and the SSE is read by ``sse_stream``, with no pydantic model per event.
        create: Any = self._clients.current().responses.with_streaming_response.create
        return create(model=body["model"], input=(), stream=body["stream"], extra_body=body)

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, responded: bool) -> ProviderError | None:
        """A clear, key-free error for what the SDK raised (``None``: not the SDK's, raised as it is)."""
        return map_openai_error(exc, label=LABEL, key_hint=KEY_HINT, client=self._client, responded=responded)


# --- request mapping --------------------------------------------------------------------------------------------------


def tool_choice(request: ChatRequest) -> Any:
    choice = request.options.tool_choice
    if choice.mode == "tool":
        return {"type": "function", "name": choice.tool_name}
    return choice.mode


# --- error mapping ----------------------------------------------------------------------------------------------------
# The OpenAI SDK's errors become ProviderErrors in ``_openai_errors``, shared with the Chat Completions transport.
