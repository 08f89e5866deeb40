"""CPU per streamed event through ``PydanticAITransport`` (+ the session), against pydantic-ai's own agent loop on the
same model.

One pydantic-ai ``FunctionModel`` streams the same turn to every consumer: ~5,000 text deltas, then a ``write_file``
call whose arguments arrive in ~1,000 pieces (``DeltaToolCall``); asked again after the call ran, it answers
"Done.". No network: the model's stream is pydantic-ai's own, so every consumer pays the same
``StreamedResponse`` machinery and the figures compare what each does on top of it:

- (0) pydantic-ai's ``FunctionModel.request_stream``, iterating its part events (the floor under all of them);
- (a) ``PydanticAITransport.stream``: that, mapped to ai_widgets events;
- (b) ``ChatSession.send`` on that transport: the events applied to the reply, the arguments parsed on every
  delta, the tool run and the second request;
- (c) pydantic-ai's ``Agent.iter`` with ``node.stream(ctx)`` on each model request node, reading every event;
- (d) pydantic-ai's ``Agent.run_stream_events``, reading every event (the whole run, the tool and the second
  request, as (b)).

Measured as ``benchmarks._provider_harness`` does for every provider: marginal CPU of the thread
(``time.thread_time``) per event of the big stream over the small one, fresh event loop and model per run, the
fastest of the rounds; the tool run and the second request are in both sizes, so they cancel out.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.tools import ToolDefinition as PydanticAIToolDefinition

from ai_widgets import ChatSession, Message, tool
from ai_widgets.tools import ToolDefinition
from ai_widgets.transports import ChatRequest, PydanticAITransport
from benchmarks._provider_harness import Case, Stopwatch, measure, pieces, table

PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
Frame = str | dict[int, DeltaToolCall]


def stream_frames(text_deltas: int, argument_deltas: int) -> list[Frame]:
    """What the stream function yields: the text deltas, then the call's arguments in ``argument_deltas`` pieces."""
    rng = random.Random(0)
    frames: list[Frame] = list(pieces(rng, text_deltas))
    arguments = json.dumps({"path": "notes.txt", "content": "".join(pieces(rng, argument_deltas))})
    size = -(-len(arguments) // argument_deltas)
    chunks = [arguments[start : start + size] for start in range(0, len(arguments), size)]
    frames.append({1: DeltaToolCall(name="write_file", json_args=chunks[0], tool_call_id="call_bench")})
    frames += [{1: DeltaToolCall(json_args=chunk)} for chunk in chunks[1:]]
    return frames


def _model(frames: list[Frame]) -> FunctionModel:
    async def stream(messages: list[Any], info: AgentInfo) -> AsyncIterator[Frame]:
        answered = any(isinstance(part, ToolReturnPart) for part in messages[-1].parts)
        if answered:
            yield "Done."
            return
        for frame in frames:
            yield frame

    return FunctionModel(stream_function=stream, model_name="bench")


def write_file(path: str, content: str) -> str:
    """Writes a file (here: does nothing).

    Args:
        path: Where.
        content: What.
    """
    return "ok"


WRITE_FILE = tool(write_file)
DEFINITION = ToolDefinition(name="write_file", description="Writes a file.", parameters=PARAMETERS)


# --- the consumers ------------------------------------------------------------------------------------------------


async def _model_stream(frames: list[Frame], watch: Stopwatch) -> None:
    model = _model(frames)
    definition = PydanticAIToolDefinition(name="write_file", parameters_json_schema=PARAMETERS)
    parameters = ModelRequestParameters(function_tools=[definition])
    with watch:
        async with model.request_stream([ModelRequest(parts=[UserPromptPart("go")])], None, parameters) as stream:
            async for _ in stream:
                pass
    assert stream.get().tool_calls[0].args_as_dict()["path"] == "notes.txt"


async def _transport(frames: list[Frame], watch: Stopwatch) -> None:
    transport = PydanticAITransport(_model(frames))
    request = ChatRequest(messages=[Message.user("go")], tools=[DEFINITION])
    with watch:
        async for _ in transport.stream(request):
            pass


async def _session(frames: list[Frame], watch: Stopwatch) -> None:
    session = ChatSession(PydanticAITransport(_model(frames)), tools=[WRITE_FILE])
    with watch:
        reply = await session.send("go")
    assert reply.status.value == "completed", reply.error
    assert reply.tool_calls[0].parsed_arguments["path"] == "notes.txt"
    assert reply.text.endswith("Done.")


def _agent(frames: list[Frame]) -> Agent[None, str]:
    return Agent(_model(frames), tools=[write_file])


async def _agent_iter(frames: list[Frame], watch: Stopwatch) -> None:
    agent = _agent(frames)
    with watch:
        async with agent.iter("go") as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as events:
                        async for _ in events:
                            pass
    assert run.result is not None
    assert run.result.output.endswith("Done.")


async def _agent_events(frames: list[Frame], watch: Stopwatch) -> None:
    agent = _agent(frames)
    with watch:
        async with agent.run_stream_events("go") as events:
            async for _ in events:
                pass


CASES = [
    Case("(0) pydantic-ai `FunctionModel.request_stream` part events (floor)", _model_stream),
    Case("(a) ai_widgets `PydanticAITransport.stream` events", _transport),
    Case("(b) ai_widgets `ChatSession.send` on the transport (tool run, 2nd request)", _session),
    Case("(c) pydantic-ai `Agent.iter` + `node.stream(ctx)` events (tool run, 2nd request)", _agent_iter),
    Case("(d) pydantic-ai `Agent.run_stream_events` (tool run, 2nd request)", _agent_events),
]


def run(*, quick: bool = False) -> str:
    text_deltas, argument_deltas, repeats = (5_000, 1_000, 3) if quick else (5_000, 1_000, 7)
    big = stream_frames(text_deltas, argument_deltas)
    small = stream_frames(text_deltas // 100, argument_deltas // 100)
    rows = measure(CASES, {"big": big, "small": small}, len(big) - len(small), repeats=repeats)
    floor, session, agent_iter, agent_events = rows[0], rows[2], rows[3], rows[4]
    theirs = min(agent_iter, agent_events, key=lambda row: row.us_per_event)
    lines = [
        f"## pydantic-ai models: CPU per streamed event ({len(big):,} events: {text_deltas:,} text deltas, a tool "
        f"call in {argument_deltas:,} argument deltas)",
        "",
        "One `FunctionModel` streams the same turn to every consumer (no network: pydantic-ai's own stream is the "
        "floor). Marginal CPU of the thread, (T(big) − T(small)) / Δevents, "
        f"`time.thread_time`, fastest of {repeats}.",
        "",
        *table(
            rows,
            floor="above the model's stream (µs)",
            against=[("vs `Agent.iter`", agent_iter), ("vs `run_stream_events`", agent_events)],
            fixed=True,
        ),
        "",
        f"Transport + session vs pydantic-ai's agent (its cheaper path): **{session.us_per_event / theirs.us_per_event:.2f}×** "
        f"the CPU per event; above the model's own stream, "
        f"{(session.us_per_event - floor.us_per_event) / max(theirs.us_per_event - floor.us_per_event, 1e-9):.2f}×.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
