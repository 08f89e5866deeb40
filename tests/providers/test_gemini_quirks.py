"""GeminiTransport's quirks: ids, thought signatures on text and thoughts, streamed partial arguments, how responses
end, Google's error shapes, Vertex AI credentials and the SDK imported only when used.

The recorded streams, request building and tool flows are in ``test_gemini.py``; what every transport does the
same way is in ``test_contract.py``."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from typing import Any

import pytest

from ai_widgets import ChatSession, FinishReason, Message, ReasoningPart, TextPart
from ai_widgets.messages import MessageStatus, Role, dump_messages
from ai_widgets.transports import GeminiTransport, ProviderError
from ai_widgets.transports._gemini import DEFAULT_MODEL, SKIP_SIGNATURE
from ai_widgets.transports._gemini_arguments import ArgumentsWriter
from tests.providers.histories import finished_call
from tests.providers.kits import recorded
from tests.providers.kits.gemini import (
    FAKE_KEY,
    GEMINI_FIXTURE,
    PLAIN_KEY,
    Emulator,
    MockAPI,
    call_reply,
    chunk,
    error_body,
    error_response,
    get_country,
    read_screen,
    sse,
    text_reply,
)
from tests.providers.loopback import loopback

# --- quirks: ids ------------------------------------------------------------------------------------------------------


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


# --- quirks: thought signatures on text and thoughts ------------------------------------------------------------------


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
    assert signatures == [[SKIP_SIGNATURE, None], [None, "b3du", None]]
    assert base64.b64decode(SKIP_SIGNATURE) == b"skip_thought_signature_validator"


# --- quirks: streamed partial arguments -------------------------------------------------------------------------------


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


# --- quirks: how responses end ----------------------------------------------------------------------------------------


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
    JSON; now the reply ends there, as every transport's does, and reads as broken off. Gemini sends its finish with
    the last text, and the SDK does not say the chunk was the body's last: the data tells (cut inside an object or a
    string), and none of that chunk's text is shown."""
    whole = sse([chunk({"text": "Partial"})]) + sse([chunk({"text": " and more"}, finish="STOP")])
    for cut in (whole[:-40], whole[: whole.rindex(b" and more") + 4]):  # mid-object, mid-string
        reply = await ChatSession(MockAPI(cut).transport()).send("hi")
        assert reply.status is MessageStatus.ERROR
        assert reply.error == "The model's response broke off before it was complete."
        assert reply.text == "Partial"


async def test_a_last_chunk_without_its_blank_line_that_is_not_json_is_an_error() -> None:
    """Not cut off but not JSON either: the SDK's parse error is the reply's, worded as a chunk that is not JSON."""
    reply = await ChatSession(MockAPI(sse([chunk({"text": "Partial"})]) + b"data: {not json").transport()).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "not JSON" in reply.error


# --- quirks: errors, keys and construction ----------------------------------------------------------------------------


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
    ],
)
async def test_an_invalid_key_is_a_400_and_errors_keep_googles_status_name(
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
    assert len(emulator.bodies) == requests


async def test_vertex_credentials_that_fail_say_so() -> None:
    from google import genai
    from google.oauth2.credentials import Credentials

    client = genai.Client(vertexai=True, project="p", location="us-central1", credentials=Credentials(token=None))
    reply = await ChatSession(GeminiTransport("gemini-x", client=client)).send("hi")
    assert reply.error is not None
    assert "Vertex AI) could not get credentials" in reply.error


@pytest.mark.usefixtures("no_gemini_settings")
async def test_a_server_given_by_base_url_gets_googles_deadline_for_the_whole_reply() -> None:
    with loopback(Emulator(text_reply("Local."))) as server:
        reply = await ChatSession(GeminiTransport("gemini-x", base_url=server.url)).send("hi")
        assert reply.text == "Local."
        headers = server.requests[0].headers
    assert headers["x-goog-api-key"] == "not-needed"  # no key: a placeholder (tests/providers/test_contract.py)
    # The 60 s timeout bounds the wait between chunks; Google's deadline for the whole reply is 20 minutes.
    assert headers["x-server-timeout"] == "1200"


@pytest.mark.usefixtures("no_gemini_settings")
async def test_the_google_api_key_variable_works_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    transport = GeminiTransport()
    assert transport.model == DEFAULT_MODEL
    assert not transport.vertexai
    assert FAKE_KEY not in repr(transport)


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
