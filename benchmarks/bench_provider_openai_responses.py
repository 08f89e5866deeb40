"""CPU per streamed event of an OpenAI Responses stream: ai_widgets' transport + session against pydantic-ai.

A loopback HTTP server (its own process) replays a long Responses stream, one event per HTTP chunk,
built from the shapes of the recorded fixture ``openai_responses_reasoning_text_function_call.sse``: ~5,000 text
deltas, then a function call with ~1,000 argument deltas. Four consumers read it through the official SDK:

(0) the HTTP body alone (``responses.with_streaming_response.create(stream=True)``, iterating the bytes): the floor
    under the transport, which reads this body and decodes the SSE itself;
(a) the SDK's typed stream (``client.responses.create(stream=True)``, iterating its event models): what pydantic-ai
    and most wrappers sit on;
(b) ``ChatSession.send`` over ``OpenAIResponsesTransport`` (``execute_tools=False``, so nothing runs after);
(c) pydantic-ai's ``OpenAIResponsesModel`` through ``pydantic_ai.direct.model_request_stream``.

We report the marginal CPU per event, ``(T(big) - T(small)) / (events(big) - events(small))`` with
``time.process_time`` (the server runs in another process, so its work is not counted), median of several
runs; every run gets a fresh event loop and client. Rounds run outer and cases inner.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import random
import socket
import statistics
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "providers"
    / "data"
    / "openai_responses_reasoning_text_function_call.sse"
)
SMALL = 10
TOOL_NAME = "write_report"


# --- the stream ---------------------------------------------------------------------------------------------------


def _pieces(rng: random.Random, n: int) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz     ,.é’"
    return ["".join(rng.choices(alphabet, k=rng.randint(4, 8))) for _ in range(n)]


def _argument_pieces(rng: random.Random, n: int) -> list[str]:
    """About ``n`` deltas of one JSON argument (a long string value), split anywhere, escapes included."""
    text = json.dumps({"title": "Report", "body": " ".join(_pieces(rng, n)) + '\n"quoted"'}, ensure_ascii=False)
    out, i = [], 0
    while i < len(text):
        size = rng.randint(4, 8) if len(out) < n - 1 else len(text)
        out.append(text[i : i + size])
        i += size
    return out


def build_stream(text_deltas: int, argument_deltas: int) -> tuple[list[bytes], int]:
    """The stream's SSE frames (one per event) and its number of events."""
    recorded = [
        json.loads(line[6:]) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.startswith("data: ")
    ]
    by_type: dict[str, dict[str, Any]] = {}
    for event in recorded:
        by_type.setdefault(event["type"], event)
    added = [e for e in recorded if e["type"] == "response.output_item.added"]
    message_added, call_added = added[1], added[2]
    rng = random.Random(0)
    texts, arguments = _pieces(rng, text_deltas), _argument_pieces(rng, argument_deltas)

    def like(kind: str, **changes: Any) -> dict[str, Any]:
        return {**by_type[kind], **changes}

    message_item = message_added["item"]
    call_item = {**call_added["item"], "name": TOOL_NAME}
    full_text, full_arguments = "".join(texts), "".join(arguments)
    events = [
        by_type["response.created"],
        by_type["response.in_progress"],
        message_added,
        by_type["response.content_part.added"],
        *(like("response.output_text.delta", delta=t) for t in texts),
        like("response.output_text.done", text=full_text),
        like(
            "response.output_item.done",
            item={
                **message_item,
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": full_text}],
            },
        ),
        {**call_added, "item": call_item},
        *(like("response.function_call_arguments.delta", delta=a) for a in arguments),
        like("response.function_call_arguments.done", arguments=full_arguments),
        {
            "type": "response.output_item.done",
            "item": {**call_item, "status": "completed", "arguments": full_arguments},
            "output_index": 2,
        },
        by_type["response.completed"],
    ]
    frames = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        frames.append(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
    return frames, len(events)


def _serve(streams: dict[str, list[bytes]], ports: Any) -> None:
    """The replay server's process: serves ``streams[<path's first part>]`` chunked, one frame per chunk."""

    class Handle(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            # Small writes without Nagle's delay, as a streaming server sends them.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            frames = streams[self.path.split("/")[1]]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for frame in frames:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
    ports.put(server.server_address[1])
    server.serve_forever()


@contextmanager
def replay_server(streams: dict[str, list[bytes]]) -> Iterator[str]:
    """Runs the replay server in its own process (so its work is not counted here); yields the base URL."""
    context = multiprocessing.get_context("spawn")
    ports = context.Queue()
    process = context.Process(target=_serve, args=(streams, ports), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{ports.get(timeout=60)}"
    finally:
        process.terminate()
        process.join()


# --- the consumers ------------------------------------------------------------------------------------------------


def _client(base_url: str) -> Any:
    import openai

    return openai.AsyncOpenAI(api_key="sk-" + "bench-not-a-key", base_url=base_url, max_retries=0)


async def _bytes(base_url: str) -> int:
    client = _client(base_url)
    count = 0
    async with client.responses.with_streaming_response.create(model="gpt-5.5", input="hi", stream=True) as response:
        async for _ in response.iter_bytes():
            count += 1
    await client.close()
    return count


async def _sdk(base_url: str) -> int:
    client = _client(base_url)
    count = 0
    stream = await client.responses.create(model="gpt-5.5", input="hi", stream=True)
    async for _ in stream:
        count += 1
    await client.close()
    return count


async def _ai_widgets(base_url: str) -> int:
    from ai_widgets import ChatSession, SessionOptions
    from ai_widgets.transports import OpenAIResponsesTransport

    client = _client(base_url)
    session = ChatSession(
        OpenAIResponsesTransport("gpt-5.5", client=client), options=SessionOptions(execute_tools=False)
    )
    reply = await session.send("hi")
    await client.close()
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    return len(reply.text) + len(call.arguments)


async def _pydantic_ai(base_url: str) -> int:
    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelRequest, PartDeltaEvent, PartStartEvent, TextPart, ToolCallPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    client = _client(base_url)
    model = OpenAIResponsesModel("gpt-5.5", provider=OpenAIProvider(openai_client=client))
    parameters = ModelRequestParameters(function_tools=[ToolDefinition(name=TOOL_NAME)])
    chars = 0
    async with model_request_stream(
        model, [ModelRequest.user_text_prompt("hi")], model_request_parameters=parameters
    ) as stream:
        async for event in stream:
            if isinstance(event, PartDeltaEvent):
                delta = event.delta
                chars += len(getattr(delta, "content_delta", None) or getattr(delta, "args_delta", None) or "")
            elif isinstance(event, PartStartEvent) and isinstance(event.part, TextPart | ToolCallPart):
                content = event.part.content if isinstance(event.part, TextPart) else event.part.args
                chars += len(content or "") if isinstance(content, str) else 0
    await client.close()
    return chars


CASES: list[tuple[str, Callable[[str], Coroutine[Any, Any, int]]]] = [
    ("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    ("(a) openai SDK typed stream: `responses.create(stream=True)` events", _sdk),
    ("(b) ai_widgets `ChatSession.send` + `OpenAIResponsesTransport`", _ai_widgets),
    ("(c) pydantic-ai `OpenAIResponsesModel` via `model_request_stream`", _pydantic_ai),
]


def _cpu(make: Callable[[], Coroutine[Any, Any, int]]) -> tuple[float, int]:
    gc.collect()
    started = time.process_time()
    out = asyncio.run(make())
    return time.process_time() - started, out


def measure(text_deltas: int, argument_deltas: int, repeats: int) -> tuple[list[tuple[str, float, float]], int]:
    """(case, marginal µs per event, fixed ms per run) for every case, and the big stream's event count."""
    big, big_events = build_stream(text_deltas, argument_deltas)
    small, small_events = build_stream(SMALL, SMALL)
    with replay_server({"big": big, "small": small}) as url:
        urls = {"big": f"{url}/big/v1", "small": f"{url}/small/v1"}
        for _, consume in CASES:  # warm up imports and caches
            _cpu(lambda consume=consume: consume(urls["small"]))
            _cpu(lambda consume=consume: consume(urls["big"]))
        times: dict[tuple[int, str], list[float]] = {}
        for _ in range(repeats):
            for j, (_, consume) in enumerate(CASES):
                for size in ("big", "small"):
                    seconds, _ = _cpu(lambda consume=consume, size=size: consume(urls[size]))
                    times.setdefault((j, size), []).append(seconds)
    rows = []
    for j, (name, _) in enumerate(CASES):
        t_big, t_small = statistics.median(times[(j, "big")]), statistics.median(times[(j, "small")])
        rows.append((name, (t_big - t_small) / (big_events - small_events) * 1e6, t_small * 1e3))
    return rows, big_events


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 9)
    rows, events = measure(text_deltas, argument_deltas, repeats)
    floor, sdk, ours, theirs = (us for _, us, _ in rows)
    lines = [
        f"## OpenAI Responses stream: CPU per event, transport + session ({events:,} events)",
        "",
        f"A loopback server (its own process) replays {text_deltas:,} text deltas and a function call with "
        f"{argument_deltas:,} argument deltas (one event per HTTP chunk). Marginal CPU, "
        f"(T(big) − T(small)) / events, `time.process_time`, median of {repeats}; fresh loop and client per run.",
        "",
        "| consumer | µs / event | above the HTTP floor (µs) | vs pydantic-ai | fixed ms / run |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {name} | {us:.2f} | {us - floor:.2f} | {us / theirs:.2f} | {fixed:.2f} |" for name, us, fixed in rows]
    lines += [
        "",
        f"ai_widgets / pydantic-ai, whole path: **{ours / theirs:.2f}**. "
        f"Above reading the HTTP body: ai_widgets {ours - floor:.2f} µs/event, pydantic-ai {theirs - floor:.2f} "
        f"µs/event (ratio {(ours - floor) / max(theirs - floor, 1e-9):.2f}); the SDK's typed stream alone costs "
        f"{sdk - floor:.2f} µs/event above the body, a pydantic model per event.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
