"""The session's own cost: kernel CPU per streamed text delta (against pydantic-ai), and concurrent tool calls.

Section 1 feeds the same pre-built text deltas (4-8 characters) to ``ChatSession.send`` through a minimal
transport, and to pydantic-ai through a ``FunctionModel`` stream function, and reports the marginal CPU per
delta, ``(T(N) - T(10)) / (N - 10)`` with ``time.process_time``, so each run's fixed cost (event loop, session or
agent setup) cancels out. Every run gets a fresh event loop (``asyncio.run``); rounds run outer and cases inner,
so machine drift spreads over all cases alike.

Section 2 times ``send`` wall-clock for a reply with N calls of a tool that sleeps 0.3 s.

Section 3 measures what the session itself costs as a conversation grows: the CPU of one turn (a call of a tool
that returns at once, then a text reply) at turn 10 and at turn 2,000 of one conversation, and the CPU per call of
a round of 100 and of 1,000 calls. The transport plays pre-built events and keeps nothing, so the figures are the
session's own; the garbage collector is off while a turn is timed (its full passes grow with the heap whatever the
session does) and runs between turns. Each pair is printed with its growth exponent ``log(t2 / t1) / log(n2 / n1)``:
0 is flat, 1 linear.
"""

from __future__ import annotations

import asyncio
import gc
import math
import random
import statistics
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

SMALL = 10
SLEEP = 0.3


def _deltas(n: int) -> list[str]:
    rng = random.Random(0)
    alphabet = "abcdefghijklmnopqrstuvwxyz     ,."
    return ["".join(rng.choices(alphabet, k=rng.randint(4, 8))) for _ in range(n)]


# --- section 1: per-delta cost ----------------------------------------------------------------------------------


class _PrebuiltTransport:
    """Yields pre-built events, so a run measures the consumer, not the events' construction."""

    def __init__(self, texts: list[str]) -> None:
        from ai_widgets.events import ResponseCompleted, ResponseStarted, TextDelta, UsageUpdate
        from ai_widgets.messages import FinishReason

        self.events: list[Any] = [ResponseStarted(), *(TextDelta(t) for t in texts)]
        self.events += [UsageUpdate(input_tokens=10, output_tokens=len(texts)), ResponseCompleted(FinishReason.STOP)]

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for event in self.events:
            yield event


async def _bare(transport: _PrebuiltTransport) -> int:
    count = 0
    async for _ in transport.stream(None):
        count += 1
    return count - 3


async def _session(transport: _PrebuiltTransport, subscribe: bool) -> int:
    from ai_widgets import ChatSession

    session = ChatSession(transport)
    changes: list[Any] = []
    if subscribe:
        session.subscribe(changes.append)
    reply = await session.send("hi")
    assert reply.status.value == "completed", reply.status
    return len(reply.text)


def _pydantic_ai_agent(texts: list[str]) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream_function(messages: list[Any], info: AgentInfo) -> AsyncIterator[str]:
        for text in texts:
            yield text

    return Agent(FunctionModel(stream_function=stream_function))


async def _pydantic_ai_iter(agent: Any) -> int:
    from pydantic_ai import Agent
    from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta

    chars = 0
    async with agent.iter("hi") as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as events:
                    async for event in events:
                        if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                            chars += len(event.delta.content_delta)
                        elif isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                            chars += len(event.part.content)
    return chars


async def _pydantic_ai_stream_text(agent: Any) -> int:
    chars = 0
    async with agent.run_stream("hi") as result:
        async for text in result.stream_text(delta=True, debounce_by=None):
            chars += len(text)
    return chars


Case = tuple[str, Callable[[list[str]], Callable[[], Coroutine[Any, Any, int]]]]


