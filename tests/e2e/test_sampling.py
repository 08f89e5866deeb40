"""A server that asks to run the chat's model (MCP sampling), in JupyterLab (issue 21): the real asking server
(tests/mcp/servers/asking_server.py, over stdio) asks for a one-line summary while its tool runs; the tool's card
waits again for a decision, saying what would be sent (no Edit: the request is allowed or declined as asked);
Allow once runs it on the chat's own scripted model and the server's tool reports the answer; a decline with a
reason reaches the server and nothing is sent. Light, and dark at a narrow width."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import Locator, expect

pytestmark = pytest.mark.e2e

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "asking_server.py")

NOTEBOOK = textwrap.dedent(
    f"""\
    import sys

    from ai_widgets import ChatWidget
    from ai_widgets.mcp import MCPServer
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    server = MCPServer.stdio(sys.executable, [{SERVER!r}])
    sampled = []


    def model(request):
        if request.options.system_prompt == "You write one-line summaries.":  # the server's sampling request
            sampled.append(request.messages[-1].text)
            return ScriptedReply(status=None, text="Shed goes green.")
        if request.tool_results():
            return ScriptedReply(status=None, text="The tool said: " + str(request.tool_results()[-1].outcome.value))
        text = "The committee agreed to repaint the bike shed green."
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="summarize", arguments={{"text": text}})])


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server])
    chat
    """
)


def sampling_question(card: Locator) -> Locator:
    """Allows the call itself once (the server's annotations are not trusted), then returns the question the card
    shows when the running call's server asks to use the model."""
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(card.locator(".aiw-approval-question")).not_to_contain_text("asks to send")
    card.locator(".aiw-approve-once").click()
    question = card.locator(".aiw-approval-question")
    expect(question).to_contain_text("asks to send this to the chat's model", timeout=WAIT)
    expect(card).to_have_attribute("data-state", "awaiting_approval")
    return question


@pytest.mark.parametrize(("theme", "width"), [(None, None), ("JupyterLab Dark", 340)], ids=["light", "dark-narrow"])
def test_the_person_allows_a_servers_request_to_run_the_model(
    chromium_page, server, notebook_name, artifacts, theme, width
):
    page, srv, nb = chromium_page, server("lab", theme=theme), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [NOTEBOOK])
    widget = open_and_run(page, srv, nb)
    if width:
        widget.evaluate(f"el => {{ el.style.width = '{width}px'; el.style.maxWidth = '{width}px'; }}")
    send_from_input(widget, "summarise the minutes")
    card = widget.locator(".aiw-tool-card").first
    question = sampling_question(card)
    expect(question).to_contain_text("The MCP server 'asking-server'")
    expect(question).to_contain_text("at most 60 tokens")
    expect(question).to_contain_text("System: You write one-line summaries.")
    expect(question).to_contain_text(
        "User: Summarise in one line: The committee agreed to repaint the bike shed green."
    )
    expect(card.locator(".aiw-edit-args")).to_have_count(0)  # allowed or declined as asked
    assert srv.kernel_eval(nb, "len(sampled)") == "0"  # nothing sent before the person allows it
    if width:
        box, shown = widget.bounding_box(), question.bounding_box()
        assert box is not None
        assert shown is not None
        assert shown["x"] + shown["width"] <= box["x"] + box["width"] + 0.5, "the question goes off the widget's edge"
    screenshot(widget, artifacts, f"{name}-asks")

    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    expect(last_assistant(widget)).to_contain_text("summary: Shed goes green.")
    assert srv.kernel_eval(nb, "len(sampled)") == "1"
    screenshot(widget, artifacts, f"{name}-answered")
    assert_no_widget_errors(page)


def test_a_declined_request_reaches_the_server_and_nothing_is_sent(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [NOTEBOOK])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "summarise the minutes")
    card = widget.locator(".aiw-tool-card").first
    sampling_question(card)
    reason = card.locator(".aiw-decline-reason")
    if reason.count() and reason.is_visible():
        reason.fill("not this one")
    card.locator(".aiw-decline").click()
    expect(card).to_have_attribute("data-state", "failed", timeout=WAIT)
    wait_idle(widget)
    if card.get_attribute("class") and "aiw-collapsed" in (card.get_attribute("class") or ""):
        card.locator(".aiw-tool-toggle").click()
    expect(card.locator(".aiw-tool-result-slot")).to_contain_text(
        "The person declined the request of the MCP server 'asking-server' to run the model: not this one"
    )
    assert srv.kernel_eval(nb, "len(sampled)") == "0"
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)
