"""Moving a conversation between providers mid-way: each transport sends back only its own provider's data.

End to end, through the real SDKs over loopback servers that replay the recorded streams: a turn on OpenAI's
Responses API (with encrypted reasoning) continues on Anthropic and comes back; a conversation with Anthropic's
signed thinking and server tools continues on Responses and then on Chat Completions. At the request-mapping
level, every direction among the three transports, on histories that carry every provider's data (and a dump
written in format 1). Each request body is checked against the rules its API enforces (roles, block and item
types, signatures and reasoning ids only where that provider issued them, calls paired with their results), and
searched for every foreign provider's data.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from ai_widgets import (
    ChatSession,
    Message,
    ReasoningPart,
    RequestOptions,
    Role,
    ToolCallPart,
    ToolCallState,
    ToolOutcome,
    tool,
)
from ai_widgets.messages import MessageStatus, dump_messages, load_messages
from ai_widgets.transports import AnthropicTransport, ChatRequest, OpenAIChatTransport, OpenAIResponsesTransport
from tests.helpers import wait_for
from tests.providers import histories
from tests.providers.kits import KITS, ProviderKit, expected, recorded
from tests.providers.kits import openai_responses as wire
from tests.providers.kits.anthropic import FAKE_KEY, Emulator, reply_events
from tests.providers.kits.openai_chat import sse_reply
from tests.providers.loopback import Request, Response, loopback

RESPONSES_FIXTURE = "openai_responses_reasoning_text_function_call"
THINKING_FIXTURE = "anthropic_thinking_tool_use"
SERVER_TOOLS_FIXTURE = "anthropic_server_tools_escape_split"


@tool
def get_capital(country: str) -> str:
    """Gets a country's capital.

    Args:
        country: The country.
    """
    return f"The capital of {country} is Spudville."


@tool
def get_temperature(city: str) -> str:
    """The temperature in a city.

    Args:
        city: The city.
    """
    return f"{city}: 21 °C"


# --- what each API accepts ---------------------------------------------------------------------------------------

_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")


def check_anthropic_request(body: dict[str, Any], *, signed: set[str]) -> None:
    """``body`` follows the Messages API's rules; thinking comes back only with a signature in ``signed``."""
    messages = body["messages"]
    assert messages, body
    assert messages[0]["role"] == "user"
    for previous, message in itertools.pairwise(messages):
        assert previous["role"] != message["role"], "roles must alternate"
    for index, message in enumerate(messages):
        assert set(message) == {"role", "content"}
        content = message["content"]
        assert isinstance(content, list)
        assert content, message
        for block in content:
            kind = block.get("type")
            assert isinstance(kind, str), f"a block without a type: {block!r}"
            if message["role"] == "user":
                assert kind in ("text", "tool_result"), block
            else:
                assert kind in ("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use") or (
                    kind.endswith("_tool_result") and kind != "tool_result"
                ), block
            if kind == "text":
                assert set(block) == {"type", "text"}
                assert isinstance(block["text"], str)
                assert block["text"]
            elif kind == "thinking":
                assert set(block) == {"type", "thinking", "signature"}
                assert block["signature"] in signed, "thinking with a signature Anthropic did not issue"
            elif kind == "redacted_thinking":
                assert set(block) == {"type", "data"}
                assert block["data"] in signed
            elif kind in ("tool_use", "server_tool_use"):
                assert set(block) == {"type", "id", "name", "input"}
                assert _TOOL_USE_ID.fullmatch(block["id"]), block["id"]
                assert isinstance(block["input"], dict)
        if message["role"] == "assistant":
            server_ids = [b["id"] for b in content if b["type"] == "server_tool_use"]
            result_ids = [b["tool_use_id"] for b in content if b["type"].endswith("_tool_result")]
            assert server_ids == result_ids, "every server_tool_use needs its result block"
            uses = [b["id"] for b in content if b["type"] == "tool_use"]
            if uses:
                following = messages[index + 1]["content"]
                assert [b.get("tool_use_id") for b in following[: len(uses)]] == uses, "results right after calls"
        else:
            results = [b for b in content if b["type"] == "tool_result"]
            assert content[: len(results)] == results, "tool results come first in their message"
            if results:
                previous_uses = [b["id"] for b in messages[index - 1]["content"] if b["type"] == "tool_use"]
                assert [b["tool_use_id"] for b in results] == previous_uses
                for result in results:
                    assert set(result) <= {"type", "tool_use_id", "content", "is_error"}


