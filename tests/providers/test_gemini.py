"""GeminiTransport: recorded streams through the real SDK (answered in process), the exact follow-up requests with
their thought signatures, images in tool results, and a conversation that moves to Gemini.

What every transport does the same way (timeouts, connections, HTTP errors, keys, how a stream ends, Stop) is in
``test_contract.py``, and this transport's quirks in ``test_gemini_quirks.py``."""

from __future__ import annotations

import asyncio
import base64
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
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import MessageStatus, Role, dump_messages, load_messages
from ai_widgets.transports import AnthropicTransport, ChatRequest
from ai_widgets.transports._gemini import SKIP_SIGNATURE
from tests.helpers import wait_for
from tests.providers import histories
from tests.providers.histories import finished_call
from tests.providers.kits import Recording, expected, recorded
from tests.providers.kits import anthropic as anthropic_wire
from tests.providers.kits.gemini import (
    GEMINI_FIXTURE,
    MockAPI,
    call_reply,
    function_responses,
    get_country,
    read_screen,
    recorded_chunks,
    text_reply,
)
from tests.providers.loopback import Response, loopback

VERTEX_FIXTURE = "vertex_gemini_partial_args_multi_call"
# A 1x1 PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
GIF = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").decode()


def signature_of(name: str, call_name: str) -> str:
    """The thought signature a recorded stream carries on a call, as Gemini sent it."""
    for data in recorded_chunks(name):
        for part in data["candidates"][0]["content"]["parts"]:
            if part.get("functionCall", {}).get("name") == call_name and "thoughtSignature" in part:
                return str(part["thoughtSignature"])
    raise AssertionError(f"no signed call {call_name} in {name}")


# --- recorded streams -------------------------------------------------------------------------------------------------


def check_events(events: list[Any], want: dict[str, Any], *, name: str, vertex: bool) -> None:
    """The events say what the recorded stream says: reasoning, text, each call with its arguments, usage, the end."""
    assert isinstance(events[0], ResponseStarted)
    assert events[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)  # STOP, with calls
    assert sum(isinstance(e, (ResponseStarted, ResponseCompleted)) for e in events) == 2
    u = want["usage"]
    assert [e for e in events if isinstance(e, UsageUpdate)][-1] == UsageUpdate(
        input_tokens=u["promptTokenCount"],
        output_tokens=u["candidatesTokenCount"] + u["thoughtsTokenCount"],
        cached_tokens=0,
        reasoning_tokens=u["thoughtsTokenCount"],
    )
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == want["thought_text"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == want["text"]
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [s.tool_name for s in starts] == [c["name"] for c in want["function_calls"]]
    assert len({s.tool_call_id for s in starts}) == len(starts)
    for start, call in zip(starts, want["function_calls"], strict=True):
        assert call["id"] is None
        assert start.tool_call_id.startswith("gemini_call_")  # Gemini gave none: made here
        deltas = [e.delta for e in events if isinstance(e, ToolCallDelta) and e.tool_call_id == start.tool_call_id]
        if call["streamed_partial_args"]:
            assert start.arguments is None
            assert len(deltas) == call["streamed_partial_args"] + 1  # each partial argument, then the end
            assert ToolCallArgumentsDone(start.tool_call_id) in events
            assert json.loads("".join(deltas)) == call["args"]
        else:
            assert deltas == []
            assert start.arguments is not None
            assert json.loads(start.arguments) == call["args"]
        if call["has_thought_signature"]:
            data = {"thought_signature": signature_of(name, call["name"])}
            if vertex:
                data["vertexai"] = True
            assert (start.provider, start.provider_data) == ("gemini", data)
        else:
            assert (start.provider, start.provider_data) == (None, None)


def check_message(reply: Message, want: dict[str, Any]) -> None:
    """The reply holds the thought summary as reasoning (unsigned) and each call with its arguments."""
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    reasoning = [p for p in reply.parts if isinstance(p, ReasoningPart)]
    assert [r.text for r in reasoning] == ([want["thought_text"]] if want["thought_text"] else [])
    assert all(r.provider is None for r in reasoning)
    calls = reply.tool_calls
    assert [(c.tool_name, c.parsed_arguments) for c in calls] == [
        (c["name"], c["args"]) for c in want["function_calls"]
    ]
    assert all(c.state is ToolCallState.PENDING for c in calls)  # execute_tools=False: left to the caller
    u = want["usage"]
    assert reply.usage.input_tokens == u["promptTokenCount"]
    assert reply.usage.output_tokens == u["candidatesTokenCount"] + u["thoughtsTokenCount"]
    assert reply.usage.reasoning_tokens == u["thoughtsTokenCount"]


@pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])
@pytest.mark.parametrize(("name", "vertex"), [(GEMINI_FIXTURE, False), (VERTEX_FIXTURE, True)])
async def test_recorded_stream(name: str, vertex: bool, chunk_size: int | None) -> None:
    api = MockAPI(recorded(name), chunk_size=chunk_size)
    recording = Recording(api.vertex_transport() if vertex else api.transport())
    reply = await ChatSession(recording, options=SessionOptions(execute_tools=False)).send("hi")
    want = expected(name)
    check_events(recording.events, want, name=name, vertex=vertex)
    check_message(reply, want)
    assert api.urls[0].endswith(":streamGenerateContent?alt=sse")
    if vertex:
        assert "/projects/test-project/locations/us-central1/publishers/google/models/" in api.urls[0]


