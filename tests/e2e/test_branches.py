"""Edit, Regenerate, Retry and the branch switcher, clicked in JupyterLab (light, dark, narrow)."""

from __future__ import annotations

import re
import textwrap

import pytest
from chat_ui import (
    IMPORTS,
    assert_no_widget_errors,
    last_assistant,
    messages,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

from ai_widgets.widget._help import TROUBLESHOOTING

pytestmark = pytest.mark.e2e

# A model that numbers its answers, and fails the first time it is asked "fail" (as a provider does).
BRANCHING = IMPORTS + textwrap.dedent(
    """\
    answers = []


    def model(request):
        text = request.last_user_text
        answers.append(text)
        if text == "fail" and answers.count("fail") == 1:
            return ScriptedReply(status=None, text="Half an ans", error=RuntimeError("provider down"), error_after=2)
        return ScriptedReply(status=None, text=f"Answer {len(answers)} to: {text}")


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005))
    chat
    """
)


def _label(locator):
    return locator.locator(".aiw-branch-label")


def test_edit_regenerate_retry_and_switch(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [BRANCHING])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "first question")
    expect(last_assistant(widget)).to_contain_text("Answer 1 to: first question")
    wait_idle(widget)
    question = messages(widget, "user").first

    # Escape cancels the edit and puts the message back; nothing reaches the kernel.
    edit = question.locator(".aiw-edit-message")
    expect(edit).to_have_attribute("aria-label", "Edit this message and run it again")
    edit.click()
    box = question.locator(".aiw-edit-input")
    expect(box).to_be_focused()
    expect(box).to_have_value("first question")
    box.fill("something else")
    box.press("Escape")
    expect(box).to_have_count(0)
    expect(question).to_contain_text("first question")
    expect(edit).to_be_focused()
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 2

    # Enter sends the edit: the turn runs again from there, and the first branch stays (1/2).
    edit.press("Enter")  # the Edit button, reached with the keyboard
    box = question.locator(".aiw-edit-input")
    box.fill("second question")
    box.press("Shift+Enter")
    box.type("on two lines")
    screenshot(widget, artifacts, "test_branches-editing-light")
    box.press("Enter")
    question = messages(widget, "user").first
    expect(question).to_contain_text("second question")
    expect(last_assistant(widget)).to_contain_text("Answer 2 to: second question\non two lines")
    wait_idle(widget)
    expect(_label(question)).to_have_attribute("data-label", "2/2")
    assert srv.kernel_json(nb, "chat.session.branches(chat.session.messages[0].id).count") == 2

    # Regenerate on the last reply: another answer, and its own switcher.
    reply = last_assistant(widget)
    regenerate = reply.locator(".aiw-regenerate")
    expect(regenerate).to_have_attribute("aria-label", "Regenerate this reply")
    regenerate.click()
    expect(last_assistant(widget)).to_contain_text("Answer 3 to: second question")
    wait_idle(widget)
    reply = last_assistant(widget)
    expect(_label(reply)).to_have_attribute("data-label", "2/2")
    screenshot(widget, artifacts, "test_branches-switcher-light")

    # The switcher shows the earlier branches again, as they were.
    reply.locator(".aiw-branch-prev").click()
    expect(last_assistant(widget)).to_contain_text("Answer 2 to: second question")
    expect(_label(last_assistant(widget))).to_have_attribute("data-label", "1/2")
    messages(widget, "user").first.locator(".aiw-branch-prev").click()
    expect(messages(widget, "user").first).to_contain_text("first question")
    expect(last_assistant(widget)).to_contain_text("Answer 1 to: first question")
    expect(messages(widget)).to_have_count(2)
    assert srv.kernel_json(nb, "[m.text for m in chat.session.messages]") == [
        "first question",
        "Answer 1 to: first question",
    ]

    # Retry after an error: the error is said once, in the reply, with its one action, Retry (no banner, no
    # Continue), and a link to its entry on the published troubleshooting page; Retry answers again.
    send_from_input(widget, "fail")
    failed = last_assistant(widget)
    expect(failed).to_have_attribute("data-status", "error")
    error = failed.locator(".aiw-reply-error")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("role", "alert")
    expect(error.locator(".aiw-error-text")).to_contain_text("provider down")
    assert widget.inner_text().count("provider down") == 1, widget.inner_text()  # said once
    expect(widget.locator(".aiw-banner, .aiw-turn-banner")).to_have_count(0)
    expect(widget.locator(".aiw-error-action:visible")).to_have_count(1)  # one action in the whole chat
    expect(widget.locator(".aiw-error-action[data-action='continue']")).to_have_count(0)
    expect(widget.get_by_role("button", name=re.compile("^Continue"))).to_have_count(0)
    expect(failed.locator(".aiw-regenerate")).to_be_hidden()
    retry = error.locator(".aiw-error-action")
    expect(retry).to_have_attribute("data-label", "Retry")
    expect(retry).to_have_attribute("data-action", "retry")
    expect(retry).to_be_enabled()
    size = retry.bounding_box()
    assert size is not None
    assert min(size["width"], size["height"]) >= 24, size  # a target big enough to hit
    help_link = error.locator("a.aiw-error-help")
    expect(help_link).to_be_visible()
    expect(help_link).to_have_attribute("href", f"{TROUBLESHOOTING}#providererror")
    assert TROUBLESHOOTING.startswith("https://")
    expect(help_link).to_have_attribute("target", "_blank")
    expect(help_link).to_have_attribute("rel", "noopener noreferrer")
    screenshot(widget, artifacts, "test_branches-retry-light")
    retry.click()
    expect(last_assistant(widget)).to_contain_text("to: fail")
    expect(last_assistant(widget)).to_have_attribute("data-status", "completed")
    expect(widget.locator(".aiw-reply-error:visible")).to_have_count(0)  # the answer replaced the failed reply
    assert srv.kernel_json(nb, "[m.status.value for m in chat.session.messages][-2:]") == ["completed", "completed"]
    expect(_label(last_assistant(widget))).to_have_attribute("data-label", "2/2")

    # Narrow: the controls stay inside the widget.
    widget.evaluate("el => { el.style.width = '320px'; el.style.maxWidth = '320px'; }")
    messages(widget, "user").last.locator(".aiw-edit-message").click()
    right = widget.bounding_box()
    assert right is not None
    for locator in (
        messages(widget, "user").last.locator(".aiw-edit-send"),
        last_assistant(widget).locator(".aiw-branch-next"),
    ):
        b = locator.bounding_box()
        assert b is not None
        assert b["x"] + b["width"] <= right["x"] + right["width"] + 0.5
    screenshot(widget, artifacts, "test_branches-narrow")
    messages(widget, "user").last.locator(".aiw-edit-input").press("Escape")
    assert_no_widget_errors(page)


