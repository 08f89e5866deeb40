"""Local servers through OpenAIChatTransport: Ollama and vLLM, each emulated on the loopback the way it really answers
(``local_server_emulators.py`` says what each behaviour is based on).

A whole tool-calling turn with the default local model, the follow-up request carrying the call and its result as each
server needs them, reasoning kept as reasoning, the errors a person meets first (a model or server without tool
calling, a model name the server does not know, a vLLM started with ``--api-key``) as clear turn errors, usage only
when asked for, OpenAI's key never sent, and the quickstart's ``pick_transport`` choosing a server that answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest

from ai_widgets import ChatSession, MessageStatus, RequestOptions, ToolCallState, ToolChoice, tool
from ai_widgets.messages import ReasoningPart, TextPart, ToolCallPart
from ai_widgets.transports import OpenAIChatTransport, default_model
from tests.providers.local_server_emulators import (
    AUTO_TOOL_CHOICE_ERROR,
    OllamaEmulator,
    Turn,
    VLLMEmulator,
    tool_results,
)
from tests.providers.loopback import Handler, Server, loopback

JSON = dict[str, Any]
Emulator = OllamaEmulator | VLLMEmulator
Serve = Callable[[Handler], AbstractContextManager[Server]]

OPENAI_KEY = "sk-" + "test-OPENAI-KEY-MUST-STAY-HOME-1234"
REASONING = "The person asks for the weather in Lisbon; the get_weather tool answers that."

# The servers as a person starts them, for the default local model ``qwen3``:
EMULATORS: dict[str, Callable[[Callable[[JSON], Turn]], Emulator]] = {
    # ollama serve; ollama pull qwen3
    "ollama": lambda reply: OllamaEmulator(reply),
    "ollama-0.32.5": lambda reply: OllamaEmulator(reply, release="0.32.5"),
    # vllm serve Qwen/Qwen3-8B --served-model-name qwen3 --enable-auto-tool-choice --tool-call-parser hermes
    #   --reasoning-parser qwen3
    "vllm": lambda reply: VLLMEmulator(reply, served_model_name="qwen3"),
    "vllm-0.10": lambda reply: VLLMEmulator(reply, served_model_name="qwen3", legacy=True),
    "vllm-llama3_json": lambda reply: VLLMEmulator(reply, served_model_name="qwen3", tool_call_parser="llama3_json"),
}
# The tool-call ids each server makes (Ollama: ``toolCallId``; vLLM: ``make_tool_call_id``).
CALL_IDS = {OllamaEmulator: r"call_[a-z0-9]{8}", VLLMEmulator: r"chatcmpl-tool-[0-9a-f]{32}"}


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenAI's key is set, as on a developer's machine: it must never reach a local server.
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for name in ("OPENAI_BASE_URL", "AI_WIDGETS_MODEL", "AI_WIDGETS_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def _shared_server() -> Iterator[tuple[Server, dict[str, Handler]]]:
    # One loopback server for the module: starting and stopping one costs about half a second.
    holder: dict[str, Handler] = {}
    with loopback(lambda request: holder["handler"](request)) as server:
        yield server, holder


@pytest.fixture
def serve(_shared_server: tuple[Server, dict[str, Handler]]) -> Serve:
    """Serves a handler on the module's loopback server for one test."""
    server, holder = _shared_server

    @contextmanager
    def serving(handler: Handler) -> Iterator[Server]:
        holder["handler"] = handler
        server.requests.clear()
        yield server

    return serving


