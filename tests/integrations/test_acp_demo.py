"""The test agent's demo (``acp_agent.py``'s ``demo <file>`` prompt, which ``notebooks/agents.ipynb`` runs) through
``ChatSession``, against the agent as a real subprocess: a whole edit, thought, plan, read, diff, permission and
write, allowed or declined."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("acp")

from ai_widgets import ChatSession, MessageStatus, ToolCallState
from ai_widgets.integrations.acp import ACPTransport
from ai_widgets.messages import CallDiff, CallLocation, PlanPart, ReasoningPart
from tests.helpers import wait_for

pytestmark = pytest.mark.slow  # each test starts an agent process

AGENT = str(Path(__file__).with_name("acp_agent.py"))
UNTIDY = "def greet(name):   \n\treturn 'hello ' + name\n\n\n"
TIDY = "def greet(name):\n    return 'hello ' + name\n"


async def until_asked(session: ChatSession, task: asyncio.Task[object]) -> None:
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=30)
    assert not task.done(), task.result()


async def test_the_demo_thinks_plans_reads_shows_the_diff_asks_and_writes_when_allowed(tmp_path: Path) -> None:
    target = tmp_path / "hello.py"
    target.write_text(UNTIDY)
    transport = ACPTransport(sys.executable, [AGENT], cwd=tmp_path)
    try:
        session = ChatSession(transport)
        task = asyncio.create_task(session.send("demo hello.py"))
        await until_asked(session, task)
        (edit,) = session.pending_approvals
        assert edit.view is not None
        assert edit.view.title == f"Edit {target}"
        assert edit.view.kind == "edit"
        assert edit.view.locations == (CallLocation(str(target)),)
        assert edit.view.content == (CallDiff(str(target), UNTIDY, TIDY),)
        assert target.read_text() == UNTIDY  # nothing written before the person allows it

        session.approve(edit.tool_call_id, "approved")
        reply = await asyncio.wait_for(task, 30)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert target.read_text() == TIDY
        read, edit = reply.tool_calls
        assert read.view is not None
        assert read.view.kind == "read"
        assert read.state is ToolCallState.COMPLETED
        assert edit.state is ToolCallState.COMPLETED
        assert len(session.messages) == 2, "the write was not asked about a second time"
        (plan,) = [part for part in reply.parts if isinstance(part, PlanPart)]
        assert [entry.status for entry in plan.entries] == ["completed"] * 3
        assert any(isinstance(part, ReasoningPart) for part in reply.parts)
        assert reply.text.strip().endswith("I tidied hello.py: no trailing spaces or tabs, one newline at the end.")
    finally:
        await transport.aclose()


async def test_the_demo_declined_leaves_the_file_and_says_so(tmp_path: Path) -> None:
    target = tmp_path / "hello.py"
    target.write_text(UNTIDY)
    transport = ACPTransport(sys.executable, [AGENT], cwd=tmp_path)
    try:
        session = ChatSession(transport)
        task = asyncio.create_task(session.send("demo hello.py"))
        await until_asked(session, task)
        session.approve(session.pending_approvals[0].tool_call_id, "rejected")
        reply = await asyncio.wait_for(task, 30)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert target.read_text() == UNTIDY
        assert reply.tool_calls[-1].state is ToolCallState.REJECTED
        assert reply.text.strip().endswith("As you wish: I left hello.py as it was.")
    finally:
        await transport.aclose()


async def test_a_plain_prompt_is_still_echoed_and_a_missing_file_is_said(tmp_path: Path) -> None:
    transport = ACPTransport(sys.executable, [AGENT], cwd=tmp_path)
    try:
        session = ChatSession(transport)
        assert (await session.send("hello")).text == "You said: hello"
        reply = await asyncio.wait_for(session.send("demo missing.py"), 30)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert "I could not read missing.py" in reply.text
        assert reply.tool_calls[0].state is ToolCallState.FAILED
    finally:
        await transport.aclose()
