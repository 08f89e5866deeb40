"""The chat with the keyboard, in JupyterLab and Notebook 7: a few Tabs from the notebook to the input box, Tab from
the input to a waiting approval (announced) and back, the focus after a decision, Escape then ``b`` adds a cell and
sends nothing; a message sent while the kernel runs a cell shows at once, queued; and the layout at 500 px with the
file browser open. Screenshots: light, dark, narrow (test-artifacts/e2e/test_keyboard-*.png)."""

from __future__ import annotations

import textwrap

import pytest
from chat_ui import IMPORTS, WAIT, assert_no_widget_errors, messages, open_and_run, screenshot, wait_idle
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

CHAT = IMPORTS + textwrap.dedent(
    """\
    import time

    pause = 0  # the next cell sleeps this long (set while the test runs)


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.

        Args:
            path: The file.
        \"\"\"
        return f"Deleted {path}."


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text=f"Done: {request.tool_results()[-1].state.value}.")
        if "delete" in request.last_user_text:
            return ScriptedReply(
                status="Deciding…", tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})]
            )
        return ScriptedReply(status=None, text="Here.")


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01, decide_delay=0.1), tools=[delete_file])
    chat
    """
)
SLEEP = "time.sleep(pause)"

# What has the focus, in words a failure message can show.
ACTIVE = """() => {
  const a = document.activeElement;
  if (!a || a === document.body) return "body";
  return a.className || a.tagName;
}"""


def focused_is(page: Page, selector: str) -> bool:
    return bool(page.evaluate("(sel) => !!document.activeElement && document.activeElement.matches(sel)", selector))


def cells(page: Page):
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")


def keyboard_flow(page: Page, srv, nb: str, artifacts, name: str) -> None:
    srv.write_notebook(nb, [CHAT, SLEEP])
    widget = open_and_run(page, srv, nb)
    box = widget.locator(".aiw-input")
    expect(widget.locator(".aiw-empty")).to_be_visible()
    expect(widget.locator(".aiw-empty")).to_contain_text("Ask anything")
    expect(widget.locator(".aiw-empty")).to_contain_text("It can use: Delete file.")

    # An approval: announced, and the focus stays in the box the person typed in; Tab reaches it, Shift+Tab is back.
    box.click()
    box.fill("delete my notes")
    box.press("Enter")
    once = widget.locator(".aiw-approve-once")
    expect(once).to_be_visible(timeout=WAIT)
    expect(widget.locator(".aiw-announce")).to_have_text(
        "Approval needed: Allow Delete file? Press Tab in the message box to decide."
    )
    expect(widget.locator(".aiw-announce")).to_have_attribute("aria-live", "polite")
    assert focused_is(page, ".aiw-input"), page.evaluate(ACTIVE)
    page.keyboard.press("Tab")
    assert focused_is(page, ".aiw-approve-once"), page.evaluate(ACTIVE)
    page.keyboard.press("Shift+Tab")
    assert focused_is(page, ".aiw-input"), page.evaluate(ACTIVE)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Allow once
    expect(widget.locator(".aiw-tool-card")).to_have_attribute("data-state", "completed", timeout=WAIT)
    assert focused_is(page, ".aiw-input"), page.evaluate(ACTIVE)  # after the decision: back in the box
    wait_idle(widget)

    # From the notebook (the chat's cell in command mode, where Escape leaves it) to the input box: the conversation
    # is one stop.
    page.keyboard.press("Escape")
    assert focused_is(page, ".jp-Cell"), page.evaluate(ACTIVE)
    stops = []
    for _ in range(6):
        page.keyboard.press("Tab")
        stops.append(page.evaluate(ACTIVE))
        if focused_is(page, ".aiw-input"):
            break
    assert focused_is(page, ".aiw-input"), stops
    # The cell's own toolbar (JupyterLab), the newest message, the box: cards and copy buttons are arrow keys away.
    assert len(stops) <= 3, stops
    # The arrow keys go through the messages and their controls.
    page.keyboard.press("Shift+Tab")
    assert focused_is(page, ".aiw-message"), page.evaluate(ACTIVE)
    page.keyboard.press("ArrowDown")
    assert focused_is(page, ".aiw-messages button"), page.evaluate(ACTIVE)

    # Escape leaves the box for the notebook's command mode: `b` adds a cell, Enter edits it; the chat gets nothing.
    count = cells(page).count()
    box.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    expect(cells(page)).to_have_count(count + 1)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(box).to_have_value("")
    expect(messages(widget, "user")).to_have_count(1)
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 2

    # A message sent while the kernel runs a cell shows at once, queued, and becomes the message once taken.
    srv.kernel_json(nb, "globals().update(pause=3)")
    sleeper = cells(page).filter(has_text=SLEEP)
    sleeper.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    expect(sleeper.locator(".jp-InputPrompt")).to_contain_text("[*]")
    box.click()
    box.fill("are you there?")
    box.press("Enter")
    queued = widget.locator(".aiw-pending-send")
    expect(queued).to_have_text("are you there?Queued", timeout=1500)
    expect(messages(widget, "user")).to_have_count(1)  # the kernel has not taken it
    screenshot(widget, artifacts, f"{name}-queued")
    expect(messages(widget, "user")).to_have_count(2, timeout=WAIT)
    expect(messages(widget, "user").last).to_have_text("are you there?")
    expect(queued).to_have_count(0)
    expect(box).to_have_value("")
    wait_idle(widget)
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)


