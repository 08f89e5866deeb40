"""A remote agent over AG-UI in JupyterLab and Notebook 7 (issue 22): pydantic-ai's own AG-UI server (AGUIAdapter on uvicorn, in
the kernel's process on loopback) serves an agent whose sale needs approval. Its calls run on the server and their
cards say so; the sale's interrupt waits in its card with the real buttons; Allow once goes back as the protocol's
resume and the server's tool runs; a decline with a reason never runs it."""

from __future__ import annotations

import textwrap

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

NOTEBOOK = textwrap.dedent(
    """\
    import socket, threading, time

    import uvicorn
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.routing import Route

    from ai_widgets import ChatWidget
    from ai_widgets.transports import AGUITransport

    stock = {"pears": 4}


    async def shopkeeper(messages, info: AgentInfo):
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            yield str(last.content)
            return
        count = next((int(w) for w in str(last.content).split() if w.isdigit()), 1)
        yield {0: DeltaToolCall(name="sell", json_args=f'{{"item": "pears", "count": {count}}}')}


    agent = Agent(FunctionModel(stream_function=shopkeeper), output_type=[str, DeferredToolRequests])


    @agent.tool_plain(requires_approval=True)
    def sell(item: str, count: int) -> str:
        \"\"\"Sells some of an item.\"\"\"
        stock[item] -= count
        return f"Sold {count} {item}; {stock[item]} left."


    async def run_agent(request):
        return await AGUIAdapter.dispatch_request(request, agent=agent)


    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = Starlette(routes=[Route("/agent", run_agent, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    chat = ChatWidget(transport=AGUITransport(f"http://127.0.0.1:{port}/agent"))
    chat
    """
)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_a_remote_agents_approval_waits_in_its_card_and_goes_back_as_the_resume(
    chromium_page, server, notebook_name, artifacts, app
):
    page, srv, nb = chromium_page, server(app), notebook_name
    srv.write_notebook(nb, [NOTEBOOK])
    widget = open_and_run(page, srv, nb)

    send_from_input(widget, "Sell 3 pears")
    card = last_assistant(widget).locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    expect(card.locator(".aiw-provider")).to_be_visible()  # the agent's own tool: it runs on the server
    expect(card.locator(".aiw-approve-once")).to_be_visible()
    screenshot(widget, artifacts, f"ag-ui-{app}-asking")
    card.locator(".aiw-approve-once").click()
    wait_idle(widget)
    expect(card).to_have_attribute("data-state", "completed")
    card.locator(".aiw-tool-toggle").click()
    screenshot(widget, artifacts, f"ag-ui-{app}-allowed")
    expect(card.locator(".aiw-tool-result")).to_contain_text("Sold 3 pears; 1 left.")
    expect(last_assistant(widget).locator(".aiw-text")).to_contain_text("Sold 3 pears; 1 left.")

    # Declined with a reason: the server's tool never runs, and its model hears why.
    send_from_input(widget, "Sell 1 pears")
    card = last_assistant(widget).locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    card.locator(".aiw-decline-reason").fill("keep the last one")
    card.locator(".aiw-decline").first.click()
    wait_idle(widget)
    expect(card).to_have_attribute("data-state", "rejected")
    expect(last_assistant(widget).locator(".aiw-text")).to_contain_text("keep the last one")  # the model heard why
    assert "1 left" not in last_assistant(widget).inner_text()
    screenshot(widget, artifacts, f"ag-ui-{app}-declined")
    assert_no_widget_errors(page)
