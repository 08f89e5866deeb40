"""Reading a pydantic-ai model's stream: its part events (``PartStartEvent``, ``PartDeltaEvent``, ``PartEndEvent``)
become this project's stream events, and the finished response's usage and finish reason the last two.

pydantic-ai numbers the parts of a response; each index is one text, thinking or tool-call part, started once and
ended once (a ``PartEndEvent`` comes before the next part starts, and for the last one at the end). Tool-call
arguments arrive as JSON text or, from providers that send them parsed, as dicts merged into the arguments so far:
text streams through as ``ToolCallDelta``; dicts are gathered and sent whole as one delta when the part ends.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import messages as pai
from pydantic_core import to_jsonable_python

from ai_widgets.events import (
    ProviderToolResult,
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
from ai_widgets.outcome import ToolOutcome

__all__ = ["PROVIDER_ID", "PartsReader", "call_data", "thinking_data"]

#: The ``provider`` of the data this transport stores on parts: pydantic-ai's own part fields (signatures, ids,
#: provider-run calls), which only this transport reads back; a native transport's data is never mistaken for it.
PROVIDER_ID = "pydantic_ai"

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
    "tool_call": FinishReason.TOOL_CALLS,
    "error": FinishReason.ERROR,
}

NONE: tuple[StreamEvent, ...] = ()


def thinking_data(part: pai.ThinkingPart) -> dict[str, Any]:
    """What a thinking part needs sent back besides its text (its provider's signature, id and details), JSON."""
    data: dict[str, Any] = {"content": part.content}
    for name in ("id", "signature", "provider_name", "provider_details"):
        value = getattr(part, name)
        if value is not None:
            data[name] = to_jsonable_python(value)
    return data


def call_data(part: pai.ToolCallPart) -> dict[str, Any]:
    """What a local call needs sent back besides its name, arguments and id: its provider's item id and details
    (OpenAI's Responses API pairs a function call's item with the reasoning before it), JSON; empty for none."""
    data: dict[str, Any] = {}
    for name in ("id", "provider_name", "provider_details"):
        value = getattr(part, name)
        if value is not None:
            data[name] = to_jsonable_python(value, fallback=str)
    return data


class Call:
    """A tool call this response is streaming: its id, and the dict arguments gathered when they come as dicts."""

    __slots__ = ("args", "call_id", "done")

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.args: dict[str, Any] | None = None
        self.done = False


class PartsReader:
    """Turns one pydantic-ai response stream into stream events (``ResponseStarted`` is the transport's to send).

    Consecutive thinking parts become one reasoning part in the session, so the thinking parts of a run are kept
    together, each with its signature, in that part's provider data (``{"parts": [...]}``).
    """

    __slots__ = ("_calls", "_local_calls", "_native_calls", "_started", "_thinking", "_thinking_run")

    def __init__(self) -> None:
        self._started: set[int] = set()
        self._calls: dict[int, Call] = {}
        self._local_calls = 0
        # The provider-run calls' parts as they came, by call id: a result's provider data replaces the call's, so
        # it carries both.
        self._native_calls: dict[str, Any] = {}
        self._thinking: dict[int, int] = {}  # index of a thinking part -> its place in the current run
        self._thinking_run: list[dict[str, Any]] = []

    def feed(self, event: object) -> tuple[StreamEvent, ...] | list[StreamEvent]:
        """The events for one of pydantic-ai's stream events (none for those this project has no use for)."""
        if type(event) is pai.PartDeltaEvent:
            delta = event.delta
            if type(delta) is pai.TextPartDelta:  # nearly every event of a reply
                text = delta.content_delta
                return (TextDelta(text),) if text else NONE
            return self._delta(event.index, delta)
        match event:
            case pai.PartStartEvent(index=index, part=part):
                return self._start(index, part)
            case pai.PartEndEvent(index=index, part=part):
                return self._end(index, part)
        return NONE  # FinalResultEvent and the like: the session decides what the reply is

    def finish(self, response: Any, *, provider: str | None) -> list[StreamEvent]:
        """The events after the stream's last: arguments still gathered, the usage, and why the response ended."""
        events: list[StreamEvent] = []
        for call in self._calls.values():
            events += self._close_call(call)
        usage = response.usage
        events.append(
            UsageUpdate(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cache_read_tokens,
                reasoning_tokens=usage.output_reasoning_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                model=response.model_name or None,
                provider=provider,
            )
        )
        reason = FINISH_REASONS.get(response.finish_reason or "")
        if reason is None or (reason is FinishReason.STOP and self._local_calls):
            # Not said (a local or test model), or "stop" with calls to run (some providers say so).
            reason = FinishReason.TOOL_CALLS if self._local_calls else FinishReason.STOP
        events.append(ResponseCompleted(reason))
        return events

    # --- parts --------------------------------------------------------------------------------------------------------

    def _start(self, index: int, part: object) -> list[StreamEvent]:
        if index in self._started:
            return []  # a part started again at its index (restated with what it has so far): already streaming
        self._started.add(index)
        if not isinstance(part, pai.ThinkingPart):
            self._thinking_run = []
        match part:
            case pai.TextPart(content=content):
                return [TextDelta(content)] if content else []
            case pai.ThinkingPart():
                self._thinking[index] = len(self._thinking_run)
                self._thinking_run.append(thinking_data(part))
                return [ReasoningDelta(part.content)] if part.content else []
            case pai.NativeToolCallPart():
                self._calls[index] = call = Call(part.tool_call_id)
                call.done = True
                data = self._native_calls[part.tool_call_id] = to_jsonable_python(part, fallback=str)
                return [
                    ToolCallStarted(
                        part.tool_call_id,
                        part.tool_name,
                        arguments=arguments_text(part.args),
                        provider_executed=True,
                        provider=PROVIDER_ID,
                        provider_data={"call": data},
                    )
                ]
            case pai.NativeToolReturnPart():
                native_call = self._native_calls.get(part.tool_call_id)
                return [] if native_call is None else [provider_result(part, native_call)]
            case pai.ToolCallPart():
                self._calls[index] = call = Call(part.tool_call_id)
                self._local_calls += 1
                data = call_data(part)
                started = ToolCallStarted(
                    part.tool_call_id,
                    part.tool_name,
                    provider=PROVIDER_ID if data else None,
                    provider_data=data or None,
                )
                events: list[StreamEvent] = [started]
                return events + self._add_arguments(call, part.args)
        return []  # files, compaction and speech parts are not part of this project's replies

    def _delta(self, index: int, delta: object) -> tuple[StreamEvent, ...] | list[StreamEvent]:
        match delta:
            case pai.ThinkingPartDelta(content_delta=text):
                return (ReasoningDelta(text),) if text else NONE
            case pai.ToolCallPartDelta(args_delta=args):
                call = self._calls.get(index)
                if call is None or call.done or args is None:
                    return NONE  # a call not started yet (its name still coming): pydantic-ai starts it later
                return self._add_arguments(call, args)
        return NONE

    def _end(self, index: int, part: object) -> list[StreamEvent]:
        if isinstance(part, pai.ThinkingPart):
            place = self._thinking.get(index)
            if place is None or place >= len(self._thinking_run):
                return []
            self._thinking_run[place] = thinking_data(part)  # now with its signature, which came last
            return [ReasoningDelta("", provider=PROVIDER_ID, provider_data={"parts": list(self._thinking_run)})]
        call = self._calls.get(index)
        if call is None:
            return []
        if call.args is not None and isinstance(part, pai.BaseToolCallPart) and isinstance(part.args, dict):
            call.args = part.args  # the arguments as pydantic-ai merged them
        return self._close_call(call)

    @staticmethod
    def _add_arguments(call: Call, args: str | dict[str, Any] | None) -> list[StreamEvent]:
        if isinstance(args, str):
            return [ToolCallDelta(call.call_id, args)] if args else []
        if args:
            call.args = {**(call.args or {}), **args}
        return []

    @staticmethod
    def _close_call(call: Call) -> list[StreamEvent]:
        if call.done:
            return []
        call.done = True
        events: list[StreamEvent] = []
        if call.args is not None:
            events.append(ToolCallDelta(call.call_id, json.dumps(call.args, ensure_ascii=False)))
        events.append(ToolCallArgumentsDone(call.call_id))
        return events


def arguments_text(args: str | dict[str, Any] | None) -> str:
    if isinstance(args, str):
        return args or "{}"
    return json.dumps(args or {}, ensure_ascii=False)


def provider_result(part: pai.NativeToolReturnPart, call_data: Any) -> ProviderToolResult:
    """A provider-run call's result: its content for people, and the part as it came for the provider."""
    value = to_jsonable_python(part.content, fallback=str)
    if part.outcome == "success":
        outcome = ToolOutcome.success(value)
    else:
        outcome = ToolOutcome.failure(
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), retryable=False
        )
    return ProviderToolResult(
        part.tool_call_id,
        outcome,
        provider=PROVIDER_ID,
        provider_data={"call": call_data, "return": to_jsonable_python(part, fallback=str)},
    )
