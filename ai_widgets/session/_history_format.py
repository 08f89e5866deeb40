"""The history file on disk: its three files (snapshot, journal, lock) and where they sit, the snapshot and journal
records byte for byte, writing a file atomically, and reading a conversation back (the journal replayed over its
snapshot, a torn last record dropped, corruption and newer formats refused).

The snapshot (``chat.json``) is the format of :func:`ai_widgets.messages.dump_messages`, so any file that function
wrote loads. It is only ever replaced whole and atomically (a temporary file in the same folder, fsynced, renamed
over it), so a crash mid-write leaves the old one readable. The journal (``chat.json.journal``) holds one record
per line (``crc32 json``): one message put at its position, the conversation cleared, or (version 2) cut to a
length and its earlier branches (:mod:`ai_widgets.session._branches`) replaced whole, as an edit, a regenerate or a
branch switch does. The snapshot keeps those branches under ``"branches"``, which a reader of the plain conversation
format leaves aside. Its first record names
the snapshot it follows (its size and crc32), so a journal left behind by a compaction that crashed before
resetting it is recognised as already folded in.

One checkpoint is one record (version 3): a checkpoint of several changes (a cut, the branches, the messages put)
is a ``checkpoint`` record holding them in order. A record is whole or torn, so a crash mid-append loses at most
the checkpoint being written, never part of one: a cut replayed without its branches would lose the messages it
replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_widgets.messages import FORMAT_VERSION, Message, load_messages
from ai_widgets.session._branches import ConversationBranches, conversation_json_with

__all__ = [
    "CLEAR_RECORD",
    "JOURNAL_VERSION",
    "Files",
    "HistoryError",
    "Loaded",
    "branches_change",
    "checkpoint_record",
    "journal_header",
    "message_text",
    "put_change",
    "read",
    "remove_strays",
    "resolve",
    "snapshot_bytes",
    "truncate_change",
    "write_atomically",
]

JOURNAL_FORMAT = "ai_widgets.history-journal"
JOURNAL_VERSION = 3
READABLE_JOURNAL_VERSIONS = (1, 2, 3)


class HistoryError(ValueError):
    """A history file cannot be used: missing folder, corrupt, from a newer ai_widgets, unreadable. A file that
    exists is left as it is."""


# --- files ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Files:
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


def resolve(path: str | os.PathLike[str]) -> Path:
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


def remove_strays(files: Files) -> None:
    """Removes the temporary files a crash mid-write left (only ours: the lock is held, so no one writes them)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(files.folder):
            if entry.name.startswith(files.temporary_prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def write_atomically(files: Files, target: Path, data: bytes) -> None:
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
    sync_folder(files.folder)


def sync_folder(folder: Path) -> None:
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


def message_text(message: Message) -> str:
    # The same text dump_messages gives each message, so a snapshot built from these texts is byte for byte its own.
    return json.dumps(message.to_dict(), ensure_ascii=True, allow_nan=False)


def snapshot_bytes(texts: Iterable[str], branches: str | None = None) -> bytes:
    head = json.dumps({"format": "ai_widgets.conversation", "version": FORMAT_VERSION})[:-1]
    text = f'{head}, "messages": [{", ".join(texts)}]}}'
    return (text if branches is None else conversation_json_with(text, branches)).encode("ascii")


def record(body: bytes) -> bytes:
    return b"%08x %s\n" % (zlib.crc32(body), body)


def journal_header(snapshot: bytes) -> bytes:
    stamp = {"size": len(snapshot), "crc32": zlib.crc32(snapshot)}
    body = json.dumps({"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "snapshot": stamp})
    return record(body.encode("ascii"))


def put_change(index: int, text: str) -> bytes:
    return f'{{"op": "put", "index": {index}, "message": {text}}}'.encode("ascii")


CLEAR_RECORD = record(b'{"op": "clear"}')


def truncate_change(length: int) -> bytes:
    return f'{{"op": "truncate", "length": {length}}}'.encode("ascii")


def branches_change(branches: str | None) -> bytes:
    return f'{{"op": "branches", "branches": {branches or "{}"}}}'.encode("ascii")


def checkpoint_record(changes: list[bytes]) -> bytes:
    """One checkpoint's changes (made by the ``_*_change`` functions) as one record: a single change alone, more
    inside a ``checkpoint`` record, so replay applies all of them or none."""
    if len(changes) == 1:
        return record(changes[0])
    return record(b'{"op": "checkpoint", "changes": [%s]}' % b", ".join(changes))


@dataclass
class Loaded:
    messages: list[Message]
    texts: list[str]
    snapshot_size: int
    header: bytes  # the journal's first record for this snapshot
    journal_size: int  # the good part of the journal (a torn tail excluded); 0: it must be written anew
    journal_problem: str | None = None  # a journal that was left out (stale), told in the log
    journal_version: int = JOURNAL_VERSION  # the version of the journal replayed (an older one is folded in)
    branches: ConversationBranches = field(default_factory=ConversationBranches)
    branches_text: str | None = None  # their JSON text as the file holds it; None: there are none


def read(files: Files) -> Loaded:
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
    try:
        journal = files.journal.read_bytes()
    except FileNotFoundError:
        journal = b""
    except OSError as exc:
        raise HistoryError(f"cannot read the history journal {str(files.journal)!r}: {exc}") from exc
    return load(files, snapshot, journal)


def load(files: Files, snapshot: bytes | None, journal: bytes) -> Loaded:
    """The conversation the files' contents hold (``snapshot`` ``None``: there is none); ``files`` names them in
    errors.

    Raises:
        HistoryError: Either is corrupt, or is from a newer format.
    """
    messages: list[Message] = []
    branches_data: Any = None
    branches: ConversationBranches | None = None
    if snapshot is not None:
        try:
            messages = load_messages(snapshot)
            branches_data = json.loads(snapshot).get("branches")
            branches = None if branches_data is None else ConversationBranches.from_dict(branches_data, messages)
        except (ValueError, RecursionError) as exc:
            raise HistoryError(
                f"the history file {str(files.snapshot)!r} is not a conversation this version can read ({exc}); "
                "it was left untouched. Move it away, or pass another history= path."
            ) from None
    texts = [message_text(m) for m in messages]
    loaded = Loaded(messages, texts, 0 if snapshot is None else len(snapshot), journal_header(snapshot or b""), 0)
    if branches_data is not None and branches is not None:
        loaded.branches = branches
        loaded.branches_text = json.dumps(branches_data, ensure_ascii=True, allow_nan=False) if branches else None
    if snapshot is not None and journal:
        replay(files, snapshot, journal, loaded)
    return loaded


def replay(files: Files, snapshot: bytes, journal: bytes, loaded: Loaded) -> None:
    lines = journal.split(b"\n")
    complete = len(lines) - 1  # the piece after the last newline is a torn record, or empty
    offset = 0
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines):
        record = parse_record(line) if number < complete else None
        if record is None:
            later = any(parse_record(rest) is not None for rest in lines[number + 1 : complete])
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
    if header.get("format") != JOURNAL_FORMAT:
        raise HistoryError(
            f"the history journal {str(files.journal)!r} is not an ai_widgets journal; it was left untouched. Move "
            "it away, or pass another history= path."
        )
    version = header.get("version")
    if version not in READABLE_JOURNAL_VERSIONS:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > JOURNAL_VERSION
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
    branches: Any = {} if loaded.branches_text is None else json.loads(loaded.branches_text)
    replay = Replay(list(loaded.messages), list(loaded.texts), branches)
    for number, (_, record) in enumerate(records[1:], start=2):
        try:
            if record.get("op") == "checkpoint":
                changes = record.get("changes")
                if not isinstance(changes, list) or not all(isinstance(change, dict) for change in changes):
                    raise ValueError("a checkpoint's changes must be a list of objects")
                for change in changes:
                    if change.get("op") in ("checkpoint", "clear"):
                        raise ValueError(f"a checkpoint cannot hold the operation {change.get('op')!r}")
                    replay.apply(change)
            else:
                replay.apply(record)
        except (ValueError, RecursionError) as exc:
            raise HistoryError(
                f"the history journal {str(files.journal)!r} is corrupt (record {number}: {exc}); it was left "
                "untouched. Move it (and its snapshot) away, or pass another history= path."
            ) from None
    messages, texts, branches_data = replay.messages, replay.texts, replay.branches
    try:
        loaded.branches = ConversationBranches.from_dict(branches_data, messages)
    except (ValueError, RecursionError) as exc:
        raise HistoryError(
            f"the history journal {str(files.journal)!r} is corrupt (its branches: {exc}); it was left untouched. "
            "Move it (and its snapshot) away, or pass another history= path."
        ) from None
    loaded.branches_text = json.dumps(branches_data, ensure_ascii=True, allow_nan=False) if loaded.branches else None
    loaded.messages, loaded.texts = messages, texts
    loaded.journal_size = records[-1][0]
    loaded.journal_version = version


@dataclass
class Replay:
    """The conversation as the journal's records, applied one by one, leave it."""

    messages: list[Message]
    texts: list[str]
    branches: Any  # the earlier branches' JSON data

    def apply(self, record: dict[str, Any]) -> None:
        """Applies one change.

        Raises:
            ValueError: The record is not a change this version knows, or does not fit the conversation.
        """
        messages, texts = self.messages, self.texts
        match record.get("op"):
            case "clear":
                messages.clear()
                texts.clear()
                self.branches = {}
            case "truncate":
                length = record.get("length")
                if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= len(messages):
                    raise ValueError(f"length {length!r} is outside the conversation of {len(messages)}")
                del messages[length:], texts[length:]
            case "branches":
                self.branches = record.get("branches")
                if not isinstance(self.branches, dict):
                    raise ValueError("the branches must be an object")
            case "put":
                index, data = record.get("index"), record.get("message")
                if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= len(messages):
                    raise ValueError(f"position {index!r} is outside the conversation of {len(messages)}")
                message = Message.from_dict(data)  # type: ignore[arg-type]
                text = message_text(message)
                if index == len(messages):
                    messages.append(message)
                    texts.append(text)
                else:
                    messages[index], texts[index] = message, text
            case other:
                raise ValueError(f"unknown operation {other!r}")


def parse_record(line: bytes) -> dict[str, Any] | None:
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
