"""A file in a message (:class:`FilePart`): its media type and base64 data or a URL, with a name, as the history
file keeps it; a part of the conversation below the message classes (:mod:`ai_widgets.messages` exports it)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ai_widgets._media import image_pixels
from ai_widgets._safe import safe_text
from ai_widgets.messages._json import read_field

__all__ = ["FilePart", "human_size"]


@dataclass(frozen=True, slots=True)
class FilePart:
    """A file in a message: an image, a PDF or another document, as base64 ``data`` or a ``url``.

    Build one from a kernel object with :func:`ai_widgets.attachments.object_parts` (``send(..., attach=...)``
    does), or directly.

    Attributes:
        media_type: The MIME type, e.g. ``"image/png"``, ``"application/pdf"``.
        data: The file's bytes, base64 (no ``data:`` prefix, no line breaks), or ``None`` for a URL.
        url: Where the provider fetches the file, or ``None`` for inline data.
        name: A name for the person and the model (``"chart.png"``, ``"df"``), or ``None``.

    Lone surrogates in ``name``, ``url`` and ``media_type`` (a file name ``os.listdir`` gave for a name that is not
    UTF-8) become U+FFFD, however the part is made: every request that carries it must encode as UTF-8.

    Raises:
        ValueError: Not exactly one of ``data`` and ``url``, ``data`` that is not base64, or a media type that is
            not ``type/subtype``.
    """

    kind: ClassVar[Literal["file"]] = "file"

    media_type: str
    data: str | None = None
    url: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.media_type, str) or "/" not in self.media_type.strip("/ "):
            raise ValueError(f"a file part needs a media type such as 'image/png', not {self.media_type!r}")
        if (self.data is None) == (self.url is None):
            raise ValueError("a file part needs exactly one of data (base64) or url")
        if self.data is not None:
            if not isinstance(self.data, str):
                raise ValueError(f"a file part's data must be base64 text, not {type(self.data).__name__}")
            try:
                base64.b64decode(self.data, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("a file part's data must be base64 (without a data: prefix or line breaks)") from None
        if self.url is not None and (not isinstance(self.url, str) or not self.url.strip()):
            raise ValueError("a file part's url must be a non-empty string")
        if self.name is not None and not isinstance(self.name, str):
            raise ValueError(f"a file part's name must be a string, not {type(self.name).__name__}")
        for field in ("media_type", "url", "name"):
            value = getattr(self, field)
            if value is not None:
                object.__setattr__(self, field, safe_text(value))  # frozen: set here, before anyone sees the part

    @classmethod
    def from_bytes(cls, raw: bytes, media_type: str, *, name: str | None = None) -> FilePart:
        """A part holding ``raw`` inline."""
        return cls(media_type, data=base64.b64encode(raw).decode("ascii"), name=name)

    @property
    def size(self) -> int | None:
        """The file's size in bytes (``None`` for a URL), from the base64 length."""
        if self.data is None:
            return None
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    @property
    def data_url(self) -> str:
        """The file as a ``data:`` URL (inline data), or its URL."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.data}"

    def raw(self) -> bytes:
        """The file's bytes (``b""`` for a URL)."""
        return b"" if self.data is None else base64.b64decode(self.data)

    def pixels(self) -> tuple[int, int] | None:
        """The image's width and height in pixels, read from its header (PNG, JPEG, GIF, WebP) without decoding
        it; ``None`` for a URL, another format, or a header that cannot be read."""
        data = self.data
        if data is None:
            return None
        # Only the start is decoded: a few kilobytes hold the header, but a JPEG's may follow its metadata (EXIF, an
        # ICC profile). Past a megabyte of base64 the size counts as unknown: this runs for every request, and a
        # header that says nothing is never decoded whole.
        length = HEAD_CHARS
        while True:
            head = data[:length]
            size = image_pixels(base64.b64decode(head[: len(head) - len(head) % 4]))
            if size is not None or length >= min(len(data), MOST_HEAD_CHARS):
                return size
            length *= 16

    def describe(self) -> str:
        """A short line for a person: name, type and size (``chart.png, image/png, 12.3 KB``)."""
        size = self.size
        where = human_size(size) if size is not None else (self.url or "")
        return ", ".join([self.name or "(unnamed)", self.media_type, where])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data: dict[str, Any] = {"kind": "file", "media_type": self.media_type}
        for field in ("data", "url", "name"):
            value = getattr(self, field)
            if value is not None:
                data[field] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FilePart:
        """Rebuilds a part from :meth:`to_dict`'s output.

        Raises:
            ValueError: A field is missing or of the wrong type, or the part is not valid (see the class).
        """
        return cls(
            read_field(data, "media_type", str),
            data=read_field(data, "data", (str, type(None)), None),
            url=read_field(data, "url", (str, type(None)), None),
            name=read_field(data, "name", (str, type(None)), None),
        )

    def __repr__(self) -> str:
        return f"FilePart({self.describe()})"


#: The base64 characters first decoded to read an image's size, and the most (:meth:`FilePart.pixels`).
HEAD_CHARS = 4096
MOST_HEAD_CHARS = HEAD_CHARS * 16**2


def human_size(size: int) -> str:
    """A size for a person: ``70 B``, ``12.3 KB``, ``4.0 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
