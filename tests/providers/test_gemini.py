"""GeminiTransport: recorded streams through the real SDK (answered in process), the exact follow-up requests, thought
signatures, ids, images in tool results, errors over real HTTP, and a conversation that moves to Gemini."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import subprocess
import sys
from typing import Any

import anyio
import httpx2
import pytest
from google import genai
from google.genai import types

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
from ai_widgets.transports import ChatRequest, GeminiTransport, ProviderError
from ai_widgets.transports._gemini import _SKIP_SIGNATURE, DEFAULT_MODEL
from ai_widgets.transports._gemini_arguments import ArgumentsWriter
from tests.helpers import wait_for
from tests.providers import histories
from tests.providers.anthropic_emulator import Recording
from tests.providers.gemini_emulator import (
    FAKE_KEY,
    Emulator,
    MockAPI,
    call_reply,
    chunk,
    error_body,
    error_response,
    expected,
    function_responses,
    recorded,
    recorded_chunks,
    sse,
    text_reply,
)
from tests.providers.histories import finished_call
from tests.providers.loopback import Response, loopback

# A key no generic pattern recognises: only the transport's own redaction keeps it out.
PLAIN_KEY = "gm" + "SECRET-plain-0123456789"
GEMINI_FIXTURE = "gemini_function_call_empty_args_thought_signature"
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


# --- recorded streams ----------------------------------------------------------------------------------------------


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


@tool
def get_country() -> str:
    """The country the person is in."""
    return "Mexico"


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


@tool
def read_screen(id: str) -> str:
    """Reads a screen.

    Args:
        id: The screen.
    """
    return f"screen {id}"


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
    assert on_api[1]["parts"][0]["thoughtSignature"] == _SKIP_SIGNATURE


# --- ids -----------------------------------------------------------------------------------------------------------


async def test_an_id_gemini_gives_goes_back_on_the_call_and_its_response() -> None:
    first = call_reply({"name": "read_screen", "args": {"id": "A"}, "id": "fc-7a", "thoughtSignature": "c2lnLWE="})
    api = MockAPI(first, text_reply("Done."))
    session = ChatSession(api.transport(), tools=[read_screen])
    reply = await session.send("Read A")
    (call,) = reply.tool_calls
    assert call.tool_call_id == "fc-7a"
    assert call.provider_data == {"thought_signature": "c2lnLWE=", "id": "fc-7a"}
    assert api.bodies[1]["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "read_screen", "args": {"id": "A"}, "id": "fc-7a"},
                    "thoughtSignature": "c2lnLWE=",
                }
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "read_screen", "response": {"output": "screen A"}, "id": "fc-7a"}}],
        },
    ]


async def test_ids_made_here_are_unique_in_a_turn_and_never_sent() -> None:
    api = MockAPI(recorded(GEMINI_FIXTURE), recorded(GEMINI_FIXTURE), text_reply("Mexico, twice."))
    reply = await ChatSession(api.transport(), tools=[get_country]).send("Which country? Check twice.")
    first, second = reply.tool_calls
    assert first.tool_call_id != second.tool_call_id
    body = json.dumps(api.bodies[2])
    assert first.tool_call_id not in body
    assert second.tool_call_id not in body
    roles = [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in api.bodies[2]["contents"]]
    assert roles == [
        ("user", ["text"]),
        ("model", ["functionCall"]),
        ("user", ["functionResponse"]),
        ("model", ["functionCall"]),
        ("user", ["functionResponse"]),
    ]


# --- thought signatures on text and thoughts ---------------------------------------------------------------------


async def test_a_signature_on_text_goes_back_on_that_text() -> None:
    api = MockAPI(text_reply("Hello there.", signature="dGV4dC1zaWc="), text_reply("Bye."), chunk_size=7)
    session = ChatSession(api.transport())
    reply = await session.send("hi")
    assert reply.text == "Hello there."
    text, signed = reply.parts
    assert isinstance(text, TextPart)
    assert isinstance(signed, ReasoningPart)  # the one place a stream can store data for text
    assert (signed.text, signed.provider, signed.provider_data) == ("", "gemini", {"thought_signature": "dGV4dC1zaWc="})
    await session.send("bye")
    assert api.bodies[1]["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "Hello there.", "thoughtSignature": "dGV4dC1zaWc="}]},
        {"role": "user", "parts": [{"text": "bye"}]},
    ]


async def test_signed_thoughts_go_back_and_unsigned_ones_do_not() -> None:
    stream = sse(
        [
            chunk({"text": "Unsigned musing.", "thought": True}),
            chunk({"text": "Plan", "thought": True}),
            chunk({"text": " made.", "thought": True, "thoughtSignature": "dGhvdWdodA=="}),
            chunk({"text": "Answer."}, finish="STOP"),
        ]
    )
    thinking = {"includeThoughts": True, "thinkingLevel": "low"}
    api = MockAPI(stream, text_reply("Ok."))
    session = ChatSession(api.transport(thinking=thinking))
    reply = await session.send("q")
    assert reply.reasoning == "Unsigned musing.Plan made."
    await session.send("more")
    assert api.bodies[0]["generationConfig"] == {"thinkingConfig": thinking}
    assert api.bodies[1]["contents"][1] == {
        "role": "model",
        "parts": [
            {"text": "Unsigned musing.Plan made.", "thought": True, "thoughtSignature": "dGhvdWdodA=="},
            {"text": "Answer."},
        ],
    }


def test_the_first_call_of_each_model_content_without_a_signature_gets_the_dummy() -> None:
    reply = Message(
        Role.ASSISTANT,
        [
            finished_call("toolu_1", "lookup"),
            finished_call("toolu_2", "lookup"),
            TextPart("Again."),
            finished_call("call_3", "lookup", provider="gemini", provider_data={"thought_signature": "b3du"}),
            finished_call("call_4", "lookup"),
        ],
    )
    contents = MockAPI().transport().request_messages([Message.user("q"), reply])
    signatures = [[p.get("thoughtSignature") for p in c["parts"]] for c in contents if c["role"] == "model"]
    assert signatures == [[_SKIP_SIGNATURE, None], [None, "b3du", None]]
    assert base64.b64decode(_SKIP_SIGNATURE) == b"skip_thought_signature_validator"


# --- the request ---------------------------------------------------------------------------------------------------


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


# --- images in tool results ---------------------------------------------------------------------------------------


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


# --- streamed partial arguments ------------------------------------------------------------------------------------


class Arg:
    def __init__(self, path: str, string: str | None = None, more: bool = False, **value: Any) -> None:
        self.json_path = path
        self.string_value = string
        self.will_continue = more
        self.number_value = value.get("number")
        self.bool_value = value.get("boolean")
        self.null_value = value.get("null")


def write(*arguments: Arg) -> str:
    writer = ArgumentsWriter("f")
    return "".join(writer.feed(a) for a in arguments) + writer.close()


def test_partial_arguments_are_written_as_json_in_order() -> None:
    text = write(
        Arg("$.title", "Hel", more=True),
        Arg("$.title", 'lo "x"\n', more=True),
        Arg("$.title", ""),
        Arg("$.size", number=3.0),
        Arg("$.ratio", number=0.5),
        Arg("$.flags.bold", boolean=True),
        Arg("$.flags['font name']", "Inter"),
        Arg("$.items[0].name", "a"),
        Arg("$.items[0].qty", number=2),
        Arg("$.items[1].name", "b"),
        Arg("$.items[2]", null="NULL_VALUE"),
        Arg("$.note", "é"),
    )
    assert json.loads(text) == {
        "title": 'Hello "x"\n',
        "size": 3,
        "ratio": 0.5,
        "flags": {"bold": True, "font name": "Inter"},
        "items": [{"name": "a", "qty": 2}, {"name": "b"}, None],
        "note": "é",
    }
    assert text.startswith('{"title": "Hello \\"x\\"\\n", "size": 3, ')
    assert write() == "{}"
    assert json.loads(write(Arg("$.open", "never closed", more=True))) == {"open": "never closed"}


@pytest.mark.parametrize(
    "arguments",
    [
        [Arg("$.a.x", "1"), Arg("$.b", "2"), Arg("$.a.y", "3")],  # back into a closed object
        [Arg("$.a", "1"), Arg("$.a", "2")],  # a key twice
        [Arg("$.items[1]", "x")],  # an index out of order
        [Arg("a.b", "x")],  # not a JSON path
    ],
)
def test_partial_arguments_that_cannot_be_written_in_order_are_an_error(arguments: list[Arg]) -> None:
    with pytest.raises(ProviderError, match="f"):
        write(*arguments)


# --- how responses end ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "reason"), [("MAX_TOKENS", FinishReason.LENGTH), ("SAFETY", FinishReason.CONTENT_FILTER)]
)
async def test_finish_reasons(finish: str, reason: FinishReason) -> None:
    api = MockAPI(sse([chunk({"text": "Partial"}), chunk({"text": ""}, finish=finish)]))
    reply = await ChatSession(api.transport()).send("hi")
    assert reply.text == "Partial"
    assert reply.finish_reason is reason


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        (
            sse([{"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": "bad call x("}]}]),
            ["MALFORMED_FUNCTION_CALL", "not valid"],
        ),
        (
            sse([{"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "unsafe"}}]),
            ["blocked the prompt (SAFETY)", "unsafe"],
        ),
        (sse([chunk({"text": "Partial"})]), ["broke off"]),  # no finish reason: not complete
        (sse([chunk({"text": "Partial"}), error_body(503, "UNAVAILABLE", "overloaded")]), ["mid-reply", "UNAVAILABLE"]),
    ],
    ids=["malformed-call", "blocked", "no-finish", "error-chunk"],
)
@pytest.mark.parametrize("vertex", [False, True], ids=["api", "vertex"])
async def test_replies_that_go_wrong_say_why_and_the_session_goes_on(
    stream: bytes, words: list[str], vertex: bool
) -> None:
    api = MockAPI(stream, text_reply("Back."))
    session = ChatSession(api.vertex_transport() if vertex else api.transport())
    failed = await session.send("hi")
    assert failed.status is MessageStatus.ERROR
    assert failed.error is not None
    for word in words:
        assert word in failed.error
    if vertex and "MALFORMED" in failed.error:
        assert "bad call x(" in failed.error  # Gemini's own message (the SDK keeps it from Vertex AI only)
    assert (await session.send("again")).text == "Back."


async def test_a_last_chunk_cut_off_mid_json_leaves_the_reply_broken_off() -> None:
    """Before: the SDK's error for the cut-off data of the body's last event failed the reply as a chunk that is not
    JSON; now the reply ends there, as every transport's does, and reads as broken off."""
    whole = sse([chunk({"text": "Partial"})]) + sse([chunk({"text": " and more"}, finish="STOP")])
    for cut in (whole[:-40], whole[: whole.rindex(b" and more") + 4]):  # mid-object, mid-string
        reply = await ChatSession(MockAPI(cut).transport()).send("hi")
        assert reply.status is MessageStatus.ERROR
        assert reply.error == "The model's response broke off before it was complete."
        assert reply.text == "Partial"


