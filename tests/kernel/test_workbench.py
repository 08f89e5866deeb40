"""``notebooks/tool_workbench.ipynb`` run in a real kernel as JupyterLab runs it: every cell sent with its id
(``metadata.cellId``), so each ``@tool`` cell is a place of its own (nbclient sends no id, so
``tests/test_notebooks.py`` cannot see this).

Before: the "Break it" and "Fix it" cells, which register their version in the chat on purpose, each printed a
``ToolReplacementWarning`` saying the new tool "did not replace" the first one, while the chat used the new code:
the registries it counted were ``run_tool``'s (the form of section 3 and the run after it), not a chat's. And the
form's ``days = 9``, which the notebook says is refused at its field, ran the tool and failed with "an internal
error": the range was a check inside the function, not part of the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

NOTEBOOK = Path(__file__).parent.parent.parent / "notebooks" / "tool_workbench.ipynb"


@pytest.fixture(scope="module")
def ran(kernel_python: tuple[str, str]) -> Iterator[tuple[FakeFrontend, dict[str, str]]]:
    """The workbench run top to bottom, each cell with its id; what each cell wrote on stderr, by cell id."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    fe = FakeFrontend(kernel_python[0])
    try:
        stderr = {}
        for cell in notebook.cells:
            if cell.cell_type == "code":
                stderr[cell.id] = fe.run(cell.source, timeout=60, metadata={"cellId": cell.id}, stream="stderr")
        yield fe, stderr
    finally:
        fe.close()


def test_break_it_and_fix_it_replace_the_chats_tool_without_a_warning(ran: tuple[FakeFrontend, dict[str, str]]) -> None:
    fe, stderr = ran
    assert {cell: text for cell, text in stderr.items() if text} == {}
    # The chat ran the broken version (section 5) and the fixed one serves it now.
    out = fe.run(
        "import json\n"
        "print(json.dumps([failed.outcome.error.type, chat.session.tools['get_forecast'] is get_forecast]))",
        metadata={"cellId": "check"},
        stream="stdout",
    )
    assert json.loads(out) == ["KeyError", True]


def test_a_chat_from_another_place_is_still_warned_about(ran: tuple[FakeFrontend, dict[str, str]]) -> None:
    """Only run_tool's registries are quiet: a chat holding the tool from another cell still gets the warning."""
    fe, _ = ran
    fe.run("other = ChatWidget(transport=ScriptedTransport(model), tools=[get_forecast])", metadata={"cellId": "o"})
    warning = fe.run(
        '@tool\ndef get_forecast(city: str) -> dict:\n    """Another."""\n    return {}',
        metadata={"cellId": "another"},
        stream="stderr",
    )
    assert "ToolReplacementWarning" in warning, warning
    assert "that 2 tool registries hold" in warning, warning  # the notebook's chat and this one, not run_tool's


def test_days_9_is_refused_at_its_field(ran: tuple[FakeFrontend, dict[str, str]]) -> None:
    fe, _ = ran
    out = fe.run(
        "import json\n"
        "from ai_widgets.widget._bench import field_errors\n"
        "print(json.dumps(field_errors(chat.session.tools['get_forecast'], {'city': 'Oslo', 'days': 9})))",
        metadata={"cellId": "days"},
        stream="stdout",
    )
    fields, told = json.loads(out)
    assert list(fields) == ["days"], fields
    assert "less than or equal to 3" in fields["days"], fields
    assert told is None
