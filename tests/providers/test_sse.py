"""The server-sent-event decoder the provider transports share (``ai_widgets.transports._sse.SSEDecoder``):
any line ending, any chunking, every kind of line; checked against the openai SDK's own decoder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._streaming import SSEDecoder as SDKDecoder

from ai_widgets.transports import (
    ProviderError,
)
from ai_widgets.transports._sse import SSEDecoder


def decode(body: bytes, size: int | None = None, *, close: bool = True) -> list[bytes]:
    """The payloads of ``body`` fed in ``size``-byte chunks (whole when ``None``)."""
    decoder = SSEDecoder()
    step = size or max(1, len(body))
    payloads = [p for start in range(0, len(body), step) for p in decoder.feed(body[start : start + step])]
    return payloads + (decoder.close() if close else [])


def sdk_data(body: bytes) -> list[str]:
    """What the openai SDK decodes from ``body``: each dispatched event's data."""
    return [event.data for event in SDKDecoder().iter_bytes(iter([body])) if event.data]


def as_sdk(payload: bytes) -> str:
    """A payload as the SDK gives it: the one space after each ``data:`` removed."""
    return "\n".join(line.removeprefix(" ") for line in payload.decode().split("\n"))


BODY = (
    b": a comment first\n"
    b'event: first\nid: 1\nretry: 5000\ndata: {"n": 1}\n\n'
    b": keep-alive\n\n"  # an event with no data: dropped
    b'data: {"t":\n: a comment between data lines\ndata: "\xc3\xa9 data: x"}\n\n'  # one payload on two lines
    b'data:{"n": 3}\n\n'  # no space after the colon
    b"event: error\ndata: [DONE]\n\n"
)
WANT = [b' {"n": 1}', b' {"t":\n "\xc3\xa9 data: x"}', b'{"n": 3}', b" [DONE]"]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_kind_of_line_with_any_line_ending_split_anywhere(newline: bytes) -> None:
    body = BODY.replace(b"\n", newline)
    for size in [None, *range(1, 12)]:
        payloads = decode(body, size)
        assert payloads == WANT, (newline, size)
        assert json.loads(payloads[1]) == {"t": "é data: x"}


def test_every_split_point_of_a_body() -> None:
    body = BODY.replace(b"\n", b"\r\n")
    for cut in range(len(body) + 1):
        decoder = SSEDecoder()
        payloads = decoder.feed(body[:cut]) + decoder.feed(body[cut:]) + decoder.close()
        assert payloads == WANT, cut


def test_several_events_in_one_chunk_and_one_event_over_many() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a": 1}\n\ndata: {"b": 2}\n\ndata: {"c"') == [b' {"a": 1}', b' {"b": 2}']
    assert decoder.feed(b": 3}") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\n") == [b' {"c": 3}']


def test_an_event_the_stream_ends_in_comes_only_from_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a": 1}\n\ndata: {"b"') == [b' {"a": 1}']
    assert decoder.close() == [b' {"b"']  # ``sse_stream`` feeds it to the parser only when its JSON is whole
    assert decoder.close() == []
    cr = SSEDecoder()
    assert cr.feed(b'data: {"a": 1}\r') == []
    assert cr.feed(b"") == []
    assert cr.close() == [b' {"a": 1}']


def test_a_line_end_split_between_chunks() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a": 1}\r') == []
    assert decoder.feed(b"\r") == [b' {"a": 1}']  # CR CR: the blank line, seen at once (no wait for an LF)
    for piece in (b'data: {"b": 2}\r', b"", b"\n", b"\r", b"\n"):  # CRLF CRLF, each split: one blank line
        assert decoder.feed(piece) == ([b' {"b": 2}'] if piece == b"\r" else [])
    assert decoder.feed(b'\ndata: {"c": 3}\n\n') == [b' {"c": 3}']  # that LF ended the CRLF: no second event


def test_lines_that_only_look_like_data_are_not_data() -> None:
    body = b'event: data: no\nxdata: no\n data: no\ndata: {"yes": true}\n\n'
    assert decode(body) == [b' {"yes": true}']
    assert decode(b"data:\n\n") == []  # empty data: nothing to dispatch
    assert decode(b"id: 7\n\n") == []


_VALUE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), min_size=1, max_size=12
).filter(lambda value: not value.startswith(" ") and value.strip() != "")
_FIELD = st.one_of(
    st.tuples(st.just("data"), _VALUE),
    st.tuples(st.sampled_from(["event", "id", "retry", ""]), _VALUE),  # "" is a comment line
)
_EVENT = st.lists(_FIELD, min_size=1, max_size=5).filter(lambda fields: any(name == "data" for name, _ in fields))


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(_EVENT, min_size=1, max_size=6),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    space=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_the_same_data_as_the_sdks_decoder(
    events: list[list[tuple[str, str]]], newline: str, space: bool, cuts: list[int]
) -> None:
    separator = ": " if space else ":"
    text = "".join(
        "".join(f"{name}{separator}{value}{newline}" for name, value in fields) + newline for fields in events
    )
    body = text.encode()
    decoder = SSEDecoder()
    payloads: list[bytes] = []
    start = 0
    for cut in [*sorted({min(cut, len(body)) for cut in cuts}), len(body)]:
        payloads += decoder.feed(body[start:cut])
        start = cut
    assert [as_sdk(p) for p in payloads] == sdk_data(body)
    assert decoder.close() == []


@settings(max_examples=200, deadline=None)
@given(events=st.lists(_EVENT, min_size=1, max_size=6), newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_one_event_per_chunk_as_servers_send_them(events: list[list[tuple[str, str]]], newline: str) -> None:
    # Each chunk one whole event: the decoder's fast path, which slices a last data line out directly.
    chunks = [("".join(f"{name}: {value}{newline}" for name, value in fields) + newline).encode() for fields in events]
    decoder = SSEDecoder()
    payloads = [payload for chunk in chunks for payload in decoder.feed(chunk)]
    assert [as_sdk(p) for p in payloads] == sdk_data(b"".join(chunks))
    assert decoder.close() == []


def test_the_decoders_limit_counts_an_event_across_chunks() -> None:
    decoder = SSEDecoder("Example", max_event=100)
    assert decoder.feed(b"data: " + b"x" * 50) == []
    with pytest.raises(ProviderError, match="Example sent a stream event of more than"):
        decoder.feed(b"x" * 60)
    fine = SSEDecoder("Example", max_event=100)
    assert fine.feed(b"data: " + b"x" * 90 + b"\n\n" + b"data: 1") == [b" " + b"x" * 90]  # complete events are fine
    assert fine.feed(b"\n\n") == [b" 1"]
