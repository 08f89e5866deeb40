"""One round of tool calls: resolve each call's tool, check its arguments, ask for approval, run, record.

A round owns its calls from the moment the model's response is complete until each has an outcome. Every call
runs as its own task, so one call can be cancelled while its siblings go on; a stop cancels them all. Arguments are
read once, from the parse the card shows: what a person approves is what runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from ai_widgets._safe import UnsafeValueError, checked_json, redact, safe_text
from ai_widgets._threads import running_loop
from ai_widgets.approval import ApprovalDecision, ApprovalError, ApprovalPolicy
from ai_widgets.changes import LATE_PREVIEW_CHARS, ToolCallStraggling, ToolCallUpdated
from ai_widgets.messages import (
    InputRequest,
    InputResponse,
    InputResponseError,
    Message,
    ToolCallPart,
    ToolCallProgress,
    ToolCallState,
)
from ai_widgets.messages._call_log import kept_log
from ai_widgets.messages._questions import SamplingDeclinedError, SamplingReply, SamplingRequest, checked_response
from ai_widgets.options import SessionOptions
from ai_widgets.session._call import Asking, Call, RunModel, set_on_its_loop
from ai_widgets.session._calls import Notify, move_call, reply_in_progress
from ai_widgets.session._unasked import UnaskedRule
from ai_widgets.tools import NobodyToAskError, Tool, ToolDefinition, ToolInvocation, ToolOutcome, ToolProgress, ToolRisk

__all__ = ["RoundInterrupted", "ToolRound", "person_facing_error"]

logger = logging.getLogger("ai_widgets")

Resolve = Callable[[str], "Tool | None"]

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
TOOL_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class RoundInterrupted(Exception):
    """A kernel interrupt reached a tool running on the loop's thread; the turn ends as stopped."""


