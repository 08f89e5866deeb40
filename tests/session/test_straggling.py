"""A sync tool's thread after its call ended (cancelled, stopped, timed out): nothing can stop a thread, so the
session says the call is stopping (``ToolCallStraggling``) and, when the thread ends, what it returned or raised,
which is discarded. The call's record (state, outcome) is the one it ended with and never changes; the widget shows
both on the card, also once the call's message is finished, and keeps them in the state a new view or a saved
notebook gets."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
import time
from typing import Any

import pytest

from ai_widgets import ChatSession, MessageStatus, SessionOptions, ToolInvocation, ToolOutcome, tool
from ai_widgets._threads import ToolThreads
from ai_widgets.changes import (
    LATE_PREVIEW_CHARS,
    MessageFinished,
    SessionChange,
    ToolCallStraggling,
    ToolCallUpdated,
)
from ai_widgets.messages import Message, ToolCallState, dump_messages
from ai_widgets.session._round import late_result
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.helpers import wait_for
from tests.widget.widget_harness import Mirror, Wire, finished_messages

# --- helpers ------------------------------------------------------------------------------------------------------


class Log:
    """The changes about tool calls, in order, as (kind, call id, detail)."""

    def __init__(self, session: ChatSession) -> None:
        self.entries: list[tuple[str, str, Any]] = []
        session.subscribe(self.observe)

    def observe(self, change: SessionChange) -> None:
        match change:
            case ToolCallUpdated(part=part):
                self.entries.append(("state", part.tool_call_id, part.state.value))
            case ToolCallStraggling(part=part, phase=phase, preview=preview):
                self.entries.append((phase, part.tool_call_id, preview))
            case MessageFinished(message=message):
                self.entries.append(("finished", message.id, message.status.value))
            case _:
                pass

    def about(self, call_id: str) -> list[tuple[str, Any]]:
        return [(kind, detail) for kind, cid, detail in self.entries if cid == call_id]

    def kinds(self) -> list[str]:
        return [kind for kind, _, _ in self.entries]

    def straggling(self) -> list[tuple[str, str, Any]]:
        return [e for e in self.entries if e[0] in ("stopping", "returned", "raised")]


class Blocking:
    """A sync tool that blocks until released, and records whether it saw ``invocation.cancelled``."""

    def __init__(self, result: Any = None, error: BaseException | None = None) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.saw_cancel: list[bool] = []
        self.result = {"rows": 12, "note": "fresh"} if result is None else result
        self.error = error

        def block(invocation: ToolInvocation) -> Any:
            """Blocks until released."""
            self.started.set()
            self.release.wait(10)
            self.saw_cancel.append(invocation.cancelled.is_set())
            if self.error is not None:
                raise self.error
            return self.result

        self.tool = tool(name="block")(block)


def script(*calls: ScriptedToolCall, then: str = "Done.") -> ScriptedTransport:
    return ScriptedTransport([ScriptedReply(tool_calls=list(calls)), then])


def running(session: ChatSession, call_id: str) -> bool:
    found = session.tool_call(call_id)
    return found is not None and found.state is ToolCallState.RUNNING


def record(message: Message) -> str:
    return dump_messages([message])


# --- the session --------------------------------------------------------------------------------------------------


async def test_cancel_one_sync_call_says_it_is_stopping_then_what_it_returned() -> None:
    blocking = Blocking()

    @tool
    async def quick() -> str:
        """Fast."""
        await asyncio.sleep(0.05)
        return "quick"

    threads = ToolThreads()
    session = ChatSession(
        script(
            ScriptedToolCall(name="block", arguments={}, id="b"), ScriptedToolCall(name="quick", arguments={}, id="q")
        ),
        tools=[blocking.tool, quick],
        options=SessionOptions(tool_executor=threads),
    )
    log = Log(session)
    turn = asyncio.create_task(session.send("go"))
    await wait_for(lambda: running(session, "b") and blocking.started.is_set())
    session.cancel("b", "too slow")
    reply = await turn

    # The sibling and the turn went on; the call ended cancelled, its outcome saying why.
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "Done."
    states = {p.tool_call_id: p.state for p in reply.tool_calls}
    assert states == {"b": ToolCallState.CANCELLED, "q": ToolCallState.COMPLETED}
    part = reply.tool_call("b")
    assert part is not None
    assert part.outcome is not None
    outcome = part.outcome
    assert "too slow" in (outcome.message or "")
    assert "discarded" in (outcome.message or "")
    # Stopping: told after the call ended, before the turn did; its thread is listed as stuck.
    assert log.about("b")[-3:] == [("state", "running"), ("state", "cancelled"), ("stopping", None)]
    assert log.kinds().index("stopping") < log.kinds().index("finished")
    assert [s.label for s in threads.stuck()] == ["block (b)"]
    before = record(reply)

    blocking.release.set()
    await wait_for(lambda: len(log.straggling()) == 2)
    assert blocking.saw_cancel == [True]  # the tool could see it was cancelled
    assert log.straggling() == [
        ("stopping", "b", None),
        ("returned", "b", '{"rows":12,"note":"fresh"}'),
    ]
    assert log.kinds()[-1] == "returned"  # after the turn had ended
    # The record did not change: the late result was discarded.
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is outcome
    assert record(reply) == before
    assert "fresh" not in before
    await wait_for(lambda: not threads.stuck())
    # The session goes on as usual; the model never saw the late result.
    session.transport = ScriptedTransport(["again"])  # type: ignore[misc]
    assert (await session.send("next")).text == "again"


async def test_a_started_call_on_another_executor_is_followed_too_and_a_queued_one_is_cancelled() -> None:
    """A thread pool cannot cancel a started call: its card says it is stopping until it returns. A call still in
    the executor's queue is cancelled there, so it never runs and nothing follows it."""
    blocking = Blocking(result="late")
    ran_queued: list[bool] = []

    @tool
    def queued() -> str:
        """Waits its turn in the pool."""
        ran_queued.append(True)
        return "ran"

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        session = ChatSession(
            script(
                ScriptedToolCall(name="block", arguments={}, id="b"),
                ScriptedToolCall(name="queued", arguments={}, id="q"),
            ),
            tools=[blocking.tool, queued],
            options=SessionOptions(tool_executor=pool),
        )
        log = Log(session)
        turn = asyncio.create_task(session.send("go"))
        await wait_for(lambda: running(session, "b") and running(session, "q") and blocking.started.is_set())
        session.cancel("q")
        session.cancel("b")
        reply = await turn
        assert {p.tool_call_id: p.state for p in reply.tool_calls} == {
            "b": ToolCallState.CANCELLED,
            "q": ToolCallState.CANCELLED,
        }
        assert log.straggling() == [("stopping", "b", None)]
        blocking.release.set()
        await wait_for(lambda: len(log.straggling()) == 2)
        assert log.straggling()[-1] == ("returned", "b", "late")
        assert ran_queued == []
    finally:
        pool.shutdown(wait=True)


