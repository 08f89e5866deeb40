"""What a reply costs, through each real transport on the recorded streams served over a loopback server: exactly
genai-prices' own figure for the tokens the provider reported (genai-prices reads the recorded usage itself, with
``extract_usage``), cache reads and writes at their prices; the provider each transport prices by; and the request
bodies ``RequestOptions(cache=True)`` sends, checked against the shapes the providers document."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import genai_prices
import pytest

from ai_widgets import ChatSession, RequestOptions, SessionOptions, tool
from ai_widgets.transports import AnthropicTransport, GeminiTransport, OpenAIChatTransport, OpenAIResponsesTransport
from tests.providers.kits import KITS, recorded
from tests.providers.loopback import Request, Response, loopback

JSON = dict[str, Any]


def events_of(body: bytes) -> list[JSON]:
    """The JSON of each ``data:`` line of a recorded stream."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data:"):
            with contextlib.suppress(ValueError):  # [DONE]
                out.append(json.loads(line[5:]))
    return out


def rewritten(body: bytes, change: Callable[[JSON], None]) -> bytes:
    """The recorded stream with ``change`` applied to the JSON of each ``data:`` line (the framing as recorded)."""
    lines = []
    for line in body.decode().splitlines():
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            data = json.loads(line[5:])
            change(data)
            line = "data: " + json.dumps(data)
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


# How genai-prices reads each API's usage: the response object its extractor takes, built from the stream's events.
def chat_response(events: list[JSON]) -> tuple[JSON, str, str]:
    return [e for e in events if e.get("usage")][-1], "chat", "openai"


def responses_response(events: list[JSON]) -> tuple[JSON, str, str]:
    return [e for e in events if e.get("type") == "response.completed"][-1]["response"], "responses", "openai"


def anthropic_response(events: list[JSON]) -> tuple[JSON, str, str]:
    message = dict(next(e for e in events if e.get("type") == "message_start")["message"])
    usage = dict(message["usage"])
    for event in events:
        if event.get("type") == "message_delta":
            usage |= {key: value for key, value in event["usage"].items() if value is not None}
    return message | {"usage": usage}, "default", "anthropic"


def gemini_response(events: list[JSON]) -> tuple[JSON, str, str]:
    return [e for e in events if e.get("usageMetadata", {}).get("promptTokenCount")][-1], "default", "google"


def genai_prices_figure(events: list[JSON], read: Callable[[list[JSON]], tuple[JSON, str, str]]) -> Decimal:
    response, flavor, provider = read(events)
    extracted = genai_prices.extract_usage(response, provider_id=provider, api_flavor=flavor)
    return extracted.calc_price().total_price


# A recorded reply per transport whose provider genai-prices prices, and the transport's own kit.
PRICED = [
    ("openai_chat", "openai_chat_parallel_tools_usage", chat_response, "openai"),
    ("openai_chat", "openai_chat_parallel_mixed_empty_args", chat_response, "openai"),
    ("openai_chat", "openai_chat_refusal", chat_response, "openai"),
    ("openai_responses", "openai_responses_reasoning_text_function_call", responses_response, "openai"),
    ("anthropic", "anthropic_text_then_tool_use", anthropic_response, "anthropic"),
    ("anthropic", "anthropic_thinking_tool_use", anthropic_response, "anthropic"),
    ("anthropic", "anthropic_tool_use_no_args", anthropic_response, "anthropic"),
    ("anthropic", "anthropic_server_tools_escape_split", anthropic_response, "anthropic"),
    ("gemini", "gemini_function_call_empty_args_thought_signature", gemini_response, "google"),
    ("gemini", "vertex_gemini_partial_args_multi_call", gemini_response, "google"),
]


def with_cache_hits(kit: str) -> Callable[[JSON], None]:
    """Puts cache reads (and for Anthropic cache writes) into a recorded reply's usage, as each API reports them."""

    def change(data: JSON) -> None:
        if kit == "openai_chat" and data.get("usage"):
            data["usage"]["prompt_tokens"] += 2048
            data["usage"]["prompt_tokens_details"] = {"cached_tokens": 1920}
        elif kit == "openai_responses" and data.get("type") == "response.completed":
            data["response"]["usage"]["input_tokens"] += 2048
            data["response"]["usage"]["input_tokens_details"]["cached_tokens"] = 1920
        elif kit == "anthropic" and data.get("type") == "message_start":
            data["message"]["usage"] |= {"cache_read_input_tokens": 1920, "cache_creation_input_tokens": 1100}
        elif kit == "anthropic" and data.get("type") == "message_delta" and "input_tokens" in data["usage"]:
            data["usage"] |= {"cache_read_input_tokens": 1920, "cache_creation_input_tokens": 1100}
        elif kit == "gemini" and data.get("usageMetadata", {}).get("promptTokenCount"):
            data["usageMetadata"]["promptTokenCount"] += 2048
            data["usageMetadata"]["cachedContentTokenCount"] = 1920

    return change


