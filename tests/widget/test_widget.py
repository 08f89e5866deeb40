"""ChatWidget in-process, with a recording comm in place of the kernel's (the protocol of docs/protocol.md)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jupyter_client.session import json_packer

from ai_widgets import (
    CancelError,
    ChatSession,
    Message,
    MessageStatus,
    SessionOptions,
    ToolInvocation,
    ToolOutcome,
    ToolRisk,
    UnknownToolCallError,
    tool,
)
from ai_widgets.changes import MessageAdded, MessageFinished, MessageUpdated, ToolCallUpdated
from ai_widgets.messages import ReasoningPart, Role, TextPart, ToolCallPart, ToolCallState, load_messages
from ai_widgets.session import HistoryTakenOverError
from ai_widgets.transports import ProviderError, ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget, FrontEndNotBuiltError
from ai_widgets.widget._help import TROUBLESHOOTING
from ai_widgets.widget._serialize import CYCLE, MAX_SHOWN_DEPTH, TOO_DEEP, message_dict, outcome_dict, shown_json
from tests.helpers import wait_for
from tests.widget.widget_harness import Mirror, Wire, finished_messages


def feed_mirror(wire: Wire, widget: ChatWidget, mirror: Mirror, start: int = 0) -> int:
    contents = wire.custom(widget.comm.comm_id)
    for content in contents[start:]:
        mirror.apply(content)
    return len(contents)


@tool(icon="🌦", title="Weather")
def get_weather(city: str) -> dict[str, Any]:
    """Gets the weather."""
    return {"city": city, "sky": "sunny"}


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


def weather_script() -> ScriptedTransport:
    return ScriptedTransport(
        [
            ScriptedReply(
                text="Let me look. ", tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"})]
            ),
            lambda r: f"It is {r.tool_results()[0].outcome.value['sky']}.",  # type: ignore[union-attr]
        ],
        slice_size=(1, 3),
    )


async def test_patches_rebuild_exactly_the_finished_message(wire: Wire) -> None:
    chat = ChatWidget(transport=weather_script(), tools=[get_weather], flush_interval=0.005)
    mirror = Mirror()
    reply = await chat.ask("weather?")
    feed_mirror(wire, chat, mirror)
    user, final = finished_messages(chat)
    assert user["role"] == "user"
    assert user["parts"] == [{"kind": "text", "text": "weather?"}]
    assert final == message_dict(reply, 1)
    assert mirror.ended[reply.id] == final  # the live copy, built from patches alone, matches
    assert mirror.finished == [user, final]  # and each finished message came once, in a "finish" op
    assert mirror.live == {}
    assert final["parts"][1]["parsed_arguments"] == {"city": "Lisbon"}
    assert final["parts"][1]["outcome"]["value"] == {"city": "Lisbon", "sky": "sunny"}
    assert chat._tools["get_weather"] == {
        "title": "Weather",
        "icon": "🌦",
        "risk": "normal",
        "description": "Gets the weather.",
        "requires_approval": False,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
    assert chat._usage["requests"] == 2
    assert chat._busy is False
    assert chat._kernel_mode == "none"


async def test_deltas_are_coalesced_to_about_thirty_flushes_a_second(wire: Wire) -> None:
    transport = ScriptedTransport([ScriptedReply(text="x" * 3000, status=None)], delay=0.001, slice_size=(4, 8))
    chat = ChatWidget(transport=transport)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await chat.ask("stream")
    elapsed = loop.time() - started
    patches = [c for c in wire.custom(chat.comm.comm_id) if c["type"] == "patch"]
    deltas = 3000 // 6
    assert len(patches) <= elapsed * 30 + 4, (len(patches), elapsed)
    assert len(patches) < deltas / 4


async def conversation_of(n: int) -> list[Message]:
    session = ChatSession(ScriptedTransport(["earlier reply " * 20], repeat=True))
    for i in range(n // 2):
        await session.send(f"earlier question {i}")
    return session.messages


def finish_ops(sent: list[Any]) -> list[list[Any]]:
    patches = [s.data["content"] for s in sent if s.data.get("method") == "custom"]
    return [op for c in patches if c["type"] == "patch" for op in c["ops"] if op[0] == "finish"]


async def measure_turn(wire: Wire, earlier: int) -> tuple[float, int, int]:
    """Bytes per streamed delta, bytes to finish the turn's two messages, and every other byte of the turn (state
    updates), after ``earlier`` messages."""
    history = await conversation_of(earlier)
    transport = ScriptedTransport([ScriptedReply(text="y" * 2000, status=None)], slice_size=(4, 8))
    chat = ChatWidget(ChatSession(transport, messages=history), flush_interval=0)
    assert len(finished_messages(chat)) == earlier
    mark = wire.mark()
    await chat.ask("now")
    sent = wire.since(mark)
    finishes = finish_ops(sent)
    assert [op[1] for op in finishes] == [earlier, earlier + 1]
    assert len(finished_messages(chat)) == earlier + 2
    finish_bytes = sum(len(json_packer(op)) for op in finishes)
    patch_bytes = sum(s.nbytes for s in sent if s.data.get("method") == "custom") - finish_bytes
    other_bytes = sum(s.nbytes for s in sent if s.data.get("method") != "custom")
    return patch_bytes / (2000 / 6), finish_bytes, other_bytes


async def test_bytes_per_delta_and_per_finish_are_flat_from_10_to_500_messages(wire: Wire) -> None:
    delta_10, finish_10, other_10 = await measure_turn(wire, 10)
    delta_500, finish_500, other_500 = await measure_turn(wire, 500)
    # A delta costs its text plus a small envelope, whatever the conversation's length...
    assert delta_10 < 200, delta_10
    assert delta_500 <= delta_10 * 1.1 + 2, (delta_10, delta_500)
    # ...finishing two messages sends those two messages, not the conversation...
    assert finish_10 < 2000 + 3000, finish_10
    assert finish_500 <= finish_10 * 1.1 + 50, (finish_10, finish_500)
    # ...and no trait update carries the conversation either (busy, usage: a few hundred bytes).
    assert other_10 < 1500, other_10
    assert other_500 <= other_10 * 1.1 + 50, (other_10, other_500)


async def test_a_view_opened_mid_stream_catches_up(wire: Wire) -> None:
    transport = ScriptedTransport(
        [
            ScriptedReply(
                text="a" * 400, tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Oslo" * 50})]
            ),
            "done",
        ],
        delay=0.001,
        slice_size=(2, 4),
    )
    chat = ChatWidget(transport=transport, tools=[get_weather], flush_interval=0.01)
    task = asyncio.create_task(chat.ask("go"))
    await wait_for(lambda: len(chat.session.messages) == 2 and len(chat.session.messages[1].text) > 100)
    late = Mirror(finished_messages(chat))  # a new page: the state the kernel sends it, then its sync
    assert [m["role"] for m in late.finished] == ["user"]
    mark = len(wire.custom(chat.comm.comm_id))
    wire.comms[chat.comm.comm_id].handle({"type": "sync", "have": 1, "last": late.finished[0]["id"]})
    reply = await task
    contents = wire.custom(chat.comm.comm_id)[mark:]
    for content in contents:
        late.apply(content)
    assert late.ended[reply.id] == message_dict(reply, 1)
    assert late.finished == finished_messages(chat)
    snapshot = next(c for c in contents if c["type"] == "snapshot")
    assert (snapshot["from"], snapshot["finished"]) == (1, [])  # it had the user's message: not sent again


async def test_a_view_that_missed_finished_messages_gets_them_in_its_snapshot(wire: Wire) -> None:
    # marimo replays a model's state as it was opened (finished messages come as ops, which it does not replay);
    # a view that missed ops (no view was listening, a clear) asks for what it lacks.
    transport = ScriptedTransport(["one", "two", "three"])
    chat = ChatWidget(transport=transport)
    opened = finished_messages(chat)
    await chat.ask("first")
    await chat.ask("second")
    front = wire.comms[chat.comm.comm_id]

    def snapshot_for(sync: dict[str, Any]) -> dict[str, Any]:
        front.handle({"type": "sync", **sync})
        content = wire.custom(chat.comm.comm_id)[-1]
        assert content["type"] == "snapshot"
        return content

    everything = finished_messages(chat)
    assert len(everything) == 4
    stale = Mirror(opened)
    stale.apply(snapshot_for({"have": 0}))
    assert stale.finished == everything
    partial = snapshot_for({"have": 2, "last": everything[1]["id"]})
    assert (partial["from"], partial["finished"]) == (2, everything[2:])
    # What the view holds is not a prefix of the conversation (it missed a clear): it gets all of it.
    chat.clear()
    await chat.ask("third")
    after_clear = Mirror(everything)
    after_clear.apply(snapshot_for({"have": 2, "last": everything[1]["id"]}))
    assert after_clear.finished == finished_messages(chat)
    assert [m["parts"][0]["text"] for m in after_clear.finished] == ["third", "three"]
    assert snapshot_for({"have": 9, "last": "x"})["from"] == 0


async def test_malformed_front_end_messages_get_an_error_and_change_nothing(wire: Wire) -> None:
    chat = ChatWidget(transport=weather_script(), tools=[get_weather])
    front = wire.comms[chat.comm.comm_id]
    bad: list[Any] = [
        "not an object",
        {"type": "launch_missiles"},
        {"type": "send"},
        {"type": "send", "text": ""},
        {"type": "send", "text": 42},
        {"type": "approve", "tool_call_id": "x", "decision": "maybe"},
        {"type": "stop", "extra": 1},
    ]
    for content in bad:
        front.handle(content)
    errors = [c["message"] for c in wire.custom(chat.comm.comm_id) if c["type"] == "error"]
    assert len(errors) == len(bad)
    assert "must be an object" in errors[0]
    assert "launch_missiles" in errors[1]
    assert "text: Field required" in errors[2]
    assert "decision" in errors[5]
    front.handle({"type": "approve", "tool_call_id": "ghost", "decision": "approved"})
    assert "no tool call 'ghost'" in wire.custom(chat.comm.comm_id)[-1]["message"]
    assert chat.session.messages == []
    assert chat._history == []


async def test_actions_drive_the_session(wire: Wire) -> None:
    transport = ScriptedTransport(
        [
            ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "a"})]),
            "Deleted.",
            ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "b"})]),
            "Deleted again.",
        ]
    )
    chat = ChatWidget(transport=transport, tools=[delete_file])
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "send", "text": "delete a"})
    await wait_for(lambda: bool(chat.session.pending_approvals))
    assert chat._busy
    front.handle({"type": "send", "text": "interleave?"})  # steers: delivered after the round's result
    await wait_for(lambda: [q["text"] for q in chat._queued] == ["interleave?"])
    call_id = chat.session.pending_approvals[0].tool_call_id
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved_always"})
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved"})
    assert "already decided" in wire.custom(chat.comm.comm_id)[-1]["message"]
    await wait_for(lambda: not chat._busy)
    assert chat._allowed_always == ["delete_file"]
    front.handle({"type": "revoke", "tool_name": "delete_file"})
    assert chat._allowed_always == []
    front.handle({"type": "send", "text": "delete b"})
    await wait_for(lambda: bool(chat.session.pending_approvals))
    front.handle({"type": "stop"})
    await wait_for(lambda: not chat._busy)
    assert chat.session.messages[-1].status is MessageStatus.CANCELLED
    assert [m["role"] for m in finished_messages(chat)] == ["user", "assistant"] * 3
    assert [m.text for m in chat.session.messages][2:4] == ["interleave?", "Deleted."]


async def test_continue_after_the_limit(wire: Wire) -> None:
    transport = ScriptedTransport(
        [
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "A"})]),
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "B"})]),
            "Finally.",
        ]
    )
    chat = ChatWidget(transport=transport, tools=[get_weather], options=SessionOptions(max_iterations=1))
    reply = await chat.ask("go")
    assert reply.status is MessageStatus.LIMIT_REACHED
    wire.comms[chat.comm.comm_id].handle({"type": "continue"})
    await wait_for(lambda: chat.session.messages[-1].text == "Finally." and not chat._busy)


async def test_a_replys_error_reaches_the_view_with_its_kind_and_its_troubleshooting_link(wire: Wire) -> None:
    """Before: every error showed twice, inline with Retry and in a banner offering Continue (after a connection
    failure, the wrong action). The reply now carries its kind, which the view's one inline error turns into the
    action that fits (Retry after a failure, Continue after a limit), and the troubleshooting page's entry for it."""
    transport = ScriptedTransport(
        [
            ScriptedReply(error=ProviderError("Could not reach the server at http://127.0.0.1:9")),
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "A"})]),
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "B"})]),
        ]
    )
    chat = ChatWidget(transport=transport, tools=[get_weather], options=SessionOptions(max_iterations=1))
    failed = await chat.ask("hi", show=False)
    paused = await chat.ask("go", show=False)
    failed_shown, paused_shown = [m for m in finished_messages(chat) if m["role"] == "assistant"]
    assert (failed_shown["status"], failed_shown["error_kind"]) == ("error", "request")
    assert failed_shown["error_help"] == f"{TROUBLESHOOTING}#providererror"
    assert (paused_shown["status"], paused_shown["error_kind"]) == ("limit_reached", "max_iterations")
    assert paused_shown["error_help"] == f"{TROUBLESHOOTING}#max-iterations"
    assert (failed.status, paused.status) == (MessageStatus.ERROR, MessageStatus.LIMIT_REACHED)
    assert message_dict(Message(Role.ASSISTANT), 0)["error_help"] is None  # no error, no link