async def test_stop_mid_sync_call_says_it_is_stopping_then_what_it_returned() -> None:
    blocking = Blocking(result="the answer")
    session = ChatSession(script(ScriptedToolCall(name="block", arguments={}, id="b")), tools=[blocking.tool])
    log = Log(session)
    turn = asyncio.create_task(session.send("go"))
    await wait_for(lambda: running(session, "b") and blocking.started.is_set())
    assert session.stop()
    reply = await turn
    assert reply.status is MessageStatus.CANCELLED
    part = reply.tool_call("b")
    assert part is not None
    assert part.outcome is not None
    assert part.state is ToolCallState.CANCELLED
    assert "Stopped by the person" in (part.outcome.message or "")
    before = record(reply)
    assert log.about("b")[-1] == ("stopping", None)
    assert log.kinds()[-2:] == ["stopping", "finished"]

    blocking.release.set()
    await wait_for(lambda: log.kinds()[-1] == "returned")
    assert log.about("b")[-1] == ("returned", "the answer")
    assert blocking.saw_cancel == [True]
    assert part.state is ToolCallState.CANCELLED
    assert record(reply) == before


async def test_a_timed_out_sync_call_fails_and_says_the_same() -> None:
    blocking = Blocking(result=[1, 2, 3])
    session = ChatSession(
        script(ScriptedToolCall(name="block", arguments={}, id="b")),
        tools=[blocking.tool],
        options=SessionOptions(tool_timeout=0.1),
    )
    log = Log(session)
    reply = await session.send("go")
    part = reply.tool_call("b")
    assert part is not None
    assert part.outcome is not None
    assert part.state is ToolCallState.FAILED
    assert "did not finish within 0.1 seconds" in part.outcome.model_content()
    assert log.about("b")[-3:] == [("state", "running"), ("state", "failed"), ("stopping", None)]
    before = record(reply)

    blocking.release.set()
    await wait_for(lambda: log.kinds()[-1] == "returned")
    assert log.about("b")[-1] == ("returned", "[1,2,3]")
    assert blocking.saw_cancel == [True]
    assert part.state is ToolCallState.FAILED
    assert record(reply) == before


