"""An ACP agent's terminals (``terminal/*``) served by the chat, through ``ChatSession`` and ``ChatWidget`` against
the test agent (``acp_agent.py``) as a real subprocess: a command asks in a card of its own that shows it and where it
runs, unless a call the person allowed said it runs it; Allow runs it and the card shows its output and exit live;
Decline and Stop refuse it and nothing runs; kill, release and the output's bound; Stop ends a running command."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

pytest.importorskip("acp")

from ai_widgets import ChatSession, ChatWidget, MessageStatus, ToolCallState
from ai_widgets.messages import CallTerminal, Message, ToolCallPart
from tests.helpers import gone, no_new_children, until_gone, wait_for
from tests.integrations.test_acp_transport import AGENT, Agent, asked, script
from tests.widget.widget_harness import Wire

pytestmark = pytest.mark.slow  # each test starts an agent process


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    with no_new_children():
        yield


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    made = Agent(tmp_path)
    yield made
    await made.transport.aclose()


def sleeper(pid_file: Path, seconds: int) -> str:
    """A command line that writes its pid to ``pid_file`` (whole, at once) and sleeps."""
    return f"echo $$ > {pid_file}.new; mv {pid_file}.new {pid_file}; exec sleep {seconds}"


def terminal_of(part: ToolCallPart | None) -> CallTerminal | None:
    if part is None or part.view is None:
        return None
    return next((item for item in part.view.content if isinstance(item, CallTerminal)), None)


def card(session: ChatSession, call_id: str) -> ToolCallPart | None:
    return session.messages[-1].tool_call(call_id) if session.messages else None


async def allow_each(session: ChatSession, task: asyncio.Task[Message]) -> list[str]:
    """Allows every card that asks until the turn ends; returns the ids of the calls that asked."""
    seen: list[str] = []
    while True:
        await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=30)
        if task.done():
            return seen
        for part in list(session.pending_approvals):
            seen.append(part.tool_call_id)
            session.approve(part.tool_call_id, "approved")


async def test_a_command_asks_with_its_command_and_cwd_and_allow_shows_its_output_and_exit_live(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    line = "echo one; sleep 1; echo two"
    task = asyncio.create_task(session.send(script({"terminal": {"command": line}}, {"text": "done"})))
    asking = await asked(session, task)
    assert asking.tool_name == "terminal"
    assert asking.state is ToolCallState.AWAITING_APPROVAL
    assert asking.view is not None
    assert asking.view.title == f"Run {line}"
    assert asking.view.kind == "execute"
    assert asking.view.content == (CallTerminal("", command=line, cwd=str(agent.work)),)
    session.approve(asking.tool_call_id, "approved")
    # Live: the first line shows while the command still runs.
    await wait_for(lambda: (t := terminal_of(card(session, asking.tool_call_id))) is not None and t.output == "one\n")
    shown = terminal_of(card(session, asking.tool_call_id))
    assert shown is not None
    assert shown.exit_code is None
    assert shown.terminal_id == "terminal-1"
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "terminal terminal-1: exit 0 signal None truncated False output 'one\\ntwo\\n'" in reply.text
    (part,) = reply.tool_calls
    assert part.state is ToolCallState.COMPLETED
    assert terminal_of(part) == CallTerminal(
        "terminal-1", command=line, cwd=str(agent.work), output="one\ntwo\n", exit_code=0
    )


async def test_decline_refuses_the_command_and_nothing_runs(agent: Agent) -> None:
    marker = agent.work / "marker"
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(script({"terminal": {"command": "touch", "args": [str(marker)], "cwd": str(agent.work)}}))
    )
    asking = await asked(session, task)
    assert asking.view is not None
    assert asking.view.title == f"Run touch {marker}"
    session.approve(asking.tool_call_id, "rejected")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "terminal error: -32600" in reply.text
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    assert not marker.exists()


async def test_stop_while_asked_answers_cancelled_and_nothing_runs(agent: Agent) -> None:
    marker = agent.work / "marker"
    session = ChatSession(agent.transport)
    task = asyncio.create_task(session.send(script({"terminal": {"command": f"touch {marker}"}}, {"text": "x"})))
    await asked(session, task)
    session.stop()
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.CANCELLED
    await wait_for(lambda: bool(agent.log("terminal_error")))
    assert agent.log("terminal_error")[0]["code"] == -32800
    assert not marker.exists()
    assert (await asyncio.wait_for(session.send("next"), 30)).text == "You said: next"


async def test_a_command_of_a_call_the_person_allowed_is_not_asked_again_and_its_card_shows_it(agent: Agent) -> None:
    """Claude Code's Bash tool: tool_call with rawInput.command, request_permission, then terminal/create of that
    command line with no args, and the terminal shown in the call's card."""
    marker = agent.work / "marker.txt"
    line = f"echo hi > {marker}; echo wrote"
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script(
                {
                    "tool_call": {
                        "id": "toolu_b",
                        "title": line,
                        "kind": "execute",
                        "tool_name": "Bash",
                        "raw_input": {"command": line, "description": "Write a marker"},
                    }
                },
                {"permission": {"id": "toolu_b"}},
                {"terminal": {"command": line, "show": "toolu_b", "release": True}},
                {"update": {"id": "toolu_b", "status": "completed"}},
                {"terminal": {"command": line}},  # the same command again: that call ran already, so it asks
            )
        )
    )
    first = await asked(session, task)
    assert first.tool_call_id == "toolu_b"
    session.approve("toolu_b", "approved")
    again = await asked(session, task)
    assert again.tool_call_id == "acp_terminal_1"
    assert marker.read_text() == "hi\n"  # the allowed call's command ran unasked
    session.approve(again.tool_call_id, "rejected")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "terminal terminal-1: exit 0 signal None truncated False output 'wrote\\n'" in reply.text
    bash, refused = reply.tool_calls
    assert bash.state is ToolCallState.COMPLETED
    assert terminal_of(bash) == CallTerminal(
        "terminal-1", command=line, cwd=str(agent.work), output="wrote\n", exit_code=0
    )
    assert refused.state is ToolCallState.REJECTED


