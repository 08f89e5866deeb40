"""KernelTools in a real ipykernel: run_python driven by ``await chat.ask(...)`` with a scripted model. Magics,
``display``, a matplotlib figure (the kernel's inline backend), a kernel interrupt of a ``while True`` run, ``input()``
answered in the card's place, other cells' prints left to their cells, shell escapes refused and allowed, and
``exit()`` that ends the code, never the kernel."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

SETUP = r"""
import asyncio
import json
from ai_widgets import ChatWidget
from ai_widgets.kernel import KernelTools
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

class RunAll:
    async def requires_approval(self, definition, invocation):
        return False

    def record_decision(self, definition, invocation, decision):
        pass

codes = []

def _script(request):
    if request.tool_results():
        return ScriptedReply(text="ran")
    return ScriptedReply(tool_calls=[ScriptedToolCall(name="run_python", arguments={"code": codes.pop(0)})])

kt = KernelTools()
chat = ChatWidget(transport=ScriptedTransport(_script), tools=[kt], approval_policy=RunAll())

own = {}
chat_own = ChatWidget(transport=ScriptedTransport(_script), tools=[KernelTools(own)], approval_policy=RunAll())

def last_call(widget=None):
    return [p for m in (widget or chat).session.messages for p in m.tool_calls][-1]

def report(widget=None):
    part = last_call(widget)
    cell = part.outcome.cell
    outputs = [
        {"kind": o.kind, "name": o.name, "text": o.text, "mimes": sorted(o.display.data) if o.display else []}
        for o in cell.outputs
    ]
    print("REPORT", json.dumps({
        "state": part.state.value, "outputs": outputs, "stopped_at": cell.stopped_at,
        "told": part.outcome.model_content(), "id": part.tool_call_id,
        "changes": [cell.created, cell.rebound, cell.deleted, cell.mutated],
    }))
"""


@pytest.fixture(scope="module")
def fe() -> Iterator[FakeFrontend]:
    # This Python's kernel only: the figure needs matplotlib, which the ipykernel grid's venvs do not have.
    frontend = FakeFrontend(sys.executable)
    try:
        frontend.run(SETUP, timeout=60)
        assert frontend.run("print(kt.namespace is get_ipython().user_ns)").strip() == "True"
        yield frontend
    finally:
        frontend.close()


def run_code(fe: FakeFrontend, code: str, timeout: float = 20) -> tuple[dict[str, Any], str]:
    """Runs ``code`` through the model's run_python in an ``await chat.ask`` cell; its report and the cell's id."""
    cell = fe.execute(f"codes.append({code!r})\nreply = await chat.ask('go', show=False)\nreport()")
    content = fe.reply(cell, timeout)["content"]
    assert content["status"] == "ok", content
    fe.wait_idle(cell)
    text = fe.stream_text(cell, "stdout")
    line = next(line for line in text.splitlines() if line.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT ")), cell


def iopub_of(fe: FakeFrontend, parent: str) -> list[dict[str, Any]]:
    return [m for _, m in fe.iopub if m["parent_header"].get("msg_id") == parent]


def is_printed(message: dict[str, Any]) -> bool:
    """A stream message of what a cell printed, other than the test's own report."""
    return message["msg_type"] == "stream" and not message["content"]["text"].startswith("REPORT ")


def test_magics_work_and_the_value_is_the_result(fe: FakeFrontend) -> None:
    report, _ = run_code(fe, "%time x = 41\ny = x + 1\ny")
    assert report["state"] == "completed"
    assert report["outputs"][-1]["kind"] == "result"
    assert "Out: 42" in report["told"]
    assert fe.run("print(y)").strip() == "42"


def test_a_run_says_what_it_changed_and_undo_puts_it_back(fe: FakeFrontend) -> None:
    fe.run("kept = [1]\nreplaced = 'old'")
    report, _ = run_code(fe, "made_here = 1\nreplaced = 'new'\nkept.append(2)\nmade_here")
    assert report["changes"] == [["made_here"], ["replaced"], [], ["kept"]]
    assert report["told"].endswith(
        "Changed: created made_here; rebound replaced; changed in place: kept (cannot be undone)."
    )
    out = fe.run(f"print(kt.undo({report['id']!r}))\nprint('made_here' in globals(), replaced, kept)")
    assert out.splitlines()[-1] == "False old [1, 2]"


def test_display_comes_to_the_card_not_to_the_cell(fe: FakeFrontend) -> None:
    report, cell = run_code(
        fe, "from IPython.display import HTML, display\nprint('before')\ndisplay(HTML('<b>shown</b>'))\nprint('after')"
    )
    kinds = [(o["kind"], o["text"]) for o in report["outputs"]]
    assert kinds[0] == ("stream", "before\n")
    assert report["outputs"][1]["kind"] == "display"
    assert "text/html" in report["outputs"][1]["mimes"]
    assert kinds[2] == ("stream", "after\n")
    leaked = [m for m in iopub_of(fe, cell) if m["msg_type"] == "display_data" or is_printed(m)]
    assert leaked == []


def test_code_in_a_namespace_of_its_own_shows_its_displays_in_the_card_too(fe: FakeFrontend) -> None:
    code = "from IPython.display import HTML, display\ndisplay(HTML('<i>mine</i>'))\nhere = 1"
    cell = fe.execute(f"codes.append({code!r})\nreply = await chat_own.ask('go', show=False)\nreport(chat_own)")
    assert fe.reply(cell, 20)["content"]["status"] == "ok"
    fe.wait_idle(cell)
    report = json.loads(fe.stream_text(cell, "stdout").split("REPORT ", 1)[1])
    assert report["outputs"][0]["kind"] == "display"
    assert not [m for m in iopub_of(fe, cell) if m["msg_type"] == "display_data" or is_printed(m)]
    assert fe.run("print(own['here'], 'here' in globals())").strip() == "1 False"


