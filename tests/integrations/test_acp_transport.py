"""An ACP agent in the chat (``integrations.acp.ACPTransport``), driven through ``ChatSession`` against the test agent
(``acp_agent.py``, on the SDK's agent side) as a real subprocess: what it streams, its permission requests as the
card's approvals, the files it reads and writes through the client, Stop, a crash, an agent that is not there, and a
conversation resumed with ``session/load``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp")

from ai_widgets import ChatSession, ChatWidget, MessageStatus, ToolCallState, ToolRisk, tool
from ai_widgets.integrations._acp_client import MAX_READ_BYTES
from ai_widgets.integrations.acp import ACPTransport
from ai_widgets.messages import (
    CallDiff,
    Message,
    PlanPart,
    Role,
    TextPart,
    ToolCallPart,
    dump_messages,
    load_messages,
)
from ai_widgets.options import RequestOptions, ToolChoice
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire

pytestmark = pytest.mark.slow  # each test starts an agent process

AGENT = str(Path(__file__).with_name("acp_agent.py"))


def script(*steps: dict[str, Any]) -> str:
    return json.dumps({"steps": list(steps)})


class Agent:
    """The test agent's transport, its log and its state directory."""

    def __init__(self, tmp_path: Path, **options: Any) -> None:
        self.log_path = tmp_path / "agent.log"
        state = tmp_path / "state"
        state.mkdir(parents=True, exist_ok=True)
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        env = {"ACP_AGENT_LOG": str(self.log_path), "ACP_AGENT_STATE": str(state)}
        self.transport = ACPTransport(sys.executable, [AGENT], cwd=self.work, env=env, **options)

    def log(self, kind: str) -> list[Any]:
        if not self.log_path.exists():
            return []
        entries = [json.loads(line) for line in self.log_path.read_text().splitlines()]
        return [entry["data"] for entry in entries if entry["kind"] == kind]


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    made = Agent(tmp_path)
    yield made
    await made.transport.aclose()


async def asked(session: ChatSession, task: asyncio.Task[Message]) -> ToolCallPart:
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=30)
    assert not task.done(), task.result().error
    return session.pending_approvals[0]


