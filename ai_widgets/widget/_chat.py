"""``ChatWidget``: the anywidget that mirrors a ``ChatSession`` in a notebook cell."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import traitlets

from ai_widgets.approval import ApprovalError, ApprovalPolicy, DefaultApprovalPolicy
from ai_widgets.messages import Message, MessageStatus, conversation_markdown, dump_messages
from ai_widgets.options import RequestOptions, SessionOptions
from ai_widgets.session import ChatSession, SessionBusyError
from ai_widgets.tools import Tool, ToolRegistry
from ai_widgets.transports._base import Transport
from ai_widgets.widget._actions import (
    MAX_ERROR_CHARS,
    ActionError,
    ApproveAction,
    CancelAction,
    ContinueAction,
    RevokeAction,
    SendAction,
    StopAction,
    SyncAction,
    clip,
    parse_action,
)
from ai_widgets.widget._bridge import PatchStream, SessionBridge
from ai_widgets.widget._kernel import await_with_comms, kernel_support, main_loop, wait_with_comms
from ai_widgets.widget._serialize import message_dict, tool_info

__all__ = ["ChatWidget", "FrontEndNotBuiltError"]

logger = logging.getLogger("ai_widgets")

STATIC = Path(__file__).resolve().parent.parent / "static"
_ESM = STATIC / "widget.js"
_CSS = STATIC / "widget.css"


class FrontEndNotBuiltError(RuntimeError):
    """The JavaScript bundle is missing: the package was installed from a source tree without building ``js/``."""


def _check_bundle() -> None:
    if not _ESM.is_file() or not _CSS.is_file():
        raise FrontEndNotBuiltError(
            f"the ChatWidget front end is not built ({_ESM} is missing). From the source tree run "
            "`npm --prefix js ci && npm --prefix js run build`, or reinstall the package."
        )


class _PrivateLoop:
    """An event loop on a daemon thread, for turns that must run while the cell's thread blocks."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="ai_widgets-turns", daemon=True).start()
                self._loop = loop
            return self._loop


_private_loop = _PrivateLoop()


