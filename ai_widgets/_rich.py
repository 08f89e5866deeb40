"""Kernel objects read the way a notebook reads them, for attachments and tool results alike: a rich repr's mime
bundle (``_repr_mimebundle_``, then each ``_repr_*_``), a frame's rows for a bounded text view, a figure or a PIL
image as PNG, and what one tool result keeps to show (:func:`display_form`).

pandas, polars, matplotlib and PIL are never imported here: an object is one of theirs only when its library is
loaded already (``sys.modules``), so importing ai_widgets stays light.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._media import IMAGE_TYPES, sniff_image, whole_image
from ai_widgets._safe import UnsafeValueError, checked_json, safe_text

__all__ = [
    "IMAGE_REPRS",
    "MAX_DISPLAY_CHARS",
    "MAX_DISPLAY_TEXT_CHARS",
    "TEXT_REPRS",
    "WIDGET_VIEW_TYPE",
    "DisplayForm",
    "ReprError",
    "Table",
    "bounded",
    "cell",
    "close_shown_figure",
    "display_form",
    "figure_png",
    "image_bytes",
    "is_rich",
    "loaded",
    "pil_png",
    "repr_bundle",
    "table_body",
    "table_of",
]

#: The mime type of an ipywidget's view: its model's id, which a front end with the widget manager shows live.
WIDGET_VIEW_TYPE = "application/vnd.jupyter.widget-view+json"
#: The most characters of one result's display data (all its mime types together, images as base64): a result is
#: kept in the history file, the widget's state and the saved notebook. A type past it is left out, saying so.
MAX_DISPLAY_CHARS = 8_000_000
#: The most characters of a result's text form (what the model reads of it), as for an attachment's text view.
MAX_DISPLAY_TEXT_CHARS = 20_000
MAX_TABLE_ROWS = 20
MAX_TABLE_COLUMNS = 50
MAX_CELL_CHARS = 60  # one cell of a frame's text view

IMAGE_REPRS = (("image/png", "_repr_png_"), ("image/jpeg", "_repr_jpeg_"))
TEXT_REPRS = (
    ("text/markdown", "_repr_markdown_"),
    ("text/plain", None),
    ("text/html", "_repr_html_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
    ("image/svg+xml", "_repr_svg_"),
)
REPR_METHODS = ("_repr_mimebundle_", *(name for _, name in (*IMAGE_REPRS, *TEXT_REPRS) if name))
DEFAULT_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>")
PLAIN = (str, bytes, bytearray, memoryview, int, float, bool, dict, list, tuple, set, frozenset, type)


class ReprError(Exception):
    """An object's rich repr raised, or a figure or image could not be saved as PNG."""


def loaded(module: str, name: str) -> Any:
    """The class ``module.name`` when its library is loaded already, else ``None`` (typed ``Any``: the objects it
    recognises are read with their own library's API)."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def bounded(text: str, max_chars: int, hint: str = "") -> str:
    """``text``, or its first ``max_chars`` characters and a note of what was left out (``hint`` says how to see
    more)."""
    if len(text) <= max_chars:
        return text
    more = len(text) - max_chars
    return f"{text[:max_chars]}\n[… {more:,} more characters left out: this view is at most {max_chars:,} characters{hint}]"


# --- frames -----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Table:
    """What a frame's text view shows: what it is, its whole shape, the columns and first rows shown."""

    kind: str
    shape: tuple[int, int]
    columns: list[tuple[Any, Any]]
    rows: Sequence[tuple[Any, ...]]
    index: str | None  # the header of the index column, or None for a frame without one


