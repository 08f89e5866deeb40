"""A server that asks to run the chat's model (MCP sampling) through a session: the calling card waits in
``awaiting_approval`` with what would be sent, ``session.approve`` decides, the session's own transport answers,
and the answer (or the decline) goes back to the server. The server (``tests/mcp/servers/asking_server.py``) runs in
each protocol era (2025-11-25: a request of its own; 2026-07-28: an input-required result of the call)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ApprovalError, ChatSession
from ai_widgets.approval import ApprovalDecision
from ai_widgets.messages import MessageStatus, ToolCallPart, ToolCallState, dump_messages, load_messages
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedTransport
from tests.helpers import NeverAsk, wait_for
from tests.mcp.mcp_harness import ERAS, Asking, asking_server, call

pytestmark = pytest.mark.slow


@pytest.fixture(params=ERAS)
async def asking(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Asking]:
    async with asking_server(request.param, tmp_path / "asking.log") as server:
        yield server


TEXT = "The committee met on Tuesday and agreed to repaint the bike shed green."


async def _asked(session: ChatSession) -> ToolCallPart:
    await wait_for(lambda: bool(session.pending_approvals), timeout=30)
    (part,) = session.pending_approvals
    assert part.state is ToolCallState.AWAITING_APPROVAL
    return part


def _session(asking: Asking, *replies: Any, seen: list[ChatRequest] | None = None) -> ChatSession:
    def reply_to(request: ChatRequest) -> Any:
        if seen is not None:
            seen.append(request)
        return replies[len(seen or []) - 1] if seen is not None else None

    transport = ScriptedTransport(reply_to if seen is not None else list(replies))
    return ChatSession(transport, tools=[asking.server], approval_policy=NeverAsk())


async def test_an_allowed_request_runs_on_the_sessions_model_and_goes_back(asking: Asking) -> None:
    seen: list[ChatRequest] = []
    session = _session(
        asking,
        call("summarize", {"text": TEXT}),
        ScriptedReply(text="Shed to be painted green.<END> and more"),
        "It is summarised.",
        seen=seen,
    )
    turn = asyncio.ensure_future(session.send("summarise the minutes"))
    part = await _asked(session)
    question = part.approval_reason or ""
    assert question.startswith("The MCP server 'asking-server' asks to send this to the chat's model")
    assert "at most 60 tokens" in question
    assert "System: You write one-line summaries." in question
    assert f"User: Summarise in one line: {TEXT}" in question
    assert len(seen) == 1  # nothing was sent before the person allowed it
    with pytest.raises(ApprovalError, match="not edited"):
        session.approve(part.tool_call_id, ApprovalDecision.APPROVED, arguments={"text": "other"})
    session.approve(part.tool_call_id, ApprovalDecision.APPROVED)
    reply = await asyncio.wait_for(turn, 30)
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.COMPLETED
    assert part.outcome is not None
    assert "summary: Shed to be painted green." in str(part.outcome.value)  # cut at the stop sequence
    assert asking.lines() == ["summarize unknown stopSequence Shed to be painted green."]
    sampled = seen[1]  # the sampling request: its own messages, no tools, its system prompt and limit
    assert [m.text for m in sampled.messages] == [f"Summarise in one line: {TEXT}"]
    assert sampled.tools == []
    assert sampled.options.system_prompt == "You write one-line summaries."
    assert sampled.options.max_tokens == 60
    assert part.decision is None  # the call's own decision is as it was (NeverAsk: nobody was asked to run it)
    # The history keeps the call as it ended, and loads.
    assert load_messages(dump_messages(session.messages))[-1].tool_calls[0].state is ToolCallState.COMPLETED


async def test_a_decline_is_told_to_the_server_and_nothing_is_sent(asking: Asking) -> None:
    seen: list[ChatRequest] = []
    session = _session(asking, call("summarize", {"text": TEXT}), "Declined, then.", seen=seen)
    turn = asyncio.ensure_future(session.send("summarise"))
    part = await _asked(session)
    session.approve(part.tool_call_id, ApprovalDecision.REJECTED, reason="not now")
    await asyncio.wait_for(turn, 30)
    assert len(seen) == 2  # the turn's two requests, and no sampling request
    assert part.state is ToolCallState.FAILED  # the server's tool failed on the decline
    assert part.outcome is not None
    assert "The person declined the request of the MCP server 'asking-server' to run the model: not now" in (
        part.outcome.message or ""
    )
    assert asking.lines() == []


async def test_allow_always_runs_later_requests_of_the_tool_unasked(asking: Asking) -> None:
    session = _session(
        asking,
        call("summarize", {"text": TEXT}),
        "One.",
        "First done.",
        call("summarize", {"text": "again"}),
        "Two.",
        "Second done.",
    )
    turn = asyncio.ensure_future(session.send("first"))
    part = await _asked(session)
    session.approve(part.tool_call_id, ApprovalDecision.APPROVED_ALWAYS)
    await asyncio.wait_for(turn, 30)
    second = await asyncio.wait_for(session.send("second"), 30)
    assert second.tool_calls[0].state is ToolCallState.COMPLETED
    assert [line.split(" ", 3)[3] for line in asking.lines()] == ["One.", "Two."]


async def test_stop_while_waiting_cancels_the_call_and_leaves_a_valid_history(asking: Asking) -> None:
    session = _session(asking, call("summarize", {"text": TEXT}), "unused", "unused")
    turn = asyncio.ensure_future(session.send("summarise"))
    part = await _asked(session)
    session.stop()
    reply = await asyncio.wait_for(turn, 30)
    assert reply.status is MessageStatus.CANCELLED
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is not None
    assert "before it finished" in (part.outcome.message or "")  # it had run: not "before it ran"
    assert load_messages(dump_messages(session.messages))[-1].tool_calls[0].state is ToolCallState.CANCELLED
    assert session.pending_approvals == []


async def test_a_session_without_a_model_refuses_and_the_server_is_told(asking: Asking) -> None:
    session = ChatSession(tools=[asking.server], approval_policy=NeverAsk())
    reply = await asyncio.wait_for(session.run_call("summarize", {"text": TEXT}), 30)
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "no model to run" in (part.outcome.message or "")  # type: ignore[union-attr]
