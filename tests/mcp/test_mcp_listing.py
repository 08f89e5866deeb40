"""What a session offers of a server's tool listing, and when it asks again: a malformed tool is skipped (not the
whole server), a name a local tool has stays the local tool's, a tool that requires task execution is not offered by
a server that does not declare tasks, the checks speak of the server's description, and a definition that changes
asks again after "allow always". The listings come from ``tests/mcp/servers/raw_server.py`` (JSON-RPC by hand),
which sends what FastMCP would refuse to. Each test failed before the fix it guards. No child process outlives a test (psutil)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession, tool
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import NeverAsk

pytestmark = pytest.mark.slow  # each server is a process to start

RAW = str(Path(__file__).parent / "servers" / "raw_server.py")


def spec(name: str, **fields: Any) -> dict[str, Any]:
    """A tool definition as a server sends it; ``fields`` override or add to it."""
    return {"name": name, "description": f"The tool {name}.", "inputSchema": {"type": "object"}, **fields}


def raw(tmp_path: Path, *listings: list[list[Any]], **options: Any) -> MCPServer:
    """The raw server going through ``listings`` (each a list of pages of tool definitions)."""
    env = {"AIW_RAW_LOG": str(tmp_path / "raw.log"), "AIW_RAW_LISTINGS": json.dumps(list(listings))}
    return MCPServer.stdio(sys.executable, [RAW], env=env, name="raw", **options)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("ai_widgets")]


# --- one bad tool ------------------------------------------------------------------------------------------------------


async def test_a_malformed_tool_is_skipped_and_the_rest_of_the_server_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the SDK refused the whole tools/list for one tool with a non-object input schema, so the listing
    failed ("could not list its tools") and every tool of the server was lost."""
    caplog.set_level(logging.WARNING)
    first_page = [
        spec("text_schema", inputSchema="not a schema"),
        spec("string_schema", inputSchema={"type": "string"}),
        {"description": "no name"},
    ]
    second_page = [spec("echo"), spec("no_schema", inputSchema=None), spec("whoami")]
    server = raw(tmp_path, [first_page, second_page])
    try:
        names = [tool.name for tool in await server.list_tools()]
        assert names == ["echo", "whoami"]  # the second page was read although the first had no good tool
        session = ChatSession(ScriptedTransport([]), tools=[server], approval_policy=NeverAsk())
        reply = await asyncio.wait_for(session.run_call("echo", {"text": "still here"}), 20)
        assert reply.tool_calls[0].state is ToolCallState.COMPLETED
        assert reply.tool_calls[0].outcome.value == "still here"  # type: ignore[union-attr]
    finally:
        await server.aclose()
    said = warnings_of(caplog)
    assert len(said) == 4, said
    text_schema = next(line for line in said if "'text_schema'" in line)
    assert "MCP server raw" in text_schema
    assert "inputSchema: Input should be a valid dictionary" in text_schema  # what is wrong, and where
    assert any("'string_schema'" in line and "inputSchema.type" in line and "'object'" in line for line in said)
    assert any("number 3 of its page (it has no name)" in line for line in said)
    assert any("'no_schema'" in line for line in said)
    assert 'tools/list "1"' in (tmp_path / "raw.log").read_text()  # the cursor of the second page was sent


async def test_a_listing_of_only_bad_tools_is_empty_with_warnings_not_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    server = raw(tmp_path, [[spec("bad", inputSchema=[1, 2])]])
    try:
        assert await server.list_tools() == []
        reply = await asyncio.wait_for(ChatSession(ScriptedTransport(["hi"]), tools=[server]).send("hello"), 20)
        assert reply.error is None
        assert reply.text == "hi"
    finally:
        await server.aclose()
    (said,) = warnings_of(caplog)  # once, although the session listed the tools again
    assert "MCP server raw: skipped its tool 'bad'" in said


# --- a name a local tool has ---------------------------------------------------------------------------------------


@tool
def echo(text: str) -> str:
    """Answers the text, from this kernel."""
    return f"local: {text}"


async def test_a_server_tool_named_like_a_local_tool_gives_way_to_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the clash was a ValueError at every listing, so every turn of the session failed."""
    caplog.set_level(logging.WARNING)
    server = raw(tmp_path, [[spec("echo"), spec("whoami")]])
    script = [ScriptedReply(tool_calls=[ScriptedToolCall(name="echo", arguments={"text": "hi"})]), "Done.", "Again."]
    transport = ScriptedTransport(script)
    session = ChatSession(transport, tools=[echo, server], approval_policy=NeverAsk())
    try:
        reply = await asyncio.wait_for(session.send("go"), 20)
        assert reply.error is None
        assert reply.tool_calls[0].outcome.value == "local: hi"  # type: ignore[union-attr]
        assert (await asyncio.wait_for(session.send("more"), 20)).error is None
    finally:
        await server.aclose()
    assert [d.name for d in transport.requests[0].tools] == ["echo", "whoami"]  # the server's echo not offered
    assert 'tools/call "echo"' not in (tmp_path / "raw.log").read_text()
    (said,) = [line for line in warnings_of(caplog) if "not offered" in line]
    assert "MCPServer('raw')" in said
    assert "registered tool 'echo'" in said


# --- task execution --------------------------------------------------------------------------------------------------


async def test_a_tool_that_requires_task_execution_is_not_offered_by_a_server_without_tasks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: it was offered, and every call of it failed (the server wants a task, the client sent a plain call).
    This server does not declare task-augmented tool calls, so none may be sent: the tool is left out, saying why
    (tests/mcp/test_mcp_tasks.py has a server that declares them)."""
    caplog.set_level(logging.WARNING)
    listing = [
        spec("long_job", execution={"taskSupport": "required"}),
        spec("maybe_long", execution={"taskSupport": "optional"}),
        spec("plain", execution={"taskSupport": "forbidden"}),
    ]
    server = raw(tmp_path, [listing])
    try:
        assert [t.name for t in await server.list_tools()] == ["maybe_long", "plain"]
        session = ChatSession(ScriptedTransport([]), tools=[server], approval_policy=NeverAsk())
        reply = await asyncio.wait_for(session.run_call("maybe_long"), 20)
        assert reply.tool_calls[0].outcome.value == "maybe_long"  # type: ignore[union-attr]  # a plain call
    finally:
        await server.aclose()
    (said,) = warnings_of(caplog)
    assert "MCP server raw: skipped its tool 'long_job'" in said
    assert "requires task execution" in said
    assert "the server does not declare task-augmented tool calls (capabilities.tasks.requests.tools.call)" in said
