"""The person's variables as the model sees them: a bounded table of them (:func:`list_variables`) and one variable's
bounded view (:func:`inspect_variable`, the view ``attach=`` makes), with the values of secrets' names never shown.

Both only read: no value is copied, walked deeply or converted whole (a frame's size is its ``memory_usage`` without
``deep``; its view reads the rows it shows). pandas, numpy and polars are never imported here.
"""

from __future__ import annotations

import difflib
import heapq
import itertools
import reprlib
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from ai_widgets._rich import bounded, cell, loaded
from ai_widgets._safe import redact, safe_text
from ai_widgets.attachments import DEFAULT_MAX_CHARS, AttachmentError, object_parts
from ai_widgets.kernel._names import IPYTHON_NAMES, is_ipython_name, looks_secret
from ai_widgets.messages import FilePart, TextPart
from ai_widgets.outcome import Attachment

__all__ = [
    "DEFAULT_VARIABLES_LIMIT",
    "VariableError",
    "VariableView",
    "approximate_size",
    "describe_shape",
    "inspect_variable",
    "is_own_object",
    "list_variables",
    "type_label",
]

#: The most variables :func:`list_variables` lists by default (the largest).
DEFAULT_VARIABLES_LIMIT = 50
SECRET_NOTE = "(value not shown: the name looks like a secret's)"
OWN_NOTE = "(the chat's own object)"
ROUTINES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
)
SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)


class VariableError(LookupError):
    """A variable cannot be inspected: there is no such name, or its name looks like a secret's (its value is never
    shown or sent). The message says which, and names close matches."""


@dataclass(frozen=True, slots=True)
class VariableView:
    """One variable as the model sees it.

    Attributes:
        text: Its bounded text view: what it is (type, shape or length, approximate size), then the view ``attach=``
            makes of it (a frame's columns and first rows, an array's summary, a value's JSON or repr), secrets
            redacted.
        images: Its image, for a figure or a PIL image (PNG, base64), as a result's attachments.
    """

    text: str
    images: tuple[Attachment, ...] = ()


def is_own_object(value: Any) -> bool:
    """Whether ``value`` is one of this library's objects (a ``ChatWidget``, a ``ChatSession``, ``KernelTools``):
    listed and inspected by type only, since they hold the conversation and the transport's keys."""
    module = type(value).__module__
    return module == "ai_widgets" or module.startswith("ai_widgets.")


def type_label(value: Any) -> str:
    """What a value is, briefly: ``int``, ``pandas DataFrame``, ``numpy ndarray[float64]``."""
    kind = type(value)
    module = kind.__module__.partition(".")[0]
    label = kind.__qualname__ if module == "builtins" else f"{module} {kind.__qualname__}"
    array = loaded("numpy", "ndarray")
    if array is not None and isinstance(value, array):
        label += f"[{value.dtype}]"
    return label


def describe_shape(value: Any) -> str:
    """A value's shape (``1,000 × 3`` for a frame or an array) or length (``12`` for a list, a str, a series), or
    ``""`` when it has neither that can be read cheaply (only built-in containers, numpy, pandas and polars are
    asked: another object's ``len`` may run anything)."""
    if isinstance(value, SIZED):
        return f"{len(value):,}"
    for module, name in (("numpy", "ndarray"), ("pandas", "DataFrame"), ("polars", "DataFrame")):
        kind = loaded(module, name)
        if kind is not None and isinstance(value, kind):
            return " × ".join(f"{int(n):,}" for n in value.shape)
    for module, name in (("pandas", "Series"), ("pandas", "Index"), ("polars", "Series")):
        kind = loaded(module, name)
        if kind is not None and isinstance(value, kind):
            return f"{len(value):,}"
    return ""


def approximate_size(value: Any) -> int:
    """A value's size in bytes, approximately and cheaply: an array's ``nbytes``, a pandas object's
    ``memory_usage`` without ``deep`` (``sys.getsizeof`` of one walks every string of an object column), a polars
    frame's ``estimated_size``, else ``sys.getsizeof`` (a container's own size, never its items'). 0 when it cannot
    be read."""
    try:
        return max(0, int(size_of(value)))
    except Exception:
        return 0


