"""Running a tool by hand, in JupyterLab (issue 12): ``run_tool(tool)`` with a required argument missing shows a
form from the tool's schema; a bad value gets the kernel's error at its field (the words the model would be told);
fixed, Run shows the result card, and the cell shows no repr under it. A finished card of a chat has "Run again": a
form below the chat with that call's arguments; Run shows the result, and the conversation is unchanged."""

from __future__ import annotations

import textwrap

import pytest
from chat_ui import (
    WAIT,
    assert_no_widget_errors,
    messages,
    open_and_run,
    prompt_texts,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

BOOK = textwrap.dedent(
    """\
    from typing import Annotated, Literal

    from pydantic import Field

    from ai_widgets import ToolRisk, run_tool, tool


    @tool(title="Book a table", icon="📅", risk=ToolRisk.READ_ONLY)
    def book_table(
        restaurant: Annotated[str, Field(description="The restaurant's name.")],
        guests: Annotated[int, Field(ge=1, le=12, description="How many people (1 to 12).")],
        time: Literal["18:00", "19:30", "21:00"] = "19:30",
        terrace: bool = False,
        requests: list[str] = [],
    ) -> str:
        \"\"\"Books a table at a restaurant.\"\"\"
        where = " on the terrace" if terrace else ""
        extra = f" ({', '.join(requests)})" if requests else ""
        return f"Booked {restaurant} for {guests} at {time}{where}{extra}."
    """
)


def test_run_tool_form_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [BOOK, 'run = run_tool(book_table, restaurant="Chez Nous")'])
    open_and_run(page, srv, nb)
    cell = page.locator(".jp-NotebookPanel .jp-CodeCell").nth(1)
    widget = cell.locator(".aiw.aiw-bench-only")
    expect(widget).to_be_visible(timeout=WAIT)
    entry = widget.locator(".aiw-bench-entry")
    expect(entry).to_have_count(1)
    expect(cell.locator(".jp-OutputArea")).not_to_contain_text("ToolRun(")  # the form is the cell's value
    expect(widget.locator(".aiw-input")).to_be_hidden()
    expect(entry.locator(".aiw-bench-close")).to_have_count(0)
    expect(entry.locator(".aiw-tool-title").first).to_have_text("Book a table")

    # The form: the given argument, the defaults, the choices, the required marks and the hints; nothing ran.
    field = lambda name: entry.locator(f'[data-field="{name}"]')  # noqa: E731
    expect(field("restaurant")).to_have_value("Chez Nous")
    expect(field("guests")).to_have_value("")
    expect(field("time")).to_have_value("1")  # the default, "19:30"
    expect(field("time").locator("option:checked")).to_have_text("19:30")
    expect(field("terrace")).not_to_be_checked()
    expect(entry.locator(".aiw-edit-name", has_text="guests *")).to_be_visible()
    expect(entry).to_contain_text("How many people (1 to 12).")
    expect(entry.locator(".aiw-bench-run .aiw-tool-card")).to_have_count(0)
    assert srv.kernel_json(nb, "run.outcome") is None
    screenshot(widget, artifacts, "test_run_tool_form_lab-form")

    # A value the field accepts but the tool does not: the kernel's error at the field, nothing runs.
    field("guests").fill("40")
    entry.locator(".aiw-run").click()
    guests_error = entry.locator('.aiw-edit-row:has([data-field="guests"]) .aiw-edit-error')
    expect(guests_error).to_have_text("Input should be less than or equal to 12 (got 40)")
    expect(field("guests")).to_have_attribute("aria-invalid", "true")
    expect(entry.locator(".aiw-bench-run .aiw-tool-card")).to_have_count(0)
    told = srv.kernel_json(nb, "book_table.bind({'restaurant': 'Chez Nous', 'guests': 40}).message")
    assert "guests: Input should be less than or equal to 12 (got 40)" in told  # the model's words, at the field
    screenshot(widget, artifacts, "test_run_tool_form_lab-error")

    # Fixed, with more fields filled; Enter in a one-line field runs (and Shift+Enter never re-runs the cell).
    prompts = prompt_texts(page)
    field("guests").fill("4")
    expect(guests_error).to_have_text("")  # fixing a field clears its message
    field("time").select_option(label="21:00")
    field("terrace").check()
    field("requests").locator(".aiw-list-add").click()
    field("requests").locator(".aiw-list-input").first.fill("high chair")
    field("guests").press("Shift+Enter")
    page.wait_for_timeout(500)
    assert prompt_texts(page) == prompts, "Shift+Enter in the form re-ran the cell"
    field("guests").press("Enter")
    card = entry.locator(".aiw-bench-run .aiw-tool-card")
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    result = "Booked Chez Nous for 4 at 21:00 on the terrace (high chair)."
    expect(card.locator(".aiw-tool-result")).to_contain_text(result)
    assert srv.kernel_wait(nb, "run.outcome.value", lambda v: v == result) == result
    expect(field("guests")).to_have_value("4")  # the form stays for the next run
    expect(entry.locator(".aiw-run")).to_be_enabled()
    screenshot(widget, artifacts, "test_run_tool_form_lab-result")

    # Narrow: the form and the card stay inside the widget.
    widget.evaluate("el => { el.style.width = '360px'; el.style.maxWidth = '360px'; }")
    page.wait_for_timeout(200)
    box = widget.bounding_box()
    assert box is not None
    for selector in (".aiw-run", '[data-field="restaurant"]', ".aiw-tool-state, .aiw-state"):
        b = entry.locator(selector).first.bounding_box()
        assert b is not None, selector
        assert b["x"] + b["width"] <= box["x"] + box["width"] + 0.5, f"{selector} goes off the widget's right edge"
    screenshot(widget, artifacts, "test_run_tool_form_lab-narrow")
    assert_no_widget_errors(page)


