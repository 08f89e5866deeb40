"""Kernel objects as parts of a message (ai_widgets.attachments): every converter, the odd inputs, the budgets, the
providers' limits, and FilePart itself (its checks and its JSON form)."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import random
import sys
import threading
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

import ai_widgets.attachments as attachments
from ai_widgets import AttachmentError, AttachmentLimits, File, FilePart, Message, Preview, TextPart, register_converter
from ai_widgets._media import image_pixels
from ai_widgets.attachments import _CONVERTERS, message_attachments, object_parts, rich_bundle, table_text
from ai_widgets.messages import Role, conversation_markdown, dump_messages, load_messages
from tests.providers.images import GIF, JPEG, PDF, PNG, png_of

PNG_BYTES = base64.b64decode(PNG)
JPEG_BYTES = base64.b64decode(JPEG)
PDF_BYTES = base64.b64decode(PDF)


def dicts(parts: list[Any]) -> list[dict[str, Any]]:
    return [part.to_dict() for part in parts]


def only_text(parts: list[Any]) -> str:
    (part,) = parts
    assert isinstance(part, TextPart), parts
    return part.text


@pytest.fixture(autouse=True)
def _no_converters_left_behind() -> Any:
    before = dict(_CONVERTERS)
    yield
    _CONVERTERS.clear()
    _CONVERTERS.update(before)


# --- FilePart ---------------------------------------------------------------------------------------------------------


def test_a_file_part_round_trips_through_the_conversation_json() -> None:
    parts = [
        TextPart("look"),
        FilePart("image/png", data=PNG, name="chart.png"),
        FilePart("application/pdf", url="https://example.com/a.pdf"),
    ]
    again = load_messages(dump_messages([Message(Role.USER, parts)]))
    assert again[0].parts[1:] == parts[1:]
    assert again[0].text == "look"
    assert parts[1].size == len(PNG_BYTES)
    assert parts[1].raw() == PNG_BYTES
    assert parts[2].size is None
    assert parts[2].data_url == "https://example.com/a.pdf"
    assert parts[1].data_url == f"data:image/png;base64,{PNG}"
    assert "📎 chart.png, image/png, 70 B" in conversation_markdown(again)


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"media_type": "image/png"}, "exactly one of data"),
        ({"media_type": "image/png", "data": PNG, "url": "https://x"}, "exactly one of data"),
        ({"media_type": "png", "data": PNG}, "media type"),
        ({"media_type": "image/png", "data": "not base64!"}, "base64"),
        ({"media_type": "image/png", "data": f"data:image/png;base64,{PNG}"}, "base64"),
        ({"media_type": "image/png", "url": " "}, "url"),
    ],
)
def test_a_file_part_refuses_what_no_provider_could_read(fields: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        FilePart(**fields)
    good = json.loads(dump_messages([Message(Role.USER, [FilePart("image/png", data=PNG)])]))
    good["messages"][0]["parts"][0] = {"kind": "file", **fields}
    with pytest.raises(ValueError, match=why):  # a history file that holds one is refused as corrupt
        load_messages(json.dumps(good))


# --- text, bytes, files, paths ----------------------------------------------------------------------------------------


def test_a_string_is_text_and_a_long_one_is_cut_with_a_note() -> None:
    assert only_text(object_parts("hello", name="note")) == "Attached Text `note`:\nhello"
    text = only_text(object_parts("x" * 100, max_chars=10))
    assert text.startswith("Attached Text:\nxxxxxxxxxx\n[… 90 more characters left out")
    assert "at most 10 characters" in text


def test_plain_json_data_is_its_json() -> None:
    assert only_text(object_parts({"a": [1, 2]})) == 'Attached dict:\n{\n "a": [\n  1,\n  2\n ]\n}'
    with pytest.raises(AttachmentError, match="not JSON data"):
        object_parts([math.nan])


def test_files_by_path_by_what_their_bytes_are(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\nsome", encoding="utf-8")
    (tmp_path / "chart.png").write_bytes(PNG_BYTES)
    (tmp_path / "photo.png").write_bytes(JPEG_BYTES)  # a JPEG named .png: sent as the JPEG it is
    (tmp_path / "paper.pdf").write_bytes(PDF_BYTES)
    (tmp_path / "data.weird").write_bytes(b"a,b\n1,2\n")
    (tmp_path / "empty.txt").write_bytes(b"")
    assert only_text(object_parts(tmp_path / "notes.md")) == "Attached text file `notes.md`:\n# Notes\nsome"
    assert object_parts(tmp_path / "chart.png") == [FilePart("image/png", data=PNG, name="chart.png")]
    assert object_parts(tmp_path / "photo.png") == [FilePart("image/jpeg", data=JPEG, name="photo.png")]
    assert object_parts(tmp_path / "paper.pdf", name="p") == [FilePart("application/pdf", data=PDF, name="p")]
    assert only_text(object_parts(tmp_path / "data.weird")).endswith("a,b\n1,2\n")
    assert only_text(object_parts(tmp_path / "empty.txt")) == "Attached text file `empty.txt`:\n(empty)"


def test_a_path_under_home_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "todo.txt").write_text("milk", encoding="utf-8")
    assert only_text(object_parts(Path("~/todo.txt"))) == "Attached text file `todo.txt`:\nmilk"


def test_paths_that_cannot_be_attached_say_why(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_bytes(b"this is text, not a PNG")
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "cut.png").write_bytes(PNG_BYTES[:40])
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    with pytest.raises(AttachmentError, match="no such file"):
        object_parts(tmp_path / "missing.txt")
    with pytest.raises(AttachmentError, match="is a directory"):
        object_parts(tmp_path)
    with pytest.raises(AttachmentError, match=r"fake\.png as image/png: it is not a PNG"):
        object_parts(tmp_path / "fake.png")
    with pytest.raises(AttachmentError, match=r"empty\.png as image/png: it is empty"):
        object_parts(tmp_path / "empty.png")
    with pytest.raises(AttachmentError, match="cut short"):
        object_parts(tmp_path / "cut.png")
    with pytest.raises(AttachmentError, match="binary"):
        object_parts(tmp_path / "blob.bin")
    with pytest.raises(AttachmentError, match="pure path"):
        object_parts(PurePosixPath("/etc/hostname"))


def test_file_bytes_are_read_for_what_they_are_not_what_they_claim() -> None:
    assert object_parts(File(PNG_BYTES, "image/png")) == [FilePart("image/png", data=PNG)]
    assert object_parts(File(bytearray(JPEG_BYTES), "image/png", name="j")) == [
        FilePart("image/jpeg", data=JPEG, name="j")
    ]
    assert only_text(object_parts(File(b'{"a": 1}', "application/json", name="a.json"))).endswith('{"a": 1}')
    audio = object_parts(File(b"ID3\x03", "audio/mpeg", name="a.mp3"))  # kept as it is: the provider decides
    assert audio == [FilePart("audio/mpeg", data=base64.b64encode(b"ID3\x03").decode(), name="a.mp3")]
    with pytest.raises(AttachmentError, match="it is empty"):
        object_parts(File(b"", "image/png", name="zero.png"))
    with pytest.raises(AttachmentError, match="as application/pdf: it is not a PDF"):
        object_parts(File(b"junk", "application/pdf"))
    with pytest.raises(AttachmentError, match="the bytes: the PNG image is cut short"):
        object_parts(File(PNG_BYTES[:8] + b"junk", "application/pdf"))
    with pytest.raises(AttachmentError, match="not a PNG"):
        object_parts(File(b"GIF but not really", "image/png"))
    with pytest.raises(TypeError):
        File("text", "text/plain")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="media type"):
        File(b"x", "text")


def test_raw_bytes_are_sniffed() -> None:
    assert object_parts(base64.b64decode(GIF)) == [FilePart("image/gif", data=GIF)]
    assert only_text(object_parts(b"plain")) == "Attached text file:\nplain"
    with pytest.raises(AttachmentError, match="binary"):
        object_parts(b"\xff\xfe\x00\x01")


# --- rich reprs, converters of one's own, what is refused -------------------------------------------------------------


class Html:
    def _repr_html_(self) -> str:
        return "<b>bold</b>"


class Bundle:
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"image/png": PNG, "text/plain": "a chart", "text/html": "<img>"}, {}


class Broken:
    def _repr_png_(self) -> bytes:
        raise RuntimeError("no display")


def test_rich_reprs_give_their_image_and_their_best_text() -> None:
    assert only_text(object_parts(Html(), name="h")) == "Attached Html (as text/html) `h`:\n<b>bold</b>"
    assert dicts(object_parts(Bundle(), name="c")) == dicts(
        [FilePart("image/png", data=PNG, name="c.png"), TextPart("Attached Bundle (as text/plain) `c`:\na chart")]
    )
    with pytest.raises(AttachmentError, match="its rich repr raised RuntimeError: no display"):
        object_parts(Broken())


def test_an_ipython_image_is_its_png() -> None:
    display = pytest.importorskip("IPython.display")
    parts = object_parts(display.Image(data=PNG_BYTES, format="png"))
    assert parts[0] == FilePart("image/png", data=PNG, name="image.png")


def test_a_rich_repr_with_a_broken_image_keeps_its_text() -> None:
    class Lies:
        def _repr_png_(self) -> bytes:
            return b"not a png"

        def _repr_markdown_(self) -> str:
            return "*md*"

    assert (
        only_text(object_parts(Lies()))
        == "Attached test_a_rich_repr_with_a_broken_image_keeps_its_text.<locals>.Lies (as text/markdown):\n*md*"
    )
    assert rich_bundle(Lies) == {}  # a class is not shown by its instances' reprs


def test_an_object_nothing_converts_is_a_clear_error() -> None:
    class Opaque:
        pass

    with pytest.raises(AttachmentError, match=r"cannot attach a .*Opaque: no conversion .*register_converter"):
        object_parts(Opaque())


def test_a_converter_of_ones_own_wins_and_may_return_anything_attachable() -> None:
    class Point:
        def __init__(self, x: int) -> None:
            self.x = x

    class Special(Point):
        pass

    register_converter(Point, lambda p: [f"x={p.x}", File(PNG_BYTES, "image/png", name="p.png")])
    parts = object_parts(Special(3), name="pt")
    assert dicts(parts) == dicts([TextPart("Attached Text `pt`:\nx=3"), FilePart("image/png", data=PNG, name="pt")])
    register_converter(Point, lambda p: p)
    with pytest.raises(AttachmentError, match="returned the object itself"):
        object_parts(Point(1))
    register_converter(Point, lambda p: 1 / 0)
    with pytest.raises(AttachmentError, match=r"converter of a .*Point failed: ZeroDivisionError"):
        object_parts(Point(1))
    register_converter(str, lambda s: s.upper() + "!")  # a built-in type too
    with pytest.raises(AttachmentError, match="without end"):
        object_parts("a")
    with pytest.raises(TypeError):
        register_converter("Point", str)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        register_converter(Point, "not callable")  # type: ignore[arg-type]


def test_attach_takes_a_list_a_dict_of_names_or_one_object() -> None:
    assert message_attachments(None) == []
    assert message_attachments([]) == []
    assert dicts(message_attachments("one")) == dicts([TextPart("Attached Text:\none")])
    assert dicts(message_attachments({"a": "1", "b": Preview("22", max_chars=1)})) == dicts(
        [
            TextPart("Attached Text `a`:\n1"),
            TextPart(
                "Attached Text `b`:\n2\n[… 1 more characters left out: this view is at most 1 characters "
                "(Preview(value, max_chars=...) sets another budget)]"
            ),
        ]
    )
    with pytest.raises(ValueError, match="positive integer"):
        Preview("x", max_rows=0)


# --- frames and arrays ------------------------------------------------------------------------------------------------


def test_a_table_view_says_shape_columns_first_rows_and_what_was_left_out() -> None:
    text = table_text(
        kind="pandas DataFrame",
        name="df",
        shape=(1000, 3),
        columns=[(0, "int64"), (("a", "b"), "float64")],
        rows=[(0, 1, math.nan), (1, "a|b\nc", 2.5)],
        index="",
        max_chars=10_000,
    )
    assert text == (
        "Attached pandas DataFrame `df`:\n1,000 rows × 3 columns\n"
        "Columns (dtype): 0 (int64), ('a', 'b') (float64)\n\n"
        "|  | 0 | ('a', 'b') |\n|---|---|---|\n| 0 | 1 | NaN |\n| 1 | a\\|b c | 2.5 |\n\n"
        "(Not shown: 998 of 1,000 rows and 1 of 3 columns; Preview(value, max_rows=..., max_columns=...) shows more.)"
    )
    empty = table_text(kind="polars DataFrame", name=None, shape=(0, 0), columns=[], rows=[], index=None, max_chars=99)
    assert empty == "Attached polars DataFrame:\n0 rows × 0 columns"
    cut = table_text(
        kind="k", name=None, shape=(1, 1), columns=[("c", "s")], rows=[("x" * 500,)], index=None, max_chars=50
    )
    assert "more characters left out" in cut
    assert "x" * 60 not in cut


def test_a_pandas_frame_and_series() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": range(100), 3: [math.nan] * 100, "s": ["x"] * 100})
    text = only_text(object_parts(frame, name="df", max_rows=2, max_columns=2))
    assert text.startswith(
        "Attached pandas DataFrame `df`:\n100 rows × 3 columns\nColumns (dtype): a (int64), 3 (float64)"
    )
    assert "| 0 | 0 | NaN |" in text
    assert "98 of 100 rows and 1 of 3 columns" in text
    assert only_text(object_parts(pd.DataFrame())).endswith("0 rows × 0 columns")
    huge = pd.DataFrame({"a": range(1_000_000)})
    assert len(only_text(object_parts(huge))) < 2_000
    series = only_text(object_parts(pd.Series([1.5, None], name="v")))
    assert "Columns (dtype): v (float64)" in series
    assert "| 1 | NaN |" in series


def test_a_polars_frame_and_series() -> None:
    pl = pytest.importorskip("polars")
    text = only_text(object_parts(pl.DataFrame({"a": [1, 2, 3], "b": ["x", "y", None]}), max_rows=2))
    assert "3 rows × 2 columns" in text
    assert "| 1 | x |" in text
    assert "1 of 3 rows" in text
    assert "Columns (dtype): v" in only_text(object_parts(pl.Series("v", [1.0])))


def test_a_numpy_array_is_summarised() -> None:
    np = pytest.importorskip("numpy")
    text = only_text(object_parts(np.arange(1_000_000).reshape(1000, 1000), name="a"))
    assert text.startswith("Attached numpy array `a`:\nshape (1000, 1000), dtype int64\n")
    assert "..." in text
    assert len(text) < 2_000
    assert "shape (0,)" in only_text(object_parts(np.array([])))
    assert only_text(object_parts(np.int64(3))) == "Attached numpy int64:\n3"


def test_a_matplotlib_figure_and_its_axes_are_a_png() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots()
    axes.plot([1, 2, 3])
    for value in (figure, axes):
        (part,) = object_parts(value, name="plot")
        assert isinstance(part, FilePart)
        assert part.media_type == "image/png"
        assert part.name == "plot.png"
    plt.close(figure)


def test_a_pil_image_is_a_png_whatever_its_mode() -> None:
    image_module = pytest.importorskip("PIL.Image")
    for mode in ("RGB", "CMYK", "L"):
        (part,) = object_parts(image_module.new(mode, (4, 3)))
        assert isinstance(part, FilePart)
        assert part.media_type == "image/png"
        assert part.raw().startswith(b"\x89PNG")


def test_no_data_library_is_imported_to_convert() -> None:
    before = set(sys.modules)
    object_parts("x")
    object_parts(Html())
    assert {"pandas", "polars", "numpy", "matplotlib", "PIL"}.isdisjoint(set(sys.modules) - before)


# --- bounded in time and memory ---------------------------------------------------------------------------------------


def traced_peak(work: Callable[[], Any]) -> tuple[Any, int]:
    """What ``work`` returns, and the most memory it held at once beyond what was there before it (bytes)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = work()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_a_huge_row_budget_formats_only_the_rows_that_fit_the_character_budget() -> None:
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    frame = pd.DataFrame({"a": np.arange(300_000), "b": np.linspace(0, 1, 300_000), "s": ["word"] * 300_000})
    text, peak = traced_peak(lambda: only_text(object_parts(Preview(frame, max_rows=10**9), name="df")))
    assert peak < 4_000_000, f"{peak:,} bytes to make a view of 20,000 characters"
    assert len(text) <= attachments.DEFAULT_MAX_CHARS + 100
    assert "| 0 | 0 | 0.0 | word |" in text
    shown = text.count("| word |")
    assert 300 < shown < 1_000  # the rows that fit: whole rows, as many as the budget takes
    assert text.endswith(
        f"(Not shown: {300_000 - shown:,} of 300,000 rows: this view is at most 20,000 characters; "
        "Preview(value, max_chars=...) sets another budget.)"
    )
    more = only_text(object_parts(Preview(frame, max_rows=10**9, max_chars=40_000)))
    assert more.count("| word |") > 1.8 * shown


