"""OpenAI's Chat Completions API (``POST /chat/completions``, streamed), and every server that speaks it (Ollama,
vLLM, llama.cpp, LM Studio, OpenRouter, Groq, DeepSeek, Qwen/DashScope), through the official ``openai`` SDK."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ai_widgets.events import (
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.options import ToolChoice
from ai_widgets.transports._base import ChatRequest
from ai_widgets.transports._common import (
    NO_KEY,
    ProviderError,
    arguments_json,
    check_connection_arguments,
    history,
    import_sdk,
    missing_key,
    outcome_text,
)
from ai_widgets.transports._openai_errors import map_openai_error

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

__all__ = ["OpenAIChatTransport"]

JSON = dict[str, Any]

# Hosts we recognise: the name used in error messages, and the environment variable that holds their key.
# A known non-OpenAI host never gets OPENAI_API_KEY: that key belongs to OpenAI alone.
_KNOWN_HOSTS: tuple[tuple[str, str, str | None], ...] = (
    ("api.openai.com", "OpenAI", "OPENAI_API_KEY"),
    ("api.groq.com", "Groq", "GROQ_API_KEY"),
    ("api.deepseek.com", "DeepSeek", "DEEPSEEK_API_KEY"),
    ("openrouter.ai", "OpenRouter", "OPENROUTER_API_KEY"),
    ("dashscope", "Qwen (DashScope)", "DASHSCOPE_API_KEY"),
    ("ollama.com", "Ollama Cloud", "OLLAMA_API_KEY"),
    (":11434", "Ollama", None),
)

# Models that take ``max_completion_tokens`` and reject ``max_tokens`` on OpenAI.
_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")

_FINISH_REASONS = {
    "stop": FinishReason.STOP,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
    "error": FinishReason.ERROR,
}


def _identify(base_url: str | None) -> tuple[str, str | None, str]:
    """The provider's name, the environment variable of its key, and where to look for the key (for messages)."""
    if not base_url:
        return "OpenAI", "OPENAI_API_KEY", "OPENAI_API_KEY or api_key="
    parts = urlsplit(base_url)
    host = f"{parts.hostname or ''}:{parts.port}" if parts.port else parts.hostname or ""
    for marker, label, variable in _KNOWN_HOSTS:
        if marker in host:
            return label, variable, f"{variable} or api_key=" if variable else "api_key="
    # An unknown server given as base_url= never gets OPENAI_API_KEY: that key is OpenAI's, not a third party's.
    return f"the server at {base_url}", None, "api_key="


