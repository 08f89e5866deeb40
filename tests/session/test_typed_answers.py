"""Typed answers (DESIGN.md "Added for the open issues"): ``send(..., output_type=T)`` asks for T's JSON Schema,
validates the final text reply, asks again with the errors, and keeps the object as ``reply.output``."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, Literal

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from ai_widgets import (
    ChatSession,
    MessageStatus,
    NoOutputError,
    OutputValidationError,
    Role,
    SessionOptions,
    ToolCallState,
    tool,
)
from ai_widgets.arguments import StreamingArguments, apply_patches
from ai_widgets.changes import MessageFinished, PartAdded, PartChanged, PartsRemoved, TextAppended
from ai_widgets.messages import Message, TextPart, TypedAnswer, conversation_markdown, dump_messages, load_messages
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport


class City(pydantic.BaseModel):
    name: str
    population: int
    country: str = "Portugal"


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Movie(TypedDict):
    title: str
    year: int


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


class Recorder:
    """A scripted model that keeps every request it got."""

    def __init__(self, *steps: ScriptedReply | str) -> None:
        self.requests: list[ChatRequest] = []
        self._steps = list(steps)

    def __call__(self, request: ChatRequest) -> ScriptedReply | str:
        self.requests.append(request)
        return self._steps[len(self.requests) - 1]

    def transport(self) -> ScriptedTransport:
        return ScriptedTransport(self)


async def test_a_valid_answer_is_the_replys_output() -> None:
    model = Recorder('{"name": "Lisbon", "population": 545000}')
    session = ChatSession(model.transport())
    reply = await session.send("The capital of Portugal?", output_type=City)
    assert reply.status is MessageStatus.COMPLETED
    assert reply.output == City(name="Lisbon", population=545000)
    schema = model.requests[0].output_schema
    assert schema is not None
    assert schema["properties"]["name"] == {"title": "Name", "type": "string"}
    assert schema["required"] == ["name", "population"]
    assert schema["additionalProperties"] is False  # closed for the providers' strict modes; pydantic is unchanged


async def test_without_an_output_type_nothing_is_asked_and_output_is_none() -> None:
    model = Recorder('{"name": "Lisbon"}')
    reply = await ChatSession(model.transport()).send("hi")
    assert reply.output is None
    assert model.requests[0].output_schema is None


async def test_an_invalid_answer_is_asked_for_again_with_the_errors() -> None:
    model = Recorder(
        '{"name": "Lisbon"}', 'Sure: {"name": "Lisbon", "population": 545000}', '{"name": "Lisbon", "population": 1}'
    )
    session = ChatSession(model.transport())
    statuses: list[str] = []
    session.subscribe(
        lambda change: statuses.append((getattr(change, "message", None) and change.message.status_text) or "")
    )
    reply = await session.send("The capital?", output_type=City)
    assert reply.status is MessageStatus.COMPLETED
    assert reply.output == City(name="Lisbon", population=1)
    assert reply.text == '{"name": "Lisbon", "population": 1}'  # the refused answers are not the reply's text
    assert len(session.messages) == 2
    # The retry carries the refused answer and a message naming what is wrong, after the reply.
    retry = model.requests[1].messages
    assert [m.role for m in retry] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT, Role.USER]
    assert retry[2].text == '{"name": "Lisbon"}'
    assert "population: Field required" in retry[3].text
    assert "Invalid JSON" in model.requests[2].messages[-1].text
    assert model.requests[1].output_schema == model.requests[0].output_schema
    assert any(text.startswith("The answer did not match City; asking again (1 of 2)") for text in statuses)


async def test_an_answer_that_never_validates_is_a_clear_error_keeping_the_raw_answer() -> None:
    model = Recorder("no", "still no", '{"name": 3}')
    session = ChatSession(model.transport(), options=SessionOptions(output_retries=2))
    with pytest.raises(OutputValidationError) as raised:
        await session.send("The capital?", output_type=City)
    error = raised.value
    assert error.raw == '{"name": 3}'
    assert "name: Input should be a valid string" in error.errors
    assert "population: Field required" in error.errors
    assert "did not match City (3 answers, output_retries)" in str(error)
    reply = error.reply
    assert reply is session.messages[-1]
    assert reply.status is MessageStatus.ERROR
    assert reply.output is None
    assert reply.text == '{"name": 3}'
    assert reply.error == str(error)
    assert len(model.requests) == 3
    assert not session.busy
    # The session goes on.
    model._steps.append('{"name": "Porto", "population": 2}')
    assert (await session.send("And the second city?", output_type=City)).output.name == "Porto"


async def test_no_retries_means_the_first_refusal_ends_the_turn() -> None:
    model = Recorder("[]")
    with pytest.raises(OutputValidationError):
        await ChatSession(model.transport(), options=SessionOptions(output_retries=0)).send("x", output_type=City)
    assert len(model.requests) == 1


def test_output_retries_must_be_a_whole_number() -> None:
    with pytest.raises(ValueError, match="output_retries"):
        SessionOptions(output_retries=-1)


async def test_tool_calls_run_in_a_typed_turn_and_only_the_final_text_is_validated() -> None:
    @tool
    def population(city: str) -> int:
        """The population of a city."""
        return 545000

    model = Recorder(
        ScriptedReply(
            text="Let me look it up.", tool_calls=[ScriptedToolCall(name="population", arguments={"city": "Lisbon"})]
        ),
        '{"name": "Lisbon", "population": 545000}',
    )
    session = ChatSession(model.transport(), tools=[population])
    reply = await session.send("How many live in Lisbon?", output_type=City)
    assert reply.status is MessageStatus.COMPLETED
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.output == City(name="Lisbon", population=545000)
    assert all(request.output_schema is not None for request in model.requests)
    assert model.requests[0].tools  # the tools are offered beside the schema


async def test_a_refused_answer_after_tool_calls_is_retried_and_the_calls_stay() -> None:
    @tool
    def population(city: str) -> int:
        """The population of a city."""
        return 545000

    model = Recorder(
        ScriptedReply(tool_calls=[ScriptedToolCall(name="population", arguments={"city": "Lisbon"})]),
        '{"name": "Lisbon"}',
        '{"name": "Lisbon", "population": 545000}',
    )
    session = ChatSession(model.transport(), tools=[population])
    reply = await session.send("How many?", output_type=City)
    assert reply.output is not None
    assert reply.output.population == 545000
    assert [type(part).__name__ for part in reply.parts] == ["ToolCallPart", "TextPart"]
    retry = model.requests[2].messages
    assert retry[1].tool_calls[0].outcome is not None  # the reply with its call's result, then the refused answer
    assert retry[2].text == '{"name": "Lisbon"}'
    assert retry[3].role is Role.USER


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (Point, '{"x": 1, "y": 2.5}', Point(1.0, 2.5)),
        (Movie, '{"title": "Vertigo", "year": 1958}', {"title": "Vertigo", "year": 1958}),
        (int, '{"response": 42}', 42),
        (list[City], '{"response": [{"name": "Porto", "population": 2}]}', [City(name="Porto", population=2)]),
        (Literal["yes", "no"], '{"response": "no"}', "no"),
        (City | Point, '{"response": {"x": 0, "y": 0}}', Point(0.0, 0.0)),
    ],
    ids=["dataclass", "typeddict", "int", "list-of-models", "literal", "union"],
)
async def test_each_kind_of_output_type(output_type: Any, answer: str, expected: Any) -> None:
    model = Recorder(answer)
    reply = await ChatSession(model.transport()).send("x", output_type=output_type)
    assert reply.output == expected
    schema = model.requests[0].output_schema
    assert schema is not None
    assert schema["type"] == "object"


async def test_a_type_that_is_not_an_object_is_asked_for_wrapped_with_its_defs_at_the_root() -> None:
    model = Recorder('{"response": [{"name": "Porto", "population": 2}]}')
    await ChatSession(model.transport()).send("x", output_type=list[City])
    schema = model.requests[0].output_schema
    assert schema == {
        "type": "object",
        "properties": {"response": {"type": "array", "items": {"$ref": "#/$defs/City"}}},
        "required": ["response"],
        "additionalProperties": False,
        "$defs": {"City": {**City.model_json_schema(), "additionalProperties": False}},
    }


async def test_a_recursive_model_is_asked_for_as_the_object_it_is_not_wrapped() -> None:
    """pydantic's schema of a recursive model is a ``$ref`` into its ``$defs``: the root is resolved to the object."""
    answer = '{"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}'
    model = Recorder(answer)
    session = ChatSession(model.transport())
    reply = await session.send("x", output_type=Node)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.output == Node(value=1, children=[Node(value=2, children=[Node(value=3)])])
    schema = model.requests[0].output_schema
    assert schema is not None
    assert "$ref" not in schema
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"value", "children"}  # the model's own fields, no "response" around them
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}  # the recursion keeps its $defs
    assert schema["$defs"]["Node"]["properties"] == schema["properties"]
    loaded = load_messages(dump_messages(session.messages))[-1]
    assert Node.model_validate_json(loaded.text) == reply.output


