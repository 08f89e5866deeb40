"""Which finished messages a view gets first, and in what chunks the earlier ones follow.

A view's state (the comm's opening state, the state a new page asks for) carries only the newest finished messages,
about what fills a screen; the view asks for the earlier ones, a chunk at a time, newest first
(docs/protocol.md, "Finished messages"). So opening a long conversation sends it once, the part on screen first,
and no single message the front end parses is large.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CHUNK_BYTES",
    "CHUNK_MESSAGES",
    "SCREEN_BYTES",
    "SCREEN_MESSAGES",
    "chunk_start",
    "older_state",
    "screen_start",
]

#: The newest finished messages a view's state carries: at most this many, and about this many bytes (always the
#: newest one, however large). More than a tall screen shows, so the first render needs nothing else.
SCREEN_MESSAGES = 40
SCREEN_BYTES = 256_000
#: One answer to an ``older`` request: at most this many messages, and about this many bytes (at least one).
CHUNK_MESSAGES = 400
CHUNK_BYTES = 1_000_000


def wire_size(message: dict[str, Any]) -> int:
    """About how many bytes ``message`` takes on the wire (finished messages are JSON-safe already)."""
    return len(json.dumps(message, ensure_ascii=False, separators=(",", ":")))


def start_before(history: Sequence[dict[str, Any]], end: int, *, messages: int, max_bytes: int) -> int:
    """Where the run of messages just before ``end`` starts that holds at most ``messages`` of them and about
    ``max_bytes`` (at least one, if there is one)."""
    start = end
    size = 0
    while start > 0 and end - start < messages:
        size += wire_size(history[start - 1])
        if size > max_bytes and start < end:
            break
        start -= 1
    return start


def screen_start(history: Sequence[dict[str, Any]]) -> int:
    """The position of the first finished message a view's state carries (the newest ones, about a screen)."""
    return start_before(history, len(history), messages=SCREEN_MESSAGES, max_bytes=SCREEN_BYTES)


def chunk_start(history: Sequence[dict[str, Any]], end: int) -> int:
    """The position of the first message of the chunk that ends just before position ``end``."""
    return start_before(history, end, messages=CHUNK_MESSAGES, max_bytes=CHUNK_BYTES)


def older_state(history: Sequence[dict[str, Any]], start: int) -> dict[str, Any]:
    """The ``older`` trait for a state whose ``history`` starts at position ``start``: how many finished messages
    come before the message ``before`` (empty when none do). Named by id, so a view that has since put the earlier
    ones into its copy (a saved notebook) sees where that message is and that nothing is missing."""
    if start <= 0 or start >= len(history):
        return {}
    return {"count": start, "before": history[start].get("id")}
