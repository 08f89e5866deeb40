"""The transport to OpenAI's Chat Completions API (``POST /chat/completions``, streamed) and every server that speaks
it (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq, DeepSeek, Qwen/DashScope), through the official ``openai``
SDK: its construction, the key each host gets, and the request it sends (the stream is parsed in
``_openai_chat_stream``, the SDK's errors read in ``_openai_errors``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ai_widgets.attachments import AttachmentLimits
from ai_widgets.events import StreamEvent
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.messages._usage import price_provider_for_url
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS, ToolChoice
from ai_widgets.tools._formats import openai_chat_tool
from ai_widgets.transports._base import ChatRequest, TransportProfile
from ai_widgets.transports._client import NO_KEY, check_async_client, check_connection_arguments, import_sdk
from ai_widgets.transports._errors import ProviderError, missing_key
from ai_widgets.transports._history import (
    RequestImages,
    arguments_json,
    file_note,
    history,
    outcome_text,
    user_parts,
)
from ai_widgets.transports._loop_clients import ClientPerLoop
from ai_widgets.transports._models import default_model
from ai_widgets.transports._openai_chat_stream import ChatCompletionsParser
from ai_widgets.transports._openai_errors import map_openai_error
from ai_widgets.transports._output import openai_chat_response_format
from ai_widgets.transports._sse import sse_stream
from ai_widgets.transports._windows import known_window

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

__all__ = ["OpenAIChatTransport"]

JSON = dict[str, Any]

# Hosts we recognise: the name used in error messages, and the environment variable that holds their key.
# A known non-OpenAI host never gets OPENAI_API_KEY: that key belongs to OpenAI alone.
KNOWN_HOSTS: tuple[tuple[str, str, str | None], ...] = (
    ("api.openai.com", "OpenAI", "OPENAI_API_KEY"),
    ("api.groq.com", "Groq", "GROQ_API_KEY"),
    ("api.deepseek.com", "DeepSeek", "DEEPSEEK_API_KEY"),
    ("openrouter.ai", "OpenRouter", "OPENROUTER_API_KEY"),
    ("dashscope", "Qwen (DashScope)", "DASHSCOPE_API_KEY"),
    ("ollama.com", "Ollama Cloud", "OLLAMA_API_KEY"),
    (":11434", "Ollama", None),
)

#: The largest image of a tool's result sent, in base64 characters (OpenAI takes images up to 20 MB).
MAX_IMAGE_CHARS = 20 * 1024 * 1024
#: The most base64 characters of images, and the most images, in one request: OpenAI takes "up to 50 MB total
#: payload per request" and 500 images (platform.openai.com/docs/guides/images-vision); room is left for the text.
MAX_REQUEST_IMAGE_CHARS = 40 * 1024 * 1024
MAX_REQUEST_IMAGES = 500
#: What a user message's files may be (platform.openai.com/docs/guides/images-vision and /pdf-files): images up to
#: 20 MB, 500 a request; PDFs as data only (a ``file`` part takes ``file_data`` or an uploaded file's id, no URL), at
#: most 32 MB of them a request; the whole request at most 50 MB, so 36 MB of files (base64 makes them 4/3 as long).
ATTACHMENT_LIMITS = AttachmentLimits(
    "OpenAI",
    max_image_bytes=20 * 1024 * 1024,
    max_images=500,
    max_document_bytes=32 * 1024 * 1024,
    max_total_bytes=36 * 1024 * 1024,
    url_kinds=frozenset({"image"}),
)

#: The providers whose Chat Completions take ``prompt_cache_key`` (developers.openai.com/docs/guides/prompt-caching,
#: docs.mistral.ai's prompt caching page).
PROMPT_CACHE_KEY_PROVIDERS = ("openai", "mistral")

# Models that take ``max_completion_tokens`` and reject ``max_tokens`` on OpenAI.
COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def identify(base_url: str | None) -> tuple[str, str | None, str]:
    """The provider's name, the environment variable of its key, and where to look for the key (for messages)."""
    if not base_url:
        return "OpenAI", "OPENAI_API_KEY", "OPENAI_API_KEY or api_key="
    parts = urlsplit(base_url)
    host = f"{parts.hostname or ''}:{parts.port}" if parts.port else parts.hostname or ""
    for marker, label, variable in KNOWN_HOSTS:
        if marker in host:
            return label, variable, f"{variable} or api_key=" if variable else "api_key="
    # An unknown server given as base_url= never gets OPENAI_API_KEY: that key is OpenAI's, not a third party's.
    return f"the server at {base_url}", None, "api_key="


