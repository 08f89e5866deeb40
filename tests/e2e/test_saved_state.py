"""A saved notebook shows the conversation again when re-opened, from the saved widget state, with no kernel
behind it."""

from __future__ import annotations

import json
import time

import pytest
from chat_ui import (
    WAIT,
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

SAVE_STATE = {"@jupyter-widgets/jupyterlab-manager/plugin": {"saveState": True}}
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def saved_widget_state(path) -> dict:
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def test_reopened_notebook_shows_conversation(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    srv.write_notebook(nb, [WEATHER])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "What's the weather in Lisbon?")
    expect(last_assistant(widget)).to_contain_text(WEATHER_ANSWER_SHOWN)
    wait_idle(widget)
    expect(messages(widget)).to_have_count(2)
    shown = messages(widget).all_inner_texts()

    # Save with Ctrl+S from command mode (click the cell's prompt, away from the widget's input box).
    page.locator(".jp-NotebookPanel .jp-Cell .jp-InputPrompt").first.click()
    page.keyboard.press("Control+s")
    path = srv.root / nb
    deadline = time.monotonic() + WAIT / 1000
    while True:
        state = saved_widget_state(path)
        chat_models = [m for m in state.values() if m.get("model_name") == "AnyModel"]
        if chat_models and chat_models[0]["state"].get("last_message"):
            break
        assert time.monotonic() < deadline, f"no saved ChatWidget state in {path}"
        time.sleep(0.2)
    message_models = [m["state"]["message"] for m in state.values() if "message" in m.get("state", {})]
    assert sorted(m["role"] for m in message_models) == ["assistant", "user"], message_models

    # No kernel: shut it down, then reload the page.
    srv.shutdown_kernels(nb)
    assert not [s for s in srv.api("GET", "/api/sessions") if s["path"] == nb]
    page.reload(wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=WAIT)
    expect(messages(widget)).to_have_count(2)
    expect(messages(widget, "user")).to_have_text("What's the weather in Lisbon?")
    expect(last_assistant(widget)).to_contain_text(WEATHER_ANSWER_SHOWN)
    expect(last_assistant(widget)).to_have_attribute("data-status", "completed")
    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "completed")
    expect(card.locator(".aiw-tool-title")).to_have_text("Weather")
    assert messages(widget).all_inner_texts() == shown
    # Lab starts a fresh kernel for the re-opened notebook; it knows nothing of the conversation, so what the page
    # shows came from the saved state.
    assert srv.kernel_json(nb, "'chat' in globals()") is False
    screenshot(widget, artifacts, "test_reopened_notebook_shows_conversation")
    assert_no_widget_errors(page)
