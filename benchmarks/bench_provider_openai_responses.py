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

Measured as ``benchmarks._provider_harness`` does for every provider: marginal CPU per event, here with
``time.process_time`` (the server runs in a process of its own, so its work is not counted) around the whole run
of a consumer, client included, the median of the rounds; every run gets a fresh event loop and client.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

import openai
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import ModelRequest, PartDeltaEvent, PartStartEvent, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from ai_widgets import ChatSession, SessionOptions
from ai_widgets.transports import OpenAIResponsesTransport
from benchmarks._provider_harness import Case, Row, Stopwatch, measure, pieces, ratio_above, replay, sse_frame, table

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
ALPHABET = "abcdefghijklmnopqrstuvwxyz     ,.é’"


# --- the stream ---------------------------------------------------------------------------------------------------


def _argument_pieces(rng: random.Random, n: int) -> list[str]:
    """About ``n`` deltas of one JSON argument (a long string value), split anywhere, escapes included."""
    text = json.dumps(
        {"title": "Report", "body": " ".join(pieces(rng, n, ALPHABET)) + '\n"quoted"'}, ensure_ascii=False
    )
    out: list[str] = []
    i = 0
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
    texts, arguments = pieces(rng, text_deltas, ALPHABET), _argument_pieces(rng, argument_deltas)

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
        frames.append(sse_frame(event, event=event["type"], ensure_ascii=False))
    return frames, len(events)


# --- the consumers ------------------------------------------------------------------------------------------------


def _client(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="sk-" + "bench-not-a-key", base_url=base_url, max_retries=0)


async def _bytes(base_url: str, watch: Stopwatch) -> None:
    with watch:
        client = _client(base_url)
        async with client.responses.with_streaming_response.create(
            model="gpt-5.5", input="hi", stream=True
        ) as response:
            async for _ in response.iter_bytes():
                pass
        await client.close()


async def _sdk(base_url: str, watch: Stopwatch) -> None:
    with watch:
        client = _client(base_url)
        stream = await client.responses.create(model="gpt-5.5", input="hi", stream=True)
        async for _ in stream:
            pass
        await client.close()


async def _ai_widgets(base_url: str, watch: Stopwatch) -> None:
    with watch:
        client = _client(base_url)
        session = ChatSession(
            OpenAIResponsesTransport("gpt-5.5", client=client), options=SessionOptions(execute_tools=False)
        )
        reply = await session.send("hi")
        await client.close()
    assert reply.status.value == "completed", reply.error
    (call,) = reply.tool_calls
    assert call.arguments


async def _pydantic_ai(base_url: str, watch: Stopwatch) -> None:
    with watch:
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
    assert chars


CASES = [
    Case("(0) HTTP body alone: `with_streaming_response` bytes (floor)", _bytes),
    Case("(a) openai SDK typed stream: `responses.create(stream=True)` events", _sdk),
    Case("(b) ai_widgets `ChatSession.send` + `OpenAIResponsesTransport`", _ai_widgets),
    Case("(c) pydantic-ai `OpenAIResponsesModel` via `model_request_stream`", _pydantic_ai),
]


def measure_stream(text_deltas: int, argument_deltas: int, repeats: int) -> tuple[list[Row], int]:
    """A row per case (the median of the rounds), and the big stream's event count. The server writes each event
    on its own."""
    big, big_events = build_stream(text_deltas, argument_deltas)
    small, small_events = build_stream(SMALL, SMALL)
    with replay({"big": big, "small": small}, own_process=True, no_delay=True) as server:
        urls = {size: server.url(size, paced=True) + "/v1" for size in ("big", "small")}
        rows = measure(
            CASES,
            urls,
            big_events - small_events,
            repeats=repeats,
            clock=time.process_time,
            statistic=statistics.median,
        )
    return rows, big_events


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 9)
    rows, events = measure_stream(text_deltas, argument_deltas, repeats)
    floor, sdk, ours, theirs = rows
    lines = [
        f"## OpenAI Responses stream: CPU per event, transport + session ({events:,} events)",
        "",
        f"A loopback server (its own process) replays {text_deltas:,} text deltas and a function call with "
        f"{argument_deltas:,} argument deltas (one event per HTTP chunk). Marginal CPU, "
        f"(T(big) − T(small)) / events, `time.process_time`, median of {repeats}; fresh loop and client per run.",
        "",
        *table(rows, against=[("vs pydantic-ai", theirs)], digits=2, fixed=True),
        "",
        f"ai_widgets / pydantic-ai, whole path: **{ours.us_per_event / theirs.us_per_event:.2f}**. "
        f"Above reading the HTTP body: ai_widgets {ours.us_per_event - floor.us_per_event:.2f} µs/event, "
        f"pydantic-ai {theirs.us_per_event - floor.us_per_event:.2f} µs/event "
        f"(ratio {ratio_above(ours, theirs, floor):.2f}); the SDK's typed stream alone costs "
        f"{sdk.us_per_event - floor.us_per_event:.2f} µs/event above the body, a pydantic model per event.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
