"""PydanticAITransport on a real pydantic-ai model class over HTTP (``OpenAIChatModel`` against a loopback server):
stop closes the connection, HTTP failures and a server that dies read as clear errors, usage is priced by the
server's provider."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

from ai_widgets import ChatSession, MessageStatus
from ai_widgets.messages import Message
from ai_widgets.transports import ChatRequest, ContextTooLongError, ProviderError, PydanticAITransport
from tests.helpers import wait_for
from tests.providers.loopback import Request, Response, loopback, sse


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-bench",
        "choices": [choice],
    } | extra


def model(url: str) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-bench", provider=OpenAIProvider(base_url=f"{url}/v1", api_key="sk-test"))


def transport(url: str) -> PydanticAITransport:
    return PydanticAITransport(model(url), settings={"max_retries": 0})


async def test_a_streamed_reply_over_http() -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    events = [
        chunk({"role": "assistant", "content": "Hel"}),
        chunk({"content": "lo"}),
        chunk({}, "stop"),
        {**chunk({}), "choices": [], "usage": usage},
        "[DONE]",
    ]
    with loopback(lambda request: Response(chunks=sse(events))) as server:
        session = ChatSession(transport(server.url))
        reply = await session.send("hi")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "Hello"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (12, 3)
    assert server.requests[0].json()["messages"][-1] == {"role": "user", "content": "hi"}


async def test_stop_closes_the_http_stream_at_once() -> None:
    hung_up = threading.Event()

    def endless() -> Iterator[bytes]:
        yield from sse([chunk({"role": "assistant", "content": "Hello"})])
        try:
            while True:  # a reply that never ends, until the client hangs up
                time.sleep(0.02)
                yield from sse([chunk({"content": "."})])
        finally:
            hung_up.set()

    with loopback(lambda request: Response(chunks=endless())) as server:
        session = ChatSession(transport(server.url))
        task = asyncio.create_task(session.send("talk"))
        await wait_for(lambda: bool(session.messages) and session.messages[-1].text.startswith("Hello"))
        session.stop()
        reply = await asyncio.wait_for(task, 5)
        assert reply.status is MessageStatus.CANCELLED
        # The server notices the closed connection on its next write (20 ms apart).
        assert await asyncio.to_thread(hung_up.wait, 2)


@pytest.mark.parametrize(
    ("status", "body", "kind", "words"),
    [
        (429, {"error": {"message": "Rate limit reached", "type": "requests"}}, ProviderError, "rate limiting"),
        (401, {"error": {"message": "Incorrect API key"}}, ProviderError, "rejected the API key"),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, your messages resulted "
                    "in 9000 tokens.",
                    "code": "context_length_exceeded",
                }
            },
            ContextTooLongError,
            "context window",
        ),
    ],
)
async def test_http_failures_read_clearly(status: int, body: dict[str, Any], kind: type[Exception], words: str) -> None:
    def refuse(request: Request) -> Response:
        return Response(status=status, headers={"content-type": "application/json"}, chunks=[json.dumps(body).encode()])

    with loopback(refuse) as server, pytest.raises(kind, match=words) as raised:
        async for _ in transport(server.url).stream(ChatRequest([Message.user("hi")])):
            pass
    assert "sk-test" not in str(raised.value)
    assert body["error"]["message"] in str(raised.value)
    assert "status_code:" not in str(raised.value)  # the provider's words, not pydantic-ai's repr of the error
    if kind is ContextTooLongError:
        assert (raised.value.tokens, raised.value.limit) == (9000, 8192)  # type: ignore[attr-defined]


async def test_a_server_that_dies_mid_reply_is_a_provider_error() -> None:
    async def die_mid_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")  # the request's head; its body is never read
        first = b"".join(sse([chunk({"role": "assistant", "content": "Hel"})]))
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        writer.write(head + f"{len(first):x}\r\n".encode() + first + b"\r\n")
        await writer.drain()
        writer.transport.abort()  # the server dies: no last chunk, the connection reset

    server = await asyncio.start_server(die_mid_reply, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reply = await ChatSession(transport(f"http://127.0.0.1:{port}")).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Hel"
    assert "broke off mid-reply" in (reply.error or "")


async def test_a_server_that_is_not_there_is_unreachable() -> None:
    server = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()  # nothing listens on the port now
    with pytest.raises(ProviderError, match="Could not reach") as raised:
        async for _ in transport(f"http://127.0.0.1:{port}").stream(ChatRequest([Message.user("hi")])):
            pass
    assert not isinstance(raised.value, ContextTooLongError)


def anthropic_thinking_reply(text: str) -> list[dict[str, Any]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-bench", "content": []}

    def block(index: int, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": delta}

    return [
        {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        block(0, {"type": "thinking_delta", "thinking": "Hmm, "}),
        block(0, {"type": "thinking_delta", "thinking": "yes."}),
        block(0, {"type": "signature_delta", "signature": "SIG-abc"}),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        block(1, {"type": "text_delta", "text": text}),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ]


async def test_anthropic_thinking_goes_back_signed_through_pydantic_ais_anthropic_model() -> None:
    with loopback(lambda request: Response(chunks=sse(anthropic_thinking_reply("Yes."), event_names=True))) as server:
        claude = AnthropicModel("claude-bench", provider=AnthropicProvider(base_url=server.url, api_key="sk-ant-test"))
        session = ChatSession(PydanticAITransport(claude, settings={"max_retries": 0}))
        first = await session.send("think")
        assert first.text == "Yes."
        assert first.parts[0].text == "Hmm, yes."
        await session.send("again")
    sent = server.requests[1].json()["messages"]
    assert sent[1]["role"] == "assistant"
    assert sent[1]["content"][0] == {"type": "thinking", "thinking": "Hmm, yes.", "signature": "SIG-abc"}


def test_openai_responses_models_send_no_item_ids_unless_asked() -> None:
    provider = OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    responses = PydanticAITransport(OpenAIResponsesModel("gpt-5", provider=provider))
    assert responses.settings["openai_send_reasoning_ids"] is False
    asked = PydanticAITransport(
        OpenAIResponsesModel("gpt-5", provider=provider), settings={"openai_send_reasoning_ids": True}
    )
    assert asked.settings["openai_send_reasoning_ids"] is True
    assert "openai_send_reasoning_ids" not in PydanticAITransport(model("http://127.0.0.1:9")).settings
