"""Running without asking: a tool's own ``unasked`` reason and the session's switch ("Run code without asking"),
and the mark on every call they spare (issue 31, "Trust")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import ChatSession, Tool, ToolCallPart, ToolCallState, ToolDefinition
from ai_widgets.messages import conversation_markdown
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for

CODE = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def code_tool(**options: Any) -> Tool:
    definition = ToolDefinition(
        name="run_code", parameters=CODE, risk="destructive", code_arguments={"code": "python"}, **options
    )
    return Tool(definition, lambda invocation: "ran")


def wipe_tool() -> Tool:
    return Tool(ToolDefinition(name="wipe", parameters=PATH, risk="destructive"), lambda invocation: "wiped")


def look_tool() -> Tool:
    return Tool(ToolDefinition(name="look", parameters=PATH, risk="read_only"), lambda invocation: "seen")


def calling(*calls: tuple[str, dict[str, Any]]) -> ScriptedTransport:
    made = [ScriptedToolCall(name=name, arguments=arguments) for name, arguments in calls]
    return ScriptedTransport([ScriptedReply(tool_calls=made), "done"])


async def run_turn(session: ChatSession) -> list[ToolCallPart]:
    """Sends a message; every call that asks is declined (so a test sees which asked); returns the calls."""
    task = asyncio.create_task(session.send("go"))
    while not task.done():
        for part in session.pending_approvals:
            session.approve(part.tool_call_id, "rejected")
        await asyncio.sleep(0.005)
    await task
    return session.messages[1].tool_calls


async def test_a_tools_own_reason_spares_the_call_and_marks_it() -> None:
    session = ChatSession(
        calling(("run_code", {"code": "x = 1"})), tools=[code_tool(unasked="KernelTools(ask='never')")]
    )
    (call,) = await run_turn(session)
    assert call.state is ToolCallState.COMPLETED
    assert call.unasked_reason == "KernelTools(ask='never')"
    assert call.decision is None
    restored = ToolCallPart.from_dict(call.to_dict())
    assert restored.unasked_reason == "KernelTools(ask='never')"  # kept in the history
    assert "ran without asking: KernelTools(ask='never')" in conversation_markdown(session.messages)


async def test_the_session_switch_spares_code_tools_only_until_asked_again() -> None:
    session = ChatSession(
        calling(("run_code", {"code": "x = 1"}), ("wipe", {"path": "a"}), ("look", {"path": "a"})),
        tools=[code_tool(), wipe_tool(), look_tool()],
    )
    session.run_unasked("code", "Run code without asking is on")
    code, wipe, look = await run_turn(session)
    assert (code.state, code.unasked_reason) == (ToolCallState.COMPLETED, "Run code without asking is on")
    assert (wipe.state, wipe.unasked_reason) == (ToolCallState.REJECTED, None)  # not a code tool: it asked
    assert (look.state, look.unasked_reason) == (ToolCallState.COMPLETED, None)  # never asked: nothing spared

    session.ask_again()
    session.transport = calling(("run_code", {"code": "x = 2"}))
    session.clear()
    (again,) = await run_turn(session)
    assert (again.state, again.unasked_reason) == (ToolCallState.REJECTED, None)


async def test_the_switch_by_name() -> None:
    session = ChatSession(calling(("wipe", {"path": "a"})), tools=[wipe_tool()])
    session.run_unasked(["WIPE"], "the person trusts wipe today")
    (call,) = await run_turn(session)
    assert call.unasked_reason == "the person trusts wipe today"
    assert session.unasked is not None
    assert session.unasked.reason == "the person trusts wipe today"


def test_bad_switches_and_reasons_are_refused() -> None:
    session = ChatSession(calling())
    with pytest.raises(ValueError, match="reason"):
        session.run_unasked("code", " ")
    with pytest.raises(ValueError, match="tool names"):
        session.run_unasked("wipe", "a name given as text")
    with pytest.raises(ValueError, match="at least one"):
        session.run_unasked([], "nothing")
    assert session.unasked is None
    with pytest.raises(ValueError, match="unasked"):
        ToolDefinition(name="t", unasked="")


async def test_the_switch_is_never_restored_from_a_history_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(calling(("run_code", {"code": "x = 1"})), tools=[code_tool()], history=path)
    session.run_unasked()
    (call,) = await run_turn(session)
    assert call.unasked_reason == "Run code without asking is on"
    session.close()
    reopened = ChatSession(calling(("run_code", {"code": "y"})), tools=[code_tool()], history=path)
    assert reopened.unasked is None
    assert reopened.messages[1].tool_calls[0].unasked_reason == "Run code without asking is on"  # the mark stays
    task = asyncio.create_task(reopened.send("again"))
    await wait_for(lambda: bool(reopened.pending_approvals))  # it asks again
    reopened.stop()
    await task
    reopened.close()
