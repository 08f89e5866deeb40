"""CPU per streamed event through ``OpenAIChatTransport`` (+ the session), against pydantic-ai's ``OpenAIChatModel``.

A loopback HTTP server replays a long Chat Completions stream in OpenAI's wire format (one SSE event per HTTP
chunk, the whole body written at once so that every consumer reads the same pieces; the paced table writes event by
event, see ``bench_provider_anthropic``): ~5,000 text deltas, then a tool call with ~1,000 argument deltas, a finish
chunk, a usage chunk and ``[DONE]``. Every consumer reads it through the official ``openai`` SDK on the same machine
in the same run:

- (0) the HTTP body alone: ``chat.completions.with_streaming_response.create(stream=True)``, iterating the bytes
  (the floor under the transport, which reads this body and decodes the SSE itself);
- (a) the SDK's typed stream: ``chat.completions.create(stream=True)``, iterating its chunk models (what pydantic-ai
  and most wrappers sit on);
- (b) ``OpenAIChatTransport.stream``: the body plus SSE decoding, JSON, and the mapping to ai_widgets events;
- (c) ``ChatSession.send`` on that transport (``execute_tools=False``): the events applied to the reply message,
  arguments parsed on every delta;
- (d) pydantic-ai's ``OpenAIChatModel.request_stream``, iterating its part events (same tool definition).

Measured as ``benchmarks._provider_harness`` does for every provider: marginal CPU of the consuming thread
(``time.thread_time``, the server runs in a thread here and is not counted) around the request and its stream,
fresh event loop and client per run, the fastest of the rounds. A third table feeds the same SSE frames to the
transport without HTTP, through a stand-in client: the transport's own work alone.
"""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import openai
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ai_widgets import ChatSession, Message, SessionOptions, Tool, ToolDefinition
from ai_widgets.transports import ChatRequest, OpenAIChatTransport
from benchmarks._provider_harness import (
    Case,
    Row,
    Stopwatch,
    measure,
    pieces,
    pydantic_ai_write_file,
    ratio_above,
    replay,
    table,
)

MODEL = "gpt-4o"
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
DEFINITION = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)


def stream_events(text_deltas: int, argument_deltas: int) -> list[bytes]:
    """A Chat Completions stream: text, then one tool call whose arguments arrive in ``argument_deltas`` pieces."""
    rng = random.Random(0)
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000, "model": MODEL}

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode()

    def delta(value: dict[str, Any], finish: str | None = None) -> bytes:
        return event([{"index": 0, "delta": value, "logprobs": None, "finish_reason": finish}])

    out = [delta({"role": "assistant", "content": "", "refusal": None})]
    out += [delta({"content": piece}) for piece in pieces(rng, text_deltas)]
    head = {"index": 0, "id": "call_bench", "type": "function", "function": {"name": "write_file", "arguments": ""}}
    out.append(delta({"tool_calls": [head]}))
    # The arguments of a long file write: the opening, the content in 4-8 character pieces, the closing.
    arguments = ['{"path": "notes.txt", "content": "', *pieces(rng, argument_deltas - 2), '"}']
    out += [delta({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in arguments]
    out.append(delta({}, "tool_calls"))
    out.append(event([], usage={"prompt_tokens": 100, "completion_tokens": 2000, "total_tokens": 2100}))
    out.append(b"data: [DONE]\n\n")
    return out


# --- the consumers ------------------------------------------------------------------------------------------------


def _client(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)


BODY: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "go"}], "stream": True}


def _request() -> ChatRequest:
    return ChatRequest(messages=[Message.user("go")], tools=[DEFINITION])


async def _ignore(invocation: Any) -> None:
    return None