def test_a_frame_with_thousands_of_columns_reads_its_dtypes_once() -> None:
    pd = pytest.importorskip("pandas")
    reads = []

    class Counted(pd.DataFrame):  # type: ignore[misc]
        @property
        def _constructor(self) -> type:
            return Counted

        @property
        def dtypes(self) -> Any:
            reads.append(1)
            return super().dtypes

    frame = Counted({f"c{n}": [n, n + 1] for n in range(3_000)})
    text = only_text(object_parts(Preview(frame, max_columns=10**9)))
    assert len(reads) <= 2, f"dtypes read {len(reads):,} times"
    assert text.startswith("Attached pandas Counted:\n2 rows × 3,000 columns\nColumns (dtype): c0 (int64), c1 (int64)")
    assert len(text) <= attachments.DEFAULT_MAX_CHARS + 100
    assert "of 3,000 columns: this view is at most 20,000 characters" in text
    reads.clear()
    only_text(object_parts(frame))
    assert len(reads) <= 2


def test_plain_json_data_is_encoded_only_as_far_as_its_budget() -> None:
    numbers = list(range(1_000_000))
    text, peak = traced_peak(lambda: only_text(object_parts(numbers, name="n")))
    assert peak < 1_000_000, f"{peak:,} bytes to make a view of 20,000 characters"
    assert text.startswith("Attached list `n`:\n[\n 0,\n 1,\n 2,")
    assert text.endswith(
        "\n[… the rest left out: this view is at most 20,000 characters; Preview(value, max_chars=...) sets "
        "another budget]"
    )
    assert len(text) < 20_200
    assert only_text(object_parts([1, 2])) == "Attached list:\n[\n 1,\n 2\n]"  # whole when it fits


