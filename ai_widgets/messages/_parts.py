"""The conversation: messages and their parts, the tool-call states and their one table of moves. Serialisable to
JSON and back (the JSON envelope, its versions and the checked field reads are in :mod:`ai_widgets.messages._json`).

Parts are mutable while a reply streams. Text grows by appending pieces joined only when read, so a delta costs
O(delta) however long the reply is. Nothing here holds a client or a key: its JSON is only what was said and done.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeAlias

from ai_widgets.arguments import StreamingArguments
from ai_widgets.messages._call_log import kept_log
from ai_widgets.messages._call_view import ToolCallView
from ai_widgets.messages._files import FilePart
from ai_widgets.messages._json import conversation_json, conversation_messages, read_field
from ai_widgets.messages._plan import PlanPart
from ai_widgets.messages._questions import InputRequest
from ai_widgets.messages._typed_answer import TypedAnswer
from ai_widgets.messages._usage import Usage
from ai_widgets.outcome import ToolOutcome

__all__ = [
    "TRANSITIONS",
    "FinishReason",
    "InvalidTransitionError",
    "Message",
    "MessageStatus",
    "Part",
    "ReasoningPart",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolCallProgress",
    "ToolCallState",
    "conversation_markdown",
    "dump_messages",
    "load_messages",
]


class FinishReason(str, Enum):
    """Why the model stopped a response."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"


class ToolCallState(str, Enum):
    """Where a tool call is: ``streaming -> pending -> [awaiting_approval] -> running -> completed | failed``
    (a running call may wait in ``awaiting_input`` while its server asks the person, or in ``awaiting_approval`` while
    it asks to use the model, and go on running), or ``rejected`` (a person declined it), ``cancelled`` (a person
    stopped the turn or cancelled this call), or ``skipped`` (never run for another reason: a limit, a failed turn,
    the conversation went on without it). Every terminal state carries an outcome; the moves are :data:`TRANSITIONS`."""

    STREAMING = "streaming"
    PENDING = "pending"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING = "running"
    AWAITING_INPUT = "awaiting_input"
    COMPLETED = "completed"
    FAILED = "failed"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"

    @property
    def terminal(self) -> bool:
        """Whether the call is finished and has an outcome."""
        return self in TERMINAL


S = ToolCallState
TERMINAL = frozenset({S.COMPLETED, S.FAILED, S.REJECTED, S.CANCELLED, S.SKIPPED})
ENDS = frozenset({S.COMPLETED, S.FAILED, S.CANCELLED, S.SKIPPED})

#: Every move a tool call may make; anything else is a bug (``ToolCallPart.move`` raises). A provider-run call goes
#: to ``running`` (progress) or straight to its result, or waits in ``awaiting_approval`` when its provider paused.
TRANSITIONS: dict[ToolCallState, frozenset[ToolCallState]] = {
    S.STREAMING: frozenset({S.PENDING, S.RUNNING, *ENDS}),
    S.PENDING: frozenset({S.AWAITING_APPROVAL, S.RUNNING, *ENDS}),
    S.AWAITING_APPROVAL: frozenset({S.RUNNING, S.REJECTED, S.CANCELLED, S.SKIPPED}),
    S.RUNNING: frozenset({S.AWAITING_INPUT, S.AWAITING_APPROVAL, S.COMPLETED, S.FAILED, S.CANCELLED}),
    S.AWAITING_INPUT: frozenset({S.RUNNING, S.FAILED, S.CANCELLED}),
    **{state: frozenset() for state in TERMINAL},
}


class InvalidTransitionError(RuntimeError):
    """A tool call was asked to make a move the state table does not allow (a bug, never a user error)."""


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