class ToolRound:
    """The calls of one model response that the session runs itself, and what a running call asks the person: input
    its server asks for (``awaiting_input``, answered by ``respond``) and leave to run the session's model for its
    server (sampling: ``awaiting_approval`` while it runs, decided by ``approve``).

    Args:
        reply: The reply the calls belong to.
        notify: Tells the session's observers about each change.
        policy: Decides which calls need a person.
        options: How calls run (concurrency, timeout, executor, detailed errors).
        conversation_id: Handed to each invocation.
        context: The application's object, handed to each invocation.
        run_model: Runs the session's model for a call's sampling request; ``None``: a call cannot.
        sampling_allowed: The tools whose sampling a person allowed always (kept by the session across rounds).
        remote_schemas: The schemas edits of provider-run calls must match, by call id (where the provider gave one).
        unasked: The session's switch to run calls without asking (``ChatSession.run_unasked``), or ``None``. A call
            the policy would ask about runs unasked when its tool's ``unasked`` or this rule gives a reason, and
            is marked with it (``unasked_reason``); a call its transport paused for a decision still asks.

    A provider-run call is in a round only when the provider paused for the person's decision on it: it is asked
    about like any other (a person's "allow always" for its tool answers later ones unasked), never run here, and
    once allowed it is ``running`` until the provider's result arrives with the turn's next response.
    """

    def __init__(
        self,
        reply: Message,
        notify: Notify,
        *,
        policy: ApprovalPolicy,
        options: SessionOptions,
        conversation_id: str | None,
        context: Any,
        run_model: RunModel | None = None,
        sampling_allowed: set[str] | None = None,
        remote_schemas: Mapping[str, dict[str, Any]] | None = None,
        unasked: UnaskedRule | None = None,
    ) -> None:
        self.reply = reply
        self._unasked = unasked
        self._remote_schemas = remote_schemas or {}
        self._run_model = run_model
        self._sampling_allowed = set() if sampling_allowed is None else sampling_allowed
        self._notify = notify
        self._policy = policy
        self._options = options
        self._conversation_id = conversation_id
        self._context = context
        self._calls: dict[str, Call] = {}
        self._lock = threading.Lock()
        self.unknown: list[str] = []
        self.interrupted = False

    # --- preparing ------------------------------------------------------------------------------------------------

    async def prepare(self, parts: Iterable[ToolCallPart], resolve: Resolve, *, available: Iterable[str]) -> None:
        """Resolves, checks and asks about each call; calls that cannot run get their failure now.

        Args:
            parts: The calls to run (none of them finished; provider-run ones wait for a decision).
            resolve: Finds a tool by the name the model used; ``None`` when there is none.
            available: The names the model was offered, for the message about an unknown tool.
        """
        offered = list(available)
        for part in parts:
            if part.state is ToolCallState.STREAMING:
                move_call(self._notify, self.reply, part, ToolCallState.PENDING)
            if part.provider_executed:  # its arguments are the provider's to check; an edit is checked on approve
                await self._ask(part, remote_tool(part.tool_name, self._remote_schemas.get(part.tool_call_id)))
                continue
            found = resolve(part.tool_name)
            if found is None:
                self.unknown.append(part.tool_name)
                names = ", ".join(offered) or "none (tools are off for this request)"
                outcome = ToolOutcome.failure(
                    f"There is no tool named {part.tool_name!r}. Available tools: {names}.", retryable=True
                )
                move_call(self._notify, self.reply, part, ToolCallState.FAILED, outcome)
                continue
            checked = self._check_arguments(part, found)
            if checked is not None:
                move_call(self._notify, self.reply, part, ToolCallState.FAILED, checked)
                continue
            await self._ask(part, found)

    def _check_arguments(self, part: ToolCallPart, tool: Tool) -> ToolOutcome | None:
        """A failure for arguments that are not a complete, strict JSON object matching the tool, before anyone is
        asked and before anything runs."""
        parser = part.streaming_arguments
        if part.arguments.strip() and (parser.error is not None or not parser.complete):
            problem = parser.error or "the JSON object broke off before its closing brace"
            return ToolOutcome.failure(
                f"The arguments for {tool.name} are not valid JSON ({problem}). Send a JSON object that matches the "
                "tool's parameters, each key once.",
            )
        bound = tool.bind(part.parsed_arguments)
        return bound if isinstance(bound, ToolOutcome) else None

    async def _ask(self, part: ToolCallPart, tool: Tool) -> None:
        call = Call(part, tool, self._invocation(part, tool))
        call.invocation.can_ask(
            functools.partial(self.wait_for_person, call),
            functools.partial(self.sample, call),
            functools.partial(self.approval_while_running, call),
        )
        self._calls[part.tool_call_id] = call
        needs_decision = part.approval_requested_by_transport
        if part.provider_executed and self._allowed_always(tool):
            needs_decision = False  # the person allowed this remote tool always: its pauses are answered unasked
        question = part.approval_reason
        if not needs_decision and not part.provider_executed:
            try:
                verdict = await self._policy.requires_approval(tool.definition, call.invocation)
            except Exception as exc:
                del self._calls[part.tool_call_id]
                outcome = ToolOutcome.failure(
                    f"Not run: the approval policy failed for {tool.name}.", retryable=False, error=exc
                )
                move_call(self._notify, self.reply, part, ToolCallState.FAILED, outcome)
                return
            spared = self._unasked_reason(tool.definition) if verdict else None
            if spared is not None:
                part.unasked_reason = spared  # marked: the card and the transcript say it ran without asking
            elif verdict:
                needs_decision = True
                if isinstance(verdict, str):
                    question = verdict
        if needs_decision:
            part.approval_reason = question or f"Allow {tool.definition.title or tool.name}?"
            call.decision = asyncio.get_running_loop().create_future()
            move_call(self._notify, self.reply, part, ToolCallState.AWAITING_APPROVAL)
        elif self._allowed_always(tool):
            # It runs unasked because of an earlier "allow always": recorded, so the card can say so.
            part.decision = ApprovalDecision.APPROVED_ALWAYS.value
            part.decision_remembered = True

    def _unasked_reason(self, definition: ToolDefinition) -> str | None:
        """Why a call of ``definition`` runs without asking (its own ``unasked``, else the session's switch)."""
        if definition.unasked is not None:
            return definition.unasked
        return None if self._unasked is None else self._unasked.reason_for(definition)

    def _allowed_always(self, tool: Tool) -> bool:
        """Whether a call of a tool that asks by default runs unasked because a person chose "allow always"."""
        definition = tool.definition
        if not (definition.risk is ToolRisk.DESTRUCTIVE or definition.requires_approval):
            return False
        remembered = getattr(self._policy, "is_allowed_always", None)
        try:
            return callable(remembered) and remembered(definition.name) is True
        except Exception:
            return False

    def _invocation(self, part: ToolCallPart, tool: Tool) -> ToolInvocation:
        reply, notify = self.reply, self._notify

        def on_progress(fraction: float | None, message: str | None) -> None:
            # Progress of a call that has ended (a thread still reporting after a stop) changes nothing.
            if part.state is ToolCallState.RUNNING and reply_in_progress(reply):
                part.progress = ToolCallProgress(fraction, message)
                notify(ToolCallUpdated(reply, part))

        def on_log(text: str) -> None:
            # A line logged while the call waits for the person, too; none after it ended.
            if not part.state.terminal and reply_in_progress(reply):
                part.log_lines = kept_log(part.log_lines, text)
                notify(ToolCallUpdated(reply, part))

        return ToolInvocation(
            tool_call_id=part.tool_call_id,
            tool_name=tool.name,
            arguments=part.arguments or "{}",
            conversation_id=self._conversation_id,
            message_id=self.reply.id,
            progress=ToolProgress(on_progress, on_log=on_log),
            context=self._context,
            parsed_arguments=part.parsed_arguments,
        )

    # --- running --------------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Waits for the decisions and runs the approved calls: concurrently, except tools marked sequential.

        A stop (this task cancelled) cancels every call, which each record, and then propagates.
        """
        loop = asyncio.get_running_loop()
        together: list[Call] = []
        alone: list[Call] = []
        for call in self._calls.values():
            concurrent = self._options.concurrent_tools and not call.tool.definition.sequential
            (together if concurrent else alone).append(call)
        try:
            for call in together:
                call.task = loop.create_task(self._settle(call))
            if together:
                await asyncio.wait([c.task for c in together if c.task is not None])
                self._record_unstarted(together)
            for call in alone:
                if call.part.state.terminal:  # cancelled while it waited for its turn
                    continue
                call.task = loop.create_task(self._settle(call))
                await asyncio.wait([call.task])
                self._record_unstarted([call])
            if self.interrupted:
                raise RoundInterrupted("the kernel was interrupted while a tool ran")
        except BaseException:
            await self.abort("Stopped by the person before it finished.", "Stopped before it ran.")
            raise

    async def abort(
        self, running_message: str, waiting_message: str, *, unstarted: ToolCallState = ToolCallState.CANCELLED
    ) -> None:
        """Cancels every call that has not finished (a stop, an interrupt) and waits until each has recorded it.

        Args:
            running_message: The outcome of a call cut short while it ran.
            waiting_message: The outcome of a call that had not started.
            unstarted: The state of a call that had not started: ``cancelled`` when a person stopped the turn,
                ``skipped`` when the turn ended for another reason.
        """
        tasks = []
        for call in self._calls.values():
            if call.part.state.terminal:
                continue
            if call.task is None:
                self._end(call, unstarted, waiting_message)
                continue
            if not call.task.done():
                ran = call.sampling or call.part.state in (ToolCallState.RUNNING, ToolCallState.AWAITING_INPUT)
                call.cancel_reason = running_message if ran else waiting_message
                self._withdraw(call)
                call.invocation.cancelled.set()
                call.task.cancel()
                tasks.append(call.task)
        if tasks:
            # Shielded: a second stop while calls record their cancellation must not leave one without an outcome.
            await asyncio.shield(asyncio.wait(tasks))
        self._record_unstarted(self._calls.values())

    def _record_unstarted(self, calls: Iterable[Call]) -> None:
        """Records the cancel of a call whose task was cancelled before its first step: its coroutine never ran, so
        it could not record it itself (and the call must never run later). A provider-run call that was allowed is
        left running: the provider runs it, and the turn's next response brings its result."""
        for call in calls:
            part = call.part
            if part.provider_executed and part.state is ToolCallState.RUNNING:
                continue
            if call.task is not None and call.task.done() and not part.state.terminal:
                self._end(call, ToolCallState.CANCELLED, call.cancel_reason or "Stopped before it ran.")

    async def _settle(self, call: Call) -> None:
        try:
            await self._run_call(call)
        finally:
            self._withdraw(call)  # a question still open when the call ends (a timeout, a fault) is answered "cancel"

    async def _run_call(self, call: Call) -> None:
        part = call.part
        try:
            if call.decision is not None:
                decision, reason = await call.decision
                part.decision = decision.value
                part.decision_reason = reason
                self._policy.record_decision(call.tool.definition, call.invocation, decision)
                if decision is ApprovalDecision.REJECTED:
                    told = "The person declined this call, so nothing was done"
                    told += f". Their reason: {reason}" if reason else "."
                    move_call(
                        self._notify,
                        self.reply,
                        part,
                        ToolCallState.REJECTED,
                        ToolOutcome.failure(told, retryable=False),
                    )
                    return
            move_call(self._notify, self.reply, part, ToolCallState.RUNNING)
            if part.provider_executed:
                return  # allowed: the provider runs it, and its result comes with the next response
            outcome = await self._invoke(call)
            if part.state is ToolCallState.REJECTED:  # declined while it ran (ask_approval): ended already
                return
        except asyncio.CancelledError:
            account = call.invocation.stopped_outcome
            if call.cancel_reason is None and account is not None and not part.state.terminal:
                # The tool stopped itself and said how (KernelTools' timeout): a stop, with the tool's account.
                self._end(call, ToolCallState.CANCELLED, account.message or "Stopped.", account)
                self._follow_thread(call)
                return
            if call.cancel_reason is None:
                # Nobody cancelled this call: the tool raised CancelledError itself. That is its failure, not a stop.
                outcome = ToolOutcome.failure(
                    f"The tool {call.tool.name} failed: it raised CancelledError.",
                    retryable=True,
                    error="CancelledError raised by the tool itself",
                )
            else:
                if not part.state.terminal:
                    message = call.cancel_reason
                    if part.state is ToolCallState.RUNNING and call.tool.is_sync:
                        message += " Its thread had not returned yet; whatever it returns is discarded."
                    self._end(call, ToolCallState.CANCELLED, message, account)
                self._follow_thread(call)
                return
        except Exception as exc:  # a bug of ours or of the policy: this call fails, never the turn or its siblings
            logger.exception("ai_widgets: running tool call %s failed", part.tool_call_id)
            outcome = ToolOutcome.failure(f"The tool {call.tool.name} could not be run.", retryable=False, error=exc)
            if part.state is ToolCallState.AWAITING_APPROVAL:
                self._end(call, ToolCallState.SKIPPED, outcome.message or "Not run.")
                return
        except (KeyboardInterrupt, SystemExit):
            # A kernel interrupt while the tool ran on the loop's thread: the call ends, and so does the turn.
            self.interrupted = True
            if not part.state.terminal:
                self._end(call, ToolCallState.CANCELLED, "Interrupted: the kernel was interrupted while it ran.")
            self._follow_thread(call)
            raise
        state = ToolCallState.COMPLETED if outcome.ok else ToolCallState.FAILED
        move_call(self._notify, self.reply, part, state, outcome)
        self._follow_thread(call)

    def _follow_thread(self, call: Call) -> None:
        """Once a sync call has ended while its thread still runs (cancelled, stopped, timed out): tells the
        observers it is stopping, and later what the thread returned or raised, which is discarded. The call's
        record is not touched: it keeps the state and outcome it ended with."""
        future, call.abandoned = call.abandoned, None
        if future is None or not call.part.state.terminal:
            return
        notify, reply, part = self._notify, self.reply, call.part
        loop = asyncio.get_running_loop()
        notify(ToolCallStraggling(reply, part, "stopping"))

        def told(phase: Literal["returned", "raised"], preview: str) -> None:
            notify(ToolCallStraggling(reply, part, phase, preview))

        def ended(done: concurrent.futures.Future[Any]) -> None:
            # On the tool's thread as it ends (or here, if it already has): the preview is made there, off the loop.
            if done.cancelled():
                return
            try:
                phase, preview = late_result(done)
            except BaseException:  # never into the thread's callback machinery
                logger.exception("ai_widgets: describing the late result of tool call %s failed", part.tool_call_id)
                # Still said: a call shown stopping must not say so for ever.
                phase, preview = ("raised" if done.exception() else "returned"), "(what it did cannot be shown)"
            if loop.is_closed():
                return
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is left to tell
                loop.call_soon_threadsafe(told, phase, preview)

        future.add_done_callback(ended)

    async def _invoke(self, call: Call) -> ToolOutcome:
        run = call.tool.invoke(
            call.invocation,
            include_detailed_errors=self._options.include_detailed_errors,
            executor=self._options.tool_executor,
        )
        timeout = self._options.tool_timeout
        if timeout is None:
            return await run
        try:
            return await asyncio.wait_for(run, timeout)
        except asyncio.TimeoutError as exc:
            call.invocation.cancelled.set()
            message = f"The tool {call.tool.name} did not finish within {timeout:g} seconds."
            detail = message
            if call.tool.is_sync:
                detail += " Its thread is still running (it was told to stop through invocation.cancelled)."
                logger.warning(
                    "ai_widgets: tool call %s (%s) timed out; its thread is still running",
                    call.part.tool_call_id,
                    call.tool.name,
                )
            return ToolOutcome.failure(message, retryable=True, error=detail or exc)

    def _end(self, call: Call, state: ToolCallState, message: str, account: ToolOutcome | None = None) -> None:
        """Ends a call that did not finish; ``account``: the tool's own word on where it stopped (its message is
        added to ``message``, its cell kept)."""
        if account is not None and account.message and account.message != message:
            message = f"{message} {account.message}"
        cell = None if account is None else account.cell
        move_call(self._notify, self.reply, call.part, state, ToolOutcome.failure(message, retryable=True, cell=cell))

    # --- decisions from a person ----------------------------------------------------------------------------------

    def waiting(self) -> list[ToolCallPart]:
        """The calls waiting for a decision."""
        with self._lock:
            return [c.part for c in self._calls.values() if c.decision is not None and not c.decided]

    def has(self, tool_call_id: str) -> bool:
        """Whether this round holds the call."""
        return tool_call_id in self._calls

    def approve(
        self, tool_call_id: str, decision: ApprovalDecision, reason: str | None, arguments: dict[str, Any] | None
    ) -> None:
        """Decides on a waiting call (any thread). Edited arguments are checked first; on error nothing changes.

        Raises:
            ApprovalError: The call is not waiting or was decided, or the edited arguments are invalid.
        """
        call = self._calls.get(tool_call_id)
        if arguments is not None:
            if decision is ApprovalDecision.REJECTED:
                raise ApprovalError("edited arguments go with an approval, not a rejection")
            if decision is ApprovalDecision.APPROVED_ALWAYS:
                # The person decided on a changed call: that says nothing about the model's later calls of the tool.
                raise ApprovalError(
                    "a call with edited arguments can be allowed once ('approved'), not always: allowing always "
                    "would let every later call of the tool run unasked with whatever arguments the model sends"
                )
            if call is None:
                raise ApprovalError(f"tool call {tool_call_id!r} is not waiting for approval")
            if call.sampling:
                raise ApprovalError("a server's request to run the model is allowed or declined as it is, not edited")
            arguments = self._checked_edit(call, arguments)
        with self._lock:
            if call is None or call.decision is None or call.decided or call.part.state.terminal:
                raise ApprovalError(self._why_not_waiting(tool_call_id, call))
            call.decided = True
        if arguments is not None:
            call.part.edited_arguments = arguments
            call.invocation.edited = True
            call.invocation.parsed_arguments = arguments
            call.invocation.arguments = json.dumps(arguments, ensure_ascii=False)
        self._resolve(call, (decision, reason))

    def cancel(self, tool_call_id: str, reason: str | None) -> bool:
        """Cancels one call, waiting or running (any thread); ``False`` when it is not this round's or has ended."""
        call = self._calls.get(tool_call_id)
        if call is None or call.part.state.terminal:
            return False
        with self._lock:
            if call.cancel_reason is not None:
                return False
            told = "Cancelled by the person" + (f": {reason}" if reason else ".")
            call.cancel_reason = told
            call.decided = True
        call.invocation.cancelled.set()
        loop = self._loop(call)

        def cancel_now() -> None:
            if call.part.state.terminal:
                return
            if call.task is None:  # not started (a sequential call still queued): record it now
                self._end(call, ToolCallState.CANCELLED, told)
            else:
                self._withdraw(call)
                call.task.cancel()

        if running_loop() is loop:
            cancel_now()
        else:
            loop.call_soon_threadsafe(cancel_now)
        return True

    def _checked_edit(self, call: Call, arguments: object) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            raise ApprovalError(f"edited arguments must be a dict, not {type(arguments).__name__}")
        try:
            safe = checked_json(arguments, where="the edited arguments", finite=True)
        except UnsafeValueError as exc:
            raise ApprovalError(str(exc)) from None
        bound = call.tool.bind(safe)
        if isinstance(bound, ToolOutcome):
            raise ApprovalError(f"the edited arguments are invalid: {bound.message}")
        assert isinstance(safe, dict)
        return safe

    def _resolve(self, call: Call, result: tuple[ApprovalDecision, str | None]) -> None:
        assert call.decision is not None
        set_on_its_loop(call.decision, result)

    def _loop(self, call: Call) -> asyncio.AbstractEventLoop:
        if call.decision is not None:
            return call.decision.get_loop()
        if call.task is not None:
            return call.task.get_loop()
        return asyncio.get_event_loop()

    def _why_not_waiting(self, tool_call_id: str, call: Call | None) -> str:
        if call is None:
            return f"tool call {tool_call_id!r} is not waiting for approval"
        part = call.part
        if part.decision is not None or call.decided:
            return f"tool call {tool_call_id!r} ({part.tool_name}) was already decided"
        return f"tool call {tool_call_id!r} ({part.tool_name}) is not waiting for approval: it is {part.state.value}"

    # --- what a running call asks the person ---------------------------------------------------------------------

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