async def test_the_follow_up_sends_the_call_back_with_its_signature_exactly() -> None:
    api = MockAPI(recorded(GEMINI_FIXTURE), text_reply("You are in Mexico."), chunk_size=1)
    transport = api.transport()
    session = ChatSession(transport, tools=[get_country])
    reply = await session.send("Which country am I in?")
    assert reply.text == "You are in Mexico."
    assert reply.usage.requests == 2
    declarations = [
        {
            "name": "get_country",
            "description": "The country the person is in.",
            "parametersJsonSchema": {"type": "object", "properties": {}},
        }
    ]
    assert api.bodies[1] == {
        "contents": [
            {"role": "user", "parts": [{"text": "Which country am I in?"}]},
            {
                "role": "model",
                "parts": [
                    # No id: Gemini gave none (the one the call has was made here). The signature as Gemini sent it.
                    {
                        "functionCall": {"name": "get_country", "args": {}},
                        "thoughtSignature": signature_of(GEMINI_FIXTURE, "get_country"),
                    }
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_country", "response": {"output": "Mexico"}}}],
            },
        ],
        "tools": [{"functionDeclarations": declarations}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {},
    }
    assert get_country.definition.parameters == declarations[0]["parametersJsonSchema"]
    # What was sent is what request_body says: the SDK sends the body as built.
    reply.parts = reply.parts[:1]  # the reply as it stood for the follow-up: the call, answered
    request = ChatRequest([*session.messages[:1], reply], [get_country.definition], RequestOptions())
    assert transport.request_body(request) == api.bodies[1]


@tool
def read_theme() -> dict[str, str]:
    """Reads the theme."""
    return {"theme": "dark"}


async def test_parallel_streamed_calls_on_vertex_get_their_responses_in_order() -> None:
    api = MockAPI(recorded(VERTEX_FIXTURE), text_reply("Dark, and three screens."), chunk_size=1)
    session = ChatSession(api.vertex_transport(stream_function_call_arguments=True), tools=[read_theme, read_screen])
    reply = await session.send("Read the theme, then screens A, B and C.")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert [c.state for c in reply.tool_calls] == [ToolCallState.COMPLETED] * 4
    assert api.bodies[0]["toolConfig"] == {
        "functionCallingConfig": {"mode": "AUTO", "streamFunctionCallArguments": True}
    }
    second = api.bodies[1]
    assert second["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                # The thought summary had no signature: left out. Parallel calls: only the first is signed.
                {
                    "functionCall": {"name": "read_theme", "args": {}},
                    "thoughtSignature": signature_of(VERTEX_FIXTURE, "read_theme"),
                },
                {"functionCall": {"name": "read_screen", "args": {"id": "A"}}},
                {"functionCall": {"name": "read_screen", "args": {"id": "B"}}},
                {"functionCall": {"name": "read_screen", "args": {"id": "C"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_theme", "response": {"output": '{"theme":"dark"}'}}},
                {"functionResponse": {"name": "read_screen", "response": {"output": "screen A"}}},
                {"functionResponse": {"name": "read_screen", "response": {"output": "screen B"}}},
                {"functionResponse": {"name": "read_screen", "response": {"output": "screen C"}}},
            ],
        },
    ]


async def test_a_signature_goes_back_only_to_the_api_that_issued_it() -> None:
    vertex = MockAPI(recorded(GEMINI_FIXTURE))
    session = ChatSession(vertex.vertex_transport(), tools=[get_country], options=SessionOptions(execute_tools=False))
    await session.send("Which country?")
    (call,) = session.messages[-1].tool_calls
    assert call.provider_data == {"thought_signature": signature_of(GEMINI_FIXTURE, "get_country"), "vertexai": True}
    messages = [*session.messages, Message.user("And now?")]
    on_vertex = vertex.vertex_transport().request_messages(messages)
    on_api = MockAPI().transport().request_messages(messages)
    assert on_vertex[1]["parts"][0]["thoughtSignature"] == signature_of(GEMINI_FIXTURE, "get_country")
    # The Developer API refuses Vertex AI's signatures: the documented dummy goes instead.
    assert on_api[1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE


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
    transport = MockAPI().transport(**kwargs)
    return transport.request_body(ChatRequest(messages, [t.definition for t in tools], options or RequestOptions()))


def test_request_fields() -> None:
    options = RequestOptions(
        system_prompt="Be brief.", temperature=0.3, max_tokens=99, extra={"safetySettings": [], "labels": {"a": "b"}}
    )
    body = body_for([Message.user("hi")], options, thinking={"thinkingBudget": 512})
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "lookup",
                        "description": "Looks something up.",
                        "parametersJsonSchema": lookup.definition.parameters,
                    }
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"temperature": 0.3, "maxOutputTokens": 99, "thinkingConfig": {"thinkingBudget": 512}},
        "safetySettings": [],
        "labels": {"a": "b"},
    }
    assert body_for([Message.user("hi")], tools=()) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {},
    }


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (ToolChoice.AUTO, {"mode": "AUTO"}),
        (ToolChoice.REQUIRED, {"mode": "ANY"}),
        (ToolChoice.specific("lookup"), {"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
    ],
)
def test_tool_choice(choice: ToolChoice, sent: dict[str, Any]) -> None:
    body = body_for([Message.user("hi")], RequestOptions(tool_choice=choice))
    assert body["toolConfig"] == {"functionCallingConfig": sent}


