"""The model works in the notebook (issue 31): ``KernelTools()`` in a real kernel, driven by a scripted model.

One long flow per host (a notebook open costs seconds): in a cell that awaits ``chat.ask(...)``, the code card
(line numbers), Edit code with the keyboard (typing, Enter, Tab) and Allow; the edited code is what ran (a later
cell sees its names) and the card says edited; the next run's printed text, figure and change chips appear in its
card; Insert as cell on the first card while the second waits puts its code in a new cell below the asking cell;
Undo takes the figure run back (the later cell, run again, sees its names gone). Then, in JupyterLab only, from the
input box: a steering message sent while a run waits (queued, then delivered after that round's result, and the
model's next request ends with it), Stop on a ``while True`` run (cancelled, saying where, within seconds; the kernel
stays usable), and "Run code without asking" (the next card ran unasked, no approval asked). Screenshots: the card
in JupyterLab light, in Notebook 7 dark, and in a 500 px wide window.
"""

from __future__ import annotations

import re
import textwrap
import time

import pytest
from chat_ui import WAIT, assert_no_widget_errors, messages, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.e2e

# The model: each user message names what it does. A message starting "Steer:" (delivered mid-turn) is answered
# with what it said, read off the request's last user message, so the test sees the request carried it.
SETUP = textwrap.dedent(
    '''\
    from ai_widgets import ChatWidget
    from ai_widgets.kernel import KernelTools
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    FIRST = "values = [3, 1, 2]\\nresult = sorted(values)"
    PLOT = """import matplotlib.pyplot as plt

    print("plotting", len(values), "values")
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(values)
    plt.show()
    print("done")"""
    RUNS = {
        "count": "counter = 0\\nfor step in range(3):\\n    counter += step\\nprint('counted', counter)",
        "loop": "spins = 0\\nwhile True:\\n    spins += 1",
        "quick": "quick = 42\\nquick",
    }


    def run(code, text=""):
        return ScriptedReply(text=text, tool_calls=[ScriptedToolCall(name="run_python", arguments={"code": code})])


    def model(request):
        last = request.last_user_text
        done = request.tool_results()
        if last.startswith("Steer:"):
            return ScriptedReply(text=f"Heard you mid-run: {last}")
        if last == "two runs":  # the asking cell's turn: two runs, each asks
            if len(done) == 0:
                return run(FIRST, "First the values. ")
            if len(done) == 1:
                return run(PLOT, "Now the plot. ")
        elif last in RUNS and not done:
            return run(RUNS[last])
        return ScriptedReply(text=f"Ran: {done[-1].state.value}." if done else "Nothing to run.")


    kernel_tools = KernelTools()
    transport = ScriptedTransport(model, delay=0.005)
    chat = ChatWidget(transport=transport, tools=[kernel_tools])
    chat
    '''
)
ASK = "reply = await chat.ask('two runs')\nprint('REPLY', reply.status.value, '|', reply.text)"
CHECK = 'print("CHECK", sorted(n for n in ("edited_by_person", "values", "fig", "ax") if n in globals()))'


# Records every state a tool card of the widget shows from now on (a card that asked, even for a moment, shows in it).
WATCH_STATES = """root => {
  window.aiwStates = [];
  const seen = el => el.matches?.('.aiw-tool-card') && window.aiwStates.push(el.dataset.state);
  new MutationObserver(changes => changes.forEach(m => {
    if (m.type === 'attributes') seen(m.target);
    m.addedNodes.forEach(n => { seen(n); n.querySelectorAll?.('.aiw-tool-card').forEach(seen); });
  })).observe(root, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-state']});
}"""


def expand(card: Locator) -> None:
    """Opens a card the asking cell's view shows collapsed once it ran (its outputs show either way)."""
    toggle = card.locator(".aiw-tool-toggle")
    if toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")


def cell_with(page: Page, text: str) -> Locator:
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=text)