async def test_a_wrapped_answer_without_its_key_is_told_so() -> None:
    model = Recorder("42", '{"value": 42}', '{"response": [{"name": "Porto"}]}', '{"response": []}')
    reply = await ChatSession(model.transport(), options=SessionOptions(output_retries=3)).send(
        "x", output_type=list[City]
    )
    assert reply.output == []
    told = [request.messages[-1].text for request in model.requests[1:]]
    assert "- (the answer): Input should be an object" in told[0]
    assert "- response: Field required" in told[1]
    assert "- response.0.population: Field required" in told[2]


async def test_a_schema_that_cannot_be_strict_is_still_asked_for_and_validated() -> None:
    class Settings(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        tags: dict[str, int]  # additionalProperties is a schema: no provider's strict mode takes it
        note: str | None = None  # optional

    model = Recorder('{"tags": {"a": 1}, "extra": true}')
    reply = await ChatSession(model.transport()).send("x", output_type=Settings)
    assert reply.output is not None
    assert reply.output.tags == {"a": 1}
    schema = model.requests[0].output_schema
    assert schema is not None
    assert schema["additionalProperties"] is True  # the type's own word on other keys is left as it said
    assert schema["properties"]["tags"]["additionalProperties"] == {"type": "integer"}


async def test_a_type_without_a_schema_is_refused_before_anything_is_sent() -> None:
    model = Recorder("x")
    session = ChatSession(model.transport())
    with pytest.raises(TypeError, match="has no JSON Schema"):
        await session.send("x", output_type=object())
    assert session.messages == []
    assert model.requests == []


async def test_output_is_not_saved_and_is_honestly_absent_after_a_round_trip() -> None:
    model = Recorder('{"name": "Lisbon", "population": 545000}')
    session = ChatSession(model.transport())
    reply = await session.send("x", output_type=City)
    loaded = load_messages(dump_messages(session.messages))[-1]
    assert "output" not in json.loads(dump_messages([reply]))["messages"][0]
    assert loaded.output is None
    assert City.model_validate_json(loaded.text) == reply.output  # the text it was validated from stays


async def test_a_turn_that_fails_otherwise_has_no_output_and_send_returns_it() -> None:
    model = Recorder(ScriptedReply(text='{"name": ', error=RuntimeError("boom"), error_after=2))
    reply = await ChatSession(model.transport()).send("x", output_type=City)
    assert reply.status is MessageStatus.ERROR
    assert reply.output is None


def test_no_output_error_is_the_base_of_the_validation_error() -> None:
    assert issubclass(OutputValidationError, NoOutputError)


async def test_constraints_are_validated_whatever_the_provider_was_told() -> None:
    class Count(pydantic.BaseModel):
        count: Annotated[int, pydantic.Field(ge=0, le=10)]

    model = Recorder('{"count": 11}', '{"count": 10}')
    reply = await ChatSession(model.transport()).send("x", output_type=Count)
    assert reply.output == Count(count=10)
    assert "count: Input should be less than or equal to 10" in model.requests[1].messages[-1].text


# --- the answer's part: marked, parsed as it streams, checked (what a card shows) ------------------------------------


def _changes(session: ChatSession) -> list[Any]:
    seen: list[Any] = []
    session.subscribe(seen.append)
    return seen


async def test_the_answers_part_is_marked_and_its_parse_grows_with_its_text() -> None:
    model = Recorder('{"name": "Lisbon", "population": 545000}')
    session = ChatSession(ScriptedTransport(model, slice_size=(3, 5)))
    seen = _changes(session)
    reply = await session.send("x", output_type=City)
    (part,) = reply.parts
    assert isinstance(part, TextPart)
    assert part.answer is not None
    assert part.answer.type_name == "City"
    assert part.answer.state == "valid"
    assert part.answer.value == {"name": "Lisbon", "population": 545000, "country": "Portugal"}  # the default too
    assert part.answer.refused == ()
    # Every delta came with the patches it made to the parse: applied in order they build the whole object.
    appended = [change for change in seen if isinstance(change, TextAppended)]
    assert len(appended) > 3
    view: dict[str, Any] = StreamingArguments.parse(next(c.part.text for c in seen if isinstance(c, PartAdded))).value
    for change in appended:
        apply_patches(view, change.patches)
    assert view == part.answer.parsed == {"name": "Lisbon", "population": 545000}
    # The check is told before the turn ends.
    checked = [change for change in seen if isinstance(change, PartChanged)]
    assert [c.part.answer.state for c in checked] == ["valid"]
    assert seen.index(checked[0]) < next(i for i, c in enumerate(seen) if isinstance(c, MessageFinished))


async def test_a_refused_answer_is_removed_and_its_errors_go_with_the_next() -> None:
    model = Recorder('{"name": "Lisbon"}', '{"name": 3, "population": 1}', '{"name": "Lisbon", "population": 1}')
    session = ChatSession(model.transport(), options=SessionOptions(output_retries=2))
    seen = _changes(session)
    reply = await session.send("x", output_type=City)
    assert [c.start for c in seen if isinstance(c, PartsRemoved)] == [0, 0]
    (part,) = reply.parts
    assert isinstance(part, TextPart)
    assert part.answer is not None
    assert part.answer.refused == ("- population: Field required", "- name: Input should be a valid string")
    assert part.answer.state == "valid"


async def test_an_answer_that_never_validates_keeps_its_errors_on_the_part() -> None:
    model = Recorder('{"name": 3}')
    session = ChatSession(model.transport(), options=SessionOptions(output_retries=0))
    with pytest.raises(OutputValidationError) as raised:
        await session.send("x", output_type=City)
    (part,) = raised.value.reply.parts
    assert isinstance(part, TextPart)
    assert part.answer is not None
    assert part.answer.state == "invalid"
    assert part.answer.errors == raised.value.errors
    assert part.answer.value is None


async def test_text_of_a_response_that_calls_tools_is_not_the_answer() -> None:
    @tool
    def population(city: str) -> int:
        """The population of a city."""
        return 545000

    model = Recorder(
        ScriptedReply(text="Let me look.", tool_calls=[ScriptedToolCall(name="population", arguments={"city": "L"})]),
        '{"name": "Lisbon", "population": 545000}',
    )
    session = ChatSession(model.transport(), tools=[population])
    seen = _changes(session)
    reply = await session.send("x", output_type=City)
    first, _, answer = reply.parts
    assert isinstance(first, TextPart)
    assert first.answer is None  # marked while it streamed, unmarked after
    assert any(isinstance(c, PartChanged) and c.index == 0 and c.part.answer is None for c in seen)
    assert isinstance(answer, TextPart)
    assert answer.answer is not None
    assert answer.answer.state == "valid"


async def test_text_that_is_not_json_is_said_so_once() -> None:
    model = Recorder('{"name": "L"} is what I found', '{"name": "L", "population": 1}')
    session = ChatSession(ScriptedTransport(model, slice_size=(2, 3)))
    seen = _changes(session)
    await session.send("x", output_type=City)
    not_json = [c for c in seen if isinstance(c, PartChanged) and c.part.answer and c.part.answer.state == "unchecked"]
    assert len(not_json) == 1  # once, as the parse fails: the card then shows the text as it is
    assert "invalid JSON" in (not_json[0].part.answer.parse_error or "")


async def test_the_mark_survives_the_history_and_the_transcript_shows_a_json_block() -> None:
    model = Recorder('{"name": "Lisbon"}', '{"name": "Lisbon", "population": 545000}')
    session = ChatSession(model.transport())
    reply = await session.send("x", output_type=City)
    (loaded,) = load_messages(dump_messages([reply]))[0].parts
    assert isinstance(loaded, TextPart)
    assert loaded.answer is not None
    assert (loaded.answer.type_name, loaded.answer.state, loaded.answer.refused) == (
        "City",
        "valid",
        ("- population: Field required",),
    )
    assert loaded.answer.value == {"name": "Lisbon", "population": 545000, "country": "Portugal"}
    assert loaded.answer.parsed == {"name": "Lisbon", "population": 545000}  # parsed again from the text
    markdown = conversation_markdown([reply])
    assert "> *Answer 1 did not match City:* - population: Field required" in markdown
    assert '```json\n{\n  "name": "Lisbon",\n  "population": 545000,\n  "country": "Portugal"\n}\n```' in markdown
    # A plain reply has no mark, in the file either.
    plain = await ChatSession(Recorder("hi").transport()).send("x")
    assert "answer" not in json.loads(dump_messages([plain]))["messages"][0]["parts"][0]


def test_a_malformed_mark_in_a_file_is_refused() -> None:
    text = dump_messages([Message(Role.ASSISTANT, [TextPart("{}", answer=TypedAnswer("City"))])])
    data = json.loads(text)
    data["messages"][0]["parts"][0]["answer"]["state"] = "great"
    with pytest.raises(ValueError, match="unknown typed answer state"):
        load_messages(json.dumps(data))


async def test_a_wrapped_answers_value_is_the_value_under_its_key_and_a_refused_one_shows_as_written() -> None:
    reply = await ChatSession(Recorder('{"response": 42}').transport()).send("x", output_type=int)
    (part,) = reply.parts
    assert isinstance(part, TextPart)
    assert part.answer is not None
    assert part.answer.value == 42
    model = Recorder('{"name": 3}')
    with pytest.raises(OutputValidationError) as raised:
        await ChatSession(model.transport(), options=SessionOptions(output_retries=0)).send("x", output_type=City)
    markdown = conversation_markdown([raised.value.reply])
    assert "> *This answer does not match City:* - name: Input should be a valid string" in markdown
    assert '```json\n{"name": 3}\n```' in markdown