async def test_a_thread_that_raises_after_the_stop_says_so_with_secrets_redacted() -> None:
    blocking = Blocking(error=ValueError("boom: key " + "sk-" + "proj-abcdefghijklmnop1234 \ud800 leaked"))
    session = ChatSession(script(ScriptedToolCall(name="block", arguments={}, id="b")), tools=[blocking.tool])
    log = Log(session)
    turn = asyncio.create_task(session.send("go"))
    await wait_for(lambda: running(session, "b") and blocking.started.is_set())
    session.cancel("b")
    reply = await turn
    before = record(reply)
    blocking.release.set()
    await wait_for(lambda: log.kinds()[-1] in ("returned", "raised"))
    kind, preview = log.about("b")[-1]
    assert kind == "raised"
    assert preview == "ValueError: boom: key [redacted] \ufffd leaked"
    assert record(reply) == before


async def test_a_call_that_ends_on_its_own_or_an_async_one_is_never_straggling() -> None:
    @tool
    def fast() -> str:
        """Returns at once."""
        return "fast"

    @tool
    async def slow_async() -> str:
        """Cancelled mid-way: an async tool stops where it awaits."""
        await asyncio.sleep(5)
        return "late"

    session = ChatSession(
        script(
            ScriptedToolCall(name="fast", arguments={}, id="f"),
            ScriptedToolCall(name="slow_async", arguments={}, id="a"),
        ),
        tools=[fast, slow_async],
    )
    log = Log(session)
    turn = asyncio.create_task(session.send("go"))
    await wait_for(lambda: running(session, "a"))
    session.cancel("a")
    reply = await turn
    await asyncio.sleep(0.05)
    assert {p.tool_call_id: p.state for p in reply.tool_calls} == {
        "f": ToolCallState.COMPLETED,
        "a": ToolCallState.CANCELLED,
    }
    assert log.straggling() == []


def test_a_thread_that_returns_after_its_loop_closed_is_harmless(caplog: pytest.LogCaptureFixture) -> None:
    blocking = Blocking()
    threads = ToolThreads()
    session = ChatSession(
        script(ScriptedToolCall(name="block", arguments={}, id="b")),
        tools=[blocking.tool],
        options=SessionOptions(tool_executor=threads),
    )
    log = Log(session)

    async def stopped_turn() -> Message:
        turn = asyncio.create_task(session.send("go"))
        await wait_for(lambda: running(session, "b") and blocking.started.is_set())
        session.stop()
        return await turn

    loop = asyncio.new_event_loop()
    try:
        reply = loop.run_until_complete(stopped_turn())
    finally:
        loop.close()
    assert reply.status is MessageStatus.CANCELLED
    with caplog.at_level(logging.DEBUG):
        blocking.release.set()
        deadline = time.monotonic() + 2
        while threads.stuck() and time.monotonic() < deadline:  # listed until its future's callbacks have run
            time.sleep(0.01)
    assert not threads.stuck()
    assert blocking.saw_cancel == [True]
    assert log.straggling() == [("stopping", "b", None)]  # nobody is left to tell
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


# --- the preview ----------------------------------------------------------------------------------------------------


def _done(result: Any = None, error: BaseException | None = None) -> concurrent.futures.Future[Any]:
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
    return future


