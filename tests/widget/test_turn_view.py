"""``chat.ask(..., show=True)``: the turn shown live in the asking cell, in-process (the kernel tests run the grid).

The kernel check and ``display`` are replaced so the turn view is built as it would be in a kernel; the comms are the
recording ones of the widget harness.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import MessageStatus
from ai_widgets.transports import ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Mirror, Wire, delete_file, finished_messages, script


def mirror_of(wire: Wire, widget: Any) -> Mirror:
    """A view of ``widget`` opened now: its state, then what the kernel sent it."""
    mirror = Mirror(finished_messages(widget))
    seen = len(wire.custom(widget.comm.comm_id))
    wire.comms[widget.comm.comm_id].handle({"type": "sync", "have": len(mirror.finished)})
    for content in wire.custom(widget.comm.comm_id)[seen:]:
        mirror.apply(content)
    return mirror


async def test_the_asking_cell_shows_its_turn_and_a_click_there_decides_once(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    await chat.ask("hello", show=False)
    assert shown == []  # show=False: nothing in the asking cell

    turn = asyncio.create_task(chat.ask("delete a"))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    (view,) = shown
    assert isinstance(view, TurnView)
    assert view._scope == "turn"
    assert view._busy
    # Only this turn: the person's message (finished) and the reply in progress, with the waiting call.
    mirror = mirror_of(wire, view)
    assert [m["parts"][0]["text"] for m in mirror.finished] == ["delete a"]
    assert [m["index"] for m in mirror.finished] == [2]
    (live,) = mirror.live.values()
    assert [p["state"] for p in live["parts"] if p["kind"] == "tool_call"] == ["awaiting_approval"]

    call_id = chat.session.pending_approvals[0].tool_call_id
    chat_seen = len(wire.custom(chat.comm.comm_id))
    wire.comms[view.comm.comm_id].handle({"type": "approve", "tool_call_id": call_id, "decision": "approved"})
    # The chat's own view shows the decision; a late click there is refused, and the tool ran once.
    wire.comms[chat.comm.comm_id].handle({"type": "approve", "tool_call_id": call_id, "decision": "rejected"})
    assert "already decided" in wire.custom(chat.comm.comm_id)[-1]["message"]
    reply = await turn
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text.endswith("Result: completed.")
    chat_ops = [op for c in wire.custom(chat.comm.comm_id)[chat_seen:] if c["type"] == "patch" for op in c["ops"]]
    assert any(op[0] == "call" and op[3].get("decision") == "approved" for op in chat_ops)

    # The view holds the turn as the chat holds it, and stops there.
    await wait_for(lambda: not view._busy)
    assert finished_messages(view) == finished_messages(chat)[2:]
    sent = len(wire.custom(view.comm.comm_id))
    await chat.ask("more", show=False)
    chat.send("and more").result(timeout=5)
    assert len(wire.custom(view.comm.comm_id)) == sent
    assert len(finished_messages(view)) == 2


async def test_stop_in_the_turn_view_stops_the_turn_and_typing_there_is_refused(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    turn = asyncio.create_task(chat.ask("delete b"))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    (view,) = shown
    front = wire.comms[view.comm.comm_id]
    front.handle({"type": "send", "text": "interleave"})
    assert "chat's own input box" in wire.custom(view.comm.comm_id)[-1]["message"]
    front.handle({"type": "continue"})
    assert "Continue in the chat" in wire.custom(view.comm.comm_id)[-1]["message"]
    front.handle({"type": "stop"})
    reply = await turn
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state.value for p in reply.tool_calls] == ["cancelled"]
    assert len(chat.session.messages) == 2  # the refused send added nothing


async def test_nothing_is_shown_for_a_turn_that_cannot_start(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    with pytest.raises(ValueError, match="non-empty"):
        await chat.ask("  ")
    with pytest.raises(ValueError, match="non-empty"):
        chat.ask_sync("")
    assert shown == []  # (a turn in progress is no reason: the ask waits for it, tests/widget/test_ask_waits.py)


async def test_a_turn_view_whose_turn_never_began_is_closed(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    view = TurnView(chat.session, start=0)
    view.settle()  # the asking call returned without a turn (another one won the race)
    assert view.comm is None
    view = TurnView(chat.session, start=0)
    await chat.ask("hi", show=False)
    view.settle()
    assert view.comm is not None
    assert not view._busy
    assert [m["role"] for m in finished_messages(view)] == ["user", "assistant"]


def test_ask_sync_shows_the_turn_too(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    reply = chat.ask_sync("hello there")
    assert reply.text == "You said: hello there"
    (view,) = shown
    assert [m["role"] for m in finished_messages(view)] == ["user", "assistant"]
    assert not view._busy
