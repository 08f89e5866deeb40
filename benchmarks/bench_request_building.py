"""Kernel CPU to build and send one request with a long history, per transport, against pydantic-ai's model for the
same conversation through the same SDK.

The conversation: ``n`` earlier messages (10, 100, 1,000, 5,000), alternating user questions and assistant replies;
every other reply holds text and a tool call with its result, the others text alone; then the new question. Both
sides get the same messages (pydantic-ai's ``ModelRequest`` / ``ModelResponse`` with ``UserPromptPart``,
``TextPart``, ``ToolCallPart`` and ``ToolReturnPart``) and the same tool definition.

What is measured: CPU of the event-loop thread (``time.thread_time``, the thread a notebook's kernel runs the session
on; the loopback server's thread is not counted) from the call (``transport.stream(request)``, pydantic-ai's
``model.request_stream(...)``) to the moment the HTTP request, its body serialised, is handed to the HTTP client's
transport to be written to the socket: the SDK's own client is given an ``httpx2`` client whose transport notes the
time, then sends the request on to a loopback server (which refuses it, 400, so nothing after the send is counted
or retried). Everything the request costs before it leaves is in it: our mapping, the SDK's checks, transforms and
serialisation, header building. Fresh conversation objects per request; fastest of the rounds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from tests.providers.loopback import Request, Response, loopback

SIZES = (10, 100, 1_000, 5_000)
KEY = "bench-key"
PARAMETERS = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
}


class _Stamp(httpx2.AsyncBaseTransport):
    """An HTTP transport that notes the thread's CPU time when a request reaches it, then sends it on."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.at: float | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.at is None:
            self.at = time.thread_time()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _refuse(request: Request) -> Response:
    body = b'{"error": {"code": 400, "message": "benchmark", "status": "INVALID_ARGUMENT", "type": "invalid"}}'
    return Response(status=400, headers={"content-type": "application/json"}, chunks=[body])


# --- the conversation, both ways ----------------------------------------------------------------------------------


def _ours(n: int) -> Any:
    from ai_widgets import Message, TextPart, ToolCallPart, ToolCallState, ToolDefinition, ToolOutcome
    from ai_widgets.messages import Role
    from ai_widgets.transports import ChatRequest

    messages: list[Message] = []
    for i in range(n):
        if i % 2 == 0:
            messages.append(Message.user(f"Question {i}: what is the status of item {i}?"))
            continue
        parts: list[Any] = [TextPart(f"Let me look up item {i}.")]
        if i % 4 == 1:
            call = ToolCallPart(
                f"call_{i}", "lookup", f'{{"query": "item {i}", "limit": 5}}', state=ToolCallState.PENDING
            )
            call.finish(ToolCallState.COMPLETED, ToolOutcome.success(f"Item {i} is in stock: 12 units."))
            parts.append(call)
        messages.append(Message(Role.ASSISTANT, parts))
    messages.append(Message.user("And the next one?"))
    definition = ToolDefinition(name="lookup", description="Looks an item up.", parameters=PARAMETERS)
    return ChatRequest(messages=messages, tools=[definition])


def _theirs(n: int) -> tuple[list[Any], Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.tools import ToolDefinition

    messages: list[Any] = []
    pending: list[Any] = []  # the request being gathered: tool returns, then the next question
    for i in range(n):
        if i % 2 == 0:
            pending.append(UserPromptPart(f"Question {i}: what is the status of item {i}?"))
            messages.append(ModelRequest(parts=pending))
            pending = []
            continue
        parts: list[Any] = [TextPart(f"Let me look up item {i}.")]
        if i % 4 == 1:
            parts.append(ToolCallPart("lookup", f'{{"query": "item {i}", "limit": 5}}', f"call_{i}"))
            pending.append(ToolReturnPart("lookup", f"Item {i} is in stock: 12 units.", f"call_{i}"))
        messages.append(ModelResponse(parts=parts))
    pending.append(UserPromptPart("And the next one?"))
    messages.append(ModelRequest(parts=pending))
    tool = ToolDefinition(name="lookup", description="Looks an item up.", parameters_json_schema=PARAMETERS)
    return messages, ModelRequestParameters(function_tools=[tool])


# --- the providers: the SDK client, our transport, pydantic-ai's model ------------------------------------------


def _openai_client(url: str, stamp: _Stamp) -> Any:
    import openai

    return openai.AsyncOpenAI(
        base_url=f"{url}/v1", api_key=KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=stamp)
    )


