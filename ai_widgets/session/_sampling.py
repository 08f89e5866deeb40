"""A tool's sampling request run on the session's own transport, once the person allowed it: the request's messages
alone (not the conversation), no tools, its system prompt, token limit and temperature; its stop sequences cut the
answer here, as not every provider takes them."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Literal

from ai_widgets.events import ResponseCompleted, TextDelta, UsageUpdate
from ai_widgets.messages import FilePart, FinishReason, Message, Part, Role, TextPart
from ai_widgets.messages._questions import SamplingReply, SamplingRequest
from ai_widgets.options import RequestOptions, ToolChoice
from ai_widgets.transports._base import ChatRequest, Transport, profile_of

__all__ = ["run_sampling"]


async def run_sampling(transport: Transport, options: RequestOptions, request: SamplingRequest) -> SamplingReply:
    """The model's answer to ``request``.

    Raises:
        Exception: Whatever the transport raised (the asking tool is told it).
    """
    messages = [Message(Role(m.role), parts(m.text, m.images)) for m in request.messages]
    sent = ChatRequest(
        messages=messages,
        tools=[],
        options=dataclasses.replace(
            options,
            tool_choice=ToolChoice.NONE,
            system_prompt=request.system_prompt,
            max_tokens=request.max_tokens,
            temperature=request.temperature if request.temperature is not None else options.temperature,
            cache=False,
        ),
    )
    pieces: list[str] = []
    model = profile_of(transport).model  # the model the stream names, when it names one, wins
    stop: Literal["endTurn", "maxTokens", "stopSequence"] = "endTurn"
    stream = transport.stream(sent)
    try:
        async for event in stream:
            match event:
                case TextDelta(text=text):
                    pieces.append(text)
                case UsageUpdate(model=str() as reported):
                    model = reported
                case ResponseCompleted(finish_reason=FinishReason.LENGTH):
                    stop = "maxTokens"
                case _:
                    pass
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
    text = "".join(pieces)
    cut = [text.find(s) for s in request.stop_sequences if s and s in text]
    if cut:
        text, stop = text[: min(cut)], "stopSequence"
    named = model or "unknown"
    return SamplingReply(text=text, model=named, stop_reason=stop)


def parts(text: str, images: tuple[tuple[str, str], ...]) -> list[Part]:
    parts: list[Part] = [TextPart(text)] if text else []
    parts.extend(FilePart(media_type=mime, data=data) for mime, data in images)
    return parts or [TextPart("")]
