"""The kernel's variables for ``@name`` in the input box: completion with each one's kind, a chip's description, and
the names of a sent message resolved to their objects (docs/protocol.md, "Attachments by name").

The namespace is IPython's ``user_ns`` (``__main__``'s globals outside IPython). pandas, polars, numpy, matplotlib
and PIL are never imported here: an object is one of theirs only when its library is loaded already.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from types import ModuleType
from typing import Any

from ai_widgets.attachments import AttachmentPart, File, Preview
from ai_widgets.messages import FilePart, TextPart
from ai_widgets.messages._files import human_size
from ai_widgets.widget._thumbnail import figure_thumbnail, image_thumbnail

__all__ = [
    "MAX_COMPLETIONS",
    "Completion",
    "UnknownNameError",
    "chip",
    "completions",
    "describe",
    "resolve",
    "user_namespace",
]

#: The most names one completion answer lists, and the most matching names described to choose them.
MAX_COMPLETIONS = 50
MAX_CONSIDERED = 2_000
#: IPython's own names in the user namespace: never offered.
IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
RICH_REPRS = ("_repr_mimebundle_", "_repr_png_", "_repr_jpeg_", "_repr_html_", "_repr_markdown_", "_repr_svg_")
JSON_TYPES = (dict, list, tuple, int, float, bool, type(None))


class UnknownNameError(LookupError):
    """A name of a sent message is not a variable of the kernel."""


@dataclass(frozen=True, slots=True)
class Completion:
    """One variable offered for ``@``.

    Attributes:
        name: The variable's name.
        kind: What it is, for a person (``"DataFrame 1,000×4"``).
        attachable: Whether ``attach`` converts it (the list offers these first).
    """

    name: str
    kind: str
    attachable: bool

    def to_dict(self) -> dict[str, Any]:
        """As the ``completions`` message carries it."""
        return {"name": self.name, "kind": self.kind, "attachable": self.attachable}


def user_namespace() -> Mapping[str, Any]:
    """The kernel's user namespace: IPython's ``user_ns``, or ``__main__``'s globals outside IPython."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    namespace = getattr(shell, "user_ns", None)
    if isinstance(namespace, Mapping):
        return namespace
    main = sys.modules.get("__main__")
    return vars(main) if main is not None else {}


