"""What attaching a large object costs: a frame of 2,000,000 rows (200,000 with ``--quick``) attached with the
default preview (20 rows) and with ``Preview(df, max_rows=10**9)``, whose view is bounded by its 20,000 characters
instead; and the other bounded views (a frame of 100,000 columns with ``max_columns=10**9``, a list of 5,000,000
ints), each with its default view for comparison.

Each row: the median wall time of ``object_parts`` (what ``send(attach=...)`` does for one object) over repeated
runs, the most memory it held at once (``tracemalloc``'s peak, one separate run, the object itself made before), the
characters of the view, and the time per character shown. Goal: a huge ``max_rows`` costs at most 2x the default
preview's time (it formats only what fits the budget, not the whole frame).
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ai_widgets.attachments import Preview, object_parts

ROWS = 2_000_000
GOAL_TIMES = 2.0
TITLE = f"## Attaching a {ROWS:,}-row frame with a huge max_rows (and other bounded views)"


def _frame(rows: int) -> Any:
    cities = np.array(["Paris", "Lyon", "Nice", "Lille"], dtype=object)
    return pd.DataFrame(
        {
            "id": np.arange(rows),
            "price": np.random.default_rng(0).random(rows) * 100,
            "city": cities[np.arange(rows) % 4],
            "when": pd.date_range("2024-01-01", periods=rows, freq="min"),
        }
    )


def _wide(columns: int) -> Any:
    return pd.DataFrame(np.zeros((3, columns)), columns=[f"c{n}" for n in range(columns)])


def _measure(value: Any, repeat: int) -> dict[str, float]:
    def once() -> str:
        (part,) = object_parts(value)
        return str(part.text)

    text = once()  # warm: imports, caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        once()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    seconds = statistics.median(times)
    return {"seconds": seconds, "peak": peak, "chars": len(text), "ns_per_char": seconds * 1e9 / len(text)}


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def run(*, quick: bool = False) -> str:
    rows = ROWS // 10 if quick else ROWS
    repeat = 20 if quick else 50
    frame, wide = _frame(rows), _wide(10_000 if quick else 100_000)
    numbers = list(range(500_000 if quick else 5_000_000))
    cases: list[tuple[str, Callable[[], Any]]] = [
        (f"{rows:,}-row frame, default preview", lambda: frame),
        (f"{rows:,}-row frame, `Preview(df, max_rows=10**9)`", lambda: Preview(frame, max_rows=10**9)),
        (f"{len(wide.columns):,}-column frame, default preview", lambda: wide),
        (f"{len(wide.columns):,}-column frame, `max_columns=10**9`", lambda: Preview(wide, max_columns=10**9)),
        (f"list of {len(numbers):,} ints", lambda: numbers),
    ]
    results = {name: _measure(make(), repeat) for name, make in cases}
    default, huge = results[cases[0][0]], results[cases[1][0]]
    ratio = huge["seconds"] / default["seconds"]
    lines = [
        TITLE if not quick else TITLE.replace(f"{ROWS:,}", f"{rows:,}"),
        "",
        "`object_parts(value)`: median of "
        f"{repeat} runs; peak memory held while converting (tracemalloc); the view's characters.",
        "",
        "| attached | time | peak memory | view | per character shown |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['seconds'] * 1e3:.2f} ms | {_mb(r['peak'])} | {r['chars']:,} chars "
            f"| {r['ns_per_char']:.0f} ns |"
        )
    lines += [
        "",
        f"A huge max_rows against the default preview: **{ratio:.1f}×** the time "
        f"(goal: at most {GOAL_TIMES:.0f}×: " + ("**yes**" if ratio <= GOAL_TIMES else "**no**") + f"), for a view "
        f"{huge['chars'] / default['chars']:.1f}× as long "
        f"({huge['ns_per_char'] / default['ns_per_char']:.2f}× the time per character shown).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv[1:]))
