"""What a file's bytes say it is: the image formats every provider takes (PNG, JPEG, GIF, WebP) and PDF, read from
the first bytes, and whether an image's bytes reach the end its format marks (providers refuse one cut short)."""

from __future__ import annotations

__all__ = ["IMAGE_TYPES", "PDF_TYPE", "is_pdf", "sniff_image", "whole_image"]

#: The image types every provider takes (Gemini alone not GIF).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF_TYPE = "application/pdf"

# The first bytes of the image formats every provider accepts; the longest (WebP) needs 12, 16 base64 characters.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff_image(head: bytes) -> str | None:
    """The image type that ``head`` (at least the first 12 bytes) begins, of :data:`IMAGE_TYPES`, or ``None``."""
    for signature, media_type in _SIGNATURES:
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
