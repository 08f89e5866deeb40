"""Opening a long conversation: a view's state carries the newest finished messages, and the view asks for the
earlier ones in chunks, so each view gets the conversation once, what is on screen first."""

from __future__ import annotations

import asyncio
import json

from jupyter_client.session import json_packer

from ai_widgets import ChatSession, Message
from ai_widgets.messages import Role, TextPart
from ai_widgets.transports import ScriptedReply, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._window import CHUNK_MESSAGES, SCREEN_BYTES, SCREEN_MESSAGES
from tests.helpers import wait_for
from tests.widget.widget_harness import Mirror, Wire, fetch_older, opening_state

COUNT = 2_000


def conversation(n: int, *, chars: int = 300) -> list[Message]:
    """``n`` finished messages, questions and answers, each about ``chars`` characters."""
    return [
        Message(role=Role.USER if i % 2 == 0 else Role.ASSISTANT, parts=[TextPart(f"message {i} " + "x" * chars)])
        for i in range(n)
    ]


def test_the_state_carries_the_newest_messages_and_says_how_many_come_before(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(COUNT)))
    opening = next(s for s in wire.sent if s.msg_type == "comm_open" and "_history" in s.data["state"])
    state = opening.data["state"]
    assert len(state["_history"]) == SCREEN_MESSAGES
    assert state["_history"][-1]["parts"][0]["text"].startswith(f"message {COUNT - 1} ")
    assert state["_older"] == {"count": COUNT - SCREEN_MESSAGES, "before": chat._history[COUNT - SCREEN_MESSAGES]["id"]}
    # The whole conversation stays in the kernel's trait (what a later state and the chunks come from).
    assert len(chat._history) == COUNT
    whole = len(json_packer(chat._history))
    assert len(json_packer(state["_history"])) < whole / 40


def test_a_short_conversation_is_all_in_the_state(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(SCREEN_MESSAGES)))
    history, missing = opening_state(chat)
    assert (len(history), missing) == (SCREEN_MESSAGES, 0)
    assert chat.get_state(["_older"])["_older"] == {}


def test_the_state_is_about_a_screen_of_bytes_even_when_messages_are_large(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(200, chars=60_000)))
    history, missing = opening_state(chat)
    assert 1 <= len(history) < SCREEN_MESSAGES
    assert len(json_packer(history)) <= SCREEN_BYTES + 61_000
    assert missing == 200 - len(history)


def test_a_view_gets_every_message_once_newest_first(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(COUNT)))
    mark = wire.mark()
    history, missing = opening_state(chat)
    mirror = Mirror(history, missing=missing)
    answers = fetch_older(chat, mirror)
    assert mirror.finished == json.loads(json_packer(chat._history))  # every message reached the view
    assert mirror.missing == 0
    # Each chunk ends where the one before began: newest first, no message twice.
    assert len(answers) == -(-(COUNT - SCREEN_MESSAGES) // CHUNK_MESSAGES)
    ends = [a["from"] + len(a["finished"]) for a in answers]
    assert ends == [missing, *[a["from"] for a in answers[:-1]]]
    ids = [m["id"] for m in history] + [m["id"] for a in answers for m in a["finished"]]
    assert len(ids) == len(set(ids)) == COUNT
    # The bytes of a view: the conversation once (the state's newest part, then the chunks).
    sent = sum(s.nbytes for s in wire.since(mark))
    assert sent < len(json_packer(chat._history)) * 1.05


def test_a_second_view_gets_its_own_one_copy(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(COUNT)))
    whole = len(json_packer(chat._history))
    for _ in range(2):
        mark = wire.mark()
        channel = wire.comms[chat.comm.comm_id]
        channel.handle_msg(
            {"content": {"comm_id": channel.comm_id, "data": {"method": "request_state"}}, "buffers": []}
        )
        state = wire.sent[-1].data["state"]
        assert len(state["_history"]) == SCREEN_MESSAGES
        mirror = Mirror(state["_history"], missing=state["_older"]["count"])
        fetch_older(chat, mirror)
        assert len(mirror.finished) == COUNT
        conversation_bytes = sum(s.nbytes for s in wire.since(mark)) - len(json_packer(state["_esm"]))
        assert conversation_bytes < whole * 1.05


