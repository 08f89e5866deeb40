"""The quickstart's scripted model and how it picks a provider."""

from __future__ import annotations

import pydantic
import pytest

from ai_widgets import ChatSession, MessageStatus, ToolCallState, tool
from ai_widgets.demo import SCRIPTED_NOTICE, analyst_transport, demo_chat, demo_tools, demo_transport, pick_transport
from ai_widgets.transports import ScriptedTransport
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire


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


# --- the person's own things: their tool, their DataFrame, a regenerate, and an honest first line --------------------


async def test_the_demo_calls_the_persons_own_tool_with_arguments_from_its_schema_and_answers_from_its_result() -> None:
    session = ChatSession(demo_transport(realistic=False), tools=demo_tools())

    @session.tools.tool
    def count_words(text: str) -> dict[str, int]:
        """Counts the words in a text."""
        return {"words": len(text.split())}

    reply = await session.send("Count the words in 'the quick brown fox jumps'")
    (call,) = reply.tool_calls
    assert call.tool_name == "count_words"
    assert call.state is ToolCallState.COMPLETED
    assert call.parsed_arguments == {"text": "the quick brown fox jumps"}  # the quoted piece of the message
    assert "**words** = 5" in reply.text  # the answer is the tool's result, not canned text


async def test_the_demo_fills_a_schema_of_every_kind_from_the_message_or_with_examples() -> None:
    from typing import Literal

    seen: list[dict[str, object]] = []

    class Window(pydantic.BaseModel):
        start: str = pydantic.Field(json_schema_extra={"format": "date"})
        days: int

    @tool
    def book_room(
        room: Literal["small", "large"], guests: int, window: Window, contact: str, tags: list[str], vip: bool = False
    ) -> str:
        """Books a room."""
        seen.append({"room": room, "guests": guests, "window": window.model_dump(), "contact": contact, "tags": tags})
        return "booked"

    session = ChatSession(demo_transport(realistic=False), tools=[book_room])
    reply = await session.send('Book the large room for 12 guests, "Ada"')
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED, reply.tool_calls[0].outcome
    # The enum value and the number the message names; the quoted name; examples for what it does not say; the
    # optional field left to its default.
    assert seen == [
        {
            "room": "large",
            "guests": 12,
            "window": {"start": "2025-01-31", "days": 3},
            "contact": "Ada",
            "tags": ['Book the large room for 12 guests, "Ada"'],
        }
    ]
    assert "vip" not in reply.tool_calls[0].parsed_arguments
    assert "**booked**" in reply.text


async def test_the_demo_describes_an_attached_dataframe_from_its_shape_columns_and_dtypes() -> None:
    pandas = pytest.importorskip("pandas")
    sales = pandas.DataFrame(
        {"region": ["North", "South", "North"], "revenue": [120.0, 98.5, 132.0], "units": [3, 4, 5]}
    )
    session = ChatSession(demo_transport(realistic=False), tools=demo_tools())
    reply = await session.send("@sales how is revenue doing?", attach={"sales": sales})
    assert reply.tool_calls == []
    assert "3 rows × 3 columns" in reply.text
    assert "`region` (str)" in reply.text or "`region` (object)" in reply.text
    assert "`revenue` (float64)" in reply.text
    assert "`units` (int64)" in reply.text
    # The column the message names, from the rows sent.
    assert "`revenue` runs from 98.5 to 132 (total 350.5, mean 116.8)" in reply.text
    assert "units` runs" not in reply.text
    overview = await session.send("And this one?", attach={"sales": sales})
    assert "`units` runs from 3 to 5" in overview.text
    assert "`region` has 2 distinct values (North, South)" in overview.text


async def test_a_regenerate_words_the_answer_differently_the_same_way_every_run() -> None:
    async def texts() -> list[str]:
        session = ChatSession(demo_transport(realistic=False), tools=demo_tools())
        answers = [(await session.send("hello")).text]
        for _ in range(3):
            answers.append((await session.regenerate()).text)
        return answers

    first = await texts()
    assert len(set(first)) > 1, first
    assert first == await texts()  # deterministic: the message and the attempt pick the wording


async def test_the_first_reply_says_it_is_a_scripted_model_and_the_later_ones_do_not_repeat_it() -> None:
    session = ChatSession(demo_transport(realistic=False), tools=demo_tools())
    first = await session.send("What's the weather in Oslo?")
    assert first.text.splitlines()[0] == SCRIPTED_NOTICE.strip()
    assert "snow" in first.text
    later = await session.send("hello")
    assert SCRIPTED_NOTICE.strip() not in later.text
    again = await session.regenerate()
    assert SCRIPTED_NOTICE.strip() not in again.text


async def test_the_quickstart_chat_answers_an_at_mention_of_a_dataframe_from_the_frame(wire: Wire) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    pandas = pytest.importorskip("pandas")
    shell = InteractiveShell.instance()
    try:
        shell.user_ns["sales"] = pandas.DataFrame({"region": ["North", "East"], "revenue": [120, 60]})
        chat = demo_chat(transport=demo_transport(realistic=False))
        front = wire.comms[chat.comm.comm_id]
        front.handle({"type": "send", "text": "what is in @sales?", "attach": ["sales"], "id": "s1"})
        await wait_for(lambda: not chat.session.busy and len(chat.session.messages) == 2)
    finally:
        InteractiveShell.clear_instance()
    reply = chat.session.messages[-1].text
    assert reply.startswith(SCRIPTED_NOTICE)
    assert "2 rows × 2 columns" in reply
    assert "`revenue` (int64)" in reply
    assert "`revenue` runs from 60 to 120" in reply
    assert "Try:" not in reply  # not the canned tour
