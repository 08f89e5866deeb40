"""AnthropicTransport: recorded streams through the real SDK, the request mapping, errors, and tool flows end to end."""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import anthropic
import anyio
import httpx2
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
from ai_widgets.messages import MessageStatus, Role, dump_messages
from ai_widgets.transports import AnthropicTransport, ChatRequest, ProviderError
from ai_widgets.transports._anthropic_stream import MessagesParser
from ai_widgets.transports._sse import SSEDecoder
from tests.helpers import wait_for
from tests.providers.anthropic_emulator import (
    FAKE_KEY,
    Emulator,
    MockAPI,
    Recording,
    error_response,
    expected,
    recorded,
    reply_events,
    sse,
    tool_results,
)
from tests.providers.histories import finished_call
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.loopback import Response, loopback

FIXTURES = [
    "anthropic_text_then_tool_use",
    "anthropic_thinking_tool_use",
    "anthropic_tool_use_no_args",
    "anthropic_server_tools_escape_split",
]
STOP_REASONS = {"end_turn": FinishReason.STOP, "tool_use": FinishReason.TOOL_CALLS}


# --- recorded streams ----------------------------------------------------------------------------------------------


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


# --- the request -------------------------------------------------------------------------------------------------


@tool
def lookup(query: str) -> str:
    """Looks something up.

    Args:
        query: What to look up.
    """
    return "found"


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return AnthropicTransport("claude-x", client=MockAPI().client()).request_messages(messages)


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


# --- the stream ------------------------------------------------------------------------------------------------


def parse(events: list[dict[str, Any]]) -> list[Any]:
    parser = MessagesParser()
    return [out for event in events for out in parser.feed_event(event)]


def test_redacted_and_consecutive_thinking_blocks_keep_every_block() -> None:
    events = reply_events([{"type": "thinking", "thinking": "one", "signature": "s1"}])
    redacted = {"type": "redacted_thinking", "data": "ENCRYPTED"}
    events[-3:-3] = [
        {"type": "content_block_start", "index": 1, "content_block": redacted},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "thinking_delta", "thinking": "two"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "signature_delta", "signature": "s2"}},
        {"type": "content_block_stop", "index": 2},
    ]
    out = parse(events)
    data = [e.provider_data for e in out if isinstance(e, ReasoningDelta) and e.provider_data is not None]
    assert all(e.provider == "anthropic" for e in out if isinstance(e, ReasoningDelta) and e.provider_data)
    assert data[0] == {"signature": "s1"}  # one thinking block: the signature as it came
    blocks = [
        {"type": "thinking", "thinking": "one", "signature": "s1"},
        redacted,
        {"type": "thinking", "thinking": "two", "signature": "s2"},
    ]
    assert data[-1] == {"blocks": blocks}
    # The session joins the three into one part; it goes back as the three blocks.
    part = ReasoningPart("onetwo", provider="anthropic", provider_data=data[-1])
    assert anthropic_messages([Message.user("q"), Message(Role.ASSISTANT, [part])])[1]["content"] == blocks
    only_redacted = parse([{"type": "content_block_start", "index": 0, "content_block": redacted}])
    assert only_redacted == [ReasoningDelta("", provider="anthropic", provider_data={"blocks": [redacted]})]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", FinishReason.STOP),
        ("stop_sequence", FinishReason.STOP),
        ("tool_use", FinishReason.TOOL_CALLS),
        ("max_tokens", FinishReason.LENGTH),
        ("refusal", FinishReason.CONTENT_FILTER),
        ("pause_turn", FinishReason.STOP),
        ("something_new", FinishReason.STOP),
    ],
)
def test_finish_reasons(reason: str, finish: FinishReason) -> None:
    assert parse(reply_events([], stop_reason=reason))[-1] == ResponseCompleted(finish)


def test_usage_counts_the_whole_prompt_and_keeps_running_totals() -> None:
    events = reply_events([], input_tokens=10)
    events[0]["message"]["usage"] |= {"cache_read_input_tokens": 90, "cache_creation_input_tokens": 5}
    events[-2]["usage"] = {"output_tokens": 42, "input_tokens": None, "output_tokens_details": {"thinking_tokens": 7}}
    usage = [e for e in parse(events) if isinstance(e, UsageUpdate)]
    assert usage[0] == UsageUpdate(input_tokens=105, output_tokens=1, cached_tokens=90)
    assert usage[-1] == UsageUpdate(input_tokens=105, output_tokens=42, cached_tokens=90, reasoning_tokens=7)


