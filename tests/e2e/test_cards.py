"""What cards and tool cells say, in JupyterLab (issue 9, items 7-11): a failure's message without a click and the
tool author's frames first; the tool-call limit said once, and Continue running what it left; "allowed always"
and the run time apart from the wait; a registry shown as a table with its schemas as trees; run_tool's cell
showing its card and nothing more, the result labelled and text as text."""

from __future__ import annotations

import re
import textwrap

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

from ai_widgets.widget._help import TROUBLESHOOTING

pytestmark = pytest.mark.e2e

TOOLS = textwrap.dedent(
    """\
    from typing import Annotated, Literal

    from pydantic import BaseModel, Field

    from ai_widgets import ToolRegistry, ToolRisk, run_tool, tool


    class Address(BaseModel):
        street: Annotated[str, Field(description="Street and number.")]
        postcode: str | None = None


    @tool(title="Count words", icon="🔢", risk=ToolRisk.READ_ONLY)
    def count_words(text: str) -> str:
        \"\"\"Counts the words in a text.\"\"\"
        return f"{len(text.split())} words in <{text}>"


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: Annotated[str, Field(description=r"A path such as C:\\temp\\x.")]) -> str:
        \"\"\"Deletes a file.\"\"\"
        return "deleted"


    @tool(title="Send letter", icon="✉", requires_approval=True)
    def send_letter(to: Address, copies: int = 1, mode: Literal["post", "courier"] = "post") -> str:
        \"\"\"Sends a letter.\"\"\"
        return "sent"


    def parse_config(text):
        return int(text)


    @tool(title="Load config", icon="⚙")
    def load_config(text: str) -> int:
        \"\"\"Loads a config.\"\"\"
        return parse_config(text)


    ToolRegistry([count_words, delete_file, send_letter, load_config])
    """
)