def test_a_sync_from_the_newest_messages_knows_where_they_are(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(COUNT)))
    history, missing = opening_state(chat)
    mark = wire.mark()
    wire.comms[chat.comm.comm_id].handle({"type": "sync", "have": missing + len(history), "last": history[-1]["id"]})
    [snapshot] = [s.data["content"] for s in wire.since(mark)]
    assert snapshot == {"type": "snapshot", "from": COUNT, "finished": [], "live": []}


def test_a_view_whose_copy_is_not_the_kernels_starts_again_from_the_newest(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(COUNT)))
    channel = wire.comms[chat.comm.comm_id]
    mark = wire.mark()
    channel.handle({"type": "sync", "have": 7, "last": "msg_not_ours"})
    channel.handle({"type": "older", "at": 5, "before": "msg_not_ours"})
    snapshots = [s.data["content"] for s in wire.since(mark)]
    for snapshot in snapshots:
        assert snapshot["type"] == "snapshot"
        assert snapshot["fresh"] is True
        assert snapshot["from"] == COUNT - SCREEN_MESSAGES
        assert len(snapshot["finished"]) == SCREEN_MESSAGES
    mirror = Mirror([{"id": "msg_not_ours"}], missing=6)
    mirror.apply(snapshots[0])
    fetch_older(chat, mirror)
    assert mirror.finished == json.loads(json_packer(chat._history))


def test_older_is_validated(wire: Wire) -> None:
    chat = ChatWidget(ChatSession(ScriptedTransport([]), messages=conversation(10)))
    channel = wire.comms[chat.comm.comm_id]
    for bad in (
        {"type": "older", "at": 0, "before": "x"},
        {"type": "older", "at": "3", "before": "x"},
        {"type": "older"},
    ):
        mark = wire.mark()
        channel.handle(bad)
        [error] = [s.data["content"] for s in wire.since(mark)]
        assert error["type"] == "error"
        assert "older" in error["message"]


async def test_a_turn_streaming_while_the_earlier_chunks_arrive_shows_right(wire: Wire) -> None:
    transport = ScriptedTransport([ScriptedReply(text="streamed " * 200)], delay=0.001, slice_size=(3, 9))
    chat = ChatWidget(ChatSession(transport, messages=conversation(COUNT)), flush_interval=0.005)
    history, missing = opening_state(chat)
    mirror = Mirror(history, missing=missing)
    channel = wire.comms[chat.comm.comm_id]
    mark = wire.mark()
    channel.handle({"type": "sync", "have": missing + len(history), "last": history[-1]["id"]})
    chat.send("a new question")
    await wait_for(lambda: chat.session.busy)
    chunks = 0
    while mirror.missing:
        # One chunk at a time between the turn's patches, as a front end asks while a reply streams.
        for sent in wire.since(mark):
            if sent.comm_id == chat.comm.comm_id and sent.data.get("method") == "custom":
                mirror.apply(sent.data["content"])
        mark = wire.mark()
        channel.handle({"type": "older", "at": mirror.missing, "before": mirror.finished[0]["id"]})
        chunks += 1
        await asyncio.sleep(0.003)
    await wait_for(lambda: not chat.session.busy)
    for sent in wire.since(mark):
        if sent.comm_id == chat.comm.comm_id and sent.data.get("method") == "custom":
            mirror.apply(sent.data["content"])
    assert chunks >= 2
    assert mirror.finished == json.loads(json_packer(chat._history))
    assert len(mirror.finished) == COUNT + 2
    assert mirror.finished[-1]["parts"][0]["text"] == "streamed " * 200
    assert not mirror.live
