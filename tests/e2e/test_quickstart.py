"""notebooks/quickstart.ipynb runs top to bottom without errors and shows the widget."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chat_ui import (
    WAIT,
    assert_no_widget_errors,
    last_assistant,
    messages,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def test_quickstart_runs(chromium_page, server, artifacts):
    page, srv = chromium_page, server("lab")
    nb = "quickstart.ipynb"
    source = json.loads(QUICKSTART.read_text())
    code = [c for c in source["cells"] if c["cell_type"] == "code"]
    # Saved without outputs, or [n] prompts could not tell this run from the last (pitfall 8).
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "clear the outputs"
    assert source["metadata"].get("kernelspec"), "quickstart.ipynb needs metadata.kernelspec"
    shutil.copy(QUICKSTART, srv.root / nb)
    try:
        widget = open_and_run(page, srv, nb)
        cells = page.locator(".jp-NotebookPanel .jp-CodeCell")
        expect(cells).to_have_count(len(code))
        # No traceback and nothing on stderr, in any cell.
        expect(page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")).to_have_count(0)
        # The widget shows the conversation the notebook's `await chat.ask(...)` had.
        expect(messages(widget, "user").first).to_have_text("What's the weather in Lisbon?")
        expect(last_assistant(widget)).to_contain_text("Lisbon", timeout=WAIT)
        expect(widget.locator(".aiw-tool-card").first).to_have_attribute("data-state", "completed")
        expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("It is **sunny** in Lisbon")
        for i in range(len(code)):
            assert "Error" not in cells.nth(i).locator(".jp-OutputArea").inner_text()
        assert srv.kernel_json(nb, "[m.status.value for m in chat.session.messages]") == ["completed", "completed"]
        screenshot(widget, artifacts, "test_quickstart_runs")

        # The demo's other flows, from the widget's input box: a long argument streaming into its card with
        # progress, and a search the provider runs itself, with citations as links.
        send_from_input(widget, "Write some code to a file")
        write_card = widget.locator(".aiw-tool-card").nth(1)
        expect(write_card).to_have_attribute("data-state", "completed", timeout=WAIT)
        wait_idle(widget)
        expect(last_assistant(widget)).to_contain_text("Wrote")
        send_from_input(widget, "Search for anywidget")
        search_card = widget.locator(".aiw-tool-card").nth(2)
        expect(search_card).to_have_attribute("data-state", "completed", timeout=WAIT)
        wait_idle(widget)
        # The link in the answer's text and the citation in the card.
        expect(last_assistant(widget).locator("a[href='https://anywidget.dev']")).to_have_count(2)
        screenshot(widget, artifacts, "test_quickstart_runs-demo-flows")
        assert_no_widget_errors(page)
    finally:
        srv.shutdown_kernels(nb)
