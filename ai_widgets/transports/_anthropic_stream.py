"""Parsing a Messages API stream (the JSON of each ``data:`` line) into ai_widgets events: text, thinking with its
signature as provider data, tool calls and the calls Anthropic runs itself with their results, usage and the stop
reason."""

from __future__ import annotations

import json
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
    UsageUpdate,
)
from ai_widgets.messages import FinishReason
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports._coerce import as_int, as_object
from ai_widgets.transports._errors import ProviderError, unreadable_payload
from ai_widgets.transports._sse import load_json

__all__ = ["LABEL", "PROVIDER_ID", "MessagesParser", "error_fields"]

JSON = dict[str, Any]

#: The provider's name in messages.
LABEL = "Anthropic"
#: The ``provider`` of the provider data this transport stores, and the only provider data it sends back.
PROVIDER_ID = "anthropic"

FINISH_REASONS = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.CONTENT_FILTER,
    # The server paused a long server-tool turn; the person can ask it to go on (the reply is kept as it is).
    "pause_turn": FinishReason.STOP,
}


class Block:
    """What the parser keeps of one content block while it streams."""

    __slots__ = ("call_id", "data", "input", "kind", "signature", "streamed_input", "thinking")

    def __init__(self, kind: str, call_id: str = "") -> None:
        self.kind = kind
        self.call_id = call_id
        self.streamed_input = False
        self.input: Any = None
        self.thinking: list[str] = []  # a thinking block's text, in pieces (joined only when needed)
        self.signature = ""
        self.data = ""  # a redacted_thinking block's encrypted data

    def thinking_param(self) -> JSON:
        """The block as it goes back to the API."""
        if self.kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "thinking", "thinking": "".join(self.thinking), "signature": self.signature}


#: What the status line says while one of Anthropic's server tools runs.
SERVER_TOOL_STATUS = {
    "web_search": "Searching the web…",
    "web_fetch": "Fetching a page…",
    "code_execution": "Running code…",
    "bash_code_execution": "Running code…",
    "text_editor_code_execution": "Editing a file…",
}


