"""A chat longer than its context window in JupyterLab: after a message is sent, a thin line shows right before the
first message the request carried, saying how much was not sent; light, dark and at 320 px, it stays readable and
inside the widget."""

from __future__ import annotations

import textwrap

import pytest
from chat_ui import IMPORTS, WAIT, assert_no_widget_errors, open_and_run, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

LONG_CHAT = IMPORTS + textwrap.dedent(
    """\
    from ai_widgets import ChatSession, Message, RequestOptions
    from ai_widgets.messages import Role, TextPart

    earlier = [
        Message(
            role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
            parts=[TextPart(f"Message number {i}. " + ("A short answer, in a few words." if i % 2 else "A question?"))],
        )
        for i in range(60)
    ]
    session = ChatSession(
        ScriptedTransport(["Noted."]), messages=earlier, request_options=RequestOptions(context_window=600)
    )
    chat = ChatWidget(session)
    chat
    """
)


@pytest.mark.parametrize("look", ["light", "dark", "narrow"])
def test_the_line_where_sending_stopped(chromium_page, server, notebook_name, artifacts, look):
    page = chromium_page
    srv = server("lab", theme="JupyterLab Dark" if look == "dark" else None)
    srv.write_notebook(notebook_name, [LONG_CHAT])
    widget = open_and_run(page, srv, notebook_name)
    if look == "narrow":
        widget.evaluate("el => { el.style.width = '320px'; el.style.maxWidth = '320px'; }")
    expect(widget.locator(".aiw-context-cut")).to_have_count(0)  # nothing was sent yet
    send_from_input(widget, "And now?")
    wait_idle(widget)
    marker = widget.locator(".aiw-context-cut")
    expect(marker).to_have_count(1, timeout=WAIT)
    expect(marker).to_have_attribute("role", "note")
    expect(marker).to_contain_text("Earlier messages were not sent to the model:")
    expect(marker).to_contain_text("over the 600-token window")
    # Right before the first message sent (a question: a turn starts there), which is one of the earlier ones.
    first_sent = marker.evaluate("el => el.nextElementSibling.textContent")
    assert "A question?" in first_sent, first_sent
    shown = marker.evaluate("el => el.previousElementSibling.textContent")
    assert "A short answer" in shown, shown
    # The line is near the end (few messages fit the window): in view, or a short scroll up at 320 px.
    # A little at a time, as a person scrolls (a jump would land on messages laid out at an estimated height, which
    # then take their real one), until the line stays in view.
    where = """el => {
        const b = el.closest('.aiw-messages').getBoundingClientRect(), r = el.getBoundingClientRect();
        return r.top < b.top ? -1 : r.bottom > b.bottom ? 1 : 0;
    }"""
    widget.scroll_into_view_if_needed()  # the page too: what is off the page's screen is laid out estimated
    settled = 0
    for _ in range(60):
        side = marker.evaluate(where)
        settled = settled + 1 if side == 0 else 0
        if settled == 3:
            break
        if side:
            marker.evaluate(f"el => {{ el.closest('.aiw-messages').scrollTop += {side * 60}; }}")
        page.wait_for_timeout(100)
    assert settled == 3, "the line does not stay in the list's view"
    box, line = widget.bounding_box(), marker.bounding_box()
    assert box is not None
    assert line is not None
    assert box["x"] - 0.5 <= line["x"]
    assert line["x"] + line["width"] <= box["x"] + box["width"] + 0.5
    text = marker.locator(".aiw-context-cut-text")
    assert text.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "the line's text is clipped"
    colours = marker.evaluate(
        "el => [getComputedStyle(el).color, getComputedStyle(el.closest('.aiw')).backgroundColor]"
    )
    assert colours[0] != colours[1], colours
    widget.screenshot(path=str(artifacts / f"context-cut-{look}.png"))
    assert_no_widget_errors(page)