class ErrorKind(str, Enum):
    """What kind of failure or limit ended a reply (``Message.error_kind``): what a person can do about it (Retry
    after a failure, Continue after a limit) and where the troubleshooting page explains it follow from it."""

    #: The model's request failed: the provider refused it or could not be reached (``ProviderError``), timed
    #: out, broke off, or reported an error.
    REQUEST = "request"
    #: The provider refused the request as longer than the model's context window, even shortened.
    CONTEXT_TOO_LONG = "context_too_long"
    #: The transport sent events that do not fit together (``StreamProtocolError``).
    STREAM_PROTOCOL = "stream_protocol"
    #: A source of tools (an MCP server) could not list its tools.
    TOOLS_UNAVAILABLE = "tools_unavailable"
    #: Tool calls failed in too many rounds in a row (``max_consecutive_errors``).
    TOOL_FAILURES = "tool_failures"
    #: The model called a tool that is not registered, and ``terminate_on_unknown_calls`` is on.
    UNKNOWN_TOOL = "unknown_tool"
    #: A typed answer did not validate after every retry (``OutputValidationError``).
    OUTPUT_INVALID = "output_invalid"
    #: Something else failed in the turn (a bug, or a tool source or transport raising the unexpected).
    TURN_FAILED = "turn_failed"
    #: The reply itself was answered, but the ``history`` file could not be written (asking again would not help).
    HISTORY_UNSAVED = "history_unsaved"
    #: ``limit_reached``: the turn's rounds of tool calls (``max_iterations``); Continue goes on.
    MAX_ITERATIONS = "max_iterations"
    #: ``limit_reached``: the turn's budget (``max_cost``); Continue goes on with a fresh one.
    MAX_COST = "max_cost"


ERROR_KINDS = frozenset(kind.value for kind in ErrorKind)


class GrowingText:
    """A part whose text grows by appended deltas, joined only when read (and no list kept for a part of one delta:
    a reply of many short parts keeps one object each for the garbage collector to visit, not three).

    Attributes:
        provider: Which provider ``provider_data`` belongs to (``"anthropic"``, ``"openai"``...), or ``None``.
        provider_data: What that provider needs back with this part (a reasoning signature, encrypted reasoning),
            JSON; a transport sends back only its own provider's data.
    """

    __slots__ = ("_joined", "_pieces", "provider", "provider_data")

    def __init__(self, text: str = "", *, provider: str | None = None, provider_data: Any = None) -> None:
        self._joined = text  # the text, when ``_pieces`` is None
        self._pieces: list[str] | None = None  # the text in the pieces appended since it was last read
        self.provider = provider
        self.provider_data = provider_data

    @property
    def text(self) -> str:
        """The text so far."""
        pieces = self._pieces
        if pieces is not None:
            self._joined = "".join(pieces)
            self._pieces = None
        return self._joined

    def append(self, text: str) -> None:
        """Appends a delta."""
        pieces = self._pieces
        if pieces is None:
            self._pieces = [self._joined, text] if self._joined else [text]
        else:
            pieces.append(text)


class TextPart(GrowingText):
    """Text the model wrote (markdown), or a user's message.

    Attributes:
        answer: When the text is a typed answer's JSON (``send(..., output_type=...)``): its type's name, how its
            check went and a parse that grows with the text (:class:`TypedAnswer`); ``None`` for other text.
    """

    __slots__ = ("answer",)
    kind: Literal["text"] = "text"

    def __init__(
        self,
        text: str = "",
        *,
        answer: TypedAnswer | None = None,
        provider: str | None = None,
        provider_data: Any = None,
    ) -> None:
        super().__init__(text, provider=provider, provider_data=provider_data)
        self.answer = answer

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data: dict[str, Any] = {"kind": "text", "text": self.text}
        if self.answer is not None:
            data["answer"] = self.answer.to_dict()
        return with_provider(data, self)

    def __repr__(self) -> str:
        return f"TextPart({self.text!r})"