def check_responses_request(body: dict[str, Any], *, issued: set[str], store: bool = False) -> None:
    """``body`` follows the Responses API's input rules; reasoning items only with ids in ``issued``."""
    calls: list[str] = []
    outputs: list[str] = []
    for item in body["input"]:
        if "role" in item:
            assert set(item) == {"role", "content"}, item
            assert item["role"] in ("user", "assistant")
            assert isinstance(item["content"], str)
            assert item["content"]
            continue
        kind = item["type"]
        if kind == "function_call":
            assert set(item) == {"type", "call_id", "name", "arguments"}
            assert isinstance(json.loads(item["arguments"]), dict)
            calls.append(item["call_id"])
        elif kind == "function_call_output":
            assert set(item) == {"type", "call_id", "output"}
            assert item["call_id"] == calls[-1], "each output right after its call"
            outputs.append(item["call_id"])
        elif kind == "reasoning":
            assert item["id"] in issued, "a reasoning item OpenAI did not issue"
            assert set(item) <= {"type", "id", "summary", "encrypted_content"}
            assert store or item.get("encrypted_content"), "without store, reasoning needs its encrypted content"
            assert all(s["type"] == "summary_text" and isinstance(s["text"], str) for s in item["summary"])
        else:
            raise AssertionError(f"an input item this API does not take: {item!r}")
    assert calls == outputs, "every function call has its output"


def check_chat_request(body: dict[str, Any]) -> None:
    """``body`` follows Chat Completions' message rules, with no field for reasoning or provider data."""
    messages = body["messages"]
    waiting: list[str] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            assert set(message) == {"role", "tool_call_id", "content"}
            assert waiting, "a tool message answers a call"
            assert message["tool_call_id"] == waiting.pop(0), "tool messages answer the calls in order"
            assert isinstance(message["content"], str)
            continue
        assert not waiting, "every call is answered before the next message"
        if role in ("system", "user"):
            assert set(message) == {"role", "content"}
            assert isinstance(message["content"], str)
        else:
            assert role == "assistant"
            assert set(message) <= {"role", "content", "tool_calls"}
            assert message["content"] is None or (isinstance(message["content"], str) and message["content"])
            calls = message.get("tool_calls") or []
            assert message["content"] is not None or calls
            for call in calls:
                assert set(call) == {"id", "type", "function"}
                assert call["type"] == "function"
                assert set(call["function"]) == {"name", "arguments"}
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
            waiting = [call["id"] for call in calls]
    assert not waiting


def absent(body: dict[str, Any], *texts: str) -> None:
    dumped = json.dumps(body, ensure_ascii=False)
    for text in texts:
        assert text not in dumped, f"{text[:40]!r} must not be sent"


# --- end to end: Responses with reasoning, then Anthropic, then back ------------------------------------------------


def responses_server(script: Callable[[dict[str, Any]], bytes]) -> Callable[[Request], Response]:
    return lambda request: Response(chunks=[script(request.json())])


def text_events(text: str) -> bytes:
    return wire.sse([wire.created(), *wire.message([text], 0), wire.completed()])


def recorded_reasoning_item() -> dict[str, Any]:
    events = wire.sse_events(recorded(RESPONSES_FIXTURE))
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    return next(item for item in done if item["type"] == "reasoning")


