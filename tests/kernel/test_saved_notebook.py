"""A notebook run in a real kernel (nbclient) and saved.

With no widget state, as JupyterLab saves by default, it still shows the conversation as of its last turn: in each
output's static transcript, and in ``jupyter nbconvert --to html`` of it, with none of the hostile texts the model
and its tool wrote able to run script. With widget state, the front-end code is in it once, however many views."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ai_widgets.widget._bundle import LOADER
from tests.widget.transcript_checks import HOSTILE, HOSTILE_NAMES, PNG, image_names, script_problems, visible_text

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: A reply in markdown: a saved notebook shows it formatted (a table, a code block, emphasis), not as its characters.
ANSWER_THREE = (
    "Answer three.\n\n| region | revenue |\n|---|--:|\n| East | **118** |\n\n```python\nprint('grew most')\n```\n\n"
    "[see](javascript:alert('aiw-xss-md-link')) <img src=x onerror=alert('aiw-xss-md-img')>"
)

SETUP = f"""
import base64
from ai_widgets import ChatWidget, File, ToolOutcome, tool
from ai_widgets.outcome import Attachment
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

HOSTILE = {HOSTILE!r}
NAMES = {HOSTILE_NAMES!r}
PNG = {PNG!r}
ANSWER_THREE = {ANSWER_THREE!r}

@tool
def lookup(query: str) -> ToolOutcome:
    \"\"\"Looks something up.\"\"\"
    return ToolOutcome.success(
        "tool says " + HOSTILE, attachments=[Attachment(mime_type="image/png", data=PNG, name=NAMES[3])]
    )

FILES = [File(base64.b64decode(PNG), "image/png", name=NAMES[0]), File(b"%PDF-1.4 tiny", "application/pdf", name=NAMES[1])]

def script(request):
    if request.tool_results():
        return ScriptedReply(text="Answer two. " + HOSTILE, status=None)
    if "first" in request.last_user_text:
        return "Answer one."
    if "third" in request.last_user_text:
        return ANSWER_THREE
    return ScriptedReply(tool_calls=[ScriptedToolCall(name="lookup", arguments={{"query": HOSTILE}})])

chat = ChatWidget(transport=ScriptedTransport(script), tools=[lookup])
"""

CELLS = (
    SETUP,
    "chat",
    "reply = await chat.ask('the first question')",
    "reply = chat.ask_sync('the second question')",
    "reply = await chat.ask('the third question', attach=FILES)",
)


def _run(tmp_path: Path, *, widget_state: bool = False) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        # False: as JupyterLab saves by default ("Save Widget State Automatically" is off)
        store_widget_state=widget_state,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    errors = [o for cell in notebook.cells for o in cell.outputs if o.output_type == "error"]
    assert errors == [], errors
    return notebook


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("saved")
    path = tmp_path / "chat.ipynb"
    nbformat.write(_run(tmp_path), path)
    return path


def _views(notebook: nbformat.NotebookNode, cell: int) -> list[dict[str, str]]:
    """The static transcripts a cell shows, each the output after a live view's."""
    outputs = notebook.cells[cell].outputs
    transcripts = [o.data for o in outputs if "data-aiw-transcript" in o.get("data", {}).get("text/html", "")]
    views = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == len(transcripts), outputs
    for view in views:
        assert set(view.data) == {WIDGET_VIEW}, view  # the live view alone: no repr for a reader without it
    return transcripts


def test_saved_outputs_hold_the_conversation_as_of_the_last_turn(saved: Path) -> None:
    notebook = nbformat.read(saved, as_version=4)
    assert "widgets" not in notebook.metadata  # no widget state: the transcripts are all a reader has
    [chat] = _views(notebook, 1)
    chat_text = visible_text(chat["text/html"])
    for said in ("the first question", "Answer one.", "the second question", "Answer two.", "lookup", "tool says"):
        assert said in chat_text, said
    assert "Answer two." in chat["text/markdown"]
    # Each asking cell's view keeps its own turn, and only that.
    [first] = _views(notebook, 2)
    assert "Answer one." in visible_text(first["text/html"])
    assert "the second question" not in first["text/html"]
    [second] = _views(notebook, 3)
    second_text = visible_text(second["text/html"])
    assert "the second question" in second_text
    assert "Answer two." in second_text
    assert "the first question" not in second_text
    # The person's files: the image inline, named by its alt text; the PDF a chip; the tool's image too.
    [third] = _views(notebook, 4)
    assert "Answer three." in visible_text(third["text/html"])
    assert image_names(third["text/html"]) == [HOSTILE_NAMES[0]]
    assert HOSTILE_NAMES[1] in visible_text(third["text/html"])
    assert HOSTILE_NAMES[3] in image_names(chat["text/html"])
    # The markdown output keeps the markdown (a renderer of the raw .ipynb formats it); the HTML has it rendered.
    assert "| East | **118** |" in third["text/markdown"]
    assert "<table" in third["text/html"]
    for data in (chat, first, second, third):
        assert script_problems(data["text/html"]) == []
        assert "<script" not in data["text/html"]
        assert "<script" not in data["text/markdown"].replace("&lt;script", "")


def test_nbconvert_html_shows_the_conversation_and_runs_none_of_it(saved: Path) -> None:
    subprocess.run(
        # Without the inputs: what the page shows of the conversation comes from the outputs alone.
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--no-input", str(saved)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    page = saved.with_suffix(".html").read_text(encoding="utf-8")
    text = visible_text(page)
    for said in ("the first question", "Answer one.", "the second question", "Answer two.", "tool says"):
        assert said in text, said
    assert "<script>alert('aiw-xss-script')</script>" in text  # the model's markup shows as the text it is
    # Its markdown formatted: the table, the code block and the emphasis, as nbviewer shows them.
    assert '<td style="border: 1px solid var(--jp-border-color2, #ddd); padding: 0.15em 0.5em">East</td>' in page
    assert "<strong>118</strong>" in page
    assert "<code class=\"language-python\">print('grew most')\n</code>" in page
    assert "| East | **118** |" not in text
    assert "[see](javascript:alert('aiw-xss-md-link'))" in text
    assert HOSTILE_NAMES[1] in text  # an attachment's hostile name too
    assert HOSTILE_NAMES[0] in image_names(page)
    # nbconvert's page has scripts of its own; none of ours, and no handler or script URL from the conversation.
    assert [problem for problem in script_problems(page) if "aiw-xss" in problem] == []
    assert "aiw-xss" not in json.dumps([p for p in script_problems(page) if p.startswith("<script")])


def test_saved_widget_state_holds_the_front_end_code_once(tmp_path: Path) -> None:
    notebook = _run(tmp_path, widget_state=True)
    state = notebook.metadata["widgets"][WIDGET_STATE]["state"]
    holders = [model_id for model_id, model in state.items() if model["state"].get("code")]
    assert len(holders) == 1
    code = state[holders[0]]["state"]["code"]
    assert len(code) > 50_000  # the whole bundle
    assert len(state[holders[0]]["state"]["_css"]) > 1_000  # and its style sheet
    views = [model["state"] for model in state.values() if "_scope" in model["state"]]
    assert {view["_scope"] for view in views} == {"chat", "turn"}
    assert len(views) == 4  # the chat and the three asking cells' turns
    for view in views:
        assert view["_esm"] == LOADER  # a few hundred bytes, not a copy of the code
        assert len(view["_esm"]) < 500
        assert view["_bundle_model"] == holders[0]
        assert view["_css"] == ""
    assert sum(len(json.dumps(model)) for model in state.values()) < 1.5 * len(code)  # one copy: it was 3