WEATHER_CHAT = textwrap.dedent(
    """\
    from ai_widgets import ChatWidget, ToolRisk, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    calls = []


    @tool(title="Weather", icon="🌦", risk=ToolRisk.READ_ONLY)
    def get_weather(city: str, days: int = 1) -> dict:
        \"\"\"Gets the weather for a city.\"\"\"
        calls.append(city)
        return {"city": city, "sky": "sunny" if city == "Lisbon" else "rainy", "days": days}


    def model(request):
        if request.tool_results():
            v = request.tool_results()[-1].outcome.value
            return ScriptedReply(status=None, text=f"It is {v['sky']} in {v['city']}.")
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"})])


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005), tools=[get_weather])
    chat
    """
)


def test_run_again_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [WEATHER_CHAT])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "Weather in Lisbon?")
    card = widget.locator(".aiw-messages .aiw-tool-card").first
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    history = srv.kernel_json(nb, "[m.to_dict() for m in chat.session.messages]")

    # Run again (in the opened card): a form below the chat with the call's arguments, focused.
    card.locator(".aiw-tool-toggle").click()
    card.locator(".aiw-run-again").click()
    entry = widget.locator(".aiw-bench .aiw-bench-entry")
    expect(entry).to_have_count(1, timeout=WAIT)
    city = entry.locator('[data-field="city"]')
    expect(city).to_have_value("Lisbon")
    expect(city).to_be_focused()
    expect(entry.locator('[data-field="days"]')).to_have_value("1")
    expect(entry.locator(".aiw-bench-origin")).to_have_text("from the model's call")
    screenshot(widget, artifacts, "test_run_again_lab-opened")

    # Run it as the model did, then with a fix of the person's: the latest run's card shows each result.
    entry.locator(".aiw-run").click()
    run_card = entry.locator(".aiw-bench-run .aiw-tool-card")
    expect(run_card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(run_card.locator(".aiw-tool-result")).to_contain_text("sunny")
    city.fill("Porto")
    entry.locator(".aiw-run").click()
    expect(run_card.locator(".aiw-tool-result")).to_contain_text("rainy", timeout=WAIT)
    expect(run_card.locator(".aiw-tool-result")).to_contain_text("Porto")
    assert srv.kernel_wait(nb, "calls", lambda v: len(v) == 3) == ["Lisbon", "Lisbon", "Porto"]

    # The conversation is as it was: the same messages in the kernel and in the view.
    assert srv.kernel_json(nb, "[m.to_dict() for m in chat.session.messages]") == history
    expect(messages(widget)).to_have_count(2)
    assert srv.kernel_json(nb, "len(chat._history)") == 2
    screenshot(widget, artifacts, "test_run_again_lab-ran")

    # Close: the entry goes.
    entry.locator(".aiw-bench-close").click()
    expect(widget.locator(".aiw-bench-entry")).to_have_count(0)
    expect(widget.locator(".aiw-bench")).to_be_hidden()
    assert srv.kernel_json(nb, "chat._bench") == []
    assert_no_widget_errors(page)


DELETE = textwrap.dedent(
    """\
    from ai_widgets import ToolRisk, run_tool, tool

    deleted = []


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.\"\"\"
        deleted.append(path)
        return f"Deleted {path}."
    """
)


def test_run_tool_asks_for_approval_lab(chromium_page, server, notebook_name, artifacts):
    """A destructive tool asks in its card while the cell waits; the form's next run asks again."""
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [DELETE, 'outcome = run_tool(delete_file, path="notes.txt")'])
    open_and_run(page, srv, nb, wait_executed=False)
    widget = page.locator(".jp-NotebookPanel .jp-CodeCell").nth(1).locator(".aiw.aiw-bench-only")
    card = widget.locator(".aiw-bench-run .aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(widget.locator(".aiw-run")).to_be_disabled()  # this run goes on
    screenshot(widget, artifacts, "test_run_tool_asks_for_approval_lab-asks")
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    assert srv.kernel_wait(nb, "outcome.value", lambda v: v == "Deleted notes.txt.") == "Deleted notes.txt."

    # From the form: it asks again; declined, nothing is deleted.
    widget.locator('[data-field="path"]').fill("important.txt")
    widget.locator(".aiw-run").click()
    card = widget.locator(".aiw-bench-run .aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-decline").click()
    expect(card).to_have_attribute("data-state", "rejected", timeout=WAIT)
    assert srv.kernel_json(nb, "deleted") == ["notes.txt"]
    expect(widget.locator(".aiw-run")).to_be_enabled()
    screenshot(widget, artifacts, "test_run_tool_asks_for_approval_lab")
    assert_no_widget_errors(page)
