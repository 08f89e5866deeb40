"""MCP Apps (``io.modelcontextprotocol/ui``) on the kernel's side, with a real server written with the SDK's
``Apps`` extension (``tests/mcp/servers/app_server.py``, over stdio): the client declares the extension, a tool's
definition carries the ``ui://`` URI its card shows (never the model's schema), a tool for the app alone is not
offered to the model, the page is read bounded; and in a widget the card's ``app_open`` puts the page in the
``apps`` trait while the app's own ``tools/call`` (``app_call``) runs through the session's approval policy like a
model's call: allowed, its result goes back to the app; declined, the app gets an error and nothing ran."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession
from ai_widgets.mcp import MAX_APP_BYTES, MCPServer
from ai_widgets.tools._formats import openai_chat_tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.helpers import wait_for
from tests.mcp.servers.app_server import APP_HTML, APP_URI, HUGE_URI
from tests.widget.widget_harness import Wire

pytestmark = pytest.mark.slow  # a server process per test module

SCRIPT = str(Path(__file__).parent / "servers" / "app_server.py")


def app_server(*, trust_annotations: bool = False) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SCRIPT], prefix="c", trust_annotations=trust_annotations)


async def test_a_tools_app_is_on_its_definition_and_never_in_what_the_model_is_told() -> None:
    async with app_server() as server:
        tools = {tool.name: tool.definition for tool in await server.list_tools()}
    assert tools["c_counter"].app == APP_URI
    assert tools["c_legacy"].app == APP_URI  # the older _meta["ui/resourceUri"]
    assert tools["c_bump"].app is None
    assert tools["c_elsewhere"].app is None  # not a ui:// URI: no app
    assert "c_hidden" not in tools  # visibility ["app"]: for the app alone, never offered to the model
    assert "c_tally" in tools  # visibility ["model"]: the model's
    assert "c_nobody" not in tools  # visibility []: nobody's
    told = json.dumps(openai_chat_tool(tools["c_counter"]))
    assert "ui://" not in told
    assert "app" not in json.loads(told)["function"]


async def test_the_client_declares_the_apps_extension() -> None:
    async with app_server() as server:
        reply = await ChatSession(tools=[server], approval_policy=_Allow()).run_call("c_legacy", {})
    outcome = reply.tool_calls[0].outcome
    assert outcome is not None
    assert outcome.value == {"result": "count 0 (apps: True)"}, outcome


async def test_the_page_is_read_whole_and_a_page_too_large_or_missing_says_why() -> None:
    async with app_server() as server:
        page = await server.read_app(APP_URI)
        huge = await server.read_app(HUGE_URI)
        missing = await server.read_app("ui://counter/none.html")
    assert page.html == APP_HTML
    assert page.error is None
    assert page.prefers_border is True
    assert huge.html is None
    assert huge.error is not None
    assert f"{MAX_APP_BYTES / 1e6:g} MB" in huge.error
    assert missing.html is None
    assert missing.error is not None
    assert "ui://counter/none.html" in missing.error


class _Allow:
    """Runs every call unasked (for the test that only reads a tool's text)."""

    async def requires_approval(self, definition: Any, invocation: Any) -> None:
        return None


async def _chat_with_a_finished_app_call(wire: Wire, *, trust: bool = False) -> tuple[ChatWidget, Any, str]:
    server = app_server(trust_annotations=trust)
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="c_counter", arguments={"start": 5})]), "Shown."]
    )
    chat = ChatWidget(transport=transport, tools=[server])
    turn = asyncio.create_task(chat.ask("show the counter", show=False))
    await wait_for(lambda: bool(chat.session.pending_approvals), timeout=30)
    call_id = chat.session.pending_approvals[0].tool_call_id
    chat.session.approve(call_id, "approved")
    await turn
    return chat, wire.comms[chat.comm.comm_id], call_id


def _bench_call(chat: ChatWidget) -> dict[str, Any] | None:
    entries = chat._bench
    message = entries[-1]["message"] if entries else None
    return message["parts"][0] if message else None


def _replies(wire: Wire, chat: ChatWidget) -> list[dict[str, Any]]:
    return [m for m in wire.custom(chat.comm.comm_id) if m.get("type") == "app_reply"]


async def test_a_card_gets_its_apps_page_and_the_apps_calls_are_asked_about_like_the_models(wire: Wire) -> None:
    chat, front, call_id = await _chat_with_a_finished_app_call(wire)
    try:
        assert chat._tools["c_counter"]["app"] == APP_URI
        front.handle({"type": "app_open", "tool_call_id": call_id})
        await wait_for(lambda: "c_counter" in chat._apps, timeout=30)
        assert chat._apps["c_counter"]["html"] == APP_HTML
        assert chat._apps["c_counter"]["error"] is None

        # The app calls bump (as its server names it): it waits for the person, as a model's call would.
        front.handle(
            {"type": "app_call", "tool_call_id": call_id, "request": 7, "name": "bump", "arguments": {"by": 2}}
        )
        await wait_for(lambda: (_bench_call(chat) or {}).get("state") == "awaiting_approval", timeout=30)
        assert not _replies(wire, chat)  # nothing ran, nothing answered yet
        asked = _bench_call(chat)
        assert asked is not None
        assert asked["tool_name"] == "c_bump"
        assert chat._bench[-1]["by_app"] is True
        assert chat._bench[-1]["source"] == call_id
        front.handle({"type": "approve", "tool_call_id": asked["tool_call_id"], "decision": "approved"})
        await wait_for(lambda: len(_replies(wire, chat)) == 1, timeout=30)
        reply = _replies(wire, chat)[0]
        assert reply["tool_call_id"] == call_id
        assert reply["request"] == 7
        assert reply["outcome"]["status"] == "success"
        assert reply["outcome"]["value"] == {"count": 7}

        # Declined: the app gets an error, and the server's count did not move.
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": 8, "name": "bump", "arguments": {}})
        await wait_for(lambda: (_bench_call(chat) or {}).get("state") == "awaiting_approval", timeout=30)
        asked = _bench_call(chat)
        assert asked is not None
        front.handle({"type": "approve", "tool_call_id": asked["tool_call_id"], "decision": "rejected"})
        await wait_for(lambda: len(_replies(wire, chat)) == 2, timeout=30)
        declined = _replies(wire, chat)[1]
        assert declined["request"] == 8
        assert "outcome" not in declined
        assert "c_bump was not run" in declined["error"]
        assert "declined" in declined["error"].lower(), declined
        # The conversation never saw the app's calls.
        assert [p.tool_name for m in chat.session.messages for p in m.tool_calls] == ["c_counter"]
    finally:
        chat.close()
        for source in chat.session.tools.sources:
            assert isinstance(source, MCPServer)
            await source.aclose()


