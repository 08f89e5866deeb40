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

import ai_widgets.widget._view as view_module
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


# --- a cell that sends, then asks ---------------------------------------------------------------------------------
# Before: the asking call took the session first; the sent message was answered after it, or (where the session was
# busy when the send's turn began) lost with a stderr line "a turn started from the widget failed: a turn is already
# running".


@pytest.fixture
def on_this_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat's turns from ``send`` run on the test's loop, as in a kernel they run on the loop cells run on."""
    monkeypatch.setattr(view_module, "main_loop", asyncio.get_running_loop)


def conversation(chat: ChatWidget) -> list[str]:
    return [m.text for m in chat.messages]


BOTH_IN_ORDER = ["one", "You said: one", "two", "You said: two"]


async def test_send_then_ask_answers_both_in_order(wire: Wire, shown: list[Any], on_this_loop: None) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("one")
    reply = await chat.ask("two")
    assert reply.text == "You said: two"
    assert (await pending).text == "You said: one"
    assert conversation(chat) == BOTH_IN_ORDER
    note, view = shown
    assert isinstance(note, Handle)
    assert note.texts == [WAITING, WAITED]  # the cell says it waits for the message sent before
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["two", "You said: two"]  # its own turn only


async def test_send_then_ask_from_another_loop_answers_both_in_order(wire: Wire, shown: list[Any]) -> None:
    """Outside a kernel the chat's turns run on a loop of its own, on another thread."""
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("one")
    reply = await chat.ask("two", show=False)
    assert reply.text == "You said: two"
    assert pending.result(timeout=5).text == "You said: one"
    assert conversation(chat) == BOTH_IN_ORDER


async def test_send_then_ask_sync_answers_both_in_order(wire: Wire, shown: list[Any], on_this_loop: None) -> None:
    """The blocking cell holds the loop the sent turn was to start on: the asking call runs it first."""
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("one")
    reply = chat.ask_sync("two", show=False)  # blocks this loop, as a cell blocks the kernel's
    assert reply.text == "You said: two"
    assert pending.result(timeout=0).text == "You said: one"
    assert conversation(chat) == BOTH_IN_ORDER
    await asyncio.sleep(0.05)  # the loop's own start of the sent turn finds it taken: nothing runs twice
    assert conversation(chat) == BOTH_IN_ORDER


async def test_a_sent_turn_that_needs_approval_is_waited_for_then_the_ask_runs(
    wire: Wire, shown: list[Any], on_this_loop: None
) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("delete a")
    asked = asyncio.create_task(chat.ask("two", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    assert not asked.done()
    chat.approve(chat.session.pending_approvals[0].tool_call_id, ApprovalDecision.APPROVED)
    assert (await asked).text == "You said: two"
    assert (await pending).text == "Deleting.Result: completed."
    assert conversation(chat) == ["delete a", "Deleting.Result: completed.", "two", "You said: two"]


async def test_a_sent_turn_cancelled_before_it_starts_never_runs(
    wire: Wire, shown: list[Any], on_this_loop: None
) -> None:
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("one")
    assert pending.cancel()
    reply = await chat.ask("two", show=False)
    assert reply.text == "You said: two"
    assert conversation(chat) == ["two", "You said: two"]
    with pytest.raises(asyncio.CancelledError):
        await pending


async def test_an_ask_cancelled_before_the_sent_turn_ran_leaves_that_turn_to_run(
    wire: Wire, shown: list[Any], on_this_loop: None
) -> None:
    """The asking call took the sent turn over; cancelled before it ran it, it hands it back: the sent message is
    answered as if nothing had asked after it, and the asking call's own message is never sent."""
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("one")
    asked = asyncio.ensure_future(chat.ask("two", show=False))
    await asyncio.sleep(0)  # the asking call has taken the sent turn (its first step), not run it
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    assert (await pending).text == "You said: one"
    assert conversation(chat) == ["one", "You said: one"]


async def test_an_ask_cancelled_while_the_sent_turn_runs_stops_that_turn(
    wire: Wire, shown: list[Any], on_this_loop: None
) -> None:
    """An interrupt of the asking cell while the sent turn (which it runs) waits for approval stops that turn."""
    chat = ChatWidget(transport=ScriptedTransport(script), tools=[delete_file])
    pending = chat.send("delete a")
    asked = asyncio.ensure_future(chat.ask("two", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    with pytest.raises(asyncio.CancelledError):
        await pending
    await wait_for(lambda: not chat.session.busy)
    assert [m.status for m in chat.messages] == [MessageStatus.COMPLETED, MessageStatus.CANCELLED]
