"""A notebook saved with JupyterLab's default settings (no widget state) and reopened, where no kernel knows its
widgets, shows the conversation from the static transcript after each view's output, whether the notebook is
trusted (saved by the person: JupyterLab would use its widget renderer, which finds no model) or not (changed
elsewhere: only sanitised HTML renders), with no error text in its place. While the chat lives, the transcript is
hidden: the conversation shows once."""

from __future__ import annotations

import json
import re

import jupyter_e2e as J
import pytest
from chat_ui import WAIT, WEATHER, WEATHER_ANSWER_SHOWN, messages, open_and_run
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

QUESTION = "What's the weather in Lisbon?"
ASK = f"reply = await chat.ask({QUESTION!r})"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
ERRORS = re.compile(
    r"model not found|Error displaying widget|Loading widget|front-end code of this notebook is missing"
)


def _visible_outputs(page):
    return page.locator(".jp-Notebook .jp-CodeCell .jp-OutputArea-child:visible")


def _transcripts(page):
    # By class: an untrusted notebook's HTML is sanitised, which drops the data-aiw-transcript attribute.
    return page.locator(".jp-Notebook .aiw-transcript")


def _check_reopened(page, artifacts, name: str) -> None:
    transcripts = _transcripts(page)
    expect(transcripts).to_have_count(2, timeout=WAIT)  # the chat's and the asking cell's
    for index in range(2):
        shown = transcripts.nth(index)
        expect(shown).to_be_visible()
        expect(shown).to_contain_text(QUESTION)
        expect(shown).to_contain_text(WEATHER_ANSWER_SHOWN.replace("sunny", "**sunny**"))
        expect(shown).to_contain_text("get_weather")
        expect(shown).to_contain_text('"temperature": 21')  # the tool's result
    page.wait_for_timeout(1500)  # the widget manager has given up on the models by now
    visible = [text for text in _visible_outputs(page).all_inner_texts() if text.strip()]
    assert visible, "nothing shows"
    assert not [text for text in visible if ERRORS.search(text)], visible
    assert page.locator(".aiw").count() == 0  # no live view: no widget state, and a kernel that knows none
    page.screenshot(path=f"/tmp/{name}.png")
    page.locator(".jp-Notebook").screenshot(path=str(artifacts / f"{name}.png"))


@pytest.mark.parametrize(
    ("trusted", "kernel"), [(True, True), (False, True), (True, False)], ids=["trusted", "untrusted", "no-kernel"]
)
def test_a_notebook_saved_without_widget_state_shows_the_conversation(
    chromium_page, server, notebook_name, artifacts, trusted, kernel
):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [WEATHER, ASK])
    chat = open_and_run(page, srv, nb)
    turn = page.locator(".aiw.aiw-turn[data-rendered='true']")
    expect(messages(turn, "assistant")).to_contain_text(WEATHER_ANSWER_SHOWN, timeout=WAIT)
    expect(messages(chat, "assistant")).to_contain_text(WEATHER_ANSWER_SHOWN, timeout=WAIT)
    # Live: the conversation shows once, in the views; the transcripts after them are there, hidden.
    expect(_transcripts(page)).to_have_count(2, timeout=WAIT)
    expect(_transcripts(page).first).to_be_hidden()
    expect(_transcripts(page).last).to_be_hidden()
    page.locator(".jp-Notebook").screenshot(path=str(artifacts / f"{notebook_name}-live.png"))

    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=WAIT)
    path = srv.root / nb
    saved = json.loads(path.read_text())
    assert WIDGET_STATE not in json.dumps(saved.get("metadata", {}))  # JupyterLab's default: no widget state
    if not trusted:  # changed elsewhere: its signature no longer matches, so JupyterLab trusts none of its outputs
        saved["metadata"]["changed_elsewhere"] = True
        path.write_text(json.dumps(saved))
    srv.shutdown_kernels(nb)
    if not kernel:  # no kernel can start: the server refuses every new session
        page.route(
            "**/api/sessions*", lambda route: route.abort() if route.request.method == "POST" else route.fallback()
        )
    page.reload(wait_until="domcontentloaded")
    _check_reopened(page, artifacts, f"aiw-saved-transcript-{'trusted' if trusted else 'untrusted'}-{kernel}")
    if kernel:  # Lab started a fresh kernel for the reopened notebook: it knows nothing of the conversation
        assert srv.kernel_json(nb, "'chat' in globals()") is False
        # The saved view names a model no kernel has (no widget state was saved): jupyterlab-manager logs "widget
        # model not found" when the fresh kernel connects before the output renders (seen once), and only then.
        # That is JupyterLab's own line about the view it cannot show; nothing else may come from the widgets.
        errors = J.widget_errors(page.e2e_messages)
        assert not [e for e in errors if not _model_not_found(e)], errors
    else:  # "No Kernel" (the status bar says so, after JupyterLab's "Error Starting Kernel" dialog)
        assert not [s for s in srv.api("GET", "/api/sessions") if s["path"] == nb]
        expect(page.locator(".jp-Dialog")).to_contain_text("Error Starting Kernel")
        # JupyterLab's own page error from the session it could not start; nothing of the widgets'.
        errors = J.widget_errors(page.e2e_messages)
        assert [e for e in errors if "reading 'kernel'" not in e] == [], errors


def _model_not_found(message: str) -> bool:
    """jupyterlab-manager's own error for a saved view whose model is gone (its renderModel, not ours)."""
    return "widget model not found" in message and "jupyterlab-manager" in message and "ai_widgets" not in message
