"""Sync tools sent to a real Dask cluster (``SessionOptions(tool_executor=client.get_executor())``).

The tools are module-level functions so the worker process imports them by reference.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

import pytest

from ai_widgets import ChatSession, SessionOptions, ToolCallState, ToolInvocation, tool
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (the `dask` extra)")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executor() -> Iterator[Executor]:
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


def process_id() -> int:
    """The id of the process this runs in."""
    return os.getpid()


def crunch(steps: int, invocation: ToolInvocation) -> dict[str, Any]:
    """Reports progress where it runs and tells what its invocation looked like there."""
    for step in range(steps):
        invocation.progress.report((step + 1) / steps, f"step {step + 1}")
    return {
        "pid": os.getpid(),
        "tool_call_id": invocation.tool_call_id,
        "arguments": invocation.get_arguments(dict),
        "fraction": invocation.progress.fraction,
        "cancelled": invocation.cancelled.is_set(),
        "context": invocation.context,
    }


def make_session(executor: Executor, tools: list[Any], name: str, arguments: dict[str, Any]) -> ChatSession:
    return ChatSession(
        ScriptedTransport(
            [
                ScriptedReply(tool_calls=(ScriptedToolCall(name=name, arguments=arguments, id="c1"),)),
                ScriptedReply(text="ok"),
            ]
        ),
        tools=tools,
        options=SessionOptions(tool_executor=executor, include_detailed_errors=True),
        context={"not": "sent"},
    )


async def test_a_sync_tool_runs_in_a_worker_process(executor: Executor) -> None:
    session = make_session(executor, [tool(process_id)], "process_id", {})
    reply = await session.send("where?")
    (part,) = [p for m in session.messages for p in m.tool_calls]
    assert part.state is ToolCallState.COMPLETED, part.outcome
    assert isinstance(part.outcome.value, int)  # type: ignore[union-attr]
    assert part.outcome.value != os.getpid()  # type: ignore[union-attr]
    assert reply.text == "ok"


async def test_an_invocation_in_a_worker_is_detached_and_the_card_says_so(executor: Executor) -> None:
    session = make_session(executor, [tool(crunch)], "crunch", {"steps": 3})
    shown: list[tuple[float | None, str | None]] = []

    def observe(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.progress is not None:
            shown.append((change.part.progress.fraction, change.part.progress.message))

    session.subscribe(observe)
    await session.send("crunch")
    (part,) = [p for m in session.messages for p in m.tool_calls]
    assert part.state is ToolCallState.COMPLETED, part.outcome
    value = part.outcome.value  # type: ignore[union-attr]
    assert value["pid"] != os.getpid()
    assert value["tool_call_id"] == "c1"
    assert value["arguments"] == {"steps": 3}
    assert value["fraction"] == 1.0  # report() works there ...
    assert value["cancelled"] is False
    assert value["context"] is None  # the application's context stays in the kernel
    # ... but the card only ever shows an indeterminate bar saying where the call runs.
    assert shown
    assert {fraction for fraction, _ in shown} == {None}
    assert all("ClientExecutor" in (message or "") and "not shown" in (message or "") for _, message in shown)


async def test_an_unpicklable_handler_fails_that_call_naming_the_executor(executor: Executor) -> None:
    lock = threading.Lock()

    def locked() -> str:
        """Holds a lock, which cannot be pickled."""
        with lock:
            return "never"

    session = make_session(executor, [tool(locked)], "locked", {})
    reply = await session.send("go")
    (part,) = [p for m in session.messages for p in m.tool_calls]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert part.outcome.error is not None
    assert "ClientExecutor" in (part.outcome.error.message or "")
    assert "picklable" in (part.outcome.error.message or "")
    assert reply.text == "ok"  # the turn went on