def test_tool_choice_none_sends_no_tools_at_all() -> None:
    body = body_for([Message.user("hi")], RequestOptions(tool_choice=ToolChoice.NONE))  # even with definitions
    assert "tools" not in body
    assert "toolConfig" not in body


def test_every_call_gets_its_response_failed_declined_and_cancelled_included() -> None:
    reply = Message(
        Role.ASSISTANT,
        [
            TextPart("Trying four."),
            finished_call("c1", outcome=ToolOutcome.success({"n": 1})),
            finished_call("c2", state=ToolCallState.FAILED, outcome=ToolOutcome.failure("It broke.")),
            finished_call("c3", state=ToolCallState.REJECTED, outcome=ToolOutcome.failure("The person declined.")),
            finished_call("c4", state=ToolCallState.CANCELLED, outcome=ToolOutcome.failure("Cancelled.")),
        ],
    )
    contents = body_for([Message.user("go"), reply, Message.user("and?")])["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert function_responses({"contents": contents[:3]}) == [
        {"name": "lookup", "response": {"output": '{"n":1}'}},
        {"name": "lookup", "response": {"error": "It broke."}},
        {"name": "lookup", "response": {"error": "The person declined."}},
        {"name": "lookup", "response": {"error": "Cancelled."}},
    ]
    assert contents[3] == {"role": "user", "parts": [{"text": "and?"}]}


def test_provider_run_calls_of_other_providers_are_left_out() -> None:
    contents = body_for([Message.user("q"), histories.anthropic_reply()])["contents"]
    names = [p["functionCall"]["name"] for c in contents for p in c["parts"] if "functionCall" in p]
    assert names == ["get_temperature"]  # Anthropic's web search ran there: not a call Gemini can take


def test_stream_function_call_arguments_needs_vertex() -> None:
    with pytest.raises(ValueError, match="needs Vertex AI"):
        MockAPI().transport(stream_function_call_arguments=True)


# --- request building: images in tool results -------------------------------------------------------------------------


def image_call(*attachments: dict[str, Any]) -> Message:
    outcome = ToolOutcome.success({"shown": True}, attachments=list(attachments))
    return Message(Role.ASSISTANT, [finished_call("c1", "plot", '{"query": "x"}', outcome=outcome)])