def test_keyboard_lab(chromium_page, server, notebook_name, artifacts):
    page = chromium_page
    keyboard_flow(page, server("lab"), notebook_name, artifacts, "test_keyboard-lab-light")
    # 500 px wide with the file browser open: the widget and its input box stay usable.
    page.set_viewport_size({"width": 500, "height": 900})
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    expect(page.locator(".jp-FileBrowser")).to_be_visible()
    widget = page.locator(".aiw[data-rendered='true']").first
    widget.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # the layout settles (the panels resize on the next frames)
    outer = widget.bounding_box()
    input_box = widget.locator(".aiw-input").bounding_box()
    send = widget.locator(".aiw-send").bounding_box()
    assert outer is not None
    assert input_box is not None
    assert send is not None
    assert input_box["width"] >= outer["width"] - 4, (outer, input_box)  # the whole row, not a sliver
    assert send["y"] >= input_box["y"] + input_box["height"] - 1, (input_box, send)  # Send goes below it
    assert send["x"] + send["width"] <= outer["x"] + outer["width"] + 0.5, (outer, send)
    screenshot(widget, artifacts, "test_keyboard-lab-narrow")


def test_keyboard_notebook7(chromium_page, server, notebook_name, artifacts):
    keyboard_flow(chromium_page, server("notebook"), notebook_name, artifacts, "test_keyboard-nb7")


def test_approval_announced_dark(chromium_page, server, notebook_name, artifacts):
    """The dark theme: the empty chat, the queued bubble's neighbours and an approval, readable."""
    page = chromium_page
    srv = server("lab", theme="JupyterLab Dark")
    srv.write_notebook(notebook_name, [CHAT])
    widget = open_and_run(page, srv, notebook_name)
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    screenshot(widget, artifacts, "test_keyboard-lab-dark-empty")
    box = widget.locator(".aiw-input")
    box.click()
    box.fill("delete my notes")
    box.press("Enter")
    expect(widget.locator(".aiw-approve-once")).to_be_visible(timeout=WAIT)
    expect(widget.locator(".aiw-announce")).to_contain_text("Approval needed")
    page.keyboard.press("Tab")
    assert focused_is(page, ".aiw-approve-once"), page.evaluate(ACTIVE)
    screenshot(widget, artifacts, "test_keyboard-lab-dark")
    assert_no_widget_errors(page)
