"""The quickstart's scripted model and how it picks a provider."""

from __future__ import annotations

import pydantic
import pytest

from ai_widgets import ChatSession, MessageStatus, ToolCallState, tool
from ai_widgets.demo import analyst_transport, demo_tools, demo_transport, pick_transport
from ai_widgets.transports import ScriptedTransport
from tests.helpers import wait_for


async def test_demo_weather_delete_write_and_search() -> None:
    session = ChatSession(demo_transport(realistic=False), tools=demo_tools())
    weather = await session.send("What's the weather in Oslo?")
    assert "snow" in weather.text
    search = await session.send("Search for anywidget")
    (call,) = search.tool_calls
    assert call.provider_executed
    assert "anywidget.dev" in search.text
    write = await session.send("Write some code to a file")
    assert write.tool_calls[0].state is ToolCallState.COMPLETED
    assert "Wrote" in write.text
    task = __import__("asyncio").create_task(session.send("Delete my notes"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve(session.pending_approvals[0].tool_call_id, "rejected", reason="keep them")
    declined = await task
    assert "did **not** run" in declined.text
    assert "keep them" in declined.text
    hello = await session.send("hello")
    assert hello.status is MessageStatus.COMPLETED
    assert "scripted" in hello.text


def test_pick_transport_falls_back_to_the_scripted_model() -> None:
    transport, which = pick_transport({})
    assert isinstance(transport, ScriptedTransport)
    assert which == "No provider is configured; using the built-in scripted model (no key, no network)."
    transport, which = pick_transport({"AI_WIDGETS_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(transport, ScriptedTransport)
    assert "nothing answers at http://127.0.0.1:9/v1" in which


def test_pick_transport_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.transports import OpenAIChatTransport

    secret = "sk-" + "test-SECRET-DEMO-123456789"
    monkeypatch.delenv("AI_WIDGETS_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    transport, which = pick_transport()
    assert isinstance(transport, OpenAIChatTransport)
    assert secret not in which
    assert "OPENAI_API_KEY is set" in which


async def test_pick_transport_uses_a_reachable_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.transports import OpenAIChatTransport
    from tests.providers.loopback import Response, loopback

    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "test-SECRET-MUST-NOT-TRAVEL-1234")
    with loopback(
        lambda request: Response(headers={"content-type": "application/json"}, chunks=[b'{"data": []}'])
    ) as server:
        transport, which = pick_transport({"AI_WIDGETS_BASE_URL": server.url + "/v1", "AI_WIDGETS_MODEL": "qwen3"})
    assert isinstance(transport, OpenAIChatTransport)
    assert which == f"Using the OpenAI-compatible server at {server.url}/v1 (model qwen3), from AI_WIDGETS_BASE_URL."
    assert transport.client.api_key == "not-needed"  # OpenAI's key does not travel to another server


async def test_the_analyst_reads_the_table_it_was_sent_plots_and_answers_typed_questions() -> None:
    pandas = pytest.importorskip("pandas")
    sales = pandas.DataFrame(
        {
            "month": ["2025-01", "2025-02"] * 2,
            "region": ["North", "North", "East", "East"],
            "revenue": [100.0, 110.0, 50.0, 80.0],
        }
    )
    plotted: list[str] = []

    @tool
    def plot(region: str) -> str:
        """Plots a region."""
        plotted.append(region)
        return "a chart"

    class Growth(pydantic.BaseModel):
        region: str
        first: float
        last: float
        total_revenue: float

    session = ChatSession(analyst_transport(realistic=False), tools=[plot])
    hint = await session.send("Summarise")
    assert "Attach a table" in hint.text
    summary = await session.send("Summarise these sales", attach={"sales": sales})
    assert "**`sales`**: 4 rows × 3 columns (month, region, revenue). revenue by region:" in summary.text
    assert "| East | 50 | 80 | 130 | +60% |" in summary.text
    chart = await session.send("Plot the one that grew most")
    assert plotted == ["East"]
    assert chart.text.endswith("**East**'s revenue rose from 50 to 80 (+60%).")
    reply = await session.send("Which grew most?", output_type=Growth)
    assert reply.output == Growth(region="East", first=50, last=80, total_revenue=130)