def test_one_attachment_gives_at_most_max_parts() -> None:
    class Pages:
        def __init__(self, count: int) -> None:
            self.count = count

    class Page:
        pass

    register_converter(Pages, lambda pages: ["page"] * pages.count)
    assert len(object_parts(Pages(attachments.MAX_PARTS))) == attachments.MAX_PARTS
    with pytest.raises(AttachmentError, match=r"the converter of a .*Pages returned 1,000,000 items: one attachment "):
        object_parts(Pages(1_000_000))
    # Counted as they are made, however deep: each Page becomes 3 parts.
    register_converter(Page, lambda page: ["a", "b", "c"])
    register_converter(Pages, lambda pages: [Page() for _ in range(pages.count)])
    with pytest.raises(AttachmentError, match=rf"a .*Pages: it gives more than {attachments.MAX_PARTS} parts"):
        object_parts(Pages(40))


class SlowRepr:
    """A rich repr that draws until it is let go."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def _repr_png_(self) -> bytes:
        self.go.wait(10)
        return PNG_BYTES


def test_a_render_past_the_time_limit_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    class SlowFigure(Figure):
        go = threading.Event()

        def savefig(self, *args: Any, **kwargs: Any) -> None:
            self.go.wait(10)
            super().savefig(*args, **kwargs)

    monkeypatch.setattr(attachments, "MAX_RENDER_SECONDS", 0.05)
    slow, figure = SlowRepr(), SlowFigure()
    try:
        with pytest.raises(AttachmentError, match=r"cannot attach a SlowRepr: drawing it took more than 0.05 s"):
            object_parts(slow)
        with pytest.raises(
            AttachmentError, match=r"cannot attach a .*SlowFigure `plot`: drawing it took more than 0.05"
        ):
            object_parts(figure, name="plot")
    finally:
        slow.go.set()
        SlowFigure.go.set()
    monkeypatch.setattr(attachments, "MAX_RENDER_SECONDS", 10.0)
    assert isinstance(object_parts(slow)[0], FilePart)  # drawn within the limit, as ever


# --- the providers' limits --------------------------------------------------------------------------------------------

LIMITS = AttachmentLimits("Acme", max_image_bytes=100, max_images=2, max_document_bytes=50, max_total_bytes=200)


def test_limits_name_what_the_provider_refuses() -> None:
    png = FilePart("image/png", data=PNG)  # 70 bytes
    LIMITS.check([TextPart("t"), png, png])
    with pytest.raises(
        AttachmentError,
        match="Acme takes at most 2 images in one request, and this message would make the conversation carry 3",
    ):
        LIMITS.check([png], [Message(Role.USER, [png, png])])
    with pytest.raises(AttachmentError, match=r"Acme takes documents of at most 50 B, and paper.pdf is 65 B"):
        LIMITS.check([FilePart.from_bytes(b"%PDF-" + b"x" * 60, "application/pdf", name="paper.pdf")])
    with pytest.raises(AttachmentError, match="Acme does not take audio/mpeg files"):
        LIMITS.check([FilePart("audio/mpeg", data="AAAA")])
    with pytest.raises(
        AttachmentError, match=r"at most 200 B of files in one request, .* would make the conversation carry 220 B"
    ):
        LIMITS.check([FilePart.from_bytes(b"%PDF-" + b"x" * 45, "application/pdf")] * 3, [Message(Role.USER, [png])])
    no_urls = AttachmentLimits(
        "Acme", max_image_bytes=1, max_images=1, max_document_bytes=1, max_total_bytes=1, url_kinds=frozenset({"image"})
    )
    with pytest.raises(AttachmentError, match="does not take a document by URL"):
        no_urls.check([FilePart("application/pdf", url="https://example.com/a.pdf")])
    with pytest.raises(AttachmentError, match="is empty"):
        LIMITS.check([FilePart("image/png", data="")])


PIXELS = AttachmentLimits(
    "Acme",
    max_image_bytes=10**7,
    max_images=100,
    max_document_bytes=1,
    max_total_bytes=10**8,
    max_image_side=8000,
    many_images=20,
    max_image_side_when_many=2000,
)


def test_limits_on_pixels_name_what_the_provider_refuses() -> None:
    wide = FilePart.from_bytes(png_of(9000, 4), "image/png", name="wide.png")
    assert (wide.size or 0) < 200  # far under every limit on bytes
    with pytest.raises(
        AttachmentError, match=r"^Acme takes images of at most 8,000 px a side, and wide.png is 9,000 x 4 px$"
    ):
        PIXELS.check([wide])
    assert PIXELS.kind_of(wide) is None  # one already in a conversation goes as a note
    replace(PIXELS, max_image_side=None, many_images=None).check([wide] * 30)  # one that scales images down takes it
    PIXELS.check([FilePart.from_bytes(png_of(8000, 3), "image/png")])  # at the limit
    big = FilePart.from_bytes(png_of(2500, 2500), "image/png", name="big.png")
    PIXELS.check([big] * 20)
    assert PIXELS.kind_of(big, images=20) == "image"
    with pytest.raises(
        AttachmentError,
        match=r"^Acme takes images of at most 2,000 px a side when a request carries more than 20 images, and this "
        r"message would make the conversation carry 21: big.png is 2,500 x 2,500 px$",
    ):
        PIXELS.check([big], [Message(Role.USER, [big] * 20)])
    assert PIXELS.kind_of(big, images=21) is None
    small = FilePart.from_bytes(png_of(2000, 1), "image/png", name="small.png")
    with pytest.raises(AttachmentError, match=r"big\.png is 2,500 x 2,500 px"):  # an earlier big one counts too
        PIXELS.check([small] * 20, [Message(Role.USER, [big])])
    PIXELS.check([small] * 21)
    # Sizes that cannot be read are not refused for their pixels: a URL, a header that says nothing.
    PIXELS.check([FilePart("image/png", url="https://example.com/a.png")] * 30)
    PIXELS.check([FilePart("image/jpeg", data=JPEG, name="no frame header")] * 30)


def test_a_file_parts_pixels_are_read_from_its_header_even_after_long_metadata() -> None:
    assert FilePart.from_bytes(png_of(30, 20), "image/png").pixels() == (30, 20)
    exif = jpeg_of(0, 0)[:2] + bytes([0xFF, 0xE1]) + (60_002).to_bytes(2, "big") + b"\x00" * 60_000
    assert FilePart.from_bytes(exif + jpeg_of(700, 500)[2:], "image/jpeg").pixels() == (700, 500)
    assert FilePart("image/png", url="https://example.com/a.png").pixels() is None
    assert FilePart.from_bytes(PDF_BYTES, "application/pdf").pixels() is None


def test_lone_surrogates_are_made_safe_for_the_history() -> None:
    (part,) = object_parts("a\ud800b", name="n\udc80")
    assert isinstance(part, TextPart)
    assert part.text == "Attached Text `n\ufffd`:\na\ufffdb"
    assert load_messages(dump_messages([Message(Role.USER, [part])]))[0].text == part.text


def test_a_file_name_with_a_lone_surrogate_is_made_safe_wherever_a_file_part_is_made(tmp_path: Path) -> None:
    # A file whose name is not UTF-8: os.listdir gives its name with a lone surrogate for each undecodable byte.
    raw_name = os.path.join(os.fsencode(tmp_path), b"caf\xe9.png")
    with open(raw_name, "wb") as file:
        file.write(PNG_BYTES)
    (listed,) = os.listdir(tmp_path)
    assert listed == "caf\udce9.png"
    made = [
        *object_parts(tmp_path / listed),
        *object_parts(File(PNG_BYTES, "image/png", name="a\udc80b")),
        *object_parts(File(b"ID3\x03", "audio/mpeg", name="t\ud800.mp3")),
        FilePart("image/png", data=PNG, name="x\udfff"),
        FilePart.from_bytes(PNG_BYTES, "image/png", name="y\udc00"),
        FilePart.from_dict({"kind": "file", "media_type": "image/png", "data": PNG, "name": "z\udc81"}),
        FilePart("image/png", url="https://example.com/\udc80.png"),
    ]
    names = [part.name for part in made if isinstance(part, FilePart)]
    assert names == ["caf\ufffd.png", "a\ufffdb", "t\ufffd.mp3", "x\ufffd", "y\ufffd", "z\ufffd", None]
    assert made[-1].url == "https://example.com/\ufffd.png"
    message = Message(Role.USER, [TextPart("look"), *made])
    assert load_messages(dump_messages([message]))[0].parts[1:] == made
    conversation_markdown([message]).encode("utf-8")  # what chat.export("x.md") writes


def test_a_text_part_with_a_lone_surrogate_is_made_safe_when_attached_as_it_is_or_by_a_converter() -> None:
    class Note:
        pass

    register_converter(Note, lambda note: TextPart("from a converter \udc80"))
    as_is = TextPart("as it is \ud800")
    parts = message_attachments([as_is, Note()])
    assert [part.text for part in parts if isinstance(part, TextPart)] == ["as it is \ufffd", "from a converter \ufffd"]
    assert as_is.text == "as it is \ud800"  # the person's own part is left as it was: the message holds a copy
    assert load_messages(dump_messages([Message(Role.USER, parts)]))[0].text.encode("utf-8")


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr today")


def test_any_failure_while_converting_is_an_attachment_error_naming_the_object() -> None:
    with pytest.raises(AttachmentError, match=r"cannot attach a list: RuntimeError: no repr today") as raised:
        object_parts([1, BadRepr()])
    assert isinstance(raised.value.__cause__, RuntimeError)
    with pytest.raises(AttachmentError, match=r"cannot attach a dict `d`: RuntimeError: no repr today"):
        message_attachments({"d": {"k": BadRepr()}})
    np = pytest.importorskip("numpy")
    array = np.array([BadRepr(), 1], dtype=object)
    with pytest.raises(AttachmentError, match=r"cannot attach a ndarray `rows`: RuntimeError: no repr today") as raised:
        object_parts(array, name="rows")
    assert isinstance(raised.value.__cause__, RuntimeError)

    class WorseError(Exception):
        def __str__(self) -> str:
            raise ValueError("not even this")

    class Worse:
        def __repr__(self) -> str:
            raise WorseError

    with pytest.raises(AttachmentError, match=r"cannot attach a list: WorseError"):
        object_parts([Worse()])  # an error that cannot say what it is still names its type


# --- an image's size in pixels, from its header -----------------------------------------------------------------------


def jpeg_of(width: int, height: int, *, frame: int = 0xC0) -> bytes:
    """The start of a JPEG as cameras write it: APP0 (JFIF), APP1 (EXIF, 5 KB), fill bytes, a quantisation table,
    then the frame header (``frame``: SOF0 baseline, SOF2 progressive); then the start of the scan and the end."""

    def segment(marker: int, body: bytes) -> bytes:
        return bytes([0xFF, marker]) + (len(body) + 2).to_bytes(2, "big") + body

    return (
        b"\xff\xd8"
        + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
        + segment(0xE1, b"Exif\x00\x00" + b"\xff\xc0" * 2500)  # bytes that look like a frame header, inside EXIF
        + b"\xff\xff"
        + segment(0xDB, b"\x00" + bytes(range(64)))
        + segment(frame, b"\x08" + height.to_bytes(2, "big") + width.to_bytes(2, "big") + b"\x01\x01\x11\x00")
        + segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
        + b"\x00\xff\xd9"
    )


def webp_of(chunk: bytes, body: bytes) -> bytes:
    data = chunk + len(body).to_bytes(4, "little") + body
    return b"RIFF" + (len(data) + 4).to_bytes(4, "little") + b"WEBP" + data


CRAFTED: list[tuple[str, bytes, tuple[int, int]]] = [
    ("png", png_of(9000, 4), (9000, 4)),
    ("jpeg-sof0", jpeg_of(2500, 1200), (2500, 1200)),
    ("jpeg-sof2", jpeg_of(640, 8001, frame=0xC2), (640, 8001)),
    ("gif", b"GIF89a" + (300).to_bytes(2, "little") + (20).to_bytes(2, "little") + b"\x00\x00\x00;", (300, 20)),
    # Lossy: frame tag, start code, 14-bit sizes (the top 2 bits are a scale, not size).
    (
        "webp-vp8",
        webp_of(b"VP8 ", b"\x00\x00\x00\x9d\x01\x2a" + (0xC000 | 4000).to_bytes(2, "little") + b"\x0a\x00"),
        (4000, 10),
    ),
    # Lossless: signature, then width - 1 and height - 1 in 14 bits each.
    ("webp-vp8l", webp_of(b"VP8L", b"\x2f" + ((8999) | (2 << 14)).to_bytes(4, "little")), (9000, 3)),
    # Extended: flags, 3 reserved bytes, canvas width - 1 and height - 1 in 24 bits each.
    (
        "webp-vp8x",
        webp_of(b"VP8X", b"\x10\x00\x00\x00" + (16383).to_bytes(3, "little") + (99).to_bytes(3, "little")),
        (16384, 100),
    ),
]


@pytest.mark.parametrize(("data", "size"), [(d, s) for _, d, s in CRAFTED], ids=[n for n, _, _ in CRAFTED])
def test_an_images_size_is_read_from_its_header(data: bytes, size: tuple[int, int]) -> None:
    assert image_pixels(data) == size
    # Cut anywhere, the size is known or not at all, never wrong; nothing raises.
    for end in range(len(data)):
        assert image_pixels(data[:end]) in (None, size)
    assert image_pixels(data[:9]) is None


def test_an_images_size_agrees_with_what_pil_writes() -> None:
    image_module = pytest.importorskip("PIL.Image")
    for kind, options in [
        ("PNG", {}),
        ("JPEG", {}),
        ("JPEG", {"progressive": True, "exif": b"Exif\x00\x00" + b"\x00" * 30_000}),
        ("GIF", {}),
        ("WEBP", {}),
        ("WEBP", {"lossless": True}),
        ("WEBP", {"exif": b"Exif\x00\x00abc"}),
    ]:
        buffer = io.BytesIO()
        image_module.new("RGB", (123, 45)).save(buffer, kind, **options)
        assert image_pixels(buffer.getvalue()) == (123, 45), (kind, options)


def test_an_unreadable_header_has_no_size() -> None:
    for data in [
        b"",
        b"plain text",
        PDF_BYTES,
        b"\xff\xd8\xff\xe0\x00\x01",  # a segment length below 2
        b"\xff\xd8\x00\x00\x00\x00",  # no marker where one must be
        b"\xff\xd8\xff\xda\x00\x08",  # the scan before any frame header
        b"\xff\xd8" + b"\xff" * 5000,  # fill bytes and nothing else
        jpeg_of(0, 0),  # a size left to later (DNL): unknown
        JPEG_BYTES,  # JFIF and the end, no frame header
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDX" + b"\x00" * 20,  # no IHDR first
        webp_of(b"VP8 ", b"\x00\x00\x00\x00\x00\x00" + b"\x10" * 4),  # no start code
        webp_of(b"VP8L", b"\x00" * 5),  # no signature
        webp_of(b"ALPH", b"\x00" * 10),  # another chunk first
    ]:
        assert image_pixels(data) is None, data[:20]
    rng = random.Random(29)
    for head in (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBPVP8X"):
        for _ in range(300):
            image_pixels(head + rng.randbytes(rng.randrange(40)))  # garbage after a signature: never an error


def test_a_header_that_says_nothing_is_not_decoded_whole() -> None:
    """The size is read for every request: of a JPEG with no frame header in its first megabyte, no more is read."""
    late = jpeg_of(0, 0)[:2] + (bytes([0xFF, 0xE2]) + (65_535).to_bytes(2, "big") + b"\x00" * 65_533) * 20
    part = FilePart.from_bytes(late + jpeg_of(9000, 9000)[2:], "image/jpeg")
    assert part.pixels() is None  # its frame header is 1.3 MB in: taken as unknown, so never refused for its pixels
    assert image_pixels(part.raw()) == (9000, 9000)
