"""Running a chat's cell again with the same ``history=`` file: the new chat takes the file over, and the old one
says so in its own view and refuses what is typed into it, in a real JupyterLab."""

from __future__ import annotations

from pathlib import Path

import pytest
from chat_ui import (
    WEATHER,
    WEATHER_ANSWER_SHOWN,
    assert_no_widget_errors,
    last_assistant,
    messages,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_the_older_chat_on_a_history_file_says_it_was_taken_over(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    history = f"{Path(nb).stem}.json"
    first = WEATHER.replace("tools=[get_weather])", f"tools=[get_weather], history={history!r})")
    assert first != WEATHER
    again = f"chat2 = ChatWidget(transport=ScriptedTransport(model, delay=0.01), tools=[get_weather], history={history!r})\nchat2"
    srv.write_notebook(nb, [first, again])
    open_and_run(page, srv, nb)
    old, new = page.locator(".aiw[data-rendered='true']").nth(0), page.locator(".aiw[data-rendered='true']").nth(1)
    expect(new).to_be_visible()

    notice = old.locator(".aiw-banner-kernel")
    expect(notice.first).to_contain_text("took it over")
    expect(notice.first).to_contain_text(history)
    expect(new.locator(".aiw-banner-kernel")).to_have_count(0)

    # What is typed into the old chat is refused there, and nothing enters either conversation.
    old.locator(".aiw-input").fill("Is this saved?")
    old.locator(".aiw-input").press("Enter")
    expect(notice).to_have_count(2)
    expect(notice.last).to_contain_text("took it over")
    expect(messages(old)).to_have_count(0)

    send_from_input(new, "What's the weather in Lisbon?")
    expect(last_assistant(new)).to_contain_text(WEATHER_ANSWER_SHOWN)
    wait_idle(new)
    expect(messages(new)).to_have_count(2)
    expect(messages(old)).to_have_count(0)
    screenshot(old, artifacts, "old-chat-taken-over")
    screenshot(new, artifacts, "new-chat-writes-the-file")
    saved = (srv.root / history).read_text() + (
        (srv.root / f"{history}.journal").read_text() if (srv.root / f"{history}.journal").exists() else ""
    )
    assert "What's the weather in Lisbon?" in saved
    assert "Is this saved?" not in saved
    assert_no_widget_errors(page)