class MessagesParser:
    """Turns the Messages API's stream events (the JSON of each ``data:`` line) into ai_widgets events (a
    :class:`~ai_widgets.transports._sse.StreamParser`: ``done`` at ``message_stop``)."""

    __slots__ = ("_blocks", "_finish", "_model", "_provider", "_reasoning", "_server_calls", "_usage", "done")

    def __init__(self, *, model: str | None = None, provider: str | None = PROVIDER_ID) -> None:
        self._model = model  # the model asked for, until message_start names the one that answers
        self._provider = provider  # genai-prices' id of the provider, for the price
        self.done = False  # ``message_stop`` came: nothing after it is read
        self._blocks: dict[int, Block] = {}
        self._usage: JSON = {}
        self._finish = FinishReason.STOP
        self._server_calls: set[str] = set()
        # The thinking blocks of the reasoning part the session is filling (it joins consecutive reasoning), or None
        # once something else started a part.
        self._reasoning: list[Block] | None = None

    def feed(self, payload: bytes) -> list[StreamEvent]:
        """The events for one stream event's ``data`` (JSON text).

        Raises:
            ProviderError: The data is not JSON, or is an error Anthropic reported.
        """
        try:
            data = load_json(payload)
        except (ValueError, RecursionError) as exc:  # not JSON, or JSON Python will not read
            raise unreadable_payload(LABEL, exc) from None
        # Text deltas are nearly every event of a reply: handled here, the rest by ``feed_event``.
        if type(data) is dict and data.get("type") == "content_block_delta":
            delta = data.get("delta")
            if type(delta) is dict and delta.get("type") == "text_delta":
                text = delta.get("text")
                if not text:
                    return []
                self._reasoning = None
                return [TextDelta(text)]
        return self.feed_event(data)

    def end(self) -> list[StreamEvent]:
        """Nothing: the reply completes with its ``message_stop`` event."""
        return []

    def feed_event(self, data: Any) -> list[StreamEvent]:
        """The events for one stream event (its ``data``, read)."""
        if not isinstance(data, dict):
            return []
        match data.get("type"):
            case "content_block_delta":
                return self._delta(data)
            case "content_block_start":
                return self._start(data)
            case "content_block_stop":
                return self._stop(data)
            case "message_start":
                started = as_object(data.get("message"))
                model = started.get("model")
                if model and isinstance(model, str):
                    self._model = model
                return [self._usage_update(started.get("usage"))]
            case "message_delta":
                reason = as_object(data.get("delta")).get("stop_reason")
                if isinstance(reason, str) and reason:
                    self._finish = FINISH_REASONS.get(reason, FinishReason.STOP)
                return [self._usage_update(data.get("usage"))]
            case "message_stop":  # the terminal event: nothing after it is read
                self.done = True
                return [ResponseCompleted(self._finish)]
            case "error":
                error_type, message = error_fields(data)
                raise ProviderError(f"{LABEL} reported an error mid-reply ({error_type or 'error'}): {message}")
            case _:
                return []  # ping, and events added after this was written

    def _delta(self, data: JSON) -> list[StreamEvent]:
        delta = as_object(data.get("delta"))
        match delta.get("type"):
            case "text_delta":
                text = delta.get("text")
                if not text:
                    return []
                self._reasoning = None
                return [TextDelta(text)]
            case "input_json_delta":
                piece = delta.get("partial_json")
                if not piece:
                    return []  # every call's input starts with "", a call without arguments has only that
                block = self._call_block(data)
                block.streamed_input = True
                return [ToolCallDelta(block.call_id, piece)]
            case "thinking_delta":
                text = delta.get("thinking") or ""
                if not text:
                    return []
                current = self._blocks.get(block_index(data))
                if current is not None:
                    current.thinking.append(text)
                return [ReasoningDelta(text)]
            case "signature_delta":
                current = self._blocks.get(block_index(data))
                if current is None or current.kind != "thinking":
                    return []
                current.signature = delta.get("signature") or ""
                return [self._reasoning_data()]
            case _:
                return []  # citations_delta (not kept), and deltas added after this was written

    def _start(self, data: JSON) -> list[StreamEvent]:
        index = block_index(data)
        block = as_object(data.get("content_block"))
        kind = block.get("type")
        match kind:
            case "text":
                self._blocks[index] = Block("text")
                text = block.get("text")
                if not text:
                    return []
                self._reasoning = None
                return [TextDelta(text)]
            case "tool_use" | "server_tool_use":
                call_id, name = block.get("id"), block.get("name")
                if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name):
                    raise ProviderError(f"{LABEL} started a {kind} block without an id or name: {block!r:.200}")
                started = self._blocks[index] = Block(kind, call_id)
                started.input = block.get("input")
                self._reasoning = None
                server = kind == "server_tool_use"
                started_call = ToolCallStarted(call_id, name, provider_executed=server)
                if not server:
                    return [started_call]
                self._server_calls.add(call_id)
                # The status line says what Anthropic is doing until the result (or the next text) comes.
                return [started_call, StatusUpdate(SERVER_TOOL_STATUS.get(name, f"Running {name}…"))]
            case "thinking" | "redacted_thinking":
                return self._start_thinking(index, kind, block)
            case str() if kind.endswith("_tool_result"):
                self._blocks[index] = Block("result")
                call_id = block.get("tool_use_id")
                if call_id not in self._server_calls:
                    return []  # a result for no call of this response: nothing to attach it to
                data = {"result_block": block}
                return [ProviderToolResult(call_id, server_outcome(block), provider=PROVIDER_ID, provider_data=data)]
            case _:
                self._blocks[index] = Block("other")
                return []

    def _start_thinking(self, index: int, kind: str, block: JSON) -> list[StreamEvent]:
        started = self._blocks[index] = Block(kind)
        started.data = block.get("data") or ""
        started.signature = block.get("signature") or ""
        text = block.get("thinking") or ""
        if self._reasoning is None:
            self._reasoning = []
        self._reasoning.append(started)
        events: list[StreamEvent] = []
        if text:
            started.thinking.append(text)
            events.append(ReasoningDelta(text))
        if kind == "redacted_thinking" or started.signature or len(self._reasoning) > 1:
            events.append(self._reasoning_data())
        return events

    def _stop(self, data: JSON) -> list[StreamEvent]:
        block = self._blocks.get(block_index(data))
        if block is None:
            return []
        if block.kind in ("tool_use", "server_tool_use"):
            if block.streamed_input:
                return [ToolCallArgumentsDone(block.call_id)]
            # No input streamed: the start's input (``{}`` for a call without arguments) is the whole of it.
            whole = json.dumps(block.input) if isinstance(block.input, dict) and block.input else "{}"
            return [ToolCallDelta(block.call_id, whole), ToolCallArgumentsDone(block.call_id)]
        if block.kind == "thinking" and self._reasoning is not None and len(self._reasoning) > 1:
            return [self._reasoning_data()]  # the joined part's blocks, now complete
        return []

    def _call_block(self, data: JSON) -> Block:
        block = self._blocks.get(block_index(data))
        if block is None or not block.call_id:
            raise ProviderError(
                f"{LABEL} sent tool input for content block {data.get('index')!r}, which is not a tool call"
            )
        return block

    def _reasoning_data(self) -> ReasoningDelta:
        """The provider data of the reasoning part being filled (it replaces what the part had)."""
        blocks = self._reasoning or []
        if len(blocks) == 1 and blocks[0].kind == "thinking":
            data: JSON = {"signature": blocks[0].signature}
        else:
            data = {"blocks": [b.thinking_param() for b in blocks]}
        return ReasoningDelta("", provider=PROVIDER_ID, provider_data=data)

    def _usage_update(self, usage: Any) -> UsageUpdate:
        if isinstance(usage, dict):
            # message_delta carries running totals; fields it leaves out (or sends as null) keep their value.
            self._usage.update((k, v) for k, v in usage.items() if v is not None)
        u = self._usage
        cached = as_int(u.get("cache_read_input_tokens"))
        written = as_int(u.get("cache_creation_input_tokens"))
        details = u.get("output_tokens_details")
        return UsageUpdate(
            input_tokens=as_int(u.get("input_tokens")) + written + cached,
            output_tokens=as_int(u.get("output_tokens")),
            cached_tokens=cached,
            reasoning_tokens=as_int(details.get("thinking_tokens")) if isinstance(details, dict) else 0,
            cache_write_tokens=written,
            model=self._model,
            provider=self._provider,
        )


