"""The transport protocol: one async stream of events per model request, and the one error of a transport the
session acts on (:class:`ContextTooLongError`: it retries the request shortened)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ai_widgets.events import StreamEvent
from ai_widgets.messages import Message, Role, ToolCallPart
from ai_widgets.options import RequestOptions
from ai_widgets.tools import ToolDefinition
from ai_widgets.transports._errors import ContextTooLongError

__all__ = ["ChatRequest", "ContextTooLongError", "Transport"]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What a transport gets for one model request.

    Attributes:
        messages: The history, the in-progress reply last (empty on a turn's first request; on a follow-up its
            calls carry their recorded outcomes). Every tool call in it has an outcome: the session answers every
            call before it asks the model again. Skip assistant messages without parts when mapping. Longer than
            the model's context window, it is a shortened copy (``RequestOptions.context_window``): the oldest
            turns left out, older results cut, its first user message beginning with a note saying so.
        tools: The tool definitions the model may call (empty for ``ToolChoice.NONE``).
        options: The request options; ``options.tool_choice`` is the choice for this request.
        conversation_id: The session's conversation id.
        output_schema: The JSON Schema the reply's text must match (``send(..., output_type=...)``), always an
            object schema (another type is wrapped as ``{"response": ...}`` by the session), or ``None``. A
            transport asks for it the provider's native way; the session validates the text, so one with no
            native way answers in JSON text. On a retry after an answer that did not validate, the messages end
            with that answer and a user message telling the validation errors, after the reply.
    """

    messages: list[Message]
    tools: list[ToolDefinition] = field(default_factory=list)
    options: RequestOptions = field(default_factory=RequestOptions)
    conversation_id: str | None = None
    output_schema: dict[str, Any] | None = None

    @property
    def last_user_text(self) -> str:
        """The text of the last user message, or ``""``."""
        for message in reversed(self.messages):
            if message.role is Role.USER:
                return message.text
        return ""

    @property
    def reply(self) -> Message | None:
        """The assistant reply this request continues (empty on a turn's first request), or ``None``."""
        if self.messages and self.messages[-1].role is Role.ASSISTANT:
            return self.messages[-1]
        return None

    def tool_results(self) -> list[ToolCallPart]:
        """The calls of the reply in progress, with their outcomes (empty on a turn's first request)."""
        reply = self.reply
        return [] if reply is None else reply.tool_calls


@runtime_checkable
class Transport(Protocol):
    """Talks to a model: turns a request into a stream of events (see :mod:`ai_widgets.events`).

    A transport raises on failure (the session ends the message in error and stays usable), and may be
    cancelled at any point (the session closes the iterator). A request past the model's context window raises
    :class:`ContextTooLongError` (the session retries it once, shortened). A transport that knows its model's context
    window in tokens says so in a ``context_window`` attribute (``int`` or ``None``), which the session shortens
    requests to unless ``RequestOptions.context_window`` says otherwise.
    """

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``."""
        ...
