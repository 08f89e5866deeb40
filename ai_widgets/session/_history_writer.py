"""The thread that writes one history file: it appends the checkpoints the session hands it, one journal record
each (and fsyncs), folds the journal into a new snapshot when it outgrows the snapshot (and at a clear and a close),
remembers a failed write and repairs it with the next, and is flushed when the interpreter exits."""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import logging
import os
import queue
import threading
import weakref
from typing import Any, Literal

from ai_widgets.session._history_format import (
    CLEAR_RECORD,
    JOURNAL_VERSION,
    Files,
    HistoryError,
    Loaded,
    branches_change,
    checkpoint_record,
    journal_header,
    put_change,
    snapshot_bytes,
    truncate_change,
    write_atomically,
)
from ai_widgets.session._history_lock import Lock

__all__: list[str] = ["Change", "Writer"]

logger = logging.getLogger("ai_widgets")

#: The journal is folded into the snapshot once it is larger than the snapshot and than this many bytes.
COMPACT_MIN_BYTES = 256 * 1024

#: One change of a checkpoint: ``("put", index, message JSON text)``, ``("truncate", length)`` or
#: ``("branches", branches JSON text or None)``.
Change = tuple[Literal["put"], int, str] | tuple[Literal["truncate"], int] | tuple[Literal["branches"], str | None]