async def test_text_thoughts_a_plan_and_cost_stream_into_the_reply(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    reply = await session.send(
        script(
            {"thought": "Let me see."},
            {"plan": [["read", "in_progress", "high"], ["plot", "pending", "medium"]]},
            {"text": "Reading. "},
            {"usage": {"used": 1200, "cost": 0.25}},
            {"plan": [["read", "completed", "high"], ["plot", "in_progress", "medium"]]},
            {"text": "Done."},
        )
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "Reading. Done."
    assert reply.reasoning == "Let me see."
    (plan,) = [part for part in reply.parts if isinstance(part, PlanPart)]
    assert [(e.content, e.status) for e in plan.entries] == [("read", "completed"), ("plot", "in_progress")]
    assert reply.usage.cost == Decimal("0.25")
    assert reply.provider_state["acp"]["session_id"].startswith("s")
    second = await session.send(script({"usage": {"used": 10, "cost": 0.4}}, {"text": "ok"}))
    assert second.usage.cost == Decimal("0.4") - Decimal("0.25")  # the running total's change


async def test_it_advertises_only_what_it_serves(tmp_path: Path) -> None:
    served, unserved = Agent(tmp_path / "a"), Agent(tmp_path / "b", serve_files=False, serve_terminals=False)
    try:
        for made in (served, unserved):
            await ChatSession(made.transport).send("hello")
        assert served.log("initialize")[0]["fs"] == {"readTextFile": True, "writeTextFile": True}
        assert served.log("initialize")[0]["terminal"] is True
        assert unserved.log("initialize")[0]["fs"] == {"readTextFile": False, "writeTextFile": False}
        assert unserved.log("initialize")[0]["terminal"] is False
        assert served.log("new_session")[0]["cwd"] == str(served.work)
    finally:
        await served.transport.aclose()
        await unserved.transport.aclose()


async def test_an_edit_asks_in_its_card_shows_the_diff_and_allow_writes_the_file(agent: Agent) -> None:
    """Claude Code's shape: tool_call, tool_call again with the diff, request_permission with the id, then
    fs/write_text_file with no call id, matched to the allowed call so the person is asked once."""
    target = agent.work / "a.txt"
    target.write_text("old\n")
    session = ChatSession(agent.transport)
    raw = {"file_path": str(target), "content": "new\n"}
    task = asyncio.create_task(
        session.send(
            script(
                {"text": "Editing. "},
                {"tool_call": {"id": "toolu_1", "title": "Write", "kind": "edit", "tool_name": "mcp__acp__Write"}},
                {"diff": {"id": "toolu_1", "path": str(target), "old": "old\n", "new": "new\n", "raw_input": raw}},
                {"permission": {"id": "toolu_1", "title": f"Write {target}"}},
                {"write": {"path": str(target), "content": "new\n"}},
                {"update": {"id": "toolu_1", "status": "completed", "text": "Wrote it"}},
                {"text": "All done."},
            )
        )
    )
    card = await asked(session, task)
    assert card.tool_name == "mcp__acp__Write"
    assert card.state is ToolCallState.AWAITING_APPROVAL
    assert card.view is not None
    assert card.view.content == (CallDiff(str(target), "old\n", "new\n"),)
    assert target.read_text() == "old\n"  # nothing written before the person allows it
    session.approve("toolu_1", "approved")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert target.read_text() == "new\n"
    assert "permission toolu_1: allow\n" in reply.text
    assert "write: ok" in reply.text
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert len(reply.tool_calls) == 1  # the write was the allowed call's: no second card
    saved = load_messages(dump_messages(session.messages))[-1].tool_calls[0]
    assert saved.view == card.view


@pytest.mark.parametrize(
    ("decision", "said", "state"),
    [("rejected", "reject", ToolCallState.REJECTED), ("approved_always", "yes", ToolCallState.COMPLETED)],
)
async def test_decline_and_allow_always_choose_the_agents_options_by_kind_allow_always_as_once(
    agent: Agent, decision: str, said: str, state: ToolCallState
) -> None:
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script(
                {"tool_call": {"id": "c1", "title": "rm -rf build", "kind": "execute"}},
                {
                    "permission": {
                        "id": "c1",
                        "options": [["yes", "allow_once"], ["reject", "reject_once"], ["allow_always", "allow_always"]],
                    }
                },
                {"update": {"id": "c1", "status": "completed", "text": "ok"}},
            )
        )
    )
    await asked(session, task)
    session.approve("c1", decision)
    reply = await asyncio.wait_for(task, 30)
    assert f"permission c1: {said}" in reply.text
    assert reply.tool_calls[0].state is state


async def test_a_write_no_allowed_call_announced_asks_with_the_diff_against_the_disk(agent: Agent) -> None:
    target = agent.work / "notes.md"
    target.write_text("before\n")
    session = ChatSession(agent.transport)
    task = asyncio.create_task(session.send(script({"write": {"path": str(target), "content": "after\n"}})))
    card = await asked(session, task)
    assert card.tool_name == "write_text_file"
    assert card.view is not None
    assert card.view.title == f"Write {target}"
    assert card.view.content == (CallDiff(str(target), "before\n", "after\n"),)
    session.approve(card.tool_call_id, "approved")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert target.read_text() == "after\n"
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert "write: ok" in reply.text

    task = asyncio.create_task(session.send(script({"write": {"path": str(target), "content": "never\n"}})))
    card = await asked(session, task)
    session.approve(card.tool_call_id, "rejected", reason="not that file")
    reply = await asyncio.wait_for(task, 30)
    assert target.read_text() == "after\n"
    assert "write error" in reply.text
    assert reply.tool_calls[0].state is ToolCallState.REJECTED


