"""Parsing the Gemini SDK's stream chunks (``GenerateContentResponse``) into ai_widgets events: text, thought summaries
as reasoning, thought signatures as provider data, function calls (whole, or with Vertex AI's streamed partial
arguments), usage and the finish reason."""

from __future__ import annotations

import base64
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
from ai_widgets.transports._errors import ProviderError
from ai_widgets.transports._gemini_arguments import LABEL, ArgumentsWriter

__all__ = ["PROVIDER_ID", "GeminiParser"]

JSON = dict[str, Any]

#: The ``provider`` of the provider data this transport stores, and the only provider data it sends back.
PROVIDER_ID = "gemini"

FINISH_REASONS = {
    "STOP": FinishReason.STOP,
    "MAX_TOKENS": FinishReason.LENGTH,
    **dict.fromkeys(
        (
            "SAFETY",
            "RECITATION",
            "LANGUAGE",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT",
            "IMAGE_RECITATION",
            "MODEL_ARMOR",
        ),
        FinishReason.CONTENT_FILTER,
    ),
}
# Finish reasons that say the reply went wrong: raised with Gemini's own message.
FAILED_REASONS = {
    "MALFORMED_FUNCTION_CALL": "the model wrote a function call that is not valid",
    "UNEXPECTED_TOOL_CALL": "the model called a tool it was not offered",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
    "MISSING_THOUGHT_SIGNATURE": "a function call in the history lacks its thought signature",
    "MALFORMED_RESPONSE": "the response was malformed",
}