def _cases() -> list[Case]:
    def bare(texts: list[str]) -> Callable[[], Coroutine[Any, Any, int]]:
        transport = _PrebuiltTransport(texts)
        return lambda: _bare(transport)

    def session(subscribe: bool) -> Callable[[list[str]], Callable[[], Coroutine[Any, Any, int]]]:
        def make(texts: list[str]) -> Callable[[], Coroutine[Any, Any, int]]:
            transport = _PrebuiltTransport(texts)
            return lambda: _session(transport, subscribe)

        return make

    def pydantic_ai(consume: Callable[[Any], Coroutine[Any, Any, int]]) -> Callable[..., Any]:
        def make(texts: list[str]) -> Callable[[], Coroutine[Any, Any, int]]:
            agent = _pydantic_ai_agent(texts)
            return lambda: consume(agent)

        return make

    return [
        ("(a) bare async generator, `async for` (floor)", bare),
        ("(b) ai_widgets `ChatSession.send`, no subscriber", session(False)),
        ("(c) ai_widgets `ChatSession.send`, subscriber appends each change", session(True)),
        ("(d) pydantic-ai `agent.iter()` + `node.stream(ctx)` events", pydantic_ai(_pydantic_ai_iter)),
        (
            "(d) pydantic-ai `run_stream` + `stream_text(delta=True, debounce_by=None)`",
            pydantic_ai(_pydantic_ai_stream_text),
        ),
    ]


def _cpu(make: Callable[[], Coroutine[Any, Any, int]]) -> tuple[float, int]:
    gc.collect()
    started = time.process_time()
    out = asyncio.run(make())
    return time.process_time() - started, out


def per_delta(n: int, repeats: int) -> list[tuple[str, float, float]]:
    """(case, marginal µs per delta, fixed ms per run) for every case."""
    big_texts, small_texts = _deltas(n), _deltas(SMALL)
    cases = _cases()
    runs = [(make(big_texts), make(small_texts)) for _, make in cases]
    expected = sum(map(len, big_texts))
    for big, small in runs:  # warm up imports and caches; check every case sees the whole stream
        _cpu(small)
        _, chars = _cpu(big)
        assert chars in (expected, n), (chars, expected)  # (a) counts events, the rest characters
    big_times: list[list[float]] = [[] for _ in cases]
    small_times: list[list[float]] = [[] for _ in cases]
    for _ in range(repeats):
        for j, (big, small) in enumerate(runs):
            big_times[j].append(_cpu(big)[0])
            small_times[j].append(_cpu(small)[0])
    rows = []
    for j, (name, _) in enumerate(cases):
        t_big, t_small = statistics.median(big_times[j]), statistics.median(small_times[j])
        rows.append((name, (t_big - t_small) / (n - SMALL) * 1e6, t_small * 1e3))
    return rows


# --- section 2: concurrent tool calls ---------------------------------------------------------------------------


async def _slow(i: int) -> int:
    """Sleeps, then returns its argument.

    Args:
        i: Any number.
    """
    await asyncio.sleep(SLEEP)
    return i


def _slow_sync(i: int) -> int:
    """Sleeps (blocking), then returns its argument.

    Args:
        i: Any number.
    """
    time.sleep(SLEEP)
    return i


async def _tool_turn(tool_function: Callable[..., Any], n: int, concurrent: bool) -> float:
    from ai_widgets import ChatSession, SessionOptions, ToolCallState, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    slow = tool(tool_function)
    calls = [ScriptedToolCall(name=slow.name, arguments={"i": k}) for k in range(n)]
    transport = ScriptedTransport([ScriptedReply(tool_calls=calls), "done"])
    session = ChatSession(transport, tools=[slow], options=SessionOptions(concurrent_tools=concurrent))
    started = time.perf_counter()
    reply = await session.send("go")
    elapsed = time.perf_counter() - started
    assert reply.text == "done", reply.text
    assert [p.state for p in reply.tool_calls] == [ToolCallState.COMPLETED] * n, reply.tool_calls
    return elapsed


def concurrent_tools(repeats: int) -> list[tuple[str, int, float]]:
    """(case, N, median wall seconds of ``send``)."""
    cases = [
        ("async tool, concurrent (default)", _slow, 1, True),
        ("async tool, concurrent (default)", _slow, 10, True),
        ("sync tool (`time.sleep`), concurrent (default)", _slow_sync, 1, True),
        ("sync tool (`time.sleep`), concurrent (default)", _slow_sync, 10, True),
        ("async tool, `concurrent_tools=False`", _slow, 10, False),
    ]
    rows = []
    for name, function, n, concurrent in cases:
        walls = [asyncio.run(_tool_turn(function, n, concurrent)) for _ in range(repeats)]
        rows.append((name, n, statistics.median(walls)))
    return rows


# --- section 3: growth with the conversation and with the round ---------------------------------------------


