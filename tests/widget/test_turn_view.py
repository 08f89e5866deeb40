"""``chat.ask(..., show=True)``: the turn shown live in the asking cell, in-process (the kernel tests run the grid).

The kernel check and ``display`` are replaced so the turn view is built as it would be in a kernel; the comms are the
recording ones of the widget harness.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from ai_widgets import Message, MessageStatus, ToolRisk, tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import KernelSupport, UnsupportedKernelError, private_loop
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


ran: list[Any] = []


@tool
def note(text: str) -> str:
    """Notes a text."""
    ran.append(text)
    return text


@tool(name="delete_file", risk=ToolRisk.DESTRUCTIVE)
def recorded_delete_file(path: str) -> str:
    """Deletes a file."""
    ran.append(("deleted", path))
    return f"deleted {path}"


async def test_two_concurrent_asks_run_one_after_the_other_each_view_shows_its_own_turn(
    wire: Wire, shown: list[Any]
) -> None:
    """Defect: both views began on the first turn's busy signal, so the loser's view stayed open showing (a copy of)
    the winner's turn. Since an ask waits for a turn in progress, there is no loser: the second asks after the first,
    and each view shows only its own turn."""
    chat = ChatWidget(transport=ScriptedTransport(["first reply", "second reply"], delay=0.002))
    first = asyncio.create_task(chat.ask("one"))
    second = asyncio.create_task(chat.ask("two"))
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert [r.text for r in results if isinstance(r, Message)] == ["first reply", "second reply"]
    one, two = (view for view in shown if isinstance(view, TurnView))
    assert [m["parts"][0]["text"] for m in finished_messages(one)] == ["one", "first reply"]
    assert [m["parts"][0]["text"] for m in finished_messages(two)] == ["two", "second reply"]
    assert chat.session.messages[-1].status is MessageStatus.COMPLETED
    assert len(chat.session.messages) == 4


async def test_a_turn_view_shows_only_its_own_turn_when_the_input_box_wins_the_race(
    wire: Wire, shown: list[Any]
) -> None:
    """The chat's input box starts a turn after ``ask`` made its view and before its turn could start. Either turn
    may claim the session first (the box's runs on the package's loop thread): the box's first, and ``ask`` waits for
    it, then asks; or ``ask``'s first, and the box's message, steering it with no tool boundary to be delivered at,
    starts the next turn as it ends. Either way ``ask`` gets its own reply (it never raises ``SessionBusyError``:
    it waits), its view shows its turn alone, and both messages are answered."""
    chat = ChatWidget(transport=ScriptedTransport(lambda request: f"{request.last_user_text} reply"))
    front = wire.comms[chat.comm.comm_id]
    asked = asyncio.create_task(chat.ask("asked"))
    await asyncio.sleep(0)  # ask has shown its view; its turn's task has not run yet
    (view,) = shown
    front.handle({"type": "send", "text": "boxed"})  # a turn from the input box (on the package's loop thread)
    reply = await asked
    assert reply.text == "asked reply"
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]
    await wait_for(lambda: not chat.session.busy and len(chat.session.messages) == 4)
    turns = [[m.parts[0].text for m in chat.session.messages[i : i + 2]] for i in (0, 2)]
    assert sorted(turns) == [["asked", "asked reply"], ["boxed", "boxed reply"]]
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]


async def test_a_turn_view_ends_with_its_turn_when_a_message_sent_meanwhile_starts_the_next(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    """Defect (the race above failed one run in fifty): a turn freed the session before it told its observers it had
    ended, so a turn the input box started on its loop thread in between (here the one its message, typed while the
    asked turn ran, starts as that turn ends) added its messages first, and the asking cell's view, mirroring until
    it hears its turn's end, showed them as its own. Here that turn gets every chance to begin first."""
    chat = ChatWidget(transport=ScriptedTransport(lambda request: f"{request.last_user_text} reply", delay=0.02))
    front = wire.comms[chat.comm.comm_id]
    freed = chat.session._turn_ended

    def slow_to_tell(turn: Any) -> Any:  # between freeing the session and saying so, the box's turn may begin
        then = freed(turn)
        deadline = time.monotonic() + 0.5
        while len(chat.session.messages) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        return then

    monkeypatch.setattr(chat.session, "_turn_ended", slow_to_tell)
    asked = asyncio.create_task(chat.ask("asked"))
    await wait_for(lambda: chat.session.busy)
    front.handle({"type": "send", "text": "boxed"})  # steers: queued for the running turn
    reply = await asked
    assert reply.text == "asked reply"
    await wait_for(lambda: not chat.session.busy and len(chat.session.messages) == 4)
    assert [m.parts[0].text for m in chat.session.messages] == ["asked", "asked reply", "boxed", "boxed reply"]
    (view,) = shown
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]


