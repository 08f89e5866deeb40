"""Front end in a real browser: a live reply streamed into a view that already shows 500 finished messages.

Headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright) loads the built bundle
(``ai_widgets/static/widget.js`` and ``widget.css``) with a fake anywidget model (``benchmarks/frontend/harness.js``)
that holds a realistic finished conversation: user questions and markdown answers with lists and code blocks, every
other answer with a completed tool call. A reply then streams at 2,000 deltas a second, delivered as the kernel
would: the same merge rules as ``PatchStream``, one ``{"type": "patch"}`` message about every 33 ms (~66 deltas),
with one tool call whose arguments stream as append patches and whose state changes (pending, running with
progress, completed).

Measured during the stream: the view's per-frame flush time (``globalThis.__aiwStats``), the gaps between animation
frames, long tasks, main-thread time (Chrome's Performance domain: all tasks, and style + layout), and a
MutationObserver on the 500 earlier messages (any mutation there is a bug) and on the list (only the reply may be
added). Compared in the same run: the same stream into a naive renderer that rebuilds the whole conversation's
``innerHTML`` (escaped text in ``<pre>``) on every patch.

Then opening a long conversation, each in a fresh page: 500 and 5,000 finished messages from a saved notebook's
state (all of them in ``history``), and 5,000 from a live kernel (the newest in the state, the rest asked for in
chunks). First render = until ``data-rendered`` and the next frame (what is on screen); also how long until every
message is built, and the longest frame gap meanwhile. Compared with the front end before long conversations were
opened newest first: the bundle of the tree named by ``AIW_BENCH_BEFORE`` (its ``ai_widgets/static``), measured in
the same run, or else the figures recorded in issue 19 (202 ms at 500 messages, about 500 ms at 5,000).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "ai_widgets" / "static"
HARNESS = Path(__file__).resolve().parent / "frontend" / "harness.js"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ORIGIN = "http://aiw.bench"
MESSAGES = 500
RATE = 2000  # deltas a second
RENDER_BUDGET_MS = 150  # first render of the 500-message conversation
#: Opening a conversation: (messages, from a live kernel) -> the goal for the first render (ms), and the figure
#: recorded before (issue 19) for when the old bundle is not at hand.
OPENINGS = {(500, False): 150.0, (5000, False): 250.0, (5000, True): 250.0}
RECORDED_BEFORE_MS = {500: 202.0, 5000: 500.0}

TITLE = "## Front end: streaming a reply into a 500-message conversation (headless Chromium)"


def _page_html(with_css: bool) -> str:
    css = '<link rel="stylesheet" href="/widget.css">' if with_css else ""
    return (
        f'<!doctype html><html><head><meta charset="utf-8">{css}</head>'
        '<body style="margin:0;padding:16px"><div id="app" style="max-width:900px"></div>'
        '<script type="module" src="/harness.js"></script></body></html>'
    )


def _missing() -> str | None:
    for path in (STATIC / "widget.js", STATIC / "widget.css"):
        if not path.is_file():
            return f"`{path.relative_to(ROOT)}` is missing (build it: `cd js && npm run build`)"
    if not CHROMIUM.exists():
        return f"`{CHROMIUM}` is missing (install Debian's `chromium` package)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python Playwright is not installed (`pip install playwright`; no browser download is needed)"
    return None


def _cdp_times(cdp: Any) -> dict[str, float]:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {
        "task": metrics.get("TaskDuration", 0.0) * 1000,
        "layout": (metrics.get("LayoutDuration", 0.0) + metrics.get("RecalcStyleDuration", 0.0)) * 1000,
        "script": metrics.get("ScriptDuration", 0.0) * 1000,
    }


def _page(browser: Any, *, with_css: bool, static: Path = STATIC) -> tuple[Any, Any]:
    """A fresh browser context and page serving the harness and the bundle in ``static``."""
    files = {
        "/index.html": (_page_html(with_css).encode(), "text/html"),
        "/harness.js": (HARNESS.read_bytes(), "text/javascript"),
        "/widget.js": ((static / "widget.js").read_bytes(), "text/javascript"),
        "/widget.css": ((static / "widget.css").read_bytes(), "text/css"),
    }

    def serve(route: Any) -> None:
        path = "/" + route.request.url.removeprefix(ORIGIN).lstrip("/").split("?")[0]
        body = files.get(path)
        if body is None:
            route.fulfill(status=404, body="not found")
        else:
            route.fulfill(status=200, body=body[0], content_type=body[1])

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/index.html")
    page.wait_for_function("() => globalThis.bench !== undefined")
    return context, page


def _run_page(browser: Any, fn: str, opts: dict[str, Any]) -> dict[str, Any]:
    context, page = _page(browser, with_css=fn == "setupWidget")
    try:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        page.evaluate(f"opts => globalThis.bench.{fn}(opts)", opts)
        before = _cdp_times(cdp)
        result: dict[str, Any] = page.evaluate("() => globalThis.bench.stream()")
        after = _cdp_times(cdp)
        result["cdp"] = {k: after[k] - before[k] for k in after}
        result["errors"] = errors
        return result
    finally:
        context.close()


def _open_page(browser: Any, static: Path, messages: int, live: bool) -> dict[str, Any]:
    context, page = _page(browser, with_css=True, static=static)
    try:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        result: dict[str, Any] = page.evaluate(
            "opts => globalThis.bench.openConversation(opts)", {"messages": messages, "live": live}
        )
        result["errors"] = errors
        return result
    finally:
        context.close()


def _before_static() -> Path | None:
    """The old bundle to compare the openings with (``AIW_BENCH_BEFORE``: a source tree with a built front end)."""
    tree = os.environ.get("AIW_BENCH_BEFORE")
    if not tree:
        return None
    static = Path(tree) / "ai_widgets" / "static"
    return static if (static / "widget.js").is_file() else None


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median first render (its other figures with it)."""
    return sorted(runs, key=lambda r: float(r["renderMs"]))[len(runs) // 2]


def measure(*, quick: bool = False) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    opts = {"messages": MESSAGES, "rate": RATE, "seconds": 2 if quick else 5}
    repeats = 1 if quick else 3
    before = _before_static()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            results: dict[str, Any] = {
                "widget": _run_page(browser, "setupWidget", opts),
                "naive": _run_page(browser, "setupNaive", opts),
            }
            openings: dict[tuple[int, bool], dict[str, Any]] = {}
            for messages, live in OPENINGS:
                openings[(messages, live)] = _median_run(
                    [_open_page(browser, STATIC, messages, live) for _ in range(repeats)]
                )
            old: dict[int, dict[str, Any]] = {}
            if before is not None:
                for messages in RECORDED_BEFORE_MS:
                    old[messages] = _median_run([_open_page(browser, before, messages, False) for _ in range(repeats)])
            results["openings"] = openings
            results["before"] = old
            return results
        finally:
            browser.close()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(name: str, r: dict[str, Any]) -> tuple[str, list[str]]:
    ms, gaps, lt = r["updateMs"], r["frameGaps"], r["longTasks"]
    long_tasks = f"{len(lt)} / {sum(lt):.0f}" if r["longTaskSupported"] else "n/a"
    cells = [
        f"{_pct(ms, 0.5):.2f}",
        f"{_pct(ms, 0.95):.2f}",
        f"{max(ms, default=float('nan')):.2f}",
        f"{r['updates']}",
        f"{sum(ms):.0f}",
        f"{_pct(gaps, 0.95):.1f} / {max(gaps, default=float('nan')):.1f}",
        long_tasks,
        f"{r['maxLagMs']:.0f}",
        f"{r['cdp']['task']:.0f}",
        f"{r['cdp']['script']:.0f}",
        f"{r['cdp']['layout']:.0f}",
    ]
    return name, cells


def _format(results: dict[str, Any], quick: bool) -> str:
    w, n = results["widget"], results["naive"]
    seconds = 2 if quick else 5
    lines = [
        TITLE,
        "",
        f"{MESSAGES} finished messages, then a reply at {RATE:,} deltas/s for {seconds} s "
        f"({w['scheduledDeltas']:,} deltas plus a 0.2 s tool run) as {w['patches']} patch messages "
        f"(~{w['deltas'] / max(w['patches'], 1):.0f} deltas, {w['ops'] / max(w['patches'], 1):.1f} merged ops each; "
        f"the last patch was handled after {w['streamMs'] / 1000:.1f} s by ai_widgets, {n['streamMs'] / 1000:.1f} s by the "
        "naive renderer). Update = one flush of the view (ai_widgets, per animation frame) "
        "or one re-render (naive, per patch); JS only. Frame gap = time between animation frames (16.7 ms is "
        "60 fps). Patch delay = how late the page got to a patch after its send time (a backlog). Main thread = "
        "Chrome's main-thread task time during the stream (script, style + layout, paint, GC). Lower is better.",
        "",
        "| front end | update p50 (ms) | p95 (ms) | max (ms) | updates | update total (ms) | frame gap p95 / max (ms) "
        "| long tasks (n / ms) | patch delay max (ms) | main thread (ms) | script (ms) | style + layout (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in (("ai_widgets ChatWidget", w), ("naive: re-render all per patch", n)):
        label, cells = _row(name, r)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    def ratio(a: float, b: float) -> str:
        return f"{b / a:.0f}×" if a > 0 else "∞"

    lines += [
        "",
        f"Naive / ai_widgets: update p50 {ratio(_pct(w['updateMs'], 0.5), _pct(n['updateMs'], 0.5))}, "
        f"p95 {ratio(_pct(w['updateMs'], 0.95), _pct(n['updateMs'], 0.95))}, "
        f"main-thread time {ratio(w['cdp']['task'], n['cdp']['task'])}, "
        f"style + layout {ratio(w['cdp']['layout'], n['cdp']['layout'])}.",
        "",
        f"Initial render of {MESSAGES} messages: ai_widgets {w['renderMs']:.0f} ms (until `data-rendered`, next frame; "
        f"building the DOM {w.get('buildMs', 0):.0f} ms of it), naive {n['renderMs']:.0f} ms. "
        f"Budget: at most {RENDER_BUDGET_MS} ms, "
        + ("**within budget**." if w["renderMs"] <= RENDER_BUDGET_MS else "**over budget**."),
        "",
        f"DOM mutations outside the streaming message: {w['mutationsOutside']} (must be 0)",
        "",
        f"Mutations of the message list other than adding the live message: {w['listMutationsOther']} "
        f"(live message added {w['liveAdded']} time(s); {w['messageElements']} message elements after the stream, "
        f"reply {w['liveChars']:,} characters of text).",
    ]
    errors = w["errors"] + n["errors"]
    lines += _format_openings(results["openings"], results["before"], quick)
    for r in [*results["openings"].values(), *results["before"].values()]:
        errors += r["errors"]
    if errors:
        lines += ["", "Page errors: " + "; ".join(errors[:5])]
    return "\n".join(lines) + "\n"


def _format_openings(
    openings: dict[tuple[int, bool], dict[str, Any]], before: dict[int, dict[str, Any]], quick: bool
) -> list[str]:
    lines = [
        "",
        "### Opening a long conversation (headless Chromium, a fresh page each)",
        "",
        f"Median of {1 if quick else 3} pages. First render: until `data-rendered` and the next frame. Built at "
        "first: message views built by then (the others wait, unbuilt, and are built newest first when idle). "
        "All built: until every message is built (and, from a live kernel, has arrived). Before: "
        + (
            "the old bundle (`AIW_BENCH_BEFORE`), same run, from a saved state that holds every message (what the "
            "old kernel sent every view)."
            if before
            else "recorded in issue 19 (set `AIW_BENCH_BEFORE` to a tree with the old bundle built to measure it "
            "in the same run)."
        ),
        "",
        "| conversation | first render (ms) | goal (ms) | before (ms) | before / now | built at first | newest in view "
        "| all built (ms) | longest frame gap meanwhile (ms) |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for (messages, live), r in openings.items():
        goal = OPENINGS[(messages, live)]
        old = before.get(messages)
        old_ms = float(old["renderMs"]) if old else RECORDED_BEFORE_MS[messages]
        where = "live kernel (state: newest, rest in chunks)" if live else "saved state (all in `history`)"
        verdict = "within" if r["renderMs"] <= goal else "**over**"
        lines.append(
            f"| {messages:,} messages, {where} | {r['renderMs']:.0f} ({verdict}) | {goal:.0f} | "
            f"{old_ms:.0f}{'' if old else ' (recorded)'} | {old_ms / max(r['renderMs'], 1e-9):.1f}× | "
            f"{r['firstScreen']:,} | {'yes' if r['newestInView'] else 'no'} | {r['allBuiltMs']:.0f} "
            f"({r['builtAtEnd']:,} built) | {r['maxFrameGapMs']:.0f} |"
        )
    if before:
        cells = ", ".join(
            f"{n:,} messages: first render {r['renderMs']:.0f} ms, {r['firstScreen']:,} built"
            for n, r in before.items()
        )
        lines += ["", f"Old bundle, saved state: {cells}."]
    return lines


def run(*, quick: bool = False) -> str:
    problem = _missing()
    if problem:
        return f"{TITLE}\n\nSkipped: {problem}.\n"
    try:
        results = measure(quick=quick)
    except Exception as exc:  # a browser that fails to start must not end the whole benchmark run
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return f"{TITLE}\n\nFailed: {type(exc).__name__}: {first_line}\n"
    return _format(results, quick)


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv[1:]))
