"""What a running call asks the person, for its round (:class:`~ai_widgets.session.ToolRound` is a
:class:`CallQuestions`): input its server asks for (``awaiting_input``, answered by ``respond``), and leave to run the
session's model for its server (sampling: ``awaiting_approval`` while it runs, decided by ``approve``)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._threads import running_loop
from ai_widgets.approval import ApprovalDecision, ApprovalPolicy
from ai_widgets.messages import InputRequest, InputResponse, InputResponseError, Message, ToolCallPart, ToolCallState
from ai_widgets.messages._questions import SamplingDeclinedError, SamplingReply, SamplingRequest, checked_response
from ai_widgets.session._calls import Notify, move_call
from ai_widgets.tools import NobodyToAskError, Tool, ToolInvocation, ToolOutcome

__all__ = ["Asking", "Call", "CallQuestions", "RunModel", "set_on_its_loop"]

#: Runs the session's model on a sampling request (the person has allowed it).
RunModel = Callable[[SamplingRequest], Awaitable[SamplingReply]]


@dataclass(eq=False)
class Asking:
    """One question a running call put to the person, until it is answered or withdrawn."""

    future: asyncio.Future[InputResponse]
    answered: bool = False  # an answer (or a withdrawal) was taken: a second one is refused


@dataclass
class Call:
    """One call of a round, from its approval to its outcome."""

    part: ToolCallPart
    tool: Tool
    invocation: ToolInvocation
    decision: asyncio.Future[tuple[ApprovalDecision, str | None]] | None = None
    decided: bool = False
    task: asyncio.Task[None] | None = None
    cancel_reason: str | None = field(default=None)  # set before the session cancels the call's task
    abandoned: concurrent.futures.Future[Any] | None = None  # a sync call's thread, given up while it still ran
    asking: Asking | None = None  # the question the call waits on (awaiting_input)
    ask_lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one question at a time
    sampling: bool = False  # waits in awaiting_approval while it runs: its server asks to use the model

    def __post_init__(self) -> None:
        self.invocation._on_abandoned = self._abandon

    def _abandon(self, future: concurrent.futures.Future[Any]) -> None:
        self.abandoned = future


class CallQuestions:
    """The questions of a round's running calls; the rest of the round is :class:`~ai_widgets.session.ToolRound`."""

    # Kept by ToolRound.
    reply: Message
    _notify: Notify
    _calls: dict[str, Call]
    _lock: threading.Lock
    _run_model: RunModel | None
    _sampling_allowed: set[str]
    _policy: ApprovalPolicy

    async def wait_for_person(self, call: Call, request: InputRequest) -> InputResponse:
        """Puts a running call's question to the person and waits for the answer: the one place a call waits for
        input (on the session's loop). The call is ``awaiting_input`` meanwhile, and running again after.

        Raises:
            NobodyToAskError: The call is not running (it ended, or is being cancelled).
        """
        async with call.ask_lock:
            part = call.part
            if part.state is not ToolCallState.RUNNING or call.cancel_reason is not None:
                raise NobodyToAskError(f"the tool {call.tool.name} asked for input when it was not running")
            asking = Asking(asyncio.get_running_loop().create_future())
            call.asking = asking
            part.input_request = request
            move_call(self._notify, self.reply, part, ToolCallState.AWAITING_INPUT)
            try:
                return await asking.future
            finally:
                call.asking = None
                if call.part.state is ToolCallState.AWAITING_INPUT:  # not if it ended meanwhile (a stop)
                    move_call(self._notify, self.reply, part, ToolCallState.RUNNING)

    def waiting_for_input(self) -> list[ToolCallPart]:
        """The calls waiting for the person's input."""
        return [c.part for c in self._calls.values() if c.asking is not None and not c.asking.answered]

    def respond(self, tool_call_id: str, action: object, content: object) -> None:
        """Answers a call's question (any thread). The answer is checked first; on error nothing changes.

        Raises:
            InputResponseError: The call is not this round's or not waiting for input, or the answer is invalid.
        """
        call = self._calls.get(tool_call_id)
        with self._lock:
            asking = None if call is None else call.asking
            request = None if call is None else call.part.input_request
            if call is None or asking is None or asking.answered or request is None:
                raise InputResponseError(self._why_not_asking(tool_call_id, call))
            response = checked_response(request, action, content)
            asking.answered = True
        self._settle_asking(asking, response)

    def _withdraw(self, call: Call) -> None:
        """Answers an open question ``cancel`` (the call is being cancelled, stopped, or has ended)."""
        asking = call.asking
        if asking is None:
            return
        with self._lock:
            if asking.answered:
                return
            asking.answered = True
        self._settle_asking(asking, InputResponse("cancel"))

    def _settle_asking(self, asking: Asking, response: InputResponse) -> None:
        set_on_its_loop(asking.future, response)

    def _why_not_asking(self, tool_call_id: str, call: Call | None) -> str:
        if call is None:
            return f"tool call {tool_call_id!r} is not waiting for input"
        part = call.part
        if part.state is ToolCallState.AWAITING_INPUT:
            return f"tool call {tool_call_id!r} ({part.tool_name}) was already answered"
        return f"tool call {tool_call_id!r} ({part.tool_name}) is not waiting for input: it is {part.state.value}"

    # --- approval asked for while the call runs ----------------------------------------------------------------------

    async def approval_while_running(self, call: Call, question: str) -> bool:
        """Asks the person to approve a running call (its tool learned only as it ran that it needs a decision): the
        call waits in ``awaiting_approval``, decided by ``approve`` like any call (an edit is checked against the
        tool's schema and put on the invocation), and runs again once allowed. A tool allowed always goes on unasked.

        Returns:
            Whether the call goes on; ``False`` when the person declined (the call has then ended ``rejected``).

        Raises:
            NobodyToAskError: The call is not running.
        """
        remembered = getattr(self._policy, "is_allowed_always", None)
        try:
            if callable(remembered) and remembered(call.tool.name, call.tool.definition) is True:
                call.part.decision, call.part.decision_remembered = ApprovalDecision.APPROVED_ALWAYS.value, True
                return True
        except Exception:  # a policy's own check that fails asks, as a policy that cannot say would
            pass
        async with call.ask_lock:
            part = call.part
            if part.state is not ToolCallState.RUNNING or call.cancel_reason is not None:
                raise NobodyToAskError(f"the tool {call.tool.name} asked for approval when it was not running")
            call.decision = asyncio.get_running_loop().create_future()
            call.decided = False
            part.approval_reason = question
            move_call(self._notify, self.reply, part, ToolCallState.AWAITING_APPROVAL)
            try:
                decision, reason = await call.decision
            finally:
                call.decision = None
            part.decision, part.decision_reason = decision.value, reason
            self._policy.record_decision(call.tool.definition, call.invocation, decision)
            if decision is ApprovalDecision.REJECTED:
                told = "The person declined this call, so nothing was done"
                told += f". Their reason: {reason}" if reason else "."
                outcome = ToolOutcome.failure(told, retryable=False)
                move_call(self._notify, self.reply, part, ToolCallState.REJECTED, outcome)
                return False
            move_call(self._notify, self.reply, part, ToolCallState.RUNNING)
            return True

    # --- sampling: a call's server asks to run the model ------------------------------------------------------------

    async def sample(self, call: Call, request: SamplingRequest) -> SamplingReply:
        """Runs the session's model on a running call's sampling request once the person allows it: the call waits
        in ``awaiting_approval`` meanwhile (``approval_reason`` is :meth:`SamplingRequest.question`), and runs again
        after. Allowed always, later requests of the same tool's calls run unasked.

        Raises:
            NobodyToAskError: The call is not running, or the session has no model to run.
            SamplingDeclinedError: The person declined.
        """
        if self._run_model is None:
            raise NobodyToAskError("this session has no transport, so it has no model to run for the tool")
        if call.tool.name not in self._sampling_allowed:
            decision, reason = await self._sampling_decision(call, request)
            if decision is ApprovalDecision.REJECTED:
                told = f"The person declined the request of {request.asker} to run the model"
                raise SamplingDeclinedError(told + (f": {reason}" if reason else "."))
            if decision is ApprovalDecision.APPROVED_ALWAYS:
                self._sampling_allowed.add(call.tool.name)
        return await self._run_model(request)

    async def _sampling_decision(self, call: Call, request: SamplingRequest) -> tuple[ApprovalDecision, str | None]:
        async with call.ask_lock:
            part = call.part
            if part.state is not ToolCallState.RUNNING or call.cancel_reason is not None:
                raise NobodyToAskError(f"the tool {call.tool.name} asked to run the model when it was not running")
            call.decision = asyncio.get_running_loop().create_future()
            call.decided, call.sampling = False, True
            part.approval_reason = request.question()
            move_call(self._notify, self.reply, part, ToolCallState.AWAITING_APPROVAL)
            try:
                return await call.decision
            finally:
                call.decision, call.sampling = None, False
                if call.part.state is ToolCallState.AWAITING_APPROVAL:  # not if it ended meanwhile (a stop)
                    move_call(self._notify, self.reply, part, ToolCallState.RUNNING)


def set_on_its_loop(future: asyncio.Future[Any], result: Any) -> None:
    """Sets ``future``'s result from any thread, unless it is done (a decision or answer that came too late)."""

    def settle() -> None:
        if not future.done():
            future.set_result(result)

    loop = future.get_loop()
    if running_loop() is loop:
        settle()
    else:
        loop.call_soon_threadsafe(settle)