async def test_values_a_kernel_cannot_send_are_made_safe(wire: Wire) -> None:
    @tool
    def odd() -> dict[str, Any]:
        """Returns odd values."""
        return {"inf": float("inf"), "nan": float("nan"), "text": "lone \ud800 surrogate"}

    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="odd")]), "ok"])
    chat = ChatWidget(transport=transport, tools=[odd])
    await chat.ask("odd")
    value = finished_messages(chat)[1]["parts"][0]["outcome"]["value"]
    assert value == {"inf": None, "nan": None, "text": "lone \ufffd surrogate"}


async def test_registry_changes_reach_the_cards(wire: Wire) -> None:
    chat = ChatWidget(transport=weather_script(), tools=[get_weather])

    @tool(name="get_weather", icon="☀️", risk="read_only")
    def better_weather(city: str) -> str:
        """Better weather."""
        return "sun"

    chat.session.tools.register(better_weather)
    assert chat._tools["get_weather"]["icon"] == "☀️"
    assert chat._tools["get_weather"]["risk"] == "read_only"


async def test_api_keys_never_reach_the_front_end(wire: Wire) -> None:
    secret = "sk-ant-" + "api03-THIS-KEY-MUST-NOT-LEAK-0123456789"

    class KeyedTransport(ScriptedTransport):
        api_key = secret

    chat = ChatWidget(transport=KeyedTransport(["hello"]))
    await chat.ask("hi")
    assert all(secret not in str(s.data) for s in wire.sent)


