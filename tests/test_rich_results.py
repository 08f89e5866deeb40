"""Rich results out of a tool (``ToolOutcome.display``, ``ai_widgets._rich.display_form``): each kind of object a
notebook shows richly, the odd and hostile ones, the budgets, and the bundle kept through the history file."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import ipywidgets
import matplotlib
import pandas as pd
import polars as pl
import pytest
from IPython.display import HTML, SVG, Image, Markdown
from PIL import Image as PILImage

from ai_widgets import ChatSession, DisplayBundle, Message, ToolOutcome, tool
from ai_widgets._rich import MAX_DISPLAY_CHARS, MAX_DISPLAY_TEXT_CHARS, WIDGET_VIEW_TYPE, display_form, is_rich
from ai_widgets.messages import dump_messages, load_messages
from ai_widgets.outcome import outcome_summary, safe_outcome
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.providers.images import GIF, JPEG, PNG

matplotlib.use("agg")
from matplotlib.figure import Figure

PLOTLY_TYPE = "application/vnd.plotly.v1+json"


class PlotlyLike:
    """A chart as plotly's Figure shows itself (plotly is not installed here): its JSON and an HTML page that is all
    script, plus a PNG, through ``_repr_mimebundle_``."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {
            PLOTLY_TYPE: {"data": [{"type": "bar", "y": [1, 2]}], "layout": {}},
            "text/html": '<div id="p"></div><script>Plotly.newPlot("p")</script>',
            "image/png": PNG,
            "text/plain": "Figure({'data': [{'type': 'bar'}]})",
        }


def form(value: Any) -> DisplayBundle:
    outcome = ToolOutcome.success(value)
    assert outcome.display is not None, value
    assert outcome.value is None
    return outcome.display


def decoded(bundle: DisplayBundle, mime: str) -> bytes:
    return base64.b64decode(bundle.data[mime])


def test_a_matplotlib_figure_and_its_axes_are_their_png_and_the_model_gets_the_image() -> None:
    figure = Figure(figsize=(2, 1), dpi=30)
    axes = figure.add_subplot()
    axes.plot([1, 2])
    for value in (figure, axes):
        bundle = form(value)
        assert decoded(bundle, "image/png").startswith(b"\x89PNG")
        assert bundle.image() == ("image/png", bundle.data["image/png"])
        assert bundle.data["text/plain"] == bundle.text
    assert form(figure).text == "Figure(60x30)" or form(figure).text.startswith("<Figure size 60x30")


def test_a_pandas_frame_shows_its_html_table_and_the_model_reads_its_bounded_text_view() -> None:
    frame = pd.DataFrame({"a": range(100), "b": ["x"] * 100})
    bundle = form(frame)
    assert "<table" in bundle.data["text/html"]
    assert bundle.image() is None
    assert bundle.text.startswith("pandas DataFrame:\n100 rows × 2 columns\nColumns (dtype): a (int64), b (")
    assert "(Not shown: 80 of 100 rows.)" in bundle.text
    series = form(frame["a"])
    assert series.text.startswith("pandas Series:\n100 rows × 1 column")


def test_a_polars_frame_too() -> None:
    bundle = form(pl.DataFrame({"a": [1, 2, 3]}))
    assert "<table" in bundle.data["text/html"]
    assert bundle.text.startswith("polars DataFrame:\n3 rows × 1 column\nColumns (dtype): a (Int64)")


def test_ipython_display_objects() -> None:
    png = form(Image(data=base64.b64decode(PNG)))
    assert png.data["image/png"] == PNG
    html = form(HTML("<b>bold</b>"))
    assert html.data["text/html"] == "<b>bold</b>"
    assert html.text == "<b>bold</b>"  # not "<IPython.core.display.HTML object>"
    markdown = form(Markdown("**bold**"))
    assert markdown.data["text/markdown"] == "**bold**"
    assert markdown.text == "**bold**"
    svg = form(SVG('<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>'))
    assert svg.data["image/svg+xml"].startswith("<svg")
    assert svg.image() is None  # no provider takes SVG


def test_a_pil_image_is_its_png_whatever_its_mode() -> None:
    for mode in ("RGB", "CMYK", "P"):
        bundle = form(PILImage.new(mode, (3, 2)))
        assert decoded(bundle, "image/png").startswith(b"\x89PNG")