async def test_a_last_chunk_without_its_blank_line_is_read_and_data_that_is_not_json_is_an_error() -> None:
    whole = sse([chunk({"text": "Partial"}), chunk({"text": " and more"}, finish="STOP")])
    reply = await ChatSession(MockAPI(whole.rstrip()).transport()).send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "Partial and more"
    reply = await ChatSession(MockAPI(sse([chunk({"text": "Partial"})]) + b"data: {not json").transport()).send("hi")
    assert reply.error is not None
    assert "not JSON" in reply.error


async def test_stop_mid_stream_closes_it_and_the_session_goes_on() -> None:
    slow = text_reply("word " * 200, pieces=100)
    api = MockAPI(slow, text_reply("Next."), chunk_size=50, delay=0.005)
    session = ChatSession(api.transport())
    turn = asyncio.create_task(session.send("talk"))
    await wait_for(lambda: bool(session.messages) and "word" in session.messages[-1].text, timeout=10)
    session.stop()
    stopped = await asyncio.wait_for(turn, 10)
    assert stopped.status is MessageStatus.CANCELLED
    assert len(stopped.text) < 1000
    assert (await session.send("go on")).text == "Next."


# --- errors, keys and construction --------------------------------------------------------------------------------


@pytest.fixture
def no_gemini_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ):
        monkeypatch.delenv(name, raising=False)


