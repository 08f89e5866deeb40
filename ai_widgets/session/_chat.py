"""``ChatSession``: the conversation, its observers, its branches, and the public controls of a turn.

A turn runs as a task on the running event loop (:mod:`ai_widgets.session._turn`); ``send`` awaits it. Events
become parts in :mod:`ai_widgets.session._reply`; a round of tool calls runs in :mod:`ai_widgets.session._round`.
Observers (the widget) subscribe to typed changes; approvals, cancels and stop may come from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_widgets._safe import UnsafeValueError, checked_json, safe_text
from ai_widgets.approval import ApprovalDecision, ApprovalError, ApprovalPolicy, DefaultApprovalPolicy
from ai_widgets.attachments import AttachmentPart, message_attachments, message_attachments_async
from ai_widgets.changes import (
    BranchesChanged,
    BusyChanged,
    ContextCut,
    ContextShortened,
    ConversationCleared,
    MessageAdded,
    MessageFinished,
    MessageUpdated,
    SessionChange,
    SessionNotice,
    SteeringChanged,
    ToolCallStraggling,
    ToolCallUpdated,
)
from ai_widgets.integrations._by_name import transport_for_model
from ai_widgets.messages import (
    ErrorKind,
    InputResponseError,
    Message,
    MessageStatus,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
    Usage,
    conversation_markdown,
)
from ai_widgets.options import RequestOptions, SessionOptions
from ai_widgets.session._branches import (
    BranchPoint,
    ConversationBranches,
    branches_json,
    branches_markdown,
    conversation_with_branches,
    message_position,
    regenerate_position,
    user_position,
)
from ai_widgets.session._calls import CancelError, end_open_calls, known_call, shown_id
from ai_widgets.session._context import HistoryTokens
from ai_widgets.session._history import HistoryFile, HistoryTakenOverError
from ai_widgets.session._notebook import conversation_notebook
from ai_widgets.session._output import OutputSpec
from ai_widgets.session._sending import checked_messages, files_of
from ai_widgets.session._steering import Steer, SteeringQueue
from ai_widgets.session._turn import Turn, TurnHost, carry_over
from ai_widgets.session._unasked import CODE_TOOLS, UnaskedRule
from ai_widgets.tools import Tool, ToolRegistry, ToolSource
from ai_widgets.transports._base import ModelStream, Transport, profile_of

__all__ = ["ChatSession", "NoTransportError", "SessionBusyError", "turn_loop"]

logger = logging.getLogger("ai_widgets")

Subscriber = Callable[[SessionChange], None]


@dataclass(frozen=True, slots=True)
class Prefix:
    """The first ``count`` messages of the conversation, done with for some purpose. ``last`` is the last of them,
    checked: a list that changed under the count (cleared, replaced) is taken from its start again."""

    count: int = 0
    last: Message | None = None

    @classmethod
    def of(cls, messages: Sequence[Message], count: int) -> Prefix:
        return cls(count, messages[count - 1] if count else None)

    def start(self, messages: Sequence[Message]) -> int:
        """Where the messages not done with begin: ``count``, or 0 when the list changed under it."""
        count = self.count
        if count > len(messages) or (count and messages[count - 1] is not self.last):
            return 0
        return count


class SessionBusyError(RuntimeError):
    """A turn is already running: wait for it, or stop it, before starting another."""


class NoTransportError(RuntimeError):
    """The session has no transport: it runs the calls a person makes (``run_call``), and cannot ask a model."""


class ChatSession:
    """A conversation with a model that can call tools; edits and regenerates keep what they replace as branches.

    Args:
        transport: How to reach the model (``ScriptedTransport``, ``OpenAIChatTransport``, ...). Without one (and
            without ``model``), the session runs only the calls a person makes (:meth:`run_call`: a form,
            ``run_tool``), and :meth:`send` and :meth:`resume` refuse (:class:`NoTransportError`).
        model: The model as a string instead of a transport: ``"openai:gpt-5-mini"`` (Chat Completions),
            ``"openai-responses:…"``, ``"anthropic:…"``, ``"gemini:…"``, ``"ollama:qwen3"`` (an Ollama server at
            ``OLLAMA_HOST``, ``http://localhost:11434`` by default) or ``"pydantic-ai:<pydantic-ai model string>"``;
            the key comes from the provider's usual environment variable (``OPENAI_API_KEY``,
            ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``). Build the transport yourself for a key
            or option of your own.
        tools: A :class:`ToolRegistry` (used as it is, so later changes to it are seen on the next request), or
            tools, functions and sources of tools (an :class:`~ai_widgets.mcp.MCPServer`) to put in a new one.
        approval_policy: Decides which calls need a person; a :class:`DefaultApprovalPolicy` of its own by
            default (one per session, never share one between users).
        options: How a turn runs.
        request_options: What every request carries (tool choice, system prompt, temperature, ...).
        context: The application's object, handed to every tool call as ``invocation.context``.
        messages: A conversation to continue (from :func:`ai_widgets.messages.load_messages`).
        conversation_id: An id for the conversation; a new one by default.
        history: A JSON file that keeps the conversation across kernel restarts: loaded when it exists (a turn that
            was running when the kernel stopped comes back ended, its open calls answered "not run"), and saved as
            messages are added, when a call starts to wait for a decision, and when a turn ends (before ``send``
            returns; a reply that could not be saved says so in its ``error``). Each save appends what changed to a
            journal beside the file, on a thread of its own (see :mod:`ai_widgets.session._history`). One session
            writes a file at a time: another process's is refused, and a newer session of this process for the
            same file takes it over (this one then refuses to send). A symlink is followed.

    Raises:
        TypeError: ``transport`` has no ``stream(request)`` method, or ``model`` is not text.
        ValueError: Both ``model`` and ``transport`` were given; ``model`` names no provider, an unknown one (the
            message lists the known ones), or no model.
        ProviderError: The provider's key is not set (the message names the variable to set).
        ImportError: The provider's SDK is not installed (the message names the extra that installs it).
        HistoryError: The ``history`` file's folder does not exist, or the file is corrupt or from a newer format
            (it is left untouched).
        HistoryLockedError: Another process writes the ``history`` file (the error names it).
    """

    def __init__(
        self,
        transport: Transport | None = None,
        *,
        model: str | None = None,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None,
        approval_policy: ApprovalPolicy | None = None,
        options: SessionOptions | None = None,
        request_options: RequestOptions | None = None,
        context: Any = None,
        messages: Iterable[Message] | None = None,
        conversation_id: str | None = None,
        history: str | os.PathLike[str] | None = None,
    ) -> None:
        if model is not None:
            if transport is not None:
                raise ValueError(
                    f"pass model= or transport=, not both: model={model!r} names a transport, and transport= is one"
                )
            transport = transport_for_model(model)  # first: a model that cannot be built leaves nothing open
        if transport is not None and not isinstance(transport, ModelStream):
            raise TypeError(f"transport must have a stream(request) method, not {type(transport).__name__}")
        if history is not None and messages is not None:
            raise ValueError("pass messages= or history=, not both: history= loads the conversation from its file")
        self._history = None if history is None else HistoryFile(history, on_taken_over=self._history_taken_over)
        if self._history is not None:
            messages = self._history.messages
        self.transport: Transport | None = transport
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(list(tools or ()))
        self.approval_policy: ApprovalPolicy = approval_policy or DefaultApprovalPolicy()
        self.options = options or SessionOptions()
        self.request_options = request_options or RequestOptions()
        self.context = context
        self.conversation_id = conversation_id or f"conv_{uuid.uuid4().hex[:16]}"
        #: How the last request was shortened to fit the model's context window, or ``None`` (it carried everything).
        self.context_cut: ContextCut | None = None
        self._messages: list[Message] = list(messages or ())
        self._estimates = HistoryTokens()  # the messages' token estimates, kept from turn to turn
        #: The tools whose calls may run the model for their MCP server unasked (a person chose allow always).
        self.sampling_allowed: set[str] = set()
        self._unasked: UnaskedRule | None = None  # this session only: never saved, never restored
        self._branches = ConversationBranches() if self._history is None else self._history.branches
        # A tuple, replaced (never mutated) on subscribe/unsubscribe: a subscriber may leave while changes go out.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._subscribers_lock = threading.Lock()
        self._turn: Turn | None = None
        # Checking that the session is idle and taking it for a turn (or a clear or close, which set _holding) is one
        # step under this lock, so two threads (two event loops) never run two turns at once.
        self._claim_lock = threading.Lock()
        self._holding = False
        # Messages sent while a turn runs (steering), under the claim lock.
        self._steering = SteeringQueue()
        # The messages known to have every call answered and no turn in progress.
        self._closed = Prefix()
        # The messages no longer in progress, and their usage summed. One tuple, replaced whole, so a reader on
        # another thread always sees a consistent one.
        self._usage_folded: tuple[Prefix, Usage] = (Prefix(), Usage())
        if self._history is not None:
            self._subscribers = (self._checkpoint,)

    # --- reading --------------------------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (a new list; the messages themselves are live)."""
        return list(self._messages)

    @property
    def busy(self) -> bool:
        """Whether a turn is running (or the conversation is being cleared)."""
        return self._turn is not None or self._holding

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the running turn runs on, or ``None`` when idle (:func:`turn_loop`)."""
        turn = self._turn
        return None if turn is None or turn.task is None else turn.task.get_loop()

    @property
    def usage(self) -> Usage:
        """Tokens and cost (USD, ``None`` when some request's price is unknown) of every request of the conversation,
        its earlier branches included (what an edit or a regenerate replaced was spent too).

        Read after every turn (the widget shows it): finished messages, whose usage never changes again, are
        summed once, so reading it does not take longer as the conversation grows.
        """
        messages = list(self._messages)
        folded, total = self._usage_folded
        count = folded.start(messages)
        if count == 0:
            total = Usage()
        while count < len(messages) and messages[count].status is not MessageStatus.IN_PROGRESS:
            total, count = total + messages[count].usage, count + 1
        self._usage_folded = (Prefix.of(messages, count), total)
        for message in (*messages[count:], *self._branches.stored()):
            total = total + message.usage
        return total

    @property
    def pending_approvals(self) -> list[ToolCallPart]:
        """The calls waiting for a person's decision."""
        turn = self._turn
        tool_round = None if turn is None else turn.round
        return [] if tool_round is None else tool_round.waiting()

    def tool_call(self, tool_call_id: str) -> ToolCallPart | None:
        """The call with this id in ``messages`` (its state, arguments, outcome as they are now), or ``None``."""
        for message in reversed(self._messages):
            part = message.tool_call(tool_call_id)
            if part is not None:
                return part
        return None

    # --- observing ------------------------------------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Calls ``subscriber(change)`` on every state change, on the loop's thread; returns an unsubscribe."""
        with self._subscribers_lock:
            self._subscribers = (*self._subscribers, subscriber)

        def unsubscribe() -> None:
            with self._subscribers_lock:
                subscribers = list(self._subscribers)
                with contextlib.suppress(ValueError):
                    subscribers.remove(subscriber)
                self._subscribers = tuple(subscribers)

        return unsubscribe

    # --- the history file -----------------------------------------------------------------------------------------

    def _checkpoint(self, change: SessionChange) -> None:
        """Notes every changed message, and hands the changed ones to the history file's writer at the moments a
        restart must not lose: a message added, a call starting to wait for a decision, a turn's end, a clear."""
        history = self._history
        assert history is not None
        match change:
            case ConversationCleared():
                history.clear()
            case BranchesChanged(position=position):  # the path cut there, its branches and what is there now
                history.branched(self._messages, position, branches_json(self._branches) if self._branches else None)
            case BusyChanged() | SessionNotice() | ToolCallStraggling() | ContextShortened() | SteeringChanged():
                pass  # nothing in the record changed
            case MessageAdded(message=message):
                history.changed(message)
                history.checkpoint(self._messages)
            case MessageFinished():
                history.checkpoint(self._messages)  # what changed since the turn's end was saved, if anything
            case ToolCallUpdated(message=message, part=part):
                history.changed(message)
                if part.state in (ToolCallState.AWAITING_APPROVAL, ToolCallState.AWAITING_INPUT):
                    history.checkpoint(self._messages)
            case _:
                history.changed(change.message)

    async def _save_reply(self, reply: Message) -> None:
        """For the turn (:class:`~ai_widgets.session._turn.TurnHost`), at its end, before it says it ended: waits
        until the ``history`` file holds the reply as it ended; a reply that could not be saved says so (in its
        ``error``), so the person learns it from the reply itself. Without ``history`` it returns at once."""
        history = self._history
        if history is None:
            return
        history.changed(reply)
        history.checkpoint(self._messages)
        problem = await history.written()
        if problem is None:
            return
        if reply.status is MessageStatus.COMPLETED:
            reply.status = MessageStatus.ERROR
            reply.error_kind = ErrorKind.HISTORY_UNSAVED
        reply.error = problem if not reply.error else f"{reply.error} {problem}"
        self._notify(MessageUpdated(reply))

    def _history_taken_over(self, text: str) -> None:
        self._notify(SessionNotice(text))

    def _check_history_writable(self) -> None:
        history = self._history
        if history is not None and not history.writable:
            raise HistoryTakenOverError(f"History file {str(history.path)!r}: {history.refusal}")

    def flush_history(self, timeout: float | None = None) -> None:
        """Blocks until the ``history`` file holds everything so far (it is written on a thread of its own).

        Raises:
            HistoryError: The last write failed (the file is behind; the next write tries again).
            TimeoutError: The file was not written within ``timeout`` seconds.
        """
        if self._history is not None:
            self._history.flush(timeout)

    def close(self) -> None:
        """Writes what is pending to the ``history`` file, folds its journal into the one JSON file, and releases
        it (its lock included), so another process may open it. The session then refuses to send. Without
        ``history`` it does nothing. What the session was given (its transport, MCP servers among its tools) stays
        open: close those with their own ``close()`` or ``aclose()``.

        Raises:
            SessionBusyError: A turn is running.
        """
        if self._history is None:
            return
        with self._held("close the session"):  # no turn may start while the file is folded and released
            self._history.close()

    async def aclose(self) -> None:
        """Like :meth:`close`, from async code: the file is written and folded on a worker thread, so the loop goes on
        meanwhile.

        Raises:
            SessionBusyError: A turn is running.
        """
        if self._history is not None:
            await asyncio.to_thread(self.close)

    @contextlib.contextmanager
    def _held(self, doing: str) -> Iterator[None]:
        """Holds the idle session for a change that is not a turn (a clear, a close, a switch of branch)."""
        with self._claim_lock:
            if self._turn is not None or self._holding:
                raise SessionBusyError(f"cannot {doing} while a turn is running; stop() it first")
            self._holding = True
        try:
            yield
        finally:
            self._holding = False

    def _notify(self, change: SessionChange) -> None:
        """Tells every subscriber about a change, on this thread; one that raises is logged and the others are
        still told. The session's turns call it (:class:`~ai_widgets.session._turn.TurnHost`)."""
        for subscriber in self._subscribers:
            try:
                subscriber(change)
            except Exception:
                logger.exception("an ai_widgets session observer failed on %s", type(change).__name__)

    # --- turns ----------------------------------------------------------------------------------------------------

    async def send(self, text: str, *, attach: Any = (), output_type: Any = None, steer: bool = True) -> Message:
        """Sends a user message and runs the turn: returns the assistant's reply when the turn ends.

        Sent while a turn runs, the message steers that turn: it waits (``queued_messages``) for the turn's next tool
        boundary, where it is delivered: the reply so far ends, the message follows it in the conversation (after
        that round's tool results, so the model gets it with them), and the turn goes on in a new reply. One not
        delivered when the turn ends starts the next turn itself. Either way ``send`` returns the last reply of the
        turn that delivered it. :meth:`stop` hands waiting messages back instead (``SteeringChanged.returned``):
        they are not sent, and ``send`` raises :class:`NotDeliveredError`. Cancelling the task that awaits ``send``
        before delivery takes the message out of the queue (not sent); after delivery it only stops the waiting:
        the turn goes on.

        ``attach`` adds kernel objects to the message (:func:`ai_widgets.attachments.message_attachments`: parts,
        ``File``, ``Path``, frames, figures, images, strings, rich reprs, a user's registered types): a list of
        objects, a dict of name to object, or one object, or the parts :meth:`check_send` returned. They are converted and checked against what the transport's provider takes
        before anything is sent; one that cannot be, raises, and the conversation stays as it was.

        The reply is one message from the first request to the last, however many tool rounds the turn takes.
        Its ``status`` says how the turn ended (completed, limit reached, error, cancelled); a failing model or
        tool ends the message in error rather than raising, and the session stays usable. Cancelling the task that
        awaits ``send`` stops the turn (the reply ends ``cancelled``) and raises ``CancelledError`` here.

        Args:
            text: The person's message.
            output_type: Ask for a typed answer: a pydantic model, dataclass, TypedDict or any type pydantic
                validates. Every request of the turn carries its JSON Schema (``ChatRequest.output_schema``; a
                type that is not an object is asked for as ``{"response": ...}``); tools still run, and the final
                text reply is validated. One that does not validate leaves the reply (the next answer takes its
                place) and is asked for again with the errors, up to ``SessionOptions.output_retries`` times, its
                status line saying so. The validated object is the reply's ``output`` (``None``
                when the turn ended otherwise: stopped, failed, at a limit). A typed question never steers: it
                needs a turn of its own.
            steer: Whether a message sent while a turn runs steers it; ``False`` refuses instead
                (:class:`SessionBusyError`), for a caller that waits for the running turn and then asks
                (``ChatWidget.ask``).

        Raises:
            OutputValidationError: The answer did not validate after every retry; the reply, ended in error and in
                the conversation, keeps it as its text (``raw``), and ``errors`` says why.
            TypeError: ``output_type`` has no JSON Schema.
            SessionBusyError: A turn is running and the message cannot steer it (``steer=False``, an
                ``output_type``), or the conversation is being cleared or closed.
            NotDeliveredError: The message waited for a tool boundary and :meth:`stop` handed it back.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
            ValueError: ``text`` is empty, or the tool choice names a tool that is not registered.
            AttachmentError: An attached object cannot be converted, or its provider would refuse it (the message
                names the limit).
            NoTransportError: The session has no transport (it runs only the calls a person makes).
        """
        check_text(text, "send")
        output = None if output_type is None else OutputSpec(output_type)
        steer = steer and output is None
        self._check_can_send(steer=steer)
        parts = await self._prepare_attachments(attach)
        self._check_can_send(steer=steer)  # again: the session may have changed while they were converted
        user = Message(Role.USER, [TextPart(safe_text(text)), *parts])  # lone surrogates would fail every request
        reply = await self._start_turn(user=user, output=output, steer=steer)
        if output is not None and output.failure is not None:
            raise output.failure
        return reply

    async def send_messages(self, messages: Sequence[Message], *, output_type: Any = None) -> Message:
        """Sends several messages and runs the turn: the last is the person's, those before it (user or assistant
        messages) enter the conversation first, as earlier turns (a rendered MCP prompt's examples:
        ``RenderedPrompt.to_messages()``). Each is copied in (a new id), finished; text and files only, the files
        checked against the provider's limits like ``attach``. ``output_type`` and the reply: as :meth:`send`.

        Raises:
            ValueError: No messages, the last is not a user message, one holds something other than text and
                files, or no text or file at all.
            SessionBusyError, HistoryTakenOverError, AttachmentError, NoTransportError, OutputValidationError: As
                :meth:`send`.
        """
        shaped = checked_messages(messages)
        output = None if output_type is None else OutputSpec(output_type)
        self._check_can_send()
        self._check_limits([*files_of(shaped)])
        reply = await self._start_turn(user=shaped[-1], before=shaped[:-1], output=output)
        if output is not None and output.failure is not None:
            raise output.failure
        return reply

    def check_send(self, text: str, *, attach: Any = (), steer: bool = True) -> list[AttachmentPart]:
        """Checks, at once and on this thread, what :meth:`send` would check before it starts a turn, and converts
        ``attach``: a caller that shows something first (an input box, a view of the turn) learns of a refusal
        before it shows anything. It claims nothing, so ``send`` may still find the session busy.

        Returns:
            The parts ``attach`` becomes (see :meth:`send`), checked against the provider's limits: pass them to
            ``send(text, attach=parts)``, which then does not convert them again. The objects are converted here,
            on this thread (a figure is drawn on it): from async code, ``send(attach=...)`` draws on a worker thread.

        Raises:
            ValueError: ``text`` is empty, or the tool choice names a tool that is not registered.
            AttachmentError: An attached object cannot be converted, or its provider would refuse it (the message
                names the limit).
            SessionBusyError: A turn is running and ``steer`` is false (checked after the attachments, so a caller
                that waits for that turn has its attachments checked already), or the conversation is being cleared.
            HistoryTakenOverError, NoTransportError: As :meth:`send`.
        """
        check_text(text, "send")
        parts = self.check_attachments(attach)
        self._check_can_send(steer=steer)
        return parts

    @property
    def queued_messages(self) -> list[Message]:
        """The messages sent while the turn runs that wait for its next tool boundary, oldest first (not in
        ``messages`` yet)."""
        with self._claim_lock:
            return list(self._steering.queued())

    def check_attachments(self, attach: Any) -> list[AttachmentPart]:
        """The parts ``attach`` becomes in the next user message (as :meth:`send` takes it), checked against the
        provider's limits together with the files the conversation already carries: :meth:`check_send`'s check of
        the attachments alone (busy or not, with or without text), e.g. to show them before the message is sent.
        The objects are converted on this thread.

        Raises:
            AttachmentError: An object cannot be converted, or the provider would refuse a file (its type, its size,
                how many or how much the request would carry); the message names the limit.
        """
        return self._check_limits(message_attachments(attach))

    async def _prepare_attachments(self, attach: Any) -> list[AttachmentPart]:
        """``attach`` as parts (converted on a worker thread: :func:`ai_widgets.attachments.message_attachments_async`),
        checked against the provider's limits; parts from :meth:`check_send` are only checked."""
        return self._check_limits(await message_attachments_async(attach))

    def _check_limits(self, parts: list[AttachmentPart]) -> list[AttachmentPart]:
        """``parts`` (converted already), once checked against the attachment limits the transport declares, together with the files the
        conversation already carries (none declared: not checked here)."""
        limits = profile_of(self.transport).attachment_limits
        if limits is not None:
            limits.check(parts, self._messages)
        return parts

    async def resume(self) -> Message:
        """Runs another turn without a new user message, e.g. to let the model go on after the tool-round limit.

        After a turn that reached the limit (``max_iterations``), the turn picks up where it stopped: the calls the
        limit left unrun run first (asked about and run as any call, in the new reply, as new calls with the same
        tool and arguments; the stopped reply stays as it ended), and then the model is asked again.

        Raises:
            SessionBusyError: A turn is already running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
            ValueError: The conversation is empty.
            NoTransportError: The session has no transport (it runs only the calls a person makes).
        """
        if not self._messages:
            raise ValueError("there is nothing to resume: the conversation is empty")
        self._check_can_send()
        return await self._start_turn(resume=True)

    def stop(self) -> bool:
        """Cancels the running turn wherever it is: the model stream, a pending approval, running tools.

        Safe from any thread. Cancelled calls get a cancelled result; the session stays usable.

        Returns:
            Whether a turn was running.
        """
        turn = self._turn
        return False if turn is None else turn.stop()

    def cancel(self, tool_call_id: str, reason: str | None = None) -> None:
        """Cancels one call, waiting for approval or running, while its siblings and the turn go on.

        Safe from any thread; returns at once. The call ends ``cancelled`` with an outcome that tells the model the
        person cancelled it; a sync tool sees ``invocation.cancelled`` set.

        Args:
            tool_call_id: The call's id.
            reason: Why, told to the model.

        Raises:
            UnknownToolCallError: No call of the conversation has this id.
            CancelError: The call has ended, is being cancelled already, or is not the running turn's; or the reason
                is not text.
        """
        if reason is not None and not isinstance(reason, str):
            raise CancelError(f"the reason must be text, not {type(reason).__name__}")
        turn = self._turn
        tool_round = None if turn is None else turn.round
        if tool_round is None or not isinstance(tool_call_id, str) or not tool_round.cancel(tool_call_id, reason):
            _, part = known_call(self._messages, tool_call_id)
            raise CancelError(
                f"tool call {shown_id(part.tool_call_id)!r} ({part.tool_name}) cannot be cancelled: it is "
                f"{part.state.value}" + (", and a cancel of it is under way" if not part.state.terminal else "")
            )

    def clear(self) -> None:
        """Removes every message, and every earlier branch.

        Raises:
            SessionBusyError: A turn is running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
        """
        with self._held("clear the conversation"):
            self._check_history_writable()
            self._messages.clear()
            self._branches.clear()
            self.context_cut = None
            self._notify(ConversationCleared())

    def new_chat(self) -> int:
        """Starts a fresh conversation and keeps the one so far as an earlier branch at the conversation's start.

        ``messages`` becomes empty; once the new conversation has a first message, :meth:`branches` of it lists the
        earlier conversations there (each New chat adds one), and :meth:`switch_branch` brings one back whole.
        :meth:`export` and the ``history`` file keep them with the other branches. Nothing is deleted; an empty
        conversation is left as it is.

        Returns:
            How many messages were set aside (0 when the conversation was empty).

        Raises:
            SessionBusyError: A turn is running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
        """
        with self._held("start a new chat"):
            self._check_history_writable()
            kept = len(self._messages)
            if not kept:
                return 0
            self._branches.replace_from(self._messages, 0)
            self._notify(BranchesChanged(0))
            self._shortened(None)  # a cut of the earlier conversation says nothing about the new one
            return kept

    def _check_can_send(self, *, steer: bool = False) -> None:
        """Raises what :meth:`send` would raise about the session before it starts a turn (:meth:`check_send`
        checks the message too); it claims nothing, so ``send`` may still find the session busy.

        Args:
            steer: A running turn is no refusal: the message would steer it.

        Raises:
            SessionBusyError: A turn is running (and ``steer`` is false), or the session is held (a clear).
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
            ValueError: The tool choice names a tool that is not registered.
            NoTransportError: The session has no transport (it runs only the calls a person makes).
        """
        if self.transport is None:
            raise NoTransportError(
                "this session has no transport, so it cannot ask a model: it runs only the calls a person makes "
                "(run_call). Give ChatSession a transport to send messages."
            )
        self._check_history_writable()
        self._check_can_start(steer=steer)

    def _check_can_start(self, *, steer: bool = False) -> None:
        """Refuses early what cannot start (the claim itself is :meth:`_claim`)."""
        if self._holding or (self._turn is not None and not steer):
            raise SessionBusyError(BUSY)
        choice = self.request_options.tool_choice
        if choice.mode == "tool" and choice.tool_name is not None and self.tools.get(choice.tool_name) is None:
            raise ValueError(f"the tool choice names {choice.tool_name!r}, which is not registered")

    def _append(self, message: Message) -> None:
        self._messages.append(message)
        self._notify(MessageAdded(message))

    def _turn_ended(self, turn: Turn) -> None:
        """For the turn (its :class:`~ai_widgets.session._turn.TurnHost`): frees the session of ``turn``, which has
        ended and told its observers so, so another may start. The senders of the messages it delivered get its last
        reply; messages still waiting start the next turn (claimed here, in the same step, so no other caller starts
        one first), or, after a stop or an interrupt, are handed back."""
        returned: list[Message] = []
        follow: tuple[Turn, list[Message], asyncio.AbstractEventLoop] | None = None
        with self._claim_lock:
            if self._turn is not turn:
                return
            self._steering.settle(turn.reply)
            waiting = self._steering.waiting
            if waiting and turn.reply.status is not MessageStatus.CANCELLED:
                # On the loop of a sender that waits for it (this turn's may be about to close: asyncio.run).
                follow = (self._new_turn(), self._steering.take(), waiting[0].loop)
                self._turn = follow[0]
            else:
                returned = self._steering.hand_back()
                self._turn = None
        if follow is not None:
            following, messages, loop = follow
            try:
                loop.call_soon_threadsafe(self._begin_following, following, messages)
            except RuntimeError:  # that sender's loop closed: nobody waits for these messages any more
                with self._claim_lock:
                    if self._turn is following:
                        self._turn = None
                    self._steering.untake()
                    returned = self._steering.hand_back()
            else:
                self._notify(SteeringChanged(()))
        if returned:
            self._notify(SteeringChanged((), tuple(returned)))

    def _new_turn(self, **kinds: Any) -> Turn:
        reply = Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS)
        return Turn(self._turn_host(), reply, estimates=self._estimates, **kinds)

    def _begin_following(self, turn: Turn, messages: list[Message]) -> None:
        """On the loop of the turn that just ended: starts ``turn`` (claimed already) with the messages that turn did
        not deliver; their senders get its last reply."""
        try:
            self._close_unanswered_calls()
            for message in messages:
                self._append(message)
            self._append(turn.reply)
            turn.start(asyncio.get_running_loop())
        except Exception:
            logger.exception("the turn for the messages sent during the last one could not start")
            turn.end()  # its reply (if added) ends, the session is freed and the senders get that reply
            return
        self._notify(BusyChanged(True))

    def _take_steering(self) -> list[Message]:
        """For the turn, at a tool boundary: the messages sent meanwhile, now delivered (it adds them)."""
        with self._claim_lock:
            if not self._steering.waiting:
                return []
            messages = self._steering.take()
        self._notify(SteeringChanged(()))
        return messages

    def _turn_host(self) -> TurnHost:
        """What a new turn reaches of this session: its settings, and the session's own steps it takes."""
        return TurnHost(
            settings=self,
            messages=lambda: list(self._messages),
            notify=self._notify,
            save_reply=self._save_reply,
            ended=self._turn_ended,
            shortened=self._shortened,
            take_steering=self._take_steering,
            append=self._append,
        )

    def _shortened(self, cut: ContextCut | None) -> None:
        """For the turn: how its last request was shortened; the observers are told when that changed."""
        if cut != self.context_cut:
            self.context_cut = cut
            self._notify(ContextShortened(cut))

    def _claim(self, turn: Turn, steer: Message | None = None) -> Steer | None:
        """Makes ``turn`` the running turn if the session is idle, in one step: a second caller, on any thread,
        gets :class:`SessionBusyError`; or, with ``steer``, has that message queued for the running turn (returned)."""
        with self._claim_lock:
            if self._holding or (self._turn is not None and steer is None):
                raise SessionBusyError(BUSY)
            if self._turn is not None and steer is not None:
                return self._steering.add(steer, asyncio.get_running_loop())
            self._turn = turn
        return None

    async def _await_steer(self, steer: Steer) -> Message:
        """Waits for the reply to a message queued for the running turn (see :meth:`send`)."""
        with self._claim_lock:
            queued = self._steering.queued()
        self._notify(SteeringChanged(queued))
        try:
            return await asyncio.shield(asyncio.wrap_future(steer.reply))
        except asyncio.CancelledError:
            with self._claim_lock:
                withdrawn = self._steering.withdraw(steer)
                queued = self._steering.queued()
            if withdrawn:
                self._notify(SteeringChanged(queued))
            raise

    def _close_unanswered_calls(self) -> None:
        """Gives every call in the history an outcome, so no provider ever sees a call without a result.

        Only the messages added since the last turn began are looked at (a finished turn's calls never change
        again); a conversation given as ``messages=``, loaded from a file, or changed under the count is scanned
        from its start once.
        """
        messages = self._messages
        for message in messages[self._closed.start(messages) :]:
            if message.role is not Role.ASSISTANT:
                continue
            end_open_calls(
                self._notify, message, ToolCallState.SKIPPED, "Not run: the conversation went on without it."
            )
            if message.status is MessageStatus.IN_PROGRESS:  # saved mid-turn, restored: that turn is over
                message.status = MessageStatus.CANCELLED
                message.status_text = None
                self._notify(MessageUpdated(message))
        self._closed = Prefix.of(messages, len(messages))

    async def run_call(self, tool_name: str, arguments: dict[str, Any] | None = None) -> Message:
        """Runs one call of a registered tool as a person asked it, without the model: the call is validated, asked
        about and run exactly like a model's (approval, progress, timeout, cancel, stop) in a reply of its own.

        Args:
            tool_name: The tool's name (any case).
            arguments: The arguments, a JSON object.

        Returns:
            The reply holding the call and its outcome.

        Raises:
            SessionBusyError: A turn is already running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file (or this session
                was closed).
            ValueError: No such tool, or the arguments are not JSON data.
            Exception: A source of tools (an MCP server) could not list its tools.
        """
        if self.busy:
            raise SessionBusyError(BUSY)
        self._check_history_writable()
        await self.tools.refresh()  # the tools of MCP servers, as they are now
        if self.busy:
            raise SessionBusyError(BUSY)
        found = self.tools.get(tool_name)
        if found is None:
            raise ValueError(
                f"no tool named {tool_name!r} is registered (have: {', '.join(self.tools.names()) or 'none'})"
            )
        try:
            text = json.dumps(
                checked_json(arguments or {}, where="the arguments", finite=True), ensure_ascii=False, allow_nan=False
            )
        except (UnsafeValueError, TypeError, ValueError) as exc:
            raise ValueError(f"the arguments must be JSON data: {exc}") from None
        part = ToolCallPart(f"call_{uuid.uuid4().hex[:12]}", found.name, text, state=ToolCallState.PENDING)
        return await self._start_turn(direct=part)

    async def _start_turn(
        self,
        *,
        user: Message | None = None,
        before: Sequence[Message] = (),
        direct: ToolCallPart | None = None,
        resume: bool = False,
        output: OutputSpec | None = None,
        fork: Callable[[], None] | None = None,
        steer: bool = False,
    ) -> Message:
        """Claims the session for a turn, then adds the user message and the reply and runs the turn; with ``steer``,
        a running turn gets ``user`` at its next tool boundary instead (see :meth:`send`).

        Args:
            user: The user message that starts the turn (``send``).
            before: Messages that go into the conversation before ``user`` (``send_messages``).
            direct: The call a person asked for (``run_call``).
            resume: Continue after the last reply (``resume``): the calls its limit left unrun go first.
            output: What the answer must match (``send(..., output_type=...)``).
            fork: Cuts the conversation where an edit or a regenerate starts its branch, once the turn is claimed.
        """
        loop = asyncio.get_running_loop()
        turn = self._new_turn(direct=direct is not None, output=output)
        reply = turn.reply
        queued = self._claim(turn, user if steer else None)
        if queued is not None:
            return await self._await_steer(queued)
        try:
            if resume and not self._messages:
                raise ValueError("there is nothing to resume: the conversation is empty")
            carried = carry_over(self._messages[-1]) if resume else []
            self._close_unanswered_calls()
            if fork is not None:
                fork()
            for message in before:
                self._append(message)
            if user is not None:
                self._append(user)
            reply.parts.extend([direct] if direct is not None else carried)
            turn.carried = bool(carried)
            self._append(reply)
            task = turn.start(loop)
        except BaseException:
            if self._turn is turn:
                self._turn = None
            raise
        self._notify(BusyChanged(True))
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            cancelling = getattr(current, "cancelling", None)
            outside = cancelling() > 0 if cancelling is not None else not turn.stop_requested
            if turn.stop_requested and not outside:
                return turn.reply  # stop(): the reply, ended cancelled, is the answer
            raise
        finally:
            if task.done():
                turn.end()

    # --- approval -------------------------------------------------------------------------------------------------

    def approve(
        self,
        tool_call_id: str,
        decision: ApprovalDecision | str,
        reason: str | None = None,
        *,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """Decides on a call that waits for approval. Safe from any thread; returns at once.

        Args:
            tool_call_id: The call's id.
            decision: ``approved`` (run it once), ``approved_always`` (run it, and don't ask again for this tool in
                this session) or ``rejected`` (don't run it; the model is told the person declined).
            reason: Why, told to the model with a rejection.
            arguments: The arguments as the person edited them, with ``approved`` (a changed call is allowed once,
                never always). They are validated like the model's; the call runs with them, the part keeps the
                model's arguments and records these as ``edited_arguments``, and the model is told that the person
                changed them, and to what.

        Raises:
            UnknownToolCallError: No call of the conversation has this id.
            ApprovalError: The call is not waiting, or already decided; the decision is not one of the three; the
                edited arguments are invalid, or go with ``rejected`` or ``approved_always``. Nothing runs and
                nothing changes.
        """
        try:
            chosen = ApprovalDecision(decision)
        except ValueError:
            raise ApprovalError(
                f"unknown decision {decision!r}: use 'approved', 'approved_always' or 'rejected'"[:300]
            ) from None
        if reason is not None and not isinstance(reason, str):
            raise ApprovalError(f"the reason must be text, not {type(reason).__name__}")
        turn = self._turn
        tool_round = None if turn is None else turn.round
        if tool_round is None or not isinstance(tool_call_id, str) or not tool_round.has(tool_call_id):
            raise self._not_waiting(tool_call_id)
        tool_round.approve(tool_call_id, chosen, reason or None, arguments)

    def _not_waiting(self, tool_call_id: object) -> ApprovalError:
        """Why an approval of a call that is not waiting in the running turn is refused.

        Raises:
            UnknownToolCallError: No call of the conversation has this id.
        """
        _, part = known_call(self._messages, tool_call_id)
        shown = shown_id(part.tool_call_id)
        if part.decision is not None:
            return ApprovalError(f"tool call {shown!r} ({part.tool_name}) was already decided: {part.decision}")
        return ApprovalError(
            f"tool call {shown!r} ({part.tool_name}) is not waiting for approval: it is {part.state.value}"
        )

    # --- running without asking ---------------------------------------------------------------------------------

    def run_unasked(
        self, tools: Iterable[str] | str = CODE_TOOLS, reason: str = "Run code without asking is on"
    ) -> None:
        """Lets calls of ``tools`` run without asking, whatever the approval policy says, in this session only (the
        widget's "Run code without asking" switch). It is never saved: a history file, a saved notebook or an
        export does not turn it on again. Each call it spares (one the policy would have asked about) is marked
        with ``reason`` (``ToolCallPart.unasked_reason``), and its card says so. It applies from the next call the
        session asks about; a call waiting for a decision still waits. Calling it again replaces the switch.

        Args:
            tools: Tool names, or ``"code"``: every tool that runs code (one with ``code_arguments``, such as
                ``KernelTools``' ``run_python``), as the tools are when each call is asked about.
            reason: What each spared call is marked with.

        Raises:
            ValueError: ``reason`` is empty, or ``tools`` names no tool.
        """
        self._unasked = UnaskedRule.of(tools, reason)

    def ask_again(self) -> None:
        """Turns :meth:`run_unasked` off: calls are asked about as the approval policy says."""
        self._unasked = None

    @property
    def unasked(self) -> UnaskedRule | None:
        """The switch :meth:`run_unasked` set (which tools, and the reason), or ``None`` when it is off."""
        return self._unasked

    # --- questions a running call asks the person -------------------------------------------------------------

    @property
    def pending_inputs(self) -> list[ToolCallPart]:
        """The calls waiting for the person's input (their server asked: ``input_request``)."""
        turn = self._turn
        tool_round = None if turn is None else turn.round
        return [] if tool_round is None else tool_round.waiting_for_input()

    def respond(self, tool_call_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Answers the question a running call's server asked the person (the call is ``awaiting_input``).

        Like :meth:`~ai_widgets.ChatSession.approve` and :meth:`~ai_widgets.ChatSession.cancel`: safe from any
        thread, and returns at once; the call goes on with the answer on its own loop.

        Args:
            tool_call_id: The call's id.
            action: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``.
            content: The form's values, checked against its schema (its defaults fill what is left out).

        Raises:
            UnknownToolCallError: No call of the conversation has this id.
            InputResponseError: The call is not waiting for input, the action is not one of the three, or the
                content does not fit the form. Nothing changes: the call still waits.
        """
        turn = self._turn
        tool_round = None if turn is None else turn.round
        if tool_round is None or not isinstance(tool_call_id, str) or not tool_round.has(tool_call_id):
            _, part = known_call(self._messages, tool_call_id)
            raise InputResponseError(
                f"tool call {shown_id(part.tool_call_id)!r} ({part.tool_name}) is not waiting for input: it is "
                f"{part.state.value}"
            )
        tool_round.respond(tool_call_id, action, content)

    # --- branches --------------------------------------------------------------------------------------------------

    def branches(self, message_id: str) -> BranchPoint:
        """The alternatives at the place of ``message_id`` in ``messages``: the user messages edits replaced there
        (and the new one), or the replies regenerates replaced (and the new one), with the index of the active one.

        Raises:
            BranchError: No message of the active path has that id.
        """
        messages = self._messages
        return self._branches.point(messages, message_position(messages, message_id))

    def all_branches(self) -> list[BranchPoint]:
        """Every place of ``messages`` that has more than one alternative (:meth:`branches` of each), in order."""
        return list(self._branches.points(self._messages))

    def branch_messages(self, message_id: str, index: int) -> list[Message]:
        """The messages of alternative ``index`` (of :meth:`branches`) at the place of ``message_id``, from that
        place on, as they were when it was left (the active one: ``messages`` from there). Reading them changes
        nothing; :meth:`switch_branch` makes one the active path.

        Raises:
            BranchError: No message of ``messages`` has that id, or there is no alternative ``index`` there.
        """
        messages = self._messages
        return self._branches.alternative(messages, message_position(messages, message_id), index)

    def _stored_messages(self) -> list[Message]:
        """Every message kept in an earlier branch, off ``messages`` (each once, in no particular order)."""
        return list(self._branches.stored())

    def _to_json(self) -> str:
        """The conversation as JSON text: :func:`~ai_widgets.messages.dump_messages`'s format (which any reader of it
        reads as the active path), with the earlier branches under ``"branches"``. ``ChatSession(history=path)``
        opens such a file with its branches."""
        return conversation_with_branches(self._messages, self._branches)

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Writes the conversation to ``path``: a readable transcript for ``.md``, the whole conversation (loadable
        with ``history=`` or :func:`~ai_widgets.messages.load_messages`) for ``.json``; both with the earlier
        branches of edits and regenerates (``.json``: under ``"branches"``; ``.md``: after the transcript).

        For ``.ipynb``, a Jupyter notebook of the active path: the messages as markdown cells, and the code of each
        call of a code-running tool that ran (allowed and started; it succeeded or failed: a tool whose
        ``code_arguments`` are Python, such as ``KernelTools``' ``run_python``) as a code cell, as it ran (the
        person's edit where there was one), in order; so Run All repeats the analysis. It has no outputs: opening
        it runs nothing. A call's tool is looked up among the session's tools as they are now: the code of a tool
        no longer registered is not known to be code, and shows as a line of markdown. Running without asking
        (:meth:`run_unasked`) is never written to any export.

        Returns:
            The path written.

        Raises:
            ValueError: The file name ends in none of ``.md``, ``.json`` and ``.ipynb``.
        """
        target = Path(path).expanduser()
        match target.suffix.lower():
            case ".md" | ".markdown":
                branches = branches_markdown(self._branches)
                text = conversation_markdown(self._messages)
                text += ("\n\n## Earlier branches\n\n" + branches if branches else "") + "\n"
            case ".json":
                text = self._to_json()
            case ".ipynb":
                text = conversation_notebook(self._messages, self._code_arguments)
            case _:
                raise ValueError(f"export() writes .md, .json or .ipynb, not {target.name!r}")
        target.write_text(text, encoding="utf-8")
        return target

    def _code_arguments(self, tool_name: str) -> dict[str, str]:
        found = self.tools.get(tool_name)
        return {} if found is None else dict(found.definition.code_arguments)

    async def edit(self, message_id: str, text: str, *, stop: bool = False) -> Message:
        """Replaces the user message ``message_id`` with ``text`` and runs the turn again from there.

        The message and everything after it stay as an earlier branch at that place (:meth:`branches`); the new
        message keeps the old one's attachments (its parts after the typed text). Returns the new reply, as :meth:`send` does.

        Args:
            message_id: A user message of ``messages``.
            text: The new text.
            stop: Stop a running turn first (its calls waiting for approval or running end ``cancelled``, with
                their outcome, and its reply stays in the replaced branch) instead of refusing.

        Raises:
            BranchError: No user message of ``messages`` has that id.
            ValueError: ``text`` is empty.
            SessionBusyError: A turn is running (and ``stop`` is false), or another one started first.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
            NoTransportError: The session has no transport.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("edit() needs a non-empty message")
        user_position(self._messages, message_id)  # refuse an unknown id before stopping anything
        await self._prepare(stop)
        position = user_position(self._messages, message_id)
        old = self._messages[position]
        kept = old.parts[1:] if old.parts and isinstance(old.parts[0], TextPart) else old.parts  # its attachments
        user = Message(Role.USER, [TextPart(safe_text(text)), *kept])  # as send() makes it
        return await self._start_turn(user=user, fork=lambda: self._cut(user_position(self._messages, message_id)))

    async def regenerate(self, *, stop: bool = False) -> Message:
        """Answers the last user message again (also after an error, a stop or a limit): the replies after it stay
        as an earlier branch there (:meth:`branches` of the new reply). Returns the new reply.

        Args:
            stop: Stop a running turn first (see :meth:`edit`) instead of refusing.

        Raises:
            BranchError: There is nothing to regenerate (no user message).
            SessionBusyError: A turn is running (and ``stop`` is false), or another one started first.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
            NoTransportError: The session has no transport.
        """
        regenerate_position(self._messages)
        await self._prepare(stop)
        return await self._start_turn(fork=lambda: self._cut(regenerate_position(self._messages)))

    def switch_branch(self, message_id: str, index: int) -> BranchPoint:
        """Puts alternative ``index`` (of :meth:`branches`) at the place of ``message_id`` on the active path:
        ``messages`` then follows that branch (as it was when it was left), and the one it replaces is kept.

        Returns:
            The alternatives there, now with ``index`` active.

        Raises:
            BranchError: No message of ``messages`` has that id, or there is no alternative ``index`` there.
            SessionBusyError: A turn is running.
            HistoryTakenOverError: A newer session in this process took over the ``history`` file.
        """
        with self._held("switch branches"):
            self._check_history_writable()
            messages = self._messages
            position = message_position(messages, message_id)
            if self._branches.switch(messages, position, index):
                self._notify(BranchesChanged(position))
            return self._branches.point(messages, position)

    async def _prepare(self, stop: bool) -> None:
        """Refuses what cannot start; with ``stop``, first stops a running turn and waits until it has ended."""
        turn = self._turn
        task = None if turn is None else turn.task
        if stop and turn is not None and task is not None:
            turn.stop()
            # The turn's end is the task's first done callback, so it has run when the wait (a later one) returns.
            loop = task.get_loop()
            if loop is asyncio.get_running_loop():
                await asyncio.wait({task})
            else:  # the turn runs on another thread's loop: wait there for it to end
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.wait({task}), loop))
        self._check_can_send()

    def _cut(self, position: int) -> None:
        """For the claimed turn, before it adds its messages: keeps ``messages[position:]`` as an earlier branch."""
        if position >= len(self._messages):
            return  # nothing after it to replace (a user message whose turn added no reply)
        self._branches.replace_from(self._messages, position)
        self._notify(BranchesChanged(position))

    # --- an agent -------------------------------------------------------------------------------------------------

    @classmethod
    def from_agent(
        cls,
        agent: Any,
        *,
        deps: Any = None,
        drop_unsupported: bool = False,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None,
        **options: Any,
    ) -> ChatSession:
        """A session whose turns run a pydantic-ai ``Agent``'s pieces in this project's loop: cards, approvals,
        edits, stop, limits and history files work as with any transport.

        Carried over: the agent's model (the transport, with its model settings); its instructions and system
        prompts, static or functions of ``RunContext``, rendered before every request and put first in the system
        prompt; its function tools and toolsets (MCP servers, combined, prefixed, filtered and prepared toolsets
        included), listed before every request and called through pydantic-ai's toolset API with a ``RunContext``
        carrying ``deps``, the model, the usage, the call's id and retry count; ``requires_approval`` tools and
        ``ApprovalRequired`` asking in the card; deferred and external tools waiting in the card for the person
        to type their result; ``ModelRetry`` as a failure the model sees, within the tool's retries.

        Args:
            agent: A ``pydantic_ai.Agent`` with a model.
            deps: The agent's dependencies (``ctx.deps`` for its tools, instructions and system prompts).
            drop_unsupported: Chat without the agent's pieces the session cannot carry over (output types,
                capabilities such as history processors, event stream handlers, model settings computed per run;
                each is logged) instead of refusing the agent.
            tools: More tools, beside the agent's (a :class:`ToolRegistry` gets the agent's tools added to it).
            **options: The session's other options, as :class:`ChatSession` takes them (``approval_policy``,
                ``options``, ``request_options``, ``context``, ``messages``, ``conversation_id``, ``history``).

        Raises:
            ImportError: pydantic-ai is not installed (``pip install "ai_widgets[pydantic-ai]"``).
            TypeError: ``agent`` is not a pydantic-ai ``Agent``, or an option is unknown.
            AgentNotSupportedError: The agent has no model, or pieces that cannot be carried over (named).
        """
        try:
            from ai_widgets.integrations import pydantic_ai  # optional: imported only for an agent
        except ImportError as exc:
            if not (exc.name or "").startswith("pydantic_ai"):
                raise
            raise ImportError(
                'ChatSession.from_agent needs pydantic-ai: pip install "ai_widgets[pydantic-ai]"', name=exc.name
            ) from exc
        parts = pydantic_ai.agent_parts(agent, deps=deps, drop_unsupported=drop_unsupported)
        if isinstance(tools, ToolRegistry):
            tools.add(parts.tools)
            registry: ToolRegistry | list[Tool | Callable[..., Any] | ToolSource] = tools
        else:
            registry = [parts.tools, *(tools or ())]
        made: Any = cls
        session: ChatSession = made(parts.transport, tools=registry, **options)
        return session


BUSY = "a turn is already running: wait for its reply, or stop() it first"


def turn_loop(session: ChatSession) -> asyncio.AbstractEventLoop | None:
    """The event loop ``session``'s running turn runs on, or ``None`` when it is idle: for a host of the session
    (the chat widget) that must do something on the thread of that turn, or must not block it."""
    return session._loop()


def check_text(text: object, doing: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{doing}() needs a non-empty message")
