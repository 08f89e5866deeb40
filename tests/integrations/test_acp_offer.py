"""The session's own tools offered to an ACP agent (``ACPTransport(offer_tools=True)``), driven through
``ChatSession`` and ``ChatWidget`` against the test agent as a real subprocess: the MCP server in ``session/new``
(HTTP with a bearer token, or the stdio relay), a call run in the chat with its card and approval (``KernelTools``'
``run_python`` in the namespace), one card per call however the agent announces it, the agent's own permission
allowed at once, Stop cancelling a call in flight, and the token kept out of everything the person or a file sees."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp")

from ai_widgets import ChatSession, ChatWidget, MessageStatus, ToolCallState, ToolRisk, tool
from ai_widgets.integrations._acp_offer import CANCELLED_CALL
from ai_widgets.integrations._acp_tools_server import THREAD_NAME
from ai_widgets.integrations._acp_updates import NOT_RUN
from ai_widgets.kernel import KernelTools
from ai_widgets.messages import dump_messages
from tests.helpers import wait_for
from tests.integrations.acp_harness import Agent, asked, script
from tests.widget.widget_harness import Wire

pytestmark = pytest.mark.slow  # each test starts an agent process

TOOL_USE_ID = "claudecode/toolUseId"


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@tool(risk=ToolRisk.DESTRUCTIVE)
def drop_table(name: str) -> str:
    """Drops a table."""
    return f"dropped {name}"


@pytest.fixture(autouse=True)
async def no_server_left() -> AsyncIterator[None]:
    """Each test's servers are closed with its transport: no server thread outlives it."""
    yield
    await wait_for(lambda: not any(t.name == THREAD_NAME for t in threading.enumerate()), timeout=10)


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    made = Agent(tmp_path)
    yield made
    await made.transport.aclose()


def offered(agent: Agent) -> list[dict[str, Any]]:
    """The MCP servers the agent's latest session was offered."""
    servers: list[dict[str, Any]] = agent.log("new_session")[-1]["mcp_servers"]
    return servers


# --- what is offered ---------------------------------------------------------------------------------------------


