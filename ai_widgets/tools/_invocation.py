"""One call as its handler sees it: the arguments, progress reporting, the cancelled flag, the context, and the ways
to ask the person for input, or to run the session's model, while it runs."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import TypeAdapter

from ai_widgets._threads import running_loop
from ai_widgets.arguments import StreamingArguments
from ai_widgets.messages._questions import InputRequest, InputResponse, SamplingReply, SamplingRequest
from ai_widgets.outcome import ToolOutcome

__all__ = ["Approve", "AskPerson", "NobodyToAskError", "Sample", "ToolInvocation", "ToolProgress", "parse_arguments"]

T = TypeVar("T")
#: A tool's function, or what answers a call for it.
Handler = Callable[..., Any]

ProgressCallback = Callable[[float | None, str | None], None]
LogCallback = Callable[[str], None]
#: How a session asks its person for a call's input: awaited on the session's loop, it returns the answer.
AskPerson = Callable[[InputRequest], Coroutine[Any, Any, InputResponse]]
#: How a session runs its model for a call once the person allows it (raises SamplingDeclinedError if not).
Sample = Callable[[SamplingRequest], Coroutine[Any, Any, SamplingReply]]
#: How a session asks the person to approve a running call (awaited on its loop): whether the call may go on.
Approve = Callable[[str], Coroutine[Any, Any, bool]]


class NobodyToAskError(RuntimeError):
    """A call asked the person for input where nobody can answer: it runs outside a chat session (a tool invoked
    directly), or it is no longer running."""


class ToolProgress:
    """Progress reporting for a running call; ``report`` and ``log`` are safe from any thread."""

    __slots__ = ("_callback", "_log_callback", "_loop", "_loop_thread", "fraction", "message")

    def __init__(self, callback: ProgressCallback | None = None, *, on_log: LogCallback | None = None) -> None:
        self._callback = callback
        self._log_callback = on_log
        self._loop: asyncio.AbstractEventLoop | None = running_loop()
        self._loop_thread: int | None = None if self._loop is None else threading.get_ident()
        self.fraction: float | None = None
        self.message: str | None = None

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        """Reports how far the call is.

        Args:
            fraction: Done so far, from 0 to 1; ``None`` when unknown (an indeterminate bar).
            message: A short line about what is happening.

        Raises:
            ValueError: ``fraction`` is not a number from 0 to 1.
        """
        if fraction is not None:
            if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or math.isnan(fraction):
                raise ValueError(f"progress fraction must be a number from 0 to 1, not {fraction!r}")
            if not 0.0 <= fraction <= 1.0:
                raise ValueError(f"progress fraction must be from 0 to 1, not {fraction!r}")
            fraction = float(fraction)
        if message is not None and not isinstance(message, str):
            raise ValueError(f"progress message must be a string, not {type(message).__name__}")
        self.fraction, self.message = fraction, message
        if self._callback is not None:
            self._deliver(self._callback, fraction, message)

    def log(self, text: str) -> None:
        """Adds a line to the call's log, shown in its card (an MCP server's log messages; the last lines are kept).

        Raises:
            ValueError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise ValueError(f"a log line must be a string, not {type(text).__name__}")
        if self._log_callback is not None:
            self._deliver(self._log_callback, text)

    def _deliver(self, callback: Callable[..., None], *values: Any) -> None:
        """Calls ``callback`` on the session's loop: at once from its thread, posted there from any other."""
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(callback, *values)
            return
        callback(*values)