class ChatWidget(anywidget.AnyWidget):
    """A chat with a model and its tools, live in a notebook cell.

    Build it from a :class:`~ai_widgets.ChatSession`, or from a transport and the session's options::

        chat = ChatWidget(transport=ScriptedTransport(...), tools=[get_weather])
        chat                                   # shows it; type in its input box
        chat.send("What's the weather?")       # starts a turn, returns at once
        reply = await chat.ask("And tomorrow?")  # waits for the reply; approvals stay clickable
        reply = chat.ask_sync("And Sunday?")     # blocks the cell; approvals stay clickable

    Args:
        session: The session to show; built from the other arguments when ``None``.
        transport: How to reach the model (when no session is given).
        tools: Tools or a :class:`~ai_widgets.ToolRegistry` (when no session is given).
        approval_policy: Decides which calls need a person (when no session is given).
        options: How a turn runs (when no session is given).
        request_options: What every request carries (when no session is given).
        context: The application's object for tool calls (when no session is given).
        suggestions: Prompts offered as chips above the input (disabled while a turn runs).
        collapse_tool_calls: Cards start collapsed to a one-line summary.
        placeholder: The input box's placeholder.
        flush_interval: Seconds between patches to the front end while a reply streams.
        history: A JSON file that keeps the conversation across kernel restarts (when no session is given; see
            :class:`~ai_widgets.ChatSession`).
    """

    # anywidget reads the files when the class is defined; without a built bundle the import must still work
    # (ChatWidget() then raises FrontEndNotBuiltError with the command that builds it).
    _esm = _ESM if _ESM.is_file() else "export default {};\n"
    _css = _CSS if _CSS.is_file() else "/* not built */\n"

    # The finished messages, oldest first. Only ever appended to (or emptied by a clear) IN PLACE, which traitlets
    # does not see: each finished message travels once, as a "finish" op (bytes in proportion to that message), and
    # the whole list only in a full state (a new page's view, a saved notebook). docs/protocol.md, "Finished messages".
    history: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    # The messages in progress as a view last had them: the kernel leaves it empty (a view asks for the live state
    # with "sync"); each view keeps its own copy current in place, so a notebook saved mid-turn shows the reply.
    live: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    tools = traitlets.Dict().tag(sync=True)
    usage = traitlets.Dict().tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
    allowed_always = traitlets.List(traitlets.Unicode()).tag(sync=True)
    suggestions = traitlets.List(traitlets.Unicode()).tag(sync=True)
    collapse_tool_calls = traitlets.Bool(True).tag(sync=True)
    placeholder = traitlets.Unicode("Message the model…").tag(sync=True)
    compact = traitlets.Bool(False).tag(sync=True)
    kernel_mode = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        session: ChatSession | None = None,
        *,
        transport: Transport | None = None,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] | None = None,
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
    ) -> None:
        _check_bundle()
        if session is None:
            if transport is None:
                raise TypeError("ChatWidget needs a session, or transport=... to build one")
            session = ChatSession(
                transport,
                tools=tools,
                approval_policy=approval_policy,
                options=options,
                request_options=request_options,
                context=context,
                history=history,
            )
        elif any(
            x is not None for x in (transport, tools, approval_policy, options, request_options, context, history)
        ):
            raise TypeError("pass either a session, or transport= with its options, not both")
        super().__init__(
            # In the state the comm opens with: a view starts from it, whenever it opens.
            history=[
                message_dict(message, index)
                for index, message in enumerate(session.messages)
                if message.status is not MessageStatus.IN_PROGRESS
            ],
            suggestions=list(suggestions),
            collapse_tool_calls=collapse_tool_calls,
            placeholder=placeholder,
            compact=compact,
        )
        self.session = session
        self._main_loop = main_loop()
        self._patches = PatchStream(self._send_custom, interval=flush_interval)
        self._bridge = SessionBridge(
            session,
            self._patches,
            on_finished=self._message_finished,
            on_busy=self._set_busy,
            on_turn_end=self._turn_ended,
            on_cleared=self._cleared,
        )
        self._unsubscribe_tools = session.tools.subscribe(lambda _registry: self._refresh_tools())
        self._refresh_tools()
        self._turn_ended(None)
        self.kernel_mode = kernel_support().kind
        self.on_msg(self._handle_frontend_message)

    # --- kernel -> front end --------------------------------------------------------------------------------------

    def _send_custom(self, content: dict[str, Any]) -> None:
        if self.comm is not None:
            ipywidgets.Widget.send(self, content)

    def _send_error(self, message: str) -> None:
        self._patches.flush()
        self._send_custom({"type": "error", "message": clip(message, MAX_ERROR_CHARS)})

    def _message_finished(self, message: Message, index: int) -> None:
        shown = message_dict(message, index)
        with self._patches.lock:
            position = len(self.history)
            self.history.append(shown)  # in place: no trait sync; the op carries this message alone
            self._patches.push({"op": "finish", "position": position, "message": shown})
            self._patches.flush()

    def _cleared(self) -> None:
        # In place too: the "clear" op (already sent) empties every view's copy.
        with self._patches.lock:
            self.history.clear()
        self._turn_ended(None)

    def clear(self) -> None:
        """Removes every message (from the session and the widget).

        Raises:
            SessionBusyError: A turn is running.
        """
        self.session.clear()

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy

    def _turn_ended(self, _message: Message | None) -> None:
        self.usage = self.session.usage.to_dict()
        self._refresh_allowed()

    def _refresh_allowed(self) -> None:
        policy = self.session.approval_policy
        if isinstance(policy, DefaultApprovalPolicy):
            names = {name.casefold(): name for name in self.session.tools.names()}
            self.allowed_always = sorted(names.get(key, key) for key in policy.allowed_always)

    def _refresh_tools(self) -> None:
        self.tools = {d.name: tool_info(d) for d in self.session.tools.definitions()}

    # --- front end -> kernel --------------------------------------------------------------------------------------

    def _handle_frontend_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "anywidget-command":
            return  # anywidget's own RPC, answered by anywidget
        try:
            action = parse_action(content)
        except ActionError as exc:
            self._send_error(str(exc))
            return
        match action:
            case SyncAction(have=have, last=last):
                self._on_turn_thread(lambda: self._send_snapshot(have, last))
            case SendAction(text=text):
                self._start_in_background(lambda: self.session.send(text))
            case ContinueAction():
                self._start_in_background(self.session.resume)
            case StopAction():
                self.session.stop()
            case ApproveAction(tool_call_id=call_id, decision=decision, reason=reason, arguments=arguments):
                try:
                    self.session.approve(call_id, decision, reason, arguments=arguments)
                except ApprovalError as exc:
                    self._send_error(f"Approval refused: {exc}")
            case CancelAction(tool_call_id=call_id, reason=reason):
                try:
                    self.session.cancel(call_id, reason)
                except ApprovalError as exc:
                    self._send_error(f"Cancel refused: {exc}")
            case RevokeAction(tool_name=name):
                policy = self.session.approval_policy
                if not isinstance(policy, DefaultApprovalPolicy):
                    self._send_error("this session's approval policy has no 'allow always' to revoke")
                    return
                policy.revoke(name)
                self._refresh_allowed()

    def _send_snapshot(self, have: int, last: str | None) -> None:
        """Answers a view's ``sync``: the finished messages it lacks, and the live ones as they are now."""
        with self._patches.lock:
            self._patches.flush()
            history = self.history
            # The view holds the first ``have`` finished messages if its last one is ours at that place; else (it
            # started from an old state: a replay, a clear it missed) it gets them all.
            known = 0 < have <= len(history) and history[have - 1].get("id") == last
            start = have if known else 0
            self._send_custom(
                {"type": "snapshot", "from": start, "finished": history[start:], "live": self._bridge.live_messages()}
            )

    def _on_turn_thread(self, callback: Callable[[], None]) -> None:
        """Runs ``callback`` on the thread of the running turn (so a snapshot and the ops after it agree)."""
        loop = self.session.loop
        if loop is not None and loop.is_running() and _running_loop() is not loop:
            loop.call_soon_threadsafe(callback)
        else:
            callback()

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._main_loop
        if loop is not None and not loop.is_closed():
            return loop
        return _private_loop.get()

    def _start_in_background(
        self, start: Callable[[], Coroutine[Any, Any, Message]]
    ) -> concurrent.futures.Future[Message]:
        if self.session.busy:
            self._send_error("A reply is still running: wait for it, or press Stop.")
            failed: concurrent.futures.Future[Message] = concurrent.futures.Future()
            failed.set_exception(SessionBusyError("a turn is already running"))
            return failed
        future = asyncio.run_coroutine_threadsafe(start(), self._background_loop())
        future.add_done_callback(self._report_background_failure)
        return future

    def _report_background_failure(self, future: concurrent.futures.Future[Message]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            logger.warning("a turn started from the widget failed: %s", exc)
            self._send_error(str(exc))

    # --- the Python API -------------------------------------------------------------------------------------------

    def send(self, text: str | dict[str, Any], buffers: Any = None) -> concurrent.futures.Future[Message] | None:
        """Starts a turn with ``text`` and returns at once; the reply streams into the widget.

        Returns:
            A future of the reply (``concurrent.futures.Future``).

        Raises:
            SessionBusyError: A turn is already running.
        """
        if isinstance(text, dict):  # ipywidgets' own custom-message send
            ipywidgets.Widget.send(self, text, buffers)
            return None
        if not isinstance(text, str) or not text.strip():
            raise ValueError("send() needs a non-empty message")
        if self.session.busy:
            raise SessionBusyError("a turn is already running: wait for its reply, or stop() it first")
        return self._start_in_background(lambda: self.session.send(text))

    async def ask(self, text: str) -> Message:
        """Sends ``text`` and waits for the reply; approval clicks in the widget reach the session meanwhile.

        Raises:
            SessionBusyError: A turn is already running.
            UnsupportedKernelError: This kernel cannot process clicks while a cell awaits; use :meth:`send`.
        """
        return await self._await_turn(lambda: self.session.send(text))

    async def _await_turn(self, start: Callable[[], Coroutine[Any, Any, Message]]) -> Message:
        if self.session.busy:
            raise SessionBusyError("a turn is already running: wait for its reply, or stop() it first")
        task = asyncio.ensure_future(start())
        try:
            return await await_with_comms(task)
        except BaseException:
            # Stop this call's own turn only: a SessionBusyError from the task means another caller's turn runs.
            if not task.done():
                task.cancel()
            raise

    def ask_sync(self, text: str) -> Message:
        """Sends ``text`` and blocks until the reply; approval clicks in the widget reach the session meanwhile.

        A kernel interrupt stops the turn cleanly.

        Raises:
            SessionBusyError: A turn is already running.
            UnsupportedKernelError: This kernel cannot process clicks while a cell blocks; use :meth:`send`.
        """
        return self._wait_turn(lambda: self.session.send(text))

    def _wait_turn(self, start: Callable[[], Coroutine[Any, Any, Message]]) -> Message:
        if self.session.busy:
            raise SessionBusyError("a turn is already running: wait for its reply, or stop() it first")
        future = asyncio.run_coroutine_threadsafe(start(), _private_loop.get())
        try:
            return wait_with_comms(future)
        except BaseException:
            if future.done() and not future.cancelled() and isinstance(future.exception(), SessionBusyError):
                raise  # another turn won the race to start: it is not ours to stop
            self.session.stop()
            # Let the turn record its cancellation; the interrupt is what the caller sees.
            with contextlib.suppress(BaseException):
                future.result(timeout=5)
            raise

    def stop(self) -> bool:
        """Stops the running turn; returns whether one was running."""
        return self.session.stop()

    @property
    def messages(self) -> list[Message]:
        """The conversation."""
        return self.session.messages

    def transcript(self) -> str:
        """The conversation as markdown."""
        return conversation_markdown(self.session.messages)

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Writes the conversation to ``path``: a readable transcript for ``.md``, the whole conversation (loadable
        with ``history=`` or :func:`~ai_widgets.messages.load_messages`) for ``.json``.

        Returns:
            The path written.

        Raises:
            ValueError: The file name ends in neither ``.md`` nor ``.json``.
        """
        target = Path(path).expanduser()
        match target.suffix.lower():
            case ".md" | ".markdown":
                text = self.transcript() + "\n"
            case ".json":
                text = dump_messages(self.session.messages)
            case _:
                raise ValueError(f"export() writes .md or .json, not {target.name!r}")
        target.write_text(text, encoding="utf-8")
        return target

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        data = {**data, "text/markdown": self.transcript()}
        return data, metadata

    def close(self) -> None:
        """Stops mirroring the session and closes the widget's models."""
        if hasattr(self, "_bridge"):  # close() also runs from __del__ of a widget whose __init__ failed
            self._bridge.close()
            self._unsubscribe_tools()
        super().close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