def test_images_go_inside_the_function_response_on_gemini_3() -> None:
    reply = image_call(
        {"mime_type": "image/png", "data": PNG},
        {"mime_type": "image/png", "url": "https://example.com/chart.png"},
        {"mime_type": "image/gif", "data": GIF},  # Gemini takes no GIF: the card keeps it
        {"mime_type": "application/zip", "data": "UEsDBA=="},
    )
    contents = body_for([Message.user("plot"), reply], model="gemini-3-flash-preview")["contents"]
    assert contents[2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "plot",
                    "response": {
                        "output": '{"shown":true}',
                        "images": [{"$ref": "plot-1.png"}, {"$ref": "plot-2.png"}],
                    },
                    "parts": [
                        {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "plot-1.png"}},
                        {
                            "fileData": {
                                "mimeType": "image/png",
                                "fileUri": "https://example.com/chart.png",
                                "displayName": "plot-2.png",
                            }
                        },
                    ],
                }
            }
        ],
    }
    assert len(contents) == 3


def test_images_follow_the_function_responses_on_older_models() -> None:
    reply = image_call({"mime_type": "image/png", "data": PNG})
    contents = body_for([Message.user("plot"), reply, Message.user("ok")], model="gemini-2.5-flash")["contents"]
    assert contents[2:] == [
        {"role": "user", "parts": [{"functionResponse": {"name": "plot", "response": {"output": '{"shown":true}'}}}]},
        {
            "role": "user",
            "parts": [
                {"text": "plot-1.png, an image in the result of plot:"},
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
            ],
        },
        {"role": "user", "parts": [{"text": "ok"}]},
    ]


async def test_an_image_a_tool_returns_reaches_the_model_through_the_sdk() -> None:
    @tool
    def plot() -> ToolOutcome:
        """Plots."""
        return ToolOutcome.success(text="A plot.", attachments=[{"mime_type": "image/png", "data": PNG}])

    api = MockAPI(call_reply({"name": "plot", "args": {}}), text_reply("A dot."))
    transport = api.transport("gemini-3-flash-preview")
    reply = await ChatSession(transport, tools=[plot]).send("plot it")
    assert reply.text == "A dot."
    (response,) = function_responses(api.bodies[1])
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "plot-1.png"}}]


# --- tool flows against the emulator ----------------------------------------------------------------------------------

# A conversation that moves to Gemini from another provider, and back.


def check_gemini_request(body: dict[str, Any], *, signed: set[str]) -> None:
    """``body`` follows the Gemini API's rules: roles, non-empty parts, each model content's calls answered in the next
    content in order, the first call of each model content signed (by Gemini, or the documented dummy)."""
    contents = body["contents"]
    assert contents
    assert contents[0]["role"] == "user"
    for index, content in enumerate(contents):
        assert set(content) == {"role", "parts"}
        assert content["role"] in ("user", "model")
        assert content["parts"]
        for part in content["parts"]:
            kinds = set(part) - {"thoughtSignature", "thought"}
            assert len(kinds) == 1, part
            if "thoughtSignature" in part:
                assert part["thoughtSignature"] in signed | {SKIP_SIGNATURE}, "a signature Gemini did not issue"
            if "text" in part and not part["text"]:
                assert "thoughtSignature" in part, "an empty text part carries a signature, or is not sent"
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if content["role"] == "model" and calls:
            first = next(p for p in content["parts"] if "functionCall" in p)
            assert "thoughtSignature" in first
            answers = [p["functionResponse"] for p in contents[index + 1]["parts"]]
            assert [a["name"] for a in answers] == [c["name"] for c in calls], "responses right after their calls"
            assert [a.get("id") for a in answers] == [c.get("id") for c in calls]
            for answer in answers:
                assert set(answer["response"]) <= {"output", "error", "images"}
        if content["role"] == "user" and any("functionResponse" in p for p in content["parts"]):
            assert all("functionResponse" in p for p in content["parts"])
            assert contents[index - 1]["role"] == "model"


@pytest.mark.parametrize("source", list(histories.REPLIES))
def test_a_conversation_from_any_provider_continues_on_gemini_without_their_data(source: str) -> None:
    messages = [Message.user("How warm is it in Utrecht?"), histories.REPLIES[source](), Message.user("Thanks.")]
    transport = MockAPI().transport()
    body = transport.request_body(ChatRequest(messages, [lookup.definition], RequestOptions()))
    check_gemini_request(body, signed=set())
    dumped = json.dumps(body, ensure_ascii=False)
    for secrets in histories.SECRETS.values():
        for secret in secrets:
            assert secret not in dumped, f"{secret[:40]!r} must not be sent"
    for part in messages[1].parts:
        if isinstance(part, ReasoningPart) and part.text:
            assert part.text not in dumped  # another provider's reasoning is left out
        if isinstance(part, ToolCallPart) and not part.provider_executed:
            assert part.tool_name in dumped
            assert part.tool_call_id not in dumped  # another provider's ids stay out
    assert "Thanks." in dumped
    assert transport.request_body(ChatRequest(load_messages(dump_messages(messages)), [lookup.definition])) == body