def test_markdown_for_front_ends_without_widgets(wire: Wire) -> None:
    session = ChatSession(ScriptedTransport([]), messages=[Message.user("hi"), Message.user("again")])
    session.messages[1].parts.append(TextPart(" there"))
    chat = ChatWidget(session)
    data, _ = chat._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/markdown"] == chat.transcript()
    assert "**You**\n\nhi" in data["text/markdown"]


def test_widget_needs_its_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import ai_widgets.widget._view as view_module

    monkeypatch.setattr(view_module, "ESM", tmp_path / "missing.js")
    with pytest.raises(FrontEndNotBuiltError, match="npm --prefix js ci"):
        ChatWidget(transport=ScriptedTransport([]))


def test_widget_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="needs a session"):
        ChatWidget()
    session = ChatSession(ScriptedTransport([]))
    with pytest.raises(TypeError, match="not both"):
        ChatWidget(session, tools=[get_weather])


def test_send_checks_its_input(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["x"]))
    with pytest.raises(ValueError, match="non-empty"):
        chat.send("  ")


async def test_send_takes_text_only_and_the_widgets_own_messages_never_pass_through_it(wire: Wire) -> None:
    """ChatWidget.send is the person's message; ipywidgets' ``Widget.send(content, buffers)`` of the same name is
    not reachable through it (a dict went to the front end as a custom message), and the widget's own messages
    (patches, snapshots, errors, ipywidgets' focus) go their own way."""
    chat = ChatWidget(transport=ScriptedTransport(["Hi."]))
    before = len(wire.custom(chat.comm.comm_id))
    for value in ({"type": "snapshot", "finished": []}, b"hello", None, ["hi"]):
        with pytest.raises(TypeError, match=r"send\(\) takes the person's message as text, not"):
            chat.send(value)  # type: ignore[arg-type]
    assert len(wire.custom(chat.comm.comm_id)) == before  # nothing reached the front end
    assert not chat.session.busy
    sent_through_it: list[object] = []
    original = ChatWidget.send

    def spy(self: ChatWidget, *args: Any, **kwargs: Any) -> Any:
        sent_through_it.append(args)
        return original(self, *args, **kwargs)

    chat.send = spy.__get__(chat)  # type: ignore[method-assign]
    chat.focus()  # ipywidgets' own custom message
    assert wire.custom(chat.comm.comm_id)[-1] == {"do": "focus"}
    assert (await chat.ask("hello", show=False)).text == "Hi."
    wire.comms[chat.comm.comm_id].handle({"type": "bogus"})  # a malformed action from the view: an error back
    assert wire.custom(chat.comm.comm_id)[-1]["type"] == "error"
    assert any(content.get("type") == "patch" for content in wire.custom(chat.comm.comm_id))
    assert sent_through_it == []


async def test_what_send_returns_is_a_future_a_cell_can_await(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["One.", "Two.", "Three."]))
    reply = await chat.send("first")  # waits for the reply
    assert isinstance(reply, Message)
    assert reply.text == "One."
    future = chat.send("second")
    assert isinstance(future, concurrent.futures.Future)  # what it offered before: result(timeout), callbacks
    assert (await asyncio.get_running_loop().run_in_executor(None, future.result, 5)).text == "Two."
    assert future.done()
    assert (await future).text == "Two."  # a finished one too
    waiting = asyncio.ensure_future(_awaited(chat.send("third")))
    assert (await asyncio.wait_for(waiting, 5)).text == "Three."


