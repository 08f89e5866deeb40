"""A transport's requests from more than one event loop: a chat's turns run on the kernel's loop (``send``, ``ask``)
and on the package's private one (``ask_sync``). Defect: the SDK client's pooled connections belonged to the first
loop, so the first request from another failed ("bound to a different event loop"): the openai SDK ended the reply
in that error, the anthropic SDK retried it after a pause. Each loop now sends through a client of its own."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ai_widgets import ChatSession, MessageStatus
from ai_widgets.transports import AnthropicTransport, OpenAIChatTransport
from ai_widgets.transports._loop_clients import ClientPerLoop
from tests.integrations.fake_anthropic import Reply, reframe
from tests.providers.local_server_emulators import JSON, Turn, VLLMEmulator
from tests.providers.loopback import Request, Response, Server, loopback


def answer(body: JSON) -> str:
    return "You said: " + str(body["messages"][-1]["content"])[:40]


@pytest.fixture
def openai_server() -> Iterator[Server]:
    emulator = VLLMEmulator(lambda body: Turn(text=answer(body)))

    def handle(request: Request) -> Response:
        if request.method == "POST":
            emulator.served_model_name = request.json().get("model")
        return emulator(request)

    with loopback(handle) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[Server]:
    def handle(request: Request) -> Response:
        body = request.json()
        return Response(chunks=[reframe(Reply(text="ok"), str(body.get("model")))])

    with loopback(handle) as server:
        yield server


def on_another_loop(session: ChatSession, text: str) -> Any:
    """Sends ``text`` from a new event loop on another thread (as ``ask_sync`` does from the package's own)."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(session.send(text))))
    thread.start()
    thread.join(30)
    return result[0]


def posts(server: Server) -> list[Request]:
    return [request for request in server.requests if request.method == "POST"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_each_loop_sends_once_and_is_answered(
    provider: str, openai_server: Server, anthropic_server: Server
) -> None:
    if provider == "openai":
        server, transport = openai_server, OpenAIChatTransport("m", base_url=f"{openai_server.url}/v1", api_key="k")
    else:
        server, transport = anthropic_server, AnthropicTransport("m", base_url=anthropic_server.url, api_key="k")
    session = ChatSession(transport)
    first = await session.send("one")
    second = await asyncio.to_thread(on_another_loop, session, "two")
    third = await session.send("three")
    fourth = await asyncio.to_thread(on_another_loop, session, "four")
    assert [r.status for r in (first, second, third, fourth)] == [MessageStatus.COMPLETED] * 4, second.error
    # Each request went out once: no failure and retry after a switch of loops.
    assert len(posts(server)) == 4
    assert {request.headers.get("x-stainless-retry-count", "0") for request in posts(server)} == {"0"}


async def test_a_client_passed_in_with_an_http_client_of_its_own_is_used_as_given_on_every_loop() -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", http_client=httpx.AsyncClient())
    clients = ClientPerLoop(client, own=False)
    assert clients.current() is client
    assert await asyncio.to_thread(lambda: asyncio.run(current(clients))) is client  # its settings kept


async def test_a_client_passed_in_with_the_sdks_own_http_client_is_copied_for_another_loop() -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    clients = ClientPerLoop(client, own=False)
    assert clients.current() is client
    assert await asyncio.to_thread(lambda: asyncio.run(current(clients))) is not client


async def current(clients: ClientPerLoop) -> Any:
    return clients.current()


async def test_a_built_client_is_copied_once_per_further_loop_with_its_own_connections() -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=7)
    clients = ClientPerLoop(client, own=True)
    assert clients.current() is client

    def on_a_new_loop() -> tuple[Any, Any]:
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(current(clients)), loop.run_until_complete(current(clients))
        finally:
            loop.close()

    other, again = await asyncio.to_thread(on_a_new_loop)
    assert again is other  # made once for that loop
    assert other is not client
    assert other._client is not client._client  # its own HTTP connections
    assert (other.base_url, other.api_key, other.max_retries, other.timeout) == (client.base_url, "k", 0, 7)
    assert clients.current() is client
