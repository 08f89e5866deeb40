"""Every transport sends, for each conversation of ``request_bytes``, exactly the bytes it sent before it stopped
giving the SDKs typed arguments to walk: method, path, the headers that matter and the body, byte for byte, as a
loopback server receives them."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ai_widgets.transports._output import json_instruction
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


# --- typed answers: the recorded request plus the schema where the provider wants it, and nothing else changed ------

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
    "additionalProperties": False,
    "title": "City Facts",
}
#: What each transport adds to its body for ``OUTPUT_SCHEMA``, by the start of the transport's name.
OUTPUT_FIELDS: dict[str, dict[str, Any]] = {
    "openai_chat": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "City_Facts", "schema": OUTPUT_SCHEMA, "strict": True},
        }
    },
    "openai_responses": {
        "text": {"format": {"type": "json_schema", "name": "City_Facts", "schema": OUTPUT_SCHEMA, "strict": True}}
    },
    "anthropic": {"output_config": {"format": {"type": "json_schema", "schema": OUTPUT_SCHEMA}}},
    "gemini": {"responseMimeType": "application/json", "responseJsonSchema": OUTPUT_SCHEMA},
}


@pytest.fixture(scope="module")
def sent_typed() -> dict[str, dict[str, Any]]:
    typed = {
        name: dataclasses.replace(request, output_schema=OUTPUT_SCHEMA)
        for name, request in conversations().items()
        if name in ("text", "system_and_options")
    }
    return capture(typed)


@pytest.mark.parametrize("key", sorted(key for key in RECORDED if key.split("/")[1] in ("text", "system_and_options")))
def test_a_typed_request_is_the_recorded_one_with_the_schema_added(key: str, sent_typed: dict[str, Any]) -> None:
    want, got = RECORDED[key], sent_typed[key]
    assert (got["method"], got["path"]) == (want["method"], want["path"])
    assert {k: v for k, v in got["headers"].items() if k != "content-length"} == {
        k: v for k, v in want["headers"].items() if k != "content-length"
    }
    added = next(fields for prefix, fields in OUTPUT_FIELDS.items() if key.startswith(prefix))
    spaced = '": ' in want["body"]  # the SDKs write JSON with or without spaces; the added text is written alike
    separators = (", ", ": ") if spaced else (",", ":")
    text = json.dumps(added, separators=separators, ensure_ascii=False)[1:-1]
    if key == "gemini_2/system_and_options":
        # Gemini 2 refuses a JSON response beside function declarations: the schema is asked for in the instructions.
        text = json.dumps({"text": json_instruction(OUTPUT_SCHEMA)}, separators=separators)
        assert '"responseJsonSchema"' not in got["body"]
    assert text in got["body"]
    before, after = got["body"].split(text, 1)
    # Byte for byte, the body is the recorded one with the fields (and one separator) put in.
    assert (
        before.removesuffix(separators[0]) + after == want["body"]
        or before + after.removeprefix(separators[0]) == want["body"]
    )
