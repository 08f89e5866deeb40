"""Parsing a Chat Completions stream (the JSON of each ``data:`` line, as OpenAI and the servers that speak its API
send it) into ai_widgets events: text, reasoning, tool calls keyed by index, usage and the finish reason."""

from __future__ import annotations

import json
import uuid
from typing import Any

from ai_widgets.events import (
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason
from ai_widgets.transports._coerce import as_int, get_field
from ai_widgets.transports._errors import ProviderError, unreadable_payload
from ai_widgets.transports._openai_errors import stream_error
from ai_widgets.transports._sse import load_json

__all__ = ["ChatCompletionsParser"]

JSON = dict[str, Any]

FINISH_REASONS = {
    "stop": FinishReason.STOP,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
    "error": FinishReason.ERROR,
}


class Call:
    """A tool call being streamed."""

    __slots__ = ("has_arguments", "id", "name", "pending", "started")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.started = False
        self.has_arguments = False
        self.pending: list[str] = []  # arguments that came before the name


class ChatCompletionsParser:
    """Turns the stream's chunks (the JSON of each ``data:`` line) into stream events; one per request (a
    :class:`~ai_widgets.transports._sse.StreamParser`: ``done`` at ``data: [DONE]``, and the reply completes at
    ``end`` when no usage chunk completed it)."""

    __slots__ = ("_by_index", "_calls", "_completed", "_finish", "_held", "_label", "_model", "_provider", "done")

    def __init__(self, label: str, *, model: str | None = None, provider: str | None = None) -> None:
        self._label = label
        self._model = model  # the model asked for, until a chunk names the one that answers
        self._provider = provider  # genai-prices' id of the server's provider, for the price
        self._calls: list[Call] = []
        self._by_index: dict[int, Call] = {}
        self._finish: FinishReason | None = None
        self._completed = False
        self._held = ""  # whitespace after a call began: text only if more text follows
        self.done = False  # ``[DONE]`` came: nothing after it is read

    def feed(self, payload: bytes) -> list[StreamEvent]:
        """The events of one ``data:`` payload.

        Raises:
            ProviderError: The payload is an error the provider reported, or cannot be read.
        """
        try:
            chunk = load_json(payload)
        except (ValueError, RecursionError) as exc:
            if payload.strip().startswith(b"[DONE]"):  # the end, as OpenAI marks it
                self.done = True
                return []
            raise unreadable_payload(self._label, exc) from None
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):  # an in-band error (Groq's tool_use_failed, OpenRouter's mid-stream errors)
            raise stream_error(self._label, chunk["error"])
        events: list[StreamEvent] = []
        if self._completed:
            return events  # anything after the usage chunk is not part of this reply
        model = chunk.get("model")
        if model and isinstance(model, str):
            self._model = model
        choices = chunk.get("choices")
        if choices and isinstance(choices, list):
            for choice in choices:
                if not isinstance(choice, dict) or choice.get("index"):  # n > 1 is never requested
                    continue
                delta = choice.get("delta")
                if delta and isinstance(delta, dict):
                    self._delta(delta, events)
                reason = choice.get("finish_reason")
                if reason and isinstance(reason, str):
                    self._finish_with(reason, events)
        usage = chunk.get("usage")
        if usage is None:
            groq = chunk.get("x_groq")  # Groq's place for it
            usage = groq.get("usage") if isinstance(groq, dict) else None
        if isinstance(usage, dict):
            events.append(usage_event(usage, self._model, self._provider))
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

    def _delta(self, delta: JSON, events: list[StreamEvent]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")  # DeepSeek, vLLM / Groq, Ollama
        if reasoning and isinstance(reasoning, str):
            events.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if content:
            if isinstance(content, str):
                self._text(content, events)
            else:
                content_parts(content, events)
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            events.append(TextDelta(refusal))  # the person sees why the model declined
        tool_calls = delta.get("tool_calls")
        if tool_calls and isinstance(tool_calls, list):
            for tool_call in tool_calls:
                if isinstance(tool_call, dict):
                    self._tool_call(tool_call, events)

    def _text(self, content: str, events: list[StreamEvent]) -> None:
        if self._calls and not (self._held + content).strip():
            # vLLM's hermes parser streams the "\n" between two <tool_call> blocks as content: whitespace after a
            # call began is text only if more text follows, so it never splits one response in two.
            self._held += content
            return
        if self._held:
            content, self._held = self._held + content, ""
        events.append(TextDelta(content))

    def _tool_call(self, tool_call: JSON, events: list[StreamEvent]) -> None:
        if self._finish is not None:
            return
        call = self._slot(tool_call)
        function = tool_call.get("function")
        if not isinstance(function, dict):
            function = {}
        name = function.get("name")
        if name and isinstance(name, str) and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # the whole arguments as an object, not JSON text (not per spec)
            arguments = json.dumps(arguments, ensure_ascii=False) if arguments else None
        if arguments and isinstance(arguments, str):
            call.has_arguments = True
            if call.started:
                events.append(ToolCallDelta(call.id or "", arguments))
            else:
                call.pending.append(arguments)
        if not call.started and call.name:
            self._start(call, events)

    def _slot(self, tool_call: JSON) -> Call:
        """The call this delta continues, or a new one."""
        index = tool_call.get("index")
        raw_id = tool_call.get("id")
        new_id = raw_id if raw_id and isinstance(raw_id, str) else None  # Qwen repeats "id": "" to continue a call
        if not isinstance(index, int):  # not per spec, but seen: continue the last call unless a new id says otherwise
            index = len(self._calls) - 1 if self._calls and new_id in (None, self._calls[-1].id) else len(self._calls)
        call = self._by_index.get(index)
        if call is None or (new_id is not None and call.id is not None and new_id != call.id):
            call = Call()  # a different id at a used index: a server that numbers every call 0
            self._calls.append(call)
            self._by_index[index] = call
        if new_id is not None and call.id is None and not call.started:
            call.id = new_id
        return call

    def _start(self, call: Call, events: list[StreamEvent]) -> None:
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
        known = FINISH_REASONS.get(reason)
        if known is None:  # a server's own word ("eos", "end_turn", ...)
            known = FinishReason.TOOL_CALLS if self._calls else FinishReason.STOP
        self._finish = known


def content_parts(content: Any, events: list[StreamEvent]) -> None:
    """Content sent as a list of typed parts (Mistral's reasoning models) rather than a string."""
    for part in content if isinstance(content, list) else ():
        kind = get_field(part, "type")
        if kind == "text" and isinstance(text := get_field(part, "text"), str):
            events.append(TextDelta(text))
        elif kind == "thinking":
            thinking = get_field(part, "thinking")
            for piece in thinking if isinstance(thinking, list) else [{"text": thinking}]:
                if isinstance(text := get_field(piece, "text"), str) and text:
                    events.append(ReasoningDelta(text))


def usage_event(usage: JSON, model: str | None, provider: str | None) -> UsageUpdate:
    """A chunk's ``usage`` (or Groq's ``x_groq.usage``) as an event."""
    cached = get_field(usage.get("prompt_tokens_details"), "cached_tokens") or usage.get("prompt_cache_hit_tokens")
    return UsageUpdate(
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        cached_tokens=as_int(cached),  # DeepSeek's prompt_cache_hit_tokens
        reasoning_tokens=as_int(get_field(usage.get("completion_tokens_details"), "reasoning_tokens")),
        model=model,
        provider=provider,
    )