def remote_tool(name: str, schema: dict[str, Any] | None) -> Tool:
    """What a round knows of a tool the provider runs, to ask about its call: its name, that it asks, and the schema
    an edit of its arguments must match (any object where the provider gave none). It is never invoked."""
    parameters = schema if schema is not None else {"type": "object"}
    definition = ToolDefinition(
        name=name if TOOL_NAME.fullmatch(name) else TOOL_NAME_CHARS.sub("_", name)[:64] or "remote_tool",
        description="A tool the remote agent runs itself.",
        parameters=parameters,
        requires_approval=True,
    )
    return Tool(definition, never_run)


def never_run(invocation: ToolInvocation) -> None:
    raise AssertionError(f"the provider's tool {invocation.tool_name!r} is never run here")


def late_result(future: concurrent.futures.Future[Any]) -> tuple[Literal["returned", "raised"], str]:
    """What a given-up call's thread returned or raised, as a short text safe to show and keep: lone surrogates
    replaced, secrets redacted, at most ``LATE_PREVIEW_CHARS`` characters, and bounded work for any value."""
    error = future.exception()
    if error is not None:
        try:
            text = str(error)
        except Exception:
            text = "(its text could not be read)"
        name = type(error).__qualname__
        text = f"{name}: {text}" if text else name
        return "raised", clip(redact(safe_text(text[: LATE_PREVIEW_CHARS * 2])))
    value = future.result()
    if isinstance(value, ToolOutcome):
        if value.ok:
            text = value.text if value.value is None and value.text is not None else preview_value(value.value)
            if value.value is None and value.text is None and value.display is not None:
                text = value.display.text  # a figure, a frame: its text form
        else:
            text = f"a failure: {value.message or ''}"
    else:
        if asyncio.iscoroutine(value):
            value.close()  # never run: the call it belonged to has ended
            return "returned", "a coroutine (not run)"
        text = preview_value(value)
    return "returned", clip(redact(safe_text(text[: LATE_PREVIEW_CHARS * 2])))


