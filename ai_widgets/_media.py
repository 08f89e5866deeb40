"""What a file's bytes say it is: the image formats every provider takes (PNG, JPEG, GIF, WebP) and PDF, read from
the first bytes, whether an image's bytes reach the end its format marks (providers refuse one cut short), and an
image's size in pixels, read from its header without decoding it (a provider may refuse an image too large)."""

from __future__ import annotations

__all__ = ["IMAGE_TYPES", "PDF_TYPE", "image_pixels", "is_pdf", "sniff_image", "whole_image"]

#: The image types every provider takes (Gemini alone not GIF).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF_TYPE = "application/pdf"

# The first bytes of the image formats every provider accepts; the longest (WebP) needs 12, 16 base64 characters.
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff_image(head: bytes) -> str | None:
    """The image type that ``head`` (at least the first 12 bytes) begins, of :data:`IMAGE_TYPES`, or ``None``."""
    for signature, media_type in SIGNATURES:
        if head.startswith(signature):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def whole_image(media_type: str, raw: bytes) -> bool:
    """Whether an image's bytes reach the end its format marks (an image cut short, or a bare header, is refused by
    every provider, and would then fail every later request of the conversation). Bytes after the end are allowed,
    as decoders ignore them."""
    if media_type == "image/png":
        # The IHDR chunk first, and the IEND chunk (its type and CRC) somewhere after it.
        return raw[12:16] == b"IHDR" and raw.rfind(b"IEND\xaeB`\x82") >= 33
    if media_type == "image/jpeg":
        return raw.rfind(b"\xff\xd9") > 2  # the end-of-image marker (it cannot occur inside the coded data)
    if media_type == "image/gif":
        return len(raw) > 13 and raw.rstrip(b"\x00").endswith(b";")  # the trailer
    if media_type == "image/webp":
        return len(raw) >= 20 and int.from_bytes(raw[4:8], "little") + 8 <= len(raw)  # the RIFF size is all there
    return False


def is_pdf(raw: bytes) -> bool:
    """Whether ``raw`` begins as a PDF does (``%PDF-``, which readers look for in the first kilobyte)."""
    return b"%PDF-" in raw[:1024]


def image_pixels(head: bytes) -> tuple[int, int] | None:
    """The width and height, in pixels, of the image that ``head`` begins (PNG, JPEG, GIF or WebP), read from its
    header: ``None`` when the bytes are of another format, cut short before the size, or not what their format says
    (never an error, whatever the bytes). A JPEG's size may come after its metadata (EXIF, ICC profile: tens of
    kilobytes); the others' is in the first 30 bytes."""
    media_type = sniff_image(head[:16])
    if media_type == "image/png":
        # The IHDR chunk comes first: its width and height are big-endian, right after its type.
        size = (big(head, 16, 4), big(head, 20, 4)) if head[12:16] == b"IHDR" else None
    elif media_type == "image/gif":
        size = (little(head, 6, 2), little(head, 8, 2))  # the logical screen's
    elif media_type == "image/webp":
        size = webp_pixels(head)
    elif media_type == "image/jpeg":
        size = jpeg_pixels(head)
    else:
        size = None
    if size is None:
        return None
    width, height = size
    return (width, height) if width and height else None  # 0: a size the format leaves to later (a JPEG's DNL)


def big(data: bytes, at: int, length: int) -> int | None:
    return int.from_bytes(data[at : at + length], "big") if len(data) >= at + length else None


def little(data: bytes, at: int, length: int) -> int | None:
    return int.from_bytes(data[at : at + length], "little") if len(data) >= at + length else None


def webp_pixels(head: bytes) -> tuple[int | None, int | None] | None:
    """A WebP's size from its first chunk: simple lossy (``VP8 ``), lossless (``VP8L``) or extended (``VP8X``)."""
    chunk = head[12:16]
    if chunk == b"VP8 ":
        # The frame header: a 3-byte frame tag, the start code, then 14-bit width and height (2 bits of scale above).
        if head[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = little(head, 26, 2), little(head, 28, 2)
        return (None if width is None else width & 0x3FFF, None if height is None else height & 0x3FFF)
    if chunk == b"VP8L":
        # A signature byte, then width - 1 and height - 1 in 14 bits each, least significant bits first.
        bits = little(head, 21, 4)
        if head[20:21] != b"\x2f" or bits is None:
            return None
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        # Flags and reserved bytes, then the canvas's width - 1 and height - 1 in 24 bits each.
        width, height = little(head, 24, 3), little(head, 27, 3)
        return (None if width is None else width + 1, None if height is None else height + 1)
    return None


#: The JPEG markers whose segment holds the frame's size: SOF0 to SOF15, but for DHT (C4), JPG (C8) and DAC (CC).
JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: Markers that stand alone, without a length: TEM and RST0 to RST7.
JPEG_BARE = frozenset({0x01, *range(0xD0, 0xD8)})


def jpeg_pixels(head: bytes) -> tuple[int | None, int | None] | None:
    """A JPEG's size from its frame header (SOF), found by stepping over the segments before it (APPn metadata,
    quantisation and Huffman tables...) by their lengths; ``None`` at the scan or the end before a frame header."""
    at = 2  # after SOI
    while at < len(head):
        if head[at] != 0xFF:
            return None  # not a marker where one must be: not a JPEG after all
        while at < len(head) and head[at] == 0xFF:
            at += 1  # a marker may be preceded by any number of fill bytes
        if at >= len(head):
            return None
        marker = head[at]
        at += 1
        if marker in JPEG_BARE:
            continue
        if marker in (0xD8, 0xD9, 0xDA, 0x00):
            return None  # another start, the end or the scan before any frame header (0x00 is no marker)
        length = big(head, at, 2)
        if length is None or length < 2:
            return None
        if marker in JPEG_FRAMES:
            # After the length: the sample precision, then height and width, big-endian.
            return (big(head, at + 5, 2), big(head, at + 3, 2))
        at += length
    return None
