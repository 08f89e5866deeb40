"""A server that asks the person for input (MCP elicitation) through a session: the call waits in
``awaiting_input`` with the server's question, and ``session.respond`` answers it (form and URL mode).

The server (``tests/mcp/servers/asking_server.py``) runs over stdio as a child process, in each protocol era: on
2025-11-25 it asks by a request of its own (``ctx.elicit``), on 2026-07-28 by an input-required result of the call.
What it got back it writes to a log, so an answer a stopped call never returned is still seen.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession, InputResponseError, ToolInvocation, UnknownToolCallError
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import MessageStatus, ToolCallPart, ToolCallState, dump_messages, load_messages
from ai_widgets.transports import ScriptedTransport
from tests.helpers import NeverAsk
from tests.mcp.mcp_harness import ASKING, ERAS, Asking, asked, asking_server, call

pytestmark = pytest.mark.slow


@pytest.fixture(params=ERAS)
async def asking(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Asking]:
    async with asking_server(request.param, tmp_path / "asking.log") as server:
        yield server


@pytest.fixture
async def legacy(tmp_path: Path) -> AsyncIterator[Asking]:
    log = tmp_path / "asking.log"
    server = MCPServer.stdio(sys.executable, [ASKING, "--legacy"], env={"AIW_MCP_LOG": str(log)})
    try:
        yield Asking(server, log, "book")
    finally:
        await server.aclose()


def _said(part: ToolCallPart) -> Any:
    assert part.outcome is not None
    value = part.outcome.value
    return value["result"] if isinstance(value, dict) else value


def _session(server: MCPServer, *replies: Any) -> ChatSession:
    return ChatSession(ScriptedTransport(list(replies)), tools=[server], approval_policy=NeverAsk())


async def test_accepted_content_reaches_the_tool(asking: Asking) -> None:
    session = _session(asking.server, call(asking.book, {"restaurant": "Chez Nous"}), "Booked.")
    turn = asyncio.ensure_future(session.send("book a table"))
    part = await asked(session)
    request = part.input_request
    assert request is not None
    assert request.mode == "form"
    assert "Chez Nous" in request.message
    assert request.schema is not None
    assert set(request.schema["properties"]) == {"date", "seats", "window"}
    assert request.defaults == {"seats": 2, "window": True}  # the form starts from these
    assert request.asker == "asking-server"
    session.respond(part.tool_call_id, "accept", {"date": "2026-12-24", "seats": 4})
    reply = await asyncio.wait_for(turn, 20)
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.COMPLETED
    assert part.input_request is None
    assert _said(part) == "booked Chez Nous on 2026-12-24 for 4 (window: True)"
    assert asking.lines() == ['book accept {"date": "2026-12-24", "seats": 4, "window": true}']


async def test_decline_and_cancel_reach_the_server(asking: Asking) -> None:
    for action in ("decline", "cancel"):
        session = _session(asking.server, call(asking.book, {"restaurant": "X"}), "OK.")
        turn = asyncio.ensure_future(session.send("book"))
        part = await asked(session)
        session.respond(part.tool_call_id, action)
        await asyncio.wait_for(turn, 20)
        assert part.state is ToolCallState.COMPLETED
        assert _said(part) == f"not booked: the person chose {action}"
    assert asking.lines() == ["book decline null", "book cancel null"]


async def test_bad_answers_are_refused_and_the_call_still_waits(asking: Asking) -> None:
    session = _session(asking.server, call(asking.book, {"restaurant": "X"}), "OK.")
    turn = asyncio.ensure_future(session.send("book"))
    part = await asked(session)
    with pytest.raises(InputResponseError, match="does not fit the form: seats: 99 is greater than the maximum of 8"):
        session.respond(part.tool_call_id, "accept", {"date": "2026-01-01", "seats": 99})
    with pytest.raises(InputResponseError, match="'date' is a required property"):
        session.respond(part.tool_call_id, "accept", {})
    with pytest.raises(InputResponseError, match="no field 'colour'"):
        session.respond(part.tool_call_id, "accept", {"date": "2026-01-01", "colour": "red"})
    with pytest.raises(InputResponseError, match="must be an object"):
        session.respond(part.tool_call_id, "accept", ["2026-01-01"])  # type: ignore[arg-type]
    with pytest.raises(InputResponseError, match="unknown action 'yes'"):
        session.respond(part.tool_call_id, "yes")
    with pytest.raises(InputResponseError, match="content goes with accepting a form"):
        session.respond(part.tool_call_id, "decline", {"date": "2026-01-01"})
    with pytest.raises(UnknownToolCallError, match="there is no tool call 'nope'"):
        session.respond("nope", "accept")
    assert part.state is ToolCallState.AWAITING_INPUT  # nothing changed
    assert asking.lines() == []
    session.respond(part.tool_call_id, "accept", {"date": "2026-01-01"})
    with pytest.raises(InputResponseError, match=r"already answered|not waiting for input"):
        session.respond(part.tool_call_id, "accept", {"date": "2026-01-02"})
    await asyncio.wait_for(turn, 20)
    with pytest.raises(InputResponseError, match="not waiting for input: it is completed"):
        session.respond(part.tool_call_id, "cancel")
    assert asking.lines() == ['book accept {"date": "2026-01-01", "seats": 2, "window": true}']


async def test_stop_or_cancel_while_waiting_answers_cancel_and_leaves_a_valid_history(
    asking: Asking,
) -> None:
    session = _session(asking.server, call(asking.book, {"restaurant": "X"}))
    turn = asyncio.ensure_future(session.send("book"))
    part = await asked(session)
    saved = load_messages(dump_messages(session.messages))  # saved while it waits: still waiting, with the question
    waiting = saved[-1].tool_calls[0]
    assert waiting.state is ToolCallState.AWAITING_INPUT
    assert waiting.input_request == part.input_request
    assert session.stop()
    reply = await asyncio.wait_for(turn, 20)
    assert reply.status is MessageStatus.CANCELLED
    assert part.state is ToolCallState.CANCELLED
    assert part.input_request is None
    assert load_messages(dump_messages(session.messages))[-1].tool_calls[0].state is ToolCallState.CANCELLED

    # One call cancelled while it waits; the turn goes on.
    session = _session(asking.server, call(asking.book, {"restaurant": "Y"}), "Cancelled it.")
    turn = asyncio.ensure_future(session.send("book"))
    part = await asked(session)
    session.cancel(part.tool_call_id, "changed my mind")
    reply = await asyncio.wait_for(turn, 20)
    assert part.state is ToolCallState.CANCELLED
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "Cancelled it."
    # A 2025 server's own request is answered "cancel"; a 2026 one's question is withdrawn with the call.
    assert set(asking.lines()) <= {"book cancel null"}


async def test_url_mode_shows_the_link_and_takes_no_content(legacy: Asking) -> None:
    session = _session(legacy.server, call("sign_in"), "Signed in.")
    turn = asyncio.ensure_future(session.send("sign in"))
    part = await asked(session)
    request = part.input_request
    assert request is not None
    assert request.mode == "url"
    assert request.url == "https://example.com/sign-in?x=1"
    assert request.domain == "example.com"
    assert request.schema is None
    with pytest.raises(InputResponseError, match="content goes with accepting a form"):
        session.respond(part.tool_call_id, "accept", {"x": 1})
    session.respond(part.tool_call_id, "accept")
    await asyncio.wait_for(turn, 20)
    assert _said(part) == "sign-in: accept"
    assert legacy.lines() == ["sign_in accept"]


async def test_a_call_outside_a_session_is_told_nobody_can_answer(asking: Asking) -> None:
    (book,) = [t for t in await asking.server.list_tools() if t.name == asking.book]
    outcome = await book.invoke(ToolInvocation("c1", asking.book, '{"restaurant": "X"}'))
    assert not outcome.ok
    assert "nobody can answer here: it runs outside a chat session" in (outcome.message or "")
