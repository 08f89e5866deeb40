"""A conversation kept on disk, so it survives kernel restarts (``ChatSession(history=path)``).

Three files sit side by side (a path reached through a symlink means its target, and the files sit beside that):

- ``chat.json``, the *snapshot*: the format of :func:`ai_widgets.messages.dump_messages`, so any file that function
  wrote loads. It is only ever replaced whole and atomically (a temporary file in the same folder, fsynced, renamed
  over it), so a crash mid-write leaves the old one readable; a stray temporary file is removed on the next open.
- ``chat.json.journal``: what changed since the snapshot, one record per line (``crc32 json``), appended. A record
  puts one message at its position, or clears the conversation; the loader replays them over the snapshot. A torn
  last record (a crash mid-append) fails its checksum and is dropped; a bad record with good ones after it is
  corruption. The first record names the snapshot it follows (its size and crc32), so a journal left behind by a
  compaction that crashed before resetting it is recognised as already folded in.
- ``chat.json.lock``: held with ``fcntl.flock`` (``msvcrt.locking`` on Windows) for as long as a session writes the
  file; the OS releases it when the process dies. It holds the holder's pid, host and start time, so a second
  process is refused with an error that names them. The file itself stays (removing it would race a new holder).

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
import atexit
import concurrent.futures
import contextlib
import datetime
import inspect
import json
import logging
import os
import queue
import socket
import sys
import tempfile
import threading
import weakref
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_widgets.messages import (
    FORMAT_VERSION,
    Message,
    MessageStatus,
    Role,
    ToolCallState,
    load_messages,
)
from ai_widgets.outcome import ToolOutcome

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = ["HistoryError", "HistoryFile", "HistoryLockedError", "HistoryTakenOverError", "read_history"]

logger = logging.getLogger("ai_widgets")

_KERNEL_STOPPED = "Not run: the kernel stopped before it ran."
_JOURNAL_FORMAT = "ai_widgets.history-journal"
_JOURNAL_VERSION = 1
#: The journal is folded into the snapshot once it is larger than the snapshot and than this many bytes.
COMPACT_MIN_BYTES = 256 * 1024
#: Seconds a new session waits for an older one's writer (in this process) to finish before taking over.
_HANDOVER_TIMEOUT = 30.0
_WINDOWS_LOCK_OFFSET = 1 << 30  # past the holder text, so another process can still read who holds it


class HistoryError(ValueError):
    """A history file cannot be used: missing folder, corrupt, from a newer ai_widgets, unreadable. A file that
    exists is left as it is."""


class HistoryLockedError(HistoryError):
    """Another process (another notebook's kernel) writes this history file; the error names it."""


class HistoryTakenOverError(RuntimeError):
    """A newer session in this process took this session's history file over; this one writes it no more."""


def read_history(path: str | os.PathLike[str]) -> list[Message]:
    """The conversation a history file holds (its snapshot with its journal replayed), as it is on disk, without
    locking or changing anything: for looking at a file another session may be writing.

    Raises:
        HistoryError: The file cannot be read, is corrupt, or is from a newer format.
    """
    files = _Files(_resolve(path))
    return _read(files).messages


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
        target = _resolve(path)
        self.path = target
        self._files = files = _Files(target)
        # Weakly, for a bound method: the registry of open files must not keep a session (and its widget) alive.
        self._on_taken_over: Callable[[], Callable[[str], None] | None] | None = None
        if inspect.ismethod(on_taken_over):
            self._on_taken_over = weakref.WeakMethod(on_taken_over)
        elif on_taken_over is not None:
            callback = on_taken_over
            self._on_taken_over = lambda: callback
        self._closed_because: str | None = None
        self._dirty: dict[int, Message] = {}
        self._writer: _Writer
        key = str(target)
        with _REGISTRY_LOCK:
            older = _OPEN.get(key)
            if older is None:
                lock = _Lock.acquire(files)
                try:
                    loaded = _read(files)
                except BaseException:
                    lock.release()
                    raise
            else:
                # Read what the older session wrote before stopping it, so a file that cannot be read leaves it
                # writing; read again if it wrote more before it stopped.
                older._writer.flush().result(_HANDOVER_TIMEOUT)
                loaded = _read(files)
                writes = older._writer.writes
                lock = older._hand_over()
                if older._writer.writes != writes:
                    loaded = _read(files)
            try:
                if loaded.journal_problem is not None:
                    logger.warning("ai_widgets: %s", loaded.journal_problem)
                _remove_strays(files)
                self._writer = _Writer(files, loaded, lock)
            except BaseException:
                lock.release()
                _OPEN.pop(key, None)
                raise
            finally:
                if older is not None:
                    older._tell_taken_over()
            _OPEN[key] = self
        self.messages = loaded.messages
        for message in self.messages:
            if _close_interrupted(message):
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
        """Hands every message changed since the last checkpoint (by its position in ``messages``) to the writer.

        Serialises them now, on the caller's thread (the one that changes them); the writing happens on the
        writer's thread. Its cost is that of the changed messages, whatever the length of the conversation.
        """
        dirty, self._dirty = self._dirty, {}
        if self._closed_because is not None or not dirty:
            return
        puts: list[tuple[int, str]] = []
        for message in dirty.values():
            index = _position(messages, message)
            if index is not None:
                puts.append((index, _message_text(message)))
        puts.sort()
        for index, text in puts:
            self._writer.submit(("put", index, text))

    def clear(self) -> None:
        """Records that the conversation was emptied (the writer then writes a new, empty snapshot)."""
        self._dirty = {}
        if self._closed_because is None:
            self._writer.submit(("clear",))

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
        with _REGISTRY_LOCK:
            if self._closed_because is not None:
                return
            self._closed_because = "the session was closed (close() writes the file and lets it go)."
            lock = self._writer.stop(compact=True, timeout=None)
            lock.release()
            if _OPEN.get(str(self.path)) is self:
                del _OPEN[str(self.path)]

    def _describe_failure(self, failure: BaseException) -> str:
        return (
            f"This reply was not saved: the history file {str(self.path)!r} could not be written "
            f"({type(failure).__name__}: {failure}). The conversation is kept in this session; the next write "
            "tries again."
        )

    # --- taking over ----------------------------------------------------------------------------------------------

    def _hand_over(self) -> _Lock:
        """Stops writing (after writing what is pending) and gives up the lock to the newer session."""
        self._closed_because = (
            "a newer session in this kernel opened the same history file and took it over (a cell run again); "
            "use that one. This session no longer writes the file."
        )
        return self._writer.stop(compact=False, timeout=_HANDOVER_TIMEOUT)

    def _tell_taken_over(self) -> None:
        callback = None if self._on_taken_over is None else self._on_taken_over()
        if callback is not None and self._closed_because is not None:
            try:
                callback(f"History file {str(self.path)!r}: {self._closed_because}")
            except Exception:
                logger.exception("ai_widgets: telling a session its history file was taken over failed")


# --- files ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Files:
    snapshot: Path

    @property
    def journal(self) -> Path:
        return self.snapshot.with_name(self.snapshot.name + ".journal")

    @property
    def lock(self) -> Path:
        return self.snapshot.with_name(self.snapshot.name + ".lock")

    @property
    def folder(self) -> Path:
        return self.snapshot.parent

    @property
    def temporary_prefix(self) -> str:
        return f".{self.snapshot.name}."


def _resolve(path: str | os.PathLike[str]) -> Path:
    """The file a ``history=`` path means: a symlink is followed (the target is what gets written, beside it)."""
    given = Path(path).expanduser()
    if given.is_dir():
        raise HistoryError(f"history={str(path)!r} is a folder; give a file path such as 'chat.json'")
    target = Path(os.path.realpath(given))
    if target.is_dir():
        raise HistoryError(f"history={str(path)!r} leads to a folder ({str(target)!r}); give a file path")
    if not target.parent.is_dir():
        where = f" (the link leads to {str(target)!r})" if str(target) != os.path.abspath(given) else ""
        raise HistoryError(
            f"the folder of the history file {str(path)!r} does not exist{where}: create {str(target.parent)!r} "
            "first, or pass another history= path"
        )
    return target


def _remove_strays(files: _Files) -> None:
    """Removes the temporary files a crash mid-write left (only ours: the lock is held, so no one writes them)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(files.folder):
            if entry.name.startswith(files.temporary_prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _write_atomically(files: _Files, target: Path, data: bytes) -> None:
    """Replaces ``target`` with ``data``: a temporary file in the same folder, fsynced, renamed over it."""
    handle, temporary = tempfile.mkstemp(prefix=files.temporary_prefix, suffix=".tmp", dir=files.folder)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(files.folder)


def _sync_folder(folder: Path) -> None:
    """Makes a rename durable (where the OS lets a folder be fsynced)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- the format -------------------------------------------------------------------------------------------------


def _message_text(message: Message) -> str:
    # The same text dump_messages gives each message, so a snapshot built from these texts is byte for byte its own.
    return json.dumps(message.to_dict(), ensure_ascii=True, allow_nan=False)


def _snapshot_bytes(texts: Iterable[str]) -> bytes:
    head = json.dumps({"format": "ai_widgets.conversation", "version": FORMAT_VERSION})[:-1]
    return f'{head}, "messages": [{", ".join(texts)}]}}'.encode("ascii")


def _record(body: bytes) -> bytes:
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _header(snapshot: bytes) -> bytes:
    stamp = {"size": len(snapshot), "crc32": zlib.crc32(snapshot)}
    body = json.dumps({"format": _JOURNAL_FORMAT, "version": _JOURNAL_VERSION, "snapshot": stamp})
    return _record(body.encode("ascii"))


def _put_record(index: int, text: str) -> bytes:
    return _record(f'{{"op": "put", "index": {index}, "message": {text}}}'.encode("ascii"))


_CLEAR_RECORD = _record(b'{"op": "clear"}')


@dataclass
class _Loaded:
    messages: list[Message]
    texts: list[str]
    snapshot_size: int
    header: bytes  # the journal's first record for this snapshot
    journal_size: int  # the good part of the journal (a torn tail excluded); 0: it must be written anew
    journal_problem: str | None = None  # a journal that was left out (stale), told in the log


def _read(files: _Files) -> _Loaded:
    """Reads the snapshot and replays the journal over it.

    Raises:
        HistoryError: Either file cannot be read, is corrupt, or is from a newer format.
    """
    try:
        snapshot = files.snapshot.read_bytes()
    except FileNotFoundError:
        snapshot = None
    except OSError as exc:
        raise HistoryError(f"cannot read the history file {str(files.snapshot)!r}: {exc}") from exc
    messages: list[Message] = []
    if snapshot is not None:
        try:
            messages = load_messages(snapshot)
        except ValueError as exc:
            raise HistoryError(
                f"the history file {str(files.snapshot)!r} is not a conversation this version can read ({exc}); "
                "it was left untouched. Move it away, or pass another history= path."
            ) from None
    texts = [_message_text(m) for m in messages]
    try:
        journal = files.journal.read_bytes()
    except FileNotFoundError:
        journal = b""
    except OSError as exc:
        raise HistoryError(f"cannot read the history journal {str(files.journal)!r}: {exc}") from exc
    loaded = _Loaded(messages, texts, 0 if snapshot is None else len(snapshot), _header(snapshot or b""), 0)
    if snapshot is not None and journal:
        _replay(files, snapshot, journal, loaded)
    return loaded


def _replay(files: _Files, snapshot: bytes, journal: bytes, loaded: _Loaded) -> None:
    lines = journal.split(b"\n")
    complete = len(lines) - 1  # the piece after the last newline is a torn record, or empty
    offset = 0
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines):
        record = _parse_record(line) if number < complete else None
        if record is None:
            later = any(_parse_record(rest) is not None for rest in lines[number + 1 : complete])
            if later:
                raise HistoryError(
                    f"the history journal {str(files.journal)!r} is corrupt (record {number + 1} is damaged and "
                    "records follow it); it was left untouched. Move it (and its snapshot) away, or pass another "
                    "history= path."
                )
            break  # a torn last record: it was never complete, so it is not part of the conversation
        offset += len(line) + 1
        records.append((offset, record))
    if not records:
        return  # the header itself was torn: nothing was journaled yet
    _, header = records[0]
    if header.get("format") != _JOURNAL_FORMAT:
        raise HistoryError(
            f"the history journal {str(files.journal)!r} is not an ai_widgets journal; it was left untouched. Move "
            "it away, or pass another history= path."
        )
    version = header.get("version")
    if version != _JOURNAL_VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > _JOURNAL_VERSION
        hint = ": it was written by a newer ai_widgets; upgrade to read it" if newer else ""
        raise HistoryError(
            f"the history journal {str(files.journal)!r} has an unsupported version {version!r}{hint}; it was left "
            "untouched."
        )
    if header.get("snapshot") != {"size": len(snapshot), "crc32": zlib.crc32(snapshot)}:
        loaded.journal_problem = (
            f"the history journal {str(files.journal)!r} belongs to an earlier version of {str(files.snapshot)!r} "
            "(a compaction that stopped before it reset the journal, or a snapshot replaced by hand); it is left "
            "out and started anew"
        )
        return
    messages, texts = list(loaded.messages), list(loaded.texts)
    for number, (_, record) in enumerate(records[1:], start=2):
        try:
            match record.get("op"):
                case "clear":
                    messages.clear()
                    texts.clear()
                case "put":
                    index, data = record.get("index"), record.get("message")
                    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= len(messages):
                        raise ValueError(f"position {index!r} is outside the conversation of {len(messages)}")
                    message = Message.from_dict(data)  # type: ignore[arg-type]
                    text = _message_text(message)
                    if index == len(messages):
                        messages.append(message)
                        texts.append(text)
                    else:
                        messages[index], texts[index] = message, text
                case other:
                    raise ValueError(f"unknown operation {other!r}")
        except (ValueError, RecursionError) as exc:
            raise HistoryError(
                f"the history journal {str(files.journal)!r} is corrupt (record {number}: {exc}); it was left "
                "untouched. Move it (and its snapshot) away, or pass another history= path."
            ) from None
    loaded.messages, loaded.texts = messages, texts
    loaded.journal_size = records[-1][0]


