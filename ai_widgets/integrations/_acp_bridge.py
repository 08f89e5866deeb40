"""The stdio relay for an ACP agent that takes MCP servers over stdio only: run as ``python -m
ai_widgets.integrations._acp_bridge``, it relays MCP messages between its stdin and stdout and the kernel's tool server
on loopback (streamable HTTP), whose URL and bearer token it reads from its environment (never its arguments, which
other users of the machine can read)."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

__all__ = ["TOKEN_ENV", "URL_ENV", "main", "relay"]

#: The variables the relay reads: the server's URL, and its token.
URL_ENV = "AI_WIDGETS_ACP_MCP_URL"
TOKEN_ENV = "AI_WIDGETS_ACP_MCP_TOKEN"
#: Seconds to connect to (and send to) the loopback server; a call's answer may take as long as the person decides.
CONNECT_TIMEOUT = 30.0


async def pump(source: Any, sink: Any, name: str) -> None:
    """Moves messages from ``source`` to ``sink`` until ``source`` ends; a message that cannot be read is told on
    stderr (stdout is the agent's MCP channel) and skipped."""
    async with sink:
        async for message in source:
            if isinstance(message, Exception):
                print(f"ai_widgets MCP relay: {name}: {type(message).__name__}: {message}"[:500], file=sys.stderr)
                continue
            await sink.send(message)


async def relay(url: str, token: str) -> None:
    """Relays MCP between this process's stdin/stdout and the server at ``url``, until stdin ends."""
    timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=None)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (from_server, to_server),
        stdio_server() as (from_agent, to_agent),
        anyio.create_task_group() as group,
    ):

        async def agent_side() -> None:
            await pump(from_agent, to_server, "from the agent")
            group.cancel_scope.cancel()  # the agent closed stdin: the relay is done

        group.start_soon(agent_side)
        group.start_soon(pump, from_server, to_agent, "from the server")


def main() -> int:
    """The relay's entry point: 2 when its environment lacks the URL or the token."""
    url, token = os.environ.get(URL_ENV), os.environ.get(TOKEN_ENV)
    if not url or not token:
        print(f"ai_widgets MCP relay: {URL_ENV} and {TOKEN_ENV} must be set", file=sys.stderr)
        return 2
    anyio.run(relay, url, token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
