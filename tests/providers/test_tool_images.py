"""Which images of a tool's result the transports send to the model (``_history.outcome_images``): only what a provider
surely takes, as one it refuses would fail every later request of the conversation."""

from __future__ import annotations

import base64

import pytest

from ai_widgets import ToolOutcome
from ai_widgets.outcome import MAX_CELL_IMAGES, CellOutput, CellRun, DisplayBundle, safe_outcome
from ai_widgets.transports._history import ModelImage, outcome_images
from tests.providers.histories import finished_call
from tests.providers.images import GIF, JPEG, PDF, PHOTO_URL, PNG, SVG, WEBP


def images(*attachments: dict[str, str], max_chars: int = 1_000_000) -> list[ModelImage]:
    part = finished_call("c1", outcome=ToolOutcome.success(text="t", attachments=list(attachments)))
    return outcome_images(part, max_chars=max_chars)


@pytest.mark.parametrize(
    ("data", "media_type"), [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")]
)
def test_the_type_is_read_from_the_data_not_the_label(data: str, media_type: str) -> None:
    assert images({"mime_type": "image/png", "data": data}) == [ModelImage(media_type, data=data)]
    assert images({"mime_type": "image/JPEG", "data": data})[0].data_url == f"data:{media_type};base64,{data}"


def test_images_in_order_and_only_images_the_providers_take() -> None:
    got = images(
        {"mime_type": "image/png", "data": PNG},
        {"mime_type": "application/pdf", "data": PDF},  # not an image
        {"mime_type": "image/svg+xml", "data": SVG},  # an image no provider takes
        {"mime_type": "image/png", "data": PDF},  # labelled PNG, is not
        {"mime_type": "image/png", "data": "not base64!"},
        {"mime_type": "image/png", "data": PNG[:-3]},  # cut: bad padding
        {"mime_type": "image/jpeg", "url": PHOTO_URL},
        {"mime_type": "image/svg+xml", "url": "https://example.com/a.svg"},
        {"mime_type": "image/png", "url": "file:///tmp/a.png"},
        {"mime_type": "image/png", "url": f"data:image/png;base64,{JPEG}"},  # a data URL: read like data
        {"mime_type": "image/gif", "data": f"data:image/gif;base64,{GIF}"},
        {"mime_type": "image/png", "url": "data:image/png,rawbytes"},  # not base64
    )
    assert got == [
        ModelImage("image/png", data=PNG),
        ModelImage("image/jpeg", url=PHOTO_URL),
        ModelImage("image/jpeg", data=JPEG),
        ModelImage("image/gif", data=GIF),
    ]
    assert got[1].data_url == PHOTO_URL


def test_base64_in_lines_is_joined() -> None:
    raw = base64.b64decode(PNG) * 20
    lines = base64.encodebytes(raw).decode()
    assert "\n" in lines
    assert images({"mime_type": "image/png", "data": lines}) == [
        ModelImage("image/png", data=base64.b64encode(raw).decode())
    ]


def test_an_image_over_the_limit_is_left_out() -> None:
    assert images({"mime_type": "image/png", "data": PNG}, max_chars=len(PNG)) == [ModelImage("image/png", data=PNG)]
    assert images({"mime_type": "image/png", "data": PNG}, max_chars=len(PNG) - 1) == []


def test_no_images_for_a_failure_or_a_call_without_outcome() -> None:
    attachments = ToolOutcome.success(attachments=[{"mime_type": "image/png", "data": PNG}]).attachments
    failed = ToolOutcome.failure("no").model_copy(update={"attachments": attachments})
    assert outcome_images(finished_call("c1", outcome=failed), max_chars=10**6) == []
    assert outcome_images(finished_call("c2", outcome=ToolOutcome.success("x")), max_chars=10**6) == []


def test_a_cell_run_gives_its_first_images_in_order_even_when_the_code_raised() -> None:
    figures = [DisplayBundle(data={"text/plain": f"<Figure {i}>", "image/png": PNG}) for i in range(6)]
    outputs = [CellOutput(kind="stream", name="stdout", text="hello")]
    outputs += [CellOutput(kind="display", display=figure) for figure in figures]
    cell = CellRun(code="plot()", outputs=tuple(outputs))
    failed = ToolOutcome.failure("ValueError: late", cell=cell)
    images = outcome_images(finished_call("c1", outcome=failed), max_chars=10**6)
    assert len(images) == MAX_CELL_IMAGES == len(cell.images())
    ran = ToolOutcome.success(text="ok", cell=CellRun(code="1", outputs=(CellOutput(kind="stream", text="x"),)))
    assert outcome_images(finished_call("c2", outcome=ran), max_chars=10**6) == []


def test_a_cell_runs_texts_are_made_safe_to_keep() -> None:
    cell = CellRun(code="print('\ud800')", outputs=(CellOutput(kind="stream", name="stdout", text="a\ud800b"),))
    kept = safe_outcome(ToolOutcome.success(text="ok", cell=cell))
    assert kept.cell is not None
    assert kept.cell.outputs[0].text == "a\ufffdb"
    assert kept.cell.code == "print('\ufffd')"
    kept.model_dump_json()  # writable
