"""Base64 payloads kept off the model's text: an MCP result's structured content and text often repeat an image
the result also sends as an image block (server-filesystem's ``read_media_file``), or carry one as a ``data:`` URL
or a bare base64 string. Each is replaced by a short note naming it; a media payload that is not attached yet is
attached once, so the model gets it as media (where its provider takes it) and never as ~100,000 characters of
text on every later request."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ai_widgets._media import sniff_image
from ai_widgets.outcome import Attachment

__all__: list[str] = []

#: Base64 runs at least this long are taken for data, not words (no prose has 512 letters without a space).
MIN_RUN = 512
RUN = re.compile(rf"(?:data:([\w.+-]+/[\w.+-]+);base64,)?([A-Za-z0-9+/]{{{MIN_RUN},}}={{0,2}})")
#: Structured content deeper than this is left as it is (no server nests a picture that far; nor can it recurse).
MAX_DEPTH = 200


class Payloads:
    """The attachments of one result, growing as payloads are found, each payload once."""

    def __init__(self) -> None:
        self.attachments: list[Attachment] = []
        self._seen: set[str] = set()

    def attach(self, attachment: Attachment) -> None:
        """Keeps ``attachment`` unless the same data is attached already."""
        if attachment.data is not None:
            if attachment.data in self._seen:
                return
            self._seen.add(attachment.data)
        self.attachments.append(attachment)

    def without_payloads(self, value: Any, *, depth: int = 0) -> Any:
        """``value`` (JSON: structured content or text) with each base64 payload replaced by a note naming it."""
        if depth > MAX_DEPTH:
            return value
        if isinstance(value, str):
            return RUN.sub(self._noted, value) if len(value) >= MIN_RUN else value
        if isinstance(value, list):
            return [self.without_payloads(item, depth=depth + 1) for item in value]
        if isinstance(value, dict):
            media = self._media_block(value)
            if media is not None:
                return media
            return {key: self.without_payloads(item, depth=depth + 1) for key, item in value.items()}
        return value

    def _media_block(self, block: dict[str, Any]) -> str | None:
        """A note for a content block repeated in structured content (``{"type": "image", "data": ..., "mimeType":
        ...}``), attaching its payload, or ``None`` when ``block`` is not one."""
        kind, data, mime = block.get("type"), block.get("data"), block.get("mimeType", block.get("mime_type"))
        if kind not in ("image", "audio") or not isinstance(data, str) or not isinstance(mime, str):
            return None
        size = decoded_size(data)
        if size is None:
            return None
        self.attach(Attachment(mime_type=mime, data=data))
        return note(mime, size)

    def _noted(self, match: re.Match[str]) -> str:
        declared, data = match.group(1), match.group(2)
        raw = decoded(data)
        if raw is None:
            return match.group(0)
        mime = sniff_image(raw[:16]) or declared
        if mime is not None and mime.startswith(("image/", "audio/")):
            self.attach(Attachment(mime_type=mime, data=data))
            return note(mime, len(raw))
        return f"[{mime or 'base64 data'}, {len(raw)} bytes: left out]"


def note(mime: str, size: int) -> str:
    return f"[{mime}, {size} bytes: sent as an attachment]"


def decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def decoded_size(data: str) -> int | None:
    raw = decoded(data)
    return None if raw is None else len(raw)