async def reply_to(kit: str, body: bytes, provider: str | None) -> Any:
    """The reply a session gets from ``kit``'s transport when the loopback server answers with ``body``."""
    with loopback(lambda request: Response(chunks=[body])) as server:
        transport = KITS[kit].make(server.url)
        transport.price_provider = provider  # the loopback URL is no provider's: say whose API it stands for
        session = ChatSession(transport, options=SessionOptions(execute_tools=False))
        return await session.send("What is the weather like?")


@pytest.mark.parametrize(("kit", "name", "read", "provider"), PRICED, ids=[p[1] for p in PRICED])
async def test_a_replys_cost_is_genai_prices_figure_for_the_recorded_usage(
    kit: str, name: str, read: Callable[[list[JSON]], tuple[JSON, str, str]], provider: str
) -> None:
    body = recorded(name)
    reply = await reply_to(kit, body, provider)
    expected = genai_prices_figure(events_of(body), read)
    assert expected > 0
    assert reply.usage.cost == expected  # exactly: Decimal, unrounded
    assert isinstance(reply.usage.cost, Decimal)


@pytest.mark.parametrize(("kit", "name", "read", "provider"), PRICED[::3], ids=[p[1] for p in PRICED[::3]])
async def test_cached_and_cache_written_tokens_are_priced_at_the_caches_prices(
    kit: str, name: str, read: Callable[[list[JSON]], tuple[JSON, str, str]], provider: str
) -> None:
    body = rewritten(recorded(name), with_cache_hits(kit))
    reply = await reply_to(kit, body, provider)
    expected = genai_prices_figure(events_of(body), read)
    assert reply.usage.cost == expected
    assert reply.usage.cached_tokens == 1920
    assert reply.usage.cache_write_tokens == (1100 if kit == "anthropic" else 0)
    # The cache's price is not the plain input price: the same tokens uncached cost something else.
    plain = await reply_to(kit, rewritten(body, lambda data: _uncached(kit, data)), provider)
    assert plain.usage.input_tokens == reply.usage.input_tokens
    assert plain.usage.cost != reply.usage.cost


def _uncached(kit: str, data: JSON) -> None:
    """The same prompt, all of it plain input (cache reads and writes moved to ``input_tokens``)."""
    if kit == "anthropic":
        usage = data.get("message", {}).get("usage") if data.get("type") == "message_start" else data.get("usage")
        if isinstance(usage, dict) and "cache_read_input_tokens" in usage:
            usage["input_tokens"] += usage.pop("cache_read_input_tokens") + usage.pop("cache_creation_input_tokens")
    elif kit == "openai_chat" and data.get("usage"):
        data["usage"]["prompt_tokens_details"] = {"cached_tokens": 0}
    elif kit == "openai_responses" and data.get("type") == "response.completed":
        data["response"]["usage"]["input_tokens_details"]["cached_tokens"] = 0
    elif kit == "gemini" and "usageMetadata" in data:
        data["usageMetadata"].pop("cachedContentTokenCount", None)


async def test_a_model_or_provider_genai_prices_does_not_know_has_no_price() -> None:
    # Qwen on DashScope: genai-prices has no such provider, so the reply's tokens are counted and its cost unknown.
    reply = await reply_to("openai_chat", recorded("qwen_chat_tool_call_empty_id_deltas"), None)
    assert reply.usage.input_tokens == 295
    assert reply.usage.cost is None
    # A known provider, a model it has no price for.
    renamed = rewritten(recorded("openai_chat_refusal"), lambda data: data.update(model="no-such-model-7"))
    assert (await reply_to("openai_chat", renamed, "openai")).usage.cost is None