def cell(value: Any) -> str:
    """One cell of a table's text view: one line, pipes escaped, at most a few dozen characters."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"  # as pandas and polars show a missing float, not Python's "nan"
    try:
        text = str(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def fitting(max_chars: int | None, width: int, limit: int) -> int:
    """At most ``limit``, and no more items of at least ``width`` characters each than ``max_chars`` holds (and one
    more, so that a view cut by its budget always finds one left over and says so)."""
    return limit if max_chars is None else min(limit, max(0, max_chars) // width + 1)


def table_of(value: Any, *, max_rows: int, max_columns: int, max_chars: int | None = None) -> Table | None:
    """A pandas or polars frame's or series' :class:`Table` (its first ``max_rows`` rows and ``max_columns``
    columns), or ``None`` for anything else.

    With ``max_chars``, only as many rows and columns are read as a view of that many characters could show
    (:func:`table_body` shows those that fit): a budget of a billion rows reads a few hundred of a huge frame.
    """
    frame, series = loaded("pandas", "DataFrame"), loaded("pandas", "Series")
    if frame is not None and isinstance(value, frame):
        shape = (int(value.shape[0]), int(value.shape[1]))
        max_columns = fitting(max_chars, MIN_COLUMN_CHARS, min(max_columns, shape[1]))
        max_rows = fitting(max_chars, row_chars(max_columns + 1), max_rows)
        head = value.iloc[:max_rows, :max_columns]
        columns = list(zip(head.columns, head.dtypes.tolist(), strict=True))  # once: each read builds a Series
        rows: Sequence[tuple[Any, ...]] = FrameRows(head) if max_chars is not None else frame_rows(head)
    elif series is not None and isinstance(value, series):
        columns = [(value.name if value.name is not None else "value", value.dtype)]
        rows = list(value.iloc[: fitting(max_chars, row_chars(2), max_rows)].items())
        shape = (len(value), 1)
    else:
        return polars_table(value, max_rows=max_rows, max_columns=max_columns, max_chars=max_chars)
    index = cell(value.index.name) if value.index.name is not None else ""
    return Table(f"pandas {type(value).__name__}", shape, columns, rows, index)


def frame_rows(head: Any) -> list[tuple[Any, ...]]:
    """A pandas frame's rows as tuples of objects, its index value first. As objects, row by row: a frame without
    columns still has its rows (``itertuples`` would give none)."""
    return [(i, *row) for i, row in zip(head.index, head.to_numpy(dtype=object).tolist(), strict=True)]


class FrameRows(Sequence[tuple[Any, ...]]):
    """A pandas frame's rows (:func:`frame_rows`), read a chunk at a time as they are asked for: a view whose
    budget ends after a few hundred rows reads only those, however many the most it could show."""

    def __init__(self, head: Any) -> None:
        self._head = head
        self._read: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return int(self._head.shape[0])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice) or index < 0:
            return frame_rows(self._head)[index]
        while len(self._read) <= index < len(self):
            start = len(self._read)
            self._read += frame_rows(self._head.iloc[start : start + max(32, start)])
        return self._read[index]


def polars_table(value: Any, *, max_rows: int, max_columns: int, max_chars: int | None) -> Table | None:
    frame, series = loaded("polars", "DataFrame"), loaded("polars", "Series")
    if frame is not None and isinstance(value, frame):
        names = list(value.columns)[: fitting(max_chars, MIN_COLUMN_CHARS, max_columns)]
        columns = list(zip(names, value.dtypes[: len(names)], strict=True))
        rows = value.head(fitting(max_chars, row_chars(len(names)), max_rows)).select(names).rows() if names else []
        shape = (int(value.height), int(value.width))
    elif series is not None and isinstance(value, series):
        columns = [(value.name or "value", value.dtype)]
        rows = [(v,) for v in value.head(fitting(max_chars, row_chars(1), max_rows)).to_list()]
        shape = (len(value), 1)
    else:
        return None
    return Table(f"polars {type(value).__name__}", shape, columns, rows, None)


#: The fewest characters one column takes in a view's ``Columns (dtype)`` line (``, x (y)``).
MIN_COLUMN_CHARS = 5


def row_chars(cells: int) -> int:
    """The fewest characters a row of ``cells`` cells takes in a view's table (``|  |  |`` and its line break)."""
    return 3 * max(cells, 1) + 2


def left_out(rows: int, columns: int, shape: tuple[int, int], why: str) -> str:
    left = [f"{rows:,} of {shape[0]:,} rows"] if rows else []
    if columns:
        left.append(f"{columns:,} of {shape[1]:,} columns")
    return f"(Not shown: {' and '.join(left)}{why}.)" if left else ""


