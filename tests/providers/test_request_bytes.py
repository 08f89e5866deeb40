"""Every transport sends, for each conversation of ``request_bytes``, exactly the bytes it sent before it stopped
giving the SDKs typed arguments to walk: method, path, the headers that matter and the body, byte for byte, as a
loopback server receives them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.request_bytes import capture, conversations, recorded

RECORDED = recorded()


@pytest.fixture(scope="module")
def sent() -> dict[str, dict[str, Any]]:
    return capture()


def test_the_fixture_covers_every_transport_and_conversation(sent: dict[str, dict[str, Any]]) -> None:
    assert sorted(sent) == sorted(RECORDED)
    assert {key.split("/")[1] for key in RECORDED} == set(conversations())


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_the_request_is_byte_identical(key: str, sent: dict[str, dict[str, Any]]) -> None:
    want, got = RECORDED[key], sent[key]
    assert (got["method"], got["path"], got["headers"]) == (want["method"], want["path"], want["headers"])
    if got["body"] != want["body"]:
        pairs = enumerate(zip(got["body"], want["body"], strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(got["body"]), len(want["body"])))
        raise AssertionError(
            f"the body differs at character {at}:\n sent {got['body'][max(0, at - 80) : at + 80]!r}\n "
            f"want {want['body'][max(0, at - 80) : at + 80]!r}"
        )
