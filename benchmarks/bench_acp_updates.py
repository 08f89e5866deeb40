"""CPU per ACP ``session/update`` through the transport and the session, against the SDK's own parse of the same
messages (the issue's goal: at most 2×).

Seeded streams of JSON-RPC notification lines, as bytes, as an agent writes them to stdout:

- *runs*: runs of thought chunks and of message chunks (most of the stream), tool calls with a diff and their
  updates, a plan now and then (the probes' logs);
- *alternating*: a thought chunk, then a message chunk, and so on (each switch starts a new part of the reply);
- *calls*: tool calls only (announced, again with their diff, running, completed).

- (0) the SDK's parse: ``json.loads`` of each line and ``SessionNotification.model_validate`` of its params (the
  floor: every path pays it);
- (a) the whole path in the kernel: each line parsed as the wire parses it (``json.loads``, checked to be JSON-RPC),
  handed by ``InlineUpdates`` (the message transport in front of the wire) to the client's ``session_update`` after
  ``SessionNotification.model_validate``, the ``UpdateMapper``, the queue to ``ACPTransport.stream``, and
  ``ChatSession``'s turn applying each event to the reply (``ReplyBuilder``), its observers told. The SDK's
  ``ClientSideConnection`` carries everything else (initialize, the session, the prompt and its answer). The agent's
  side is in the same process: an in-memory message transport answers ``initialize``, ``session/new`` and
  ``session/prompt`` (with the stream's lines, then the prompt's answer). The turn's setup is a few requests, noise
  against the stream.
- (b) the alternative: (a) with the SDK's own dispatch of each update (a task per message, its tracing spans, its
  router's validation), as a client on the SDK's ``spawn_agent_process`` gets. Path (a) is ``ACPTransport``'s: it
  reads through the project's wire (``AgentWire``) with ``InlineUpdates`` in front.

CPU of the process (``time.process_time``), the fastest of the rounds.

Run: ``python benchmarks/bench_acp_updates.py [--quick]`` or ``python -m benchmarks --only bench_acp_updates``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from acp import PROTOCOL_VERSION
from acp.client.connection import ClientSideConnection
from acp.schema import SessionNotification

from ai_widgets import ChatSession, MessageStatus
from ai_widgets.integrations._acp_client import ACPClient
from ai_widgets.integrations._acp_inline_updates import InlineUpdates
from ai_widgets.integrations._acp_transport import AgentLink
from ai_widgets.integrations._acp_wire import READ_AHEAD, is_json_rpc
from ai_widgets.integrations.acp import ACPTransport

WORDS = [
    "the",
    "data",
    "frame",
    "has",
    "rows",
    "and",
    "columns",
    "a",
    "plot",
    "of",
    "sales",
    "by",
    "region",
    "shows",
    "a",
    "steady",
    "rise",
]

SESSION_ID = "s1"


def notification(update: dict[str, Any]) -> bytes:
    params = {"sessionId": SESSION_ID, "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


def chunk(kind: str, text: str) -> bytes:
    return notification({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def call_lines(call: int) -> list[bytes]:
    """One edit as Claude Code sends it: announced, again with its diff, running, completed."""
    call_id = f"toolu_{call}"
    path = f"/w/f{call}.py"
    start = {"toolCallId": call_id, "title": "Edit", "kind": "edit", "status": "pending"}
    diff = {"type": "diff", "path": path, "oldText": "x = 1\n" * 20, "newText": "x = 2\n" * 20}
    progress = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
    content = [{"type": "content", "content": {"type": "text", "text": "edited"}}]
    return [
        notification({"sessionUpdate": "tool_call", **start, "rawInput": {"path": path}}),
        notification(
            {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": f"Edit f{call}.py", "content": [diff]}
        ),
        notification(progress),
        notification({**progress, "status": "completed", "content": content}),
    ]


def runs(count: int) -> list[bytes]:
    """``count`` lines in the runs agents send them in: a run of thought chunks, a run of message chunks, now and
    then a call or a plan."""
    rng = random.Random(0)
    lines: list[bytes] = []
    call = 0
    while len(lines) < count:
        lines += [chunk("agent_thought_chunk", rng.choice(WORDS) + " ") for _ in range(rng.randint(5, 20))]
        for _ in range(rng.randint(20, 100)):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + " "
            lines.append(chunk("agent_message_chunk", text))
        if rng.random() < 0.5:
            call += 1
            lines += call_lines(call)
        if rng.random() < 0.1:
            entries = [{"content": f"step {i}", "status": "pending", "priority": "medium"} for i in range(5)]
            lines.append(notification({"sessionUpdate": "plan", "entries": entries}))
    return lines[:count]


def alternating(count: int) -> list[bytes]:
    """``count`` lines that switch between thought and text at every chunk."""
    rng = random.Random(1)
    kinds = ("agent_thought_chunk", "agent_message_chunk")
    return [chunk(kinds[i % 2], rng.choice(WORDS) + " ") for i in range(count)]


def calls(count: int) -> list[bytes]:
    """``count`` lines of tool calls only."""
    lines: list[bytes] = []
    call = 0
    while len(lines) < count:
        call += 1
        lines += call_lines(call)
    return lines[:count]


STREAMS: dict[str, Callable[[int], list[bytes]]] = {
    "runs of thought and text, calls, plans": runs,
    "thought and text alternating chunk by chunk": alternating,
    "tool calls with diffs": calls,
}


# --- (0) the SDK's parse ----------------------------------------------------------------------------------------------


def sdk_parse(lines: list[bytes]) -> None:
    for line in lines:
        SessionNotification.model_validate(json.loads(line)["params"])


# --- (a) the transport and the session --------------------------------------------------------------------------------


class ReplayingAgent:
    """The agent's end of an in-memory message transport for the SDK's ``ClientSideConnection``: it answers
    ``initialize`` and ``session/new``, and a prompt with its lines (bytes, parsed as the wire parses them, a read
    ahead of at most ``READ_AHEAD`` messages between yields) and then the prompt's answer."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self._inbox: deque[bytes | dict[str, Any]] = deque()
        self._arrived = asyncio.Event()
        self._taken = 0

    async def send(self, message: dict[str, Any]) -> None:
        match message.get("method"):
            case "initialize":
                self._answer(message, {"protocolVersion": PROTOCOL_VERSION, "agentCapabilities": {}})
            case "session/new":
                self._answer(message, {"sessionId": SESSION_ID})
            case "session/prompt":
                self._inbox.extend(self._lines)
                self._answer(message, {"stopReason": "end_turn"})

    def _answer(self, message: dict[str, Any], result: dict[str, Any]) -> None:
        self._inbox.append({"jsonrpc": "2.0", "id": message["id"], "result": result})
        self._arrived.set()

    async def receive(self) -> dict[str, Any] | None:
        while not self._inbox:
            self._arrived.clear()
            await self._arrived.wait()
        self._taken += 1
        if self._taken % READ_AHEAD == 0:
            await asyncio.sleep(0)  # the wire's reader waits for room every so many messages
        item = self._inbox.popleft()
        if isinstance(item, dict):
            return item
        message = json.loads(item)
        if not is_json_rpc(message):
            raise ValueError("not a JSON-RPC message")
        return message  # type: ignore[no-any-return]

    async def close(self) -> None:
        self._arrived.set()


