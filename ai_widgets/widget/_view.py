"""``SessionView``: what every widget that mirrors a session shares (the chat, and one turn shown where it was asked).

It holds the traits the front end reads, mirrors the session through a ``SessionBridge`` and answers the view's
actions: ``sync`` with a snapshot, approvals, cancels, Stop and revokes go straight to the session, so a click in
any view of any of these widgets decides once and every other view shows the decision. Its ``Bench`` runs tools by
hand ("Run again", ``run_tool``'s form) on private sessions; approvals and cancels of those runs go to them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import uuid
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import traitlets

from ai_widgets._rich import is_rich
from ai_widgets._threads import running_loop
from ai_widgets.approval import ApprovalError, DefaultApprovalPolicy
from ai_widgets.attachments import AttachmentError, AttachmentPart, File, object_parts
from ai_widgets.changes import ContextCut
from ai_widgets.messages import InputResponseError, Message, MessageStatus, ToolCallPart
from ai_widgets.session import CODE_TOOLS, CancelError, ChatSession, UnknownToolCallError, turn_loop
from ai_widgets.widget._actions import (
    MAX_ERROR_CHARS,
    MAX_MESSAGE_CHARS,
    Action,
    ActionError,
    AppCallAction,
    AppOpenAction,
    ApproveAction,
    BenchCloseAction,
    BenchOpenAction,
    BenchRunAction,
    CancelAction,
    CompleteAction,
    ContinueAction,
    DescribeAction,
    EditAction,
    InsertCellAction,
    NewChatAction,
    OlderAction,
    PromptAction,
    PromptsAction,
    RegenerateAction,
    ResourceOpenAction,
    RespondAction,
    RevokeAction,
    RunUnaskedAction,
    SendAction,
    StopAction,
    SwitchBranchAction,
    SyncAction,
    UndoCallAction,
    clip,
    parse_action,
)
from ai_widgets.widget._apps import AppHost
from ai_widgets.widget._bench import Bench, BenchError
from ai_widgets.widget._branch_view import branch_marked, branch_marks, new_chat, run_branch_turn, switch_branch
from ai_widgets.widget._bridge import PatchStream, SessionBridge
from ai_widgets.widget._bundle import loader_traits, shared_bundle
from ai_widgets.widget._cells import CellActions
from ai_widgets.widget._kernel import kernel_support, main_loop, private_loop
from ai_widgets.widget._namespace import UnknownNameError, chip, completions, resolve, user_namespace
from ai_widgets.widget._prompts import PromptCatalog
from ai_widgets.widget._resource_open import ResourceOpener
from ai_widgets.widget._serialize import message_dict, shown_json, tool_info
from ai_widgets.widget._transcript import transcript_html, transcript_markdown
from ai_widgets.widget._undone import undone_calls
from ai_widgets.widget._voila import VIEW_OPENED
from ai_widgets.widget._window import chunk_start, older_state, screen_start

__all__ = ["FrontEndNotBuiltError", "SessionView"]

logger = logging.getLogger("ai_widgets")

STATIC = Path(__file__).resolve().parent.parent / "static"
ESM = STATIC / "widget.js"
CSS = STATIC / "widget.css"


#: What each call "Run code without asking" spares is marked with (its card shows it).
RUN_UNASKED_REASON = "Run code without asking is on"


class FrontEndNotBuiltError(RuntimeError):
    """The JavaScript bundle is missing: the package was installed from a source tree without building ``js/``."""


def check_bundle() -> None:
    """Raises :class:`FrontEndNotBuiltError` (with the command that builds it) when the bundle is missing."""
    if not ESM.is_file() or not CSS.is_file():
        raise FrontEndNotBuiltError(
            f"the ChatWidget front end is not built ({ESM} is missing). From the source tree run "
            "`npm --prefix js ci && npm --prefix js run build`, or reinstall the package."
        )


def asset(path: Path, missing: str) -> str | Path:
    """What anywidget gets for a front-end file: its text (ending in a newline, so anywidget never takes it for a
    path), or the path itself while anywidget's hot reload is on."""
    if not path.is_file():
        return missing
    if os.environ.get("ANYWIDGET_HMR") == "1":
        return path
    text = path.read_text(encoding="utf-8")
    return text if text.endswith("\n") else text + "\n"


def front_end_traits() -> dict[str, Any]:
    """In an IPython kernel, a view loads the front-end code from the kernel's one bundle model (so the code is sent
    and saved once, not once per widget); elsewhere (marimo, anywidget's hot reload) it carries the code itself."""
    esm, css = SessionView._esm, SessionView._css
    if not isinstance(esm, str) or not isinstance(css, str) or not kernel_support().kind.startswith("ipykernel"):
        return {}
    return loader_traits(shared_bundle(esm, css))