class _GrowthTransport:
    """Answers a user message with one call of ``echo`` (or ``calls`` calls), and the calls' results with text.

    The events are built once; nothing of the request is kept, so no cost of the transport grows with the history.
    """

    def __init__(self, calls: int = 1) -> None:
        from ai_widgets.events import (
            ResponseCompleted,
            ResponseStarted,
            TextDelta,
            ToolCallArgumentsDone,
            ToolCallStarted,
            UsageUpdate,
        )
        from ai_widgets.messages import FinishReason

        self._calls = calls
        self._turn = 0
        self._tail = [ToolCallArgumentsDone, UsageUpdate(10, 5), ResponseCompleted(FinishReason.TOOL_CALLS)]
        self._started, self._call = ResponseStarted, ToolCallStarted
        self.text_events: list[Any] = [ResponseStarted(), *(TextDelta(t) for t in _deltas(20))]
        self.text_events += [UsageUpdate(10, 20), ResponseCompleted(FinishReason.STOP)]

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from ai_widgets.messages import Role

        if request.messages[-1].role is Role.ASSISTANT and request.messages[-1].tool_calls:
            for event in self.text_events:
                yield event
            return
        self._turn += 1
        done, usage, completed = self._tail
        yield self._started()
        for k in range(self._calls):
            call_id = f"call_{self._turn}_{k}"
            yield self._call(call_id, "echo", '{"text": "hi"}')
            yield done(call_id)
        yield usage
        yield completed


async def echo(text: str) -> str:
    """Returns its argument.

    Args:
        text: Any text.
    """
    return text


async def _timed_send(session: Any, text: str) -> float:
    """CPU seconds of one turn (the caller turns the collector off)."""
    started = time.process_time()
    reply = await session.send(text)
    elapsed = time.process_time() - started
    assert reply.status.value == "completed", reply
    assert reply.tool_calls[0].state.value == "completed", reply
    return elapsed


async def _turn_costs(turns: int, window: int) -> tuple[float, float]:
    """Median CPU seconds of a turn from turn ``SMALL`` on, and from turn ``turns`` on, timed in alternation (so
    the machine's drift falls on both alike)."""
    from ai_widgets import ChatSession, tool

    young = ChatSession(_GrowthTransport(), tools=[tool(echo)])
    old = ChatSession(_GrowthTransport(), tools=[tool(echo)])
    for k in range(SMALL - 1):
        await young.send(f"turn {k}")
    for k in range(turns - 1):
        await old.send(f"turn {k}")
    early, late = [], []
    gc.collect()
    gc.disable()
    try:
        for k in range(window):
            early.append(await _timed_send(young, f"timed {k}"))
            late.append(await _timed_send(old, f"timed {k}"))
    finally:
        gc.enable()
    return statistics.median(early), statistics.median(late)


def per_turn(turns: int, window: int, repeats: int) -> tuple[float, float]:
    """(median CPU µs of a turn at turn ``SMALL``, and at turn ``turns``) of one conversation each."""
    early, late = [], []
    for _ in range(repeats):
        young, old = asyncio.run(_turn_costs(turns, window))
        early.append(young)
        late.append(old)
    return statistics.median(early) * 1e6, statistics.median(late) * 1e6


async def _round_cost(calls: int) -> float:
    from ai_widgets import ChatSession, tool

    session = ChatSession(_GrowthTransport(calls), tools=[tool(echo)])
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        reply = await session.send("go")
        elapsed = time.process_time() - started
    finally:
        gc.enable()
    assert [p.state.value for p in reply.tool_calls] == ["completed"] * calls, reply
    return elapsed