async def test_responses_with_reasoning_then_anthropic_then_back() -> None:
    def responses(body: dict[str, Any]) -> bytes:
        if wire.last_outputs(body):
            return text_events("The capital of PotatoLand is Spudville.")
        if len([i for i in body["input"] if i.get("role") == "user"]) == 1:
            return recorded(RESPONSES_FIXTURE)  # the recorded stream: reasoning, text, a call
        return text_events("Still Spudville.")

    anthropic = Emulator(lambda body: reply_events([{"type": "text", "text": "Yes: Spudville."}]))
    item = recorded_reasoning_item()
    with loopback(responses_server(responses)) as openai_server, loopback(anthropic) as anthropic_server:
        session = ChatSession(
            OpenAIResponsesTransport(
                "gpt-5.5", base_url=openai_server.url + "/v1", api_key=FAKE_KEY, reasoning={"effort": "low"}
            ),
            tools=[get_capital],
        )
        first = await session.send("What is the capital of PotatoLand?")
        assert first.status is MessageStatus.COMPLETED, first.error
        reasoning = first.parts[0]
        assert isinstance(reasoning, ReasoningPart)
        assert reasoning.provider == "openai"
        assert reasoning.provider_data == {
            "items": [{"id": item["id"], "encrypted_content": item["encrypted_content"]}]
        }

        session.transport = AnthropicTransport(
            "claude-x",
            base_url=anthropic_server.url,
            api_key=FAKE_KEY,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
        second = await session.send("Are you sure?")
        assert second.status is MessageStatus.COMPLETED, second.error
        assert second.text == "Yes: Spudville."

        session.transport = OpenAIResponsesTransport(
            "gpt-5.5", base_url=openai_server.url + "/v1", api_key=FAKE_KEY, reasoning={"effort": "low"}
        )
        third = await session.send("Thanks.")
        assert third.status is MessageStatus.COMPLETED, third.error

    (body,) = anthropic.bodies
    check_anthropic_request(body, signed=set())
    absent(body, item["id"], item["encrypted_content"])
    call_id = "call_LabG58Uhrq9kZvR52BYKjToD"
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is the capital of PotatoLand?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I’ll check the capital lookup tool for “PotatoLand.”"},
                {"type": "tool_use", "id": call_id, "name": "get_capital", "input": {"country": "PotatoLand"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": "The capital of PotatoLand is Spudville."}
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "The capital of PotatoLand is Spudville."}]},
        {"role": "user", "content": [{"type": "text", "text": "Are you sure?"}]},
    ]

    # Back on Responses, its own reasoning goes back as it came; Anthropic's reply is plain text.
    last = openai_server.requests[-1].json()
    check_responses_request(last, issued={item["id"]})
    assert {"type": "reasoning", "id": item["id"], "summary": [], "encrypted_content": item["encrypted_content"]} in (
        last["input"]
    )
    assert {"role": "assistant", "content": "Yes: Spudville."} in last["input"]


# --- end to end: Anthropic with thinking and server tools, then Responses, then Chat Completions ------------------