def test_an_ipywidget_keeps_its_view_and_its_text() -> None:
    slider = ipywidgets.IntSlider(value=4)
    try:
        bundle = form(slider)
        assert bundle.widget_model_id == slider.model_id
        assert bundle.data[WIDGET_VIEW_TYPE]["model_id"] == slider.model_id
        assert bundle.text == "IntSlider(value=4)"
        again = DisplayBundle.model_validate_json(bundle.model_dump_json())
        assert again == bundle
        assert again.widget_model_id == slider.model_id
    finally:
        slider.close()


def test_a_chart_of_an_unknown_kind_keeps_its_types_and_its_image() -> None:
    bundle = form(PlotlyLike())
    assert bundle.data[PLOTLY_TYPE] == {"data": [{"type": "bar", "y": [1, 2]}], "layout": {}}
    assert bundle.data["text/html"].startswith('<div id="p">')  # kept as given: the card sanitises what it shows
    assert bundle.image() == ("image/png", PNG)
    assert bundle.text == "Figure({'data': [{'type': 'bar'}]})"


def test_display_gives_it_explicitly_beside_a_value_and_a_dict_of_mime_types_is_a_bundle() -> None:
    outcome = ToolOutcome.success({"rows": 2}, text="Two rows.", display={"text/html": "<i>x</i>", "text/plain": "x"})
    assert outcome.value == {"rows": 2}
    assert outcome.display is not None
    assert outcome.display.data == {"text/html": "<i>x</i>", "text/plain": "x"}
    assert outcome.model_content() == '{"rows":2}\n\nx'
    bare = ToolOutcome.success(display=Markdown("# Hi"))
    assert bare.model_content() == "# Hi"
    assert outcome_summary(bare) == ("Result", "# Hi")
    assert ToolOutcome.success({"text/plain": "x"}).display is None  # a plain dict value stays a value


def test_plain_data_is_never_display() -> None:
    for value in ("text", 1, 2.5, None, {"a": 1}, [1], (1,), b"x", Figure, mock.Mock(), mock.MagicMock()):
        assert not is_rich(value), value
    assert ToolOutcome.success("text").display is None


class Raises:
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        raise RuntimeError("no bundle today")

    def _repr_html_(self) -> str:
        return "<p>html still</p>"


class NotADict:
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return ["not", "a", "dict"]

    def __repr__(self) -> str:
        return "NotADict()"


class Cycle:
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        loop: dict[str, Any] = {}
        loop["self"] = loop
        return {"application/json": loop, "text/plain": "a cycle"}


class BrokenImage:
    def _repr_png_(self) -> bytes:
        return base64.b64decode(PNG)[:20]  # cut short

    def _repr_jpeg_(self) -> str:
        return "not base64!"

    def __repr__(self) -> str:
        raise ValueError("no repr either")


class WrongTypes:
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return ({"text/html": 42, "text/plain": ["multi", "line"], 7: "x", "image/gif": GIF}, {"image/gif": {"w": 1}})


def test_odd_and_broken_reprs_never_fail_the_call_and_say_what_was_left_out() -> None:
    raises = form(Raises())
    assert raises.data["text/html"] == "<p>html still</p>"
    assert "[its _repr_mimebundle_ raised RuntimeError: no bundle today]" in raises.text
    assert form(NotADict()).text == "NotADict()\n[its _repr_mimebundle_ returned a list, not a dict]"
    cycle = form(Cycle())
    assert "application/json" not in cycle.data
    assert cycle.text == "a cycle\n[its application/json could not be kept]"
    broken = form(BrokenImage())
    assert set(broken.data) == {"text/plain"}
    assert broken.data["text/plain"] == "<BrokenImage>"
    assert "its image/png could not be kept" in broken.text
    assert "its image/jpeg could not be kept" in broken.text
    odd = form(WrongTypes())
    assert odd.data == {"text/plain": "multiline", "image/gif": GIF}
    assert odd.metadata == {"image/gif": {"w": 1}}
    assert odd.image() == ("image/gif", GIF)
    json.dumps(odd.model_dump())  # JSON, whatever came in


