"""CPU per streamed event through ``AnthropicTransport`` (+ the session), against pydantic-ai's ``AnthropicModel``.

A loopback HTTP server replays a long Messages API stream in Anthropic's wire format (``event:`` + ``data:``, one
SSE event per HTTP chunk): ``message_start``, a text block of ~5,000 ``text_delta`` events, a ``tool_use`` block
with ~1,000 ``input_json_delta`` events, ``message_delta`` and ``message_stop``. Every consumer reads it through
the official ``anthropic`` SDK on the same machine in the same run:

- (0) the HTTP body alone: ``messages.with_streaming_response.create(stream=True)``, iterating the bytes (the floor
  under the transport, which reads this body and decodes the SSE itself);
- (a) the SDK's typed stream: ``messages.create(stream=True)``, iterating its event models (what pydantic-ai and
  most wrappers sit on);
- (b) ``AnthropicTransport.stream``: the body plus SSE decoding, JSON, and the mapping to ai_widgets events;
- (c) ``ChatSession.send`` on that transport (``execute_tools=False``): the events applied to the reply message,
  arguments parsed on every delta;
- (d) pydantic-ai's ``AnthropicModel.request_stream``, iterating its part events (same tool definition).

Marginal CPU of the consuming thread (``time.thread_time``, so the server thread is not counted), measured inside
the run around the request and its stream: ``(T(big) - T(small)) / (events(big) - events(small))``, so a request's
fixed cost cancels out. Fresh event loop and client per run; rounds outer, cases inner, the fastest of the rounds.

The server writes the whole body at once (each event still its own HTTP chunk), so every consumer reads the same
pieces. Written event by event ("paced", the second table), how many events one socket read brings depends on how
the server's and the reader's threads alternate: the floor then varied from 84 to 151 ms for the same 5,872 events
in one run, which swamps the differences measured here. The paced table is kept to show the cost of a wake-up per
event, which every consumer pays alike.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

from tests.providers.loopback import Request, Response, loopback

MODEL = "claude-bench"
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}


def _pieces(rng: random.Random, n: int) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz     ,."
    return ["".join(rng.choices(alphabet, k=rng.randint(4, 8))) for _ in range(n)]


def stream_events(text_deltas: int, argument_deltas: int) -> list[bytes]:
    """A Messages API stream: a text block, then one tool call whose input arrives in ``argument_deltas`` pieces."""
    rng = random.Random(0)

    def event(data: dict[str, Any]) -> bytes:
        return f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    def delta(index: int, value: dict[str, Any]) -> bytes:
        return event({"type": "content_block_delta", "index": index, "delta": value})

    usage = {"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": MODEL, "content": []}
    out = [event({"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}})]
    out.append(event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    out += [delta(0, {"type": "text_delta", "text": piece}) for piece in _pieces(rng, text_deltas)]
    out.append(event({"type": "content_block_stop", "index": 0}))
    call = {"type": "tool_use", "id": "toolu_bench", "name": "write_file", "input": {}}
    out.append(event({"type": "content_block_start", "index": 1, "content_block": call}))
    arguments = json.dumps({"path": "notes.txt", "content": "".join(_pieces(rng, argument_deltas))})
    size = -(-len(arguments) // argument_deltas)
    out += [
        delta(1, {"type": "input_json_delta", "partial_json": arguments[start : start + size]})
        for start in range(0, len(arguments), size)
    ]
    out.append(event({"type": "content_block_stop", "index": 1}))
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(event({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 2000}}))
    out.append(event({"type": "message_stop"}))
    return out


def _client(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(base_url=url, api_key="bench", max_retries=0)


BODY = {"model": MODEL, "max_tokens": 4096, "messages": [{"role": "user", "content": "go"}]}


async def _bytes(url: str) -> tuple[float, int]:
    client = _client(url)
    started = time.thread_time()
    count = 0
    async with client.messages.with_streaming_response.create(**BODY, stream=True) as response:
        async for _ in response.iter_bytes():
            count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


async def _sdk(url: str) -> tuple[float, int]:
    client = _client(url)
    started = time.thread_time()
    count = 0
    stream = await client.messages.create(**BODY, stream=True)
    async for _ in stream:
        count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


def _definition() -> Any:
    from ai_widgets import ToolDefinition

    return ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)


async def _transport(url: str) -> tuple[float, int]:
    from ai_widgets import Message
    from ai_widgets.transports import AnthropicTransport, ChatRequest

    client = _client(url)
    transport = AnthropicTransport(MODEL, client=client)
    request = ChatRequest(messages=[Message.user("go")], tools=[_definition()])
    started = time.thread_time()
    count = 0
    async for _ in transport.stream(request):
        count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


async def _session(url: str) -> tuple[float, int]:
    from ai_widgets import ChatSession, SessionOptions, Tool
    from ai_widgets.transports import AnthropicTransport

    async def handler(invocation: Any) -> None:
        return None

    client = _client(url)
    session = ChatSession(AnthropicTransport(MODEL, client=client), options=SessionOptions(execute_tools=False))
    session.tools.register(Tool(_definition(), handler))
    started = time.thread_time()
    reply = await session.send("go")
    elapsed = time.thread_time() - started
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert call.parsed_arguments["path"] == "notes.txt"
    await client.close()
    return elapsed, len(reply.text) + len(call.arguments)


async def _pydantic_ai(url: str) -> tuple[float, int]:
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.tools import ToolDefinition

    client = _client(url)
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    tool = ToolDefinition(name="write_file", description="Writes a file.", parameters_json_schema=PARAMETERS)
    parameters = ModelRequestParameters(function_tools=[tool])
    messages: list[Any] = [ModelRequest(parts=[UserPromptPart("go")])]
    started = time.thread_time()
    count = 0
    async with model.request_stream(messages, None, parameters) as stream:
        async for _ in stream:
            count += 1
        response = stream.get()
    elapsed = time.thread_time() - started
    assert response.tool_calls[0].args_as_dict()["path"] == "notes.txt"
    await client.close()
    return elapsed, count


Consumer = Callable[[str], Coroutine[Any, Any, tuple[float, int]]]
CASES: list[tuple[str, Consumer]] = [
    ("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    ("(a) anthropic SDK typed stream: `messages.create(stream=True)` events", _sdk),
    ("(b) ai_widgets `AnthropicTransport.stream` events", _transport),
    ("(c) ai_widgets `ChatSession.send` on the transport", _session),
    ("(d) pydantic-ai `AnthropicModel.request_stream` events", _pydantic_ai),
]


def _cpu(consumer: Consumer, url: str) -> float:
    gc.collect()
    elapsed, _ = asyncio.run(consumer(url))
    return elapsed


def measure(
    text_deltas: int,
    argument_deltas: int,
    repeats: int,
    *,
    paced: bool,
    cases: list[tuple[str, Consumer]] | None = None,
) -> tuple[int, list[tuple[str, float]]]:
    """(events in the big stream, [(case, marginal µs per event)]), the fastest of the rounds.

    Args:
        paced: The server writes each event on its own as the reader takes it; otherwise the whole body at once
            (each event still its own HTTP chunk), so every reader gets it in the same pieces.
    """
    cases = CASES if cases is None else cases
    big = stream_events(text_deltas, argument_deltas)
    small = stream_events(text_deltas // 100, argument_deltas // 100)
    bodies = {"big": big, "small": small}

    def handler(request: Request) -> Response:
        return Response(chunks=iter(bodies[request.path.split("/")[1]]), paced=paced)

    times: dict[tuple[str, str], list[float]] = {}
    with loopback(handler) as server:
        urls = {size: f"{server.url}/{size}" for size in bodies}
        for _, consumer in cases:  # warm up imports, caches and connections' code paths
            _cpu(consumer, urls["small"])
            _cpu(consumer, urls["big"])
        for _ in range(repeats):
            for name, consumer in cases:
                for size, url in urls.items():
                    times.setdefault((name, size), []).append(_cpu(consumer, url))
    events = len(big) - len(small)
    # The fastest round: other load on the machine only slows a run down.
    rows = [(name, (min(times[name, "big"]) - min(times[name, "small"])) / events * 1e6) for name, _ in cases]
    return len(big), rows


def _table(heading: str, rows: list[tuple[str, float]]) -> list[str]:
    """Markdown rows against the first row (the floor) and the last (pydantic-ai)."""
    floor, theirs = rows[0][1], rows[-1][1]
    lines = [f"| {heading} | µs / event | above the HTTP floor (µs) | vs pydantic-ai |", "|---|---:|---:|---:|"]
    return lines + [f"| {name} | {us:.1f} | {us - floor:.1f} | {us / theirs:.2f} |" for name, us in rows]


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 7)
    events, rows = measure(text_deltas, argument_deltas, repeats, paced=False)
    (_, floor), *_, (_, ours), (_, theirs) = rows
    _, paced = measure(text_deltas, argument_deltas, repeats, paced=True, cases=[CASES[0], CASES[3], CASES[4]])
    (_, paced_floor), (_, paced_ours), (_, paced_theirs) = paced
    lines = [
        f"## Anthropic Messages: CPU per streamed event ({events:,} SSE events: "
        f"{text_deltas:,} text deltas, a tool call in {argument_deltas:,} input deltas)",
        "",
        "A loopback server replays the stream, each SSE event its own HTTP chunk, the whole body written at once so "
        "that every consumer reads it in the same pieces; every consumer reads it through the anthropic SDK. "
        "Marginal CPU of the consuming thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        *_table("consumer", rows),
        "",
        f"Transport + session vs pydantic-ai's model: **{ours / theirs:.2f}×** the CPU per event "
        f"({(ours - floor) / max(theirs - floor, 1e-9):.2f}× of the cost above reading the HTTP body).",
        "",
        "Paced: the server writes each event on its own, so a socket read brings one event or a few, and each costs "
        "a wake-up of the event loop that every consumer pays alike. How many events a read brings depends on how "
        "the server's and the reader's threads happen to alternate, so this floor varies up to twofold between "
        "runs; the whole-body figure above is the stable one.",
        "",
        *_table("consumer (paced)", paced),
        "",
        f"Paced, transport + session vs pydantic-ai's model: {paced_ours / paced_theirs:.2f}× "
        f"(the shared floor alone is {paced_floor / paced_theirs:.2f}× of pydantic-ai's whole path).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
