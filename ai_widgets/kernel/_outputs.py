"""The whole output text of the last runs, by tool call id, for ``read_output`` to page through (bounded: the
oldest runs are dropped first)."""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["OutputStore"]


class OutputStore:
    """Keeps the whole output text of the last ``max_runs`` runs, at most ``max_chars`` characters in all.

    Args:
        max_runs: Runs kept; the oldest goes first.
        max_chars: Characters kept in all; the oldest runs go first (the newest is always kept).
    """

    def __init__(self, *, max_runs: int = 32, max_chars: int = 8_000_000) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._max_runs = max_runs
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._dropped: set[str] = set()

    def put(self, tool_call_id: str, text: str) -> None:
        """Keeps a run's whole text (replacing one of the same call)."""
        with self._lock:
            old = self._texts.pop(tool_call_id, None)
            if old is not None:
                self._chars -= len(old)
            self._texts[tool_call_id] = text
            self._chars += len(text)
            while len(self._texts) > 1 and (len(self._texts) > self._max_runs or self._chars > self._max_chars):
                dropped, gone = self._texts.popitem(last=False)
                self._chars -= len(gone)
                self._dropped.add(dropped)

    def read(self, tool_call_id: str, start: int, max_chars: int) -> str:
        """The text of a run from ``start``, at most ``max_chars`` characters, with a line saying which characters
        these are and how to read on.

        Raises:
            KeyError: No run of that call is kept (unknown, or too old); the message says which.
            ValueError: ``start`` is negative.
        """
        if start < 0:
            raise ValueError(f"start must be 0 or more, not {start}")
        with self._lock:
            text = self._texts.get(tool_call_id)
            if text is None:
                if tool_call_id in self._dropped:
                    raise KeyError(
                        f"the output of call {tool_call_id!r} is no longer kept: only the last {self._max_runs} runs' "
                        "outputs are"
                    )
                known = ", ".join(reversed(list(self._texts)[-5:])) or "none yet"
                raise KeyError(f"no run_python call {tool_call_id!r} has output here (the latest: {known})")
        end = min(len(text), start + max_chars)
        if start >= len(text):
            return f"[The output of {tool_call_id} has {len(text):,} characters; nothing from character {start:,}.]"
        header = f"[Characters {start:,} to {end:,} of {len(text):,}"
        header += f'; read_output("{tool_call_id}", {end}) reads on.]' if end < len(text) else ": the end.]"
        return f"{header}\n{text[start:end]}"
