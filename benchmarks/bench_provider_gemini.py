"""CPU per streamed event through ``GeminiTransport`` (+ the session), against the google-genai SDK's own parse.

A loopback HTTP server replays a long ``streamGenerateContent?alt=sse`` stream in Gemini's wire format (``data:``
lines with CRLF ends, one ``GenerateContentResponse`` chunk per SSE event and HTTP chunk, the whole body written at
once so that every consumer reads the same pieces), shaped like the recorded streams in
``tests/fixtures/providers/data/``: ~5,000 text chunks, then a ``write_file`` call, then a chunk with
``finishReason`` and the usage. Two streams:

- the Gemini Developer API, which sends a call whole: the call and its long ``content`` argument in one chunk;
- Vertex AI with ``streamFunctionCallArguments`` (``GeminiTransport(stream_function_call_arguments=True)``): the
  call's name, then ~1,000 ``partialArgs`` chunks of its ``content`` string, then the chunk that ends the call.

Every consumer reads it through the official ``google-genai`` SDK's HTTP client (``httpx2``), on the same machine
in the same run:

- (0) the HTTP body alone: the same request on the SDK's HTTP client, iterating the bytes (the floor);
- (a) the SDK's typed stream: ``client.aio.models.generate_content_stream``, iterating its
  ``GenerateContentResponse`` models: the SDK's own streaming parse, which the transport sits on (unlike the
  OpenAI and Anthropic transports, it does not decode the SSE itself);
- (b) ``GeminiTransport.stream``: the SDK's parse plus the mapping to ai_widgets events (thought signatures, ids for
  calls without one, the streamed arguments written as JSON text);
- (c) ``ChatSession.send`` on that transport (``execute_tools=False``): the events applied to the reply message,
  arguments parsed on every delta;
- (d) pydantic-ai's ``GoogleModel.request_stream``, iterating its part events (same tool definition; Developer API
  stream only, as pydantic-ai does not ask for streamed arguments).

Measured as ``benchmarks._provider_harness`` does for every provider: marginal CPU of the consuming thread
(``time.thread_time``, the server runs in a thread here and is not counted) around the request and its stream,
fresh event loop and client per run, the fastest of the rounds.
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import httpx2
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

from ai_widgets import ChatSession, Message, SessionOptions, Tool, ToolDefinition
from ai_widgets.transports import ChatRequest, GeminiTransport
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

MODEL = "gemini-bench"
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
DEFINITION = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)
# A thought signature as Gemini 3 puts on the first call of a reply (base64, a few hundred bytes in the recordings).
SIGNATURE = "EpwICpkIAXLI2nx" + "A" * 300


def _chunk(*parts: dict[str, Any], finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    data: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": "resp-bench"}
    if finish is not None:
        candidate["finishReason"] = finish
        data["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 2000, "totalTokenCount": 2100}
    return sse_frame(data, line_end="\r\n", separators=(",", ":"))


def stream_events(text_deltas: int, argument_deltas: int, *, streamed_arguments: bool) -> list[bytes]:
    """A Gemini stream: text in ``text_deltas`` chunks, then one ``write_file`` call (whole, or with its
    ``content`` in ``argument_deltas`` ``partialArgs`` chunks), then the finishing chunk."""
    rng = random.Random(0)
    out = [_chunk({"text": piece}) for piece in pieces(rng, text_deltas)]
    content = pieces(rng, argument_deltas)
    if streamed_arguments:
        out.append(
            _chunk({"functionCall": {"name": "write_file", "willContinue": True}, "thoughtSignature": SIGNATURE})
        )
        path = {"jsonPath": "$.path", "stringValue": "notes.txt"}
        out.append(_chunk({"functionCall": {"partialArgs": [path], "willContinue": True}}))
        for number, piece in enumerate(content, 1):
            argument: dict[str, Any] = {"jsonPath": "$.content", "stringValue": piece}
            if number < len(content):
                argument["willContinue"] = True
            out.append(_chunk({"functionCall": {"partialArgs": [argument], "willContinue": True}}))
        out.append(_chunk({"functionCall": {}}))
    else:
        call = {"name": "write_file", "args": {"path": "notes.txt", "content": "".join(content)}}
        out.append(_chunk({"functionCall": call, "thoughtSignature": SIGNATURE}))
    out.append(_chunk({"text": ""}, finish="STOP"))
    return out


# --- the consumers ------------------------------------------------------------------------------------------------


def _client(url: str, http: httpx2.AsyncClient, *, vertex: bool) -> genai.Client:
    options = types.HttpOptions(base_url=url, httpx_async_client=http, retry_options=types.HttpRetryOptions(attempts=1))
    if vertex:
        # A fixed access token, so no Google Cloud credentials are looked up.
        return genai.Client(
            vertexai=True,
            project="bench",
            location="us-central1",
            credentials=Credentials(token="ya29.bench"),
            http_options=options,
        )
    return genai.Client(api_key="AIza" + "bench-not-a-key", http_options=options)


async def _bytes(url: str, watch: Stopwatch) -> None:
    async with httpx2.AsyncClient() as http:
        body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}]}
        with watch:
            address = f"{url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
            async with http.stream("POST", address, json=body) as response:
                async for _ in response.aiter_bytes():
                    pass


async def _sdk(url: str, watch: Stopwatch, *, vertex: bool) -> None:
    async with httpx2.AsyncClient() as http:
        client = _client(url, http, vertex=vertex)
        function = types.FunctionDeclaration(
            name="write_file", description="Writes a file.", parameters_json_schema=PARAMETERS
        )
        config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[function])])
        with watch:
            stream = await client.aio.models.generate_content_stream(model=MODEL, contents="go", config=config)
            async for _ in stream:
                pass


async def _transport(url: str, watch: Stopwatch, *, vertex: bool) -> None:
    async with httpx2.AsyncClient() as http:
        transport = GeminiTransport(
            MODEL, client=_client(url, http, vertex=vertex), stream_function_call_arguments=vertex
        )
        request = ChatRequest(messages=[Message.user("go")], tools=[DEFINITION])
        with watch:
            async for _ in transport.stream(request):
                pass


async def _ignore(invocation: Any) -> None:
    return None


async def _session(url: str, watch: Stopwatch, *, vertex: bool) -> None:
    async with httpx2.AsyncClient() as http:
        transport = GeminiTransport(
            MODEL, client=_client(url, http, vertex=vertex), stream_function_call_arguments=vertex
        )
        session = ChatSession(transport, options=SessionOptions(execute_tools=False))
        session.tools.register(Tool(DEFINITION, _ignore))
        with watch:
            reply = await session.send("go")
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert json.loads(call.arguments)["path"] == "notes.txt"


async def _pydantic_ai(url: str, watch: Stopwatch, *, vertex: bool) -> None:
    async with httpx2.AsyncClient() as http:
        model = GoogleModel(MODEL, provider=GoogleProvider(client=_client(url, http, vertex=vertex)))
        await pydantic_ai_write_file(model, PARAMETERS, watch)


def cases(*, vertex: bool) -> list[Case]:
    """The consumers of one stream (pydantic-ai for the Developer API's only)."""
    out = [
        Case("(0) HTTP body alone: the SDK's HTTP client, bytes (floor)", _bytes),
        Case(
            "(a) google-genai SDK typed stream: `aio.models.generate_content_stream` chunks",
            functools.partial(_sdk, vertex=vertex),
        ),
        Case("(b) ai_widgets `GeminiTransport.stream` events", functools.partial(_transport, vertex=vertex)),
        Case("(c) ai_widgets `ChatSession.send` on the transport", functools.partial(_session, vertex=vertex)),
    ]
    if not vertex:
        out.append(
            Case("(d) pydantic-ai `GoogleModel.request_stream` events", functools.partial(_pydantic_ai, vertex=False))
        )
    return out


def measure_stream(text_deltas: int, argument_deltas: int, repeats: int, *, vertex: bool) -> tuple[int, list[Row]]:
    """(events in the big stream, a row per case), the fastest of the rounds."""
    streams = {
        "big": stream_events(text_deltas, argument_deltas, streamed_arguments=vertex),
        "small": stream_events(text_deltas // 100, argument_deltas // 100, streamed_arguments=vertex),
    }
    with replay(streams) as server:
        urls = {size: server.url(size) for size in streams}
        rows = measure(cases(vertex=vertex), urls, len(streams["big"]) - len(streams["small"]), repeats=repeats)
    return len(streams["big"]), rows


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 7)
    events, rows = measure_stream(text_deltas, argument_deltas, repeats, vertex=False)
    floor, sdk, transport, ours, theirs = rows
    vertex_events, vertex = measure_stream(text_deltas, argument_deltas, repeats, vertex=True)
    vertex_floor, vertex_sdk, vertex_transport, vertex_ours = vertex
    lines = [
        f"## Gemini: CPU per streamed event ({events:,} SSE events: {text_deltas:,} text chunks, a whole tool call)",
        "",
        "A loopback server replays a Gemini Developer API stream, each SSE event its own HTTP chunk, the whole body "
        "written at once so that every consumer reads it in the same pieces; every consumer reads it through the "
        "google-genai SDK's HTTP client. Marginal CPU of the consuming thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        *table(rows, against=[("vs google-genai SDK", sdk), ("vs pydantic-ai", theirs)]),
        "",
        f"The transport over the SDK's own streaming parse of the same bytes, which it sits on: "
        f"**{transport.us_per_event / sdk.us_per_event:.2f}×** the CPU per event "
        f"(+{transport.us_per_event - sdk.us_per_event:.1f} µs per event for the mapping); with the session, "
        f"{ours.us_per_event / sdk.us_per_event:.2f}×. Transport + session vs pydantic-ai's model: "
        f"**{ours.us_per_event / theirs.us_per_event:.2f}×** ({ratio_above(ours, theirs, floor):.2f}× of the cost "
        "above reading the HTTP body).",
        "",
        f"Vertex AI with streamed function-call arguments ({vertex_events:,} SSE events: {text_deltas:,} text "
        f"chunks, a tool call whose `content` comes in {argument_deltas:,} `partialArgs` chunks, written as JSON "
        "text by the transport); pydantic-ai does not ask for streamed arguments, so the SDK is the comparison:",
        "",
        *table(vertex, against=[("vs google-genai SDK", vertex_sdk)]),
        "",
        f"The transport over the SDK's parse: **{vertex_transport.us_per_event / vertex_sdk.us_per_event:.2f}×** "
        f"(+{vertex_transport.us_per_event - vertex_sdk.us_per_event:.1f} µs per event); with the session, "
        f"{vertex_ours.us_per_event / vertex_sdk.us_per_event:.2f}× (the floor alone is "
        f"{vertex_floor.us_per_event / vertex_sdk.us_per_event:.2f}× of the SDK's parse).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
