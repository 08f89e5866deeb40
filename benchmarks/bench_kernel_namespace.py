"""What the model's view of the kernel's variables costs (``ai_widgets.kernel``): watching a namespace across a run,
listing the variables, and inspecting a huge frame.

- The watch (``watch_start`` before a run, ``changes`` after it), for ``x = 1``, in a namespace of 10,000 names and
  a 300 MB numpy array (1,000 names and 30 MB with ``--quick``), against an empty namespace, and for code that names
  the array (its bounded fingerprint). Goal: well under 1 ms for the names the code does not mention.
- ``list_variables`` of 10,000 names of mixed types (ints, floats, strings, lists, dicts, small arrays and frames).
  Goal: at most 50 ms.
- ``inspect_variable`` of a 10,000,000-row frame (1,000,000 with ``--quick``). Goal: at most 200 ms, with no full
  copy: the most memory it holds at once (``tracemalloc``'s peak, one separate run) is a small fraction of the
  frame's.

Each time is the median of repeated runs (for the watch, also the fastest: on a busy machine the median of a
few hundred microseconds varies by half).
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

from ai_widgets.kernel import code_names, inspect_variable, list_variables, watch_start

NAMES = 10_000
ARRAY_BYTES = 300_000_000
FRAME_ROWS = 10_000_000
GOAL_WATCH_MS = 1.0
GOAL_LIST_MS = 50.0
GOAL_INSPECT_MS = 200.0
#: The most the inspection may hold at once, as a share of the frame's own memory: far from a copy.
GOAL_INSPECT_PEAK_SHARE = 0.01
TITLE = "## The kernel's variables: watching a run, listing, inspecting"


def _times(work: Callable[[], Any], repeat: int) -> list[float]:
    work()  # warm: imports, caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return times


def _median(work: Callable[[], Any], repeat: int) -> float:
    return statistics.median(_times(work, repeat))


def _peak(work: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        work()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _mixed(names: int) -> dict[str, Any]:
    """A namespace of ``names`` variables of the kinds a notebook holds."""
    kinds: list[Callable[[int], Any]] = [
        lambda n: n,
        lambda n: n / 7,
        lambda n: f"text {n}" * (n % 5),
        lambda n: list(range(n % 50)),
        lambda n: {"n": n, "square": n * n},
        lambda n: np.arange(n % 100),
        lambda n: pd.DataFrame({"a": range(n % 20), "b": ["x"] * (n % 20)}) if n % 100 == 0 else (n,),
    ]
    return {f"var_{n}": kinds[n % len(kinds)](n) for n in range(names)}


def _watch(namespace: dict[str, Any], code: str) -> Callable[[], Any]:
    names = code_names(code)

    def once() -> Any:
        watch = watch_start(namespace, names)
        namespace["x"] = 1  # what ``x = 1`` does, without exec's cost
        changes = watch.changes(namespace)
        del namespace["x"]
        return changes

    return once


def _yes(ok: bool) -> str:
    return "**yes**" if ok else "**no**"


def run(*, quick: bool = False) -> str:
    names = NAMES // 10 if quick else NAMES
    array_bytes = ARRAY_BYTES // 10 if quick else ARRAY_BYTES
    rows = FRAME_ROWS // 10 if quick else FRAME_ROWS
    repeat = 20 if quick else 100

    big = np.zeros(array_bytes // 8)
    full: dict[str, Any] = {f"v{n}": [n] for n in range(names)} | {"big": big}
    watch_empty = _median(_watch({}, "x = 1"), repeat * 10)
    full_times = _times(_watch(full, "x = 1"), repeat)
    watch_full, watch_fastest = statistics.median(full_times), min(full_times)
    watch_named = _median(_watch(full, "x = 1\nbig[0] = big[1]"), repeat)

    mixed = _mixed(names)
    listing = _median(lambda: list_variables(mixed), max(5, repeat // 5))

    frame = pd.DataFrame(
        {
            "id": np.arange(rows),
            "price": np.random.default_rng(0).random(rows) * 100,
            "city": np.array(["Paris", "Lyon", "Nice", "Lille"], dtype=object)[np.arange(rows) % 4],
        }
    )
    frame_bytes = int(frame.memory_usage(deep=False).sum())
    inspect = _median(lambda: inspect_variable({"sales": frame}, "sales"), max(5, repeat // 5))
    inspect_peak = _peak(lambda: inspect_variable({"sales": frame}, "sales"))

    inspect_ms = inspect * 1e3
    peak_share = inspect_peak / frame_bytes
    lines = [
        TITLE,
        "",
        "| what | time | goal |",
        "|---|---:|---|",
        f"| watch `x = 1`, empty namespace | {watch_empty * 1e6:.0f} µs | |",
        f"| watch `x = 1`, {names:,} names + a {array_bytes / 1e6:.0f} MB array | {watch_full * 1e6:.0f} µs "
        f"(fastest {watch_fastest * 1e6:.0f} µs) | under {GOAL_WATCH_MS:g} ms: {_yes(watch_full * 1e3 < GOAL_WATCH_MS)} |",
        f"| watch code that names the array (its fingerprint too), same namespace | {watch_named * 1e6:.0f} µs | |",
        f"| `list_variables`, {names:,} names of mixed types | {listing * 1e3:.1f} ms "
        f"| at most {GOAL_LIST_MS:g} ms: {_yes(listing * 1e3 <= GOAL_LIST_MS)} |",
        f"| `inspect_variable`, a {rows:,}-row frame ({frame_bytes / 1e6:.0f} MB) | {inspect_ms:.1f} ms "
        f"| at most {GOAL_INSPECT_MS:g} ms: {_yes(inspect_ms <= GOAL_INSPECT_MS)} |",
        "",
        f"`inspect_variable` held at most {inspect_peak / 1e3:.0f} kB at once ({peak_share:.4%} of the frame's "
        f"{frame_bytes / 1e6:.0f} MB; no full copy, goal under {GOAL_INSPECT_PEAK_SHARE:.0%}: "
        f"{_yes(peak_share < GOAL_INSPECT_PEAK_SHARE)}). The watch costs "
        f"{watch_full / watch_empty:.0f}× the empty namespace's, {watch_full / max(names, 1) * 1e9:.0f} ns a name.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv[1:]))
