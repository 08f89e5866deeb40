"""Approving where you asked: ``await chat.ask(...)`` shows its turn in the asking cell, whose buttons work; and a
page reloaded with the kernel alive shows live buttons that work."""

from __future__ import annotations

import re

import pytest
from chat_ui import DESTRUCTIVE, WAIT, assert_no_widget_errors, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

ASK = "reply = await chat.ask('delete my notes')\nprint('REPLY', reply.status.value, '|', reply.text)"
DONE = "Done: Deleted notes.txt."


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_allow_once_in_the_asking_cell(chromium_page, server, notebook_name, artifacts, app):
    page, srv, nb = chromium_page, server(app), notebook_name
    srv.write_notebook(nb, [DESTRUCTIVE, ASK])
    chat = open_and_run(page, srv, nb, wait_executed=False)
    asking_cell = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
    turn = asking_cell.locator(".aiw.aiw-turn[data-rendered='true']")
    expect(turn).to_be_visible(timeout=WAIT)
    # The asking cell shows this turn alone: the person's message and the card waiting, with its buttons.
    expect(turn.locator(".aiw-message[data-role='user']")).to_have_text(["delete my notes"])
    card = turn.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(turn.locator(".aiw-input")).to_be_hidden()
    expect(turn.locator(".aiw-stop")).to_be_visible()
    chat_card = chat.locator(".aiw-tool-card")
    expect(chat_card).to_have_attribute("data-state", "awaiting_approval")
    screenshot(turn, artifacts, f"test_allow_once_in_the_asking_cell_{app}_waiting")

    card.locator(".aiw-approve-once").click()
    # Decided once: both views show it; the chat's buttons are gone; the cell finishes with the reply.
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(chat_card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(chat_card.locator(".aiw-approve-once")).to_have_count(0)
    expect(asking_cell.locator(".jp-OutputArea-output pre").last).to_contain_text(f"REPLY completed | {DONE}")
    expect(turn.locator(".aiw-message[data-role='assistant']")).to_contain_text(DONE)
    expect(turn.locator(".aiw-stop")).to_be_hidden()
    assert srv.kernel_json(nb, "deleted") == ["notes.txt"]
    assert srv.kernel_json(nb, "chat.session.messages[-1].tool_calls[0].decision") == "approved"
    screenshot(turn, artifacts, f"test_allow_once_in_the_asking_cell_{app}_done")
    assert_no_widget_errors(page)


def test_a_reloaded_page_with_the_kernel_alive_has_live_buttons(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [DESTRUCTIVE])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "delete my notes")
    expect(widget.locator(".aiw-tool-card")).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    # Saved (so the reloaded page has the output that shows the widget), then reloaded: the kernel lives on.
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=WAIT)
    page.reload(wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=WAIT)
    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(widget).not_to_have_class(re.compile(r"\baiw-offline\b"), timeout=WAIT)
    expect(widget.locator(".aiw-stop")).to_be_visible()
    screenshot(widget, artifacts, "test_a_reloaded_page_with_the_kernel_alive_has_live_buttons")
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    expect(widget.locator(".aiw-message[data-role='assistant']").last).to_contain_text(DONE)
    assert srv.kernel_json(nb, "deleted") == ["notes.txt"]
    assert_no_widget_errors(page)
