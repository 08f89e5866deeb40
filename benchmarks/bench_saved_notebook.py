"""What a saved notebook weighs: one chat and 1 or 20 ``chat.ask`` cells, run in a real kernel (nbclient) and saved
with widget state (JupyterLab's "Save Widget State Automatically") and without it (JupyterLab's default).

Each ask cell shows its turn in a ``TurnView`` of its own, so with widget state each adds one widget model to the
notebook's metadata. The table shows the file's size, how much of the widget state is front-end code (the ``_esm``
and ``_css`` of every model, and the code the shared bundle model holds), and the ratio of 20 cells to 1; the goal
is at most 1.3 (the front-end code saved once per notebook, not once per widget).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

SETUP = """
from ai_widgets import ChatWidget
from ai_widgets.transports import ScriptedTransport
chat = ChatWidget(transport=ScriptedTransport(lambda request: "You asked: " + request.last_user_text, repeat=True))
"""
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CODE_KEYS = ("_esm", "_css", "code")


def _saved(asks: int, *, widget_state: bool, folder: Path) -> tuple[int, int]:
    notebook = nbformat.v4.new_notebook()
    cells = [SETUP, "chat"] + [f"reply = await chat.ask('question {i}')" for i in range(asks)]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        store_widget_state=widget_state,
        record_timing=False,  # as JupyterLab saves by default: no per-cell execution timestamps (~260 bytes a cell)
        resources={"metadata": {"path": str(folder)}},
    ).execute()
    path = folder / f"asks-{asks}-{widget_state}.ipynb"
    nbformat.write(notebook, path)
    state: dict[str, Any] = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    code = sum(len(str(model["state"].get(key, ""))) for model in state.values() for key in CODE_KEYS)
    return path.stat().st_size, code


def run(*, quick: bool = False) -> str:
    del quick  # four small notebooks either way
    rows = [
        "| widget state | ask cells | file (kB) | front-end code in it (kB) | 20 cells / 1 cell |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for widget_state in (True, False):
            sizes = {asks: _saved(asks, widget_state=widget_state, folder=Path(tmp)) for asks in (1, 20)}
            for asks, (size, code) in sizes.items():
                ratio = f"{size / sizes[1][0]:.2f}" if asks == 20 else ""
                rows.append(
                    f"| {'saved' if widget_state else 'none'} | {asks} | {size / 1000:.1f} | {code / 1000:.1f} | {ratio} |"
                )
    return "## Saved notebook size\n\n" + __doc__.split("\n\n", 1)[1] + "\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(run())