async def _bytes(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    with watch:
        async with client.chat.completions.with_streaming_response.create(**BODY) as response:
            async for _ in response.iter_bytes():
                pass
    await client.close()


async def _sdk(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    with watch:
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass
    await client.close()


async def _transport(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    transport = OpenAIChatTransport(MODEL, client=client)
    request = _request()
    with watch:
        async for _ in transport.stream(request):
            pass
    await client.close()


async def _session(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    session = ChatSession(OpenAIChatTransport(MODEL, client=client), options=SessionOptions(execute_tools=False))
    session.tools.register(Tool(DEFINITION, _ignore))
    with watch:
        reply = await session.send("go")
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert call.parsed_arguments["path"] == "notes.txt"
    await client.close()


async def _pydantic_ai(url: str, watch: Stopwatch) -> None:
    client = _client(url)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    await pydantic_ai_write_file(model, PARAMETERS, watch)
    await client.close()


# --- the mapping alone: the same SSE bytes, fed to the transport without HTTP ------------------------------------


class _PrebuiltResponse:
    """What ``chat.completions.with_streaming_response.create(...)`` gives, over a body read beforehand."""

    def __init__(self, frames: list[bytes]) -> None:
        self._frames = frames

    async def __aenter__(self) -> _PrebuiltResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def iter_bytes(self) -> Any:
        for frame in self._frames:
            yield frame


class _PrebuiltClient:
    """Just enough of ``AsyncOpenAI`` for the transport: its requests answer with pre-built SSE frames."""

    base_url = "http://prebuilt.invalid/v1"
    api_key = "bench"
    timeout = 60.0

    def __init__(self, frames: list[bytes]) -> None:
        def create(**params: Any) -> _PrebuiltResponse:
            return _PrebuiltResponse(frames)

        self.chat = SimpleNamespace(completions=SimpleNamespace(with_streaming_response=SimpleNamespace(create=create)))


async def _prebuilt_floor(frames: list[bytes], watch: Stopwatch) -> None:
    with watch:
        async with _PrebuiltResponse(frames) as response:
            async for _ in response.iter_bytes():
                pass


async def _prebuilt_transport(frames: list[bytes], watch: Stopwatch) -> None:
    transport = OpenAIChatTransport(MODEL, client=_PrebuiltClient(frames))
    request = _request()
    with watch:
        async for _ in transport.stream(request):
            pass


async def _prebuilt_session(frames: list[bytes], watch: Stopwatch) -> None:
    transport = OpenAIChatTransport(MODEL, client=_PrebuiltClient(frames))
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    session.tools.register(Tool(DEFINITION, _ignore))
    with watch:
        reply = await session.send("go")
    assert reply.status.value == "completed", reply.error


HTTP_CASES = [
    Case("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    Case("(a) openai SDK typed stream: `chat.completions.create(stream=True)` chunks", _sdk),
    Case("(b) ai_widgets `OpenAIChatTransport.stream` events", _transport),
    Case("(c) ai_widgets `ChatSession.send` on the transport", _session),
    Case("(d) pydantic-ai `OpenAIChatModel.request_stream` events", _pydantic_ai),
]
PREBUILT_CASES = [
    Case("(e) iterating the pre-built SSE frames (floor)", _prebuilt_floor),
    Case("(f) ai_widgets `OpenAIChatTransport.stream` events", _prebuilt_transport),
    Case("(g) ai_widgets `ChatSession.send` on the transport", _prebuilt_session),
]


def measure_stream(
    text_deltas: int, argument_deltas: int, repeats: int, *, warm_big: bool = True
) -> tuple[int, list[Row], list[Row], list[Row]]:
    """(events in the big stream, HTTP rows, paced HTTP rows, pre-built rows), the fastest of the rounds. The server
    writes the whole body at once, each event its own HTTP chunk, except for the paced rows."""
    streams = {
        "big": stream_events(text_deltas, argument_deltas),
        "small": stream_events(text_deltas // 100, argument_deltas // 100),
    }
    events = len(streams["big"]) - len(streams["small"])
    with replay(streams) as server:
        whole = {size: server.url(size) + "/v1" for size in streams}
        paced = {size: server.url(size, paced=True) + "/v1" for size in streams}
        http_rows = measure(HTTP_CASES, whole, events, repeats=repeats, warm_big=warm_big)
        paced_cases = [HTTP_CASES[0], HTTP_CASES[3], HTTP_CASES[4]]
        paced_rows = measure(paced_cases, paced, events, repeats=repeats, warm_big=warm_big)
    prebuilt_rows = measure(PREBUILT_CASES, streams, events, repeats=repeats * 2)
    return len(streams["big"]), http_rows, paced_rows, prebuilt_rows


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = 5_000, 1_000, 2 if quick else 5
    events, rows, paced, prebuilt = measure_stream(text_deltas, argument_deltas, repeats, warm_big=not quick)
    floor, sdk, ours, theirs = rows[0], rows[1], rows[3], rows[4]
    lines = [
        f"## OpenAI Chat Completions: CPU per streamed event ({events:,} SSE events: "
        f"{text_deltas:,} text deltas, a tool call in {argument_deltas:,} argument deltas)",
        "",
        "A loopback server replays the stream, each SSE event its own HTTP chunk, the whole body written at once so "
        "that every consumer reads it in the same pieces; every consumer reads it through the openai SDK. Marginal "
        "CPU of the consuming thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        *table(rows, against=[("vs pydantic-ai", theirs)]),
        "",
        "Transport + session vs pydantic-ai's model on the same stream: "
        f"**{ours.us_per_event / theirs.us_per_event:.2f}×** the CPU per event "
        f"({ratio_above(ours, theirs, floor):.2f}× of the cost above reading the HTTP body). The transport reads the "
        f"raw body and decodes the SSE itself: the SDK's typed stream alone (a) costs "
        f"{sdk.us_per_event - floor.us_per_event:.0f} µs per event above the body, a pydantic model per chunk.",
        "",
        "Paced, the server writing each event on its own (a wake-up of the event loop per read, which every "
        "consumer pays alike; how many events a read brings depends on thread scheduling, so this floor varies "
        "between runs):",
        "",
        *table(paced, heading="consumer (paced)", against=[("vs pydantic-ai", paced[-1])]),
        "",
        f"Paced, transport + session vs pydantic-ai's model: {paced[1].us_per_event / paced[-1].us_per_event:.2f}×.",
        "",
        "The transport's work alone: the same SSE frames fed without HTTP (SSE decoding, JSON, the mapping; the "
        f"session applying the events); fastest of {repeats * 2}.",
        "",
        *table(prebuilt, floor="above the floor", digits=2),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
