"""A transport for OpenAI's Responses API (``client.responses.create(stream=True)``) through the official SDK."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.tools import ToolOutcome
from ai_widgets.transports._base import ChatRequest
from ai_widgets.transports._common import (
    ProviderError,
    arguments_json,
    describe_status,
    history,
    import_sdk,
    outcome_text,
    redact,
)

if TYPE_CHECKING:
    import openai
else:
    openai = import_sdk("openai", "openai")

__all__ = ["OpenAIResponsesTransport"]

_PROVIDER = "OpenAI"
_KEY_HINT = "OPENAI_API_KEY or api_key="
_ENCRYPTED_REASONING = "reasoning.encrypted_content"

# Models that reason by default (o-series, GPT-5 but its non-reasoning chat variant, later GPTs, gpt-oss): for
# these the encrypted reasoning is requested even without ``reasoning=``, so it can be sent back with store=False.
_REASONING_MODELS = re.compile(r"^(o\d|gpt-5(?!-chat)|gpt-[6-9]|gpt-\d\d|gpt-oss)")


_INCOMPLETE_REASONS = {"max_output_tokens": FinishReason.LENGTH, "content_filter": FinishReason.CONTENT_FILTER}


# --- provider-run (built-in) tools ---------------------------------------------------------------------------------


def _dump(value: Any) -> Any:
    """A JSON-ready copy of an SDK model (or of what the SDK left as plain data)."""
    if value is None:
        return None
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, warnings=False)
    return value


def _without(data: Any, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys} if isinstance(data, dict) else {}


def _web_search_arguments(item: Any) -> dict[str, Any]:
    return _without(_dump(getattr(item, "action", None)), "sources")


def _web_search_outcome(item: Any) -> ToolOutcome:
    action = _dump(getattr(item, "action", None)) or {}
    sources = (action.get("sources") or []) if isinstance(action, dict) else []
    urls = [s["url"] for s in sources if isinstance(s, dict) and isinstance(s.get("url"), str)]
    return ToolOutcome.success(action, citations=urls)


def _file_search_arguments(item: Any) -> dict[str, Any]:
    queries = getattr(item, "queries", None)
    return {"queries": list(queries)} if queries else {}


def _file_search_outcome(item: Any) -> ToolOutcome:
    return ToolOutcome.success({"results": _dump(getattr(item, "results", None)) or []})


def _code_arguments(item: Any) -> dict[str, Any]:
    code = getattr(item, "code", None)
    return {"code": code} if code else {}


def _code_outcome(item: Any) -> ToolOutcome:
    return ToolOutcome.success({"outputs": _dump(getattr(item, "outputs", None)) or []})


def _image_arguments(item: Any) -> dict[str, Any]:
    return {}


def _image_outcome(item: Any) -> ToolOutcome:
    # The image goes to the card as an attachment, not into the value: a base64 image is no text for anyone.
    result = getattr(item, "result", None)
    image_format = getattr(item, "output_format", None) or "png"
    attachments = [{"mime_type": f"image/{image_format}", "data": result}] if result else []
    prompt = getattr(item, "revised_prompt", None)
    return ToolOutcome.success(
        {"revised_prompt": prompt} if prompt else None, text="Image generated.", attachments=attachments
    )


def _mcp_arguments(item: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(getattr(item, "arguments", None) or "")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _mcp_outcome(item: Any) -> ToolOutcome:
    error = getattr(item, "error", None)
    if error:
        return ToolOutcome.failure(str(error), retryable=False)
    return ToolOutcome.success(getattr(item, "output", None))


@dataclass(frozen=True)
class _BuiltinTool:
    """How one kind of provider-run call shows: its tool name, arguments, progress text and result."""

    name: str
    progress: str
    arguments: Callable[[Any], dict[str, Any]]
    outcome: Callable[[Any], ToolOutcome]


# Output items of tools OpenAI runs itself. Tools that need the client to act (computer use, shell, apply_patch,
# custom tools) are not among them and are not supported: their items are ignored like any unknown item.
_BUILTIN_TOOLS = {
    "web_search_call": _BuiltinTool("web_search", "searching…", _web_search_arguments, _web_search_outcome),
    "file_search_call": _BuiltinTool("file_search", "searching files…", _file_search_arguments, _file_search_outcome),
    "code_interpreter_call": _BuiltinTool("code_interpreter", "running code…", _code_arguments, _code_outcome),
    "image_generation_call": _BuiltinTool(
        "image_generation", "generating the image…", _image_arguments, _image_outcome
    ),
    "mcp_call": _BuiltinTool("mcp", "calling the MCP server…", _mcp_arguments, _mcp_outcome),
}

# ``response.<item type>.<phase>`` events that mean a provider-run call is working.
_PROGRESS_PHASES = frozenset({"in_progress", "searching", "interpreting", "generating"})


def _builtin_failed(item: Any) -> ToolOutcome | None:
    if getattr(item, "status", None) == "failed":
        return ToolOutcome.failure(f"The provider's {item.type} failed.", retryable=False)
    return None


# --- the stream ------------------------------------------------------------------------------------------------


@dataclass
class _Call:
    """A function call being streamed: its call id and how many argument characters were sent."""

    call_id: str
    sent: int = 0
    completed: bool = False


class _StreamMapper:
    """Turns the SDK's Responses stream events into ai_widgets events, one response at a time.

    Reasoning items become the ``signature`` of a ReasoningPart: ``{"id": ..., "encrypted_content": ...}`` as JSON
    (a JSON list of such objects when consecutive reasoning items share one part).
    """

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}  # output item id -> function call
        self.item_ids: dict[int, str] = {}  # output index -> output item id, for events without an item id
        self.builtin: dict[str, bool] = {}  # provider-run item id -> whether its arguments were sent
        self.local_calls = False
        # The reasoning items whose part is the reply's last part (consecutive items land on one part).
        self.reasoning_items: list[dict[str, str]] = []
        self.reasoning_open = False
        self.reasoning_text = False

    def map(self, event: Any) -> tuple[StreamEvent, ...]:
        """The ai_widgets events for one SDK event (none for events that change nothing we show)."""
        match event.type:
            case "response.output_text.delta" | "response.refusal.delta":
                return self._text(event.delta)
            case "response.function_call_arguments.delta":
                return self._arguments(event)
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                return self._reasoning(event.delta)
            case "response.reasoning_summary_part.added":
                # Summary parts are paragraphs: keep them apart in the one reasoning part.
                return self._reasoning("\n\n") if getattr(event, "summary_index", 0) and self.reasoning_text else ()
            case "response.output_item.added":
                return self._item_added(event.item, event.output_index)
            case "response.output_item.done":
                return self._item_done(event.item, event.output_index)
            case "response.created":
                return (ResponseStarted(),)
            case "response.completed" | "response.incomplete":
                return self._finished(event.response)
            case "response.failed":
                error = getattr(event.response, "error", None)
                raise ProviderError(_in_band_error(getattr(error, "code", None), getattr(error, "message", None)))
            case "error":
                raise ProviderError(_in_band_error(getattr(event, "code", None), getattr(event, "message", None)))
            case other:
                return self._progress(other, event)

    # -- text and reasoning --

    def _text(self, delta: str) -> tuple[StreamEvent, ...]:
        if not delta:
            return ()
        self.reasoning_open = False
        return (TextDelta(delta),)

    def _reasoning(self, delta: str) -> tuple[StreamEvent, ...]:
        if not delta:
            return ()
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        self.reasoning_text = True
        return (ReasoningDelta(delta),)

    def _reasoning_done(self, item: Any) -> tuple[StreamEvent, ...]:
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        entry = {"id": item.id}
        encrypted = getattr(item, "encrypted_content", None)
        if encrypted:
            entry["encrypted_content"] = encrypted
        self.reasoning_items.append(entry)
        items = self.reasoning_items
        signature = json.dumps(items[0] if len(items) == 1 else items, separators=(",", ":"))
        return (ReasoningDelta("", signature=signature),)

    # -- items --

    def _item_added(self, item: Any, index: int) -> tuple[StreamEvent, ...]:
        kind = item.type
        if kind == "function_call":
            return self._start_call(item, index)
        if kind == "reasoning" and self.reasoning_open and self.reasoning_text:
            return (ReasoningDelta("\n\n"),)  # a further reasoning item continues the same part
        builtin = _BUILTIN_TOOLS.get(kind)
        if builtin is None:
            return ()
        self.reasoning_open = False
        arguments = builtin.arguments(item)
        self.builtin[item.id] = bool(arguments)
        # An MCP call names the server's tool; the other built-in tools are named by their kind.
        name = (getattr(item, "name", None) or builtin.name) if kind == "mcp_call" else builtin.name
        text = json.dumps(arguments, ensure_ascii=False) if arguments else None
        return (ToolCallStarted(item.id, name, text, provider_executed=True),)

    def _start_call(self, item: Any, index: int) -> tuple[StreamEvent, ...]:
        call_id = getattr(item, "call_id", None) or item.id
        if not call_id or not getattr(item, "name", None):
            raise ProviderError("OpenAI sent a function call without a call id or a name.")
        call = _Call(call_id)
        self.calls[item.id] = call
        self.item_ids[index] = item.id
        self.local_calls = True
        self.reasoning_open = False
        events: list[StreamEvent] = [ToolCallStarted(call_id, item.name)]
        arguments = getattr(item, "arguments", None)
        if arguments:
            call.sent = len(arguments)
            events.append(ToolCallDelta(call_id, arguments))
        return tuple(events)

    def _arguments(self, event: Any) -> tuple[StreamEvent, ...]:
        item_id = getattr(event, "item_id", None) or self.item_ids.get(getattr(event, "output_index", -1))
        call = self.calls.get(item_id) if item_id is not None else None
        if call is None:
            raise ProviderError(f"OpenAI sent arguments for a function call it never started ({item_id!r}).")
        delta = event.delta
        if not delta:
            return ()
        call.sent += len(delta)
        return (ToolCallDelta(call.call_id, delta),)

    def _item_done(self, item: Any, index: int) -> tuple[StreamEvent, ...]:
        kind = item.type
        if kind == "function_call":
            return self._finish_call(item, index)
        if kind == "reasoning":
            return self._reasoning_done(item)
        builtin = _BUILTIN_TOOLS.get(kind)
        if builtin is None:
            return ()
        events: list[StreamEvent] = []
        if item.id not in self.builtin:  # done without added: start it now
            events += self._item_added(item, index)
        elif not self.builtin[item.id]:
            arguments = builtin.arguments(item)
            if arguments:  # the arguments (say, the search query) are often only known once the call is done
                events.append(ToolCallDelta(item.id, json.dumps(arguments, ensure_ascii=False)))
        self.builtin[item.id] = True
        events.append(ProviderToolResult(item.id, _builtin_failed(item) or builtin.outcome(item)))
        return tuple(events)

    def _finish_call(self, item: Any, index: int) -> tuple[StreamEvent, ...]:
        events: list[StreamEvent] = []
        call = self.calls.get(item.id)
        if call is None:  # done without added (seen from compatible servers): the whole call at once
            events += self._start_call(item, index)
            call = self.calls[item.id]
        if call.completed:
            return ()
        arguments = getattr(item, "arguments", None) or ""
        if len(arguments) > call.sent:  # arguments that never came as deltas
            events.append(ToolCallDelta(call.call_id, arguments[call.sent :]))
            call.sent = len(arguments)
        call.completed = True
        events.append(ToolCallArgumentsDone(call.call_id))
        return tuple(events)

    def _progress(self, kind: str, event: Any) -> tuple[StreamEvent, ...]:
        # ``response.web_search_call.searching`` and the like; anything else is an event we do not show.
        parts = kind.split(".")
        if len(parts) != 3 or parts[2] not in _PROGRESS_PHASES:
            return ()
        builtin = _BUILTIN_TOOLS.get(parts[1])
        item_id = getattr(event, "item_id", None)
        if builtin is None or item_id not in self.builtin:
            return ()
        return (ToolProgressUpdate(item_id, message=builtin.progress),)

    # -- the end --

    def _finished(self, response: Any) -> tuple[StreamEvent, ...]:
        events: list[StreamEvent] = []
        usage = getattr(response, "usage", None)
        if usage is not None:
            cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None)
            reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", None)
            events.append(
                UsageUpdate(
                    input_tokens=usage.input_tokens or 0,
                    output_tokens=usage.output_tokens or 0,
                    cached_tokens=cached or 0,
                    reasoning_tokens=reasoning or 0,
                )
            )
        events.append(ResponseCompleted(self._finish_reason(response)))
        return tuple(events)

    def _finish_reason(self, response: Any) -> FinishReason:
        if getattr(response, "status", None) == "incomplete":
            reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
            return _INCOMPLETE_REASONS.get(reason or "", FinishReason.LENGTH)
        return FinishReason.TOOL_CALLS if self.local_calls else FinishReason.STOP


def _in_band_error(code: str | None, message: str | None) -> str:
    text = message or "the response failed without saying why"
    return redact(f"{_PROVIDER}: {code}: {text}" if code else f"{_PROVIDER}: {text}")


# --- the request -----------------------------------------------------------------------------------------------


def _reasoning_entries(signature: str | None) -> list[dict[str, Any]]:
    """The reasoning items recorded on a part's signature (none for a signature that is not ours)."""
    if not signature:
        return []
    try:
        data = json.loads(signature)
    except ValueError:
        return []  # another provider's signature: nothing the Responses API can take
    entries = data if isinstance(data, list) else [data]
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]