async def test_anthropic_thinking_and_server_tools_then_responses_then_chat() -> None:
    answers = iter(
        [
            Response(chunks=[recorded(THINKING_FIXTURE)]),  # thinking and a call of get_temperature
            None,  # the follow-up with the call's result
            Response(chunks=[recorded(SERVER_TOOLS_FIXTURE)]),  # two server tools, their results, text
        ]
    )

    def anthropic_step(body: dict[str, Any]) -> Any:
        return next(answers, None) or reply_events([{"type": "text", "text": "It is 21 °C in Utrecht."}])

    anthropic = Emulator(anthropic_step)
    thinking = expected(THINKING_FIXTURE)["content"][0]
    server = expected(SERVER_TOOLS_FIXTURE)["content"]
    server_ids = [server[0]["id"], server[2]["id"]]
    code_execution = {"type": "code_execution_20250825", "name": "code_execution"}
    with loopback(anthropic) as anthropic_server:
        session = ChatSession(
            AnthropicTransport(
                "claude-x",
                base_url=anthropic_server.url,
                api_key=FAKE_KEY,
                thinking={"type": "enabled", "budget_tokens": 2048},
                server_tools=[code_execution],
            ),
            tools=[get_temperature],
        )
        first = await session.send("How warm is it in Utrecht?")
        assert first.status is MessageStatus.COMPLETED, first.error
        second = await session.send("Make me a CSV file.")
        assert second.status is MessageStatus.COMPLETED, second.error
    calls = [part for part in second.parts if isinstance(part, ToolCallPart)]
    assert [(c.tool_call_id, c.provider_executed, c.provider) for c in calls] == [
        (server_ids[0], True, "anthropic"),
        (server_ids[1], True, "anthropic"),
    ]
    assert calls[1].outcome is not None
    assert calls[1].outcome.value == server[3]["raw"]["content"]  # readable: the output, not the block
    # Anthropic itself gets its own data back (checked as the API would).
    check_anthropic_request(anthropic.bodies[-1], signed={thinking["signature"]})

    def responses(body: dict[str, Any]) -> bytes:
        return text_events("You're welcome.")

    with loopback(responses_server(responses)) as openai_server:
        session.transport = OpenAIResponsesTransport("gpt-5.5", base_url=openai_server.url + "/v1", api_key=FAKE_KEY)
        third = await session.send("Thanks!")
        assert third.status is MessageStatus.COMPLETED, third.error
    body = openai_server.requests[0].json()
    check_responses_request(body, issued=set())
    absent(body, thinking["signature"], thinking["thinking"], *server_ids, "server_tool_use", "signature")
    assert [i.get("type", i.get("role")) for i in body["input"]] == [
        "user",
        "function_call",
        "function_call_output",
        "assistant",
        "user",
        "assistant",  # the text after Anthropic's server tools (the calls themselves are left out)
        "user",
    ]

    chat_bodies: list[dict[str, Any]] = []

    def chat(request: Request) -> Response:
        chat_bodies.append(request.json())
        return Response(chunks=sse_reply(text="Bye."))

    with loopback(chat) as chat_server:
        session.transport = OpenAIChatTransport("gpt-4o", base_url=chat_server.url, api_key=FAKE_KEY)
        fourth = await session.send("Bye.")
        assert fourth.status is MessageStatus.COMPLETED, fourth.error
    (body,) = chat_bodies
    check_chat_request(body)
    absent(body, thinking["signature"], thinking["thinking"], "server_tool_use", "signature", "encrypted")
    # Chat Completions has no server tools: Anthropic's runs are told as calls with their readable results.
    tool_messages = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    assert json.loads(tool_messages[server_ids[1]]) == server[3]["raw"]["content"]
    assert [m["content"] for m in body["messages"] if m["role"] == "user"] == [
        "How warm is it in Utrecht?",
        "Make me a CSV file.",
        "Thanks!",
        "Bye.",
    ]


# --- request mapping, every direction ------------------------------------------------------------------------------

#: Each target (as ``histories`` names the providers): its kit, the model, and the transport's options.
TARGETS: dict[str, tuple[ProviderKit, str, dict[str, Any]]] = {
    "anthropic": (KITS["anthropic"], "claude-x", {"thinking": {"type": "enabled"}}),
    "openai": (KITS["openai_responses"], "gpt-5.5", {}),
    "chat": (KITS["openai_chat"], "gpt-4o", {}),
}
SIGNED = {
    histories.ANTHROPIC_SIGNATURE,
    histories.ANTHROPIC_SIGNATURE + "-2",
    histories.ANTHROPIC_REDACTED,
}


def check_request(target: str, body: dict[str, Any]) -> None:
    if target == "anthropic":
        check_anthropic_request(body, signed=SIGNED)
    elif target == "openai":
        check_responses_request(body, issued={histories.OPENAI_REASONING_ID})
    else:
        check_chat_request(body)


def conversation(source: str) -> list[Message]:
    return [Message.user("How warm is it in Utrecht?"), histories.REPLIES[source](), Message.user("Thanks.")]


def body_for(target: str, messages: list[Message]) -> dict[str, Any]:
    request = ChatRequest(messages, [get_temperature.definition], RequestOptions())
    kit, model, options = TARGETS[target]
    body: dict[str, Any] = kit.transport(model, api_key=kit.key, **options).request_body(request)
    return body


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("source", list(histories.REPLIES))
def test_every_direction_sends_only_the_targets_own_provider_data(source: str, target: str) -> None:
    messages = conversation(source)
    body = body_for(target, messages)
    check_request(target, body)
    for provider, secrets in histories.SECRETS.items():
        if provider != target:
            absent(body, *secrets)
        elif provider == source:
            dumped = json.dumps(body)
            assert all(secret in dumped for secret in secrets), "a transport's own data goes back"
    # Reasoning of another provider is left out, its text too; a transport's own goes back with its text.
    for part in messages[1].parts:
        if isinstance(part, ReasoningPart):
            assert (part.text in json.dumps(body, ensure_ascii=False)) == (part.provider == target != "chat")
    # The text and every local call arrive, whoever made them.
    dumped = json.dumps(body, ensure_ascii=False)
    for part in messages[1].parts:
        if isinstance(part, ToolCallPart) and not part.provider_executed:
            assert part.tool_name in dumped
    assert "Thanks." in dumped
    # A saved and reloaded conversation maps the same.
    assert body_for(target, load_messages(dump_messages(messages))) == body


