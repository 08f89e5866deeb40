"""Conversations that survive kernel restarts: ChatSession(history=path), and ChatWidget.export."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ai_widgets import ChatSession, MessageStatus, ToolCallState, ToolRisk, tool
from ai_widgets.messages import dump_messages
from ai_widgets.session import HistoryError
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes a file."""
    return f"wiped {path}"


async def test_a_conversation_comes_back_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    first = ChatSession(ScriptedTransport(["Hello!", "Still here."]), history=path)
    await first.send("hi")
    await first.send("again?")
    assert json.loads(path.read_text("utf-8"))["format"] == "ai_widgets.conversation"
    second = ChatSession(ScriptedTransport(["Welcome back."]), history=path)
    assert [m.text for m in second.messages] == ["hi", "Hello!", "again?", "Still here."]
    transport = second.transport
    await second.send("remember me?")
    sent = [m.text for m in transport.requests[0].messages[:5]]  # type: ignore[attr-defined]
    assert sent == ["hi", "Hello!", "again?", "Still here.", "remember me?"]
    assert len(ChatSession(ScriptedTransport([]), history=path).messages) == 6


async def test_a_call_waiting_when_the_kernel_died_comes_back_answered(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    model = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])])
    first = ChatSession(model, tools=[wipe], history=path)
    task = asyncio.create_task(first.send("wipe x"))
    await wait_for(lambda: bool(first.pending_approvals))
    # The file was written when the call began to wait: what a kernel that dies now leaves behind.
    saved = path.read_text("utf-8")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    path.write_text(saved, encoding="utf-8")

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


def test_history_and_messages_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        ChatSession(ScriptedTransport([]), history=tmp_path / "c.json", messages=[])
    with pytest.raises(HistoryError, match="folder"):
        ChatSession(ScriptedTransport([]), history=tmp_path)


async def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(["one", "two"]), history=path)
    await session.send("first")
    before = path.read_text("utf-8")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("ai_widgets.session._history.os.replace", broken_replace)
    await session.send("second")  # the write fails: logged, the turn goes on, the old file stays whole
    assert path.read_text("utf-8") == before
    assert _names(tmp_path) == ["chat.json"]
    monkeypatch.undo()
    session.clear()
    assert json.loads(path.read_text("utf-8"))["messages"] == []


async def test_export_writes_markdown_and_json(tmp_path: Path) -> None:
    pytest.importorskip("anywidget")
    from ai_widgets import ChatWidget

    chat = ChatWidget(transport=ScriptedTransport(["It is **sunny**."]))
    await chat.session.send("weather?")
    md = chat.export(tmp_path / "chat.md")
    assert "It is **sunny**." in md.read_text("utf-8")
    js = chat.export(tmp_path / "chat.json")
    assert js.read_text("utf-8") == dump_messages(chat.session.messages)
    restored = ChatSession(ScriptedTransport([]), history=js)
    assert [m.text for m in restored.messages] == ["weather?", "It is **sunny**."]
    with pytest.raises(ValueError, match=r"\.md or \.json"):
        chat.export(tmp_path / "chat.txt")
    chat.close()
