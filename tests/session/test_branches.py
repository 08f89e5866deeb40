"""Edit, regenerate and branches: nothing is deleted, the active path is what the model is sent, and the branches
survive the history file, in a new process too."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from ai_widgets import (
    BranchError,
    BranchPoint,
    ChatSession,
    File,
    Message,
    MessageStatus,
    SessionBusyError,
    SessionOptions,
    ToolCallState,
    ToolRisk,
    tool,
)
from ai_widgets.changes import BranchesChanged, SessionChange
from ai_widgets.messages import Role, TextPart, dump_messages, load_messages
from ai_widgets.session import read_history
from ai_widgets.transports import EchoTransport, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]
ran: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes a file."""
    ran.append(path)
    return f"wiped {path}"


@tool
async def slow(seconds: float) -> str:
    """Sleeps."""
    await asyncio.sleep(seconds)
    ran.append("slow")
    return "slept"


def _texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


def _answers(*texts: str) -> ScriptedTransport:
    return ScriptedTransport(list(texts))


async def test_edit_replaces_a_user_message_and_keeps_the_old_branch() -> None:
    transport = _answers("Paris.", "Rome.", "Berlin.")
    session = ChatSession(transport)
    await session.send("capital of France?")
    await session.send("and Italy?")
    first_question = session.messages[0]
    reply = await session.edit(first_question.id, "capital of Germany?")
    assert reply.text == "Berlin."
    assert _texts(session.messages) == ["capital of Germany?", "Berlin."]
    sent = transport.requests[-1].messages  # the model is sent the active path alone
    assert [m.text for m in sent[:1]] == ["capital of Germany?"]
    point = session.branches(session.messages[0].id)
    assert isinstance(point, BranchPoint)
    assert (point.position, point.active, point.count) == (0, 1, 2)
    assert point.alternatives[0] is first_question
    assert point.alternatives[1] is session.messages[0]
    # The old branch, whole, comes back with a switch, and the new one is kept.
    back = session.switch_branch(session.messages[0].id, 0)
    assert (back.active, back.count) == (0, 2)
    assert _texts(session.messages) == ["capital of France?", "Paris.", "and Italy?", "Rome."]
    session.switch_branch(session.messages[0].id, 1)
    assert _texts(session.messages) == ["capital of Germany?", "Berlin."]


async def test_edit_in_the_middle_keeps_the_attachments_and_forks_there() -> None:
    session = ChatSession(_answers("one", "two", "three"))
    await session.send("a")
    await session.send("b", attach=File(b"col\n1\n", "text/csv", name="data.csv"))
    second = session.messages[2]
    await session.edit(second.id, "b, again")
    edited = session.messages[2]
    assert [m.parts[0].text for m in session.messages[::2]] == ["a", "b, again"]  # type: ignore[attr-defined]
    assert len(second.parts) > 1
    assert edited.parts[1:] == second.parts[1:]
    assert session.branches(edited.id).count == 2
    assert session.branches(session.messages[0].id).count == 1  # nothing was replaced there
    assert [p.position for p in session.all_branches()] == [2]


async def test_regenerate_answers_the_last_user_message_again() -> None:
    session = ChatSession(_answers("first answer", "second answer", "third answer"))
    await session.send("question")
    old = session.messages[1]
    again = await session.regenerate()
    assert again.text == "second answer"
    assert _texts(session.messages) == ["question", "second answer"]
    point = session.branches(again.id)
    assert (point.position, point.active) == (1, 1)
    assert point.alternatives == (old, again)
    await session.regenerate()
    assert session.branches(session.messages[1].id).count == 3
    assert _texts(session._stored_messages()) == ["first answer", "second answer"]


async def test_regenerate_after_an_error_a_stop_and_a_limit() -> None:
    failing = ScriptedReply(text="partial", error=RuntimeError("provider down"), error_after=2)
    session = ChatSession(ScriptedTransport([failing, "recovered"]))
    errored = await session.send("hi")
    assert errored.status is MessageStatus.ERROR
    assert (await session.regenerate()).text == "recovered"
    assert session.branches(session.messages[1].id).alternatives[0] is errored

    slow_reply = ScriptedTransport([ScriptedReply(text="word " * 400), "quick"], delay=0.005)
    stopped_session = ChatSession(slow_reply)
    task = asyncio.create_task(stopped_session.send("talk"))
    await wait_for(lambda: len(stopped_session.messages) == 2 and "word" in stopped_session.messages[1].text)
    stopped_session.stop()
    assert (await task).status is MessageStatus.CANCELLED
    assert (await stopped_session.regenerate()).text == "quick"

    looping = ScriptedReply(tool_calls=[ScriptedToolCall(name="slow", arguments={"seconds": 0})])
    limited = ChatSession(
        ScriptedTransport([looping, looping, "done"]), tools=[slow], options=SessionOptions(max_iterations=1)
    )
    reply = await limited.send("loop")
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert (await limited.regenerate()).status is MessageStatus.COMPLETED


