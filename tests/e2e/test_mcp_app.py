"""MCP Apps in a tool call's card, in JupyterLab and Notebook 7 (issue 21), with a real app server nobody here
wrote (``@modelcontextprotocol/server-basic-vanillajs``, installed by scripts/mcp_servers.sh): its ``get-time``
tool names the app ``ui://get-time/mcp-app.html``. The model calls it and the person allows it; the card shows the
app in a frame that gets the tool's input and result (the app shows the time the tool returned) and the page's
theme; the app's own "Get Server Time" calls ``get-time`` through the host, which asks the person like a model's
call: allowed, the app shows the new time; declined, the app gets an error. The card's text form stays. And the
frame is sandboxed to scripts on an opaque origin: it cannot reach the notebook's DOM; in a dark JupyterLab the
app is told the theme is dark."""

from __future__ import annotations

import re
import textwrap

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

from tests.mcp.installed import installed

pytestmark = pytest.mark.e2e

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def notebook() -> str:
    found = installed()
    node, entry = str(found.node), str(found.npm_entry("@modelcontextprotocol/server-basic-vanillajs"))
    return textwrap.dedent(
        f"""\
        from ai_widgets import ChatWidget
        from ai_widgets.mcp import MCPServer
        from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

        server = MCPServer.stdio({node!r}, [{entry!r}, "--stdio"])


        def model(request):
            if request.tool_results():
                return ScriptedReply(text="The server's time is in the card.")
            return ScriptedReply(tool_calls=[ScriptedToolCall(name="get-time", arguments={{}})])


        chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server])
        chat
        """
    )


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_an_mcp_app_shows_in_its_card_and_its_own_calls_are_asked_about(
    chromium_page, server, notebook_name, artifacts, app
):
    page, srv, nb = chromium_page, server(app), notebook_name
    srv.write_notebook(nb, [notebook()])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "what time is it on the server?")
    card = last_assistant(widget).locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-approve-once").click()
    wait_idle(widget)
    expect(card).to_have_attribute("data-state", "completed")

    frame_el = card.locator("iframe.aiw-app-frame")
    expect(frame_el).to_have_count(1, timeout=WAIT)
    assert frame_el.get_attribute("sandbox") == "allow-scripts"  # never allow-same-origin
    shown_time = card.frame_locator("iframe.aiw-app-frame").locator("#server-time")
    # Asked by the test runner, not by polling inside the frame: a cross-origin frame out of view gets no
    # animation frames, so a wait_for_function there (polling on them) can wait forever.
    app_root = card.frame_locator("iframe.aiw-app-frame").locator("html")
    expect(shown_time).to_have_text(ISO, timeout=WAIT)  # the tool's result reached the app
    first = shown_time.inner_text()
    outcome = card.locator(".aiw-tool-outcome, .aiw-tool-result-slot")
    expect(app_root).to_have_attribute("data-theme", "light")  # the host's theme
    # The app sized itself (size-changed): taller than where the frame starts, within the bound.
    expect(frame_el).not_to_have_css("height", "200px", timeout=WAIT)
    height = float(frame_el.evaluate("el => el.getBoundingClientRect().height"))
    assert 60 <= height <= 800, height
    screenshot(widget, artifacts, f"mcp-app-{app}-result")

    # The app's own call: asked about like a model's (the bench shows it), allowed by the real button.
    frame_button = card.frame_locator("iframe.aiw-app-frame").locator("#get-time-btn")
    frame_button.click()
    asked = widget.locator(".aiw-bench .aiw-tool-card").last
    expect(asked).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(shown_time).to_have_text(first)  # nothing ran yet
    screenshot(widget, artifacts, f"mcp-app-{app}-asking")
    asked.locator(".aiw-approve-once").click()
    expect(asked).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(shown_time).not_to_have_text(first, timeout=WAIT)
    expect(shown_time).to_have_text(ISO)
    screenshot(widget, artifacts, f"mcp-app-{app}-called")

    # Declined: the app gets an error (it shows [ERROR]); nothing ran.
    frame_button.click()
    asked = widget.locator(".aiw-bench .aiw-tool-card").last
    expect(asked).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    asked.locator(".aiw-decline").first.click()
    expect(asked).to_have_attribute("data-state", "rejected", timeout=WAIT)
    expect(shown_time).to_have_text("[ERROR]", timeout=WAIT)

    # The page's theme switches (JupyterLab marks it on the body): the app is told (host-context-changed).
    page.evaluate("document.body.dataset.jpThemeLight = 'false'")
    expect(app_root).to_have_attribute("data-theme", "dark", timeout=WAIT)
    page.evaluate("document.body.dataset.jpThemeLight = 'true'")
    expect(app_root).to_have_attribute("data-theme", "light", timeout=WAIT)

    # A frame moved in the page loads its app again (a notebook re-rendering its output, or windowing the cell out
    # of view and back): the app starts over and gets the call's input and result again, and the page's theme.
    expect(shown_time).to_have_text("[ERROR]")
    page.evaluate("document.body.dataset.jpThemeLight = 'false'")
    frame_el.evaluate("el => el.parentElement.append(el)")
    expect(shown_time).to_have_text(ISO, timeout=WAIT)
    expect(app_root).to_have_attribute("data-theme", "dark", timeout=WAIT)
    page.evaluate("document.body.dataset.jpThemeLight = 'true'")
    expect(app_root).to_have_attribute("data-theme", "light", timeout=WAIT)

    # The app asks to open a link: the card shows it with its domain, and opens it only when the person says so.
    page.evaluate("() => { window.__opened = []; window.open = (...a) => { window.__opened.push(a); return null; }; }")
    card.frame_locator("iframe.aiw-app-frame").locator("#open-link-btn").click()
    ask = card.locator(".aiw-app-link")
    expect(ask.locator(".aiw-link-domain")).to_have_text("modelcontextprotocol.io", timeout=WAIT)
    assert page.evaluate("() => window.__opened.length") == 0
    screenshot(widget, artifacts, f"mcp-app-{app}-link")
    ask.locator(".aiw-app-link-open").click()
    expect(ask).to_have_count(0)
    assert page.evaluate("() => window.__opened") == [
        ["https://modelcontextprotocol.io/", "_blank", "noopener,noreferrer"]
    ]

    # The conversation saw the model's call only; its text form stays in the card.
    expect(last_assistant(widget).locator(".aiw-tool-card")).to_have_count(1)
    del outcome
    assert_no_widget_errors(page)


