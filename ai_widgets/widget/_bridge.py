"""From session changes to front-end patches: small ops, merged and flushed at most ~30 times a second.

Nothing here grows with the conversation: a text delta becomes (or extends) one ``text`` op of its part, an
argument delta one ``args`` op of its call. Finished messages leave through ``on_finished`` (the widget keeps each
in its ``history`` and sends it once, as one ``finish`` op), so finishing a message costs that message alone.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

from ai_widgets._threads import running_loop
from ai_widgets.changes import (
    BranchesChanged,
    BusyChanged,
    ContextCut,
    ContextShortened,
    ConversationCleared,
    MessageAdded,
    MessageFinished,
    MessageUpdated,
    PartAdded,
    PartChanged,
    PartsRemoved,
    SessionChange,
    SessionNotice,
    SteeringChanged,
    TextAppended,
    ToolCallArgumentsChanged,
    ToolCallStraggling,
    ToolCallUpdated,
)
from ai_widgets.messages import Message, MessageStatus, TextPart
from ai_widgets.session import ChatSession
from ai_widgets.widget._branch_view import branch_marked
from ai_widgets.widget._ops import Op, to_wire
from ai_widgets.widget._serialize import (
    after_stop_fields,
    argument_ops,
    call_fields,
    message_dict,
    message_fields,
    part_dict,
    shown_json,
)

__all__ = ["PatchStream", "SessionBridge"]


class PatchStream:
    """Buffers ops and sends them as one ``{"type": "patch", "ops": [...]}`` message per interval.

    Adjacent ops on the same target merge: text appends concatenate, argument patches join (consecutive appends
    to one path concatenate), field updates overwrite. Safe to use from any thread.

    Args:
        send: Sends one custom message to the front end.
        interval: Seconds between flushes while ops keep coming (1/30 by default).
    """

    def __init__(self, send: Callable[[dict[str, Any]], None], *, interval: float = 1 / 30) -> None:
        self._send = send
        self._interval = interval
        self._ops: list[Op] = []
        self._lock = threading.RLock()
        self._timer: asyncio.TimerHandle | None = None
        self.flushes = 0

    @property
    def lock(self) -> threading.RLock:
        """Held while ops are added or flushed (a snapshot taken under it is consistent with the ops sent)."""
        return self._lock

    def push(self, op: Op) -> None:
        """Adds an op, merging it into the previous one where they touch the same thing."""
        with self._lock:
            ops = self._ops
            if ops and merge(ops[-1], op):
                return
            ops.append(op)
            if self._timer is None:
                self._schedule()

    def _schedule(self) -> None:
        loop = running_loop()
        if loop is None:
            # No loop on this thread (a plain script, or a callback thread): send at once.
            self.flush()
            return
        self._timer = loop.call_later(self._interval, self.flush)

    def flush(self) -> None:
        """Sends the buffered ops now."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._ops:
                return
            ops, self._ops = self._ops, []
            self.flushes += 1
            self._send({"type": "patch", "ops": [to_wire(op) for op in ops]})


def merge(last: Op, op: Op) -> bool:
    """Merges ``op`` into ``last`` when both change the same thing; whether it did."""
    if last["op"] == "text" and op["op"] == "text":
        if last["message_id"] == op["message_id"] and last["index"] == op["index"]:
            last["text"] += op["text"]
            return True
    elif last["op"] == "answer" and op["op"] == "answer":
        if last["message_id"] == op["message_id"] and last["index"] == op["index"]:
            last["text"] += op["text"]
            join_patches(last["patches"], op["patches"])
            return True
    elif last["op"] == "args" and op["op"] == "args":
        if last["message_id"] == op["message_id"] and last["tool_call_id"] == op["tool_call_id"]:
            join_patches(last["patches"], op["patches"])
            return True
    elif last["op"] == "call" and op["op"] == "call":
        if last["message_id"] == op["message_id"] and last["tool_call_id"] == op["tool_call_id"]:
            last["fields"].update(op["fields"])
            return True
    elif last["op"] == "msg" and op["op"] == "msg" and last["message_id"] == op["message_id"]:
        last["fields"].update(op["fields"])
        return True
    return False