def preview_value(value: Any) -> str:
    """The start of ``value`` as JSON (a string as itself), made as a result would be, and written only as far as
    the preview shows."""
    if isinstance(value, str):
        return value[: LATE_PREVIEW_CHARS * 2]
    try:
        plain = ToolOutcome.success(value).value
    except (UnsafeValueError, ValueError) as exc:
        try:  # plain data that only the conversion refused (a lone surrogate in a key): shown made safe
            plain = checked_json(value, where="the late result")
        except (UnsafeValueError, ValueError):
            return f"(a value that cannot be shown: {text_of(exc)})"
    except Exception as exc:  # a value whose own methods raise (its repr, its iteration)
        return f"(a {type(value).__qualname__} that cannot be shown: {type(exc).__qualname__})"
    if isinstance(plain, str):
        return plain[: LATE_PREVIEW_CHARS * 2]
    written: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).iterencode(plain):
        written.append(chunk)
        size += len(chunk)
        if size > LATE_PREVIEW_CHARS:
            break
    return "".join(written)


def text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return type(exc).__qualname__


def clip(text: str) -> str:
    return text if len(text) <= LATE_PREVIEW_CHARS else text[: LATE_PREVIEW_CHARS - 1] + "…"


def person_facing_error(part: ToolCallPart) -> str:
    """A failed call's error as a person should read it: the exception where there is one, secrets redacted."""
    outcome = part.outcome
    if outcome is None:
        return "failed"
    if outcome.error is not None:
        return redact(f"{outcome.error.type}: {outcome.error.message}")
    return redact(outcome.message or "failed")