async def test_anthropic_thinking_then_gemini_then_back() -> None:
    @tool
    def get_temperature(city: str) -> str:
        """The temperature in a city.

        Args:
            city: The city.
        """
        return f"{city}: 21 °C"

    thinking = expected("anthropic_thinking_tool_use")["content"]
    answers = iter([Response(chunks=[recorded("anthropic_thinking_tool_use")]), None])
    anthropic = anthropic_wire.Emulator(
        lambda body: next(answers, None) or anthropic_wire.reply_events([{"type": "text", "text": "21 °C."}])
    )
    gemini = MockAPI(recorded(GEMINI_FIXTURE), text_reply("You are in Mexico."))
    with loopback(anthropic) as server:
        session = ChatSession(
            AnthropicTransport(
                "claude-x",
                base_url=server.url,
                api_key="sk-" + "test-anthropic-0000",
                thinking={"type": "enabled", "budget_tokens": 2048},
            ),
            tools=[get_temperature, get_country],
        )
        first = await session.send("How warm is it in Utrecht?")
        assert first.status is MessageStatus.COMPLETED, first.error
        session.transport = gemini.transport()
        second = await session.send("Which country am I in?")
        assert second.text == "You are in Mexico."
        session.transport = AnthropicTransport(
            "claude-x",
            base_url=server.url,
            api_key="sk-" + "test-anthropic-0000",
            thinking={"type": "enabled", "budget_tokens": 2048},
        )
        third = await session.send("Thanks.")
        assert third.status is MessageStatus.COMPLETED, third.error
    signature = signature_of(GEMINI_FIXTURE, "get_country")
    for body in gemini.bodies:
        check_gemini_request(body, signed={signature})
        dumped = json.dumps(body, ensure_ascii=False)
        assert thinking[0]["signature"] not in dumped
        assert thinking[0]["thinking"] not in dumped
        assert thinking[1]["id"] not in dumped
    assert [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in gemini.bodies[1]["contents"]] == [
        ("user", ["text"]),
        ("model", ["functionCall"]),  # Anthropic's call, with the dummy signature (its thinking left out)
        ("user", ["functionResponse"]),
        ("model", ["text"]),
        ("user", ["text"]),
        ("model", ["functionCall"]),  # Gemini's own, with its signature
        ("user", ["functionResponse"]),
    ]
    assert gemini.bodies[1]["contents"][1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert gemini.bodies[1]["contents"][5]["parts"][0]["thoughtSignature"] == signature
    # Back on Anthropic, Gemini's signature is not sent (its own thinking, with its signature, is).
    last = json.dumps(anthropic.bodies[-1])
    assert signature not in last
    assert thinking[0]["signature"] in last


def test_rounds_of_a_reply_alternate_with_their_responses() -> None:
    reply = Message(
        Role.ASSISTANT,
        [finished_call(f"c{n}", "lookup") if n % 2 else TextPart(f"step {n}") for n in range(6)],
    )
    contents = body_for([Message.user("q"), reply])["contents"]
    kinds = [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in contents]
    assert kinds == [
        ("user", ["text"]),
        ("model", ["text", "functionCall"]),
        ("user", ["functionResponse"]),
        ("model", ["text", "functionCall"]),
        ("user", ["functionResponse"]),
        ("model", ["text", "functionCall"]),
        ("user", ["functionResponse"]),
    ]


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file.
    """
    return f"deleted {path}"


async def test_a_declined_call_tells_gemini_why() -> None:
    api = MockAPI(
        call_reply({"name": "delete_file", "args": {"path": "notes.txt"}}, text="Deleting."), text_reply("Ok, kept.")
    )
    session = ChatSession(api.transport(), tools=[delete_file])
    turn = asyncio.create_task(session.send("Delete notes.txt"))

    def waiting() -> bool:
        calls = session.messages[-1].tool_calls if session.messages else []
        return bool(calls) and calls[0].state is ToolCallState.AWAITING_APPROVAL

    await wait_for(waiting, timeout=10)
    assert len(api.bodies) == 1
    session.approve(session.messages[-1].tool_calls[0].tool_call_id, "rejected", reason="keep it")
    reply = await asyncio.wait_for(turn, 10)
    assert reply.text == "Deleting.Ok, kept."
    (response,) = function_responses(api.bodies[1])
    assert response["name"] == "delete_file"
    assert "declined" in response["response"]["error"]
    assert "keep it" in response["response"]["error"]
