"""``@name`` attachments in JupyterLab: completion from the kernel's namespace, chips, a refused send that keeps its
text and chips, and the sent message keeping its attachments; light, dark and narrow."""

from __future__ import annotations

import re
import textwrap

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, messages, open_and_run, screenshot, wait_idle
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.e2e

# A DataFrame, a figure and a list in the kernel, and a scripted model that says what the message carried.
MENTIONS = textwrap.dedent(
    """\
    import pandas as pd
    from matplotlib.figure import Figure
    from ai_widgets import ChatWidget
    from ai_widgets.messages import FilePart, Role
    from ai_widgets.transports import ScriptedTransport


    def echo(request):
        user = [m for m in request.messages if m.role is Role.USER][-1]
        got = [f"file {p.name}" if isinstance(p, FilePart) else p.text.splitlines()[0] for p in user.parts]
        return "Got: " + " | ".join(got)


    df = pd.DataFrame({c: range(1000) for c in "abcd"})
    data = [1, 2, 3]
    fig = Figure(figsize=(4, 3))
    fig.add_subplot().plot([1, 3, 2, 4])
    unsendable = object()
    chat = ChatWidget(transport=ScriptedTransport([echo] * 5))
    chat
    """
)


def chips(widget: Locator) -> Locator:
    return widget.locator(".aiw-chips .aiw-chip")


def type_mention(page: Page, box: Locator, text: str) -> None:
    box.press_sequentially(text, delay=15)  # key by key: the input events a person's typing makes
    page.wait_for_timeout(50)


def test_mention_complete_attach_remove_send(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [MENTIONS])
    widget = open_and_run(page, srv, nb)
    box = widget.locator(".aiw-input")
    box.click()
    type_mention(page, box, "Compare @d")

    # The list: the kernel's variables starting with "d", attachable first, each with its kind.
    options = widget.locator(".aiw-mentions .aiw-mention")
    expect(widget.locator(".aiw-mentions")).to_be_visible()
    expect(options).to_have_count(2)
    expect(options.nth(0)).to_contain_text("@data")
    expect(options.nth(1)).to_contain_text("@df")
    expect(options.nth(1)).to_contain_text("DataFrame 1,000×4")
    screenshot(widget, artifacts, "test_mentions-list")
    box.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    box.press("Tab")
    expect(box).to_have_value("Compare @df ")
    expect(widget.locator(".aiw-mentions")).to_be_hidden()
    expect(chips(widget)).to_have_count(1)
    expect(chips(widget).nth(0)).to_contain_text("@df")
    expect(chips(widget).nth(0)).to_contain_text("DataFrame 1,000×4")

    # Escape closes the list and keeps the text; Enter accepts.
    type_mention(page, box, "with @fi")
    expect(options).to_have_count(1)
    box.press("Escape")
    expect(widget.locator(".aiw-mentions")).to_be_hidden()
    expect(box).to_have_value("Compare @df with @fi")
    expect(widget).to_be_visible()  # the notebook did not take Escape away from the widget
    type_mention(page, box, "g")
    expect(widget.locator(".aiw-mentions")).to_be_hidden()  # dismissed for this @token
    for _ in "@fig":
        box.press("Backspace")
    type_mention(page, box, "@f")
    expect(options).to_have_count(1)
    box.press("Enter")
    expect(box).to_have_value("Compare @df with @fig ")
    fig_chip = chips(widget).nth(1)
    expect(fig_chip).to_contain_text("Figure")
    expect(fig_chip.locator("img.aiw-chip-thumb")).to_be_visible()
    assert fig_chip.locator("img").evaluate("img => img.naturalWidth > 0 && img.naturalWidth <= 96")

    # A whole @name and a space attaches it too; its × (reached by keyboard) removes it.
    type_mention(page, box, "and @data ")
    expect(chips(widget)).to_have_count(3)
    expect(chips(widget).nth(2)).to_contain_text("list 3 items")
    screenshot(widget, artifacts, "test_mentions-chips")
    remove = chips(widget).nth(2).locator(".aiw-chip-remove")
    remove.focus()
    page.keyboard.press("Enter")
    expect(chips(widget)).to_have_count(2)

    # Sent: the text goes as typed; the message keeps its chips; the model got the text view and the file.
    box.click()
    box.press("End")
    box.press("Enter")
    expect(box).to_have_value("", timeout=WAIT)
    expect(chips(widget)).to_have_count(0)
    user = messages(widget, "user").last
    expect(user.locator(".aiw-plain")).to_contain_text("Compare @df with @fig and @data")
    expect(user.locator("details.aiw-attachment")).to_contain_text("df")
    expect(user.locator(".aiw-chip-file")).to_contain_text("fig.png")
    expect(user.locator(".aiw-chip-file img")).to_be_visible()
    reply = last_assistant(widget)
    expect(reply).to_contain_text("Got: Compare @df with @fig and @data", timeout=WAIT)
    expect(reply).to_contain_text("| Attached pandas DataFrame df: | file fig.png")
    wait_idle(widget)
    user.locator("details.aiw-attachment > summary").click()
    expect(user.locator(".aiw-attachment-body")).to_contain_text("1,000 rows × 4 columns")
    screenshot(widget, artifacts, "test_mentions-sent")

    # A variable that cannot be converted: the send is refused, nothing is sent, the text and chip stay.
    box.click()
    type_mention(page, box, "what about @unsendable ")
    expect(chips(widget)).to_have_count(1)
    expect(chips(widget).nth(0)).to_contain_text("cannot attach")
    box.press("Enter")
    expect(widget.locator(".aiw-banner-kernel")).to_contain_text("@unsendable: cannot attach", timeout=WAIT)
    expect(box).to_have_value("what about @unsendable ")
    expect(chips(widget)).to_have_count(1)
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 2
    screenshot(widget, artifacts, "test_mentions-refused")
    # An unknown name makes no chip.
    chips(widget).nth(0).locator(".aiw-chip-remove").click()
    box.fill("")
    type_mention(page, box, "@ghost ")
    page.wait_for_timeout(500)
    expect(chips(widget)).to_have_count(0)
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 2
    assert_no_widget_errors(page)


