"""CPU per ACP ``session/update`` through the updates mapper and the session's reply builder, against the SDK's own
parse of the same messages (the issue's goal: at most 2×).

One seeded stream of JSON-RPC notification lines, as an agent writes them: runs of thought chunks and of message
chunks (most of the stream), tool calls with a diff and their updates, a plan now and then.

- (0) the SDK's parse: ``json.loads`` of the line and ``SessionNotification.model_validate`` of its params, which
  the SDK does for every update before any client sees it (the floor: the transport pays it too);
- (a) the transport and the session: that parse, then ``UpdateMapper.map`` and ``ReplyBuilder.apply`` of each
  event on a live reply (observers told, doing nothing).

CPU of the process (``time.process_time``) over the whole stream, the fastest of the rounds.

Run: ``python benchmarks/bench_acp_updates.py [--quick]`` or ``python -m benchmarks --only bench_acp_updates``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from acp.schema import SessionNotification

from ai_widgets.integrations._acp_updates import UpdateMapper
from ai_widgets.messages import Message, MessageStatus, Role
from ai_widgets.session._reply import ReplyBuilder

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


def notification(update: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}})


def chunk(kind: str, text: str) -> str:
    return notification({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def stream_lines(count: int) -> list[str]:
    """``count`` notification lines in the runs agents send them in (the probes' logs): a run of thought chunks, a
    run of message chunks, now and then a call (announced, again with its diff, running, completed) or a plan."""
    rng = random.Random(0)
    lines: list[str] = []
    call = 0
    while len(lines) < count:
        lines += [chunk("agent_thought_chunk", rng.choice(WORDS) + " ") for _ in range(rng.randint(5, 20))]
        for _ in range(rng.randint(20, 100)):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) + " "
            lines.append(chunk("agent_message_chunk", text))
        if rng.random() < 0.5:
            call += 1
            call_id = f"toolu_{call}"
            path = f"/w/f{call}.py"
            start = {"toolCallId": call_id, "title": "Edit", "kind": "edit", "status": "pending"}
            lines.append(notification({"sessionUpdate": "tool_call", **start, "rawInput": {"path": path}}))
            diff = {"type": "diff", "path": path, "oldText": "x = 1\n" * 20, "newText": "x = 2\n" * 20}
            title = f"Edit f{call}.py"
            lines.append(
                notification({"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "content": [diff]})
            )
            progress = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
            lines.append(notification(progress))
            content = [{"type": "content", "content": {"type": "text", "text": "edited"}}]
            lines.append(notification({**progress, "status": "completed", "content": content}))
        if rng.random() < 0.1:
            entries = [{"content": f"step {i}", "status": "pending", "priority": "medium"} for i in range(5)]
            lines.append(notification({"sessionUpdate": "plan", "entries": entries}))
    return lines[:count]


def sdk_parse(lines: list[str]) -> None:
    for line in lines:
        SessionNotification.model_validate(json.loads(line)["params"])


def through_session(lines: list[str]) -> None:
    mapper = UpdateMapper()
    reply = Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS)
    builder = ReplyBuilder(reply, lambda change: None)
    mapper.begin_response()
    for line in lines:
        update = SessionNotification.model_validate(json.loads(line)["params"]).update
        for event in mapper.map(update):
            builder.apply(event)


def fastest(work: Callable[[list[str]], None], lines: list[str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        work(lines)
        best = min(best, time.process_time() - start)
    return best


def run(*, quick: bool = False) -> str:
    """Measures both paths and returns a markdown section."""
    count, repeats = (5_000, 3) if quick else (50_000, 5)
    lines = stream_lines(count)
    floor = fastest(sdk_parse, lines, repeats)
    ours = fastest(through_session, lines, repeats)
    ratio = ours / floor if floor else float("inf")
    return "\n".join(
        [
            f"## ACP agents: CPU per `session/update` ({count:,} updates)",
            "",
            "The SDK's parse of each line is the floor; the transport pays it too, then maps the update and applies "
            f"its events to the reply. `time.process_time`, fastest of {repeats}.",
            "",
            "| path | µs per update |",
            "|---|---:|",
            f"| (0) the SDK's parse (`SessionNotification.model_validate`) | {floor / count * 1e6:.1f} |",
            f"| (a) parse + `UpdateMapper` + `ReplyBuilder` | {ours / count * 1e6:.1f} |",
            "",
            f"(a) / (0): **{ratio:.2f}×** (goal: at most 2×).",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller stream")
    print(run(quick=parser.parse_args().quick))


if __name__ == "__main__":
    main()
