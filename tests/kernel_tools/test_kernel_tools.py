"""KernelTools as a source of tools, beyond running code: what a run changed (on its cell and in the model's line),
``undo``, and the variable tools, through a session in a plain dict namespace."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from ai_widgets import ChatSession, ToolCallPart, ToolCallState
from ai_widgets.kernel import KernelTools, UndoError
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import NeverAsk, wait_for


def calling(tool_name: str, call_id: str, **arguments: Any) -> ScriptedReply:
    return ScriptedReply(tool_calls=(ScriptedToolCall(name=tool_name, arguments=arguments, id=call_id),))


async def turn(tools: KernelTools, *replies: ScriptedReply) -> list[ToolCallPart]:
    session = ChatSession(ScriptedTransport([*replies, "done"]), tools=[tools], approval_policy=NeverAsk())
    await session.send("go")
    return [part for message in session.messages for part in message.tool_calls]


def told(part: ToolCallPart) -> str:
    assert part.outcome is not None
    return part.outcome.model_content()


async def test_a_run_says_what_it_changed_and_undo_puts_it_back_newest_first() -> None:
    rows = [1, 2]
    frame = {"a": 1}
    namespace: dict[str, Any] = {"rows": rows, "frame": frame, "tmp": 0}
    tools = KernelTools(namespace)
    first, second = await turn(
        tools,
        calling("run_python", "c1", code="frame = {'b': 2}\ndel tmp\nnew = 1\nrows.append(3)"),
        calling("run_python", "c2", code="frame = None"),
    )
    cell = first.outcome.cell if first.outcome else None
    assert cell is not None
    assert (cell.created, cell.rebound, cell.deleted, cell.mutated) == (("new",), ("frame",), ("tmp",), ("rows",))
    assert told(first).endswith(
        "Changed: created new; rebound frame; deleted tmp; changed in place: rows (cannot be undone)."
    )
    assert second.state is ToolCallState.COMPLETED
    with pytest.raises(UndoError, match=r"a later run \(c2\) changed frame too. Undo c2"):
        tools.undo("c1")
    assert namespace["frame"] is None  # nothing was undone
    assert "put back frame" in tools.undo("c2")
    said = tools.undo("c1")
    assert "removed new" in said
    assert "put back frame, tmp" in said
    assert "cannot be undone" in said
    assert namespace["frame"] is frame
    assert namespace["tmp"] == 0
    assert "new" not in namespace
    assert namespace["rows"] is rows
    assert rows == [1, 2, 3]  # in place: not undone, and said so
    with pytest.raises(UndoError, match="undone already"):
        tools.undo("c1")
    with pytest.raises(UndoError, match="no run of code by that call"):
        tools.undo("nope")


async def test_a_stopped_run_records_what_it_changed_until_then() -> None:
    gate = threading.Event()
    namespace: dict[str, Any] = {"gate": gate}
    tools = KernelTools(namespace, timeout=0.3)
    [part] = await turn(tools, calling("run_python", "c1", code="made = 1\nwhile True:\n    pass"))
    assert part.state is ToolCallState.CANCELLED
    assert part.outcome is not None
    assert part.outcome.cell is not None
    assert part.outcome.cell.created == ("made",)
    assert "Changed: created made." in told(part)
    assert "removed made" in tools.undo("c1")


async def test_undo_is_refused_while_code_runs() -> None:
    gate = threading.Event()
    namespace: dict[str, Any] = {"gate": gate}
    tools = KernelTools(namespace)
    [_] = await turn(tools, calling("run_python", "c1", code="x = 1"))
    session = ChatSession(
        ScriptedTransport([calling("run_python", "c2", code="gate.wait(5)"), "done"]),
        tools=[tools],
        approval_policy=NeverAsk(),
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    with pytest.raises(UndoError, match="while run_python code runs"):
        tools.undo("c1")
    gate.set()
    await task
    assert "removed x" in tools.undo("c1")


async def test_the_variable_tools_list_and_inspect_and_never_show_a_secret() -> None:
    pytest.importorskip("pandas")
    import pandas as pd

    namespace: dict[str, Any] = {
        "sales": pd.DataFrame({"region": ["north", "south"], "amount": [10, 20]}),
        "api_key": "sk-secret-123456789",
        "n": 3,
    }
    listed, inspected, secret, missing = await turn(
        KernelTools(namespace),
        calling("list_variables", "l1"),
        calling("inspect_variable", "i1", name="sales"),
        calling("inspect_variable", "i2", name="api_key"),
        calling("inspect_variable", "i3", name="sale"),
    )
    assert listed.state is ToolCallState.COMPLETED
    assert "sales" in told(listed)
    assert "api_key" in told(listed)
    assert "sk-secret" not in told(listed)
    assert "north" in told(inspected)
    assert secret.state is ToolCallState.FAILED
    assert "looks like a secret" in told(secret)
    assert "sk-secret" not in told(secret)
    assert missing.state is ToolCallState.FAILED
    assert "did you mean sales" in told(missing)


async def test_ask_never_runs_unasked_and_marks_the_call_and_always_asks_again() -> None:
    namespace: dict[str, Any] = {}
    tools = KernelTools(namespace, ask="never")
    session = ChatSession(
        ScriptedTransport(
            [calling("run_python", "c1", code="x = 1"), "ok", calling("run_python", "c2", code="y = 2"), "done"]
        )
    )
    session.tools.add(tools)
    await session.send("go")
    [first] = [p for m in session.messages for p in m.tool_calls]
    assert first.state is ToolCallState.COMPLETED
    assert first.unasked_reason == "KernelTools(ask='never')"
    assert namespace["x"] == 1
    tools.ask = "always"
    task = asyncio.create_task(session.send("again"))
    await wait_for(lambda: bool(session.pending_approvals))
    [second] = session.pending_approvals
    assert second.unasked_reason is None
    session.approve(second.tool_call_id, "rejected")
    await task
    assert "y" not in namespace
