"""ChatWidget in JupyterLab 4: a tool-using turn, approvals, Stop, and approvals while a cell waits."""

from __future__ import annotations

import re

import jupyter_e2e as J
import pytest
from chat_ui import (
    DESTRUCTIVE,
    IMPORTS,
    WAIT,
    assert_no_widget_errors,
    edit_before_allowing,
    keys_stay_in_widget,
    last_assistant,
    messages,
    narrow_card,
    open_and_run,
    prompt_texts,
    screenshot,
    send_from_input,
    wait_idle,
    watch_arguments_stream,
    weather_flow,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_weather_flow_lab(chromium_page, server, notebook_name, artifacts):
    weather_flow(chromium_page, server("lab"), notebook_name, artifacts, "test_weather_flow_lab")


def test_keys_stay_in_widget_lab(chromium_page, server, notebook_name, artifacts):
    keys_stay_in_widget(chromium_page, server("lab"), notebook_name, artifacts, "test_keys_stay_in_widget_lab")


@pytest.mark.parametrize("width", [320, 240])
def test_narrow_card_keeps_title_and_buttons(chromium_page, server, notebook_name, artifacts, width):
    narrow_card(chromium_page, server("lab"), notebook_name, artifacts, f"test_narrow_card_{width}", width)


def test_watch_arguments_stream(chromium_page, server, notebook_name, artifacts):
    watch_arguments_stream(chromium_page, server("lab"), notebook_name, artifacts, "test_watch_arguments_stream")


def test_edit_arguments_before_allowing(chromium_page, server, notebook_name, artifacts):
    edit_before_allowing(chromium_page, server("lab"), notebook_name, artifacts, "test_edit_arguments_before_allowing")


def test_destructive_tool_approvals(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [DESTRUCTIVE])
    widget = open_and_run(page, srv, nb)
    cards = widget.locator(".aiw-tool-card")

    # 1) Allow once: the prompt shows on the (auto-expanded) card; the tool runs once.
    send_from_input(widget, "delete my notes")
    card = cards.nth(0)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(card.locator(".aiw-risk")).to_have_text("destructive")
    expect(card.locator(".aiw-approve-once")).to_be_visible()
    screenshot(widget, artifacts, "test_destructive_tool_approvals-prompt")
    assert srv.kernel_json(nb, "deleted") == []  # nothing ran before the decision
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator(".aiw-approval")).to_have_count(0)
    expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Allowed once after [\d.]+s$"))
    expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt.", timeout=WAIT)
    wait_idle(widget)
    assert srv.kernel_wait(nb, "deleted", lambda v: v == ["notes.txt"]) == ["notes.txt"]

    # 2) Allow always: runs; the tool is listed as allowed always; the next call runs without a prompt.
    send_from_input(widget, "delete my notes again")
    card = cards.nth(1)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-approve-always").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Allowed always after [\d.]+s$"))
    allowed = widget.locator(".aiw-allowed")
    expect(allowed).to_be_visible()
    expect(allowed.locator(".aiw-allowed-tool[data-tool-name='delete_file']")).to_contain_text("Delete file")
    wait_idle(widget)

    send_from_input(widget, "and once more")
    card = cards.nth(2)
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    expect(widget.locator(".aiw-approval")).to_have_count(0)
    assert srv.kernel_wait(nb, "deleted", lambda v: len(v) == 3) == ["notes.txt"] * 3
    third = srv.kernel_json(
        nb, "[(c.state.value, c.decision, c.decision_remembered) for c in chat.session.messages[-1].tool_calls]"
    )
    assert third == [["completed", "approved_always", True]], third  # not asked: the remembered "allow always"
    expect(card.locator(".aiw-remembered")).to_have_text("allowed always")
    assert srv.kernel_json(nb, "chat._allowed_always") == ["delete_file"]
    screenshot(widget, artifacts, "test_destructive_tool_approvals-always")

    # 3) Revoke "allow always", then Decline with a reason: nothing runs, the model says so.
    allowed.locator(".aiw-revoke").click()
    expect(allowed).to_be_hidden(timeout=WAIT)
    assert srv.kernel_wait(nb, "chat._allowed_always", lambda v: v == []) == []
    send_from_input(widget, "delete them for real")
    card = cards.nth(3)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-decline-reason").fill("keep my notes")
    card.locator(".aiw-decline").click()
    expect(card).to_have_attribute("data-state", "rejected", timeout=WAIT)
    expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Declined after [\d.]+s: keep my notes$"))
    reply = last_assistant(widget)
    expect(reply).to_contain_text("Declined: I did not delete anything (keep my notes).", timeout=WAIT)
    wait_idle(widget)
    call = srv.kernel_json(
        nb,
        "(lambda c: {'state': c.state.value, 'decision': c.decision, 'reason': c.decision_reason})"
        "(chat.session.messages[-1].tool_calls[0])",
    )
    assert call == {"state": "rejected", "decision": "rejected", "reason": "keep my notes"}, call
    assert srv.kernel_json(nb, "len(deleted)") == 3
    assert "Declined" in srv.kernel_json(nb, "chat.session.messages[-1].text")
    screenshot(widget, artifacts, "test_destructive_tool_approvals")
    assert_no_widget_errors(page)


