"""What the MCP tests share that is not a fixture: our servers' scripts, starting them, a scripted call, their logs,
and serving an ASGI app on a loopback port."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_widgets import ChatSession
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import ToolCallPart, ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall
from tests.helpers import wait_for

SCRIPT = str(Path(__file__).parent / "servers" / "server.py")
ASKING = str(Path(__file__).parent / "servers" / "asking_server.py")
ERAS = ["2025-11-25", "2026-07-28"]  # the protocol versions the asking server speaks: before and after tasks


def stdio(log: Path, **kwargs: Any) -> MCPServer:
    """The tests' own server, vouched for (``trust_annotations=True``) unless a test says otherwise: most tests are
    about what its tools do, and the default (every call asks) has tests of its own."""
    env = {"AIW_MCP_LOG": str(log), **kwargs.pop("env", {})}
    kwargs.setdefault("trust_annotations", True)
    return MCPServer.stdio(sys.executable, [SCRIPT], env=env, **kwargs)


def call(name: str, arguments: dict[str, Any] | None = None) -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments or {})])


def log_lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@contextlib.contextmanager
def serving(app: Any) -> Iterator[int]:
    """Serves the ASGI ``app`` on a free loopback port (yielded), in a thread, until the block ends."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the HTTP server did not start"
        assert thread.is_alive(), "the HTTP server stopped"
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass
class Asking:
    server: MCPServer
    log: Path
    book: str  # the tool that asks with a form, in this era

    def lines(self) -> list[str]:
        return log_lines(self.log)


@contextlib.asynccontextmanager
async def asking_server(era: str, log: Path) -> AsyncIterator[Asking]:
    """The asking server over stdio, speaking protocol ``era``, writing what it got back to ``log``."""
    legacy = era == "2025-11-25"
    server = MCPServer.stdio(sys.executable, [ASKING, *(["--legacy"] if legacy else [])], env={"AIW_MCP_LOG": str(log)})
    try:
        yield Asking(server, log, "book" if legacy else "book_resolved")
    finally:
        await server.aclose()


async def asked(session: ChatSession) -> ToolCallPart:
    """The first call of ``session`` that waits for the person's answer to a server's question, once there is one."""
    await wait_for(lambda: bool(session.pending_inputs), timeout=20)
    part = session.pending_inputs[0]
    assert part.state is ToolCallState.AWAITING_INPUT
    assert part.input_request is not None
    return part
