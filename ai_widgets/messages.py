"""The conversation: messages and their parts, tool-call states, usage. Serialisable to JSON and back.

Parts are mutable while a reply streams. Text grows by appending pieces that are joined only when read, so a
delta costs O(delta) however long the reply is. Nothing here holds a client or a key: a conversation dumped to
JSON carries only what was said and done.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeAlias

from ai_widgets.arguments import StreamingArguments
from ai_widgets.tools import ToolOutcome

__all__ = [
    "FinishReason",
    "Message",
    "MessageStatus",
    "Part",
    "ReasoningPart",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolCallProgress",
    "ToolCallState",
    "Usage",
    "conversation_markdown",
    "dump_messages",
    "load_messages",
]

FORMAT_VERSION = 1


class FinishReason(str, Enum):
    """Why the model stopped a response."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"


class ToolCallState(str, Enum):
    """Where a tool call is: ``streaming -> pending -> [awaiting_approval] -> running -> completed | failed``,
    or ``rejected`` (declined) / ``cancelled`` (stopped or never run). Every terminal state carries an outcome."""

    STREAMING = "streaming"
    PENDING = "pending"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    REJECTED = "rejected"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """Whether the call is finished and has an outcome."""
        return self in _TERMINAL


_TERMINAL = frozenset({ToolCallState.COMPLETED, ToolCallState.FAILED, ToolCallState.REJECTED, ToolCallState.CANCELLED})


class Role(str, Enum):
    """Who wrote a message."""

    USER = "user"
    ASSISTANT = "assistant"


class MessageStatus(str, Enum):
    """Where a message is. An assistant reply is ``in_progress`` from its turn's first request to its last."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    LIMIT_REACHED = "limit_reached"
    ERROR = "error"
    CANCELLED = "cancelled"


@dataclass(slots=True)
class Usage:
    """Token counts; ``requests`` counts the model requests they came from."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "requests": self.requests,
        }


class _Pieces:
    """Text that grows by appends and is joined only when read."""

    __slots__ = ("_joined", "_pieces")

    def __init__(self, text: str = "") -> None:
        self._pieces: list[str] = [text] if text else []
        self._joined: str | None = text

    def append(self, text: str) -> None:
        self._pieces.append(text)
        self._joined = None

    def get(self) -> str:
        if self._joined is None:
            self._joined = "".join(self._pieces)
            self._pieces = [self._joined] if self._joined else []
        return self._joined


class _GrowingText:
    """A part whose text grows by appended deltas."""

    __slots__ = ("_text",)

    def __init__(self, text: str = "") -> None:
        self._text = _Pieces(text)

    @property
    def text(self) -> str:
        """The text so far."""
        return self._text.get()

    def append(self, text: str) -> None:
        """Appends a delta."""
        self._text.append(text)


class TextPart(_GrowingText):
    """Text the model wrote (markdown), or a user's message."""

    __slots__ = ()
    kind: Literal["text"] = "text"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"kind": "text", "text": self.text}

    def __repr__(self) -> str:
        return f"TextPart({self.text!r})"


class ReasoningPart(_GrowingText):
    """The model's reasoning; ``signature`` is what a provider may need back with it."""

    __slots__ = ("signature",)
    kind: Literal["reasoning"] = "reasoning"

    def __init__(self, text: str = "", signature: str | None = None) -> None:
        super().__init__(text)
        self.signature = signature

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"kind": "reasoning", "text": self.text, "signature": self.signature}

    def __repr__(self) -> str:
        return f"ReasoningPart({self.text!r})"


@dataclass(slots=True)
class ToolCallProgress:
    """How far a running call is: ``fraction`` from 0 to 1 (``None``: unknown) and a message."""

    fraction: float | None = None
    message: str | None = None


