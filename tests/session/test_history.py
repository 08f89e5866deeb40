"""Conversations that survive kernel restarts: ChatSession(history=path), and ChatWidget.export.

Real files throughout; the lock across processes and the crashes mid-write use real subprocesses.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import weakref
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_widgets import ChatSession, ChatWidget, Message, MessageStatus, TextPart, ToolCallState, ToolRisk, tool
from ai_widgets.changes import SessionChange, SessionNotice
from ai_widgets.messages import Role, dump_messages, load_messages
from ai_widgets.session import HistoryError, HistoryLockedError, HistoryTakenOverError, read_history
from ai_widgets.session import _history as history_module
from ai_widgets.session._branches import conversation_with_branches
from ai_widgets.session._history import HistoryFile
from ai_widgets.session._history_format import Files, load
from ai_widgets.transports import EchoTransport, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes a file."""
    return f"wiped {path}"


def _python(code: str, **kwargs: Any) -> subprocess.Popen[str]:
    """Starts a real Python process running ``code`` with this tree first on its path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _wait_line(process: subprocess.Popen[str], expected: str, timeout: float = 30) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.strip() == expected:
            return
        if not line and process.poll() is not None:
            break
    _, err = process.communicate(timeout=5)
    raise AssertionError(f"the process never printed {expected!r}: {err}")


# --- the conversation comes back --------------------------------------------------------------------------------


async def test_a_conversation_comes_back_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    first = ChatSession(ScriptedTransport(["Hello!", "Still here."]), history=path)
    await first.send("hi")
    await first.send("again?")
    assert json.loads(path.read_text("utf-8"))["format"] == "ai_widgets.conversation"
    assert _texts(read_history(path)) == ["hi", "Hello!", "again?", "Still here."]
    second = ChatSession(ScriptedTransport(["Welcome back."]), history=path)
    assert _texts(second.messages) == ["hi", "Hello!", "again?", "Still here."]
    transport = second.transport
    await second.send("remember me?")
    sent = [m.text for m in transport.requests[0].messages[:5]]  # type: ignore[attr-defined]
    assert sent == ["hi", "Hello!", "again?", "Still here.", "remember me?"]
    second.close()
    assert len(ChatSession(ScriptedTransport([]), history=path).messages) == 6


async def test_a_file_dump_messages_wrote_loads_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    earlier = [Message.user("hi"), Message(Role.ASSISTANT, [TextPart("hello back")])]
    path.write_text(dump_messages(earlier), encoding="utf-8")
    session = ChatSession(ScriptedTransport(["more"]), history=path)
    assert _texts(session.messages) == ["hi", "hello back"]
    await session.send("go on")
    session.close()
    # After close, the one JSON file holds it all again, in dump_messages' own format.
    assert path.read_text("utf-8") == dump_messages(read_history(path))
    assert _texts(load_messages(path.read_text("utf-8"))) == ["hi", "hello back", "go on", "more"]


async def test_aclose_folds_and_releases_the_file_as_close_does(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one"]), history=path)
    await session.send("first")
    await session.aclose()
    # The one JSON file holds it all again, in dump_messages' own format (the journal folded in).
    assert path.read_text("utf-8") == dump_messages(read_history(path))
    assert _texts(load_messages(path.read_text("utf-8"))) == ["first", "one"]
    with pytest.raises(HistoryTakenOverError, match="closed"):
        await session.send("more")
    await session.aclose()  # again: nothing to do
    await ChatSession(ScriptedTransport([])).aclose()  # without a file: nothing to do


async def test_a_call_waiting_when_the_kernel_died_comes_back_answered(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    model = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])])
    first = ChatSession(model, tools=[wipe], history=path)
    task = asyncio.create_task(first.send("wipe x"))
    await wait_for(lambda: bool(first.pending_approvals))
    # The files hold the call as it waits: what a kernel that dies now leaves behind.
    first.flush_history()
    saved = {name: (tmp_path / name).read_bytes() for name in ("chat.json", "chat.json.journal")}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    first.close()
    for name, data in saved.items():
        (tmp_path / name).write_bytes(data)

    transport = ScriptedTransport(["Nothing was wiped."])
    second = ChatSession(transport, tools=[wipe], history=path)
    reply = second.messages[-1]
    assert reply.status is MessageStatus.CANCELLED
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.SKIPPED
    assert call.outcome is not None
    assert "kernel stopped" in (call.outcome.message or "")
    await second.send("so?")
    for message in transport.requests[0].messages:  # every call the provider sees has a result
        for part in message.tool_calls:
            assert part.state.terminal
            assert part.outcome is not None
    second.flush_history()
    assert [p.state for m in read_history(path) for p in m.tool_calls] == [ToolCallState.SKIPPED]  # saved closed


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not a conversation"),
        ('{"format": "ai_widgets.conversation", "version": 99, "messages": []}', "newer"),
        ('{"format": "ai_widgets.conversation", "version": 2, "messages": [{"role": "user"}]}', "not a conversation"),
    ],
)
def test_a_corrupt_or_newer_file_is_a_clear_error_and_left_untouched(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HistoryError, match=problem) as caught:
        ChatSession(ScriptedTransport([]), history=path)
    assert str(path) in str(caught.value)
    assert path.read_text("utf-8") == content
    assert [name for name in _names(tmp_path) if name != "chat.json.lock"] == ["chat.json"]
    with pytest.raises(HistoryError, match=problem):  # and the lock was let go: the same error, not "in use"
        ChatSession(ScriptedTransport([]), history=path)


async def test_a_corrupt_or_newer_journal_is_a_clear_error_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two"]), history=path)
    await session.send("first")
    await session.send("second")
    session.close()
    session = ChatSession(ScriptedTransport(["three"]), history=path)
    await session.send("third")
    _crash(session._history)  # type: ignore[arg-type]
    journal = tmp_path / "chat.json.journal"
    lines = journal.read_bytes().split(b"\n")
    assert len(lines) >= 4  # the header, three records, and the empty piece after the last newline
    damaged = lines.copy()
    damaged[1] = damaged[1][:20] + b"X" + damaged[1][21:]  # a record in the middle: not a torn tail
    newer = lines.copy()
    header = json.loads(lines[0][9:])
    header["version"] = 7
    body = json.dumps(header).encode()
    newer[0] = b"%08x %s" % (zlib.crc32(body), body)

    def ending_with(body: dict[str, Any]) -> list[bytes]:  # a whole record last, not a torn one
        record = json.dumps(body).encode()
        return [*lines[:-1], b"%08x %s" % (zlib.crc32(record), record), b""]

    def checkpoint(*changes: dict[str, Any]) -> list[bytes]:
        return ending_with({"op": "checkpoint", "changes": list(changes)})

    cases = (
        (damaged, "corrupt"),
        (newer, "newer ai_widgets"),
        (checkpoint({"op": "truncate", "length": 1}, {"op": "truncate", "length": 9}), "corrupt .*length 9"),
        (checkpoint({"op": "checkpoint", "changes": []}), "corrupt .*cannot hold"),
        (checkpoint({"op": "clear"}), "corrupt .*cannot hold"),
        (ending_with({"op": "checkpoint", "changes": {}}), "corrupt .*list of objects"),
    )
    for content, problem in cases:
        journal.write_bytes(b"\n".join(content))
        before = journal.read_bytes(), path.read_bytes()
        with pytest.raises(HistoryError, match=problem) as caught:
            ChatSession(ScriptedTransport([]), history=path)
        assert str(journal) in str(caught.value)
        assert (journal.read_bytes(), path.read_bytes()) == before


def test_history_and_messages_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        ChatSession(ScriptedTransport([]), history=tmp_path / "c.json", messages=[])
    with pytest.raises(HistoryError, match="folder"):
        ChatSession(ScriptedTransport([]), history=tmp_path)


def test_a_file_in_a_folder_that_does_not_exist_is_refused_at_once(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "chat.json"
    with pytest.raises(HistoryError, match="does not exist") as caught:
        ChatSession(ScriptedTransport(["hi"]), history=missing)
    assert str(missing) in str(caught.value)
    assert str(missing.parent) in str(caught.value)
    assert _names(tmp_path) == []


# --- one writer per file ------------------------------------------------------------------------------------------


async def test_running_the_cell_again_takes_the_file_over_and_the_old_session_refuses(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    old = ChatSession(ScriptedTransport(["one", "never"]), history=path)
    told: list[SessionChange] = []
    old.subscribe(told.append)
    await old.send("first")

    new = ChatSession(ScriptedTransport(["two"]), history=path)  # the same cell, run again
    assert _texts(new.messages) == ["first", "one"]
    (notice,) = [c for c in told if isinstance(c, SessionNotice)]
    assert str(path) in notice.text
    assert "took it over" in notice.text
    with pytest.raises(HistoryTakenOverError, match="took it over"):
        await old.send("lost?")
    with pytest.raises(HistoryTakenOverError):
        old.clear()
    assert _texts(old.messages) == ["first", "one"]  # refused before anything changed

    await new.send("second")
    new.close()
    assert _texts(read_history(path)) == ["first", "one", "second", "two"]  # nothing lost, no one overwritten


async def test_an_open_file_does_not_keep_its_session_alive(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one"]), history=path)
    await session.send("first")
    gone = weakref.ref(session)
    del session
    gc.collect()
    assert gone() is None
    again = ChatSession(ScriptedTransport([]), history=path)  # takes the file over from the one left open
    assert _texts(again.messages) == ["first", "one"]


async def test_a_newer_session_that_cannot_read_the_file_leaves_the_older_one_writing(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    old = ChatSession(ScriptedTransport(["one", "two"]), history=path)
    await old.send("first")
    good = path.read_bytes()
    path.write_text("{not json", encoding="utf-8")  # someone wrote over it by hand
    with pytest.raises(HistoryError, match="not a conversation"):
        ChatSession(ScriptedTransport([]), history=path)
    path.write_bytes(good)
    assert (await old.send("second")).status is MessageStatus.COMPLETED  # still the file's one writer
    old.close()
    assert _texts(read_history(path)) == ["first", "one", "second", "two"]


async def test_a_session_taken_over_mid_turn_stops_writing_and_its_reply_says_so(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    model = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})]), "Not wiped."]
    )
    old = ChatSession(model, tools=[wipe], history=path)
    task = asyncio.create_task(old.send("wipe x"))
    await wait_for(lambda: bool(old.pending_approvals))
    new = ChatSession(ScriptedTransport(["fine"]), tools=[wipe], history=path)
    (call,) = new.messages[-1].tool_calls  # what the old one had written: the call waiting, answered "not run"
    assert call.state is ToolCallState.SKIPPED
    old.approve(call.tool_call_id, "rejected")
    reply = await task
    assert reply.status is MessageStatus.ERROR
    assert "not saved" in (reply.error or "")
    assert "took it over" in (reply.error or "")
    new.flush_history()
    assert read_history(path)[-1].tool_calls[0].state is ToolCallState.AWAITING_APPROVAL  # the old one wrote no more


def test_a_second_process_is_refused_naming_the_file_and_the_holder_until_it_dies(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    holder = _python(
        f"""
        import time
        from ai_widgets import ChatSession
        from ai_widgets.transports import ScriptedTransport
        session = ChatSession(ScriptedTransport([]), history={str(path)!r})
        print("ready", flush=True)
        time.sleep(600)
        """
    )
    try:
        _wait_line(holder, "ready")
        with pytest.raises(HistoryLockedError) as caught:
            ChatSession(ScriptedTransport([]), history=path)
        text = str(caught.value)
        assert str(path) in text
        assert f"pid {holder.pid}" in text
        assert "another process" in text
    finally:
        holder.kill()  # the process dies holding the lock: the OS lets it go
        holder.wait(10)
    session = ChatSession(ScriptedTransport(["mine now"]), history=path)
    assert session.messages == []
    session.close()


# --- where the files are ------------------------------------------------------------------------------------------


async def test_a_symlinked_file_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "store"
    elsewhere.mkdir()
    target = elsewhere / "real.json"
    link = tmp_path / "chat.json"
    link.symlink_to(target)  # dangling until the first write
    session = ChatSession(ScriptedTransport(["one", "two"]), history=link)
    await session.send("first")
    await session.send("second")
    session.close()
    assert link.is_symlink()
    assert link.resolve() == target
    assert _names(tmp_path) == ["chat.json", "store"]  # everything is written beside the target
    assert _names(elsewhere) == ["real.json", "real.json.journal", "real.json.lock"]
    assert _texts(load_messages(target.read_text("utf-8"))) == ["first", "one", "second", "two"]
    # The link and its target are one file: a session through either takes it over from the other.
    through_link = ChatSession(ScriptedTransport([]), history=link)
    direct = ChatSession(ScriptedTransport([]), history=target)
    assert _texts(direct.messages) == ["first", "one", "second", "two"]
    assert not through_link._history.writable  # type: ignore[union-attr]
    direct.close()


# --- failures -----------------------------------------------------------------------------------------------------


async def test_a_write_that_fails_shows_on_the_reply_and_the_next_write_repairs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two", "three"]), history=path)
    assert (await session.send("first")).status is MessageStatus.COMPLETED
    real_write = os.write
    journal = (tmp_path / "chat.json.journal").stat().st_ino

    def disk_full(fd: int, data: Any) -> int:
        if os.fstat(fd).st_ino == journal:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    def no_room(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("ai_widgets.session._history_writer.os.write", disk_full)
    monkeypatch.setattr("ai_widgets.session._history_format.tempfile.mkstemp", no_room)  # no new snapshot either
    reply = await session.send("second")
    assert reply.status is MessageStatus.ERROR
    assert "not saved" in (reply.error or "")
    assert str(path) in (reply.error or "")
    assert "No space left" in (reply.error or "")
    with pytest.raises(HistoryError, match="No space left"):
        session.flush_history()
    monkeypatch.undo()
    assert (await session.send("third")).status is MessageStatus.COMPLETED  # the files are rebuilt whole
    session.close()
    assert _texts(read_history(path)) == ["first", "one", "second", "two", "third", "three"]


async def test_a_bug_in_the_writer_ends_the_turn_saying_so_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two"]), history=path)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("a bug")

    # The bug is in appending to the journal and in writing the files whole, so the writer's repair (a whole write
    # when an append failed) cannot save the turn before it ends, however the writer's batches fall.
    monkeypatch.setattr("ai_widgets.session._history_writer.os.fstat", broken)
    monkeypatch.setattr("ai_widgets.session._history_format.tempfile.mkstemp", broken)
    reply = await asyncio.wait_for(session.send("first"), 10)
    assert reply.status is MessageStatus.ERROR
    assert "ValueError: a bug" in (reply.error or "")
    monkeypatch.undo()
    assert (await session.send("second")).status is MessageStatus.COMPLETED
    session.close()
    assert _texts(read_history(path)) == ["first", "one", "second", "two"]


async def test_a_deleted_folder_shows_on_the_reply(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    path = folder / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two", "three"]), history=path)
    await session.send("first")
    shutil.rmtree(folder)  # the open journal would take writes into a deleted file, silently
    reply = await session.send("second")
    assert reply.status is MessageStatus.ERROR
    assert "not saved" in (reply.error or "")
    assert str(path) in (reply.error or "")
    folder.mkdir()
    assert (await session.send("third")).status is MessageStatus.COMPLETED
    session.close()
    assert _texts(read_history(path)) == ["first", "one", "second", "two", "third", "three"]


def test_a_crash_mid_compaction_leaves_the_old_file_and_no_stray_after_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    crashing = _python(
        f"""
        import asyncio, os, signal
        from ai_widgets import ChatSession
        from ai_widgets.session import _history
        from ai_widgets.transports import ScriptedTransport

        async def main():
            session = ChatSession(ScriptedTransport(["one", "two"]), history={str(path)!r})
            await session.send("first")
            await session.send("second")
            def killed_mid_write(src, dst):  # the temporary file is whole; the process dies before the rename
                os.kill(os.getpid(), signal.SIGKILL)
            _history.os.replace = killed_mid_write
            session.close()

        asyncio.run(main())
        """
    )
    crashing.wait(60)
    assert crashing.returncode == -signal.SIGKILL, crashing.stderr.read() if crashing.stderr else ""
    strays = [n for n in _names(tmp_path) if n.endswith(".tmp")]
    assert len(strays) == 1
    assert _texts(read_history(path)) == ["first", "one", "second", "two"]  # the snapshot and journal, as they were
    session = ChatSession(ScriptedTransport([]), history=path)
    assert _texts(session.messages) == ["first", "one", "second", "two"]
    assert _names(tmp_path) == ["chat.json", "chat.json.journal", "chat.json.lock"]
    session.close()


def test_a_crash_between_the_new_snapshot_and_the_new_journal_loses_and_repeats_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "chat.json"
    crashing = _python(
        f"""
        import asyncio, os, signal
        from ai_widgets import ChatSession
        from ai_widgets.session import _history
        from ai_widgets.transports import ScriptedTransport

        real_replace = os.replace
        async def main():
            session = ChatSession(ScriptedTransport(["one", "two", "three"]), history={str(path)!r})
            await session.send("first")
            await session.send("second")
            await session.regenerate()
            session.flush_history()
            print(session._to_json(), flush=True)
            def killed_after_the_snapshot(src, dst):  # the new snapshot is in place; the old journal still is
                real_replace(src, dst)
                if str(dst).endswith(".journal"):
                    raise AssertionError("the journal was replaced first")
                _history.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
            _history.os.replace = killed_after_the_snapshot
            session.close()

        asyncio.run(main())
        """
    )
    crashing.wait(60)
    assert crashing.stdout is not None
    written = crashing.stdout.readline().strip()
    assert crashing.returncode == -signal.SIGKILL, crashing.stderr.read() if crashing.stderr else ""
    assert json.loads(path.read_bytes()) == json.loads(written)  # the snapshot holds everything...
    journal = (tmp_path / "chat.json.journal").read_bytes()
    assert journal.count(b"\n") > 1  # ...and the journal it folded in is still there, whole
    with caplog.at_level(logging.WARNING, logger="ai_widgets"):
        session = ChatSession(ScriptedTransport(["four"]), history=path)
    assert session._to_json() == written
    assert "belongs to an earlier version" in caplog.text  # recognised as folded in, not replayed over it again
    assert _names(tmp_path) == ["chat.json", "chat.json.journal", "chat.json.lock"]
    assert asyncio.run(session.send("third")).text == "four"
    session.flush_history()
    expected = session._to_json()
    _crash(session._history)  # type: ignore[arg-type]
    again = ChatSession(None, history=path)
    assert again._to_json() == expected  # what was journaled after the crash follows the new snapshot
    assert [m.text for m in again.messages] == ["first", "one", "second", "three", "third", "four"]
    assert [m.text for m in again._stored_messages()] == ["two"]
    again.close()


def test_a_crash_mid_append_loses_only_the_torn_record(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    crashing = _python(
        f"""
        import asyncio, os, signal
        from ai_widgets import ChatSession
        from ai_widgets.session import _history
        from ai_widgets.transports import ScriptedTransport

        real_write = os.write
        async def main():
            session = ChatSession(ScriptedTransport(["one", "two"]), history={str(path)!r})
            await session.send("first")
            def torn(fd, data):  # half the record reaches the file, then the process dies
                real_write(fd, bytes(data)[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            _history.os.write = torn
            await session.send("second")

        asyncio.run(main())
        """
    )
    crashing.wait(60)
    assert crashing.returncode == -signal.SIGKILL, crashing.stderr.read() if crashing.stderr else ""
    # The half that reached the file may hold whole records (the second question, the reply as it started).
    survived = _texts(read_history(path))
    assert survived in (["first", "one"], ["first", "one", "second"], ["first", "one", "second", ""])
    session = ChatSession(ScriptedTransport(["three"]), history=path)
    assert _texts(session.messages) == survived
    asyncio.run(session.send("third"))
    session.flush_history()
    assert _texts(read_history(path)) == [*survived, "third", "three"]  # written after the torn tail was cut
    session.close()


# --- cost -----------------------------------------------------------------------------------------------------------


async def test_a_checkpoint_writes_what_changed_not_the_conversation(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    journal = tmp_path / "chat.json.journal"
    reply = "x" * 500
    session = ChatSession(ScriptedTransport([reply] * 300), history=path)
    grown: list[int] = []

    def files() -> tuple[int, int, int]:
        session.flush_history()
        return path.stat().st_ino, journal.stat().st_ino, journal.stat().st_size

    for turn in range(300):
        snapshot, journal_inode, size = files()
        await session.send(f"question {turn:04d}")
        after = files()
        if after[:2] == (snapshot, journal_inode):  # not a turn during which the journal was folded in
            grown.append(after[2] - size)
    assert len(grown) >= 250  # compactions are rare
    assert max(grown) - min(grown) < 50  # the same bytes per turn at turn 10 as at turn 300
    turn_size = len(dump_messages(session.messages[-2:]))
    assert max(grown) < 1.6 * turn_size  # the turn's two messages, and the reply once more as it started
    session.close()
    assert len(read_history(path)) == 600


async def test_a_slow_disk_does_not_stall_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(0.3)
        real_fsync(fd)

    session = ChatSession(ScriptedTransport(["one " * 50]), history=tmp_path / "chat.json")
    monkeypatch.setattr("ai_widgets.session._history_writer.os.fsync", slow_fsync)
    gaps: list[float] = []
    done = False

    async def tick() -> None:
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    started = time.perf_counter()
    reply = await session.send("hi")
    elapsed = time.perf_counter() - started
    done = True
    await ticker
    assert reply.status is MessageStatus.COMPLETED
    assert elapsed >= 0.3  # the reply waited for its own write...
    assert max(gaps) < 0.2  # ...but the loop never did
    monkeypatch.undo()
    session.close()


async def test_a_stop_while_the_reply_is_being_saved_ends_the_turn_and_the_writer_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the stop cancelled the save's waiter, the writer thread died setting its result, and every later
    send() waited for ever for a save nobody would write."""
    real_fsync = os.fsync
    slow = True

    def slow_fsync(fd: int) -> None:
        if slow:
            time.sleep(0.5)
        real_fsync(fd)

    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two"]), history=path)
    monkeypatch.setattr("ai_widgets.session._history_writer.os.fsync", slow_fsync)
    turn = asyncio.create_task(session.send("first"))
    await wait_for(lambda: session.busy and session.messages[-1].status is MessageStatus.COMPLETED)
    assert session.stop()  # the reply has ended; its save is under way
    reply = await asyncio.wait_for(turn, 0.4)  # the turn ends without waiting for the disk
    assert reply.status is MessageStatus.COMPLETED  # a finished reply stays as it finished
    slow = False
    second = await asyncio.wait_for(session.send("second"), 10)
    assert second.status is MessageStatus.COMPLETED
    session.close()
    assert [m.text for m in read_history(path)] == ["first", "one", "second", "two"]


# --- clear, and crashes at any byte ---------------------------------------------------------------------------------


async def test_clear_empties_the_file_and_the_conversation_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two"]), history=path)
    await session.send("first")
    session.clear()
    session.flush_history()
    assert json.loads(path.read_text("utf-8"))["messages"] == []
    assert read_history(path) == []
    await session.send("second")
    session.close()
    assert _texts(read_history(path)) == ["second", "two"]
    assert _names(tmp_path) == ["chat.json", "chat.json.journal", "chat.json.lock"]


_OPERATION = st.one_of(
    st.tuples(st.just("turn"), st.text(alphabet="abc ", min_size=1, max_size=300)),
    st.tuples(st.just("update"), st.text(alphabet="xyz", min_size=0, max_size=300)),
    st.just(("clear", "")),
    st.just(("crash", "")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(_OPERATION, min_size=1, max_size=25), cut=st.floats(0, 1))
def test_a_crash_at_any_byte_loads_a_state_that_was_written(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, str]], cut: float
) -> None:
    folder = tmp_path_factory.mktemp("history")
    path = folder / "chat.json"
    journal = folder / "chat.json.journal"
    messages: list[Message] = []
    history = HistoryFile(path)
    states = [[m.to_dict() for m in history.messages]]  # every state the files passed through, in order

    def reopen() -> None:
        nonlocal history, messages
        _crash(history)
        size = journal.stat().st_size
        with journal.open("r+b") as file:  # the last append torn at a random byte
            file.truncate(int(size * cut))
        history = HistoryFile(path)
        loaded = [m.to_dict() for m in history.messages]
        assert loaded in states
        messages = list(history.messages)
        states.append(loaded)

    for kind, text in operations:
        if kind == "turn":
            messages.append(Message.user(text))
            history.changed(messages[-1])
        elif kind == "update" and messages:
            messages[-1].parts[0].append(text)  # type: ignore[union-attr]
            history.changed(messages[-1])
        elif kind == "clear":
            messages.clear()
            history.clear()
            states.append([])
            continue
        elif kind == "crash":
            reopen()
            continue
        history.checkpoint(messages)
        states.append([m.to_dict() for m in messages])
    reopen()
    history.close()
    assert [m.to_dict() for m in read_history(path)] == states[-1]


async def test_a_regenerate_torn_mid_append_loses_nothing_saved_before_it(tmp_path: Path) -> None:
    """Before: the regenerate's cut and its branches were two records, so a tear between them replayed the cut
    alone, and the reply it replaced was neither on the path nor in a branch."""
    path = tmp_path / "chat.json"
    journal = tmp_path / "chat.json.journal"
    session = ChatSession(ScriptedTransport(["one", "two", "three"]), history=path)
    await session.send("first")
    await session.send("second")
    session.flush_history()
    before, saved = session._to_json(), journal.stat().st_size
    await session.regenerate()
    session.flush_history()
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(path, copy / "chat.json")
    (copy / "chat.json.journal").write_bytes(journal.read_bytes()[: saved + 60])  # torn in the regenerate's append
    session.close()
    opened = ChatSession(ScriptedTransport(["four"]), history=copy / "chat.json")
    assert opened._to_json() == before
    assert "two" in [m.text for m in (*opened.messages, *opened._stored_messages())]
    await opened.regenerate()  # written after the torn tail was cut
    opened.close()
    again = ChatSession(None, history=copy / "chat.json")
    assert [m.text for m in again.messages] == ["first", "one", "second", "four"]
    assert [m.text for m in again.branches(again.messages[3].id).alternatives] == ["two", "four"]
    again.close()


def _as_read(snapshot: bytes, journal: bytes) -> str:
    """The conversation and its branches that a history file of these contents holds (what opening it reads,
    before a session ends what a crash interrupted)."""
    loaded = load(Files(Path("chat.json")), snapshot, journal)
    return conversation_with_branches(loaded.messages, loaded.branches)


def _ids(state: str) -> set[str]:
    """Every message id of a conversation's JSON text: on its path and in its branches."""
    data = json.loads(state)
    ids = {m["id"] for m in data["messages"]}
    for point in data.get("branches", {}).values():
        for alternative in point["alternatives"]:
            ids.update(m["id"] for m in alternative or ())
    return ids


def _recording_checkpoints(session: ChatSession) -> list[str]:
    """The session's state (path and branches) after each checkpoint it hands to its writer, from the empty file
    on: state ``k`` is what the file must hold once its first ``k`` checkpoints are written."""
    writer = session._history._writer  # type: ignore[union-attr]
    states = [session._to_json()]
    checkpoint = writer.checkpoint

    def recorded(changes: list[Any]) -> None:
        checkpoint(changes)
        if changes:
            states.append(session._to_json())

    writer.checkpoint = recorded  # type: ignore[method-assign]
    return states


def _cut_everywhere(
    folder: Path, states: list[str], flushed: list[tuple[int, int]], cuts: Iterable[int] | None = None
) -> tuple[int, int, list[str]]:
    """Reads the history file in ``folder`` with its journal cut at each offset (every one unless ``cuts``); how
    many offsets were read, at how many a message saved before the cut was missing, and what else went wrong.

    ``flushed`` holds, per flush, the journal's size and the number of checkpoints written by then."""
    snapshot = (folder / "chat.json").read_bytes()
    journal = (folder / "chat.json.journal").read_bytes()
    ends = [i + 1 for i, byte in enumerate(journal) if byte == ord("\n")]
    assert len(ends) == len(states), "one journal record per checkpoint, after the header"
    opened = lost = 0
    wrong: list[str] = []
    for cut in range(len(journal) + 1) if cuts is None else cuts:
        state = _as_read(snapshot, journal[:cut])
        opened += 1
        saved = max((written for size, written in flushed if size <= cut), default=0)
        if not _ids(states[saved]) <= _ids(state):
            lost += 1
        whole = sum(1 for end in ends[1:] if end <= cut)  # the checkpoints whose bytes all precede the cut
        if state != states[whole]:
            wrong.append(f"cut at {cut}: not the state after checkpoint {whole}")
    return opened, lost, wrong


async def test_a_journal_cut_at_any_byte_opens_the_newest_whole_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    journal = tmp_path / "chat.json.journal"
    session = ChatSession(ScriptedTransport(["one", "two", "three", "four", "five"]), history=path)
    states = _recording_checkpoints(session)
    flushed: list[tuple[int, int]] = []

    def flush() -> None:
        session.flush_history()
        flushed.append((journal.stat().st_size, len(states) - 1))

    await session.send("first")
    await session.send("second")
    flush()
    await session.edit(session.messages[2].id, "second, edited")
    flush()
    await session.regenerate()
    flush()
    session.switch_branch(session.messages[2].id, 0)
    flush()
    records = journal.read_text("ascii")
    assert all(f'"op": "{op}"' in records for op in ("truncate", "branches", "put"))  # all three kinds of change
    opened, lost, wrong = _cut_everywhere(tmp_path, states, flushed)
    assert (lost, wrong[:3]) == (0, []), f"{lost} of {opened} cuts lost a saved message; {len(wrong)} wrong"
    assert opened > 3000
    session.close()


# One change: ("send",), ("edit", which user message), ("regenerate",), ("switch", which place, which branch).
_CHANGE = st.one_of(
    st.tuples(st.just("send")),
    st.tuples(st.just("edit"), st.integers(0, 5)),
    st.tuples(st.just("regenerate")),
    st.tuples(st.just("switch"), st.integers(0, 12), st.integers(0, 3)),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(_CHANGE, min_size=1, max_size=8), cuts=st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_random_changes_cut_anywhere_lose_nothing_saved(
    tmp_path_factory: pytest.TempPathFactory, plan: list[tuple[Any, ...]], cuts: list[float]
) -> None:
    folder = tmp_path_factory.mktemp("history")
    journal = folder / "chat.json.journal"
    session = ChatSession(EchoTransport(), history=folder / "chat.json")
    states = _recording_checkpoints(session)
    flushed: list[tuple[int, int]] = []

    async def change(number: int, step: tuple[Any, ...]) -> None:
        users = [m for m in session.messages if m.role is Role.USER]
        match step:
            case ("send",):
                await session.send(f"q{number}")
            case ("edit", int(which)) if users:
                await session.edit(users[which % len(users)].id, f"e{number}")
            case ("regenerate",) if users:
                await session.regenerate()
            case ("switch", int(place), int(index)) if session.messages:
                point = session.branches(session.messages[place % len(session.messages)].id)
                session.switch_branch(session.messages[point.position].id, index % point.count)

    for number, step in enumerate(plan):
        asyncio.run(change(number, step))
        session.flush_history()
        flushed.append((journal.stat().st_size, len(states) - 1))
    data = journal.read_bytes()
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    offsets = {round(cut * len(data)) for cut in cuts} | {end + d for end in ends for d in (-1, 0, 1)}
    opened, lost, wrong = _cut_everywhere(folder, states, flushed, sorted(o for o in offsets if o <= len(data)))
    assert (lost, wrong[:3]) == (0, []), f"{lost} of {opened} cuts lost a saved message; {len(wrong)} wrong"
    session.close()


def _crash(history: HistoryFile) -> None:
    """What a process that dies leaves: the files as written so far (no compaction), the lock let go."""
    history.flush()
    history._writer.stop(compact=False, timeout=10).release()
    history_module.OPEN.pop(str(history.path), None)


# --- export -------------------------------------------------------------------------------------------------------


async def test_export_writes_markdown_and_json(tmp_path: Path) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["It is **sunny**."]))
    await chat.session.send("weather?")
    md = chat.export(tmp_path / "chat.md")
    assert "It is **sunny**." in md.read_text("utf-8")
    js = chat.export(tmp_path / "chat.json")
    assert js.read_text("utf-8") == dump_messages(chat.session.messages)
    restored = ChatSession(ScriptedTransport([]), history=js)
    assert [m.text for m in restored.messages] == ["weather?", "It is **sunny**."]
    restored.close()
    with pytest.raises(ValueError, match=r"\.md, \.json or \.ipynb"):
        chat.export(tmp_path / "chat.txt")
    chat.close()


@pytest.fixture(autouse=True)
def _no_history_left_open() -> Iterator[None]:
    """Each test's files are its own: what a test left open does not take over the next one's."""
    yield
    for opened in list(history_module.OPEN.values()):
        opened.close()
