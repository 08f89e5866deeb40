"""A tool result longer than ``RequestOptions.max_tool_result_chars`` goes to the model cut in the middle, with a
note; the outcome keeps it whole. A 10 MB result would otherwise go again with every later request, and one past the
model's context would fail them all."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ai_widgets import ChatSession, Message, RequestOptions, ToolCallState, ToolOutcome, tool
from ai_widgets.events import StreamEvent
from ai_widgets.messages import Role
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.transports import (
    AnthropicTransport,
    ChatRequest,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
)
from ai_widgets.transports._history import outcome_text
from tests.providers.histories import finished_call

KEY = "test-key-not-secret"
HEAD, TAIL = "BEGINNING-OF-RESULT ", " END-OF-RESULT"


def long_result(size: int) -> str:
    return HEAD + "x" * (size - len(HEAD) - len(TAIL)) + TAIL


def test_a_result_within_the_limit_is_sent_whole() -> None:
    part = finished_call("c1", outcome=ToolOutcome.success(long_result(1_000)))
    assert outcome_text(part, 1_000) == long_result(1_000)
    assert outcome_text(part, None) == long_result(1_000)


@pytest.mark.parametrize("limit", [1, 2, 3, 100, 1_000, DEFAULT_MAX_TOOL_RESULT_CHARS])
def test_a_longer_result_keeps_its_beginning_and_end_and_says_how_much_was_left_out(limit: int) -> None:
    size = 3 * limit + 50
    part = finished_call("c1", outcome=ToolOutcome.success(long_result(size)))
    text = outcome_text(part, limit)
    head, note, tail = text.split("\n\n")
    assert len(head) + len(tail) == limit
    assert long_result(size).startswith(head)
    assert long_result(size).endswith(tail)
    assert note == (
        f"[… {size - limit:,} characters of this result left out here: it is {size:,} characters long, "
        f"and at most {limit:,} are sent …]"
    )
    assert part.outcome is not None
    assert part.outcome.value == long_result(size)  # the outcome keeps it whole


def test_a_value_is_cut_as_the_json_the_model_reads_and_an_edit_note_stays() -> None:
    value = {"rows": [{"n": n, "name": f"row {n}"} for n in range(20_000)]}
    part = finished_call("c1", outcome=ToolOutcome.success(value))
    part.edited_arguments = {"query": "y"}
    text = outcome_text(part, 5_000)
    assert text.startswith('(The person changed the arguments before allowing this call; it ran with {"query": "y"}.)')
    assert text.endswith('"name":"row 19999"}]}')
    assert len(text) < 5_200


@pytest.mark.parametrize("bad", [0, -1, 1.5, "100", True])
def test_the_limit_must_be_a_positive_whole_number_or_none(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_tool_result_chars must be a whole number of at least 1, or None"):
        RequestOptions(max_tool_result_chars=bad)


TRANSPORTS: dict[str, Callable[[], Any]] = {
    "anthropic": lambda: AnthropicTransport("claude-test", api_key=KEY),
    "openai-chat": lambda: OpenAIChatTransport("gpt-test", api_key=KEY),
    "openai-responses": lambda: OpenAIResponsesTransport("gpt-test", api_key=KEY),
    "gemini": lambda: GeminiTransport("gemini-test", api_key=KEY),
}


def history(size: int) -> list[Message]:
    reply = Message(Role.ASSISTANT, [finished_call("call_1", outcome=ToolOutcome.success(long_result(size)))])
    return [Message.user("look it up"), reply, Message.user("and?")]


@pytest.mark.parametrize("name", TRANSPORTS)
def test_every_transport_sends_a_long_result_cut_and_a_short_one_whole(name: str) -> None:
    transport = TRANSPORTS[name]()
    size = 3_000_000
    cut = json.dumps(transport.request_body(ChatRequest(messages=history(size))))
    assert HEAD in cut
    assert TAIL in cut
    assert f"{size - DEFAULT_MAX_TOOL_RESULT_CHARS:,} characters of this result left out" in cut
    assert len(cut) < DEFAULT_MAX_TOOL_RESULT_CHARS + 2_000
    options = RequestOptions(max_tool_result_chars=None)
    whole = json.dumps(transport.request_body(ChatRequest(messages=history(size), options=options)))
    assert long_result(size) in whole
    small = RequestOptions(max_tool_result_chars=500)
    assert len(json.dumps(transport.request_body(ChatRequest(messages=history(size), options=small)))) < 2_500


class _Capture:
    """Answers like the scripted model, keeping each request."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []
        self._script = ScriptedTransport(
            [ScriptedReply(tool_calls=[ScriptedToolCall(name="dump", arguments={})]), ScriptedReply(text="Read it.")]
        )

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        return self._script.stream(request)


@tool
def dump() -> str:
    """Returns a very long text."""
    return long_result(10_000_000)


def test_the_sessions_request_options_reach_the_transport_and_the_card_keeps_the_whole_result() -> None:
    transport = _Capture()
    session = ChatSession(transport, tools=[dump], request_options=RequestOptions(max_tool_result_chars=2_000))
    reply = asyncio.run(session.send("dump it"))
    assert reply.text.endswith("Read it.")
    assert [r.options.max_tool_result_chars for r in transport.requests] == [2_000, 2_000]
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert call.outcome is not None
    assert call.outcome.value == long_result(10_000_000)
