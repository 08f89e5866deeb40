"""Small PNG thumbnails (``data:`` URLs) of attached images and figures, for the chips that show them: a chip
carries at most :data:`MAX_THUMBNAIL_BYTES`, never the attachment's own megabytes.

An image is shrunk with PIL (loaded the first time an image needs it, where it is installed) and a figure drawn at
a low resolution with matplotlib (only when a figure exists, so matplotlib is loaded already). Without PIL a small
image is shown as it is and a larger one has no picture (its file's bytes never go to the front end).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib
import io
import threading
from collections import OrderedDict
from types import ModuleType
from typing import Any

from ai_widgets._media import IMAGE_TYPES, sniff_image
from ai_widgets.messages import FilePart

__all__ = ["MAX_THUMBNAIL_BYTES", "THUMBNAIL_PIXELS", "figure_thumbnail", "image_thumbnail"]

#: The longest side of a thumbnail, in pixels (a chip shows it at most half that, so it stays sharp on HiDPI).
THUMBNAIL_PIXELS = 96
#: The largest thumbnail sent.
MAX_THUMBNAIL_BYTES = 48 * 1024


def data_url(raw: bytes, media_type: str) -> str | None:
    if len(raw) > MAX_THUMBNAIL_BYTES or sniff_image(raw[:16]) != media_type:
        return None
    return f"data:{media_type};base64,{base64.b64encode(raw).decode('ascii')}"


def figure_thumbnail(figure: Any) -> str | None:
    """A matplotlib figure drawn small, as a PNG ``data:`` URL; ``None`` when it cannot be drawn."""
    try:
        width, height = figure.get_size_inches()
        dpi = max(4.0, THUMBNAIL_PIXELS / max(float(width), float(height), 0.1))
        out = io.BytesIO()
        figure.savefig(out, format="png", dpi=dpi)
    except Exception:  # a figure that cannot draw gets a chip without a picture
        return None
    return data_url(out.getvalue(), "image/png")


def image_thumbnail(part: FilePart) -> str | None:
    """A raster image part (PNG, JPEG, GIF, WebP with inline data) shrunk to a PNG ``data:`` URL; ``None`` for
    anything else, or for an image too large to show as it is where PIL is not installed."""
    if part.data is None or part.media_type not in IMAGE_TYPES:
        return None
    return THUMBNAILS.get(part.media_type, part.data)


class ThumbnailCache:
    """The last thumbnails made, by a digest of their image: a finished message is serialised again for every
    snapshot a view asks for. Keyed by the digest, not the base64 itself, so that the cache holds only small
    thumbnails and never keeps an attached image's megabytes alive once its message is gone."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, bytes], str | None] = OrderedDict()
        self._lock = threading.Lock()  # views ask from the kernel's thread, turns serialise from theirs

    def get(self, media_type: str, data: str) -> str | None:
        key = (media_type, hashlib.blake2b(data.encode("ascii"), digest_size=20).digest())
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        thumbnail = shrunk(media_type, data)
        with self._lock:
            self._entries[key] = thumbnail
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return thumbnail


THUMBNAILS = ThumbnailCache(64)


@functools.cache
def pil_image() -> ModuleType | None:
    """PIL's ``Image`` module, loaded on first use (not with ai_widgets: most chats never show an image); ``None``
    where PIL is not installed."""
    try:
        return importlib.import_module("PIL.Image")
    except ImportError:
        return None


def shrunk(media_type: str, data: str) -> str | None:
    raw = base64.b64decode(data)
    pil = pil_image()
    if pil is None:
        return data_url(raw, media_type)
    try:
        with pil.open(io.BytesIO(raw)) as image:
            image.thumbnail((THUMBNAIL_PIXELS, THUMBNAIL_PIXELS))
            if image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
                image = image.convert("RGBA")
            out = io.BytesIO()
            image.save(out, format="PNG", optimize=True)
    except Exception:  # bytes PIL cannot read (the provider may still take them): no picture
        return None
    return data_url(out.getvalue(), "image/png")
