"""AnthropicTransport: recorded streams through the real SDK, the request mapping, and tool flows end to end.

What every transport does the same way (timeouts, connections, HTTP errors, keys, how a stream ends, Stop) is in
``test_contract.py``, and this transport's quirks in ``test_anthropic_quirks.py``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai_widgets import (
    ChatSession,
    FinishReason,
    Message,
    ReasoningPart,
    RequestOptions,
    SessionOptions,
    TextPart,
    ToolCallPart,
    ToolCallState,
    ToolChoice,
    ToolOutcome,
    ToolRisk,
    tool,
)
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, Role
from ai_widgets.transports import AnthropicTransport, ChatRequest
from tests.helpers import wait_for
from tests.providers.histories import finished_call
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.kits import Recording, expected, recorded
from tests.providers.kits.anthropic import (
    FAKE_KEY,
    FIXTURES,
    Emulator,
    MockAPI,
    anthropic_messages,
    reply_events,
    sse,
    tool_results,
)
from tests.providers.loopback import loopback

STOP_REASONS = {"end_turn": FinishReason.STOP, "tool_use": FinishReason.TOOL_CALLS}


# --- recorded streams -------------------------------------------------------------------------------------------------


def check_events(events: list[Any], want: dict[str, Any]) -> None:
    """The events say what the recorded stream says, block by block, in order."""
    assert isinstance(events[0], ResponseStarted)
    assert isinstance(events[-1], ResponseCompleted)
    assert events[-1].finish_reason is STOP_REASONS[want["stop_reason"]]
    assert sum(isinstance(e, ResponseCompleted) for e in events) == 1
    body = events[1:-1]
    usage = [e for e in body if isinstance(e, UsageUpdate)]
    u = want["usage"]
    assert usage[-1] == UsageUpdate(
        input_tokens=u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"],
        output_tokens=u["output_tokens"],
        cached_tokens=u["cache_read_input_tokens"],
        reasoning_tokens=u.get("output_tokens_details", {}).get("thinking_tokens", 0),
    )
    content = [e for e in body if not isinstance(e, UsageUpdate)]
    position = 0
    for block in want["content"]:
        kind = block["type"]
        if kind == "text":
            texts = []
            while position < len(content) and isinstance(content[position], TextDelta):
                texts.append(content[position].text)
                position += 1
            assert "".join(texts) == block["text"]
            assert all(texts)
        elif kind == "thinking":
            run = []
            while position < len(content) and isinstance(content[position], ReasoningDelta):
                run.append(content[position])
                position += 1
            assert "".join(e.text for e in run) == block["thinking"]
            assert [(e.provider, e.provider_data) for e in run if e.provider_data is not None] == [
                ("anthropic", {"signature": block["signature"]})
            ]
        elif kind in ("tool_use", "server_tool_use"):
            started = content[position]
            assert started == ToolCallStarted(block["id"], block["name"], provider_executed=kind == "server_tool_use")
            position += 1
            if kind == "server_tool_use":  # the status line says what the server tool does, until its result
                assert isinstance(content[position], StatusUpdate)
                assert content[position].text.endswith("…")
                position += 1
            deltas = []
            while isinstance(content[position], ToolCallDelta):
                assert content[position].tool_call_id == block["id"]
                deltas.append(content[position].delta)
                position += 1
            assert all(deltas)
            assert "".join(deltas) == (block["input_json_raw"] or "{}")
            assert len(deltas) == max(block["non_empty_json_deltas"], 1)
            assert content[position] == ToolCallArgumentsDone(block["id"])
            position += 1
        else:  # a provider-run tool's result
            result = content[position]
            assert isinstance(result, ProviderToolResult)
            assert result.tool_call_id == block["raw"]["tool_use_id"]
            assert result.outcome.ok
            # The block goes back to the API from the provider data; the outcome is its content, for people.
            assert (result.provider, result.provider_data) == ("anthropic", {"result_block": block["raw"]})
            assert result.outcome.value == block["raw"]["content"]
            position += 1
    assert position == len(content)


def check_message(reply: Message, want: dict[str, Any]) -> None:
    """The finished reply holds the recorded blocks as parts (a result block lands on its call)."""
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.finish_reason is STOP_REASONS[want["stop_reason"]]
    blocks = [b for b in want["content"] if not b["type"].endswith("_tool_result")]
    results = {b["raw"]["tool_use_id"]: b["raw"] for b in want["content"] if b["type"].endswith("_tool_result")}
    assert len(reply.parts) == len(blocks)
    for part, block in zip(reply.parts, blocks, strict=True):
        match block["type"]:
            case "text":
                assert isinstance(part, TextPart)
                assert part.text == block["text"]
            case "thinking":
                assert isinstance(part, ReasoningPart)
                assert (part.text, part.provider) == (block["thinking"], "anthropic")
                assert part.provider_data == {"signature": block["signature"]}
            case "tool_use" | "server_tool_use":
                assert isinstance(part, ToolCallPart)
                assert (part.tool_call_id, part.tool_name) == (block["id"], block["name"])
                assert part.parsed_arguments == block["input"]
                assert part.arguments == (block["input_json_raw"] or "{}")
                if block["type"] == "server_tool_use":
                    assert part.provider_executed
                    assert part.state is ToolCallState.COMPLETED
                    assert part.outcome is not None
                    assert part.outcome.value == results[block["id"]]["content"]
                    assert (part.provider, part.provider_data) == ("anthropic", {"result_block": results[block["id"]]})
                else:
                    assert not part.provider_executed
                    assert part.state is ToolCallState.PENDING  # execute_tools=False: left to the caller
    u = want["usage"]
    assert reply.usage.input_tokens == u["input_tokens"] + u["cache_read_input_tokens"]
    assert reply.usage.output_tokens == u["output_tokens"]
    assert reply.usage.reasoning_tokens == u.get("output_tokens_details", {}).get("thinking_tokens", 0)


@pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])
@pytest.mark.parametrize("name", FIXTURES)
async def test_recorded_stream(name: str, chunk_size: int | None) -> None:
    api = MockAPI(recorded(name), chunk_size=chunk_size)
    recording = Recording(api.transport())
    session = ChatSession(recording, options=SessionOptions(execute_tools=False))
    reply = await session.send("hi")
    want = expected(name)
    check_events(recording.events, want)
    check_message(reply, want)
    assert api.bodies[0]["stream"] is True


async def test_thinking_block_goes_back_with_its_signature() -> None:
    @tool
    def get_temperature(city: str) -> str:
        """The temperature in a city."""
        return f"{city}: 21 °C"

    done = sse(reply_events([{"type": "text", "text": "It is 21 °C in Utrecht."}]))
    api = MockAPI(recorded("anthropic_thinking_tool_use"), done, chunk_size=1)
    thinking = {"type": "enabled", "budget_tokens": 2048}
    session = ChatSession(api.transport(thinking=thinking), tools=[get_temperature])
    reply = await session.send("How warm is it in Utrecht?")
    assert reply.text == "It is 21 °C in Utrecht."
    want = expected("anthropic_thinking_tool_use")["content"]
    second = api.bodies[1]
    assert second["thinking"] == thinking
    assert second["tool_choice"] == {"type": "auto"}
    assert second["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "How warm is it in Utrecht?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": want[0]["thinking"], "signature": want[0]["signature"]},
                {"type": "tool_use", "id": want[1]["id"], "name": "get_temperature", "input": {"city": "Utrecht"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": want[1]["id"], "content": "Utrecht: 21 °C"}],
        },
    ]


@pytest.mark.parametrize("name", ["anthropic_text_then_tool_use", "anthropic_tool_use_no_args"])
async def test_follow_up_pairs_every_call_with_its_result(name: str) -> None:
    calls: list[dict[str, Any]] = []

    @tool
    def get_weather(location: str) -> dict[str, str]:
        """The weather."""
        calls.append({"location": location})
        return {"sky": "sunny"}

    @tool(name="updateIssueList")
    def update_issue_list() -> str:
        """Refreshes the issue list."""
        calls.append({})
        return "updated"

    api = MockAPI(recorded(name), sse(reply_events([{"type": "text", "text": "Done."}])))
    session = ChatSession(api.transport(), tools=[get_weather, update_issue_list])
    reply = await session.send("go")
    assert reply.text.endswith("Done.")
    want = expected(name)["content"]
    assistant, results = api.bodies[1]["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": want[0]["text"]},
            {"type": "tool_use", "id": want[1]["id"], "name": want[1]["name"], "input": want[1]["input"]},
        ],
    }
    assert results["role"] == "user"
    assert [(b["type"], b["tool_use_id"], b.get("is_error")) for b in results["content"]] == [
        ("tool_result", want[1]["id"], None)
    ]
    assert calls == [want[1]["input"]]


async def test_server_tool_blocks_go_back_as_they_came_without_results() -> None:
    api = MockAPI(recorded("anthropic_server_tools_escape_split"), sse(reply_events([{"type": "text", "text": "ok"}])))
    code_execution = {"type": "code_execution_20250825", "name": "code_execution"}
    session = ChatSession(api.transport(server_tools=[code_execution]))
    await session.send("make a csv")
    await session.send("thanks")
    assert api.bodies[0]["tools"] == [code_execution]
    want = expected("anthropic_server_tools_escape_split")["content"]
    messages = api.bodies[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "server_tool_use", "id": want[0]["id"], "name": want[0]["name"], "input": want[0]["input"]},
        want[1]["raw"],
        {"type": "server_tool_use", "id": want[2]["id"], "name": want[2]["name"], "input": want[2]["input"]},
        want[3]["raw"],
        {"type": "text", "text": want[4]["text"]},
    ]
    assert messages[2] == {"role": "user", "content": [{"type": "text", "text": "thanks"}]}
    assert all(b["type"] != "tool_result" for m in messages for b in m["content"])


# --- request building -------------------------------------------------------------------------------------------------


@tool
def lookup(query: str) -> str:
    """Looks something up.

    Args:
        query: What to look up.
    """
    return "found"


def body_for(
    messages: list[Message], options: RequestOptions | None = None, tools: Any = (lookup,), **kwargs: Any
) -> dict[str, Any]:
    transport = AnthropicTransport("claude-x", client=MockAPI().client(), **kwargs)
    definitions = [t.definition for t in tools]
    return transport.request_body(ChatRequest(messages, definitions, options or RequestOptions()))


def call(call_id: str, state: ToolCallState, outcome: ToolOutcome, name: str = "lookup") -> ToolCallPart:
    return finished_call(call_id, name, '{"query": "x"}', state, outcome)


def test_request_fields() -> None:
    options = RequestOptions(system_prompt="Be brief.", temperature=0.3, max_tokens=99, extra={"top_k": 5})
    body = body_for([Message.user("hi")], options)
    assert body == {
        "model": "claude-x",
        "max_tokens": 99,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
        "system": "Be brief.",
        "tools": [
            {
                "name": "lookup",
                "description": "Looks something up.",
                "input_schema": lookup.definition.parameters,
            }
        ],
        "tool_choice": {"type": "auto"},
        "temperature": 0.3,
        "top_k": 5,
    }
    assert body_for([Message.user("hi")])["max_tokens"] == 4096
    assert body_for([Message.user("hi")], RequestOptions(extra={"max_tokens": 7}))["max_tokens"] == 7


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (ToolChoice.AUTO, {"type": "auto"}),
        (ToolChoice.REQUIRED, {"type": "any"}),
        (ToolChoice.specific("lookup"), {"type": "tool", "name": "lookup"}),
    ],
)
def test_tool_choice(choice: ToolChoice, sent: dict[str, Any]) -> None:
    assert body_for([Message.user("hi")], RequestOptions(tool_choice=choice))["tool_choice"] == sent
    # The API refuses a forced choice while thinking: the closest it takes is auto.
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with_thinking = body_for([Message.user("hi")], RequestOptions(tool_choice=choice), thinking=thinking)
    assert with_thinking["tool_choice"] == {"type": "auto"}


def test_tool_choice_none_sends_no_tools_at_all() -> None:
    server = {"type": "web_search_20250305", "name": "web_search"}
    body = body_for([Message.user("hi")], RequestOptions(tool_choice=ToolChoice.NONE), tools=(), server_tools=[server])
    assert "tools" not in body
    assert "tool_choice" not in body
    only_server = body_for([Message.user("hi")], tools=(), server_tools=[server])
    assert only_server["tools"] == [server]
    assert "tools" not in body_for([Message.user("hi")], tools=())  # nothing to offer: no tool_choice either
    assert "tool_choice" not in body_for([Message.user("hi")], tools=())


def test_every_call_gets_its_result_failed_declined_and_cancelled_included() -> None:
    reply = Message(
        Role.ASSISTANT,
        [
            TextPart("Trying four."),
            call("c1", ToolCallState.COMPLETED, ToolOutcome.success({"n": 1})),
            call("c2", ToolCallState.FAILED, ToolOutcome.failure("It broke.")),
            call("c3", ToolCallState.REJECTED, ToolOutcome.failure("The person declined this call. Their reason: no")),
            call("c4", ToolCallState.CANCELLED, ToolOutcome.failure("Stopped before it ran.")),
        ],
    )
    messages = anthropic_messages([Message.user("go"), reply])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["id"] for b in messages[1]["content"][1:]] == ["c1", "c2", "c3", "c4"]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": '{"n":1}'},
        {"type": "tool_result", "tool_use_id": "c2", "content": "It broke.", "is_error": True},
        {
            "type": "tool_result",
            "tool_use_id": "c3",
            "content": "The person declined this call. Their reason: no",
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "c4", "content": "Stopped before it ran.", "is_error": True},
    ]


async def test_images_of_tool_results_go_inside_the_tool_result() -> None:
    history = image_history()
    assert history[1].tool_calls[0].result_for_model() == CHART_TEXT
    api = MockAPI(sse(reply_events([{"type": "text", "text": "ok"}])))
    async for _ in api.transport().stream(ChatRequest(messages=history)):
        pass

    def png(data: str, media_type: str = "image/png") -> dict[str, Any]:
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}

    calls = [("call_chart", "plot", {"series": "a"}), ("call_plain", "lookup", {}), ("call_photo", "snap", {})]
    calls.append(("call_failed", "snap", {}))
    assert api.bodies[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "plot"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Plotting."},
                *({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls),
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_chart",
                    "content": [
                        {"type": "text", "text": CHART_TEXT},
                        png(PNG),
                        {"type": "image", "source": {"type": "url", "url": PHOTO_URL}},
                    ],
                },
                {"type": "tool_result", "tool_use_id": "call_plain", "content": '{"n":1}'},
                {"type": "tool_result", "tool_use_id": "call_photo", "content": [png(JPEG, "image/jpeg")]},
                {"type": "tool_result", "tool_use_id": "call_failed", "content": "It broke.", "is_error": True},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    without = api.transport(tool_images=False).request_messages(history)
    assert [b.get("content") for b in without[2]["content"]] == [CHART_TEXT, '{"n":1}', None, "It broke."]


async def test_a_tools_image_reaches_the_model_in_the_follow_up_request() -> None:
    call = {"type": "tool_use", "id": "toolu_d", "name": "draw", "input": {"shape": "circle"}}
    api = MockAPI(
        sse(reply_events([call], stop_reason="tool_use")), sse(reply_events([{"type": "text", "text": "A circle."}]))
    )
    reply = await ChatSession(api.transport(), tools=[draw]).send("Draw a circle")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert tool_results(api.bodies[1]) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_d",
            "content": [
                {"type": "text", "text": "A circle."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
        }
    ]


def test_an_earlier_replys_results_come_first_in_the_next_user_message() -> None:
    earlier = Message(Role.ASSISTANT, [call("c1", ToolCallState.CANCELLED, ToolOutcome.failure("Stopped."))])
    messages = anthropic_messages([Message.user("go"), earlier, Message.user("never mind"), Message(Role.ASSISTANT)])
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "Stopped.", "is_error": True},
            {"type": "text", "text": "never mind"},
        ],
    }
    assert len(messages) == 3  # the empty in-progress reply is left out


def test_a_reply_of_several_rounds_is_split_at_each_round() -> None:
    reply = Message(
        Role.ASSISTANT,
        [
            ReasoningPart("plan", provider="anthropic", provider_data={"signature": "sig-1"}),
            TextPart("First."),
            call("c1", ToolCallState.COMPLETED, ToolOutcome.success("a")),
            call("c2", ToolCallState.COMPLETED, ToolOutcome.success("b")),
            TextPart("Then."),
            call("c3", ToolCallState.COMPLETED, ToolOutcome.success("c")),
            TextPart(""),
        ],
    )
    messages = anthropic_messages([Message.user("go"), reply, Message.user("and?")])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["c1", "c2"]
    assert messages[3]["content"][0] == {"type": "text", "text": "Then."}
    assert [b.get("tool_use_id", b.get("text")) for b in messages[4]["content"]] == ["c3", "and?"]


def test_consecutive_same_role_messages_merge_and_empty_ones_go() -> None:
    messages = anthropic_messages([Message.user("a"), Message.user(""), Message.user("b"), Message(Role.ASSISTANT)])
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]


def test_reasoning_without_a_signature_and_server_calls_without_results_are_left_out() -> None:
    server = ToolCallPart("srv_1", "web_search", '{"query": "x"}', provider_executed=True)
    server.finish(ToolCallState.CANCELLED, ToolOutcome.failure("Stopped."))
    reply = Message(Role.ASSISTANT, [ReasoningPart("unsigned"), server, TextPart("Hi.")])
    assert anthropic_messages([Message.user("go"), reply])[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hi."}],
    }


# --- tool flows against the emulator ----------------------------------------------------------------------------------


@tool(icon="🌦", title="Weather")
def get_weather(city: str) -> dict[str, Any]:
    """Gets the weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny"}


