"""A server asking to run the chat's model (MCP *sampling*): the request as a
:class:`~ai_widgets.messages._questions.SamplingRequest`, put to the person in the calling card, run on the session's
transport once allowed, and answered to the server (a decline as the error code the specification gives a
rejection). Text and images only, and no tools: the capability is declared without ``sampling.tools``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ai_widgets._safe import redact, safe_text
from ai_widgets.mcp._asking import Callers, person_time
from ai_widgets.mcp._related import related_task
from ai_widgets.messages._questions import SamplingDeclinedError, SamplingMessage, SamplingRequest
from ai_widgets.tools import NobodyToAskError

__all__: list[str] = []

#: The error code MCP's specification gives a sampling request the user rejected.
USER_REJECTED = -1


def sampling_callback(callers: Callers, server: Callable[[], str]) -> Any:
    """The SDK's sampling callback for one server's connection (giving it declares the ``sampling`` capability)."""

    async def on_sample(context: Any, params: Any) -> Any:
        from mcp import types

        del context
        asker = callers.asker(related_task(params))
        if isinstance(asker, str):
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"ai_widgets cannot run the model: {asker}")
        try:
            request = sampling_request(params, server())
        except ValueError as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"ai_widgets cannot run this request: {exc}")
        deadline = callers.deadline(asker)
        try:
            # The time the person and the model take is not the server's: the call's deadline waits meanwhile.
            with person_time(deadline):
                reply = await asker.sample(request)
        except SamplingDeclinedError as exc:
            return types.ErrorData(code=USER_REJECTED, message=str(exc))
        except NobodyToAskError as exc:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"ai_widgets cannot run the model: {exc}")
        except Exception as exc:
            told = redact(safe_text(f"{type(exc).__name__}: {exc}"))[:500]
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The model request failed: {told}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=reply.text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )

    return on_sample


def sampling_request(params: Any, server: str) -> SamplingRequest:
    """The server's ``sampling/createMessage`` params as the request the card shows.

    Raises:
        ValueError: It asks for what this client does not do (tools, audio), or is malformed.
    """
    if getattr(params, "tools", None):
        raise ValueError("tools in a sampling request are not supported (the client did not declare sampling.tools)")
    messages = tuple(message(m) for m in params.messages)
    hints = getattr(getattr(params, "model_preferences", None), "hints", None) or ()
    return SamplingRequest(
        asker=f"the MCP server {server!r}",
        messages=messages,
        system_prompt=safe_text(params.system_prompt) if params.system_prompt else None,
        max_tokens=params.max_tokens,
        temperature=params.temperature,
        stop_sequences=tuple(params.stop_sequences or ()),
        model_hints=tuple(h.name for h in hints if getattr(h, "name", None)),
    )


def message(message: Any) -> SamplingMessage:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    texts: list[str] = []
    images: list[tuple[str, str]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(safe_text(block.text))
        elif kind == "image":
            images.append((block.mime_type, block.data))
        else:
            raise ValueError(f"a message's content of type {kind!r} is not supported (text and images are)")
    return SamplingMessage(role=message.role, text="\n\n".join(texts), images=tuple(images))
