"""The person in the loop, in JupyterLab (issue 21): a real MCP server (tests/mcp/servers/asking_server.py, over
stdio) asks for input while its tool runs; the tool's card shows the server's message and a form from its flat
schema, starting from the defaults; a value the schema refuses is said at its field by the kernel; the person fixes
it and clicks Accept; the tool's result shows what was sent and the card says it was answered. A link the server asks
to open shows its domain and opens only after the card's own confirm step. Light and dark, wide and narrow."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect
from test_saved_state import SAVE_STATE, save_and_reopen_without_kernel

pytestmark = pytest.mark.e2e

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "asking_server.py")


def notebook(tool: str, arguments: dict, *, legacy: bool = False) -> str:
    """A chat whose scripted model calls ``tool`` of the asking server, then says what the tool returned."""
    args = [SERVER, *(["--legacy"] if legacy else [])]
    return textwrap.dedent(
        f"""\
        import sys

        from ai_widgets import ChatWidget
        from ai_widgets.mcp import MCPServer
        from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

        server = MCPServer.stdio(sys.executable, {args!r})


        def model(request):
            if request.tool_results():
                return ScriptedReply(status=None, text="The tool said: " + str(request.tool_results()[-1].outcome.value))
            return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name={tool!r}, arguments={arguments!r})])


        chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server])
        chat
        """
    )


def allow_if_asked(card) -> None:
    """An MCP tool may first ask for approval (its annotations are not trusted): allow it once."""
    for _ in range(100):
        state = card.get_attribute("data-state")
        if state == "awaiting_approval":
            card.locator(".aiw-approve-once").click()
            return
        if state == "awaiting_input":
            return
        card.page.wait_for_timeout(100)


@pytest.mark.parametrize(("theme", "width"), [(None, None), ("JupyterLab Dark", 340)], ids=["light", "dark-narrow"])
def test_the_person_fills_the_servers_form_in_the_card(chromium_page, server, notebook_name, artifacts, theme, width):
    page, srv, nb = chromium_page, server("lab", theme=theme), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [notebook("book_resolved", {"restaurant": "Casa"})])
    widget = open_and_run(page, srv, nb)
    if width:
        widget.evaluate(f"el => {{ el.style.width = '{width}px'; el.style.maxWidth = '{width}px'; }}")
    send_from_input(widget, "book me a table")
    card = widget.locator(".aiw-tool-card").first
    allow_if_asked(card)
    expect(card).to_have_attribute("data-state", "awaiting_input", timeout=WAIT)
    expect(card.locator(".aiw-state")).to_have_text("waiting for your input")
    ask = card.locator(".aiw-input-ask")
    expect(ask.locator(".aiw-input-message")).to_contain_text("Book a table at Casa: which day, and how many seats?")
    date = ask.locator('[data-field="date"]')
    seats = ask.locator('[data-field="seats"]')
    window = ask.locator('[data-field="window"]')
    expect(seats).to_have_value("2")  # the schema's defaults
    expect(window).to_be_checked()
    expect(date).to_have_value("")
    screenshot(widget, artifacts, f"{name}-form")

    # A value the schema refuses: the kernel says so at the field; what was typed stays.
    date.fill("2026-12-24")
    seats.fill("9")
    seats.press("Escape")  # leaves the widget to the notebook, loses nothing
    expect(seats).to_have_value("9")
    ask.locator(".aiw-input-accept").click()
    seats_error = seats.locator("xpath=ancestor::*[contains(@class,'aiw-edit-row')][1]").locator(".aiw-edit-error")
    expect(seats_error).not_to_be_empty()
    expect(date).to_have_value("2026-12-24")
    expect(card).to_have_attribute("data-state", "awaiting_input")
    screenshot(widget, artifacts, f"{name}-refused")

    # Fixed, and sent with Enter in a field (Accept).
    seats.fill("4")
    window.uncheck()
    seats.press("Enter")
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    sent = "booked Casa on 2026-12-24 for 4 (window: False)"
    expect(last_assistant(widget)).to_contain_text(sent)  # what the server got back, told to the model
    expect(widget.locator(".aiw-banner-kernel")).to_have_count(0)  # the refusal was said at the field only
    if card.get_attribute("class") and "aiw-collapsed" in card.get_attribute("class"):
        card.locator(".aiw-tool-toggle").click()
    expect(card.locator(".aiw-tool-result-slot")).to_contain_text(sent)
    answered = card.locator(".aiw-input-answered")
    expect(answered).to_be_visible()
    expect(answered).to_contain_text("You answered")
    expect(card.locator(".aiw-input-ask")).to_have_count(0)
    if width:
        box = widget.bounding_box()
        assert box is not None
        for selector in (".aiw-input-answered", ".aiw-state"):
            b = card.locator(selector).bounding_box()
            assert b is not None, selector
            assert b["x"] + b["width"] <= box["x"] + box["width"] + 0.5, f"{selector} goes off the widget's edge"
    screenshot(widget, artifacts, f"{name}-answered")
    assert_no_widget_errors(page)


def test_a_link_the_server_asks_to_open_shows_its_domain_and_asks_first(
    chromium_page, server, notebook_name, artifacts
):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [notebook("sign_in", {}, legacy=True)])
    widget = open_and_run(page, srv, nb)
    page.evaluate("() => { window.__opened = []; window.open = (...a) => { window.__opened.push(a); return null; }; }")
    send_from_input(widget, "sign me in")
    card = widget.locator(".aiw-tool-card").first
    allow_if_asked(card)
    expect(card).to_have_attribute("data-state", "awaiting_input", timeout=WAIT)
    ask = card.locator(".aiw-input-ask")
    expect(ask.locator(".aiw-link-domain")).to_have_text("example.com")
    expect(ask.locator(".aiw-input-link")).to_have_text("https://example.com/sign-in?x=1")
    expect(ask.locator("a")).to_have_count(0)  # the link is text
    ask.locator(".aiw-input-open").click()
    expect(ask.locator(".aiw-input-confirm")).to_be_visible()
    assert page.evaluate("() => window.__opened.length") == 0
    screenshot(widget, artifacts, f"{name}-confirm")
    ask.locator(".aiw-input-open-yes").click()
    assert page.evaluate("() => window.__opened") == [
        ["https://example.com/sign-in?x=1", "_blank", "noopener,noreferrer"]
    ]
    ask.locator(".aiw-input-accept").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    expect(last_assistant(widget)).to_contain_text("sign-in: accept")
    expect(card.locator(".aiw-input-answered")).to_have_text("You answered")
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)


def test_the_asking_cells_view_answers_the_servers_question(chromium_page, server, notebook_name, artifacts):
    """`await chat.ask(...)` in a cell: the turn shows in that cell, and its card's form answers the server while the
    cell waits; the chat's own card shows the same call completed."""
    page, srv, nb = chromium_page, server("lab"), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(
        nb,
        [
            notebook("book_resolved", {"restaurant": "Casa"}),
            'reply = await chat.ask("book me a table")\nprint("awaited:", reply.text)',
        ],
    )
    chat = open_and_run(page, srv, nb, wait_executed=False)
    cell = page.locator(".jp-NotebookPanel .jp-CodeCell").nth(1)
    view = cell.locator(".aiw[data-rendered='true']")
    card = view.locator(".aiw-tool-card").first
    allow_if_asked(card)
    expect(card).to_have_attribute("data-state", "awaiting_input", timeout=WAIT)
    expect(cell.locator(".jp-InputArea-prompt")).to_have_text("[*]:")
    date = card.locator('.aiw-input-ask [data-field="date"]')
    date.fill("2026-12-30")
    screenshot(view, artifacts, f"{name}-form")
    card.locator(".aiw-input-accept").click()
    sent = "booked Casa on 2026-12-30 for 2 (window: True)"
    expect(cell.locator(".jp-OutputArea-output").last).to_contain_text(
        f"awaited: The tool said: {{'result': '{sent}'}}"
    )
    expect(card.locator(".aiw-input-answered")).to_contain_text("You answered")
    expect(chat.locator(".aiw-tool-card").first).to_have_attribute("data-state", "completed", timeout=WAIT)
    screenshot(view, artifacts, name)
    assert_no_widget_errors(page)