def test_web_search_results_become_the_calls_outcome_with_citations() -> None:
    results = [
        {"type": "web_search_result", "url": "https://a.example", "title": "A", "encrypted_content": "x"},
        {"type": "web_search_result", "url": "https://b.example", "title": "B", "encrypted_content": "y"},
    ]
    block = {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": results}
    failed = {
        "type": "web_search_tool_result",
        "tool_use_id": "srv_2",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    }
    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}}
    out = parse(reply_events([search, block, {**search, "id": "srv_2"}, failed, {"type": "text", "text": "ok"}]))
    results_events = {e.tool_call_id: e for e in out if isinstance(e, ProviderToolResult)}
    outcomes = {call_id: e.outcome for call_id, e in results_events.items()}
    assert outcomes["srv_1"].ok
    # For people: the results without their encrypted content; the block as it came is the provider data.
    assert outcomes["srv_1"].value == [
        {"type": "web_search_result", "url": "https://a.example", "title": "A"},
        {"type": "web_search_result", "url": "https://b.example", "title": "B"},
    ]
    assert results_events["srv_1"].provider_data == {"result_block": block}
    assert [(c.url, c.title) for c in outcomes["srv_1"].citations] == [
        ("https://a.example", "A"),
        ("https://b.example", "B"),
    ]
    assert not outcomes["srv_2"].ok
    assert "max_uses_exceeded" in (outcomes["srv_2"].message or "")
    assert results_events["srv_2"].provider_data == {"result_block": failed}  # kept, to go back as it came
    part = ToolCallPart(
        "srv_2", "web_search", '{"query": "q"}', provider_executed=True, provider="anthropic", provider_data=None
    )
    part.provider_data = results_events["srv_2"].provider_data
    part.finish(ToolCallState.FAILED, outcomes["srv_2"])
    content = anthropic_messages([Message.user("q"), Message(Role.ASSISTANT, [part])])[1]["content"]
    assert content == [{**search, "id": "srv_2"}, failed]


async def test_pause_turn_with_a_server_call_but_no_result() -> None:
    ran: list[str] = []

    @tool(name="web_search")
    def local_web_search(query: str) -> str:
        """A local tool that happens to share the server tool's name."""
        ran.append(query)
        return "local"

    search = {"type": "server_tool_use", "id": "srvtoolu_paused", "name": "web_search", "input": {"query": "q"}}
    paused = reply_events([{"type": "text", "text": "Searching."}, search], stop_reason="pause_turn")
    events = parse(paused)
    assert ToolCallStarted("srvtoolu_paused", "web_search", provider_executed=True) in events
    assert not any(isinstance(e, ProviderToolResult) for e in events)
    assert events[-1] == ResponseCompleted(FinishReason.STOP)

    api = MockAPI(sse(paused), sse(reply_events([{"type": "text", "text": "Found it."}])))
    session = ChatSession(api.transport(), tools=[local_web_search])
    reply = await session.send("Search for q")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (call,) = reply.tool_calls
    assert call.provider_executed
    assert call.state.terminal
    assert ran == []  # a provider-run call never runs locally, result or not
    assert len(api.bodies) == 1
    await session.send("Go on.")
    # The API rejects a server_tool_use without its result block: the call is left out, the text goes back.
    assert api.bodies[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Search for q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}]},
        {"role": "user", "content": [{"type": "text", "text": "Go on."}]},
    ]


def test_unknown_events_and_blocks_are_ignored() -> None:
    events = reply_events([{"type": "text", "text": "hi"}])
    events[2:2] = [
        {"type": "ping"},
        {"type": "brand_new_event", "x": 1},
        {"type": "content_block_start", "index": 7, "content_block": {"type": "brand_new_block"}},
        {"type": "content_block_delta", "index": 7, "delta": {"type": "brand_new_delta"}},
        {"type": "content_block_stop", "index": 7},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}},
    ]
    assert [e for e in parse(events) if isinstance(e, TextDelta)] == [TextDelta("hi")]