def table_body(table: Table, *, hint: str = "", max_chars: int | None = None, budget_hint: str = "") -> str:
    """A frame's text view without its title: its shape, its columns with their dtypes, its first rows as a markdown
    table, and a note of what was left out (``hint`` says how to see more).

    With ``max_chars``, the view shows only the columns and the whole rows that fit in that many characters with
    its note, which then says that the budget left them out (``budget_hint`` says how to set another). Only those
    are formatted: a view of a table of millions of rows costs what it shows.
    """
    n_rows, n_columns = table.shape
    index = table.index
    lines = [f"{n_rows:,} row{'s' * (n_rows != 1)} × {n_columns:,} column{'s' * (n_columns != 1)}"]
    budget = "" if max_chars is None else f": this view is at most {max_chars:,} characters{budget_hint}"
    # The room for the columns and the rows: the budget less the shape line and the longest note it may end with.
    worst_note = left_out(n_rows, n_columns, table.shape, max(budget, hint, key=len))
    room = math.inf if max_chars is None else max_chars - len(lines[0]) - len(worst_note) - 3
    # The columns line takes at most a third of it: the table's header repeats the names, and rows need room too.
    described: list[str] = []
    used = len("Columns (dtype): ") + 1
    for name, dtype in table.columns:
        entry = f"{cell(name)} ({dtype})"
        used += len(entry) + 2 * bool(described)
        if used > room / 3:
            break
        described.append(entry)
    room -= used
    columns = table.columns[: len(described)]
    if described:
        lines.append("Columns (dtype): " + ", ".join(described))
    shown = 0
    if table.rows:
        header = ([index] if index is not None else []) + [cell(c) for c, _ in columns]
        top = ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        room -= sum(len(line) + 1 for line in top)
        if room >= 0:
            lines += top
        for row in table.rows if room >= 0 else ():
            line = "| " + " | ".join(cell(v) for v in row[: len(header)]) + " |"
            room -= len(line) + 1
            if room < 0:
                break
            lines.append(line)
            shown += 1
    cut = room < 0 or len(columns) < len(table.columns)
    note = left_out(n_rows - shown, n_columns - len(columns), table.shape, budget if cut else hint)
    if note:
        lines += ["", note]
    return "\n".join(lines)


# --- figures and images -----------------------------------------------------------------------------------------------


def png(save: Callable[[io.BytesIO], None], what: str) -> bytes:
    buffer = io.BytesIO()
    try:
        save(buffer)
    except Exception as exc:
        raise ReprError(f"{what}: it could not be saved as PNG ({type(exc).__name__}: {exc})") from exc
    return buffer.getvalue()


def figure_png(value: Any) -> bytes | None:
    """A matplotlib Figure (or the figure of an Axes) as PNG, as the notebook's inline backend shows it; ``None``
    for anything else.

    Raises:
        ReprError: The figure could not be saved.
    """
    figure_type, axes_type = loaded("matplotlib.figure", "Figure"), loaded("matplotlib.axes", "Axes")
    if axes_type is not None and isinstance(value, axes_type):
        value = value.figure
    if figure_type is None or not isinstance(value, figure_type):
        return None
    return png(lambda out: value.savefig(out, format="png", bbox_inches="tight"), "a matplotlib Figure")


