"""What ``history=`` costs as a conversation grows: bytes written per turn, and turn time with and without it.

One conversation of N turns (1,000; 200 with ``--quick``) runs through ``ChatSession.send`` with a transport that
yields pre-built events: a 200-character question and a 3,000-character reply in 6-character text deltas, so a turn
adds about 3.7 kB to the file. The same conversation runs twice, with ``history=`` (a file in a fresh temporary
folder) and without, a turn of one and then a turn of the other. Bytes written are the process's ``wchar`` from ``/proc/self/io`` (every byte handed to
``write``, the history writer thread's included), read before and after each turn once the history file is flushed.

At turns 10, 100 and N the table shows: bytes written per turn, averaged over the second half of the turns so far
(so the journal's occasional compaction is spread over the turns it serves, as it is in use), all bytes written so
far, the files' size, and the median wall time of the last 10 turns, with and without ``history=``; the time a
checkpoint adds is their difference over the turn's 3 checkpoints (the last one waits for its write). The growth
exponent is the slope of log(value) against log(turn) from turn 10 to turn N: 0 means flat, 1 linear, 2 quadratic
(the whole-file rewrite it replaced measured 2.00 for the bytes written so far).
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ai_widgets import ChatSession
from ai_widgets.events import ResponseCompleted, ResponseStarted, TextDelta, UsageUpdate
from ai_widgets.messages import FinishReason

QUESTION_CHARS = 200
REPLY_CHARS = 3_000
DELTA_CHARS = 6
WINDOW = 10
#: The question added, the reply started, the reply ended (written before ``send`` returns).
CHECKPOINTS_PER_TURN = 3


class _PrebuiltTransport:
    """Yields the same pre-built reply events for every request."""

    def __init__(self) -> None:
        rng = random.Random(0)
        text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz     ,.", k=REPLY_CHARS))
        deltas = [TextDelta(text[i : i + DELTA_CHARS]) for i in range(0, REPLY_CHARS, DELTA_CHARS)]
        self.events: list[Any] = [ResponseStarted(), *deltas]
        self.events += [UsageUpdate(input_tokens=10, output_tokens=len(deltas)), ResponseCompleted(FinishReason.STOP)]

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for event in self.events:
            yield event


def _written() -> int | None:
    """Bytes this process has handed to ``write`` so far (Linux), or ``None`` where the OS does not say."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _files_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.iterdir() if p.name.startswith(path.name))


async def _conversations(turns: int, history: Path) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """Runs two conversations of ``turns`` turns, with ``history`` and without, a turn of each in turn (so drift
    of the machine touches both alike); per turn its wall seconds, the bytes written during it, the files' size."""
    sessions = [ChatSession(_PrebuiltTransport(), history=history), ChatSession(_PrebuiltTransport())]
    question = "q" * QUESTION_CHARS
    rows: tuple[list[dict[str, float]], list[dict[str, float]]] = ([], [])
    try:
        for _ in range(turns):
            for session, kept in zip(sessions, rows, strict=True):
                before = _written()
                started = time.perf_counter()
                reply = await session.send(question)
                elapsed = time.perf_counter() - started
                assert reply.status.value == "completed", reply.error
                session.flush_history()  # what the turn wrote is on disk before it is counted
                after = _written()
                written = float("nan") if before is None or after is None else after - before
                kept.append({"seconds": elapsed, "written": written, "size": float(_files_size(history))})
    finally:
        for session in sessions:
            session.close()
    return rows


def _exponent(x0: float, y0: float, x1: float, y1: float) -> float:
    if y0 <= 0 or y1 <= 0 or math.isnan(y0) or math.isnan(y1):
        return float("nan")
    return math.log(y1 / y0) / math.log(x1 / x0)


def run(*, quick: bool = False) -> str:
    turns = 200 if quick else 1_000
    marks = [10, 100, turns]
    with tempfile.TemporaryDirectory(prefix="aiw-bench-history-") as folder:
        with_history, without = asyncio.run(_conversations(turns, Path(folder) / "chat.json"))

    def at(k: int) -> dict[str, float]:
        half = with_history[k // 2 : k]
        row = {
            "per_turn": statistics.fmean(r["written"] for r in half),
            "so_far": sum(r["written"] for r in with_history[:k]),
            "size": with_history[k - 1]["size"],
            "ms_with": statistics.median(r["seconds"] for r in with_history[k - WINDOW : k]) * 1e3,
            "ms_without": statistics.median(r["seconds"] for r in without[k - WINDOW : k]) * 1e3,
        }
        row["per_checkpoint"] = (row["ms_with"] - row["ms_without"]) / CHECKPOINTS_PER_TURN
        return row

    figures = {k: at(k) for k in marks}
    lines = [
        f"## `history=`: bytes written and turn time over a {turns:,}-turn conversation",
        "",
        f"Each turn: a {QUESTION_CHARS}-character question, a {REPLY_CHARS:,}-character reply in {DELTA_CHARS}-character "
        f"deltas. Bytes: `/proc/self/io` wchar around each turn (history flushed); per turn: mean over the second "
        f"half of the turns so far; turn time: median of the last {WINDOW} turns (`perf_counter`).",
        "",
        "| turn | files kB | bytes written / turn | bytes written so far | turn ms, history= | turn ms, none | ratio "
        "| ms / checkpoint |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, f in figures.items():
        lines.append(
            f"| {k:,} | {f['size'] / 1e3:,.1f} | {f['per_turn']:,.0f} | {f['so_far']:,.0f} | {f['ms_with']:.2f} | "
            f"{f['ms_without']:.2f} | {f['ms_with'] / f['ms_without']:.2f} | {f['per_checkpoint']:.2f} |"
        )
    keys = ("size", "per_turn", "so_far", "ms_with", "ms_without", "per_checkpoint")

    def slopes(start: int) -> str:
        values = [_exponent(start, figures[start][key], turns, figures[turns][key]) for key in keys]
        return f"| turn {start:,} to {turns:,} | " + " | ".join(f"{v:.2f}" for v in values) + " |"

    lines += [
        "",
        "| growth exponent (log-log slope) | files | bytes / turn | bytes so far | turn ms, history= | turn ms, none "
        "| ms / checkpoint |",
        "|---|---:|---:|---:|---:|---:|---:|",
        slopes(marks[0]),
        slopes(marks[1]),
        "",
        "Flat bytes per turn (exponent near 0) and bytes so far growing linearly (near 1) mean a checkpoint writes what "
        "changed, not the conversation. The journal is folded into the snapshot when it outgrows it (and 256 kB), on "
        "the writer thread, off the event loop: that is the part of the bytes per turn above the journal's own.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