def test_tool_cells_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(
        nb,
        [
            TOOLS,
            'run_tool(count_words, text="one two three")',
            'run_tool(load_config, text="not a number")',
            'counted = run_tool(count_words, text="a b")',
            "counted",
        ],
    )
    open_and_run(page, srv, nb)
    cells = page.locator(".jp-NotebookPanel .jp-CodeCell")
    outputs = [cells.nth(i).locator(".jp-OutputArea-output") for i in range(5)]

    # The registry: a table, one row per tool, the schema as a tree, backslashes kept, who asks.
    table = outputs[0].locator(".aiw-registry table")
    expect(table).to_be_visible()
    rows = table.locator("tbody > tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(1)).to_contain_text(r"C:\temp\x.")
    expect(rows.nth(1).locator("td").nth(2)).to_have_text("asks")
    expect(rows.nth(2).locator("td").nth(2)).to_have_text("asks")  # requires_approval
    expect(rows.nth(0).locator("td").nth(2)).to_have_text("runs unasked")
    expect(rows.nth(2).locator("ul ul code", has_text="street")).to_be_visible()  # nested model, nested list
    # The icon and the name stay on one line.
    icon, name = rows.nth(1).locator("td").first.locator("span span"), rows.nth(1).locator("td").first.locator("code")
    assert abs(icon.bounding_box()["y"] - name.bounding_box()["y"]) < 8
    screenshot(outputs[0], artifacts, "test_tool_cells_lab-registry")

    # run_tool: the card, and no ToolOutcome(...) under it; the result labelled and shown as text.
    expect(outputs[1]).to_have_count(1)
    card = outputs[1].locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(cells.nth(1).locator(".jp-OutputArea")).not_to_contain_text("ToolOutcome(")
    expect(card.locator(".aiw-tool-result .aiw-section-label")).to_have_text("Result")
    plain = card.locator(".aiw-result-plain")
    expect(plain).to_have_text("3 words in <one two three>")
    style = plain.evaluate("e => [getComputedStyle(e).fontFamily, getComputedStyle(e).color]")
    root_style = card.evaluate("e => [getComputedStyle(e).fontFamily, getComputedStyle(e).color]")
    assert style[0] == root_style[0], style  # the card's font, not monospace
    assert style[1] == root_style[1], style  # not the error/string colour
    screenshot(outputs[1], artifacts, "test_tool_cells_lab-run-tool")

    # A failing tool: the message shows without a click; the traceback starts with the author's frames.
    failed = outputs[2].locator(".aiw-tool-card")
    expect(failed).to_have_attribute("data-state", "failed", timeout=WAIT)
    expect(failed.locator(".aiw-tool-outcome-line")).to_have_text(
        "ValueError: invalid literal for int() with base 10: 'not a number'"
    )
    failed.locator("details.aiw-traceback summary").click()
    trace = failed.locator("details.aiw-traceback pre").inner_text()
    frames = re.findall(r'File "([^"]+)"', trace)
    exception_at = trace.index("ValueError: invalid literal")
    before = re.findall(r'File "([^"]+)"', trace[:exception_at])
    assert before, trace
    assert not any("ai_widgets" in f or "asyncio" in f for f in before), trace
    assert any("ai_widgets" in f for f in frames), trace  # still there, after
    screenshot(outputs[2], artifacts, "test_tool_cells_lab-failed")

    # The outcome, displayed again in a later cell, shows in one line.
    expect(cells.nth(3).locator(".jp-OutputArea")).not_to_contain_text("ToolOutcome(")
    expect(outputs[4]).to_have_text("Result: 2 words in <a b>")
    assert_no_widget_errors(page)


CHAT = textwrap.dedent(
    """\
    import time

    from ai_widgets import ChatWidget, SessionOptions, ToolCallState, ToolRisk, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    ran = []


    def parse_config(text):
        return int(text)


    @tool(title="Load config", icon="⚙")
    def load_config(text: str) -> int:
        \"\"\"Loads a config.\"\"\"
        return parse_config(text)


    @tool(title="Step", icon="👣", risk=ToolRisk.READ_ONLY)
    def step(name: str) -> str:
        \"\"\"One step.\"\"\"
        ran.append(name)
        return f"did {name}"


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.\"\"\"
        time.sleep(0.3)
        return f"Deleted {path}."


    def calls(*pairs):
        return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name=n, arguments=a) for n, a in pairs])


    def model(request):
        last, results = request.last_user_text, request.tool_results()
        if last == "load":
            return ScriptedReply(status=None, text="It did not load.") if results else calls(("load_config", {"text": "x"}))
        if last.startswith("delete"):
            return ScriptedReply(status=None, text="Done.") if results else calls(("delete_file", {"path": "a.txt"}))
        done = [p.outcome.value for m in request.messages for p in m.tool_calls
                if p.tool_name == "step" and p.state is ToolCallState.COMPLETED]
        if not done:
            return calls(("step", {"name": "first"}))
        if len(done) == 1:
            return calls(("step", {"name": "second"}), ("step", {"name": "third"}))
        return ScriptedReply(status=None, text="Finished: " + ", ".join(done) + ".")


    transport = ScriptedTransport(model, delay=0.005, decide_delay=0.1)
    chat = ChatWidget(transport=transport, tools=[load_config, step, delete_file], options=SessionOptions(max_iterations=1))
    chat
    """
)


def test_chat_cards_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [CHAT])
    widget = open_and_run(page, srv, nb)
    cards = widget.locator(".aiw-tool-card")

    # 1) A failed call, collapsed, shows its failure message.
    send_from_input(widget, "load")
    card = cards.nth(0)
    expect(card).to_have_attribute("data-state", "failed", timeout=WAIT)
    wait_idle(widget)
    expect(card.locator(".aiw-tool-body")).to_be_hidden()
    expect(card.locator(".aiw-tool-outcome-line")).to_have_text(
        "ValueError: invalid literal for int() with base 10: 'x'"
    )
    screenshot(widget, artifacts, "test_chat_cards_lab-failed")

    # 2) Allow always after a wait: the decision says how long it took, the run time is the run's alone; the next
    # call runs unasked and says "allowed always".
    send_from_input(widget, "delete a.txt")
    card = cards.nth(1)
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    page.wait_for_timeout(1500)
    card.locator(".aiw-approve-always").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    card.locator(".aiw-tool-toggle").click()
    expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Allowed always after \d\.\ds$"))
    elapsed = card.locator(".aiw-elapsed").inner_text()
    assert re.fullmatch(r"0\.\ds", elapsed), elapsed  # the 0.3 s run, not the 1.5 s wait
    expect(card.locator(".aiw-remembered")).to_be_hidden()
    send_from_input(widget, "delete again")
    card = cards.nth(2)
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    wait_idle(widget)
    expect(card.locator(".aiw-remembered")).to_have_text("allowed always")
    expect(card.locator(".aiw-approval")).to_have_count(0)
    screenshot(widget, artifacts, "test_chat_cards_lab-allowed-always")

    # 3) The tool-call limit: said once; the unrun calls marked "not run"; Continue runs them, then the model goes on.
    send_from_input(widget, "steps")
    reply = last_assistant(widget)
    expect(reply).to_have_attribute("data-status", "limit_reached", timeout=WAIT)
    error = reply.locator(".aiw-reply-error")  # said in the reply, with Continue: no banner says it again
    expect(error).to_be_visible()
    expect(reply.locator(".aiw-note")).to_be_hidden()
    expect(widget.locator(".aiw-banner")).to_have_count(0)
    assert widget.inner_text().count("Continue runs the 2 calls the model asked for next.") == 1
    action = error.locator(".aiw-error-action")  # its one action is Continue, not Retry
    expect(action).to_have_attribute("data-action", "continue")
    expect(action).to_have_attribute("data-label", "Continue")
    expect(widget.locator(".aiw-error-action:visible")).to_have_count(1)
    expect(error.locator("a.aiw-error-help")).to_have_attribute("href", f"{TROUBLESHOOTING}#max-iterations")
    skipped = reply.locator(".aiw-tool-card[data-state='skipped']")
    expect(skipped).to_have_count(2)
    expect(skipped.first.locator(".aiw-state")).to_have_text("not run")
    assert widget.inner_text().count("limit of 1 round") == 1  # said once: the cards say "not run", not why
    requests = srv.kernel_json(nb, "len(transport.requests)")
    screenshot(widget, artifacts, "test_chat_cards_lab-limit")

    error.locator(".aiw-error-action[data-action='continue']").click()
    resumed = last_assistant(widget)
    expect(resumed).to_contain_text("Finished: did first, did second, did third.", timeout=WAIT)
    wait_idle(widget)
    expect(resumed.locator(".aiw-tool-card[data-state='completed']")).to_have_count(2)
    expect(resumed.locator(".aiw-reply-error")).to_be_hidden()
    assert srv.kernel_json(nb, "ran") == ["first", "second", "third"]
    assert srv.kernel_json(nb, "len(transport.requests)") == requests + 1  # the model did not redo the step
    screenshot(widget, artifacts, "test_chat_cards_lab-continued")
    assert_no_widget_errors(page)