async def test_an_app_calls_its_servers_tool_for_apps_alone_asked_about_like_any_other(wire: Wire) -> None:
    """Before: a tool with visibility ["app"] was left out of the listing, so the app that it is for could not call
    it ("has no tool")."""
    chat, front, call_id = await _chat_with_a_finished_app_call(wire)
    try:
        assert "c_hidden" not in chat._tools  # never offered to the model, nor shown as a registered tool
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": 3, "name": "hidden", "arguments": {}})
        await wait_for(lambda: (_bench_call(chat) or {}).get("state") == "awaiting_approval", timeout=30)
        asked = _bench_call(chat)
        assert asked is not None
        assert asked["tool_name"] == "c_hidden"
        front.handle({"type": "approve", "tool_call_id": asked["tool_call_id"], "decision": "approved"})
        await wait_for(lambda: len(_replies(wire, chat)) == 1, timeout=30)
        reply = _replies(wire, chat)[0]
        assert reply["request"] == 3
        assert reply["outcome"]["value"] == {"result": "hidden"}, reply
        assert [p.tool_name for m in chat.session.messages for p in m.tool_calls] == ["c_counter"]
        assert chat.session.tools.get("c_hidden") is None  # still not the model's
    finally:
        chat.close()
        for source in chat.session.tools.sources:
            assert isinstance(source, MCPServer)
            await source.aclose()


async def test_an_app_cannot_call_a_tool_its_server_does_not_offer_nor_open_a_tool_without_an_app(wire: Wire) -> None:
    chat, front, call_id = await _chat_with_a_finished_app_call(wire)
    try:
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": 1, "name": "rm_rf", "arguments": {}})
        await wait_for(lambda: len(_replies(wire, chat)) == 1, timeout=10)
        assert "has no tool 'rm_rf'" in _replies(wire, chat)[0]["error"]
        front.handle({"type": "app_call", "tool_call_id": "nope", "request": 2, "name": "bump", "arguments": {}})
        await wait_for(lambda: len(_replies(wire, chat)) == 2, timeout=10)
        assert "no tool call 'nope'" in _replies(wire, chat)[1]["error"]
        assert not chat._bench  # nothing was run
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": -1, "name": "bump"})
        assert "invalid 'app_call' message" in wire.custom(chat.comm.comm_id)[-1]["message"]
    finally:
        chat.close()
        for source in chat.session.tools.sources:
            assert isinstance(source, MCPServer)
            await source.aclose()


async def test_an_app_cannot_call_a_tool_for_the_model_alone_even_one_that_would_run_unasked(wire: Wire) -> None:
    """The MCP Apps specification: a host must reject an app's ``tools/call`` of a tool whose visibility leaves out
    ``"app"``. Before: the app's call of ``tally`` (``visibility: ["model"]``, read-only, the server vouched for)
    ran unasked and its result went back to the app."""
    chat, front, call_id = await _chat_with_a_finished_app_call(wire, trust=True)
    try:
        server = next(s for s in chat.session.tools.sources if isinstance(s, MCPServer))
        assert chat.session.tools.get("c_tally") is not None  # the model may call it
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": 4, "name": "tally", "arguments": {}})
        await wait_for(lambda: len(_replies(wire, chat)) == 1, timeout=10)
        refused = _replies(wire, chat)[0]
        assert refused["request"] == 4
        assert "outcome" not in refused
        assert "c_tally is for the model alone" in refused["error"], refused
        # Visible to nobody: refused the same way.
        front.handle({"type": "app_call", "tool_call_id": call_id, "request": 5, "name": "nobody", "arguments": {}})
        await wait_for(lambda: len(_replies(wire, chat)) == 2, timeout=10)
        assert "outcome" not in _replies(wire, chat)[1]
        assert "'nobody'" in _replies(wire, chat)[1]["error"]
        # Nothing waited, nothing ran: no call below the chat, none waiting for the person, and the server counts
        # the model's run as its first.
        assert not chat._bench
        assert not chat.session.pending_approvals
        ran = await ChatSession(tools=[server]).run_call("c_tally", {})
        outcome = ran.tool_calls[0].outcome
        assert outcome is not None
        assert outcome.value == {"tally": 1}, outcome
        assert [p.tool_name for m in chat.session.messages for p in m.tool_calls] == ["c_counter"]
    finally:
        chat.close()
        for source in chat.session.tools.sources:
            assert isinstance(source, MCPServer)
            await source.aclose()
