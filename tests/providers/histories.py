"""Histories for request-mapping tests: finished tool calls, and replies as each provider's stream stores them,
provider data included (the shapes of dump format 2)."""

from __future__ import annotations

from typing import Any

from ai_widgets import Message, ReasoningPart, TextPart, ToolCallPart, ToolCallState, ToolOutcome
from ai_widgets.messages import Role


def finish(part: ToolCallPart, state: ToolCallState, outcome: ToolOutcome) -> ToolCallPart:
    """``part`` moved to ``state`` with ``outcome`` the way a session moves it (its arguments complete first; a
    decline passes the approval)."""
    if part.state is ToolCallState.STREAMING:
        part.move(ToolCallState.PENDING)
    if state is ToolCallState.REJECTED and part.state is not ToolCallState.AWAITING_APPROVAL:
        part.move(ToolCallState.AWAITING_APPROVAL)
    part.finish(state, outcome)
    return part


def finished_call(
    call_id: str,
    name: str = "lookup",
    arguments: str = '{"query": "x"}',
    state: ToolCallState = ToolCallState.COMPLETED,
    outcome: ToolOutcome | None = None,
    **fields: Any,
) -> ToolCallPart:
    """A call that has run (or ended otherwise), as it stands in a request's history."""
    part = ToolCallPart(call_id, name, arguments, state=ToolCallState.PENDING, **fields)
    return finish(part, state, outcome or ToolOutcome.success("done"))


# Provider data as each transport stores it. The strings are unique so a request body can be searched for them.
ANTHROPIC_SIGNATURE = "ANTHROPIC-SIGNATURE-Eq0DCkYICBgCKkB"
ANTHROPIC_REDACTED = "ANTHROPIC-REDACTED-DATA-EmwKAhgBEgy"
ANTHROPIC_SEARCH_CONTENT = "ANTHROPIC-ENCRYPTED-RESULT-Ep8CCioIAhgB"
OPENAI_REASONING_ID = "rs_0fabc13af1ee0049cross"
OPENAI_ENCRYPTED = "OPENAI-ENCRYPTED-gAAAAABpaR3-cross"
FOREIGN_SIGNATURE = "GEMINI-THOUGHT-SIGNATURE-CiQBVKhc"


def anthropic_reply() -> Message:
    """A reply streamed by Anthropic: signed thinking, a server-run web search with its result block, redacted and
    consecutive thinking, a local call, and text."""
    search_result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01cross",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.com/utrecht",
                "title": "Utrecht weather",
                "encrypted_content": ANTHROPIC_SEARCH_CONTENT,
            }
        ],
    }
    search = finished_call(
        "srvtoolu_01cross",
        "web_search",
        '{"query": "weather Utrecht"}',
        outcome=ToolOutcome.success(
            [{"type": "web_search_result", "url": "https://example.com/utrecht", "title": "Utrecht weather"}],
            citations=["https://example.com/utrecht"],
        ),
        provider_executed=True,
        provider="anthropic",
        provider_data={"result_block": search_result},
    )
    blocks = [
        {"type": "redacted_thinking", "data": ANTHROPIC_REDACTED},
        {"type": "thinking", "thinking": "Then the tool.", "signature": ANTHROPIC_SIGNATURE + "-2"},
    ]
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart(
                "I should search first.", provider="anthropic", provider_data={"signature": ANTHROPIC_SIGNATURE}
            ),
            search,
            ReasoningPart("Then the tool.", provider="anthropic", provider_data={"blocks": blocks}),
            finished_call("toolu_01cross", "get_temperature", '{"city": "Utrecht"}', outcome=ToolOutcome.success("21")),
            TextPart("It is 21 °C in Utrecht."),
        ],
    )


def openai_reply() -> Message:
    """A reply streamed by OpenAI's Responses API: encrypted reasoning, a built-in web search (no provider data),
    a local call, and text."""
    items = [{"id": OPENAI_REASONING_ID, "encrypted_content": OPENAI_ENCRYPTED}]
    web_search = finished_call(
        "ws_0fabc13cross",
        "web_search",
        '{"type": "search", "query": "weather Utrecht"}',
        outcome=ToolOutcome.success({"type": "search", "query": "weather Utrecht"}),
        provider_executed=True,
    )
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart("**Checking the weather**", provider="openai", provider_data={"items": items}),
            web_search,
            TextPart("Let me check the thermometer."),
            finished_call(
                "call_LabG58cross", "get_temperature", '{"city":"Utrecht"}', outcome=ToolOutcome.success("21")
            ),
            TextPart("It is 21 °C."),
        ],
    )


def chat_reply() -> Message:
    """A reply streamed by a Chat Completions server: reasoning without provider data (DeepSeek's
    ``reasoning_content``), a call whose id holds characters Anthropic refuses (Kimi's), and text."""
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart("The user wants the temperature."),
            finished_call("functions.get_temperature:0", "get_temperature", '{"city": "Utrecht"}'),
            TextPart("It is 21 °C."),
        ],
    )


def other_reply() -> Message:
    """A reply of a provider none of these transports is (Gemini, say), whose provider data on reasoning, text, a
    call and a provider-run call happens to have the shapes Anthropic and OpenAI store: only ``provider`` tells."""
    lookalike = {
        "signature": FOREIGN_SIGNATURE,
        "blocks": [{"type": "thinking", "thinking": "Thinking.", "signature": FOREIGN_SIGNATURE + "-b"}],
        "items": [{"id": "rs_" + FOREIGN_SIGNATURE, "encrypted_content": FOREIGN_SIGNATURE + "-e"}],
    }
    search_block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_google", "content": FOREIGN_SIGNATURE}
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart("Thinking.", provider="google", provider_data=lookalike),
            TextPart("Checking.", provider="google", provider_data={"thought_signature": FOREIGN_SIGNATURE + "-t"}),
            finished_call(
                "srvtoolu_google",
                "google_search",
                '{"query": "Utrecht"}',
                outcome=ToolOutcome.success("Mild."),
                provider_executed=True,
                provider="google",
                provider_data={"result_block": search_block},
            ),
            finished_call(
                "gemini-call-1",
                "get_temperature",
                '{"city": "Utrecht"}',
                provider="google",
                provider_data={"thought_signature": FOREIGN_SIGNATURE + "-c"},
            ),
            TextPart("21 °C."),
        ],
    )


REPLIES = {"anthropic": anthropic_reply, "openai": openai_reply, "chat": chat_reply, "google": other_reply}

#: The strings of each provider's data: none may appear in another provider's request.
SECRETS = {
    "anthropic": [ANTHROPIC_SIGNATURE, ANTHROPIC_REDACTED, ANTHROPIC_SEARCH_CONTENT],
    "openai": [OPENAI_REASONING_ID, OPENAI_ENCRYPTED],
    "chat": [],
    "google": [FOREIGN_SIGNATURE],
}