async def test_a_turn_view_shows_only_its_own_turn_when_a_whole_box_turn_runs_before_it_claims(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    """Defect (seen once in CI): the view took where its turn starts from the conversation's length when its task
    began, so a turn from the input box that ran whole in between (on the package's loop thread) showed in it."""
    chat = ChatWidget(transport=ScriptedTransport(lambda request: f"{request.last_user_text} reply"))
    front = wire.comms[chat.comm.comm_id]
    checks = chat.session._check_can_send
    calls = 0

    def box_turn_first(*, steer: bool = False) -> None:  # the asking task's send: after its view, before its claim
        nonlocal calls
        calls += 1
        if calls == 2:  # the first check is ask's own, before its view shows
            front.handle({"type": "send", "text": "boxed"})
            deadline = time.monotonic() + 5
            while len(chat.session.messages) < 2 or chat.session.busy:
                assert time.monotonic() < deadline
                time.sleep(0.005)
        checks(steer=steer)

    monkeypatch.setattr(chat.session, "_check_can_send", box_turn_first)
    await chat.ask("asked")
    (view,) = shown
    assert [m.parts[0].text for m in chat.session.messages] == ["boxed", "boxed reply", "asked", "asked reply"]
    assert [m["parts"][0]["text"] for m in finished_messages(view)] == ["asked", "asked reply"]


def test_ask_sync_that_cannot_wait_leaves_no_turn_behind(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    """Defect: when the cell could not wait (a kernel that cannot process clicks while it blocks; an interrupt before
    the turn began), ``ask_sync`` stopped the session before its turn had started, then blocked 5 s while that turn
    started anyway and waited for an approval no one could give: the session stayed busy, so even ``send()``, which
    the error recommends, failed."""
    import ai_widgets.widget._chat as chat_module

    loop = private_loop()
    gate, blocked = threading.Event(), threading.Event()

    def hold() -> None:  # the package's loop is busy for a moment: the turn cannot start before the cell gives up
        blocked.set()
        gate.wait(5)

    def cannot_wait(future: Any, **_: Any) -> Any:
        threading.Timer(0.1, gate.set).start()
        raise UnsupportedKernelError("this kernel cannot process clicks while a cell blocks")

    monkeypatch.setattr(chat_module, "wait_with_comms", cannot_wait)
    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    chat = ChatWidget(
        transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[recorded_delete_file]
    )
    loop.call_soon_threadsafe(hold)
    assert blocked.wait(5)
    started = time.monotonic()
    with pytest.raises(UnsupportedKernelError):
        chat.ask_sync("delete it")
    assert time.monotonic() - started < 2
    gate.set()
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.01), loop).result(timeout=5)
    assert not chat.session.busy
    assert chat.session.messages == []  # the turn never started
    assert all(view.comm is None for view in shown)  # and nothing stays shown for it
    chat.session.transport = ScriptedTransport(["fine"])
    future = chat.send("and now?")
    assert future is not None
    assert future.result(timeout=5).text == "fine"


