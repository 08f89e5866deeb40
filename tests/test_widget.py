"""ChatWidget in-process, with a recording comm in place of the kernel's (the protocol of docs/protocol.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ai_widgets import ChatSession, MessageStatus, SessionOptions, ToolRisk, tool
from ai_widgets.messages import Message, TextPart
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget, FrontEndNotBuiltError
from ai_widgets.widget._serialize import message_dict
from tests.helpers import wait_for
from tests.widget_harness import Mirror, Wire, finished_messages, recording_comms


@pytest.fixture
def wire() -> Iterator[Wire]:
    with recording_comms() as recorded:
        yield recorded


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
    assert mirror.live[reply.id] == final  # the live copy, built from patches alone, matches
    assert final["parts"][1]["parsed_arguments"] == {"city": "Lisbon"}
    assert final["parts"][1]["outcome"]["value"] == {"city": "Lisbon", "sky": "sunny"}
    assert chat.tools["get_weather"] == {
        "title": "Weather",
        "icon": "🌦",
        "risk": "normal",
        "description": "Gets the weather.",
        "requires_approval": False,
    }
    assert chat.usage["requests"] == 2
    assert chat.busy is False
    assert chat.kernel_mode == "none"


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


async def measure_turn(wire: Wire, earlier: int) -> tuple[float, int]:
    """Bytes per streamed delta, and bytes to finish the turn's two messages, after ``earlier`` messages."""
    history = await conversation_of(earlier)
    transport = ScriptedTransport([ScriptedReply(text="y" * 2000, status=None)], slice_size=(4, 8))
    chat = ChatWidget(ChatSession(transport, messages=history), flush_interval=0)
    assert len(finished_messages(chat)) == earlier
    mark = wire.mark()
    await chat.ask("now")
    sent = wire.since(mark)
    patch_bytes = sum(s.nbytes for s in sent if s.data.get("method") == "custom")
    finish_bytes = sum(s.nbytes for s in sent if s.msg_type == "comm_open" or "state" in s.data)
    return patch_bytes / (2000 / 6), finish_bytes


async def test_bytes_per_delta_and_per_finish_are_flat_from_10_to_500_messages(wire: Wire) -> None:
    delta_10, finish_10 = await measure_turn(wire, 10)
    delta_500, finish_500 = await measure_turn(wire, 500)
    # A delta costs its text plus a small envelope, whatever the conversation's length...
    assert delta_10 < 200, delta_10
    assert delta_500 <= delta_10 * 1.1 + 2, (delta_10, delta_500)
    # ...and finishing two messages sends two small models and two references, not the conversation.
    assert finish_10 < 2 * 2000 + 4000, finish_10
    assert finish_500 <= finish_10 * 1.1 + 50, (finish_10, finish_500)


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
    late = Mirror()
    mark = len(wire.custom(chat.comm.comm_id))
    wire.comms[chat.comm.comm_id].handle({"type": "sync"})
    reply = await task
    for content in wire.custom(chat.comm.comm_id)[mark:]:
        late.apply(content)
    assert late.live[reply.id] == message_dict(reply, 1)


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
    assert chat.last_message == ""


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
    assert chat.busy
    front.handle({"type": "send", "text": "interleave?"})
    assert "still running" in wire.custom(chat.comm.comm_id)[-1]["message"]
    call_id = chat.session.pending_approvals[0].tool_call_id
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved_always"})
    front.handle({"type": "approve", "tool_call_id": call_id, "decision": "approved"})
    assert "already decided" in wire.custom(chat.comm.comm_id)[-1]["message"]
    await wait_for(lambda: not chat.busy)
    assert chat.allowed_always == ["delete_file"]
    front.handle({"type": "revoke", "tool_name": "delete_file"})
    assert chat.allowed_always == []
    front.handle({"type": "send", "text": "delete b"})
    await wait_for(lambda: bool(chat.session.pending_approvals))
    front.handle({"type": "stop"})
    await wait_for(lambda: not chat.busy)
    assert chat.session.messages[-1].status is MessageStatus.CANCELLED
    assert [m["role"] for m in finished_messages(chat)] == ["user", "assistant", "user", "assistant"]


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
    await wait_for(lambda: chat.session.messages[-1].text == "Finally." and not chat.busy)


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
    assert chat.tools["get_weather"]["icon"] == "☀️"
    assert chat.tools["get_weather"]["risk"] == "read_only"


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
    import ai_widgets.widget._chat as chat_module

    monkeypatch.setattr(chat_module, "_ESM", tmp_path / "missing.js")
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


async def test_clear_starts_a_new_chain_of_message_models(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["one", "two"]))
    await chat.ask("first")
    assert len(finished_messages(chat)) == 2
    chat.clear()
    assert chat.last_message == ""
    assert wire.custom(chat.comm.comm_id)[-1] == {"type": "patch", "ops": [["clear"]]}
    await chat.ask("second")
    assert [m["parts"][0]["text"] for m in finished_messages(chat)] == ["second", "two"]
    assert [m["index"] for m in finished_messages(chat)] == [0, 1]
