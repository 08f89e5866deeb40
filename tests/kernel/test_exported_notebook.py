"""A conversation exported as a notebook (``export("analysis.ipynb")``) runs in a real kernel with nbclient and
repeats the analysis: the code as it ran, edits included, in order (issue 31, "Cells")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from ai_widgets import ChatSession, Tool, ToolDefinition, ToolInvocation
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

CODE = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}


def test_run_all_repeats_the_analysis(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}

    def run(invocation: ToolInvocation) -> str:
        exec(invocation.get_arguments(dict)["code"], namespace)
        return "ok"

    tool = Tool(
        ToolDefinition(name="run_python", parameters=CODE, risk="destructive", code_arguments={"code": "python"}),
        run,
    )
    steps = [
        "import statistics\nreadings = [12.5, 11.0, 99.0, 12.0, 13.5]",
        "clean = [r for r in readings if r < 50]",  # edited below: the threshold the person chose
        "summary = f'{len(clean)} readings, mean {statistics.mean(clean):.2f}'\nprint(summary)",
    ]
    calls = [ScriptedToolCall(name="run_python", arguments={"code": code}, id=f"c{i}") for i, code in enumerate(steps)]
    transport = ScriptedTransport([ScriptedReply(text="Cleaning.", tool_calls=[c]) for c in calls] + ["Done."])
    session = ChatSession(transport, tools=[tool])
    edit = {"code": "clean = [r for r in readings if r < 20]"}

    async def analyse() -> None:
        task = asyncio.create_task(session.send("Clean the readings and summarise them"))
        while not task.done():
            for part in session.pending_approvals:
                session.approve(part.tool_call_id, "approved", arguments=edit if part.tool_call_id == "c1" else None)
            await asyncio.sleep(0.005)
        await task

    asyncio.run(analyse())
    path = session.export(tmp_path / "analysis.ipynb")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    assert printed == namespace["summary"] + "\n"
    assert printed == "4 readings, mean 12.25\n"
