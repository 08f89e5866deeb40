"""``ChatWidget``: the anywidget that mirrors a ``ChatSession`` in a notebook cell."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

import ipywidgets

from ai_widgets.approval import ApprovalDecision, ApprovalPolicy
from ai_widgets.attachments import AttachmentPart, message_attachments, message_attachments_async
from ai_widgets.integrations._by_name import transport_for_agent
from ai_widgets.messages import Message, MessageStatus, TextPart, Usage, conversation_markdown
from ai_widgets.options import RequestOptions, SessionOptions
from ai_widgets.session import (
    BranchPoint,
    ChatSession,
    HistoryTakenOverError,
    NoOutputError,
    NotDeliveredError,
    NoTransportError,
    SessionBusyError,
)
from ai_widgets.tools import Tool, ToolRegistry, ToolSource
from ai_widgets.transports._base import Transport
from ai_widgets.widget._interrupts import watch_interrupts
from ai_widgets.widget._kernel import await_with_comms, copy_outcome, kernel_support, private_loop, wait_with_comms
from ai_widgets.widget._prompts import PromptError
from ai_widgets.widget._turn_view import TurnView
from ai_widgets.widget._unstarted import Taken, Unstarted, UnstartedTurns, run_ahead
from ai_widgets.widget._view import FrontEndNotBuiltError, SessionView, check_bundle
from ai_widgets.widget._voila import without_a_page
from ai_widgets.widget._waiting import WaitingNote, check_can_block, start_when_idle

__all__ = ["ChatWidget", "FrontEndNotBuiltError", "ReplyFuture"]

logger = logging.getLogger("ai_widgets")

T = TypeVar("T")


class ReplyFuture(concurrent.futures.Future[Message]):
    """The reply of a turn the chat started and did not wait for (:meth:`ChatWidget.send`, :meth:`~ChatWidget.edit`,
    :meth:`~ChatWidget.regenerate`, :meth:`~ChatWidget.resume`).

    A ``concurrent.futures.Future``, safe from any thread (``result(timeout)``, ``done()``, ``add_done_callback``;
    ``cancel()`` stops the turn), that a cell can also await: ``reply = await chat.send("hi")`` waits for the reply
    while clicks in the chat keep reaching the kernel, as ``await chat.ask(...)`` does. Cancelling the await (a kernel
    interrupt) stops the turn.

    As a cell's last expression (``chat.send("hi")``) it shows nothing, in every host: the reply shows in the chat.
    """

    def _ipython_display_(self) -> None:
        """Jupyter's display (the kernel's output in JupyterLab, Notebook, VS Code and Voilà): nothing to show."""

    def _display_(self) -> None:
        """marimo's display: ``None``, which shows nothing."""

    def __await__(self) -> Generator[Any, None, Message]:
        return await_with_comms(asyncio.wrap_future(self)).__await__()

    @classmethod
    def following(cls, inner: concurrent.futures.Future[Message]) -> ReplyFuture:
        """A reply future that ends as ``inner`` ends; cancelling it cancels ``inner``."""
        outer = cls()

        def cancel_inner(done: concurrent.futures.Future[Message]) -> None:
            if done.cancelled():
                inner.cancel()

        inner.add_done_callback(lambda done: copy_outcome(done, outer))
        outer.add_done_callback(cancel_inner)
        return outer

    @classmethod
    def failed(cls, exc: BaseException) -> ReplyFuture:
        """A reply future of a turn that never started."""
        future = cls()
        future.set_exception(exc)
        return future


