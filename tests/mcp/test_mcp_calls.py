"""How an MCP client call is bounded and what the client offers a server (issue 21), against real servers: a call
that runs out of time (a frozen server, stopped with SIGSTOP, and a slow one), the deadline paused while the person
is asked, an HTTP server that wants credentials (401, 403), roots, and a server's log messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession
from ai_widgets.mcp import DEFAULT_CALL_TIMEOUT, MCPServer, MCPServerError
from ai_widgets.messages import MessageStatus, ToolCallPart, ToolCallState
from ai_widgets.transports import ScriptedTransport
from tests.helpers import NeverAsk, children, wait_for
from tests.mcp.mcp_harness import ASKING, ERAS, SCRIPT, call, log_lines, serving, stdio

pytestmark = pytest.mark.slow


def _session(server: MCPServer, *replies: Any) -> ChatSession:
    return ChatSession(ScriptedTransport(list(replies)), tools=[server], approval_policy=NeverAsk())


async def _run(server: MCPServer, tool: str, arguments: dict[str, Any] | None = None) -> ToolCallPart:
    reply = await asyncio.wait_for(_session(server, call(tool, arguments), "Done.").send("go"), 60)
    return reply.tool_calls[0]


def _message(part: ToolCallPart) -> str:
    assert part.outcome is not None
    return part.outcome.message or ""


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def _said(part: ToolCallPart) -> Any:
    assert part.outcome is not None
    value = part.outcome.value
    return json.loads(value["result"] if isinstance(value, dict) else str(value))


def _asking(era: str, **kwargs: Any) -> MCPServer:
    return MCPServer.stdio(sys.executable, [ASKING, *(["--legacy"] if era == ERAS[0] else [])], **kwargs)


def test_a_call_is_bounded_by_default() -> None:
    assert DEFAULT_CALL_TIMEOUT == 120
    assert MCPServer.stdio(sys.executable, [SCRIPT]).call_timeout == DEFAULT_CALL_TIMEOUT
    assert MCPServer.http("http://127.0.0.1:1/mcp").call_timeout == DEFAULT_CALL_TIMEOUT
    server = MCPServer.stdio(sys.executable, [SCRIPT], call_timeout=None)
    assert server.call_timeout is None
    server.call_timeout = 5
    assert server.call_timeout == 5
    for bad in (0, -1, True, "10"):
        with pytest.raises(ValueError, match="call_timeout must be a positive number"):
            server.call_timeout = bad  # type: ignore[assignment]
        with pytest.raises(ValueError, match="call_timeout must be a positive number"):
            MCPServer.stdio(sys.executable, [SCRIPT], call_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        server.timeout = -1
    with pytest.raises(TypeError, match="auth= is for an HTTP server"):
        MCPServer(command=sys.executable, args=[SCRIPT], auth=object())


# --- a call that runs out of time ---------------------------------------------------------------------------------


async def test_a_frozen_server_fails_the_call_in_time_is_reaped_and_restarts(tmp_path: Path) -> None:
    before = children()
    server = stdio(tmp_path / "log", call_timeout=1)
    frozen: set[int] = set()
    try:
        await server.list_tools()
        frozen = children() - before
        assert frozen
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        part = await _run(server, "add", {"a": 1, "b": 2})
        assert part.run_started_at is not None
        assert part.finished_at is not None
        took = part.finished_at - part.run_started_at  # the call (the turn also lists the tools again after it)
        assert part.state is ToolCallState.FAILED
        message = _message(part)
        assert "did not finish the call of add within 1 seconds" in message
        assert "its connection was closed" in message
        assert took < 1 + 5 + 3, took  # the call's bound, the probe's, and some slack
        # The frozen process is killed and reaped (SIGKILL works on a stopped process).
        await wait_for(lambda: not (frozen & children()), timeout=20)
        # The next call starts the server again, and works.
        part = await _run(server, "add", {"a": 1, "b": 2})
        assert part.state is ToolCallState.COMPLETED, _message(part)
        assert children() - before
        assert not (children() - before) & frozen
    finally:
        for pid in frozen & children():
            os.kill(pid, signal.SIGKILL)
        await server.aclose()


async def test_a_slow_call_fails_alone_and_the_connection_is_kept(tmp_path: Path) -> None:
    log = tmp_path / "log"
    before = children()
    server = stdio(log, call_timeout=1)
    try:
        await server.list_tools()
        process = children() - before
        part = await _run(server, "wait_forever")
        assert part.state is ToolCallState.FAILED
        message = _message(part)
        assert "did not finish the call of wait_forever within 1 seconds, so it was cancelled" in message
        assert "closed" not in message
        await wait_for(lambda: "cancelled" in log_lines(log), timeout=10)  # cancelled on the server
        assert server.connected
        assert children() - before == process  # the same process
        part = await _run(server, "add", {"a": 2, "b": 2})
        assert part.state is ToolCallState.COMPLETED
        assert children() - before == process
    finally:
        await server.aclose()


@pytest.mark.parametrize("era", ERAS)
async def test_the_deadline_pauses_while_the_person_is_asked(era: str) -> None:
    server = _asking(era, call_timeout=1.5)
    tool = "book" if era == ERAS[0] else "book_resolved"
    try:
        session = _session(server, call(tool, {"restaurant": "Chez Nous"}), "Booked.")
        turn = asyncio.ensure_future(session.send("book"))
        await wait_for(lambda: bool(session.pending_inputs), timeout=20)
        part = session.pending_inputs[0]
        await asyncio.sleep(3)  # the person takes twice the call's bound
        assert part.state is ToolCallState.AWAITING_INPUT
        session.respond(part.tool_call_id, "accept", {"date": "2026-12-24"})
        reply = await asyncio.wait_for(turn, 20)
        assert reply.status is MessageStatus.COMPLETED
        assert part.state is ToolCallState.COMPLETED, _message(part)
    finally:
        await server.aclose()


# --- an HTTP server that wants credentials ----------------------------------------------------------------------


#: The token the guarded server takes now (a test revokes it by changing it).
_TOKEN = {"now": b"Bearer sesame"}


@pytest.fixture
def guarded() -> Iterator[str]:
    """The test server over streamable HTTP, refusing a request without ``Authorization: Bearer sesame`` (401) and
    one with another token (403)."""
    from tests.mcp.servers.server import build

    app = build().streamable_http_app()
    _TOKEN["now"] = b"Bearer sesame"

    async def gate(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            given = headers.get(b"authorization")
            if given != _TOKEN["now"]:
                status = 401 if given is None else 403
                extra = [(b"www-authenticate", b'Bearer realm="test"')] if status == 401 else []
                await send({"type": "http.response.start", "status": status, "headers": extra})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    with serving(gate) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize(
    ("headers", "said"),
    [(None, "needs authentication (HTTP 401)"), ({"Authorization": "Bearer wrong-token"}, "refused access (HTTP 403)")],
)
async def test_a_refusal_says_credentials_are_needed_and_how(
    guarded: str, headers: dict[str, str] | None, said: str
) -> None:
    server = MCPServer.http(guarded, headers=headers, name="guarded", timeout=10)
    try:
        with pytest.raises(MCPServerError) as caught:
            await server.list_tools()
        message = str(caught.value)
        assert said in message
        assert "'guarded'" in message
        assert 'headers={"Authorization": "Bearer <token>"}' in message
        assert "auth=" in message
        assert "wrong-token" not in message
        assert "could not be reached" not in message
    finally:
        await server.aclose()
    good = MCPServer.http(guarded, headers={"Authorization": "Bearer sesame"}, timeout=10)
    try:
        assert "add" in {tool.name for tool in await good.list_tools()}
    finally:
        await good.aclose()


async def test_a_token_revoked_mid_session_fails_the_call_saying_so(guarded: str) -> None:
    server = MCPServer.http(
        guarded, headers={"Authorization": "Bearer sesame"}, name="guarded", timeout=10, trust_annotations=True
    )
    try:
        await server.list_tools()
        _TOKEN["now"] = b"Bearer another"  # the token the client has is no longer taken
        part = await _run(server, "add", {"a": 1, "b": 2})
        assert part.state is ToolCallState.FAILED
        message = _message(part)
        assert "refused access (HTTP 403)" in message, (message, part.outcome.error)  # type: ignore[union-attr]
        assert "sesame" not in message
    finally:
        await server.aclose()


# --- roots --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_roots_are_declared_only_when_given(era: str, tmp_path: Path) -> None:
    """Before: with no ``roots=`` the server was given the kernel's working directory, which a server such as the
    filesystem one takes in place of the directories it was started with."""
    default = _asking(era)
    given = _asking(era, roots=[tmp_path, "file:///srv/data"])
    none = _asking(era, roots=())
    try:
        part = await _run(default, "roots")
        assert part.state is ToolCallState.FAILED, _said(part)  # no roots capability declared: nothing to ask for
        part = await _run(given, "roots")
        assert part.state is ToolCallState.COMPLETED, _message(part)
        assert [root["uri"] for root in _said(part)] == [
            _uri(tmp_path),
            "file:///srv/data",
        ]
        part = await _run(none, "roots")
        assert part.state is ToolCallState.FAILED  # the same as not given
    finally:
        await asyncio.gather(default.aclose(), given.aclose(), none.aclose())


def test_bad_roots_are_refused() -> None:
    with pytest.raises(TypeError, match="list of paths"):
        MCPServer.stdio(sys.executable, [SCRIPT], roots="/data")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="file:// URI"):
        MCPServer.stdio(sys.executable, [SCRIPT], roots=["https://example.com/x"])


# --- a server's log messages ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_log_messages_reach_python_logging_and_the_card(era: str, caplog: pytest.LogCaptureFixture) -> None:
    server = _asking(era)
    caplog.set_level(logging.DEBUG, logger="ai_widgets.mcp.server")
    try:
        part = await _run(server, "chatty")
        assert part.state is ToolCallState.COMPLETED, _message(part)
        assert part.log_lines == ("looking at the [31mfiles", 'warning: disk: {"disk": "almost full"}')
        records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name.endswith("asking-server")]
        assert ("ai_widgets.mcp.server.asking-server", logging.INFO, "looking at the [31mfiles") in records
        assert (
            "ai_widgets.mcp.server.asking-server",
            logging.WARNING,
            'disk: {"disk": "almost full"}',
        ) in records
    finally:
        await server.aclose()
