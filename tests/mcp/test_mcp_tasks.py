"""MCP tools that require task execution run as tasks (2025-11-25): against ``tests/mcp/servers/task_server.py``
(JSON-RPC by hand, as the SDK's server does not run tasks), each call made by a scripted model through a
``ChatSession``. The call is sent task-augmented; its status messages (notified or polled) and progress are the
card's progress; a failed task says why; Stop and the call's timeout cancel the task on the server (``tasks/cancel``);
a task the server cancels says so; a question the task asks (``input_required``) is its call's, also with two
calls asking at once, and the time the person takes does not count against the call's timeout. The real
server-everything's task tool is in ``test_real_servers.py``. Each test failed before tasks were run (the tools were
not offered). No child process outlives a test (psutil)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import MessageStatus, ToolCallPart, ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import NeverAsk, wait_for
from tests.mcp.mcp_harness import asked, call, log_lines

pytestmark = pytest.mark.slow


TASKS = str(Path(__file__).parent / "servers" / "task_server.py")


def _server(log: Path, **options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [TASKS], env={"AIW_TASK_LOG": str(log)}, **options)


def _session(server: MCPServer, *replies: Any) -> ChatSession:
    return ChatSession(ScriptedTransport(list(replies)), tools=[server], approval_policy=NeverAsk())


def _shown(session: ChatSession) -> list[tuple[float | None, str | None]]:
    """The progress the card shows, change by change."""
    seen: list[tuple[float | None, str | None]] = []

    def watch(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.progress is not None:
            now = (change.part.progress.fraction, change.part.progress.message)
            if not seen or seen[-1] != now:
                seen.append(now)

    session.subscribe(watch)
    return seen


async def _run(server: MCPServer, tool: str, arguments: dict[str, Any] | None = None) -> ToolCallPart:
    reply = await asyncio.wait_for(_session(server, call(tool, arguments), "Done.").send("go"), 30)
    return reply.tool_calls[0]


def _message(part: ToolCallPart) -> str:
    assert part.outcome is not None
    return part.outcome.message or ""


async def test_a_tool_that_requires_tasks_is_offered_and_its_status_is_the_progress(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = _server(log, call_timeout=30)
    try:
        names = {t.name for t in await server.list_tools()}
        assert names == {"steps", "fails", "fails_hard", "gives_up", "forever", "ask", "maybe"}
        session = _session(server, call("steps", {"n": 3, "delay": 0.2, "notify": True}), "Done.")
        seen = _shown(session)
        reply = await asyncio.wait_for(session.send("go"), 30)
        (part,) = reply.tool_calls
        assert part.state is ToolCallState.COMPLETED, part.outcome
        assert part.outcome is not None
        assert part.outcome.value == "did 3 steps"
        # Each step's status message (notified), with the fraction the task's progress notifications gave (the
        # progress token of the task-augmented call holds for the task's life).
        assert (None, "step 1 of 3") in seen, seen
        for i in (1, 2, 3):
            assert (pytest.approx(i / 3), f"step {i} of 3") in seen, seen
        lines = log_lines(log)
        assert 'tools/call "steps" task ttl=330000' in lines  # sent as a task: ttl = call_timeout + 5 minutes
        assert 'tasks/result "task-1"' in lines
    finally:
        await server.aclose()


async def test_a_task_without_notifications_is_polled(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = _server(log)
    try:
        session = _session(server, call("steps", {"n": 2, "delay": 0.3, "notify": False}), "Done.")
        seen = _shown(session)
        reply = await asyncio.wait_for(session.send("go"), 30)
        part = reply.tool_calls[0]
        assert part.state is ToolCallState.COMPLETED, part.outcome
        assert part.outcome is not None
        assert part.outcome.value == "did 2 steps"
        assert "step 1 of 2" in [m for _, m in seen], seen  # seen by tasks/get at the server's pollInterval
        assert log_lines(log).count('tasks/get "task-1"') >= 3
    finally:
        await server.aclose()


async def test_a_failed_task_says_why(tmp_path: Path) -> None:
    server = _server(tmp_path / "log")
    try:
        part = await _run(server, "fails")  # tasks/result answers the tool's isError result
        assert part.state is ToolCallState.FAILED
        assert "disk full: /data" in _message(part)
        part = await _run(server, "fails_hard")  # tasks/result answers a JSON-RPC error: the status message says why
        assert part.state is ToolCallState.FAILED
        assert (
            _message(part) == "The task of the call of fails_hard failed on the MCP server 'tasks': the disk is full."
        )
    finally:
        await server.aclose()


async def test_a_task_the_server_cancels_says_so(tmp_path: Path) -> None:
    server = _server(tmp_path / "log")
    try:
        part = await _run(server, "gives_up")
        assert part.state is ToolCallState.FAILED
        assert _message(part) == (
            "The MCP server 'tasks' cancelled the task of the call of gives_up: the operator stopped it."
        )
    finally:
        await server.aclose()


async def test_stop_cancels_the_task_on_the_server(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = _server(log)
    try:
        session = _session(server, call("forever"), "Never said.")
        seen = _shown(session)
        turn = asyncio.ensure_future(session.send("go"))
        await wait_for(lambda: (None, "still working") in seen, timeout=20)
        assert session.stop()
        reply = await asyncio.wait_for(turn, 20)
        assert reply.tool_calls[0].state is ToolCallState.CANCELLED
        await wait_for(lambda: 'tasks/cancel "task-1"' in log_lines(log), timeout=10)
        assert server.connected
        part = await _run(server, "maybe")  # the connection goes on
        assert part.outcome is not None
        assert part.outcome.value == "plain"
    finally:
        await server.aclose()


async def test_a_task_that_never_ends_is_bounded_by_the_call_timeout(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = _server(log, call_timeout=1)
    try:
        part = await _run(server, "forever")
        assert part.state is ToolCallState.FAILED
        assert "did not finish the call of forever within 1 seconds, so it was cancelled" in _message(part)
        assert 'tasks/cancel "task-1"' in log_lines(log)  # before the call ended
        assert server.connected  # the server still answers: the connection is kept
    finally:
        await server.aclose()


async def test_the_time_a_task_waits_for_the_person_does_not_count(tmp_path: Path) -> None:
    """The call's deadline (1 second) is paused while the person answers the task's question, taking longer."""
    server = _server(tmp_path / "log", call_timeout=1)
    try:
        session = _session(server, call("ask", {"what": "a colour"}), "Thanks.")
        turn = asyncio.ensure_future(session.send("ask"))
        part = await asked(session)
        await asyncio.sleep(1.5)
        session.respond(part.tool_call_id, "accept", {"answer": "blue"})
        await asyncio.wait_for(turn, 30)
        assert part.state is ToolCallState.COMPLETED, part.outcome
        assert part.outcome is not None
        assert part.outcome.value == "answer: blue"
    finally:
        await server.aclose()


async def test_an_optional_task_tool_is_called_plainly(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = _server(log)
    try:
        part = await _run(server, "maybe")
        assert part.outcome is not None
        assert part.outcome.value == "plain"
        assert 'tools/call "maybe"' in log_lines(log)
    finally:
        await server.aclose()


async def test_each_task_question_is_its_own_calls(tmp_path: Path) -> None:
    """Two calls whose tasks both ask: each question names its task (related-task), so each is its call's (without
    it, two running calls of one server could not be told apart and the question was refused)."""
    server = _server(tmp_path / "log")
    try:
        both = ScriptedReply(
            tool_calls=[
                ScriptedToolCall(name="ask", arguments={"what": "a colour"}),
                ScriptedToolCall(name="ask", arguments={"what": "a number"}),
            ]
        )
        session = _session(server, both, "Thanks.")
        turn = asyncio.ensure_future(session.send("ask twice"))
        await wait_for(lambda: len(session.pending_inputs) == 2, timeout=20)
        for part in list(session.pending_inputs):
            assert part.input_request is not None
            what = part.input_request.message.removeprefix("Tell me ")
            assert what in part.arguments  # the question of this call (arguments: the JSON the model sent)
            session.respond(part.tool_call_id, "accept", {"answer": f"{what}!"})
        reply = await asyncio.wait_for(turn, 30)
        assert reply.status is MessageStatus.COMPLETED
        values = [p.outcome.value if p.outcome else None for p in reply.tool_calls]
        assert values == ["answer: a colour!", "answer: a number!"]
    finally:
        await server.aclose()
