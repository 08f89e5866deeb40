"""The lock on a history file across processes: ``fcntl.flock`` (``msvcrt.locking`` on Windows) on the lock file,
held for as long as a session writes the file and released by the OS when the process dies. The lock file holds the
holder's pid, host and start time, so a second process is refused with an error that names them. The file itself
stays (removing it would race a new holder)."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
import sys

from ai_widgets.session._history_format import Files, HistoryError

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = ["HistoryLockedError", "Lock"]

WINDOWS_LOCK_OFFSET = 1 << 30  # past the holder text, so another process can still read who holds it


class HistoryLockedError(HistoryError):
    """Another process (another notebook's kernel) writes this history file; the error names it."""


class Lock:
    """The lock on a history file, held through an open file the OS unlocks when the process ends."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, files: Files) -> Lock:
        try:
            fd = os.open(files.lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryError(
                f"cannot create the lock file of the history file {str(files.snapshot)!r}: {exc}"
            ) from exc
        try:
            try_lock(fd)
        except OSError:
            named = holder_text(fd)
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
                unlock(fd)
            with contextlib.suppress(OSError):
                os.close(fd)


def try_lock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def unlock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


def holder_text(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        holder = json.loads(os.read(fd, 4096).decode("utf-8"))
        return f"pid {holder['pid']} on {holder['host']}, since {holder['started_at']}" + (
            f", running {holder['program']!r}" if holder.get("program") else ""
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said who it is yet"