deleted: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


def call_then_answer(name: str, arguments: dict[str, Any]) -> Emulator:
    """First request: text and a streamed tool call; the follow-up: text built from the tool's result."""

    def first(body: dict[str, Any]) -> list[dict[str, Any]]:
        blocks = [
            {"type": "text", "text": "Let me check. "},
            {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments},
        ]
        return reply_events(blocks, stop_reason="tool_use", piece=3)

    def follow_up(body: dict[str, Any]) -> list[dict[str, Any]]:
        (result,) = tool_results(body)
        verdict = "failed: " if result.get("is_error") else "result: "
        return reply_events([{"type": "text", "text": verdict + result["content"]}])

    return Emulator(first, follow_up)


async def test_weather_flow() -> None:
    emulator = call_then_answer("get_weather", {"city": "Lisbon"})
    with loopback(emulator) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, api_key=FAKE_KEY)
        session = ChatSession(transport, tools=[get_weather])
        reply = await session.send("Weather in Lisbon?")
    assert reply.text == 'Let me check. result: {"city":"Lisbon","sky":"sunny"}'
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.usage.requests == 2
    first, second = emulator.bodies
    assert first["tools"][0]["name"] == "get_weather"
    assert second["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Lisbon"},
    }
    assert second["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"city":"Lisbon","sky":"sunny"}'}
    ]