async def test_a_write_allowed_with_changed_arguments_is_declined_not_written_as_asked(agent: Agent) -> None:
    """ACP has no room for changed input: the agent's own content must not be written as if the edit were allowed."""
    target = agent.work / "notes.md"
    session = ChatSession(agent.transport)
    task = asyncio.create_task(session.send(script({"write": {"path": str(target), "content": "agent's\n"}})))
    card = await asked(session, task)
    session.approve(card.tool_call_id, "approved", arguments={"path": str(agent.work / "other.md")})
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert not target.exists()
    assert not (agent.work / "other.md").exists()
    assert "write error" in reply.text
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.FAILED
    assert call.outcome is not None
    assert "cannot take changed arguments" in (call.outcome.message or "")


async def test_reads_run_unasked_with_line_and_limit(agent: Agent) -> None:
    target = agent.work / "data.csv"
    target.write_text("a\nb\nc\nd\n")
    reply = await ChatSession(agent.transport).send(
        script({"read": {"path": str(target), "line": 2, "limit": 2}}, {"read": {"path": str(agent.work / "none")}})
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "read: b\nc\n" in reply.text
    assert "read error" in reply.text
    assert reply.tool_calls == []


HAS_PROC = os.path.exists("/proc/self/status")


async def test_reads_of_what_never_ends_or_waits_are_refused_and_a_large_file_too(agent: Agent) -> None:
    """``/dev/zero`` reports size 0 and never ends; a pipe's open waits for a writer; a directory is no text."""
    fifo = agent.work / "pipe"
    os.mkfifo(fifo)
    large = agent.work / "large.bin"
    with large.open("wb") as file:
        file.truncate(MAX_READ_BYTES + 1)  # sparse: nothing written
    paths = ["/dev/zero", str(fifo), str(agent.work), str(large)] + (["/proc/self/status"] if HAS_PROC else [])
    reply = await asyncio.wait_for(
        ChatSession(agent.transport).send(script(*({"read": {"path": p}} for p in paths))), 30
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text.count("read error") == 4, reply.text
    if HAS_PROC:
        assert "read: Name:" in reply.text  # a /proc file says its size is 0, and is read within the limit


async def test_a_permission_for_a_call_never_announced_starts_its_card(agent: Agent) -> None:
    """Gemini CLI asks first."""
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script(
                {"permission": {"id": "write_file__write_file_1796411650430_0", "title": "Write a", "kind": "edit"}},
                {"update": {"id": "write_file__write_file_1796411650430_0", "status": "completed"}},
            )
        )
    )
    card = await asked(session, task)
    assert card.tool_name == "write_file"
    session.approve(card.tool_call_id, "approved")
    reply = await asyncio.wait_for(task, 30)
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED


async def test_a_permission_asked_twice_is_answered_once(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script(
                {"tool_call": {"id": "c1", "title": "Edit"}},
                {"permission_twice": {"id": "c1"}},
                {"update": {"id": "c1", "status": "completed"}},
            )
        )
    )
    await asked(session, task)
    session.approve("c1", "approved")
    reply = await asyncio.wait_for(task, 30)
    assert "permission c1: allow allow" in reply.text
    assert reply.status is MessageStatus.COMPLETED, reply.error


async def test_stop_while_the_person_decides_cancels_the_prompt_and_the_next_message_works(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(script({"tool_call": {"id": "c1", "title": "Edit"}}, {"permission": {"id": "c1"}}, {"text": "x"}))
    )
    await asked(session, task)
    session.stop()
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    assert len(agent.log("cancel")) == 1
    again = await asyncio.wait_for(session.send("next"), 30)
    assert again.status is MessageStatus.COMPLETED, again.error
    assert again.text == "You said: next"


