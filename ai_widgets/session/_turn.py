"""A turn and its lifecycle: request -> stream -> run tools -> request again, until the model answers.

The turn runs as a task. Its cleanup (every call given an outcome, the reply final, ``busy`` false) runs however
the task ends: finished, failed, stopped, interrupted, or cancelled before its first step, when no ``finally`` of
the coroutine would ever run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import pydantic

from ai_widgets._safe import redact
from ai_widgets._threads import running_loop
from ai_widgets.approval import ApprovalPolicy
from ai_widgets.changes import (
    BusyChanged,
    ContextCut,
    MessageFinished,
    MessageUpdated,
    PartChanged,
    PartsRemoved,
    SessionChange,
)
from ai_widgets.events import StreamEvent
from ai_widgets.messages import (
    ErrorKind,
    FinishReason,
    Message,
    MessageStatus,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
    TypedAnswer,
    Usage,
)
from ai_widgets.messages._typed_answer import AnswerState
from ai_widgets.messages._usage import format_usd
from ai_widgets.options import RequestOptions, SessionOptions, ToolChoice
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session._call import RunModel
from ai_widgets.session._calls import end_open_calls, move_call
from ai_widgets.session._context import (
    HistoryTokens,
    current_turn_start,
    fit_request,
    refit_request,
    request_tokens,
    too_long_error,
    window_of,
)
from ai_widgets.session._output import OutputSpec, OutputValidationError, describe_errors
from ai_widgets.session._reply import ReplyBuilder, StreamProtocolError
from ai_widgets.session._round import RoundInterrupted, ToolRound, person_facing_error
from ai_widgets.session._sampling import run_sampling
from ai_widgets.session._unasked import UnaskedRule
from ai_widgets.tools import ToolRegistry
from ai_widgets.transports._base import (
    ChatRequest,
    ContextTooLongError,
    Transport,
    TransportProfile,
    TurnAware,
    profile_of,
)

__all__ = ["LIMIT_NOT_RUN", "Turn", "TurnHost", "TurnSettings", "carry_over"]

logger = logging.getLogger("ai_widgets")

#: How the outcome of a call the round limit left unrun begins (it is told to the model as written).
LIMIT_NOT_RUN = "Not run: this turn reached its limit"
#: How many responses in a row may ask to continue with nothing for the session to settle before the turn ends in
#: error (a transport that would otherwise be asked again for ever).
MAX_IDLE_CONTINUES = 20
#: Seconds the session waits for a transport's ``turn_ended`` (it ends its provider's run there) before it goes on.
TURN_ENDED_TIMEOUT = 15.0


def carry_over(message: Message) -> list[ToolCallPart]:
    """New calls for the calls the round limit left unrun in ``message`` (a ``limit_reached`` reply), to run when
    the conversation resumes; none for any other message.

    The stopped reply keeps its record (a call's record never changes after its turn ended): each new call has a
    new id and the same tool and arguments, so every call the provider sees has one result.
    """
    if message.role is not Role.ASSISTANT or message.status is not MessageStatus.LIMIT_REACHED:
        return []
    carried = []
    for part in message.tool_calls:
        outcome = part.outcome
        if part.state is not ToolCallState.SKIPPED or part.provider_executed or outcome is None:
            continue
        if not (outcome.message or "").startswith(LIMIT_NOT_RUN):
            continue
        copy = ToolCallPart(
            f"call_{uuid.uuid4().hex[:12]}", part.tool_name, part.arguments, state=ToolCallState.PENDING
        )
        if part.approval_requested_by_transport:  # the transport wanted a person to decide: it still does
            copy.approval_requested_by_transport = True
            copy.approval_reason = part.approval_reason
        carried.append(copy)
    return carried


class TurnSettings(Protocol):
    """The settings a turn reads from its session as it goes (:class:`~ai_widgets.session.ChatSession`'s public
    attributes, which a person may change between requests)."""

    @property
    def transport(self) -> Transport | None: ...
    @property
    def tools(self) -> ToolRegistry: ...
    @property
    def approval_policy(self) -> ApprovalPolicy: ...
    @property
    def options(self) -> SessionOptions: ...
    @property
    def request_options(self) -> RequestOptions: ...
    @property
    def context(self) -> Any: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def unasked(self) -> UnaskedRule | None:
        """The session's switch to run calls without asking, or ``None`` (off)."""
        ...

    @property
    def sampling_allowed(self) -> set[str]:
        """The tools whose calls may run the model for their server unasked (a person allowed it always)."""
        ...


@dataclass(frozen=True, slots=True)
class TurnHost:
    """What a turn reaches of the session it runs in, built by the session for each turn: its settings, and the
    few things the turn does to the session, each a callable (the session never hands itself over)."""

    settings: TurnSettings
    #: The conversation so far, the turn's reply included (a new list).
    messages: Callable[[], list[Message]]
    #: Tells every observer of the session about a change.
    notify: Callable[[SessionChange], None]
    #: Waits until the reply, as it ended, is kept wherever the session keeps its conversation; a reply that could
    #: not be kept says so in its ``error``.
    save_reply: Callable[[Message], Awaitable[None]]
    #: Frees the session of the turn, which has ended (called once, after the turn said it ended).
    ended: Callable[[Turn], None]
    #: Records how a request was shortened to fit the model's context window (``None``: it carried everything),
    #: telling the observers when that changed.
    shortened: Callable[[ContextCut | None], None]
    #: Takes the messages sent while the turn runs (steering), to deliver at a tool boundary; none by default.
    take_steering: Callable[[], list[Message]] = list
    #: Adds a message to the conversation, telling the observers (a delivered message, the reply that follows it).
    append: Callable[[Message], None] = lambda message: None


class Turn:
    """One turn of a session: its reply, its task, the round of calls in flight, and how it ended.

    A message sent while the turn runs is delivered at its next tool boundary: the reply so far ends (completed),
    the message follows it in the conversation, and the turn goes on in a new reply after it (``reply`` is then that
    one; ``replies`` holds them all, oldest first).

    Args:
        host: What the turn reaches of the session it runs in.
        reply: The assistant message the turn fills (its first).
        output: What a typed answer must match (``send(..., output_type=...)``), or ``None``.
        estimates: The conversation's token estimates, kept by the session from turn to turn, by which each request
            is fitted to the model's context window; new ones by default.
    """

    def __init__(
        self,
        host: TurnHost,
        reply: Message,
        *,
        direct: bool = False,
        carried: bool = False,
        output: OutputSpec | None = None,
        estimates: HistoryTokens | None = None,
    ) -> None:
        self.host = host
        self.reply = reply
        self.replies = [reply]
        self.output = output
        self.estimates = HistoryTokens() if estimates is None else estimates
        self.direct = direct  # the reply's calls were made by a person (run_tool), not by a model: no requests
        self.carried = carried  # the reply starts with calls a limit left unrun: they run before the first request
        self.refused: list[str] = []  # the errors of this turn's answers that did not validate, oldest first
        self.remote_schemas: dict[str, dict[str, Any]] = {}  # what edits of provider-run calls must match, by id
        self.task: asyncio.Task[Message] | None = None
        self.round: ToolRound | None = None
        #: Whether the last response's provider run goes on after the session's round (``ResponseCompleted.continues``).
        self.continuing = False
        self.stop_requested = False
        self.ended = False

    # --- lifecycle --------------------------------------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop) -> asyncio.Task[Message]:
        """Creates the turn's task; its cleanup is attached before the task can run or be cancelled."""
        task = loop.create_task(self._run())
        self.task = task
        task.add_done_callback(lambda _: self.end())
        if self.stop_requested:  # stopped while the session was being claimed for it, before it had a task
            task.cancel()
        return task

    async def _run(self) -> Message:
        try:
            await self._loop()
            await self._tell_transport()
            await self.host.save_reply(self.reply)  # saved (or saying it is not) before the turn ends
        except asyncio.CancelledError:
            self._finish_stopped("Stopped before it finished.", "Stopped before it ran.")
            if not self.stop_requested:
                raise
            with contextlib.suppress(asyncio.CancelledError):  # a second Stop while the transport ends its run
                await self._tell_transport()
        except (KeyboardInterrupt, SystemExit):
            self._finish_stopped("Interrupted: the kernel was interrupted.", "Interrupted before it ran.")
            raise
        except RoundInterrupted:
            self._finish_stopped("Interrupted: the kernel was interrupted.", "Interrupted before it ran.")
            await self._tell_transport()
        except Exception as exc:
            logger.exception("an ai_widgets turn failed")
            end_open_calls(self.host.notify, self.reply, ToolCallState.SKIPPED, "Not run: the turn failed.")
            self._finish(MessageStatus.ERROR, f"The turn failed: {describe(exc)}", ErrorKind.TURN_FAILED)
            await self._tell_transport()
        finally:
            self.end()
        return self.reply

    async def _tell_transport(self) -> None:
        """Tells a transport that wants to know (:class:`TurnAware`) that the turn ended, its reply final; a bounded
        wait, and what it raises is logged only. A turn of a person's calls asked no model: nothing to tell."""
        transport: object = self.host.settings.transport  # any transport may also be TurnAware
        if self.direct or not isinstance(transport, TurnAware):
            return
        try:
            await asyncio.wait_for(
                transport.turn_ended(self.host.settings.conversation_id, self.reply), TURN_ENDED_TIMEOUT
            )
        except Exception:
            logger.warning("the transport's turn_ended failed", exc_info=True)

    def end(self) -> None:
        """Makes the turn final, once: every call has an outcome, the reply a terminal status, the session idle."""
        if self.ended:
            return
        self.ended = True
        host = self.host
        if self.reply.status is MessageStatus.IN_PROGRESS:
            # Cancelled before its first step, or ended in a way the coroutine could not record.
            self._finish_stopped("Stopped before it finished.", "Stopped before it ran.")
        # The reply is final before the session says it is idle, so an observer never sees "idle" with a reply
        # still in progress; and the session is freed only after that, so that no turn started meanwhile (from
        # another thread: the input box's) adds its messages before this one has said it ended, as if they were
        # this turn's (a view of one turn mirrors until it hears the end). A turn that follows at once with the
        # messages sent meanwhile likewise begins once this one has ended.
        host.notify(MessageFinished(self.reply))
        host.notify(BusyChanged(False))
        host.ended(self)

    def stop(self) -> bool:
        """Cancels the turn's task from any thread; whether there was one to stop. A turn whose task has not been
        created yet is cancelled as it starts."""
        task = self.task
        if self.ended or (task is not None and task.done()):
            return False
        self.stop_requested = True
        task = self.task  # read again after the flag: start() reads the flag after it sets the task
        if task is None:
            return True
        loop = task.get_loop()
        if running_loop() is loop:
            task.cancel()
        else:
            loop.call_soon_threadsafe(task.cancel)
        return True

    def _finish_stopped(self, running_message: str, waiting_message: str) -> None:
        if self.reply.status is not MessageStatus.IN_PROGRESS:
            return
        notify = self.host.notify
        for part in self.reply.tool_calls:
            if part.state.terminal:
                continue
            ran = part.state in (ToolCallState.RUNNING, ToolCallState.AWAITING_INPUT)
            message = running_message if ran else waiting_message
            move_call(notify, self.reply, part, ToolCallState.CANCELLED, ToolOutcome.failure(message, retryable=True))
        self._finish(MessageStatus.CANCELLED, None)

    def _finish(self, status: MessageStatus, error: str | None, kind: ErrorKind | None = None) -> None:
        reply = self.reply
        if reply.status is not MessageStatus.IN_PROGRESS:
            return
        reply.status = status
        reply.error = None if error is None else redact(error)
        reply.error_kind = kind
        reply.status_text = None
        self.host.notify(MessageUpdated(reply))

    # --- the loop ---------------------------------------------------------------------------------------------------

    async def _loop(self) -> None:
        if self.direct:
            await self._run_round([p for p in self.reply.tool_calls if not p.state.terminal], offered=None)
            self._finish(MessageStatus.COMPLETED, None)
            return
        host, reply = self.host, self.reply
        options = host.settings.options
        rounds = 0
        failed_rounds = 0
        if self.carried:
            # Continue after the round limit: the calls it left unrun are this turn's first round.
            calls = [part for part in reply.tool_calls if not part.state.terminal]
            choice = host.settings.request_options.tool_choice
            rounds = 1
            if choice.mode != "none" and not await self._list_tools():
                return
            if not await self._run_round(calls, offered=[] if choice.mode == "none" else host.settings.tools.names()):
                return
            counted = self._count_failures(calls, 0)
            if counted is None:
                return
            failed_rounds = counted
            self._deliver_steering()
            reply = self.reply
        retries = 0
        idle_continues = 0
        retry: tuple[list[Message], str] | None = None
        while True:
            start = len(reply.parts)  # this response's parts begin here: its text is the answer a type checks
            offered = await self._request(first=rounds == 0, retry=retry)
            retry = None
            if offered is None:
                return
            calls = [part for part in reply.tool_calls if not part.state.terminal and ours_to_settle(part)]
            if self.continuing and options.execute_tools and not calls:
                # The provider's run goes on with nothing for the session to settle: ask again, a bounded number of
                # times (a transport that always says so would otherwise be asked for ever).
                idle_continues += 1
                if idle_continues > MAX_IDLE_CONTINUES:
                    self._fail_request(
                        f"The transport asked to continue {MAX_IDLE_CONTINUES} times in a row with nothing to decide "
                        "or run."
                    )
                    return
                continue
            idle_continues = 0
            if not calls and self.output is not None:
                retry = self._check_output(start, retries)
                if retry is None:
                    return
                retries += 1
                continue
            if self.output is not None:
                self._mark_answer(start, None)  # a response that calls tools is not the answer: its text is text
            if not calls or not options.execute_tools:
                for part in calls:
                    if part.state is ToolCallState.STREAMING:
                        move_call(host.notify, reply, part, ToolCallState.PENDING)
                if self.continuing:  # nobody answers the provider's question: its open calls end here
                    self.continuing = False
                    self._skip_provider_calls_without_result()
                self._finish(MessageStatus.COMPLETED, None)
                return
            if self._budget_reached():
                self._pause_at_budget(calls=calls)
                return
            if rounds >= options.max_iterations:
                limit = options.max_iterations
                rounds_text = f"{limit} round{'' if limit == 1 else 's'} of tool calls"
                end_open_calls(host.notify, reply, ToolCallState.SKIPPED, f"{LIMIT_NOT_RUN} of {rounds_text}.")
                asked = "the call" if len(calls) == 1 else f"the {len(calls)} calls"
                self._finish(
                    MessageStatus.LIMIT_REACHED,
                    f"Paused at the limit of {rounds_text} per turn (max_iterations); "
                    f"Continue runs {asked} the model asked for next.",
                    ErrorKind.MAX_ITERATIONS,
                )
                return
            # A round that only answers the provider's questions on calls it runs itself, its run going on, is part of
            # that one provider run (an ACP prompt): it does not count as a round of the model's tool calls.
            if not (self.continuing and all(part.provider_executed for part in calls)):
                rounds += 1
            if not await self._run_round(calls, offered=offered):
                return
            counted = self._count_failures(calls, failed_rounds)
            if counted is None:
                return
            failed_rounds = counted
            self._deliver_steering()
            reply = self.reply

    def _deliver_steering(self) -> None:
        """At a tool boundary (a round's results in, the next request not yet made): delivers the messages sent
        meanwhile. The reply so far ends, they follow it, and the turn goes on in a new reply after them, so the
        next request carries them after the round's results."""
        messages = self.host.take_steering()
        if not messages:
            return
        host, previous = self.host, self.reply
        self._finish(MessageStatus.COMPLETED, None)
        host.notify(MessageFinished(previous))
        for message in messages:
            host.append(message)
        reply = Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS)
        self.reply = reply
        self.replies.append(reply)
        host.append(reply)

    @property
    def usage(self) -> Usage:
        """What the turn's requests spent, over all its replies."""
        total = Usage()
        for reply in self.replies:
            total = total + reply.usage
        return total

    def _budget_reached(self) -> bool:
        """Whether the turn has spent its budget (``max_cost``), or cannot know what it spent: checked before every
        request after the turn's first (a tool round's, an answer asked for again, a shortened retry), so a turn ends
        after the request that reached it."""
        max_cost = self.host.settings.options.max_cost
        usage = self.usage  # the turn's own: each turn, a resumed one too, fills new replies
        if max_cost is None or not usage.requests:
            return False
        return usage.cost is None or usage.cost >= Decimal(str(max_cost))

    def _pause_at_budget(self, *, calls: list[ToolCallPart] | None = None, instead: str | None = None) -> None:
        """Ends the turn ``limit_reached`` at its budget (see :meth:`_budget_reached`): the ``calls`` the model asked
        for are left for Continue (as the round limit leaves them); ``instead`` says what was not done else."""
        max_cost = self.host.settings.options.max_cost
        assert max_cost is not None
        budget = format_usd(Decimal(str(max_cost)))
        spent = self.usage.cost
        end_open_calls(self.host.notify, self.reply, ToolCallState.SKIPPED, f"{LIMIT_NOT_RUN} of {budget} (max_cost).")
        if spent is None:
            why = (
                f"Paused: the price of this model's requests is unknown (genai-prices has no price for it, or the "
                f"transport does not say which model answered), so the budget of {budget} per turn (max_cost) "
                "cannot be kept"
            )
        else:
            why = f"Paused at the budget of this turn: it spent {format_usd(spent)} of {budget} (max_cost)"
        if calls:
            asked = "the call" if len(calls) == 1 else f"the {len(calls)} calls"
            instead = f"Continue runs {asked} the model asked for next, with a fresh budget"
        self._finish(MessageStatus.LIMIT_REACHED, f"{why}; {instead}." if instead else f"{why}.", ErrorKind.MAX_COST)

    def _count_failures(self, calls: list[ToolCallPart], failed_rounds: int) -> int | None:
        """The failed rounds in a row after this round; ``None`` when that ended the turn."""
        failures = [part for part in calls if part.state is ToolCallState.FAILED]
        failed_rounds = failed_rounds + 1 if failures else 0
        if failed_rounds >= self.host.settings.options.max_consecutive_errors:
            last = failures[-1]
            self._finish(
                MessageStatus.ERROR,
                f"Tool calls failed in {failed_rounds} rounds in a row (max_consecutive_errors); "
                f"the last: {last.tool_name}: {person_facing_error(last)}",
                ErrorKind.TOOL_FAILURES,
            )
            return None
        return failed_rounds

    async def _run_round(self, calls: list[ToolCallPart], *, offered: list[str] | None) -> bool:
        """Runs one round of calls; ``False`` when it ended the turn.

        Args:
            calls: The calls to run.
            offered: The tool names the model was offered; ``None`` for calls a person made (any registered tool).
        """
        host, reply, options = self.host, self.reply, self.host.settings.options
        tool_round = ToolRound(
            reply,
            host.notify,
            policy=host.settings.approval_policy,
            options=options,
            conversation_id=host.settings.conversation_id,
            context=host.settings.context,
            run_model=None if host.settings.transport is None else self._sampler(host.settings.transport),
            sampling_allowed=host.settings.sampling_allowed,
            unasked=host.settings.unasked,
            remote_schemas=self.remote_schemas,
        )
        self.round = tool_round
        try:
            registry = host.settings.tools
            resolve = registry.get if offered is None or offered else (lambda name: None)
            await tool_round.prepare(calls, resolve, available=registry.names() if offered is None else offered)
            if tool_round.unknown and options.terminate_on_unknown_calls and offered is not None:
                message = "Not run: the turn ended because the model called an unknown tool."
                # Nobody cancelled the unknown call's siblings: they were never run because the turn ended.
                await tool_round.abort(message, message, unstarted=ToolCallState.SKIPPED)
                end_open_calls(host.notify, reply, ToolCallState.SKIPPED, message)
                names = ", ".join(repr(name) for name in tool_round.unknown)
                self._finish(
                    MessageStatus.ERROR,
                    f"The model called a tool that is not registered ({names}), and terminate_on_unknown_calls is on.",
                    ErrorKind.UNKNOWN_TOOL,
                )
                return False
            await tool_round.run()
        finally:
            self.round = None
        return True

    def _sampler(self, transport: Transport) -> RunModel:
        """Runs the model for a call's sampling request with the session's request options."""
        return functools.partial(run_sampling, transport, self.host.settings.request_options)

    def _check_output(self, start: int, retries: int) -> tuple[list[Message], str] | None:
        """Validates the final answer (the text of the reply's parts from ``start``) of a typed turn, which ends
        with it; or, when it does not validate and retries are left, takes it out of the reply and returns what the
        next request adds after the reply (the answer and a message telling the errors) and the status it shows.
        A turn at its budget (``max_cost``) is not asked again: it ends ``limit_reached``, the answer kept, refused."""
        spec, reply = self.output, self.reply
        assert spec is not None
        raw = "".join(part.text for part in reply.parts[start:] if isinstance(part, TextPart))
        try:
            reply.output = spec.validate(raw)
        except pydantic.ValidationError as exc:
            errors = describe_errors(exc)
            if retries < self.host.settings.options.output_retries and self._budget_reached():
                # Asking again would be a request past the budget: the answer stays, refused, and the turn pauses.
                self._mark_answer(start, "invalid", errors=redact(errors))
                self._pause_at_budget(
                    instead=f"the answer did not match {spec.name} and was not asked for again: {errors}"
                )
                return None
            if retries < self.host.settings.options.output_retries:
                self.refused.append(redact(errors))  # shown with the next answer, whose part replaces this one's
                del reply.parts[start:]  # the next response's first part takes its place
                self.host.notify(PartsRemoved(reply, start))
                told = [Message(Role.ASSISTANT, [TextPart(raw)])] if raw.strip() else []
                told.append(Message.user(spec.correction(errors)))
                retries_allowed = self.host.settings.options.output_retries
                return told, f"The answer did not match {spec.name}; asking again ({retries + 1} of {retries_allowed})…"
            tries = f"{retries + 1} answer{'' if retries == 0 else 's'}"
            message = f"The answer did not match {spec.name} ({tries}, output_retries): {errors}"
            spec.failure = OutputValidationError(message, reply=reply, raw=raw, errors=errors)
            self._mark_answer(start, "invalid", errors=redact(errors))  # shown and saved, like the reply's error
            self._finish(MessageStatus.ERROR, message, ErrorKind.OUTPUT_INVALID)
            return None
        self._mark_answer(start, "valid", value=spec.shown(reply.output))
        self._finish(MessageStatus.COMPLETED, None)
        return None

    def _new_answer(self, text: str) -> TypedAnswer:
        """The mark of a text part a typed turn's response starts (ReplyBuilder's ``new_answer``)."""
        assert self.output is not None
        return TypedAnswer(self.output.name, refused=tuple(self.refused), text=text)

    def _mark_answer(
        self, start: int, state: AnswerState | None, *, errors: str | None = None, value: Any = None
    ) -> None:
        """Sets how the check of the answer in the reply's text parts from ``start`` went (``None``: they are not an
        answer but ordinary text), and says so."""
        reply = self.reply
        for index in range(start, len(reply.parts)):
            part = reply.parts[index]
            if not isinstance(part, TextPart) or part.answer is None:
                continue
            if state is None:
                part.answer = None
            else:
                part.answer.state, part.answer.errors, part.answer.value = state, errors, value
            self.host.notify(PartChanged(reply, index, part))

    async def _request(self, *, first: bool, retry: tuple[list[Message], str] | None = None) -> list[str] | None:
        """One model request; the tool names it offered, or ``None`` when the turn has ended.

        Args:
            first: The turn's first request (a forcing tool choice applies to it only).
            retry: After a typed answer that did not validate: the messages told after the reply, and the status.
        """
        host, reply = self.host, self.reply
        options = host.settings.request_options
        choice = options.tool_choice
        if choice.mode != "none" and not await self._list_tools():
            return None
        if not first and choice.forces_call:
            options = dataclasses.replace(options, tool_choice=ToolChoice.AUTO)
        elif choice.mode == "tool" and choice.tool_name is not None:
            # The choice is checked case-insensitively; the provider gets the name as registered.
            registered = host.settings.tools.get(choice.tool_name)
            if registered is not None and registered.name != choice.tool_name:
                options = dataclasses.replace(options, tool_choice=ToolChoice.specific(registered.name))
        tools = [] if options.tool_choice.mode == "none" else host.settings.tools.definitions()
        messages = host.messages()  # a new list: copied once, however long the history
        if retry:
            messages += retry[0]
        request = ChatRequest(
            messages=messages,
            tools=tools,
            options=options,
            conversation_id=host.settings.conversation_id,
            output_schema=None if self.output is None else self.output.schema,
        )
        transport = host.settings.transport
        if transport is None:  # a session for a person's calls: send() and resume() refuse before a turn starts
            self._fail_request("This session has no transport: it cannot ask a model.")
            return None
        profile = profile_of(transport)  # read once per request: a person may switch the model between them
        window = window_of(request, profile)
        start = current_turn_start(request.messages, self.replies[0])  # never shortened: the whole turn
        sent = self._fit(request, window, profile, start)
        parts_before = len(reply.parts)
        status = retry[1] if retry else host.settings.options.waiting_status
        for attempt in (1, 2):
            if attempt > 1 and self._budget_reached():  # the budget is checked before every request of the turn
                self._pause_at_budget(instead="the request the model refused as too long was not sent again")
                return None
            builder = ReplyBuilder(reply, host.notify, new_answer=None if self.output is None else self._new_answer)
            builder.show_status(status)
            try:
                async with closing(transport.stream(sent)) as stream:
                    async for event in stream:
                        builder.apply(event)
            except ContextTooLongError as exc:
                builder.close()
                estimate = request_tokens(sent, profile, window or 0)
                again = None
                if attempt == 1 and len(reply.parts) == parts_before:  # nothing of the reply came: ask again, shorter
                    builder.uncount()
                    again = refit_request(
                        request,
                        sent,
                        exc,
                        window=window,
                        profile=profile,
                        current_start=start,
                        estimates=self.estimates,
                    )
                    if again is not None:
                        sent = self._show_cut(*again)
                        status = "The conversation is too long for the model: asking again with less of it…"
                        continue
                alone = attempt == 1 and again is None and len(reply.parts) == parts_before
                self._fail_request(
                    too_long_error(exc, sent=estimate, window=window, shortened=attempt > 1, alone=alone),
                    ErrorKind.CONTEXT_TOO_LONG,
                )
                return None
            except StreamProtocolError as exc:
                builder.close()
                message = str(exc)
                self._fail_request(message[:1].upper() + message[1:] + ".", ErrorKind.STREAM_PROTOCOL)
                return None
            except Exception as exc:
                builder.close()
                self._fail_request(f"The model request failed: {describe(exc)}")
                return None
            break
        builder.close()
        self.remote_schemas.update(builder.arguments_schemas)
        self.continuing = builder.completed and builder.continues and builder.finish_reason is not FinishReason.ERROR
        if not self.continuing:
            self._skip_provider_calls_without_result()
        if not builder.completed:
            self._fail_request("The model's response broke off before it was complete.")
            return None
        if builder.finish_reason is FinishReason.ERROR:
            self._fail_request("The model reported an error and stopped.")
            return None
        return [definition.name for definition in tools]

    def _fit(
        self, request: ChatRequest, window: int | None, profile: TransportProfile, current_start: int
    ) -> ChatRequest:
        """``request`` fitted to ``window`` tokens (``None``: not known, sent whole); the session's observers are told
        when how it was cut changed."""
        if window is None:
            return self._show_cut(request, None)
        fitted = fit_request(
            request, window=window, profile=profile, current_start=current_start, estimates=self.estimates
        )
        return self._show_cut(*fitted)

    def _show_cut(self, request: ChatRequest, cut: ContextCut | None) -> ChatRequest:
        """``request``, as it goes; the session's observers are told when how it was cut changed."""
        self.host.shortened(cut)
        return request

    async def _list_tools(self) -> bool:
        """Asks the registry's sources of tools (MCP servers) for their tools before a request; ``False`` when
        that failed, which ends the turn with an error that says why."""
        try:
            await self.host.settings.tools.refresh()
        except Exception as exc:
            end_open_calls(
                self.host.notify, self.reply, ToolCallState.SKIPPED, "Not run: the tools could not be listed."
            )
            self._finish(
                MessageStatus.ERROR, f"The tools could not be listed: {describe(exc)}", ErrorKind.TOOLS_UNAVAILABLE
            )
            return False
        return True

    def _skip_provider_calls_without_result(self) -> None:
        """A call the provider ran but sent no result for (a paused turn) is never run here: it gets an outcome,
        unless the provider paused for the person's decision on it (the round asks, the next request tells)."""
        for part in self.reply.tool_calls:
            if not part.provider_executed or part.state.terminal or ours_to_settle(part):
                continue
            # An allowed call that ran remotely and got no result did run: it failed rather than being skipped.
            state = ToolCallState.FAILED if part.state is ToolCallState.RUNNING else ToolCallState.SKIPPED
            outcome = ToolOutcome.failure("The provider did not send a result for this call.", retryable=True)
            move_call(self.host.notify, self.reply, part, state, outcome)

    def _fail_request(self, error: str, kind: ErrorKind = ErrorKind.REQUEST) -> None:
        end_open_calls(self.host.notify, self.reply, ToolCallState.SKIPPED, "Not run: the model's response failed.")
        self._finish(MessageStatus.ERROR, error, kind)


def ours_to_settle(part: ToolCallPart) -> bool:
    """Whether the session settles this open call in a round: a local call, or a provider-run call the provider
    paused for the person's decision on that nobody has made yet."""
    return not part.provider_executed or (part.approval_requested_by_transport and part.decision is None)


def describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "(its text could not be read)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.asynccontextmanager
async def closing(stream: AsyncIterator[StreamEvent]) -> AsyncIterator[AsyncIterator[StreamEvent]]:
    """Closes a transport's stream however the consumer leaves it (done, failed or cancelled)."""
    try:
        yield stream
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
