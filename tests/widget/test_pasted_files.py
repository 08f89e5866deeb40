"""Files pasted or dropped into the input box, kernel side: each comes base64 in the ``send`` and becomes the parts an
attached file does (an image or a PDF by its bytes, text as text), within the size limits and the provider's; one
that cannot be refuses the whole message before anything is sent (docs/protocol.md, "Attachments by name")."""

from __future__ import annotations

import base64
import io
import subprocess
import sys
from typing import Any

import pytest
from PIL import Image

from ai_widgets.attachments import AttachmentLimits
from ai_widgets.messages import FilePart, Role, TextPart
from ai_widgets.transports import ScriptedTransport, TransportProfile
from ai_widgets.transports._base import ChatRequest
from ai_widgets.widget import ChatWidget, _thumbnail
from ai_widgets.widget._actions import MAX_PASTED_BYTES, MAX_PASTED_FILES
from ai_widgets.widget._thumbnail import MAX_THUMBNAIL_BYTES
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire


def png(width: int = 8, height: int = 6) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def pasted(name: str, media_type: str, raw: bytes) -> dict[str, str]:
    return {"name": name, "media_type": media_type, "data": base64.b64encode(raw).decode("ascii")}


def echo(request: ChatRequest) -> str:
    """The scripted model's reply: what the last user message carried."""
    user = [m for m in request.messages if m.role is Role.USER][-1]
    return " | ".join(
        f"file {p.name} {p.media_type}" if isinstance(p, FilePart) else p.text.splitlines()[0]
        for p in user.parts
        if isinstance(p, (FilePart, TextPart))
    )


def errors(wire: Wire, chat: Any) -> list[dict[str, Any]]:
    return [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == "error"]


async def test_a_pasted_image_and_a_dropped_csv_go_with_the_message(wire: Wire) -> None:
    image = png()
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    front = wire.comms[chat.comm.comm_id]
    files = [pasted("image.png", "image/png", image), pasted("data.csv", "text/csv", b"a,b\n1,2\n")]
    front.handle({"type": "send", "text": "what is this?", "files": files, "id": "p1"})
    await wait_for(lambda: not chat.session.busy and len(chat._history) == 2)
    assert [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == "sent"] == [{"type": "sent", "id": "p1"}]
    user, reply = chat.session.messages
    image_part = user.parts[1]
    assert isinstance(image_part, FilePart)
    assert (image_part.name, image_part.media_type) == ("image.png", "image/png")
    assert base64.b64decode(image_part.data or "") == image  # the bytes as pasted
    assert isinstance(user.parts[2], TextPart)
    assert "a,b" in user.parts[2].text
    assert reply.text == f"what is this? | file image.png image/png | {user.parts[2].text.splitlines()[0]}"
    shown = chat._history[0]
    assert shown["parts"][1]["name"] == "image.png"
    assert "data" not in shown["parts"][1]  # the view is never sent the bytes back
    assert shown["thumbnails"]["1"].startswith("data:image/png;base64,")


