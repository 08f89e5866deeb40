"""Page helpers and notebook snippets shared by the ChatWidget browser tests."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import jupyter_e2e as J
from playwright.sync_api import Locator, Page, expect

WAIT = 20_000  # ms: generous waits; a passing test never comes near them
expect.set_options(timeout=WAIT)

# --------------------------------------------------------------------------- notebook code (runs in the kernel)

IMPORTS = textwrap.dedent(
    """\
    from ai_widgets import ChatWidget, ToolRisk, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
    """
)

# A weather tool and a model that calls it, then answers from its result. Small delays: streaming is real
# (many patches), the status line shows for a moment, and the test stays fast.
WEATHER = IMPORTS + textwrap.dedent(
    """\


    @tool(title="Weather", icon="🌦", risk=ToolRisk.READ_ONLY)
    def get_weather(city: str) -> dict:
        \"\"\"Gets the current weather for a city.

        Args:
            city: The city.
        \"\"\"
        return {"city": city, "sky": "sunny", "temperature": 21}


    # Each request's usage names a model genai-prices knows, so the footer shows what the turn cost.
    from ai_widgets.events import UsageUpdate
    usage = UsageUpdate(input_tokens=1000, output_tokens=40, model="gpt-4o-mini", provider="openai")


    def model(request):
        if request.tool_results():
            v = request.tool_results()[-1].outcome.value
            text = f"It is **{v['sky']}** in {v['city']}, {v['temperature']} °C."
            return ScriptedReply(status=None, text=text, usage=usage)
        return ScriptedReply(
            status="Checking the forecast…",
            text="Let me check. ",
            tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon", "unit": "celsius"})],
            usage=usage,
        )


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01, decide_delay=0.6), tools=[get_weather])
    chat
    """
)
WEATHER_ANSWER = "It is **sunny** in Lisbon, 21 °C."
WEATHER_ANSWER_SHOWN = "It is sunny in Lisbon, 21 °C."

# A destructive tool with a visible side effect (`deleted`), and a model that answers from the call's state.
DESTRUCTIVE = IMPORTS + textwrap.dedent(
    """\
    from ai_widgets import ToolCallState

    deleted = []


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.

        Args:
            path: The file.
        \"\"\"
        deleted.append(path)
        return f"Deleted {path}."


    def model(request):
        if request.tool_results():
            call = request.tool_results()[-1]
            if call.state is ToolCallState.REJECTED:
                return ScriptedReply(status=None, text=f"Declined: I did not delete anything ({call.decision_reason}).")
            return ScriptedReply(status=None, text=f"Done: {call.outcome.value}")
        return ScriptedReply(
            status="Deciding…", tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})]
        )


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.01, decide_delay=0.2), tools=[delete_file])
    chat
    """
)


# --------------------------------------------------------------------------- page


def open_and_run(page: Page, server: J.JupyterServer, nb: str, *, wait_executed: bool = True) -> Locator:
    """Opens ``nb`` (own Lab workspace), waits for the kernel (pitfall 1), runs all cells from the Run menu,
    and returns the rendered widget root (a positive marker: a broken widget is silent, pitfall 7)."""
    t0 = time.monotonic()
    J.open_notebook(page, server, nb, workspace=Path(nb).stem)
    t1 = time.monotonic()
    expect(page.locator(".jp-Dialog")).to_have_count(0)  # no "Select Kernel" (pitfall 3)
    expect(page.locator(".Toastify__toast")).to_have_count(0)  # no news toast (pitfall 2)
    J.run_all_cells(page)
    if wait_executed:
        J.wait_all_cells_executed(page, timeout=60_000)
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=WAIT)
    print(f"[timing] {nb}: open + kernel ready {t1 - t0:.1f}s, run all + render {time.monotonic() - t1:.1f}s")
    return widget


def send_from_input(widget: Locator, text: str) -> None:
    """Types into the widget's input box and presses Enter (what a person does)."""
    box = widget.locator(".aiw-input")
    box.click()
    box.fill(text)
    box.press("Enter")
    expect(box).to_have_value("")


def messages(widget: Locator, role: str | None = None) -> Locator:
    sel = ".aiw-message" if role is None else f".aiw-message[data-role='{role}']"
    return widget.locator(sel)


def last_assistant(widget: Locator) -> Locator:
    return messages(widget, "assistant").last


def wait_idle(widget: Locator) -> None:
    """The turn is over: Stop is hidden and the last reply is no longer in progress."""
    expect(widget.locator(".aiw-stop")).to_be_hidden(timeout=WAIT)
    expect(last_assistant(widget)).not_to_have_attribute("data-status", "in_progress", timeout=WAIT)


def prompt_texts(page: Page) -> list[str]:
    return page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt").all_inner_texts()


def screenshot(widget: Locator, artifacts: Path, name: str) -> Path:
    path = artifacts / f"{name}.png"
    widget.scroll_into_view_if_needed()
    widget.screenshot(path=str(path))
    return path