def test_the_app_frame_cannot_reach_the_notebook_and_takes_a_dark_theme(
    chromium_page, server, notebook_name, artifacts
):
    page, srv, nb = chromium_page, server("lab", theme="JupyterLab Dark"), notebook_name
    srv.write_notebook(nb, [notebook()])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "what time is it on the server?")
    card = last_assistant(widget).locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-approve-once").click()
    frame_el = card.locator("iframe.aiw-app-frame")
    expect(frame_el).to_have_count(1, timeout=WAIT)
    sandbox = frame_el.get_attribute("sandbox") or ""
    assert sandbox.split() == ["allow-scripts"], sandbox
    frame = frame_el.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_load_state()
    expect(card.frame_locator("iframe.aiw-app-frame").locator("#server-time")).to_have_text(ISO, timeout=WAIT)
    assert frame.evaluate("document.documentElement.getAttribute('data-theme')") == "dark"  # JupyterLab's theme
    probe = frame.evaluate(
        """() => {
            const tried = {};
            tried.origin = self.origin;
            try { tried.parentTitle = window.parent.document.title; } catch (e) { tried.parentError = e.name; }
            try { tried.topBody = !!window.top.document.body; } catch (e) { tried.topError = e.name; }
            try { tried.cookie = document.cookie; } catch (e) { tried.cookieError = e.name; }
            try { localStorage.setItem("x", "1"); tried.storage = true; } catch (e) { tried.storageError = e.name; }
            return tried;
        }"""
    )
    assert probe["origin"] == "null", probe  # an opaque origin
    assert probe.get("parentError") == "SecurityError", probe
    assert probe.get("topError") == "SecurityError", probe
    assert "storage" not in probe, probe
    # A message posted by the frame that is not the app's protocol changes nothing in the notebook.
    frame.evaluate("window.parent.postMessage({type: 'approve', tool_call_id: 'x', decision: 'approved'}, '*')")
    wait_idle(widget)
    screenshot(widget, artifacts, "mcp-app-sandboxed-dark")
    assert_no_widget_errors(page)
