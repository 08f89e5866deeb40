"""The card's answer to a call waiting for the person's input (``awaiting_input``): the call's question reaches the
view as data (``input_request``), and the ``respond`` action answers it, in the chat and in the asking cell's view,
validated first (a malformed message, a call not waiting, content that does not fit: a clear error, the call still
waits). The tool here asks through its invocation, as an MCP server's elicitation does (tests/mcp/test_mcp_asking.py
runs a real server).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import InputRequest, ToolInvocation, tool
from ai_widgets.messages import Message
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import KernelSupport
from ai_widgets.widget._serialize import message_dict
from ai_widgets.widget._transcript import transcript_html, transcript_markdown
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, finished_messages

FORM = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "The day"},
        "seats": {"type": "integer", "minimum": 1, "maximum": 8, "default": 2},
    },
    "required": ["date"],
}


@tool
async def book(invocation: ToolInvocation) -> str:
    """Books a table, asking the person."""
    answer = await invocation.ask_person(InputRequest("Which day? <b>bold</b>", schema=FORM, asker="tables"))
    return f"{answer.action} {None if answer.content is None else sorted(answer.content.items())}"


@tool
async def sign_in(invocation: ToolInvocation) -> str:
    """Asks the person to open a page."""
    answer = await invocation.ask_person(InputRequest("Sign in", mode="url", url="https://login.example.com/a?b=1"))
    return f"sign-in {answer.action}"


async def waiting(wire: Wire, name: str = "book") -> tuple[ChatWidget, Any, asyncio.Task[Message], str]:
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name=name, arguments={})]), "Done."])
    chat = ChatWidget(transport=transport, tools=[book, sign_in])
    turn = asyncio.create_task(chat.ask("go", show=False))
    await wait_for(lambda: bool(chat.session.pending_inputs))
    return chat, wire.comms[chat.comm.comm_id], turn, chat.session.pending_inputs[0].tool_call_id


def shown_call(chat: ChatWidget) -> dict[str, Any]:
    """The waiting call as a view that syncs now sees it."""
    turn = chat.session._turn
    assert turn is not None
    return message_dict(turn.reply, 0)["parts"][0]


async def test_a_form_question_reaches_the_view_as_data_and_accept_sends_the_form(wire: Wire) -> None:
    chat, front, turn, call_id = await waiting(wire)
    asked = shown_call(chat)
    assert asked["state"] == "awaiting_input"
    assert asked["input_request"] == {
        "message": "Which day? <b>bold</b>",  # text: the view sets it as text
        "mode": "form",
        "schema": FORM,
        "url": None,
        "domain": None,
        "asker": "tables",
    }
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"date": "2026-12-24"}})
    await turn
    call = finished_messages(chat)[1]["parts"][0]
    assert call["state"] == "completed"
    assert call["input_request"] is None  # answered: the card stops asking
    assert call["outcome"]["value"] == "accept [('date', '2026-12-24'), ('seats', 2)]"  # the default filled the rest


async def test_a_url_question_carries_its_link_and_domain_and_decline_answers_it(wire: Wire) -> None:
    chat, front, turn, call_id = await waiting(wire, "sign_in")
    asked = shown_call(chat)["input_request"]
    assert (asked["mode"], asked["url"], asked["domain"], asked["schema"]) == (
        "url",
        "https://login.example.com/a?b=1",
        "login.example.com",
        None,
    )
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "decline"})
    await turn
    assert finished_messages(chat)[1]["parts"][0]["outcome"]["value"] == "sign-in decline"


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"type": "respond", "tool_call_id": "X", "action": "maybe"}, "action"),
        ({"type": "respond", "action": "accept"}, "tool_call_id"),
        ({"type": "respond", "tool_call_id": "X", "action": "accept", "content": [1, 2]}, "content"),
        ({"type": "respond", "tool_call_id": "X", "action": "accept", "extra": 1}, "extra"),
        ({"type": "respond", "tool_call_id": "", "action": "cancel"}, "tool_call_id"),
    ],
)
async def test_a_malformed_respond_is_refused_with_what_is_wrong_and_the_call_still_waits(
    wire: Wire, message: dict[str, Any], said: str
) -> None:
    chat, front, turn, call_id = await waiting(wire)
    if message.get("tool_call_id") == "X":
        message = {**message, "tool_call_id": call_id}
    front.handle(message)
    error = wire.custom(chat.comm.comm_id)[-1]
    assert error["type"] == "error"
    assert "invalid 'respond' message" in error["message"], error
    assert said in error["message"], error
    assert chat.session.pending_inputs  # nothing lost: it still waits
    chat.session.respond(call_id, "cancel")
    await turn


async def test_content_that_does_not_fit_is_refused_at_its_field_and_the_call_still_waits(wire: Wire) -> None:
    chat, front, turn, call_id = await waiting(wire)
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"seats": 9}})
    error = wire.custom(chat.comm.comm_id)[-1]
    assert error["message"].startswith("Answer refused: the content does not fit the form")
    assert error["tool_call_id"] == call_id
    assert set(error["fields"]) == {"date", "seats"}, error  # the missing required field and the number too big
    assert error["fields"]["date"] == "Required."
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"tables": 1}})
    assert wire.custom(chat.comm.comm_id)[-1]["fields"] == {"tables": "The form has no such field."}
    assert chat.session.pending_inputs
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"date": "d", "seats": 3}})
    await turn
    assert finished_messages(chat)[1]["parts"][0]["outcome"]["value"] == "accept [('date', 'd'), ('seats', 3)]"


async def test_respond_to_a_call_not_waiting_is_refused_clearly(wire: Wire) -> None:
    chat, front, turn, call_id = await waiting(wire)
    front.handle({"type": "respond", "tool_call_id": call_id, "action": "cancel"})
    await turn
    for target, said in [(call_id, "is not waiting for input: it is completed"), ("nope", "there is no tool call")]:
        front.handle({"type": "respond", "tool_call_id": target, "action": "accept", "content": {}})
        error = wire.custom(chat.comm.comm_id)[-1]
        assert error["type"] == "error"
        assert said in error["message"], error
        assert error["tool_call_id"] == target
    assert finished_messages(chat)[1]["parts"][0]["outcome"]["value"] == "cancel None"


async def test_the_asking_cells_view_answers_the_same_question(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    import ai_widgets.widget._chat as chat_module

    shown: list[Any] = []
    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", lambda obj, **_: shown.append(obj))
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="book", arguments={})]), "Done."])
    chat = ChatWidget(transport=transport, tools=[book])
    turn = asyncio.create_task(chat.ask("go"))
    await wait_for(lambda: bool(chat.session.pending_inputs))
    (view,) = shown
    assert isinstance(view, TurnView)
    call_id = chat.session.pending_inputs[0].tool_call_id
    cell = wire.comms[view.comm.comm_id]
    cell.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"seats": 0}})
    assert wire.custom(view.comm.comm_id)[-1]["fields"].keys() == {"date", "seats"}
    cell.handle({"type": "respond", "tool_call_id": call_id, "action": "accept", "content": {"date": "today"}})
    await turn
    assert finished_messages(chat)[1]["parts"][0]["outcome"]["value"] == "accept [('date', 'today'), ('seats', 2)]"
    # The click in the cell answered once: the chat's own view is told it is not waiting any more.
    wire.comms[chat.comm.comm_id].handle({"type": "respond", "tool_call_id": call_id, "action": "cancel"})
    assert "not waiting for input" in wire.custom(chat.comm.comm_id)[-1]["message"]


async def test_the_saved_transcript_of_a_call_waiting_for_input_shows_what_it_asked(wire: Wire) -> None:
    chat, _front, turn, call_id = await waiting(wire, "sign_in")
    reply = chat.session._turn.reply  # type: ignore[union-attr]
    messages = [m for m in chat.session.messages if m is not reply] + [reply]
    html, markdown = transcript_html(messages), transcript_markdown(messages)
    for text in (html, markdown):
        assert "awaiting input" in text
        assert "for your input when this was saved" in text, text
        assert "Sign in" in text
        assert "login.example.com" in text
    assert "<a " not in html  # the link is text, never markup
    chat.session.respond(call_id, "cancel")
    await turn
