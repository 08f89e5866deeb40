"""A saved notebook shows the conversation again when re-opened, from the saved widget state, with no kernel
behind it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import jupyter_e2e as J
import pytest
from chat_ui import (
    DESTRUCTIVE,
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


def save_and_reopen_without_kernel(page, srv, nb: str, saved) -> tuple[dict, object]:
    """Saves the notebook (JupyterLab's save command) until its ChatWidget state satisfies ``saved(state)``, shuts
    the kernel down and reloads the page; returns that state and the widget shown from it."""
    path = srv.root / nb
    deadline = time.monotonic() + WAIT / 1000
    while True:
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        # The chat's model: not the FrontEndBundle model the views load their code from (an AnyModel too).
        models = [
            m
            for m in saved_widget_state(path).values()
            if m.get("model_name") == "AnyModel" and "code" not in m.get("state", {})
        ]
        if models and saved(models[0]["state"]):
            break
        assert time.monotonic() < deadline, f"no saved ChatWidget state as expected in {path}"
        time.sleep(0.5)
    srv.shutdown_kernels(nb)
    assert not [s for s in srv.api("GET", "/api/sessions") if s["path"] == nb]
    page.reload(wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=WAIT)
    return models[0]["state"], widget


def test_reopened_notebook_shows_conversation(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    srv.write_notebook(nb, [WEATHER])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "What's the weather in Lisbon?")
    expect(last_assistant(widget)).to_contain_text(WEATHER_ANSWER_SHOWN)
    wait_idle(widget)
    expect(messages(widget)).to_have_count(2)
    shown = messages(widget).all_inner_texts()

    # The whole conversation is in the chat model's state (the bundle model holds only the front-end code).
    state, widget = save_and_reopen_without_kernel(page, srv, nb, lambda s: len(s.get("_history", [])) == 2)
    assert [m["role"] for m in state["_history"]] == ["user", "assistant"], state["_history"]
    assert state["_live"] == []
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


def test_reopened_notebook_shows_a_reply_waiting_for_approval(chromium_page, server, notebook_name, artifacts):
    """Saved mid-turn, a call waiting for approval shows as it stood; with no kernel, Allow says so."""
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    srv.write_notebook(nb, [DESTRUCTIVE])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "delete my notes")
    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)

    state, widget = save_and_reopen_without_kernel(page, srv, nb, lambda s: bool(s.get("_live")))
    assert [m["role"] for m in state["_history"]] == ["user"]
    (reply,) = state["_live"]
    assert [p["state"] for p in reply["parts"] if p["kind"] == "tool_call"] == ["awaiting_approval"]
    expect(messages(widget, "user")).to_have_text(["delete my notes"])
    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval")
    expect(card.locator(".aiw-tool-title")).to_have_text("Delete file")
    # No kernel: no controls that cannot work. The card says it waited when saved and has not run.
    expect(widget).to_have_class(re.compile(r"\baiw-offline\b"))
    expect(card.locator(".aiw-approve-once")).to_be_hidden()
    expect(card.locator(".aiw-cancel-call")).to_be_hidden()
    expect(widget.locator(".aiw-stop")).to_be_hidden()
    expect(card.locator(".aiw-offline-note")).to_be_visible()
    expect(card.locator(".aiw-offline-note")).to_contain_text("has not run")
    state_text = card.locator(".aiw-state").evaluate("el => el.textContent + getComputedStyle(el, '::after').content")
    assert "when saved" in state_text, state_text
    assert srv.kernel_json(nb, "'deleted' in globals()") is False  # a fresh kernel: nothing ran, nothing could
    screenshot(widget, artifacts, "test_reopened_notebook_shows_a_reply_waiting_for_approval")
    assert_no_widget_errors(page)


SAVED = Path(__file__).parents[1] / "fixtures" / "saved"
STATIC = Path(__file__).parents[2] / "ai_widgets" / "static"


def test_a_notebook_saved_before_the_traits_took_an_underscore_shows_its_conversation(
    chromium_page, server, notebook_name, artifacts
):
    """A notebook whose saved state names the widget's own traits without the leading ``_`` (saved by that
    version), opened with today's front-end code in its bundle model, shows its conversation."""
    page, srv = chromium_page, server("lab", settings=SAVE_STATE)
    nb = json.loads((SAVED / "chat_with_public_traits.ipynb").read_text())
    for model in nb["metadata"]["widgets"][WIDGET_STATE]["state"].values():
        if "code" in model["state"]:  # the fixture leaves the bundle's code out: today's goes in
            model["state"]["code"] = (STATIC / "widget.js").read_text()
            model["state"]["_css"] = (STATIC / "widget.css").read_text()
    for cell in nb["cells"]:
        cell["metadata"]["trusted"] = True  # saved through the server, which signs it: its widget state is used
    srv.api("PUT", f"/api/contents/{notebook_name}", {"type": "notebook", "format": "json", "content": nb})
    J.open_notebook(page, srv, notebook_name)
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=WAIT)
    expect(messages(widget)).to_have_count(2)
    expect(messages(widget, "user")).to_have_text("What's the weather in Paris?")
    expect(last_assistant(widget)).to_contain_text("light rain")
    expect(widget.locator(".aiw-tool-card .aiw-tool-title")).to_have_text("Weather")
    screenshot(widget, artifacts, "test_a_notebook_saved_before_the_traits_took_an_underscore_shows_its_conversation")
    assert_no_widget_errors(page)