def _safe(preview: str) -> None:
    assert len(preview) <= LATE_PREVIEW_CHARS
    preview.encode("utf-8")  # no lone surrogates
    json.dumps(preview, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ({"a": [1, 2.5, None, True]}, '{"a":[1,2.5,null,true]}'),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ({"k\udfff": "v\ud800"}, '{"k\ufffd":"v\ufffd"}'),
        (ToolOutcome.success(text="shown"), "shown"),
        (ToolOutcome.success({"n": 1}), '{"n":1}'),
        (ToolOutcome.failure("it broke"), "a failure: it broke"),
        ("Bearer abcdefghijklmnopqrstuvwxyz", "Bearer [redacted]"),
        (b"\xff\xfe", "__4="),  # bytes that are not UTF-8: base64, as a result would be
    ],
)
def test_the_preview_of_what_a_thread_returned(value: Any, expected: str) -> None:
    kind, preview = late_result(_done(value))
    assert kind == "returned"
    assert preview == expected
    _safe(preview)


def test_the_preview_of_huge_deep_or_cyclic_values_is_short_safe_and_quick() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    huge_text = "x" * 5_000_000 + "\ud800"
    huge_list = list(range(2_000_000))
    started = time.perf_counter()
    previews = {
        name: late_result(_done(value))[1]
        for name, value in [
            ("text", huge_text),
            ("list", huge_list),
            ("dict", {"blob": "y" * 3_000_000, "more": huge_list[:10]}),
            ("cycle", cycle),
            ("deep", deep),
            ("number", 10**5000),
        ]
    }
    assert time.perf_counter() - started < 10
    for preview in previews.values():
        _safe(preview)
    assert previews["text"] == "x" * (LATE_PREVIEW_CHARS - 1) + "…"
    assert previews["list"].startswith("[0,1,2,3,")
    assert previews["list"].endswith("…")
    assert previews["dict"].startswith('{"blob":"yyyy')
    assert previews["dict"].endswith("…")
    for name in ("cycle", "deep", "number"):
        assert previews[name].startswith("(a value that cannot be shown"), previews[name]


def test_the_preview_of_what_a_thread_raised() -> None:
    class Unreadable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert late_result(_done(error=KeyError("k"))) == ("raised", "KeyError: 'k'")
    assert late_result(_done(error=RuntimeError())) == ("raised", "RuntimeError")
    assert late_result(_done(error=Unreadable())) == (
        "raised",
        "test_the_preview_of_what_a_thread_raised.<locals>.Unreadable: (its text could not be read)",
    )
    kind, preview = late_result(_done(error=ValueError("e" * 10_000 + "\udc00")))
    assert kind == "raised"
    _safe(preview)
    assert preview.endswith("…")


# --- the widget -----------------------------------------------------------------------------------------------------


def _call_ops(wire: Wire, widget: Any, call_id: str) -> list[dict[str, Any]]:
    """The fields of every ``call`` op for ``call_id``, and where each ``finish`` op came, in order."""
    shown: list[dict[str, Any]] = []
    for content in wire.custom(widget.comm.comm_id):
        for op in content.get("ops", ()):
            if op[0] == "call" and op[2] == call_id:
                shown.append(op[3])
            elif op[0] == "finish" and op[2]["role"] == "assistant":
                shown.append({"finish": op[2]["status"]})
    return shown