INVALID_KEY = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]


@pytest.mark.usefixtures("no_gemini_settings")
@pytest.mark.parametrize(
    ("code", "status", "details", "words", "requests"),
    [
        (400, "INVALID_ARGUMENT", INVALID_KEY, ["rejected the API key (400)", "GEMINI_API_KEY or GOOGLE_API_KEY"], 1),
        (403, "PERMISSION_DENIED", None, ["403", "GEMINI_API_KEY or GOOGLE_API_KEY", "PERMISSION_DENIED"], 1),
        (404, "NOT_FOUND", None, ["404", "model"], 1),
        (429, "RESOURCE_EXHAUSTED", None, ["429", "quota", "RESOURCE_EXHAUSTED"], 2),
        (500, "INTERNAL", None, ["server error (500)", "INTERNAL"], 2),
    ],
)
async def test_http_failures_are_clear_and_key_free(
    code: int,
    status: str,
    details: list[Any] | None,
    words: list[str],
    requests: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", PLAIN_KEY)
    message = f"{status.lower()}: the key {PLAIN_KEY} should never show"
    emulator = Emulator(lambda body: error_response(code, status, message, details))
    with loopback(emulator) as server:
        session = ChatSession(GeminiTransport("gemini-x", base_url=server.url, max_retries=1))
        reply = await session.send("hi")
        (request, *_) = server.requests
    assert request.headers["x-goog-api-key"] == PLAIN_KEY  # the SDK took the key from GEMINI_API_KEY
    assert request.path == "/v1/models/gemini-x:streamGenerateContent?alt=sse"
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    for word in words:
        assert word in reply.error
    assert PLAIN_KEY not in reply.error
    assert "SECRET" not in dump_messages(session.messages)
    assert len(emulator.bodies) == requests  # 429 and 5xx are retried, before the stream begins


async def test_a_server_error_is_retried_before_the_stream_begins() -> None:
    answers = iter([error_response(503, "UNAVAILABLE", "busy"), None])
    emulator = Emulator(lambda body: next(answers) or text_reply("Fine."))
    with loopback(emulator) as server:
        transport = GeminiTransport("gemini-x", base_url=server.url, api_key=FAKE_KEY, max_retries=2)
        reply = await ChatSession(transport).send("hi")
    assert reply.text == "Fine."
    assert len(emulator.bodies) == 2


async def test_timeouts_and_connection_failures() -> None:
    def slow(body: Any) -> Response:
        import time

        time.sleep(1.5)
        return Response(chunks=[text_reply("late")])

    with loopback(Emulator(slow)) as server:
        transport = GeminiTransport("gemini-x", base_url=server.url, api_key=FAKE_KEY, max_retries=0, timeout=0.5)
        reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "did not answer within 0.5 s" in reply.error

    transport = GeminiTransport("gemini-x", base_url="http://127.0.0.1:9", api_key=FAKE_KEY, max_retries=0)
    reply = await ChatSession(transport).send("hi")
    assert reply.error is not None
    assert "Could not reach Gemini" in reply.error
    assert FAKE_KEY not in reply.error


async def test_a_read_timeout_mid_stream() -> None:
    def stalls(body: Any) -> Response:
        def chunks() -> Any:
            import time

            yield sse([chunk({"text": "Hal"})])
            time.sleep(1.5)

        return Response(chunks=chunks())

    with loopback(Emulator(stalls)) as server:
        transport = GeminiTransport("gemini-x", base_url=server.url, api_key=FAKE_KEY, max_retries=0, timeout=0.5)
        reply = await ChatSession(transport).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Hal"
    assert reply.error is not None
    assert "stopped sending the reply" in reply.error


class _BrokenBody(httpx2.AsyncByteStream):
    def __init__(self, body: bytes, error: Exception) -> None:
        self.body = body
        self.error = error

    async def __aiter__(self) -> Any:
        yield self.body
        raise self.error


@pytest.mark.parametrize(
    "error",
    [ssl.SSLError(1, "bad record mac"), anyio.EndOfStream(), httpx2.RemoteProtocolError("peer closed connection")],
)
async def test_the_connection_breaking_mid_reply_is_worded_as_for_every_transport(error: Exception) -> None:
    """Before: the HTTP errors were sorted three ways, and an SSL error or anyio's end of stream mid-body left this
    transport as they were raised, not as a ProviderError."""

    def handle(request: Any) -> Any:
        body = _BrokenBody(sse([chunk({"text": "Hal"})]), error)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    options = types.HttpOptions(
        httpx_async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    transport = GeminiTransport("gemini-x", client=genai.Client(api_key=FAKE_KEY, http_options=options))
    events: list[Any] = []

    async def consume() -> None:
        async for event in transport.stream(ChatRequest(messages=[Message.user("hi")])):
            events.append(event)

    with pytest.raises(ProviderError) as raised:
        await consume()
    detail = f": {error}" if str(error) else ""
    assert str(raised.value) == f"The connection to Gemini broke off mid-reply{detail}."
    assert events[:2] == [ResponseStarted(), TextDelta("Hal")]


async def test_vertex_credentials_that_fail_say_so() -> None:
    from google import genai
    from google.oauth2.credentials import Credentials

    client = genai.Client(vertexai=True, project="p", location="us-central1", credentials=Credentials(token=None))
    reply = await ChatSession(GeminiTransport("gemini-x", client=client)).send("hi")
    assert reply.error is not None
    assert "Vertex AI) could not get credentials" in reply.error


@pytest.mark.usefixtures("no_gemini_settings")
def test_a_missing_key_is_a_clear_error_at_construction() -> None:
    with pytest.raises(
        ProviderError, match=r"^No API key for Gemini: set GEMINI_API_KEY or GOOGLE_API_KEY, or pass api_key= or"
    ):
        GeminiTransport()


@pytest.mark.usefixtures("no_gemini_settings")
async def test_a_server_given_by_base_url_needs_no_key() -> None:
    with loopback(Emulator(text_reply("Local."))) as server:
        reply = await ChatSession(GeminiTransport("gemini-x", base_url=server.url)).send("hi")
        assert reply.text == "Local."
        headers = server.requests[0].headers
    assert headers["x-goog-api-key"] == "not-needed"
    # The 60 s timeout bounds the wait between chunks; Google's deadline for the whole reply is 20 minutes.
    assert headers["x-server-timeout"] == "1200"


@pytest.mark.usefixtures("no_gemini_settings")
async def test_the_google_api_key_variable_works_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    transport = GeminiTransport()
    assert transport.model == DEFAULT_MODEL
    assert not transport.vertexai
    assert FAKE_KEY not in repr(transport)


@pytest.mark.parametrize(
    "connection",
    [{"api_key": FAKE_KEY}, {"base_url": "http://127.0.0.1:9"}, {"vertexai": True}, {"project": "p"}],
)
def test_client_and_connection_arguments_exclude_each_other(connection: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"pass either client= or .*, not both"):
        GeminiTransport("gemini-x", client=MockAPI().client(), **connection)
    with pytest.raises(ValueError, match="model"):
        GeminiTransport("", api_key=FAKE_KEY)


@pytest.mark.usefixtures("no_gemini_settings")
async def test_keys_stay_out_of_widget_state_transcripts_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.widget import ChatWidget
    from tests.widget_harness import recording_comms

    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    answers = iter([error_response(400, "INVALID_ARGUMENT", f"API key not valid: {FAKE_KEY}", INVALID_KEY)])
    with (
        recording_comms() as wire,
        loopback(Emulator(lambda body: next(answers, None) or text_reply("Hello."))) as server,
    ):
        chat = ChatWidget(ChatSession(GeminiTransport("gemini-x", base_url=server.url, max_retries=0)))
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


def test_the_sdk_is_imported_only_when_the_transport_is_used() -> None:
    code = (
        "import sys, ai_widgets, ai_widgets.transports as t\n"
        "assert 'google.genai' not in sys.modules\n"
        "t.GeminiTransport\n"
        "assert 'google.genai' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_quickstart_picks_gemini_by_its_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.demo import pick_transport

    for name in ("AI_WIDGETS_BASE_URL", "AI_WIDGETS_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    transport, which = pick_transport()
    assert isinstance(transport, GeminiTransport)
    assert which == f"Using Gemini {transport.model} (GEMINI_API_KEY is set)."
    assert FAKE_KEY not in which
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    transport, which = pick_transport()
    assert isinstance(transport, GeminiTransport)
    assert "(GOOGLE_API_KEY is set)" in which


# --- moving a conversation to Gemini --------------------------------------------------------------------------------


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
                assert part["thoughtSignature"] in signed | {_SKIP_SIGNATURE}, "a signature Gemini did not issue"
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
    from ai_widgets.transports import AnthropicTransport
    from tests.providers import anthropic_emulator as anthropic_wire

    @tool
    def get_temperature(city: str) -> str:
        """The temperature in a city.

        Args:
            city: The city.
        """
        return f"{city}: 21 °C"

    thinking = anthropic_wire.expected("anthropic_thinking_tool_use")["content"]
    answers = iter([Response(chunks=[anthropic_wire.recorded("anthropic_thinking_tool_use")]), None])
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
    assert gemini.bodies[1]["contents"][1]["parts"][0]["thoughtSignature"] == _SKIP_SIGNATURE
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