async def test_the_sessions_tools_are_offered_over_http_and_a_call_runs_in_the_chat(agent: Agent) -> None:
    session = ChatSession(agent.transport, tools=[add])
    reply = await asyncio.wait_for(
        session.send(script({"mcp_call": {"tool": "add", "arguments": {"a": 2, "b": 3}}}, {"text": "done"})), 60
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "mcp add: 5\n" in reply.text
    [server] = offered(agent)
    assert server["type"] == "http"
    assert server["name"] == "ai_widgets"
    assert server["url"].startswith("http://127.0.0.1:")
    [header] = server["headers"]
    assert header["name"] == "Authorization"
    assert header["value"].startswith("Bearer ")
    [call] = reply.tool_calls
    assert (call.tool_name, call.state, call.provider_executed) == ("add", ToolCallState.COMPLETED, False)
    assert call.tool_call_id.startswith("acp_mcp_")  # no card of the agent's to link: an id of its own


async def test_a_wrong_token_gets_401(agent: Agent) -> None:
    session = ChatSession(agent.transport, tools=[add])
    reply = await asyncio.wait_for(
        session.send(script({"mcp_call": {"tool": "add", "arguments": {"a": 1, "b": 1}, "token": "wrong"}})), 60
    )
    assert "mcp add failed:" in reply.text
    assert "401" in reply.text
    assert reply.tool_calls == []


async def test_nothing_is_offered_without_tools_or_with_offer_tools_off(tmp_path: Path) -> None:
    bare, off = Agent(tmp_path / "a"), Agent(tmp_path / "b", offer_tools=False)
    try:
        await ChatSession(bare.transport).send("hi")
        await ChatSession(off.transport, tools=[add]).send("hi")
        assert offered(bare) == []
        assert offered(off) == []
    finally:
        await bare.transport.aclose()
        await off.transport.aclose()


# --- one card per call, one question -------------------------------------------------------------------------------


def claude_call(call_id: str, tool_name: str, arguments: dict[str, Any], *after: dict[str, Any]) -> str:
    """Claude Code's shape: the call announced (twice), its permission asked, then the MCP call with the id."""
    return script(
        {"tool_call": {"id": call_id, "title": tool_name, "tool_name": f"mcp__ai_widgets__{tool_name}"}},
        {"tool_call": {"id": call_id, "title": tool_name, "raw_input": arguments}},
        {"permission": {"id": call_id, "title": tool_name, "raw_input": arguments}},
        {"mcp_call": {"tool": tool_name, "arguments": arguments, "meta": {TOOL_USE_ID: call_id}}},
        {"update": {"id": call_id, "status": "completed", "text": "agent's own result"}},
        *after,
    )


@pytest.mark.parametrize(("decision", "state"), [("approved", "completed"), ("rejected", "rejected")])
async def test_claude_codes_call_of_a_destructive_tool_is_one_card_that_asks_once(
    agent: Agent, decision: str, state: str
) -> None:
    session = ChatSession(agent.transport, tools=[drop_table])
    task = asyncio.create_task(session.send(claude_call("toolu_9", "drop_table", {"name": "users"}, {"text": "ok"})))
    card = await asked(session, task)
    assert card.tool_call_id == "toolu_9"  # the agent's card is the chat's own call
    assert card.tool_name == "drop_table"
    assert not card.provider_executed
    assert len(session.pending_approvals) == 1
    session.approve("toolu_9", decision)
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "permission toolu_9: allow\n" in reply.text  # the agent's own question, allowed at once
    [only] = reply.tool_calls
    assert (only.tool_call_id, only.state.value) == ("toolu_9", state)
    if decision == "approved":
        assert "mcp drop_table: dropped users\n" in reply.text
    else:
        assert "mcp drop_table error:" in reply.text
    assert "agent's own result" not in str(only.outcome)  # its later updates are the chat's card's, swallowed


async def test_gemini_clis_call_linked_by_name_is_one_card(agent: Agent) -> None:
    call_id = "mcp_ai_widgets_add__mcp_ai_widgets_add_1796411865540_0"
    session = ChatSession(agent.transport, tools=[add])
    reply = await asyncio.wait_for(
        session.send(
            script(
                {"permission": {"id": call_id, "title": "add (ai_widgets MCP Server)", "kind": "other"}},
                {"mcp_call": {"tool": "add", "arguments": {"a": 4, "b": 5}}},
                {"update": {"id": call_id, "status": "completed", "text": "9"}},
            )
        ),
        60,
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert f"permission {call_id}: allow\n" in reply.text
    assert "mcp add: 9\n" in reply.text
    [only] = reply.tool_calls
    assert (only.tool_call_id, only.tool_name, only.provider_executed) == (call_id, "add", False)


async def test_a_held_call_the_agent_never_makes_is_closed_not_lost(agent: Agent) -> None:
    session = ChatSession(agent.transport, tools=[add])
    reply = await asyncio.wait_for(
        session.send(
            script(
                {"tool_call": {"id": "toolu_1", "title": "add", "tool_name": "mcp__ai_widgets__add"}},
                {"update": {"id": "toolu_1", "status": "failed", "text": "The user refused it."}},
                {"tool_call": {"id": "toolu_2", "title": "add", "tool_name": "mcp__ai_widgets__add"}},
                {"text": "gave up"},
            )
        ),
        60,
    )
    assert reply.status is MessageStatus.COMPLETED, reply.error
    first, second = reply.tool_calls
    assert (first.tool_call_id, first.state, first.provider_executed) == ("toolu_1", ToolCallState.FAILED, True)
    assert first.outcome is not None
    assert "refused" in str(first.outcome.model_content())
    assert (second.tool_call_id, second.state) == ("toolu_2", ToolCallState.FAILED)
    assert second.outcome is not None
    assert NOT_RUN in str(second.outcome.model_content())


# --- run_python in the kernel ------------------------------------------------------------------------------------


@pytest.mark.parametrize("decision", ["approved", "rejected"])
async def test_run_python_from_the_agent_runs_in_the_namespace_with_the_code_card_and_approval(
    agent: Agent, decision: str
) -> None:
    namespace: dict[str, Any] = {"x": 1}
    session = ChatSession(agent.transport, tools=[KernelTools(namespace)])
    code = "x = 21\nprint('hello from the kernel')\nx * 2"
    task = asyncio.create_task(session.send(claude_call("toolu_py", "run_python", {"code": code})))
    card = await asked(session, task)
    assert (card.tool_call_id, card.tool_name, json.loads(card.arguments)) == ("toolu_py", "run_python", {"code": code})
    assert namespace["x"] == 1  # nothing runs before the person allows it
    session.approve("toolu_py", decision)
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    [only] = reply.tool_calls
    if decision == "approved":
        assert namespace["x"] == 21
        assert "mcp run_python: " in reply.text
        assert "hello from the kernel" in reply.text
        assert "42" in reply.text
        assert only.state is ToolCallState.COMPLETED
    else:
        assert namespace["x"] == 1
        assert "mcp run_python error:" in reply.text
        assert only.state is ToolCallState.REJECTED


async def test_stop_while_a_call_waits_cancels_it_and_the_agent_is_told(agent: Agent) -> None:
    session = ChatSession(agent.transport, tools=[drop_table])
    task = asyncio.create_task(session.send(claude_call("toolu_s", "drop_table", {"name": "t"}, {"wait_cancel": True})))
    await asked(session, task)
    session.stop()
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.CANCELLED
    await wait_for(lambda: bool(agent.log("mcp_result")), timeout=30)
    said = agent.log("mcp_result")[0]
    assert said == f"mcp drop_table error: {CANCELLED_CALL}"
    again = await asyncio.wait_for(session.send("next"), 60)
    assert again.text == "You said: next"


# --- the token -----------------------------------------------------------------------------------------------------


def token_of(agent: Agent) -> str:
    """The secret the agent was given for the offered server."""
    server = offered(agent)[0]
    if "headers" in server:
        value: str = server["headers"][0]["value"]
        return value.removeprefix("Bearer ")
    return str({item["name"]: item["value"] for item in server["env"]}["AI_WIDGETS_ACP_MCP_TOKEN"])


def history_files(where: Path) -> str:
    """The history file and its journal, as text."""
    return "".join(path.read_text() for path in sorted(where.glob("chat.json*")) if path.suffix != ".lock")


async def test_the_token_is_in_no_widget_state_transcript_history_file_or_repr(wire: Wire, tmp_path: Path) -> None:
    made = Agent(tmp_path)
    history = tmp_path / "chat.json"
    chat = ChatWidget(transport=made.transport, tools=[add], history=history, flush_interval=0)
    try:
        reply = await asyncio.wait_for(
            chat.ask(script({"mcp_call": {"tool": "add", "arguments": {"a": 1, "b": 2}}}), show=False), 60
        )
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert "mcp add: 3" in reply.text
        token = token_of(made)
        assert len(token) >= 32
        offers = list(made.transport._offers.values())
        assert offers
        await asyncio.to_thread(chat.session.flush_history, 30)
        exported = chat.export(tmp_path / "chat.md").read_text() + chat.export(tmp_path / "chat2.json").read_text()
        seen = {
            "widget state": json.dumps(chat.get_state(), default=str),
            "what the widget sent": json.dumps([s.data for s in wire.sent], default=str),
            "transcript": chat.transcript(),
            "history file": history_files(tmp_path),
            "exports": exported,
            "dump_messages": json.dumps(dump_messages(chat.session.messages)),
            "reprs": " ".join(map(repr, [made.transport, chat.session, *offers, reply, *reply.tool_calls])),
        }
        for where, text in seen.items():
            assert token not in text, where
        assert "mcp add: 3" in seen["history file"]  # the checks read the real thing
    finally:
        await chat.aclose()
        await made.transport.aclose()  # given to the widget, not the widget's own


@pytest.mark.parametrize("over", ["http", "stdio"])
async def test_an_agent_that_logs_its_servers_and_crashes_is_quoted_without_the_token(
    over: str, tmp_path: Path
) -> None:
    made = Agent(tmp_path, env={"ACP_AGENT_NO_HTTP": "1"} if over == "stdio" else None)
    try:
        steps = script({"stderr": "offered: $ACP_OFFERED"}, {"crash": 3})
        reply = await asyncio.wait_for(ChatSession(made.transport, tools=[add]).send(steps), 60)
        assert reply.status is MessageStatus.ERROR
        error = reply.error or ""
        assert "offered:" in error
        assert ("AI_WIDGETS_ACP_MCP" if over == "stdio" else "127.0.0.1") in error  # its last output, quoted
        assert token_of(made) not in error
    finally:
        await made.transport.aclose()


async def test_an_agent_error_that_repeats_the_servers_leaves_the_token_out(tmp_path: Path) -> None:
    made = Agent(tmp_path, env={"ACP_AGENT_REFUSE_SESSIONS": "1"})
    try:
        reply = await asyncio.wait_for(ChatSession(made.transport, tools=[add]).send("hi"), 60)
        assert reply.status is MessageStatus.ERROR
        token = token_of(made)
        assert "did not open a session" in (reply.error or "")
        assert "127.0.0.1" in (reply.error or "")  # the agent's error did repeat what it was offered
        assert token not in (reply.error or "")
        assert "[token]" in (reply.error or "")
    finally:
        await made.transport.aclose()


async def test_an_agent_without_mcp_over_http_is_offered_the_stdio_relay_and_calls_through_it(tmp_path: Path) -> None:
    made = Agent(tmp_path, env={"ACP_AGENT_NO_HTTP": "1"})
    try:
        session = ChatSession(made.transport, tools=[add])
        reply = await asyncio.wait_for(
            session.send(script({"mcp_call": {"tool": "add", "arguments": {"a": 20, "b": 22}}})), 60
        )
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert "mcp add: 42\n" in reply.text
        [server] = offered(made)
        assert server["args"] == ["-m", "ai_widgets.integrations._acp_bridge"]
        assert "type" not in server
        assert "headers" not in server
        env = {item["name"]: item["value"] for item in server["env"]}
        assert env["AI_WIDGETS_ACP_MCP_URL"].startswith("http://127.0.0.1:")
        assert token_of(made) not in json.dumps([server["command"], server["args"]])  # in its environment only
        [call] = reply.tool_calls
        assert (call.tool_name, call.state) == ("add", ToolCallState.COMPLETED)
    finally:
        await made.transport.aclose()


async def test_the_stdio_relay_with_a_wrong_token_fails_the_call_without_hanging(tmp_path: Path) -> None:
    made = Agent(tmp_path, env={"ACP_AGENT_NO_HTTP": "1"})
    try:
        session = ChatSession(made.transport, tools=[add])
        reply = await asyncio.wait_for(
            session.send(script({"mcp_call": {"tool": "add", "arguments": {"a": 1, "b": 1}, "token": "wrong"}})), 60
        )
        assert "mcp add failed:" in reply.text
        assert reply.tool_calls == []
    finally:
        await made.transport.aclose()


async def test_own_tool_says_yes_for_the_agents_names_of_the_offered_tools_only(agent: Agent) -> None:
    own = agent.transport.client.own_tool
    assert not own("mcp__ai_widgets__add")  # nothing offered before a session
    await asyncio.wait_for(ChatSession(agent.transport, tools=[add]).send("hi"), 60)
    assert own("mcp__ai_widgets__add")  # Claude Code's name
    assert own("mcp_ai_widgets_add")  # Gemini CLI's
    for other in ("add", "mcp__ai_widgets__drop_table", "mcp__other__add", "mcp_other_add", "mcp__acp__Write"):
        assert not own(other), other


async def test_the_tools_offered_follow_the_sessions_tools_at_each_request(agent: Agent) -> None:
    session = ChatSession(agent.transport, tools=[add])
    first = await asyncio.wait_for(session.send(script({"mcp_call": {"tool": "drop_table", "arguments": {}}})), 60)
    assert "mcp drop_table error: There is no tool named 'drop_table'" in first.text
    session.tools.add(drop_table)
    task = asyncio.create_task(session.send(script({"mcp_call": {"tool": "drop_table", "arguments": {"name": "t"}}})))
    card = await asked(session, task)
    assert card.tool_name == "drop_table"
    session.approve(card.tool_call_id, "approved")
    second = await asyncio.wait_for(task, 60)
    assert "mcp drop_table: dropped t\n" in second.text
    assert len(agent.log("new_session")) == 1  # the same server, its list refreshed


async def test_a_session_loaded_from_a_history_file_is_offered_the_tools_again(tmp_path: Path) -> None:
    first = Agent(tmp_path)
    history = tmp_path / "chat.json"
    try:
        await asyncio.wait_for(ChatSession(first.transport, tools=[add], history=history).send("hello"), 60)
    finally:
        await first.transport.aclose()
    second = Agent(tmp_path)
    try:
        resumed = ChatSession(second.transport, tools=[add], history=history)
        reply = await asyncio.wait_for(
            resumed.send(script({"mcp_call": {"tool": "add", "arguments": {"a": 3, "b": 4}}})), 60
        )
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert "mcp add: 7\n" in reply.text
        [loaded] = second.log("load_session")
        [server] = loaded["mcp_servers"]
        assert server["type"] == "http"
        assert server["headers"] != offered(first)[0]["headers"]  # a new server: a new token
    finally:
        await second.transport.aclose()


async def test_chat_widget_shows_the_agents_run_python_as_one_code_card_that_runs_in_the_namespace(
    wire: Wire, tmp_path: Path
) -> None:
    made = Agent(tmp_path)
    namespace: dict[str, Any] = {}
    chat = ChatWidget(transport=made.transport, tools=[KernelTools(namespace)], flush_interval=0)
    try:
        code = "total = sum(range(5))\ntotal"
        task = asyncio.create_task(chat.ask(claude_call("toolu_w", "run_python", {"code": code}), show=False))
        card = await asked(chat.session, task)
        assert (card.tool_call_id, card.tool_name) == ("toolu_w", "run_python")
        chat.session.approve("toolu_w", "approved")
        reply = await asyncio.wait_for(task, 60)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert namespace["total"] == 10
        assert "mcp run_python: " in reply.text
        sent = json.dumps([s.data for s in wire.sent], default=str)
        assert "toolu_w" in sent
        assert '"tool_name": "run_python"' in sent
        assert '"tool_name": "mcp__ai_widgets__run_python"' not in sent  # the agent's own card never went out
        [only] = reply.tool_calls
        assert (only.tool_name, only.provider_executed, only.state) == ("run_python", False, ToolCallState.COMPLETED)
    finally:
        await chat.aclose()
        await made.transport.aclose()


async def test_close_after_the_agent_crashed_stops_the_servers_of_the_tools_it_was_offered(tmp_path: Path) -> None:
    """``close()`` (sync, what ``ChatWidget.close`` calls) once the agent is gone: its tools' servers still listen."""
    made = Agent(tmp_path)
    reply = await asyncio.wait_for(ChatSession(made.transport, tools=[add]).send(script({"crash": 3})), 60)
    assert reply.status is MessageStatus.ERROR
    offers = list(made.transport._offers.values())
    assert offers
    assert all(offer.running for offer in offers)
    assert not made.transport.running
    made.transport.close()
    await wait_for(lambda: not any(offer.running for offer in offers))
    await wait_for(lambda: not any(t.name == THREAD_NAME for t in threading.enumerate()))