async def test_what_send_returns_shows_nothing_as_a_cells_last_expression(wire: Wire) -> None:
    """Before: ``chat.send(...)`` as a cell's last expression showed ``<ReplyFuture at 0x… state=pending>`` under the
    cell (in Voilà's page too). Jupyter's display formatter (Voilà and VS Code use the kernel's) and marimo's
    ``_display_`` now get nothing to show; ``repr`` still says what it is, for print and a debugger."""
    from IPython.core.formatters import DisplayFormatter

    chat = ChatWidget(transport=ScriptedTransport(["One."]))
    future = chat.send("first")
    assert DisplayFormatter().format(future) == ({}, {})
    assert future._display_() is None  # marimo shows a None as nothing
    assert "ReplyFuture" in repr(future)
    assert (await future).text == "One."
    assert DisplayFormatter().format(future) == ({}, {})


async def _awaited(future: Any) -> Message:
    reply: Message = await future
    return reply


async def test_cancelling_the_await_of_a_sent_turn_stops_the_turn(wire: Wire) -> None:
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="write_note", arguments={"path": "b.txt"})]), "Done."]
    )
    chat = ChatWidget(transport=transport, tools=[write_note])
    waiting = asyncio.ensure_future(_awaited(chat.send("write")))
    await asyncio.sleep(0)  # the await has begun (the turn may reach its question before this loop runs again)
    await wait_for(lambda: bool(chat.session.pending_approvals))
    waiting.cancel()
    await wait_for(lambda: not chat.session.busy)
    assert chat.session.messages[-1].status is MessageStatus.CANCELLED


async def test_the_chat_takes_the_persons_decisions_like_its_session(wire: Wire) -> None:
    """approve, cancel and respond are sync, as on the session; edit, regenerate and resume start a turn and return
    at once, like send, with the same awaitable future of the reply."""
    transport = ScriptedTransport(
        [
            ScriptedReply(tool_calls=[ScriptedToolCall(name="write_note", arguments={"path": "a"}, id="w1")]),
            "Wrote a.",
            ScriptedReply(tool_calls=[ScriptedToolCall(name="write_note", arguments={"path": "b"}, id="w2")]),
            "Not written.",
            "Regenerated.",
            "Edited.",
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "A"})]),
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "B"})]),
            "Resumed.",
        ]
    )
    chat = ChatWidget(transport=transport, tools=[write_note, get_weather], options=SessionOptions(max_iterations=1))
    first = chat.send("write a")
    await wait_for(lambda: bool(chat.session.pending_approvals))
    assert chat.approve("w1", "approved") is None
    assert (await first).text == "Wrote a."
    second = chat.send("write b")
    await wait_for(lambda: bool(chat.session.pending_approvals))
    assert chat.cancel("w2", "changed my mind") is None
    assert (await second).tool_calls[0].state is ToolCallState.CANCELLED
    with pytest.raises(UnknownToolCallError):
        chat.approve("ghost", "approved")
    with pytest.raises(UnknownToolCallError):
        chat.respond("ghost", "accept", {})
    with pytest.raises(CancelError):
        chat.cancel("w2")
    regenerated = chat.regenerate()
    assert isinstance(regenerated, concurrent.futures.Future)
    assert (await regenerated).text == "Regenerated."
    user = chat.messages[-2]
    assert (await chat.edit(user.id, "write c")).text == "Edited."
    edited = chat.messages[-2]
    assert chat.session.branches(edited.id).count == 2
    assert chat.switch_branch(edited.id, 0).active == 0
    assert chat.messages[-2].text == "write b"
    assert chat.switch_branch(chat.messages[-2].id, 1).active == 1
    assert chat.messages[-2] is edited
    with pytest.raises(ValueError, match="non-empty"):
        chat.edit(user.id, " ")
    limited = await chat.send("weather")
    assert limited.status is MessageStatus.LIMIT_REACHED
    assert (await chat.resume()).text == "Resumed."


async def test_clear_empties_the_history_with_one_small_op(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["one", "two"]))
    mirror = Mirror(finished_messages(chat))
    await chat.ask("first")
    assert len(finished_messages(chat)) == 2
    mark = wire.mark()
    chat.clear()
    assert finished_messages(chat) == []
    sent = wire.since(mark)
    assert [s.data["content"] for s in sent if s.data.get("method") == "custom"] == [
        {"type": "patch", "ops": [["clear"]]}
    ]
    assert not any("_history" in s.data.get("state", {}) for s in sent)  # the clear op empties every view's copy
    await chat.ask("second")
    assert [m["parts"][0]["text"] for m in finished_messages(chat)] == ["second", "two"]
    assert [m["index"] for m in finished_messages(chat)] == [0, 1]
    feed_mirror(wire, chat, mirror)
    assert mirror.finished == finished_messages(chat)


def test_a_session_with_history_opens_with_it(wire: Wire) -> None:
    session = ChatSession(ScriptedTransport([]), messages=[Message.user("hi"), Message.user("again")])
    chat = ChatWidget(session)
    (opened,) = [s for s in wire.sent if s.msg_type == "comm_open" and s.comm_id == chat.comm.comm_id]
    assert [m["parts"][0]["text"] for m in opened.data["state"]["_history"]] == ["hi", "again"]
    assert opened.data["state"]["_live"] == []  # the kernel leaves it to the views (saved state)
    assert wire.custom(chat.comm.comm_id) == []  # nothing else to send: the state has it


# --- values no input may make unsendable -------------------------------------------------------------------------


def nested(depth: int, leaf: Any = "bottom") -> Any:
    """``depth`` levels of ``{"k": ...}`` (built without recursion)."""
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def levels(value: Any) -> tuple[int, Any]:
    """How many ``{"k": ...}`` levels ``value`` has, and what is at the bottom."""
    count = 0
    while isinstance(value, dict):
        value, count = value["k"], count + 1
    return count, value


