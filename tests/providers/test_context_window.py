"""A conversation longer than the model's context window, through each transport over real HTTP (a loopback emulator
started by each test): 200 messages with 5 KB tool results against a 20,000-token window. Every request body the
server receives fits by the session's estimate, the current turn goes whole, and the model is told what was left out;
the history keeps everything. A provider's own "context too long" error (each in the shape the provider really sends
it, quoted from reports of it) is retried once, shortened, and the turn completes; a second one ends the turn with an
error naming the sizes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ai_widgets import ChatSession, Message, RequestOptions, tool
from ai_widgets.messages import MessageStatus, Role, TextPart, ToolCallPart, ToolCallState
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session._context import DEFAULT_OUTPUT_RESERVE, estimate_tokens
from ai_widgets.transports import (
    DEFAULT_MODELS,
    AnthropicTransport,
    ContextTooLongError,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
)
from ai_widgets.transports._errors import ProviderError, classified
from ai_widgets.transports._windows import known_window
from tests.providers.kits import KITS, ProviderKit, anthropic, gemini, openai_chat, openai_responses
from tests.providers.loopback import Request, Response, loopback

EVERY_KIT = pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())
WINDOW = 20_000
NOW = "the question asked now"


def result_text(n: int) -> str:
    """A 5 KB tool result: rows of words and numbers, as a data tool returns."""
    row = f"row {n}: station alpha reading 12.5 degrees, humidity 40 percent, wind north at 7 knots. "
    return (row * (5_000 // len(row) + 1))[:5_000]


def history(turns: int = 100) -> list[Message]:
    """``2 * turns`` messages: a question, and a reply that called a tool (5 KB result) and answered."""
    messages = []
    for n in range(turns):
        messages.append(Message(Role.USER, [TextPart(f"question {n}")], created_at=1_780_000_000 + n * 60))
        part = ToolCallPart(f"call_{n}", "lookup", json.dumps({"topic": n}), state=ToolCallState.PENDING)
        part.move(ToolCallState.RUNNING)
        part.finish(ToolCallState.COMPLETED, ToolOutcome.success(result_text(n)))
        reply = [TextPart(f"looking up {n}"), part, TextPart(f"answer {n}")]
        messages.append(Message(Role.ASSISTANT, reply, created_at=1_780_000_000 + n * 60 + 5))
    return messages


#: What the tool returns in the current turn: it must reach the model whole.
CURRENT_RESULT = "current: " + result_text(999)


@tool
def lookup(topic: int) -> str:
    """Looks a topic up."""
    return CURRENT_RESULT


# --- each provider's wire ---------------------------------------------------------------------------------------------


def call_reply(kit: ProviderKit) -> Response:
    """The model calling ``lookup`` once, as the kit's provider streams it."""
    arguments = {"topic": 999}
    match kit.name:
        case "openai_chat":
            return Response(chunks=openai_chat.sse_reply(calls=[openai_chat.Call("call_now", "lookup", arguments)]))
        case "openai_responses":
            events = [
                openai_responses.created(),
                *openai_responses.function_call("lookup", [json.dumps(arguments)], 0, "call_now"),
            ]
            return Response(chunks=[*openai_responses.frames(events), openai_responses.TERMINAL])
        case "anthropic":
            blocks = [{"type": "tool_use", "id": "toolu_now", "name": "lookup", "input": arguments}]
            return Response(chunks=[anthropic.sse(anthropic.reply_events(blocks, stop_reason="tool_use"))])
        case "gemini":
            return Response(chunks=[gemini.call_reply({"name": "lookup", "args": arguments, "id": "call_now"})])
    raise AssertionError(kit.name)


def json_error(status: int, body: dict[str, Any]) -> Response:
    headers = {"content-type": "application/json", "retry-after-ms": "1"}
    return Response(status=status, headers=headers, chunks=[json.dumps(body).encode()])