@tool
def get_weather(city: str) -> JSON:
    """Gets the weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny", "celsius": 21}


@tool
def lookup(query: str) -> str:
    """Looks a phrase up in the notes.

    Args:
        query: What to look up.
    """
    return f"found: {query}"


def weather_model(body: JSON) -> Turn:
    """Calls get_weather for Lisbon; answers from the result once it has one."""
    results = tool_results(body)
    if results:
        weather = json.loads(results[0]["content"])
        return Turn(text=f"It is {weather['sky']} in {weather['city']}, {weather['celsius']} °C.")
    return Turn(reasoning=REASONING, calls=[("get_weather", {"city": "Lisbon"})])


def local_transport(server: Server, **options: Any) -> OpenAIChatTransport:
    return OpenAIChatTransport(default_model("openai-compatible"), base_url=server.url + "/v1", **options)


def sse_payloads(stream: bytes) -> list[JSON]:
    return [json.loads(line[6:]) for line in stream.decode().splitlines() if line.startswith("data: {")]


def reported_usage(emulator: Emulator) -> tuple[int, int]:
    """The prompt and completion tokens the server reported over all its answers."""
    usages = [p["usage"] for stream in emulator.streams for p in sse_payloads(stream) if p.get("usage")]
    return sum(u["prompt_tokens"] for u in usages), sum(u["completion_tokens"] for u in usages)


def assert_no_openai_key_sent(server: Server) -> None:
    for request in server.requests:
        assert OPENAI_KEY not in json.dumps(request.headers)
        if request.method == "POST":
            assert request.headers["authorization"] == "Bearer not-needed"  # the placeholder a local server ignores


# --- 1. a whole tool-calling turn -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(EMULATORS))
async def test_a_tool_calling_turn(kind: str, serve: Serve) -> None:
    emulator = EMULATORS[kind](weather_model)
    with serve(emulator) as server:
        session = ChatSession(local_transport(server), tools=[get_weather])
        reply = await session.send("What's the weather in Lisbon?")

    assert reply.status is MessageStatus.COMPLETED, reply.error
    reasoning, call, text = reply.parts
    assert isinstance(reasoning, ReasoningPart)  # reasoning is shown as reasoning, never as the answer
    assert reasoning.text == REASONING
    assert isinstance(call, ToolCallPart)
    assert call.state is ToolCallState.COMPLETED
    assert re.fullmatch(CALL_IDS[type(emulator)], call.tool_call_id)  # the server's own id, kept
    assert call.parsed_arguments == {"city": "Lisbon"}
    assert isinstance(text, TextPart)
    assert reply.text == "It is sunny in Lisbon, 21 °C."
    assert reply.usage.requests == 2
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == reported_usage(emulator)

    # Both requests asked for the default local model, with the tool, and usage in the stream.
    first, second = emulator.bodies
    assert first["model"] == second["model"] == "qwen3"
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert first["stream_options"] == {"include_usage": True}
    # The follow-up carries the call as the server sent it and its result under the same id ...
    user, assistant, result = second["messages"]
    assert user == {"role": "user", "content": "What's the weather in Lisbon?"}
    assert assistant["role"] == "assistant"
    assert assistant["content"] is None
    (sent,) = assistant["tool_calls"]
    assert sent["id"] == call.tool_call_id
    assert sent["type"] == "function"
    assert sent["function"]["name"] == "get_weather"
    assert json.loads(sent["function"]["arguments"]) == {"city": "Lisbon"}
    assert result == {
        "role": "tool",
        "tool_call_id": call.tool_call_id,
        "content": '{"city":"Lisbon","sky":"sunny","celsius":21}',
    }
    # ... and the server read them as the model needs them.
    seen = emulator.seen[1]
    if isinstance(emulator, OllamaEmulator):
        # Ollama shows the model the result under the tool's name, found from the tool_call_id.
        assert seen[1]["tool_calls"] == [{"function": {"name": "get_weather", "arguments": {"city": "Lisbon"}}}]
        assert seen[2]["tool_name"] == "get_weather"
        assert seen[2]["content"] == result["content"]
    else:
        # vLLM hands the chat template the arguments as an object, and the result with its tool_call_id.
        assert seen[1]["tool_calls"][0]["function"]["arguments"] == {"city": "Lisbon"}
        assert seen[2]["tool_call_id"] == call.tool_call_id
    assert_no_openai_key_sent(server)


@pytest.mark.parametrize("kind", ["ollama", "vllm"])
async def test_parallel_calls_stay_one_response(kind: str, serve: Serve) -> None:
    def two_cities(body: JSON) -> Turn:
        if tool_results(body):
            return Turn(text="Both sunny.")
        return Turn(calls=[("get_weather", {"city": "Lisbon"}), ("get_weather", {"city": "Oslo"})])

    emulator = EMULATORS[kind](two_cities)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Lisbon and Oslo?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert [c.parsed_arguments["city"] for c in reply.tool_calls] == ["Lisbon", "Oslo"]
    assert reply.text == "Both sunny."
    roles = [m["role"] for m in emulator.bodies[1]["messages"]]
    assert roles == ["user", "assistant", "tool", "tool"]  # one response with two calls, then both results


async def test_ollama_go_escaped_arguments_arrive_as_written(serve: Serve) -> None:
    phrase = "R&D <2026> & more"

    def look_up(body: JSON) -> Turn:
        results = tool_results(body)
        return Turn(text=results[0]["content"]) if results else Turn(calls=[("lookup", {"query": phrase})])

    emulator = OllamaEmulator(look_up)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[lookup]).send("look it up")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "R\\\\u0026D \\\\u003c2026\\\\u003e" in emulator.streams[0].decode()  # Go's escaping, on the wire
    assert reply.tool_calls[0].parsed_arguments == {"query": phrase}
    assert reply.text == f"found: {phrase}"
    assert emulator.seen[1][1]["tool_calls"][0]["function"]["arguments"] == {"query": phrase}


async def test_vllm_without_a_reasoning_parser_sends_thinking_as_text(serve: Serve) -> None:
    emulator = VLLMEmulator(weather_model, served_model_name="qwen3", reasoning_parser=None)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.reasoning == ""
    assert reply.text.startswith(f"<think>\n{REASONING}\n</think>")  # why the notebook says --reasoning-parser


@pytest.mark.parametrize("kind", ["ollama", "vllm"])
async def test_usage_comes_only_when_asked_for(kind: str, serve: Serve) -> None:
    emulator = EMULATORS[kind](weather_model)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server, stream_usage=False), tools=[get_weather]).send("Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "stream_options" not in emulator.bodies[0]
    assert reported_usage(emulator) == (0, 0)
    assert reply.usage.requests == 2
    assert reply.usage.input_tokens == 0


# --- 2. the errors a person meets first -------------------------------------------------------------------------------


async def test_ollama_model_without_tool_calling_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, serve: Serve
) -> None:
    monkeypatch.setenv("AI_WIDGETS_MODEL", "gemma3")  # pulled, but it cannot call tools
    emulator = OllamaEmulator(weather_model)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
        assert reply.status is MessageStatus.ERROR
        error = reply.error or ""
        assert "refused the request (400)" in error
        assert "registry.ollama.ai/library/gemma3:latest does not support tools" in error  # Ollama's own words
        assert "The model 'gemma3' cannot call tools: pick one that can (e.g. `ollama pull qwen3`" in error
        assert reply.tool_calls == []
        assert emulator.bodies == []
        # The way out the message offers: the same model without tools.
        plain = ChatSession(
            local_transport(server), tools=[get_weather], request_options=RequestOptions(tool_choice=ToolChoice.NONE)
        )
        emulator.reply = lambda body: Turn(text="I can't look that up.")
        answered = await plain.send("Weather in Lisbon?")
    assert answered.status is MessageStatus.COMPLETED, answered.error
    assert "tools" not in emulator.bodies[0]
    assert_no_openai_key_sent(server)


@pytest.mark.parametrize("legacy", [False, True], ids=["vllm", "vllm-0.10"])
async def test_vllm_without_auto_tool_choice_is_a_clear_error(legacy: bool, serve: Serve) -> None:
    emulator = VLLMEmulator(weather_model, served_model_name="qwen3", enable_auto_tool_choice=False, legacy=legacy)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
    assert reply.status is MessageStatus.ERROR
    error = reply.error or ""
    assert f"refused the request (400). {AUTO_TOOL_CHOICE_ERROR}" in error  # either body shape gives the message
    assert "For the model 'qwen3' to call tools, start vLLM with --enable-auto-tool-choice --tool-call-parser" in error
    assert "hermes for Qwen" in error
    assert emulator.bodies == []
    assert_no_openai_key_sent(server)


@pytest.mark.parametrize(
    ("kind", "server_says", "right_name"),
    [
        ("ollama", "model 'qwen3' not found", "llama3.2"),
        ("vllm", "The model `qwen3` does not exist.", "Qwen/Qwen3-8B"),
    ],
)
async def test_a_model_the_server_lacks_is_a_clear_error(
    kind: str, server_says: str, right_name: str, monkeypatch: pytest.MonkeyPatch, serve: Serve
) -> None:
    # Ollama without `ollama pull qwen3`; vLLM serving Qwen/Qwen3-8B under its own name (no --served-model-name).
    if kind == "ollama":
        emulator: Emulator = OllamaEmulator(weather_model, models={"llama3.2:latest": frozenset({"tools"})})
    else:
        emulator = VLLMEmulator(weather_model)
    with serve(emulator) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
        assert reply.status is MessageStatus.ERROR
        assert "not found (404), often a wrong model name or base_url" in (reply.error or "")
        assert server_says in (reply.error or "")
        # AI_WIDGETS_MODEL names the model the server has.
        monkeypatch.setenv("AI_WIDGETS_MODEL", right_name)
        fixed = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
    assert fixed.status is MessageStatus.COMPLETED, fixed.error
    assert emulator.bodies[0]["model"] == right_name


async def test_vllm_with_api_key_needs_that_key(serve: Serve) -> None:
    emulator = VLLMEmulator(weather_model, served_model_name="qwen3", api_key="local-" + "SECRET-TOKEN-42")
    with serve(emulator) as server:
        refused = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
        assert refused.status is MessageStatus.ERROR
        # vLLM's body is {"error": "Unauthorized"}; the status says it all.
        assert "rejected the API key (401): check api_key=." in (refused.error or "")
        assert_no_openai_key_sent(server)
        keyed = local_transport(server, api_key="local-" + "SECRET-TOKEN-42")
        reply = await ChatSession(keyed, tools=[get_weather]).send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert "SECRET" not in (refused.error or "") + repr(keyed)


async def test_openai_account_ids_stay_home_too(monkeypatch: pytest.MonkeyPatch, serve: Serve) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-" + "ACCOUNT-ID")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_" + "ACCOUNT-ID")
    with serve(OllamaEmulator(weather_model)) as server:
        reply = await ChatSession(local_transport(server), tools=[get_weather]).send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert_no_openai_key_sent(server)
    assert all("ACCOUNT-ID" not in json.dumps(request.headers) for request in server.requests)


# --- 3. the quickstart's choice of provider ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["ollama", "vllm"])
async def test_pick_transport_chooses_a_local_server_that_answers(
    kind: str, monkeypatch: pytest.MonkeyPatch, serve: Serve
) -> None:
    from ai_widgets.demo import pick_transport

    emulator = EMULATORS[kind](weather_model)
    with serve(emulator) as server:
        monkeypatch.setenv("AI_WIDGETS_BASE_URL", server.url + "/v1")
        transport, which = pick_transport()  # OPENAI_API_KEY is set too: the local server still wins
        assert isinstance(transport, OpenAIChatTransport)
        assert which == (
            f"Using the OpenAI-compatible server at {server.url}/v1 (model qwen3), from AI_WIDGETS_BASE_URL."
        )
        reply = await ChatSession(transport, tools=[get_weather]).send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    probe = server.requests[0]
    assert (probe.method, probe.path) == ("GET", "/v1/models")  # is it up? asked without any key
    assert "authorization" not in probe.headers
    assert [r.path for r in server.requests[1:]] == ["/v1/chat/completions"] * 2
    assert_no_openai_key_sent(server)
    assert OPENAI_KEY not in which