async def test_clear_errors_change_nothing() -> None:
    session = ChatSession(_answers("hello"))
    with pytest.raises(BranchError, match="nothing to regenerate"):
        await session.regenerate()
    await session.send("hi")
    before = session.messages
    with pytest.raises(BranchError, match="no message 'ghost'"):
        await session.edit("ghost", "x")
    with pytest.raises(BranchError, match="only a user message"):
        await session.edit(before[1].id, "x")
    with pytest.raises(ValueError, match="non-empty"):
        await session.edit(before[0].id, "  ")
    with pytest.raises(BranchError, match="no branch 3"):
        session.switch_branch(before[0].id, 3)
    with pytest.raises(BranchError, match="a message id is text"):
        session.branches(7)  # type: ignore[arg-type]
    assert session.messages == before
    assert session._stored_messages() == []


async def test_a_running_turn_is_refused_unless_stopped_first() -> None:
    ran.clear()
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])])
    session = ChatSession(transport, tools=[wipe])
    task = asyncio.create_task(session.send("wipe x"))
    await wait_for(lambda: bool(session.pending_approvals))
    question = session.messages[0]
    with pytest.raises(SessionBusyError):
        await session.edit(question.id, "no, leave it")
    with pytest.raises(SessionBusyError):
        await session.regenerate()
    with pytest.raises(SessionBusyError):
        session.switch_branch(question.id, 0)
    assert session.pending_approvals  # nothing changed: it still waits
    session.stop()
    await task


async def test_a_call_waiting_for_approval_in_the_replaced_branch_is_cancelled_with_its_outcome() -> None:
    ran.clear()
    wipe_call = ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])
    session = ChatSession(ScriptedTransport([wipe_call, "Left it alone."]), tools=[wipe])
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    task = asyncio.create_task(session.send("wipe x"))
    await wait_for(lambda: bool(session.pending_approvals))
    waiting = session.pending_approvals[0]
    old_reply = session.messages[1]
    reply = await session.edit(session.messages[0].id, "no, leave it", stop=True)
    assert reply.text == "Left it alone."
    assert (await task) is old_reply
    assert old_reply.status is MessageStatus.CANCELLED
    assert waiting.state is ToolCallState.CANCELLED
    assert waiting.outcome is not None
    assert not waiting.outcome.ok
    assert ran == []
    # The stopped branch is kept as it ended, and the cancel came before the new branch began.
    assert session.branches(session.messages[0].id).count == 2
    cut = next(i for i, c in enumerate(changes) if isinstance(c, BranchesChanged))
    cancelled = max(i for i, c in enumerate(changes) if getattr(c, "part", None) is waiting and waiting.state.terminal)
    assert cancelled < cut


async def test_a_running_call_in_the_replaced_branch_is_cancelled_before_regenerating() -> None:
    ran.clear()
    long_call = ScriptedReply(tool_calls=[ScriptedToolCall(name="slow", arguments={"seconds": 10})])
    session = ChatSession(ScriptedTransport([long_call, "Fresh answer."]), tools=[slow])
    task = asyncio.create_task(session.send("go"))
    await wait_for(
        lambda: (
            len(session.messages) == 2 and any(p.state is ToolCallState.RUNNING for p in session.messages[1].tool_calls)
        )
    )
    running = session.messages[1].tool_calls[0]
    reply = await asyncio.wait_for(session.regenerate(stop=True), 5)
    assert reply.text == "Fresh answer."
    assert running.state is ToolCallState.CANCELLED
    assert running.outcome is not None
    assert (await task).status is MessageStatus.CANCELLED
    assert ran == []
    assert session.branches(reply.id).count == 2


async def _two_branches(path: Path) -> list[str]:
    session = ChatSession(EchoTransport(), history=path)
    await session.send("one")
    await session.send("two")
    await session.edit(session.messages[2].id, "two, edited")
    await session.regenerate()
    session.switch_branch(session.messages[2].id, 0)  # back to the first "two": its branch is active
    session.close()  # the file's lock goes to the new process
    return _texts(session.messages)


