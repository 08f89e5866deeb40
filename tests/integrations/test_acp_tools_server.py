"""ACPToolsServer: the session's tools offered to an ACP agent as an MCP server on loopback, driven by the MCP SDK's
streamable-HTTP client as an agent would drive it: listing, calls run on the session's loop (a plain tool and
KernelTools' run_python), results with images and errors, cancels both ways, list_changed in both protocol eras, the
token and the Host header checked, and a close that leaves nothing behind (no thread, no socket, SIGINT untouched)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import signal
import socket
import threading
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import ImageContent, TextContent

from ai_widgets.integrations._acp_tools_server import ACPToolsServer, OfferedToolCall
from ai_widgets.kernel import KernelTools
from ai_widgets.messages import ToolCallPart
from ai_widgets.tools import Attachment, Tool, ToolInvocation, ToolOutcome, ToolRisk, tool
from tests.helpers import wait_for

THREAD = "ai_widgets-acp-tools"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@tool(risk=ToolRisk.READ_ONLY, title="Look")
def look() -> str:
    """Looks."""
    return "seen"


@tool
def boom() -> str:
    """Raises."""
    raise ValueError("it broke")


def png() -> str:
    """A whole 1x1 PNG, as base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = (1).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    return base64.b64encode(raw + chunk(b"IEND", b"")).decode()


@tool
def picture() -> ToolOutcome:
    """Shows a picture."""
    return ToolOutcome.success(
        "a picture",
        attachments=[
            Attachment(mime_type="image/png", data=png()),
            Attachment(mime_type="image/png", data="bm90IGFuIGltYWdl"),  # not an image: left out
            Attachment(mime_type="image/png", data=png(), card_only=True),  # for the card only: left out
        ],
    )