class SessionView(anywidget.AnyWidget):
    """Mirrors a session's messages from position ``start`` on, and passes a view's clicks to the session.

    Args:
        session: The session to mirror.
        start: The first message shown (by position in the conversation); ``None``: none until the bridge is told
            where to begin (a view of one turn that has not started yet).
        flush_interval: Seconds between patches to the front end while a reply streams.
        **traits: Initial values of the synced traits.
    """

    # Without a built bundle the import must still work (building a widget then raises FrontEndNotBuiltError with the
    # command that builds it). The bundle goes in as its text, not its path: anywidget connects every instance of a
    # class whose asset is a path to that file's change signal, strongly, so no widget (and no session it holds)
    # could ever be freed. Only with anywidget's hot reload on (ANYWIDGET_HMR=1, development) is the path given.
    _esm = asset(ESM, "export default {};\n")
    _css = asset(CSS, "/* not built */\n")

    # The finished messages, oldest first. Only ever appended to (or emptied by a clear) IN PLACE, which traitlets
    # does not see: each finished message travels once, as a "finish" op (bytes in proportion to that message). A
    # state (the comm's opening one, a new page's) carries only the newest, about a screen; "older" says how many
    # come before them, and a view asks for those in chunks (docs/protocol.md, "Finished messages").
    _history: traitlets.List[dict[str, Any]] = traitlets.List().tag(
        sync=True, to_json=lambda history, _widget: history[screen_start(history) :]
    )
    # Computed from ``history`` whenever a state is built (never set): see older_state.
    _older = traitlets.Dict().tag(
        sync=True, to_json=lambda _value, widget: older_state(widget._history, screen_start(widget._history))
    )
    # The messages in progress as a view last had them: the kernel leaves it empty (a view asks for the live state
    # with "sync"); each view keeps its own copy current in place, so a notebook saved mid-turn shows the reply.
    _live: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    _tools = traitlets.Dict().tag(sync=True)
    _usage = traitlets.Dict().tag(sync=True)
    _busy = traitlets.Bool(False).tag(sync=True)
    # The messages sent while the turn runs that wait for its next tool boundary ({"id", "text"} each): the view
    # shows them as queued until they are delivered (then they are messages of the conversation).
    _queued: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    # "Run code without asking" (this session only): set by the kernel alone, from the session's switch, never taken
    # from a view's state or a saved notebook (the view asks with a ``run_unasked`` action).
    _run_unasked = traitlets.Bool(False).tag(sync=True)
    _allowed_always = traitlets.List(traitlets.Unicode()).tag(sync=True)
    suggestions = traitlets.List(traitlets.Unicode()).tag(sync=True)
    collapse_tool_calls = traitlets.Bool(True).tag(sync=True)
    placeholder = traitlets.Unicode("Message the model…").tag(sync=True)
    compact = traitlets.Bool(False).tag(sync=True)
    _kernel_mode = traitlets.Unicode("").tag(sync=True)
    # "chat": the whole conversation with its input box; "turn": one turn, shown in the cell that asked for it;
    # "bench": one tool run by hand (run_tool), its bench entry alone.
    _scope = traitlets.Unicode("chat").tag(sync=True)
    # Tools run by hand ("Run again", run_tool's form): one entry per form, with its latest run. Set whole, at most
    # about 30 times a second while a run streams (docs/protocol.md, "The bench").
    _bench: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    # The model that holds the front-end code, where this view's ``_esm`` loads it from (empty: ``_esm`` is the code).
    _bundle_model = traitlets.Unicode("").tag(sync=True)
    # The display id of the static transcript shown after this view (``_ipython_display_``): a live view hides it.
    _transcript_id = traitlets.Unicode("").tag(sync=True)
    # How the last request was shortened to fit the model's context window (``ContextCut`` as a dict), empty when
    # it carried everything: the view shows a marker where sending stopped (docs/protocol.md, the traits).
    _context_cut = traitlets.Dict().tag(sync=True)
    # The pages of the MCP Apps the cards show, by tool name (``AppPage`` as a dict, each at most a megabyte): asked
    # for by a card (``app_open``), read from the tool's server (docs/protocol.md, "MCP Apps").
    _apps = traitlets.Dict().tag(sync=True)
    # The code calls whose run was undone (Undo on a card): call id -> what was put back. The kernel's record of the
    # session (``undone_calls``), never read back from a saved state: a view made again starts from the session's.
    _undone = traitlets.Dict().tag(sync=True)

    def __init__(
        self, session: ChatSession, *, start: int | None = 0, flush_interval: float = 1 / 30, **traits: Any
    ) -> None:
        check_bundle()
        # Before the traits: the state is built under its lock (get_state), from the first one on.
        self._patches = PatchStream(self._send_custom, interval=flush_interval)
        shown = [
            (index, message)
            for index, message in enumerate(session.messages)
            if start is not None and index >= start and message.status is not MessageStatus.IN_PROGRESS
        ]
        marks = branch_marks(session) if shown else {}
        super().__init__(
            # In the state the comm opens with (its newest part): a view starts from it, whenever it opens.
            _history=[marked(message_dict(message, index), marks) for index, message in shown],
            **front_end_traits(),
            **traits,
        )
        self.session = session
        # The finished messages shown, for the static transcript beside the live view (``_ipython_display_``).
        self._shown_messages: list[Message] = [message for _index, message in shown]
        self._display_id = f"aiw-{uuid.uuid4().hex[:12]}"  # in each saved transcript three times: short
        self._transcript_id = self._display_id
        self._notices: list[str] = []  # about the session itself, for every view, also one that opens later
        self._transcript_lock = threading.Lock()
        self._published_transcript: str | None = None  # None: never displayed with our display id
        self._main_loop = main_loop()
        self._prompts = PromptCatalog(session)
        self._bench_host = Bench(
            session,
            self._publish_bench,
            loop=self._background_loop,
            on_run_end=self._refresh_allowed,
            interval=flush_interval,
        )
        self._app_host = AppHost(
            session,
            self._bench_host,
            find=self._find_call,
            publish=self._publish_apps,
            send=self._send_custom,
            loop=self._background_loop,
        )
        self._resources = ResourceOpener(find=self._find_call, send=self._send_custom, loop=self._background_loop)
        self._cells = CellActions(session, session_of=self._session_of, send=self._send_custom)
        undone = undone_calls(session)
        self._undone = undone.lines()
        self._unsubscribe_undone = undone.subscribe(self._set_undone)
        self._mirror(start)
        self._refresh_tools()
        self._turn_ended(None)
        self._set_context_cut(session.context_cut)
        self._run_unasked = session.unasked is not None and session.unasked.names is None
        self._kernel_mode = kernel_support().kind
        self.on_msg(self._handle_frontend_message)

    def _mirror(self, start: int | None) -> None:
        """Starts mirroring the session from position ``start`` (again, for a view of one turn whose turn is run
        again by an edit or a regenerate clicked in it)."""
        self._bridge = SessionBridge(
            self.session,
            self._patches,
            on_finished=self._message_finished,
            on_busy=self._set_busy,
            on_turn_end=self._turn_ended,
            on_cleared=self._cleared,
            on_notice=self._send_notice,
            on_branched=self._branched,
            on_context=self._set_context_cut,
            on_steering=self._steering_changed,
            start=start,
        )
        self._bridge.finished_shown = lambda: self._history  # a call's thread after its call ended, kept in it too
        self._unsubscribe_tools = self.session.tools.subscribe(lambda _registry: self._refresh_tools())

    # --- kernel -> front end --------------------------------------------------------------------------------------

    def get_state(
        self, key: str | list[str] | tuple[str, ...] | None = None, drop_defaults: bool = False
    ) -> dict[str, Any]:
        """The synced state; ``history`` and ``older`` are taken together, under the lock finished messages are
        added under, so they agree."""
        with self._patches.lock:
            return super().get_state(key, drop_defaults)  # type: ignore[no-any-return]

    def _told_new_chat(self, kept: int) -> None:
        """Tells every view that a new chat started, and how many messages the earlier one kept (0: none); the transcript
        beside the view follows the empty conversation, as it follows a switch of branch."""
        if kept:
            self._turn_ended(None)
        self._send_custom(shown_json({"type": "new_chat", "kept": kept}))

    def _send_custom(self, content: dict[str, Any]) -> None:
        if self.comm is not None:
            ipywidgets.Widget.send(self, content)

    def _send_error(
        self,
        message: str,
        send_id: str | None = None,
        *,
        call_id: str | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        self._patches.flush()
        error: dict[str, Any] = {"type": "error", "message": clip(message, MAX_ERROR_CHARS)}
        if send_id is not None:
            error["id"] = send_id  # the send it refuses: the view keeps that message's text and chips
        if call_id is not None:
            error["tool_call_id"] = call_id  # the call whose answer it refuses: its card shows why
        if fields:
            error["fields"] = {clip(name, 200): clip(text, 200) for name, text in list(fields.items())[:20]}
        self._send_custom(error)

    def _send_notice(self, text: str) -> None:
        """A dismissible banner about the session itself (its history file taken over), numbered: it comes again in
        each snapshot, so a view that was not listening yet (still loading its code) shows it too, and once."""
        with self._patches.lock:
            self._patches.flush()
            self._notices.append(clip(text, MAX_ERROR_CHARS))
            index = len(self._notices) - 1
            self._send_custom({"type": "error", "message": self._notices[index], "notice": index})

    def _message_finished(self, message: Message, index: int) -> None:
        shown = branch_marked(self.session, message_dict(message, index))
        with self._patches.lock:
            position = len(self._history)
            self._history.append(shown)  # in place: no trait sync; the op carries this message alone
            self._shown_messages.append(message)
            self._patches.push({"op": "finish", "position": position, "message": shown})
            self._patches.flush()

    def _branched(self, position: int) -> None:
        # In place, like a clear: the "cut" op drops the same finished messages from every view's copy.
        with self._patches.lock:
            kept = sum(1 for shown in self._history if shown.get("index", 0) < position)
            del self._history[kept:]
            del self._shown_messages[kept:]
            self._patches.push({"op": "cut", "position": kept})
            self._patches.flush()

    def _cleared(self) -> None:
        # In place too: the "clear" op (already sent) empties every view's copy.
        with self._patches.lock:
            self._history.clear()
            self._shown_messages.clear()
        self._context_cut = {}
        self._turn_ended(None)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy

    def _steering_changed(self, queued: tuple[Message, ...], returned: tuple[Message, ...]) -> None:
        """Shows the messages waiting for a tool boundary; those a stop handed back go back into the input box."""
        self._patches.flush()  # a delivered message's own op comes after the queue emptied: never shown twice
        self._queued = [{"id": message.id, "text": message.text} for message in queued]
        if returned:
            text = "\n\n".join(message.text for message in returned)
            self._send_custom({"type": "returned", "text": clip(text, MAX_MESSAGE_CHARS)})

    def _set_run_unasked(self, on: bool) -> None:
        """The view's "Run code without asking" switch: the session's :meth:`ChatSession.run_unasked` for every
        tool that runs code, or asking again."""
        if on:
            self.session.run_unasked(CODE_TOOLS, RUN_UNASKED_REASON)
        else:
            self.session.ask_again()
        self._run_unasked = on

    def _set_context_cut(self, cut: ContextCut | None) -> None:
        self._patches.flush()  # the messages the marker names go first
        self._context_cut = {} if cut is None else dataclasses.asdict(cut)

    def _turn_ended(self, _message: Message | None) -> None:
        self._usage = self.session.usage.to_dict()
        self._refresh_allowed()
        self.update_transcript()

    # --- the static transcript beside the live view ---------------------------------------------------------------

    def _transcript(self, *, transcript_id: str | None = None) -> dict[str, str]:
        """The static transcript of the finished messages shown, as HTML and markdown."""
        with self._patches.lock:
            messages = list(self._shown_messages)
        return {
            "text/html": transcript_html(messages, transcript_id=transcript_id, context_cut=self.session.context_cut),
            "text/markdown": transcript_markdown(messages, context_cut=self.session.context_cut),
        }

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        # For a host that shows a bundle itself (one output): the transcript is the view's fallback there.
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None or self._scope == "bench":  # run_tool's form: no conversation to show
            return bundle
        data, metadata = bundle
        return {**data, **self._transcript()}, metadata

    def _ipython_display_(self) -> None:
        """Displays the live view, and after it the static transcript as an output of its own, under this widget's
        display id, which :meth:`update_transcript` keeps current.

        Two outputs, because in one a front end that has the widget renderer uses it whatever else the output
        holds: a trusted notebook reopened with no widget state shows "model not found" there, not the transcript;
        and an update of an output that holds the view makes JupyterLab render the view anew. The transcript's HTML
        hides the view's output while that shows no live view (loading, or its model missing), and itself while it
        does (JupyterLab, Notebook 7); a live view also hides it (any host that shows both in one page).
        """
        from IPython.display import display

        bundle = None if self.comm is None else super()._repr_mimebundle_()
        if bundle is None:
            return  # closed: nothing to show
        data, metadata = bundle
        if self._scope == "bench":
            display(data, metadata=metadata, raw=True)
            return
        # No text/plain: an untrusted notebook, which has no widget renderer, would show the widget's repr there.
        view = {mime: value for mime, value in data.items() if mime != "text/plain"}
        transcript = self._transcript(transcript_id=self._display_id)
        with self._transcript_lock:
            display(view, metadata=metadata, raw=True)
            display(transcript, raw=True, display_id=self._display_id)
            self._published_transcript = transcript["text/html"]

    def update_transcript(self) -> None:
        """Brings the static transcript of every output that shows this widget up to date (done as each turn ends,
        and by the asking call when its turn ends); nothing when it is current, or the widget was never shown."""
        if self._published_transcript is None or self.comm is None or self._scope == "bench":
            return  # never shown, or closed
        transcript = self._transcript(transcript_id=self._display_id)
        with self._transcript_lock:
            if transcript["text/html"] == self._published_transcript:
                return  # unchanged: every front end would render it again for nothing
            from IPython.display import update_display

            update_display(transcript, raw=True, display_id=self._display_id)
            self._published_transcript = transcript["text/html"]

    def _refresh_allowed(self) -> None:
        policy = self.session.approval_policy
        if isinstance(policy, DefaultApprovalPolicy):
            names = {name.casefold(): name for name in self.session.tools.names()}
            self._allowed_always = sorted(names.get(key, key) for key in policy.allowed_always)

    def _refresh_tools(self) -> None:
        self._tools = {d.name: tool_info(d) for d in self.session.tools.definitions()}

    # --- front end -> kernel --------------------------------------------------------------------------------------

    def _handle_frontend_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "anywidget-command":
            return  # anywidget's own RPC, answered by anywidget
        try:
            action = parse_action(content)
        except ActionError as exc:
            self._send_error(str(exc))
            return
        try:
            self._act(action)
        except Exception as exc:  # whatever the kernel raises, the view that asked must not wait for ever
            logger.exception("ai_widgets: a front-end %r message failed", action.type)
            self._answer_failure(action, described(exc))

    def _act(self, action: Action) -> None:
        match action:
            case SyncAction(have=have, last=last):
                VIEW_OPENED.set()  # a page is there to click (see _voila)
                self._on_turn_thread(lambda: self._send_snapshot(have, last))
            case OlderAction(at=at, before=before):
                self._on_turn_thread(lambda: self._send_older(at, before))
            case SendAction(text=text, attach=names, id=send_id):
                try:
                    files = action.pasted()
                except ValueError as exc:
                    self._send_error(f"Not sent: {exc}", send_id)
                    return
                self._send_with(text, names, send_id, files)
            case CompleteAction(prefix=prefix, request=request):
                self._complete(prefix, request)
            case DescribeAction(name=name, request=request):
                self._describe(name, request)
            case PromptsAction(request=request):
                self._list_prompts(request)
            case PromptAction(name=name, arguments=arguments, id=send_id):
                self._on_prompt(name, dict(arguments), send_id)
            case ContinueAction():
                self._on_continue()
            case EditAction(message_id=message_id, text=text):
                self._on_branch_turn(lambda: self.session.edit(message_id, text), regenerate=False)
            case RegenerateAction():
                self._on_branch_turn(self.session.regenerate, regenerate=True)
            case SwitchBranchAction(message_id=message_id, index=index):
                switch_branch(self.session, message_id, index, self._send_error)
            case NewChatAction():
                if self._scope != "chat":  # the asking cell's view shows one turn; the bench, a tool's form
                    self._send_error("New chat is in the chat itself, not in this view.")
                else:
                    new_chat(self.session, self._send_error, self._told_new_chat)
            case StopAction():
                self.session.stop()
            case RunUnaskedAction(on=on):
                self._set_run_unasked(on)
            case ApproveAction(tool_call_id=call_id, decision=decision, reason=reason, arguments=arguments):
                try:  # a call of a run by hand is its bench entry's
                    self._session_of(call_id).approve(call_id, decision, reason, arguments=arguments)
                except (ApprovalError, UnknownToolCallError) as exc:
                    self._send_error(f"Approval refused: {exc}")
            case CancelAction(tool_call_id=call_id, reason=reason):
                try:
                    self._session_of(call_id).cancel(call_id, reason)
                except (CancelError, UnknownToolCallError) as exc:
                    self._send_error(f"Cancel refused: {exc}")
            case RespondAction(tool_call_id=call_id, action=answer, content=content):
                try:
                    self._session_of(call_id).respond(call_id, answer, content)
                except InputResponseError as exc:
                    self._send_error(f"Answer refused: {exc}", call_id=call_id, fields=exc.fields)
                except UnknownToolCallError as exc:
                    self._send_error(f"Answer refused: {exc}", call_id=call_id)
            case BenchOpenAction(tool_call_id=call_id):
                self._bench_action(lambda: self._bench_host.open_call(call_id), "Run again")
            case BenchRunAction(id=entry_id, arguments=arguments):
                self._bench_action(lambda: self._bench_host.start(entry_id, arguments), "Run")
            case BenchCloseAction(id=entry_id):
                if self._scope == "bench":
                    self._send_error("This form is the cell's own: it stays for the next run.")
                else:
                    self._bench_action(lambda: self._bench_host.close_entry(entry_id), "Close")
            case AppOpenAction(tool_call_id=call_id):
                try:
                    self._app_host.open(call_id)
                except (ValueError, RuntimeError) as exc:
                    self._send_error(f"The app could not be shown: {exc}")
            case ResourceOpenAction(tool_call_id=call_id, uri=uri):
                try:
                    self._resources.open(call_id, uri)
                except ValueError as exc:
                    self._send_error(f"The resource could not be opened: {exc}")
            case AppCallAction(tool_call_id=call_id, request=request, name=name, arguments=app_arguments):
                self._app_host.call(call_id, request, name, app_arguments)
            case UndoCallAction(tool_call_id=call_id):
                self._cells.undo(call_id)
            case InsertCellAction(tool_call_id=call_id):
                self._cells.insert(call_id)
            case RevokeAction(tool_name=name):
                policy = self.session.approval_policy
                if not isinstance(policy, DefaultApprovalPolicy):
                    self._send_error("this session's approval policy has no 'allow always' to revoke")
                    return
                policy.revoke(name)
                self._refresh_allowed()

    def _answer_failure(self, action: Action, problem: str) -> None:
        """Answers a request whose handling raised something unforeseen as its kind is answered (docs/protocol.md), so
        that a queued message, a chip, a list or an app that waits for the answer stops waiting."""
        problem = clip(problem, MAX_ERROR_CHARS)
        match action:
            case SendAction(id=send_id) | PromptAction(id=send_id):
                self._send_error(f"Sending failed: {problem}", send_id)  # the view keeps the text and the chips
            case DescribeAction(name=name, request=request):
                answer = {"type": "attachment", "request": request, "name": name, "found": True, "error": problem}
                self._send_custom(shown_json(answer))
            case CompleteAction(prefix=prefix, request=request):  # no room for an error: the list is empty
                listed = {"type": "completions", "request": request, "prefix": prefix, "items": []}
                self._send_custom(shown_json(listed))
            case PromptsAction(request=request):
                errors = [{"server": "", "message": problem}]
                self._send_custom(shown_json({"type": "prompts", "request": request, "items": [], "errors": errors}))
            case AppCallAction(tool_call_id=call_id, request=request):
                reply = {"type": "app_reply", "tool_call_id": call_id, "request": request, "error": problem}
                self._send_custom(shown_json(reply))
            case ResourceOpenAction(tool_call_id=call_id, uri=uri):
                read = {"type": "resource", "tool_call_id": call_id, "uri": uri, "error": problem}
                self._send_custom(shown_json(read))
            case UndoCallAction(tool_call_id=call_id) | InsertCellAction(tool_call_id=call_id):
                answer = {"type": "cell_action", "action": action.type, "tool_call_id": call_id, "ok": False}
                self._send_custom(shown_json({**answer, "message": f"It failed: {problem}"}))
            case _:
                self._send_error(f"The {action.type!r} request failed: {problem}")

    def _find_call(self, tool_call_id: str) -> tuple[ChatSession, ToolCallPart] | None:
        session = self._session_of(tool_call_id)
        part = session.tool_call(tool_call_id)
        return None if part is None else (session, part)

    def _publish_apps(self, pages: dict[str, Any]) -> None:
        self._apps = pages

    def _set_undone(self, lines: dict[str, str]) -> None:
        self._undone = lines

    def _session_of(self, tool_call_id: str) -> ChatSession:
        return self._bench_host.session_for(tool_call_id) or self.session

    def _bench_action(self, action: Callable[[], object], what: str) -> None:
        try:
            action()
        except BenchError as exc:
            self._send_error(f"{what} refused: {exc}")
        except RuntimeError as exc:  # no loop to run on (the kernel is shutting down)
            self._send_error(f"{what} failed: {exc}")

    def _publish_bench(self, entries: list[dict[str, Any]]) -> None:
        self._bench = entries  # under the bench's lock: one publisher at a time

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        """Where a turn or a run started from the front end runs: the kernel's loop, else a private one."""
        loop = self._main_loop
        if loop is not None and not loop.is_closed():
            return loop
        return private_loop()

    # --- @name: kernel variables attached in the input box ---------------------------------------------------------

    def _complete(self, prefix: str, request: int) -> None:
        """Answers ``complete``: the variables whose names start with ``prefix``."""
        items = [c.to_dict() for c in completions(user_namespace(), prefix)]
        self._send_custom(shown_json({"type": "completions", "request": request, "prefix": prefix, "items": items}))

    def _describe(self, name: str, request: int) -> None:
        """Answers ``describe``: what the chip of ``@name`` shows, or why it cannot be attached. A value that must be
        drawn (a figure, an image, a rich repr) is described off the kernel's loop (:meth:`_off_the_loop`)."""
        try:
            value = resolve(user_namespace(), [name])[name]
        except UnknownNameError as exc:
            self._answer_describe(name, request, exc)
            return

        def described() -> None:
            try:
                parts = self.session.check_attachments({name: value})
                self._answer_describe(name, request, None, chip(name, value, parts))
            except AttachmentError as exc:
                self._answer_describe(name, request, exc)

        if is_rich(value):
            self._off_the_loop(described, lambda exc: self._answer_describe(name, request, exc))
        else:
            described()

    def _answer_describe(
        self, name: str, request: int, problem: BaseException | None, shown: dict[str, Any] | None = None
    ) -> None:
        answer: dict[str, Any] = {"type": "attachment", "request": request, "name": name}
        if problem is None:
            answer.update(found=True, error=None, **(shown or {}))
        else:
            message = str(problem) if isinstance(problem, (UnknownNameError, AttachmentError)) else described(problem)
            answer.update(found=not isinstance(problem, UnknownNameError), error=clip(message, MAX_ERROR_CHARS))
        self._send_custom(shown_json(answer))

    def _off_the_loop(self, work: Callable[[], None], failed: Callable[[BaseException], None]) -> None:
        """Runs ``work`` on a worker thread, started from the kernel's loop, so that drawing an attachment (a figure
        of many subplots takes seconds, at most ``attachments.MAX_RENDER_SECONDS``) never holds up the loop: the
        turns streaming meanwhile, the clicks. ``work`` answers the view itself; anything it raises is answered by
        ``failed`` (every request of the view gets its answer)."""

        async def run() -> None:
            try:
                await asyncio.to_thread(work)
            except Exception as exc:
                logger.warning("ai_widgets: answering the view failed", exc_info=exc)
                failed(exc)

        try:
            asyncio.run_coroutine_threadsafe(run(), self._background_loop())
        except RuntimeError as exc:  # no loop to run on (the kernel is shutting down)
            failed(exc)

    # --- /name: the MCP servers' prompts ----------------------------------------------------------------------------

    def _list_prompts(self, request: int) -> None:
        """Answers ``prompts`` in the background (the servers may take a while, or need starting): every MCP
        server's prompts, and the servers that could not list theirs."""

        async def answer() -> None:
            try:
                listing = await self._prompts.listing()
            except Exception as exc:  # the catalog says each server's own failure; this is anything else
                listing = {"items": [], "errors": [{"server": "", "message": f"{type(exc).__name__}: {exc}"}]}
            errors = [{**error, "message": clip(error["message"], MAX_ERROR_CHARS)} for error in listing["errors"]]
            self._send_custom(shown_json({"type": "prompts", "request": request, **listing, "errors": errors}))

        try:
            asyncio.run_coroutine_threadsafe(answer(), self._background_loop())
        except RuntimeError as exc:  # no loop to run on (the kernel is shutting down)
            self._send_error(f"Listing the prompts failed: {exc}")

    def _on_prompt(self, name: str, arguments: dict[str, str], send_id: str | None) -> None:
        del name, arguments
        self._send_error("This view has no input box: send prompts from the chat's own.", send_id)

    def _send_with(self, text: str, names: tuple[str, ...], send_id: str | None, files: Sequence[File] = ()) -> None:
        """A ``send``: its ``@names`` resolved now and converted (off the kernel's loop when one must be drawn: a
        figure, an image, a rich repr), then the files pasted or dropped into the input box (an image or a PDF by
        what its bytes are, text as text), so that one that cannot be refuses the whole message (an ``error``
        echoing ``id``: the view keeps its text and chips) before anything is sent; the provider's limits, for all
        of them together, are the chat's ``check_send``."""
        if (not names and not files) or self._scope != "chat":
            self._on_send(text, [], send_id)  # elsewhere refused with that view's own reason
            return
        try:
            values = resolve(user_namespace(), list(names))
        except UnknownNameError as exc:
            self._send_error(str(exc), send_id)
            return

        def converted() -> None:
            parts: list[AttachmentPart] = []
            for name, value in values.items():
                try:
                    parts += object_parts(value, name=name)
                except AttachmentError as exc:
                    self._send_error(f"@{name}: {exc}", send_id)  # which chip it is
                    return
            for file in files:
                try:
                    parts += object_parts(file, name=file.name)
                except AttachmentError as exc:
                    self._send_error(f"{file.name}: {exc}", send_id)
                    return
            self._on_send(text, parts, send_id)

        if any(is_rich(value) for value in values.values()):
            self._off_the_loop(converted, lambda exc: self._send_error(described(exc), send_id))
        else:
            converted()

    def _on_send(self, text: str, attach: list[AttachmentPart], send_id: str | None) -> None:
        raise NotImplementedError

    def _on_continue(self) -> None:
        raise NotImplementedError

    def _on_branch_turn(self, start: Callable[[], Coroutine[Any, Any, Message]], *, regenerate: bool) -> None:
        """An Edit or a Regenerate clicked in a view: the turn runs in the background, on the kernel's loop."""
        run_branch_turn(self.session, start, self._background_loop(), self._send_error)

    def _send_snapshot(self, have: int, last: str | None) -> None:
        """Answers a view's ``sync``: the finished messages it lacks, and the live ones as they are now."""
        with self._patches.lock:
            self._patches.flush()
            history = self._history
            # The view holds the finished messages up to position ``have`` if its last one is ours at that place;
            # else (it started from an old state: a replay, a clear it missed) it starts again from the newest
            # ones, as a new view does ("fresh": it drops its copy), and asks for the earlier ones.
            known = 0 < have <= len(history) and history[have - 1].get("id") == last
            start = have if known else screen_start(history)
            snapshot: dict[str, Any] = {"type": "snapshot", "from": start, "finished": history[start:]}
            if start and not known:
                snapshot["fresh"] = True
            if self._notices:
                snapshot["notices"] = list(self._notices)
            self._send_custom({**snapshot, "live": self._bridge.live_messages()})

    def _send_older(self, at: int, before: str) -> None:
        """Answers a view's ``older``: the chunk of finished messages just before position ``at``, where the view
        holds ``before``. A view whose copy is not the kernel's there starts again (a fresh snapshot)."""
        with self._patches.lock:
            history = self._history
            if not (0 < at < len(history) and history[at].get("id") == before):
                self._send_snapshot(0, None)  # a fresh snapshot
                return
            start = chunk_start(history, at)
            self._send_custom({"type": "older", "from": start, "before": before, "finished": history[start:at]})

    def _on_turn_thread(self, callback: Callable[[], None]) -> None:
        """Runs ``callback`` on the thread of the running turn (so a snapshot and the ops after it agree)."""
        loop = turn_loop(self.session)
        if loop is not None and loop.is_running() and running_loop() is not loop:
            loop.call_soon_threadsafe(self._answer_later, callback)
        else:
            callback()

    def _answer_later(self, callback: Callable[[], None]) -> None:
        """Runs an answer to a view on the turn's thread; one that fails is said to the views, as the view that asked
        would otherwise wait for ever."""
        try:
            callback()
        except Exception as exc:
            logger.exception("ai_widgets: answering a front-end message failed")
            self._send_error(f"Answering the view failed: {described(exc)}")

    def _stop_mirroring(self) -> None:
        """Stops observing the session (the messages shown so far stay, in the state and in every view)."""
        if hasattr(self, "_bridge"):  # close() also runs from __del__ of a widget whose __init__ failed
            self._patches.flush()
            self._bridge.close()
            self._unsubscribe_tools()

    def close(self) -> None:
        """Stops mirroring the session, stops the runs by hand, and closes the widget's models."""
        self._stop_mirroring()
        if hasattr(self, "_unsubscribe_undone"):
            self._unsubscribe_undone()  # a view of a turn that ended still shows its calls undone, until closed
        if hasattr(self, "_bench_host"):
            self._bench_host.close()
        super().close()


def described(exc: BaseException) -> str:
    """``Type: message`` of an exception (its type alone when its message cannot be had)."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def marked(shown: dict[str, Any], marks: dict[str, dict[str, int]]) -> dict[str, Any]:
    mark = marks.get(shown["id"])
    if mark is not None:
        shown["branch"] = mark
    return shown
