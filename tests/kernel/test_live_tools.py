"""Live tools in a real kernel, every ipykernel version: re-running the cell that defines a ``@tool`` updates the chat
that holds it; the same name defined in another cell warns (on that cell's stderr) and the chat keeps its tool.

Cells are sent as JupyterLab and Notebook 7 send them: with ``metadata.cellId``, the cell's id, which stays the same
when the cell is edited (ipykernel's name for the cell's code file, a hash of its text, does not).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

SETUP = r"""
import json
from ai_widgets import ChatWidget, tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

ran = []  # which version of get_weather ran

def _model(request):
    results = request.tool_results()
    if results:
        return ScriptedReply(text=f"It says: {results[-1].outcome.value}", status=None)
    return ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"})])

def ask(chat, transport):
    first = len(transport.requests)
    reply = chat.ask_sync("weather?", show=False)
    print("ASKED", json.dumps({
        "text": reply.text,
        "ran": ran,
        "told": [[t.description for t in r.tools] for r in transport.requests[first:]],
        "widget": chat._tools["get_weather"]["description"],
    }))
"""


def weather_cell(version: str) -> str:
    return f'''
@tool
def get_weather(city: str) -> str:
    """The weather, {version}."""
    ran.append("{version}")
    return "{version}: sunny in " + city
'''


class Notebook:
    """The module's kernel, and cells run with an id as JupyterLab runs them."""

    def __init__(self, fe: FakeFrontend) -> None:
        self.fe = fe

    def run(self, cell_id: str, code: str, stream: str | None = "stdout") -> str:
        return self.fe.run(code, timeout=30, metadata={"cellId": cell_id}, stream=stream)

    def ask(self, cell_id: str) -> dict[str, Any]:
        lines = [line for line in self.run(cell_id, "ask(chat, transport)").splitlines() if line.startswith("ASKED ")]
        assert len(lines) == 1, lines
        return dict(json.loads(lines[0][len("ASKED ") :]))


@pytest.fixture(scope="module")
def notebook(kernel_python: tuple[str, str]) -> Iterator[Notebook]:
    fe = FakeFrontend(kernel_python[0])
    try:
        fe.run(SETUP, timeout=60, metadata={"cellId": "setup"})
        yield Notebook(fe)
    finally:
        fe.close()


def test_rerunning_the_cell_updates_the_chat_and_another_cell_warns(notebook: Notebook) -> None:
    nb = notebook
    assert nb.run("cell-A", weather_cell("v1"), stream="stderr") == ""
    nb.run(
        "cell-chat",
        "transport = ScriptedTransport(_model)\nchat = ChatWidget(transport=transport, tools=[get_weather])",
    )

    # Cell A edited (body and docstring) and run again: the chat's next request has it, and its call runs it.
    assert nb.run("cell-A", "# edited\n" + weather_cell("v2"), stream="stderr") == ""
    asked = nb.ask("cell-ask-1")
    assert asked == {
        "text": "It says: v2: sunny in Lisbon",
        "ran": ["v2"],
        "told": [["The weather, v2."], ["The weather, v2."]],
        "widget": "The weather, v2.",  # the widget's tool info followed the registry
    }

    # Another cell defines a get_weather: a warning on that cell's stderr names both cells; the chat keeps cell A's.
    warning = nb.run("cell-B", weather_cell("from B"), stream="stderr")
    # In[1] set up, In[2] cell A, In[3] the chat, In[4] cell A again, In[5] asked, In[6] cell B.
    assert "ToolReplacementWarning: the tool 'get_weather' defined in cell In[6] (id cell-B)" in warning, warning
    assert "did not replace the 'get_weather' from cell In[4] (id cell-A) that 1 tool registry holds" in warning
    assert "chat.session.tools.register(get_weather)" in warning
    asked = nb.ask("cell-ask-2")
    assert asked["ran"] == ["v2", "v2"]
    assert asked["told"] == [["The weather, v2."], ["The weather, v2."]]

    # Cell A once more: the chat follows cell A, still without a word.
    assert nb.run("cell-A", weather_cell("v3"), stream="stderr") == ""
    assert nb.ask("cell-ask-3")["ran"] == ["v2", "v2", "v3"]