def block_index(data: JSON) -> int:
    """A content block event's ``index``; -1 (no block) when it is missing or not an integer."""
    index = data.get("index")
    return index if type(index) is int else -1


def server_outcome(block: JSON) -> ToolOutcome:
    """The outcome of a call Anthropic ran, for people: the result's content without its opaque parts (the block
    itself goes back to the API from the call's provider data), and the URLs it found as citations."""
    content = block.get("content")
    if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
        code = content.get("error_code") or content.get("type")
        return ToolOutcome.failure(f"{block.get('type')} failed: {code}", retryable=False)
    items = content if isinstance(content, list) else [content]
    citations = [
        {"url": item["url"], "title": item.get("title")}
        for item in items
        if isinstance(item, dict) and isinstance(item.get("url"), str)
    ]
    return ToolOutcome.success(readable(content), citations=citations)


def readable(value: Any) -> Any:
    """``value`` without the encrypted fields people cannot read (``encrypted_content``, ``encrypted_index``)."""
    if isinstance(value, list):
        return [readable(item) for item in value]
    if isinstance(value, dict):
        return {key: readable(item) for key, item in value.items() if not key.startswith("encrypted_")}
    return value


def error_fields(body: Any) -> tuple[str | None, str | None]:
    """``error.type`` and ``error.message`` of an Anthropic error body, where present."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, None
    error_type, message = error.get("type"), error.get("message")
    return (error_type if isinstance(error_type, str) else None, message if isinstance(message, str) else None)
