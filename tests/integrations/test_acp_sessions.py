"""Which agent session an ACP chat talks to, and what it is told when it begins, driven through ``ChatSession``
against the test agent as a real subprocess: Claude Code gets the chat's system prompt in ``session/new``'s
``_meta.systemPrompt`` (other agents as the first prompt's resource), and a new agent session, given the
conversation as it now is, follows an edit, a regenerate or a switch of branch (the reply's status says so)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp")

from ai_widgets import ChatSession, MessageStatus
from ai_widgets.changes import MessageUpdated
from ai_widgets.integrations._acp_transport import NEW_SESSION_NOTICE
from ai_widgets.options import RequestOptions
from tests.integrations.acp_harness import Agent

pytestmark = pytest.mark.slow  # each test starts an agent process


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    made = Agent(tmp_path)
    yield made
    await made.transport.aclose()


def resources(prompt: list[dict[str, Any]]) -> list[str]:
    return [block["resource"]["text"] for block in prompt if block["type"] == "resource"]


def statuses(session: ChatSession) -> list[str]:
    """Every status line the replies show from now on."""
    seen: list[str] = []

    def record(change: object) -> None:
        if isinstance(change, MessageUpdated) and change.message.status_text:
            seen.append(change.message.status_text)

    session.subscribe(record)
    return seen


async def test_claude_code_gets_the_system_prompt_in_session_new(tmp_path: Path) -> None:
    claude = Agent(tmp_path, env={"ACP_AGENT_NAME": "@zed-industries/claude-code-acp"})
    try:
        session = ChatSession(claude.transport, request_options=RequestOptions(system_prompt="Be brief."))
        reply = await asyncio.wait_for(session.send("hello"), 60)
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert claude.transport.is_claude_code
        assert claude.log("new_session")[0]["meta"] == {"systemPrompt": {"append": "Be brief."}}
        assert claude.log("prompt")[0] == [{"type": "text", "text": "hello"}]  # not again as a resource
    finally:
        await claude.transport.aclose()


async def test_another_agent_gets_the_system_prompt_as_the_first_resource(agent: Agent) -> None:
    session = ChatSession(agent.transport, request_options=RequestOptions(system_prompt="Be brief."))
    await asyncio.wait_for(session.send("hello"), 60)
    assert not agent.transport.is_claude_code
    assert agent.log("new_session")[0]["meta"] == {}
    assert resources(agent.log("prompt")[0]) == ["Be brief."]


async def test_an_edit_starts_a_new_agent_session_with_the_conversation_as_it_now_is(agent: Agent) -> None:
    session = ChatSession(agent.transport, request_options=RequestOptions(system_prompt="Be brief."))
    await asyncio.wait_for(session.send("first"), 60)
    second = await asyncio.wait_for(session.send("second"), 60)
    assert len(agent.log("new_session")) == 1  # an ordinary turn keeps the agent's session
    shown = statuses(session)
    edited_id = session.messages[-2].id
    reply = await asyncio.wait_for(session.edit(edited_id, "second, edited"), 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "You said: second, edited"
    first_id, again_id = (entry["id"] for entry in agent.log("new_session"))
    assert again_id != first_id
    assert reply.provider_state["acp"]["session_id"] == again_id
    assert second.provider_state["acp"]["session_id"] == first_id
    prompt = agent.log("prompt")[-1]
    assert resources(prompt) == ["Be brief.", "User: first\n\nAssistant: You said: first"]
    assert prompt[-1] == {"type": "text", "text": "second, edited"}
    assert NEW_SESSION_NOTICE in shown
    after = await asyncio.wait_for(session.send("third"), 60)  # the new session goes on as usual
    assert after.text == "You said: third"
    assert len(agent.log("new_session")) == 2
    assert agent.log("prompt")[-1] == [{"type": "text", "text": "third"}]


async def test_a_regenerate_starts_a_new_agent_session_that_answers_the_last_message_again(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    await asyncio.wait_for(session.send("first"), 60)
    await asyncio.wait_for(session.send("second"), 60)
    shown = statuses(session)
    reply = await asyncio.wait_for(session.regenerate(), 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "You said: second"
    assert len(agent.log("new_session")) == 2
    prompt = agent.log("prompt")[-1]
    assert resources(prompt) == ["User: first\n\nAssistant: You said: first"]
    assert prompt[-1] == {"type": "text", "text": "second"}
    assert NEW_SESSION_NOTICE in shown


async def test_switching_back_to_an_earlier_branch_starts_a_new_agent_session_for_it(agent: Agent) -> None:
    session = ChatSession(agent.transport)
    await asyncio.wait_for(session.send("first"), 60)
    await asyncio.wait_for(session.regenerate(), 60)
    assert len(agent.log("new_session")) == 2
    point = session.switch_branch(session.messages[-1].id, 0)  # back to the first reply
    assert point.active == 0
    reply = await asyncio.wait_for(session.send("next"), 60)
    assert reply.text == "You said: next"
    assert len(agent.log("new_session")) == 3
    prompt = agent.log("prompt")[-1]
    assert resources(prompt) == ["User: first\n\nAssistant: You said: first"]
    assert prompt[-1] == {"type": "text", "text": "next"}