def test_a_huge_image_is_left_out_of_the_bundle_saying_so() -> None:
    huge = base64.b64decode(PNG) + b"\0" * (MAX_DISPLAY_CHARS * 3 // 4 + 10)  # a whole PNG, padded past the budget

    class Huge:
        def _repr_png_(self) -> bytes:
            return huge

        def _repr_jpeg_(self) -> str:
            return JPEG

        def __repr__(self) -> str:
            return "Huge()"

    bundle = form(Huge())
    assert set(bundle.data) == {"image/jpeg", "text/plain"}
    assert "its image/png (" in bundle.text
    assert "was left out: a result keeps at most 8,000,000" in bundle.text
    assert bundle.image() == ("image/jpeg", JPEG)


def test_a_long_text_form_is_bounded() -> None:
    bundle = form(HTML("<p>" + "y" * (MAX_DISPLAY_TEXT_CHARS * 2) + "</p>"))
    assert len(bundle.data["text/html"]) > MAX_DISPLAY_TEXT_CHARS * 2  # the card keeps it all
    assert len(bundle.text) < MAX_DISPLAY_TEXT_CHARS + 200
    assert "more characters left out" in bundle.text


def test_display_form_of_a_value_whose_text_has_lone_surrogates() -> None:
    got = display_form(Markdown("bad \udcff name"))
    assert got.data["text/markdown"] == "bad \ufffd name"


def test_safe_outcome_keeps_the_display() -> None:
    outcome = ToolOutcome.success(HTML("<b>x</b>"))
    kept = safe_outcome(outcome)
    assert kept.display == outcome.display


def test_the_bundle_round_trips_through_the_conversation_json() -> None:
    figure = Figure(figsize=(1, 1), dpi=10)
    figure.add_subplot()
    outcome = ToolOutcome.success(figure, text="A plot.")
    dumped = json.loads(outcome.model_dump_json())
    assert set(dumped["display"]) == {"data", "metadata", "text"}
    assert ToolOutcome.model_validate(dumped) == outcome


async def test_the_history_file_keeps_what_the_card_showed(tmp_path: Path) -> None:
    @tool
    def table() -> pd.DataFrame:
        """A table."""
        return pd.DataFrame({"n": [1, 2]})

    @tool
    def slider() -> ipywidgets.IntSlider:
        """A slider."""
        return ipywidgets.IntSlider(value=2)

    path = tmp_path / "chat.json"
    script = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="table"), ScriptedToolCall(name="slider")]), "Done."]
    )
    session = ChatSession(script, tools=[table, slider], history=path)
    await session.send("show")
    session.close()
    calls = [c for m in load_messages(path.read_text("utf-8")) for c in m.tool_calls]
    assert [c.tool_name for c in calls] == ["table", "slider"]
    shown = [c.outcome.display for c in calls if c.outcome is not None]
    assert len(shown) == 2
    assert all(d is not None for d in shown)
    assert shown[0] is not None
    assert "<table" in shown[0].data["text/html"]
    assert shown[1] is not None
    assert shown[1].data["text/plain"] == "IntSlider(value=2)"
    assert shown[1].widget_model_id is not None  # the view's id: a later kernel has no such model, the text shows
    again: list[Message] = load_messages(dump_messages(load_messages(path.read_text("utf-8"))))
    assert [c.outcome for m in again for c in m.tool_calls] == [c.outcome for c in calls]


def test_a_failure_has_no_display() -> None:
    with pytest.raises(TypeError):
        ToolOutcome.failure("no", display=HTML("x"))  # type: ignore[call-arg]


async def test_a_sync_tools_display_is_made_on_its_own_thread_not_the_event_loops() -> None:
    made_on: list[int] = []

    class Drawn:
        def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
            made_on.append(threading.get_ident())
            return {"image/png": PNG, "text/plain": "drawn"}

    @tool
    def draw() -> Drawn:
        """Draws."""
        return Drawn()

    @tool
    def outcome() -> ToolOutcome:
        """Returns its own outcome (which has a rich repr of its own, and stays what it is)."""
        return ToolOutcome.success("as is")

    script = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="draw"), ScriptedToolCall(name="outcome")]), "ok"]
    )
    session = ChatSession(script, tools=[draw, outcome])
    await session.send("go")
    drawn, kept = (c.outcome for c in session.messages[1].tool_calls)
    assert drawn is not None
    assert drawn.display is not None
    assert drawn.display.image() == ("image/png", PNG)
    assert made_on
    assert threading.get_ident() not in made_on
    assert kept == ToolOutcome.success("as is")
