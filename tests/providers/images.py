"""Images in tool results, for the request-mapping tests of every transport: image data, a tool that returns
images, and a history whose calls carry images of every kind a transport must send or leave out."""

from __future__ import annotations

import base64
import struct
import zlib

from ai_widgets import Message, TextPart, ToolCallState, ToolOutcome, tool
from ai_widgets.messages import Role
from tests.providers.histories import finished_call

# A 1x1 PNG; the first bytes of a JPEG, a GIF and a WebP (the transports read an image's type from its first bytes).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9").decode()
GIF = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00;").decode()
WEBP = base64.b64encode(
    b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
).decode()
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()
PDF = base64.b64encode(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n").decode()
PHOTO_URL = "https://example.com/photo.jpg"


def png_of(width: int, height: int) -> bytes:
    """A whole PNG of ``width`` x ``height`` grey pixels, all black: small however large it is (9,000 x 4 is about
    100 bytes), for the providers' limits on pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    pixels = zlib.compress(b"\0" * ((width + 1) * height), 9)  # each row: its filter byte, then its pixels
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


#: What the model is told about the chart call: the person edited its arguments, then the tool's text.
CHART_TEXT = '(The person changed the arguments before allowing this call; it ran with {"series": "b"}.)\nA chart of b.'


def image_reply() -> Message:
    """A reply with three calls: ``call_chart`` (text, an inline PNG, a PNG by URL, and a PDF and an SVG that no
    transport sends), ``call_plain`` (no image), ``call_photo`` (no text, one image labelled PNG that is a JPEG),
    then ``call_failed`` (a failure: no image even if its outcome had one)."""
    chart = finished_call(
        "call_chart",
        "plot",
        '{"series": "a"}',
        outcome=ToolOutcome.success(
            text="A chart of b.",
            attachments=[
                {"mime_type": "image/png", "data": PNG, "name": "chart.png"},
                {"mime_type": "image/jpeg", "url": PHOTO_URL},
                {"mime_type": "application/pdf", "data": PDF},
                {"mime_type": "image/svg+xml", "data": SVG},
            ],
        ),
    )
    chart.edited_arguments = {"series": "b"}
    plain = finished_call("call_plain", "lookup", "{}", outcome=ToolOutcome.success({"n": 1}))
    photo = finished_call(
        "call_photo", "snap", "{}", outcome=ToolOutcome.success(attachments=[{"mime_type": "image/png", "data": JPEG}])
    )
    failed = ToolOutcome.failure("It broke.").model_copy(
        update={"attachments": ToolOutcome.success(attachments=[{"mime_type": "image/png", "data": PNG}]).attachments}
    )
    broken = finished_call("call_failed", "snap", "{}", state=ToolCallState.FAILED, outcome=failed)
    return Message(Role.ASSISTANT, [TextPart("Plotting."), chart, plain, photo, broken, TextPart("Done.")])


def image_history() -> list[Message]:
    return [Message.user("plot"), image_reply()]


@tool
def draw(shape: str) -> ToolOutcome:
    """Draws a shape.

    Args:
        shape: The shape.
    """
    return ToolOutcome.success(text=f"A {shape}.", attachments=[{"mime_type": "image/png", "data": PNG}])