def test_a_notebook_saved_while_the_server_asked_shows_the_question(chromium_page, server, notebook_name, artifacts):
    """Saved while the call waited for the person, re-opened with no kernel: the card shows what the server asked
    and says it was not answered; no answer button that cannot work."""
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [notebook("book_resolved", {"restaurant": "Casa"})])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "book me a table")
    card = widget.locator(".aiw-tool-card").first
    allow_if_asked(card)
    expect(card).to_have_attribute("data-state", "awaiting_input", timeout=WAIT)

    def waiting(state: dict) -> bool:
        calls = [p for m in state.get("_live", []) for p in m["parts"] if p["kind"] == "tool_call"]
        return [c["state"] for c in calls] == ["awaiting_input"]

    state, widget = save_and_reopen_without_kernel(page, srv, nb, waiting)
    (call,) = [p for p in state["_live"][0]["parts"] if p["kind"] == "tool_call"]
    assert call["input_request"]["message"] == "Book a table at Casa: which day, and how many seats?"
    card = widget.locator(".aiw-tool-card").first
    expect(widget).to_have_class(re.compile(r"\baiw-offline\b"))
    expect(card).to_have_attribute("data-state", "awaiting_input")
    ask = card.locator(".aiw-input-ask")
    expect(ask.locator(".aiw-input-message")).to_contain_text("Book a table at Casa")
    expect(ask.locator(".aiw-input-accept")).to_be_hidden()
    expect(ask.locator(".aiw-offline-note")).to_be_visible()
    expect(ask.locator(".aiw-offline-note")).to_contain_text("it was not answered")
    state_text = card.locator(".aiw-state").evaluate("el => el.textContent + getComputedStyle(el, '::after').content")
    assert "when saved" in state_text, state_text
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)
