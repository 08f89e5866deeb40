"""A tool's traceback as its author wants to read it: their own frames first, the machinery that ran them after.

A tool that raises is called through this package, asyncio and a thread pool, so Python's traceback starts with a
dozen frames nobody wrote. :func:`user_first_traceback` keeps the usual format, but each traceback in the chain
shows only the frames outside that machinery, a one-line marker where the others were, and lists those others at
the end, in their order. A traceback with no frame of the user's is left as Python writes it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import traceback
from collections.abc import Iterator
from pathlib import Path

__all__ = ["FRAMEWORK_NAMES", "is_framework_frame", "user_first_traceback"]

PACKAGE = str(Path(__file__).resolve().parent)
DIRS: tuple[tuple[str, str], ...] = (
    (PACKAGE, "ai_widgets"),
    (str(Path(asyncio.__file__).resolve().parent), "asyncio"),
    (str(Path(concurrent.futures.__file__).resolve().parent), "concurrent.futures"),
)
FILES: tuple[tuple[str, str], ...] = (
    (str(Path(traceback.__file__).resolve().parent / "contextvars.py"), "contextvars"),
)
#: What counts as machinery, in the order the markers name it.
FRAMEWORK_NAMES = ("ai_widgets", "asyncio", "concurrent.futures", "contextvars")

CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


@functools.lru_cache(maxsize=512)
def framework(filename: str) -> str | None:
    """Which machinery a frame's file belongs to, or ``None`` for the user's own code."""
    try:
        path = os.path.realpath(filename)
    except (OSError, ValueError):
        return None
    for directory, name in DIRS:
        if path == directory or path.startswith(directory + os.sep):
            return name
    for file, name in FILES:
        if path == file:
            return name
    return None


def is_framework_frame(filename: str) -> bool:
    """Whether a frame from ``filename`` is this package's, asyncio's, concurrent.futures' or contextvars'."""
    return framework(filename) is not None


def printed_chain(exc: traceback.TracebackException) -> list[tuple[str | None, traceback.TracebackException]]:
    """The chain as Python prints it, oldest first, each with the line that joins it to the one before."""
    chain: list[tuple[str | None, traceback.TracebackException]] = []
    seen: set[int] = set()
    current: traceback.TracebackException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__cause__ is not None:
            chain.append((CAUSE, current))
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            chain.append((CONTEXT, current))
            current = current.__context__
        else:
            chain.append((None, current))
            current = None
    chain.reverse()  # each joining line goes before the exception whose cause or context came first
    return chain


def names(frames: list[traceback.FrameSummary]) -> str:
    found = {framework(f.filename) for f in frames}
    return ", ".join(name for name in FRAMEWORK_NAMES if name in found)


def marker(run: list[traceback.FrameSummary]) -> str:
    return f"  [{len(run)} frame{'s' if len(run) != 1 else ''} of {names(run)}: listed at the end]\n"


def frames(entry: traceback.TracebackException, hidden: list[traceback.FrameSummary]) -> Iterator[str]:
    """The user's frames of one exception, a marker for each run of machinery frames; those go to ``hidden``."""
    run: list[traceback.FrameSummary] = []
    for frame in entry.stack:
        if framework(frame.filename) is not None:
            run.append(frame)
            continue
        if run:
            yield marker(run)
            hidden.extend(run)
            run = []
        yield from traceback.StackSummary.from_list([frame]).format()
    if run:
        yield marker(run)
        hidden.extend(run)


def type_name(entry: traceback.TracebackException) -> str:
    name = getattr(entry, "exc_type_str", None)  # Python 3.13+
    if isinstance(name, str):
        return name
    exc_type = entry.__dict__.get("exc_type")
    return getattr(exc_type, "__qualname__", "the exception")


def user_first_traceback(exc: BaseException) -> str:
    """``exc``'s traceback with the user's frames first and the machinery's listed after (see the module).

    Raises:
        Exception: Whatever the traceback module raises for an exception it cannot format (the caller falls back).
    """
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    chain = printed_chain(te)
    kinds = {framework(f.filename) is None for _, entry in chain for f in entry.stack}
    if kinds != {True, False}:  # only the user's frames, or none of them: nothing to move
        return "".join(te.format())
    out: list[str] = []
    moved: list[tuple[str, list[traceback.FrameSummary]]] = []
    for joining, entry in chain:
        if joining is not None:
            out.append(joining)
        if getattr(entry, "exceptions", None):  # an exception group: as Python writes it
            out.extend(entry.format(chain=False))
            continue
        hidden: list[traceback.FrameSummary] = []
        if entry.stack:
            out.append("Traceback (most recent call last):\n")
            out.extend(frames(entry, hidden))
        out.extend(entry.format_exception_only())
        if hidden:
            moved.append((type_name(entry), hidden))
    for name, hidden in moved:
        out.append(f"\nFrames of {names(hidden)} behind the {name} above:\n")
        out.extend(traceback.StackSummary.from_list(hidden).format())
    return "".join(out)