HUGE = textwrap.dedent(
    """\
    from ai_widgets import ChatWidget, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport


    @tool(title="Dump log", icon="📜")
    def dump_log() -> str:
        \"\"\"Returns the whole log.\"\"\"
        return "".join(f"line {n:07d} of the log\\n" for n in range(400_000))  # 9.6 MB


    chat = ChatWidget(
        transport=ScriptedTransport(
            [ScriptedReply(tool_calls=[ScriptedToolCall(name="dump_log", arguments={})]), ScriptedReply(text="Read it.")]
        ),
        tools=[dump_log],
    )
    chat
    """
)


def test_a_huge_result_shows_its_beginning_and_says_how_much_more_lab(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [HUGE])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "dump the log")
    wait_idle(widget)
    expect(last_assistant(widget)).to_contain_text("Read it.", timeout=WAIT)
    card = last_assistant(widget).locator(".aiw-tool-card").first
    card.locator(".aiw-tool-toggle").click()  # open the card
    result = card.locator(".aiw-result-plain")
    expect(result).to_contain_text("line 0000000 of the log", timeout=WAIT)
    expect(result).to_contain_text("more characters not shown here)")
    assert len(result.inner_text()) < 110_000
    screenshot(card, artifacts, "test_a_huge_result_lab")
    assert_no_widget_errors(page)