def size_of(value: Any) -> Any:
    kind = type(value)
    module = kind.__module__
    if module.startswith("pandas"):
        usage = getattr(value, "memory_usage", None)
        if callable(usage):
            used = usage(deep=False)
            return used.sum() if hasattr(used, "sum") else used
        nbytes = getattr(value, "nbytes", None)
        return nbytes if isinstance(nbytes, int) else object.__sizeof__(value)
    if module.startswith("polars"):
        estimate = getattr(value, "estimated_size", None)
        return estimate() if callable(estimate) else object.__sizeof__(value)
    # numpy, and arrays like it (torch, cupy...): asked only when the class has ``nbytes``, so that an object whose
    # ``__getattr__`` makes anything up (a proxy, a lazy value) is not asked.
    if getattr(kind, "nbytes", None) is not None:
        nbytes = value.nbytes
        if isinstance(nbytes, int):
            return nbytes
    return sys.getsizeof(value)


def human_size(size: int) -> str:
    """``70 B``, ``12.3 KB``, ``4.0 MB``, ``1.2 GB``."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


HIDDEN_TYPES = (types.ModuleType, type, *ROUTINES)
# Values whose size is ``sys.getsizeof`` and which are never hidden: the most common, asked the least.
PLAIN_TYPES = frozenset({int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset, range})


def hidden(name: Any, value: Any, *, include_functions: bool) -> bool:
    """Whether :func:`list_variables` leaves a name out: not a str, ``_private``, IPython's own, a module, or (unless
    asked for) a function or a class."""
    if not isinstance(name, str) or name.startswith("_") or is_ipython_name(name):
        return True
    return isinstance(value, types.ModuleType if include_functions else HIDDEN_TYPES)


def list_variables(
    namespace: Mapping[str, Any], *, limit: int = DEFAULT_VARIABLES_LIMIT, include_functions: bool = False
) -> str:
    """The person's variables as a bounded markdown table: name, type, shape or length, approximate size; largest
    first, at most ``limit`` of them, and a note of how many more there are.

    Left out: IPython's own names (``In``, ``Out``, ``_``, ``_i3``, ``get_ipython``...), ``_private`` names, modules,
    and functions and classes unless ``include_functions``. This library's own objects (a ``ChatWidget``...) are
    listed by type only, and so are names that look like secrets' (``api_key``, ``GITHUB_TOKEN``): their values are
    never shown.

    Args:
        namespace: The namespace (a kernel's user namespace, a dict).
        limit: The most variables listed.
        include_functions: Also list functions and classes.

    Raises:
        ValueError: ``limit`` is not a positive integer.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, not {limit!r}")
    left_out = types.ModuleType if include_functions else HIDDEN_TYPES
    getsizeof = sys.getsizeof
    rows: list[tuple[int, str, Any]] = []  # (minus the size, name, value): the largest sort first, then by name
    total = 0
    # One pass over a copy (another thread may bind names meanwhile), the common cases first: this runs over every
    # name of a namespace that may hold tens of thousands.
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("_") or name in IPYTHON_NAMES:
            continue  # IPython's other names (_, _i3, __builtins__) all start with _
        if type(value) in PLAIN_TYPES:
            size = getsizeof(value)
        elif isinstance(value, left_out):
            continue
        else:
            size = 0 if is_own_object(value) else approximate_size(value)
        if looks_secret(name):
            size = 0
        total += size
        rows.append((-size, name, value))
    if not rows:
        return "No variables. (Not listed: modules, functions and classes, IPython's own and _private names.)"
    shown = heapq.nsmallest(limit, rows)  # names are unique: values are never compared
    count = f"{len(rows):,} variable{'s' * (len(rows) != 1)}"
    largest = f"; the {len(shown):,} largest:" if len(shown) < len(rows) else ":"
    lines = [
        f"{count}, about {human_size(total)} in all{largest}",
        "",
        "| name | type | shape or length | size |",
        "|---|---|---|---|",
    ]
    for minus_size, name, value in shown:
        if looks_secret(name):
            lines.append(f"| {cell(name)} | {cell(type_label(value))} | {SECRET_NOTE} |  |")
        elif is_own_object(value):
            lines.append(f"| {cell(name)} | {cell(type_label(value))} | {OWN_NOTE} |  |")
        else:
            shown_size = human_size(-minus_size)
            lines.append(f"| {cell(name)} | {cell(type_label(value))} | {shape_of(value)} | {shown_size} |")
    if len(shown) < len(rows):
        more = len(rows) - len(shown)
        lines += ["", f"(Not shown: {more:,} smaller variable{'s' * (more != 1)}.)"]
    return safe_text("\n".join(lines))


def shape_of(value: Any) -> str:
    try:
        return describe_shape(value)
    except Exception:
        return ""


def inspect_variable(namespace: Mapping[str, Any], name: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> VariableView:
    """One variable's bounded view: what it is (type, shape or length, approximate size), then the view
    ``send(..., attach=...)`` makes of it (a frame's shape, columns and first rows, reading only those; an array's
    summary; a figure as its image; plain data as JSON; anything else by its rich repr or its repr), at most
    ``max_chars`` characters, with anything that looks like a key redacted.

    This library's own objects are shown by type only. A path is shown as a path: its file is not read.

    Args:
        namespace: The namespace.
        name: The variable's name.
        max_chars: The most characters of the view.

    Raises:
        VariableError: No variable has that name (the message names close ones), or the name looks like a secret's.
    """
    if not isinstance(name, str):
        raise VariableError(f"a variable's name is a str, not {type(name).__name__}")
    try:
        value = namespace[name]
    except KeyError:
        visible = [n for n, v in list(namespace.items()) if not hidden(n, v, include_functions=True)]
        close = difflib.get_close_matches(name, visible, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (list_variables lists them)"
        raise VariableError(f"no variable is named {safe_text(name)!r}{hint}") from None
    if looks_secret(name):
        raise VariableError(f"{name!r} looks like a secret's name: its value is never shown or sent")
    label = type_label(value)
    if is_own_object(value):
        return VariableView(f"`{name}`: {label} {OWN_NOTE}: its contents are not shown.")
    shape = shape_of(value)
    if shape and "×" not in shape:
        shape = f"length {shape}"
    what = ", ".join(filter(None, [label, shape, f"about {human_size(approximate_size(value))}"]))
    header = f"`{name}`: {what}"
    if isinstance(value, PurePath):
        return VariableView(redact(safe_text(f"{header}\n{value!s} (a path: its file is not read here)")))
    texts: list[str] = []
    images: list[Attachment] = []
    try:
        parts = object_parts(value, name=name, max_chars=max_chars)
    except AttachmentError:  # nothing converts it (a set, a dict with tuple keys, an object): its repr, bounded
        parts = []
        texts.append(bounded(repr_of(value), max_chars))
    for part in parts:
        if isinstance(part, TextPart):
            text = part.text
            # The view attach= makes starts "Attached <kind> `name`:", which the header says already.
            texts.append(text.partition("\n")[2] if text.startswith("Attached ") else text)
        elif part.media_type.startswith("image/") and part.data is not None:
            images.append(Attachment(mime_type=part.media_type, data=part.data, name=part.name))
        else:
            texts.append(file_note(part))
    if images:
        texts.append(f"({len(images)} image{'s' * (len(images) != 1)} sent with this view.)")
    return VariableView(redact(safe_text("\n".join([header, *texts]))), tuple(images))


class UnsortedRepr(reprlib.Repr):
    """``reprlib.Repr`` that shows a set's first items as they come: reprlib sorts the whole set first, which for
    ten million items takes seconds and a list as long."""

    def repr_set(self, x: set[Any], level: int) -> str:
        return self.unordered(x, level, "{", "}", "set()")

    def repr_frozenset(self, x: frozenset[Any], level: int) -> str:
        return self.unordered(x, level, "frozenset({", "})", "frozenset()")

    def unordered(self, x: set[Any] | frozenset[Any], level: int, left: str, right: str, empty: str) -> str:
        if not x:
            return empty
        if level <= 0:
            return f"{left}...{right}"
        items = [self.repr1(item, level - 1) for item in itertools.islice(x, self.maxset)]
        if len(x) > self.maxset:
            items.append("...")
        return left + ", ".join(items) + right


def bounded_repr() -> reprlib.Repr:
    """A ``repr`` that shows at most the first 100 items of a built-in container (a set of ten million is not
    written out whole to show its first), and at most 4 levels of nesting."""
    shown = UnsortedRepr()
    shown.maxlevel = 4
    shown.maxtuple = shown.maxlist = shown.maxarray = shown.maxdict = shown.maxset = 100
    shown.maxfrozenset = shown.maxdeque = 100
    shown.maxstring = shown.maxlong = 2_000
    shown.maxother = DEFAULT_MAX_CHARS
    return shown


REPR = bounded_repr()


def repr_of(value: Any) -> str:
    """``value``'s repr, bounded for built-in containers (:func:`bounded_repr`); another object's ``repr`` is
    written whole, then cut."""
    try:
        return REPR.repr(value)
    except Exception as exc:
        return f"<{type(value).__qualname__}: its repr raised {type(exc).__name__}>"


def file_note(part: FilePart) -> str:
    return f"(a {part.media_type} file{f' ({part.name})' if part.name else ''}: not sent here; attach= sends it)"
