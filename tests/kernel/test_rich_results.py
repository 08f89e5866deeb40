"""Rich tool results in a real kernel: a tool that returns a matplotlib figure (the kernel's own inline backend) and
one that returns a pandas DataFrame, run from the widget's input box as a browser sends it; the card's data (the
``finish`` op the view renders) carries the figure's PNG and the frame's HTML table, and the model was told the
frame's bounded text view and given the figure's image."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

SETUP = r"""
import json
import matplotlib.pyplot as plt
import pandas as pd
from ai_widgets import ChatWidget, tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

@tool
def plot(n: int) -> object:
    "Plots n points."
    figure, axes = plt.subplots(figsize=(3, 2))
    axes.plot(range(n), [i * i for i in range(n)])
    return figure

@tool
def table() -> pd.DataFrame:
    "A table of cities."
    return pd.DataFrame({"city": ["Lisbon", "Porto"], "people": [545_000, 232_000]})

def _script(request):
    if request.tool_results():
        return ScriptedReply(text="Here they are.", status=None)
    return ScriptedReply(tool_calls=[ScriptedToolCall(name="plot", arguments={"n": 5}), ScriptedToolCall(name="table")])

transport = ScriptedTransport(_script)
chat = ChatWidget(transport=transport, tools=[plot, table], placeholder="rich")

def told():
    request = [r for r in transport.requests if r.tool_results()][-1]
    print("TOLD", json.dumps([p.result_for_model() for p in request.tool_results()]))
    print("OPEN", plt.get_fignums())
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[tuple[FakeFrontend, str]]:
    # This Python's kernel only: the ipykernel grid's venvs (AIW_KERNEL_PYTHONS) have no matplotlib or pandas, and
    # what a tool's figure becomes does not depend on the ipykernel version (the comm traffic is tested there).
    fe = FakeFrontend(sys.executable)
    try:
        mark = fe.mark()
        fe.run(SETUP, timeout=60)
        yield fe, fe.comm_with_state("placeholder", "rich", start=mark)
    finally:
        fe.close()


def reply_finish(content: Any) -> dict[str, Any] | None:
    for op in content.get("ops", []) if content.get("type") == "patch" else []:
        if op[0] == "finish" and op[2]["role"] == "assistant" and op[2]["status"] == "completed":
            return dict(op[2])
    return None


def test_a_figure_and_a_frame_from_tools_reach_the_card_and_the_model(kernel: tuple[FakeFrontend, str]) -> None:
    fe, comm = kernel
    mark = fe.mark()
    fe.send_custom(comm, {"type": "sync"})
    fe.wait_custom(comm, lambda c: c.get("type") == "snapshot", start=mark)
    mark = fe.mark()
    fe.send_custom(comm, {"type": "send", "text": "show me"})
    content = fe.wait_custom(comm, lambda c: reply_finish(c) is not None, start=mark, timeout=30)
    message = reply_finish(content)
    assert message is not None
    calls = {p["tool_name"]: p for p in message["parts"] if p["kind"] == "tool_call"}
    assert {name: p["state"] for name, p in calls.items()} == {"plot": "completed", "table": "completed"}

    figure = calls["plot"]["outcome"]["display"]
    assert base64.b64decode(figure["data"]["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert figure["data"]["text/plain"].startswith("<Figure size 300x200")
    frame = calls["table"]["outcome"]["display"]
    assert "<table" in frame["data"]["text/html"]
    assert "Lisbon" in frame["data"]["text/html"]
    assert frame["text"].startswith("pandas DataFrame:\n2 rows × 2 columns")

    printed = fe.run("told()").splitlines()
    lines = [line for line in printed if line.startswith("TOLD ")]
    figure_text, frame_text = json.loads(lines[0][len("TOLD ") :])
    assert "OPEN []" in printed  # closed once shown, as the inline backend does: no second copy under a later cell
    assert figure_text.startswith("<Figure size 300x200")
    assert "| 0 | Lisbon | 545000 |" in frame_text
