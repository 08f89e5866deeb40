"""Live tools: re-running the cell (or reloading the module) that defines a ``@tool`` updates every registry that holds
a tool of that name defined in the same place, however it got there.

The *place* of a tool is where its function is defined, as it stays the same across re-runs:

- in a Jupyter kernel, for a function of ``__main__`` defined by the cell that is running, the cell's id, which the
  front end sends with each execute request (``metadata.cellId``: JupyterLab, Notebook 7 and VS Code send it). The
  cell's code file cannot serve: ipykernel names it after a hash of the cell's text, which changes with every edit;
- otherwise (plain IPython, a front end that sends no cell id such as nbclient, a module) the module and the
  function's qualified name (``weather.tools``, ``get_weather``);
- none for a function defined inside another function (a factory making one tool per chat: each call is a new tool
  on purpose), for a method bound to an object (``tool(account.balance)``: one tool per object, whose methods share
  a qualified name), for a lambda, and for a tool built from a :class:`ToolDefinition` and a handler (a dynamic
  schema, an MCP server's tools): those are never replaced by this.

When ``@tool`` (or ``registry.tool``) makes a tool out of a function defined by the code running now (the cell or
the module being run or reloaded), every live registry holding a tool of that name (any case) is looked at: one
from the same place is replaced by the new tool and the registry's listeners are told (a chat's widget refreshes its
tool info); one from another place is kept, and one :class:`ToolReplacementWarning` says which one those registries
use, and how to switch (registries made with ``warn_when_kept=False``, such as ``run_tool``'s, keep theirs quietly:
a form that runs one tool by hand is not a chat that keeps using the old tool). The tool name is the key: a tool
defined in the same place under a new name is a new tool next to the old one, not a rename. A call already running keeps the :class:`~ai_widgets.tools.Tool` it started with
(a round resolves each call's tool once, before it runs); the next request sends the new definition.

Registries are held weakly (a registry nobody uses is collected as before), and nothing here runs per request.
MCP servers and other sources of tools are not touched: their tools are listed afresh before every request.

Worth knowing:

- Only a definition running counts. A plain function handed over in another cell (``tools=[f]``, ``tool(f)``,
  ``run_tool(f)``) announces nothing, and its place is its module and name (the cell is known only while it runs):
  decorate the function with ``@tool`` where it is defined to make it live.
- ``registry.register(tool)`` is the person's explicit choice and always replaces a tool of that name in that
  registry, wherever it was defined; it is also how to switch after a warning. A cell that defines a tool (warned
  about) and then registers it itself ends with the new tool in that registry.
- A call waiting for approval, like a running one, keeps the tool it was resolved with: what the person approves is
  what runs.
- ipywidgets keeps every widget alive until it is closed, so the chats of earlier runs of a cell are still live
  registries: they are updated too, and counted in a warning. ``chat.close()`` lets one go.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Protocol

__all__ = [
    "LiveRegistry",
    "LiveTool",
    "ToolPlace",
    "ToolReplacementWarning",
    "announce",
    "live_registries",
    "place_of",
    "track",
]


class ToolReplacementWarning(UserWarning):
    """A tool was defined under the name of a tool that a chat holds from another place, which the chat keeps.

    Shown every time it happens, not once per line of code as other warnings are by default: a cell run again
    that still does not reach the chat must say so again. Warning filters apply as to any warning (``"ignore"``,
    ``"error"``, ``"once"``).
    """


@dataclass(frozen=True)
class ToolPlace:
    """Where a tool's function is defined, as it stays the same when its cell or module runs again.

    Attributes:
        key: What identifies the place: ``("cell", cell_id)`` or ``("module", module, qualname)``.
        description: For people: ``cell In[3] (id 1a2b3c4d…)`` (the cell as tracebacks name it),
            ``module weather.tools, get_weather``.
    """

    key: tuple[str, ...]
    description: str = field(compare=False)

    def __str__(self) -> str:
        return self.description


class LiveTool(Protocol):
    """What live reloading reads of a tool (a ``Tool``): its name, its place and its function."""

    @property
    def name(self) -> str: ...

    _place: ToolPlace | None
    _function: Callable[..., Any] | None


class LiveRegistry(Protocol):
    """What live reloading needs of a registry (a ``ToolRegistry``): the tools it holds by case-folded name, and a
    way to put a tool defined again in the place of the one of its name."""

    @property
    def _tools(self) -> Mapping[str, LiveTool]: ...

    @property
    def warn_when_kept(self) -> bool: ...

    def _replace_live(self, new: Any) -> None: ...


PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
registries: weakref.WeakSet[LiveRegistry] = weakref.WeakSet()
lock = threading.Lock()


def track(registry: LiveRegistry) -> None:
    """Keeps a weak reference to a registry, so a tool defined again can find it."""
    with lock:
        registries.add(registry)


def live_registries() -> list[LiveRegistry]:
    """The registries alive now."""
    with lock:
        return list(registries)


def place_of(fn: Callable[..., Any]) -> ToolPlace | None:
    """The place a function is defined, or ``None`` for one that has no place of its own (see the module's doc)."""
    if bound_to_object(fn):
        return None  # one tool per object, as a factory makes one per call: never replaced by another object's
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None  # "<locals>" (made inside a function), "<lambda>"
    filename = running_file(fn) if module == "__main__" else None
    if filename is not None:
        cell = current_cell(filename)
        if cell is not None:
            cell_id, label = cell
            shown = cell_id if len(cell_id) <= 12 else cell_id[:8] + "…"
            return ToolPlace(("cell", cell_id), f"cell {label} (id {shown})" if label else f"the cell with id {shown}")
    return ToolPlace(("module", module, qualname), f"module {module}, {qualname}")


def announce(new: LiveTool, *, skip: LiveRegistry | None = None) -> None:
    """Tells the live registries that ``new`` was just defined: those holding a tool of its name from its place get
    it instead; those holding one from another place keep theirs, and one warning says so.

    Does nothing for a tool without a place, or one whose function is not defined by the code running now (a
    function handed to ``@tool`` elsewhere is not its definition running again).

    Args:
        new: The tool just made.
        skip: A registry that registers ``new`` itself (``registry.tool``): the person's explicit choice there.
    """
    place: ToolPlace | None = new._place
    function = new._function
    if place is None or function is None or running_file(function) is None:
        return
    key = new.name.casefold()
    kept: dict[str, int] = {}  # the other place, described -> how many registries keep a tool from it
    for registry in live_registries():
        if registry is skip:
            continue
        old = registry._tools.get(key)
        if old is None or old is new:
            continue
        if old._place == place:
            registry._replace_live(new)
        elif registry.warn_when_kept:
            described = str(old._place) if old._place is not None else no_place(old)
            kept[described] = kept.get(described, 0) + 1
    if kept:
        warn(new, place, kept)


def warn(new: LiveTool, place: ToolPlace, kept: dict[str, int]) -> None:
    name = new.name
    if len(kept) == 1:
        [(where, count)] = kept.items()
        holders = f"registr{'y' if count == 1 else 'ies'} hold{'s' if count == 1 else ''}"
        kept_text = (
            f"did not replace the {name!r} from {where} that {count} tool {holders} (a chat's tools are its "
            f"session.tools): {'it keeps' if count == 1 else 'they keep'} using that one"
        )
    else:
        listed = "; ".join(f"{count} from {where}" for where, count in sorted(kept.items()))  # a stable order
        kept_text = (
            f"did not replace the {name!r} that tool registries hold from other places ({listed}; a chat's tools "
            "are its session.tools): they keep using theirs"
        )
    variable = getattr(new, "__name__", None) or name
    message = (
        f"the tool {name!r} defined in {place} {kept_text}, as a tool is replaced only by a new definition from its "
        f"own place. To use the new one in a chat: chat.session.tools.register({variable})"
    )
    # Attributed to the person's code (the cell or module that defined the tool), not to this package. With a
    # registry of its own each time: the default action shows it every time rather than once per line.
    # The import machinery's frames are skipped too: a module of the package imported by the person's code (the
    # demo's tools) is attributed to that code, and warn_explicit fails on a frozen module's globals.
    frame: FrameType | None = sys._getframe(0)
    while frame is not None and (
        frame.f_code.co_filename.startswith(PACKAGE_DIR)
        or str(frame.f_globals.get("__name__", "")).startswith(("importlib", "_frozen_importlib"))
    ):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, ToolReplacementWarning, stacklevel=2)
        return
    warnings.warn_explicit(
        message,
        ToolReplacementWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry={},
        module_globals=frame.f_globals,
    )


