"""``send(text, attach=...)`` on the session and on the widget (``send``, ``ask``, ``ask_sync``): the objects become
parts of the user message, the transport gets them, a refusal comes before anything enters the history, the history
file keeps them, and the widget shows them without their bytes."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import ai_widgets.attachments as attachments
from ai_widgets import AttachmentError, ChatSession, File, FilePart, MessageStatus, TextPart
from ai_widgets.messages import dump_messages
from ai_widgets.session import read_history
from ai_widgets.transports import ScriptedReply, ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.providers.images import PNG
from tests.providers.kits import KITS, MockAPI
from tests.widget.widget_harness import Wire, finished_messages

PNG_BYTES = base64.b64decode(PNG)


def described(request: Any) -> ScriptedReply:
    """A reply that says which parts the last user message had."""
    user = [m for m in request.messages if m.role.value == "user"][-1]
    return ScriptedReply(text=" ".join(type(p).__name__ for p in user.parts))


def dicts(parts: list[Any]) -> list[dict[str, Any]]:
    return [part.to_dict() for part in parts]


async def test_the_attached_objects_are_parts_of_the_user_message_the_transport_gets() -> None:
    transport = ScriptedTransport(described)
    session = ChatSession(transport)
    reply = await session.send("What is this?", attach=[File(PNG_BYTES, "image/png", name="a.png"), "context"])
    assert reply.text == "TextPart FilePart TextPart"
    user = session.messages[0]
    assert user.text.startswith("What is this?")
    assert dicts(user.parts) == dicts(
        [TextPart("What is this?"), FilePart("image/png", data=PNG, name="a.png"), TextPart("Attached Text:\ncontext")]
    )
    assert transport.requests[0].messages[0] is user


async def test_an_object_that_cannot_be_attached_leaves_the_conversation_as_it_was(tmp_path: Path) -> None:
    transport = ScriptedTransport(described)
    session = ChatSession(transport)
    with pytest.raises(AttachmentError, match="no such file"):
        await session.send("Read this", attach=tmp_path / "missing.txt")
    with pytest.raises(AttachmentError, match="no conversion"):
        await session.send("And this", attach=[object()])
    assert session.messages == []
    assert transport.requests == []
    assert not session.busy
    assert (await session.send("hi")).text == "TextPart"


async def test_the_history_file_keeps_the_files_and_a_later_request_sends_them_again(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    first = ChatSession(ScriptedTransport(["I see a dot."]), history=path)
    await first.send("Look", attach={"dot": File(PNG_BYTES, "image/png")})
    first.close()
    saved = read_history(path)
    assert dicts(saved[0].parts) == dicts([TextPart("Look"), FilePart("image/png", data=PNG, name="dot")])
    assert json.loads(path.read_text("utf-8")) == json.loads(dump_messages(saved))

    kit = KITS["anthropic"]
    api = MockAPI(b"".join(kit.reply("Still a dot.")))
    second = ChatSession(kit.mock(api.handler), history=path)
    reply = await second.send("And now?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert api.bodies[0]["messages"][0]["content"] == [
        {"type": "text", "text": "Look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    second.close()


class DrawnWhileTheLoopRuns:
    """A rich repr that draws only once a coroutine on the loop has run (or gives up after a while)."""

    def __init__(self, patience: float = 5.0) -> None:
        self.go = threading.Event()
        self.patience = patience
        self.loop_ran: bool | None = None

    def _repr_png_(self) -> bytes:
        self.loop_ran = self.go.wait(self.patience)
        return PNG_BYTES

    async def tick(self) -> None:
        for _ in range(3):  # the loop goes round while the drawing waits
            await asyncio.sleep(0.001)
        self.go.set()


async def test_drawing_an_attachment_does_not_hold_up_the_event_loop() -> None:
    session = ChatSession(ScriptedTransport(described))
    slow = DrawnWhileTheLoopRuns()
    ticking = asyncio.ensure_future(slow.tick())
    reply = await session.send("look", attach={"chart": slow})
    await ticking
    assert slow.loop_ran, "the drawing held the loop: no other coroutine ran while it drew"
    assert reply.text == "TextPart FilePart"
    assert [part.to_dict()["name"] for part in session.messages[0].parts[1:]] == ["chart.png"]


async def test_an_attachment_that_draws_too_long_is_refused_and_nothing_enters_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attachments, "MAX_RENDER_SECONDS", 0.05)
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(described), history=path)
    slow = DrawnWhileTheLoopRuns(patience=0.5)  # nothing lets it go: it draws for half a second
    with pytest.raises(AttachmentError, match=r"cannot attach a DrawnWhileTheLoopRuns `chart`: drawing it took more"):
        await session.send("look", attach={"chart": slow})
    await asyncio.sleep(0.7)  # the drawing ends in the background, and is dropped
    assert slow.loop_ran is False
    assert session.messages == []
    assert (await session.send("hi")).text == "TextPart"
    session.close()
    assert [m.text for m in read_history(path)] == ["hi", "TextPart"]


# --- the widget -------------------------------------------------------------------------------------------------------


async def test_the_widgets_send_ask_and_ask_sync_take_attachments(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(described))
    assert (await chat.ask("one", attach=File(PNG_BYTES, "image/png", name="p.png"), show=False)).text == (
        "TextPart FilePart"
    )
    future = chat.send("two", attach=["a", "b"])
    assert future is not None
    assert future.result(timeout=5).text == "TextPart TextPart TextPart"
    # The front end gets a file's name, type and size, never its bytes.
    shown = finished_messages(chat)[0]["parts"]
    assert shown == [
        {"kind": "text", "text": "one"},
        {"kind": "file", "media_type": "image/png", "name": "p.png", "size": len(PNG_BYTES), "url": None},
    ]
    assert PNG not in json.dumps(finished_messages(chat))


async def test_the_widgets_ask_draws_an_attachment_off_the_event_loop(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(described))
    slow = DrawnWhileTheLoopRuns()
    ticking = asyncio.ensure_future(slow.tick())
    assert (await chat.ask("look", attach=slow, show=False)).text == "TextPart FilePart"
    await ticking
    assert slow.loop_ran, "the drawing held the loop: no other coroutine ran while it drew"


def test_ask_sync_takes_attachments(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(described))
    assert chat.ask_sync("three", attach={"x": "y"}, show=False).text == "TextPart TextPart"


async def test_the_widget_refuses_an_attachment_in_the_callers_cell_before_anything_starts(wire: Wire) -> None:
    kit = KITS["gemini"]
    api = MockAPI(b"".join(kit.reply("ok")))
    chat = ChatWidget(session=ChatSession(kit.mock(api.handler)))
    gif = FilePart("image/gif", data=base64.b64encode(b"GIF89a\x01\x00\x01\x00\x80\x00\x00;").decode())
    with pytest.raises(AttachmentError, match="Gemini does not take image/gif"):
        chat.send("look", attach=gif)
    with pytest.raises(AttachmentError, match="Gemini does not take image/gif"):
        await chat.ask("look", attach=gif, show=False)
    with pytest.raises(AttachmentError, match="Gemini does not take image/gif"):
        chat.ask_sync("look", attach=gif, show=False)
    assert chat.messages == []
    assert api.requests == []
    assert not chat.session.busy


def test_the_export_of_a_conversation_whose_file_names_had_lone_surrogates_is_written(
    wire: Wire, tmp_path: Path
) -> None:
    chat = ChatWidget(transport=ScriptedTransport(described))
    named = File(PNG_BYTES, "image/png", name="caf\udce9.png")  # a name as os.listdir gives one that is not UTF-8
    assert chat.ask_sync("look \udc80", attach=[named, TextPart("t\ud800")], show=False).text
    markdown = chat.export(tmp_path / "chat.md").read_text("utf-8")
    assert "caf\ufffd.png" in markdown
    assert "look \ufffd" in markdown
    assert json.loads(chat.export(tmp_path / "chat.json").read_text("utf-8"))
