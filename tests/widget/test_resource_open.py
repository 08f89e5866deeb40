"""A resource opened from a card (``resource_open``): a citation of an MCP call's result is read from the call's own
server and sent to the card as text (bounded; a blob as its type and size), with a real server
(``tests/mcp/servers/offers_server.py``, over stdio). A URI the result does not cite, an unknown call, or a resource
the server cannot read are refused with an error that says why; nothing changes in the conversation."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets.mcp import MCPServer
from ai_widgets.messages import dump_messages
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._resource_open import MAX_RESOURCE_CHARS
from tests.helpers import wait_for
from tests.mcp.servers.offers_server import GUIDE, PIXEL
from tests.widget.widget_harness import Wire

pytestmark = pytest.mark.slow

SCRIPT = str(Path(__file__).parents[1] / "mcp" / "servers" / "offers_server.py")


def _sent(wire: Wire, chat: ChatWidget, kind: str) -> list[dict[str, Any]]:
    return [m for m in wire.custom(chat.comm.comm_id) if m.get("type") == kind]


async def test_a_cited_resource_opens_in_its_card_and_nothing_else_can(wire: Wire) -> None:
    server = MCPServer.stdio(sys.executable, [SCRIPT], trust_annotations=True)
    transport = ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="links")]), "Linked."])
    chat = ChatWidget(transport=transport, tools=[server])
    try:
        turn = asyncio.create_task(chat.ask("links", show=False))
        await wait_for(lambda: bool(chat.session.pending_approvals) or turn.done(), timeout=30)
        for part in chat.session.pending_approvals:
            chat.session.approve(part.tool_call_id, "approved")
        reply = await turn
        call_id = reply.tool_calls[0].tool_call_id
        before = dump_messages(chat.session.messages)
        front = wire.comms[chat.comm.comm_id]

        for uri in ("docs://guide", "docs://big", "images://pixel.png", "docs://gone"):
            front.handle({"type": "resource_open", "tool_call_id": call_id, "uri": uri})
        await wait_for(lambda: len(_sent(wire, chat, "resource")) == 4, timeout=30)
        shown = {m["uri"]: m for m in _sent(wire, chat, "resource")}
        assert all(m["tool_call_id"] == call_id for m in shown.values())
        assert shown["docs://guide"]["text"] == GUIDE
        big = shown["docs://big"]["text"]
        assert big.startswith("x" * MAX_RESOURCE_CHARS)
        assert big.endswith(f"({50_000 - MAX_RESOURCE_CHARS} more characters not shown)")
        assert shown["images://pixel.png"]["text"] == f"[image/png, {len(PIXEL)} bytes]"
        assert "text" not in shown["docs://gone"]
        assert shown["docs://gone"]["error"].startswith("It could not be read:")

        # Not cited by the result, or no such call: refused, and nothing was read.
        errors_before = len(_sent(wire, chat, "error"))
        front.handle({"type": "resource_open", "tool_call_id": call_id, "uri": "file:///etc/passwd"})
        front.handle({"type": "resource_open", "tool_call_id": "nope", "uri": "docs://guide"})
        front.handle({"type": "resource_open", "tool_call_id": call_id})  # malformed: no uri
        await wait_for(lambda: len(_sent(wire, chat, "error")) == errors_before + 3, timeout=10)
        errors = [m["message"] for m in _sent(wire, chat, "error")[errors_before:]]
        assert "does not link to 'file:///etc/passwd'" in errors[0]
        assert "there is no tool call 'nope' here" in errors[1]
        assert "resource_open" in errors[2]
        assert len(_sent(wire, chat, "resource")) == 4
        assert dump_messages(chat.session.messages) == before  # the conversation never changed
    finally:
        await server.aclose()
