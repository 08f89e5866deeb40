"""Streaming tool-call arguments: the incremental parser against re-parsing the whole buffer on every delta.

The payload is ``{"path": ..., "content": <N characters of code-like text>}``: quotes, backslashes, ``\\n``, tabs,
é, → and 😀 (which makes the Python ``str`` UCS-4). It is streamed in seeded random 4-8 character slices, and after
every slice the consumer wants the best-effort dict.

- ours: `StreamingArguments.feed` on every delta, ``.value`` read once at the end (a consumer that follows the
  patches); and, as a separate row, ``.value`` read after every delta, to show what materialising costs;
- partial-json-parser: ``partial_json_parser.loads(buffer)`` on every delta;
- pydantic_core: ``pydantic_core.from_json(buffer, allow_partial="trailing-strings")`` on every delta.

Total is CPU time (``time.process_time``) to drain the whole stream; p99 is the 99th percentile of the per-delta
wall time (``perf_counter_ns`` around each call). A re-parse whose whole stream would exceed the time cap is
estimated: evenly spaced prefixes are parsed (midpoint rule), the total is n_deltas × their mean, and p99 is the
parse time of the prefix at the 99th percentile of the stream (the cost grows with the prefix). Estimated figures
are marked ``~``. partial-json-parser's figures at 100 KB and 1 MB are always such estimates: one parse of 1 MB
of code takes seconds, because it slices the buffer for every quote character.

Run: ``python benchmarks/bench_arguments.py [--quick]`` or ``python -m benchmarks --only bench_arguments``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_widgets.arguments import StreamingArguments

SIZES = [("1 KB", 1_000), ("100 KB", 100_000), ("1 MB", 1_000_000)]

_LINES = [
    "def handle(request, *args, **kwargs):",
    '    """Answer the caller; see docs/handler.md."""',
    '    name = request.get("name", "world")',
    '    greeting = f"Bonjour, {name}! caf\u00e9 \u2192 ok \U0001f600"',
    "    if '\\n' in greeting or \"\\t\" in greeting:",
    "        raise ValueError('bad: %r' % (greeting,))",
    '    path = "C:\\\\Users\\\\\u00e9l\u00e8ve\\\\out.txt"',
    '    return {"status": 200, "body": greeting}  # done \u2192 next',
    "",
    "class Settings:",
    "\tretries = [1, 2, 3]\t# tab-indented on purpose",
    '    pattern = r"^\\d+\\.\\d+$"  # a regex with \\ and "quotes"',
]


def make_arguments(n_chars: int, seed: int = 0) -> str:
    """JSON text of a tool call's arguments with about `n_chars` characters of code-like content."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_chars:
        line = rng.choice(_LINES) + "\n"
        parts.append(line)
        size += len(line)
    content = "".join(parts)[:n_chars]
    return json.dumps({"path": "src/app/handler.py", "content": content}, ensure_ascii=False)


def make_deltas(text: str, seed: int = 1, lo: int = 4, hi: int = 8) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while i < len(text):
        k = rng.randint(lo, hi)
        out.append(text[i : i + k])
        i += k
    return out


@dataclass
class Result:
    total_s: float
    p99_ns: float
    estimated: bool = False

    def cell(self) -> str:
        mark = "~" if self.estimated else ""
        return f"{mark}{_fmt_s(self.total_s)} / {mark}{_fmt_ns(self.p99_ns)}"


def _fmt_s(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def _fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def _p99(times: list[int]) -> float:
    ordered = sorted(times)
    return float(ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)])


def _ours(deltas: list[str], repeats: int) -> Result:
    """Feed every delta, read ``.value`` once at the end. Total: best of `repeats` untimed runs."""
    best = math.inf
    for _ in range(repeats):
        parser = StreamingArguments()
        feed = parser.feed
        started = time.process_time()
        for delta in deltas:
            feed(delta)
        parser.value  # noqa: B018 - materialise once, as a consumer of the patches would at the end
        best = min(best, time.process_time() - started)
    parser = StreamingArguments()
    feed = parser.feed
    clock = time.perf_counter_ns
    times = []
    for delta in deltas:
        t0 = clock()
        feed(delta)
        times.append(clock() - t0)
    return Result(best, _p99(times))


