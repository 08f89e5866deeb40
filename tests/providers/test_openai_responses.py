"""OpenAIResponsesTransport: recorded streams through the real SDK, the request mapping, and tool flows.

What every transport does the same way (timeouts, connections, HTTP errors, keys, how a stream ends, Stop) is in
``test_contract.py``, and this transport's quirks in ``test_openai_responses_quirks.py``."""

from __future__ import annotations

import json
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
from ai_widgets.transports import ChatRequest, OpenAIResponsesTransport, ProviderError
from tests.helpers import wait_for
from tests.providers.histories import finish
from tests.providers.images import CHART_TEXT, JPEG, PHOTO_URL, PNG, draw, image_history
from tests.providers.kits import expected, recorded
from tests.providers.kits import openai_responses as wire
from tests.providers.kits.openai_responses import (
    CHUNKINGS,
    REASONING_FIXTURE,
    collect,
    get_capital,
    text_reply,
    transport_for,
)
from tests.providers.loopback import loopback, reframe

ERROR_FIXTURE = "openai_responses_error_insufficient_quota"


def recorded_reasoning_item() -> dict[str, Any]:
    events = wire.sse_events(recorded(REASONING_FIXTURE))
    return next(
        e["item"] for e in events if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    )


# --- recorded streams -------------------------------------------------------------------------------------------------


@CHUNKINGS
async def test_reasoning_text_function_call_events(chunk_size: int | None) -> None:
    want = expected(REASONING_FIXTURE)
    transport, _ = transport_for(recorded(REASONING_FIXTURE), chunk_size=chunk_size)
    events = await collect(transport)

    call = want["function_calls"][0]
    texts = [e for e in events if isinstance(e, TextDelta)]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [type(e) for e in events] == [
        ResponseStarted,
        StatusUpdate,  # "Reasoning…": the model reasons before anything shows
        ReasoningDelta,
        *[TextDelta] * len(texts),
        ToolCallStarted,
        *[ToolCallDelta] * call["arg_delta_events"],
        ToolCallArgumentsDone,
        UsageUpdate,
        ResponseCompleted,
    ]
    assert events[1] == StatusUpdate("Reasoning…")
    reasoning = events[2]
    assert reasoning.text == ""
    item = recorded_reasoning_item()
    assert reasoning.provider == "openai"
    assert reasoning.provider_data == {"items": [{"id": item["id"], "encrypted_content": item["encrypted_content"]}]}
    assert "".join(e.text for e in texts) == want["messages"][0]["text"]
    assert events[3 + len(texts)] == ToolCallStarted(call["call_id"], call["name"])
    assert {e.tool_call_id for e in deltas} == {call["call_id"]}
    assert "".join(e.delta for e in deltas) == call["arguments"]
    usage = want["usage"]
    assert events[-2] == UsageUpdate(
        input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"],
        cached_tokens=usage["input_tokens_details"]["cached_tokens"],
        reasoning_tokens=usage["output_tokens_details"]["reasoning_tokens"],
    )
    assert events[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)


@CHUNKINGS
async def test_reasoning_text_function_call_message(chunk_size: int | None) -> None:
    want = expected(REASONING_FIXTURE)
    transport, _ = transport_for(recorded(REASONING_FIXTURE), chunk_size=chunk_size)
    session = ChatSession(transport, tools=[get_capital], options=SessionOptions(execute_tools=False))
    reply = await session.send("What is the capital of PotatoLand?")

    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    reasoning, text, call = reply.parts
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.text == ""
    item = recorded_reasoning_item()
    assert reasoning.provider == "openai"
    assert reasoning.provider_data == {"items": [{"id": item["id"], "encrypted_content": item["encrypted_content"]}]}
    assert isinstance(text, TextPart)
    assert text.text == want["messages"][0]["text"]
    expected_call = want["function_calls"][0]
    assert isinstance(call, ToolCallPart)
    assert (call.tool_call_id, call.tool_name) == (expected_call["call_id"], expected_call["name"])
    assert call.arguments == expected_call["arguments"]
    assert call.parsed_arguments == expected_call["parsed_arguments"]
    assert call.state is ToolCallState.PENDING
    assert not call.provider_executed
    usage = want["usage"]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (usage["input_tokens"], usage["output_tokens"])
    assert reply.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert reply.usage.cached_tokens == usage["input_tokens_details"]["cached_tokens"]


def quota_message() -> str:
    error = expected(ERROR_FIXTURE)["error_event"]
    return f"OpenAI: {error['code']}: {error['message']}"


@CHUNKINGS
async def test_error_fixture_raises_the_providers_code_and_message(chunk_size: int | None) -> None:
    transport, _ = transport_for(recorded(ERROR_FIXTURE), chunk_size=chunk_size)
    events: list[Any] = []

    async def consume() -> None:
        async for event in transport.stream(ChatRequest(messages=[Message.user("hi")])):
            events.append(event)

    with pytest.raises(ProviderError) as raised:
        await consume()
    assert str(raised.value) == quota_message()
    assert events == [ResponseStarted()]