class Writer:
    """The thread that writes one history file, in the order the checkpoints came, off the session's loop.

    It keeps each message's JSON text (what the file holds), so a compaction writes the snapshot from that copy.
    A failed write is remembered: flushes report it, and the next write rebuilds the files whole (a compaction),
    which repairs whatever the failure left.
    """

    def __init__(self, files: Files, loaded: Loaded, lock: Lock) -> None:
        self._files = files
        self._lock = lock
        self._texts = loaded.texts
        self._branches = loaded.branches_text  # the earlier branches' JSON text; None: there are none
        self._snapshot_size = loaded.snapshot_size
        self._journal_size = loaded.journal_size
        self._journal: int | None = None
        self._failure: BaseException | None = None
        self.writes = 0  # successful writes so far (a newer session checks whether it read the last one)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._stopped = False
        try:
            if not files.snapshot.exists():
                self._compact(raising=True)  # a new file: an empty snapshot, and a journal that follows it
            elif loaded.journal_version != JOURNAL_VERSION:
                self._compact(raising=True)  # an older journal: its header must name the records appended to it
            elif loaded.journal_size == 0:  # no journal yet (a file dump_messages wrote), or a stale one
                write_atomically(files, files.journal, loaded.header)
                self._open_journal(truncate_to=None)
                self._journal_size = len(loaded.header)
            else:
                self._open_journal(truncate_to=loaded.journal_size)  # drops a torn last record
        except OSError as exc:
            raise HistoryError(f"cannot write the history file {str(files.snapshot)!r}: {exc}") from exc
        self._thread = threading.Thread(target=self._run, name=f"ai_widgets history {files.snapshot.name}", daemon=True)
        self._thread.start()
        WRITERS.add(self)

    # --- the callers' side ----------------------------------------------------------------------------------------

    def checkpoint(self, changes: list[Change]) -> None:
        """Hands over one checkpoint: its changes, in order, are written as one journal record."""
        if changes:
            self._queue.put(("checkpoint", changes))

    def clear(self) -> None:
        """Hands over a clear (written as a new, empty snapshot)."""
        self._queue.put(("clear",))

    def flush(self) -> concurrent.futures.Future[BaseException | None]:
        future: concurrent.futures.Future[BaseException | None] = concurrent.futures.Future()
        if self._stopped:
            future.set_result(None)
        else:
            self._queue.put(("flush", future))
        return future

    def stop(self, *, compact: bool, timeout: float | None) -> Lock:
        """Writes what is pending (and compacts, if asked), ends the thread, and returns the lock, still held."""
        if not self._stopped:
            done: concurrent.futures.Future[BaseException | None] = concurrent.futures.Future()
            self._queue.put(("stop", done, compact))
            with contextlib.suppress(concurrent.futures.TimeoutError):
                done.result(timeout)
            self._thread.join(timeout)
        WRITERS.discard(self)
        return self._lock

    # --- the thread -----------------------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            with contextlib.suppress(queue.Empty):
                while True:
                    batch.append(self._queue.get_nowait())
            records: list[bytes] = []
            waiters: list[concurrent.futures.Future[BaseException | None]] = []
            stop: tuple[concurrent.futures.Future[BaseException | None], bool] | None = None
            cleared = False
            for job in batch:
                match job:
                    case ("checkpoint", list(changes)):
                        try:
                            records.append(checkpoint_record([self._apply(change) for change in changes]))
                        except Exception as exc:  # a bug must not end the thread every later save waits for
                            logger.exception("ai_widgets: the history writer failed")
                            self._fail(exc)
                    case ("clear",):
                        self._texts.clear()
                        self._branches = None
                        records.append(CLEAR_RECORD)
                        cleared = True
                    case ("flush", future):
                        waiters.append(future)
                    case ("stop", future, compact):
                        stop = (future, bool(compact))
            try:
                if records or stop is not None:
                    self._write(records, compact=cleared or (stop is not None and stop[1]))
            except Exception as exc:  # a bug must not leave a waiting send() waiting for ever
                logger.exception("ai_widgets: the history writer failed")
                self._fail(exc)
            failure = self._failure
            for waiter in waiters:
                settle(waiter, failure)
            if stop is not None:
                self._stopped = True
                self._close_journal()
                settle(stop[0], self._failure)
                return
            if self._failure is None and self._journal_size > max(COMPACT_MIN_BYTES, self._snapshot_size):
                try:
                    self._compact()
                except Exception as exc:
                    logger.exception("ai_widgets: the history writer failed")
                    self._fail(exc)

    def _apply(self, change: Change) -> bytes:
        """Applies one change to the texts a compaction writes; the change as the journal holds it."""
        match change:
            case ("put", int(index), str(text)):
                if index < len(self._texts):
                    self._texts[index] = text
                else:
                    self._texts.append(text)
                return put_change(index, text)
            case ("truncate", int(length)):
                del self._texts[length:]
                return truncate_change(length)
            case ("branches", branches):
                self._branches = branches
                return branches_change(branches)
        raise TypeError(f"not a change of a checkpoint: {change!r}")

    def _write(self, records: list[bytes], *, compact: bool) -> None:
        if compact or self._failure is not None or self._journal is None:
            self._compact()  # also repairs what a failed write left
            return
        data = b"".join(records)
        if not data:
            return
        fd = self._journal
        try:
            if os.fstat(fd).st_nlink == 0:
                raise FileNotFoundError(f"the journal {str(self._files.journal)!r} was deleted")
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            self._fail(exc)
            with contextlib.suppress(OSError):
                os.ftruncate(fd, self._journal_size)  # no half record before the next one
            return
        self._journal_size += len(data)
        self.writes += 1

    def _compact(self, *, raising: bool = False) -> None:
        """Writes the whole conversation as a new snapshot, then a new journal that follows it."""
        snapshot = snapshot_bytes(self._texts, self._branches)
        header = journal_header(snapshot)
        try:
            if not self._files.folder.is_dir():
                raise FileNotFoundError(f"the folder {str(self._files.folder)!r} no longer exists")
            write_atomically(self._files, self._files.snapshot, snapshot)
            self._close_journal()  # Windows renames nothing over an open file
            write_atomically(self._files, self._files.journal, header)
            self._open_journal(truncate_to=None)
        except OSError as exc:
            if raising:
                raise
            self._fail(exc)
            return
        self._snapshot_size, self._journal_size = len(snapshot), len(header)
        self.writes += 1
        if self._failure is not None:
            logger.warning("ai_widgets: the history file %s is written again", self._files.snapshot)
        self._failure = None

    def _close_journal(self) -> None:
        fd, self._journal = self._journal, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _open_journal(self, *, truncate_to: int | None) -> None:
        self._close_journal()
        fd = os.open(self._files.journal, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
        if truncate_to is not None:
            try:
                if os.fstat(fd).st_size != truncate_to:
                    os.ftruncate(fd, truncate_to)
            except OSError:
                os.close(fd)
                raise
        self._journal = fd

    def _fail(self, exc: Exception) -> None:
        if self._failure is None:
            logger.warning("ai_widgets: could not write the history file %s: %s", self._files.snapshot, exc)
        self._failure = exc


# The writers to flush when the interpreter exits (their threads are daemons: they would die with work pending).
WRITERS: weakref.WeakSet[Writer] = weakref.WeakSet()


@atexit.register
def flush_at_exit() -> None:
    for writer in list(WRITERS):
        with contextlib.suppress(Exception):
            writer.flush().result(10)


def settle(waiter: concurrent.futures.Future[BaseException | None], failure: BaseException | None) -> None:
    """Answers one waiter; one that gave up waiting (a stopped turn cancels the wait for its save) needs nothing,
    and must not end the writer thread, which every later save waits for."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        waiter.set_result(failure)
