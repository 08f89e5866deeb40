"""MCP prompts from the input box, in JupyterLab: a real MCP server (tests/mcp/servers/offers_server.py, over stdio)
among the chat's tools; typing ``/`` lists its prompts, the list filters as one types, Enter chooses one, its form
shows the arguments (descriptions, the required one marked); Send with the required one blank says so at its field
and sends nothing; filled and sent with Enter, the rendered prompt is the person's message and the scripted model's
reply shows what it was sent. A prompt's example goes before its question as earlier turns; one the kernel cannot
send (it ends with the assistant's message) is said in the form, and the input keeps its text. Light, and dark at
340 px."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, messages, open_and_run, screenshot, wait_idle
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.e2e

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "offers_server.py")

NOTEBOOK = textwrap.dedent(
    f"""\
    import sys

    from ai_widgets import ChatWidget
    from ai_widgets.mcp import MCPServer
    from ai_widgets.transports import ScriptedReply, ScriptedTransport

    server = MCPServer.stdio(sys.executable, [{SERVER!r}])


    def model(request):
        said = " | ".join(f"{{m.role.value}}: {{m.text}}" for m in request.messages if m.text and m.role.value == "user")
        return ScriptedReply(status=None, text="Got: " + said)


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[server])
    chat
    """
)


def typed(page: Page, box: Locator, text: str) -> None:
    box.press_sequentially(text, delay=20)  # key by key: the input events a person's typing makes
    page.wait_for_timeout(50)


@pytest.mark.parametrize(("theme", "width"), [(None, None), ("JupyterLab Dark", 340)], ids=["light", "dark-narrow"])
def test_slash_lists_prompts_fills_arguments_and_sends_the_rendered_prompt(
    chromium_page, server, notebook_name, artifacts, theme, width
):
    page, srv, nb = chromium_page, server("lab", theme=theme), notebook_name
    name = notebook_name.removesuffix(".ipynb")
    srv.write_notebook(nb, [NOTEBOOK])
    widget = open_and_run(page, srv, nb)
    if width:
        widget.evaluate(f"el => {{ el.style.width = '{width}px'; el.style.maxWidth = '{width}px'; }}")
    box = widget.locator(".aiw-input")
    box.click()

    # `/`: the server's prompts (the server starts now), each with its title or description.
    typed(page, box, "/")
    listing = widget.locator(".aiw-prompts")
    options = listing.locator(".aiw-prompt-option")
    expect(listing).to_be_visible()
    expect(options).to_have_count(5, timeout=WAIT)
    expect(options.locator(".aiw-prompt-label")).to_have_text(
        ["/review", "/hello", "/dialogue", "/few_shot", "/broken"]
    )
    expect(options.nth(0)).to_contain_text("Review code")
    screenshot(widget, artifacts, f"{name}-list")

    # Filtered as one types; arrows move; Enter chooses.
    typed(page, box, "e")
    expect(options.locator(".aiw-prompt-label")).to_have_text(
        ["/review", "/hello", "/dialogue", "/few_shot", "/broken"]
    )
    typed(page, box, "v")
    expect(options.locator(".aiw-prompt-label")).to_have_text(["/review"])
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    box.press("Enter")
    expect(listing).to_be_hidden()
    expect(box).to_have_value("/review")
    form = widget.locator(".aiw-prompt-form")
    expect(form).to_be_visible()
    expect(form.locator(".aiw-prompt-head")).to_contain_text("/review")
    expect(form.locator(".aiw-prompt-head")).to_contain_text("Review code")
    expect(form.locator(".aiw-prompt-description")).to_have_text("Asks for a review of some code.")
    expect(form.locator(".aiw-edit-name")).to_have_text(["code *", "language"])
    code = form.locator('[data-field="code"]')
    expect(code).to_be_focused()
    screenshot(widget, artifacts, f"{name}-form")

    # The required argument blank: said at its field, nothing sent.
    form.locator(".aiw-prompt-send").click()
    expect(form).to_contain_text("Required.")
    expect(messages(widget)).to_have_count(0)

    # Filled and sent with Enter: the rendered prompt is the person's message; the model answers it.
    code.fill("print(1)")
    code.press("Enter")
    expect(form).to_have_count(0, timeout=WAIT)
    wait_idle(widget)
    user = messages(widget, "user")
    expect(user).to_have_count(1)
    expect(user.first).to_contain_text("Please review this python code:")
    expect(user.first).to_contain_text("print(1)")
    expect(last_assistant(widget)).to_contain_text("Got: user: Please review this python code: print(1)")
    expect(box).to_have_value("")
    screenshot(widget, artifacts, f"{name}-sent")

    # Tab chooses too; the example goes before the question as an earlier turn.
    box.click()
    typed(page, box, "/few")
    expect(options).to_have_count(1, timeout=WAIT)
    box.press("Tab")
    word = form.locator('[data-field="word"]')
    word.fill("dog")
    word.press("Enter")
    expect(messages(widget)).to_have_count(6, timeout=WAIT)
    wait_idle(widget)
    expect(messages(widget).nth(2)).to_contain_text("Translate 'cat' into French.")
    expect(messages(widget).nth(3)).to_contain_text("chat")
    expect(messages(widget).nth(4)).to_contain_text("Translate 'dog' into French.")
    expect(last_assistant(widget)).to_contain_text(
        "user: Translate 'cat' into French. | user: Translate 'dog' into French."
    )

    # One that cannot be sent: said in the form; what was typed stays, and Escape closes the form only.
    box.click()
    typed(page, box, "/dia")
    expect(options).to_have_count(1, timeout=WAIT)
    box.press("Enter")
    topic = form.locator('[data-field="topic"]')
    topic.fill("owls")
    topic.press("Enter")
    problem = form.locator(".aiw-prompt-problem")
    expect(problem).to_contain_text("ends with the assistant's message", timeout=WAIT)
    expect(topic).to_have_value("owls")
    expect(box).to_have_value("/dialogue")
    expect(widget.locator(".aiw-banner-kernel")).to_have_count(0)  # said in the form, not again in a banner
    if width:
        edge = widget.bounding_box()
        shown = form.bounding_box()
        assert edge is not None
        assert shown is not None
        assert shown["x"] + shown["width"] <= edge["x"] + edge["width"] + 0.5, "the form goes off the widget's edge"
    screenshot(widget, artifacts, f"{name}-refused")
    topic.press("Escape")
    expect(form).to_have_count(0)
    expect(box).to_be_focused()  # the form's Escape, not the notebook's (command mode would take the focus)
    expect(box).to_have_value("/dialogue")
    expect(messages(widget)).to_have_count(6)
    assert_no_widget_errors(page)