def too_long(kit: ProviderKit) -> Response:
    """The provider refusing a request past the context window, in the shape it really sends (quoted from reports:
    crewAIInc/crewAI-examples#121 for Chat Completions, dyad-sh/dyad#1672 for the Responses stream's error event,
    sojohnnysaid/project-guide#2 for Anthropic, google-gemini/gemini-cli#4118 for Gemini), with this test's sizes."""
    match kit.name:
        case "openai_chat":
            message = (
                "This model's maximum context length is 20000 tokens. However, your messages resulted in 26120 "
                "tokens. Please reduce the length of the messages."
            )
            error = {"message": message, "type": "invalid_request_error", "param": "messages"}
            return json_error(400, {"error": error | {"code": "context_length_exceeded"}})
        case "openai_responses":
            error = {
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "param": "input",
            }
            events = [openai_responses.created(), {"type": "error", "error": error}]
            return Response(chunks=openai_responses.frames(events))
        case "anthropic":
            error = {"type": "invalid_request_error", "message": "prompt is too long: 26120 tokens > 20000 maximum"}
            return json_error(400, {"type": "error", "error": error, "request_id": "req_011CSNYqawDMMLh8zPLmMmJ1"})
        case "gemini":
            message = "The input token count (26120) exceeds the maximum number of tokens allowed (20000)."
            return json_error(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
    raise AssertionError(kit.name)


def scripted(*steps: Response) -> Callable[[Request], Response]:
    """Answers the n-th request with the n-th step (the last repeats)."""
    count = [0]

    def handle(request: Request) -> Response:
        count[0] += 1
        return steps[min(count[0], len(steps)) - 1]

    return handle


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON body (keys left out: they are the wire format's framing)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def body_tokens(body: dict[str, Any]) -> int:
    """What a request body carries, by the session's estimate."""
    return sum(estimate_tokens(text) for text in strings(body) if text != body.get("model"))


# --- 200 messages against a 20,000-token window -------------------------------------------------------------------


@EVERY_KIT
async def test_every_request_of_a_long_conversation_fits_the_window_whole_current_turn_and_a_note(
    kit: ProviderKit,
) -> None:
    messages = history()
    with loopback(scripted(call_reply(kit), Response(chunks=kit.reply("done")))) as server:
        session = ChatSession(
            kit.make(server.url),
            tools=[lookup],
            messages=messages,
            request_options=RequestOptions(context_window=WINDOW),
        )
        reply = await session.send(NOW)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "done"
    bodies = [request.json() for request in server.requests]
    assert len(bodies) == 2
    for body in bodies:
        raw = json.dumps(body)
        assert body_tokens(body) <= WINDOW - DEFAULT_OUTPUT_RESERVE, body_tokens(body)
        assert NOW in raw  # the current turn's question
        assert "[Note from the chat application" in raw
        assert "oldest messages" in raw
        assert 'question 0"' not in raw
        assert "question 99" in raw
    assert CURRENT_RESULT in json.dumps(bodies[1])  # the current turn's tool result, whole
    cut = session.context_cut
    assert cut is not None
    assert cut.window == WINDOW
    assert cut.left_out_messages > 100
    assert cut.first_sent_id == messages[cut.left_out_messages].id
    # The history keeps everything, whole.
    assert len(session.messages) == 202
    assert [p.result_for_model() for m in session.messages[:200] for p in m.tool_calls] == [
        result_text(n) for n in range(100)
    ]


# --- the provider's own "too long" --------------------------------------------------------------------------------


@EVERY_KIT
async def test_a_context_too_long_error_is_retried_once_shortened_and_the_turn_completes(kit: ProviderKit) -> None:
    with loopback(scripted(too_long(kit), Response(chunks=kit.reply("fine")))) as server:
        session = ChatSession(kit.make(server.url), tools=[lookup], messages=history())
        reply = await session.send(NOW)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "fine"
    first, second = (request.json() for request in server.requests)
    assert body_tokens(second) < body_tokens(first) * 0.8  # no window known: cut to what the error says, or half
    assert "[Note from the chat application" in json.dumps(second)
    assert NOW in json.dumps(second)
    assert session.context_cut is not None


@EVERY_KIT
async def test_a_second_context_too_long_error_ends_the_turn_naming_the_sizes(kit: ProviderKit) -> None:
    with loopback(scripted(too_long(kit))) as server:
        session = ChatSession(
            kit.make(server.url), messages=history(), request_options=RequestOptions(context_window=WINDOW)
        )
        reply = await session.send(NOW)
    assert len(server.requests) == 2
    assert reply.status is MessageStatus.ERROR
    error = reply.error or ""
    assert error.startswith("The conversation is too long for the model's context window: even shortened, the ")
    assert "tokens by the session's estimate" in error
    assert "against a context window of 20,000 tokens" in error
    if kit.name != "openai_responses":  # the Responses API states no sizes
        assert "(the provider counted 26,120 tokens, its limit is 20,000)" in error
    assert len(session.messages) == 202  # nothing lost; the session goes on
    with loopback(scripted(Response(chunks=kit.reply("again")))) as server:
        session.transport = kit.make(server.url)
        assert (await session.send("and now?")).text == "again"


@pytest.mark.parametrize(
    ("text", "tokens", "limit"),
    [
        (
            "OpenAI refused the request (400). This model's maximum context length is 4097 tokens. However, you "
            "requested 4130 tokens (3130 in the messages, 1000 in the completion).",
            4130,
            4097,
        ),
        (
            "Anthropic refused the request (400). invalid_request_error: input length and `max_tokens` exceed context "
            "limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again",
            207951,
            200000,
        ),
        ("Anthropic refused the request (413). request_too_large: Request exceeds the maximum size", None, None),
        ("OpenAI: context_length_exceeded: Your input exceeds the context window of this model.", None, None),
    ],
)
def test_the_one_rule_reads_every_wording_and_its_sizes(text: str, tokens: int | None, limit: int | None) -> None:
    error = classified(ProviderError(text))
    assert isinstance(error, ContextTooLongError)
    assert str(error) == text
    assert (error.tokens, error.limit) == (tokens, limit)


def test_other_errors_are_left_as_they_are() -> None:
    error = ProviderError("OpenAI refused the request (400). Invalid value for 'temperature'.")
    assert classified(error) is error


# --- the model's known window -----------------------------------------------------------------------------------------


def test_each_transport_knows_its_default_models_window_and_none_for_a_local_server() -> None:
    assert OpenAIChatTransport(DEFAULT_MODELS["openai-chat"], api_key="k").profile.context_window == 400_000
    assert OpenAIResponsesTransport(DEFAULT_MODELS["openai-responses"], api_key="k").profile.context_window == 400_000
    assert AnthropicTransport(DEFAULT_MODELS["anthropic"], api_key="k").profile.context_window == 200_000
    assert GeminiTransport(DEFAULT_MODELS["gemini"], api_key="k").profile.context_window == 1_000_000
    # A server genai-prices does not know: its own limits (Ollama's default is a few thousand tokens), so none.
    assert OpenAIChatTransport("qwen3", base_url="http://localhost:11434/v1").profile.context_window is None
    assert GeminiTransport("gemini-3.5-flash", base_url="http://127.0.0.1:9/").profile.context_window is None


def test_a_model_genai_prices_does_not_list_gets_its_familys_window() -> None:
    assert known_window("anthropic", "claude-opus-9-9") == 200_000
    assert known_window("google", "gemini-3-ultra-preview-0999") == 1_048_576
    assert known_window("openai", "o4-mini-2099-01-01") == 200_000
    assert known_window("openai", "davinci-999") is None