class OpenAIChatTransport:
    """A model behind the Chat Completions API (``POST /chat/completions``, streamed).

    Args:
        model: The model name, e.g. ``"gpt-4o"``, ``"llama3.2"`` on Ollama, ``"qwen3-max"`` on DashScope.
        client: An ``openai.AsyncOpenAI`` you configured (its own key, base URL, organization, retries and timeout
            are used).
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

    Raises:
        ValueError: ``model`` is empty, or ``client`` was given together with ``base_url``, ``api_key`` or
            ``organization``.
        ProviderError: No key for OpenAI's own API was given or found. A ``base_url`` (or ``OPENAI_BASE_URL``)
            without a key gets a placeholder instead: local servers need none, and a remote one answers 401 with a
            message naming the key's variable.

    Mapping and provider quirks:

    - Request: the system prompt as the first ``system`` message; user text; an assistant reply as one
      ``assistant`` message per model response (``content``: its text, ``None`` when it only called tools;
      ``tool_calls``), each followed by one ``tool`` message per call, in the calls' order, with the text the model
      is told (failed, declined and cancelled calls included). Calls a provider ran (another API's server tools)
      are sent the same way, as a function call with the text of its result: Chat Completions has no server tools.
    - Provider data: none is sent back, whichever provider stored it. Reasoning is not sent back at all: Chat
      Completions has no field for it (DeepSeek even rejects ``reasoning_content`` in requests), and nothing this
      transport streams carries provider data, so a conversation moves to and from any other transport as it is.
    - Tool choice: ``auto``, ``required``, ``{"type": "function", "function": {"name": ...}}``; with no tools
      (``ToolChoice.NONE``) neither ``tools`` nor ``tool_choice`` is sent.
    - ``max_tokens`` is sent as ``max_completion_tokens`` for OpenAI's reasoning models (names starting with o1, o3,
      o4, gpt-5), which reject ``max_tokens``; every other model gets ``max_tokens``, which compatible servers
      expect. ``options.extra`` is merged into the JSON body last, so it can override any field.
    - Stream: ``delta.refusal`` is shown as text (the finish reason stays as sent); ``delta.reasoning_content``
      (DeepSeek, Qwen, vLLM) or ``delta.reasoning`` (Groq, Ollama, OpenRouter) as reasoning; tool calls are keyed by
      ``index``, keep their first non-empty id (Qwen repeats ``"id": ""``), and a different id at a used index
      starts a new call (servers that put every call at index 0); a call without id gets a generated one; a call
      whose arguments never arrive gets ``{}``. Usage from the ``choices: []`` chunk, Groq's ``x_groq.usage`` or
      DeepSeek's ``prompt_cache_hit_tokens``. The reply completes after the usage chunk (or the stream's end), so
      its usage is inside it. A stream that ends without a finish reason is reported as broken off.
    - Errors: an in-band ``{"error": ...}`` event (Groq's ``tool_use_failed``, OpenRouter's mid-stream errors) and
      HTTP failures raise :class:`ProviderError` with the provider's message, never the key (the wording is shared
      with the Responses transport); no tool call of a failed reply is reported as complete.
    """

    def __init__(
        self,
        model: str,
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
    ) -> None:
        if not model:
            raise ValueError("a model name is needed, e.g. OpenAIChatTransport('gpt-4o')")
        check_connection_arguments(client, base_url=base_url, api_key=api_key, organization=organization)
        self.model = model
        self._stream_usage = stream_usage
        self._parallel_tool_calls = parallel_tool_calls
        if client is None:
            from_environment = not base_url and bool(os.environ.get("OPENAI_BASE_URL"))
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
            label, variable, key_hint = _identify(base_url)
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
        else:
            label, _, key_hint = _identify(str(client.base_url))
        self._client = client
        self._label = provider_name or label
        self._key_hint = key_hint
        self._max_tokens_field = (
            "max_completion_tokens" if model.startswith(_COMPLETION_TOKENS_PREFIXES) else "max_tokens"
        )

    def __repr__(self) -> str:
        return f"OpenAIChatTransport({self.model!r}, base_url={str(self._client.base_url)!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client the requests go through."""
        return self._client

    # --- request mapping ----------------------------------------------------------------------------------------------

    def request_body(self, request: ChatRequest) -> JSON:
        """The JSON body of the request for ``request``, as sent (``options.extra`` merged last)."""
        options = request.options
        body: JSON = {"model": self.model, "messages": self.request_messages(request.messages), "stream": True}
        if options.system_prompt:
            body["messages"].insert(0, {"role": "system", "content": options.system_prompt})
        if self._stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [{"type": "function", "function": tool.model_schema()} for tool in request.tools]
            body["tool_choice"] = _tool_choice(options.tool_choice)
            if self._parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self._parallel_tool_calls
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body[self._max_tokens_field] = options.max_tokens
        body.update(options.extra)
        return body

    def request_messages(self, messages: Iterable[Message]) -> list[JSON]:
        """The history as Chat Completions ``messages`` (without the system prompt)."""
        out: list[JSON] = []
        for message in history(messages):
            if message.role is Role.USER:
                out.append({"role": "user", "content": message.text})
            else:
                out.extend(_assistant_messages(message))
        return out

    # --- stream mapping -----------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's reply to ``request`` as events.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, an in-band error event, data
                that is not JSON); the message says why and never contains the key.
        """
        body = self.request_body(request)
        # Only what the SDK requires goes as arguments; the rest as ``extra_body``, merged into the JSON as it is.
        required = {key: body.pop(key) for key in ("model", "messages", "stream")}
        create: Any = self._client.chat.completions.create  # typed overloads do not take a built dict
        parser = _ChunkParser(self._label)
        responded = False  # once the response began, nothing is retried
        try:
            response = await create(**required, extra_body=body)
            responded = True
            yield ResponseStarted()
            async with response:
                async for chunk in response:
                    for event in parser.feed(chunk):
                        yield event
            for event in parser.end():
                yield event
        except Exception as exc:
            error = self._map_error(exc, responded=responded)
            if error is None:
                raise
            raise error from None

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, responded: bool) -> ProviderError | None:
        """A clear, key-free error for what the SDK raised (``None``: not the SDK's, raised as it is)."""
        return map_openai_error(
            exc, label=self._label, key_hint=self._key_hint, client=self._client, responded=responded
        )


# --- request mapping --------------------------------------------------------------------------------------------------


def _assistant_messages(message: Message) -> Iterator[dict[str, Any]]:
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
                    yield from _response_messages(text, calls)
                    text, calls = [], []
                if isinstance(part, TextPart) and part.text:
                    text.append(part.text)
    yield from _response_messages(text, calls)


def _response_messages(text: list[str], calls: list[ToolCallPart]) -> Iterator[dict[str, Any]]:
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
        yield {"role": "tool", "tool_call_id": call.tool_call_id, "content": outcome_text(call)}


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.tool_name}}
    return choice.mode


