"""A conversation kept on disk, so it survives kernel restarts (``ChatSession(history=path)``): :class:`HistoryFile`,
the session's side of it (what changed, checkpoints, waiting for the writes), and one writer per file, the newest
session of this process for a path taking the file over from the older one.

Three files sit side by side (a path reached through a symlink means its target, and the files sit beside that):
``chat.json``, the snapshot, only ever replaced whole and atomically; ``chat.json.journal``, what changed since,
one record per line, appended; and ``chat.json.lock``, held for as long as a session writes the file. Their format
and reading them is :mod:`ai_widgets.session._history_format`; the lock across processes
:mod:`ai_widgets.session._history_lock`; the thread that writes them :mod:`ai_widgets.session._history_writer`.

A checkpoint costs what changed, not the conversation: the session serialises the messages that changed (on its
own thread, so the record is consistent) and hands the bytes to this file's writer thread, which appends them and
fsyncs. When the journal outgrows the snapshot (and at a clear and at :meth:`HistoryFile.close`) the writer folds it
into a new snapshot, from its own copy of each message's JSON text, so compaction never reads the live messages.

One writer per file: across processes the lock; within a process the newest :class:`HistoryFile` for a path takes
it over from the older one (which drains its writer, hands over the lock and writes nothing more). A file that is
corrupt or from a newer format is never changed: opening it fails with an error that names it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
import weakref
from collections.abc import Callable

from ai_widgets.messages import Message, MessageStatus, Role, ToolCallState
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session._history_format import Files, HistoryError, message_text, read, remove_strays, resolve
from ai_widgets.session._history_lock import HistoryLockedError, Lock
from ai_widgets.session._history_writer import Change, Writer

__all__ = ["HistoryError", "HistoryFile", "HistoryLockedError", "HistoryTakenOverError", "read_history"]

logger = logging.getLogger("ai_widgets")

KERNEL_STOPPED = "Not run: the kernel stopped before it ran."
#: Seconds a new session waits for an older one's writer (in this process) to finish before taking over.
HANDOVER_TIMEOUT = 30.0


class HistoryTakenOverError(RuntimeError):
    """A newer session in this process took this session's history file over; this one writes it no more."""


def read_history(path: str | os.PathLike[str]) -> list[Message]:
    """The conversation a history file holds (its snapshot with its journal replayed), as it is on disk, without
    locking or changing anything: for looking at a file another session may be writing.

    Raises:
        HistoryError: The file cannot be read, is corrupt, or is from a newer format.
    """
    files = Files(resolve(path))
    return read(files).messages