def test_branches_in_the_dark_theme(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab", theme="JupyterLab Dark"), notebook_name
    srv.write_notebook(nb, [BRANCHING])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "hello")
    wait_idle(widget)
    last_assistant(widget).locator(".aiw-regenerate").click()
    expect(last_assistant(widget)).to_contain_text("Answer 2 to: hello")
    wait_idle(widget)
    expect(_label(last_assistant(widget))).to_have_attribute("data-label", "2/2")
    messages(widget, "user").first.locator(".aiw-edit-message").click()
    screenshot(widget, artifacts, "test_branches-dark")
    assert_no_widget_errors(page)


ASK = "reply = await chat.ask('from a cell')\nprint('REPLY', reply.status.value, '|', reply.text)"


def test_regenerate_and_edit_in_the_asking_cell(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [BRANCHING, ASK])
    chat = open_and_run(page, srv, nb)
    turn = page.locator(".jp-Notebook .jp-CodeCell").nth(1).locator(".aiw.aiw-turn[data-rendered='true']")
    expect(turn.locator(".aiw-message[data-role='assistant']")).to_contain_text("Answer 1 to: from a cell")
    # Regenerate in the asking cell's own view: the turn runs again there, and in the chat.
    turn.locator(".aiw-message[data-role='assistant'] .aiw-regenerate").click()
    expect(turn.locator(".aiw-message[data-role='assistant']")).to_contain_text("Answer 2 to: from a cell")
    expect(_label(turn.locator(".aiw-message[data-role='assistant']"))).to_have_attribute("data-label", "2/2")
    expect(last_assistant(chat)).to_contain_text("Answer 2 to: from a cell")
    # Edit there too.
    turn.locator(".aiw-message[data-role='user'] .aiw-edit-message").click()
    box = turn.locator(".aiw-edit-input")
    box.fill("edited in the cell")
    box.press("Enter")
    expect(turn.locator(".aiw-message[data-role='user']")).to_have_text(["edited in the cell"])
    expect(turn.locator(".aiw-message[data-role='assistant']")).to_contain_text("Answer 3 to: edited in the cell")
    expect(turn.locator(".aiw-message")).to_have_count(2)
    expect(last_assistant(chat)).to_contain_text("Answer 3 to: edited in the cell")
    screenshot(turn, artifacts, "test_branches-asking-cell")
    assert_no_widget_errors(page)


def test_regenerate_and_switch_in_notebook7(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("notebook"), notebook_name
    srv.write_notebook(nb, [BRANCHING])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "hello")
    wait_idle(widget)
    last_assistant(widget).locator(".aiw-regenerate").click()
    expect(last_assistant(widget)).to_contain_text("Answer 2 to: hello")
    wait_idle(widget)
    last_assistant(widget).locator(".aiw-branch-prev").click()
    expect(last_assistant(widget)).to_contain_text("Answer 1 to: hello")
    expect(_label(last_assistant(widget))).to_have_attribute("data-label", "1/2")
    screenshot(widget, artifacts, "test_branches-notebook7")
    assert_no_widget_errors(page)