def test_each_transport_prices_by_the_provider_at_its_url() -> None:
    def chat(url: str | None) -> str | None:
        return OpenAIChatTransport("m", base_url=url, api_key="k").price_provider

    assert chat(None) == "openai"
    assert chat("https://api.groq.com/openai/v1") == "groq"
    assert chat("https://api.deepseek.com") == "deepseek"
    assert chat("https://openrouter.ai/api/v1") == "openrouter"
    assert chat("https://dashscope-intl.aliyuncs.com/compatible-mode/v1") is None  # not in genai-prices
    assert chat("http://localhost:11434/v1") is None  # Ollama, a local server
    assert chat("https://ollama.com/v1") is None
    assert OpenAIResponsesTransport("m", api_key="k").price_provider == "openai"
    assert AnthropicTransport("m", api_key="k").price_provider == "anthropic"
    assert AnthropicTransport("m", api_key="k", base_url="http://127.0.0.1:9/proxy").price_provider is None
    assert GeminiTransport("m", api_key="k").price_provider == "google"


# --- RequestOptions(cache=True): the request bodies --------------------------------------------------------------


@tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"{city}: sunny"


async def cached_requests(kit: str, *, cache: bool, provider: str | None = None) -> tuple[list[JSON], str]:
    """The JSON bodies of a two-turn conversation's requests with ``cache``, and the conversation's id."""

    def answer(request: Request) -> Response:
        return Response(chunks=KITS[kit].reply("Sunny."))

    with loopback(answer) as server:
        transport = KITS[kit].make(server.url)
        if provider is not None:
            transport.price_provider = provider
        session = ChatSession(
            transport,
            tools=[get_weather],
            request_options=RequestOptions(cache=cache, system_prompt="Be brief."),
        )
        await session.send("Weather in Utrecht?")
        await session.send("And in Delft?")
        bodies = [request.json() for request in server.requests]
    return bodies, session.conversation_id


def breakpoints(value: Any) -> list[Any]:
    """Every ``cache_control`` in a body, wherever it is."""
    if isinstance(value, dict):
        found = [value["cache_control"]] if "cache_control" in value else []
        return found + [mark for item in value.values() for mark in breakpoints(item)]
    if isinstance(value, list):
        return [mark for item in value for mark in breakpoints(item)]
    return []


async def test_anthropic_marks_the_tools_the_system_prompt_and_the_last_message_for_the_cache() -> None:
    bodies, _ = await cached_requests("anthropic", cache=True)
    ephemeral = {"type": "ephemeral"}
    for body in bodies:
        # docs.anthropic.com, prompt caching: cache_control on a tool caches the tools up to it, on a system text
        # block the system prompt, on a message's content block the conversation up to it; at most four.
        assert body["tools"][-1]["cache_control"] == ephemeral
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}]
        last = body["messages"][-1]
        assert last["role"] == "user"
        assert last["content"][-1]["cache_control"] == ephemeral
        assert len(breakpoints(body)) == 3 <= 4
    assert bodies[-1]["messages"][-1]["content"][-1]["text"] == "And in Delft?"
    assert len(bodies[-1]["messages"]) == 3  # the first turn went before it, uncached blocks of its own
    plain, _ = await cached_requests("anthropic", cache=False)
    assert all(breakpoints(body) == [] for body in plain)
    assert plain[0]["system"] == "Be brief."


@pytest.mark.parametrize("kit", ["openai_chat", "openai_responses"])
async def test_openai_sends_the_conversation_as_its_prompt_cache_key(kit: str) -> None:
    bodies, conversation_id = await cached_requests(kit, cache=True, provider="openai")
    # developers.openai.com/docs/guides/prompt-caching: prompt_cache_key, a string, top level in the body.
    assert [body["prompt_cache_key"] for body in bodies] == [conversation_id] * len(bodies)
    assert conversation_id
    plain, _ = await cached_requests(kit, cache=False, provider="openai")
    assert all("prompt_cache_key" not in body for body in plain)


@pytest.mark.parametrize("kit", ["openai_chat", "openai_responses"])
async def test_a_compatible_server_that_may_refuse_the_field_gets_no_prompt_cache_key(kit: str) -> None:
    bodies, _ = await cached_requests(kit, cache=True)  # a local server: no known provider
    assert all("prompt_cache_key" not in body for body in bodies)


async def test_groq_gets_no_prompt_cache_key() -> None:
    groq, _ = await cached_requests("openai_chat", cache=True, provider="groq")
    assert all("prompt_cache_key" not in body for body in groq)


async def test_gemini_caches_implicitly_and_the_body_is_the_same() -> None:
    cached, _ = await cached_requests("gemini", cache=True)
    plain, _ = await cached_requests("gemini", cache=False)
    assert cached == plain
    assert breakpoints(cached) == []
