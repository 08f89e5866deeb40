"""A resource a call's result links to, opened from its card in JupyterLab (issue 21): a real MCP server
(tests/mcp/servers/offers_server.py, over stdio) answers with resource links; the card's Open reads one from the
server and shows it under its citation, as text; one the server cannot read says why there."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "offers_server.py")

NOTEBOOK = textwrap.dedent(
    f"""\
    import sys

    from ai_widgets import ChatWidget
    from ai_widgets.mcp import MCPServer
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    server = MCPServer.stdio(sys.executable, [{SERVER!r}], trust_annotations=True)


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text="Four links.")
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="links")])


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server], collapse_tool_calls=False)
    chat
    """
)


def test_a_linked_resource_opens_in_the_card(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [NOTEBOOK])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "what should I read?")
    card = widget.locator(".aiw-tool-card").first
    if card.get_attribute("data-state") == "awaiting_approval":
        card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    guide = card.locator('.aiw-citation[data-uri="docs://guide"]')
    guide.locator(".aiw-resource-open").click()
    expect(guide.locator(".aiw-resource-text")).to_contain_text("Start with `add`, then try `wipe`.", timeout=WAIT)
    expect(guide.locator(".aiw-resource-open")).to_be_disabled()
    gone = card.locator('.aiw-citation[data-uri="docs://gone"]')
    gone.locator(".aiw-resource-open").click()
    expect(gone.locator(".aiw-resource-error")).to_contain_text("It could not be read", timeout=WAIT)
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)