def assert_no_widget_errors(page: Page) -> None:
    bad = J.widget_errors(page.e2e_messages)  # type: ignore[attr-defined]
    assert not bad, bad


def weather_flow(page, srv, nb, artifacts, name):
    """Shared by the Lab and the Notebook 7 test: ask from the input box, watch the turn, check the kernel."""
    srv.write_notebook(nb, [WEATHER])
    widget = open_and_run(page, srv, nb)
    expect(widget.locator(".aiw-suggestion")).to_have_count(0)
    send_from_input(widget, "What's the weather in Lisbon?")

    user = messages(widget, "user").first
    expect(user).to_have_text("What's the weather in Lisbon?")
    status = widget.locator(".aiw-status-line.aiw-status-active")
    expect(status).to_be_visible(timeout=WAIT)
    expect(status).to_have_text("Checking the forecast…")
    expect(widget.locator(".aiw-stop")).to_be_visible()

    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_count(1, timeout=WAIT)
    expect(card).to_have_attribute("data-call-id", "call_1")
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator(".aiw-tool-title")).to_have_text("Weather")
    expect(card.locator(".aiw-state")).to_have_text("completed")

    reply = last_assistant(widget)
    expect(reply).to_contain_text(WEATHER_ANSWER_SHOWN, timeout=WAIT)
    expect(reply.locator(".aiw-text strong")).to_have_text("sunny")
    wait_idle(widget)
    expect(reply).to_have_attribute("data-status", "completed")
    expect(status).to_be_hidden()
    # The turn's two requests priced by genai-prices, per reply and in all: a cost after the tokens.
    cost = srv.kernel_json(nb, "str(chat.session.usage.cost)")
    assert float(cost) > 0
    priced = re.compile(
        r"Last turn: 2,000 in · 80 out · \$0\.\d+ · Session: 2,000 in · 80 out · \$0\.\d+ \(2 requests\)"
    )
    expect(widget.locator(".aiw-usage")).to_have_text(priced)

    # Expanded, the card shows the arguments and the result as JSON.
    card.locator(".aiw-tool-toggle").click()
    expect(card.locator(".aiw-tool-args .aiw-json")).to_contain_text("Lisbon")
    expect(card.locator(".aiw-tool-result .aiw-json")).to_contain_text("sunny")

    assert srv.kernel_wait(nb, "chat.session.messages[-1].text", lambda t: t.endswith(WEATHER_ANSWER)) == (
        "Let me check. " + WEATHER_ANSWER
    )
    assert srv.kernel_json(nb, "[m.role.value for m in chat.session.messages]") == ["user", "assistant"]
    assert srv.kernel_json(nb, "chat.session.messages[-1].tool_calls[0].state.value") == "completed"
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)


def keys_stay_in_widget(page, srv, nb, artifacts, name):
    """Shift+Enter in the message box is a new line and never reaches the notebook (which would re-run the cell
    and wipe the chat); Enter then sends both lines."""
    srv.write_notebook(nb, [WEATHER])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "What's the weather in Lisbon?")
    wait_idle(widget)
    prompts = prompt_texts(page)
    box = widget.locator(".aiw-input")
    box.click()
    box.type("first line")
    box.press("Shift+Enter")
    box.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    page.wait_for_timeout(800)  # a re-run would have started by now
    assert prompt_texts(page) == prompts, "Shift+Enter in the message box re-ran the cell"
    # Nor from a card header of the widget that has the focus (a person who tabbed to it).
    widget.locator(".aiw-tool-card button").first.focus()
    page.keyboard.press("Shift+Enter")
    page.wait_for_timeout(800)
    assert prompt_texts(page) == prompts, "a key in the widget re-ran the cell"
    expect(messages(widget)).to_have_count(2)
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 2
    box.click()
    box.press("Enter")
    expect(messages(widget, "user").last).to_contain_text("second line", timeout=WAIT)
    wait_idle(widget)
    assert srv.kernel_json(nb, "chat.session.messages[-2].text") == "first line\nsecond line"
    # Application shortcuts still work from the box: Ctrl+S saves the notebook.
    saved = srv.api("GET", f"/api/contents/{nb}?content=0")["last_modified"]
    box.click()
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 15
    while srv.api("GET", f"/api/contents/{nb}?content=0")["last_modified"] == saved:
        assert time.monotonic() < deadline, "Ctrl+S in the widget did not save the notebook"
        page.wait_for_timeout(200)
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)