class HistoryFile:
    """One conversation's files, open for writing by one session.

    Opening takes the lock (or takes the file over from an older session of this process), removes temporary
    files a crash left, and loads the conversation (:attr:`messages`), made ready to continue: a turn that was
    running when the kernel stopped ends as cancelled, and its open calls get an outcome saying they never ran.

    Args:
        path: The snapshot file; it need not exist yet (its folder must).
        on_taken_over: Called (from the thread that opens the newer session) with a sentence for the person, when a
            newer session in this process takes the file over.

    Raises:
        HistoryError: The folder does not exist, the path is a folder, or the file cannot be read, is corrupt, or
            is from a newer format.
        HistoryLockedError: Another process holds the file.
    """

    def __init__(self, path: str | os.PathLike[str], *, on_taken_over: Callable[[str], None] | None = None) -> None:
        target = resolve(path)
        self.path = target
        self._files = files = Files(target)
        # Weakly, for a bound method: the registry of open files must not keep a session (and its widget) alive.
        self._on_taken_over: Callable[[], Callable[[str], None] | None] | None = None
        if inspect.ismethod(on_taken_over):
            self._on_taken_over = weakref.WeakMethod(on_taken_over)
        elif on_taken_over is not None:
            callback = on_taken_over
            self._on_taken_over = lambda: callback
        self._closed_because: str | None = None
        self._dirty: dict[int, Message] = {}
        self._writer: Writer
        key = str(target)
        with REGISTRY_LOCK:
            older = OPEN.get(key)
            if older is None:
                lock = Lock.acquire(files)
                try:
                    loaded = read(files)
                except BaseException:
                    lock.release()
                    raise
            else:
                # Read what the older session wrote before stopping it, so a file that cannot be read leaves it
                # writing; read again if it wrote more before it stopped.
                older._writer.flush().result(HANDOVER_TIMEOUT)
                loaded = read(files)
                writes = older._writer.writes
                lock = older._hand_over()
                if older._writer.writes != writes:
                    loaded = read(files)
            try:
                if loaded.journal_problem is not None:
                    logger.warning("ai_widgets: %s", loaded.journal_problem)
                remove_strays(files)
                self._writer = Writer(files, loaded, lock)
            except BaseException:
                lock.release()
                OPEN.pop(key, None)
                raise
            finally:
                if older is not None:
                    older._tell_taken_over()
            OPEN[key] = self
        self.messages = loaded.messages
        self.branches = loaded.branches
        for message in self.messages:
            if close_interrupted(message):
                self.changed(message)  # the next checkpoint writes it as it now stands

    # --- the session's side ---------------------------------------------------------------------------------------

    @property
    def writable(self) -> bool:
        """Whether this session still writes the file (not taken over, not closed)."""
        return self._closed_because is None

    @property
    def refusal(self) -> str | None:
        """Why this session writes the file no more (``None`` while it does)."""
        return self._closed_because

    def changed(self, message: Message) -> None:
        """Notes that ``message`` changed: the next :meth:`checkpoint` writes it."""
        self._dirty[id(message)] = message

    def checkpoint(self, messages: list[Message]) -> None:
        """Hands every message changed since the last checkpoint (by its position in ``messages``) to the writer,
        as one checkpoint (one journal record: written whole or, torn by a crash, not at all).

        Serialises them now, on the caller's thread (the one that changes them); the writing happens on the
        writer's thread. Its cost is that of the changed messages, whatever the length of the conversation.
        """
        self._checkpoint(messages, [])

    def branched(self, messages: list[Message], position: int, branches: str | None) -> None:
        """Checkpoints a conversation cut at ``position`` (an edit, a regenerate or a switch of branch replaced what
        followed) whose earlier branches are now ``branches`` (their JSON text; ``None``: none), with the messages
        now from ``position`` on and every other changed one: one checkpoint, so a crash never saves the cut
        without the branches that keep what it replaced."""
        for message in messages[position:]:
            self.changed(message)
        self._checkpoint(messages, [("truncate", position), ("branches", branches)])

    def _checkpoint(self, messages: list[Message], changes: list[Change]) -> None:
        dirty, self._dirty = self._dirty, {}
        if self._closed_because is not None:
            return
        puts: list[tuple[int, str]] = []
        for message in dirty.values():
            index = position(messages, message)
            if index is not None:
                puts.append((index, message_text(message)))
        puts.sort()
        changes.extend(("put", index, text) for index, text in puts)
        self._writer.checkpoint(changes)

    def clear(self) -> None:
        """Records that the conversation was emptied (the writer then writes a new, empty snapshot)."""
        self._dirty = {}
        if self._closed_because is None:
            self._writer.clear()

    async def written(self) -> str | None:
        """Waits until everything handed over so far is written; ``None``, or a sentence saying what is not saved."""
        if self._closed_because is not None:
            return f"This reply was not saved to {str(self.path)!r}: {self._closed_because}"
        failure = await asyncio.wrap_future(self._writer.flush())
        return None if failure is None else self._describe_failure(failure)

    def flush(self, timeout: float | None = None) -> None:
        """Blocks until everything handed over so far is written.

        Raises:
            HistoryError: The file is behind (the last write failed); the message says why.
            TimeoutError: The writer did not finish in ``timeout`` seconds.
        """
        if self._closed_because is not None:
            return
        failure = self._writer.flush().result(timeout)
        if failure is not None:
            raise HistoryError(self._describe_failure(failure))

    def close(self) -> None:
        """Writes what is pending, folds the journal into the snapshot, and releases the file (and its lock)."""
        with REGISTRY_LOCK:
            if self._closed_because is not None:
                return
            self._closed_because = "the session was closed (close() writes the file and lets it go)."
            lock = self._writer.stop(compact=True, timeout=None)
            lock.release()
            if OPEN.get(str(self.path)) is self:
                del OPEN[str(self.path)]

    def _describe_failure(self, failure: BaseException) -> str:
        return (
            f"This reply was not saved: the history file {str(self.path)!r} could not be written "
            f"({type(failure).__name__}: {failure}). The conversation is kept in this session; the next write "
            "tries again."
        )

    # --- taking over ----------------------------------------------------------------------------------------------

    def _hand_over(self) -> Lock:
        """Stops writing (after writing what is pending) and gives up the lock to the newer session."""
        self._closed_because = (
            "a newer session in this kernel opened the same history file and took it over (a cell run again); "
            "use that one. This session no longer writes the file."
        )
        return self._writer.stop(compact=False, timeout=HANDOVER_TIMEOUT)

    def _tell_taken_over(self) -> None:
        callback = None if self._on_taken_over is None else self._on_taken_over()
        if callback is not None and self._closed_because is not None:
            try:
                callback(f"History file {str(self.path)!r}: {self._closed_because}")
            except Exception:
                logger.exception("ai_widgets: telling a session its history file was taken over failed")


def position(messages: list[Message], message: Message) -> int | None:
    for index in range(len(messages) - 1, -1, -1):  # a changed message is nearly always one of the last
        if messages[index] is message:
            return index
    return None


def close_interrupted(message: Message) -> bool:
    """A message saved mid-turn: its open calls never ran (the kernel stopped), and the turn is over. Whether it
    was such a message."""
    if message.role is not Role.ASSISTANT:
        return False
    changed = False
    for part in message.tool_calls:
        if not part.state.terminal:
            ran = part.state in (ToolCallState.RUNNING, ToolCallState.AWAITING_INPUT)
            state = ToolCallState.FAILED if ran else ToolCallState.SKIPPED
            message_text = (
                "Interrupted: the kernel stopped while it ran." if state is ToolCallState.FAILED else KERNEL_STOPPED
            )
            part.move(state, ToolOutcome.failure(message_text, retryable=True))
            changed = True
    if message.status is MessageStatus.IN_PROGRESS:
        message.status = MessageStatus.CANCELLED
        message.error = "The kernel stopped before this turn finished."
        changed = True
    return changed


# The history files this process writes, by resolved path (a newer session for a path takes the file over).
REGISTRY_LOCK = threading.RLock()
OPEN: dict[str, HistoryFile] = {}
