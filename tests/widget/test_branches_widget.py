"""Edit, Regenerate / Retry and the branch switcher from a view: validated like every action, refused clearly while
a turn runs, and every view's copy follows the active path (in the chat and in the asking cell's view)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import ChatSession, MessageStatus, ToolRisk, tool
from ai_widgets.transports import EchoTransport, ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._branch_view import BUSY_REFUSAL
from ai_widgets.widget._kernel import KernelSupport
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Mirror, Wire, finished_messages, recording_comms


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes a file."""
    return f"wiped {path}"


def _follow(wire: Wire, widget: Any, mirror: Mirror, seen: int) -> int:
    contents = wire.custom(widget.comm.comm_id)
    for content in contents[seen:]:
        mirror.apply(content)
    return len(contents)


def _ids(widget: Any) -> list[str]:
    return [m.id for m in widget.session.messages]


async def test_edit_regenerate_and_switch_from_the_view(wire: Wire) -> None:
    chat = ChatWidget(transport=EchoTransport(prefix="echo: "))
    front = wire.comms[chat.comm.comm_id]
    await chat.ask("one", show=False)
    await chat.ask("two", show=False)
    mirror = Mirror(finished_messages(chat))
    seen = len(wire.custom(chat.comm.comm_id))

    front.handle({"type": "edit", "message_id": chat.session.messages[2].id, "text": "two, edited"})
    await wait_for(lambda: not chat._busy and chat.session.messages[-1].text == "echo: two, edited")
    seen = _follow(wire, chat, mirror, seen)
    assert [m["id"] for m in mirror.finished] == _ids(chat)
    assert mirror.finished[2]["branch"] == {"active": 1, "count": 2}
    assert "branch" not in mirror.finished[0]

    front.handle({"type": "regenerate"})
    await wait_for(lambda: not chat._busy and chat.session.branches(chat.session.messages[3].id).count == 2)
    seen = _follow(wire, chat, mirror, seen)
    assert mirror.finished[3]["branch"] == {"active": 1, "count": 2}

    front.handle({"type": "switch_branch", "message_id": chat.session.messages[2].id, "index": 0})
    seen = _follow(wire, chat, mirror, seen)
    assert [m.text for m in chat.session.messages] == ["one", "echo: one", "two", "echo: two"]
    assert [m["id"] for m in mirror.finished] == _ids(chat)
    assert mirror.finished[2]["branch"] == {"active": 0, "count": 2}
    # A view that opens now starts from the same messages, marks included; the usage follows the branch shown.
    assert finished_messages(chat) == mirror.finished
    assert chat._usage == chat.session.usage.to_dict()
    assert mirror.errors == []


async def test_malformed_and_impossible_clicks_are_refused_and_change_nothing(wire: Wire) -> None:
    chat = ChatWidget(transport=EchoTransport())
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "regenerate"})  # nothing to regenerate yet
    await wait_for(lambda: len(wire.custom(chat.comm.comm_id)) > 0)
    await chat.ask("hi", show=False)
    before = _ids(chat)
    for bad in (
        {"type": "edit", "message_id": before[0]},  # no text
        {"type": "edit", "message_id": before[0], "text": ""},
        {"type": "switch_branch", "message_id": before[0], "index": -1},
        {"type": "switch_branch", "message_id": before[0], "index": "1"},
        {"type": "regenerate", "extra": 1},
        {"type": "switch_branch", "message_id": before[0], "index": 5},
        {"type": "edit", "message_id": before[1], "text": "not yours"},
        {"type": "edit", "message_id": "ghost", "text": "x"},
    ):
        front.handle(bad)
    await wait_for(lambda: len([c for c in wire.custom(chat.comm.comm_id) if c["type"] == "error"]) >= 9)
    errors = [c["message"] for c in wire.custom(chat.comm.comm_id) if c["type"] == "error"]
    assert "nothing to regenerate" in errors[0]
    assert "invalid 'edit' message" in errors[1]
    assert "invalid 'switch_branch' message" in errors[3]
    assert "no branch 5" in errors[6]
    assert "only a user message" in errors[7]
    assert "no message 'ghost'" in errors[8]
    assert _ids(chat) == before
    assert chat.session._stored_messages() == []


async def test_a_click_racing_a_running_turn_is_refused(wire: Wire) -> None:
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])])
    chat = ChatWidget(transport=transport, tools=[wipe])
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "send", "text": "wipe x"})
    await wait_for(lambda: bool(chat.session.pending_approvals))
    before = _ids(chat)
    front.handle({"type": "regenerate"})
    front.handle({"type": "edit", "message_id": before[0], "text": "no"})
    front.handle({"type": "switch_branch", "message_id": before[0], "index": 0})
    front.handle({"type": "new_chat"})
    errors = [c["message"] for c in wire.custom(chat.comm.comm_id) if c["type"] == "error"]
    assert errors == [BUSY_REFUSAL] * 4
    assert _ids(chat) == before
    assert chat.session.pending_approvals  # the call still waits
    front.handle({"type": "stop"})
    await wait_for(lambda: not chat._busy)
    assert chat.session.messages[-1].status is MessageStatus.CANCELLED