# --- stream mapping ---------------------------------------------------------------------------------------------------


class _Call:
    """A tool call being streamed."""

    __slots__ = ("has_arguments", "id", "name", "pending", "started")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.started = False
        self.has_arguments = False
        self.pending: list[str] = []  # arguments that came before the name


class _ChunkParser:
    """Turns ``ChatCompletionChunk``s into stream events; one per request."""

    __slots__ = ("_by_index", "_calls", "_completed", "_finish", "_label")

    def __init__(self, label: str) -> None:
        self._label = label
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish: FinishReason | None = None
        self._completed = False

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        """The events of one chunk."""
        events: list[StreamEvent] = []
        if self._completed:
            return events  # anything after the usage chunk is not part of this reply
        choices = chunk.choices
        if choices:
            for choice in choices:
                if choice.index:  # n > 1 is never requested; the first choice is the reply
                    continue
                if choice.delta is not None:
                    self._delta(choice.delta, events)
                if choice.finish_reason:
                    self._finish_with(choice.finish_reason, events)
        usage = chunk.usage
        if usage is None and chunk.model_extra:
            usage = (chunk.model_extra.get("x_groq") or {}).get("usage")  # Groq's place for it
        if usage is not None:
            events.append(_usage(usage))
            if not choices and self._finish is not None:
                events.append(ResponseCompleted(self._finish))
                self._completed = True
        return events

    def end(self) -> list[StreamEvent]:
        """The events at the end of the stream: completion, if the reply finished."""
        if self._completed or self._finish is None:
            return []  # without a finish reason the reply broke off; the session says so
        self._completed = True
        return [ResponseCompleted(self._finish)]

    def _delta(self, delta: ChoiceDelta, events: list[StreamEvent]) -> None:
        extra = delta.model_extra
        if extra:
            reasoning = extra.get("reasoning_content") or extra.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                events.append(ReasoningDelta(reasoning))
        content: Any = delta.content  # a str, but chunks are not validated
        if content:
            if isinstance(content, str):
                events.append(TextDelta(content))
            else:
                _content_parts(content, events)
        if delta.refusal:
            events.append(TextDelta(delta.refusal))  # the person sees why the model declined
        if delta.tool_calls:
            for tool_call in delta.tool_calls:
                self._tool_call(tool_call, events)

    def _tool_call(self, tool_call: ChoiceDeltaToolCall, events: list[StreamEvent]) -> None:
        if self._finish is not None:
            return
        call = self._slot(tool_call)
        function = tool_call.function
        if function is not None and function.name and not call.name:
            call.name = function.name
        arguments = function.arguments if function is not None else None
        if arguments:
            call.has_arguments = True
            if call.started:
                events.append(ToolCallDelta(call.id or "", arguments))
            else:
                call.pending.append(arguments)
        if not call.started and call.name:
            self._start(call, events)

    def _slot(self, tool_call: ChoiceDeltaToolCall) -> _Call:
        """The call this delta continues, or a new one."""
        index: int | None = tool_call.index  # typed int, but chunks are not validated
        new_id = tool_call.id or None  # later chunks may repeat "id": "" (Qwen): that continues the call
        if index is None:  # not per spec, but seen: continue the last call unless a new id says otherwise
            index = len(self._calls) - 1 if self._calls and new_id in (None, self._calls[-1].id) else len(self._calls)
        call = self._by_index.get(index)
        if call is None or (new_id is not None and call.id is not None and new_id != call.id):
            call = _Call()  # a different id at a used index: a server that numbers every call 0
            self._calls.append(call)
            self._by_index[index] = call
        if new_id is not None and call.id is None and not call.started:
            call.id = new_id
        return call

    def _start(self, call: _Call, events: list[StreamEvent]) -> None:
        if call.id is None:
            call.id = f"call_{uuid.uuid4().hex[:24]}"  # generated once, so every event of the call agrees
        call.started = True
        events.append(ToolCallStarted(call.id, call.name or ""))
        if call.pending:
            events.append(ToolCallDelta(call.id, "".join(call.pending)))
            call.pending.clear()

    def _finish_with(self, reason: str, events: list[StreamEvent]) -> None:
        if self._finish is None:
            for call in self._calls:
                if not call.started:
                    if not call.name:
                        raise ProviderError(f"{self._label} sent a tool call without a function name.")
                    self._start(call, events)
                if not call.has_arguments:
                    events.append(ToolCallDelta(call.id or "", "{}"))  # a call without arguments takes none
                events.append(ToolCallArgumentsDone(call.id or ""))
        known = _FINISH_REASONS.get(reason)
        if known is None:  # a server's own word ("eos", "end_turn", ...)
            known = FinishReason.TOOL_CALLS if self._calls else FinishReason.STOP
        self._finish = known


