"""A 5,000-message chat in JupyterLab: it opens showing its newest message, scrolling to the top reaches the first,
and a notebook saved with widget state once it has them all reopens (no kernel) with every message."""

from __future__ import annotations

import textwrap
import time

import pytest
from chat_ui import IMPORTS, WAIT, assert_no_widget_errors, open_and_run, screenshot
from playwright.sync_api import expect
from test_saved_state import SAVE_STATE, save_and_reopen_without_kernel

pytestmark = pytest.mark.e2e

COUNT = 5_000

LONG_CHAT = IMPORTS + textwrap.dedent(
    f"""\
    from ai_widgets import ChatSession, Message
    from ai_widgets.messages import Role, TextPart

    earlier = [
        Message(
            role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
            parts=[TextPart(f"Message number {{i}}. " + ("A few words of an answer. " * 20 if i % 2 else "A question?"))],
        )
        for i in range({COUNT})
    ]
    chat = ChatWidget(ChatSession(ScriptedTransport(["ok"]), messages=earlier))
    chat
    """
)


def built(widget, i: int):
    return widget.locator(f".aiw-message:not(.aiw-unbuilt):has-text('Message number {i}.')")


def shown_in_list(widget, i: int) -> bool:
    """Whether message ``i`` is built and inside the visible part of the scrolling list."""
    return bool(
        widget.locator(".aiw-messages").evaluate(
            """(box, text) => {
                const el = [...box.querySelectorAll(".aiw-message:not(.aiw-unbuilt)")]
                    .find((m) => m.textContent.includes(text));
                if (!el) return false;
                const b = box.getBoundingClientRect(), r = el.getBoundingClientRect();
                return r.bottom > b.top && r.top < b.bottom;
            }""",
            f"Message number {i}.",
        )
    )


def scroll_to_first(widget, page) -> None:
    """Scrolls the list to the top, again and again as earlier messages are built above, until the first shows."""
    box = widget.locator(".aiw-messages")
    deadline = time.monotonic() + 60
    while not shown_in_list(widget, 0):
        assert time.monotonic() < deadline, "scrolling up never reached the first message"
        box.evaluate("el => { el.scrollTop = 0; }")
        page.wait_for_timeout(100)


def test_a_long_chat_opens_at_its_newest_message_and_scrolls_back_to_the_first(
    chromium_page, server, notebook_name, artifacts
):
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    srv.write_notebook(nb, [LONG_CHAT])
    widget = open_and_run(page, srv, nb)
    expect(built(widget, COUNT - 1)).to_have_count(1, timeout=WAIT)
    assert shown_in_list(widget, COUNT - 1)
    screenshot(widget, artifacts, "long-newest")
    scroll_to_first(widget, page)
    screenshot(widget, artifacts, "long-first")
    # Every message arrived and was built, once each.
    expect(widget.locator(".aiw-older-note")).to_have_count(0, timeout=60_000)
    expect(widget.locator(".aiw-message")).to_have_count(COUNT)
    expect(widget.locator(".aiw-unbuilt")).to_have_count(0)
    assert_no_widget_errors(page)

    # Saved with widget state now, the notebook holds the whole conversation, and shows it with no kernel.
    state, widget = save_and_reopen_without_kernel(page, srv, nb, lambda s: len(s.get("_history", [])) == COUNT)
    assert [m["index"] for m in state["_history"]] == list(range(COUNT))
    expect(built(widget, COUNT - 1)).to_have_count(1, timeout=WAIT)
    page.wait_for_timeout(300)  # the follow-up scroll to the end, once laid out
    assert shown_in_list(widget, COUNT - 1)
    expect(widget.locator(".aiw-older-note")).to_have_count(0, timeout=60_000)
    scroll_to_first(widget, page)
    expect(widget.locator(".aiw-message")).to_have_count(COUNT)