async def test_values_thousands_of_levels_deep_reach_the_view_and_the_notebook(wire: Wire) -> None:
    # Values the core refuses today (deeper than 200 levels) can still come from an old dump or a provider: the
    # widget shows them, cut at MAX_SHOWN_DEPTH levels, and never fails.
    chat = ChatWidget(transport=ScriptedTransport([]))
    ran = ToolCallPart("call_deep", "get_weather", '{"city": "Lisbon"}')
    failed = ToolCallPart("call_failed", "get_weather", '{"city": "Oslo"}')
    message = Message(Role.ASSISTANT, [ran, failed], status=MessageStatus.IN_PROGRESS)
    bridge = chat._bridge
    bridge.observe(MessageAdded(message))
    ran.edited_arguments = nested(2000)
    for part in (ran, failed):
        part.move(ToolCallState.PENDING)
        part.move(ToolCallState.RUNNING)
        bridge.observe(ToolCallUpdated(message, part))
    ran.finish(ToolCallState.COMPLETED, ToolOutcome(status="success", value=nested(3000, float("nan"))))
    failed.finish(ToolCallState.FAILED, ToolOutcome(status="failure", message="bad", value=[nested(2000, "\ud800")]))
    for part in (ran, failed):
        bridge.observe(ToolCallUpdated(message, part))
    message.status = MessageStatus.COMPLETED
    bridge.observe(MessageUpdated(message))
    bridge.observe(MessageFinished(message))

    (shown,) = finished_messages(chat)  # every message went through the kernel's JSON packer (the harness)
    json.dumps(shown, ensure_ascii=False, allow_nan=False).encode("utf-8")
    mirror = Mirror()
    feed_mirror(wire, chat, mirror)
    assert mirror.ended[message.id] == shown  # the live copy, from patches, is the same
    first, second = shown["parts"]
    assert levels(first["outcome"]["value"]) == (MAX_SHOWN_DEPTH, TOO_DEEP)
    assert levels(first["edited_arguments"]) == (MAX_SHOWN_DEPTH, TOO_DEEP)
    assert first["approval_requested_at"] is None
    assert levels(second["outcome"]["value"][0]) == (MAX_SHOWN_DEPTH - 1, TOO_DEEP)  # the list is a level
    assert shown_json(nested(10, float("inf"))) == nested(10, None)
    assert shown_json([nested(5, "\udc80x")]) == [nested(5, "\ufffdx")]


def test_the_serialiser_never_raises() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    cyclic: dict[str, Any] = {"x": [1]}
    cyclic["self"] = cyclic
    cyclic["x"].append(cyclic)
    shared = [1, 2]
    value = {
        "cyclic": cyclic,
        "shared": [shared, shared],
        1: b"\xff",
        None: float("-inf"),
        "big": 10**5000,
        "odd": Unprintable(),
        "tuple": (1, (2,)),
        "lone \udc00": "\ud83d",
    }
    shown = shown_json(value)
    json.dumps(shown, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert shown["cyclic"] == {"x": [1, CYCLE], "self": CYCLE}
    assert shown["shared"] == [[1, 2], [1, 2]]  # shared is not a cycle
    assert shown["1"] == "b'\\xff'"
    assert shown["null"] is None
    assert shown["big"].startswith("…")
    assert shown["odd"] == "<Unprintable>"
    assert shown["tuple"] == [1, [2]]
    assert shown["lone \ufffd"] == "\ufffd"


def test_shown_json_limits_for_a_large_result_keep_the_first_items_and_say_what_was_left_out() -> None:
    more = "more characters not shown here"
    assert shown_json(["a" * 10, "b" * 10, "c"], max_chars=15) == [
        "a" * 10,
        f"bbbbb… (5 {more})",
        "… (1 more character not shown here)",
    ]
    # The first items get the budget first, however deep they are.
    rows = [{"k": "x" * 10}, {"k": "y" * 10}]
    assert shown_json(rows, max_chars=10) == [{"k": "x" * 10}, {"k": f"… (10 {more})"}]
    assert shown_json("z" * 20, max_chars=5) == f"zzzzz… (15 {more})"
    assert shown_json(list(range(5)), max_items_each=3) == [0, 1, 2, "… (2 more items not shown here)"]
    assert shown_json({"a": 1, "b": 2, "c": 3}, max_items_each=2) == {
        "a": 1,
        "b": 2,
        "…": "… (1 more key not shown here)",
    }
    assert shown_json([[1, 2, 3]] * 2, max_items_each=2) == [[1, 2, "… (1 more item not shown here)"]] * 2
    assert shown_json(["x" * 10]) == ["x" * 10]  # no limits unless asked


async def test_streamed_arguments_deeper_than_shown_match_the_finished_message(wire: Wire) -> None:
    @tool
    def echo(data: Any) -> Any:
        """Returns its argument."""
        return data

    deep = nested(150, 7)
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="echo", arguments={"data": deep})]), "ok"],
        slice_size=(5, 40),
    )
    chat = ChatWidget(transport=transport, tools=[echo], flush_interval=0.001)
    reply = await chat.ask("echo")
    mirror = Mirror()
    feed_mirror(wire, chat, mirror)
    shown = finished_messages(chat)[1]
    assert mirror.ended[reply.id] == shown == message_dict(reply, 1)
    call = shown["parts"][0]
    assert call["state"] == "completed"
    assert levels(call["parsed_arguments"]["data"]) == (MAX_SHOWN_DEPTH - 1, TOO_DEEP)
    assert levels(call["outcome"]["value"]) == (MAX_SHOWN_DEPTH, TOO_DEEP)
    assert reply.tool_calls[0].parsed_arguments == {"data": deep}  # the session keeps the whole value


