"""``/`` in the input box, kernel side: the ``prompts`` action lists the prompts of every MCP server among the
chat's tools (named like their tools, a failing server said apart), and ``prompt`` renders one with its arguments
and sends it as the person's message (a prompt's earlier messages before it), then the turn runs. What cannot be
sent is an error echoing the send's id (at the form's fields where it is about an argument), and changes nothing.
The servers are real (``tests/mcp/servers/offers_server.py``, over stdio)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets.mcp import MCPServer
from ai_widgets.transports import ScriptedReply, ScriptedTransport
from ai_widgets.transports._base import ChatRequest
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, finished_messages

pytestmark = pytest.mark.slow  # each server is a process to start (about a second)

SCRIPT = str(Path(__file__).parents[1] / "mcp" / "servers" / "offers_server.py")


def offers(**options: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SCRIPT], **options)


def echo(request: ChatRequest) -> ScriptedReply:
    """The model's reply: the roles and texts it was sent."""
    return ScriptedReply(text=" | ".join(f"{m.role.value}: {m.text}" for m in request.messages if m.text))


@pytest.fixture
async def servers() -> Any:
    made: list[MCPServer] = []

    def make(**options: Any) -> MCPServer:
        made.append(offers(**options))
        return made[-1]

    yield make
    for server in made:
        await server.aclose()


def answers(wire: Wire, chat: ChatWidget, kind: str) -> list[dict[str, Any]]:
    return [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == kind]


async def answer_to(wire: Wire, chat: ChatWidget, kind: str, **match: Any) -> dict[str, Any]:
    def found() -> list[dict[str, Any]]:
        return [c for c in answers(wire, chat, kind) if all(c.get(k) == v for k, v in match.items())]

    await wait_for(lambda: bool(found()), timeout=20)
    return found()[0]


async def sent_prompt(wire: Wire, chat: ChatWidget, message: dict[str, Any]) -> dict[str, Any]:
    """Sends a ``prompt`` action; the kernel's answer to it (``sent`` or ``error``)."""
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "prompt", **message})

    def answer() -> list[dict[str, Any]]:
        return [c for c in wire.custom(chat.comm.comm_id) if c.get("id") == message["id"]]

    await wait_for(lambda: bool(answer()), timeout=20)
    return answer()[0]


async def test_slash_lists_every_servers_prompts_named_like_their_tools_and_says_which_server_failed(
    wire: Wire, servers: Any
) -> None:
    leaks = "import sys; sys.stderr.write('api_key=hunter2hunter2 went wrong\\n'); sys.exit(3)"
    broken = MCPServer.stdio(sys.executable, ["-c", leaks], name="gone", timeout=10)
    chat = ChatWidget(
        transport=ScriptedTransport([echo]),
        tools=[servers(prefix="o"), servers(), broken, servers(name="second")],
    )
    wire.comms[chat.comm.comm_id].handle({"type": "prompts", "request": 7})
    assert answers(wire, chat, "prompts") == []  # answered in the background: the servers are still starting
    answer = await answer_to(wire, chat, "prompts", request=7)
    names = [item["name"] for item in answer["items"]]
    assert names[:6] == ["o_review", "o_hello", "o_dialogue", "o_few_shot", "o_broken", "review"]
    assert "second/review" in names  # the same name from a second server without a prefix
    review = next(item for item in answer["items"] if item["name"] == "o_review")
    assert review == {
        "name": "o_review",
        "server": "offers-server",
        "title": "Review code",
        "description": "Asks for a review of some code.",
        "arguments": [
            {"name": "code", "title": None, "description": None, "required": True},
            {"name": "language", "title": None, "description": None, "required": False},
        ],
    }
    [error] = answer["errors"]
    assert error["server"] == "gone"
    assert "gone" in error["message"]
    assert "went wrong" in error["message"]  # the end of its stderr, said
    assert "hunter2" not in error["message"]  # with what looks like a secret redacted
    assert chat.session.messages == []  # listing sends nothing
    await broken.aclose()


async def test_a_prompt_is_sent_as_the_persons_message_and_the_turn_runs(wire: Wire, servers: Any) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]), tools=[servers(prefix="o")])
    answer = await sent_prompt(wire, chat, {"name": "o_review", "arguments": {"code": "print(1)"}, "id": "s1"})
    assert answer == {"type": "sent", "id": "s1"}
    await wait_for(lambda: len(finished_messages(chat)) == 2, timeout=20)
    user, reply = finished_messages(chat)
    assert (user["role"], user["parts"][0]["text"]) == ("user", "Please review this python code:\nprint(1)")
    assert reply["parts"][0]["text"] == "user: Please review this python code:\nprint(1)"