def join_patches(into: list[list[Any]], more: list[list[Any]]) -> None:
    for patch in more:
        last = into[-1] if into else None
        mergeable = last is not None and patch[0] == "append" and last[1] == patch[1]
        if mergeable and (last[0] == "append" or (last[0] == "set" and isinstance(last[2], str))):  # type: ignore[index]
            last[2] = last[2] + patch[2]  # type: ignore[index]
            continue
        into.append(patch)


class SessionBridge:
    """Observes a session and turns its changes into ops, finished messages and trait updates.

    Args:
        session: The session to mirror.
        patches: Where ops go.
        on_finished: Called with each finished message and its index (user messages at once; replies when their
            turn ends), after the ops before it; it sends the message (a ``finish`` op, which ends the live copy).
        on_busy: Called with the session's busy flag when it changes.
        on_turn_end: Called after a reply finished (to refresh usage and similar).
        on_cleared: Called after the conversation was cleared (and the ``clear`` op sent).
        on_notice: Called with a notice about the session itself (its history file taken over by a newer session).
        on_branched: Called with the position from which the conversation's active path was replaced (an edit, a
            regenerate, a switch of branch), before the messages now there are told (each through ``on_finished``).
        on_context: Called with how the last request was shortened to fit the model's context window (``None``: it
            carried everything), when that changed.
        on_steering: Called with the messages sent while the turn runs that wait for its next tool boundary, and
            those a stop handed back (not sent), when they changed.
        start: The first message to mirror (by position): a view of one turn mirrors only the messages from
            where the conversation stood when it opened; earlier messages' changes are ignored. ``None``: nothing
            is mirrored until the first message of the turn :meth:`begin_with` names.
    """

    def __init__(
        self,
        session: ChatSession,
        patches: PatchStream,
        *,
        on_finished: Callable[[Message, int], None],
        on_busy: Callable[[bool], None],
        on_turn_end: Callable[[Message], None],
        on_cleared: Callable[[], None],
        on_notice: Callable[[str], None] | None = None,
        on_branched: Callable[[int], None] | None = None,
        on_context: Callable[[ContextCut | None], None] | None = None,
        on_steering: Callable[[tuple[Message, ...], tuple[Message, ...]], None] | None = None,
        start: int | None = 0,
    ) -> None:
        self._session = session
        self._start = start or 0
        self._waiting = start is None
        self._owns: Callable[[], bool] | None = None
        self._patches = patches
        self._on_finished = on_finished
        self._on_busy = on_busy
        self._on_turn_end = on_turn_end
        self._on_cleared = on_cleared
        self._on_notice = on_notice
        self._on_branched = on_branched
        self._on_context = on_context
        self._on_steering = on_steering
        self._indices: dict[str, int] = {m.id: i for i, m in enumerate(session.messages)}
        self._count = len(self._indices)
        self._unsubscribe = session.subscribe(self.observe)

    def begin_with(self, owns: Callable[[], bool]) -> None:
        """Starts mirroring (a bridge made with ``start=None``) at the first message added while ``owns()`` is true
        (the asking call's own task adds it); changes before that one are ignored. Where it starts is decided when
        that message is added, on the turn's own thread, so a turn another caller starts first is never taken for
        this one."""
        self._owns = owns

    def _begin_at_added(self) -> None:
        """The message just added is this bridge's first one."""
        messages = self._session.messages[:-1]
        self._indices = {m.id: i for i, m in enumerate(messages)}
        self._count = len(messages)
        self._start = len(messages)
        self._waiting = False

    def close(self) -> None:
        """Stops observing; a call shown stopping (its thread still runs) is still followed until that thread ends, so
        what stays shown does not say "stopping" for ever."""
        self._closed = True
        if not self._stopping:
            self._unsubscribe()

    @property
    def start(self) -> int:
        """The position of the first message mirrored."""
        return self._start

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (it mirrors nothing more)."""
        return self._closed

    def index_of(self, message: Message) -> int:
        """The message's position in the conversation."""
        return self._indices[message.id]

    def live_messages(self) -> list[dict[str, Any]]:
        """The messages in progress, whole (for a view that opens mid-stream)."""
        if self._waiting:
            return []
        return [
            self._with_after_stop(message_dict(m, self._indices[m.id]))
            for m in self._session.messages
            if m.status is MessageStatus.IN_PROGRESS and self._indices.get(m.id, -1) >= self._start
        ]

    def observe(self, change: SessionChange) -> None:
        """Turns one session change into ops (the session calls this)."""
        push = self._patches.push
        if self._closed:
            self._after_close(change)
            return
        if self._waiting:
            if self._owns is None or not isinstance(change, MessageAdded) or not self._owns():
                return  # not mirroring yet (see begin_with)
            self._begin_at_added()
        if self._start:
            message = getattr(change, "message", None)
            if message is not None and self._indices.get(message.id, self._count) < self._start:
                return  # before this view's first message
        match change:
            case TextAppended(message=message, index=index, text=text, patches=patches):
                part = message.parts[index]
                if isinstance(part, TextPart) and part.answer is not None:
                    ops = argument_ops(patches)
                    text = shown_json(text)
                    push({"op": "answer", "message_id": message.id, "index": index, "text": text, "patches": ops})
                else:
                    push({"op": "text", "message_id": message.id, "index": index, "text": shown_json(text)})
            case ToolCallArgumentsChanged(message=message, part=part, patches=patches):
                ops = argument_ops(patches)
                if ops:
                    push({"op": "args", "message_id": message.id, "tool_call_id": part.tool_call_id, "patches": ops})
            case ToolCallUpdated(message=message, part=part):
                fields = call_fields(part)
                push({"op": "call", "message_id": message.id, "tool_call_id": part.tool_call_id, "fields": fields})
            case ToolCallStraggling(message=message, part=part, phase=phase, preview=preview):
                self._show_after_stop(message, {part.tool_call_id: after_stop_fields(phase, preview)})
            case MessageUpdated(message=message):
                push({"op": "msg", "message_id": message.id, "fields": message_fields(message)})
            case (
                PartAdded(message=message, index=index, part=part)
                | PartChanged(message=message, index=index, part=part)
            ):
                push({"op": "part", "message_id": message.id, "index": index, "part": part_dict(part)})
            case PartsRemoved(message=message):
                # The live copy starts again from the message as it now stands (rare: a typed answer refused).
                push({"op": "start", "message": message_dict(message, self._indices[message.id])})
            case MessageAdded(message=message):
                index = self._count
                self._count += 1
                self._indices[message.id] = index
                if message.status is MessageStatus.IN_PROGRESS:
                    push({"op": "start", "message": branch_marked(self._session, message_dict(message, index))})
                else:
                    self._on_finished(message, index)
            case MessageFinished(message=message):
                self._on_finished(message, self._indices[message.id])
                self._show_after_stop(message, self._after_stop.pop(message.id, None), finished=True)
                self._on_turn_end(message)
            case BusyChanged(busy=busy):
                self._on_busy(busy)
            case SessionNotice(text=text):
                if self._on_notice is not None:
                    self._on_notice(text)
            case BranchesChanged(position=position):
                self._branched(position)
            case ContextShortened(cut=cut):
                if self._on_context is not None:
                    self._on_context(cut)
            case SteeringChanged(queued=queued, returned=returned):
                if self._on_steering is not None:
                    self._on_steering(queued, returned)
            case ConversationCleared():
                self._indices.clear()
                self._count = 0
                self._after_stop.clear()
                self._stopping.clear()
                push({"op": "clear"})
                self._patches.flush()
                self._on_cleared()

    def _branched(self, position: int) -> None:
        """The active path was replaced from ``position`` on: forget the messages that left it, tell the view, and
        show the ones now there (a switch puts a finished branch there; an edit or a regenerate adds its own after)."""
        self._indices = {message_id: i for message_id, i in self._indices.items() if i < position}
        self._count = position
        if self._on_branched is not None:
            self._on_branched(position)
        shown = self._session.messages[position:]
        for message in shown:
            index = self._count
            self._count += 1
            self._indices[message.id] = index
            if index >= self._start:
                self._on_finished(message, index)
        if shown:  # a switch: the usage and the transcript follow the branch now shown
            self._on_turn_end(shown[-1])

    # --- a sync call's thread after its call ended ------------------------------------------------------------------

    #: The finished messages as the widget keeps them (its ``history``: dicts from ``message_dict``), set by the
    #: widget, so that what a call's thread did after the call ended (``AFTER_STOP_FIELDS``) is kept in them too,
    #: for a view that opens later and a saved notebook. ``None``: only the open views are told.
    finished_shown: Callable[[], list[dict[str, Any]]] | None = None

    _closed = False  # closed, still following the calls shown stopping

    @functools.cached_property
    def _stopping(self) -> set[tuple[str, str]]:
        """(message id, call id) of the calls shown stopping: their threads have not returned yet."""
        return set()

    @functools.cached_property
    def _after_stop(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Message id -> call id -> the after-stop fields, for messages not finished yet (their ``finish`` op, built
        from the record, has none: they are sent again after it)."""
        return {}

    def _show_after_stop(
        self, message: Message, calls: dict[str, dict[str, Any]] | None, *, finished: bool = False
    ) -> None:
        """Tells the views what the threads of ``calls`` (call id -> fields) did after their calls ended, and keeps
        it: in the finished message the widget keeps, or until the message finishes (``finished``: it just did).
        The call's record (state, outcome) is not touched."""
        if not calls:
            return
        for call_id, fields in calls.items():
            self._patches.push({"op": "call", "message_id": message.id, "tool_call_id": call_id, "fields": fields})
            if fields.get("stopping"):
                self._stopping.add((message.id, call_id))
            else:
                self._stopping.discard((message.id, call_id))
        if finished:
            self._patches.flush()  # right after the finish op, which showed the calls without them
        kept = message.status is not MessageStatus.IN_PROGRESS and self._keep_finished(message.id, calls)
        if not kept and not finished:
            self._after_stop.setdefault(message.id, {}).update(calls)

    def _with_after_stop(self, shown: dict[str, Any]) -> dict[str, Any]:
        """A live message's dict with the after-stop fields of its calls (for a view that opens mid-turn)."""
        calls = self._after_stop.get(shown["id"])
        if calls:
            for part in shown["parts"]:
                part.update(calls.get(part.get("tool_call_id"), {}))
        return shown

    def _after_close(self, change: SessionChange) -> None:
        """After :meth:`close`: only what the threads of calls shown stopping did, until none is left."""
        match change:
            case ToolCallStraggling(message=message, part=part, phase=phase, preview=preview) if phase != "stopping":
                if (message.id, part.tool_call_id) in self._stopping:
                    self._show_after_stop(message, {part.tool_call_id: after_stop_fields(phase, preview)})
            case ConversationCleared():
                self._stopping.clear()
            case _:
                pass
        if not self._stopping:
            self._unsubscribe()

    def _keep_finished(self, message_id: str, calls: dict[str, dict[str, Any]]) -> bool:
        """Sets ``calls``' fields in the kept finished message ``message_id`` in place; whether it is kept there."""
        finished = self.finished_shown
        if finished is None:
            return False
        with self._patches.lock:
            for kept in reversed(finished()):
                if kept.get("id") != message_id:
                    continue
                for part in kept.get("parts", ()):
                    if isinstance(part, dict) and part.get("tool_call_id") in calls:
                        part.update(calls[part["tool_call_id"]])
                return True
        return False