async def test_provider_data_never_reaches_the_front_end(wire: Wire) -> None:
    secret = {"encrypted_content": "OPAQUE-PROVIDER-BLOB", "signature": "SIG-0123456789"}
    earlier = Message(
        Role.ASSISTANT,
        [
            ReasoningPart("thinking", provider="anthropic", provider_data=secret),
            TextPart("hello", provider="openai", provider_data=secret),
        ],
    )
    call = ToolCallPart(
        "call_p", "web_search", "{}", provider_executed=True, provider="anthropic", provider_data=secret
    )
    call.finish(ToolCallState.COMPLETED, ToolOutcome.success({"hits": 3}))
    earlier.parts.append(call)
    chat = ChatWidget(ChatSession(weather_script(), tools=[get_weather], messages=[Message.user("hi"), earlier]))
    live = ToolCallPart("call_live", "get_weather", "{}", provider="anthropic", provider_data=secret)
    message = Message(Role.ASSISTANT, [live], status=MessageStatus.IN_PROGRESS)
    chat._bridge.observe(MessageAdded(message))
    chat._bridge.observe(ToolCallUpdated(message, live))
    await chat.ask("weather?")
    sent = json.dumps([s.data for s in wire.sent], ensure_ascii=False)
    assert "OPAQUE-PROVIDER-BLOB" not in sent
    assert "SIG-0123456789" not in sent
    assert "provider_data" not in sent
    assert '"provider"' not in sent
    assert finished_messages(chat)[1]["parts"][2]["provider_executed"] is True


# --- front-end actions ---------------------------------------------------------------------------------------------


async def test_errors_echo_at_most_a_clipped_value(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport([]))
    front = wire.comms[chat.comm.comm_id]
    huge = "x" * 1_000_000
    deep: Any = [1]
    for _ in range(500):
        deep = [deep]
    bad: list[Any] = [
        {"type": huge},
        {"type": [huge] * 10},
        {"type": deep},
        {"type": "approve", "tool_call_id": huge, "decision": huge, "reason": huge},
        {"type": "send", "text": "hi", **{f"{huge[:5000]}{i}": huge for i in range(100)}},
        {"type": "cancel", "tool_call_id": "c", "reason": huge},
    ]
    mark = wire.mark()
    for content in bad:
        front.handle(content)
    replies = [s for s in wire.since(mark) if s.data.get("method") == "custom"]
    assert len(replies) == len(bad)
    assert all(s.nbytes < 1_500 for s in replies), [s.nbytes for s in replies]
    errors = [s.data["content"]["message"] for s in replies]
    assert errors[0].startswith("unknown front-end message type 'xxx")
    assert "…" in errors[0]
    assert errors[0].count("x") < 200
    assert "and 95 more" in errors[4]
    assert "reason" in errors[5]


@tool(risk=ToolRisk.DESTRUCTIVE)
def write_note(path: str, text: str = "") -> str:
    """Writes a note."""
    return f"wrote {path}"


async def write_note_waiting(wire: Wire) -> tuple[ChatWidget, Any, asyncio.Task[Message], str]:
    """A chat whose turn waits for a decision on the model's write_note call (path a.txt): the chat, its front
    end's comm, the asking task and the call's id."""
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="write_note", arguments={"path": "a.txt"})]), "Done."]
    )
    chat = ChatWidget(transport=transport, tools=[write_note])
    turn = asyncio.create_task(chat.ask("write"))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    return chat, wire.comms[chat.comm.comm_id], turn, chat.session.pending_approvals[0].tool_call_id


async def test_approve_with_edited_arguments(wire: Wire) -> None:
    chat, front, turn, call_id = await write_note_waiting(wire)
    for arguments, problem in [({"text": "no path"}, "invalid"), ([1], "valid dictionary")]:
        front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved", "arguments": arguments})
        assert problem in wire.custom(chat.comm.comm_id)[-1]["message"]
    assert chat.session.pending_approvals  # nothing changed: it still waits
    edited = {"path": "b.txt", "text": "hello"}
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved", "arguments": edited})
    reply = await turn
    call = finished_messages(chat)[1]["parts"][0]
    assert call["parsed_arguments"] == {"path": "a.txt"}  # what the model sent...
    assert call["edited_arguments"] == edited  # ...and what the person made it
    assert call["outcome"]["value"] == "wrote b.txt"
    assert isinstance(call["approval_requested_at"], float)
    assert reply.tool_calls[0].edited_arguments == edited


async def test_the_transcript_and_the_export_show_the_edited_call_as_it_ran(wire: Wire, tmp_path: Path) -> None:
    chat, front, turn, call_id = await write_note_waiting(wire)
    # Allow always with an edit is refused with a message a person can act on; the call still waits.
    front.handle(
        {"type": "approve", "tool_call_id": call_id, "decision": "approved_always", "arguments": {"path": "b.txt"}}
    )
    assert "allowed once" in wire.custom(chat.comm.comm_id)[-1]["message"]
    assert chat.session.pending_approvals
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved", "arguments": {"path": "b.txt"}})
    await turn
    exported = chat.export(tmp_path / "x.md").read_text(encoding="utf-8")
    for text in (exported, chat.transcript()):
        line = next(line for line in text.splitlines() if "write_note" in line)
        # What ran comes first, said to be an edit, with what the model asked for after it.
        assert line.index("b.txt") < line.index("edited by the person") < line.index("a.txt"), line
        assert "wrote b.txt" in line


async def test_cancel_a_waiting_or_running_call(wire: Wire) -> None:
    release = threading.Event()

    @tool
    def slow(n: int) -> int:
        """Takes a while."""
        release.wait(5)
        return n

    transport = ScriptedTransport(
        [
            ScriptedReply(
                tool_calls=[
                    ScriptedToolCall(name="slow", arguments={"n": 1}, id="run"),
                    ScriptedToolCall(name="write_note", arguments={"path": "x"}, id="ask"),
                    ScriptedToolCall(name="slow", arguments={"n": 2}, id="keep"),
                ]
            ),
            "Done.",
        ]
    )
    chat = ChatWidget(transport=transport, tools=[slow, write_note])
    front = wire.comms[chat.comm.comm_id]
    turn = asyncio.create_task(chat.ask("go"))
    await wait_for(lambda: bool(chat.session.pending_approvals))
    calls = {p.tool_call_id: p for p in chat.session.messages[-1].tool_calls}
    await wait_for(lambda: calls["run"].state is ToolCallState.RUNNING)
    front.handle({"type": "cancel", "tool_call_id": "run", "reason": "too slow"})
    front.handle({"type": "cancel", "tool_call_id": "ask"})
    await wait_for(lambda: calls["run"].state.terminal and calls["ask"].state.terminal)
    front.handle({"type": "cancel", "tool_call_id": "run"})
    assert "Cancel refused" in wire.custom(chat.comm.comm_id)[-1]["message"]
    front.handle({"type": "cancel", "tool_call_id": "ghost"})
    assert "Cancel refused" in wire.custom(chat.comm.comm_id)[-1]["message"]
    front.handle({"type": "cancel"})
    assert "tool_call_id: Field required" in wire.custom(chat.comm.comm_id)[-1]["message"]
    release.set()
    reply = await turn
    assert reply.status is MessageStatus.COMPLETED
    states = {p["tool_call_id"]: p["state"] for p in finished_messages(chat)[1]["parts"] if p["kind"] == "tool_call"}
    assert states == {"run": "cancelled", "ask": "cancelled", "keep": "completed"}


