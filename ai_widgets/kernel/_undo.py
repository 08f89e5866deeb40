"""Undoing a run of code (:class:`UndoLog`): what each run rebound, deleted and created, kept per tool call, and put
back newest first."""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from ai_widgets.kernel._changes import RunChanges, listed
from ai_widgets.kernel._watch import NamespaceWatch

__all__ = ["DEFAULT_UNDO_LIMIT", "UndoError", "UndoLog"]

#: The most runs an :class:`UndoLog` keeps by default.
DEFAULT_UNDO_LIMIT = 100
#: How many dropped calls the log remembers by id, to say "too old" rather than "unknown".
MAX_FORGOTTEN = 10_000
MISSING = object()


class UndoError(Exception):
    """A run cannot be undone; nothing was changed. The message says why: a later run changed the same names (undo
    that first), a value was changed since, the run was undone already, or it is unknown or too old."""


@dataclass(slots=True)
class Record:
    """One run: what it changed, the objects it replaced or removed, and the objects it left."""

    tool_call_id: str
    changes: RunChanges
    old: dict[str, Any]  # rebound and deleted names -> the objects they held before the run
    left: dict[str, Any]  # created and rebound names -> the objects the run bound them to
    undone: bool = False


class UndoLog:
    """What each run of code changed, per tool call id, to undo it: the objects of the names it rebound or deleted
    (put back), the names it created (removed), and the objects it left (to see whether they were changed since).

    Runs are undone newest first: a run cannot be undone while a later run that is not undone touched one of its
    names. Values changed in place cannot be undone (the old value was never copied); the message says so.

    The log holds the objects it would put back alive until the run is undone or its record is dropped: it keeps
    the last ``limit`` runs, dropping the oldest (undoing one of those says it is too old), and :meth:`clear`
    drops them all. A 300 MB frame that a run rebound stays in memory until then.

    The log is thread-safe (a run may be recorded on a worker thread while the event loop undoes another); the
    namespace is not locked: an undo while code runs in the same namespace races with that code, so the caller
    undoes only between runs.

    Args:
        limit: The most runs kept.

    Raises:
        ValueError: ``limit`` is not a positive integer.
    """

    def __init__(self, *, limit: int = DEFAULT_UNDO_LIMIT) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"UndoLog limit must be a positive integer, not {limit!r}")
        self.limit = limit
        self._records: OrderedDict[str, Record] = OrderedDict()
        self._forgotten: deque[str] = deque(maxlen=MAX_FORGOTTEN)
        self._forgotten_set: set[str] = set()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, tool_call_id: object) -> bool:
        return tool_call_id in self._records

    def record(self, tool_call_id: str, watch: NamespaceWatch, namespace: Mapping[str, Any]) -> RunChanges:
        """Records what a run changed, to undo it later.

        Args:
            tool_call_id: The call that ran the code.
            watch: The watch started before the run (:func:`ai_widgets.kernel.watch_start`).
            namespace: The namespace after the run.

        Returns:
            What the run changed (``watch.changes(namespace)``).

        Raises:
            ValueError: This call id was recorded already.
        """
        diff = watch.diff(namespace)
        changes = diff.changes
        record = Record(tool_call_id, changes, old=diff.old, left=diff.left)
        with self._lock:
            if tool_call_id in self._records or tool_call_id in self._forgotten_set:
                raise ValueError(f"the run of call {tool_call_id} is recorded already")
            self._records[tool_call_id] = record
            while len(self._records) > self.limit:
                dropped, _ = self._records.popitem(last=False)
                self._forget(dropped)
        return changes

    def changes(self, tool_call_id: str) -> RunChanges | None:
        """What the run of this call changed, while its record is kept (``None`` otherwise)."""
        record = self._records.get(tool_call_id)
        return None if record is None else record.changes

    def is_undone(self, tool_call_id: str) -> bool:
        """Whether the run of this call was undone (and its record is still kept)."""
        record = self._records.get(tool_call_id)
        return record is not None and record.undone

    def undo(self, tool_call_id: str, namespace: MutableMapping[str, Any]) -> str:
        """Undoes the run of this call: puts back the objects of the names it rebound or deleted, and removes the
        names it created. All or nothing: every name is checked before any is changed.

        Args:
            tool_call_id: The call whose run to undo.
            namespace: The namespace it ran in.

        Returns:
            What it did, in one line (``Undid call_1: removed df2; put back df. The in-place changes to rows cannot
            be undone.``).

        Raises:
            UndoError: Nothing was changed, because: the id is unknown, or too old (its record was dropped), or the
                run was undone already; a later run that is not undone touched one of its names (undo that first:
                the message names it); or a name no longer holds what the run left (the person changed it since).
        """
        with self._lock:
            record = self._records.get(tool_call_id)
            if record is None:
                if tool_call_id in self._forgotten_set:
                    raise UndoError(
                        f"cannot undo {tool_call_id}: it is too old (only the last {self.limit:,} runs are kept)"
                    )
                raise UndoError(f"cannot undo {tool_call_id}: no run of code by that call is known")
            if record.undone:
                raise UndoError(f"{tool_call_id} was undone already")
            self._check_newest(record)
            self._check_unchanged(record, namespace)
            changes = record.changes
            for name in changes.created:
                del namespace[name]
            for name in (*changes.rebound, *changes.deleted):
                namespace[name] = record.old[name]
            record.undone = True
            record.old, record.left = {}, {}  # the objects are the namespace's again (or gone)
            return undone_line(tool_call_id, changes)

    def clear(self) -> None:
        """Drops every record, releasing the objects they kept (undoing any of those runs then says it is too
        old)."""
        with self._lock:
            for tool_call_id in self._records:
                self._forget(tool_call_id)
            self._records.clear()

    def _forget(self, tool_call_id: str) -> None:
        if len(self._forgotten) == self._forgotten.maxlen:
            self._forgotten_set.discard(self._forgotten[0])
        self._forgotten.append(tool_call_id)
        self._forgotten_set.add(tool_call_id)

    def _check_newest(self, record: Record) -> None:
        names = record.changes.names
        later: list[tuple[str, list[str]]] = []
        found = False
        for other in self._records.values():
            if other is record:
                found = True
            elif found and not other.undone:
                shared = sorted(names & other.changes.names)
                if shared:
                    later.append((other.tool_call_id, shared))
        if later:
            first, shared = later[-1]
            others = [call for call, _ in reversed(later[:-1])]
            then = f", then {', '.join(others)}" if others else ""
            raise UndoError(
                f"cannot undo {record.tool_call_id} yet: a later run ({first}) changed {listed(tuple(shared))} too. "
                f"Undo {first}{then} first (newest first)"
            )

    @staticmethod
    def _check_unchanged(record: Record, namespace: Mapping[str, Any]) -> None:
        changed = [name for name, value in record.left.items() if namespace.get(name, MISSING) is not value]
        changed += [name for name in record.changes.deleted if name in namespace]
        if changed:
            names = listed(tuple(sorted(changed)))
            raise UndoError(
                f"cannot undo {record.tool_call_id}: {names} changed since it ran (not what it left), and undoing "
                "would lose that; nothing was undone"
            )


def undone_line(tool_call_id: str, changes: RunChanges) -> str:
    """What undoing a run did, in one line."""
    done = []
    if changes.created:
        done.append(f"removed {listed(changes.created)}")
    put_back = tuple(sorted((*changes.rebound, *changes.deleted)))
    if put_back:
        done.append(f"put back {listed(put_back)}")
    if not done:
        if changes.mutated:
            return (
                f"Nothing undone for {tool_call_id}: it only changed {listed(changes.mutated)} in place, which cannot "
                "be undone."
            )
        return f"Nothing to undo for {tool_call_id}: it changed no variables."
    said = f"Undid {tool_call_id}: {'; '.join(done)}."
    if changes.mutated:
        said += f" The in-place changes to {listed(changes.mutated)} cannot be undone."
    return said