def test_ask_sync_interrupted_while_its_call_waits_stops_that_turn_and_its_view_shows_it(
    monkeypatch: pytest.MonkeyPatch, wire: Wire, shown: list[Any]
) -> None:
    import ai_widgets.widget._chat as chat_module

    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    chat = ChatWidget(
        transport=ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"]), tools=[recorded_delete_file]
    )

    def interrupted_while_waiting(future: Any, **_: Any) -> Any:
        deadline = time.monotonic() + 5
        while not chat.session.pending_approvals and time.monotonic() < deadline:
            time.sleep(0.005)
        raise KeyboardInterrupt

    monkeypatch.setattr(chat_module, "wait_with_comms", interrupted_while_waiting)
    ran.clear()
    with pytest.raises(KeyboardInterrupt):
        chat.ask_sync("delete it")
    assert not chat.session.busy  # the turn recorded its cancellation before the interrupt reached the caller
    reply = chat.session.messages[-1]
    assert reply.status is MessageStatus.CANCELLED
    assert [p.state.value for p in reply.tool_calls] == ["cancelled"]
    assert ran == []
    (view,) = shown
    assert not view._busy
    assert [m["status"] for m in finished_messages(view) if m["role"] == "assistant"] == ["cancelled"]


class Failing:
    async def stream(self, request: Any) -> Any:
        raise RuntimeError("the model is down")
        yield  # pragma: no cover


@pytest.mark.parametrize("ending", ["error", "limit_reached", "cancelled"])
async def test_a_turn_view_shows_how_its_turn_ended_and_keeps_it(wire: Wire, shown: list[Any], ending: str) -> None:
    from ai_widgets import SessionOptions

    call = ScriptedToolCall(name="delete_file", arguments={"path": "a"})
    if ending == "error":
        chat = ChatWidget(transport=Failing())
    elif ending == "limit_reached":
        again = ScriptedToolCall(name="note", arguments={"text": "a"})
        transport = ScriptedTransport([ScriptedReply(tool_calls=[again])], repeat=True)
        chat = ChatWidget(transport=transport, tools=[note], options=SessionOptions(max_iterations=1))
    else:
        chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=[call])]), tools=[recorded_delete_file])
    asked = asyncio.create_task(chat.ask("go"))
    if ending == "cancelled":
        await wait_for(lambda: bool(chat.session.pending_approvals))
        wire.comms[shown[0].comm.comm_id].handle({"type": "stop"})
    reply = await asked
    assert reply.status.value == ending
    (view,) = shown
    assert not view._busy
    turn = finished_messages(view)
    assert [m["role"] for m in turn] == ["user", "assistant"]
    assert turn[1]["status"] == ending

    # A view of it opened later (a new page) gets the turn; the chat going on, or cleared, changes nothing there.
    chat.session.transport = ScriptedTransport(["later"], repeat=True)
    chat.clear()
    await chat.ask("another", show=False)
    sent = len(wire.custom(view.comm.comm_id))
    wire.comms[view.comm.comm_id].handle({"type": "sync", "have": 0})
    (snapshot,) = [c for c in wire.custom(view.comm.comm_id)[sent:] if c["type"] == "snapshot"]
    assert snapshot["finished"] == turn
    assert snapshot["live"] == []
    assert finished_messages(view) == turn


async def test_a_turn_view_that_could_not_be_displayed_is_closed(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: when displaying the turn view failed, ``ask`` raised and left the view open, subscribed to the session
    for good."""
    import IPython.display

    import ai_widgets.widget._chat as chat_module

    def broken(*objects: Any, **_: Any) -> None:
        raise RuntimeError("no display here")

    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", broken)
    chat = ChatWidget(transport=ScriptedTransport(["hi"]))
    subscribers = len(chat.session._subscribers)
    with pytest.raises(RuntimeError, match="no display here"):
        await chat.ask("hello")
    opened = [s.comm_id for s in wire.sent if s.msg_type == "comm_open" and s.data["state"].get("_scope") == "turn"]
    closed = {s.comm_id for s in wire.sent if s.msg_type == "comm_close"}
    assert opened
    assert set(opened) <= closed
    assert len(chat.session._subscribers) == subscribers
    assert chat.session.messages == []