@CHUNKINGS
async def test_error_fixture_ends_the_message_in_error_and_the_session_stays_usable(chunk_size: int | None) -> None:
    transport, api = transport_for(recorded(ERROR_FIXTURE), text_reply("Back."), chunk_size=chunk_size)
    session = ChatSession(transport, options=SessionOptions(execute_tools=False))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == f"The model request failed: ProviderError: {quota_message()}"
    assert reply.parts == []
    assert reply.usage.input_tokens == 0

    again = await session.send("again")
    assert again.status is MessageStatus.COMPLETED
    assert again.text == "Back."
    assert [item.get("content") for item in api.bodies[1]["input"]] == ["hi", "again"]


async def test_response_failed_alone_raises_its_error() -> None:
    events = [e for e in wire.sse_events(recorded(ERROR_FIXTURE)) if e["type"] != "error"]
    transport, _ = transport_for(wire.sse(events))
    with pytest.raises(ProviderError) as raised:
        await collect(transport)
    failed = expected(ERROR_FIXTURE)["response_failed_error"]
    assert str(raised.value) == f"OpenAI: {failed['code']}: {failed['message']}"


async def test_error_event_in_the_sdks_flat_form() -> None:
    body = wire.sse([wire.created(), {"type": "error", "code": "server_error", "message": "Boom.", "param": None}])
    transport, _ = transport_for(body)
    with pytest.raises(ProviderError, match=r"^OpenAI: server_error: Boom\.$"):
        await collect(transport)


@pytest.mark.parametrize("chunk_size", [None, 1, 7], ids=["whole", "1-byte", "7-byte"])
@pytest.mark.parametrize("name", [REASONING_FIXTURE, ERROR_FIXTURE])
async def test_recorded_streams_framed_otherwise_give_the_same_events(name: str, chunk_size: int | None) -> None:
    # CRLF line ends, comment lines, each payload split over two data: lines.
    async def run(body: bytes, size: int | None) -> tuple[list[Any], str | None]:
        transport, _ = transport_for(body, chunk_size=size)
        events: list[Any] = []
        try:
            async for event in transport.stream(ChatRequest(messages=[Message.user("hi")])):
                events.append(event)
        except ProviderError as exc:
            return events, str(exc)
        return events, None

    plain = await run(recorded(name), None)
    assert await run(reframe(recorded(name)), chunk_size) == plain
    if name == ERROR_FIXTURE:
        assert plain == ([ResponseStarted()], quota_message())
    else:
        assert plain[1] is None
        assert isinstance(plain[0][-1], ResponseCompleted)


# --- request building -------------------------------------------------------------------------------------------------


