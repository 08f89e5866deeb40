"""What a server sends off the MCP protocol (``tests/mcp/servers/raw_server.py``, JSON-RPC by hand): a result the
SDK cannot read or off its output schema, print() output on the protocol's stdout, tool names a provider refuses or
that clash once cleaned, a schema with NaN. Each test failed before the fix it guards. No child process outlives a test (psutil)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import ToolCallState
from ai_widgets.transports import OpenAIChatTransport, ScriptedTransport
from tests.helpers import NeverAsk
from tests.providers.kits.openai_chat import MockAPI

pytestmark = pytest.mark.slow  # each server is a process to start

RAW = str(Path(__file__).parent / "servers" / "raw_server.py")


@pytest.fixture
async def raw(tmp_path: Path) -> AsyncIterator[tuple[MCPServer, Path]]:
    log = tmp_path / "raw.log"
    server = MCPServer.stdio(
        sys.executable,
        [RAW],
        env={"AIW_RAW_LOG": str(log), "AIW_RAW_TOOLS": json.dumps(["3d_render", "-dash", "my tool.v2", "my_tool_v2"])},
        name="raw",
    )
    try:
        yield server, log
    finally:
        await server.aclose()


async def call(server: MCPServer, name: str, arguments: dict[str, Any] | None = None) -> Any:
    session = ChatSession(ScriptedTransport([]), tools=[server], approval_policy=NeverAsk())
    reply = await asyncio.wait_for(session.run_call(name, arguments), 20)
    return reply.tool_calls[0]


async def test_a_result_the_sdk_cannot_read_fails_that_call_and_keeps_the_server(raw: tuple[MCPServer, Path]) -> None:
    """Before: the SDK's ValidationError was taken for a broken connection: the server process was stopped (its state
    lost, the next call started a new one) and the call said only "failed (ValidationError)"."""
    server, _ = raw
    pid = (await call(server, "whoami")).outcome.value
    odd = await call(server, "odd")
    assert odd.state is ToolCallState.FAILED
    assert odd.outcome.message == (
        "The MCP server 'raw' answered the call of odd with a result that does not follow the MCP protocol, so it "
        "cannot be read (content.0: a content block of type 'hologram', which it cannot read)."
    )
    assert server.connected
    assert (await call(server, "whoami")).outcome.value == pid  # the same process: nothing was restarted


async def test_a_result_off_its_output_schema_fails_that_call_and_keeps_the_server(raw: tuple[MCPServer, Path]) -> None:
    """Before: the SDK's RuntimeError from its output-schema check was taken for a broken connection: the stdio server
    was restarted (its state lost) and the call said only "failed (RuntimeError)"."""
    server, _ = raw
    pid = (await call(server, "whoami")).outcome.value
    off = await call(server, "off_schema")
    assert off.state is ToolCallState.FAILED
    message = off.outcome.message
    assert message.startswith(
        "The MCP server 'raw' returned a result from off_schema that does not match the tool's output schema, so it "
        "was not used ("
    )
    assert "'seven' is not of type 'integer'" in message
    assert server.connected
    assert (await call(server, "whoami")).outcome.value == pid  # the same process: nothing was restarted


async def test_print_output_on_stdout_is_said_once_without_tracebacks(
    raw: tuple[MCPServer, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """Before: each line a server printed to stdout put the SDK's full traceback ("Failed to parse JSONRPC message
    from server") into the notebook."""
    server, _ = raw
    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        part = await call(server, "chatty")
        assert part.state is ToolCallState.COMPLETED
        assert part.outcome.value == "said it"
    assert not [r for r in caplog.records if "Failed to parse JSONRPC message" in r.getMessage()]
    said = [r for r in caplog.records if r.levelno >= logging.WARNING and "cannot read as a message" in r.getMessage()]
    assert len(said) == 1
    assert "'debug: chatty was called'" in said[0].getMessage()
    assert said[0].exc_info is None


async def test_names_gemini_refuses_are_fixed_and_a_real_name_beats_a_cleaned_one(raw: tuple[MCPServer, Path]) -> None:
    """Before: ``3d_render`` and ``-dash`` were offered as they are, and Gemini refuses a name that does not start
    with a letter or ``_`` (every request offering them failed); and ``my tool.v2``, cleaned to ``my_tool_v2``, took
    the name of the server's real ``my_tool_v2``, which was dropped."""
    server, log = raw
    names = [tool.name for tool in await server.list_tools()]
    assert names == [
        "echo",
        "odd",
        "chatty",
        "whoami",
        "_3d_render",
        "_-dash",
        "my_tool_v2",
        "nan_default",
        "off_schema",
    ]
    for tool in await server.list_tools():
        assert not [w for w in tool.check() if w.code == "invalid-name"], tool.name
    assert (await call(server, "_3d_render")).outcome.value == "3d_render"  # called by its own name
    assert (await call(server, "my_tool_v2")).outcome.value == "my_tool_v2"
    assert 'tools/call "3d_render"' in log.read_text()


async def test_a_schema_with_nan_does_not_fail_every_request(raw: tuple[MCPServer, Path]) -> None:
    """Before: the SDK reads ``NaN`` in a tool's input schema, and every request offering the server's tools failed
    ("Out of range float values are not JSON compliant"): the whole chat, not only that tool."""
    server, _ = raw
    (listed,) = [tool for tool in await server.list_tools() if tool.name == "nan_default"]
    assert listed.definition.parameters["properties"]["x"] == {"type": "number", "default": None}
    api = MockAPI(b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}\n\n')
    reply = await asyncio.wait_for(
        ChatSession(OpenAIChatTransport("m", client=api.client()), tools=[server]).send("hi"), 20
    )
    assert reply.error is None
    assert "nan_default" in [tool["function"]["name"] for tool in api.bodies[0]["tools"]]