def test_malformed_streams_raise_clear_errors() -> None:
    with pytest.raises(ProviderError, match="not a tool call"):
        parse([{"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{"}}])
    with pytest.raises(ProviderError, match="without an id"):
        parse([{"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "name": "x"}}])
    with pytest.raises(ProviderError, match=r"overloaded_error.*Overloaded"):
        parse([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}])


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_sse_decoder_any_line_ending_any_chunking(newline: bytes) -> None:
    body = b'event: a\ndata: {"n": 1}\n\n: comment\n\nevent: b\ndata: {"t":\ndata: "\xc3\xa9 data: x"}\n\ndata:{"n": 3}'
    body = body.replace(b"\n", newline)
    for size in (1, 2, 3, len(body)):
        decoder = SSEDecoder()
        payloads = [p for start in range(0, len(body), size) for p in decoder.feed(body[start : start + size])]
        payloads += decoder.close()
        assert [json.loads(p) for p in payloads] == [{"n": 1}, {"t": "é data: x"}, {"n": 3}], (newline, size)


class _Body(httpx2.AsyncByteStream):
    """A response body in pieces, then ``error`` if given; records how far it was read and whether it was closed."""

    def __init__(self, pieces: list[bytes], error: Exception | None = None) -> None:
        self.pieces = pieces
        self.error = error
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> Any:
        for n, piece in enumerate(self.pieces):
            self.read = n + 1
            yield piece
        if self.error is not None:
            raise self.error

    async def aclose(self) -> None:
        self.closed = True


def _serving(body: _Body) -> AnthropicTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    client = anthropic.AsyncAnthropic(
        api_key=FAKE_KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    )
    return AnthropicTransport("claude-test", client=client)


async def test_nothing_after_message_stop_is_read_and_the_body_is_drained() -> None:
    """Before: the stream went on past ``message_stop``, so what a server sent after it (here an error event) failed
    a finished reply, and the body was not drained for the connection to be reused."""
    late = {"type": "error", "error": {"type": "overloaded_error", "message": "late"}}
    body = _Body([sse(reply_events([{"type": "text", "text": "ok"}])), sse([late]), b": trailing comment\n\n"])
    reply = await ChatSession(_serving(body)).send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "ok"
    assert body.read == len(body.pieces)  # read to its end, so the HTTP/1.1 connection goes back to the pool
    assert body.closed


async def test_a_last_event_cut_off_mid_json_leaves_the_reply_broken_off() -> None:
    """Before: the cut-off data of the body's last event was read as an event and failed as "not JSON"; now it is
    dropped, and the reply broke off as any stream that ends before its end."""
    whole = sse(reply_events([{"type": "text", "text": "Partial"}], message_stop=False))
    reply = await ChatSession(MockAPI(whole[:-20]).transport()).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The model's response broke off before it was complete."
    assert reply.text == "Partial"


async def test_a_last_event_without_its_blank_line_is_read_when_its_data_is_whole_json() -> None:
    events = sse(reply_events([{"type": "text", "text": "ok"}])).rstrip(b"\n")
    reply = await ChatSession(MockAPI(events).transport()).send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "ok"


async def test_response_started_comes_once_first_without_message_start() -> None:
    """Before: ``ResponseStarted`` came with ``message_start`` only; now the stream yields it once the response
    begins, as every transport does."""
    events = reply_events([{"type": "text", "text": "ok"}])[1:]  # no message_start
    got = [e async for e in MockAPI(sse(events)).transport().stream(ChatRequest(messages=[Message.user("hi")]))]
    assert got[0] == ResponseStarted()
    assert sum(isinstance(e, ResponseStarted) for e in got) == 1
    assert got[-1] == ResponseCompleted(FinishReason.STOP)


# --- errors --------------------------------------------------------------------------------------------------


async def test_error_event_mid_stream_ends_the_message_and_the_session_goes_on() -> None:
    events = reply_events([{"type": "text", "text": "Partial answer"}])[:4]
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    api = MockAPI(sse(events), sse(reply_events([{"type": "text", "text": "Back."}])))
    session = ChatSession(api.transport())
    failed = await session.send("hi")
    assert failed.status is MessageStatus.ERROR
    assert failed.error is not None
    assert "overloaded_error" in failed.error
    assert "Overloaded" in failed.error
    assert (await session.send("again")).text == "Back."


async def test_a_stream_that_ends_early_is_reported_as_broken_off() -> None:
    events = reply_events([{"type": "text", "text": "Partial"}], message_stop=False)[:-1]
    session = ChatSession(MockAPI(sse(events)).transport())
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Partial"


async def test_stop_mid_stream_closes_it_and_the_session_goes_on() -> None:
    slow = sse(reply_events([{"type": "text", "text": "word " * 200}], piece=5))
    api = MockAPI(slow, sse(reply_events([{"type": "text", "text": "Next."}])), chunk_size=200, delay=0.005)
    session = ChatSession(api.transport())
    turn = asyncio.create_task(session.send("talk"))
    await wait_for(lambda: bool(session.messages) and "word" in session.messages[-1].text, timeout=10)
    session.stop()
    stopped = await asyncio.wait_for(turn, 10)
    assert stopped.status is MessageStatus.CANCELLED
    assert len(stopped.text) < 1000
    assert (await session.send("go on")).text == "Next."


@pytest.mark.parametrize(
    ("status", "error_type", "words"),
    [
        (401, "authentication_error", ["401", "ANTHROPIC_API_KEY or api_key=", "invalid x-api-key"]),
        (403, "permission_error", ["403", "ANTHROPIC_API_KEY or api_key="]),
        (404, "not_found_error", ["404", "model"]),
        (429, "rate_limit_error", ["429", "after retries"]),
        (529, "overloaded_error", ["529", "overloaded_error"]),
    ],
)
async def test_http_failures_are_clear_and_key_free(
    status: int, error_type: str, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    message = "invalid x-api-key" if status == 401 else f"{error_type} ({FAKE_KEY} should never show)"
    emulator = Emulator(lambda body: error_response(status, error_type, message))
    with loopback(emulator) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, max_retries=1)
        session = ChatSession(transport)
        reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    for word in words:
        assert word in reply.error
    assert FAKE_KEY not in reply.error
    assert "SECRET" not in dump_messages(session.messages)
    retried = status in (429, 529)
    assert len(emulator.bodies) == (2 if retried else 1)


async def test_a_server_error_is_retried_before_the_stream_begins() -> None:
    answers = iter([error_response(500, "api_error", "boom"), None])
    emulator = Emulator(lambda body: next(answers) or reply_events([{"type": "text", "text": "Fine."}]))
    with loopback(emulator) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, api_key=FAKE_KEY, max_retries=2)
        reply = await ChatSession(transport).send("hi")
    assert reply.text == "Fine."
    assert len(emulator.bodies) == 2


async def test_timeouts_and_connection_failures() -> None:
    def slow(request: Any) -> Response:
        import time

        time.sleep(1.5)
        return Response(chunks=[sse(reply_events([]))])

    with loopback(Emulator(slow)) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, api_key=FAKE_KEY, max_retries=0, timeout=0.5)
        reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "did not answer within 0.5 s" in reply.error

    transport = AnthropicTransport("claude-x", base_url="http://127.0.0.1:9", api_key=FAKE_KEY, max_retries=0)
    reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "Could not reach Anthropic" in reply.error
    assert FAKE_KEY not in reply.error


