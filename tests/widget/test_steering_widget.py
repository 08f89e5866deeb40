"""The chat widget's side of steering and of "Run code without asking": the input box sends while a turn runs (the
message shows queued until delivered), Stop puts an undelivered message back, and the switch reaches the session
(issue 31)."""

from __future__ import annotations

import asyncio
from typing import Any

from ai_widgets import ApprovalDecision, MessageStatus
from ai_widgets.transports import ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, delete_file, script


async def waiting_turn(chat: ChatWidget) -> str:
    """A turn from the chat's input box, waiting for approval; its call's id."""
    chat.send("delete a")
    await wait_for(lambda: bool(chat.session.pending_approvals))
    return chat.session.pending_approvals[0].tool_call_id


async def test_the_input_box_steers_a_running_turn(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    call_id = await waiting_turn(chat)
    front.handle({"type": "send", "text": "and b too", "id": "s1"})
    await wait_for(lambda: bool(chat._queued))
    assert chat._queued == [{"id": chat.session.queued_messages[0].id, "text": "and b too"}]
    assert {"type": "sent", "id": "s1"} in wire.custom(chat.comm.comm_id)  # the box may empty itself
    assert not any(c.get("type") == "error" for c in wire.custom(chat.comm.comm_id))
    chat.session.approve(call_id, ApprovalDecision.APPROVED)
    await wait_for(lambda: not chat.session.busy)
    assert chat._queued == []
    texts = [m.text for m in chat.session.messages]
    assert texts[:3] == ["delete a", "Deleting.", "and b too"]  # delivered after the round's result
    assert chat.session.messages[-1].status is MessageStatus.COMPLETED


async def test_chat_send_from_code_steers_too(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    call_id = await waiting_turn(chat)
    future = chat.send("one more thing")
    await wait_for(lambda: bool(chat.session.queued_messages))
    chat.session.approve(call_id, ApprovalDecision.REJECTED)
    reply = await asyncio.wait_for(future, 10)
    assert "one more thing" in [m.text for m in chat.session.messages]
    assert reply is chat.session.messages[-1]  # the last reply of the turn that delivered it


async def test_stop_puts_an_undelivered_message_back_into_the_box(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    await waiting_turn(chat)
    front.handle({"type": "send", "text": "never mind", "id": "s2"})
    await wait_for(lambda: bool(chat._queued))
    front.handle({"type": "stop"})
    await wait_for(lambda: not chat.session.busy and not chat._queued)
    await wait_for(lambda: {"type": "returned", "text": "never mind"} in wire.custom(chat.comm.comm_id))
    assert "never mind" not in [m.text for m in chat.session.messages]
    assert not any(c.get("type") == "error" for c in wire.custom(chat.comm.comm_id))  # no failure shown


def test_the_switch_reaches_the_session_and_a_malformed_one_is_refused(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    assert chat._run_unasked is False
    front.handle({"type": "run_unasked", "on": True})
    assert chat._run_unasked is True
    rule = chat.session.unasked
    assert rule is not None
    assert (rule.names, rule.reason) == (None, "Run code without asking is on")
    front.handle({"type": "run_unasked", "on": False})
    assert (chat._run_unasked, chat.session.unasked) == (False, None)
    front.handle({"type": "run_unasked", "on": "yes"})
    errors: list[Any] = [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == "error"]
    assert len(errors) == 1
    assert "on" in errors[0]["message"]
    assert chat.session.unasked is None