def _parse_record(line: bytes) -> dict[str, Any] | None:
    """A journal line's record; ``None`` when it is damaged (torn, or its checksum does not match)."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    body = line[9:]
    try:
        if int(line[:8], 16) != zlib.crc32(body):
            return None
        record = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


# --- the lock ---------------------------------------------------------------------------------------------------


class _Lock:
    """The lock on a history file, held through an open file the OS unlocks when the process ends."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, files: _Files) -> _Lock:
        try:
            fd = os.open(files.lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryError(
                f"cannot create the lock file of the history file {str(files.snapshot)!r}: {exc}"
            ) from exc
        try:
            _try_lock(fd)
        except OSError:
            named = _holder_text(fd)
            os.close(fd)
            raise HistoryLockedError(
                f"the history file {str(files.snapshot)!r} is in use by another process ({named}); one session "
                "writes a history file at a time. Close that session or its kernel, or pass another history= path."
            ) from None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "program": " ".join(sys.argv)[:200],
        }
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(holder).encode("utf-8"))
        return cls(fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                _unlock(fd)
            with contextlib.suppress(OSError):
                os.close(fd)


def _try_lock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _holder_text(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        holder = json.loads(os.read(fd, 4096).decode("utf-8"))
        return f"pid {holder['pid']} on {holder['host']}, since {holder['started_at']}" + (
            f", running {holder['program']!r}" if holder.get("program") else ""
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said who it is yet"


# --- the writer -------------------------------------------------------------------------------------------------


class _Writer:
    """The thread that writes one history file, in the order the checkpoints came, off the session's loop.

    It keeps each message's JSON text (what the file holds), so a compaction writes the snapshot from that copy.
    A failed write is remembered: flushes report it, and the next write rebuilds the files whole (a compaction),
    which repairs whatever the failure left.
    """

    def __init__(self, files: _Files, loaded: _Loaded, lock: _Lock) -> None:
        self._files = files
        self._lock = lock
        self._texts = loaded.texts
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
            elif loaded.journal_size == 0:  # no journal yet (a file dump_messages wrote), or a stale one
                _write_atomically(files, files.journal, loaded.header)
                self._open_journal(truncate_to=None)
                self._journal_size = len(loaded.header)
            else:
                self._open_journal(truncate_to=loaded.journal_size)  # drops a torn last record
        except OSError as exc:
            raise HistoryError(f"cannot write the history file {str(files.snapshot)!r}: {exc}") from exc
        self._thread = threading.Thread(target=self._run, name=f"ai_widgets history {files.snapshot.name}", daemon=True)
        self._thread.start()
        _WRITERS.add(self)

    # --- the callers' side ----------------------------------------------------------------------------------------

    def submit(self, job: tuple[str, int, str] | tuple[str]) -> None:
        self._queue.put(job)

    def flush(self) -> concurrent.futures.Future[BaseException | None]:
        future: concurrent.futures.Future[BaseException | None] = concurrent.futures.Future()
        if self._stopped:
            future.set_result(None)
        else:
            self._queue.put(("flush", future))
        return future

    def stop(self, *, compact: bool, timeout: float | None) -> _Lock:
        """Writes what is pending (and compacts, if asked), ends the thread, and returns the lock, still held."""
        if not self._stopped:
            done: concurrent.futures.Future[BaseException | None] = concurrent.futures.Future()
            self._queue.put(("stop", done, compact))
            with contextlib.suppress(concurrent.futures.TimeoutError):
                done.result(timeout)
            self._thread.join(timeout)
        _WRITERS.discard(self)
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
                    case ("put", int(index), str(text)):
                        if index < len(self._texts):
                            self._texts[index] = text
                        else:
                            self._texts.append(text)
                        records.append(_put_record(index, text))
                    case ("clear",):
                        self._texts.clear()
                        records.append(_CLEAR_RECORD)
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
                _settle(waiter, failure)
            if stop is not None:
                self._stopped = True
                self._close_journal()
                _settle(stop[0], self._failure)
                return
            if self._failure is None and self._journal_size > max(COMPACT_MIN_BYTES, self._snapshot_size):
                try:
                    self._compact()
                except Exception as exc:
                    logger.exception("ai_widgets: the history writer failed")
                    self._fail(exc)

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
        snapshot = _snapshot_bytes(self._texts)
        header = _header(snapshot)
        try:
            if not self._files.folder.is_dir():
                raise FileNotFoundError(f"the folder {str(self._files.folder)!r} no longer exists")
            _write_atomically(self._files, self._files.snapshot, snapshot)
            self._close_journal()  # Windows renames nothing over an open file
            _write_atomically(self._files, self._files.journal, header)
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


def _position(messages: list[Message], message: Message) -> int | None:
    for index in range(len(messages) - 1, -1, -1):  # a changed message is nearly always one of the last
        if messages[index] is message:
            return index
    return None


def _close_interrupted(message: Message) -> bool:
    """A message saved mid-turn: its open calls never ran (the kernel stopped), and the turn is over. Whether it
    was such a message."""
    if message.role is not Role.ASSISTANT:
        return False
    changed = False
    for part in message.tool_calls:
        if not part.state.terminal:
            state = ToolCallState.FAILED if part.state is ToolCallState.RUNNING else ToolCallState.SKIPPED
            message_text = (
                "Interrupted: the kernel stopped while it ran." if state is ToolCallState.FAILED else _KERNEL_STOPPED
            )
            part.move(state, ToolOutcome.failure(message_text, retryable=True))
            changed = True
    if message.status is MessageStatus.IN_PROGRESS:
        message.status = MessageStatus.CANCELLED
        message.error = "The kernel stopped before this turn finished."
        changed = True
    return changed


# The history files this process writes, by resolved path (a newer session for a path takes the file over), and
# the writers to flush when the interpreter exits (their threads are daemons: they would die with work pending).
_REGISTRY_LOCK = threading.RLock()
_OPEN: dict[str, HistoryFile] = {}
_WRITERS: weakref.WeakSet[_Writer] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for writer in list(_WRITERS):
        with contextlib.suppress(Exception):
            writer.flush().result(10)


def _settle(waiter: concurrent.futures.Future[BaseException | None], failure: BaseException | None) -> None:
    """Answers one waiter; one that gave up waiting (a stopped turn cancels the wait for its save) needs nothing,
    and must not end the writer thread, which every later save waits for."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        waiter.set_result(failure)
