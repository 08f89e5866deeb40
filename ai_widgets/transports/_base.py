"""The transport protocol: what a transport declares it is (:class:`TransportProfile`), one async stream of events per
model request, and the one error of a transport the session acts on (:class:`ContextTooLongError`: it retries the
request shortened)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ai_widgets.attachments import AttachmentLimits
from ai_widgets.events import StreamEvent
from ai_widgets.messages import Message, Role, ToolCallPart
from ai_widgets.options import RequestOptions
from ai_widgets.tools import ToolDefinition
from ai_widgets.transports._errors import ContextTooLongError

__all__ = [
    "ChatRequest",
    "ContextTooLongError",
    "ModelStream",
    "Transport",
    "TransportProfile",
    "TurnAware",
    "profile_of",
]


@dataclass(frozen=True, slots=True)
class TransportProfile:
    """What a transport declares it is: who serves which model, and the limits the session keeps to before it sends.
    Every field may be ``None``: not known (the empty profile knows nothing, and the session then shortens and
    refuses nothing ahead of the provider).

    Attributes:
        provider: Who serves the model, by genai-prices' id for it (``"openai"``, ``"anthropic"``, ``"google"``,
            ``"groq"``...), which prices its requests; ``None`` for a server it does not know (a local one, a proxy,
            a remote agent).
        model: The model's name as requests send it.
        context_window: The model's context window in tokens, which the session shortens requests to unless
            ``RequestOptions.context_window`` says otherwise.
        max_output_tokens: The most output tokens a response may have as the transport asks for them (Anthropic's
            ``max_tokens``), the room a shortened request leaves for the output unless ``RequestOptions.max_tokens``
            says; ``None``: the provider's own default.
        attachment_limits: What the provider takes of the files in a request, checked before a message with files
            is sent (``None``: no limit known here).
    """

    provider: str | None = None
    model: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    attachment_limits: AttachmentLimits | None = None

    def __post_init__(self) -> None:
        for name, value in (("context_window", self.context_window), ("max_output_tokens", self.max_output_tokens)):
            if value is not None and (type(value) is not int or value < 1):
                raise ValueError(f"{name} must be a positive number of tokens or None, not {value!r}")
        if self.attachment_limits is not None and not isinstance(self.attachment_limits, AttachmentLimits):
            raise TypeError(
                f"attachment_limits must be an AttachmentLimits or None, not {type(self.attachment_limits).__name__}"
            )


#: The profile of a transport that declares none: nothing known.
NO_PROFILE = TransportProfile()


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
class ModelStream(Protocol):
    """What the session needs of a transport to ask its model: ``stream(request)``. A transport of one's own may be
    just that; it then has :class:`Transport`'s default profile (nothing known)."""

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``."""
        ...


@runtime_checkable
class Transport(ModelStream, Protocol):
    """Talks to a model: turns a request into a stream of events (see :mod:`ai_widgets.events`), and declares what it
    is (:attr:`profile`).

    A transport raises on failure (the session ends the message in error and stays usable), and may be
    cancelled at any point (the session closes the iterator). A request past the model's context window raises
    :class:`ContextTooLongError` (the session retries it once, shortened). The session reads :attr:`profile` once per
    model request (its context window, output limit and attachment limits); a transport of one's own that declares no
    profile, whether it subclasses ``Transport`` or only has ``stream``, gets the default, which knows nothing.
    """

    @property
    def profile(self) -> TransportProfile:
        """What the transport is: provider, model, the model's context window, its output limit, the attachment
        limits. The default knows nothing."""
        return NO_PROFILE


@runtime_checkable
class TurnAware(Protocol):
    """A transport that wants to know when a turn has ended (``turn_ended``), whether it finished, failed or was
    stopped, Stop between two requests included: one whose provider keeps a run going across the turn's requests
    (an ACP agent mid-prompt) ends it there. A separate protocol, so :class:`Transport` and the transports that
    need no such word are unchanged."""

    async def turn_ended(self, conversation_id: str, reply: Message) -> None:
        """The turn that filled ``reply`` has ended (``reply`` is final: every call has its outcome). Called once a
        turn, by the session, with a bounded wait; what it raises is logged and goes no further."""
        ...


def profile_of(transport: ModelStream | None) -> TransportProfile:
    """What ``transport`` declares it is (:attr:`Transport.profile`); the empty profile for one that declares none
    (a transport of one's own with only ``stream``), and for no transport at all.

    Raises:
        TypeError: The transport's ``profile`` is not a :class:`TransportProfile`.
    """
    if not isinstance(transport, Transport):
        return NO_PROFILE
    profile = transport.profile
    if not isinstance(profile, TransportProfile):
        raise TypeError(f"{type(transport).__name__}.profile must be a TransportProfile, not {type(profile).__name__}")
    return profile
