"""Where each transport puts a typed answer's schema (``ChatRequest.output_schema``), through each kit's transport,
and when OpenAI's strict mode is asked for: only where it takes the schema, by the rules ``Tool.check()`` reports
for tools. The bytes are checked in test_request_bytes.py, the round trip over HTTP in test_contract.py."""

from __future__ import annotations

import datetime
import json
from typing import Annotated, Any

import pydantic
import pytest

from ai_widgets import Message, RequestOptions, ToolDefinition
from ai_widgets.session._output import OutputSpec
from ai_widgets.transports import ChatRequest
from tests.providers.kits import KITS, ProviderKit

EVERY_KIT = pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())

LOOKUP = ToolDefinition(
    name="lookup",
    description="Looks something up.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


class Closed(pydantic.BaseModel):
    name: str
    tags: list[str]


class WithDefault(pydantic.BaseModel):
    name: str
    country: str = "Portugal"  # optional: strict mode wants every property required


class OpenDict(pydantic.BaseModel):
    counts: dict[str, int]  # additionalProperties is a schema: strict mode wants false


class Tree(pydantic.BaseModel):
    value: int
    children: list[Tree]  # recursive: pydantic's schema is a $ref into its $defs


def schema_of(output_type: Any) -> dict[str, Any]:
    return OutputSpec(output_type).schema  # as the session sends it


def body(kit: ProviderKit, schema: dict[str, Any] | None, **request: Any) -> dict[str, Any]:
    transport = kit.make("http://127.0.0.1:9")
    sent: dict[str, Any] = transport.request_body(
        ChatRequest(messages=[Message.user("hi")], output_schema=schema, **request)
    )
    return sent


def asked(kit: ProviderKit, sent: dict[str, Any]) -> tuple[dict[str, Any] | None, bool | None]:
    """The schema the body asks for and whether strictly (``None`` where the provider has no such switch)."""
    match kit.name:
        case "openai_chat":
            found = sent.get("response_format")
            return (None, None) if found is None else (found["json_schema"]["schema"], found["json_schema"]["strict"])
        case "openai_responses":
            found = sent.get("text", {}).get("format")
            return (None, None) if found is None else (found["schema"], found["strict"])
        case "anthropic":
            found = sent.get("output_config", {}).get("format")
            return (None, None) if found is None else (found["schema"], None)
        case _:
            generation = sent["generationConfig"]
            if "responseJsonSchema" not in generation:
                return None, None
            assert generation["responseMimeType"] == "application/json"
            return generation["responseJsonSchema"], None


@EVERY_KIT
def test_no_output_schema_asks_for_nothing(kit: ProviderKit) -> None:
    assert asked(kit, body(kit, None)) == (None, None)


@EVERY_KIT
def test_the_schema_lands_where_the_provider_wants_it_beside_the_tools(kit: ProviderKit) -> None:
    schema = schema_of(Closed)
    sent = body(kit, schema, tools=[LOOKUP])
    found, strict = asked(kit, sent)
    assert found == schema
    assert strict is (True if kit.name.startswith("openai") else None)
    assert "lookup" in str(sent["tools"])  # the tools stay offered: a typed turn may call them


@pytest.mark.parametrize("output_type", [WithDefault, OpenDict, int], ids=["default", "open-dict", "wrapped-int"])
@pytest.mark.parametrize(
    "kit", [KITS["openai_chat"], KITS["openai_responses"]], ids=["openai_chat", "openai_responses"]
)
def test_openai_asks_strictly_only_where_strict_mode_takes_the_schema(kit: ProviderKit, output_type: Any) -> None:
    schema = schema_of(output_type)
    found, strict = asked(kit, body(kit, schema))
    assert found == schema
    assert strict is (output_type is int)  # {"response": int} is closed and all required; the others are not


@EVERY_KIT
def test_a_recursive_model_is_asked_for_with_an_object_at_the_root_and_its_defs(kit: ProviderKit) -> None:
    schema = schema_of(Tree)
    found, strict = asked(kit, body(kit, schema))
    assert found is not None
    assert found["type"] == "object"
    assert "$ref" not in found
    assert set(found["properties"]) == {"value", "children"}
    assert found["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert found["$defs"]["Tree"]["type"] == "object"
    assert strict is (True if kit.name.startswith("openai") else None)  # closed and all required: strict takes it
    if kit.name == "openai_chat":
        assert body(kit, schema)["response_format"]["json_schema"]["name"] == "Tree"


@pytest.mark.parametrize(
    "kit", [KITS["openai_chat"], KITS["openai_responses"]], ids=["openai_chat", "openai_responses"]
)
def test_the_openai_name_is_the_title_made_to_fit(kit: ProviderKit) -> None:
    sent = body(kit, {"type": "object", "properties": {}, "title": "Città & co. " + "x" * 80})
    name = (
        sent["response_format"]["json_schema"]["name"] if kit.name == "openai_chat" else sent["text"]["format"]["name"]
    )
    assert name == ("Citt_co_" + "x" * 80)[:64]
    untitled = body(kit, {"type": "object", "properties": {}})
    name = (
        untitled["response_format"]["json_schema"]["name"]
        if kit.name == "openai_chat"
        else untitled["text"]["format"]["name"]
    )
    assert name == "response"


class Bounded(pydantic.BaseModel):
    count: Annotated[int, pydantic.Field(ge=0, le=10, description="How many.")]
    code: Annotated[str, pydantic.Field(pattern="^[A-Z]{3}$")]
    when: datetime.date
    tags: Annotated[list[str], pydantic.Field(min_length=2)]
    choice: Place | Point


class Place(pydantic.BaseModel):
    name: str


class Point(pydantic.BaseModel):
    x: float


def test_anthropic_is_sent_the_constraints_it_refuses_in_the_descriptions() -> None:
    schema = schema_of(Bounded)
    found, _ = asked(KITS["anthropic"], body(KITS["anthropic"], schema))
    assert found is not None
    properties = found["properties"]
    assert properties["count"] == {
        "description": "How many.\n\n{maximum: 10, minimum: 0}",
        "title": "Count",
        "type": "integer",
    }
    assert properties["code"] == {"title": "Code", "type": "string", "description": '{pattern: "^[A-Z]{3}$"}'}
    assert properties["when"] == {"format": "date", "title": "When", "type": "string"}  # a format it takes stays
    assert properties["tags"]["description"] == "{minItems: 2}"
    assert "minItems" not in properties["tags"]
    assert found["$defs"]["Place"]["additionalProperties"] is False
    assert found["additionalProperties"] is False
    assert found["required"] == schema["required"]
    # The other providers get the schema as the session made it.
    for name in ("openai_chat", "openai_responses", "gemini"):
        assert asked(KITS[name], body(KITS[name], schema))[0] == schema


def test_a_gemini_before_3_with_tools_is_asked_in_its_instructions_and_without_tools_natively() -> None:
    kit = KITS["gemini"]
    schema = schema_of(Closed)
    for model, tools, native in [
        ("gemini-2.5-flash", [LOOKUP], False),
        ("gemini-2.5-flash", [], True),
        ("gemini-3-flash-preview", [LOOKUP], True),
        ("publishers/google/models/gemini-2.0-flash", [LOOKUP], False),
    ]:
        transport = kit.make("http://127.0.0.1:9")
        transport.model = model
        sent = transport.request_body(
            ChatRequest(
                messages=[Message.user("hi")],
                tools=tools,
                output_schema=schema,
                options=RequestOptions(system_prompt="Be brief."),
            )
        )
        assert ("responseJsonSchema" in sent["generationConfig"]) is native, model
        parts = sent["systemInstruction"]["parts"]
        if native:
            assert parts == [{"text": "Be brief."}]
        else:
            assert parts[0] == {"text": "Be brief."}
            assert parts[1]["text"].startswith("Your final answer (after any tool calls) must be only a JSON value")
            assert json.dumps(schema, separators=(",", ":")) in parts[1]["text"]