class OpenAIChatTransport:
    """A model behind the Chat Completions API (``POST /chat/completions``, streamed).

    Args:
        model: The model name, e.g. ``"gpt-5.4-mini"``, ``"qwen3"`` on Ollama, ``"qwen3-max"`` on DashScope; by
            default :func:`~ai_widgets.transports.default_model` (``AI_WIDGETS_MODEL``, else a current small model:
            OpenAI's, or with a ``base_url`` a local server's).
        client: An ``openai.AsyncOpenAI`` you configured (its own key, base URL, organization, retries and timeout are
            used; a copy of it, with its own connections, for each further event loop). A chat sends from two event
            loops (``ask_sync`` from the package's own): a client with an ``http_client`` of your own is used from both
            as given, so give it one that works from any loop.
        base_url: An OpenAI-compatible server, e.g. ``"http://localhost:11434/v1"`` (Ollama),
            ``"https://api.groq.com/openai/v1"``; ``OPENAI_BASE_URL`` or OpenAI's API by default.
        api_key: The key. Without it: the known host's variable (``OPENAI_API_KEY``, ``GROQ_API_KEY``,
            ``DEEPSEEK_API_KEY``, ``OPENROUTER_API_KEY``, ``DASHSCOPE_API_KEY``, ``OLLAMA_API_KEY``); another
            ``base_url`` gets no key from the environment (``OPENAI_API_KEY`` only goes to OpenAI, or to
            ``OPENAI_BASE_URL`` when that is set too), just a placeholder. The key stays in the
            SDK client: it never enters a message, an event or an error text.
        organization: The OpenAI organization (``OPENAI_ORG_ID`` by default).
        max_retries: Retries of a request that fails with 408/409/429/5xx or a connection error, with the SDK's
            backoff, before the first byte of the stream; never once the reply has begun.
        timeout: Seconds to wait to connect and between bytes of the stream.
        stream_usage: Ask for token usage (``stream_options.include_usage``); turn off for a server that rejects it.
        parallel_tool_calls: Send ``parallel_tool_calls`` (only with tools); the server's default when ``None``.
        provider_name: The name error messages use; guessed from the base URL when omitted.
        tool_images: Send the images of tool results to the model (see below); turn off for a model or server
            without image input (DeepSeek's API, text-only local models), which would refuse every later request.

    Raises:
        ValueError: ``model`` is empty, or ``client`` was given together with ``base_url``, ``api_key`` or
            ``organization``.
        ProviderError: No key for OpenAI's own API was given or found. A ``base_url`` (or ``OPENAI_BASE_URL``)
            without a key gets a placeholder instead: local servers need none, and a remote one answers 401 with a
            message naming the key's variable.

    Mapping and provider quirks:

    - Request: the system prompt as the first ``system`` message; user text (with attachments, ``content`` parts:
      ``text``, ``image_url`` for an image, a ``data:`` URL for inline ones, ``file`` with ``file_data`` for a PDF; a
      file the API would refuse, as ``attachment_limits`` says, becomes a text note saying what it was); an assistant
      reply as one ``assistant`` message per model response (``content``: its text, ``None`` when it only called tools;
      ``tool_calls``), each followed by one ``tool`` message per call, in the calls' order, with the text the model is
      told (failed, declined and cancelled calls included). Calls a provider ran (another API's server tools) are sent
      the same way, as a function call with the text of its result: Chat Completions has no server tools.
    - Images in tool results: a ``tool`` message carries text only, so the images of a response's results (image
      attachments of successful outcomes and the image their display shows, a figure's PNG: PNG, JPEG, GIF or WebP,
      inline base64 up to 20 MB or an http(s) URL) follow its ``tool`` messages as one ``user`` message: for each call
      with images a text part naming the call (``"The result of <tool> (call <id>) includes this image:"``), then its
      ``image_url`` parts (``data:`` URLs for inline images). The ``tool`` messages keep the text the model is told.
      Other attachments, and an image the API would refuse (another format, larger, not base64, cut short), show on the
      card only, as do the oldest images once a request would carry more than 40 MB of them or more than 500. Off with
      ``tool_images=False``.
    - Provider data: none is sent back, whichever provider stored it. Reasoning is not sent back at all: Chat
      Completions has no field for it (DeepSeek even rejects ``reasoning_content`` in requests), and nothing this
      transport streams carries provider data, so a conversation moves to and from any other transport as it is.
    - Tool choice: ``auto``, ``required``, ``{"type": "function", "function": {"name": ...}}``; with no tools
      (``ToolChoice.NONE``) neither ``tools`` nor ``tool_choice`` is sent.
    - A typed answer (``ChatRequest.output_schema``) is asked for as ``response_format: {"type": "json_schema",
      "json_schema": {name, schema, strict}}``, the name from the schema's title; ``strict`` when strict mode takes
      the schema (the rules ``Tool.check()`` reports), off otherwise (a default, an open dict).
    - ``max_tokens`` is sent as ``max_completion_tokens`` for OpenAI's reasoning models (names starting with o1, o3,
      o4, gpt-5), which reject ``max_tokens``; every other model gets ``max_tokens``, which compatible servers
      expect. ``options.extra`` is merged into the JSON body last, so it can override any field.
    - The body goes to the SDK as it is built (``extra_body``), not as typed arguments, which the SDK would walk
      against its types (most of a long conversation's request CPU) only to write the same JSON.
    - Stream: the raw server-sent events are read off the SDK's response by the loop every SSE transport shares
      (``_sse.sse_stream``) and parsed in ``_openai_chat_stream`` (no pydantic model per chunk, several times cheaper);
      nothing after ``data: [DONE]`` is read as the reply (the rest of the body is drained briefly, so the connection is
      reused), and an event the body ends in without its blank line is read when its data is whole JSON (dropped, and
      the reply broken off, when it is not). ``delta.refusal`` is shown as text (the finish reason stays as sent);
      ``delta.reasoning_content`` (DeepSeek, Qwen, vLLM) or ``delta.reasoning`` (Groq, Ollama, OpenRouter) as reasoning;
      tool calls are keyed by ``index``, keep their first non-empty id (Qwen repeats ``"id": ""``), and a different id
      at a used index starts a new call (servers that put every call at index 0); a call without id gets a generated
      one; a call whose arguments never arrive gets ``{}`` (arguments sent as a JSON object rather than text are taken
      as that object's JSON). Usage from the ``choices: []`` chunk, Groq's ``x_groq.usage`` or DeepSeek's
      ``prompt_cache_hit_tokens``, with the model the chunks name and the provider genai-prices knows at the base URL
      (OpenAI, Groq, DeepSeek, OpenRouter, Together, Mistral...; none for a local server, Ollama or DashScope), for
      its price. The reply completes after the usage chunk (or the stream's end), so its usage is inside it.
    - ``RequestOptions(cache=True)``: on OpenAI's (and Mistral's) API, ``prompt_cache_key`` is the conversation's id, so its
      requests reach the same prompt cache (cached tokens are reported in ``prompt_tokens_details.cached_tokens``). A stream that ends without a finish reason is reported as broken off.
    - Errors: an in-band ``{"error": ...}`` event (Groq's ``tool_use_failed``, OpenRouter's mid-stream errors) and
      HTTP failures raise :class:`ProviderError` with the provider's message, never the key (the wording is shared
      with the Responses transport); no tool call of a failed reply is reported as complete.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        stream_usage: bool = True,
        parallel_tool_calls: bool | None = None,
        provider_name: str | None = None,
        tool_images: bool = True,
    ) -> None:
        if model is None:
            local = base_url or (client is None and os.environ.get("OPENAI_BASE_URL"))
            model = default_model("openai-compatible" if local else "openai-chat")
        if not model:
            raise ValueError("a model name is needed, e.g. OpenAIChatTransport('gpt-5.4-mini')")
        check_connection_arguments(client, base_url=base_url, api_key=api_key, organization=organization)
        check_async_client(client, "openai.AsyncOpenAI")
        self.model = model
        self._stream_usage = stream_usage
        self._parallel_tool_calls = parallel_tool_calls
        self.tool_images = tool_images
        own = client is None
        if client is None:
            from_environment = not base_url and bool(os.environ.get("OPENAI_BASE_URL"))
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
            label, variable, key_hint = identify(base_url)
            if variable is None and from_environment:
                # OPENAI_BASE_URL with OPENAI_API_KEY is the SDK's own convention: both were set on purpose.
                variable, key_hint = "OPENAI_API_KEY", "OPENAI_API_KEY or api_key="
            key = api_key or (os.environ.get(variable) if variable else None)
            if not key:
                if base_url is None:
                    raise missing_key("OpenAI", "OPENAI_API_KEY")
                key = NO_KEY  # a local server needs none; a remote one answers 401, and the message names the key
            client = openai.AsyncOpenAI(
                api_key=key,
                base_url=base_url,
                organization=organization,
                max_retries=max_retries,
                timeout=timeout,
            )
            if variable != "OPENAI_API_KEY":
                # The SDK also reads OPENAI_ORG_ID / OPENAI_PROJECT_ID and sends them to any server: account ids
                # stay with OpenAI, like its key.
                client.organization = organization
                client.project = None
        else:
            label, _, key_hint = identify(str(client.base_url))
        self._client = client
        self._clients = ClientPerLoop(client, own=own)
        self._label = provider_name or label
        #: genai-prices' id of the server's provider, by its URL (``None``: a server it does not price, a local one).
        self.price_provider = price_provider_for_url(str(client.base_url))
        #: What the files of a user message may be; ``send(..., attach=...)`` refuses others before sending.
        self.attachment_limits = replace(ATTACHMENT_LIMITS, provider=self._label)
        self._key_hint = key_hint
        self._max_tokens_field = (
            "max_completion_tokens" if model.startswith(COMPLETION_TOKENS_PREFIXES) else "max_tokens"
        )

    def __repr__(self) -> str:
        return f"OpenAIChatTransport({self.model!r}, base_url={str(self._client.base_url)!r})"

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
            "messages": self.request_messages(request.messages, max_tool_result_chars=options.max_tool_result_chars),
            "stream": True,
        }
        if options.system_prompt:
            body["messages"].insert(0, {"role": "system", "content": options.system_prompt})
        if self._stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [openai_chat_tool(definition) for definition in request.tools]
            body["tool_choice"] = tool_choice(options.tool_choice)
            if self._parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self._parallel_tool_calls
        if request.output_schema is not None:
            body["response_format"] = openai_chat_response_format(request.output_schema)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body[self._max_tokens_field] = options.max_tokens
        if options.cache and request.conversation_id and self.price_provider in PROMPT_CACHE_KEY_PROVIDERS:
            # The provider routes requests with the same key to the same cache; other servers cache on their own
            # (DeepSeek) or not at all, and some refuse a field they do not know.
            body["prompt_cache_key"] = request.conversation_id
        body.update(options.extra)
        return body

    def request_messages(
        self, messages: Iterable[Message], *, max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    ) -> list[JSON]:
        """The history as Chat Completions ``messages`` (without the system prompt), each tool result cut to
        ``max_tool_result_chars`` (see ``RequestOptions``)."""
        out: list[JSON] = []
        messages = list(history(messages))
        images = request_images(messages) if self.tool_images else None
        for message in messages:
            if message.role is Role.USER:
                out.append({"role": "user", "content": user_content(message, self.attachment_limits)})
            else:
                out.extend(assistant_messages(message, images=images, limit=max_tool_result_chars))
        return out

    # --- stream mapping -----------------------------------------------------------------------------------------------

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's reply to ``request`` as events.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, an in-band error event, data
                that is not JSON); the message says why and never contains the key.
        """
        parser = ChatCompletionsParser(self._label, model=self.model, provider=self.price_provider)
        return sse_stream(lambda: self._send(request), parser, label=self._label, map_error=self._map_error)

    def _send(self, request: ChatRequest) -> Any:
        """Sends the request; the SDK's streamed response, not read yet."""
        body = self.request_body(request)
        # The body goes whole as ``extra_body``, which the SDK merges into the JSON as it is, over its arguments: the
        # messages given as an argument would be walked against the SDK's types (nine tenths of a long request's
        # CPU) to the same JSON, so that argument is empty. The raw response: the SDK sends the request (retries,
        # HTTP errors) and the SSE is read by ``sse_stream``, with no pydantic model per chunk.
        create: Any = self._clients.current().chat.completions.with_streaming_response.create
        return create(model=body["model"], messages=(), stream=body["stream"], extra_body=body)

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, responded: bool) -> ProviderError | None:
        """A clear, key-free error for what the SDK raised (``None``: not the SDK's, raised as it is)."""
        return map_openai_error(
            exc, label=self._label, key_hint=self._key_hint, client=self._client, responded=responded
        )