def per_call(small: int, big: int, repeats: int) -> tuple[float, float]:
    """Median CPU µs per call of one ``send`` whose reply makes ``small``, and ``big``, calls in one round; timed
    in alternation, the small round run ``big // small`` times as often so both get the same time."""
    asyncio.run(_round_cost(small))  # warm up
    small_costs, big_costs = [], []
    for _ in range(repeats):
        small_costs += [asyncio.run(_round_cost(small)) / small for _ in range(big // small)]
        big_costs.append(asyncio.run(_round_cost(big)) / big)
    return statistics.median(small_costs) * 1e6, statistics.median(big_costs) * 1e6


def _exponent(t1: float, t2: float, n1: int, n2: int) -> float:
    return math.log(t2 / t1) / math.log(n2 / n1)


# --- report -----------------------------------------------------------------------------------------------------


def run(*, quick: bool = False) -> str:
    n, repeats = (5_000, 3) if quick else (20_000, 5)
    rows = per_delta(n, repeats)
    marginal = {name[:3]: us for name, us, _ in rows}
    floor = rows[0][1]
    lines = [
        f"## Kernel CPU per streamed text delta through the session ({n:,} deltas)",
        "",
        f"Marginal CPU, (T({n:,}) − T({SMALL})) / ({n:,} − {SMALL}), `time.process_time`, median of {repeats}; fresh "
        "event loop per run. Same pre-built 4-8 character deltas on every side.",
        "",
        "| consumer | µs / delta | fixed ms / run | vs floor |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {us:.2f} | {fixed:.2f} | {us / floor:.0f}× |" for name, us, fixed in rows]
    theirs = {"iter": rows[3][1], "stream_text": rows[4][1]}
    lines += ["", "| ours / theirs | vs `iter()` events | vs `stream_text` |", "|---|---:|---:|"]
    for key, label in (("(b)", "(b) no subscriber"), ("(c)", "(c) with subscriber")):
        ratios = [marginal[key] / theirs[k] for k in ("iter", "stream_text")]
        lines.append(f"| {label} | {ratios[0]:.3f} | {ratios[1]:.3f} |")
    worst = max(marginal["(b)"], marginal["(c)"]) / min(theirs.values())
    verdict = "within" if worst <= 0.25 else "OVER"
    lines += ["", f"Budget (ours ≤ ¼ of pydantic-ai's): worst ratio {worst:.3f}, **{verdict} budget**.", ""]

    tool_rows = concurrent_tools(1 if quick else 3)
    wall = {(name, n): seconds for name, n, seconds in tool_rows}
    lines += [
        f"## Concurrent tool calls (a tool that sleeps {SLEEP} s; wall time of `send`)",
        "",
        f"One reply with N calls, then a text reply; `perf_counter`, median of {1 if quick else 3}.",
        "",
        "| case | N | wall s | ÷ N=1 (async) |",
        "|---|---:|---:|---:|",
    ]
    one = wall[("async tool, concurrent (default)", 1)]
    lines += [f"| {name} | {n} | {seconds:.3f} | {seconds / one:.2f} |" for name, n, seconds in tool_rows]
    lines.append("")
    lines.append(f"Ratio N=10 / N=1, async concurrent: {wall[('async tool, concurrent (default)', 10)] / one:.2f}.")
    lines.append(
        "Sync tools run on ai_widgets' own tool thread pool (up to 64 threads), not the loop's default executor "
        "(CPUs + 4 threads), so N sync calls also take about as long as one."
    )
    lines.append("")

    turns, window = 2_000, 20
    early, late = per_turn(turns, window, 1 if quick else 3)
    small_round, big_round = 100, 1_000
    call_small, call_big = per_call(small_round, big_round, 3 if quick else 7)
    lines += [
        "## What the session costs as the conversation and the round grow",
        "",
        "CPU (`time.process_time`) of the session alone: a transport of pre-built events that keeps nothing, a tool "
        f"that returns at once, no widget, the collector off while timed. A turn is one call then a text reply; "
        f"each turn figure is the median of {window} turns.",
        "",
        "| measure | small | large | large ÷ small | growth exponent |",
        "|---|---:|---:|---:|---:|",
        f"| µs per turn, turn {SMALL} vs turn {turns:,} | {early:.0f} | {late:.0f} | {late / early:.2f} | "
        f"{_exponent(early, late, SMALL, turns):.3f} |",
        f"| µs per call, {small_round} vs {big_round:,} calls in one round | {call_small:.1f} | {call_big:.1f} | "
        f"{call_big / call_small:.2f} | {_exponent(call_small, call_big, small_round, big_round):.3f} |",
        "",
        "Budgets: a turn at turn 2,000 costs at most 1.2× a turn at turn 10; the cost per call is flat (at most 1.2×) "
        f"from {small_round} to {big_round:,} calls. Turn: **{'within' if late <= 1.2 * early else 'OVER'}**; "
        f"round: **{'within' if call_big <= 1.2 * call_small else 'OVER'}**.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