async def test_kill_and_release_end_the_command_and_a_released_or_unknown_id_is_invalid_params(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    pid_file = agent.work / "pid"
    task = asyncio.create_task(
        session.send(
            script(
                {"terminal": {"command": "echo started; sleep 30", "kill": 0.5, "release": True}},
                {"terminal_op": {"op": "output", "id": "last"}},
                {"terminal_op": {"op": "release", "id": "terminal-99"}},
                {"terminal": {"command": sleeper(pid_file, 30), "wait": False}},
                {"wait_file": str(pid_file)},
                {"terminal_op": {"op": "release", "id": "last"}},
                {"terminal_op": {"op": "wait", "id": "last"}},
            )
        )
    )
    assert len(await allow_each(session, task)) == 2
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "terminal terminal-1: exit None signal SIGTERM truncated False output 'started\\n'" in reply.text
    assert "output terminal-1 error: -32602" in reply.text
    assert "release terminal-99 error: -32602" in reply.text
    assert "release terminal-2: ok" in reply.text
    assert "wait terminal-2 error: -32602" in reply.text
    assert gone(int(pid_file.read_text()))  # released while it ran: ended
    killed, released = reply.tool_calls
    assert killed.state is ToolCallState.FAILED
    shown = terminal_of(killed)
    assert shown is not None
    assert (shown.output, shown.signal) == ("started\n", "SIGTERM")
    assert released.state is ToolCallState.FAILED


async def test_output_is_bounded_and_keeps_its_end(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    count = "i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); done"
    task = asyncio.create_task(session.send(script({"terminal": {"command": count, "limit": 100}})))
    await allow_each(session, task)
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    said = reply.text
    assert "truncated True" in said
    output = said.split("output ", 1)[1].strip()
    kept = json.loads(output.replace("'", '"'))
    assert len(kept.encode()) <= 100
    assert kept.endswith("line198\nline199\n")
    shown = terminal_of(reply.tool_calls[0])
    assert shown is not None
    assert shown.output == kept


async def test_stop_ends_a_running_command(agent: Agent) -> None:
    pid_file = agent.work / "pid"
    line = sleeper(pid_file, 60)
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script(
                {"tool_call": {"id": "b1", "kind": "execute", "raw_input": {"command": line}}},
                {"permission": {"id": "b1"}},
                {"terminal": {"command": line, "show": "b1"}},
                {"wait_cancel": True},
            )
        )
    )
    await asked(session, task)
    session.approve("b1", "approved")
    await wait_for(pid_file.exists, timeout=30)
    pid = int(pid_file.read_text())
    assert not gone(pid)
    session.stop()
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.CANCELLED
    await until_gone(pid)


async def test_stopping_the_agent_closes_its_terminals(agent: Agent) -> None:
    pid_file = agent.work / "pid"
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script({"terminal": {"command": sleeper(pid_file, 60), "wait": False}}, {"wait_file": str(pid_file)})
        )
    )
    await allow_each(session, task)
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    pid = int(pid_file.read_text())
    assert not gone(pid)  # the agent did not release it: it runs on with the agent
    await agent.transport.aclose()
    await until_gone(pid)


async def test_unserved_terminals_are_not_advertised_and_refused(tmp_path: Path) -> None:
    made = Agent(tmp_path, serve_terminals=False)
    try:
        reply = await ChatSession(made.transport).send(script({"terminal": {"command": "echo no"}}))
        assert made.log("initialize")[0]["terminal"] is False
        assert "terminal error: -32601" in reply.text
        assert reply.tool_calls == []
    finally:
        await made.transport.aclose()


async def test_chat_widget_shows_the_command_its_cwd_and_output(wire: Wire, tmp_path: Path) -> None:
    chat = ChatWidget(acp=[sys.executable, AGENT], flush_interval=0)
    try:
        task = asyncio.create_task(
            chat.ask(script({"terminal": {"command": "echo widget-output", "cwd": str(tmp_path)}}), show=False)
        )
        await allow_each(chat.session, task)
        reply = await asyncio.wait_for(task, 30)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        sent = json.dumps([s.data for s in wire.sent], default=str)
        assert '"command": "echo widget-output"' in sent
        assert f'"cwd": "{tmp_path}"' in sent
        assert '"output": "widget-output\\n"' in sent
        assert '"exit_code": 0' in sent
    finally:
        await chat.aclose()