# --- request mapping --------------------------------------------------------------------------------------------------


def user_content(message: Message, limits: AttachmentLimits) -> str | list[JSON]:
    """A user message's ``content``: its text, or with files or several texts (attachments' text views), parts."""
    parts = user_parts(message)
    if len(parts) <= 1 and not any(isinstance(p, FilePart) for p in parts):
        return message.text
    content: list[JSON] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
            continue
        kind = limits.kind_of(part)
        if kind == "image":
            content.append({"type": "image_url", "image_url": {"url": part.data_url}})
        elif kind == "document":
            content.append(
                {"type": "file", "file": {"filename": part.name or "document.pdf", "file_data": part.data_url}}
            )
        else:
            content.append({"type": "text", "text": file_note(part, limits.provider)})
    return content


def request_images(messages: list[Message]) -> RequestImages:
    return RequestImages(
        messages,
        max_chars=MAX_IMAGE_CHARS,
        max_total_chars=MAX_REQUEST_IMAGE_CHARS,
        max_count=MAX_REQUEST_IMAGES,
    )


def assistant_messages(
    message: Message, *, images: RequestImages | None, limit: int | None
) -> Iterator[dict[str, Any]]:
    """One ``assistant`` message per model response of the reply, each followed by its calls' results.

    A reply spans several responses (text, calls; then text after the results): text or reasoning that follows a
    call begins the next response.
    """
    text: list[str] = []
    calls: list[ToolCallPart] = []
    for part in message.parts:
        match part:
            case ToolCallPart():
                calls.append(part)
            case TextPart() | ReasoningPart():
                if calls:
                    yield from response_messages(text, calls, images=images, limit=limit)
                    text, calls = [], []
                if isinstance(part, TextPart) and part.text:
                    text.append(part.text)
    yield from response_messages(text, calls, images=images, limit=limit)