def test_a_figure_is_shown_in_the_card_and_closed(fe: FakeFrontend) -> None:
    report, cell = run_code(fe, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nprint('drawn')")
    displays = [o for o in report["outputs"] if o["kind"] == "display"]
    assert len(displays) == 1
    assert "image/png" in displays[0]["mimes"]
    assert "(1 image sent with this result)" in report["told"]
    assert not [m for m in iopub_of(fe, cell) if m["msg_type"] == "display_data"]
    assert fe.run("print(plt.get_fignums())").strip() == "[]"


def test_a_kernel_interrupt_stops_a_while_true_run_and_the_call_says_where(fe: FakeFrontend) -> None:
    cell = fe.execute("codes.append('n = 0\\nwhile True:\\n    n += 1\\n')\nreply = await chat.ask('loop', show=False)")
    time.sleep(0.8)
    started = time.monotonic()
    fe.interrupt()
    content = fe.reply(cell, timeout=15)["content"]
    assert time.monotonic() - started < 2.0
    assert content["status"] == "error"
    out = fe.run_after_error("report()\nfirst = n")
    report = json.loads(out.split("REPORT ", 1)[1])
    assert report["state"] == "cancelled"
    assert report["stopped_at"] in ("line 2 of the code", "line 3 of the code")
    time.sleep(0.2)
    assert fe.run("print(n == first)").strip() == "True"  # the loop is over, not running on


def test_input_asks_the_person_and_the_answer_returns(fe: FakeFrontend) -> None:
    code = (
        'codes.append(\'name = input("Your name?")\\nprint("hello", name)\')\n'
        "task = asyncio.ensure_future(chat.ask('go', show=False))\n"
        "for _ in range(200):\n"
        "    if chat.session.pending_inputs:\n"
        "        break\n"
        "    await asyncio.sleep(0.02)\n"
        "part = chat.session.pending_inputs[0]\n"
        "print('ASKED', part.state.value, part.input_request.message)\n"
        "chat.session.respond(part.tool_call_id, 'accept', {'answer': 'Ada'})\n"
        "await task\n"
        "report()"
    )
    out = fe.run(code, timeout=20)
    assert "ASKED awaiting_input Your name?" in out
    report = json.loads(out.split("REPORT ", 1)[1])
    assert report["state"] == "completed"
    assert report["outputs"][-1]["text"].endswith("hello Ada\n")
    assert fe.run("print(name)").strip() == "Ada"


def test_input_reaches_the_person_while_another_cell_runs(fe: FakeFrontend) -> None:
    # ipykernel puts its own input() in place for each cell: the run's input() must still ask in the card.
    fe.run(
        "codes.append('import time\\ntime.sleep(0.5)\\nlater = input(\"Later?\")')\n"
        "task = asyncio.ensure_future(chat.ask('go', show=False))"
    )
    code = (
        "for _ in range(200):\n"
        "    if chat.session.pending_inputs:\n"
        "        break\n"
        "    await asyncio.sleep(0.02)\n"
        "part = chat.session.pending_inputs[0]\n"
        "chat.session.respond(part.tool_call_id, 'accept', {'answer': 'yes'})\n"
        "await task\n"
        "report()"
    )
    report = json.loads(fe.run(code, timeout=20).split("REPORT ", 1)[1])
    assert report["state"] == "completed"
    assert fe.run("print(later)").strip() == "yes"


def test_other_cells_print_in_their_cells_while_code_runs(fe: FakeFrontend) -> None:
    fe.run(
        "import threading\ngo_on = threading.Event()\n"
        'codes.append(\'import time\\nwhile not go_on.is_set():\\n    print("tick")\\n    time.sleep(0.01)\\nprint("end")\')\n'
        "task = asyncio.ensure_future(chat.ask('go', show=False))"
    )
    time.sleep(0.3)
    other = fe.execute("print('other cell')")
    fe.reply(other)
    fe.wait_idle(other)
    assert fe.stream_text(other) == "other cell\n"
    out = fe.run("go_on.set()\nawait task\nreport()")
    report = json.loads(out.split("REPORT ", 1)[1])
    printed = "".join(o["text"] for o in report["outputs"] if o["kind"] == "stream")
    assert "tick\n" in printed
    assert printed.endswith("end\n")
    assert "other cell" not in printed
    assert not any("tick" in m["content"]["text"] for _, m in fe.iopub if is_printed(m))


def test_shell_escapes_are_refused_unless_allowed(fe: FakeFrontend) -> None:
    report, _ = run_code(fe, "refused_ran = True\n!echo from-the-shell")
    assert report["state"] == "failed"
    assert "Refused, and nothing ran" in report["told"]
    assert "!echo from-the-shell" in report["told"]
    assert fe.run("print('refused_ran' in globals())").strip() == "False"
    fe.run("kt.allow_shell = True")
    try:
        report, _ = run_code(fe, "lines = !echo from-the-shell\nprint(lines)")
    finally:
        fe.run("kt.allow_shell = False")
    assert report["state"] == "completed"
    assert "from-the-shell" in report["outputs"][0]["text"]


def test_exit_ends_the_code_never_the_kernel(fe: FakeFrontend) -> None:
    cells = []
    for code in ("exit()", "import sys\nsys.exit(2)"):
        report, cell = run_code(fe, code)
        assert report["state"] == "failed"
        assert "SystemExit" in report["outputs"][-1]["text"]
        cells.append(cell)
    replies = [fe.replies[cell]["content"] for cell in cells]
    assert all(not r.get("payload") for r in replies)  # no ask_exit payload: the front end is not asked to close
    assert fe.run("print('alive')").strip() == "alive"
