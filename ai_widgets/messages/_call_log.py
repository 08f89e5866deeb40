"""A tool call's log (what an MCP server logged while the call ran, shown in its card): the last lines, each one
sanitised and shortened, as :attr:`ai_widgets.messages.ToolCallPart.log_lines` keeps them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ai_widgets._safe import redact, safe_text

__all__ = ["LOG_LINES_KEPT", "kept_log", "log_line"]

#: Lines of a call's log kept (the older ones are dropped).
LOG_LINES_KEPT = 20
#: Characters of one line kept.
LOG_LINE_CHARS = 500
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def log_line(text: str) -> str:
    """One line as a card shows it: line breaks, control and direction characters gone, anything that looks like a
    key redacted, at most :data:`LOG_LINE_CHARS` characters."""
    line = redact(CONTROL.sub("", safe_text(" ".join(str(text).split()))))
    return line if len(line) <= LOG_LINE_CHARS else line[: LOG_LINE_CHARS - 1] + "…"


def kept_log(lines: Iterable[str], *more: str) -> tuple[str, ...]:
    """``lines`` with ``more`` added, each sanitised, the last :data:`LOG_LINES_KEPT` of them.

    Raises:
        ValueError: A line is not a string.
    """
    every = (*lines, *more)
    if not all(isinstance(line, str) for line in every):
        raise ValueError("a call's log lines must be strings")
    return tuple(log_line(line) for line in every[-LOG_LINES_KEPT:])