def _anthropic_client(url: str, stamp: _Stamp) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(
        base_url=url, api_key=KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=stamp)
    )


def _gemini_client(url: str, stamp: _Stamp) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=url,
        httpx_async_client=httpx2.AsyncClient(transport=stamp),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=KEY, http_options=options)


def _chat(client: Any) -> tuple[Any, Any]:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from ai_widgets.transports import OpenAIChatTransport

    return OpenAIChatTransport("gpt-4o", client=client), OpenAIChatModel(
        "gpt-4o", provider=OpenAIProvider(openai_client=client)
    )


def _responses(client: Any) -> tuple[Any, Any]:
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from ai_widgets.transports import OpenAIResponsesTransport

    return OpenAIResponsesTransport("gpt-4o", client=client), OpenAIResponsesModel(
        "gpt-4o", provider=OpenAIProvider(openai_client=client)
    )


def _anthropic(client: Any) -> tuple[Any, Any]:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from ai_widgets.transports import AnthropicTransport

    return AnthropicTransport("claude-sonnet-4-5", client=client), AnthropicModel(
        "claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=client)
    )


def _gemini(client: Any) -> tuple[Any, Any]:
    from ai_widgets.transports import GeminiTransport

    transport = GeminiTransport("gemini-2.5-flash", client=client)
    try:  # pydantic-ai-slim's google extra may be missing: then only ours is measured
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider
    except ImportError as exc:
        return transport, exc
    return transport, GoogleModel("gemini-2.5-flash", provider=GoogleProvider(client=client))


PROVIDERS: list[tuple[str, Callable[[str, _Stamp], Any], Callable[[Any], tuple[Any, Any]]]] = [
    ("OpenAI Chat Completions", _openai_client, _chat),
    ("OpenAI Responses", _openai_client, _responses),
    ("Anthropic Messages", _anthropic_client, _anthropic),
    ("Gemini", _gemini_client, _gemini),
]


# --- measuring ------------------------------------------------------------------------------------------------


async def _through_transport(transport: Any, request: Any) -> None:
    try:
        async for _ in transport.stream(request):
            pass
    except Exception:  # the refusal, as a ProviderError
        pass


async def _through_pydantic_ai(model: Any, conversation: tuple[list[Any], Any]) -> None:
    messages, parameters = conversation
    try:
        async with model.request_stream(messages, None, parameters) as stream:
            async for _ in stream:
                pass
    except Exception:  # the refusal, as pydantic-ai's ModelHTTPError
        pass


def _floor(transport: Any, request: Any) -> float:
    """CPU seconds of our mapping and one serialisation of the body: what sending it cannot cost less than."""
    gc.collect()
    started = time.thread_time()
    json.dumps(transport.request_body(request), ensure_ascii=False, separators=(",", ":"))
    return time.thread_time() - started


async def _cpu(stamp: _Stamp, send: Callable[[Any], Awaitable[None]], conversation: Any) -> float:
    """CPU seconds from ``send(conversation)`` to its request reaching the HTTP transport (the conversation is built
    beforehand, not counted)."""
    gc.collect()
    stamp.at = None
    started = time.thread_time()
    await send(conversation)
    assert stamp.at is not None, "the request never reached the HTTP transport"
    return stamp.at - started


