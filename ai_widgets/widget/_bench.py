"""The bench: tools run by hand inside a widget ("Run again" on a finished card, and ``run_tool``'s form).

Each entry is one tool with the arguments of its form and the latest run's reply. A run goes through a private
:class:`~ai_widgets.ChatSession` of the entry (with no transport, the host session's tool registry, approval policy,
context and options, one round), so it is validated, asked about and run exactly like a model's call (approval,
progress, timeout, Cancel) while the host conversation's history never changes. What the front end shows is the ``bench`` trait (docs/protocol.md, "The bench"), rebuilt at most about 30 times a second
while a run streams its progress.

Arguments are checked before a run with the tool's own binding (``bind_arguments``, what a model's call goes
through): each problem is shown at its field with the words the model would be told, and the run does not start.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from ai_widgets._safe import UnsafeValueError, checked_json
from ai_widgets._threads import running_loop
from ai_widgets.changes import BusyChanged, ConversationCleared, MessageFinished, SessionChange, ToolCallStraggling
from ai_widgets.messages import Message
from ai_widgets.session import ChatSession, SessionBusyError
from ai_widgets.tools import Tool, ToolOutcome, ToolRegistry
from ai_widgets.tools._problems import InvalidArguments
from ai_widgets.tools._tool import bind_arguments
from ai_widgets.widget._actions import clip
from ai_widgets.widget._serialize import after_stop_fields, message_dict, shown_json

__all__ = ["BYTES_PER_SECOND", "MAX_ENTRIES", "Bench", "BenchError", "field_errors"]

logger = logging.getLogger("ai_widgets")

#: The most entries a bench keeps: opening one more drops the oldest that is not running.
MAX_ENTRIES = 20
#: While a run streams (progress), the bench is published at most about this many bytes a second: the trait goes
#: whole, so a large result kept in one entry must not go again 30 times a second while another entry's run reports.
BYTES_PER_SECOND = 1_000_000


class BenchError(ValueError):
    """A bench action that cannot be done (its message is for the person)."""


@dataclasses.dataclass(eq=False)
class Entry:
    id: str
    tool_name: str
    arguments: dict[str, Any]
    source: str | None
    session: ChatSession
    by_app: bool = False  # asked for by the MCP App in the card of ``source`` (not the person's "Run again")
    unsubscribe: Callable[[], None] = lambda: None
    errors: dict[str, str] = dataclasses.field(default_factory=dict)
    error: str | None = None
    attempt: int = 0
    running: bool = False
    closed: bool = False  # dropped from the bench (its run, if one goes on, unsubscribes when it ends)
    # Stop asked for the run that goes on: a run whose turn has not begun yet (the tools of a source are being
    # listed) has nothing to stop yet, so its turn is stopped as it begins (_changed). Reset by the next prepare.
    halted: bool = False
    # What the thread of the latest run's call did after the call ended (AFTER_STOP_FIELDS), by call id.
    after_stop: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    _shown: dict[str, Any] | None = None
    size: int = 0  # characters of the entry as last shown, as JSON

    def touch(self) -> None:
        """Something shown changed: :meth:`shown` builds the entry again."""
        self._shown = None

    def shown(self) -> dict[str, Any]:
        """The entry as the front end shows it (built again only after :meth:`touch`)."""
        if self._shown is not None:
            return self._shown
        messages = self.session.messages
        message = message_dict(messages[-1], 0) if messages else None
        if message is not None and self.after_stop:
            for part in message["parts"]:
                part.update(self.after_stop.get(part.get("tool_call_id"), {}))
        self._shown = shown_json(
            {
                "id": self.id,
                "tool_name": self.tool_name,
                "arguments": self.arguments,
                "source": self.source,
                "by_app": self.by_app,
                "message": message,
                "running": self.running,
                "errors": self.errors,
                "error": self.error,
                "attempt": self.attempt,
            }
        )
        self.size = len(json.dumps(self._shown, ensure_ascii=False, separators=(",", ":")))
        return self._shown

    def outcome(self) -> ToolOutcome | None:
        messages = self.session.messages
        calls = messages[-1].tool_calls if messages else []
        return calls[0].outcome if calls else None


#: The most problems shown at one field.
MAX_PER_FIELD = 3
#: The longest general error an entry shows (the model's whole message can be as long as its problems).
MAX_GENERAL_CHARS = 1_000


def field_errors(tool: Tool, arguments: dict[str, Any]) -> tuple[dict[str, str], str | None] | None:
    """What is wrong with ``arguments`` for ``tool``, as a model's call would be told: ``None`` when they are valid,
    else the problems by top-level field (the detail as the model reads it; a nested one with its path below the
    field; at most a few per field, then how many more) and the text the model would get (clipped) when some
    problem is not about one field.

    Both are worded from the one list of problems the tool's binding finds (:func:`bind_arguments`): a field shows
    only what the model is told.
    """
    bound = bind_arguments(tool, arguments)
    if not isinstance(bound, InvalidArguments):
        return None
    told = bound.outcome.message or f"Invalid arguments for {tool.name}."
    problems = bound.problems
    if problems is None:  # not about values (a schema that cannot be used): said as a whole
        return {}, clip(told, MAX_GENERAL_CHARS)
    properties = tool.definition.parameters.get("properties")
    names = properties if isinstance(properties, dict) else {}
    shown: dict[str, list[str]] = {}
    more: Counter[str] = Counter(problems.more)
    elsewhere = False
    for index, problem in enumerate(problems.listed):
        field = problem.field if problem.field in names else None
        if index >= problems.told:
            if field is not None and problems.tells_more:
                more[field] += 1  # the model is told only how many more there are: so is the field
            else:
                elsewhere = True
            continue
        if field is None:
            elsewhere = True
            continue
        texts = shown.setdefault(field, [])
        if len(texts) < MAX_PER_FIELD:
            location = problem.location
            texts.append(problem.detail if len(location) <= 1 else f"{'.'.join(location[1:])}: {problem.detail}")
        else:
            more[field] += 1
    fields: dict[str, str] = {}
    for name, texts in shown.items():
        extra = more.pop(name, 0)
        fields[name] = "; ".join(texts) + (f"; and {extra:,} more" if extra else "")
    elsewhere = elsewhere or bool(more)  # more problems, none of them shown at a field
    return fields, (clip(told, MAX_GENERAL_CHARS) if elsewhere or not fields else None)


class Bench:
    """The entries of one widget and their runs.

    Args:
        host: The session whose tools, approval policy, context and options the runs use (its history is never
            touched).
        publish: Called with the entries as the front end shows them (sets the ``bench`` trait); from any thread,
            under this bench's lock.
        loop: The event loop a run started from the front end runs on.
        on_run_end: Called after each run (the approval policy may remember an "allow always").
        interval: Seconds between updates while a run streams.
    """

    def __init__(
        self,
        host: ChatSession,
        publish: Callable[[list[dict[str, Any]]], None],
        *,
        loop: Callable[[], asyncio.AbstractEventLoop],
        on_run_end: Callable[[], None] = lambda: None,
        interval: float = 1 / 30,
        limit: int = MAX_ENTRIES,
    ) -> None:
        self._host = host
        self._publish = publish
        self._loop = loop
        self._on_run_end = on_run_end
        self._interval = interval
        self._limit = limit
        self._entries: dict[str, Entry] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self._published = 0  # characters of the bench as last published, as JSON

    # --- entries ----------------------------------------------------------------------------------------------

    def open(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        source: str | None = None,
        by_app: bool = False,
        tool: Tool | None = None,
    ) -> str:
        """Adds an entry for a registered tool, its form filled with ``arguments``; returns its id. ``by_app``: the
        MCP App in the card of the call ``source`` asked for it; ``tool``: a tool of that app's server for its apps
        alone (not registered: the entry runs it by itself, under the host's approval policy).

        Raises:
            BenchError: No such tool, arguments that are not JSON data, or the bench is full of running entries.
        """
        found = tool or self._host.tools.get(tool_name)
        if found is None:
            raise BenchError(f"the tool {clip(tool_name)!r} is not registered (any more): it cannot be run here")
        shown = as_arguments(arguments, "the arguments")
        session = ChatSession(  # no transport: the call is the person's, run by the session's tool round
            tools=self._host.tools if tool is None else ToolRegistry([tool]),
            approval_policy=self._host.approval_policy,
            options=dataclasses.replace(self._host.options, max_iterations=1, max_consecutive_errors=1),
            context=self._host.context,
        )
        with self._lock:
            if len(self._entries) >= self._limit:
                idle = next((e for e in self._entries.values() if not e.running), None)
                if idle is None:
                    raise BenchError(f"{self._limit} tools are running by hand already: wait for one, or close one")
                self._drop(idle)
            entry = Entry(f"bench_{next(self._ids)}", found.name, shown, source, session, by_app=by_app)
            entry.unsubscribe = session.subscribe(lambda change: self._changed(entry, change))
            self._entries[entry.id] = entry
            self.flush()
        return entry.id

    def open_call(self, tool_call_id: str) -> str:
        """Adds an entry for a finished call of the host conversation, with the arguments it ran with (the person's
        edit, else the model's); returns its id.

        Raises:
            BenchError: No such call, a call that has not finished or that the provider ran, or no such tool.
        """
        part = self._host.tool_call(tool_call_id)
        if part is None:
            raise BenchError(f"there is no tool call {clip(tool_call_id)!r} in this conversation")
        if part.provider_executed:
            raise BenchError(f"{part.tool_name} ran at the provider: it cannot be run again here")
        if not part.state.terminal:
            raise BenchError(f"the call of {part.tool_name} has not finished: it is {part.state.value}")
        arguments = part.edited_arguments if part.edited_arguments is not None else part.parsed_arguments
        return self.open(part.tool_name, arguments, source=part.tool_call_id)

    def close_entry(self, entry_id: str) -> None:
        """Removes an entry; a run of it that goes on is stopped.

        Raises:
            BenchError: No such entry.
        """
        with self._lock:
            self._drop(self._entry(entry_id))
            self.flush()

    def _drop(self, entry: Entry) -> None:
        entry.closed = True
        self._entries.pop(entry.id, None)
        if entry.running:
            self._halt(entry)  # the run unsubscribes when it ends
        else:
            entry.unsubscribe()

    @staticmethod
    def _halt(entry: Entry) -> None:
        """Stops the entry's run: now if its turn has begun, else as it begins (see ``Entry.halted``)."""
        entry.halted = True
        entry.session.stop()

    def _entry(self, entry_id: str) -> Entry:
        entry = self._entries.get(entry_id)
        if entry is None:
            raise BenchError(f"there is no bench entry {clip(entry_id)!r} (closed, or from an earlier run of the cell)")
        return entry

    def session_for(self, tool_call_id: str) -> ChatSession | None:
        """The private session of the entry whose run has this call (approvals and cancels go to it)."""
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            if entry.session.tool_call(tool_call_id) is not None:
                return entry.session
        return None

    def session_of(self, entry_id: str) -> ChatSession:
        """The private session the entry's runs go through.

        Raises:
            BenchError: No such entry.
        """
        with self._lock:
            return self._entry(entry_id).session

    def outcome(self, entry_id: str) -> ToolOutcome | None:
        """The outcome of the entry's latest run, once it has one."""
        with self._lock:
            entry = self._entries.get(entry_id)
        return None if entry is None else entry.outcome()

    def running(self, entry_id: str) -> bool:
        """Whether a run of the entry goes on."""
        with self._lock:
            entry = self._entries.get(entry_id)
        return entry is not None and entry.running

    def stop(self, entry_id: str) -> None:
        """Stops the entry's run, if one goes on."""
        with self._lock:
            entry = self._entries.get(entry_id)
        if entry is not None and entry.running:
            self._halt(entry)

    # --- runs -------------------------------------------------------------------------------------------------

    def prepare(self, entry_id: str, arguments: Mapping[str, Any], *, check: bool = True) -> bool:
        """Takes the form's arguments for a run: the entry shows them, and what is wrong with them at their fields.

        Returns:
            Whether the run may start: the arguments are valid, or ``check`` is off (a call from code runs anyway,
            and fails with what the model would be told). Then the entry is running from now on: start
            :meth:`run`, or :meth:`release` it.

        Raises:
            BenchError: No such entry, a run of it goes on, arguments that are not JSON data, or no such tool.
        """
        with self._lock:
            entry = self._entry(entry_id)
            if entry.running:
                raise BenchError(f"{entry.tool_name} is still running: wait for it, or cancel it")
            entry.arguments = as_arguments(arguments, "the arguments", finite=True)
            entry.attempt += 1
            entry.halted = False
            entry.touch()
            tool = entry.session.tools.get(entry.tool_name)
            if tool is None:
                entry.errors, entry.error = {}, f"The tool {entry.tool_name} is not registered any more."
                self.flush()
                return False
            problems = field_errors(tool, entry.arguments)
            entry.errors, entry.error = ({}, None) if problems is None else problems
            ok = problems is None or not check
            if ok:
                entry.running = True
            self.flush()
            return ok

    def start(
        self, entry_id: str, arguments: Mapping[str, Any], *, loop: asyncio.AbstractEventLoop | None = None
    ) -> concurrent.futures.Future[Message] | None:
        """Checks the arguments (problems go to their fields) and, when they are valid, starts a run on ``loop``
        (the bench's loop by default).

        Returns:
            The run's future (its reply), or ``None`` when the arguments were refused.

        Raises:
            BenchError: See :meth:`prepare`.
        """
        if not self.prepare(entry_id, arguments):
            return None
        try:
            future = asyncio.run_coroutine_threadsafe(self.run(entry_id), loop or self._loop())
        except BaseException:
            self.release(entry_id)
            raise
        future.add_done_callback(log_failure)
        return future

    def release(self, entry_id: str) -> None:
        """Marks the entry idle after :meth:`prepare` when its run never started (or was given up before it did)."""
        with self._lock:
            entry = self._entries.get(entry_id)
            if entry is not None and entry.running and not entry.session.busy:
                entry.running = False
                entry.touch()
                self.flush()

    async def run(self, entry_id: str) -> Message:
        """Runs the entry with the arguments :meth:`prepare` took (and that marked it running), on the running
        loop; returns the reply.

        Raises:
            BenchError: No such entry.
            ValueError: The tool is not registered any more, or its source could not list its tools.
        """
        with self._lock:
            entry = self._entry(entry_id)
        try:
            if entry.session.messages:
                entry.session.clear()  # the entry shows its latest run only
            return await entry.session.run_call(entry.tool_name, entry.arguments)
        except (ValueError, SessionBusyError) as exc:
            entry.error = clip(str(exc), MAX_GENERAL_CHARS)
            raise
        except Exception as exc:  # a source of tools (an MCP server) that could not list them
            entry.error = clip(f"{type(exc).__name__}: {exc}", MAX_GENERAL_CHARS)
            raise
        finally:
            with self._lock:
                entry.running = False
                entry.touch()
                if entry.closed:
                    entry.unsubscribe()
                self.flush()
            try:
                self._on_run_end()
            except Exception:  # pragma: no cover - a refresh of the traits
                logger.exception("ai_widgets: refreshing after a bench run failed")

    # --- to the front end -------------------------------------------------------------------------------------

    def _changed(self, entry: Entry, change: SessionChange) -> None:
        if entry.halted and isinstance(change, BusyChanged) and change.busy:
            entry.session.stop()  # stopped or closed before its turn began: it ends before its call runs
        if entry.closed:
            return
        with self._lock:
            match change:
                case ToolCallStraggling(message=message, part=part, phase=phase, preview=preview):
                    latest = entry.session.messages
                    if not latest or latest[-1] is not message:
                        return  # a thread of an earlier run: that run is no longer shown
                    entry.after_stop[part.tool_call_id] = after_stop_fields(phase, preview)
                case ConversationCleared():
                    entry.after_stop.clear()  # a new run: the entry shows it alone
                case _:
                    pass
            entry.touch()
        if isinstance(change, (BusyChanged, MessageFinished)):
            self.flush()
        else:
            self._schedule()

    def _schedule(self) -> None:
        with self._lock:
            if self._timer is not None:
                return
            loop = running_loop()
            if loop is None:
                self.flush()
                return
            # Paced by size: the whole bench goes with each update.
            self._timer = loop.call_later(max(self._interval, self._published / BYTES_PER_SECOND), self.flush)

    def flush(self) -> None:
        """Publishes the entries as they are now."""
        with self._lock:
            # A timer still pending (it may belong to another thread's loop) publishes again when it fires: the
            # same entries, which traitlets does not send twice.
            self._timer = None
            if self._closed:
                return
            shown = [entry.shown() for entry in self._entries.values()]
            self._published = sum(entry.size for entry in self._entries.values())
            self._publish(shown)

    def close(self) -> None:
        """Stops every run and forgets every entry (the last published state stays shown)."""
        with self._lock:
            self._closed = True
            for entry in list(self._entries.values()):
                self._drop(entry)


def as_arguments(arguments: Mapping[str, Any], where: str, *, finite: bool = False) -> dict[str, Any]:
    """``arguments`` made safe to keep; ``finite``: NaN and infinities are refused (what a run gets must be strict
    JSON, as a model's arguments must), else they become ``None`` (a form filled from a call as it was recorded)."""
    if not isinstance(arguments, Mapping):
        raise BenchError(f"{where} must be an object, not {type(arguments).__name__}")
    try:
        checked = checked_json(dict(arguments), where=where, finite=finite)
    except UnsafeValueError as exc:
        raise BenchError(str(exc)) from None
    assert isinstance(checked, dict)
    return checked


def log_failure(future: concurrent.futures.Future[Message]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.info("ai_widgets: a run by hand did not start: %s", future.exception())