# A reply long and slow enough (about 25 s) that Stop always lands mid-stream.
SLOW = (
    IMPORTS
    + """
long_text = " ".join(f"word{i}" for i in range(800))
script = [ScriptedReply(status=None, text=long_text), ScriptedReply(status=None, text="Second answer.")]
chat = ChatWidget(transport=ScriptedTransport(script, delay=0.03))
chat
"""
)


def test_stop_mid_stream(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [SLOW])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "tell me a long story")
    reply = last_assistant(widget)
    expect(reply).to_contain_text("word30", timeout=WAIT)  # streaming has begun
    expect(reply).to_have_attribute("data-status", "in_progress")
    widget.locator(".aiw-stop").click()
    expect(reply).to_have_attribute("data-status", "cancelled", timeout=WAIT)
    expect(reply.locator(".aiw-note")).to_have_text("Stopped")
    expect(widget.locator(".aiw-stop")).to_be_hidden()
    shown = reply.locator(".aiw-text").inner_text()
    assert "word799" not in shown
    status = srv.kernel_json(nb, "chat.session.messages[-1].status.value")
    assert status == "cancelled", status
    assert not srv.kernel_json(nb, "chat.session.busy")
    screenshot(widget, artifacts, "test_stop_mid_stream-stopped")

    # The session stays usable: the next message gets its answer.
    send_from_input(widget, "something short")
    expect(messages(widget, "assistant")).to_have_count(2, timeout=WAIT)
    expect(last_assistant(widget)).to_have_text("Second answer.", timeout=WAIT)
    wait_idle(widget)
    expect(last_assistant(widget)).to_have_attribute("data-status", "completed")
    expect(messages(widget, "assistant").first).to_have_attribute("data-status", "cancelled")
    statuses = srv.kernel_wait(
        nb,
        "[(m.role.value, m.status.value) for m in chat.session.messages]",
        lambda v: len(v) == 4 and v[-1][1] == "completed",
    )
    assert [tuple(x) for x in statuses if x[0] == "assistant"] == [
        ("assistant", "cancelled"),
        ("assistant", "completed"),
    ]
    assert srv.kernel_json(nb, "chat.session.messages[-1].text") == "Second answer."
    screenshot(widget, artifacts, "test_stop_mid_stream")
    assert_no_widget_errors(page)


def test_approval_while_cell_waits(chromium_page, server, notebook_name, artifacts):
    """`await chat.ask(...)` and `chat.ask_sync(...)` in cells: the cell runs ([*]) until the person clicks in
    the widget; the click must reach the kernel while the cell waits."""
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(
        nb,
        [
            DESTRUCTIVE,
            'reply = await chat.ask("delete notes")\nprint("awaited:", reply.text)',
            'reply2 = chat.ask_sync("delete notes again")\nprint("blocked:", reply2.text)',
        ],
    )
    widget = open_and_run(page, srv, nb, wait_executed=False)
    cards = widget.locator(".aiw-tool-card")
    cells = page.locator(".jp-NotebookPanel .jp-CodeCell")

    expect(cards.nth(0)).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(cells.nth(1).locator(".jp-InputArea-prompt")).to_have_text("[*]:")
    screenshot(widget, artifacts, "test_approval_while_cell_waits-ask")
    cards.nth(0).locator(".aiw-approve-once").click()
    expect(cells.nth(1).locator(".jp-OutputArea-output").last).to_contain_text(
        "awaited: Done: Deleted notes.txt.", timeout=WAIT
    )

    expect(cards.nth(1)).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(cells.nth(2).locator(".jp-InputArea-prompt")).to_have_text("[*]:")
    cards.nth(1).locator(".aiw-approve-once").click()
    expect(cells.nth(2).locator(".jp-OutputArea-output").last).to_contain_text(
        "blocked: Done: Deleted notes.txt.", timeout=WAIT
    )
    J.wait_all_cells_executed(page, timeout=WAIT)
    assert all(p.strip() not in ("[*]:", "[ ]:") for p in prompt_texts(page)), prompt_texts(page)

    assert srv.kernel_json(nb, "reply.text") == "Done: Deleted notes.txt."
    assert srv.kernel_json(nb, "reply2.text") == "Done: Deleted notes.txt."
    assert srv.kernel_json(nb, "deleted") == ["notes.txt", "notes.txt"]
    assert srv.kernel_json(nb, "[c.state.value for m in chat.session.messages for c in m.tool_calls]") == [
        "completed",
        "completed",
    ]
    screenshot(widget, artifacts, "test_approval_while_cell_waits")
    assert_no_widget_errors(page)
