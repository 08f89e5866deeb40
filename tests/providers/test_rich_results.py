"""Rich tool results (``ToolOutcome.display``: a figure, a frame) through every transport's request mapping: the model
gets the result's text form, and its image the way its provider takes one in a tool result."""

from __future__ import annotations

import base64
from typing import Any

import matplotlib
import pandas as pd
import pytest

from ai_widgets import Message, MessageStatus, TextPart, ToolOutcome, tool
from ai_widgets.messages import Role
from ai_widgets.session import ChatSession
from ai_widgets.transports import GeminiTransport
from ai_widgets.transports._history import IMAGE_RESULT_CHARS, outcome_images, outcome_text
from tests.providers.histories import finished_call
from tests.providers.kits import KITS
from tests.providers.kits.anthropic import MockAPI as AnthropicAPI
from tests.providers.kits.anthropic import reply_events, sse

matplotlib.use("agg")
from matplotlib.figure import Figure


def small_figure() -> Figure:
    figure = Figure(figsize=(1, 1), dpi=20)
    figure.add_subplot().plot([1, 3, 2])
    return figure


def history(outcome: ToolOutcome) -> list[Message]:
    call = finished_call("call_fig", "plot", "{}", outcome=outcome)
    return [Message.user("plot"), Message(Role.ASSISTANT, [TextPart("Plotting."), call]), Message.user("and?")]


def unused(request: Any) -> Any:
    raise AssertionError("request_messages sends nothing")


@pytest.fixture(scope="module")
def figure_outcome() -> ToolOutcome:
    outcome = ToolOutcome.success(small_figure())
    assert outcome.display is not None
    assert outcome.value is None
    return outcome


def png_of(outcome: ToolOutcome) -> str:
    assert outcome.display is not None
    data: str = outcome.display.data["image/png"]
    assert base64.b64decode(data).startswith(b"\x89PNG")
    return data


def test_anthropic_sends_the_figure_inside_the_tool_result(figure_outcome: ToolOutcome) -> None:
    transport = KITS["anthropic"].mock(unused)
    messages = transport.request_messages(history(figure_outcome))
    (result,) = messages[2]["content"][:1]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "call_fig",
        "content": [
            {"type": "text", "text": "<Figure size 20x20 with 1 Axes>"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_of(figure_outcome)}},
        ],
    }


def test_openai_responses_sends_the_figure_as_input_image(figure_outcome: ToolOutcome) -> None:
    transport = KITS["openai_responses"].mock(unused)
    items = transport.request_messages(history(figure_outcome))
    (output,) = [i for i in items if i.get("type") == "function_call_output"]
    assert output["output"] == [
        {"type": "input_text", "text": "<Figure size 20x20 with 1 Axes>"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png_of(figure_outcome)}"},
    ]


def test_openai_chat_sends_the_text_in_the_tool_message_and_the_figure_in_a_user_message_after(
    figure_outcome: ToolOutcome,
) -> None:
    transport = KITS["openai_chat"].mock(unused)
    messages = transport.request_messages(history(figure_outcome))
    tool_index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert messages[tool_index] == {
        "role": "tool",
        "tool_call_id": "call_fig",
        "content": "<Figure size 20x20 with 1 Axes>",
    }
    assert messages[tool_index + 1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The result of plot (call call_fig) includes this image:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png_of(figure_outcome)}"}},
        ],
    }


def test_gemini_sends_the_figure_as_inline_data(figure_outcome: ToolOutcome) -> None:
    data = png_of(figure_outcome)
    multimodal = GeminiTransport("gemini-3-flash-preview", client=KITS["gemini"].client())
    contents = multimodal.request_messages(history(figure_outcome))
    (response,) = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    assert response["response"] == {"output": "<Figure size 20x20 with 1 Axes>", "images": [{"$ref": "plot-1.png"}]}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": data, "displayName": "plot-1.png"}}]
    older = KITS["gemini"].mock(unused)  # a model without images in function responses: a user content follows
    contents = older.request_messages(history(figure_outcome))
    index = next(i for i, c in enumerate(contents) if any("functionResponse" in p for p in c["parts"]))
    assert contents[index + 1]["parts"] == [
        {"text": "plot-1.png, an image in the result of plot:"},
        {"inlineData": {"mimeType": "image/png", "data": data}},
    ]


@pytest.mark.parametrize("name", sorted(KITS))
def test_a_frame_is_sent_as_its_bounded_text_view_and_no_image(name: str) -> None:
    frame = pd.DataFrame({"city": [f"c{i}" for i in range(500)], "people": range(500)})
    outcome = ToolOutcome.success(frame)
    assert outcome.display is not None
    assert "text/html" in outcome.display.data
    text = outcome.model_content()
    assert text.startswith("pandas DataFrame:\n500 rows × 2 columns\nColumns (dtype): city (")
    assert "| 19 | c19 | 19 |" in text
    assert "c20" not in text
    assert "(Not shown: 480 of 500 rows.)" in text
    transport = KITS[name].mock(unused)
    body = str(transport.request_messages(history(outcome)))
    assert "500 rows × 2 columns" in body
    assert "<table" not in body  # the card's HTML is not what the model reads
    assert "image" not in body.replace("images", "")


def test_an_image_counts_against_the_results_budget(figure_outcome: ToolOutcome) -> None:
    long = ToolOutcome.success(text="x" * 50_000, display=small_figure())
    part = history(long)[1].parts[1]
    assert len(outcome_images(part, max_chars=10**6)) == 1
    limit = 20_000
    with_image = outcome_text(part, limit, images=1)
    assert with_image.startswith("x" * 100)
    assert f"at most {limit - IMAGE_RESULT_CHARS:,} are sent" in with_image
    assert f"at most {limit // 2:,} are sent" in outcome_text(part, limit, images=5)  # the text keeps half
    body = str(KITS["anthropic"].mock(unused).request_messages(history(long), max_tool_result_chars=limit))
    assert f"at most {limit - IMAGE_RESULT_CHARS:,} are sent" in body


def test_an_image_too_large_for_the_provider_stays_on_the_card() -> None:
    outcome = ToolOutcome.success(display=small_figure())
    part = history(outcome)[1].parts[1]
    assert outcome_images(part, max_chars=100) == []  # larger than the provider's limit on one image
    assert outcome_text(part) == "<Figure size 20x20 with 1 Axes>"


async def test_a_tool_that_returns_a_figure_gives_the_model_its_image_in_the_next_request() -> None:
    @tool
    def plot() -> Figure:
        """Plots."""
        return small_figure()

    call = {"type": "tool_use", "id": "toolu_p", "name": "plot", "input": {}}
    api = AnthropicAPI(
        sse(reply_events([call], stop_reason="tool_use")), sse(reply_events([{"type": "text", "text": "A line."}]))
    )
    session = ChatSession(api.transport(), tools=[plot])
    reply = await session.send("Plot it")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (result,) = [b for m in api.bodies[1]["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    text, image = result["content"]
    assert text == {"type": "text", "text": "<Figure size 20x20 with 1 Axes>"}
    assert image["source"]["media_type"] == "image/png"
    outcome = session.messages[1].tool_calls[0].outcome
    assert outcome is not None
    assert outcome.display is not None
    assert image["source"]["data"] == outcome.display.data["image/png"]
