"""A running call asks for approval (``ToolInvocation.ask_approval``): it waits in ``awaiting_approval``, decided like
any call (an edit, a decline, allow always), and a stop while it waits leaves the session usable."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import ApprovalDecision, ChatSession, MessageStatus, ToolCallState, ToolInvocation, tool
from ai_widgets.approval import ApprovalError
from ai_widgets.tools import NobodyToAskError
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for

ran: list[dict[str, Any]] = []


@tool
async def pay(amount: int, invocation: ToolInvocation) -> str:
    """Pays; a large amount asks first."""
    if amount > 100 and not await invocation.ask_approval(f"Pay {amount}?"):
        return "not paid"  # dropped: the call already ended rejected
    arguments = invocation.parsed_arguments or {}
    ran.append(arguments)
    return f"paid {arguments.get('amount', amount)}"


def paying(*amounts: int) -> ChatSession:
    ran.clear()
    calls = [ScriptedToolCall(name="pay", arguments={"amount": a}) for a in amounts]
    transport = ScriptedTransport([ScriptedReply(tool_calls=calls), "done", "again"])
    return ChatSession(transport, tools=[pay])


async def test_the_call_waits_and_runs_on_with_the_persons_edit() -> None:
    session = paying(500)
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    [waiting] = session.pending_approvals
    assert waiting.state is ToolCallState.AWAITING_APPROVAL
    assert waiting.approval_reason == "Pay 500?"
    assert ran == []
    with pytest.raises(ApprovalError):
        session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED, arguments={"amount": "lots"})
    session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED, arguments={"amount": 150})
    reply = await task
    [part] = reply.tool_calls
    assert (part.state, part.outcome.value, part.edited_arguments) == (
        ToolCallState.COMPLETED,
        "paid 150",
        {"amount": 150},
    )
    assert ran == [{"amount": 150}]


async def test_a_decline_ends_the_call_rejected_and_the_model_is_told() -> None:
    session = paying(500, 5)
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve(session.pending_approvals[0].tool_call_id, ApprovalDecision.REJECTED, "too much")
    reply = await task
    large, small = reply.tool_calls
    assert large.state is ToolCallState.REJECTED
    assert large.outcome.message == "The person declined this call, so nothing was done. Their reason: too much"
    assert small.outcome.value == "paid 5"
    assert ran == [{"amount": 5}]


async def test_allowed_always_goes_on_unasked_next_time() -> None:
    session = paying(500)
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve(session.pending_approvals[0].tool_call_id, ApprovalDecision.APPROVED_ALWAYS)
    await task
    session.transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="pay", arguments={"amount": 700})]), "ok"]
    )
    reply = await session.send("again")
    assert reply.tool_calls[0].outcome.value == "paid 700"
    assert reply.tool_calls[0].decision_remembered


async def test_a_stop_while_it_waits_cancels_it_and_the_next_turn_works() -> None:
    session = paying(500)
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    assert session.pending_approvals == []
    assert (await session.send("next")).status is MessageStatus.COMPLETED


async def test_outside_a_session_nobody_can_decide() -> None:
    with pytest.raises(NobodyToAskError, match="outside a chat session"):
        await ToolInvocation("c1", "pay").ask_approval("Pay?")
