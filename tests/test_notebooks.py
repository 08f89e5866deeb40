"""Every demo notebook runs from top to bottom in a real kernel without an error."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
# Notebooks that need optional extras (cluster.ipynb starts a Dask LocalCluster, mcp.ipynb an MCP server,
# agents.ipynb a pydantic-ai agent and an ACP agent).
NEEDS = {"cluster.ipynb": ("distributed",), "mcp.ipynb": ("mcp",), "agents.ipynb": ("pydantic_ai", "acp")}
# What a person does after Run All, run as one more cell: in agents.ipynb, click the remote chat's suggestion (its
# AG-UI server must still run; before, Run All's last cells stopped it: "Could not reach The AG-UI agent").
AFTER_RUN_ALL = {
    "agents.ipynb": (
        "after = await remote.ask('How many apples?', show=False)\n"
        "print('after Run All:', after.status.value, '|', after.text.strip())"
    ),
}


def _notebook_param(path: Path) -> object:
    marks = [pytest.mark.slow]  # each starts a kernel and runs every cell: seconds
    for needs in NEEDS.get(path.name, ()):
        missing = importlib.util.find_spec(needs) is None
        marks.append(pytest.mark.skipif(missing, reason=f"{needs} is not installed"))
    return pytest.param(path, id=path.stem, marks=marks)


def test_there_are_notebooks() -> None:
    assert any(p.name == "quickstart.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", [_notebook_param(p) for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The demos must run on the scripted model here, never on a provider a developer happens to have configured.
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AI_WIDGETS_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "notebooks are committed without outputs"
    )
    if path.name in AFTER_RUN_ALL:
        notebook.cells.append(nbformat.v4.new_code_cell(AFTER_RUN_ALL[path.name]))
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    widget_views = [
        o
        for cell in notebook.cells
        for o in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    if path.name == "quickstart.ipynb":
        assert widget_views, "the quickstart shows its widget"
        _check_the_data_section(notebook)
    if path.name == "cluster.ipynb":
        assert widget_views, "the cluster notebook shows its chat"
        printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
        # The tool ran on the worker and its last progress report, sent from there, reached the card.
        assert "count_primes: completed; its card showed 100%, '25,997 primes below 300,000'" in printed, printed
    if path.name == "agents.ipynb":
        printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
        # In process: the agent's tool read its deps; the sale waited and ran with the arguments as edited.
        assert "stock_of completed -> There are 4 pears in stock." in printed, printed
        assert "stock: {'apples': 10, 'pears': 4} sold: ['2 apples']" in printed, printed
        # Over AG-UI: the agent's tools ran on the server, the sale after the approval went back as the resume.
        assert "stock_of ran on the server: True -> There are 12 apples in stock." in printed, printed
        assert "The server asks: sell {'item': 'pears', 'count': 3}" in printed, printed
        assert "the server's stock: {'apples': 12, 'pears': 1}" in printed, printed
        # Over ACP: the test agent's edit asked with its diff, nothing written before Allow, then written.
        assert "The agent asks: Edit hello.py (edit)" in printed, printed
        assert "+    return 'hello ' + name" in printed, printed
        assert "on disk, still: \"def greet(name):   \\n\\treturn 'hello ' + name\\n\\n\\n\"" in printed, printed
        assert "I tidied hello.py: no trailing spaces or tabs, one newline at the end." in printed, printed
        assert "plan: [('Read the file', 'completed'), ('Propose the edit', 'completed'), " in printed, printed
        assert "calls: [('read', 'completed'), ('edit', 'completed')]" in printed, printed
        assert "the file now: \"def greet(name):\\n    return 'hello ' + name\\n\"" in printed, printed
        assert len(widget_views) >= 3, "the ACP chat shows too"
        assert len(widget_views) >= 2, "both chats show (and the asking cells their turns)"
        # The AG-UI server lives as long as the kernel: the remote chat still answers after Run All.
        assert "after Run All: completed | There are 12 apples in stock." in printed, printed
    if path.name == "tool_workbench.ipynb":
        printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
        # A clean tool, a sloppy one warned about; the model's call works, breaks after the bad edit, and the failed
        # call replayed on the fixed tool succeeds without adding to the conversation.
        for line in (
            "warnings: []",
            "missing-description",
            "by hand: success {'city': 'Lisbon', 'forecast': ['sunny', 'sunny']}",
            "model: Let me look. Forecast for Oslo: snow, cloudy.",
            "call: failed - KeyError",
            "replayed: success {'city': 'Oslo', 'forecast': ['snow', 'cloudy']}",
            "messages in the chat: 4",
        ):
            assert line in printed, (line, printed)
    if path.name == "analysis.ipynb":
        _check_the_analysis(notebook, tmp_path)


def _check_the_analysis(notebook: nbformat.NotebookNode, folder: Path) -> None:
    """The scripted model inspected the data, cleaned it and plotted it in two allowed runs; the plot run was undone;
    and the exported notebook, run again on its own in a new kernel, repeats the analysis."""
    printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    for line in (
        "call_3 completed created: ('clean', 'limit', 'outliers')",
        "call_4 completed created: ('ax', 'fig', 'plt')",
        "195 clean rows; 2 outliers",
        "Undid call_4: removed ax, fig, plt.",
        "False True",  # fig gone, clean kept
    ):
        assert line in printed, (line, printed)
    outputs = json.dumps([cell.get("outputs", []) for cell in notebook.cells])
    assert "api_key" in outputs, "the secret's name is listed"
    assert "demo-not-a-real-key-4711" not in outputs, "the secret's value is never shown"
    exported = nbformat.read(folder / "analysis_export.ipynb", as_version=4)
    code = [cell.source for cell in exported.cells if cell.cell_type == "code"]
    assert len(code) == 2
    assert code[0].startswith("import pandas as pd")
    assert "plt.show()" in code[1]
    NotebookClient(
        exported, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    again = "".join(o.get("text", "") for cell in exported.cells for o in cell.get("outputs", []))
    assert "kept 195 of 200 rows; 2 outliers above" in again, again
    assert any("image/png" in o.get("data", {}) for cell in exported.cells for o in cell.get("outputs", []))


def _check_the_data_section(notebook: nbformat.NotebookNode) -> None:
    """The quickstart's "Your data" cells: the analyst chat and each ask's turn show, and the typed answer's object is
    used in the next cell (the analyst computed it from the DataFrame's text view it was sent)."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    start = next(i for i, cell in enumerate(code) if "analyst = ChatWidget(" in cell.source)
    views = ["application/vnd.jupyter.widget-view+json" in o.get("data", {}) for c in code[start:-1] for o in c.outputs]
    assert views.count(True) == 4, "the analyst chat, then the turn of each of its three asks"
    printed = "".join(o.get("text", "") for o in code[-1].outputs)
    assert printed == "East grew 97%: from 60 to 118\n", printed
