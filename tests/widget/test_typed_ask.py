"""``chat.ask(..., output_type=T)`` and ``chat.ask_sync``: the validated object comes back, in-process with the
recording comms of the widget harness (the typed turn itself is tested in tests/session/test_typed_answers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic
import pytest

from ai_widgets import MessageStatus, NoOutputError, OutputValidationError, SessionOptions
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.widget.widget_harness import Wire, finished_messages, recording_comms


class City(pydantic.BaseModel):
    name: str
    population: int


@pytest.fixture
def wire() -> Iterator[Wire]:
    with recording_comms() as recorded:
        yield recorded


async def test_ask_returns_the_validated_object_and_the_reply_keeps_it(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(['{"name": "Lisbon", "population": 545000}']))
    city = await chat.ask("The capital?", output_type=City, show=False)
    assert city == City(name="Lisbon", population=545000)
    assert chat.session.messages[-1].output is city
    assert [m["role"] for m in finished_messages(chat)] == ["user", "assistant"]


async def test_ask_without_output_type_still_returns_the_reply(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["hello"]))
    reply = await chat.ask("hi", show=False)
    assert reply.text == "hello"


def test_ask_sync_returns_the_validated_object_after_a_retry(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(['{"name": "Lisbon"}', '{"response": 7}']))
    assert chat.ask_sync("How many?", output_type=int, show=False) == 7  # the first answer refused, then wrapped
    assert chat.session.messages[-1].text == '{"response": 7}'


async def test_ask_raises_the_validation_error_with_the_raw_answer(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(["no", "no", "nope"]))
    with pytest.raises(OutputValidationError) as raised:
        await chat.ask("x", output_type=City, show=False)
    assert raised.value.raw == "nope"
    assert not chat.session.busy


async def test_ask_of_a_turn_that_failed_otherwise_says_so(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(text="{", error=RuntimeError("down"), error_after=1)]))
    with pytest.raises(NoOutputError, match="ended error without a typed answer: The model request failed") as raised:
        await chat.ask("x", output_type=City, show=False)
    assert raised.value.reply.status is MessageStatus.ERROR


async def test_the_widget_keeps_only_the_answer_that_validated(wire: Wire) -> None:
    chat = ChatWidget(
        transport=ScriptedTransport(
            [ScriptedReply(reasoning="Hmm.", text='{"name": "x"}'), '{"name": "Porto", "population": 2}']
        )
    )
    await chat.ask("x", output_type=City, show=False)
    reply = finished_messages(chat)[-1]
    assert [(part["kind"], part["text"]) for part in reply["parts"]] == [("text", '{"name": "Porto", "population": 2}')]


async def test_ask_of_a_turn_that_left_its_calls_to_run_says_so(wire: Wire) -> None:
    calls = ScriptedReply(tool_calls=[ScriptedToolCall(name="lookup", arguments={})])
    chat = ChatWidget(transport=ScriptedTransport([calls]), options=SessionOptions(execute_tools=False))
    with pytest.raises(NoOutputError, match="tool calls left to run"):
        await chat.ask("x", output_type=City, show=False)


async def test_ask_returns_none_when_the_answer_validated_to_none(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(['{"response": null}']))
    assert await chat.ask("x", output_type=int | None, show=False) is None
