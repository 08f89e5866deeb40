"""CPU per streamed event through ``OpenAIChatTransport`` (+ the session), against pydantic-ai's ``OpenAIChatModel``.

A loopback HTTP server replays a long Chat Completions stream in OpenAI's wire format (one SSE event per HTTP
chunk, the whole body written at once so that every consumer reads the same pieces; the paced table writes event by
event, see ``bench_provider_anthropic``): ~5,000 text deltas, then a tool call with ~1,000 argument deltas, a finish chunk, a usage chunk and
``[DONE]``. Every consumer reads it through the official ``openai`` SDK on the same machine in the same run:

- (0) the HTTP body alone: ``chat.completions.with_streaming_response.create(stream=True)``, iterating the bytes
  (the floor under the transport, which reads this body and decodes the SSE itself);
- (a) the SDK's typed stream: ``chat.completions.create(stream=True)``, iterating its chunk models (what pydantic-ai
  and most wrappers sit on);
- (b) ``OpenAIChatTransport.stream``: the body plus SSE decoding, JSON, and the mapping to ai_widgets events;
- (c) ``ChatSession.send`` on that transport (``execute_tools=False``): the events applied to the reply message,
  arguments parsed on every delta;
- (d) pydantic-ai's ``OpenAIChatModel.request_stream``, iterating its part events (same tool definition).

Marginal CPU of the consuming thread (``time.thread_time``, so the server thread is not counted), measured inside
the run around the request and its stream: ``(T(big) - T(small)) / (events(big) - events(small))``, so a request's
fixed cost cancels out. Fresh event loop and client per run; rounds outer, cases inner, fastest of the rounds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import time
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import Any

from tests.providers.loopback import Request, Response, loopback

MODEL = "gpt-4o"
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}


def _pieces(rng: random.Random, n: int) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz     ,."
    return ["".join(rng.choices(alphabet, k=rng.randint(4, 8))) for _ in range(n)]


def stream_events(text_deltas: int, argument_deltas: int) -> list[bytes]:
    """A Chat Completions stream: text, then one tool call whose arguments arrive in ``argument_deltas`` pieces."""
    rng = random.Random(0)
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000, "model": MODEL}

    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode()

    def delta(value: dict[str, Any], finish: str | None = None) -> bytes:
        return event([{"index": 0, "delta": value, "logprobs": None, "finish_reason": finish}])

    out = [delta({"role": "assistant", "content": "", "refusal": None})]
    out += [delta({"content": piece}) for piece in _pieces(rng, text_deltas)]
    head = {"index": 0, "id": "call_bench", "type": "function", "function": {"name": "write_file", "arguments": ""}}
    out.append(delta({"tool_calls": [head]}))
    # The arguments of a long file write: the opening, the content in 4-8 character pieces, the closing.
    arguments = ['{"path": "notes.txt", "content": "', *_pieces(rng, argument_deltas - 2), '"}']
    out += [delta({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in arguments]
    out.append(delta({}, "tool_calls"))
    out.append(event([], usage={"prompt_tokens": 100, "completion_tokens": 2000, "total_tokens": 2100}))
    out.append(b"data: [DONE]\n\n")
    return out


def _client(url: str) -> Any:
    import openai

    return openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)


BODY = {"model": MODEL, "messages": [{"role": "user", "content": "go"}], "stream": True}


async def _bytes(url: str) -> tuple[float, int]:
    client = _client(url)
    started = time.thread_time()
    count = 0
    async with client.chat.completions.with_streaming_response.create(**BODY) as response:
        async for _ in response.iter_bytes():
            count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


async def _sdk(url: str) -> tuple[float, int]:
    client = _client(url)
    started = time.thread_time()
    count = 0
    stream = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "go"}], stream=True, stream_options={"include_usage": True}
    )
    async for _ in stream:
        count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


def _request() -> Any:
    from ai_widgets import Message, ToolDefinition
    from ai_widgets.transports import ChatRequest

    definition = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)
    return ChatRequest(messages=[Message.user("go")], tools=[definition])


async def _transport(url: str) -> tuple[float, int]:
    from ai_widgets.transports import OpenAIChatTransport

    client = _client(url)
    transport = OpenAIChatTransport(MODEL, client=client)
    request = _request()
    started = time.thread_time()
    count = 0
    async for _ in transport.stream(request):
        count += 1
    elapsed = time.thread_time() - started
    await client.close()
    return elapsed, count


async def _session(url: str) -> tuple[float, int]:
    from ai_widgets import ChatSession, SessionOptions, ToolDefinition
    from ai_widgets.transports import OpenAIChatTransport

    client = _client(url)
    session = ChatSession(OpenAIChatTransport(MODEL, client=client), options=SessionOptions(execute_tools=False))
    definition = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)
    session.tools.register(_tool(definition))
    started = time.thread_time()
    reply = await session.send("go")
    elapsed = time.thread_time() - started
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert call.parsed_arguments["path"] == "notes.txt"
    await client.close()
    return elapsed, len(reply.text) + len(call.arguments)


def _tool(definition: Any) -> Any:
    from ai_widgets import Tool

    async def handler(invocation: Any) -> None:
        return None

    return Tool(definition, handler)


async def _pydantic_ai(url: str) -> tuple[float, int]:
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    client = _client(url)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    parameters = ModelRequestParameters(
        function_tools=[
            ToolDefinition(name="write_file", description="Writes a file.", parameters_json_schema=PARAMETERS)
        ]
    )
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


async def _prebuilt_floor(frames: list[bytes]) -> tuple[float, int]:
    started = time.thread_time()
    count = 0
    async with _PrebuiltResponse(frames) as response:
        async for _ in response.iter_bytes():
            count += 1
    return time.thread_time() - started, count


async def _prebuilt_transport(frames: list[bytes]) -> tuple[float, int]:
    from ai_widgets.transports import OpenAIChatTransport

    transport = OpenAIChatTransport(MODEL, client=_PrebuiltClient(frames))
    request = _request()
    started = time.thread_time()
    count = 0
    async for _ in transport.stream(request):
        count += 1
    return time.thread_time() - started, count


async def _prebuilt_session(frames: list[bytes]) -> tuple[float, int]:
    from ai_widgets import ChatSession, SessionOptions, ToolDefinition
    from ai_widgets.transports import OpenAIChatTransport

    transport = OpenAIChatTransport(MODEL, client=_PrebuiltClient(frames))
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    session.tools.register(
        _tool(ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS))
    )
    started = time.thread_time()
    reply = await session.send("go")
    elapsed = time.thread_time() - started
    assert reply.status.value == "completed", reply.error
    return elapsed, len(reply.tool_calls)


# --- measuring ------------------------------------------------------------------------------------------------

Consumer = Callable[[Any], Coroutine[Any, Any, tuple[float, int]]]
HTTP_CASES: list[tuple[str, Consumer]] = [
    ("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    ("(a) openai SDK typed stream: `chat.completions.create(stream=True)` chunks", _sdk),
    ("(b) ai_widgets `OpenAIChatTransport.stream` events", _transport),
    ("(c) ai_widgets `ChatSession.send` on the transport", _session),
    ("(d) pydantic-ai `OpenAIChatModel.request_stream` events", _pydantic_ai),
]
PREBUILT_CASES: list[tuple[str, Consumer]] = [
    ("(e) iterating the pre-built SSE frames (floor)", _prebuilt_floor),
    ("(f) ai_widgets `OpenAIChatTransport.stream` events", _prebuilt_transport),
    ("(g) ai_widgets `ChatSession.send` on the transport", _prebuilt_session),
]


def _cpu(consumer: Consumer, source: Any) -> float:
    gc.collect()
    elapsed, _ = asyncio.run(consumer(source))
    return elapsed


def _marginal(
    cases: list[tuple[str, Consumer]], sources: dict[str, Any], events: int, repeats: int, warm_big: bool
) -> list[tuple[str, float]]:
    """(case, marginal µs per event): the fastest of the rounds, which other load on the machine only slows."""
    for _, consumer in cases:  # imports, caches, code paths
        _cpu(consumer, sources["small"])
        if warm_big:
            _cpu(consumer, sources["big"])
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name, consumer in cases:
            for size, source in sources.items():
                times.setdefault((name, size), []).append(_cpu(consumer, source))
    return [(name, (min(times[name, "big"]) - min(times[name, "small"])) / events * 1e6) for name, _ in cases]


def measure(
    text_deltas: int, argument_deltas: int, repeats: int, *, warm_big: bool = True
) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]], list[tuple[str, float]]]:
    """(events in the big stream, HTTP rows, paced HTTP rows, pre-built rows), each row (case, marginal µs per
    event). The server writes the whole body at once, each event its own HTTP chunk, except for the paced rows."""
    bodies = {
        "big": stream_events(text_deltas, argument_deltas),
        "small": stream_events(text_deltas // 100, argument_deltas // 100),
    }
    events = len(bodies["big"]) - len(bodies["small"])
    paced = False

    def handler(request: Request) -> Response:
        return Response(chunks=iter(bodies[request.path.split("/")[1]]), paced=paced)

    with loopback(handler) as server:
        urls = {size: f"{server.url}/{size}/v1" for size in bodies}
        http_rows = _marginal(HTTP_CASES, urls, events, repeats, warm_big)
        paced = True
        paced_rows = _marginal([HTTP_CASES[0], HTTP_CASES[3], HTTP_CASES[4]], urls, events, repeats, warm_big)
    prebuilt_rows = _marginal(PREBUILT_CASES, bodies, events, repeats * 2, True)
    return len(bodies["big"]), http_rows, paced_rows, prebuilt_rows


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = 5_000, 1_000, 2 if quick else 5
    events, rows, paced, prebuilt = measure(text_deltas, argument_deltas, repeats, warm_big=not quick)
    floor, sdk, ours, theirs = rows[0][1], rows[1][1], rows[3][1], rows[4][1]
    lines = [
        f"## OpenAI Chat Completions: CPU per streamed event ({events:,} SSE events: "
        f"{text_deltas:,} text deltas, a tool call in {argument_deltas:,} argument deltas)",
        "",
        "A loopback server replays the stream, each SSE event its own HTTP chunk, the whole body written at once so "
        "that every consumer reads it in the same pieces; every consumer reads it through the openai SDK. Marginal "
        "CPU of the consuming thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        "| consumer | µs / event | above the HTTP floor (µs) | vs pydantic-ai |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {us:.1f} | {us - floor:.1f} | {us / theirs:.2f} |" for name, us in rows]
    lines += [
        "",
        f"Transport + session vs pydantic-ai's model on the same stream: **{ours / theirs:.2f}×** the CPU per event "
        f"({(ours - floor) / max(theirs - floor, 1e-9):.2f}× of the cost above reading the HTTP body). The transport "
        f"reads the raw body and decodes the SSE itself: the SDK's typed stream alone (a) costs {sdk - floor:.0f} µs "
        "per event above the body, a pydantic model per chunk.",
        "",
        "Paced, the server writing each event on its own (a wake-up of the event loop per read, which every "
        "consumer pays alike; how many events a read brings depends on thread scheduling, so this floor varies "
        "between runs):",
        "",
        "| consumer (paced) | µs / event | above the HTTP floor (µs) | vs pydantic-ai |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {us:.1f} | {us - paced[0][1]:.1f} | {us / paced[-1][1]:.2f} |" for name, us in paced],
        "",
        f"Paced, transport + session vs pydantic-ai's model: {paced[1][1] / paced[-1][1]:.2f}×.",
        "",
        "The transport's work alone: the same SSE frames fed without HTTP (SSE decoding, JSON, the mapping; the "
        f"session applying the events); fastest of {repeats * 2}.",
        "",
        "| consumer | µs / event | above the floor |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {us:.2f} | {us - prebuilt[0][1]:.2f} |" for name, us in prebuilt]
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
