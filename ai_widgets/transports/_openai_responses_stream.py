"""Parsing a Responses API stream (the JSON of each ``data:`` line) into ai_widgets events: text and refusals,
reasoning with its encrypted items as provider data, function calls, the calls OpenAI runs itself (web search, file
search, code interpreter, image generation, MCP) with their progress and results, usage and the finish reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports._coerce import as_int, as_str, get_field
from ai_widgets.transports._errors import ProviderError, unreadable_payload
from ai_widgets.transports._openai_errors import in_band_error, stream_error
from ai_widgets.transports._sse import load_json

__all__ = ["LABEL", "PROVIDER_ID", "ResponsesParser"]

JSON = dict[str, Any]

#: The provider's name in messages.
LABEL = "OpenAI"
#: The ``provider`` of the provider data this transport stores, and the only provider data it sends back.
PROVIDER_ID = "openai"

INCOMPLETE_REASONS = {"max_output_tokens": FinishReason.LENGTH, "content_filter": FinishReason.CONTENT_FILTER}


def dump(value: Any) -> Any:
    """An item's field as people see it, as the SDK's typed path showed it: an object without its ``None`` fields,
    at every depth (``model_dump(exclude_none=True)``); a list as it came."""
    return without_none(value) if isinstance(value, dict) else value


def without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_none(item) for item in value]
    return value


def without(data: Any, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys} if isinstance(data, dict) else {}


def web_search_arguments(item: JSON) -> dict[str, Any]:
    return without(dump(item.get("action")), "sources")


def web_search_outcome(item: JSON) -> ToolOutcome:
    action = dump(item.get("action")) or {}
    sources = (action.get("sources") or []) if isinstance(action, dict) else []
    urls = [s["url"] for s in sources if isinstance(s, dict) and isinstance(s.get("url"), str)]
    return ToolOutcome.success(action, citations=urls)


def file_search_arguments(item: JSON) -> dict[str, Any]:
    queries = item.get("queries")
    return {"queries": list(queries)} if queries and isinstance(queries, list) else {}


def file_search_outcome(item: JSON) -> ToolOutcome:
    return ToolOutcome.success({"results": dump(item.get("results")) or []})


def code_arguments(item: JSON) -> dict[str, Any]:
    code = item.get("code")
    return {"code": code} if code else {}


def code_outcome(item: JSON) -> ToolOutcome:
    return ToolOutcome.success({"outputs": dump(item.get("outputs")) or []})


def image_arguments(item: JSON) -> dict[str, Any]:
    return {}


def image_outcome(item: JSON) -> ToolOutcome:
    # The image goes to the card as an attachment, not into the value: a base64 image is no text for anyone.
    result = as_str(item.get("result"))
    image_format = as_str(item.get("output_format")) or "png"
    attachments = [{"mime_type": f"image/{image_format}", "data": result}] if result else []
    prompt = item.get("revised_prompt")
    return ToolOutcome.success(
        {"revised_prompt": prompt} if prompt else None, text="Image generated.", attachments=attachments
    )


def mcp_arguments(item: JSON) -> dict[str, Any]:
    try:
        parsed = json.loads(as_str(item.get("arguments")) or "")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def mcp_outcome(item: JSON) -> ToolOutcome:
    error = item.get("error")
    if error:
        return ToolOutcome.failure(str(error), retryable=False)
    return ToolOutcome.success(item.get("output"))


@dataclass(frozen=True)
class BuiltinTool:
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
BUILTIN_TOOLS = {
    "web_search_call": BuiltinTool("web_search", "searching…", web_search_arguments, web_search_outcome),
    "file_search_call": BuiltinTool("file_search", "searching files…", file_search_arguments, file_search_outcome),
    "code_interpreter_call": BuiltinTool("code_interpreter", "running code…", code_arguments, code_outcome),
    "image_generation_call": BuiltinTool(
        "image_generation", "generating the image…", image_arguments, image_outcome, takes_arguments=False
    ),
    "mcp_call": BuiltinTool("mcp", "calling the MCP server…", mcp_arguments, mcp_outcome),
}

# ``response.<item type>.<phase>`` events that mean a provider-run call is working.
PROGRESS_PHASES = frozenset({"in_progress", "searching", "interpreting", "generating"})


def builtin_failed(item: JSON) -> ToolOutcome | None:
    if item.get("status") == "failed":
        return ToolOutcome.failure(f"The provider's {item.get('type')} failed.", retryable=False)
    return None


@dataclass
class Call:
    """A function call being streamed: its call id and how many argument characters were sent."""

    call_id: str
    sent: int = 0
    completed: bool = False


class ResponsesParser:
    """Turns the Responses stream's events (the JSON of each ``data:`` line) into ai_widgets events, one response
    at a time (a :class:`~ai_widgets.transports._sse.StreamParser`: ``done`` at ``response.completed`` or
    ``response.incomplete``, or a ``data: [DONE]`` some servers send).

    Reasoning items become the provider data of their ReasoningPart: ``provider="openai"``,
    ``provider_data={"items": [{"id": ..., "encrypted_content": ...}, ...]}`` (every consecutive reasoning item
    that landed on the part, in order).
    """

    def __init__(self, *, model: str | None = None, provider: str | None = "openai") -> None:
        self.model = model  # the model asked for; the completed response names the one that answered
        self.provider = provider  # genai-prices' id of the provider, for the price
        self.calls: dict[str, Call] = {}  # output item id -> function call
        self.item_ids: dict[int, str] = {}  # output index -> output item id, for events without an item id
        self.builtin: dict[str, bool] = {}  # provider-run item id -> whether its arguments are complete
        self.local_calls = False
        # The reasoning items whose part is the reply's last part (consecutive items land on one part).
        self.reasoning_items: list[dict[str, str]] = []
        self.reasoning_open = False
        self.reasoning_text = False
        self.done = False  # the response completed (or a server's ``[DONE]`` came): nothing after it is read

    def feed(self, payload: bytes) -> list[StreamEvent]:
        """The events of one ``data:`` payload.

        Raises:
            ProviderError: The payload is an error the provider reported, a stream that makes no sense, or data
                that cannot be read.
        """
        try:
            event = load_json(payload)
        except (ValueError, RecursionError) as exc:
            if payload.strip().startswith(b"[DONE]"):  # not sent by OpenAI's Responses API, but by some servers
                self.done = True
                return []
            raise unreadable_payload(LABEL, exc) from None
        if not isinstance(event, dict):
            return []
        if event.get("error"):  # an error event, {"type": "error", "error": {...}}
            raise stream_error(LABEL, event["error"])
        return self.feed_event(event)

    def end(self) -> list[StreamEvent]:
        """Nothing: the response completes with its ``response.completed`` (or ``response.incomplete``) event."""
        return []

    def feed_event(self, event: JSON) -> list[StreamEvent]:
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
                return self._reasoning("\n\n") if event.get("summary_index") and self.reasoning_text else []
            case "response.output_item.added":
                item = event.get("item")
                return self._item_added(item, event.get("output_index")) if isinstance(item, dict) else []
            case "response.output_item.done":
                item = event.get("item")
                return self._item_done(item, event.get("output_index")) if isinstance(item, dict) else []
            case "response.completed" | "response.incomplete":  # the terminal events: nothing after them is read
                self.done = True
                response = event.get("response")
                return self._finished(response if isinstance(response, dict) else {})
            case "response.failed":
                error = get_field(event.get("response"), "error")
                raise ProviderError(in_band_error(LABEL, get_field(error, "code"), get_field(error, "message")))
            case "error":  # the flat form: {"type": "error", "code": ..., "message": ...}
                raise ProviderError(in_band_error(LABEL, as_str(event.get("code")), as_str(event.get("message"))))
            case str() as other:
                return self._progress(other, event)
            case _:
                return []

    # -- text and reasoning --

    def _text(self, delta: Any) -> list[StreamEvent]:
        if not delta or not isinstance(delta, str):
            return []
        self.reasoning_open = False
        return [TextDelta(delta)]

    def _reasoning(self, delta: Any) -> list[StreamEvent]:
        if not delta or not isinstance(delta, str):
            return []
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        self.reasoning_text = True
        return [ReasoningDelta(delta)]

    def _reasoning_done(self, item: JSON) -> list[StreamEvent]:
        if not self.reasoning_open:
            self.reasoning_open, self.reasoning_items, self.reasoning_text = True, [], False
        entry = {"id": as_str(item.get("id")) or ""}
        encrypted = as_str(item.get("encrypted_content"))
        if encrypted:
            entry["encrypted_content"] = encrypted
        self.reasoning_items.append(entry)
        data = {"items": [dict(e) for e in self.reasoning_items]}
        return [ReasoningDelta("", provider=PROVIDER_ID, provider_data=data)]

    # -- items --

    def _item_added(self, item: JSON, index: Any) -> list[StreamEvent]:
        kind = item.get("type")
        if kind == "function_call":
            return self._start_call(item, index)
        if kind == "reasoning":
            if self.reasoning_open and self.reasoning_text:
                return [ReasoningDelta("\n\n")]  # a further reasoning item continues the same part
            # A reasoning model may think for a while before its summary (if any) or its answer: say so.
            return [StatusUpdate("Reasoning…")]
        builtin = BUILTIN_TOOLS.get(kind) if isinstance(kind, str) else None
        item_id = as_str(item.get("id"))
        if builtin is None or item_id is None:
            return []
        self.reasoning_open = False
        arguments = builtin.arguments(item)
        complete = bool(arguments) or not builtin.takes_arguments
        self.builtin[item_id] = complete
        # An MCP call names the server's tool; the other built-in tools are named by their kind.
        name = (as_str(item.get("name")) or builtin.name) if kind == "mcp_call" else builtin.name
        text = json.dumps(arguments, ensure_ascii=False) if complete else None
        # The status line says what the provider is doing until its result (or the next text) comes.
        status = StatusUpdate(builtin.progress[:1].upper() + builtin.progress[1:])
        return [ToolCallStarted(item_id, name, text, provider_executed=True), status]

    def _start_call(self, item: JSON, index: Any) -> list[StreamEvent]:
        call_id, name = as_str(item.get("call_id")) or as_str(item.get("id")), as_str(item.get("name"))
        if call_id is None or name is None:
            raise ProviderError("OpenAI sent a function call without a call id or a name.")
        key = as_str(item.get("id")) or call_id
        call = Call(call_id)
        self.calls[key] = call
        if isinstance(index, int):
            self.item_ids[index] = key
        self.local_calls = True
        self.reasoning_open = False
        events: list[StreamEvent] = [ToolCallStarted(call_id, name)]
        arguments = as_str(item.get("arguments"))
        if arguments:
            call.sent = len(arguments)
            events.append(ToolCallDelta(call_id, arguments))
        return events

    def _arguments(self, event: JSON) -> list[StreamEvent]:
        item_id = event.get("item_id")
        if not isinstance(item_id, str) or not item_id:
            index = event.get("output_index")
            item_id = self.item_ids.get(index) if isinstance(index, int) else None
        call = self.calls.get(item_id) if item_id is not None else None
        if call is None:
            raise ProviderError(f"OpenAI sent arguments for a function call it never started ({item_id!r}).")
        delta = event.get("delta")
        if not delta or not isinstance(delta, str):
            return []
        call.sent += len(delta)
        return [ToolCallDelta(call.call_id, delta)]

    def _item_done(self, item: JSON, index: Any) -> list[StreamEvent]:
        kind = item.get("type")
        if kind == "function_call":
            return self._finish_call(item, index)
        if kind == "reasoning":
            return self._reasoning_done(item)
        builtin = BUILTIN_TOOLS.get(kind) if isinstance(kind, str) else None
        item_id = as_str(item.get("id"))
        if builtin is None or item_id is None:
            return []
        events: list[StreamEvent] = []
        if item_id not in self.builtin:  # done without added: start it now
            events += self._item_added(item, index)
        if not self.builtin[item_id]:
            # The arguments (say, the search query) are often only known once the call is done.
            arguments = builtin.arguments(item)
            events.append(ToolCallDelta(item_id, json.dumps(arguments, ensure_ascii=False)))
            events.append(ToolCallArgumentsDone(item_id))
            self.builtin[item_id] = True
        events.append(ProviderToolResult(item_id, builtin_failed(item) or builtin.outcome(item)))
        return events

    def _finish_call(self, item: JSON, index: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        call = self.calls.get(as_str(item.get("id")) or as_str(item.get("call_id")) or "")
        if call is None:  # done without added (seen from compatible servers): the whole call at once
            events += self._start_call(item, index)
            call = self.calls[as_str(item.get("id")) or as_str(item.get("call_id")) or ""]
        if call.completed:
            return []
        arguments = as_str(item.get("arguments")) or ""
        if len(arguments) > call.sent:  # arguments that never came as deltas
            events.append(ToolCallDelta(call.call_id, arguments[call.sent :]))
            call.sent = len(arguments)
        call.completed = True
        events.append(ToolCallArgumentsDone(call.call_id))
        return events

    def _progress(self, kind: str, event: JSON) -> list[StreamEvent]:
        # ``response.web_search_call.searching`` and the like; anything else is an event we do not show.
        parts = kind.split(".")
        if len(parts) != 3 or parts[2] not in PROGRESS_PHASES:
            return []
        builtin = BUILTIN_TOOLS.get(parts[1])
        item_id = event.get("item_id")
        if builtin is None or not isinstance(item_id, str) or not self.builtin.get(item_id):
            return []  # not started, or its arguments are still to come (a running call's are fixed)
        return [ToolProgressUpdate(item_id, message=builtin.progress)]

    # -- the end --

    def _finished(self, response: JSON) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        usage = response.get("usage")
        model = response.get("model")
        if isinstance(usage, dict):
            events.append(
                UsageUpdate(
                    input_tokens=as_int(usage.get("input_tokens")),
                    output_tokens=as_int(usage.get("output_tokens")),
                    cached_tokens=as_int(get_field(usage.get("input_tokens_details"), "cached_tokens")),
                    reasoning_tokens=as_int(get_field(usage.get("output_tokens_details"), "reasoning_tokens")),
                    model=model if model and isinstance(model, str) else self.model,
                    provider=self.provider,
                )
            )
        events.append(ResponseCompleted(self._finish_reason(response)))
        return events

    def _finish_reason(self, response: JSON) -> FinishReason:
        if response.get("status") == "incomplete":
            reason = get_field(response.get("incomplete_details"), "reason")
            return INCOMPLETE_REASONS.get(reason if isinstance(reason, str) else "", FinishReason.LENGTH)
        return FinishReason.TOOL_CALLS if self.local_calls else FinishReason.STOP
