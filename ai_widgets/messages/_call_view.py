"""What an agent tells about a call it runs, beyond its name and arguments: a title, a kind, the files it touches,
and what it shows (text, a diff, a terminal's output). An ACP agent sends these as ``tool_call`` and
``tool_call_update``; each is bounded, so a chatty agent cannot grow a reply without limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ai_widgets.messages._json import read_field

__all__ = [
    "MAX_VIEW_CHARS",
    "CallDiff",
    "CallLocation",
    "CallTerminal",
    "CallText",
    "CallViewItem",
    "ToolCallView",
    "clip_view_text",
]

#: The most characters of any one text a view keeps (a diff's sides, a terminal's output, a text): the end of a
#: terminal's output is what matters, the start of the others.
MAX_VIEW_CHARS = 200_000
#: The most items and locations a view keeps.
MAX_VIEW_ITEMS = 50


def clip_view_text(text: str, *, keep_end: bool = False) -> str:
    """``text`` within :data:`MAX_VIEW_CHARS`, saying how much was left out."""
    if len(text) <= MAX_VIEW_CHARS:
        return text
    left = len(text) - MAX_VIEW_CHARS
    if keep_end:
        return f"[… {left:,} characters left out …]\n" + text[-MAX_VIEW_CHARS:]
    return text[:MAX_VIEW_CHARS] + f"\n[… {left:,} characters left out …]"


@dataclass(frozen=True, slots=True)
class CallLocation:
    """A file the call reads or changes, and the line where that is known."""

    path: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"path": self.path, "line": self.line}


@dataclass(frozen=True, slots=True)
class CallText:
    """Text the call shows (markdown)."""

    text: str
    type: Literal["text"] = "text"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class CallDiff:
    """A change the call makes to a file: ``old_text`` ``None`` for a new file."""

    path: str
    old_text: str | None
    new_text: str
    type: Literal["diff"] = "diff"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"type": "diff", "path": self.path, "old_text": self.old_text, "new_text": self.new_text}


@dataclass(frozen=True, slots=True)
class CallTerminal:
    """A terminal the call runs: its command, where, its output so far (the end kept) and how it exited."""

    terminal_id: str
    command: str | None = None
    cwd: str | None = None
    output: str = ""
    exit_code: int | None = None
    signal: str | None = None
    type: Literal["terminal"] = "terminal"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "type": "terminal",
            "terminal_id": self.terminal_id,
            "command": self.command,
            "cwd": self.cwd,
            "output": self.output,
            "exit_code": self.exit_code,
            "signal": self.signal,
        }


CallViewItem: TypeAlias = CallText | CallDiff | CallTerminal


def item_from_dict(data: Any) -> CallViewItem:
    if not isinstance(data, dict):
        raise ValueError(f"a call view item must be an object, not {type(data).__name__}")
    match data.get("type"):
        case "text":
            return CallText(read_field(data, "text", str))
        case "diff":
            return CallDiff(
                read_field(data, "path", str),
                read_field(data, "old_text", (str, type(None)), None),
                read_field(data, "new_text", str),
            )
        case "terminal":
            return CallTerminal(
                read_field(data, "terminal_id", str),
                read_field(data, "command", (str, type(None)), None),
                read_field(data, "cwd", (str, type(None)), None),
                read_field(data, "output", str, ""),
                read_field(data, "exit_code", (int, type(None)), None),
                read_field(data, "signal", (str, type(None)), None),
            )
        case other:
            raise ValueError(f"unknown call view item type {other!r}")


@dataclass(frozen=True, slots=True)
class ToolCallView:
    """How the card shows a call its agent describes.

    Attributes:
        title: A human-readable title ("Write notes.md").
        kind: What sort of call it is (``read``, ``edit``, ``delete``, ``move``, ``search``, ``execute``, ``think``,
            ``fetch``, ``switch_mode``, ``other``).
        locations: The files it touches.
        content: What it shows, in order: text, diffs, terminals.
    """

    title: str | None = None
    kind: str | None = None
    locations: tuple[CallLocation, ...] = ()
    content: tuple[CallViewItem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "title": self.title,
            "kind": self.kind,
            "locations": [location.to_dict() for location in self.locations],
            "content": [item.to_dict() for item in self.content],
        }

    @classmethod
    def from_dict(cls, data: Any) -> ToolCallView:
        """Rebuilds a view from :meth:`to_dict`'s output.

        Raises:
            ValueError: A field is missing or wrong.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a call view must be an object, not {type(data).__name__}")
        locations = []
        for location in read_field(data, "locations", list, []):
            if not isinstance(location, dict):
                raise ValueError("a call location must be an object")
            locations.append(
                CallLocation(read_field(location, "path", str), read_field(location, "line", (int, type(None)), None))
            )
        return cls(
            read_field(data, "title", (str, type(None)), None),
            read_field(data, "kind", (str, type(None)), None),
            tuple(locations[:MAX_VIEW_ITEMS]),
            tuple(item_from_dict(item) for item in read_field(data, "content", list, [])[:MAX_VIEW_ITEMS]),
        )