def bound_to_object(fn: Any) -> bool:
    """Whether ``fn`` is a method bound to an object (not to a class or a module): ``account.balance``."""
    owner = getattr(fn, "__self__", None)
    return owner is not None and inspect.ismethod(fn) and not isinstance(owner, type)


def no_place(tool: LiveTool) -> str:
    function = tool._function
    if function is None:
        return "a definition and a handler (no place of its own)"
    if bound_to_object(function):
        return f"{getattr(function, '__qualname__', tool.name)} (a method of one object: no place of its own)"
    return f"{getattr(function, '__qualname__', tool.name)} (made inside a function: no place of its own)"


def running_file(fn: Callable[..., Any]) -> str | None:
    """The file of the code that defines ``fn`` when that code is running now: the top level of its cell or module
    is on the stack (a function of that cell called from another cell does not count); otherwise ``None``."""
    try:
        code = getattr(unwrap(fn), "__code__", None)
    except Exception:
        return None
    filename = getattr(code, "co_filename", None)
    if not isinstance(filename, str):
        return None
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == filename and frame.f_code.co_name == "<module>":
            return filename
        frame = frame.f_back
    return None


def unwrap(fn: Any) -> Any:
    seen = 0
    while hasattr(fn, "__wrapped__") and seen < 100:
        fn = fn.__wrapped__
        seen += 1
    return fn


def current_cell(filename: str) -> tuple[str, str | None] | None:
    """The running cell's id and its label (``In[3]``, as tracebacks name it), when this is a Jupyter kernel whose
    front end sent the id; ``filename`` is the cell's code file.

    ``kernel.get_parent("shell")`` is the request being handled on the shell channel: ipykernel 6 keeps it per
    channel, ipykernel 7 in a context variable (falling back on the main shell's for other threads); both have had
    this method since 6.0. The label comes from IPython's compiler, which maps each cell's file to its execution
    count (``shell.execution_count`` cannot serve: IPython 9 counts the running cell before running it, earlier
    versions after).
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
        kernel = getattr(shell, "kernel", None)
        get_parent = getattr(kernel, "get_parent", None)
        if get_parent is None:
            return None
        parent = get_parent("shell")
    except Exception:
        return None
    if not isinstance(parent, dict) or (parent.get("header") or {}).get("msg_type") != "execute_request":
        return None
    cell_id = (parent.get("metadata") or {}).get("cellId")
    if not isinstance(cell_id, str) or not cell_id:
        return None
    try:
        label = shell.compile.format_code_name(filename)[1]
    except Exception:
        label = None
    return cell_id, label if isinstance(label, str) else None
