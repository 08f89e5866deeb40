"""An MCP server that asks the person for input (elicitation), for the tests. Run as a script it serves over stdio;
with ``--legacy`` it speaks protocol 2025-11-25 only: the SDK's server takes the era of the client's first request,
so a small relay in front of it refuses ``server/discover`` and a client falls back to the ``initialize`` handshake.

``roots`` says the client's roots (asked through a resolver), ``chatty`` logs a few messages while it runs.
``book`` asks with ``ctx.elicit`` (a standalone ``elicitation/create`` request: 2025-11-25 only) and
``book_resolved`` through a resolver (an input-required result on 2026-07-28, a request on 2025-11-25), both with a
flat form whose fields have defaults; ``sign_in`` asks the person to open a link (2025-11-25). What the server got
back is also written, one line an answer, to the file named by ``AIW_MCP_LOG`` when it is set (a stopped call's
answer is seen nowhere else). ``summarize`` asks the client's model for a one-line summary (sampling, through a
resolver) and says what came back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, ListRoots, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent, ToolAnnotations
from pydantic import BaseModel, Field


class Booking(BaseModel):
    date: str = Field(description="The day, as YYYY-MM-DD")
    seats: int = Field(default=2, ge=1, le=8, description="How many seats")
    window: bool = Field(default=True, description="A window table")


def _note(text: str) -> None:
    log = os.environ.get("AIW_MCP_LOG")
    if log:
        with Path(log).open("a", encoding="utf-8") as file:
            file.write(text + "\n")


def _ask_booking(restaurant: str) -> Elicit[Booking]:
    return Elicit(f"Book a table at {restaurant}: which day, and how many seats?", Booking)


def _booked(restaurant: str, answer: ElicitationResult[Booking]) -> str:
    _note(f"book {answer.action} {json.dumps(answer.data.model_dump() if answer.action == 'accept' else None)}")
    if answer.action == "accept":
        data = answer.data
        return f"booked {restaurant} on {data.date} for {data.seats} (window: {data.window})"
    return f"not booked: the person chose {answer.action}"


def _ask_summary(text: str) -> Sample:
    asked = TextContent(type="text", text=f"Summarise in one line: {text}")
    return Sample(
        [SamplingMessage(role="user", content=asked)],
        max_tokens=60,
        system_prompt="You write one-line summaries.",
        stop_sequences=["<END>"],
    )


def _ask_roots() -> ListRoots:
    return ListRoots()


def build() -> MCPServer:
    server = MCPServer("asking-server", log_level="WARNING")

    @server.tool()
    async def book(restaurant: str, ctx: Context) -> str:
        """Books a table, asking the person for the details."""
        answer = await ctx.elicit(f"Book a table at {restaurant}: which day, and how many seats?", Booking)
        return _booked(restaurant, answer)

    @server.tool()
    async def book_resolved(
        restaurant: str, answer: Annotated[ElicitationResult[Booking], Resolve(_ask_booking)]
    ) -> str:
        """Books a table, asking the person for the details (through a resolver)."""
        return _booked(restaurant, answer)

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        """Asks the person to sign in on a web page."""
        answer = await ctx.elicit_url("Sign in to Example to go on.", "https://example.com/sign-in?x=1", "sign-1")
        _note(f"sign_in {answer.action}")
        return f"sign-in: {answer.action}"

    @server.tool()
    async def roots(found: Annotated[ListRootsResult, Resolve(_ask_roots)]) -> str:
        """The client's roots (through a resolver: a roots/list request, or an input-required result)."""
        return json.dumps([{"uri": str(root.uri), "name": root.name} for root in found.roots])

    @server.tool()
    async def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(_ask_summary)]) -> str:
        """Summarises a text with the client's model (sampling)."""
        content = summary.content
        said = content.text if isinstance(content, TextContent) else repr(content)
        _note(f"summarize {summary.model} {summary.stop_reason} {said}")
        return f"summary: {said}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, title="Chatty"))
    async def chatty(ctx: Context, linger: float = 0) -> str:
        """Logs a few messages while it runs (notifications/message), then waits ``linger`` seconds."""
        await ctx.debug("a detail nobody asked for")
        await ctx.info("looking at\nthe \x1b[31mfiles")
        await ctx.warning({"disk": "almost full"}, logger_name="disk")
        await anyio.sleep(linger)
        return "chatted"

    return server


def relay_as_legacy() -> None:
    """Runs the server as a child and relays stdio both ways, answering ``server/discover`` "method not found"."""
    child = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None
    out = child.stdout

    def back() -> None:
        for line in out:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    threading.Thread(target=back, daemon=True).start()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if isinstance(message, dict) and message.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            sys.stdout.buffer.write(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n"
            )
            sys.stdout.buffer.flush()
            continue
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    child.wait(10)


if __name__ == "__main__":
    if "--legacy" in sys.argv[1:]:
        relay_as_legacy()
    else:
        build().run()
