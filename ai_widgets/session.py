"""The session loop: request -> stream -> run tools -> request again, one assistant message per turn.

``ChatSession`` owns the conversation. A turn runs as a task on the running event loop; ``send`` awaits it.
Observers (the widget) subscribe to typed changes; approvals and stop may come from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ai_widgets.approval import ApprovalDecision, ApprovalError, ApprovalPolicy, DefaultApprovalPolicy
from ai_widgets.changes import (
    BusyChanged,
    ConversationCleared,
    MessageAdded,
    MessageFinished,
    MessageUpdated,
    PartAdded,
    SessionChange,
    TextAppended,
    ToolCallArgumentsChanged,
    ToolCallUpdated,
)
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolApprovalRequested,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import (
    FinishReason,
    Message,
    MessageStatus,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallProgress,
    ToolCallState,
    Usage,
)
from ai_widgets.options import RequestOptions, SessionOptions, ToolChoice
from ai_widgets.tools import Tool, ToolInvocation, ToolOutcome, ToolProgress, ToolRegistry
from ai_widgets.transports._base import ChatRequest, Transport

__all__ = ["ChatSession", "SessionBusyError", "StreamProtocolError"]

logger = logging.getLogger("ai_widgets")

Subscriber = Callable[[SessionChange], None]


class SessionBusyError(RuntimeError):
    """A turn is already running: wait for it, or stop it, before starting another."""


class StreamProtocolError(RuntimeError):
    """A transport sent events that do not fit together (say, arguments for a call it never started)."""


@dataclass
class _Waiter:
    future: asyncio.Future[tuple[ApprovalDecision, str | None]]
    part: ToolCallPart
    decided: bool = False


@dataclass
class _RequestState:
    """What one model request has streamed so far."""

    calls: dict[str, ToolCallPart]
    usage_before: Usage
    finish_reason: FinishReason | None = None

    @property
    def completed(self) -> bool:
        return self.finish_reason is not None


@dataclass
class _PreparedCall:
    part: ToolCallPart
    tool: Tool
    invocation: ToolInvocation
    waiter: _Waiter | None


class ChatSession:
    """A conversation with a model that can call tools.

    Args:
        transport: How to reach the model (``ScriptedTransport``, ``OpenAIChatTransport``, ...).
        tools: A :class:`ToolRegistry` (used as it is, so later changes to it are seen on the next request), or
            tools and functions to put in a new one.
        approval_policy: Decides which calls need a person; a :class:`DefaultApprovalPolicy` of its own by
            default (one per session, never share one between users).
        options: How a turn runs.
        request_options: What every request carries (tool choice, system prompt, temperature, ...).
        context: The application's object, handed to every tool call as ``invocation.context``.
        messages: A conversation to continue (from :func:`ai_widgets.messages.load_messages`).
        conversation_id: An id for the conversation; a new one by default.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] | None = None,
        approval_policy: ApprovalPolicy | None = None,
        options: SessionOptions | None = None,
        request_options: RequestOptions | None = None,
        context: Any = None,
        messages: Iterable[Message] | None = None,
        conversation_id: str | None = None,
    ) -> None:
        if not isinstance(transport, Transport):
            raise TypeError(f"transport must have a stream(request) method, not {type(transport).__name__}")
        self.transport = transport
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(list(tools or ()))
        self.approval_policy: ApprovalPolicy = approval_policy or DefaultApprovalPolicy()
        self.options = options or SessionOptions()
        self.request_options = request_options or RequestOptions()
        self.context = context
        self.conversation_id = conversation_id or f"conv_{uuid.uuid4().hex[:16]}"
        self._messages: list[Message] = list(messages or ())
        self._subscribers: list[Subscriber] = []
        self._turn: asyncio.Task[Message] | None = None
        self._stop_requested = False
        self._waiters: dict[str, _Waiter] = {}
        self._lock = threading.Lock()

    # --- reading --------------------------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (a new list; the messages themselves are live)."""
        return list(self._messages)

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._turn is not None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the running turn runs on, or ``None`` when idle."""
        task = self._turn
        return None if task is None else task.get_loop()

    @property
    def usage(self) -> Usage:
        """Tokens used by the whole conversation."""
        total = Usage()
        for message in self._messages:
            total = total + message.usage
        return total

    @property
    def pending_approvals(self) -> list[ToolCallPart]:
        """The calls waiting for a person's decision."""
        with self._lock:
            return [waiter.part for waiter in self._waiters.values() if not waiter.decided]

    def find_tool_call(self, tool_call_id: str) -> tuple[Message, ToolCallPart] | None:
        """The message and call with this id, or ``None``."""
        for message in reversed(self._messages):
            part = message.tool_call(tool_call_id)
            if part is not None:
                return message, part
        return None

    # --- observing ------------------------------------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Calls ``subscriber(change)`` on every state change, on the loop's thread; returns an unsubscribe."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(subscriber)

        return unsubscribe

    def _notify(self, change: SessionChange) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(change)
            except Exception:
                logger.exception("an ai_widgets session observer failed on %s", type(change).__name__)

    # --- turns ----------------------------------------------------------------------------------------------------

    async def send(self, text: str) -> Message:
        """Sends a user message and runs the turn: returns the assistant's reply when the turn ends.

        The reply is one message from the first request to the last, however many tool rounds the turn takes.
        Its ``status`` says how the turn ended (completed, limit reached, error, cancelled); a failing model or
        tool ends the message in error rather than raising, and the session stays usable.

        Raises:
            SessionBusyError: A turn is already running.
            ValueError: ``text`` is empty, or the tool choice names a tool that is not registered.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("send() needs a non-empty message")
        self._check_can_start()
        self._append(Message.user(text))
        return await self._start_turn()

    async def resume(self) -> Message:
        """Runs another turn without a new user message, e.g. to let the model go on after the tool-round limit.

        Raises:
            SessionBusyError: A turn is already running.
            ValueError: The conversation is empty.
        """
        if not self._messages:
            raise ValueError("there is nothing to resume: the conversation is empty")
        self._check_can_start()
        return await self._start_turn()

    def stop(self) -> bool:
        """Cancels the running turn wherever it is: the model stream, a pending approval, running tools.

        Safe from any thread. Cancelled calls get a cancelled result; the session stays usable.

        Returns:
            Whether a turn was running.
        """
        task = self._turn
        if task is None or task.done():
            return False
        self._stop_requested = True
        loop = task.get_loop()
        if _running_loop() is loop:
            task.cancel()
        else:
            loop.call_soon_threadsafe(task.cancel)
        return True

    def clear(self) -> None:
        """Removes every message.

        Raises:
            SessionBusyError: A turn is running.
        """
        if self._turn is not None:
            raise SessionBusyError("cannot clear the conversation while a turn is running; stop() it first")
        self._messages.clear()
        self._notify(ConversationCleared())

    def _check_can_start(self) -> None:
        if self._turn is not None:
            raise SessionBusyError("a turn is already running: wait for its reply, or stop() it first")
        choice = self.request_options.tool_choice
        if choice.mode == "tool" and choice.tool_name is not None and self.tools.get(choice.tool_name) is None:
            raise ValueError(f"the tool choice names {choice.tool_name!r}, which is not registered")

    def _append(self, message: Message) -> None:
        self._messages.append(message)
        self._notify(MessageAdded(message))

    async def _start_turn(self) -> Message:
        loop = asyncio.get_running_loop()
        self._close_unanswered_calls("Not run: the conversation went on without it.")
        reply = Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS)
        self._stop_requested = False
        self._append(reply)
        task = loop.create_task(self._run_turn(reply))
        self._turn = task
        self._notify(BusyChanged(True))
        return await task

    async def _run_turn(self, reply: Message) -> Message:
        try:
            await self._turn_loop(reply)
        except asyncio.CancelledError:
            self._end_open_calls(reply, "Stopped before it finished.")
            self._finish(reply, MessageStatus.CANCELLED, None)
            if not self._stop_requested:
                raise
        except Exception as exc:
            logger.exception("an ai_widgets turn failed")
            self._end_open_calls(reply, "Not run: the turn failed.")
            self._finish(reply, MessageStatus.ERROR, f"The turn failed: {type(exc).__name__}: {exc}")
        finally:
            self._turn = None
            with self._lock:
                for waiter in self._waiters.values():
                    waiter.future.cancel()
                self._waiters.clear()
            # The reply is final before the session says it is idle, so an observer never sees "idle" with a
            # reply still in progress.
            self._notify(MessageFinished(reply))
            self._notify(BusyChanged(False))
        return reply

    async def _turn_loop(self, reply: Message) -> None:
        options = self.options
        rounds = 0
        failed_rounds = 0
        while True:
            if not await self._request(reply, first=rounds == 0):
                return
            calls = [part for part in reply.tool_calls if not part.state.terminal]
            if not calls or not options.execute_tools:
                for part in calls:
                    self._set_state(reply, part, ToolCallState.PENDING)
                self._finish(reply, MessageStatus.COMPLETED, None)
                return
            if rounds >= options.max_iterations:
                message = (
                    f"Not run: this turn reached its limit of {options.max_iterations} rounds of tool calls "
                    "(max_iterations)."
                )
                self._end_open_calls(reply, message)
                self._finish(
                    reply,
                    MessageStatus.LIMIT_REACHED,
                    f"Stopped after {options.max_iterations} rounds of tool calls (the max_iterations limit); "
                    "the model wanted to call more tools. Continue to let it go on.",
                )
                return
            rounds += 1
            terminate = await self._run_round(reply, calls)
            if terminate is not None:
                self._finish(reply, MessageStatus.ERROR, terminate)
                return
            failures = [part for part in calls if part.state is ToolCallState.FAILED]
            failed_rounds = failed_rounds + 1 if failures else 0
            if failed_rounds >= options.max_consecutive_errors:
                last = failures[-1]
                detail = _person_facing_error(last)
                self._finish(
                    reply,
                    MessageStatus.ERROR,
                    f"Tool calls failed in {failed_rounds} rounds in a row (max_consecutive_errors); "
                    f"the last: {last.tool_name}: {detail}",
                )
                return

    def _finish(self, reply: Message, status: MessageStatus, error: str | None) -> None:
        reply.status = status
        reply.error = error
        reply.status_text = None
        self._notify(MessageUpdated(reply))

    # --- one model request ----------------------------------------------------------------------------------------

    async def _request(self, reply: Message, *, first: bool) -> bool:
        options = self.request_options
        if not first and options.tool_choice.forces_call:
            options = dataclasses.replace(options, tool_choice=ToolChoice.AUTO)
        tools = [] if options.tool_choice.mode == "none" else self.tools.definitions()
        request = ChatRequest(
            messages=list(self._messages), tools=tools, options=options, conversation_id=self.conversation_id
        )
        state = _RequestState(calls={}, usage_before=dataclasses.replace(reply.usage))
        reply.usage.requests += 1
        reply.finish_reason = None
        try:
            async with _closing(self.transport.stream(request)) as stream:
                async for event in stream:
                    self._apply(reply, state, event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail_request(reply, f"The model request failed: {_describe(exc)}")
            return False
        if not state.completed:
            self._fail_request(reply, "The model's response broke off before it was complete.")
            return False
        if state.finish_reason is FinishReason.ERROR:
            self._fail_request(reply, "The model reported an error and stopped.")
            return False
        return True

    def _fail_request(self, reply: Message, error: str) -> None:
        self._end_open_calls(reply, "Not run: the model's response failed.")
        self._finish(reply, MessageStatus.ERROR, error)

    def _clear_status(self, reply: Message) -> None:
        if reply.status_text is not None:
            reply.status_text = None
            self._notify(MessageUpdated(reply))

    def _apply(self, reply: Message, state: _RequestState, event: StreamEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._clear_status(reply)
                self._append_text(reply, TextPart, text)
            case ToolCallDelta(tool_call_id=call_id, delta=delta):
                part = self._call(state, call_id)
                part.feed_arguments(delta)
                if self._subscribers:
                    patches = part.streaming_arguments.last_patches
                    self._notify(ToolCallArgumentsChanged(reply, part, delta, patches))
            case ReasoningDelta(text=text, provider=provider, provider_data=provider_data):
                self._clear_status(reply)
                reasoning = self._append_text(reply, ReasoningPart, text)
                if provider_data is not None:
                    reasoning.provider, reasoning.provider_data = provider, provider_data
            case StatusUpdate(text=text):
                reply.status_text = text or None
                self._notify(MessageUpdated(reply))
            case ToolCallStarted(tool_call_id=call_id, tool_name=name, arguments=arguments):
                self._clear_status(reply)
                if not call_id or call_id in state.calls or reply.tool_call(call_id) is not None:
                    raise StreamProtocolError(
                        f"the transport started a tool call with a missing or repeated id {call_id!r}"
                    )
                complete = arguments is not None
                part = ToolCallPart(
                    call_id,
                    name,
                    arguments or "",
                    state=ToolCallState.PENDING if complete else ToolCallState.STREAMING,
                    provider_executed=event.provider_executed,
                    provider=event.provider,
                    provider_data=event.provider_data,
                )
                state.calls[call_id] = part
                reply.parts.append(part)
                self._notify(PartAdded(reply, len(reply.parts) - 1, part))
            case ToolCallArgumentsDone(tool_call_id=call_id):
                part = self._call(state, call_id)
                if part.state is ToolCallState.STREAMING:
                    self._set_state(reply, part, ToolCallState.PENDING)
            case ToolApprovalRequested(tool_call_id=call_id, reason=reason):
                part = self._call(state, call_id)
                part.approval_requested_by_transport = True
                part.approval_reason = reason or part.approval_reason
                self._notify(ToolCallUpdated(reply, part))
            case ToolProgressUpdate(tool_call_id=call_id, fraction=fraction, message=message):
                part = self._call(state, call_id)
                if not part.state.terminal:
                    part.provider_executed = True
                    if part.state is not ToolCallState.RUNNING:
                        part.state = ToolCallState.RUNNING
                        part.run_started_at = time.time()
                    part.progress = ToolCallProgress(fraction, message)
                    self._notify(ToolCallUpdated(reply, part))
            case ProviderToolResult(tool_call_id=call_id, outcome=outcome):
                part = self._call(state, call_id)
                part.provider_executed = True
                if event.provider_data is not None:
                    part.provider, part.provider_data = event.provider, event.provider_data
                part.finish(ToolCallState.COMPLETED if outcome.ok else ToolCallState.FAILED, outcome)
                self._notify(ToolCallUpdated(reply, part))
            case UsageUpdate():
                before = state.usage_before
                reply.usage = Usage(
                    before.input_tokens + event.input_tokens,
                    before.output_tokens + event.output_tokens,
                    before.cached_tokens + event.cached_tokens,
                    before.reasoning_tokens + event.reasoning_tokens,
                    reply.usage.requests,
                )
                self._notify(MessageUpdated(reply))
            case ResponseCompleted(finish_reason=finish_reason):
                state.finish_reason = reply.finish_reason = FinishReason(finish_reason)
                for part in state.calls.values():
                    if part.state is ToolCallState.STREAMING:
                        self._set_state(reply, part, ToolCallState.PENDING)
                self._notify(MessageUpdated(reply))
            case ResponseStarted():
                pass
            case _:
                raise StreamProtocolError(f"the transport yielded {event!r}, which is not a stream event")

    def _append_text(
        self, reply: Message, kind: type[TextPart] | type[ReasoningPart], text: str
    ) -> TextPart | ReasoningPart:
        parts = reply.parts
        last = parts[-1] if parts else None
        if type(last) is kind:
            last.append(text)
            if self._subscribers:
                self._notify(TextAppended(reply, len(parts) - 1, text))
            return last
        part = kind(text)
        parts.append(part)
        self._notify(PartAdded(reply, len(parts) - 1, part))
        return part

    @staticmethod
    def _call(state: _RequestState, call_id: str) -> ToolCallPart:
        part = state.calls.get(call_id)
        if part is None:
            raise StreamProtocolError(f"the transport sent an event for tool call {call_id!r}, which it never started")
        return part

    def _set_state(self, reply: Message, part: ToolCallPart, new_state: ToolCallState) -> None:
        part.state = new_state
        self._notify(ToolCallUpdated(reply, part))

    def _end(self, reply: Message, part: ToolCallPart, state: ToolCallState, outcome: ToolOutcome) -> None:
        part.finish(state, outcome)
        self._notify(ToolCallUpdated(reply, part))

    def _end_open_calls(self, reply: Message, message: str) -> None:
        for part in reply.tool_calls:
            if not part.state.terminal:
                self._end(reply, part, ToolCallState.CANCELLED, ToolOutcome.failure(message, retryable=True))

    def _close_unanswered_calls(self, message: str) -> None:
        """Gives every call in the history an outcome, so no provider ever sees a call without a result."""
        for reply in self._messages:
            self._end_open_calls(reply, message)

    # --- one round of tool calls ----------------------------------------------------------------------------------

    async def _run_round(self, reply: Message, calls: list[ToolCallPart]) -> str | None:
        """Decides, approves and runs the calls of one reply. Returns an error that ends the turn, or ``None``."""
        prepared: list[_PreparedCall] = []
        unknown: list[str] = []
        for part in calls:
            if part.state is ToolCallState.STREAMING:
                self._set_state(reply, part, ToolCallState.PENDING)
            found = self.tools.get(part.tool_name)
            if found is None:
                unknown.append(part.tool_name)
                available = ", ".join(self.tools.names()) or "none"
                outcome = ToolOutcome.failure(
                    f"There is no tool named {part.tool_name!r}. Available tools: {available}.", retryable=True
                )
                self._end(reply, part, ToolCallState.FAILED, outcome)
                continue
            prepared.append(await self._prepare(reply, part, found))
        if unknown and self.options.terminate_on_unknown_calls:
            for call in prepared:
                self._end(
                    reply,
                    call.part,
                    ToolCallState.CANCELLED,
                    ToolOutcome.failure("Not run: the turn ended because the model called an unknown tool."),
                )
            names = ", ".join(repr(name) for name in unknown)
            return f"The model called a tool that is not registered ({names}), and terminate_on_unknown_calls is on."
        concurrent = [c for c in prepared if self.options.concurrent_tools and not c.tool.definition.sequential]
        alone = [c for c in prepared if c not in concurrent]
        if concurrent:
            await asyncio.gather(*(self._settle(reply, call) for call in concurrent))
        for call in alone:
            await self._settle(reply, call)
        return None

    async def _prepare(self, reply: Message, part: ToolCallPart, tool: Tool) -> _PreparedCall:
        def on_progress(fraction: float | None, message: str | None) -> None:
            if part.state is ToolCallState.RUNNING:
                part.progress = ToolCallProgress(fraction, message)
                self._notify(ToolCallUpdated(reply, part))

        invocation = ToolInvocation(
            tool_call_id=part.tool_call_id,
            tool_name=tool.name,
            arguments=part.arguments,
            conversation_id=self.conversation_id,
            message_id=reply.id,
            progress=ToolProgress(on_progress),
            context=self.context,
        )
        needs_decision = part.approval_requested_by_transport
        question = part.approval_reason
        if not needs_decision:
            verdict = await self.approval_policy.requires_approval(tool.definition, invocation)
            if verdict:
                needs_decision = True
                if isinstance(verdict, str):
                    question = verdict
        waiter = None
        if needs_decision:
            part.approval_reason = question or _default_question(tool, part)
            future: asyncio.Future[tuple[ApprovalDecision, str | None]] = asyncio.get_running_loop().create_future()
            waiter = _Waiter(future, part)
            with self._lock:
                self._waiters[part.tool_call_id] = waiter
            self._set_state(reply, part, ToolCallState.AWAITING_APPROVAL)
        return _PreparedCall(part, tool, invocation, waiter)

    async def _settle(self, reply: Message, call: _PreparedCall) -> None:
        part = call.part
        try:
            if call.waiter is not None:
                try:
                    decision, reason = await call.waiter.future
                finally:
                    with self._lock:
                        self._waiters.pop(part.tool_call_id, None)
                part.decision = decision.value
                part.decision_reason = reason
                self.approval_policy.record_decision(call.tool.definition, call.invocation, decision)
                if decision is ApprovalDecision.REJECTED:
                    told = "The person declined this call, so nothing was done"
                    told += f". Their reason: {reason}" if reason else "."
                    self._end(reply, part, ToolCallState.REJECTED, ToolOutcome.failure(told, retryable=False))
                    return
            part.run_started_at = time.time()
            self._set_state(reply, part, ToolCallState.RUNNING)
            outcome = await self._invoke(call)
            self._end(reply, part, ToolCallState.COMPLETED if outcome.ok else ToolCallState.FAILED, outcome)
        except asyncio.CancelledError:
            if not part.state.terminal:
                ran = part.state is ToolCallState.RUNNING
                message = "Stopped by the person before it finished." if ran else "Stopped before it ran."
                self._end(reply, part, ToolCallState.CANCELLED, ToolOutcome.failure(message, retryable=True))
            raise

    async def _invoke(self, call: _PreparedCall) -> ToolOutcome:
        run = call.tool.invoke(call.invocation, include_detailed_errors=self.options.include_detailed_errors)
        timeout = self.options.tool_timeout
        if timeout is None:
            return await run
        try:
            return await asyncio.wait_for(run, timeout)
        except asyncio.TimeoutError as exc:
            return ToolOutcome.failure(
                f"The tool {call.tool.name} did not finish within {timeout:g} seconds.", retryable=True, error=exc
            )

    # --- approval -------------------------------------------------------------------------------------------------

    def approve(self, tool_call_id: str, decision: ApprovalDecision | str, reason: str | None = None) -> None:
        """Decides on a call that waits for approval. Safe from any thread; returns at once.

        Args:
            tool_call_id: The call's id.
            decision: ``approved`` (run it once), ``approved_always`` (run it, and don't ask again for this tool in
                this session) or ``rejected`` (don't run it; the model is told the person declined).
            reason: Why, told to the model with a rejection.

        Raises:
            ApprovalError: The call is unknown, not waiting, or already decided; or the decision is not one of the
                three. Nothing runs.
        """
        try:
            chosen = ApprovalDecision(decision)
        except ValueError:
            raise ApprovalError(
                f"unknown decision {decision!r}: use 'approved', 'approved_always' or 'rejected'"
            ) from None
        if reason is not None and not isinstance(reason, str):
            raise ApprovalError(f"the reason must be text, not {type(reason).__name__}")
        with self._lock:
            waiter = self._waiters.get(tool_call_id)
            if waiter is None or waiter.decided:
                raise ApprovalError(self._why_not_waiting(tool_call_id, waiter))
            waiter.decided = True
        future = waiter.future
        loop = future.get_loop()

        def resolve() -> None:
            if not future.done():
                future.set_result((chosen, reason or None))

        if _running_loop() is loop:
            resolve()
        else:
            loop.call_soon_threadsafe(resolve)

    def _why_not_waiting(self, tool_call_id: str, waiter: _Waiter | None) -> str:
        if waiter is not None:
            return f"tool call {tool_call_id!r} ({waiter.part.tool_name}) was already decided"
        found = self.find_tool_call(tool_call_id)
        if found is None:
            return f"there is no tool call {tool_call_id!r} in this conversation"
        _, part = found
        if part.decision is not None:
            return f"tool call {tool_call_id!r} ({part.tool_name}) was already decided: {part.decision}"
        return f"tool call {tool_call_id!r} ({part.tool_name}) is not waiting for approval: it is {part.state.value}"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _person_facing_error(part: ToolCallPart) -> str:
    outcome = part.outcome
    if outcome is None:
        return "failed"
    if outcome.error is not None:
        return f"{outcome.error.type}: {outcome.error.message}"
    return outcome.message or "failed"


def _default_question(tool: Tool, part: ToolCallPart) -> str:
    label = tool.definition.title or tool.name
    arguments = json.dumps(part.parsed_arguments, ensure_ascii=False, separators=(", ", ": "))
    if len(arguments) > 200:
        arguments = arguments[:199] + "…"
    return f"Allow {label} to run with {arguments}?"


@contextlib.asynccontextmanager
async def _closing(stream: AsyncIterator[StreamEvent]) -> AsyncIterator[AsyncIterator[StreamEvent]]:
    """Closes a transport's stream however the consumer leaves it (done, failed or cancelled)."""
    try:
        yield stream
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