async def test_first_request_body() -> None:
    transport, api = transport_for(text_reply("ok"), reasoning={"effort": "low", "summary": "auto"})
    options = RequestOptions(
        system_prompt="Be brief.", temperature=0.3, max_tokens=200, extra={"metadata": {"k": "v"}, "store": True}
    )
    session = ChatSession(transport, tools=[get_capital], request_options=options)
    await session.send("hi")
    body = api.bodies[0]
    assert body == {
        "model": "gpt-5.5",
        "stream": True,
        "input": [{"role": "user", "content": "hi"}],
        "instructions": "Be brief.",
        "tools": [
            {
                "type": "function",
                "name": "get_capital",
                "description": get_capital.definition.description,
                "parameters": get_capital.definition.parameters,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "temperature": 0.3,
        "max_output_tokens": 200,
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": True,  # extra is merged last
        "metadata": {"k": "v"},
    }


@pytest.mark.parametrize(
    ("choice", "builtin", "expected"),
    [
        (ToolChoice.AUTO, False, ("auto", ["get_capital"])),
        (ToolChoice.REQUIRED, False, ("required", ["get_capital"])),
        (ToolChoice.specific("get_capital"), False, ({"type": "function", "name": "get_capital"}, ["get_capital"])),
        (ToolChoice.NONE, False, None),
        (ToolChoice.NONE, True, None),
        (ToolChoice.AUTO, True, ("auto", ["get_capital", "web_search"])),
    ],
)
async def test_tool_choice(choice: ToolChoice, builtin: bool, expected: Any) -> None:
    builtin_tools = [{"type": "web_search"}] if builtin else []
    transport, api = transport_for(text_reply("ok"), builtin_tools=builtin_tools)
    session = ChatSession(transport, tools=[get_capital], request_options=RequestOptions(tool_choice=choice))
    await session.send("hi")
    body = api.bodies[0]
    if expected is None:
        assert "tools" not in body
        assert "tool_choice" not in body
    else:
        assert body["tool_choice"] == expected[0]
        assert [t.get("name", t["type"]) for t in body["tools"]] == expected[1]


async def test_no_tools_sends_neither_tools_nor_choice() -> None:
    transport, api = transport_for(text_reply("ok"))
    await ChatSession(transport).send("hi")
    assert "tools" not in api.bodies[0]
    assert "tool_choice" not in api.bodies[0]


def test_include_follows_reasoning_use() -> None:
    request = ChatRequest(messages=[Message.user("hi")])
    for model, reasoning, include in [
        ("gpt-4o", None, False),
        ("gpt-4o", {"effort": "low"}, True),
        ("o4-mini", None, True),
        ("gpt-5-mini", None, True),
        ("gpt-5-chat-latest", None, False),
    ]:
        transport = OpenAIResponsesTransport(model, api_key=wire.FAKE_KEY, reasoning=reasoning)
        assert ("include" in transport.request_body(request)) is include, model
    quiet = OpenAIResponsesTransport("o4-mini", api_key=wire.FAKE_KEY, include_encrypted_reasoning=False)
    assert "include" not in quiet.request_body(request)


async def test_follow_up_request_sends_reasoning_text_call_and_result_in_order() -> None:
    transport, api = transport_for(recorded(REASONING_FIXTURE), text_reply("Spudville."), chunk_size=1)
    session = ChatSession(transport, tools=[get_capital])
    reply = await session.send("What is the capital of PotatoLand?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text.endswith("Spudville.")
    item = recorded_reasoning_item()
    assert api.bodies[1]["input"] == [
        {"role": "user", "content": "What is the capital of PotatoLand?"},
        {"type": "reasoning", "id": item["id"], "summary": [], "encrypted_content": item["encrypted_content"]},
        {"role": "assistant", "content": "I’ll check the capital lookup tool for “PotatoLand.”"},
        {
            "type": "function_call",
            "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
            "name": "get_capital",
            "arguments": '{"country":"PotatoLand"}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
            "output": "The capital of PotatoLand is Spudville.",
        },
    ]


def finished_call(call_id: str, state: ToolCallState, outcome: ToolOutcome, arguments: str = "{}") -> ToolCallPart:
    return finish(ToolCallPart(call_id, "do_it", arguments), state, outcome)


async def test_images_of_tool_results_go_in_the_function_call_output() -> None:
    history = image_history()
    assert history[1].tool_calls[0].result_for_model() == CHART_TEXT
    transport, api = transport_for(text_reply("ok"))
    await collect(transport, ChatRequest(messages=history))
    calls = [
        (
            "call_chart",
            "plot",
            '{"series": "a"}',
            [
                {"type": "input_text", "text": CHART_TEXT},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                {"type": "input_image", "image_url": PHOTO_URL},
            ],
        ),
        ("call_plain", "lookup", "{}", '{"n":1}'),
        ("call_photo", "snap", "{}", [{"type": "input_image", "image_url": f"data:image/jpeg;base64,{JPEG}"}]),
        ("call_failed", "snap", "{}", "It broke."),
    ]
    items = [{"role": "user", "content": "plot"}, {"role": "assistant", "content": "Plotting."}]
    for call_id, name, arguments, output in calls:
        items.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    items.append({"role": "assistant", "content": "Done."})
    assert api.bodies[0]["input"] == items

    transport, api = transport_for(text_reply("ok"), tool_images=False)
    await collect(transport, ChatRequest(messages=history))
    outputs = [item["output"] for item in api.bodies[0]["input"] if item.get("type") == "function_call_output"]
    assert outputs == [CHART_TEXT, '{"n":1}', "", "It broke."]


async def test_a_tools_image_reaches_the_model_in_the_follow_up_request() -> None:
    first = wire.sse(
        [wire.created(), *wire.function_call("draw", ['{"shape": "circle"}'], 0, "call_d"), wire.completed()]
    )
    transport, api = transport_for(first, text_reply("A circle."))
    reply = await ChatSession(transport, tools=[draw]).send("Draw a circle")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert wire.last_outputs(api.bodies[1]) == [
        {
            "type": "function_call_output",
            "call_id": "call_d",
            "output": [
                {"type": "input_text", "text": "A circle."},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            ],
        }
    ]


def test_every_call_gets_its_result_including_failed_declined_and_cancelled() -> None:
    transport = OpenAIResponsesTransport("gpt-4o", api_key=wire.FAKE_KEY)
    provider_call = ToolCallPart("ws_1", "web_search", "{}", provider_executed=True)
    provider_call.finish(ToolCallState.COMPLETED, ToolOutcome.success({"query": "x"}))
    reply = Message(
        Role.ASSISTANT,
        [
            ReasoningPart(  # another provider's: left out
                "from another provider", provider="anthropic", provider_data={"signature": "EqsDCpQBCBAYAipA"}
            ),
            provider_call,  # the API's own item: left out
            finished_call("c1", ToolCallState.COMPLETED, ToolOutcome.success({"ok": True}), '{"a": 1}'),
            finished_call("c2", ToolCallState.FAILED, ToolOutcome.failure("Bad input."), "{not json"),
            finished_call("c3", ToolCallState.REJECTED, ToolOutcome.failure("The person declined this call.")),
            finished_call("c4", ToolCallState.CANCELLED, ToolOutcome.failure("Stopped before it ran.")),
        ],
    )
    items = transport.request_messages([Message.user("go"), Message(Role.ASSISTANT), reply])
    assert items == [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c1", "name": "do_it", "arguments": '{"a": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": '{"ok":true}'},
        {"type": "function_call", "call_id": "c2", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "Bad input."},
        {"type": "function_call", "call_id": "c3", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c3", "output": "The person declined this call."},
        {"type": "function_call", "call_id": "c4", "name": "do_it", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c4", "output": "Stopped before it ran."},
    ]


def test_reasoning_without_encrypted_content_goes_back_only_when_stored() -> None:
    part = ReasoningPart("Thinking.", provider="openai", provider_data={"items": [{"id": "rs_9"}]})
    messages = [Message(Role.ASSISTANT, [part])]
    assert OpenAIResponsesTransport("o3", api_key=wire.FAKE_KEY).request_messages(messages) == []
    stored = OpenAIResponsesTransport("o3", api_key=wire.FAKE_KEY, store=True)
    assert stored.request_messages(messages) == [
        {"type": "reasoning", "id": "rs_9", "summary": [{"type": "summary_text", "text": "Thinking."}]}
    ]


# --- tool flows against the emulator ----------------------------------------------------------------------------------


@tool(risk=ToolRisk.READ_ONLY)
def get_weather(city: str) -> dict[str, Any]:
    """Gets the current weather.

    Args:
        city: The city.
    """
    return {"city": city, "sky": "sunny", "celsius": 24}


DELETED: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file's path.
    """
    DELETED.append(path)
    return f"deleted {path}"


def scripted(name: str, arguments: dict[str, Any]) -> wire.Script:
    """First request: a streamed call; follow-up: text made from the tool's result in the request."""

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        outputs = wire.last_outputs(body)
        if not outputs:
            text = json.dumps(arguments)
            pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
            return [wire.created(), *wire.function_call(name, pieces, 0, "call_1"), wire.completed()]
        answer = f"Result: {outputs[0]['output']}"
        return [wire.created(), *wire.message([answer[:7], answer[7:]], 0), wire.completed()]

    return script


async def test_weather_flow_on_loopback() -> None:
    with loopback(wire.Emulator(scripted("get_weather", {"city": "Lisbon"}))) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY)
        session = ChatSession(transport, tools=[get_weather])
        reply = await session.send("Weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == 'Result: {"city":"Lisbon","sky":"sunny","celsius":24}'
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert call.parsed_arguments == {"city": "Lisbon"}
    assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
    follow_up = server.requests[1].json()["input"]
    assert follow_up[-2:] == [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Lisbon"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"city":"Lisbon","sky":"sunny","celsius":24}'},
    ]
    assert server.requests[0].headers["authorization"] == f"Bearer {wire.FAKE_KEY}"


@pytest.mark.parametrize("decision", ["approved", "rejected"])
async def test_destructive_tool_flow_on_loopback(decision: str) -> None:
    import asyncio

    DELETED.clear()
    with loopback(wire.Emulator(scripted("delete_file", {"path": "/tmp/x"}))) as server:
        transport = OpenAIResponsesTransport("gpt-4o", base_url=server.url + "/v1", api_key=wire.FAKE_KEY)
        session = ChatSession(transport, tools=[delete_file])
        turn = asyncio.ensure_future(session.send("Delete /tmp/x"))
        await wait_for(lambda: bool(session.pending_approvals), timeout=5)
        (waiting,) = session.pending_approvals
        assert waiting.state is ToolCallState.AWAITING_APPROVAL
        assert len(server.requests) == 1
        session.approve(waiting.tool_call_id, decision, reason="keep it" if decision == "rejected" else None)
        reply = await turn
    assert reply.status is MessageStatus.COMPLETED, reply.error
    output = wire.last_outputs(server.requests[1].json())[0]
    if decision == "approved":
        assert DELETED == ["/tmp/x"]
        assert output == {"type": "function_call_output", "call_id": "call_1", "output": "deleted /tmp/x"}
    else:
        assert DELETED == []
        assert reply.tool_calls[0].state is ToolCallState.REJECTED
        assert output["call_id"] == "call_1"
        assert "declined" in output["output"]
        assert "keep it" in output["output"]
        assert reply.text == f"Result: {output['output']}"
