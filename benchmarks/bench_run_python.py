"""The tool time of ``KernelTools.run_python("x = 1")``: in an empty namespace, in one with 10,000 names and a 300 MB
numpy array (what a run costs must not grow with the data the person holds), and against a bare ``exec`` of the same
code (what running it as a cell, on its own thread, with its outputs routed and its changes watched, adds).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from ai_widgets.kernel import KernelTools
from ai_widgets.tools import Tool, ToolInvocation

TITLE = "## run_python: tool time against the namespace's size and a bare exec"
CODE = "x = 1"
#: Goals (issue 31): at most this many times the empty namespace's time, and at most this many ms over a bare exec.
GOAL_RATIO = 1.5
GOAL_OVER_EXEC_MS = 2.0


def big_namespace(names: int, array_mb: int) -> dict[str, Any]:
    namespace: dict[str, Any] = {f"v{i}": i for i in range(names)}
    try:
        import numpy as np

        namespace["big"] = np.ones(array_mb * 1024 * 1024 // 8)
    except ImportError:  # the figure then says so
        namespace["big"] = bytearray(array_mb * 1024 * 1024)
    return namespace


async def tool_time(tool: Tool, call_id: str) -> float:
    invocation = ToolInvocation(tool_call_id=call_id, tool_name="run_python", arguments='{"code": "x = 1"}')
    started = time.perf_counter()
    outcome = await tool.invoke(invocation)
    elapsed = time.perf_counter() - started
    if not outcome.ok:
        raise RuntimeError(f"run_python failed in the benchmark: {outcome.message}")
    return elapsed


def exec_time(namespace: dict[str, Any]) -> float:
    started = time.perf_counter()
    exec(compile(CODE, "<bench>", "exec"), namespace)
    return time.perf_counter() - started


def measure(empty: dict[str, Any], big: dict[str, Any], repeat: int) -> tuple[float, float, float]:
    """Medians of the tool time in each namespace and of a bare exec, taken in turns (a shared machine's noise
    falls on all three alike)."""

    async def go() -> tuple[float, float, float]:
        tools = []
        for namespace in (empty, big):
            [run_python] = [t for t in await KernelTools(namespace).list_tools() if t.name == "run_python"]
            tools.append(run_python)
        times: tuple[list[float], list[float], list[float]] = ([], [], [])
        for n in range(repeat + 5):  # the first 5 warm up
            small, large = await tool_time(tools[0], f"e{n}"), await tool_time(tools[1], f"b{n}")
            bare = exec_time(big)
            if n >= 5:
                times[0].append(small)
                times[1].append(large)
                times[2].append(bare)
        return statistics.median(times[0]), statistics.median(times[1]), statistics.median(times[2])

    return asyncio.run(go())


def run(*, quick: bool = False) -> str:
    repeat = 50 if quick else 300
    names, array_mb = (10_000, 30) if quick else (10_000, 300)
    empty, full, bare = measure({}, big_namespace(names, array_mb), repeat)
    ratio = full / empty
    over = (full - bare) * 1e3
    lines = [
        TITLE,
        "",
        f"`await run_python.invoke(...)` of `{CODE}`, median of {repeat} runs of each, taken in turns (after 5 to warm up); a "
        f"bare `exec(compile(...))` of the same code in the big namespace for comparison.",
        "",
        "| namespace | tool time |",
        "|---|---:|",
        f"| empty | {empty * 1e3:.3f} ms |",
        f"| {names:,} names and a {array_mb} MB array | {full * 1e3:.3f} ms |",
        f"| bare exec, same big namespace | {bare * 1e3:.3f} ms |",
        "",
        f"Big against empty: **{ratio:.2f}×** (goal: at most {GOAL_RATIO}×: "
        + ("**yes**" if ratio <= GOAL_RATIO else "**no**")
        + f"); over a bare exec: **{over:.2f} ms** (goal: under {GOAL_OVER_EXEC_MS:g} ms: "
        + ("**yes**" if over < GOAL_OVER_EXEC_MS else "**no**")
        + ").",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv[1:]))