@pytest.mark.parametrize(("theme", "width"), [("JupyterLab Dark", 700), (None, 320)])
def test_mention_chips_dark_and_narrow(chromium_page, server, notebook_name, artifacts, theme, width):
    page, srv, nb = chromium_page, server("lab", theme=theme), notebook_name
    srv.write_notebook(nb, [MENTIONS])
    widget = open_and_run(page, srv, nb)
    widget.evaluate(f"el => {{ el.style.width = '{width}px'; el.style.maxWidth = '{width}px'; }}")
    box = widget.locator(".aiw-input")
    box.click()
    type_mention(page, box, "@d")
    expect(widget.locator(".aiw-mentions .aiw-mention")).to_have_count(2)
    name = f"test_mentions-{'dark' if theme else 'light'}-{width}"
    screenshot(widget, artifacts, f"{name}-list")
    box.press("Tab")
    type_mention(page, box, "and @fig and @df ")
    expect(chips(widget)).to_have_count(3)
    expect(chips(widget).nth(1).locator("img")).to_be_visible()
    right = widget.bounding_box()
    assert right is not None
    for i in range(3):
        b = chips(widget).nth(i).bounding_box()
        assert b is not None
        assert b["x"] + b["width"] <= right["x"] + right["width"] + 0.5, f"chip {i} goes off the widget"
    screenshot(widget, artifacts, f"{name}-chips")
    box.press("Enter")
    expect(last_assistant(widget)).to_contain_text(re.compile(r"Got: @data and @fig and @df"), timeout=WAIT)
    wait_idle(widget)
    screenshot(widget, artifacts, f"{name}-sent")
    assert_no_widget_errors(page)