@pytest.mark.parametrize("decision", ["approved", "rejected"])
async def test_destructive_tool_flow(decision: str) -> None:
    deleted.clear()
    emulator = call_then_answer("delete_file", {"path": "notes.txt"})
    with loopback(emulator) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, api_key=FAKE_KEY)
        session = ChatSession(transport, tools=[delete_file])
        turn = asyncio.create_task(session.send("Delete notes.txt"))

        def waiting() -> bool:
            calls = session.messages[-1].tool_calls if session.messages else []
            return bool(calls) and calls[0].state is ToolCallState.AWAITING_APPROVAL

        await wait_for(waiting, timeout=10)
        assert len(emulator.bodies) == 1  # paused: the model is not asked again before the decision
        session.approve("toolu_1", decision, reason="keep it" if decision == "rejected" else None)
        reply = await asyncio.wait_for(turn, 10)
    (result,) = tool_results(emulator.bodies[1])
    if decision == "approved":
        assert deleted == ["notes.txt"]
        assert reply.text.endswith("result: deleted notes.txt")
        assert "is_error" not in result
    else:
        assert deleted == []
        assert reply.tool_calls[0].state is ToolCallState.REJECTED
        assert result["is_error"] is True
        assert "declined" in result["content"]
        assert "keep it" in result["content"]
        assert reply.text.startswith("Let me check. failed: ")