def run_cell_again(page: Page, cell: Locator) -> None:
    """Puts the cursor in the cell's editor and runs it with Ctrl+Enter (what a person does)."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+Enter")


def edit_allow_plot_insert_undo(page: Page, srv, nb: str, artifacts, name: str) -> Locator:
    """The flow in the asking cell (both hosts). Returns the chat widget."""
    srv.write_notebook(nb, [SETUP, ASK, CHECK])
    chat = open_and_run(page, srv, nb, wait_executed=False)
    asking_cell = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
    turn = asking_cell.locator(".aiw.aiw-turn[data-rendered='true']")
    expect(turn).to_be_visible(timeout=WAIT)
    cards = turn.locator(".aiw-tool-card")
    first = cards.nth(0)
    expect(first).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)

    # The code shown as code: a gutter of line numbers beside the lines.
    code = first.locator(".aiw-code").first
    expect(code.locator(".aiw-code-gutter")).to_have_text("1\n2")
    expect(code.locator(".aiw-code-lines")).to_have_text("values = [3, 1, 2]\nresult = sorted(values)")
    expect(code.locator(".aiw-code-lines .aiw-tok-number").first).to_have_text("3")  # coloured, cheaply
    screenshot(turn, artifacts, f"{name}-card")

    # Edit code: the editor takes the focus; typed at its end, Enter and Tab indent the new block.
    first.locator(".aiw-edit-args").click()
    area = first.locator("textarea.aiw-code-input")
    expect(area).to_be_focused()
    expect(area).to_have_value("values = [3, 1, 2]\nresult = sorted(values)")
    area.press("Control+End")
    area.press("Enter")
    area.type("if result:")
    area.press("Enter")
    area.press("Tab")
    area.type("edited_by_person = result[::-1]")
    edited = "values = [3, 1, 2]\nresult = sorted(values)\nif result:\n    edited_by_person = result[::-1]"
    expect(area).to_have_value(edited)
    expect(first.locator(".aiw-code-editor .aiw-code-gutter")).to_have_text("1\n2\n3\n4")
    screenshot(turn, artifacts, f"{name}-editing")
    first.locator(".aiw-approve-edited").click()

    # What ran is what was allowed; the card says edited and shows the code as it ran.
    expect(first).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(first.locator(".aiw-edited").first).to_be_visible()
    expect(first.locator(".aiw-code-lines").first).to_contain_text("edited_by_person = result[::-1]")
    expand(first)
    chips = first.locator(".aiw-cell-chip")
    expect(chips).to_have_text(["edited_by_person", "result", "values"])

    # The second run waits; meanwhile Insert as cell on the first card (the asking cell still runs).
    second = cards.nth(1)
    expect(second).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(second.locator(".aiw-code-gutter").first).to_have_text("\n".join(str(i) for i in range(1, 8)))
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    expect(cells).to_have_count(3)
    first.locator(".aiw-cell-insert").click()
    status = first.locator(".aiw-cell-action-status")
    expect(status).to_have_attribute("data-kind", "done")
    expect(status).to_contain_text("below the running cell when it ends")

    # Allow the plot: its printed text, the figure and the names it made appear in its card, in order.
    second.locator(".aiw-approve-once").click()
    expect(second).to_have_attribute("data-state", "completed", timeout=WAIT)
    outputs = second.locator(".aiw-cell-outputs")
    expect(outputs.locator("pre.aiw-cell-stream").first).to_contain_text("plotting 3 values")
    image = outputs.locator("img")
    expect(image).to_have_count(1)
    assert image.evaluate("img => img.complete && img.naturalWidth > 100"), "the figure did not load"
    expect(outputs.locator("pre.aiw-cell-stream").last).to_contain_text("done")
    expand(second)
    expect(second.locator(".aiw-cell-chip")).to_contain_text(["ax", "fig", "plt"])
    expect(asking_cell.locator(".jp-OutputArea-output pre").last).to_contain_text("REPLY completed |")
    screenshot(turn, artifacts, f"{name}-outputs")
    # The asking cell ended: the inserted cell is right below it, with the code as it ran (edited).
    expect(cells).to_have_count(4, timeout=WAIT)
    inserted = cells.nth(2).locator(".cm-content")
    expect(inserted).to_contain_text("values = [3, 1, 2]")
    expect(inserted).to_contain_text("edited_by_person = result[::-1]")

    # The later cell (run by Run All once the asking cell ended) sees what the edited code made.
    check = cell_with(page, "CHECK").last
    expect(check.locator(".jp-OutputArea-output")).to_contain_text("CHECK ['ax', 'edited_by_person', 'fig', 'values']")
    assert srv.kernel_json(nb, "edited_by_person") == [3, 2, 1]
    assert srv.kernel_json(nb, "chat.session.messages[-1].tool_calls[0].edited_arguments['code']") == edited

    # Undo the plot run from the chat's card: it says undone; the later cell, run again, sees its names gone.
    chat_card = chat.locator(".aiw-tool-card").nth(1)
    expand(chat_card)
    chat_card.locator(".aiw-cell-undo").click()
    expect(chat_card.locator(".aiw-undone")).to_be_visible(timeout=WAIT)
    expect(chat_card.locator(".aiw-cell-action-status")).to_have_attribute("data-kind", "undone")
    expect(chat_card.locator(".aiw-cell-undo")).to_be_hidden()
    run_cell_again(page, check)
    expect(check.locator(".jp-OutputArea-output")).to_have_text("CHECK ['edited_by_person', 'values']\n", timeout=WAIT)
    return chat


def test_kernel_tools_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    name = "test_kernel_tools-lab"
    t0 = time.monotonic()
    chat = edit_allow_plot_insert_undo(page, srv, nb, artifacts, name)
    screenshot(chat, artifacts, f"{name}-undone")
    print(f"[timing] asking-cell flow {time.monotonic() - t0:.1f}s")

    # Steering: sent from the box while a run waits for approval, it shows queued; allowed, the run ends and the
    # message is delivered right after it; the model's next request ended with it.
    send_from_input(chat, "count")
    card = chat.locator(".aiw-tool-card").nth(2)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    steer = "Steer: count to five instead"
    send_from_input(chat, steer)
    queued = chat.locator(".aiw-queued-message")
    expect(queued).to_have_count(1)
    expect(queued.locator(".aiw-queued-text")).to_have_text(steer)
    expect(queued.locator(".aiw-queued-mark")).to_have_text("Will be sent at the next step")
    screenshot(chat, artifacts, f"{name}-queued")
    assert srv.kernel_json(nb, "[m.text for m in chat.session.queued_messages]") == [steer]
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator("pre.aiw-cell-stream")).to_have_text("counted 3\n")
    expect(queued).to_have_count(0, timeout=WAIT)
    delivered = messages(chat, "user").filter(has_text=steer)
    expect(delivered).to_have_count(1)
    expect(messages(chat).last).to_contain_text(f"Heard you mid-run: {steer}", timeout=WAIT)
    wait_idle(chat)
    # In the conversation, the steering message comes after the card whose round it joined.
    assert delivered.evaluate(
        "(el, card) => !!(card.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)",
        card.element_handle(),
    )
    # The model's next request: the round's result, then the message (its reply in progress last).
    sent = srv.kernel_json(
        nb,
        "[(m.role.value, m.text, [c.outcome is not None for c in m.tool_calls]) for m in transport.requests[-1].messages]",
    )
    assert srv.kernel_json(nb, "transport.requests[-1].last_user_text") == steer
    at = [text for _, text, _ in sent].index(steer)
    assert sent[at][0] == "user", sent
    assert sent[at - 1][0] == "assistant", sent
    assert sent[at - 1][2] == [True], sent  # the call's result came before the message
    assert sent[at - 2][:2] == ["user", "count"], sent

    # Stop on a `while True` run: cancelled within seconds, saying where; the kernel answers after.
    send_from_input(chat, "loop")
    card = chat.locator(".aiw-tool-card").nth(3)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "running", timeout=WAIT)
    page.wait_for_timeout(700)
    screenshot(chat, artifacts, f"{name}-running")
    stopped = time.monotonic()
    chat.locator(".aiw-stop").click()
    expect(card).to_have_attribute("data-state", "cancelled", timeout=5_000)
    took = time.monotonic() - stopped
    assert took < 4, f"Stop took {took:.1f}s"
    expect(card.locator(".aiw-cell-stopped")).to_have_text(re.compile(r"Stopped at line [23] of the code\."))
    wait_idle(chat)
    assert srv.kernel_json(nb, "spins > 1000") is True
    assert srv.kernel_json(nb, "1 + 1") == 2
    screenshot(chat, artifacts, f"{name}-stopped")
    print(f"[timing] Stop to cancelled {took:.2f}s")

    # "Run code without asking": the next card never asks and says it ran without asking.
    switch = chat.locator(".aiw-unasked-switch")
    expect(switch).to_be_visible()
    switch.locator(".aiw-unasked-input").click()
    expect(switch).to_have_attribute("data-on", "true", timeout=WAIT)
    chat.evaluate(WATCH_STATES)
    send_from_input(chat, "quick")
    card = chat.locator(".aiw-tool-card").nth(4)
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator(".aiw-unasked")).to_be_visible()
    expect(card.locator(".aiw-unasked")).to_have_text("ran without asking")
    expect(card.locator(".aiw-approve-once")).to_have_count(0)
    assert "awaiting_approval" not in page.evaluate("() => window.aiwStates"), "the unasked run asked"
    expect(card.locator(".aiw-cell-result")).to_contain_text("42")
    wait_idle(chat)
    call = "chat.session.messages[-1].tool_calls[0]"
    assert srv.kernel_json(nb, f"{call}.unasked_reason") == "Run code without asking is on"
    assert srv.kernel_json(nb, f"[{call}.decision, {call}.approval_reason]") == [None, None]
    assert srv.kernel_json(nb, "quick") == 42
    screenshot(chat, artifacts, f"{name}-unasked")
    switch.locator(".aiw-unasked-input").click()
    expect(switch).to_have_attribute("data-on", "false", timeout=WAIT)
    assert srv.kernel_json(nb, "chat.session.unasked is None") is True

    # A 500 px wide window (the side panels closed, as a person would): the cards stay inside the widget.
    page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
    at_500px(page, chat, artifacts, name)
    assert_no_widget_errors(page)


def at_500px(page: Page, chat: Locator, artifacts, name: str) -> None:
    """A 500 px wide window: every card, its code and its buttons inside the widget; the figure run's card from
    its header, and the widget at its latest message."""
    page.set_viewport_size({"width": 500, "height": 900})
    page.wait_for_timeout(300)  # the layout settles
    narrow_checks(chat)
    card = chat.locator(".aiw-tool-card").nth(1)
    card.evaluate("el => el.scrollIntoView({block: 'start'})")
    card.screenshot(path=str(artifacts / f"{name}-500px-card.png"))
    jump = chat.locator(".aiw-jump")
    if jump.is_visible():
        jump.click()
    expect(jump).to_be_hidden()
    screenshot(chat, artifacts, f"{name}-500px")


def narrow_checks(chat: Locator) -> None:
    """Every card, its code and its buttons stay within the widget's width (code scrolls sideways)."""
    box = chat.bounding_box()
    assert box is not None
    right = box["x"] + box["width"] + 0.5
    for selector in (".aiw-tool-card", ".aiw-code", ".aiw-cell-actions button:visible", ".aiw-cell-outputs img"):
        for el in chat.locator(selector).all():
            b = el.bounding_box()
            if b is None:
                continue
            assert b["x"] + b["width"] <= right, f"{selector} goes off the widget's right edge ({b}, {box})"


def test_kernel_tools_notebook7_dark(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("notebook", theme="JupyterLab Dark"), notebook_name
    name = "test_kernel_tools-nb7-dark"
    chat = edit_allow_plot_insert_undo(page, srv, nb, artifacts, name)
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    screenshot(chat, artifacts, f"{name}-undone")
    at_500px(page, chat, artifacts, name)
    assert_no_widget_errors(page)