def test_the_history_file_keeps_the_branches_for_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    expected = asyncio.run(_two_branches(path))
    # The plain reader (and any reader of the conversation format) sees the active path.
    assert _texts(read_history(path)) == expected
    code = f"""
        import json
        from ai_widgets import ChatSession
        session = ChatSession(None, history={str(path)!r})
        points = [
            {{"position": p.position, "active": p.active, "texts": [m.text for m in p.alternatives]}}
            for p in session.all_branches()
        ]
        before = [m.text for m in session.messages]
        session.switch_branch(session.messages[2].id, 1)
        print(json.dumps({{
            "messages": before,
            "points": points,
            "after": [m.text for m in session.messages],
            "stored": sorted(m.text for m in session._stored_messages()),
        }}))
        session.close()
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["messages"] == expected == ["one", "one", "two", "two"]
    assert seen["points"] == [{"position": 2, "active": 0, "texts": ["two", "two, edited"]}]
    assert seen["after"] == ["one", "one", "two, edited", "two, edited"]
    assert seen["stored"] == ["two", "two", "two, edited"]  # the first branch, and the regenerate's first reply
    # The process switched and closed the file: a third session sees its choice, and every branch.
    third = ChatSession(None, history=path)
    assert _texts(third.messages) == ["one", "one", "two, edited", "two, edited"]
    assert third.branches(third.messages[3].id).count == 2
    third.close()


async def test_a_file_without_branches_still_loads_and_gains_them(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(dump_messages([Message.user("hi"), Message(Role.ASSISTANT, [TextPart("hello")])]), "utf-8")
    session = ChatSession(EchoTransport(), history=path)
    assert session.all_branches() == []
    await session.regenerate()
    session.close()
    data = json.loads(path.read_text("utf-8"))
    assert [m["parts"][0]["text"] for m in data["messages"]] == ["hi", "hi"]
    assert len(data["branches"]) == 1
    assert _texts(load_messages(path.read_text("utf-8"))) == ["hi", "hi"]  # the plain reader: the active path


async def test_clear_forgets_the_branches(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(EchoTransport(), history=path)
    await session.send("one")
    await session.regenerate()
    session.clear()
    assert session._stored_messages() == []
    assert session.all_branches() == []
    await session.send("fresh")
    session.close()
    again = ChatSession(None, history=path)
    assert _texts(again.messages) == ["fresh", "fresh"]
    assert again.all_branches() == []
    again.close()


def test_a_process_that_dies_leaves_its_branches_in_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    code = f"""
        import asyncio, os
        from ai_widgets import ChatSession
        from ai_widgets.transports import EchoTransport

        async def main():
            session = ChatSession(EchoTransport(), history={str(path)!r})
            await session.send("one")
            await session.send("two")
            await session.edit(session.messages[0].id, "uno")
            await session.regenerate()
            session.switch_branch(session.messages[1].id, 0)
            session.flush_history()
            os._exit(0)  # no close(): the journal is not folded into the snapshot

        asyncio.run(main())
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    journal = (tmp_path / "chat.json.journal").read_text("ascii")
    assert '"op": "truncate"' in journal
    assert '"op": "branches"' in journal
    session = ChatSession(None, history=path)
    assert _texts(session.messages) == ["uno", "uno"]
    assert [(p.position, p.active, p.count) for p in session.all_branches()] == [(0, 1, 2), (1, 0, 2)]
    session.switch_branch(session.messages[0].id, 0)
    assert _texts(session.messages) == ["one", "one", "two", "two"]
    session.close()


def test_a_journal_of_the_first_version_still_replays(tmp_path: Path) -> None:
    """A file the previous ai_widgets wrote (journal version 1: puts and clears only) opens, and goes on with
    branches."""
    path = tmp_path / "chat.json"
    snapshot = dump_messages([Message.user("hi")]).encode("ascii")
    path.write_bytes(snapshot)

    def record(body: dict[str, object]) -> bytes:
        data = json.dumps(body).encode("ascii")
        return b"%08x %s\n" % (zlib.crc32(data), data)

    reply = Message(Role.ASSISTANT, [TextPart("hello")])
    header = {
        "format": "ai_widgets.history-journal",
        "version": 1,
        "snapshot": {"size": len(snapshot), "crc32": zlib.crc32(snapshot)},
    }
    journal = record(header) + record({"op": "put", "index": 1, "message": reply.to_dict()})
    (tmp_path / "chat.json.journal").write_bytes(journal)
    session = ChatSession(EchoTransport(), history=path)
    assert _texts(session.messages) == ["hi", "hello"]
    asyncio.run(session.regenerate())
    session.close()
    again = ChatSession(None, history=path)
    assert _texts(again.messages) == ["hi", "hi"]
    assert _texts(list(again.branches(again.messages[1].id).alternatives)) == ["hello", "hi"]
    again.close()