class ToolCallPart:
    """One tool call in an assistant reply, with its arguments, state, decision and outcome.

    Attributes:
        tool_call_id: The provider's id of the call.
        tool_name: The tool's name as the model wrote it.
        state: Where the call is.
        outcome: The result, once the call is in a terminal state.
        progress: Progress while running, or ``None``.
        approval_reason: The question shown to the person when a decision is needed.
        approval_requested_by_transport: Whether the transport asked for the decision (it then waits whatever
            the policy says).
        decision: The person's decision (``approved``, ``approved_always``, ``rejected``), once made.
        decision_reason: The reason the person gave, if any.
        provider_executed: Whether the provider ran the tool itself.
        started_at: When the call began streaming (epoch seconds).
        run_started_at: When it began running.
        finished_at: When it reached a terminal state.
    """

    __slots__ = (
        "_arguments",
        "approval_reason",
        "approval_requested_by_transport",
        "decision",
        "decision_reason",
        "finished_at",
        "outcome",
        "progress",
        "provider_executed",
        "run_started_at",
        "started_at",
        "state",
        "tool_call_id",
        "tool_name",
    )
    kind: Literal["tool_call"] = "tool_call"

    def __init__(
        self,
        tool_call_id: str,
        tool_name: str,
        arguments: str = "",
        *,
        state: ToolCallState = ToolCallState.STREAMING,
        provider_executed: bool = False,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self._arguments = StreamingArguments()
        if arguments:
            self._arguments.feed(arguments)
        self.state = state
        self.outcome: ToolOutcome | None = None
        self.progress: ToolCallProgress | None = None
        self.approval_reason: str | None = None
        self.approval_requested_by_transport = False
        self.decision: str | None = None
        self.decision_reason: str | None = None
        self.provider_executed = provider_executed
        self.started_at: float = time.time()
        self.run_started_at: float | None = None
        self.finished_at: float | None = None

    @property
    def arguments(self) -> str:
        """The raw JSON text of the arguments so far."""
        return self._arguments.text

    @property
    def parsed_arguments(self) -> dict[str, Any]:
        """A lenient parse of the arguments so far: always a dict, at least ``{}``."""
        return self._arguments.value

    @property
    def streaming_arguments(self) -> StreamingArguments:
        """The incremental parser behind the arguments (its ``last_patches`` say what the last delta changed)."""
        return self._arguments

    def feed_arguments(self, delta: str) -> tuple[str, ...]:
        """Appends a piece of the arguments; returns the top-level keys whose view changed."""
        return self._arguments.feed(delta)

    def finish(self, state: ToolCallState, outcome: ToolOutcome) -> None:
        """Moves the call to a terminal state with its outcome."""
        if not state.terminal:
            raise ValueError(f"{state.value} is not a terminal state")
        self.state = state
        self.outcome = outcome
        self.progress = None if state is not ToolCallState.COMPLETED else self.progress
        self.finished_at = time.time()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the parsed view is derived again on load)."""
        return {
            "kind": "tool_call",
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "state": self.state.value,
            "outcome": None if self.outcome is None else self.outcome.model_dump(mode="json"),
            "progress": None
            if self.progress is None
            else {"fraction": self.progress.fraction, "message": self.progress.message},
            "approval_reason": self.approval_reason,
            "approval_requested_by_transport": self.approval_requested_by_transport,
            "decision": self.decision,
            "decision_reason": self.decision_reason,
            "provider_executed": self.provider_executed,
            "started_at": self.started_at,
            "run_started_at": self.run_started_at,
            "finished_at": self.finished_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallPart:
        """Rebuilds a call from :meth:`to_dict`'s output."""
        part = cls(
            data["tool_call_id"],
            data["tool_name"],
            data.get("arguments", ""),
            state=ToolCallState(data["state"]),
            provider_executed=bool(data.get("provider_executed", False)),
        )
        if data.get("outcome") is not None:
            part.outcome = ToolOutcome.model_validate(data["outcome"])
        if data.get("progress") is not None:
            part.progress = ToolCallProgress(**data["progress"])
        part.approval_reason = data.get("approval_reason")
        part.approval_requested_by_transport = bool(data.get("approval_requested_by_transport", False))
        part.decision = data.get("decision")
        part.decision_reason = data.get("decision_reason")
        part.started_at = data.get("started_at", part.started_at)
        part.run_started_at = data.get("run_started_at")
        part.finished_at = data.get("finished_at")
        return part

    def __repr__(self) -> str:
        return f"ToolCallPart({self.tool_call_id!r}, {self.tool_name!r}, state={self.state.value!r})"


Part: TypeAlias = TextPart | ReasoningPart | ToolCallPart