def test_anthropic_keeps_its_own_blocks_in_order_and_drops_the_rest() -> None:
    messages = [
        Message.user("q"),
        histories.openai_reply(),
        Message.user("And in Utrecht?"),
        histories.anthropic_reply(),
    ]
    body = body_for("anthropic", messages)
    assert [(m["role"], [b["type"] for b in m["content"]]) for m in body["messages"]] == [
        ("user", ["text"]),
        ("assistant", ["text", "tool_use"]),  # OpenAI's reasoning and web search left out
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
        (
            "assistant",
            [
                "thinking",
                "server_tool_use",
                "web_search_tool_result",
                "redacted_thinking",
                "thinking",
                "tool_use",
            ],
        ),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]


def test_a_call_id_anthropic_refuses_is_made_valid_on_both_sides() -> None:
    body = body_for("anthropic", conversation("chat"))
    (use,) = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    (result,) = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert use["id"] == result["tool_use_id"] == "functions_get_temperature_0"


# --- a conversation saved in format 1 (provider data packed into strings) continues anywhere ---------------------


def format_1_dump() -> str:
    """A version-1 dump, made from a version-2 one by packing the provider data as version 1 did: Anthropic's
    signature (or its blocks as a JSON array) and OpenAI's reasoning item (JSON) in the reasoning part's
    ``signature``, and Anthropic's server result block as the call's outcome value."""
    messages = [*conversation("anthropic"), histories.openai_reply(), Message.user("And now?")]
    data = json.loads(dump_messages(messages))
    for message in data["messages"]:
        for part in message["parts"]:
            provider, provider_data = part.pop("provider", None), part.pop("provider_data", None)
            if part["kind"] == "reasoning" and provider == "anthropic":
                part["signature"] = provider_data.get("signature") or json.dumps(provider_data["blocks"])
            elif part["kind"] == "reasoning" and provider == "openai":
                items = provider_data["items"]
                part["signature"] = json.dumps(items[0] if len(items) == 1 else items)
            elif part["kind"] == "tool_call" and provider == "anthropic":
                part["outcome"]["value"] = provider_data["result_block"]
    data["version"] = 1
    return json.dumps(data)


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_format_1_conversation_continues_on_every_transport(target: str) -> None:
    messages = load_messages(format_1_dump())
    body = body_for(target, messages)
    check_request(target, body)
    dumped = json.dumps(body)
    own = {"anthropic": "anthropic", "openai": "openai"}.get(target)
    for provider in ("anthropic", "openai"):
        # (Version 1 kept the raw result block as the outcome value, which a transport tells the model as text.)
        secrets = [s for s in histories.SECRETS[provider] if s != histories.ANTHROPIC_SEARCH_CONTENT]
        assert all((s in dumped) == (provider == own) for s in secrets), provider
    if target == "anthropic":
        assert [b["type"] for b in body["messages"][1]["content"]] == [
            "thinking",
            "server_tool_use",
            "web_search_tool_result",
            "redacted_thinking",
            "thinking",
            "tool_use",
        ]


@pytest.mark.parametrize("target", list(TARGETS))
async def test_a_turn_resumed_after_the_round_limit_is_a_valid_request_for_every_provider(target: str) -> None:
    """Continue after ``max_iterations`` runs the calls the limit left, as new calls in a new reply: every request
    after it pairs each call with one result, in the order each API requires."""
    from ai_widgets import SessionOptions, ToolCallState
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    def model(request: ChatRequest) -> ScriptedReply | str:
        done = [p for m in request.messages for p in m.tool_calls if p.state is ToolCallState.COMPLETED]
        if not done:
            return ScriptedReply(tool_calls=[ScriptedToolCall(name="get_temperature", arguments={"city": "Utrecht"})])
        if len(done) == 1:
            cities = ("Delft", "Leiden")
            return ScriptedReply(
                text="And two more. ",
                tool_calls=[ScriptedToolCall(name="get_temperature", arguments={"city": c}) for c in cities],
            )
        return "It is 21 °C in all three."

    scripted = ScriptedTransport(model)
    session = ChatSession(scripted, tools=[get_temperature], options=SessionOptions(max_iterations=1))
    assert (await session.send("How warm is it?")).status is MessageStatus.LIMIT_REACHED
    resumed = await session.resume()
    assert resumed.text == "It is 21 °C in all three."
    check_request(target, body_for(target, scripted.requests[-1].messages))  # the request the resumed turn made
    check_request(target, body_for(target, [*session.messages, Message.user("Thanks.")]))  # and the next turn's


