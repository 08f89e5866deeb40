"""Reading a conversation: the list follows new content (a long first reply, a turn driven from code) until the
person scrolls up, then offers "Jump to latest"; a stopped reply's half-streamed markdown is rendered; copy
buttons for a reply and a code block."""

from __future__ import annotations

import time

import pytest
from chat_ui import (
    IMPORTS,
    WAIT,
    assert_no_widget_errors,
    last_assistant,
    messages,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import Locator, expect

pytestmark = pytest.mark.e2e

# Every reply is long (60 paragraphs, about 13,000 characters) and takes a few seconds to stream.
LONG = (
    IMPORTS
    + """
paragraphs = [f"Paragraph {i}: " + " ".join(f"word{j}" for j in range(30)) for i in range(60)]
long_text = "\\n\\n".join(paragraphs)
chat = ChatWidget(
    transport=ScriptedTransport(lambda request: ScriptedReply(status=None, text=long_text), delay=0.012, slice_size=(16, 24))
)
chat
"""
)

GEOMETRY = """list => ({ top: list.scrollTop, height: list.scrollHeight, client: list.clientHeight,
                        below: list.scrollHeight - list.clientHeight - list.scrollTop })"""


def geometry(widget: Locator) -> dict:
    return widget.locator(".aiw-messages").evaluate(GEOMETRY)


def assert_follows(widget: Locator, seconds: float) -> int:
    """Samples the list while the reply streams: whenever it overflows, its end is in view. Returns how many
    samples overflowed."""
    overflowed = 0
    deadline = time.monotonic() + seconds
    reply = last_assistant(widget)
    while time.monotonic() < deadline and reply.get_attribute("data-status") == "in_progress":
        g = geometry(widget)
        if g["height"] > g["client"] + 50:
            overflowed += 1
            assert g["below"] <= 2, g
        time.sleep(0.15)
    return overflowed


def last_paragraph_in_view(widget: Locator, n: int) -> None:
    para = last_assistant(widget).locator("p", has_text=f"Paragraph {n}:")
    box, view = para.bounding_box(), widget.locator(".aiw-messages").bounding_box()
    assert box
    assert view
    assert box["y"] + box["height"] <= view["y"] + view["height"] + 1, (box, view)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_list_follows_until_scrolled_up(chromium_page, server, notebook_name, artifacts, app):
    page, srv, nb = chromium_page, server(app), notebook_name
    srv.write_notebook(nb, [LONG])
    widget = open_and_run(page, srv, nb)
    jump = widget.locator(".aiw-jump")
    listbox = widget.locator(".aiw-messages")

    # A long first reply in a fresh chat: the end stays in view as it streams out of the box.
    send_from_input(widget, "Tell me everything")
    expect(last_assistant(widget)).to_contain_text("Paragraph 3:", timeout=WAIT)
    # Sampled once it overflows (a tall window, or a loaded machine streaming slowly, overflows later).
    page.wait_for_function("el => el.scrollHeight > el.clientHeight + 50", arg=listbox.element_handle(), timeout=WAIT)
    assert assert_follows(widget, 1.5) >= 3
    expect(jump).to_be_hidden()

    # The person scrolls up: the list stays where they are while the reply grows, and offers the jump.
    box = listbox.bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    expect(jump).to_be_visible()
    page.wait_for_timeout(300)
    before = geometry(widget)
    page.wait_for_timeout(800)
    after = geometry(widget)
    assert last_assistant(widget).get_attribute("data-status") == "in_progress", "the reply ended too soon"
    assert after["height"] > before["height"], (before, after)  # it grew...
    assert abs(after["top"] - before["top"]) <= 1, (before, after)  # ...and the view stayed
    assert after["below"] > 100, after
    screenshot(widget, artifacts, f"test_list_follows-{app}-scrolled-up")

    # Jump to latest: at the end, and following again until the reply ends.
    jump.click()
    expect(jump).to_be_hidden()
    assert geometry(widget)["below"] <= 2
    assert_follows(widget, 20)
    wait_idle(widget)
    assert geometry(widget)["below"] <= 2
    last_paragraph_in_view(widget, 59)
    screenshot(widget, artifacts, f"test_list_follows-{app}-jumped")

    # A turn driven from code (`chat.send(...)` in the kernel) follows too.
    srv.kernel_eval(nb, "chat.send('And again, from code')")
    expect(messages(widget, "user").nth(1)).to_have_text("And again, from code", timeout=WAIT)
    expect(messages(widget, "assistant")).to_have_count(2, timeout=WAIT)
    expect(last_assistant(widget)).to_contain_text("Paragraph 5:", timeout=WAIT)
    assert assert_follows(widget, 20) >= 3
    wait_idle(widget)
    assert geometry(widget)["below"] <= 2
    last_paragraph_in_view(widget, 59)
    expect(jump).to_be_hidden()
    screenshot(widget, artifacts, f"test_list_follows-{app}-from-code")
    assert_no_widget_errors(page)


# The reply is one long emphasised sentence, slow enough that Stop always lands inside the emphasis; the second
# reply has a code block.
STOP_AND_COPY = (
    IMPORTS
    + """
long_text = "Sure. *What's the weather " + " ".join(f"word{i}" for i in range(600)) + " today?*"
code_reply = "Here it is:\\n\\n```python\\nprint('hi')\\n```\\n\\nRun it *once*."
script = [ScriptedReply(status=None, text=long_text), ScriptedReply(status=None, text=code_reply)]
chat = ChatWidget(transport=ScriptedTransport(script, delay=0.03))
chat
"""
)


def test_stopped_markdown_and_copy(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [STOP_AND_COPY])
    widget = open_and_run(page, srv, nb)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=srv.base_url)

    send_from_input(widget, "What's the weather?")
    reply = last_assistant(widget)
    expect(reply).to_contain_text("word20", timeout=WAIT)
    widget.locator(".aiw-stop").click()
    expect(reply).to_have_attribute("data-status", "cancelled", timeout=WAIT)
    # The half-streamed emphasis is rendered, not left as a raw asterisk.
    text = reply.locator(".aiw-text")
    expect(text.locator("em")).to_contain_text("What's the weather word0 word1")
    assert "*" not in text.inner_text()
    assert not srv.kernel_json(nb, "chat.session.messages[-1].text").endswith("*")
    screenshot(widget, artifacts, "test_stopped_markdown")

    # Copy a reply (its markdown) and a code block (its code only).
    send_from_input(widget, "Some code")
    reply = last_assistant(widget)
    expect(reply.locator(".aiw-code-block pre")).to_contain_text("print('hi')", timeout=WAIT)
    wait_idle(widget)
    copy_message = reply.locator(".aiw-copy-message")
    expect(copy_message).to_be_visible()
    copy_message.click()
    expect(copy_message).to_have_attribute("data-copied", "true")
    clip = page.evaluate("navigator.clipboard.readText()")
    assert clip == "Here it is:\n\n```python\nprint('hi')\n```\n\nRun it *once*.", clip
    reply.locator(".aiw-code-block").hover()
    copy_code = reply.locator(".aiw-copy-code")
    expect(copy_code).to_have_css("opacity", "1")
    screenshot(widget, artifacts, "test_copy_buttons")
    copy_code.click()
    expect(copy_code).to_have_attribute("data-copied", "true")
    assert page.evaluate("navigator.clipboard.readText()") == "print('hi')\n"
    # The buttons are not part of the text a person selects and copies.
    selected = reply.evaluate(
        "el => { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection();"
        " s.removeAllRanges(); s.addRange(r); return s.toString(); }"
    )
    assert "Copy" not in selected, selected
    assert "print('hi')" in selected, selected
    assert_no_widget_errors(page)
