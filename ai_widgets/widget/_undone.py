"""Which code calls of a session were undone (Undo on a card), and what was put back: one record per session, so that
every view of it (the chat, a turn shown in the cell that asked) shows the call as undone.

It lives in the kernel only, as long as the session does: a widget made again (a reopened notebook, a new kernel)
starts with none, whatever a saved state says.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from ai_widgets.session import ChatSession

__all__ = ["UndoneCalls", "undone_calls"]

#: The most undone calls remembered per session (the oldest are forgotten first; the card then offers Undo again,
#: which the kernel refuses as already done or too old).
MAX_UNDONE = 1_000
#: The longest line kept of what an undo put back.
MAX_LINE_CHARS = 2_000


class UndoneCalls:
    """The undone calls of one session: call id -> the line saying what was put back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: dict[str, str] = {}
        self._listeners: list[Callable[[dict[str, str]], None]] = []

    def add(self, tool_call_id: str, line: str) -> None:
        """Records that ``tool_call_id`` was undone, and tells every listener the record as it now is."""
        with self._lock:
            self._lines.pop(tool_call_id, None)
            self._lines[tool_call_id] = line[:MAX_LINE_CHARS]
            while len(self._lines) > MAX_UNDONE:
                del self._lines[next(iter(self._lines))]
            shown = dict(self._lines)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(shown)

    def lines(self) -> dict[str, str]:
        """A copy of the record."""
        with self._lock:
            return dict(self._lines)

    def subscribe(self, listener: Callable[[dict[str, str]], None]) -> Callable[[], None]:
        """Calls ``listener(record)`` after each :meth:`add`; returns the unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe


RECORDS: weakref.WeakKeyDictionary[ChatSession, UndoneCalls] = weakref.WeakKeyDictionary()
RECORDS_LOCK = threading.Lock()


def undone_calls(session: ChatSession) -> UndoneCalls:
    """The record of ``session``'s undone calls (made on first use; it goes with the session)."""
    with RECORDS_LOCK:
        record = RECORDS.get(session)
        if record is None:
            record = RECORDS[session] = UndoneCalls()
        return record
