"""``export("analysis.ipynb")``: messages as markdown cells, the code each code run ran as code cells, in order, and
nothing that runs on opening (issue 31, "Cells")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ai_widgets import ChatSession, Tool, ToolDefinition, ToolInvocation
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

CODE = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}


def code_tool(namespace: dict[str, Any]) -> Tool:
    """A tool that runs Python in ``namespace`` (the test's stand-in for KernelTools' run_python)."""

    def run(invocation: ToolInvocation) -> str:
        exec(invocation.get_arguments(dict)["code"], namespace)
        return "ok"

    definition = ToolDefinition(
        name="run_python", parameters=CODE, risk="destructive", code_arguments={"code": "python"}
    )
    return Tool(definition, run)


def echo_tool() -> Tool:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return Tool(ToolDefinition(name="echo", parameters=schema), lambda invocation: "echoed")


def run(code: str, id: str) -> ScriptedToolCall:
    return ScriptedToolCall(name="run_python", arguments={"code": code}, id=id)


async def decided(session: ChatSession, text: str, decide: dict[str, tuple[str, dict[str, Any] | None]]) -> None:
    """Sends ``text``; each call that asks is decided as ``decide`` says by its id (allowed by default)."""
    task = asyncio.create_task(session.send(text))
    while not task.done():
        for part in session.pending_approvals:
            decision, arguments = decide.get(part.tool_call_id, ("approved", None))
            session.approve(part.tool_call_id, decision, arguments=arguments)
        await asyncio.sleep(0.005)
    await task


async def test_the_notebook_holds_the_messages_and_the_code_as_it_ran(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    transport = ScriptedTransport(
        [
            ScriptedReply(
                text="Loading the data.",
                tool_calls=[run("rows = [3, 1, 2]", "c1"), ScriptedToolCall(name="echo", arguments={"text": "x"})],
            ),
            ScriptedReply(text="Sorting.", tool_calls=[run("rows.sort()", "c2"), run("import os", "c3")]),
            "Done: rows are sorted.",
        ]
    )
    session = ChatSession(transport, tools=[code_tool(namespace), echo_tool()])
    edited = {"code": "rows = sorted(rows)\ntotal = sum(rows)"}
    await decided(session, "Sort my rows", {"c2": ("approved", edited), "c3": ("rejected", None)})
    assert namespace["rows"] == [1, 2, 3]

    path = session.export(tmp_path / "analysis.ipynb")
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds == ["markdown", "markdown", "code", "markdown", "code", "markdown"]
    sources = [cell.source for cell in notebook.cells]
    assert sources[0] == "**You**\n\nSort my rows"
    assert sources[1] == "**Assistant**\n\nLoading the data."
    assert sources[2] == "rows = [3, 1, 2]"
    assert sources[3] == "🔧 `echo`: completed\n\nSorting."  # a call that runs no code is a line of markdown
    assert sources[4] == edited["code"]  # as it ran: the person's edit
    assert notebook.cells[4].metadata["ai_widgets"] == {
        "tool_call_id": "c2",
        "tool_name": "run_python",
        "state": "completed",
        "edited": True,
    }
    assert "import os" not in json.dumps(notebook)  # declined: it never ran
    assert sources[5] == "🔧 `run_python`: rejected\n\nDone: rows are sorted."
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert (cell.outputs, cell.execution_count) == ([], None)  # opening it runs and shows nothing


async def test_a_failed_run_is_kept_and_a_bad_suffix_refused(tmp_path: Path) -> None:
    transport = ScriptedTransport([ScriptedReply(tool_calls=[run("1 / 0", "c1")]), "It failed."])
    session = ChatSession(transport, tools=[code_tool({})])
    await decided(session, "divide", {})
    notebook = nbformat.reads(session.export(tmp_path / "a.IPYNB").read_text(), as_version=4)
    assert [c.source for c in notebook.cells if c.cell_type == "code"] == ["1 / 0"]
    with pytest.raises(ValueError, match=r"\.ipynb"):
        session.export(tmp_path / "a.txt")
