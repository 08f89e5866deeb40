"""``InlineUpdates``: the agent's ``session/update`` notifications go to the client as they are read, in order, and
everything else goes on to the SDK unchanged; a bad update is skipped, not the stream."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

pytest.importorskip("acp")

from acp.schema import AgentMessageChunk, AgentThoughtChunk, SessionNotification

from ai_widgets.integrations._acp_inline_updates import InlineUpdates


def update(text: str, kind: str = "agent_message_chunk", **params: Any) -> dict[str, Any]:
    chunk = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": chunk, **params}}


class Script:
    """A message transport that hands out the given messages, then ``None``."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages = list(messages)
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def receive(self) -> dict[str, Any] | None:
        return self.messages.pop(0) if self.messages else None

    async def close(self) -> None:
        self.closed = True


class Client:
    def __init__(self, *, fail_on: str | None = None) -> None:
        self.updates: list[tuple[str, Any, dict[str, Any]]] = []
        self.fail_on = fail_on

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.fail_on is not None and getattr(update.content, "text", None) == self.fail_on:
            raise RuntimeError("the client failed")
        self.updates.append((session_id, update, kwargs))


async def test_updates_go_to_the_client_in_order_and_the_rest_to_the_sdk() -> None:
    request = {"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file", "params": {"sessionId": "s1", "path": "/a"}}
    response = {"jsonrpc": "2.0", "id": 0, "result": {"stopReason": "end_turn"}}
    other = {"jsonrpc": "2.0", "method": "_zed/hello", "params": {}}
    as_request = {**update("asked"), "id": 8}  # a session/update with an id is a request: the SDK answers it
    wire = Script(update("a"), update("b", "agent_thought_chunk"), request, update("c"), other, as_request, response)
    client = Client()
    inline = InlineUpdates(wire, client, SessionNotification.model_validate)

    assert await inline.receive() == request
    assert [(s, type(u), u.content.text) for s, u, _ in client.updates] == [
        ("s1", AgentMessageChunk, "a"),
        ("s1", AgentThoughtChunk, "b"),
    ]
    assert await inline.receive() == other
    assert client.updates[-1][1].content.text == "c"
    assert await inline.receive() == as_request
    assert await inline.receive() == response
    assert await inline.receive() is None
    assert len(client.updates) == 3

    await inline.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
    assert wire.sent == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}]
    await inline.close()
    assert wire.closed


async def test_the_notifications_meta_reaches_the_client_as_keywords() -> None:
    client = Client()
    inline = InlineUpdates(
        Script(update("a", _meta={"claudeCode": {"x": 1}})), client, SessionNotification.model_validate
    )
    assert await inline.receive() is None
    assert client.updates[0][2] == {"claudeCode": {"x": 1}}


async def test_an_invalid_update_or_a_failing_client_is_logged_and_the_stream_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    invalid = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"x": 1}}}
    client = Client(fail_on="boom")
    inline = InlineUpdates(
        Script(update("a"), invalid, update("boom"), update("b")), client, SessionNotification.model_validate
    )
    with caplog.at_level(logging.WARNING, logger="ai_widgets"):
        assert await inline.receive() is None
    assert [u.content.text for _, u, _ in client.updates] == ["a", "b"]
    said = caplog.text
    assert "session/update that is not valid; skipped" in said
    assert "handling an ACP agent's session/update failed" in said


async def test_an_update_after_a_request_follows_what_the_sdks_task_for_the_request_does_first() -> None:
    # The SDK runs each request in a task of its own; a handler that puts its card's events before it awaits
    # (request_permission) must put them before the updates the agent wrote after the request.
    request = {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {}}
    seen: list[str] = []

    class Recording(Client):
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            seen.append(update.content.text)

    async def handle(message: dict[str, Any]) -> None:
        seen.append(f"request {message['id']}")

    inline = InlineUpdates(Script(update("a"), request, update("b")), Recording(), SessionNotification.model_validate)
    tasks = []
    while (message := await inline.receive()) is not None:  # as the SDK's receive loop: a task per request
        tasks.append(asyncio.ensure_future(handle(message)))
    await asyncio.gather(*tasks)
    assert seen == ["a", "request 7", "b"]
