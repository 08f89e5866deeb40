"""A cell that asks while a turn runs waits for it, says so in its output, and then asks (``chat.ask`` and
``chat.ask_sync``); ``session.send(..., steer=False)`` raises ``SessionBusyError``. In-process; the kernel tests run the grid
(tests/kernel/test_chat_widget.py).

Before: ``chat.ask`` in the quickstart's "From code" cell after Run All, while the chat's turn ran, failed with a
20-line ``SessionBusyError`` traceback.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import ApprovalDecision, MessageStatus, SessionBusyError
from ai_widgets.transports import ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._turn_view import TurnView
from ai_widgets.widget._waiting import GAVE_UP, WAITED, WAITING
from tests.helpers import wait_for
from tests.widget.widget_harness import Handle, Wire, delete_file, finished_messages, script


async def box_turn_waiting(chat: ChatWidget) -> str:
    """A turn from the chat's input box, waiting for approval; its call's id."""
    chat.send("delete a")
    await wait_for(lambda: bool(chat.session.pending_approvals))
    return chat.session.pending_approvals[0].tool_call_id


async def test_ask_while_a_turn_runs_waits_says_so_and_then_asks(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    call_id = await box_turn_waiting(chat)
    asked = asyncio.create_task(chat.ask("hello"))
    await wait_for(lambda: len(shown) == 2)
    note, view = shown
    assert isinstance(note, Handle)
    assert isinstance(view, TurnView)
    assert note.texts == [WAITING]  # shown first, above the turn's view
    await asyncio.sleep(0.1)
    assert not asked.done()
    assert [m.text for m in chat.messages] == ["delete a", "Deleting."]  # nothing interleaved
    chat.session.approve(call_id, ApprovalDecision.APPROVED)
    reply = await asked
    assert reply.text == "You said: hello"
    assert note.texts == [WAITING, WAITED]
    assert [m.text for m in chat.messages] == ["delete a", "Deleting.Result: completed.", "hello", "You said: hello"]
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["hello", "You said: hello"]  # its own turn


async def test_ask_sync_while_a_turn_runs_waits_and_then_asks(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    call_id = await box_turn_waiting(chat)
    asked = asyncio.ensure_future(asyncio.to_thread(chat.ask_sync, "hello", show=False))
    await wait_for(lambda: len(shown) == 1)
    (note,) = shown
    await asyncio.sleep(0.1)
    assert not asked.done()
    chat.session.approve(call_id, ApprovalDecision.APPROVED)
    reply = await asked
    assert reply.text == "You said: hello"
    assert note.texts == [WAITING, WAITED]  # ask_sync's turn starts on another thread: updated as it returns
    assert [m.text for m in chat.messages][2:] == ["hello", "You said: hello"]


async def test_an_ask_that_never_waited_shows_no_note(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    await chat.ask("hello")
    assert [isinstance(x, Handle) for x in shown] == [False]  # the turn's view only


async def test_an_ask_cancelled_while_it_waits_never_asks(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    call_id = await box_turn_waiting(chat)
    asked = asyncio.create_task(chat.ask("hello"))
    await wait_for(lambda: len(shown) == 2)
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    note, view = shown
    assert note.texts == [WAITING, GAVE_UP]
    assert view.comm is None  # a turn that never started leaves no view
    chat.session.approve(call_id, ApprovalDecision.APPROVED)
    await wait_for(lambda: not chat.session.busy)
    assert [m.text for m in chat.messages] == ["delete a", "Deleting.Result: completed."]


async def test_session_send_refuses_while_a_turn_runs_when_it_may_not_steer(wire: Wire, shown: list[Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    call_id = await box_turn_waiting(chat)
    with pytest.raises(SessionBusyError):
        await chat.session.send("hello", steer=False)
    chat.session.approve(call_id, ApprovalDecision.REJECTED)
    await wait_for(lambda: not chat.session.busy)
    assert chat.messages[-1].status is MessageStatus.COMPLETED