def in_process(lines: list[bytes], *, inline: bool) -> Callable[..., contextlib.AbstractAsyncContextManager[AgentLink]]:
    """The transport's ``spawn`` seam, connecting the SDK's client side to a :class:`ReplayingAgent`, through
    :class:`InlineUpdates` (as the project's wire is connected) when ``inline``."""

    @contextlib.asynccontextmanager
    async def spawn(
        client: ACPClient, command: str, args: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> AsyncIterator[AgentLink]:
        agent = ReplayingAgent(lines)
        connection = ClientSideConnection(
            client, InlineUpdates(agent, client, SessionNotification.model_validate) if inline else agent
        )
        try:
            yield AgentLink(connection, lambda: None, lambda: "", lambda: None)
        finally:
            await connection.close()

    return spawn


async def one_turn(lines: list[bytes], *, inline: bool = True) -> float:
    """The CPU of one chat turn that streams ``lines`` (the agent started and its session opened first, unmeasured
    but for the prompt's own few messages)."""
    transport = ACPTransport("in-process-agent")
    transport.spawn = in_process(lines, inline=inline)
    session = ChatSession(transport)
    try:
        start = time.process_time()
        reply = await session.send("go")
        took = time.process_time() - start
    finally:
        await transport.aclose()
    if reply.status is not MessageStatus.COMPLETED:
        raise RuntimeError(f"the turn did not complete: {reply.error}")
    return took


def through_session(lines: list[bytes], *, inline: bool = True) -> float:
    return asyncio.run(one_turn(lines, inline=inline))


def fastest_parse(lines: list[bytes], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        sdk_parse(lines)
        best = min(best, time.process_time() - start)
    return best


def run(*, quick: bool = False) -> str:
    """Measures both paths on each stream and returns a markdown section."""
    count, repeats = (5_000, 3) if quick else (50_000, 5)
    rows = []
    for name, make in STREAMS.items():
        lines = make(count)
        floor = fastest_parse(lines, repeats)
        ours = min(through_session(lines) for _ in range(repeats))
        sdk = min(through_session(lines, inline=False) for _ in range(repeats))
        rows.append(
            f"| {name} | {floor / count * 1e6:.1f} | {ours / count * 1e6:.1f} | {sdk / count * 1e6:.1f} "
            f"| **{ours / floor:.2f}×** | {sdk / floor:.2f}× |"
        )
    return "\n".join(
        [
            f"## ACP agents: CPU per `session/update` ({count:,} updates a stream)",
            "",
            "(0) the SDK's parse of each line (`json.loads` + `SessionNotification.model_validate`), the floor; "
            "(a) the line through the wire's parse, `InlineUpdates` to the client (the SDK's model), the "
            "`UpdateMapper`, `ACPTransport.stream` and `ChatSession`'s turn; (b) the same with the SDK's own "
            "dispatch of each update (a task per message, its tracing spans, its router), as a client on the SDK's own "
            f"spawn gets it. `time.process_time`, fastest of {repeats}. Goal: (a) / (0) at most 2×.",
            "",
            "| stream | (0) µs | (a) µs | (b) µs | (a) / (0) | (b) / (0) |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller stream")
    print(run(quick=parser.parse_args().quick))


if __name__ == "__main__":
    main()
