"""The notebook's data in a real kernel (a notebook run by nbclient): a pandas DataFrame and a matplotlib figure
attached with ``attach=`` reach the model as the DataFrame's bounded text view and a PNG image part (the scripted
model reports what it received), and an ``output_type`` ask's object is used in the next cell."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
from nbclient import NotebookClient

SETUP = """
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pydantic

from ai_widgets import ChatWidget
from ai_widgets.transports import ScriptedTransport


def model(request):
    if request.output_schema is not None:
        return json.dumps({"region": "North", "total": 263.5})
    return "Five regions over twelve months; North sells most."


transport = ScriptedTransport(model)
chat = ChatWidget(transport=transport)
"""

DATA = """
months = [f"2025-{m:02d}" for m in range(1, 13)]
sales = pd.DataFrame({
    "month": months * 5,
    "region": ["North", "South", "East", "West", "Centre"] * 12,
    "revenue": [float(i * 3 % 17 + 10) for i in range(60)],
})
fig, ax = plt.subplots(figsize=(4, 3))
sales.groupby("region")["revenue"].sum().plot.bar(ax=ax)
plt.close(fig)
"""

ATTACH = """
reply = await chat.ask("Summarise the sales", attach={"sales": sales, "chart": fig}, show=False)
received = [
    {"kind": p.kind, "text": getattr(p, "text", None), "media_type": getattr(p, "media_type", None),
     "name": getattr(p, "name", None), "size": getattr(p, "size", None)}
    for p in [m for m in transport.requests[-1].messages if m.role.value == "user"][-1].parts
]  # the person's message as the model got it (the reply in progress comes after it)
print("RECEIVED", json.dumps(received))
print("REPLY", reply.text)
"""

TYPED = """
class Best(pydantic.BaseModel):
    region: str
    total: float


best = await chat.ask("Which region sells most?", output_type=Best)
"""

NEXT = """
print("NEXT", type(best).__name__, best.region, best.total * 2, chat.session.messages[-1].output is best)
print("SCHEMA", sorted(transport.requests[-1].output_schema["properties"]))
"""


def _printed(cell: nbformat.NotebookNode, prefix: str) -> str:
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    lines = [line for line in text.splitlines() if line.startswith(prefix + " ")]
    assert len(lines) == 1, text
    return lines[0][len(prefix) + 1 :]


def test_attached_data_reaches_the_model_and_a_typed_answer_the_next_cell(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (SETUP, DATA, ATTACH, TYPED, NEXT)]
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [o for cell in notebook.cells for o in cell.outputs if o.output_type == "error"]
    assert errors == [], errors

    question, table, image = json.loads(_printed(notebook.cells[2], "RECEIVED"))
    assert question == {"kind": "text", "text": "Summarise the sales", "media_type": None, "name": None, "size": None}
    # The DataFrame: its bounded text view (shape, columns and dtypes, the first rows, what was left out), not the
    # whole frame.
    view = table["text"]
    assert table["kind"] == "text"
    assert view.startswith("Attached pandas DataFrame `sales`:\n60 rows × 3 columns\nColumns (dtype): month ")
    assert "revenue (float64)" in view
    assert "| 19 | 2025-08 | Centre | 16.0 |" in view
    assert "| 20 |" not in view
    assert "Not shown: 40 of 60 rows" in view
    # The figure: one PNG image part.
    assert image["kind"] == "file"
    assert image["media_type"] == "image/png"
    assert image["size"] > 2_000
    assert _printed(notebook.cells[2], "REPLY") == "Five regions over twelve months; North sells most."

    # The typed ask: its cell shows the turn; the next cell uses the object, the reply keeps it.
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in notebook.cells[3].outputs)
    assert _printed(notebook.cells[4], "NEXT") == "Best North 527.0 True"
    assert _printed(notebook.cells[4], "SCHEMA") == "['region', 'total']"