def test_a_journal_of_the_second_version_replays_as_before_and_is_folded_in(tmp_path: Path) -> None:
    """A file the previous ai_widgets wrote (journal version 2: a regenerate's cut, branches and reply as three
    records) opens as it did; the journal is folded into the snapshot at once, so the records appended next never
    sit under a header that does not name their version."""
    path = tmp_path / "chat.json"
    journal = tmp_path / "chat.json.journal"
    question, old, new = (
        Message.user("hi"),
        Message(Role.ASSISTANT, [TextPart("hello")]),
        Message(Role.ASSISTANT, [TextPart("hey")]),
    )
    snapshot = dump_messages([question, old]).encode("ascii")
    path.write_bytes(snapshot)

    def record(body: dict[str, object]) -> bytes:
        data = json.dumps(body).encode("ascii")
        return b"%08x %s\n" % (zlib.crc32(data), data)

    header = {
        "format": "ai_widgets.history-journal",
        "version": 2,
        "snapshot": {"size": len(snapshot), "crc32": zlib.crc32(snapshot)},
    }
    branches = {question.id: {"active": 1, "alternatives": [[old.to_dict()], None]}}
    journal.write_bytes(
        record(header)
        + record({"op": "truncate", "length": 1})
        + record({"op": "branches", "branches": branches})
        + record({"op": "put", "index": 1, "message": new.to_dict()})
    )
    assert _texts(read_history(path)) == ["hi", "hey"]
    session = ChatSession(EchoTransport(), history=path)
    assert _texts(session.messages) == ["hi", "hey"]
    assert _texts(list(session.branches(session.messages[1].id).alternatives)) == ["hello", "hey"]
    assert json.loads(path.read_bytes())["branches"] == branches  # folded in at the open
    assert json.loads(journal.read_bytes().split(b"\n")[0][9:])["version"] == 3
    asyncio.run(session.regenerate())
    session.flush_history()
    again_texts = _texts(read_history(path))
    session.close()
    again = ChatSession(None, history=path)
    assert _texts(again.messages) == again_texts == ["hi", "hi"]
    assert _texts(list(again.branches(again.messages[1].id).alternatives)) == ["hello", "hey", "hi"]
    again.close()


async def test_edit_with_stop_from_another_event_loop_waits_for_the_turn_to_end() -> None:
    """The turn runs on this loop; the edit comes from a thread with a loop of its own (a widget's click)."""
    ran.clear()
    wipe_call = ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])
    session = ChatSession(ScriptedTransport([wipe_call, "Changed my mind."]), tools=[wipe])
    task = asyncio.create_task(session.send("wipe x"))
    await wait_for(lambda: bool(session.pending_approvals))
    waiting = session.pending_approvals[0]
    question = session.messages[0].id
    edited = await asyncio.to_thread(asyncio.run, session.edit(question, "leave it", stop=True))
    assert edited.text == "Changed my mind."
    assert (await task).status is MessageStatus.CANCELLED
    assert waiting.state is ToolCallState.CANCELLED
    assert ran == []


async def test_an_earlier_branchs_messages_are_listed_from_its_place_without_switching_to_it(tmp_path: Path) -> None:
    session = ChatSession(_answers("to a", "to b", "to b2"))
    await session.send("a")
    await session.send("b")
    first_b = session.messages[2]
    await session.edit(first_b.id, "b2")
    edited = session.messages[2]
    before = session.messages
    assert _texts(session.branch_messages(edited.id, 0)) == ["b", "to b"]  # the earlier branch, as it was left
    assert _texts(session.branch_messages(edited.id, 1)) == ["b2", "to b2"]  # the active one: messages from there
    assert _texts(session.branch_messages(session.messages[0].id, 0)) == _texts(before)  # no fork: the path itself
    assert session.messages == before  # reading changed nothing
    with pytest.raises(BranchError, match="no branch 2"):
        session.branch_messages(edited.id, 2)
    with pytest.raises(BranchError):
        session.branch_messages("nope", 0)
    # export writes both, the earlier branch after the transcript and under "branches" in the JSON.
    markdown = session.export(tmp_path / "chat.md").read_text(encoding="utf-8")
    assert markdown.index("b2") < markdown.index("## Earlier branches") < markdown.index("to b\n")
    loaded = json.loads(session.export(tmp_path / "chat.json").read_text(encoding="utf-8"))
    assert [m["id"] for m in loaded["messages"]] == [m.id for m in before]
    assert "branches" in loaded
    with pytest.raises(ValueError, match=r"\.md, \.json or \.ipynb"):
        session.export(tmp_path / "chat.txt")