def is_offered(name: Any, value: Any) -> bool:
    """Whether a variable is one a person means: no private names, modules, functions, classes or IPython's own."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or name in IPYTHON_NAMES:
        return False
    if isinstance(value, (ModuleType, type)):
        return False
    return not (inspect.isroutine(value) or inspect.isclass(value))


def loaded(module: str, name: str) -> type | None:
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def is_instance_of(value: Any, module: str, name: str) -> bool:
    kind = loaded(module, name)
    return kind is not None and isinstance(value, kind)


def count(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' * (n != 1)}"


def library_kind(value: Any) -> str | None:
    """The kind of an object of a data library, or ``None``."""
    for module in ("pandas", "polars"):
        if is_instance_of(value, module, "DataFrame"):
            rows, columns = value.shape
            return f"DataFrame {int(rows):,}×{int(columns):,}"
        if is_instance_of(value, module, "Series"):
            return f"Series {len(value):,} {value.dtype}"
    if is_instance_of(value, "numpy", "ndarray"):
        return f"ndarray {tuple(int(n) for n in value.shape)} {value.dtype}"
    if is_instance_of(value, "numpy", "generic"):
        return f"numpy {value.dtype}"
    if is_instance_of(value, "matplotlib.figure", "Figure"):
        return "Figure"
    if is_instance_of(value, "matplotlib.axes", "Axes"):
        return "Axes"
    if is_instance_of(value, "PIL.Image", "Image"):
        width, height = value.size
        return f"Image {width}×{height} {value.mode}"
    return None


def plain_kind(value: Any) -> tuple[str, bool]:
    """The kind of a value of the standard library (or an unknown one), and whether ``attach`` converts it."""
    if isinstance(value, str):
        size = len(value.encode("utf-8", "surrogatepass")) if len(value) <= 1_000_000 else len(value)
        return f"str {human_size(size)}", True
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"bytes {human_size(len(value))}", True
    if isinstance(value, PurePath):
        return "Path", True
    if isinstance(value, File):
        return f"File {value.media_type} {human_size(len(value.data))}", True
    if isinstance(value, (FilePart, TextPart, Preview)):
        return type(value).__name__, True
    if isinstance(value, (dict, list, tuple)):
        return f"{type(value).__name__} {count(len(value), 'item')}", True
    if isinstance(value, JSON_TYPES):
        return type(value).__name__, True
    rich = not isinstance(value, type) and any(callable(getattr(value, name, None)) for name in RICH_REPRS)
    return type(value).__name__, rich


def describe(value: Any) -> tuple[str, bool]:
    """What a variable is, for a person (``"DataFrame 1,000×4"``, ``"ndarray (3, 4) float64"``, ``"str 2.1 KB"``),
    and whether ``attach`` converts it (a converter registered for its type counts). Never raises."""
    try:
        kind = library_kind(value)
        if kind is not None:
            return kind, True
        return plain_kind(value)
    except Exception:  # a broken __len__ or shape: still offered, by its type
        return type(value).__name__, False


def completions(namespace: Mapping[str, Any], prefix: str, *, limit: int = MAX_COMPLETIONS) -> list[Completion]:
    """The variables whose names start with ``prefix`` (ignoring case): the attachable ones first, then by name.

    Args:
        namespace: The kernel's user namespace.
        prefix: What follows ``@`` so far (may be empty: every variable).
        limit: The most returned.
    """
    wanted = prefix.casefold()
    # A copy first (one C call for a dict): a cell running meanwhile may add names while the comm thread reads.
    found = [
        (name, value)
        for name, value in dict(namespace).items()
        if isinstance(name, str) and name.casefold().startswith(wanted) and is_offered(name, value)
    ][:MAX_CONSIDERED]
    offered = [Completion(name, *describe(value)) for name, value in found]
    offered.sort(key=lambda c: (not c.attachable, not c.name.startswith(prefix), c.name.casefold(), c.name))
    return offered[:limit]


def resolve(namespace: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The objects of a sent message's ``@names``, by name, in order (a name given twice is attached once).

    Raises:
        UnknownNameError: A name is not a variable of the namespace (or not one that is offered).
    """
    resolved: dict[str, Any] = {}
    for name in names:
        if name in resolved:
            continue
        if name not in namespace:
            raise UnknownNameError(f"cannot attach @{name}: there is no variable {name!r} in the kernel")
        value = namespace[name]
        if not is_offered(name, value):
            what = "a module" if isinstance(value, ModuleType) else "a function or a class"
            if name.startswith("_") or name in IPYTHON_NAMES:
                what = "a private name or IPython's own"
            raise UnknownNameError(f"cannot attach @{name}: it is {what}, not a variable to attach")
        resolved[name] = namespace[name]
    return resolved


def sent_size(parts: list[AttachmentPart]) -> int:
    """Bytes of what the model gets: each file's bytes, each text view's UTF-8."""
    total = 0
    for part in parts:
        if isinstance(part, FilePart):
            total += part.size or 0
        else:
            total += len(part.text.encode("utf-8", "surrogatepass"))
    return total


def chip(name: str, value: Any, parts: list[AttachmentPart]) -> dict[str, Any]:
    """What the input box's chip for ``@name`` shows: its kind, the size of what the model gets (bytes), and a small PNG
    (``data:`` URL) for a figure or an image (``None`` otherwise)."""
    kind, _ = describe(value)
    thumbnail = figure_thumbnail(value) if is_instance_of(value, "matplotlib.figure", "Figure") else None
    if thumbnail is None:
        image = next((p for p in parts if isinstance(p, FilePart)), None)
        thumbnail = None if image is None else image_thumbnail(image)
    return {"name": name, "kind": kind, "size": sent_size(parts), "thumbnail": thumbnail}
