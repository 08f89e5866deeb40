"""Kernel objects as parts of a message (``send(text, attach=...)``): each becomes :class:`FilePart` s (images, PDFs)
and :class:`TextPart` s (a bounded text view), and :class:`AttachmentLimits` says what a provider takes.

Converted here: pandas and polars DataFrames and Series, numpy arrays (bounded text views: shape, columns and dtypes,
the first rows, a note of what was left out), matplotlib figures and PIL images (PNG), ``pathlib.Path`` (text, image
or PDF, by what its bytes are), :class:`File` (bytes with a media type), ``bytes``, ``str``, plain JSON data, and
anything with a rich repr (``_repr_mimebundle_``, ``_repr_png_``, ``_repr_html_``, ...); :func:`register_converter`
adds a type of one's own. pandas, polars, numpy, matplotlib and PIL are never imported here: an object is one of
theirs only when its library is loaded already (``sys.modules``), so importing ai_widgets stays light.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import mimetypes
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, TypeAlias, TypeVar

from ai_widgets._media import IMAGE_TYPES, PDF_TYPE, is_pdf, sniff_image, whole_image
from ai_widgets._rich import (
    IMAGE_REPRS,
    TEXT_REPRS,
    ReprError,
    Table,
    bounded,
    figure_png,
    image_bytes,
    is_rich,
    loaded,
    pil_png,
    repr_bundle,
    table_body,
    table_of,
)
from ai_widgets._safe import safe_text
from ai_widgets.messages import FilePart, Message, TextPart
from ai_widgets.messages._files import human_size

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_COLUMNS",
    "DEFAULT_MAX_ROWS",
    "MAX_FILE_BYTES",
    "MAX_PARTS",
    "MAX_RENDER_SECONDS",
    "AttachmentError",
    "AttachmentLimits",
    "AttachmentPart",
    "File",
    "Preview",
    "message_attachments",
    "message_attachments_async",
    "object_parts",
    "register_converter",
    "rich_bundle",
    "table_text",
]

#: The most characters of one object's text view (a frame, an array, a text file, a string).
DEFAULT_MAX_CHARS = 20_000
#: The most rows and columns of a frame's text view.
DEFAULT_MAX_ROWS = 20
DEFAULT_MAX_COLUMNS = 50
#: The largest file read from a ``Path`` (it is read whole before its type is known).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The most parts one attached object becomes (a converter's list included): more is an :class:`AttachmentError`,
#: not a cut, since which parts to drop is the converter's to say.
MAX_PARTS = 100
#: The longest an attached figure, PIL image or rich repr may take to draw, in seconds (set it to allow more): past
#: it, an :class:`AttachmentError`. A drawing cannot be stopped: it goes on in the background, and is dropped.
MAX_RENDER_SECONDS = 30.0

AttachmentPart: TypeAlias = FilePart | TextPart
#: A converter: the object in, what it becomes out (parts, or anything ``attach`` takes: a ``File``, a str, ...).
Converter: TypeAlias = Callable[[Any], Any]
T = TypeVar("T")


class AttachmentError(ValueError):
    """An object cannot be attached: no converter takes it, or the provider would refuse the file (the message
    names the limit). Raised before anything is sent and before the message enters the history."""


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    """What a provider takes of the files in a request; each transport declares its own (``attachment_limits``).

    Attributes:
        provider: The provider's name, for the messages.
        image_types: The image types it takes.
        max_image_bytes: The largest image.
        max_images: The most images in one request (the whole conversation's).
        document_types: The document types it takes (PDF).
        max_document_bytes: The largest document.
        max_total_bytes: The most bytes of inline files in one request (the whole conversation's).
        url_kinds: What may be sent by URL: ``"image"``, ``"document"``.
        max_image_side: The most pixels an image may have on either side, or ``None`` for a provider that scales
            any image down. Read from the image's header; an image whose size cannot be read is not refused for it.
        many_images: In a request that carries more images than this...
        max_image_side_when_many: ...each may have at most this many pixels on either side (``None``: no such rule).
    """

    provider: str
    max_image_bytes: int
    max_images: int
    max_document_bytes: int
    max_total_bytes: int
    image_types: frozenset[str] = IMAGE_TYPES
    document_types: frozenset[str] = frozenset({PDF_TYPE})
    url_kinds: frozenset[str] = frozenset({"image", "document"})
    max_image_side: int | None = None
    many_images: int | None = None
    max_image_side_when_many: int | None = None

    def max_side(self, images: int) -> int | None:
        """The most pixels an image may have on either side in a request that carries ``images`` images
        (``None``: any)."""
        side = self.max_image_side
        if self.many_images is not None and self.max_image_side_when_many is not None and images > self.many_images:
            side = self.max_image_side_when_many if side is None else min(side, self.max_image_side_when_many)
        return side

    def check(self, parts: Iterable[FilePart | TextPart], earlier: Iterable[Message] = ()) -> None:
        """Refuses files the provider would refuse, before anything is sent.

        Args:
            parts: The new message's parts.
            earlier: The conversation so far (its files count against the per-request limits too).

        Raises:
            AttachmentError: A file of a type, size or number the provider refuses; the message names the limit.
        """
        files = [p for p in parts if isinstance(p, FilePart)]
        older = [p for m in earlier for p in m.parts if isinstance(p, FilePart)]
        for part in files:
            self._check_one(part)
        images = [p for p in (*older, *files) if p.media_type in self.image_types]
        if len(images) > self.max_images:
            raise AttachmentError(
                f"{self.provider} takes at most {self.max_images:,} images in one request, and this message would "
                f"make the conversation carry {len(images):,}"
            )
        side = self.max_side(len(images))
        if side is not None and side != self.max_image_side:  # a stricter limit for a request of many images
            for part in images:
                pixels = part.pixels()
                if pixels is not None and max(pixels) > side:
                    raise AttachmentError(
                        f"{self.provider} takes images of at most {side:,} px a side when a request carries more "
                        f"than {self.many_images:,} images, and this message would make the conversation carry "
                        f"{len(images):,}: {part.name or part.media_type} is {_pixels(pixels)}"
                    )
        total = sum(p.size or 0 for p in (*older, *files))
        if total > self.max_total_bytes:
            raise AttachmentError(
                f"{self.provider} takes at most {human_size(self.max_total_bytes)} of files in one request, and this "
                f"message would make the conversation carry {human_size(total)}"
            )

    def kind_of(self, part: FilePart, *, images: int = 0) -> str | None:
        """How the provider takes this file: ``"image"``, ``"document"``, or ``None`` when it would refuse it (its
        type, its size, its pixels in a request of ``images`` images, a URL it cannot fetch). A transport sends a
        refused file as a note saying what it was: a file from a conversation that moved from another provider, or
        from a history file, must not make every later request fail."""
        if self._problem(part):
            return None
        kind = self._kind(part)
        side = self.max_side(images)
        if kind == "image" and side is not None and side != self.max_image_side:
            pixels = part.pixels()
            if pixels is not None and max(pixels) > side:
                return None
        return kind

    def _kind(self, part: FilePart) -> str | None:
        if part.media_type in self.image_types:
            return "image"
        return "document" if part.media_type in self.document_types else None

    def _check_one(self, part: FilePart) -> None:
        problem = self._problem(part)
        if problem is not None:
            raise AttachmentError(problem)

    def _problem(self, part: FilePart) -> str | None:
        label = part.name or part.media_type
        kind = self._kind(part)
        if kind is None:
            taken = ", ".join(sorted(self.image_types | self.document_types))
            return f"{self.provider} does not take {part.media_type} files ({label}); it takes {taken}"
        limit = self.max_image_bytes if kind == "image" else self.max_document_bytes
        if part.url is not None and kind not in self.url_kinds:
            return f"{self.provider} does not take a {kind} by URL ({label}): attach its bytes"
        size = part.size
        if size is not None and size > limit:
            return f"{self.provider} takes {kind}s of at most {human_size(limit)}, and {label} is {human_size(size)}"
        if size == 0:
            return f"{label} is empty: {self.provider} refuses an empty {kind}"
        if kind == "image" and self.max_image_side is not None:
            pixels = part.pixels()
            if pixels is not None and max(pixels) > self.max_image_side:
                return (
                    f"{self.provider} takes images of at most {self.max_image_side:,} px a side, and {label} is "
                    f"{_pixels(pixels)}"
                )
        return None


def _pixels(size: tuple[int, int]) -> str:
    return f"{size[0]:,} x {size[1]:,} px"


@dataclass(frozen=True, slots=True)
class File:
    """Bytes to attach, with their media type.

    Attributes:
        data: The file's bytes.
        media_type: Its MIME type, e.g. ``"image/png"``, ``"application/pdf"``, ``"text/csv"``.
        name: A name for the person and the model.
    """

    data: bytes
    media_type: str
    name: str | None = None

    def __post_init__(self) -> None:
        data: Any = self.data
        if isinstance(data, (bytearray, memoryview)):
            object.__setattr__(self, "data", bytes(data))
        elif not isinstance(data, bytes):
            raise TypeError(f"File data must be bytes, not {type(self.data).__name__}")
        if not isinstance(self.media_type, str) or "/" not in self.media_type.strip("/ "):
            raise ValueError(f"File needs a media type such as 'image/png', not {self.media_type!r}")


@dataclass(frozen=True, slots=True)
class Preview:
    """An object to attach with a budget of its own for its text view (and a name).

    ``attach=[Preview(df, max_rows=200)]`` sends 200 rows of ``df`` instead of the default 20.

    Attributes:
        value: The object.
        name: What the model and the person see it called (``"sales"``).
        max_rows: The most rows of a frame or series shown.
        max_columns: The most columns of a frame shown.
        max_chars: The most characters of its text view.
    """

    value: Any
    name: str | None = None
    max_rows: int = DEFAULT_MAX_ROWS
    max_columns: int = DEFAULT_MAX_COLUMNS
    max_chars: int = DEFAULT_MAX_CHARS

    def __post_init__(self) -> None:
        for field in ("max_rows", "max_columns", "max_chars"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Preview {field} must be a positive integer, not {value!r}")


_CONVERTERS: dict[type, Converter] = {}


def register_converter(kind: type, convert: Converter) -> None:
    """Makes objects of ``kind`` (and its subclasses) attachable; it wins over the built-in conversions.

    Args:
        kind: The type.
        convert: Called with the object; returns a part, a :class:`File`, a str, any other attachable object, or a
            list of them: at most :data:`MAX_PARTS` parts in all (more is an :class:`AttachmentError`).

    Raises:
        TypeError: ``kind`` is not a type, or ``convert`` is not callable.
    """
    if not isinstance(kind, type):
        raise TypeError(f"register_converter needs a type, not {kind!r}")
    if not callable(convert):
        raise TypeError("register_converter needs a callable converter")
    _CONVERTERS[kind] = convert


def message_attachments(attach: Any) -> list[AttachmentPart]:
    """The parts of everything ``send(..., attach=attach)`` is given: a list or tuple of objects, a dict of name to
    object (the names are what the model sees), or one object.

    Raises:
        AttachmentError: An object cannot be converted.
    """
    if attach is None:
        return []
    if isinstance(attach, Mapping):
        items: list[tuple[str | None, Any]] = [(str(name), value) for name, value in attach.items()]
    elif isinstance(attach, (list, tuple)):
        items = [(None, value) for value in attach]
    else:
        items = [(None, attach)]
    parts: list[AttachmentPart] = []
    for name, value in items:
        parts += object_parts(value, name=name)
    return parts


async def message_attachments_async(attach: Any) -> list[AttachmentPart]:
    """:func:`message_attachments`, awaited: objects are converted on a worker thread, so that drawing a figure or a
    chart (up to :data:`MAX_RENDER_SECONDS`) does not hold up the event loop the caller awaits on (a kernel's, with
    its widgets); parts alone (or nothing) have nothing to draw, and are taken at once, without a thread.

    Raises:
        AttachmentError: An object cannot be converted.
    """
    items = attach if isinstance(attach, (list, tuple)) else () if attach is None else [attach]
    if all(isinstance(item, (FilePart, TextPart)) for item in items):
        return message_attachments(attach)
    return await asyncio.to_thread(message_attachments, attach)


def object_parts(
    value: Any,
    *,
    name: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> list[AttachmentPart]:
    """The parts one object becomes in a message (see the module's docstring for what is converted and how).

    Args:
        value: The object.
        name: What it is called (a variable's name); a file's own name otherwise.
        max_rows: The most rows of a frame or series in its text view.
        max_columns: The most columns of a frame in its text view.
        max_chars: The most characters of any text view.

    Raises:
        AttachmentError: Nothing converts the object, its conversion failed (the message says why; any other
            exception raised while converting, such as a ``__repr__`` that raises, is its ``__cause__``), gave more
            than :data:`MAX_PARTS` parts, or took longer than :data:`MAX_RENDER_SECONDS` to draw (a figure, an
            image, a rich repr).
    """
    preview = Preview(value, None if name is None else safe_text(name), max_rows, max_columns, max_chars)
    try:
        return _convert(preview, depth=0)
    except AttachmentError:
        raise
    except Exception as exc:  # an object of the person's may raise anything from any method a conversion calls
        named = f" `{preview.name}`" if preview.name else ""
        raise AttachmentError(f"cannot attach {_what(value)}{named}: {_failure(exc)}") from exc


# --- dispatch ---------------------------------------------------------------------------------------------------------


def _convert(preview: Preview, *, depth: int) -> list[AttachmentPart]:
    value, name = preview.value, preview.name
    if depth > 8:
        raise AttachmentError(f"cannot attach {_what(value)}: its converters return one another without end")
    if isinstance(value, FilePart):
        return [value]  # made safe when it was made
    if isinstance(value, TextPart):
        return [TextPart(safe_text(value.text))]  # a copy: lone surrogates would fail every later request
    if isinstance(value, Preview):
        return _convert(value if value.name or not name else _renamed(value, name), depth=depth + 1)
    for kind in type(value).__mro__:
        convert = _CONVERTERS.get(kind)
        if convert is not None:
            return _converted(convert, preview, depth)
    if isinstance(value, File):
        return _file_parts(value.data, value.media_type, name or value.name, preview.max_chars)
    if isinstance(value, str):
        return [TextPart(_titled("Text", name, _bounded(value, preview.max_chars)))]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_parts(bytes(value), name, None, preview.max_chars)
    if isinstance(value, PurePath):
        return _path_parts(value, name, preview.max_chars)
    for library in _LIBRARIES:
        parts = library(preview)
        if parts is not None:
            return parts
    parts = _rich_parts(preview)
    if parts is not None:
        return parts
    if value is None or isinstance(value, (dict, list, tuple, int, float, bool)):
        try:
            text = _json_view(value, preview.max_chars)
        except (ValueError, TypeError, RecursionError) as exc:
            raise AttachmentError(f"cannot attach {_what(value)}: it is not JSON data ({exc})") from None
        return [TextPart(_titled(type(value).__name__, name, text))]
    raise AttachmentError(
        f"cannot attach {_what(value)}: no conversion for {type(value).__module__}.{type(value).__qualname__} "
        "(ai_widgets.register_converter(type, fn) adds one; File(data, media_type) attaches bytes)"
    )


def _renamed(preview: Preview, name: str) -> Preview:
    return Preview(preview.value, name, preview.max_rows, preview.max_columns, preview.max_chars)


def _converted(convert: Converter, preview: Preview, depth: int) -> list[AttachmentPart]:
    try:
        result = convert(preview.value)
    except AttachmentError:
        raise
    except Exception as exc:
        raise AttachmentError(f"the converter of {_what(preview.value)} failed: {type(exc).__name__}: {exc}") from exc
    items = result if isinstance(result, list) else [result]
    if len(items) > MAX_PARTS:  # refused before any is converted
        raise AttachmentError(
            f"the converter of {_what(preview.value)} returned {len(items):,} items: one attachment gives at most "
            f"{MAX_PARTS:,} parts"
        )
    parts: list[AttachmentPart] = []
    for item in items:
        if item is preview.value:
            raise AttachmentError(f"the converter of {_what(preview.value)} returned the object itself")
        parts += _convert(
            Preview(item, preview.name, preview.max_rows, preview.max_columns, preview.max_chars), depth=depth + 1
        )
        if len(parts) > MAX_PARTS:  # items that each become several
            raise AttachmentError(
                f"cannot attach {_what(preview.value)}: it gives more than {MAX_PARTS:,} parts, the most one "
                "attachment gives"
            )
    return parts


def _failure(exc: BaseException) -> str:
    """What an exception says, as ``Type: message`` (its type alone when its message cannot be had)."""
    try:
        message = str(exc)
    except Exception:
        message = ""
    return safe_text(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


def _what(value: Any) -> str:
    name = type(value).__qualname__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _titled(kind: str, name: str | None, body: str) -> str:
    """A text view with its header; lone surrogates (a file name ``os.listdir`` gave) made safe for the history."""
    return safe_text(f"Attached {kind}{f' `{name}`' if name else ''}:\n{body}")


def _bounded(text: str, max_chars: int) -> str:
    """``text``, or its first ``max_chars`` characters and a note of what was left out."""
    return bounded(text, max_chars, " (Preview(value, max_chars=...) sets another budget)")


_BUDGET_HINT = "; Preview(value, max_chars=...) sets another budget"


def _json_view(value: Any, max_chars: int) -> str:
    """Plain data as indented JSON, encoded only as far as ``max_chars`` reaches, and a note when it goes on: a list
    of millions of numbers is not serialised whole to show its first thousands (so a problem past the budget, a
    NaN or a cycle, goes unseen).

    Raises:
        ValueError, TypeError, RecursionError: The data encoded within the budget is not JSON data.
    """
    encoder = json.JSONEncoder(ensure_ascii=False, indent=1, allow_nan=False, default=str)
    chunks: list[str] = []
    size = 0
    for chunk in encoder.iterencode(value):  # lazily, piece by piece (the one-shot C encoder makes all at once)
        chunks.append(chunk)
        size += len(chunk)
        if size > max_chars:
            head = "".join(chunks)[:max_chars]
            return f"{head}\n[… the rest left out: this view is at most {max_chars:,} characters{_BUDGET_HINT}]"
    return "".join(chunks)


# --- bytes, files and paths -------------------------------------------------------------------------------------------

_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml", "image/svg+xml")


def _path_parts(path: PurePath, name: str | None, max_chars: int) -> list[AttachmentPart]:
    if isinstance(path, Path):
        path = path.expanduser()
    try:
        status = path.stat()  # type: ignore[attr-defined]  # a PurePath that is no Path has no stat: refused below
    except AttributeError:
        raise AttachmentError(f"cannot attach {path}: a pure path names no file on this machine") from None
    except FileNotFoundError:
        raise AttachmentError(f"cannot attach {path}: no such file") from None
    except OSError as exc:
        raise AttachmentError(f"cannot attach {path}: {exc.strerror or exc}") from None
    if path.is_dir():  # type: ignore[attr-defined]
        raise AttachmentError(f"cannot attach {path}: it is a directory (attach the files in it)")
    if not path.is_file():  # type: ignore[attr-defined]
        raise AttachmentError(f"cannot attach {path}: not a regular file")
    if status.st_size > MAX_FILE_BYTES:
        raise AttachmentError(
            f"cannot attach {path}: it is {status.st_size:,} bytes, and a file is read whole only up to "
            f"{MAX_FILE_BYTES:,} bytes"
        )
    try:
        raw = path.read_bytes()  # type: ignore[attr-defined]
    except OSError as exc:
        raise AttachmentError(f"cannot attach {path}: {exc.strerror or exc}") from None
    return _bytes_parts(raw, name or path.name, mimetypes.guess_type(path.name)[0], max_chars)


def _bytes_parts(raw: bytes, name: str | None, claimed: str | None, max_chars: int) -> list[AttachmentPart]:
    """A file's parts by what its bytes are: an image or a PDF as a file, UTF-8 as text; ``claimed`` (from its
    name) only says what it should have been."""
    label = name or "the bytes"
    image = sniff_image(raw[:16])
    if image is not None:
        if not whole_image(image, raw):
            raise AttachmentError(f"cannot attach {label}: the {image.split('/')[1].upper()} image is cut short")
        return [FilePart.from_bytes(raw, image, name=name)]
    if is_pdf(raw):
        return [FilePart.from_bytes(raw, PDF_TYPE, name=name)]
    if claimed is not None and (claimed in IMAGE_TYPES or claimed == PDF_TYPE):
        what = "empty" if not raw else f"not a {claimed.split('/')[1].upper()}: its bytes are something else"
        raise AttachmentError(f"cannot attach {label} as {claimed}: it is {what}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AttachmentError(
            f"cannot attach {label}: it is binary ({claimed or 'of unknown type'}), not text, an image (PNG, JPEG, "
            "GIF, WebP) or a PDF; File(data, media_type) sends other files as they are"
        ) from None
    return [TextPart(_titled("text file", name, _bounded(text, max_chars) if text else "(empty)"))]


def _file_parts(raw: bytes, media_type: str, name: str | None, max_chars: int) -> list[AttachmentPart]:
    media_type = media_type.split(";")[0].strip().lower()
    if media_type.startswith("text/") or media_type in _TEXT_TYPES:
        return _bytes_parts(raw, name, "text/plain", max_chars)
    if media_type.startswith("image/") or media_type == PDF_TYPE:
        if not raw:
            raise AttachmentError(f"cannot attach {name or 'the file'} as {media_type}: it is empty")
        if media_type in IMAGE_TYPES or media_type == PDF_TYPE:
            return _bytes_parts(raw, name, media_type, max_chars)  # read from the bytes: a JPEG labelled PNG is one
    return [FilePart.from_bytes(raw, media_type, name=name)]  # the provider's limits say whether it takes it


# --- the data libraries (used only when loaded already) ---------------------------------------------------------------

_MORE = "; Preview(value, max_rows=..., max_columns=...) shows more"


def table_text(
    *,
    kind: str,
    name: str | None,
    shape: tuple[int, int],
    columns: list[tuple[Any, Any]],
    rows: Sequence[tuple[Any, ...]],
    index: str | None,
    max_chars: int,
) -> str:
    """A frame's text view: its shape, its columns with their dtypes, its first rows as a markdown table, and a
    note of what was left out; at most ``max_chars`` characters (the columns and the whole rows that fit, the note
    saying what the budget left out).

    Args:
        kind: What the frame is (``"pandas DataFrame"``).
        name: Its name, if known.
        shape: All its rows and columns.
        columns: The columns shown, as (name, dtype).
        rows: The rows shown, each a tuple (its index value first when ``index`` is not ``None``).
        index: The header of the index column, or ``None`` for a frame without one.
        max_chars: The budget.
    """
    body = table_body(
        Table(kind, shape, columns, rows, index), hint=_MORE, max_chars=max_chars, budget_hint=_BUDGET_HINT
    )
    return _titled(kind, name, _bounded(body, max_chars))


def _frames(preview: Preview) -> list[AttachmentPart] | None:
    """A pandas or polars frame or series as its one text part (:func:`table_text`), within the preview's budget."""
    table = table_of(
        preview.value, max_rows=preview.max_rows, max_columns=preview.max_columns, max_chars=preview.max_chars
    )
    if table is None:
        return None
    text = table_text(
        kind=table.kind,
        name=preview.name,
        shape=table.shape,
        columns=table.columns,
        rows=table.rows,
        index=table.index,
        max_chars=preview.max_chars,
    )
    return [TextPart(text)]


def _numpy(preview: Preview) -> list[AttachmentPart] | None:
    array_type, scalar_type = loaded("numpy", "ndarray"), loaded("numpy", "generic")
    value = preview.value
    if scalar_type is not None and isinstance(value, scalar_type):
        return [TextPart(_titled(f"numpy {value.dtype}", preview.name, _bounded(str(value), preview.max_chars)))]
    if array_type is None or not isinstance(value, array_type):
        return None
    numpy = sys.modules["numpy"]
    # numpy summarises an array past ``threshold`` elements (``edgeitems`` at each end of each axis): the text is
    # bounded however large the array is.
    text = numpy.array2string(value, threshold=preview.max_rows * 10, edgeitems=3, max_line_width=120)
    body = f"shape {tuple(int(n) for n in value.shape)}, dtype {value.dtype}\n{text}"
    return [TextPart(_titled("numpy array", preview.name, _bounded(body, preview.max_chars)))]


_DRAWN = (("matplotlib.figure", "Figure"), ("matplotlib.axes", "Axes"), ("PIL.Image", "Image"))


def _images(preview: Preview) -> list[AttachmentPart] | None:
    """A matplotlib figure (or axes) or a PIL image as its PNG."""
    value, name = preview.value, preview.name
    if not any(isinstance(value, kind) for kind in (loaded(*where) for where in _DRAWN) if kind is not None):
        return None

    def draw() -> tuple[bytes | None, str]:
        try:
            raw = figure_png(value)
            return (raw, "figure") if raw is not None else (pil_png(value), "image")
        except ReprError as exc:
            raise AttachmentError(f"cannot attach {exc}") from exc

    raw, what = _drawn(draw, value, name)
    if raw is None:
        return None
    return _bytes_parts(raw, f"{name or what}.png", "image/png", DEFAULT_MAX_CHARS)


def _drawn(draw: Callable[[], T], value: Any, name: str | None) -> T:
    """What ``draw()`` gives, drawn on a thread of its own and waited for at most :data:`MAX_RENDER_SECONDS`: a
    figure of ten thousand subplots takes minutes, and an attachment is made while the person waits.

    Raises:
        AttachmentError: The drawing took longer (it goes on in the background; what it gives is dropped), or
            ``draw`` raised it.
    """
    limit = MAX_RENDER_SECONDS
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def work() -> None:
        try:
            future.set_result(draw())
        except BaseException as exc:  # the caller raises it
            future.set_exception(exc)

    # A daemon thread: a drawing that never ends must not hold up the interpreter's exit.
    threading.Thread(target=work, name="ai_widgets attachment drawing", daemon=True).start()
    try:
        return future.result(timeout=limit)
    except concurrent.futures.TimeoutError:
        raise AttachmentError(
            f"cannot attach {_what(value)}{f' `{name}`' if name else ''}: drawing it took more than {limit:g} s "
            "(ai_widgets.attachments.MAX_RENDER_SECONDS); it goes on in the background, and what it draws is dropped"
        ) from None


_LIBRARIES: tuple[Callable[[Preview], list[AttachmentPart] | None], ...] = (_frames, _numpy, _images)


# --- rich reprs -------------------------------------------------------------------------------------------------------


def rich_bundle(value: Any) -> dict[str, Any]:
    """The mime bundle an object's rich repr gives, as IPython would ask for it (``_repr_mimebundle_`` first, then
    each ``_repr_*_`` it lacks); empty when it has none.

    Raises:
        AttachmentError: A repr method raised.
    """
    try:
        bundle, _, _ = repr_bundle(value)
    except ReprError as exc:
        raise AttachmentError(f"cannot attach {_what(value)}: {exc}") from exc
    return bundle


def _rich_parts(preview: Preview) -> list[AttachmentPart] | None:
    value = preview.value
    # Drawn on a thread of its own, within the time limit (a chart's repr may render it): only what has a rich
    # repr, not every plain list.
    bundle = _drawn(lambda: rich_bundle(value), value, preview.name) if is_rich(value) else rich_bundle(value)
    parts: list[AttachmentPart] = []
    for mime, _ in IMAGE_REPRS:
        raw = image_bytes(bundle.get(mime))
        if raw is not None and sniff_image(raw[:16]) == mime and whole_image(mime, raw):
            suffix = ".png" if mime == "image/png" else ".jpg"
            parts.append(FilePart.from_bytes(raw, mime, name=f"{preview.name or 'image'}{suffix}"))
            break
    for mime, _ in TEXT_REPRS:
        text = bundle.get(mime)
        if mime == "application/json" and text is not None and not isinstance(text, str):
            try:
                text = json.dumps(text, ensure_ascii=False, default=str)
            except (ValueError, TypeError, RecursionError):
                text = None
        if isinstance(text, str) and text.strip():
            kind = f"{type(preview.value).__qualname__} (as {mime})"
            parts.append(TextPart(_titled(kind, preview.name, _bounded(text, preview.max_chars))))
            break
    return parts or None
