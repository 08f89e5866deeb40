"""A request's cost in the provider SDK does not grow with the history: the transports build the body once and the
SDK sends it without walking it again (its typed-argument transforms, tree copies and type conversions were nine
tenths of a long request's CPU). Counted as the SDK's Python function calls while one request is sent to a loopback
server, whatever the machine's speed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import anthropic
import openai
import pytest
from google import genai

from ai_widgets.transports import ChatRequest
from tests.providers.loopback import loopback
from tests.providers.request_bytes import TOOLS, TRANSPORTS, close_client, long_history, refuse, send_refused

SDK_DIRECTORIES = tuple(str(Path(module.__file__).parent) for module in (openai, anthropic, genai))


async def sdk_calls(transport: Any, request: ChatRequest) -> int:
    """How many Python functions of the SDKs run while ``transport`` sends ``request`` (and reads the refusal)."""
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.startswith(SDK_DIRECTORIES):
            calls += 1

    sys.setprofile(count)
    try:
        await send_refused(transport, request)
    finally:
        sys.setprofile(None)
    return calls


async def counts(name: str, url: str) -> list[int]:
    transport = TRANSPORTS[name](url)
    # The first request pays for the connection and the SDK's caches.
    found = [await sdk_calls(transport, ChatRequest(messages=long_history(n), tools=TOOLS)) for n in (2, 2, 200)]
    await close_client(transport)
    return found


@pytest.mark.parametrize("name", ["openai_chat", "openai_responses", "anthropic", "gemini", "gemini_vertex"])
def test_the_sdk_does_not_walk_the_history(name: str) -> None:
    with loopback(refuse) as server:
        _, short, long = asyncio.run(counts(name, server.url + "/v1" if name.startswith("openai") else server.url))
    # 400 messages instead of 4: before, the SDK ran thousands of functions more (one or more per item walked).
    assert long - short < 100, f"{name}: {short} SDK calls for 4 messages, {long} for 400"
