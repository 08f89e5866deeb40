"""New chat: a fresh conversation, with the one before kept whole as an earlier branch at the start (switched back
to, exported, and kept by the history file); refused while a turn runs, and nothing done to an empty one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ai_widgets import ChatSession, SessionBusyError, ToolRisk, tool
from ai_widgets.changes import BranchesChanged, SessionChange
from ai_widgets.messages import Message
from ai_widgets.transports import EchoTransport, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes a file."""
    return f"wiped {path}"


def _texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


async def test_a_new_chat_starts_empty_and_keeps_the_old_one_to_switch_back_to() -> None:
    transport = ScriptedTransport(["Paris.", "Rome.", "Hello!"])
    session = ChatSession(transport)
    await session.send("capital of France?")
    await session.send("and Italy?")
    old = session.messages
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    assert session.new_chat() == 4
    assert session.messages == []
    assert [c for c in changes if isinstance(c, BranchesChanged)] == [BranchesChanged(0)]
    assert set(session._stored_messages()) == set(old)
    await session.send("hi")
    assert _texts(session.messages) == ["hi", "Hello!"]
    sent = _texts(transport.requests[-1].messages)
    assert sent[0] == "hi"
    assert not any("France" in text or "Paris" in text for text in sent)  # the model is sent the new one alone
    point = session.branches(session.messages[0].id)
    assert (point.position, point.active, point.count) == (0, 1, 2)
    assert point.alternatives[0] is old[0]
    session.switch_branch(session.messages[0].id, 0)
    assert session.messages == old
    session.switch_branch(session.messages[0].id, 1)
    assert _texts(session.messages) == ["hi", "Hello!"]


async def test_each_new_chat_adds_one_more_conversation_at_the_start() -> None:
    session = ChatSession(EchoTransport())
    for text in ("one", "two", "three"):
        session.new_chat()
        await session.send(text)
    point = session.branches(session.messages[0].id)
    assert (point.active, point.count) == (2, 3)
    assert [m.text for m in point.alternatives] == ["one", "two", "three"]
    assert _texts(session.branch_messages(session.messages[0].id, 0)) == ["one", "one"]


async def test_an_empty_conversation_is_left_as_it_is() -> None:
    session = ChatSession(EchoTransport())
    changes: list[SessionChange] = []
    session.subscribe(changes.append)
    assert session.new_chat() == 0
    await session.send("a")
    assert session.new_chat() == 2
    changes.clear()
    assert session.new_chat() == 0  # the fresh one is still empty: nothing more set aside
    assert changes == []
    await session.send("b")
    assert session.branches(session.messages[0].id).count == 2


async def test_a_new_chat_is_refused_while_a_turn_runs() -> None:
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])])
    session = ChatSession(transport, tools=[wipe])
    task = asyncio.create_task(session.send("wipe x"))
    await wait_for(lambda: bool(session.pending_approvals))
    before = session.messages
    with pytest.raises(SessionBusyError):
        session.new_chat()
    assert session.messages == before
    assert session.pending_approvals  # it still waits
    session.stop()
    await task


async def test_the_earlier_conversation_is_exported_and_kept_by_the_history_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(EchoTransport(), history=path)
    await session.send("old question")
    session.new_chat()
    await session.send("new question")
    exported = json.loads(session.export(tmp_path / "all.json").read_text(encoding="utf-8"))
    assert "old question" in json.dumps(exported["branches"])
    assert "old question" in session.export(tmp_path / "all.md").read_text(encoding="utf-8")
    session.close()
    again = ChatSession(None, history=path)
    assert _texts(again.messages) == ["new question", "new question"]
    again.switch_branch(again.messages[0].id, 0)
    assert _texts(again.messages) == ["old question", "old question"]
    again.close()