async def test_retry_and_edit_in_the_asking_cells_view(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    import ai_widgets.widget._chat as chat_module

    shown: list[Any] = []
    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", shown.append)
    failing = ScriptedReply(text="half", error=RuntimeError("provider down"), error_after=1)
    chat = ChatWidget(transport=ScriptedTransport([failing, "whole", "edited answer"]))
    reply = await chat.ask("hello")
    assert reply.status is MessageStatus.ERROR
    (view,) = shown
    assert isinstance(view, TurnView)
    mirror = Mirror(finished_messages(view))
    seen = len(wire.custom(view.comm.comm_id))
    cell = wire.comms[view.comm.comm_id]

    cell.handle({"type": "regenerate"})  # Retry, in the asking cell's own view
    await wait_for(lambda: not chat._busy and chat.session.messages[-1].text == "whole")
    await asyncio.sleep(0)
    seen = _follow(wire, view, mirror, seen)
    assert [m["id"] for m in mirror.finished] == _ids(chat)
    assert mirror.finished[1]["branch"] == {"active": 1, "count": 2}

    cell.handle({"type": "edit", "message_id": chat.session.messages[0].id, "text": "hello again"})
    await wait_for(lambda: not chat._busy and chat.session.messages[-1].text == "edited answer")
    seen = _follow(wire, view, mirror, seen)
    assert [m["id"] for m in mirror.finished] == _ids(chat)
    assert mirror.finished[0]["branch"] == {"active": 1, "count": 2}
    assert mirror.errors == []
    # New chat is the chat's own: the asking cell's view shows one turn.
    cell.handle({"type": "new_chat"})
    errors = [c["message"] for c in wire.custom(view.comm.comm_id) if c["type"] == "error"]
    assert errors == ["New chat is in the chat itself, not in this view."]
    assert [m.text for m in chat.session.messages] == ["hello again", "edited answer"]


async def test_new_chat_from_the_view_keeps_the_old_conversation_to_switch_back_to(wire: Wire) -> None:
    chat = ChatWidget(transport=EchoTransport(prefix="echo: "))
    front = wire.comms[chat.comm.comm_id]
    await chat.ask("one", show=False)
    old = _ids(chat)
    mirror = Mirror(finished_messages(chat))
    seen = len(wire.custom(chat.comm.comm_id))

    front.handle({"type": "new_chat"})
    told = wire.custom(chat.comm.comm_id)[seen:]
    seen = _follow(wire, chat, mirror, seen)
    assert {"type": "new_chat", "kept": 2} in told
    assert mirror.finished == []
    assert chat.session.messages == []
    assert finished_messages(chat) == []  # a view that opens now shows the empty chat
    assert chat._usage == chat.session.usage.to_dict()  # what the earlier conversation spent still counts

    front.handle({"type": "send", "text": "two"})
    await wait_for(lambda: not chat._busy and len(chat.session.messages) == 2)
    seen = _follow(wire, chat, mirror, seen)
    assert mirror.finished[0]["parts"][0]["text"] == "two"
    assert mirror.finished[0]["branch"] == {"active": 1, "count": 2}

    front.handle({"type": "switch_branch", "message_id": chat.session.messages[0].id, "index": 0})
    seen = _follow(wire, chat, mirror, seen)
    assert _ids(chat) == old
    assert [m["id"] for m in mirror.finished] == old
    assert mirror.finished[0]["branch"] == {"active": 0, "count": 2}

    front.handle({"type": "new_chat", "keep": False})  # an unknown field: refused, nothing changed
    assert "invalid 'new_chat' message" in wire.custom(chat.comm.comm_id)[-1]["message"]
    assert _ids(chat) == old
    assert chat.new_chat() == 2  # the same from code
    assert chat.session.messages == []
    assert mirror.errors == []


def test_the_export_carries_the_branches(tmp_path: Any) -> None:
    async def build() -> ChatWidget:
        chat = ChatWidget(transport=EchoTransport())
        await chat.ask("first", show=False)
        await chat.session.edit(chat.session.messages[0].id, "second")
        return chat

    with recording_comms():
        chat = asyncio.run(build())
        exported = chat.export(tmp_path / "chat.json")
        markdown = chat.export(tmp_path / "chat.md").read_text("utf-8")
    again = ChatSession(None, history=exported)
    assert [m.text for m in again.messages] == ["second", "second"]
    assert again.branches(again.messages[0].id).count == 2
    again.close()
    assert "## Earlier branches" in markdown
    assert markdown.index("second") < markdown.index("first")


async def test_continue_after_an_error_goes_on(wire: Wire) -> None:
    failing = ScriptedReply(text="half", error=RuntimeError("provider down"), error_after=1)
    chat = ChatWidget(transport=ScriptedTransport([failing, "went on"]))
    assert (await chat.ask("hi", show=False)).status is MessageStatus.ERROR
    wire.comms[chat.comm.comm_id].handle({"type": "continue"})
    await wait_for(lambda: not chat._busy and chat.session.messages[-1].text == "went on")
    assert chat.session.messages[-1].status is MessageStatus.COMPLETED