def text(value: Any) -> str:
    """An SDK enum's (or a string's) value, ``""`` for none."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str) else ""


class GeminiParser:
    """Turns the SDK's ``GenerateContentResponse`` chunks into ai_widgets events (a
    :class:`~ai_widgets.transports._sse.StreamParser` of SDK chunks: never ``done``, the reply completes at ``end``
    from the last finish reason)."""

    __slots__ = ("_calls", "_finish", "_finish_message", "_model", "_provider", "_streaming", "_usage", "_vertexai")

    def __init__(self, vertexai: bool, *, model: str | None = None, provider: str | None = "google") -> None:
        self._vertexai = vertexai
        self._model = model  # the model asked for, until a chunk's model_version names the one that answers
        self._provider = provider  # genai-prices' id of the provider (Google, on either API), for the price
        self._calls = 0
        self._finish = ""
        self._finish_message = ""
        self._streaming: tuple[str, ArgumentsWriter] | None = None  # the call whose arguments stream, if any
        self._usage: UsageUpdate | None = None

    @property
    def done(self) -> bool:
        """Never: Gemini's stream has no end marker, it ends with the body (the SDK reads it to its end)."""
        return False

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The events for one chunk.

        Raises:
            ProviderError: Gemini blocked the prompt, or streamed arguments that cannot be read.
        """
        events: list[StreamEvent] = []
        feedback = getattr(chunk, "prompt_feedback", None)
        blocked = text(getattr(feedback, "block_reason", None))
        if blocked:
            message = getattr(feedback, "block_reason_message", None) or "no reason given"
            raise ProviderError(f"{LABEL} blocked the prompt ({blocked}): {message}")
        candidates = getattr(chunk, "candidates", None) or []
        if candidates:
            candidate = candidates[0]
            content = getattr(candidate, "content", None)
            for part in getattr(content, "parts", None) or ():
                events += self._part(part)
            reason = text(getattr(candidate, "finish_reason", None))
            if reason:
                self._finish = reason
                self._finish_message = getattr(candidate, "finish_message", None) or ""
        model = getattr(chunk, "model_version", None)
        if model and isinstance(model, str):
            self._model = model
        usage = self._usage_update(getattr(chunk, "usage_metadata", None))
        if usage is not None:
            events.append(usage)
        return events

    def end(self) -> list[StreamEvent]:
        """The events after the last chunk: the response's end, when Gemini said why it ended (else none: the
        session reports a reply that broke off).

        Raises:
            ProviderError: Gemini stopped the reply because it went wrong (a malformed call, a missing signature).
        """
        if not self._finish:
            return []
        events = self._end_streaming()
        if self._finish in FAILED_REASONS:
            said = f": {self._finish_message}" if self._finish_message else ""
            raise ProviderError(f"{LABEL} stopped the reply ({self._finish}): {FAILED_REASONS[self._finish]}{said}")
        reason = FINISH_REASONS.get(self._finish, FinishReason.STOP)
        if reason is FinishReason.STOP and self._calls:
            reason = FinishReason.TOOL_CALLS
        events.append(ResponseCompleted(reason))
        return events

    def _part(self, part: Any) -> list[StreamEvent]:
        signature = part.thought_signature
        data: JSON | None = None
        if signature:
            data = {"thought_signature": base64.b64encode(signature).decode("ascii")}
            if self._vertexai:
                data["vertexai"] = True
        call = part.function_call
        if call is not None and call.name:
            return self._start_call(call, data)
        events: list[StreamEvent] = []
        if call is not None:
            events += self._continue_call(call)
        elif part.text:
            events += self._end_streaming()
            events.append(ReasoningDelta(part.text) if part.thought else TextDelta(part.text))
        if data is not None:
            # A signature on anything but a call's start: stored on a reasoning part (see GeminiTransport).
            events.append(ReasoningDelta("", provider=PROVIDER_ID, provider_data=data))
        return events

    def _start_call(self, call: Any, data: JSON | None) -> list[StreamEvent]:
        events = self._end_streaming()
        self._calls += 1
        if isinstance(call.id, str) and call.id:
            call_id = call.id
            data = {**(data or {}), "id": call.id}
            if self._vertexai:
                data["vertexai"] = True
        else:
            call_id = f"gemini_call_{uuid.uuid4().hex[:20]}"
        provider = PROVIDER_ID if data is not None else None
        if not call.will_continue and not call.partial_args:
            arguments = json.dumps(call.args, ensure_ascii=False) if call.args else "{}"
            events.append(ToolCallStarted(call_id, call.name, arguments, provider=provider, provider_data=data))
            return events
        events.append(ToolCallStarted(call_id, call.name, provider=provider, provider_data=data))
        self._streaming = (call_id, ArgumentsWriter(call.name))
        return events + self._continue_call(call)

    def _continue_call(self, call: Any) -> list[StreamEvent]:
        if self._streaming is None:
            if call.partial_args:
                raise ProviderError(f"{LABEL} streamed function-call arguments for no call")
            return []  # a stray end of a call
        call_id, writer = self._streaming
        events: list[StreamEvent] = []
        text = "".join(writer.feed(argument) for argument in call.partial_args or ())
        if text:
            events.append(ToolCallDelta(call_id, text))
        if not call.will_continue:
            events += self._end_streaming()
        return events

    def _end_streaming(self) -> list[StreamEvent]:
        """Completes the arguments of the call that was streaming, if any."""
        if self._streaming is None:
            return []
        call_id, writer = self._streaming
        self._streaming = None
        return [ToolCallDelta(call_id, writer.close()), ToolCallArgumentsDone(call_id)]

    def _usage_update(self, usage: Any) -> UsageUpdate | None:
        if usage is None:
            return None
        counts = [
            getattr(usage, name, None)
            for name in (
                "prompt_token_count",
                "tool_use_prompt_token_count",
                "candidates_token_count",
                "thoughts_token_count",
                "cached_content_token_count",
            )
        ]
        if all(count is None for count in counts):
            return None  # a chunk with only the traffic type
        prompt, tool_prompt, candidates, thoughts, cached = (c if isinstance(c, int) else 0 for c in counts)
        update = UsageUpdate(
            input_tokens=prompt + tool_prompt,
            output_tokens=candidates + thoughts,
            cached_tokens=cached,
            reasoning_tokens=thoughts,
            model=self._model,
            provider=self._provider,
        )
        if update == self._usage:
            return None
        self._usage = update
        return update
