"""The stream vocabulary: what a transport yields while a model replies.

A transport turns one provider response into these events, in order. Tool-call arguments stream as raw JSON text
(``ToolCallDelta``); the session parses them leniently on every delta. Events are small frozen dataclasses: a
stream carries thousands of them and each must cost next to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeAlias

from ai_widgets._quick_init import quick_init
from ai_widgets.messages import CallLocation, CallViewItem, FinishReason, PlanEntry
from ai_widgets.outcome import ToolOutcome

__all__ = [
    "PlanUpdated",
    "ProviderState",
    "ProviderToolResult",
    "ReasoningDelta",
    "ResponseCompleted",
    "ResponseStarted",
    "StatusUpdate",
    "StreamEvent",
    "TextDelta",
    "ToolApprovalRequested",
    "ToolCallArgumentsDone",
    "ToolCallDelta",
    "ToolCallRevised",
    "ToolCallStarted",
    "ToolProgressUpdate",
    "UsageUpdate",
]


@dataclass(frozen=True, slots=True)
class ResponseStarted:
    """The provider began a response (one per request)."""


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A status line shown while the model decides; replaced when the reply starts. Empty text clears it."""

    text: str


@quick_init  # one per delta of the reply's text
@dataclass(frozen=True, slots=True)
class TextDelta:
    """The next piece of the reply's text."""

    text: str


@quick_init  # one per delta of reasoning
@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """The next piece of the model's reasoning.

    Attributes:
        text: The reasoning text (may be empty when only provider data arrives).
        provider: The provider ``provider_data`` belongs to (``"anthropic"``, ``"openai"``...).
        provider_data: What that provider needs back with the reasoning (a signature, encrypted reasoning), JSON;
            when given it replaces the reasoning part's provider data.
    """

    text: str
    provider: str | None = None
    provider_data: object = None


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call.

    Attributes:
        tool_call_id: The provider's id of the call.
        tool_name: The tool's name as the model wrote it.
        arguments: The complete JSON arguments, for a call that does not stream them.
        provider_executed: Whether the provider runs this tool itself (its result arrives as ``ProviderToolResult``).
        provider: The provider ``provider_data`` belongs to.
        provider_data: What that provider needs back with the call, JSON.
    """

    tool_call_id: str
    tool_name: str
    arguments: str | None = None
    provider_executed: bool = False
    provider: str | None = None
    provider_data: object = None


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """The next piece of a call's JSON arguments."""

    tool_call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDone:
    """A call's arguments are complete."""

    tool_call_id: str


@dataclass(frozen=True, slots=True)
class ToolCallRevised:
    """An agent tells more about a call it runs (ACP's ``tool_call_update``, or its ``tool_call`` sent again for the
    same id): each field given replaces what the call had; ``None`` leaves it.

    Attributes:
        tool_call_id: The call's id (a call this response or an earlier one of the turn started).
        title: A human-readable title for the card.
        kind: What sort of call it is (``read``, ``edit``, ``execute``...).
        locations: The files it touches.
        arguments: Its complete JSON arguments, replacing the ones it had.
        content: What it shows (text, diffs, terminals), replacing what it showed.
    """

    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    locations: tuple[CallLocation, ...] | None = None
    arguments: str | None = None
    content: tuple[CallViewItem, ...] | None = None


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    """The agent's plan as it is now, whole: the reply's plan shows these entries in place of the last ones."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class ProviderState:
    """What a provider keeps of the conversation on its side and needs to find it again (an ACP agent's session id),
    kept with the reply (``Message.provider_state``) and saved in the history. Never a secret.

    Attributes:
        provider: Whose state it is (``"acp"``).
        data: The state, JSON; it replaces that provider's earlier state on the reply.
    """

    provider: str
    data: object


@dataclass(frozen=True, slots=True)
class ToolApprovalRequested:
    """The transport asks that a person decide on this call, whatever the policy says.

    For a call the provider runs (a remote agent that paused for the person's approval), the decision goes back
    through the transport on the turn's next request, and the call's result comes with that request's response; a
    person's "allow always" for its tool answers the provider's later pauses on that tool unasked.

    Attributes:
        tool_call_id: The call's id.
        reason: The question to show the person, or ``None`` for the usual one.
        arguments_schema: For a call the provider runs: the JSON Schema (an object schema) that arguments the person
            edits must match, where the provider gives one; edits are checked against it before they are taken.
        provider: The provider ``provider_data`` belongs to.
        provider_data: What that provider needs back with the decision (the pause it answers), JSON; when given it
            replaces the call's provider data.
    """

    tool_call_id: str
    reason: str | None = None
    arguments_schema: dict[str, object] | None = None
    provider: str | None = None
    provider_data: object = None


@dataclass(frozen=True, slots=True)
class ToolProgressUpdate:
    """Progress of a call the provider runs."""

    tool_call_id: str
    fraction: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderToolResult:
    """The result of a call the provider ran itself; such a call is never run locally.

    Attributes:
        tool_call_id: The call's id.
        outcome: The result as the card and the transcript show it.
        provider: The provider ``provider_data`` belongs to.
        provider_data: What that provider needs back with the call (its result block, as it came), JSON; when given
            it replaces the call's provider data.
    """

    tool_call_id: str
    outcome: ToolOutcome
    provider: str | None = None
    provider_data: object = None


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """Token usage of the current request so far (the latest update of a request wins), and who answered it: the
    session prices the request from these (``Usage.cost``).

    Attributes:
        input_tokens: Prompt tokens, the cached and cache-written ones included.
        output_tokens: Completion tokens, the reasoning ones included.
        cached_tokens: Prompt tokens served from the provider's cache, where given.
        reasoning_tokens: Output tokens spent on reasoning, where given.
        cache_write_tokens: Prompt tokens written to the provider's cache, where given (Anthropic).
        model: The model that answered: the one the provider names in its response where it does, else the one
            asked for; ``None`` when not known (the request is then not priced).
        provider: genai-prices' id of the provider that answered (``"openai"``, ``"anthropic"``, ``"google"``,
            ``"groq"``, ``"deepseek"``, ``"openrouter"``...); ``None`` when not known (a local server), which leaves
            the request unpriced rather than priced as some other provider's.
        cost: What the request cost in USD as the provider itself says (an ACP agent's cost, the change of its
            running total), which then prices the request; ``None``: priced from the tokens.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    # Who answered is not part of an update's value: updates with the same counts are equal, whichever model sent
    # them (a parser drops a repeated update by comparing).
    model: str | None = field(default=None, compare=False)
    provider: str | None = field(default=None, compare=False)
    cost: Decimal | None = None


@dataclass(frozen=True, slots=True)
class ResponseCompleted:
    """The provider finished the response, and why.

    Attributes:
        finish_reason: Why it finished.
        continues: The provider's own run goes on after the session's round (an ACP agent mid-prompt that asked a
            question: a permission, a file write, one of the session's tools). Its calls that have no result yet
            stay open, their results to come in a later response, and the session asks again after the round
            even when the round had nothing to run.
    """

    finish_reason: FinishReason
    continues: bool = False


StreamEvent: TypeAlias = (
    ResponseStarted
    | StatusUpdate
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallArgumentsDone
    | ToolCallRevised
    | PlanUpdated
    | ProviderState
    | ToolApprovalRequested
    | ToolProgressUpdate
    | ProviderToolResult
    | UsageUpdate
    | ResponseCompleted
)
