"""notebooks/quickstart.ipynb runs top to bottom without errors, leaves its suggestions to click, and its "From
code" cell continues the conversation once the reader has started it. The README's picture of a turn waiting for
approval is taken from it."""

from __future__ import annotations

import json
import os
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
        # Run All leaves the chat to the reader: the suggestions the text asks to click, no conversation yet (the
        # "From code" cell asks only once the chat has one).
        chips = widget.locator(".aiw-suggestion")
        expect(chips).to_have_count(4)
        expect(messages(widget)).to_have_count(0)
        expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("Try the chat above first")
        for i in range(len(code)):
            assert "Error" not in cells.nth(i).locator(".jp-OutputArea").inner_text()
        screenshot(widget, artifacts, "test_quickstart_runs-fresh")
        # Run All leaves the reader at the last cell: its link brings the chat (and its greeting) back into view.
        page.get_by_role("link", name="↑ The chat is at the top").click()
        expect(widget).to_be_in_viewport()
        expect(widget.locator(".aiw-empty")).to_contain_text("Ask anything")
        _check_the_data_section(page, cells, code, artifacts)

        widget.get_by_role("button", name="What's the weather in Oslo?").click()
        expect(messages(widget, "user").first).to_have_text("What's the weather in Oslo?")
        expect(widget.locator(".aiw-tool-card").first).to_have_attribute("data-state", "completed", timeout=WAIT)
        expect(last_assistant(widget)).to_contain_text("Oslo", timeout=WAIT)
        wait_idle(widget)
        # The suggestions stay after the first message, ready for the next one.
        expect(chips).to_have_count(4)
        expect(chips.first).to_be_enabled()

        # Now the "From code" cell continues the conversation, in the widget and in its own output.
        cells.nth(1).locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        expect(cells.nth(1).locator(".jp-OutputArea-output").last).to_contain_text(
            "It is **sunny** in Lisbon", timeout=WAIT
        )
        expect(messages(widget, "user").nth(1)).to_have_text("What's the weather in Lisbon?")
        expect(last_assistant(widget)).to_contain_text("Lisbon", timeout=WAIT)
        wait_idle(widget)
        statuses = srv.kernel_json(nb, "[m.status.value for m in chat.session.messages]")
        assert statuses == ["completed"] * 4, statuses
        screenshot(widget, artifacts, "test_quickstart_runs")

        # The demo's other flows, from the widget's input box: a long argument streaming into its card with
        # progress, and a search the provider runs itself, with citations as links.
        send_from_input(widget, "Write some code to a file")
        write_card = widget.locator(".aiw-tool-card").nth(2)
        expect(write_card).to_have_attribute("data-state", "completed", timeout=WAIT)
        wait_idle(widget)
        expect(last_assistant(widget)).to_contain_text("Wrote")
        send_from_input(widget, "Search for anywidget")
        search_card = widget.locator(".aiw-tool-card").nth(3)
        expect(search_card).to_have_attribute("data-state", "completed", timeout=WAIT)
        # The provider's own search reads as one, not as its raw name with a wrench.
        expect(search_card.locator(".aiw-tool-title")).to_have_text("Web search")
        expect(search_card.locator(".aiw-tool-icon")).to_have_text("🔍")
        wait_idle(widget)
        # The link in the answer's text and the citation in the card (a collapsed card builds its body when opened).
        if search_card.locator(".aiw-tool-toggle").get_attribute("aria-expanded") == "false":
            search_card.locator(".aiw-tool-toggle").click()
        expect(last_assistant(widget).locator("a[href='https://anywidget.dev']")).to_have_count(2)
        screenshot(widget, artifacts, "test_quickstart_runs-demo-flows")
        assert_no_widget_errors(page)
    finally:
        srv.shutdown_kernels(nb)


