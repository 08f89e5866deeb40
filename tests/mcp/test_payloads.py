"""Base64 kept off the model's text (:mod:`ai_widgets.mcp._payloads`), on odd values."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from ai_widgets.mcp._payloads import Payloads
from tests.mcp.servers.server import PIXEL

PNG = base64.b64encode(PIXEL * 10).decode()  # long enough to be taken for data


def test_a_bare_base64_image_in_text_becomes_a_note_and_an_attachment() -> None:
    payloads = Payloads()
    assert (
        payloads.without_payloads(f"Here: {PNG} done")
        == f"Here: [image/png, {len(PIXEL) * 10} bytes: sent as an attachment] done"
    )
    assert [a.data for a in payloads.attachments] == [PNG]


def test_other_base64_data_is_left_out_and_not_attached() -> None:
    data = base64.b64encode(bytes(range(256)) * 3).decode()
    payloads = Payloads()
    assert payloads.without_payloads({"blob": data}) == {"blob": "[base64 data, 768 bytes: left out]"}
    assert payloads.attachments == []


def test_prose_and_short_strings_stay_as_they_are() -> None:
    prose = "word " * 400
    # A lone surrogate, and a run that is not valid base64 (601 characters: not a whole number of quads).
    odd = "\ud800" + "x" * 601 + "é"
    nan = float("nan")
    payloads = Payloads()
    assert payloads.without_payloads(nan) is nan
    assert payloads.without_payloads([prose, odd, "AAAA", 10**40, None, True]) == [
        prose,
        odd,
        "AAAA",
        10**40,
        None,
        True,
    ]


def test_deep_nesting_does_not_recurse_without_bound() -> None:
    value: object = PNG
    for _ in range(5000):
        value = [value]
    assert Payloads().without_payloads(value) is not None  # deeper than the bound: left as it is, no RecursionError


def test_the_same_image_twice_is_attached_once() -> None:
    payloads = Payloads()
    block = {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert payloads.without_payloads({"a": block, "b": [block], "c": PNG}) == {
        "a": f"[image/png, {len(PIXEL) * 10} bytes: sent as an attachment]",
        "b": [f"[image/png, {len(PIXEL) * 10} bytes: sent as an attachment]"],
        "c": f"[image/png, {len(PIXEL) * 10} bytes: sent as an attachment]",
    }
    assert len(payloads.attachments) == 1


@given(
    st.recursive(
        st.text() | st.integers() | st.none(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_values_without_long_runs_are_unchanged(value: object) -> None:
    assert Payloads().without_payloads(value) == value