class Session:
    """What a transport would give the server: the tools now, and a call that runs them on the session's loop."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)
        self.calls: list[OfferedToolCall] = []
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.threads: list[str] = []

    def current(self) -> list[Tool]:
        return self.tools

    async def call(self, call: OfferedToolCall) -> ToolOutcome | ToolCallPart:
        self.calls.append(call)
        self.loops.append(asyncio.get_running_loop())
        self.threads.append(threading.current_thread().name)
        found = {t.definition.name: t for t in self.tools}[call.name]
        return await found.invoke(
            ToolInvocation(
                tool_call_id=call.tool_use_id or "call", tool_name=call.name, arguments=json.dumps(call.arguments)
            )
        )


@contextlib.asynccontextmanager
async def serving(
    tools: Sequence[Tool] = (add,), call: Callable[[OfferedToolCall], Any] | None = None
) -> AsyncIterator[tuple[ACPToolsServer, Session]]:
    session = Session(tools)
    server = ACPToolsServer(session.current, call or session.call)
    await server.start()
    try:
        yield server, session
    finally:
        await server.aclose()


@contextlib.asynccontextmanager
async def connected(
    server: ACPToolsServer, mode: str = "legacy", headers: dict[str, str] | None = None, **options: Any
) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=server.headers() if headers is None else headers) as http:
        client = Client(streamable_http_client(server.url, http_client=http), mode=mode, cache=None, **options)
        async with client:
            yield client


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD]


# --- listing and calling -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_lists_the_tools_with_their_schemas_and_risk(mode: str) -> None:
    async with serving([add, look]) as (server, _), connected(server, mode) as client:
        listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
    assert list(by_name) == ["add", "look"]
    assert by_name["add"].description == "Adds two numbers."
    assert by_name["add"].input_schema["required"] == ["a", "b"]
    assert by_name["look"].title == "Look"
    assert by_name["look"].annotations is not None
    assert by_name["look"].annotations.read_only_hint is True
    assert by_name["add"].annotations is not None
    assert by_name["add"].annotations.destructive_hint is False


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_runs_on_the_sessions_loop_with_its_meta(mode: str) -> None:
    async with serving() as (server, session), connected(server, mode) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2}, meta={"claudecode/toolUseId": "toolu_7"})
    assert result.is_error is False
    assert text_of(result) == "3"
    [call] = session.calls
    assert (call.name, call.arguments, call.tool_use_id) == ("add", {"a": 1, "b": 2}, "toolu_7")
    assert call.definition == add.definition
    assert session.loops == [asyncio.get_running_loop()]  # the session's loop, not the server's
    assert session.threads == [threading.current_thread().name]


async def test_run_python_runs_in_the_namespace_and_the_agent_reads_its_output() -> None:
    namespace: dict[str, Any] = {}
    kernel_tools = await KernelTools(namespace).list_tools()
    async with serving(kernel_tools) as (server, session), connected(server) as client:
        listed = await client.list_tools()
        result = await client.call_tool("run_python", {"code": "x = 21\nprint('hello')\nx * 2"})
    assert "run_python" in [t.name for t in listed.tools]
    assert result.is_error is False
    assert "hello" in text_of(result)
    assert "42" in text_of(result)
    assert namespace["x"] == 21
    assert session.loops == [asyncio.get_running_loop()]


async def test_a_results_images_go_with_its_text_and_broken_or_card_only_ones_do_not() -> None:
    async with serving([picture]) as (server, _), connected(server) as client:
        result = await client.call_tool("picture", {})
    assert text_of(result) == "a picture"
    images = [block for block in result.content if isinstance(block, ImageContent)]
    assert [(i.mime_type, i.data) for i in images] == [("image/png", png())]


async def test_a_call_part_says_the_person_edited_the_arguments() -> None:
    async def call(call: OfferedToolCall) -> ToolCallPart:
        part = ToolCallPart("toolu_1", call.name, json.dumps(call.arguments))
        part.edited_arguments = {"a": 5, "b": 2}
        part.outcome = ToolOutcome.success(7)
        return part

    async with serving(call=call) as (server, _), connected(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    assert "changed the arguments" in text_of(result)
    assert text_of(result).endswith("7")


async def test_a_long_result_is_cut_in_the_middle() -> None:
    @tool
    def long() -> str:
        """Says a lot."""
        return "a" * 5000 + "z" * 5000

    session = Session([long])
    server = ACPToolsServer(session.current, session.call, max_text_chars=1000)
    await server.start()
    try:
        async with connected(server) as client:
            result = await client.call_tool("long", {})
    finally:
        await server.aclose()
    text = text_of(result)
    assert text.startswith("a" * 600)
    assert text.endswith("z" * 300)
    assert "left out" in text
    assert len(text) < 1200


# --- failures ------------------------------------------------------------------------------------------------------


async def test_a_tool_that_raises_answers_is_error() -> None:
    async with serving([boom]) as (server, _), connected(server) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error is True
    assert text_of(result) == "The tool boom failed with an internal error."


async def test_a_call_that_raises_answers_is_error_without_the_token() -> None:
    token = ""

    async def call(call: OfferedToolCall) -> ToolOutcome:
        raise RuntimeError(f"the transport broke, holding {token}")

    async with serving(call=call) as (server, _):
        token = server.headers()["Authorization"].removeprefix("Bearer ")
        async with connected(server) as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result.is_error is True
    assert "RuntimeError: the transport broke" in text_of(result)
    assert token not in text_of(result)
    assert "[token]" in text_of(result)


async def test_a_tool_that_is_not_offered_answers_is_error_and_nothing_runs() -> None:
    async with serving([add, look]) as (server, session), connected(server) as client:
        result = await client.call_tool("run_python", {"code": "1"})
    assert result.is_error is True
    assert text_of(result) == "There is no tool named 'run_python' here (the tools are: add, look)."
    assert session.calls == []


async def test_a_callback_cancelled_on_the_sessions_loop_answers_is_error() -> None:
    started: list[asyncio.Task[Any]] = []

    async def call(call: OfferedToolCall) -> ToolOutcome:
        task = asyncio.current_task()
        assert task is not None
        started.append(task)
        await asyncio.sleep(60)
        return ToolOutcome.success("never")

    async with serving(call=call) as (server, _), connected(server) as client:
        calling = asyncio.ensure_future(client.call_tool("add", {"a": 1, "b": 2}))
        await wait_for(lambda: bool(started))
        started[0].cancel()  # as Stop cancels what the session runs
        result = await asyncio.wait_for(calling, 10)
    assert result.is_error is True
    assert text_of(result) == "The call was cancelled before it finished."


async def test_the_agent_cancelling_its_request_cancels_the_call() -> None:
    cancelled = asyncio.Event()

    async def call(call: OfferedToolCall) -> ToolOutcome:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolOutcome.success("never")

    async with serving(call=call) as (server, _), connected(server) as client:
        with pytest.raises(MCPError, match="timed out"):  # it gives up and sends notifications/cancelled
            await client.call_tool("add", {"a": 1, "b": 2}, read_timeout_seconds=0.3)
        await asyncio.wait_for(cancelled.wait(), 10)


async def test_closing_mid_call_cancels_the_call() -> None:
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def call(call: OfferedToolCall) -> ToolOutcome:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolOutcome.success("never")

    session = Session([add])
    server = ACPToolsServer(session.current, call)
    await server.start()
    async with connected(server) as client:
        calling = asyncio.ensure_future(client.call_tool("add", {"a": 1, "b": 2}))
        await asyncio.wait_for(started.wait(), 10)
        await server.aclose()
        await asyncio.wait_for(cancelled.wait(), 10)
        result = await asyncio.wait_for(calling, 10)  # answered before the connection closed
    assert result.is_error is True
    assert text_of(result) == "The call was cancelled before it finished."
    assert server_threads() == []


# --- who may call --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", "Basic x", "token-without-scheme"])
async def test_a_missing_or_wrong_token_gets_401_and_nothing_runs(authorization: str | None) -> None:
    async with serving() as (server, session):
        headers = dict(POST_HEADERS)
        if authorization is not None:
            headers["Authorization"] = authorization
        async with httpx2.AsyncClient() as http:
            answer = await http.post(server.url, json=INITIALIZE, headers=headers)
            right = await http.post(server.url, json=INITIALIZE, headers={**POST_HEADERS, **server.headers()})
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    assert right.status_code == 200
    assert session.calls == []


async def test_the_token_with_a_character_more_or_less_is_refused() -> None:
    async with serving() as (server, _):
        token = server.headers()["Authorization"]
        async with httpx2.AsyncClient() as http:
            statuses = [
                (await http.post(server.url, json=INITIALIZE, headers={**POST_HEADERS, "Authorization": t})).status_code
                for t in (token[:-1], token + "x", token.lower())
            ]
    assert statuses == [401, 401, 401]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost.evil:{port}"])
async def test_a_host_header_that_is_not_this_loopback_address_is_refused(host: str) -> None:
    async with serving() as (server, session):
        port = server.url.split(":")[2].split("/")[0]
        headers = {**POST_HEADERS, **server.headers(), "Host": host.format(port=port)}
        async with httpx2.AsyncClient() as http:
            answer = await http.post(server.url, json=INITIALIZE, headers=headers)
            by_name = await http.post(
                server.url, json=INITIALIZE, headers={**POST_HEADERS, **server.headers(), "Host": f"localhost:{port}"}
            )
    assert answer.status_code == 421
    assert by_name.status_code == 200
    assert session.calls == []


async def test_a_web_pages_origin_is_refused() -> None:
    async with serving() as (server, _):
        headers = {**POST_HEADERS, **server.headers(), "Origin": "https://evil.example"}
        async with httpx2.AsyncClient() as http:
            answer = await http.post(server.url, json=INITIALIZE, headers=headers)
    assert answer.status_code == 403


async def test_another_path_is_not_found() -> None:
    async with serving() as (server, _), httpx2.AsyncClient() as http:
        answer = await http.post(server.url.replace("/mcp", "/other"), json=INITIALIZE, headers=server.headers())
    assert answer.status_code == 404


async def test_the_token_is_the_servers_own_and_never_in_its_repr() -> None:
    first = ACPToolsServer(lambda: [add], Session([add]).call)
    second = ACPToolsServer(lambda: [add], Session([add]).call)
    token = first.headers()["Authorization"].removeprefix("Bearer ")
    assert len(token) >= 43
    assert token != second.headers()["Authorization"].removeprefix("Bearer ")
    with pytest.raises(RuntimeError, match="no URL before start"):
        _ = first.url
    await first.start()
    try:
        assert first.url.startswith("http://127.0.0.1:")
        assert first.url.endswith("/mcp")
        assert token not in repr(first)
        assert first.url in repr(first)
    finally:
        await first.aclose()
    assert token not in repr(first)
    await second.aclose()  # never started: nothing to stop
    assert "closed" in repr(second)


# --- the list follows the session ---------------------------------------------------------------------------------


async def test_list_changed_reaches_a_handshake_era_agent_after_the_tools_change() -> None:
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            changed.set()

    async with serving([add]) as (server, session):
        session.tools.append(boom)
        assert await server.refresh() is False  # no agent has listed them yet: nobody to tell
        session.tools.remove(boom)
        async with connected(server, "legacy", message_handler=on_message) as client:
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            assert [t.name for t in (await client.list_tools()).tools] == ["add"]
            assert await server.refresh() is False  # nothing changed
            session.tools.append(look)
            assert await server.refresh() is True
            await asyncio.wait_for(changed.wait(), 10)
            assert [t.name for t in (await client.list_tools()).tools] == ["add", "look"]
            assert await server.refresh() is False


async def test_list_changed_reaches_a_2026_era_agent_listening_for_it() -> None:
    async with serving([add]) as (server, session), connected(server, "auto") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["add"]
        async with client.listen(tools_list_changed=True) as subscription:
            session.tools.remove(add)
            session.tools.append(look)
            assert await server.refresh() is True
            event = await asyncio.wait_for(anext(aiter(subscription)), 10)
        assert isinstance(event, ToolsListChanged)
        assert [t.name for t in (await client.list_tools()).tools] == ["look"]


async def test_tool_definitions_are_offered_as_well_as_tools() -> None:
    session = Session([add, look])
    server = ACPToolsServer(lambda: [add.definition, look.definition], session.call)  # a request's tools
    await server.start()
    try:
        async with connected(server) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["add", "look"]
            assert text_of(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
    finally:
        await server.aclose()


# --- what it leaves behind ------------------------------------------------------------------------------------------


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


async def test_close_leaves_no_thread_or_socket_behind() -> None:
    before = open_fds()
    async with serving() as (server, _):
        url = server.url
        port = int(url.split(":")[2].split("/")[0])
        async with connected(server) as client:
            assert (await client.call_tool("add", {"a": 2, "b": 2})).is_error is False
        assert len(server_threads()) == 1
        assert server.running
    assert not server.running
    assert server_threads() == []
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    await wait_for(lambda: open_fds() <= before)  # the client's sockets close as it does


async def test_close_with_an_agent_still_connected_is_quick_and_complete() -> None:
    async with serving() as (server, _), connected(server) as client:
        await client.list_tools()
        started = asyncio.get_running_loop().time()
        await server.aclose()
        assert asyncio.get_running_loop().time() - started < 3
        assert server_threads() == []
    await server.aclose()  # again: nothing to do
    with pytest.raises(RuntimeError, match="was closed"):
        await server.start()


async def test_a_start_cancelled_midway_leaves_nothing_serving(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="ai_widgets")
    server = ACPToolsServer(lambda: [add], Session([add]).call)
    starting = asyncio.ensure_future(server.start())
    await asyncio.sleep(0)  # it has bound its port and started its thread, and waits for it
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    assert server_threads() == []
    assert not server.running
    assert [r.getMessage() for r in caplog.records if r.name == "ai_widgets"] == []  # its thread ended cleanly
    with pytest.raises(RuntimeError, match="was closed"):
        await server.start()


async def test_a_close_while_it_starts_wins() -> None:
    server = ACPToolsServer(lambda: [add], Session([add]).call)
    starting = asyncio.ensure_future(server.start())
    await asyncio.sleep(0)
    await server.aclose()
    with pytest.raises(RuntimeError, match="closed as it started"):
        await starting
    assert server_threads() == []
    assert not server.running


async def test_the_main_threads_signal_handlers_are_left_alone() -> None:
    def handler(signum: int, frame: Any) -> None:
        pass

    previous = signal.signal(signal.SIGINT, handler)
    term = signal.getsignal(signal.SIGTERM)
    try:
        async with serving() as (server, _), connected(server) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            assert signal.getsignal(signal.SIGINT) is handler
            assert signal.getsignal(signal.SIGTERM) is term
        assert signal.getsignal(signal.SIGINT) is handler
        assert signal.getsignal(signal.SIGTERM) is term
    finally:
        signal.signal(signal.SIGINT, previous)


async def test_the_processs_logging_is_left_alone() -> None:
    loggers = ["", "uvicorn", "uvicorn.error", "uvicorn.access"]

    def state() -> list[tuple[list[logging.Handler], int, bool]]:
        return [
            (logging.getLogger(n).handlers[:], logging.getLogger(n).level, logging.getLogger(n).propagate)
            for n in loggers
        ]

    before = state()
    async with serving() as (server, _), connected(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        assert state() == before


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_text_chars"):
        ACPToolsServer(list, Session([]).call, max_text_chars=0)
    with pytest.raises(ValueError, match="max_image_chars"):
        ACPToolsServer(list, Session([]).call, max_image_chars=True)
