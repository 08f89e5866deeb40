"""The session's own tools offered to one ACP agent session (:class:`ToolOffer`): the kernel's MCP server for it (with
its own secret token), how ``session/new`` tells the agent of it (streamable HTTP where the agent takes it, else the
stdio relay), the names the agent gives those tools, and each call the agent makes handed to the chat as a local call
(its card, its approval, the kernel)."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, InitializeResponse, McpServerStdio

from ai_widgets.integrations._acp_bridge import TOKEN_ENV, URL_ENV
from ai_widgets.integrations._acp_session import AgentSession
from ai_widgets.integrations._acp_tools_server import ACPToolsServer, OfferedToolCall
from ai_widgets.messages import ToolCallPart
from ai_widgets.tools import ToolDefinition, ToolOutcome

__all__ = ["BRIDGE_MODULE", "CANCELLED_CALL", "SERVER_NAME", "RunCall", "ToolOffer"]

#: The MCP server's name as the agent sees it: Claude Code names its tools ``mcp__ai_widgets__<tool>``, Gemini CLI
#: ``mcp_ai_widgets_<tool>``.
SERVER_NAME = "ai_widgets"
#: The stdio relay an agent without MCP over HTTP runs (``python -m``): stdio MCP to the loopback server.
BRIDGE_MODULE = "ai_widgets.integrations._acp_bridge"
#: Where this ``ai_widgets`` is imported from: the relay runs the same one as the kernel (the agent may not pass it
#: the kernel's ``PYTHONPATH``).
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
#: What the agent is told of a call the chat did not run because the turn ended first (Stop, a limit, an error).
CANCELLED_CALL = "The call was cancelled: the chat's turn ended before it ran."

#: Hands a call to the chat as a local call: ``(call_id, tool name, JSON arguments)`` to the ended call, or ``None``
#: when the turn ended first (``ACPTransport.call_session_tool`` with the agent's session id bound).
RunCall = Callable[[str, str, str], Awaitable[ToolCallPart | None]]


class ToolOffer:
    """The session's tools offered to one agent session, over an :class:`ACPToolsServer` of its own.

    Args:
        tools: The tools to offer now (a request's ``tools``); :meth:`refresh` replaces them.
        name: The server's name as the agent sees it.

    Each call the agent makes runs as a local call of the chat under the id of the card the agent announced for it
    (:meth:`UpdateMapper.claim <ai_widgets.integrations._acp_updates.UpdateMapper.claim>`), so one card shows it.
    """

    def __init__(self, tools: Sequence[ToolDefinition], *, name: str = SERVER_NAME) -> None:
        self.name = name
        self._tools = list(tools)
        self._server = ACPToolsServer(lambda: self._tools, self._call, name=name)
        self._session: AgentSession | None = None
        self._run: RunCall | None = None

    @property
    def running(self) -> bool:
        """Whether its server serves."""
        return self._server.running

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered now."""
        return [tool.name for tool in self._tools]

    async def start(self) -> None:
        """Starts the server (on loopback, on a thread of its own); calls then run on this event loop.

        Raises:
            RuntimeError: It could not start.
        """
        await self._server.start()

    def bind(self, session: AgentSession, run: RunCall) -> None:
        """Names the agent session whose calls these are (known once ``session/new`` answered) and how the chat
        runs them."""
        self._session = session
        self._run = run

    def servers(self, init: InitializeResponse | None) -> list[Any]:
        """The MCP server as ``session/new`` and ``session/load`` offer it: over HTTP with the bearer header where the
        agent advertises ``mcpCapabilities.http``, else the stdio relay (always allowed), with the URL and the token
        in its environment."""
        capabilities = init.agent_capabilities if init is not None else None
        mcp = capabilities.mcp_capabilities if capabilities is not None else None
        if mcp is not None and mcp.http:
            headers = [HttpHeader(name=k, value=v) for k, v in self._server.headers().items()]
            return [HttpMcpServer(type="http", name=self.name, url=self._server.url, headers=headers)]
        path = os.pathsep.join(p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")) if p)
        env = [
            EnvVariable(name=URL_ENV, value=self._server.url),
            EnvVariable(name=TOKEN_ENV, value=self._token),
            EnvVariable(name="PYTHONPATH", value=path),
        ]
        return [McpServerStdio(name=self.name, command=sys.executable, args=["-m", BRIDGE_MODULE], env=env)]

    def local_name(self, agent_name: str) -> str | None:
        """The offered tool an agent's name for a call stands for: Claude Code's ``mcp__<server>__<tool>``, Gemini
        CLI's ``mcp_<server>_<tool>``; ``None`` for any other call (a plain name may be one of the agent's own
        tools)."""
        for tool in self._tools:
            if agent_name in (f"mcp__{self.name}__{tool.name}", f"mcp_{self.name}_{tool.name}"):
                return tool.name
        return None

    async def refresh(self, tools: Sequence[ToolDefinition]) -> None:
        """Offers ``tools`` from now on (the request's), telling connected agents when the list changed."""
        self._tools = list(tools)
        if self._server.running:
            await self._server.refresh()

    def redact(self, text: str) -> str:
        """``text`` with the token left out (an agent's error may repeat what ``session/new`` sent it)."""
        return text.replace(self._token, "[token]")

    async def aclose(self) -> None:
        """Stops the server: calls in flight are cancelled (the agent gets an error), the port freed."""
        await self._server.aclose()

    def __repr__(self) -> str:
        return f"ToolOffer({self.name!r}, {self.tool_names!r}, {self._server!r})"

    @property
    def _token(self) -> str:
        return self._server.headers()["Authorization"].removeprefix("Bearer ")

    async def _call(self, call: OfferedToolCall) -> ToolOutcome | ToolCallPart:
        """One call from the agent, run by the chat as a local call (on the session's loop)."""
        session, run = self._session, self._run
        if session is None or run is None or not session.prompting:
            return ToolOutcome.failure(CANCELLED_CALL)  # no turn of the agent's is running: nobody would see it
        call_id = session.mapper.claim(call.tool_use_id, call.name)
        if call_id is None:
            call_id = f"acp_mcp_{uuid.uuid4().hex[:16]}"
        part = await run(call_id, call.name, json.dumps(call.arguments, ensure_ascii=False))
        return ToolOutcome.failure(CANCELLED_CALL) if part is None else part