class Message:
    """One message of the conversation.

    Attributes:
        id: A unique id.
        role: ``user`` or ``assistant``.
        parts: Text, reasoning and tool calls, in the order they arrived.
        status: Where the message is (an assistant reply is ``in_progress`` until its turn ends).
        finish_reason: Why the model stopped its last response.
        usage: Tokens of every request of the turn, summed.
        error: What went wrong, when ``status`` is ``error`` (or why the limit was reached).
        status_text: The status line while the model decides (transient).
        created_at: When the message was created (epoch seconds).
    """

    __slots__ = ("created_at", "error", "finish_reason", "id", "parts", "role", "status", "status_text", "usage")

    def __init__(
        self,
        role: Role,
        parts: Iterable[Part] = (),
        *,
        id: str | None = None,
        status: MessageStatus = MessageStatus.COMPLETED,
        finish_reason: FinishReason | None = None,
        usage: Usage | None = None,
        error: str | None = None,
        created_at: float | None = None,
    ) -> None:
        self.id = id or f"msg_{uuid.uuid4().hex[:16]}"
        self.role = Role(role)
        self.parts: list[Part] = list(parts)
        self.status = status
        self.finish_reason = finish_reason
        self.usage = usage or Usage()
        self.error = error
        self.status_text: str | None = None
        self.created_at = created_at if created_at is not None else time.time()

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message with one text part."""
        return cls(Role.USER, [TextPart(text)])

    @property
    def text(self) -> str:
        """All text parts, joined."""
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    @property
    def reasoning(self) -> str:
        """All reasoning parts, joined."""
        return "".join(part.text for part in self.parts if isinstance(part, ReasoningPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool-call parts, in order."""
        return [part for part in self.parts if isinstance(part, ToolCallPart)]

    def tool_call(self, tool_call_id: str) -> ToolCallPart | None:
        """The call with this id, or ``None``."""
        for part in self.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id == tool_call_id:
                return part
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "id": self.id,
            "role": self.role.value,
            "parts": [part.to_dict() for part in self.parts],
            "status": self.status.value,
            "finish_reason": None if self.finish_reason is None else self.finish_reason.value,
            "usage": self.usage.to_dict(),
            "error": self.error,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Rebuilds a message from :meth:`to_dict`'s output.

        Raises:
            ValueError: The data is not a message of this format.
        """
        try:
            return cls(
                Role(data["role"]),
                [_part_from_dict(p) for p in data.get("parts", [])],
                id=data["id"],
                status=MessageStatus(data.get("status", "completed")),
                finish_reason=None if data.get("finish_reason") is None else FinishReason(data["finish_reason"]),
                usage=Usage(**data.get("usage", {})),
                error=data.get("error"),
                created_at=data.get("created_at"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a serialised message: {exc!r}") from exc

    def __repr__(self) -> str:
        return f"Message({self.role.value}, {self.parts!r}, status={self.status.value!r})"


def _part_from_dict(data: dict[str, Any]) -> Part:
    match data.get("kind"):
        case "text":
            return TextPart(data["text"])
        case "reasoning":
            return ReasoningPart(data["text"], data.get("signature"))
        case "tool_call":
            return ToolCallPart.from_dict(data)
        case other:
            raise ValueError(f"unknown message part kind {other!r}")


def dump_messages(messages: Iterable[Message]) -> str:
    """Serialises a conversation to JSON text."""
    return json.dumps(
        {"format": "ai_widgets.conversation", "version": FORMAT_VERSION, "messages": [m.to_dict() for m in messages]},
        ensure_ascii=False,
    )


def load_messages(text: str | bytes) -> list[Message]:
    """Rebuilds a conversation from :func:`dump_messages`'s output.

    Raises:
        ValueError: The text is not a serialised conversation.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != "ai_widgets.conversation":
        raise ValueError("not an ai_widgets conversation (missing format marker)")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"unsupported conversation format version {data.get('version')!r}")
    return [Message.from_dict(m) for m in data["messages"]]


def conversation_markdown(messages: Iterable[Message]) -> str:
    """The conversation as markdown, for front ends without widgets and for transcripts."""
    blocks: list[str] = []
    for message in messages:
        who = "**You**" if message.role is Role.USER else "**Assistant**"
        lines = [who]
        for part in message.parts:
            if isinstance(part, TextPart):
                lines.append(part.text)
            elif isinstance(part, ReasoningPart):
                lines.append("> *Reasoning:* " + " ".join(part.text.split())[:500])
            else:
                arguments = json.dumps(part.parsed_arguments, ensure_ascii=False)
                if len(arguments) > 300:
                    arguments = arguments[:299] + "…"
                line = f"> 🔧 `{part.tool_name}` {arguments} — *{part.state.value.replace('_', ' ')}*"
                if part.outcome is not None:
                    result = part.outcome.text or part.outcome.model_content()
                    line += ": " + " ".join(result.split())[:300]
                lines.append(line)
        if message.status not in (MessageStatus.COMPLETED, MessageStatus.IN_PROGRESS):
            lines.append(f"*({message.status.value.replace('_', ' ')}{': ' + message.error if message.error else ''})*")
        blocks.append("\n\n".join(lines))
    return "\n\n---\n\n".join(blocks) if blocks else "*(no messages yet)*"


def iter_tool_calls(messages: Iterable[Message]) -> Iterator[ToolCallPart]:
    """Every tool call in a conversation, in order."""
    for message in messages:
        yield from message.tool_calls