def response_messages(
    text: list[str], calls: list[ToolCallPart], *, images: RequestImages | None, limit: int | None
) -> Iterator[dict[str, Any]]:
    if not text and not calls:
        return  # a response that only reasoned: nothing Chat Completions can carry
    assistant: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        assistant["tool_calls"] = [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {"name": call.tool_name, "arguments": arguments_json(call)},
            }
            for call in calls
        ]
    yield assistant
    for call in calls:
        sent = len(images.of(call)) if images is not None else 0
        yield {"role": "tool", "tool_call_id": call.tool_call_id, "content": outcome_text(call, limit, images=sent)}
    if images is not None and calls:
        content = result_images(calls, images)
        if content:
            yield {"role": "user", "content": content}


def result_images(calls: list[ToolCallPart], chosen: RequestImages) -> list[JSON]:
    """The images of the calls' results as user content (a ``tool`` message carries text only): each call's images
    after a line that says whose they are."""
    content: list[JSON] = []
    for call in calls:
        images = chosen.of(call)
        if not images:
            continue
        these = "this image" if len(images) == 1 else f"these {len(images)} images"
        content.append(
            {"type": "text", "text": f"The result of {call.tool_name} (call {call.tool_call_id}) includes {these}:"}
        )
        content += [{"type": "image_url", "image_url": {"url": image.data_url}} for image in images]
    return content


def tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.tool_name}}
    return choice.mode
