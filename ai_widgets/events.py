"""The stream vocabulary: what a transport yields while a model replies.

A transport turns one provider response into these events, in order. Tool-call arguments stream as raw JSON text
(``ToolCallDelta``); the session parses them leniently on every delta. Events are small frozen dataclasses: a
stream carries thousands of them and each must cost next to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from ai_widgets.messages import FinishReason

if TYPE_CHECKING:
    from ai_widgets.tools import ToolOutcome

__all__ = [
    "MessageCompleted",
    "MessageStarted",
    "ReasoningDelta",
    "StatusUpdate",
    "StreamEvent",
    "TextDelta",
    "ToolApprovalRequested",
    "ToolCallCompleted",
    "ToolCallDelta",
    "ToolCallStarted",
    "ToolProgressUpdate",
    "ToolResult",
    "UsageUpdate",
]


@dataclass(frozen=True, slots=True)
class MessageStarted:
    """The provider began a response (one per request)."""


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A status line shown while the model decides; replaced when the reply starts. Empty text clears it."""

    text: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """The next piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """The next piece of the model's reasoning.

    Attributes:
        text: The reasoning text.
        signature: An opaque token some providers (Anthropic) need back with the reasoning.
    """

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call.

    Attributes:
        tool_call_id: The provider's id of the call.
        tool_name: The tool's name as the model wrote it.
        arguments: The complete JSON arguments, for a call that does not stream them.
        provider_executed: Whether the provider runs this tool itself (its result arrives as ``ToolResult``).
    """

    tool_call_id: str
    tool_name: str
    arguments: str | None = None
    provider_executed: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """The next piece of a call's JSON arguments."""

    tool_call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallCompleted:
    """A call's arguments are complete."""

    tool_call_id: str


@dataclass(frozen=True, slots=True)
class ToolApprovalRequested:
    """The transport asks that a person decide on this call, whatever the policy says."""

    tool_call_id: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ToolProgressUpdate:
    """Progress of a call the provider runs."""

    tool_call_id: str
    fraction: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of a call the provider ran itself; such a call is never run locally."""

    tool_call_id: str
    outcome: ToolOutcome


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """Token usage of the current request so far (the latest update of a request wins).

    Attributes:
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cached_tokens: Prompt tokens served from the provider's cache, where given.
        reasoning_tokens: Output tokens spent on reasoning, where given.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class MessageCompleted:
    """The provider finished the response, and why."""

    finish_reason: FinishReason


StreamEvent: TypeAlias = (
    MessageStarted
    | StatusUpdate
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallCompleted
    | ToolApprovalRequested
    | ToolProgressUpdate
    | ToolResult
    | UsageUpdate
    | MessageCompleted
)