def _ours_reading_value(deltas: list[str], cap_s: float) -> Result:
    """Feed every delta and read ``.value`` after each one (O(open string) per read, so O(n²) in all)."""
    n = len(deltas)
    clock = time.perf_counter_ns
    parser = StreamingArguments()
    times = []
    started = time.process_time()
    for i, delta in enumerate(deltas):
        t0 = clock()
        parser.feed(delta)
        parser.value  # noqa: B018
        times.append(clock() - t0)
        if i % 512 == 511 and time.process_time() - started > cap_s:
            break
    else:
        return Result(time.process_time() - started, _p99(times))
    # Capped: feed everything, and at evenly spaced points time one delta's feed + read in the steady state
    # (right after a read, as when reading every delta).
    samples = max(3, min(60, n // 10))
    points = {int((k + 0.5) * n / samples) for k in range(samples)}
    p99_at = min(n - 1, math.ceil(0.99 * n) - 1)
    points.add(p99_at)
    parser = StreamingArguments()
    sampled: list[int] = []
    p99 = 0.0
    for i, delta in enumerate(deltas):
        if i in points:
            parser.value  # noqa: B018 - steady state: the previous delta was read too
            t0 = clock()
            parser.feed(delta)
            parser.value  # noqa: B018
            elapsed = clock() - t0
            if i == p99_at:
                p99 = elapsed
            sampled.append(elapsed)
        else:
            parser.feed(delta)
    return Result(n * sum(sampled) / len(sampled) / 1e9, p99, estimated=True)


def _safe(parse: Callable[[str], Any], buffer: str) -> None:
    with contextlib.suppress(ValueError):  # a re-parser may reject some prefix; the time still counts
        parse(buffer)


def _reparse(parse: Callable[[str], Any], deltas: list[str], cap_s: float) -> Result:
    """Re-parse the whole buffer after every delta, or estimate that when it would exceed `cap_s`."""
    n = len(deltas)
    text = "".join(deltas)
    ends = []
    end = 0
    for delta in deltas:
        end += len(delta)
        ends.append(end)
    clock = time.perf_counter_ns
    p99_at = min(n - 1, math.ceil(0.99 * n) - 1)
    buffer = text[: ends[p99_at]]
    t0 = clock()
    _safe(parse, buffer)
    p99_one = float(clock() - t0)
    if p99_one * n / 2 / 1e9 <= cap_s:  # plausible to finish within the cap: measure every delta
        times = []
        buffer = ""
        started = time.process_time()
        for i, delta in enumerate(deltas):
            t0 = clock()
            buffer += delta
            _safe(parse, buffer)
            times.append(clock() - t0)
            if i % 256 == 255 and time.process_time() - started > cap_s:
                break
        else:
            return Result(time.process_time() - started, _p99(times))
    # Estimate: parse evenly spaced prefixes (midpoint rule) within about the cap.
    # At least 3 samples, or 2 when a single parse already takes longer than the cap.
    floor = 2 if p99_one / 1e9 > cap_s else 3
    samples = max(floor, min(60, int(cap_s / max(p99_one / 2 / 1e9, 1e-9))))
    sampled = []
    for k in range(samples):
        buffer = text[: ends[min(n - 1, int((k + 0.5) * n / samples))]]
        t0 = clock()
        _safe(parse, buffer)
        sampled.append(clock() - t0)
    return Result(n * sum(sampled) / len(sampled) / 1e9, p99_one, estimated=True)


def run(*, quick: bool = False) -> str:
    """Measure every strategy at 1 KB, 100 KB and 1 MB and return a markdown section."""
    import partial_json_parser
    import pydantic_core

    def pjp(buffer: str) -> Any:
        return partial_json_parser.loads(buffer)

    def pdc(buffer: str) -> Any:
        return pydantic_core.from_json(buffer, allow_partial="trailing-strings")

    cap_s = 2.0 if quick else 10.0
    columns: dict[str, list[str]] = {}
    counts: list[str] = []
    ratio_pjp: list[str] = []
    ratio_pdc: list[str] = []
    ratio_value: list[str] = []
    for _, size in SIZES:
        text = make_arguments(size)
        deltas = make_deltas(text)
        final = StreamingArguments.parse(text).value
        assert final == json.loads(text), "the parser disagrees with json.loads"
        counts.append(f"{len(deltas):,}")
        ours = _ours(deltas, repeats=1 if size >= 1_000_000 else 3)
        reading = _ours_reading_value(deltas, cap_s)
        theirs_pjp = _reparse(pjp, deltas, cap_s)
        theirs_pdc = _reparse(pdc, deltas, cap_s)
        for label, result in [
            ("ours: `StreamingArguments.feed` every delta, `.value` once", ours),
            ("partial-json-parser `loads(buf)` every delta", theirs_pjp),
            ('pydantic_core `from_json(buf, allow_partial="trailing-strings")` every delta', theirs_pdc),
            ("ours + reading `.value` every delta", reading),
        ]:
            columns.setdefault(label, []).append(result.cell())
        for target, other in [(ratio_pjp, theirs_pjp), (ratio_pdc, theirs_pdc), (ratio_value, reading)]:
            mark = "~" if other.estimated else ""
            target.append(f"{mark}{other.total_s / ours.total_s:,.0f}×")

    header = "| strategy (total CPU / p99 per delta) | " + " | ".join(label for label, _ in SIZES) + " |"
    lines = [
        "## Streaming tool-call arguments (`ai_widgets.arguments`)",
        "",
        "Code-like arguments streamed in seeded random 4-8 character slices; after every slice the consumer "
        "wants the best-effort dict. `~`: estimated from evenly spaced prefixes, the stream would exceed the "
        f"{cap_s:.0f} s cap (the partial-json-parser figures at 1 MB always are).",
        "",
        header,
        "|---|" + "---:|" * len(SIZES),
        "| deltas per stream | " + " | ".join(counts) + " |",
    ]
    labels = list(columns)
    for label in labels[:3]:
        lines.append(f"| {label} | " + " | ".join(columns[label]) + " |")
    lines.append("| **ratio of totals, theirs ÷ ours (same run)** |" + " |" * len(SIZES))
    lines.append("| partial-json-parser ÷ ours | " + " | ".join(ratio_pjp) + " |")
    lines.append("| pydantic_core ÷ ours | " + " | ".join(ratio_pdc) + " |")
    lines.append("| **cost of materialising the view** |" + " |" * len(SIZES))
    lines.append(f"| {labels[3]} | " + " | ".join(columns[labels[3]]) + " |")
    lines.append("| reading every delta ÷ reading once | " + " | ".join(ratio_value) + " |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller time caps (the whole run takes < 30 s)")
    args = parser.parse_args()
    print(run(quick=args.quick))


if __name__ == "__main__":
    main()
