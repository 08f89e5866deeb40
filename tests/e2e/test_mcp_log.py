"""A call's log in JupyterLab (issue 21): what an MCP server logs while its call runs shows in the call's card as a
small monospace block, collapsed too, as text (a control sequence is not run), and stays in the card's body once
the call has ended."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "asking_server.py"

CELL = textwrap.dedent(
    f"""\
    from ai_widgets import ChatWidget
    from ai_widgets.mcp import MCPServer
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    server = MCPServer.stdio({sys.executable!r}, [{str(SERVER)!r}], trust_annotations=True)


    def model(request):
        if request.tool_results():
            return ScriptedReply(text="The server said what it did.")
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="chatty", arguments={{"linger": 6}})])


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server])
    chat
    """
)


def test_a_servers_log_shows_in_the_running_call_card(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [CELL])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "do it")
    card = last_assistant(widget).locator(".aiw-tool-card")
    log = card.locator(".aiw-call-log")
    expect(card).to_have_attribute("data-state", "running", timeout=WAIT)
    expect(log).to_be_visible(timeout=WAIT)
    lines = log.locator(".aiw-call-log-line")
    expect(lines).to_have_text(["looking at the [31mfiles", 'warning: disk: {"disk": "almost full"}'])
    family = log.evaluate("el => getComputedStyle(el).fontFamily")
    assert "mono" in family.lower() or "courier" in family.lower(), family
    screenshot(widget, artifacts, "mcp-log-running")
    wait_idle(widget)
    expect(card).to_have_attribute("data-state", "completed")
    body = card.locator(".aiw-tool-body")
    if not body.is_visible():
        card.locator(".aiw-tool-toggle").first.click()
    expect(body.locator(".aiw-call-log-line")).to_have_count(2)
    screenshot(widget, artifacts, "mcp-log-ended")
    assert_no_widget_errors(page)