def _card(messages: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return next(p for m in messages for p in m["parts"] if p.get("tool_call_id") == call_id)


async def test_the_widget_shows_a_call_stopping_then_what_it_returned_also_once_finished(wire: Wire) -> None:
    blocking = Blocking(result={"rows": 12})
    keep_going = threading.Event()

    @tool
    def sibling() -> str:
        """Keeps the turn going until released."""
        keep_going.wait(10)
        return "sibling"

    chat = ChatWidget(
        transport=script(
            ScriptedToolCall(name="block", arguments={}, id="b"), ScriptedToolCall(name="sibling", arguments={}, id="s")
        ),
        tools=[blocking.tool, sibling],
        flush_interval=0.001,
    )
    front = wire.comms[chat.comm.comm_id]
    mirror = Mirror(finished_messages(chat))
    turn = asyncio.create_task(chat.ask("go"))
    await wait_for(lambda: running(chat.session, "b") and blocking.started.is_set() and running(chat.session, "s"))
    front.handle({"type": "cancel", "tool_call_id": "b"})
    await wait_for(lambda: any(op.get("stopping") for op in _call_ops(wire, chat, "b")))

    # A view that opens now, mid-turn, gets the call as stopping.
    front.handle({"type": "sync", "have": 0})
    snapshot = wire.custom(chat.comm.comm_id)[-1]
    assert snapshot["type"] == "snapshot"
    live_card = _card(snapshot["live"], "b")
    assert live_card["state"] == "cancelled"
    assert live_card["stopping"] is True
    assert live_card["late"] is None

    keep_going.set()
    reply = await turn
    assert reply.status is MessageStatus.COMPLETED
    part = reply.tool_call("b")
    assert part is not None
    assert part.outcome is not None
    outcome_before = part.outcome.model_dump(exclude={"error"})
    # The finished message is built from the record (no thread fields): they follow it at once.
    ops = _call_ops(wire, chat, "b")
    finish_at = ops.index({"finish": "completed"})
    assert ops[finish_at + 1] == {"stopping": True, "late": None}
    assert _card(finished_messages(chat), "b")["stopping"] is True  # kept in the widget's history too

    blocking.release.set()
    await wait_for(lambda: _call_ops(wire, chat, "b")[-1].get("late") is not None)
    chat._patches.flush()
    late = {"kind": "returned", "preview": '{"rows":12}'}
    assert _call_ops(wire, chat, "b")[-1] == {"stopping": False, "late": late}

    # A view that kept up, a new view (the widget's history, as a new page or a saved notebook gets it) and a
    # snapshot all show it; the call's record is the one it ended with.
    for content in wire.custom(chat.comm.comm_id):
        mirror.apply(content)
    front.handle({"type": "sync", "have": 0})
    snapshot = wire.custom(chat.comm.comm_id)[-1]
    for shown in (_card(mirror.finished, "b"), _card(finished_messages(chat), "b"), _card(snapshot["finished"], "b")):
        assert shown["state"] == "cancelled"
        assert shown["stopping"] is False
        assert shown["late"] == late
        assert {k: shown["outcome"][k] for k in ("status", "message")} == {
            "status": "failure",
            "message": outcome_before["message"],
        }
    assert "rows" not in dump_messages(chat.session.messages)
    assert part.state is ToolCallState.CANCELLED
    # The sibling's card has none of it.
    assert "late" not in _card(finished_messages(chat), "s")
    chat.close()


async def test_a_view_that_stopped_mirroring_still_shows_what_the_thread_did(wire: Wire) -> None:
    """The turn shown in the asking cell stops mirroring when its turn ends; a call it shows stopping is still
    followed until its thread returns, and nothing else is."""
    from ai_widgets.widget._turn_view import TurnView

    blocking = Blocking(result="late")
    session = ChatSession(
        ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="block", arguments={}, id="b")]), "x"]),
        tools=[blocking.tool],
    )
    subscribers = len(session._subscribers)
    view = TurnView(session, start=0, flush_interval=0.001)
    turn = asyncio.create_task(session.send("go"))
    await wait_for(lambda: running(session, "b") and blocking.started.is_set())
    session.stop()
    await turn
    assert _card(finished_messages(view), "b")["stopping"] is True

    # Another turn while the thread still runs: not this view's.
    await asyncio.sleep(0.02)
    sent = len(wire.custom(view.comm.comm_id))
    session.transport = ScriptedTransport(["next"])  # type: ignore[misc]
    await session.send("another turn")
    await asyncio.sleep(0.02)
    assert len(wire.custom(view.comm.comm_id)) == sent
    assert len(finished_messages(view)) == 2

    blocking.release.set()
    await wait_for(lambda: _card(finished_messages(view), "b").get("late") is not None)
    assert _card(finished_messages(view), "b")["late"] == {"kind": "returned", "preview": "late"}
    await wait_for(lambda: _call_ops(wire, view, "b")[-1].get("late") is not None)
    assert len(session._subscribers) == subscribers  # it has let go of the session
    view.close()