class ReasoningPart(GrowingText):
    """The model's reasoning; ``provider_data`` holds what its provider needs back with it (a signature)."""

    __slots__ = ()
    kind: Literal["reasoning"] = "reasoning"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return with_provider({"kind": "reasoning", "text": self.text}, self)

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
        state: Where the call is; it changes only through :meth:`move`.
        outcome: The result, once the call is in a terminal state.
        progress: Progress while running, or ``None``.
        log_lines: The last lines the call's server logged while it ran (sanitised), oldest first.
        approval_reason: The question shown to the person when a decision is needed.
        input_request: What the call's server asks the person while the call is ``awaiting_input``, else ``None``.
        approval_requested_by_transport: Whether the transport asked for the decision (it then waits whatever
            the policy says).
        decision: The person's decision (``approved``, ``approved_always``, ``rejected``), once made.
        decision_reason: The reason the person gave, if any.
        decision_remembered: Whether the decision was not asked for: the call ran because the person chose "allow
            always" for its tool earlier (``decision`` is then ``approved_always``).
        unasked_reason: Why the call ran without asking when the approval policy would have asked (its tool's
            ``ToolDefinition.unasked``, or the session's switch: "Run code without asking is on"), or ``None``.
        edited_arguments: What the person changed the arguments to before allowing the call, or ``None``. The call
            ran with these; ``arguments`` keeps what the model sent.
        provider_executed: Whether the provider ran the tool itself (such a call never runs locally).
        provider: Which provider ``provider_data`` belongs to, or ``None``.
        provider_data: What that provider needs back with this call (a server-tool result block), JSON.
        view: What the agent that runs the call tells about it beyond its arguments (a title, a kind, the files it
            touches, diffs, a terminal's output), or ``None``.
        started_at: When the call began streaming (epoch seconds).
        approval_requested_at: When it began waiting for a decision.
        run_started_at: When it began running.
        finished_at: When it reached a terminal state.
    """

    __slots__ = (
        "_arguments",
        "approval_reason",
        "approval_requested_at",
        "approval_requested_by_transport",
        "decision",
        "decision_reason",
        "decision_remembered",
        "edited_arguments",
        "finished_at",
        "input_request",
        "log_lines",
        "outcome",
        "progress",
        "provider",
        "provider_data",
        "provider_executed",
        "run_started_at",
        "started_at",
        "state",
        "tool_call_id",
        "tool_name",
        "unasked_reason",
        "view",
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
        provider: str | None = None,
        provider_data: Any = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self._arguments = StreamingArguments()
        if arguments:
            self._arguments.feed(arguments)
        self.state = state
        self.outcome: ToolOutcome | None = None
        self.progress: ToolCallProgress | None = None
        self.log_lines: tuple[str, ...] = ()
        self.approval_reason: str | None = None
        self.input_request: InputRequest | None = None
        self.approval_requested_by_transport = False
        self.decision: str | None = None
        self.decision_reason: str | None = None
        self.decision_remembered = False
        self.unasked_reason: str | None = None
        self.edited_arguments: dict[str, Any] | None = None
        self.provider_executed = provider_executed
        self.provider = provider
        self.provider_data = provider_data
        self.view: ToolCallView | None = None
        self.started_at: float = time.time()
        self.approval_requested_at: float | None = None
        self.run_started_at: float | None = None
        self.finished_at: float | None = None

    @property
    def arguments(self) -> str:
        """The raw JSON text of the arguments so far, as the model sent it."""
        return self._arguments.text

    @property
    def parsed_arguments(self) -> dict[str, Any]:
        """A lenient parse of the arguments so far: always a dict, at least ``{}``. The card, the approval
        question and the tool all read this one parse."""
        return self._arguments.value

    @property
    def arguments_error(self) -> str | None:
        """Why the arguments are not a valid JSON object (NaN, a duplicate key, bad syntax), or ``None``."""
        return self._arguments.error

    @property
    def effective_arguments(self) -> dict[str, Any]:
        """The arguments the call runs with: the person's edit if there is one, else the model's."""
        return self.edited_arguments if self.edited_arguments is not None else self.parsed_arguments

    @property
    def streaming_arguments(self) -> StreamingArguments:
        """The incremental parser behind the arguments (its ``last_patches`` say what the last delta changed)."""
        return self._arguments

    def feed_arguments(self, delta: str) -> tuple[str, ...]:
        """Appends a piece of the arguments; returns the top-level keys whose view changed."""
        return self._arguments.feed(delta)

    def replace_arguments(self, arguments: str) -> None:
        """Replaces the arguments whole: a provider-run call whose agent sends them again, complete (an ACP
        ``tool_call_update`` with its ``rawInput``)."""
        self._arguments = StreamingArguments()
        if arguments:
            self._arguments.feed(arguments)

    def result_for_model(self, limit: int | None = None) -> str:
        """What the model is told about this call's result; when the person edited the arguments, it says so and
        to what, so the transcript stays honest.

        Args:
            limit: The most characters told (``RequestOptions.max_tool_result_chars``): a longer result is cut in
                the middle, its first two thirds and last third kept, with a note saying how much was left out.
                The one rule by which the transports send a result and the session estimates what it takes.
                ``None``: all of it.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1 character, or None, not {limit!r}")
        outcome = self.outcome or ToolOutcome.failure("Not run.")
        text = outcome.model_content()
        if self.edited_arguments is not None:
            edited = json.dumps(self.edited_arguments, ensure_ascii=False, separators=(", ", ": "))
            text = f"(The person changed the arguments before allowing this call; it ran with {edited}.)\n{text}"
        if limit is None or len(text) <= limit:
            return text
        head = limit * 2 // 3
        tail = limit - head
        note = (
            f"[… {len(text) - limit:,} characters of this result left out here: it is {len(text):,} characters long, "
            f"and at most {limit:,} are sent …]"
        )
        return f"{text[:head]}\n\n{note}\n\n{text[len(text) - tail :]}"

    def move(self, state: ToolCallState, outcome: ToolOutcome | None = None) -> None:
        """Moves the call to ``state`` (the one place state changes), stamping the time.

        Args:
            state: The new state; it must be allowed by :data:`TRANSITIONS`.
            outcome: The result; required for a terminal state, refused otherwise.

        Raises:
            InvalidTransitionError: The move is not in the table, the outcome does not fit the state, or the call
                would wait for input without an ``input_request`` (which any other state clears).
        """
        if state not in TRANSITIONS[self.state]:
            raise InvalidTransitionError(
                f"tool call {self.tool_call_id!r} ({self.tool_name}) cannot move from {self.state.value} "
                f"to {state.value}"
            )
        if state.terminal != (outcome is not None):
            raise InvalidTransitionError(
                f"tool call {self.tool_call_id!r}: a terminal state needs an outcome, and only a terminal state "
                f"takes one ({state.value})"
            )
        if state is ToolCallState.AWAITING_INPUT and self.input_request is None:
            raise InvalidTransitionError(f"tool call {self.tool_call_id!r} cannot wait for input without input_request")
        now = time.time()
        self.state = state
        if state is not ToolCallState.AWAITING_INPUT:
            self.input_request = None  # the question is answered (or the call ended): the card stops asking
        if state is ToolCallState.AWAITING_APPROVAL:
            self.approval_requested_at = now
        elif state is ToolCallState.RUNNING:
            self.run_started_at = now
        elif outcome is not None:
            self.outcome = outcome
            if state is not ToolCallState.COMPLETED:
                self.progress = None
            self.finished_at = now

    def finish(self, state: ToolCallState, outcome: ToolOutcome) -> None:
        """Moves the call to a terminal state with its outcome (see :meth:`move`)."""
        if not state.terminal:
            raise ValueError(f"{state.value} is not a terminal state")
        self.move(state, outcome)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the parsed view is derived again on load)."""
        return with_provider(
            {
                "kind": "tool_call",
                "tool_call_id": self.tool_call_id,
                "tool_name": self.tool_name,
                "arguments": self.arguments,
                "edited_arguments": self.edited_arguments,
                "state": self.state.value,
                "outcome": None if self.outcome is None else self.outcome.model_dump(mode="json"),
                "progress": None
                if self.progress is None
                else {"fraction": self.progress.fraction, "message": self.progress.message},
                "approval_reason": self.approval_reason,
                **({"log_lines": list(self.log_lines)} if self.log_lines else {}),
                **({} if self.input_request is None else {"input_request": self.input_request.to_dict()}),
                "approval_requested_by_transport": self.approval_requested_by_transport,
                "decision": self.decision,
                "decision_reason": self.decision_reason,
                "decision_remembered": self.decision_remembered,
                **({} if self.unasked_reason is None else {"unasked_reason": self.unasked_reason}),
                **({} if self.view is None else {"view": self.view.to_dict()}),
                "provider_executed": self.provider_executed,
                "started_at": self.started_at,
                "approval_requested_at": self.approval_requested_at,
                "run_started_at": self.run_started_at,
                "finished_at": self.finished_at,
            },
            self,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallPart:
        """Rebuilds a call from :meth:`to_dict`'s output.

        Raises:
            ValueError: A field is missing or of the wrong type.
        """
        part = cls(
            read_field(data, "tool_call_id", str),
            read_field(data, "tool_name", str),
            read_field(data, "arguments", str, ""),
            state=ToolCallState(read_field(data, "state", str)),
            provider_executed=read_field(data, "provider_executed", bool, False),
            provider=read_field(data, "provider", (str, type(None)), None),
            provider_data=data.get("provider_data"),
        )
        outcome = data.get("outcome")
        if outcome is not None:
            part.outcome = ToolOutcome.model_validate(outcome)
        progress = read_field(data, "progress", (dict, type(None)), None)
        if progress is not None:
            fraction = read_field(progress, "fraction", (int, float, type(None)), None)  # a number (never a bool)
            part.progress = ToolCallProgress(fraction, read_field(progress, "message", (str, type(None)), None))
        part.edited_arguments = read_field(data, "edited_arguments", (dict, type(None)), None)
        part.approval_reason = read_field(data, "approval_reason", (str, type(None)), None)
        part.log_lines = kept_log(read_field(data, "log_lines", list, []))
        asked = data.get("input_request")
        part.input_request = None if asked is None else InputRequest.from_dict(asked)
        if (part.state is ToolCallState.AWAITING_INPUT) != (part.input_request is not None):
            raise ValueError(
                f"tool call {part.tool_call_id!r}: an input_request goes with awaiting_input, and only there"
            )
        part.approval_requested_by_transport = read_field(data, "approval_requested_by_transport", bool, False)
        part.decision = read_field(data, "decision", (str, type(None)), None)
        part.decision_reason = read_field(data, "decision_reason", (str, type(None)), None)
        part.decision_remembered = read_field(data, "decision_remembered", bool, False)
        part.unasked_reason = read_field(data, "unasked_reason", (str, type(None)), None)
        view = data.get("view")
        part.view = None if view is None else ToolCallView.from_dict(view)
        part.started_at = read_field(data, "started_at", (int, float), part.started_at)
        part.approval_requested_at = read_field(data, "approval_requested_at", (int, float, type(None)), None)
        part.run_started_at = read_field(data, "run_started_at", (int, float, type(None)), None)
        part.finished_at = read_field(data, "finished_at", (int, float, type(None)), None)
        if part.state.terminal and part.outcome is None:
            raise ValueError(f"tool call {part.tool_call_id!r} is {part.state.value} but has no outcome")
        return part

    def __repr__(self) -> str:
        return f"ToolCallPart({self.tool_call_id!r}, {self.tool_name!r}, state={self.state.value!r})"


def with_provider(data: dict[str, Any], part: GrowingText | ToolCallPart) -> dict[str, Any]:
    if part.provider is not None or part.provider_data is not None:
        data["provider"] = part.provider
        data["provider_data"] = part.provider_data
    return data


Part: TypeAlias = TextPart | ReasoningPart | ToolCallPart | FilePart | PlanPart


class Message:
    """One message of the conversation.

    Attributes:
        id: A unique id.
        role: ``user`` or ``assistant``.
        parts: Text, reasoning, tool calls and files (a user's attachments), in the order they arrived.
        status: Where the message is (an assistant reply is ``in_progress`` until its turn ends).
        finish_reason: Why the model stopped its last response.
        usage: Tokens and cost of every request of the turn, summed.
        error: What went wrong, when ``status`` is ``error`` (or why the limit was reached).
        error_kind: What kind of failure or limit that was (:class:`ErrorKind`), or ``None`` (no error, or a message
            saved before kinds were kept).
        status_text: The status line while the model decides (transient).
        created_at: When the message was created (epoch seconds).
        output: The validated object of a typed answer (``send(..., output_type=...)``), else ``None``. Not saved
            (``dump_messages``, the history file): loaded, it is ``None``, and the text it was validated from stays.
        provider_state: What a provider keeps of the conversation on its side and needs to find it again, by
            provider (an ACP agent's session id, for ``session/load``), JSON; saved with the message. Never a
            secret: a transport keeps tokens and keys to itself.
    """

    __slots__ = (
        "created_at",
        "error",
        "error_kind",
        "finish_reason",
        "id",
        "output",
        "parts",
        "provider_state",
        "role",
        "status",
        "status_text",
        "usage",
    )

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
        error_kind: ErrorKind | None = None,
        created_at: float | None = None,
    ) -> None:
        self.id = id or f"msg_{uuid.uuid4().hex[:16]}"
        self.role = Role(role)
        self.parts: list[Part] = list(parts)
        self.status = status
        self.finish_reason = finish_reason
        self.usage = usage or Usage()
        self.error = error
        self.error_kind = error_kind
        self.status_text: str | None = None
        self.output: Any = None
        self.provider_state: dict[str, Any] = {}
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
        data = {
            "id": self.id,
            "role": self.role.value,
            "parts": [part.to_dict() for part in self.parts],
            "status": self.status.value,
            "finish_reason": None if self.finish_reason is None else self.finish_reason.value,
            "usage": self.usage.to_dict(),
            "error": self.error,
            "created_at": self.created_at,
        }
        if self.error_kind is not None:
            data["error_kind"] = self.error_kind.value
        if self.provider_state:
            data["provider_state"] = dict(self.provider_state)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Rebuilds a message from :meth:`to_dict`'s output.

        Raises:
            ValueError: The data is not a message of this format.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a message must be an object, not {type(data).__name__}")
        try:
            parts = read_field(data, "parts", list, [])
            usage = Usage.from_dict(read_field(data, "usage", dict, {}))
            finish_reason = read_field(data, "finish_reason", (str, type(None)), None)
            message = cls(
                Role(read_field(data, "role", str)),
                [part_from_dict(p) for p in parts],
                id=read_field(data, "id", str),
                status=MessageStatus(read_field(data, "status", str, "completed")),
                finish_reason=None if finish_reason is None else FinishReason(finish_reason),
                usage=usage,
                error=read_field(data, "error", (str, type(None)), None),
                created_at=read_field(data, "created_at", (int, float, type(None)), None),
            )
            message.provider_state = dict(read_field(data, "provider_state", dict, {}))
            kind = read_field(data, "error_kind", (str, type(None)), None)
            # A kind this version does not know (a newer file's) is left out: the error's text still says it.
            message.error_kind = ErrorKind(kind) if kind in ERROR_KINDS else None
        except ValueError:
            raise
        except Exception as exc:  # a TypeError, a pydantic error, anything a malformed dump can cause
            raise ValueError(f"not a serialised message: {type(exc).__name__}: {exc}") from exc
        return message

    def __repr__(self) -> str:
        return f"Message({self.role.value}, {self.parts!r}, status={self.status.value!r})"


def part_from_dict(data: Any) -> Part:
    if not isinstance(data, dict):
        raise ValueError(f"a message part must be an object, not {type(data).__name__}")
    match data.get("kind"):
        case "text":
            text = read_field(data, "text", str)
            answer = data.get("answer")
            return TextPart(
                text,
                answer=None if answer is None else TypedAnswer.from_dict(answer, text),
                provider=read_field(data, "provider", (str, type(None)), None),
                provider_data=data.get("provider_data"),
            )
        case "reasoning":
            return ReasoningPart(
                read_field(data, "text", str),
                provider=read_field(data, "provider", (str, type(None)), None),
                provider_data=data.get("provider_data"),
            )
        case "tool_call":
            return ToolCallPart.from_dict(data)
        case "file":
            return FilePart.from_dict(data)
        case "plan":
            return PlanPart.from_dict(data)
        case other:
            raise ValueError(f"unknown message part kind {other!r}")


def dump_messages(messages: Iterable[Message]) -> str:
    """Serialises a conversation to JSON text (UTF-8-encodable: lone surrogates are escaped).

    Raises:
        ValueError: A message holds something that is not JSON (it cannot have come in through a session).
    """
    return conversation_json(m.to_dict() for m in messages)


def load_messages(text: str | bytes) -> list[Message]:
    """Rebuilds a conversation from :func:`dump_messages`'s output (this format version or the previous one).

    Raises:
        ValueError: The text is not a serialised conversation, is malformed, or is from a newer format.
    """
    messages = conversation_messages(text)
    try:
        return [Message.from_dict(m) for m in messages]
    except RecursionError:
        raise ValueError("not an ai_widgets conversation: nested too deeply") from None


def conversation_markdown(messages: Iterable[Message]) -> str:
    """The conversation as markdown, for front ends without widgets and for transcripts."""
    blocks: list[str] = []
    for message in messages:
        who = "**You**" if message.role is Role.USER else "**Assistant**"
        lines = [who]
        for part in message.parts:
            if isinstance(part, TextPart):
                lines.append(part.text if part.answer is None else part.answer.markdown(part.text))
            elif isinstance(part, ReasoningPart):
                lines.append("> *Reasoning:* " + " ".join(part.text.split())[:500])
            elif isinstance(part, FilePart):
                lines.append(f"> 📎 {part.describe()}")
            elif isinstance(part, PlanPart):
                lines.append("*Plan:*\n" + part.markdown())
            else:
                # What ran: the person's edit where there is one, said so, with what the model had asked for.
                arguments = clipped_json(part.effective_arguments, 300)
                line = f"> 🔧 `{part.tool_name}` {arguments}"
                if part.edited_arguments is not None:
                    asked = clipped_json(part.parsed_arguments, 120)
                    line += f" *(edited by the person before it ran; the model asked for {asked})*"
                if part.unasked_reason is not None:
                    line += f" *(ran without asking: {part.unasked_reason})*"
                line += f" — *{part.state.value.replace('_', ' ')}*"
                if part.outcome is not None:
                    result = part.outcome.text or part.outcome.model_content()
                    line += ": " + " ".join(result.split())[:300]
                lines.append(line)
        if message.status not in (MessageStatus.COMPLETED, MessageStatus.IN_PROGRESS):
            lines.append(f"*({message.status.value.replace('_', ' ')}{': ' + message.error if message.error else ''})*")
        blocks.append("\n\n".join(lines))
    return "\n\n---\n\n".join(blocks) if blocks else "*(no messages yet)*"


def clipped_json(value: Any, limit: int) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