def close_shown_figure(value: Any) -> None:
    """Closes a pyplot figure (or an Axes' figure) once it is shown, as the notebook's inline backend does after it
    displays one: left open, it would show again under the next cell the person runs. Other backends' figures
    (a window, an ipympl canvas) are the person's to close."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    figure = getattr(value, "figure", value)
    number = getattr(figure, "number", None)
    if pyplot is None or not isinstance(number, int):
        return
    try:
        if "inline" in str(pyplot.get_backend()).lower() and pyplot.fignum_exists(number):
            pyplot.close(figure)
    except Exception:  # a backend that cannot say: the figure stays open
        return


def pil_png(value: Any) -> bytes | None:
    """A PIL Image as PNG (a mode PNG has no form for converted to RGBA); ``None`` for anything else.

    Raises:
        ReprError: The image could not be saved.
    """
    image_type = loaded("PIL.Image", "Image")
    if image_type is None or not isinstance(value, image_type):
        return None

    def save(out: io.BytesIO) -> None:
        try:
            value.save(out, format="PNG")
        except (OSError, ValueError):  # a mode PNG has no form for (CMYK, YCbCr...)
            out.seek(0)
            out.truncate()
            value.convert("RGBA").save(out, format="PNG")

    return png(save, "a PIL Image")


def image_bytes(data: Any) -> bytes | None:
    """A mime bundle's image as bytes (bundles hold base64 text; a ``_repr_png_`` may give bytes), or ``None``."""
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if isinstance(data, str):
        try:
            return base64.b64decode("".join(data.split()), validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


# --- rich reprs -------------------------------------------------------------------------------------------------------


def real_method(value: Any, name: str) -> Callable[..., Any] | None:
    try:
        method = getattr(value, name, None)
    except Exception:
        return None
    return method if callable(method) else None


def is_rich(value: Any) -> bool:
    """Whether a notebook would show ``value`` by more than its ``repr``: a frame, a figure, a PIL image, or an
    object with a rich repr method. Plain data (str, numbers, containers, classes) is not."""
    if value is None or isinstance(value, PLAIN):
        return False
    # An object whose __getattr__ answers every name (a mock, a proxy) has no rich repr: IPython asks the same way.
    if real_method(value, "_ipython_canary_method_should_not_exist_") is not None:
        return False
    if table_of(value, max_rows=0, max_columns=0) is not None:
        return True
    for module, name in (("matplotlib.figure", "Figure"), ("matplotlib.axes", "Axes"), ("PIL.Image", "Image")):
        kind = loaded(module, name)
        if kind is not None and isinstance(value, kind):
            return True
    return any(real_method(value, name) is not None for name in REPR_METHODS)


def repr_bundle(value: Any, *, strict: bool = True) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The mime bundle (and its metadata) an object's rich repr gives, as IPython asks for it:
    ``_repr_mimebundle_`` first, then each ``_repr_*_`` for a type it lacks; empty when it has none.

    Args:
        value: The object.
        strict: Raise when a repr method raises; otherwise leave that method out and say why in the problems.

    Returns:
        The bundle, its metadata (by mime type), and what went wrong (when not strict).

    Raises:
        ReprError: A repr method raised (when ``strict``).
    """
    bundle: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    problems: list[str] = []
    if isinstance(value, type):
        return bundle, metadata, problems  # a class's repr methods want an instance
    if real_method(value, "_ipython_canary_method_should_not_exist_") is not None:
        return bundle, metadata, problems

    def call(name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            if strict:
                raise ReprError(f"its rich repr raised {type(exc).__name__}: {exc}") from exc
            problems.append(f"its {name} raised {type(exc).__name__}: {safe_text(str(exc))}")
            return None

    method = real_method(value, "_repr_mimebundle_")
    if method is not None:
        got = call("_repr_mimebundle_", method, include=None, exclude=None)
        if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict):
            metadata.update(got[1])
        if isinstance(got, tuple) and got:
            got = got[0]
        if isinstance(got, dict):
            bundle.update(got)
        elif got is not None:
            problems.append(f"its _repr_mimebundle_ returned a {type(got).__name__}, not a dict")
    for mime, name in (*IMAGE_REPRS, *TEXT_REPRS):
        method = real_method(value, name) if name and mime not in bundle else None
        if name and method is not None:
            got = call(name, method)
            if isinstance(got, tuple) and got:
                if len(got) == 2 and isinstance(got[1], dict):
                    metadata[mime] = got[1]
                got = got[0]  # (data, metadata)
            if got is not None:
                bundle[mime] = got
    return bundle, metadata, problems


# --- what a tool result shows -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DisplayForm:
    """What one object shows as a tool's result: its mime bundle as JSON (``data``: mime type -> text, base64 for
    images, JSON for JSON types), the bundle's ``metadata``, and ``text``, what the model reads of it."""

    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def repr_text(value: Any) -> str:
    try:
        return safe_text(repr(value))
    except Exception:
        return f"<{type(value).__qualname__}>"


def json_data(data: Any) -> Any:
    """JSON data as the history keeps it (:func:`ai_widgets._safe.checked_json`), or ``None`` when it has no such
    form (a cycle, nesting too deep, an object)."""
    try:
        return checked_json(data, where="the display's JSON")
    except UnsafeValueError:
        return None


