"""A notebook saved with JupyterLab's default settings (no widget state) and reopened, where no kernel knows its
widgets, shows the conversation from the static transcript after each view's output, whether the notebook is
trusted (saved by the person: JupyterLab would use its widget renderer, which finds no model) or not (changed
elsewhere: only sanitised HTML renders), with no error text in its place. While the chat lives, the transcript is
hidden: the conversation shows once. A reply's tables and code blocks render as HTML, and no script from the model's
text or a tool's result runs, in JupyterLab or in nbconvert's HTML."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser

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
        expect(shown).to_contain_text(WEATHER_ANSWER_SHOWN)  # the markdown rendered: **sunny** in bold
        expect(shown.locator("strong", has_text="sunny")).to_have_count(1)
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


# Script in a model's markdown and in a tool's result, three ways: a script element, an event handler, a link.
PAYLOADS = (
    "<script>window.__pwned=1</script> "
    '<img src=x onerror="window.__pwned=1"> '
    "[a link](javascript:window.__pwned=1) "
    '<a href="javascript:window.__pwned=1">another</a>'
)
RICH = textwrap.dedent(
    f"""\
    from ai_widgets import ChatWidget, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    PAYLOADS = {PAYLOADS!r}


    @tool(title="Fetch page", icon="🌐")
    def fetch_page(url: str) -> str:
        \"\"\"Fetches a page.\"\"\"
        return "page: " + PAYLOADS


    ANSWER = (
        "Sales by city:\\n\\n| city | sales |\\n|:--|--:|\\n| Lisbon | 12 |\\n| Porto | 7 |\\n\\n"
        "```python\\ntotal = 12 + 7  # <b>not bold</b>\\n```\\n\\n"
        "Careful with " + PAYLOADS
    )


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text=ANSWER)
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="fetch_page", arguments={{"url": "https://example.com"}})])


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005), tools=[fetch_page])
    chat
    """
)
RICH_ASK = 'reply = await chat.ask("Sum the sales.")'

# Nothing of the payloads is an element or an attribute that runs: no script element with it, no handler
# attribute, no javascript: link (in the whole page, or in an nbconvert page's body).
NOTHING_RUNS = """(root) => {
  const bad = [];
  for (const el of root.querySelectorAll("*")) {
    if (el.tagName === "SCRIPT" && el.textContent.includes("__pwned")) bad.push("script: " + el.textContent);
    for (const attr of el.attributes) {
      const value = attr.value.replace(/\\s+/g, "").toLowerCase();
      if (attr.name.startsWith("on") && value.includes("__pwned")) bad.push(`${el.tagName} ${attr.name}`);
      if (value.startsWith("javascript:")) bad.push(`${el.tagName} ${attr.name}=${attr.value}`);
    }
  }
  return bad;
}"""


def _rich_transcript_checks(page, transcript) -> None:
    """The model's table and code block rendered, the payloads shown as text, and nothing of them ran."""
    table = transcript.locator("table")
    expect(table).to_have_count(1)
    expect(table.locator("th")).to_have_text(["city", "sales"])
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first.locator("td")).to_have_text(["Lisbon", "12"])
    code = transcript.locator("pre code")
    expect(code.filter(has_text="total = 12 + 7")).to_have_text("total = 12 + 7  # <b>not bold</b>\n")
    expect(code.locator("b")).to_have_count(0)  # markup in a code block is its text
    expect(transcript).to_contain_text("Careful with")
    expect(transcript).to_contain_text("<script>window.__pwned=1</script>")  # said, as text
    expect(transcript).to_contain_text("page: <script>")  # the tool's result, as text
    expect(transcript.locator("img")).to_have_count(0)
    expect(transcript.locator("script")).to_have_count(0)
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate(NOTHING_RUNS, page.locator("body").element_handle()) == []


def test_a_saved_transcript_renders_tables_and_code_and_runs_no_script(chromium_page, server, notebook_name, artifacts):
    """Saved without widget state and reopened (trusted: JupyterLab runs a trusted output's scripts, so only the
    transcript's own sanitising stops them): the reply's table and code block render as HTML, and nothing from the
    model's text or the tool's result runs. nbconvert's HTML page of the same file neither."""
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [RICH, RICH_ASK])
    chat = open_and_run(page, srv, nb)
    expect(messages(chat, "assistant").last.locator("table")).to_have_count(1, timeout=WAIT)
    assert srv.kernel_json(nb, "reply.text").startswith("Sales by city:")
    assert page.evaluate("() => window.__pwned") is None  # the live view ran nothing either

    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=WAIT)
    path = srv.root / nb
    saved = json.loads(path.read_text())
    assert WIDGET_STATE not in json.dumps(saved.get("metadata", {}))
    html = [o["data"]["text/html"] for o in saved["cells"][0]["outputs"] if "text/html" in o.get("data", {})]
    assert "<table" in json.dumps(html), "the chat's transcript has no table"  # saved as a list of lines
    srv.shutdown_kernels(nb)
    page.reload(wait_until="domcontentloaded")

    transcripts = _transcripts(page)
    expect(transcripts).to_have_count(2, timeout=WAIT)  # the chat's and the asking cell's
    page.wait_for_timeout(1500)  # whatever would run has run by now
    for index in range(2):
        expect(transcripts.nth(index)).to_be_visible()
        _rich_transcript_checks(page, transcripts.nth(index))
    assert page.locator(".aiw").count() == 0
    transcripts.first.scroll_into_view_if_needed()
    transcripts.first.screenshot(path=str(artifacts / "aiw-saved-transcript-rendered.png"))
    errors = J.widget_errors(page.e2e_messages)
    assert not [e for e in errors if not _model_not_found(e)], errors

    # nbconvert's HTML (what nbviewer shows): the same table and code, nothing that runs, in a fresh page.
    out = srv.root / "converted"
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(out), str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    converted = (out / path.with_suffix(".html").name).read_text()
    assert _runnable(converted) == []  # the payloads are text wherever they show (the cell's source too)
    assert "<table" in converted
    page.goto((out / path.with_suffix(".html").name).as_uri(), wait_until="domcontentloaded")
    page.wait_for_timeout(1000)
    body = page.locator("body")
    expect(body.locator(".aiw-transcript")).to_have_count(2)
    for index in range(2):
        _rich_transcript_checks(page, body.locator(".aiw-transcript").nth(index))
    page.screenshot(path=str(artifacts / "aiw-saved-transcript-nbconvert.png"))


class _Runnable(HTMLParser):
    """The parts of an HTML page that would run a payload: a script element with it, a handler attribute with it,
    a ``javascript:`` address."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_script = tag == "script"
        for name, value in attrs:
            value = re.sub(r"\s+", "", value or "").lower()
            if (name.startswith("on") and "__pwned" in value) or value.startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value}>")

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and "__pwned" in data:
            self.found.append(f"<script>{data}")


def _runnable(html: str) -> list[str]:
    parser = _Runnable()
    parser.feed(html)
    return parser.found
