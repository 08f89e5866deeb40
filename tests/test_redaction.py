"""What a person sees and a notebook keeps has credentials redacted, in linear time, and prose left alone."""

from __future__ import annotations

import time

import pytest

from ai_widgets import ChatSession, ToolCallState, tool
from ai_widgets._safe import redact
from ai_widgets.messages import conversation_markdown, dump_messages
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("login failed: password=hunter2", "login failed: password=[redacted]"),
        ("PGPASSWORD=hunter2 psql", "PGPASSWORD=[redacted] psql"),
        ('{"user": "bob", "password": "hunter2"}', '{"user": "bob", "password": "[redacted]"}'),
        ("{'passwd': 'hunter2'}", "{'passwd': '[redacted]'}"),
        ("GET /cb?access_token=hunter2&state=1", "GET /cb?access_token=[redacted]&state=1"),
        ("token: hunter2", "token: [redacted]"),
        ("client_secret = hunter2", "client_secret = [redacted]"),
        ("SECRET=hunter2", "SECRET=[redacted]"),
        ("Driver=x;Uid=bob;Pwd=hunter2;", "Driver=x;Uid=bob;Pwd=[redacted];"),
        ("Authorization: Bearer hunter2", "Authorization: Bearer [redacted]"),
        ("authorization: Basic aHVudGVyMg==", "authorization: Basic [redacted]"),
        ('headers={"Authorization": "Token hunter2"}', 'headers={"Authorization": "Token [redacted]"}'),
        ("could not reach postgres://app:hunter2@db:5432/x", "could not reach postgres://app:[redacted]@db:5432/x"),
        ("redis://:hunter2@cache/0", "redis://:[redacted]@cache/0"),
        ("x-api-key: abcdefgh12", "x-api-key: [redacted]"),
    ],
)
def test_common_credential_shapes_are_redacted_and_their_names_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "prose",
    [
        "the token count went up",
        "password reset needed",
        "Token usage: 120 tokens, max_tokens=4000, token_count=5",
        "authorization required for this resource",
        "the API key provided is not valid",
        "the secrets of a good password are length and luck",
        "pwd: /home/me",
        "see https://example.com/a:b@c and https://user@host/x",
        "bearer bonds",
    ],
)
def test_ordinary_prose_is_left_alone(prose: str) -> None:
    assert redact(prose) == prose


@pytest.mark.parametrize(
    "text",
    [
        "password" * 125_000,
        "password" + " " * 1_000_000,
        "password:" + " " * 1_000_000,
        "token = " * 125_000,
        "a" * 1_000_000,
        "a:" * 500_000,
        "x://" * 250_000,
        "x://a:" + "b" * 1_000_000,
        "authorization: " * 70_000,
        "Bearer " * 140_000,
        "api_key=" * 125_000,
    ],
    ids=lambda text: repr(text[:12]),
)
def test_redaction_takes_linear_time_on_hostile_text(text: str) -> None:
    # A megabyte: linear patterns take milliseconds, a pattern that rescans a run from each character hours.
    started = time.process_time()
    redact(text)
    assert time.process_time() - started < 2.0


async def test_a_password_in_a_tools_error_stays_out_of_the_card_the_history_and_the_transcript() -> None:
    @tool
    def connect(host: str) -> str:
        """Connects."""
        raise ConnectionError(f"could not log in to postgres://app:hunter2@{host}/x with password=hunter2")

    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="connect", arguments={"host": "db"})]), "ok"]
    )
    session = ChatSession(transport, tools=[connect])
    reply = await session.send("connect")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert part.outcome.error is not None
    assert part.outcome.error.message == ("could not log in to postgres://app:[redacted]@db/x with password=[redacted]")
    assert "hunter2" not in (part.outcome.error.traceback or "")
    assert "hunter2" not in dump_messages(session.messages)
    assert "hunter2" not in conversation_markdown(session.messages)