class ChatWidget(SessionView):
    """A chat with a model and its tools, live in a notebook cell.

    Build it from a model string (or a transport, or a :class:`~ai_widgets.ChatSession`) and the session's options::

        chat = ChatWidget(model="openai:gpt-5-mini", tools=[get_weather])
        chat                                   # shows it; type in its input box
        chat.send("What's the weather?")       # starts a turn, returns at once
        reply = await chat.ask("And tomorrow?")  # waits for the reply; approvals stay clickable
        reply = chat.ask_sync("And Sunday?")     # blocks the cell; approvals stay clickable

    or from a pydantic-ai agent, whose model, instructions, tools and toolsets it runs
    (:meth:`~ai_widgets.ChatSession.from_agent`)::

        chat = ChatWidget(agent=support_agent, deps=SupportDeps(customer_id=42))

    or from an agent people already run, over the Agent Client Protocol (``pip install "ai_widgets[acp]"``)::

        chat = ChatWidget(acp=["claude-code-acp"])

    Args:
        session: The session to show; built from the other arguments when ``None``.
        model: The model as a string (when no session or transport is given): ``"openai:gpt-5-mini"``,
            ``"anthropic:…"``, ``"gemini:…"``, ``"ollama:qwen3"``, ... (see :class:`~ai_widgets.ChatSession`); the key
            comes from the provider's usual environment variable.
        transport: How to reach the model (when no session or model is given).
        agent: A pydantic-ai ``Agent`` to chat with (instead of a session or a transport).
        deps: The agent's dependencies (``ctx.deps`` for its tools and instructions); only with ``agent``.
        acp: An ACP agent's command, the program and its arguments (``["gemini", "--acp"]``), to chat with
            (instead of a session, a model, a transport or an agent): an
            :class:`~ai_widgets.integrations.acp.ACPTransport` the widget owns, its agent stopped by :meth:`close`.
        tools: Tools, functions and sources of tools (an :class:`~ai_widgets.mcp.MCPServer`), or a
            :class:`~ai_widgets.ToolRegistry` (when no session is given).
        approval_policy: Decides which calls need a person (when no session is given).
        options: How a turn runs (when no session is given).
        request_options: What every request carries (when no session is given).
        context: The application's object for tool calls (when no session is given).
        suggestions: Prompts offered as chips above the input (disabled while a turn runs).
        collapse_tool_calls: Cards start collapsed to a one-line summary.
        placeholder: The input box's placeholder.
        flush_interval: Seconds between patches to the front end while a reply streams.
        history: A JSON file that keeps the conversation across kernel restarts (when no session is given; see
            :class:`~ai_widgets.ChatSession`). Running the cell again opens it again: the new chat takes the file
            over, and this one shows that it no longer saves, and refuses to send. :meth:`close` releases it.

    Attributes:
        session: The :class:`~ai_widgets.ChatSession` it shows.
        messages: The conversation (``session.messages``).
        history: The ``history=`` file (a ``Path``), or ``None``.
        tools: The session's :class:`~ai_widgets.ToolRegistry` (``session.tools``).
        usage: What the conversation used so far (``session.usage``).

    What the widget syncs with the front end is its own state, behind ``_`` (``_history``, ``_tools``, ``_usage``,
    ...); its public traits are the settings above (``suggestions``, ``collapse_tool_calls``, ``placeholder``,
    ``compact``).
    """

    def __init__(
        self,
        session: ChatSession | None = None,
        *,
        model: str | None = None,
        transport: Transport | None = None,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None,
        approval_policy: ApprovalPolicy | None = None,
        options: SessionOptions | None = None,
        request_options: RequestOptions | None = None,
        context: Any = None,
        suggestions: Iterable[str] = (),
        collapse_tool_calls: bool = True,
        placeholder: str = "Message the model…",
        compact: bool = False,
        flush_interval: float = 1 / 30,
        history: str | os.PathLike[str] | None = None,
        agent: Any = None,
        deps: Any = None,
        acp: Sequence[str] | None = None,
    ) -> None:
        check_bundle()
        self._owned_transport: Any = None
        self._unstarted = UnstartedTurns()  # turns started and not begun yet: an asking call runs them first
        if acp is not None:
            if session is not None or transport is not None or model is not None or agent is not None:
                raise TypeError(
                    "pass acp= alone, or a session, a model, a transport or an agent, not both: the ACP agent is the "
                    "model"
                )
            transport = self._owned_transport = transport_for_agent(acp)
        if agent is not None:
            if session is not None or transport is not None or model is not None:
                raise TypeError(
                    "pass agent= alone, or a session, a model or a transport, not both: the agent brings its model"
                )
            session = ChatSession.from_agent(
                agent,
                deps=deps,
                tools=tools,
                approval_policy=approval_policy,
                options=options,
                request_options=request_options,
                context=context,
                history=history,
            )
        elif deps is not None:
            raise TypeError("deps= goes with agent=: they are the agent's dependencies")
        elif session is None:
            if transport is None and model is None:
                raise TypeError("ChatWidget needs a session, or model=... (or transport=..., agent=...) to build one")
            session = ChatSession(
                transport,
                model=model,
                tools=tools,
                approval_policy=approval_policy,
                options=options,
                request_options=request_options,
                context=context,
                history=history,
            )
        elif any(
            x is not None
            for x in (model, transport, tools, approval_policy, options, request_options, context, history)
        ):
            raise TypeError("pass either a session, or model= or transport= with its options, not both")
        super().__init__(
            session,
            flush_interval=flush_interval,
            suggestions=list(suggestions),
            collapse_tool_calls=collapse_tool_calls,
            placeholder=placeholder,
            compact=compact,
        )
        self._owns_history = history is not None
        self._history_file = None if history is None else Path(history)

    def close(self) -> None:
        """Closes the widget; a ``history`` file it opened is written, folded into its one JSON file, and released
        (unless a turn still runs, which goes on saving); an ACP agent it started (``acp=``) is stopped."""
        super().close()
        if self._closes_history():
            self.session.close()
        owned = getattr(self, "_owned_transport", None)  # None too when __init__ failed before it was set
        if owned is not None:
            owned.close()

    async def aclose(self) -> None:
        """Like :meth:`close`, from async code: a ``history`` file it opened is folded on a worker thread."""
        super().close()
        if self._closes_history():
            await self.session.aclose()
        owned = getattr(self, "_owned_transport", None)  # None too when __init__ failed before it was set
        if owned is not None:
            await owned.aclose()

    def _closes_history(self) -> bool:
        return getattr(self, "_owns_history", False) and not self.session.busy

    def clear(self) -> None:
        """Removes every message (from the session and the widget).

        Raises:
            SessionBusyError: A turn is running.
        """
        self.session.clear()

    def _on_send(self, text: str, attach: list[AttachmentPart], send_id: str | None) -> None:
        """The input box's message, checked at once (``check_send``: a refusal echoes ``send_id``, so the box keeps
        its text and chips); the turn then runs in the background with the checked parts. Sent while a turn runs,
        it steers that turn (queued for its next tool boundary: see :meth:`ChatSession.send`)."""
        try:
            parts = self.session.check_send(text, attach=attach)
        except SessionBusyError:
            self._send_error("The conversation is being changed: try again in a moment.", send_id)
            return
        except (ValueError, HistoryTakenOverError, NoTransportError) as exc:  # AttachmentError is a ValueError
            self._send_error(str(exc), send_id)
            return
        self._start_in_background(lambda: self.session.send(text, attach=parts), while_busy=True)
        if send_id is not None:
            self._send_custom({"type": "sent", "id": send_id})  # the view may now empty its input and chips

    def _on_continue(self) -> None:
        self._start_in_background(self.session.resume)

    def _on_prompt(self, name: str, arguments: dict[str, str], send_id: str | None) -> None:
        """``/name`` sent from the input box: rendered by its server, then sent as the person's message (and the
        prompt's earlier messages before it); ``sent`` once the turn has started, or an error echoing ``send_id``
        (at the form's fields where it is about an argument), so the view keeps what was typed."""
        if self.session.busy:
            self._send_error("A reply is still running: wait for it, or press Stop.", send_id)
            return
        try:
            future = asyncio.run_coroutine_threadsafe(
                self._prompt_turn(name, arguments, send_id), self._background_loop()
            )
        except RuntimeError as exc:  # no loop to run on (the kernel is shutting down)
            self._send_error(f"Sending the prompt failed: {exc}", send_id)
            return
        future.add_done_callback(self._report_background_failure)

    async def _prompt_turn(self, name: str, arguments: dict[str, str], send_id: str | None) -> Message | None:
        try:
            messages = await self._prompts.render(name, arguments)
        except PromptError as exc:
            self._send_error(str(exc), send_id, fields=exc.fields)
            return None
        turn = asyncio.ensure_future(self._interruptible(lambda: self.session.send_messages(messages)))
        await asyncio.sleep(0)  # the turn's first step: it has started (its messages added), or it was refused
        if turn.done() and not turn.cancelled() and turn.exception() is not None:
            self._send_error(str(turn.exception()), send_id)
            return None
        if send_id is not None:
            self._send_custom({"type": "sent", "id": send_id})  # the view may now empty its input and close the form
        return await turn

    def _start_in_background(
        self, start: Callable[[], Coroutine[Any, Any, Message]], *, while_busy: bool = False
    ) -> ReplyFuture:
        """Starts a turn on the kernel's loop (a private one outside a kernel) that no cell waits for; one that fails
        is told in the chat. ``while_busy``: the turn itself deals with one already running (an edit that stops it)."""
        if self.session.busy and not while_busy:
            self._send_error("A reply is still running: wait for it, or press Stop.")
            return ReplyFuture.failed(SessionBusyError("a turn is already running"))
        # Queued until it begins: an asking call made meanwhile runs it first, so the two are answered in order.
        turn = self._unstarted.add(lambda: self._interruptible(start))
        turn.reply.add_done_callback(self._report_background_failure)
        reply = ReplyFuture.following(turn.reply)
        self._begin_in_background([turn])
        return reply

    def _begin_in_background(self, turns: list[Unstarted]) -> None:
        """Has ``turns`` (queued) begun on the kernel's loop (a private one outside a kernel), unless an asking
        call takes them first.

        Raises:
            RuntimeError: There is no loop to run on (the kernel is shutting down); the turns are withdrawn.
        """
        for turn in turns:
            try:
                asyncio.run_coroutine_threadsafe(self._unstarted.run_if_waiting(turn), self._background_loop())
            except RuntimeError:
                for left in turns[turns.index(turn) :]:
                    self._unstarted.withdraw(left)
                raise

    async def _interruptible(self, start: Callable[[], Coroutine[Any, Any, Message]]) -> Message:
        """Runs a turn no cell waits for, so that a kernel interrupt stops it (where the kernel lets us see one)."""
        _observed, unwatch = watch_interrupts(self.session.stop)
        try:
            return await start()
        finally:
            unwatch()

    def _report_background_failure(self, future: concurrent.futures.Future[Any]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if isinstance(exc, NotDeliveredError):
            return  # a stop handed the message back: the input box has its text again
        if exc is not None:
            logger.warning("a turn started from the widget failed: %s", exc)
            self._send_error(str(exc))

    # --- the Python API -------------------------------------------------------------------------------------------

    def send(self, text: str, *, attach: Any = ()) -> ReplyFuture:
        """Starts a turn with ``text`` and returns at once; the reply streams into the widget.

        Sent while a turn runs, it steers that turn instead, as the input box does: the message is delivered at the
        turn's next tool boundary (the model gets it with that round's results), or starts the next turn if the
        turn ends first; Stop hands it back (the future then raises ``NotDeliveredError``). See
        :meth:`ChatSession.send`.

        It replaces ipywidgets' ``Widget.send(content, buffers)`` (a custom message to the front end), which a chat
        does not offer: the widget sends its own messages itself.

        Args:
            text: The person's message.
            attach: Kernel objects for the message (see :meth:`ChatSession.send`): a list, a dict of name to
                object, or one object; converted and checked here, before the turn starts.

        Returns:
            The reply to come (:class:`ReplyFuture`): ``await`` it in a cell, or ``result(timeout)`` from any thread.

        Raises:
            TypeError: ``text`` is not text.
            ValueError: ``text`` is empty.
            SessionBusyError: The conversation is being cleared.
            AttachmentError: An attached object cannot be converted, or its provider would refuse it.
            HistoryTakenOverError: A newer chat in this kernel took over the ``history`` file.
            NoTransportError: The session has no transport.
        """
        if not isinstance(text, str):
            raise TypeError(
                f"send() takes the person's message as text, not {type(text).__name__} (the chat sends its own "
                "messages to the front end)"
            )
        parts = self.session.check_send(text, attach=attach)
        return self._start_in_background(lambda: self.session.send(text, attach=parts), while_busy=True)

    def focus(self) -> None:
        """ipywidgets' focus message (through ipywidgets' own send: :meth:`send` takes only the person's text)."""
        ipywidgets.Widget.send(self, {"do": "focus"})

    def blur(self) -> None:
        """ipywidgets' blur message (through ipywidgets' own send: :meth:`send` takes only the person's text)."""
        ipywidgets.Widget.send(self, {"do": "blur"})

    # --- a person's decisions, as the session takes them ------------------------------------------------------------

    def approve(
        self,
        tool_call_id: str,
        decision: ApprovalDecision | str,
        reason: str | None = None,
        *,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """Decides on a call waiting for approval, as its card's buttons do (:meth:`ChatSession.approve`; a call of
        a tool run by hand in this chat included). Safe from any thread; returns at once.

        Raises:
            UnknownToolCallError: No call has this id.
            ApprovalError: The call is not waiting, or was decided; the decision or the edited arguments are invalid.
        """
        self._session_of(tool_call_id).approve(tool_call_id, decision, reason, arguments=arguments)

    def cancel(self, tool_call_id: str, reason: str | None = None) -> None:
        """Cancels one call, waiting or running, as its card's Cancel does (:meth:`ChatSession.cancel`). Safe from any
        thread; returns at once.

        Raises:
            UnknownToolCallError: No call has this id.
            CancelError: The call has ended, or its cancel is under way.
        """
        self._session_of(tool_call_id).cancel(tool_call_id, reason)

    def respond(self, tool_call_id: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Answers a call's question (``awaiting_input``), as its card's form does (:meth:`ChatSession.respond`).
        Safe from any thread; returns at once.

        Raises:
            UnknownToolCallError: No call has this id.
            InputResponseError: The call is not waiting for input, or the answer does not fit its form.
        """
        self._session_of(tool_call_id).respond(tool_call_id, action, content)

    def edit(self, message_id: str, text: str, *, stop: bool = False) -> ReplyFuture:
        """Replaces a user message and runs the turn again from there, as the message's Edit does
        (:meth:`ChatSession.edit`); starts it and returns at once, like :meth:`send`.

        Returns:
            The new reply to come (:class:`ReplyFuture`). A refusal found once the turn is asked to start (no user
            message has that id, another turn started first) is raised by it, and shown in the chat.

        Raises:
            TypeError: ``text`` is not text.
            ValueError: ``text`` is empty.
            SessionBusyError: A turn is running (and ``stop`` is false).
        """
        if not isinstance(text, str):
            raise TypeError(f"edit() takes the new message as text, not {type(text).__name__}")
        if not text.strip():
            raise ValueError("edit() needs a non-empty message")
        self._refuse_busy(stop)
        return self._start_in_background(lambda: self.session.edit(message_id, text, stop=stop), while_busy=stop)

    def regenerate(self, *, stop: bool = False) -> ReplyFuture:
        """Answers the last user message again, as Regenerate / Retry does (:meth:`ChatSession.regenerate`); starts
        it and returns at once, like :meth:`send`.

        Returns:
            The new reply to come (:class:`ReplyFuture`); a refusal found once it is asked to start (nothing to
            regenerate) is raised by it, and shown in the chat.

        Raises:
            SessionBusyError: A turn is running (and ``stop`` is false).
        """
        self._refuse_busy(stop)
        return self._start_in_background(lambda: self.session.regenerate(stop=stop), while_busy=stop)

    def resume(self) -> ReplyFuture:
        """Lets the model go on without a new message (after the tool-round limit), as Continue does
        (:meth:`ChatSession.resume`); starts it and returns at once, like :meth:`send`.

        Returns:
            The reply to come (:class:`ReplyFuture`).

        Raises:
            SessionBusyError: A turn is running.
        """
        self._refuse_busy(False)
        return self._start_in_background(self.session.resume)

    def switch_branch(self, message_id: str, index: int) -> BranchPoint:
        """Shows alternative ``index`` at the place of ``message_id``, as the message's ``< 1/2 >`` does
        (:meth:`ChatSession.switch_branch`).

        Raises:
            BranchError: No message has that id, or there is no alternative ``index`` there.
            SessionBusyError: A turn is running.
        """
        return self.session.switch_branch(message_id, index)

    def new_chat(self) -> int:
        """Starts a fresh conversation, as the New chat button does (:meth:`ChatSession.new_chat`): the one so far is
        kept as an earlier branch at the start, which the first message's ``< 1/2 >`` switches back to.

        Returns:
            How many messages were set aside (0 when the conversation was empty).

        Raises:
            SessionBusyError: A turn is running.
        """
        return self.session.new_chat()

    def _refuse_busy(self, stop: bool) -> None:
        if self.session.busy and not stop:
            raise SessionBusyError("a turn is already running: wait for its reply, or stop() it first")

    @overload
    async def ask(self, text: str, *, attach: Any = (), output_type: None = None, show: bool = True) -> Message: ...
    @overload
    async def ask(self, text: str, *, attach: Any = (), output_type: type[T], show: bool = True) -> T: ...
    @overload
    async def ask(self, text: str, *, attach: Any = (), output_type: Any, show: bool = True) -> Any: ...

    async def ask(self, text: str, *, attach: Any = (), output_type: Any = None, show: bool = True) -> Any:
        """Sends ``text`` and waits for the reply; approval clicks reach the session meanwhile.

        Args:
            text: The person's message.
            attach: Kernel objects for the message (see :meth:`ChatSession.send`), converted and checked before
                anything shows or is sent.
            output_type: Ask for a typed answer (a pydantic model, dataclass, TypedDict or any type pydantic
                validates; see ``ChatSession.send``) and return the validated object instead of the reply.
            show: Also show this turn live in the cell that asks (the message, the streaming reply, its tool cards
                with their approval buttons, in step with the chat's own view: a click in either place decides
                once). Only in a Jupyter kernel; the cell's output keeps the turn when it ends.

        Returns:
            The reply, or with ``output_type`` the validated object (also the reply's ``output``).

        A turn already running (started from the input box, or by another call) is waited for first, and the cell
        says so ("Waiting for the turn in progress…"): ``ask`` never steers it (:meth:`send` and
        :meth:`ChatSession.send` do).

        Raises:
            ValueError: ``text`` is empty.
            AttachmentError: An attached object cannot be converted, or its provider would refuse it.
            HistoryTakenOverError: A newer chat in this kernel took over the ``history`` file.
            UnsupportedKernelError: This kernel cannot process clicks while a cell awaits; use :meth:`send`.
            OutputValidationError: The answer did not validate after every retry (it keeps the raw answer).
            NoOutputError: With ``output_type``, the turn ended without an answer (stopped, failed, at a limit).
            TypeError: ``output_type`` has no JSON Schema.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("ask() needs a non-empty message")
        converted = await message_attachments_async(attach)  # off the loop: a figure's drawing does not hold it
        note, view, parts, ahead = self._show_turn(text, converted, show, live=True)
        start = lambda: without_a_page(self.session, self._asked(text, parts, output_type))  # noqa: E731
        reply = await self._await_turn(start, view, note, ahead)
        return reply if output_type is None else typed(reply)

    async def _await_turn(
        self,
        start: Callable[[], Coroutine[Any, Any, Message]],
        view: TurnView | None,
        note: WaitingNote,
        ahead: Taken,
    ) -> Message:
        task = asyncio.ensure_future(run_ahead(*ahead, lambda: shown_in(self.session, view, start, note)))
        try:
            return await await_with_comms(task)
        except BaseException:
            # Stop this call's own turn only: a SessionBusyError from the task means another caller's turn runs.
            if not task.done():
                task.cancel()
            self._give_back(ahead[0])
            raise
        finally:
            self._settle(view, note)

    def _give_back(self, turns: list[Unstarted]) -> None:
        """The turns an asking call took and never ran (it was cancelled first) begin in the background after all,
        as if it had never taken them."""
        with contextlib.suppress(RuntimeError):  # no loop left to run them on: they were withdrawn (cancelled)
            self._begin_in_background(self._unstarted.give_back(turns))

    def _asked(self, text: str, parts: list[AttachmentPart], output_type: Any) -> Coroutine[Any, Any, Message]:
        """The asking call's own turn: it never steers one that runs (it waits for that turn, then asks)."""
        return self.session.send(text, attach=parts, output_type=output_type, steer=False)

    def _settle(self, view: TurnView | None, note: WaitingNote) -> None:
        """After an asking call: its note and view settle, and the outputs showing the chat and the turn get the
        transcript as it now stands, from the asking cell (the one a runner such as nbclient is reading)."""
        note.settle()
        if view is not None:
            view.settle()
            view.update_transcript()
        self.update_transcript()

    @overload
    def ask_sync(self, text: str, *, attach: Any = (), output_type: None = None, show: bool = True) -> Message: ...
    @overload
    def ask_sync(self, text: str, *, attach: Any = (), output_type: type[T], show: bool = True) -> T: ...
    @overload
    def ask_sync(self, text: str, *, attach: Any = (), output_type: Any, show: bool = True) -> Any: ...

    def ask_sync(self, text: str, *, attach: Any = (), output_type: Any = None, show: bool = True) -> Any:
        """Sends ``text`` and blocks until the reply; approval clicks reach the session meanwhile.

        A kernel interrupt stops the turn cleanly.

        A turn already running on another thread is waited for first, and the cell says so ("Waiting for the turn in
        progress…"). One on the kernel's own event loop (the input box's, :meth:`send`'s) cannot be: this cell
        blocks that loop, so the turn could never end; use ``await chat.ask(...)``, which waits for it.

        Args:
            text: The person's message.
            attach: Kernel objects for the message (see :meth:`ask`).
            output_type: Ask for a typed answer and return the validated object (see :meth:`ask`).
            show: Also show this turn live in the cell that asks (see :meth:`ask`).

        Returns:
            The reply, or with ``output_type`` the validated object (also the reply's ``output``).

        Raises:
            SessionBusyError: The turn in progress runs on the kernel's event loop, which this cell would block.
            ValueError: ``text`` is empty.
            AttachmentError: An attached object cannot be converted, or its provider would refuse it.
            HistoryTakenOverError: A newer chat in this kernel took over the ``history`` file.
            UnsupportedKernelError: This kernel cannot process clicks while a cell blocks; use :meth:`send`.
            OutputValidationError: The answer did not validate after every retry (it keeps the raw answer).
            NoOutputError: With ``output_type``, the turn ended without an answer (stopped, failed, at a limit).
            TypeError: ``output_type`` has no JSON Schema.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("ask() needs a non-empty message")
        note, view, parts, ahead = self._show_turn(text, message_attachments(attach), show, live=False)
        start = lambda: without_a_page(self.session, self._asked(text, parts, output_type))  # noqa: E731
        reply = self._wait_turn(start, view, note, ahead)
        return reply if output_type is None else typed(reply)

    def _wait_turn(
        self,
        start: Callable[[], Coroutine[Any, Any, Message]],
        view: TurnView | None,
        note: WaitingNote,
        ahead: Taken,
    ) -> Message:
        # On a loop of its own: this cell blocks the kernel's, where the turns sent before it were to begin.
        loop = private_loop()
        began, abandoned = threading.Event(), threading.Event()
        then = lambda: shown_in(self.session, view, start, note, began, abandoned)  # noqa: E731
        future = asyncio.run_coroutine_threadsafe(run_ahead(*ahead, then), loop)
        try:
            return wait_with_comms(future)
        except BaseException:
            # The cell no longer waits (an interrupt, a kernel that cannot wait): a turn that has not started never
            # does, one that runs is cancelled (on its loop, after its first step).
            abandoned.set()
            future.cancel()
            with contextlib.suppress(BaseException):
                asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(timeout=5)  # the cancel is delivered
            if began.is_set():
                # Let the turn record its cancellation; the interrupt is what the caller sees.
                session, deadline = self.session, time.monotonic() + 5
                while session.busy and time.monotonic() < deadline:
                    time.sleep(0.01)
            self._give_back(ahead[0])
            raise
        finally:
            self._settle(view, note)

    def _show_turn(
        self, text: str, parts: list[AttachmentPart], show: bool, *, live: bool
    ) -> tuple[WaitingNote, TurnView | None, list[AttachmentPart], Taken]:
        """Checks that a turn can start with ``parts`` (converted already; a running turn is waited for: the note
        says so in the calling cell); with ``show``, displays the view of that turn in the calling cell. Takes the
        turns started before and not begun yet (``send``'s), which the asking call runs first, in order."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("ask() needs a non-empty message")
        # Refused before anything shows: no empty view of a turn that never starts. Busy is no refusal: it waits
        # (unless the wait would block the very loop that turn runs on); check_send checked the parts before it.
        with contextlib.suppress(SessionBusyError):
            parts = self.session.check_send(text, attach=parts, steer=False)
        if not live:
            check_can_block(self.session)
        in_kernel = kernel_support().kind.startswith("ipykernel")
        ahead = self._unstarted.take_all()
        try:
            note = WaitingNote(self.session, in_kernel=in_kernel, live=live, ahead=bool(ahead[0] or ahead[1]))
        except BaseException:
            self._give_back(ahead[0])
            raise
        if not show or not in_kernel:
            return note, None, parts, ahead
        from IPython.display import display

        # It shows the turn the asking call's own task starts (``shown_in``), from where the conversation stands then.
        view = TurnView(self.session, start=None, collapse_tool_calls=self.collapse_tool_calls)
        try:
            display(view)
        except BaseException:
            view.close()  # no turn will settle it
            note.settle()
            self._give_back(ahead[0])
            raise
        return note, view, parts, ahead

    def stop(self) -> bool:
        """Stops the running turn; returns whether one was running."""
        return self.session.stop()

    @property
    def messages(self) -> list[Message]:
        """The conversation."""
        return self.session.messages

    @property
    def history(self) -> Path | None:
        """The file given as ``history=``, which keeps the conversation (``None``: none was given)."""
        return self._history_file

    @property
    def tools(self) -> ToolRegistry:
        """The session's tools (``session.tools``): register or remove tools here, the cards follow."""
        return self.session.tools

    @property
    def usage(self) -> Usage:
        """What the conversation has used so far (``session.usage``): tokens, requests and cost."""
        return self.session.usage

    def transcript(self) -> str:
        """The conversation as markdown."""
        return conversation_markdown(self.session.messages)

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Writes the conversation to ``path``: a readable transcript for ``.md``, the whole conversation (loadable
        with ``history=`` or :func:`~ai_widgets.messages.load_messages`) for ``.json``; both with the earlier
        branches of edits and regenerates (the markdown after the transcript). ``.ipynb``: a notebook whose
        markdown cells are the messages and whose code cells are the code each run ran, in order, so Run All
        repeats the analysis (see :meth:`ChatSession.export`).

        Returns:
            The path written.

        Raises:
            ValueError: The file name ends in none of ``.md``, ``.json`` and ``.ipynb``.
        """
        return self.session.export(path)


def typed(reply: Message) -> Any:
    """A typed turn's validated object; a turn that ended without one says how it ended."""
    if reply.output is not None:
        return reply.output
    if reply.status is not MessageStatus.COMPLETED:
        why = f": {reply.error}" if reply.error else ""
        raise NoOutputError(f"The turn ended {reply.status.value} without a typed answer{why}", reply=reply)
    if not reply.parts or not isinstance(reply.parts[-1], TextPart):  # else the answer validated to None
        raise NoOutputError(
            "The turn ended with tool calls left to run (execute_tools is off), without a typed answer", reply=reply
        )
    return None


async def shown_in(
    session: ChatSession,
    view: TurnView | None,
    start: Callable[[], Coroutine[Any, Any, Message]],
    note: WaitingNote,
    began: threading.Event | None = None,
    abandoned: threading.Event | None = None,
) -> Message:
    """Starts the turn once no other runs, shown in ``view`` (the asking cell's view of it): from this task, right
    before it starts. From another thread: ``began`` is set as it starts, and it does not start once ``abandoned``
    is set."""

    def before() -> None:
        if abandoned is not None and abandoned.is_set():
            raise asyncio.CancelledError  # the asking call gave up before the turn started
        if began is not None:
            began.set()
        if view is not None:
            view.begin()
        note.started()

    return await start_when_idle(session, start, before)
