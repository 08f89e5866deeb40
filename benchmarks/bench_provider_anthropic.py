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

Measured as ``benchmarks._provider_harness`` does for every provider: marginal CPU of the consuming thread
(``time.thread_time``, the server runs in a thread here and is not counted) around the request and its stream,
fresh event loop and client per run, the fastest of the rounds.

The server writes the whole body at once (each event still its own HTTP chunk), so every consumer reads the same
pieces. Written event by event ("paced", the second table), how many events one socket read brings depends on how
the server's and the reader's threads alternate: the floor then varied from 84 to 151 ms for the same 5,872 events
in one run, which swamps the differences measured here. The paced table is kept to show the cost of a wake-up per
event, which every consumer pays alike.
"""

from __future__ import annotations

import json
import random
from typing import Any

import anthropic
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from ai_widgets import ChatSession, Message, SessionOptions, Tool, ToolDefinition
from ai_widgets.transports import AnthropicTransport, ChatRequest
from benchmarks._provider_harness import (
    Case,
    Row,
    Stopwatch,
    measure,
    pieces,
    pydantic_ai_write_file,
    ratio_above,
    replay,
    sse_frame,
    table,
)

MODEL = "claude-bench"
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}


def stream_events(text_deltas: int, argument_deltas: int) -> list[bytes]:
    """A Messages API stream: a text block, then one tool call whose input arrives in ``argument_deltas`` pieces."""
    rng = random.Random(0)

    def event(data: dict[str, Any]) -> bytes:
        return sse_frame(data, event=data["type"], separators=(",", ":"))

    def delta(index: int, value: dict[str, Any]) -> bytes:
        return event({"type": "content_block_delta", "index": index, "delta": value})

    usage = {"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": MODEL, "content": []}
    out = [event({"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}})]
    out.append(event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    out += [delta(0, {"type": "text_delta", "text": piece}) for piece in pieces(rng, text_deltas)]
    out.append(event({"type": "content_block_stop", "index": 0}))
    call = {"type": "tool_use", "id": "toolu_bench", "name": "write_file", "input": {}}
    out.append(event({"type": "content_block_start", "index": 1, "content_block": call}))
    arguments = json.dumps({"path": "notes.txt", "content": "".join(pieces(rng, argument_deltas))})
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


# --- the consumers ------------------------------------------------------------------------------------------------


def _client(url: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=url, api_key="bench", max_retries=0)


BODY: dict[str, Any] = {"model": MODEL, "max_tokens": 4096, "messages": [{"role": "user", "content": "go"}]}
DEFINITION = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)


async def _bytes(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    with watch:
        async with client.messages.with_streaming_response.create(**BODY, stream=True) as response:
            async for _ in response.iter_bytes():
                pass
    await client.close()


async def _sdk(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    with watch:
        stream = await client.messages.create(**BODY, stream=True)
        async for _ in stream:
            pass
    await client.close()


async def _transport(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    transport = AnthropicTransport(MODEL, client=client)
    request = ChatRequest(messages=[Message.user("go")], tools=[DEFINITION])
    with watch:
        async for _ in transport.stream(request):
            pass
    await client.close()


async def _ignore(invocation: Any) -> None:
    return None


async def _session(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    session = ChatSession(AnthropicTransport(MODEL, client=client), options=SessionOptions(execute_tools=False))
    session.tools.register(Tool(DEFINITION, _ignore))
    with watch:
        reply = await session.send("go")
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert call.parsed_arguments["path"] == "notes.txt"
    await client.close()


async def _pydantic_ai(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    await pydantic_ai_write_file(model, PARAMETERS, watch)
    await client.close()


CASES = [
    Case("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    Case("(a) anthropic SDK typed stream: `messages.create(stream=True)` events", _sdk),
    Case("(b) ai_widgets `AnthropicTransport.stream` events", _transport),
    Case("(c) ai_widgets `ChatSession.send` on the transport", _session),
    Case("(d) pydantic-ai `AnthropicModel.request_stream` events", _pydantic_ai),
]


def measure_stream(
    text_deltas: int, argument_deltas: int, repeats: int, *, paced: bool, cases: list[Case] | None = None
) -> tuple[int, list[Row]]:
    """(events in the big stream, a row per case), the fastest of the rounds.

    Args:
        paced: The server writes each event on its own as the reader takes it; otherwise the whole body at once
            (each event still its own HTTP chunk), so every reader gets it in the same pieces.
    """
    streams = {"big": stream_events(text_deltas, argument_deltas)}
    streams["small"] = stream_events(text_deltas // 100, argument_deltas // 100)
    with replay(streams) as server:
        urls = {size: server.url(size, paced=paced) for size in streams}
        rows = measure(
            CASES if cases is None else cases, urls, len(streams["big"]) - len(streams["small"]), repeats=repeats
        )
    return len(streams["big"]), rows


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 7)
    events, rows = measure_stream(text_deltas, argument_deltas, repeats, paced=False)
    floor, ours, theirs = rows[0], rows[3], rows[4]
    _, paced = measure_stream(text_deltas, argument_deltas, repeats, paced=True, cases=[CASES[0], CASES[3], CASES[4]])
    paced_floor, paced_ours, paced_theirs = paced
    lines = [
        f"## Anthropic Messages: CPU per streamed event ({events:,} SSE events: "
        f"{text_deltas:,} text deltas, a tool call in {argument_deltas:,} input deltas)",
        "",
        "A loopback server replays the stream, each SSE event its own HTTP chunk, the whole body written at once so "
        "that every consumer reads it in the same pieces; every consumer reads it through the anthropic SDK. "
        "Marginal CPU of the consuming thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        *table(rows, against=[("vs pydantic-ai", theirs)]),
        "",
        f"Transport + session vs pydantic-ai's model: **{ours.us_per_event / theirs.us_per_event:.2f}×** the CPU per "
        f"event ({ratio_above(ours, theirs, floor):.2f}× of the cost above reading the HTTP body).",
        "",
        "Paced: the server writes each event on its own, so a socket read brings one event or a few, and each costs "
        "a wake-up of the event loop that every consumer pays alike. How many events a read brings depends on how "
        "the server's and the reader's threads happen to alternate, so this floor varies up to twofold between "
        "runs; the whole-body figure above is the stable one.",
        "",
        *table(paced, heading="consumer (paced)", against=[("vs pydantic-ai", paced_theirs)]),
        "",
        "Paced, transport + session vs pydantic-ai's model: "
        f"{paced_ours.us_per_event / paced_theirs.us_per_event:.2f}× (the shared floor alone is "
        f"{paced_floor.us_per_event / paced_theirs.us_per_event:.2f}× of pydantic-ai's whole path).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
