"""``chat.ask(..., output_type=T)`` and ``chat.ask_sync``: the validated object comes back, in-process with the
recording comms of the widget harness (the typed turn itself is tested in tests/session/test_typed_answers.py)."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from ai_widgets import MessageStatus, NoOutputError, OutputValidationError, SessionOptions
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import KernelSupport
from ai_widgets.widget._turn_view import TurnView
from tests.widget.widget_harness import Mirror, Wire, finished_messages


class City(pydantic.BaseModel):
    name: str
    population: int


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


# --- the typed answer on the wire: a card that fills in as it streams ------------------------------------------------


def _ops(wire: Wire, widget: Any) -> list[list[Any]]:
    return [op for c in wire.custom(widget.comm.comm_id) if c["type"] == "patch" for op in c["ops"]]


async def test_a_typed_answer_streams_as_answer_ops_and_the_live_copy_is_the_finished_one(wire: Wire) -> None:
    answer = '{"name": "Lisbon", "population": 545000}'
    transport = ScriptedTransport(['{"name": "Lisbon"}', answer], delay=0.001, slice_size=(2, 4))
    chat = ChatWidget(transport=transport, flush_interval=0.002)
    mirror = Mirror()
    await chat.ask("The capital?", output_type=City, show=False)
    chat._patches.flush()
    ops = json.loads(json.dumps(_ops(wire, chat)))  # as sent (the mirror below changes what it holds in place)
    for content in wire.custom(chat.comm.comm_id):
        mirror.apply(content)
    reply = finished_messages(chat)[-1]
    (part,) = reply["parts"]
    assert part["text"] == answer
    assert part["answer"] == {
        "type_name": "City",
        "state": "valid",
        "parsed": {"name": "Lisbon", "population": 545000},
        "value": {"name": "Lisbon", "population": 545000},
        "errors": None,
        "refused": ["- population: Field required"],
        "parse_error": None,
    }
    assert mirror.ended[reply["id"]] == reply  # built from the ops alone
    answers = [op for op in ops if op[0] == "answer"]
    assert len(answers) > 2
    assert not [op for op in ops if op[0] == "text" and op[1] == reply["id"]]  # no second copy of the text
    # Each op carries only what its delta changed: no op re-sends the object.
    assert max(len(json.dumps(op)) for op in answers) < 200
    # The refused answer was taken out of the live copy: a "start" op re-sent the reply as it then stood.
    restarts = [op for op in ops if op[0] == "start" and op[1]["id"] == reply["id"]]
    assert len(restarts) == 2
    assert restarts[1][1]["parts"] == []


async def test_the_asking_cells_view_shows_the_card_too(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    import ai_widgets.widget._chat as chat_module

    displayed: list[Any] = []
    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", displayed.append)
    chat = ChatWidget(transport=ScriptedTransport(['{"name": "Porto", "population": 2}'], slice_size=(2, 4)))
    city = await chat.ask("x", output_type=City)
    assert city == City(name="Porto", population=2)
    (view,) = [d for d in displayed if isinstance(d, TurnView)]
    view._patches.flush()
    assert any(op[0] == "answer" for op in _ops(wire, view))
    (answer,) = [p["answer"] for m in finished_messages(view) for p in m["parts"] if "answer" in p]
    assert answer["state"] == "valid"


async def test_text_that_is_not_the_answer_is_sent_again_as_plain_text(wire: Wire) -> None:
    calls = ScriptedReply(text="Let me look.", tool_calls=[ScriptedToolCall(name="lookup", arguments={})])

    def lookup() -> int:
        """Looks it up."""
        return 2

    chat = ChatWidget(transport=ScriptedTransport([calls, '{"name": "Porto", "population": 2}']), tools=[lookup])
    await chat.ask("x", output_type=City, show=False)
    chat._patches.flush()
    reply = finished_messages(chat)[-1]
    assert "answer" not in reply["parts"][0]  # its response called a tool: ordinary text
    assert reply["parts"][2]["answer"]["state"] == "valid"
    replaced = [op for op in _ops(wire, chat) if op[0] == "part" and op[2] == 0 and op[1] == reply["id"]]
    assert [("answer" in op[3]) for op in replaced] == [True, False]
