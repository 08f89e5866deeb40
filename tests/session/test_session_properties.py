"""Random turns with a random person: whatever the stream and whatever is clicked when, the invariants hold.

Hypothesis draws turns (text, 0-3 tool calls of quick, slow, sync, raising and approval-needing tools, in one or
two rounds) and a driver that approves, declines, edits, cancels and stops at random moments. After every turn:
the reply has a terminal status, every call is terminal with an outcome, ``busy`` is false, the dump is
UTF-8-encodable and round-trips, and the next ``send()`` works.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ai_widgets import (
    ApprovalError,
    CancelError,
    ChatSession,
    MessageStatus,
    SessionOptions,
    ToolCallState,
    ToolInvocation,
    ToolRisk,
    UnknownToolCallError,
    tool,
)
from ai_widgets.events import (
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, dump_messages, load_messages
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for


@tool
async def quick(n: int = 0) -> int:
    """Answers at once."""
    return n + 1


@tool
async def slow() -> str:
    """Takes a moment."""
    await asyncio.sleep(0.02)
    return "slow"


@tool
def sync_work(invocation: ToolInvocation) -> str:
    """Works on a thread, checking for a cancel."""
    deadline = time.monotonic() + 0.03
    while time.monotonic() < deadline:
        if invocation.cancelled.is_set():
            return "stopped early"
        time.sleep(0.002)
    return "worked"


@tool
def raising() -> str:
    """Always fails."""
    raise RuntimeError("boom \udcff")


@tool(risk=ToolRisk.DESTRUCTIVE)
async def guarded(path: str = "x") -> str:
    """Needs a person's approval."""
    await asyncio.sleep(0.005)
    return f"did {path}"


TOOLS = [quick, slow, sync_work, raising, guarded]
NAMES = [t.name for t in TOOLS]

call_names = st.lists(st.sampled_from(NAMES), max_size=3)
turn_plans = st.tuples(st.text(max_size=12), call_names, call_names)  # text, first round, second round


def transport_for(plans: list[tuple[str, list[str], list[str]]]) -> ScriptedTransport:
    """A model that, per turn, writes its text, calls the first round, then the second, then answers."""
    state = {"turn": -1}

    def respond(request: ChatRequest) -> ScriptedReply:
        rounds = request.reply.usage.requests - 1 if request.reply is not None else 0
        if rounds == 0:
            state["turn"] += 1
        text, first, second = plans[state["turn"] % len(plans)]
        names = [first, second, []][min(rounds, 2)]
        calls = [ScriptedToolCall(name=name, arguments={"path": "p"} if name == "guarded" else {}) for name in names]
        return ScriptedReply(text=text or "ok", tool_calls=calls, status="Thinking…")

    return ScriptedTransport(respond)


async def drive(session: ChatSession, rng: random.Random, done: asyncio.Event) -> None:
    """A person at the keyboard: clicks whatever is there, at random moments, until the turn ends."""
    actions = 0
    while not done.is_set():
        await asyncio.sleep(rng.choice([0, 0, 0.001, 0.005, 0.02]))
        actions += 1
        reply = session.messages[-1] if session.messages else None
        calls = [] if reply is None else [p for p in reply.tool_calls if not p.state.terminal]
        waiting = [p for p in calls if p.state is ToolCallState.AWAITING_APPROVAL]
        choice = rng.choice(["approve", "always", "reject", "edit", "cancel", "stop", "nothing", "bogus"])
        if actions > 60:  # make sure every turn ends
            choice = "approve"
        try:
            match choice:
                case "approve" | "always" | "reject" | "edit" if waiting:
                    target = rng.choice(waiting).tool_call_id
                    if choice == "edit":
                        session.approve(target, "approved", arguments={"path": rng.choice(["e", "\ud800", 5])})
                    else:
                        session.approve(
                            target, {"always": "approved_always", "reject": "rejected"}.get(choice, "approved")
                        )
                case "cancel" if calls:
                    session.cancel(rng.choice(calls).tool_call_id, rng.choice([None, "no"]))
                case "stop" if rng.random() < 0.3:
                    session.stop()
                case "bogus":
                    session.approve("nope", "approved")
        except (ApprovalError, CancelError, UnknownToolCallError):
            pass  # a click on something not waiting: refused, nothing changes


def check(session: ChatSession) -> None:
    assert not session.busy
    text = dump_messages(session.messages)
    text.encode("utf-8")
    assert dump_messages(load_messages(text)) == text
    for message in session.messages:
        assert message.status is not MessageStatus.IN_PROGRESS
        for part in message.tool_calls:
            assert part.state.terminal, part
            assert part.outcome is not None


async def play(plans: list[tuple[str, list[str], list[str]]], seed: int, concurrent: bool) -> None:
    rng = random.Random(seed)
    session = ChatSession(
        transport_for(plans),
        tools=TOOLS,
        options=SessionOptions(max_iterations=2, max_consecutive_errors=2, concurrent_tools=concurrent),
    )
    for index in range(len(plans)):
        done = asyncio.Event()
        driver = asyncio.create_task(drive(session, rng, done))
        reply = await session.send(f"turn {index}")
        done.set()
        await driver
        assert reply.status is not MessageStatus.IN_PROGRESS
        check(session)
    session.transport = ScriptedTransport(["still fine"])
    assert (await session.send("and now?")).text == "still fine"
    check(session)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(turn_plans, min_size=1, max_size=3), seed=st.integers(0, 2**16), concurrent=st.booleans())