async def test_a_read_timeout_mid_stream() -> None:
    def stalls(request: Any) -> Response:
        def chunks() -> Any:
            import time

            yield sse(reply_events([{"type": "text", "text": "Hal"}])[:4])
            time.sleep(1.5)

        return Response(chunks=chunks())

    with loopback(Emulator(stalls)) as server:
        transport = AnthropicTransport("claude-x", base_url=server.url, api_key=FAKE_KEY, max_retries=0, timeout=0.5)
        reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Hal"
    assert reply.error is not None
    assert "stopped sending the reply" in reply.error


@pytest.mark.parametrize(
    "error", [ssl.SSLError(1, "bad record mac"), anyio.EndOfStream(), ConnectionResetError(104, "reset")]
)
async def test_the_connection_breaking_mid_reply_is_worded_as_for_every_transport(error: Exception) -> None:
    """Before: the HTTP errors were sorted three ways, and an SSL error, anyio's end of stream or a reset connection
    mid-body left this transport as they were raised, not as a ProviderError."""
    body = _Body([sse(reply_events([{"type": "text", "text": "Hal"}])[:4])], error)
    events: list[Any] = []

    async def consume() -> None:
        async for event in _serving(body).stream(ChatRequest(messages=[Message.user("hi")])):
            events.append(event)

    with pytest.raises(ProviderError) as raised:
        await consume()
    detail = f": {error}" if str(error) else ""
    assert str(raised.value) == f"The connection to Anthropic broke off mid-reply{detail}."
    assert events[0] == ResponseStarted()
    assert TextDelta("Hal") in events
    assert body.closed


@pytest.fixture
def no_anthropic_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.mark.usefixtures("no_anthropic_credentials")
def test_a_missing_key_is_a_clear_error_at_construction() -> None:
    with pytest.raises(ProviderError, match=r"^No API key for Anthropic: set ANTHROPIC_API_KEY, or pass api_key= or"):
        AnthropicTransport("claude-x")


