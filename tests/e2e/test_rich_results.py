"""Rich tool results in JupyterLab: a matplotlib figure shows as an image in its card, a DataFrame as its table, an
ipywidget (an IntSlider) lives inside its card (moved in the page, the kernel's widget follows), and a hostile
``text/html`` result runs nothing; saved with the widget state and reopened without the kernel, the cards show the
figure and the table again."""

from __future__ import annotations

import re
import textwrap

import pytest
from chat_ui import (
    IMPORTS,
    WAIT,
    assert_no_widget_errors,
    last_assistant,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect
from test_saved_state import SAVE_STATE, save_and_reopen_without_kernel

pytestmark = pytest.mark.e2e

RICH = IMPORTS + textwrap.dedent(
    """\
    import ipywidgets
    import matplotlib.pyplot as plt
    import pandas as pd
    from IPython.display import HTML


    @tool(title="Plot")
    def plot(n: int) -> object:
        \"\"\"Plots the squares up to n.\"\"\"
        figure, axes = plt.subplots(figsize=(4, 2.5))
        axes.plot(range(n), [i * i for i in range(n)], marker="o")
        axes.set_title("Squares")
        return figure


    @tool(title="Table")
    def table() -> pd.DataFrame:
        \"\"\"A table of cities.\"\"\"
        return pd.DataFrame({"city": ["Lisbon", "Porto", "Braga"], "people": [545_000, 232_000, 193_000]})


    slider = ipywidgets.IntSlider(value=3, min=0, max=10, description="Level")


    @tool(title="Slider")
    def control() -> ipywidgets.IntSlider:
        \"\"\"A slider the person can move.\"\"\"
        return slider


    @tool(title="Page")
    def page() -> HTML:
        \"\"\"Hostile HTML.\"\"\"
        return HTML('<b>bold page</b><img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'
                    '<a href="javascript:window.__pwned=1">link</a>')


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text="Here they are.")
        return ScriptedReply(
            text="Showing. ",
            tool_calls=[
                ScriptedToolCall(name="plot", arguments={"n": 6}),
                ScriptedToolCall(name="table"),
                ScriptedToolCall(name="control"),
                ScriptedToolCall(name="page"),
            ],
        )


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005), tools=[plot, table, control, page],
                      collapse_tool_calls=False)
    chat
    """
)


def test_figures_tables_and_widgets_show_in_their_cards(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [RICH])
    widget = open_and_run(page, srv, nb)
    page.evaluate("() => { delete window.__pwned; }")
    send_from_input(widget, "show me")
    expect(last_assistant(widget)).to_contain_text("Here they are.", timeout=WAIT)
    wait_idle(widget)
    cards = widget.locator(".aiw-tool-card")
    expect(cards).to_have_count(4)

    # The figure: a PNG image that the browser decoded, at its size.
    image = cards.nth(0).locator(".aiw-display img")
    expect(image).to_be_visible()
    assert image.get_attribute("src").startswith("data:image/png;base64,iVBOR")
    width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 200, width

    # The frame: its table, sanitised, with its cells.
    table = cards.nth(1).locator(".aiw-display-html table")
    expect(table).to_be_visible()
    expect(table.locator("td")).to_have_text(["Lisbon", "545000", "Porto", "232000", "Braga", "193000"])

    # The widget: a live IntSlider from JupyterLab's widget manager, inside the card.
    live = cards.nth(2).locator(".aiw-display-widget")
    expect(live).to_have_attribute("data-live", "true", timeout=WAIT)
    slider = live.locator(".widget-slider")
    expect(slider).to_be_visible()
    expect(live.locator(".widget-readout")).to_have_text("3")
    screenshot(widget, artifacts, "rich-results")
    live.locator(".widget-readout").click()  # the readout is editable: type a new value, as a person would
    live.locator(".widget-readout").press("Control+a")
    live.locator(".widget-readout").type("7")
    live.locator(".widget-readout").press("Enter")
    expect(live.locator(".widget-readout")).to_have_text("7")
    srv.kernel_wait(nb, "slider.value", lambda v: v == 7)  # the kernel's widget moved with the card's

    # The hostile page: its text shows, nothing of it ran.
    html = cards.nth(3).locator(".aiw-display-html")
    expect(html).to_contain_text("bold page")
    assert html.locator("script, [onerror]").count() == 0
    assert html.locator("a").count() == 0  # the refused link is text
    assert page.evaluate("() => window.__pwned") is None
    cards.nth(2).scroll_into_view_if_needed()
    screenshot(cards.nth(2), artifacts, "rich-results-widget")
    screenshot(cards.nth(0), artifacts, "rich-results-figure")
    assert_no_widget_errors(page)


def test_a_saved_notebook_shows_the_figure_and_the_table_again(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab", settings=SAVE_STATE), notebook_name
    srv.write_notebook(nb, [RICH])
    widget = open_and_run(page, srv, nb)
    send_from_input(widget, "show me")
    expect(last_assistant(widget)).to_contain_text("Here they are.", timeout=WAIT)
    wait_idle(widget)

    state, widget = save_and_reopen_without_kernel(page, srv, nb, lambda s: len(s.get("_history", [])) == 2)
    calls = [p for p in state["_history"][1]["parts"] if p["kind"] == "tool_call"]
    assert [sorted(c["outcome"]["display"]["data"]) for c in calls] == [
        ["image/png", "text/plain"],
        ["text/html", "text/plain"],
        ["application/vnd.jupyter.widget-view+json", "text/plain"],
        ["text/html", "text/plain"],
    ]
    cards = widget.locator(".aiw-tool-card")
    expect(cards).to_have_count(4)
    expect(cards.nth(0).locator(".aiw-display img")).to_be_visible()
    assert cards.nth(0).locator(".aiw-display img").evaluate("img => img.complete && img.naturalWidth") > 200
    expect(cards.nth(1).locator(".aiw-display-html td").first).to_have_text("Lisbon")
    # The slider's model is in the saved widget state too: the card shows it again, or its text when it cannot.
    slider = cards.nth(2).locator(".aiw-display-widget")
    expect(slider).to_have_attribute("data-live", re.compile("true|false"), timeout=WAIT)
    if slider.get_attribute("data-live") == "false":
        expect(slider).to_have_text("IntSlider(value=3, description='Level', max=10)")
    screenshot(widget, artifacts, "rich-results-reopened")
    assert_no_widget_errors(page)