async def _measure_provider(
    name: str,
    missing: dict[str, str | None],
    url: str,
    make_client: Callable[[str, _Stamp], Any],
    make: Callable[[Any], tuple[Any, Any]],
    sizes: tuple[int, ...],
    rounds: int,
) -> dict[tuple[str, int], float]:
    stamp = _Stamp()
    client = make_client(url, stamp)
    transport, model = make(client)
    missing[name] = str(model) if isinstance(model, ImportError) else None
    sides: list[tuple[str, Callable[[Any], Awaitable[None]], Callable[[int], Any]]] = [
        ("ours", lambda request: _through_transport(transport, request), _ours),
    ]
    if not isinstance(model, ImportError):
        sides.append(("theirs", lambda conversation: _through_pydantic_ai(model, conversation), _theirs))
    for _, send, build in sides:  # imports, caches, the connection
        await send(build(sizes[0]))
    best: dict[tuple[str, int], float] = {}
    for _ in range(rounds):
        for n in sizes:
            for side, send, build in sides:
                cpu = await _cpu(stamp, send, build(n))
                best[side, n] = min(best.get((side, n), math.inf), cpu)
            best["floor", n] = min(best.get(("floor", n), math.inf), _floor(transport, _ours(n)))
    aio = getattr(client, "aio", None)
    await (aio.aclose() if aio is not None else client.close())
    return best


def measure(
    sizes: tuple[int, ...], rounds: int
) -> tuple[dict[str, dict[tuple[str, int], float]], dict[str, str | None]]:
    """Per provider, ``{(side, n): fastest CPU seconds}``, side ``"ours"`` or ``"theirs"`` (pydantic-ai, absent
    when its model does not import); and per provider, why pydantic-ai's model did not import (``None``: it did)."""
    results: dict[str, dict[tuple[str, int], float]] = {}
    missing: dict[str, str | None] = {}
    with loopback(_refuse) as server:
        for name, make_client, make in PROVIDERS:
            results[name] = asyncio.run(_measure_provider(name, missing, server.url, make_client, make, sizes, rounds))
    return results, missing


def _exponent(small: float, big: float, ratio: float) -> float:
    return math.log(big / small) / math.log(ratio) if small > 0 and big > 0 else math.nan


def run(*, quick: bool = False) -> str:
    sizes = SIZES[:3] if quick else SIZES
    rounds = 2 if quick else 5
    results, missing = measure(sizes, rounds)
    imported = (
        "pydantic-ai's `GoogleModel` imports and is measured."
        if missing.get("Gemini") is None
        else f"pydantic-ai's `GoogleModel` does not import here ({missing['Gemini']}): Gemini has no comparison."
    )
    lines = [
        "## Request building: kernel CPU per request with a long history",
        "",
        "CPU of the event-loop thread (`time.thread_time`) from the call to the moment the serialised request is "
        "handed to the HTTP client's transport for the loopback server; the same conversation and tool through the "
        f"same SDK; fastest of {rounds}. {imported}",
        "",
        "The floor is our mapping plus one `json.dumps` of the body, without HTTP: what sending it cannot cost less "
        "than.",
        "",
        "| transport | messages | ai_widgets (ms) | floor (ms) | pydantic-ai (ms) | ai_widgets / pydantic-ai |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, best in results.items():
        for n in sizes:
            ours, floor = best["ours", n] * 1e3, best["floor", n] * 1e3
            if ("theirs", n) in best:
                theirs = best["theirs", n] * 1e3
                lines.append(f"| {name} | {n:,} | {ours:.1f} | {floor:.1f} | {theirs:.1f} | {ours / theirs:.3f} |")
            else:
                lines.append(f"| {name} | {n:,} | {ours:.1f} | {floor:.1f} | not importable | – |")
    big, bigger = sizes[-2], sizes[-1]
    lines += [
        "",
        f"Growth exponent k in T ∝ n^k, from {big:,} to {bigger:,} messages (1 is linear):",
        "",
        "| transport | ai_widgets | pydantic-ai |",
        "|---|---:|---:|",
    ]
    for name, best in results.items():
        ours = _exponent(best["ours", big], best["ours", bigger], bigger / big)
        theirs = (
            _exponent(best["theirs", big], best["theirs", bigger], bigger / big)
            if ("theirs", big) in best
            else math.nan
        )
        lines.append(f"| {name} | {ours:.2f} | {theirs:.2f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