def _check_the_data_section(page, cells, code, artifacts):
    """ "Your data", as Run All left it: the analyst read the DataFrame it was sent, plotted with the tool, and the
    typed answer's card in its cell shows the validated object, which the next cell used."""
    first = next(i for i, c in enumerate(code) if "analyst = ChatWidget(" in "".join(c["source"]))
    analyst = cells.nth(first).locator(".aiw[data-rendered='true']")
    expect(analyst.locator(".aiw-message[data-role='user']")).to_have_count(3, timeout=WAIT)
    summary = analyst.locator(".aiw-message[data-role='assistant']").first
    expect(summary).to_contain_text("East grew most: 60 → 118 (+97%)", timeout=WAIT)
    expect(
        analyst.locator(".aiw-message[data-role='user'] .aiw-chip, .aiw-message[data-role='user']").first
    ).to_be_visible()
    plot_card = analyst.locator(".aiw-tool-card")
    expect(plot_card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(plot_card.locator(".aiw-tool-title")).to_have_text("Plot revenue")
    figure = plot_card.locator(".aiw-display img")  # the tool's Figure, as the notebook would show it
    expect(figure).to_have_count(1, timeout=WAIT)
    assert figure.get_attribute("src").startswith("data:image/png;base64,iVBOR")
    assert figure.evaluate("img => img.decode().then(() => img.naturalWidth)") > 200
    typed_cell = cells.nth(len(code) - 2)
    card = typed_cell.locator(".aiw-turn .aiw-answer")
    expect(card).to_have_attribute("data-state", "valid", timeout=WAIT)
    expect(card.locator(".aiw-answer-type")).to_have_text("Growth")
    expect(card.locator(".aiw-json-key")).to_have_text(["region", "first", "last"])
    expect(card.locator(".aiw-json-str")).to_have_text("East")
    expect(analyst.locator(".aiw-answer")).to_have_attribute("data-state", "valid")
    expect(cells.nth(len(code) - 1).locator(".jp-OutputArea-output")).to_have_text("East grew 97%: from 60 to 118")
    screenshot(analyst, artifacts, "test_quickstart_runs-your-data")
    screenshot(typed_cell.locator(".aiw-turn"), artifacts, "test_quickstart_runs-typed-answer")


#: The README's (and the docs' home page's) picture of a turn: a tool card waiting for approval.
README_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "images" / "turn-approval.png"
#: The widget's width in that picture, in CSS pixels.
README_IMAGE_WIDTH = 800


def test_readme_screenshot_of_a_turn_waiting_for_approval(chromium_page, server, artifacts):
    """The quickstart in the light theme, the suggestion "Delete my notes" clicked: the destructive call's card
    waits with its approval buttons. The widget, about 800 px wide, is saved to the artifacts, and to
    docs/images/turn-approval.png when AIW_UPDATE_DOCS_IMAGES=1 (so the README's picture is the widget as it is)."""
    page, srv = chromium_page, server("lab")
    nb = "quickstart-screenshot.ipynb"
    shutil.copy(QUICKSTART, srv.root / nb)
    try:
        widget = open_and_run(page, srv, nb)
        # The file browser closed and the window sized so the chat is README_IMAGE_WIDTH wide.
        current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if current.count():
            current.click()
        expect(page.locator("#jp-left-stack")).to_be_hidden()
        for _ in range(3):  # the notebook's margins depend on the width; settles in one or two steps
            width = widget.bounding_box()["width"]  # type: ignore[index]
            if abs(width - README_IMAGE_WIDTH) < 1:
                break
            viewport = page.viewport_size or {"width": 1280, "height": 900}
            page.set_viewport_size({"width": round(viewport["width"] + README_IMAGE_WIDTH - width), "height": 900})
            page.wait_for_timeout(300)
        assert abs(widget.bounding_box()["width"] - README_IMAGE_WIDTH) < 2  # type: ignore[index]

        widget.get_by_role("button", name="Delete my notes").click()
        card = widget.locator(".aiw-tool-card").first
        expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
        expect(card.locator(".aiw-tool-title")).to_have_text("Delete file")
        approval = card.locator(".aiw-approval")
        for name in ("Allow once", "Allow always", "Decline"):
            expect(approval.get_by_role("button", name=name)).to_be_visible()
        expect(card.locator(".aiw-tool-args")).to_contain_text("notes.txt")
        expect(widget.locator(".aiw-stop")).to_be_visible()
        page.mouse.move(0, 0)  # no hover state in the picture
        page.wait_for_timeout(300)  # the card's entrance has settled
        shot = screenshot(widget, artifacts, "test_quickstart-turn-approval")
        if os.environ.get("AIW_UPDATE_DOCS_IMAGES") == "1":
            shutil.copy(shot, README_IMAGE)

        # The picture shows a real wait: Allow once runs the call and the reply ends.
        approval.get_by_role("button", name="Allow once").click()
        expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
        wait_idle(widget)
        assert_no_widget_errors(page)
    finally:
        srv.shutdown_kernels(nb)