async def test_a_file_the_provider_or_the_limits_refuse_sends_nothing(wire: Wire) -> None:
    limits = AttachmentLimits(
        "NoImages", max_image_bytes=1, max_images=0, max_document_bytes=1, max_total_bytes=1, image_types=frozenset()
    )
    transport = ScriptedTransport([echo], profile=TransportProfile(attachment_limits=limits))
    chat = ChatWidget(transport=transport)
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "send", "text": "look", "files": [pasted("shot.png", "image/png", png())], "id": "a"})
    front.handle({"type": "send", "text": "look", "files": [pasted("x.png", "image/png", b"not a png")], "id": "b"})
    front.handle(
        {"type": "send", "text": "look", "files": [{**pasted("y.txt", "text/plain", b"x"), "data": "@@"}], "id": "c"}
    )
    big = [pasted(f"{i}.bin", "application/octet-stream", b"\0" * (MAX_PASTED_BYTES - 10)) for i in range(2)]
    front.handle({"type": "send", "text": "look", "files": big, "id": "d"})
    said = {e["id"]: e["message"] for e in errors(wire, chat)}
    assert sorted(said) == ["a", "b", "c", "d"]
    assert "image" in said["a"]
    assert said["b"].startswith("x.png: cannot attach")
    assert said["c"] == "Not sent: y.txt: its data is not base64"
    assert said["d"] == "Not sent: the files come to more than 7 MB together"
    assert chat.session.messages == []
    assert transport.requests == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "file",
    [
        {"name": "", "media_type": "image/png", "data": ""},
        {"name": "../etc/passwd", "media_type": "text/plain", "data": ""},
        {"name": "a\nb", "media_type": "text/plain", "data": ""},
        {"name": "a.png", "media_type": "png", "data": ""},
        {"name": "a.png", "media_type": "image/png"},
        {"name": "a.png", "media_type": "image/png", "data": "A" * ((MAX_PASTED_BYTES + 2) // 3 * 4 + 4)},
        {"name": "a.png", "media_type": "image/png", "data": "", "path": "/tmp/a.png"},
    ],
)
async def test_a_malformed_file_is_refused_and_changes_nothing(wire: Wire, file: dict[str, Any]) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    wire.comms[chat.comm.comm_id].handle({"type": "send", "text": "hi", "files": [file], "id": "m"})
    [error] = errors(wire, chat)
    assert "invalid 'send' message" in error["message"]
    assert len(error["message"]) <= 1000
    assert chat.session.messages == []


async def test_too_many_files_and_a_view_of_one_turn_are_refused(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo, echo]))
    front = wire.comms[chat.comm.comm_id]
    many = [pasted(f"{i}.txt", "text/plain", b"x") for i in range(MAX_PASTED_FILES + 1)]
    front.handle({"type": "send", "text": "hi", "files": many, "id": "n"})
    assert "invalid 'send' message" in errors(wire, chat)[-1]["message"]
    await chat.ask("first", show=False)
    view = TurnView(chat.session, start=None)
    wire.comms[view.comm.comm_id].handle(
        {"type": "send", "text": "this", "files": [pasted("a.txt", "text/plain", b"x")], "id": "t1"}
    )
    [error] = errors(wire, view)
    assert error["id"] == "t1"
    assert "chat's own input box" in error["message"]
    assert len(chat.session.messages) == 2


def test_a_sent_image_keeps_its_picture_in_a_kernel_that_had_not_loaded_pil() -> None:
    """Defect: the sent message's chip lost the picture its input chip showed, as PIL was used only when something
    else had loaded it (a fresh kernel, a pasted screenshot). PIL is now loaded for the first image that needs it."""
    code = """
import sys
from ai_widgets.messages import FilePart, Message, Role, TextPart
from ai_widgets.widget._serialize import message_dict
raw = sys.stdin.buffer.read()
assert "PIL.Image" not in sys.modules
shown = message_dict(Message(Role.USER, [TextPart("look"), FilePart.from_bytes(raw, "image/png", name="a.png")]), 0)
print(shown["thumbnails"]["1"][:22], "PIL.Image" in sys.modules)
"""
    large = Image.effect_noise((400, 400), 64).convert("RGB")  # beyond a thumbnail's bytes: shrunk, not sent as is
    out = io.BytesIO()
    large.save(out, format="PNG")
    assert len(out.getvalue()) > MAX_THUMBNAIL_BYTES
    result = subprocess.run([sys.executable, "-c", code], input=out.getvalue(), capture_output=True, check=True)
    assert result.stdout.decode().split() == ["data:image/png;base64,", "True"]


def test_without_pil_a_small_image_is_its_own_picture_and_a_large_one_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_thumbnail, "pil_image", lambda: None)
    monkeypatch.setattr(_thumbnail, "THUMBNAILS", _thumbnail.ThumbnailCache(4))
    small = FilePart.from_bytes(png(5, 5), "image/png", name="small.png")
    assert _thumbnail.image_thumbnail(small) == f"data:image/png;base64,{small.data}"
    noise = Image.effect_noise((400, 400), 64).convert("RGB")
    out = io.BytesIO()
    noise.save(out, format="PNG")
    assert _thumbnail.image_thumbnail(FilePart.from_bytes(out.getvalue(), "image/png", name="big.png")) is None