async def test_a_prompts_example_goes_before_the_question_as_earlier_turns(wire: Wire, servers: Any) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]), tools=[servers()])
    answer = await sent_prompt(wire, chat, {"name": "few_shot", "arguments": {"word": "dog"}, "id": "s2"})
    assert answer["type"] == "sent"
    await wait_for(lambda: len(finished_messages(chat)) == 4, timeout=20)
    shown = [(m["role"], m["parts"][0]["text"]) for m in finished_messages(chat)]
    assert shown == [
        ("user", "Translate 'cat' into French."),
        ("assistant", "chat"),
        ("user", "Translate 'dog' into French."),
        ("assistant", "user: Translate 'cat' into French. | assistant: chat | user: Translate 'dog' into French."),
    ]


async def test_an_optional_argument_left_blank_is_not_given(wire: Wire, servers: Any) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]), tools=[servers()])
    await sent_prompt(wire, chat, {"name": "review", "arguments": {"code": "x", "language": " "}, "id": "s3"})
    await wait_for(lambda: len(finished_messages(chat)) == 2, timeout=20)
    assert finished_messages(chat)[0]["parts"][0]["text"] == "Please review this python code:\nx"  # its default


@pytest.mark.parametrize(
    ("message", "said", "fields"),
    [
        ({"name": "nope"}, "There is no prompt /nope (the servers' prompts: /review, /hello,", None),
        ({"name": "review", "arguments": {"language": "go"}}, "The prompt /review needs code.", {"code": "Required."}),
        ({"name": "review", "arguments": {"code": "  "}}, "The prompt /review needs code.", {"code": "Required."}),
        ({"name": "hello", "arguments": {"x": "1"}}, "The prompt /hello takes no arguments, not x.", None),
        ({"name": "dialogue", "arguments": {"topic": "owls"}}, "ends with the assistant's message", None),
        ({"name": "broken"}, "could not render its prompt 'broken'", None),
    ],
)
async def test_a_prompt_that_cannot_be_sent_is_an_error_for_that_send_and_changes_nothing(
    wire: Wire, servers: Any, message: dict[str, Any], said: str, fields: dict[str, str] | None
) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]), tools=[servers()])
    answer = await sent_prompt(wire, chat, {**message, "id": "bad"})
    assert answer["type"] == "error"
    assert said in answer["message"]
    assert answer.get("fields") == fields
    assert chat.session.messages == []
    assert not answers(wire, chat, "sent")


async def test_a_prompt_while_a_reply_runs_is_refused(wire: Wire, servers: Any) -> None:
    gate = asyncio.Event()

    async def slow(request: ChatRequest) -> ScriptedReply:
        await gate.wait()
        return ScriptedReply(text="late")

    chat = ChatWidget(transport=ScriptedTransport([slow, echo]), tools=[servers()])
    chat.send("first")
    await wait_for(lambda: chat.session.busy)
    answer = await sent_prompt(wire, chat, {"name": "hello", "id": "busy"})
    assert (answer["type"], answer["message"]) == ("error", "A reply is still running: wait for it, or press Stop.")
    chat.session.stop()
    await wait_for(lambda: not chat.session.busy)


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"type": "prompt", "name": "review", "arguments": {"code": 1}}, "arguments.code"),
        ({"type": "prompt", "name": ""}, "name"),
        ({"type": "prompt", "name": "x", "arguments": {f"a{i}": "" for i in range(51)}}, "arguments"),
        ({"type": "prompts"}, "request"),
    ],
)
def test_a_malformed_prompt_action_is_refused_saying_what_is_wrong(
    wire: Wire, message: dict[str, Any], said: str
) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    wire.comms[chat.comm.comm_id].handle(message)
    [error] = answers(wire, chat, "error")
    assert said in error["message"]


async def test_a_view_of_one_turn_refuses_a_prompt(wire: Wire, servers: Any) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]), tools=[servers()])
    view = TurnView(chat.session, start=None)  # what ask(show=True) shows in the asking cell
    wire.comms[view.comm.comm_id].handle({"type": "prompt", "name": "hello", "id": "t1"})
    [error] = [c for c in wire.custom(view.comm.comm_id) if c.get("type") == "error"]
    assert error["id"] == "t1"
    assert "no input box" in error["message"]
    await asyncio.sleep(0.5)
    assert chat.session.messages == []
