"""Random front-end actions against a ChatWidget: whatever a person (or a broken front end) sends, in any order, the
widget's invariants hold.

Hypothesis draws a sequence of actions (send, approve, approve with edited arguments, cancel, stop, bench_open,
bench_run, bench_close, sync; with ids that exist and ids that do not, and arguments that are valid, invalid, not
strict JSON or nested too deep) and plays them through the recording comm of the widget harness, as a front end
would. Turns and runs by hand go on the package's own loop thread (as they do outside a kernel); after each action
the test waits until everything has settled (every turn finished or paused on a person's decision, every tool thread
done), then checks:

- no exception escaped a comm handler, and no observer or loop callback logged an error;
- every error sent back is at most 1,000 characters;
- a turn at rest has every call terminal with an outcome, and ``busy`` is false when no turn runs;
- a bench action never changes the conversation;
- what a view built from the ops alone holds equals the kernel's ``history`` trait, and a view that opens now (its
  ``sync``) gets the same finished and live messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_widgets import MessageStatus, SessionOptions, ToolInvocation, ToolRisk, tool
from ai_widgets.messages import Message, dump_messages
from ai_widgets.session import ChatSession
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import private_loop
from tests.widget.widget_harness import Mirror, Wire, finished_messages, recording_comms

_threads = 0
_threads_lock = threading.Lock()


@tool(risk=ToolRisk.DESTRUCTIVE)
async def destroy(path: str) -> str:
    """Destroys a file (asks first)."""
    return f"destroyed {path}"


@tool
def slow_sync(n: int, invocation: ToolInvocation) -> int:
    """Works on a thread for a moment and never looks at a cancel: its thread outlives a cancelled call."""
    global _threads
    with _threads_lock:
        _threads += 1
    try:
        time.sleep(0.02)
        return n
    finally:
        with _threads_lock:
            _threads -= 1


def respond(request: ChatRequest) -> ScriptedReply:
    if request.tool_results():
        return ScriptedReply(text="Done: " + ", ".join(p.state.value for p in request.tool_results()))
    text = request.last_user_text
    calls = []
    if text in ("destroy", "both"):
        calls.append(ScriptedToolCall(name="destroy", arguments={"path": "a"}))
    if text in ("slow", "both"):
        calls.append(ScriptedToolCall(name="slow_sync", arguments={"n": 1}))
    return ScriptedReply(text=f"About {text}.", tool_calls=calls)


NAN = float("nan")


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


ARGUMENTS: list[Any] = [
    {"path": "b"},
    {"n": 2},
    {"n": NAN},
    {"n": float("inf")},
    {"n": "two"},
    {"path": "\ud800"},
    {},
    {"n": _deep(300)},
    {"path": "x", "extra": [1, 2]},
]

ids = st.integers(-1, 4)  # an index into what exists (modulo), or -1: an id that does not exist
actions = st.one_of(
    st.tuples(st.just("send"), st.sampled_from(["hello", "destroy", "slow", "both"])),
    st.tuples(st.just("approve"), ids, st.sampled_from(["approved", "approved_always", "rejected", "maybe"])),
    st.tuples(st.just("edit"), ids, st.sampled_from(ARGUMENTS)),
    st.tuples(st.just("cancel"), ids),
    st.tuples(st.just("stop")),
    st.tuples(st.just("bench_open"), ids),
    st.tuples(st.just("bench_run"), ids, st.sampled_from(ARGUMENTS)),
    st.tuples(st.just("bench_close"), ids),
    st.tuples(st.just("sync"), st.integers(0, 8), st.booleans()),
)


class ErrorLog(logging.Handler):
    """Every record at ERROR or above from the package or asyncio (an observer or a loop callback that failed)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def error_log() -> Iterator[ErrorLog]:
    handler = ErrorLog()
    loggers = [logging.getLogger("ai_widgets"), logging.getLogger("asyncio")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def sessions(chat: ChatWidget) -> list[ChatSession]:
    return [chat.session, *(entry.session for entry in chat._bench_host._entries.values())]


def at_rest(session: ChatSession) -> bool:
    """No turn, or a turn paused on a person's decision (every open call waits for it)."""
    if not session.busy:
        return True
    reply = session.messages[-1]
    open_calls = [p for p in reply.tool_calls if not p.state.terminal]
    return bool(open_calls) and all(p.state.value == "awaiting_approval" for p in open_calls)


def settle(chat: ChatWidget) -> None:
    """Waits until every turn and run has finished or waits for a person, and every tool thread has returned."""
    deadline = time.monotonic() + 5
    while True:
        quiet = _threads == 0 and all(at_rest(s) for s in sessions(chat))
        quiet = quiet and not any(
            entry.running and not entry.session.busy for entry in chat._bench_host._entries.values()
        )
        if quiet:
            # Twice through the loop: what a returning thread scheduled, then the flush timers after it.
            for _ in range(2):
                asyncio.run_coroutine_threadsafe(asyncio.sleep(0.005), private_loop()).result(timeout=5)
            if _threads == 0 and all(at_rest(s) for s in sessions(chat)):
                return
        if time.monotonic() > deadline:
            raise AssertionError("the widget did not settle")
        time.sleep(0.002)


def call_ids(chat: ChatWidget, *, waiting: bool = False, finished_only: bool = False) -> list[str]:
    found = []
    for session in sessions(chat):
        for message in session.messages:
            for part in message.tool_calls:
                if waiting and part.state.value != "awaiting_approval":
                    continue
                if finished_only and (session is not chat.session or not part.state.terminal):
                    continue
                found.append(part.tool_call_id)
    return found


def pick(candidates: list[str], which: int) -> str:
    return "ghost" if which < 0 or not candidates else candidates[which % len(candidates)]


def check(chat: ChatWidget, wire: Wire, mirror: Mirror, seen: int) -> int:
    comm_id = chat.comm.comm_id
    contents = wire.custom(comm_id)
    for content in contents[seen:]:
        mirror.apply(content)
    seen = len(contents)
    errors = [c["message"] for c in contents if c["type"] == "error"]
    assert all(len(e) <= 1000 for e in errors)
    # A turn at rest: when none runs, every call is terminal with an outcome and nothing is busy.
    for session in sessions(chat):
        if not session.busy:
            for message in session.messages:
                assert message.status is not MessageStatus.IN_PROGRESS
                for part in message.tool_calls:
                    assert part.state.terminal, part
                    assert part.outcome is not None, part
    assert chat._busy == chat.session.busy
    for entry in chat._bench_host._entries.values():
        assert entry.running == entry.session.busy
    # The view built from ops holds what the kernel holds, and a view that opens now gets the same.
    history = finished_messages(chat)
    assert mirror.finished == history
    fresh = Mirror(history)
    wire.comms[comm_id].handle({"type": "sync", "have": len(history), "last": history[-1]["id"] if history else None})
    settle(chat)  # a snapshot is sent from the running turn's thread
    contents = wire.custom(comm_id)
    for content in contents[seen:]:
        fresh.apply(content)
        mirror.apply(content)
    assert fresh.finished == history
    assert fresh.live == mirror.live
    return len(contents)


def play(plan: list[tuple[Any, ...]], error_log: ErrorLog) -> None:
    error_log.records.clear()
    with recording_comms() as wire:
        chat = ChatWidget(
            transport=ScriptedTransport(respond, slice_size=(3, 9)),
            tools=[destroy, slow_sync],
            options=SessionOptions(max_iterations=2),
            flush_interval=0.001,
        )
        front = wire.comms[chat.comm.comm_id]
        mirror = Mirror(finished_messages(chat))
        seen = 0
        for action in plan:
            before = dump_messages(chat.session.messages)
            bench_ids = [e["id"] for e in chat._bench]
            bench_calls = set(call_ids(chat)) - {p for m in chat.session.messages for p in _ids(m)}
            touches_chat = True

            def errors_sent() -> int:
                return sum(c["type"] == "error" for c in wire.custom(chat.comm.comm_id))

            errors_before = errors_sent()
            match action:
                case ("send", text):
                    front.handle({"type": "send", "text": text})
                case ("approve", which, decision):
                    target = pick(call_ids(chat, waiting=True), which)
                    touches_chat = target not in bench_calls
                    front.handle({"type": "approve", "tool_call_id": target, "decision": decision})
                case ("edit", which, arguments):
                    target = pick(call_ids(chat, waiting=True), which)
                    touches_chat = target not in bench_calls and _strict(arguments)
                    message = {"type": "approve", "tool_call_id": target, "decision": "approved"}
                    front.handle({**message, "arguments": arguments})
                    if not _strict(arguments):  # refused: the call (if any) keeps waiting
                        assert errors_sent() > errors_before
                        assert target not in call_ids(chat) or target in call_ids(chat, waiting=True)
                case ("cancel", which):
                    target = pick(call_ids(chat), which)
                    touches_chat = target not in bench_calls
                    front.handle({"type": "cancel", "tool_call_id": target})
                case ("stop",):
                    front.handle({"type": "stop"})
                case ("bench_open", which):
                    touches_chat = False
                    front.handle({"type": "bench_open", "tool_call_id": pick(call_ids(chat), which)})
                case ("bench_run", which, arguments):
                    touches_chat = False
                    shown_before = list(chat._bench)
                    front.handle({"type": "bench_run", "id": pick(bench_ids, which), "arguments": arguments})
                    if not _strict(arguments):  # refused with an error, and the bench is as it was
                        assert errors_sent() > errors_before
                        assert chat._bench == shown_before
                case ("bench_close", which):
                    touches_chat = False
                    front.handle({"type": "bench_close", "id": pick(bench_ids, which)})
                case ("sync", have, known):
                    history = finished_messages(chat)
                    last = history[have - 1]["id"] if known and 0 < have <= len(history) else "ghost"
                    front.handle({"type": "sync", "have": have, "last": last})
            settle(chat)
            if not touches_chat:
                assert dump_messages(chat.session.messages) == before, action
            seen = check(chat, wire, mirror, seen)
        # Whatever was left waiting ends, and the chat takes the next message.
        chat.session.stop()
        for entry in list(chat._bench_host._entries.values()):
            entry.session.stop()
        settle(chat)
        assert not chat._busy
        assert not any(s.busy for s in sessions(chat))
        seen = check(chat, wire, mirror, seen)
        reply = chat.send("hello")
        assert reply is not None
        assert reply.result(timeout=5).text == "About hello."
        settle(chat)
        check(chat, wire, mirror, seen)
        chat.close()
    assert not error_log.records, [r.getMessage() for r in error_log.records]


def _strict(arguments: Any) -> bool:
    """Whether ``arguments`` are strict JSON (no NaN or infinity)."""
    try:
        json.dumps(arguments, allow_nan=False)
    except ValueError:
        return False
    return True


def _ids(message: Message) -> list[str]:
    return [p.tool_call_id for p in message.tool_calls]


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(plan=st.lists(actions, min_size=1, max_size=10))
def test_random_front_end_actions_keep_the_widget_invariants(plan: list[tuple[Any, ...]], error_log: ErrorLog) -> None:
    play(plan, error_log)


def test_a_person_who_approves_runs_by_hand_while_the_chat_waits(error_log: ErrorLog) -> None:
    """One sequence worth keeping: a bench run asks while the chat's own call waits; both are decided apart."""
    play(
        [
            ("send", "destroy"),
            ("bench_open", -1),
            ("send", "hello"),  # refused: a turn waits for a decision
            ("approve", 0, "approved"),
            ("bench_open", 0),
            ("bench_run", 0, {"path": "b"}),
            ("send", "both"),
            ("approve", 0, "rejected"),
            ("approve", 0, "approved"),
            ("cancel", 0),
            ("bench_close", 0),
            ("sync", 3, True),
        ],
        error_log,
    )