async def test_stop_while_the_agent_works_sends_cancel(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    task = asyncio.create_task(session.send(script({"text": "working"}, {"wait_cancel": True})))
    await wait_for(lambda: "working" in (session.messages[-1].text if session.messages else ""), timeout=30)
    session.stop()
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.CANCELLED
    assert agent.log("cancel")
    assert (await asyncio.wait_for(session.send("again"), 30)).text == "You said: again"


async def test_a_crash_mid_turn_ends_the_reply_with_its_last_output_and_the_next_message_loads_the_session(
    agent: Agent,
) -> None:
    session = ChatSession(agent.transport)
    first = await session.send("remember me")
    reply = await asyncio.wait_for(session.send(script({"text": "about to"}, {"crash": 3})), 30)
    assert reply.status is MessageStatus.ERROR
    assert "crashing as scripted" in (reply.error or "")
    again = await asyncio.wait_for(session.send("still there?"), 30)
    assert again.status is MessageStatus.COMPLETED, again.error
    assert again.text == "You said: still there?"
    assert [entry["id"] for entry in agent.log("load_session")] == [first.provider_state["acp"]["session_id"]]


async def test_a_conversation_from_a_history_file_resumes_its_agent_session(tmp_path: Path) -> None:
    first = Agent(tmp_path)
    history = tmp_path / "chat.json"
    session = ChatSession(first.transport, history=history)
    reply = await session.send("the first question")
    await first.transport.aclose()
    second = Agent(tmp_path)
    try:
        resumed = ChatSession(second.transport, history=history)
        answer = await asyncio.wait_for(resumed.send("and the second"), 30)
        assert answer.text == "You said: and the second"  # the replay was not this turn's
        assert second.log("load_session")[-1]["id"] == reply.provider_state["acp"]["session_id"]
        prompt = second.log("prompt")[-1]
        assert [block.get("text") for block in prompt] == ["and the second"]  # only what it had not had
    finally:
        await second.transport.aclose()


async def test_a_new_agent_session_gets_the_earlier_conversation_and_the_system_prompt(agent: Agent) -> None:
    earlier = [Message.user("what is 2+2?"), Message(Role.ASSISTANT, [TextPart("4")])]
    session = ChatSession(agent.transport, messages=earlier, request_options=RequestOptions(system_prompt="Be brief."))
    await session.send("and 3+3?")
    prompt = agent.log("prompt")[-1]
    resources = [block["resource"]["text"] for block in prompt if block["type"] == "resource"]
    assert resources[0] == "Be brief."
    assert resources[1] == "User: what is 2+2?\n\nAssistant: 4"
    assert prompt[-1] == {"type": "text", "text": "and 3+3?"}


async def test_ten_thousand_chunks_keep_their_order(agent: Agent) -> None:
    reply = await asyncio.wait_for(ChatSession(agent.transport).send(script({"flood": 10_000})), 120)
    assert reply.text == "".join(f"{i} " for i in range(10_000))


async def test_an_agent_that_is_not_installed_says_so(tmp_path: Path) -> None:
    transport = ACPTransport("no-such-acp-agent-xyz", cwd=tmp_path)
    reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "'no-such-acp-agent-xyz' is not installed" in (reply.error or "")
    await transport.aclose()


async def test_an_agent_that_exits_at_start_says_its_code_and_output(tmp_path: Path) -> None:
    transport = ACPTransport(sys.executable, ["-c", "import sys; sys.stderr.write('no key configured'); sys.exit(4)"])
    try:
        reply = await asyncio.wait_for(ChatSession(transport).send("hi"), 60)
        assert reply.status is MessageStatus.ERROR
        assert "did not start" in (reply.error or "")
        assert "exited with code 4" in (reply.error or "")
        assert "no key configured" in (reply.error or "")
    finally:
        await transport.aclose()


async def test_a_forced_tool_choice_is_an_error(agent: Agent) -> None:
    session = ChatSession(agent.transport, request_options=RequestOptions(tool_choice=ToolChoice.REQUIRED))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "tool choice" in (reply.error or "")


async def test_chat_widget_runs_an_acp_agent_shows_its_diff_and_stops_it_on_close(wire: Wire, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    chat = ChatWidget(acp=[sys.executable, AGENT], flush_interval=0)
    transport = chat.session.transport
    assert isinstance(transport, ACPTransport)
    task = asyncio.create_task(
        chat.ask(
            script(
                {"diff": {"id": "e1", "path": str(target), "new": "fresh text\n"}},
                {"permission": {"id": "e1"}},
                {"write": {"path": str(target), "content": "fresh text\n"}},
                {"update": {"id": "e1", "status": "completed"}},
            ),
            show=False,
        )
    )
    await asked(chat.session, task)
    chat.session.approve("e1", "approved")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert target.read_text() == "fresh text\n"
    sent = json.dumps([s.data for s in wire.sent], default=str)
    assert '"view"' in sent
    assert "fresh text" in sent  # the diff reached the front end
    assert transport.running
    await chat.aclose()
    assert not transport.running


def test_chat_widget_refuses_acp_with_a_model_a_transport_or_an_agent(wire: Wire) -> None:
    for other in ({"model": "openai:gpt-5-mini"}, {"transport": object()}, {"agent": object()}):
        with pytest.raises(TypeError, match="acp= alone"):
            ChatWidget(acp=["claude-code-acp"], **other)
    with pytest.raises(TypeError, match="a list"):
        ChatWidget(acp="claude-code-acp")  # type: ignore[arg-type]


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@tool(risk=ToolRisk.DESTRUCTIVE)
def drop_table(name: str) -> str:
    """Drops a table."""
    return f"dropped {name}"


async def test_a_call_of_the_sessions_own_tool_runs_in_the_chat_with_its_card_and_approval(
    agent: Agent, tmp_path: Path
) -> None:
    """What the kernel's tool server does when the agent calls one of the session's tools over MCP."""
    session = ChatSession(agent.transport, tools=[add, drop_table])
    go = tmp_path / "go"
    task = asyncio.create_task(session.send(script({"text": "calling"}, {"wait_file": str(go)}, {"text": " back"})))
    await wait_for(lambda: bool(session.messages) and session.messages[-1].text == "calling", timeout=30)
    agent_session = session.messages[-1].provider_state["acp"]["session_id"]
    added = await asyncio.wait_for(
        agent.transport.call_session_tool(agent_session, "mcp_1", "add", '{"a": 2, "b": 3}'), 30
    )
    assert added is not None
    assert added.outcome is not None
    assert added.outcome.value == 5
    dropping = asyncio.create_task(
        agent.transport.call_session_tool(agent_session, "mcp_2", "drop_table", '{"name": "users"}')
    )
    card = await asked(session, task)
    assert card.tool_call_id == "mcp_2"
    assert not card.provider_executed  # the session's own call: its approval is the session's
    session.approve("mcp_2", "approved")
    dropped = await asyncio.wait_for(dropping, 30)
    assert dropped is not None
    assert dropped.state is ToolCallState.COMPLETED
    go.write_text("")
    reply = await asyncio.wait_for(task, 30)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "calling back"
    assert [p.tool_call_id for p in reply.tool_calls] == ["mcp_1", "mcp_2"]


async def test_a_message_sent_while_the_agent_works_follows_as_its_next_prompt_in_the_same_turn(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    task = asyncio.create_task(
        session.send(
            script({"tool_call": {"id": "c1", "title": "Edit"}}, {"permission": {"id": "c1"}}, {"text": "done. "})
        )
    )
    await asked(session, task)
    steered = asyncio.create_task(session.send("also check the units"))
    await wait_for(lambda: bool(session.queued_messages), timeout=30)
    session.approve("c1", "approved")
    reply = await asyncio.wait_for(task, 30)
    assert await asyncio.wait_for(steered, 30) is reply
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text.endswith("done. You said: also check the units")
    prompts = agent.log("prompt")
    assert [block["text"] for block in prompts[-1]] == ["also check the units"]
    assert (await asyncio.wait_for(session.send("next"), 30)).text == "You said: next"
    assert [block["text"] for block in agent.log("prompt")[-1]] == ["next"]  # nothing sent twice