class OpenAIResponsesTransport:
    """Talks to a model through OpenAI's Responses API (``client.responses.create(stream=True, ...)``).

    What is sent:
        - The system prompt as ``instructions``; user messages as ``{"role": "user", "content": text}``; the
          assistant's text as ``{"role": "assistant", "content": text}`` (the SDK's simple message form).
        - Every local tool call as a ``function_call`` item (``call_id``, ``name``, ``arguments``) followed by its
          ``function_call_output`` (what the model is told about the outcome, for failed, declined and cancelled
          calls too), in the order of the reply's parts.
        - Reasoning: each reasoning item the model produced is kept on a ``ReasoningPart.signature`` as the JSON
          text ``{"id": "rs_...", "encrypted_content": "..."}`` (a JSON list of such objects when consecutive
          reasoning items landed on one part), and sent back before the items it preceded as
          ``{"type": "reasoning", "id", "encrypted_content", "summary"}``. With ``store=False`` (the default, so
          nothing is kept at OpenAI) an item is sent back only with its encrypted content, which is asked for with
          ``include=["reasoning.encrypted_content"]`` whenever reasoning is used (``reasoning=`` given, or a model
          that reasons by default: o-series, GPT-5 and later, gpt-oss). With ``store=True`` the id alone suffices.
          Reasoning parts from other providers (a signature that is not this JSON) are left out.
        - Provider-run tool calls (``web_search_call`` and the like) are not sent back: they are output items the
          API produced, and the model's text already carries what it took from them. Their results are shown
          locally (``ProviderToolResult``) and kept in the transcript.
        - Tools: ``{"type": "function", "name", "description", "parameters", "strict": False}`` for each
          definition, plus ``builtin_tools`` as given. Tool choice: ``auto`` -> ``"auto"``, ``required`` ->
          ``"required"``, a specific tool -> ``{"type": "function", "name": ...}``; ``none`` sends no tools (the
          built-in ones neither) and no tool choice, as does a request with no tools at all.
        - ``temperature``, ``max_output_tokens`` (from ``max_tokens``); ``RequestOptions.extra`` is merged into the
          request body last, so it can set or override any field.

    What is streamed back: text and refusals as text, reasoning summaries and reasoning text as reasoning, function
    calls with their arguments delta by delta (several per response), provider-run tools as calls with progress
    and a result (web_search, file_search, code_interpreter, image_generation, mcp; tools that need the client to
    act, such as computer use or shell, are not supported), usage (input, output, cached and reasoning tokens),
    and the finish reason (``incomplete`` for ``max_output_tokens`` is ``length``, for ``content_filter`` is
    ``content_filter``). An in-band ``error`` event or ``response.failed`` raises :class:`ProviderError` with the
    provider's code and message. Message ``phase`` (commentary / final answer) is not kept.

    HTTP failures: the SDK retries 429, 5xx, timeouts and connection errors ``max_retries`` times with backoff,
    before any byte of the stream (never mid-stream); then a :class:`ProviderError` says what happened, without
    the key.

    Args:
        model: The model, e.g. ``"gpt-5-mini"``.
        client: An ``openai.AsyncOpenAI`` you configured (its own key, base URL, retries and timeout are used).
        base_url: The API's base URL, for a client this transport makes.
        api_key: The key, for a client this transport makes (otherwise ``OPENAI_API_KEY``).
        max_retries: Retries of a failed request before its stream starts, for a client this transport makes.
        timeout: Seconds to wait for the server (also between streamed bytes), for a client this transport makes.
        store: Let OpenAI keep the responses (``store=True``); off by default, so reasoning travels encrypted.
        reasoning: The ``reasoning`` request field, e.g. ``{"effort": "low", "summary": "auto"}``.
        builtin_tools: Tools OpenAI runs itself, sent as given, e.g. ``{"type": "web_search"}``.
        include_encrypted_reasoning: Ask for encrypted reasoning when reasoning is used, to send it back.

    Raises:
        ValueError: ``client`` is given together with ``base_url`` or ``api_key``, or ``model`` is empty.
    """

    def __init__(
        self,
        model: str,
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
    ) -> None:
        if not model:
            raise ValueError("a model name is needed, e.g. OpenAIResponsesTransport('gpt-5-mini')")
        if client is not None and (base_url is not None or api_key is not None):
            raise ValueError("pass either client= or base_url=/api_key=, not both: a client brings its own")
        self.model = model
        self.store = store
        self.reasoning = dict(reasoning) if reasoning is not None else None
        self.builtin_tools = [dict(tool) for tool in builtin_tools]
        self.include_encrypted_reasoning = include_encrypted_reasoning
        self._timeout = timeout
        self._setup_error: str | None = None
        self._client: openai.AsyncOpenAI | None = client
        if client is None:
            try:
                self._client = openai.AsyncOpenAI(
                    api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
                )
            except openai.OpenAIError as exc:
                # Reported on the first request, where the session shows it, rather than failing the cell.
                self._setup_error = redact(f"{_PROVIDER} client could not be created: {exc}", api_key)
                if "api_key" in str(exc):
                    self._setup_error = f"{_PROVIDER} needs an API key: set OPENAI_API_KEY or pass api_key=."

    def __repr__(self) -> str:
        return f"OpenAIResponsesTransport({self.model!r}, store={self.store!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client requests go through.

        Raises:
            ProviderError: No client could be made (say, no API key).
        """
        if self._client is None:
            raise ProviderError(self._setup_error or f"{_PROVIDER} client is missing")
        return self._client

    # --- the request ---

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments for ``responses.create`` (without ``stream`` and ``extra_body``)."""
        options = request.options
        body: dict[str, Any] = {"model": self.model, "input": self.input_items(request.messages), "store": self.store}
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
        return body

    def _tools(self, request: ChatRequest) -> list[dict[str, Any]]:
        if request.options.tool_choice.mode == "none":
            return []
        tools: list[dict[str, Any]] = [
            {"type": "function", **definition.model_schema(), "strict": False} for definition in request.tools
        ]
        return tools + self.builtin_tools

    def input_items(self, messages: Iterable[Message]) -> list[dict[str, Any]]:
        """The conversation as Responses input items."""
        items: list[dict[str, Any]] = []
        for message in history(messages):
            if message.role is Role.USER:
                items.append({"role": "user", "content": message.text})
            else:
                items.extend(self._assistant_items(message))
        return items

    def _assistant_items(self, message: Message) -> Iterator[dict[str, Any]]:
        for part in message.parts:
            match part:
                case TextPart():
                    if part.text:
                        yield {"role": "assistant", "content": part.text}
                case ReasoningPart():
                    yield from self._reasoning_items(part)
                case ToolCallPart():
                    if part.provider_executed:
                        continue  # an output item of the API's own: not re-sent (see the class docstring)
                    yield {
                        "type": "function_call",
                        "call_id": part.tool_call_id,
                        "name": part.tool_name,
                        "arguments": arguments_json(part),
                    }
                    yield {"type": "function_call_output", "call_id": part.tool_call_id, "output": outcome_text(part)}

    def _reasoning_items(self, part: ReasoningPart) -> Iterator[dict[str, Any]]:
        summary = [{"type": "summary_text", "text": part.text}] if part.text else []
        for entry in _reasoning_entries(part.signature):
            encrypted = entry.get("encrypted_content")
            if not encrypted and not self.store:
                continue  # without storage the API cannot find the item by its id
            item: dict[str, Any] = {"type": "reasoning", "id": entry["id"], "summary": summary}
            if encrypted:
                item["encrypted_content"] = encrypted
            summary = []  # the part's text goes with its first item
            yield item

    # --- the stream ---

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, an in-band error, malformed data).
        """
        client = self.client
        body = self.request_body(request)
        extra = dict(request.options.extra) or None
        mapper = _StreamMapper()
        try:
            response_stream: Any = await client.responses.create(**body, stream=True, extra_body=extra)
            async with response_stream:
                async for event in response_stream:
                    for mapped in mapper.map(event):
                        yield mapped
        except openai.APIError as exc:
            raise self._error(exc) from None
        except json.JSONDecodeError as exc:
            raise ProviderError(f"{_PROVIDER} sent a stream event that is not JSON ({exc.msg}).") from None

    def _error(self, exc: openai.APIError) -> ProviderError:
        key = self._client.api_key if self._client is not None else None
        match exc:
            case openai.APITimeoutError():
                timeout = getattr(self._client, "timeout", self._timeout)
                seconds = getattr(timeout, "read", timeout)
                text = f"{_PROVIDER} did not answer within {seconds} s (timeout): try again, or raise timeout=."
            case openai.APIConnectionError():
                cause = exc.__cause__
                detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
                base = self._client.base_url if self._client is not None else "?"
                text = f"Could not connect to {_PROVIDER} at {base}{detail}; check the network and base_url."
            case openai.APIStatusError():
                text = describe_status(_PROVIDER, exc.status_code, _detail(exc), key_hint=_KEY_HINT)
            case _:  # an error the API reported inside the stream
                text = _in_band_error(exc.code or exc.type, _detail(exc))
        return ProviderError(redact(text, key))  # redact also covers the masked forms OpenAI echoes


def _tool_choice(request: ChatRequest) -> Any:
    choice = request.options.tool_choice
    if choice.mode == "tool":
        return {"type": "function", "name": choice.tool_name}
    return choice.mode


def _detail(exc: openai.APIError) -> str:
    """The provider's own message in an SDK error (its body's ``message``), or the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return exc.message