def _content_parts(content: Any, events: list[StreamEvent]) -> None:
    """Content sent as a list of typed parts (Mistral's reasoning models) rather than a string."""
    for part in content if isinstance(content, list) else ():
        kind = _field(part, "type")
        if kind == "text" and isinstance(text := _field(part, "text"), str):
            events.append(TextDelta(text))
        elif kind == "thinking":
            thinking = _field(part, "thinking")
            for piece in thinking if isinstance(thinking, list) else [{"text": thinking}]:
                if isinstance(text := _field(piece, "text"), str) and text:
                    events.append(ReasoningDelta(text))


def _usage(usage: Any) -> UsageUpdate:
    """A ``CompletionUsage`` (or Groq's dict of the same fields) as an event."""
    prompt_details = _field(usage, "prompt_tokens_details")
    completion_details = _field(usage, "completion_tokens_details")
    cached = _field(prompt_details, "cached_tokens") or _field(usage, "prompt_cache_hit_tokens")  # DeepSeek
    return UsageUpdate(
        input_tokens=_field(usage, "prompt_tokens") or 0,
        output_tokens=_field(usage, "completion_tokens") or 0,
        cached_tokens=cached or 0,
        reasoning_tokens=_field(completion_details, "reasoning_tokens") or 0,
    )


def _field(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


# --- error mapping ----------------------------------------------------------------------------------------------------
# The OpenAI SDK's errors become ProviderErrors in ``_openai_errors``, shared with the Responses transport.