def steered_conversation() -> list[Message]:
    """A steered turn as the session sends it: the reply's calls with their results, then the message sent during
    that round, then the turn's new reply (empty, in progress)."""
    call = ToolCallPart("call_1", "get_temperature", '{"city": "Utrecht"}', state=ToolCallState.COMPLETED)
    call.outcome = ToolOutcome.success("Utrecht: 21 °C")
    return [
        Message.user("How warm is it in Utrecht?"),
        Message(Role.ASSISTANT, [call]),
        Message.user("Also in Fahrenheit."),
        Message(Role.ASSISTANT, status=MessageStatus.IN_PROGRESS),
    ]


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_steering_message_after_tool_results_makes_a_valid_request(target: str) -> None:
    body = body_for(target, steered_conversation())
    check_request(target, body)
    text = json.dumps(body, ensure_ascii=False)
    assert text.index("21 °C") < text.index("Also in Fahrenheit.")  # the results first, then the message


def test_a_steering_message_after_tool_results_makes_a_valid_gemini_request() -> None:
    request = ChatRequest(steered_conversation(), [get_temperature.definition], RequestOptions())
    kit = KITS["gemini"]
    contents = kit.transport("gemini-2.5-flash", api_key=kit.key).request_body(request)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert "functionCall" in contents[1]["parts"][0]
    assert "functionResponse" in contents[2]["parts"][0]  # the result answers the call right after it
    assert contents[3]["parts"] == [{"text": "Also in Fahrenheit."}]


#: Per kit, a recorded stream whose reply calls a tool.
CALLING = {
    "openai_chat": "openai_chat_parallel_tools_usage",
    "openai_responses": "openai_responses_reasoning_text_function_call",
    "anthropic": "anthropic_text_then_tool_use",
    "gemini": "gemini_function_call_empty_args_thought_signature",
}


@pytest.mark.parametrize("name", list(CALLING))
async def test_a_message_sent_during_a_recorded_tool_round_goes_with_its_results(name: str) -> None:
    kit = KITS[name]
    bodies: list[dict[str, Any]] = []
    release = asyncio.Event()

    async def gated(body: bytes) -> AsyncIterator[bytes]:
        await release.wait()  # the first reply comes once the steering message is queued
        yield body

    def handler(request: httpx2.Request) -> httpx2.Response:
        request.read()
        bodies.append(json.loads(request.content))
        if len(bodies) == 1:
            content: Any = gated(recorded(CALLING[name]))
        else:
            content = b"".join(kit.reply("Noted."))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=content)

    session = ChatSession(kit.mock(handler))  # the recorded tools are not registered: each call fails, told so
    turn = asyncio.create_task(session.send("Start."))
    await wait_for(lambda: len(bodies) == 1)
    steered = asyncio.create_task(session.send("Also in Fahrenheit."))
    await wait_for(lambda: bool(session.queued_messages))
    release.set()
    reply = await turn
    assert await steered is reply
    assert reply.text == "Noted."
    assert len(bodies) == 2
    second = json.dumps(bodies[1], ensure_ascii=False)
    calls = [p for m in session.messages for p in m.tool_calls]
    assert calls
    assert all(p.state is ToolCallState.FAILED for p in calls)  # answered, before the message
    told = second.index("Also in Fahrenheit.")
    assert all(second.index(p.outcome.message or "") < told for p in calls if p.outcome is not None)
    if name == "anthropic":
        check_anthropic_request(bodies[1], signed=set())
    elif name == "openai_chat":
        check_chat_request(bodies[1])