def test_random_turns_and_clicks_keep_the_invariants(
    plans: list[tuple[str, list[str], list[str]]], seed: int, concurrent: bool
) -> None:
    asyncio.run(play(plans, seed, concurrent))


def test_a_click_from_another_thread_mid_turn_is_safe() -> None:
    """Approvals and stops arrive from the kernel's comm thread, not the loop's."""

    async def main() -> None:
        session = ChatSession(transport_for([("", ["guarded", "guarded", "slow"], [])]), tools=TOOLS)
        task = asyncio.create_task(session.send("go"))
        await wait_for(lambda: len(session.pending_approvals) >= 2)
        ids = [p.tool_call_id for p in session.pending_approvals]
        results: list[Any] = []

        def click(call_id: str) -> None:
            try:
                session.approve(call_id, "approved")
                results.append("ok")
            except ApprovalError as exc:
                results.append(exc)

        threads = [threading.Thread(target=click, args=(ids[i % 2],)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results.count("ok") == 2  # each call decided exactly once
        await task
        check(session)

    asyncio.run(main())


# --- the text fast path -----------------------------------------------------------------------------------------------


class _GeneralText(TextDelta):
    """A ``TextDelta`` the session's fast path does not take (it checks the exact type): the general path's result."""

    __slots__ = ()


class _GeneralReasoning(ReasoningDelta):
    """A ``ReasoningDelta`` the session's fast path does not take: the general path's result."""

    __slots__ = ()


class _EventsTransport:
    def __init__(self, events: list[StreamEvent]) -> None:
        self.events = events

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        for event in self.events:
            yield event


_TEXTS = st.sampled_from(["", "plain", " ", "é", "\ud83d", "\ude00", "\ud83d\ude00", "a\ud83d", "\n", 7, None])
_STREAM_EVENTS = st.lists(
    st.one_of(
        st.tuples(st.just("text"), _TEXTS),
        st.tuples(st.just("reasoning"), _TEXTS),
        st.tuples(st.just("status"), st.sampled_from(["", "Thinking…"])),
        st.tuples(st.just("call"), st.sampled_from(["c1", "c2"])),
        st.tuples(st.just("usage"), st.integers(0, 5)),
    ),
    max_size=25,
)


def _events(
    drawn: list[tuple[str, Any]], text_type: type[TextDelta], reasoning_type: type[ReasoningDelta] = ReasoningDelta
) -> list[StreamEvent]:
    events: list[StreamEvent] = [ResponseStarted()]
    for kind, value in drawn:
        match kind:
            case "text":
                events.append(text_type(value))
            case "reasoning":
                events.append(reasoning_type(value))
            case "status":
                events.append(StatusUpdate(value))
            case "call":
                events += [ToolCallStarted(value, "quick"), ToolCallDelta(value, '{"n": 1}')]
            case "usage":
                events.append(UsageUpdate(input_tokens=value, output_tokens=value))
    return [*events, ResponseCompleted(FinishReason.STOP)]


async def _run(events: list[StreamEvent]) -> tuple[list[Any], Any]:
    session = ChatSession(_EventsTransport(events), options=SessionOptions(execute_tools=False))
    seen: list[Any] = []

    def observe(change: Any) -> None:
        text = getattr(change, "text", None)
        part = getattr(change, "part", None)
        seen.append((type(change).__name__, getattr(change, "index", None), text, type(part).__name__))

    session.subscribe(observe)
    reply = await session.send("go")
    dump = [{k: v for k, v in part.to_dict().items() if not k.endswith("_at")} for part in reply.parts]
    return seen, (reply.status, reply.error, reply.status_text, dump)


@settings(max_examples=300, deadline=None)
@given(drawn=_STREAM_EVENTS)
@example(drawn=[("text", "plain"), ("status", "Thinking…"), ("text", "plain")])  # a status to clear mid-text
@example(drawn=[("text", "a\ud83d"), ("text", "\ude00"), ("text", "b")])  # a pair split across deltas
@example(drawn=[("text", "a"), ("call", "c1"), ("text", "b"), ("reasoning", "r"), ("text", "c")])
@example(drawn=[("reasoning", "r"), ("text", "a"), ("reasoning", "s"), ("text", "b"), ("reasoning", "t")])  # switches
def test_the_text_fast_path_changes_nothing_but_the_cost(drawn: list[tuple[str, Any]]) -> None:
    # The same stream, its text and reasoning deltas taken by the fast path and by the general one: the same changes,
    # in the same order, and the same reply (odd text, surrogates split across deltas, statuses, a switch between
    # text and reasoning at every delta, parts of every kind between).
    fast = asyncio.run(_run(_events(drawn, TextDelta)))
    general = asyncio.run(_run(_events(drawn, _GeneralText, _GeneralReasoning)))
    assert fast == general