def test_call_and_message_fields_follow_their_one_list() -> None:
    """`call` and `msg` ops carry exactly the fields their lists name, in order (the JS side checks its lists
    against these through the regenerated protocol fixture)."""
    from ai_widgets.messages import Message, Role, ToolCallPart
    from ai_widgets.widget._ops import WIRE_ORDER, to_wire
    from ai_widgets.widget._serialize import CALL_FIELDS, MESSAGE_FIELDS, call_fields, message_fields

    assert tuple(call_fields(ToolCallPart("c1", "t", "{}"))) == CALL_FIELDS
    assert tuple(message_fields(Message(Role.ASSISTANT))) == MESSAGE_FIELDS
    assert to_wire({"op": "text", "message_id": "m", "index": 2, "text": "hi"}) == ["text", "m", 2, "hi"]
    assert to_wire({"op": "clear"}) == ["clear"]
    assert set(WIRE_ORDER) == {"start", "msg", "part", "text", "answer", "args", "call", "finish", "clear", "cut"}


_TEXTS = ["", "x", "y" * 5_000, "z" * 300_000, "\udc80" * 10]
_BIG_TEXT = st.integers(0, len(_TEXTS) - 1).map(lambda i: _TEXTS[i])  # not sampled_from: its repr holds them
_BIG_KEYS = st.sampled_from(["a", "b", "k" * 1_000, "k" * 1_001, "\ud800"])
_BIG_LISTS = st.builds(lambda item, n: [item] * n, _BIG_TEXT | st.integers(), st.integers(0, 3_000))
_BIG_VALUES = st.recursive(
    st.none() | st.integers() | st.floats() | _BIG_TEXT | _BIG_LISTS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_BIG_KEYS, inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(value=_BIG_VALUES)
def test_a_results_shown_form_stays_small_whatever_the_value(value: Any) -> None:
    shown = outcome_dict(ToolOutcome.success(value))
    assert shown is not None
    size = len(json.dumps(shown, ensure_ascii=False, allow_nan=False))
    assert size < 1_500_000, size


async def test_history_tools_and_usage_mean_what_the_constructor_and_the_session_mean(
    wire: Wire, tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    chat = ChatWidget(transport=ScriptedTransport(["One."]), tools=[get_weather], history=path)
    assert chat.history == path  # the file given as history=
    assert chat.tools is chat.session.tools  # the ToolRegistry
    assert "get_weather" in chat.tools
    await chat.ask("first", show=False)
    assert chat.usage == chat.session.usage
    assert chat.usage.requests == 1
    chat.close()
    plain = ChatWidget(transport=ScriptedTransport([]))
    assert plain.history is None
    with pytest.raises(AttributeError):
        plain.history = tmp_path / "other.json"  # type: ignore[misc]
    # The synced state has other names: a user setting none of these changes what the front end shows.
    assert not {"history", "tools", "usage"} & set(plain.keys)


def test_only_a_users_settings_are_public_among_the_synced_traits() -> None:
    public = {name for name in ChatWidget.class_trait_names(sync=True) if not name.startswith("_")}
    own = public - set(ipywidgets.DOMWidget.class_trait_names(sync=True))
    assert own == {"suggestions", "collapse_tool_calls", "placeholder", "compact"}


async def test_a_chat_closes_with_close_or_aclose_and_releases_its_history_file(wire: Wire, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    chat = ChatWidget(transport=ScriptedTransport(["One."]), history=path)
    assert (await chat.ask("first", show=False)).text == "One."
    await chat.aclose()
    assert chat.comm is None
    assert [m.text for m in load_messages(path.read_text("utf-8"))] == ["first", "One."]  # the journal folded in
    with pytest.raises(HistoryTakenOverError, match="closed"):
        await chat.session.send("more")
    again = ChatWidget(transport=ScriptedTransport([]), history=path)
    assert [m.text for m in again.messages] == ["first", "One."]
    again.close()
    assert again.comm is None


async def test_a_chat_whose_history_file_was_taken_over_says_so_and_refuses_to_send(wire: Wire, tmp_path: Any) -> None:
    path = tmp_path / "chat.json"
    old = ChatWidget(transport=ScriptedTransport(["one"]), history=path)
    await old.ask("first", show=False)
    new = ChatWidget(transport=ScriptedTransport(["two"]), history=path)  # the cell, run again
    assert [m["parts"][0]["text"] for m in new._history] == ["first", "one"]
    (notice,) = [c["message"] for c in wire.custom(old.comm.comm_id) if c["type"] == "error"]
    assert str(path) in notice
    assert "took it over" in notice
    assert not [c for c in wire.custom(new.comm.comm_id) if c["type"] == "error"]
    wire.comms[old.comm.comm_id].handle({"type": "send", "text": "lost?"})
    await wait_for(lambda: "took it over" in wire.custom(old.comm.comm_id)[-1].get("message", ""))
    assert len(old.session.messages) == 2
    for show in (True, False):  # refused before any view of the turn is made
        with pytest.raises(HistoryTakenOverError, match="took it over"):
            await old.ask("lost too?", show=show)
        with pytest.raises(HistoryTakenOverError, match="took it over"):
            old.ask_sync("lost too?", show=show)
    assert len(old.session.messages) == 2
    await new.ask("second", show=False)
    new.close()  # writes the file whole and lets it go
    reopened = ChatSession(ScriptedTransport([]), history=path)
    assert [m.text for m in reopened.messages] == ["first", "one", "second", "two"]
    reopened.close()
    old.close()


async def test_a_notice_comes_again_in_each_snapshot_for_a_view_not_yet_listening(wire: Wire, tmp_path: Any) -> None:
    # In a page, the notice is sent while the old chat's view is still loading its code: no view hears it live.
    path = tmp_path / "chat.json"
    old = ChatWidget(transport=ScriptedTransport([]), history=path)
    new = ChatWidget(transport=ScriptedTransport([]), history=path)
    (live,) = [c for c in wire.custom(old.comm.comm_id) if c["type"] == "error"]
    assert live["notice"] == 0
    assert "took it over" in live["message"]
    wire.comms[old.comm.comm_id].handle({"type": "sync", "have": 0, "last": None})
    await wait_for(lambda: wire.custom(old.comm.comm_id)[-1]["type"] == "snapshot")
    assert wire.custom(old.comm.comm_id)[-1]["notices"] == [live["message"]]
    wire.comms[new.comm.comm_id].handle({"type": "sync", "have": 0, "last": None})
    await wait_for(lambda: wire.custom(new.comm.comm_id)[-1]["type"] == "snapshot")
    assert "notices" not in wire.custom(new.comm.comm_id)[-1]  # none: the snapshot is as it always was
    new.close()
    old.close()


# --- interrupts -------------------------------------------------------------------------------------------------------


def test_an_interrupt_reaches_every_watched_turn_even_if_one_loop_is_closing() -> None:
    """Defect: the SIGINT handler raised RuntimeError into whatever the main thread was running when a watched
    turn's loop closed between its check and its call, and the turns after it in the list were not stopped."""
    import signal

    from ai_widgets.widget._interrupts import IdleInterrupts

    class Closing(asyncio.SelectorEventLoop):
        def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("Event loop is closed")

    closing, live = Closing(), asyncio.new_event_loop()
    stopped: list[str] = []
    interrupts = IdleInterrupts()
    try:
        interrupts._watched = ((closing, lambda: stopped.append("closing")), (live, lambda: stopped.append("live")))
        interrupts._handle(signal.SIGINT, None)  # must not raise
        live.run_until_complete(asyncio.sleep(0))
        assert stopped == ["live"]
    finally:
        closing.close()
        live.close()


# --- a call's thread that returns what cannot be shown ----------------------------------------------------------------


class Unshowable:
    def __repr__(self) -> str:
        raise TypeError("no repr")


@tool
def returns_unshowable(invocation: ToolInvocation) -> object:
    """Returns, late, a value that cannot even be described."""
    time.sleep(0.1)
    return [Unshowable()]


async def test_a_late_value_that_cannot_be_described_still_ends_the_stopping_note(wire: Wire) -> None:
    """Defect: describing what a given-up call's thread returned raised (a value whose repr raises), the error was
    only logged, and the card said "stopping" for ever (a view that stopped mirroring also stayed subscribed)."""
    call = ScriptedToolCall(name="returns_unshowable", id="u1")
    transport = ScriptedTransport([ScriptedReply(tool_calls=[call]), "ok"])
    chat = ChatWidget(transport=transport, tools=[returns_unshowable], flush_interval=0.001)
    turn = asyncio.create_task(chat.ask("go", show=False))
    found = chat.session.tool_call
    await wait_for(lambda: (f := found("u1")) is not None and f.state.value == "running")
    wire.comms[chat.comm.comm_id].handle({"type": "cancel", "tool_call_id": "u1"})
    await turn

    def shown() -> dict[str, Any]:
        reply = finished_messages(chat)[1]
        return next(p for p in reply["parts"] if p.get("tool_call_id") == "u1")  # type: ignore[no-any-return]

    await wait_for(lambda: shown().get("late") is not None)
    assert shown()["stopping"] is False
    assert shown()["late"] == {"kind": "returned", "preview": "(a list that cannot be shown: TypeError)"}
    assert shown()["state"] == "cancelled"


# --- large results ----------------------------------------------------------------------------------------------------


# Each result is made by its test, not when the tests are collected: collected, the 300,000 rows would stay in
# memory (and in every garbage collection) for the rest of the run.
@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("text", lambda: "x" * 10_000_000),
        pytest.param(
            "value", lambda: [{"row": n, "name": f"name {n}" * 20} for n in range(300_000)], marks=pytest.mark.slow
        ),
        ("markdown", lambda: ToolOutcome.success(text="# Log\n" + "line\n" * 2_000_000)),
        ("failure", lambda: ToolOutcome.failure("E" * 5_000_000)),
    ],
    ids=["text", "value", "markdown", "failure"],
)
async def test_a_huge_tool_result_is_shown_in_part_and_kept_whole_by_the_session(
    wire: Wire, kind: str, make: Callable[[], Any]
) -> None:
    """Defect: a 10 MB result went over the comm twice (the call op and the history trait: 20 MB) and into the
    notebook file whole, for the browser to lay out as one text."""
    result = make()

    @tool
    def dump() -> Any:
        """Returns a huge result."""
        return result

    reply = ScriptedReply(tool_calls=[ScriptedToolCall(name="dump", arguments={})])
    chat = ChatWidget(transport=ScriptedTransport([reply, ScriptedReply(text="Read it.")]), tools=[dump])
    mark = wire.mark()
    done = await chat.session.send("dump it")
    assert done.text.endswith("Read it.")
    sent = sum(s.nbytes for s in wire.since(mark))
    assert sent < 1_500_000, sent
    shown = finished_messages(chat)[-1]["parts"][0]["outcome"]
    (call,) = done.tool_calls
    assert call.outcome is not None
    match kind:
        case "text":
            assert shown["value"] == "x" * 100_000 + "… (9,900,000 more characters not shown here)"
            assert call.outcome.value == result
        case "value":
            assert shown["value"][:2] == [{"row": 0, "name": "name 0" * 20}, {"row": 1, "name": "name 1" * 20}]
            assert len(shown["value"]) == 1_001
            assert shown["value"][-1] == "… (299,000 more items not shown here)"
            assert call.outcome.value == result
        case "markdown":
            assert shown["text"].endswith("… (9,900,006 more characters not shown here)")
            assert call.outcome.text == result.text
        case "failure":
            assert shown["message"].endswith("… (4,900,000 more characters not shown here)")
            assert call.outcome.message == result.message