def kept_entry(mime: str, data: Any) -> Any:
    """A bundle's entry as the bundle keeps it, or ``None`` when it cannot be kept: an image as base64 of a whole
    image of its type (a broken one is left out), JSON types as JSON, text as UTF-8-safe text."""
    if mime in IMAGE_TYPES:
        raw = image_bytes(data)
        if raw is None or sniff_image(raw[:16]) != mime or not whole_image(mime, raw):
            return None
        return base64.b64encode(raw).decode("ascii")
    if mime == "application/json" or mime.endswith("+json"):
        return json_data(data)
    if isinstance(data, list) and all(isinstance(line, str) for line in data):
        data = "".join(data)  # nbformat's multi-line strings
    return safe_text(data) if isinstance(data, str) else None


def model_text(value: Any, data: dict[str, Any], table: Table | None) -> str:
    """What the model reads of a result: a frame's bounded text view; else its markdown, its text/plain (unless that
    is only the default ``<… object>`` repr, as an ``IPython.display.HTML``'s is), its HTML source, LaTeX or JSON;
    at most :data:`MAX_DISPLAY_TEXT_CHARS` characters."""
    if table is not None:
        return bounded(f"{table.kind}:\n{table_body(table)}", MAX_DISPLAY_TEXT_CHARS)
    plain = data.get("text/plain")
    if isinstance(plain, str) and DEFAULT_REPR.fullmatch(plain.strip()):
        plain = None
    for text in (data.get("text/markdown"), plain, data.get("text/html"), data.get("text/latex")):
        if isinstance(text, str) and text.strip():
            return bounded(text, MAX_DISPLAY_TEXT_CHARS)
    if "application/json" in data:
        return bounded(json.dumps(data["application/json"], ensure_ascii=False), MAX_DISPLAY_TEXT_CHARS)
    return bounded(data.get("text/plain") or repr_text(value), MAX_DISPLAY_TEXT_CHARS)


def display_form(value: Any) -> DisplayForm:
    """What ``value`` shows as a tool's result, as a notebook would show it: a matplotlib figure or a PIL image as
    PNG, a frame as its HTML table, anything else by its rich repr (an ``IPython.display`` object, a chart, an
    ipywidget's view), always with a ``text/plain``.

    Never raises: a repr method that raises is left out (the text says so), as is an entry that cannot be kept (a
    broken image, JSON with a cycle, a type that is not text); the whole bundle stays within
    :data:`MAX_DISPLAY_CHARS` (the largest entries left out first, saying so in the text).
    """
    problems: list[str] = []
    data: dict[str, Any] = {}
    try:
        png = figure_png(value) or pil_png(value)
    except ReprError as exc:
        png, problems = None, [str(exc)]
    if png is not None:
        data["image/png"] = png
        close_shown_figure(value)
    bundle, metadata, found = repr_bundle(value, strict=False)
    problems += found
    for mime, entry in bundle.items():
        if isinstance(mime, str) and mime not in data:
            data[mime] = entry
    try:
        table = table_of(value, max_rows=MAX_TABLE_ROWS, max_columns=MAX_TABLE_COLUMNS)
    except Exception as exc:  # a frame subclass whose accessors raise
        table, problems = None, [*problems, f"its rows could not be read ({type(exc).__name__})"]
    kept: dict[str, Any] = {}
    for mime, entry in data.items():
        shown = kept_entry(mime, entry)
        if shown is None:
            problems.append(f"its {mime} could not be kept")
        else:
            kept[mime] = shown
    if not isinstance(kept.get("text/plain"), str):
        kept["text/plain"] = repr_text(value)
    size = sum(len(json.dumps(entry, ensure_ascii=False)) for entry in kept.values())
    for mime in sorted(kept, key=lambda m: -len(json.dumps(kept[m], ensure_ascii=False))):
        if size <= MAX_DISPLAY_CHARS or mime == "text/plain":
            continue
        entry_size = len(json.dumps(kept.pop(mime), ensure_ascii=False))
        size -= entry_size
        problems.append(
            f"its {mime} ({entry_size:,} characters) was left out: a result keeps at most {MAX_DISPLAY_CHARS:,}"
        )
    if len(kept["text/plain"]) > MAX_DISPLAY_CHARS:
        kept["text/plain"] = bounded(kept["text/plain"], MAX_DISPLAY_TEXT_CHARS)
    text = model_text(value, kept, table)
    if problems:
        text += "\n[" + "; ".join(dict.fromkeys(problems)) + "]"
    kept_metadata = json_data({m: v for m, v in metadata.items() if m in kept}) or {}
    return DisplayForm(kept, kept_metadata, text)