@dataclass
class ToolInvocation:
    """One call of a tool, as its handler sees it.

    Attributes:
        tool_call_id: The provider's id of the call.
        tool_name: The name the model used.
        arguments: The raw JSON text of the arguments the call runs with (the person's edit, when they changed it).
        conversation_id: The session's conversation id.
        message_id: The id of the assistant message the call belongs to.
        progress: Where the handler reports progress; never ``None``.
        context: The application's context object, passed through from the session.
        cancelled: Set when the call is cancelled, stopped or timed out; a sync tool can check it and return early.
        parsed_arguments: The one parse of ``arguments`` that the card showed and the person approved; derived from
            ``arguments`` when not given.
        edited: Whether the person edited the arguments before allowing the call (``arguments`` hold the edit).
        stopped_outcome: The handler's own account of a call that was stopped (cancelled, interrupted, out of
            time): set it before letting ``CancelledError`` out (or raising it, for a stop of the handler's own),
            and the call ends ``cancelled`` with its message after the session's and its ``cell``. ``None``: the
            session's account alone.
    """

    tool_call_id: str
    tool_name: str
    arguments: str = "{}"
    conversation_id: str | None = None
    message_id: str | None = None
    progress: ToolProgress = field(default_factory=ToolProgress)
    context: Any = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    parsed_arguments: dict[str, Any] | None = None
    edited: bool = False
    stopped_outcome: ToolOutcome | None = None
    # Told the future of a sync call whose thread goes on after the call was given up (a cancel, a stop, a
    # timeout), so the session can say when it returns; set by the session, not part of the handler's view.
    _on_abandoned: Callable[[Future[Any]], None] | None = field(default=None, init=False, repr=False, compare=False)
    # How to ask the person, and the loop that asking runs on; set by the session (see ask_person).
    _ask: AskPerson | None = field(default=None, init=False, repr=False, compare=False)
    _ask_loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False, compare=False)
    _sample: Sample | None = field(default=None, init=False, repr=False, compare=False)
    _approve: Approve | None = field(default=None, init=False, repr=False, compare=False)

    def can_ask(self, ask: AskPerson, sample: Sample | None = None, approve: Approve | None = None) -> None:
        """Lets the call ask the person through ``ask`` and ``approve``, and run the model through ``sample`` (the
        session does this; all run on this loop)."""
        self._ask, self._sample, self._approve = ask, sample, approve
        self._ask_loop = asyncio.get_running_loop()

    async def ask_approval(self, question: str) -> bool:
        """Asks the person to approve this call while it runs, for a tool that learns only as it runs that the call
        needs a decision (a pydantic-ai tool raising ``ApprovalRequired``). The call waits in ``awaiting_approval``
        meanwhile, showing ``question``; a tool the person allowed always goes on unasked.

        Returns:
            ``True``: go on (when the person edited the arguments, ``arguments`` and ``parsed_arguments`` now hold
            the edit, checked against the tool's schema). ``False``: the person declined; the call has ended
            ``rejected``, its outcome saying so, and what the handler returns is dropped.

        Raises:
            NobodyToAskError: Nobody can decide: the call runs outside a chat session, or has ended.
        """
        if self._approve is None:
            raise NobodyToAskError(
                f"the tool {self.tool_name} asked for approval, but nobody can decide here: it runs outside a chat "
                "session (run it through a ChatSession or ChatWidget to be asked in its card)"
            )
        return await self._on_session_loop(self._approve(question))

    async def sample(self, request: SamplingRequest) -> SamplingReply:
        """Runs the session's model on ``request`` once the person allows it (an MCP server's sampling), from any
        loop or thread's loop: the call waits in ``awaiting_approval`` meanwhile, showing
        :meth:`SamplingRequest.question`. Cancelling this await withdraws the question.

        Raises:
            NobodyToAskError: Nobody can allow it: the call runs outside a chat session, or has ended.
            SamplingDeclinedError: The person declined.
        """
        if self._sample is None:
            raise NobodyToAskError(
                f"the tool {self.tool_name} asked to run the model, but there is no chat session's model to run here "
                "(run it through a ChatSession or ChatWidget)"
            )
        return await self._on_session_loop(self._sample(request))

    async def ask_person(self, request: InputRequest) -> InputResponse:
        """Asks the person for input and waits for the answer (an MCP server's elicitation), from any loop or thread's
        loop: the call waits in ``awaiting_input`` meanwhile. Cancelling this await withdraws the question.

        Raises:
            NobodyToAskError: Nobody can answer: the call runs outside a chat session, or has ended.
        """
        if self._ask is None:
            raise NobodyToAskError(
                f"the tool {self.tool_name} asked for input, but nobody can answer here: it runs outside a chat "
                "session (run it through a ChatSession, ChatWidget or run_tool to be asked in its card)"
            )
        return await self._on_session_loop(self._ask(request))

    async def _on_session_loop(self, question: Coroutine[Any, Any, T]) -> T:
        """Awaits one of the session's coroutines on the session's loop, from whichever loop this call runs on.

        Raises:
            NobodyToAskError: The session's loop is gone (the call has ended).
        """
        loop = self._ask_loop
        if loop is None or loop.is_closed():
            question.close()
            raise NobodyToAskError(f"the tool {self.tool_name} asked its session after the session's loop closed")
        if running_loop() is loop:
            return await question
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(question, loop))

    def get_arguments(self, type_: type[T]) -> T:
        """Validates the arguments as ``type_`` (a pydantic model, TypedDict, dataclass or ``dict``).

        Raises:
            pydantic.ValidationError: The arguments do not fit ``type_``.
            ValueError: The arguments are not a valid JSON object.
        """
        parsed = parse_arguments(self.arguments) if self.parsed_arguments is None else self.parsed_arguments
        if isinstance(parsed, str):
            raise ValueError(parsed)
        return TypeAdapter(type_).validate_python(parsed)


def parse_arguments(text: str) -> dict[str, Any] | str:
    """The arguments in ``text`` as a dict, or why they are not a valid, complete JSON object.

    The same strict parser that shows a call's arguments while they stream: NaN, Infinity, duplicate keys and
    nesting deeper than the limit are refused, so a text can never be read two ways.
    """
    if not text.strip():
        return {}
    parser = StreamingArguments.parse(text)
    if parser.error is not None:
        return parser.error
    if not parser.complete:
        return "the JSON object is incomplete (it broke off before its closing brace)"
    return parser.value