def narrow_card(page, srv, nb, artifacts, name, width=320):
    """At a narrow width the card's title stays readable and every approval button stays inside the widget."""
    srv.write_notebook(nb, [DESTRUCTIVE])
    widget = open_and_run(page, srv, nb)
    widget.evaluate(f"el => {{ el.style.width = '{width}px'; el.style.maxWidth = '{width}px'; }}")
    send_from_input(widget, "delete my notes")
    card = widget.locator(".aiw-tool-card").first
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    page.wait_for_timeout(300)
    box = widget.bounding_box()
    assert box is not None
    right = box["x"] + box["width"] + 0.5
    title = card.locator(".aiw-tool-title").bounding_box()
    assert title is not None
    assert title["width"] >= 60, f"the title is squeezed to {title['width']}px"
    assert card.locator(".aiw-tool-title").evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "title clipped"
    for selector in (".aiw-approve-once", ".aiw-approve-always", ".aiw-decline", ".aiw-cancel-call", ".aiw-state"):
        b = card.locator(selector).bounding_box()
        assert b is not None, selector
        assert b["x"] >= box["x"] - 0.5, selector
        assert b["x"] + b["width"] <= right, f"{selector} goes off the widget's right edge"
    screenshot(widget, artifacts, name)
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    assert_no_widget_errors(page)


def edit_before_allowing(page, srv, nb, artifacts, name):
    """Edit turns the arguments into fields; a bad value is refused at its field; the call runs with the edit, and
    the card shows what the model asked and what the person changed."""
    srv.write_notebook(nb, [DESTRUCTIVE])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "delete my notes")
    card = widget.locator(".aiw-tool-card").first
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-edit-args").click()
    path = card.locator('.aiw-edit-input[data-field="path"]')
    expect(path).to_have_value("notes.txt")
    expect(path).to_be_focused()
    card.locator(".aiw-edit-cancel").click()  # Back: the three buttons again, nothing sent
    expect(card.locator(".aiw-edit-form")).to_have_count(0)
    card.locator(".aiw-edit-args").click()
    path.fill("")
    path.type("drafts/old.txt")
    path.press("Shift+Enter")  # never reaches the notebook
    screenshot(widget, artifacts, f"{name}-form")
    card.locator(".aiw-approve-edited").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    assert srv.kernel_wait(nb, "deleted", lambda v: v == ["drafts/old.txt"]) == ["drafts/old.txt"]
    edited = srv.kernel_json(nb, "chat.session.messages[-1].tool_calls[0].edited_arguments")
    assert edited == {"path": "drafts/old.txt"}
    expect(card.locator(".aiw-edited")).to_be_visible()
    expect(card).to_contain_text("notes.txt")  # what the model asked stays shown
    expect(card).to_contain_text("drafts/old.txt")
    wait_idle(widget)
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)


# A tool whose long code argument streams slowly, on a chat whose cards start collapsed.
STREAMING_CODE = IMPORTS + textwrap.dedent(
    """\
    CODE = '\"\"\"Fibonacci numbers.\"\"\"\\n\\n\\ndef fib(n):\\n    a, b = 0, 1\\n' + ''.join(
        f'    # step {i}: keep going\\n' for i in range(60)
    ) + '    return a\\n'


    @tool(title="Write file", icon="📝")
    def write_file(path: str, content: str) -> str:
        \"\"\"Writes a file.\"\"\"
        return f"wrote {len(content)} characters to {path}"


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text="Written.")
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="write_file", arguments={"path": "fib.py", "content": CODE})])


    chat = ChatWidget(
        transport=ScriptedTransport(model, delay=0.03, slice_size=(6, 10)), tools=[write_file], collapse_tool_calls=True
    )
    chat
    """
)


def watch_arguments_stream(page, srv, nb, artifacts, name):
    """While a long code argument streams into a collapsed card, its summary moves (decoded, the newest end and
    the size); opened, the string shows as code, its newest lines in view."""
    srv.write_notebook(nb, [STREAMING_CODE])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "write the fibonacci module")
    card = widget.locator(".aiw-tool-card").first
    expect(card).to_have_attribute("data-state", "streaming", timeout=WAIT)
    summary = card.locator(".aiw-tool-summary")
    expect(summary).to_contain_text("content:", timeout=WAIT)
    seen = set()
    deadline = time.monotonic() + 10
    while len(seen) < 3 and time.monotonic() < deadline and card.get_attribute("data-state") == "streaming":
        seen.add(summary.inner_text())
        page.wait_for_timeout(150)
    assert len(seen) >= 3, f"the summary did not move while the argument streamed: {seen}"
    shown = " ".join(seen)
    assert "\\" not in shown, f"raw JSON escapes in the summary: {shown}"
    assert any("step" in s and ("B)" in s) for s in seen), seen  # the newest end, with its size
    card.locator(".aiw-tool-toggle").click()  # open it while it still streams
    code = card.locator(".aiw-json-str.aiw-json-code")
    expect(code).to_be_visible(timeout=WAIT)
    screenshot(widget, artifacts, f"{name}-streaming")
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(card.locator(".aiw-json-size").first).to_contain_text("KB")
    wait_idle(widget)
    screenshot(widget, artifacts, name)
    assert_no_widget_errors(page)