@pytest.mark.usefixtures("no_anthropic_credentials")
async def test_a_server_given_by_base_url_needs_no_key() -> None:
    emulator = Emulator(lambda body: reply_events([{"type": "text", "text": "Local."}]))
    with loopback(emulator) as server:
        reply = await ChatSession(AnthropicTransport("claude-x", base_url=server.url)).send("hi")
        assert reply.text == "Local."
        auth = server.requests[0].headers.get("x-api-key") or server.requests[0].headers.get("authorization")
    assert auth is not None
    assert "not-needed" in auth  # a placeholder: a remote server answers 401, naming ANTHROPIC_API_KEY


async def test_a_client_without_credentials_says_which_key(no_anthropic_credentials: None) -> None:
    import anthropic

    transport = AnthropicTransport("claude-x", client=anthropic.AsyncAnthropic(base_url="http://127.0.0.1:9"))
    reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "needs an API key: set ANTHROPIC_API_KEY or api_key=" in reply.error


@pytest.mark.parametrize("connection", [{"api_key": FAKE_KEY}, {"base_url": "http://127.0.0.1:9"}])
def test_client_and_connection_arguments_exclude_each_other(connection: dict[str, str]) -> None:
    with pytest.raises(ValueError, match=r"pass either client= or .*, not both"):
        AnthropicTransport("claude-x", client=MockAPI().client(), **connection)
    with pytest.raises(ValueError, match="model"):
        AnthropicTransport("", api_key=FAKE_KEY)
    assert FAKE_KEY not in repr(AnthropicTransport("claude-x", api_key=FAKE_KEY))


# --- tool flows against the emulator -------------------------------------------------------------------------


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


async def test_keys_stay_out_of_widget_state_transcripts_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.widget import ChatWidget
    from tests.widget_harness import recording_comms

    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    answers = iter([error_response(401, "authentication_error", f"bad key {FAKE_KEY}")])

    def step(body: dict[str, Any]) -> Any:
        return next(answers, None) or reply_events([{"type": "text", "text": "Hello."}])

    with recording_comms() as wire, loopback(Emulator(step)) as server:
        chat = ChatWidget(ChatSession(AnthropicTransport("claude-x", base_url=server.url, max_retries=0)))
        failed = await chat.ask("hi")
        ok = await chat.ask("hi again")
        state = json.dumps(chat.get_state(), default=str)
    assert failed.status is MessageStatus.ERROR
    assert ok.text == "Hello."
    for text in (
        failed.error or "",
        dump_messages(chat.session.messages),
        state,
        json.dumps([s.data for s in wire.sent]),
    ):
        assert FAKE_KEY not in text
        assert "SECRET" not in text


@pytest.mark.parametrize("name", FIXTURES)
def test_reading_payloads_gives_what_reading_their_json_gives(name: str) -> None:
    # ``feed`` reads the JSON itself and takes text deltas on a short path: the same events as ``feed_event``.
    payloads = SSEDecoder().feed(recorded(name))
    odd = [
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":7}}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}',
        b'{"type":"content_block_delta","index":0,"delta":"text_delta"}',
        b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\ud83d"}}',
        b'["content_block_delta"]',
    ]
    short, general = MessagesParser(), MessagesParser()
    for payload in payloads + odd:
        assert short.feed(payload) == general.feed_event(json.loads(payload)), payload
    with pytest.raises(ProviderError, match="not JSON"):
        short.feed(b'{"type": "content_block_delta", ')


@pytest.mark.parametrize(
    "payload",
    [
        b'{"type":"message_start","message":"msg"}',
        b'{"type":"message_delta","delta":["end_turn"],"usage":7}',
        b'{"type":"message_delta","delta":{"stop_reason":["end_turn"]}}',
        b'{"type":"content_block_start","index":[0],"content_block":{"type":"text","text":"x"}}',
        b'{"type":"content_block_start","index":0,"content_block":"text"}',
        b'{"type":"content_block_delta","index":{"a":1},"delta":{"type":"thinking_delta","thinking":"x"}}',
        b'{"type":"content_block_stop","index":[1]}',
    ],
)
def test_malformed_fields_are_ignored_rather_than_crash_the_parser(payload: bytes) -> None:
    parser = MessagesParser()
    parser.feed(b'{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}')
    parser.feed(payload)  # no TypeError or AttributeError: a malformed event means nothing
    assert parser.feed(b'{"type":"message_stop"}') == [ResponseCompleted(FinishReason.STOP)]
