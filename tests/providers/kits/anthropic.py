"""The Anthropic kit: the transport against a loopback emulator, SDK clients answered in process, the wire format, and
a small Messages API emulator for the loopback server; and what the Anthropic test files share (the recorded streams'
names, the request mapping of a conversation).

The emulator speaks the wire format of ``POST /v1/messages`` with ``stream: true``: each request goes to a script
step (a function of the request body) that returns the content blocks of the reply, which are streamed as the
API streams them (text in small deltas, tool input as ``input_json_delta`` pieces).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic

from ai_widgets import (
    Message,
)
from ai_widgets.transports import AnthropicTransport
from tests.providers.kits._kit import MockAPI as _MockAPI
from tests.providers.kits._kit import ProviderKit, Wording
from tests.providers.loopback import Request, Response

FAKE_KEY = "sk-" + "test-SECRET123456789"


# --- the SDK answered in process ----------------------------------------------------------------------------------------


class MockAPI(_MockAPI):
    """``AsyncAnthropic`` clients whose HTTP is answered in process (see :class:`tests.providers.kits._kit.MockAPI`)."""

    def client(self, *, api_key: str = FAKE_KEY, max_retries: int = 0) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key=api_key, max_retries=max_retries, http_client=self.http_client())

    def transport(self, model: str = "claude-test", **kwargs: Any) -> AnthropicTransport:
        return AnthropicTransport(model, client=self.client(), **kwargs)


# --- the wire format ---------------------------------------------------------------------------------------------------


def sse(events: list[dict[str, Any]]) -> bytes:
    """Messages API events as the server frames them (``event:`` line, ``data:`` line, blank line)."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def reply_events(
    blocks: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 20,
    output_tokens: int = 10,
    piece: int = 4,
    message_stop: bool = True,
) -> list[dict[str, Any]]:
    """The stream of one reply made of ``blocks`` (``text``, ``thinking``, ``tool_use`` with an ``input`` dict, or
    any other block, sent whole in its ``content_block_start``)."""
    usage = {"input_tokens": input_tokens, "cache_read_input_tokens": 0, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_emulated", "type": "message", "role": "assistant", "model": "claude-emulated"},
        }
    ]
    events[0]["message"] |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            deltas = [{"type": "text_delta", "text": t} for t in pieces(block["text"], piece)]
        elif kind == "thinking":
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            deltas = [{"type": "thinking_delta", "thinking": t} for t in pieces(block["thinking"], piece)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind in ("tool_use", "server_tool_use"):
            start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            arguments = json.dumps(block.get("input", {})) if block.get("input") else ""
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, piece)]
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
            deltas = []
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    if message_stop:
        events.append({"type": "message_stop"})
    return events


# --- a loopback emulator -----------------------------------------------------------------------------------------------

Step = Callable[[dict[str, Any]], list[dict[str, Any]]]


class Emulator:
    """A scripted Messages API for the loopback server: request ``n`` is answered by ``steps[n]`` (the last repeats).

    A step takes the request body and returns the reply's events (see :func:`reply_events`), or a ``Response``.
    """

    def __init__(self, *steps: Callable[[dict[str, Any]], list[dict[str, Any]] | Response]) -> None:
        self.steps = steps
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Request) -> Response:
        body = request.json()
        self.bodies.append(body)
        step = self.steps[min(len(self.bodies), len(self.steps)) - 1]
        answer = step(body)
        if isinstance(answer, Response):
            return answer
        data = sse(answer)
        return Response(chunks=pieces_bytes(data, 97))


def pieces_bytes(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the last user message of a request body."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def error_response(status: int, error_type: str, message: str) -> Response:
    """Anthropic's error body."""
    payload = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    # retry-after-ms keeps the SDK's retries quick in tests (it honours the header).
    headers = {"content-type": "application/json", "retry-after-ms": "10"}
    return Response(status=status, headers=headers, chunks=[payload])


def text_events(text: str, *, pieces: int = 3) -> list[bytes]:
    """A reply of ``text`` in ``pieces`` deltas, one bytes per event, ending with ``message_stop``."""
    size = max(1, -(-len(text) // pieces))
    return [sse([event]) for event in reply_events([{"type": "text", "text": text}], piece=size)]


KIT = ProviderKit(
    name="anthropic",
    transport=AnthropicTransport,
    make=lambda url, **options: AnthropicTransport(
        "claude-test", base_url=url, **({"api_key": FAKE_KEY, "max_retries": 0} | options)
    ),
    mock=lambda handler, **options: AnthropicTransport("claude-test", client=MockAPI(handler).client(), **options),
    mock_url="https://api.anthropic.com",
    client=lambda: MockAPI().client(),
    key=FAKE_KEY,
    key_as_echoed=FAKE_KEY,
    key_variable="ANTHROPIC_API_KEY",
    settings=(
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CONFIG_DIR",
    ),
    missing_key="No API key for Anthropic: set ANTHROPIC_API_KEY, or pass api_key= or",
    terminal=sse([{"type": "message_stop"}]),
    reply=text_events,
    error=lambda status, message: error_response(status, "api_error", message),
    connection_options=(),
    recordings=(
        "anthropic_text_then_tool_use",
        "anthropic_thinking_tool_use",
        "anthropic_tool_use_no_args",
        "anthropic_server_tools_escape_split",
    ),
    wording=Wording(
        timeout=lambda url, seconds: f"Anthropic did not answer within {seconds:g} s, even after retries.",
        stalled=lambda url, seconds: "Anthropic stopped sending the reply (read timeout).",
        refused=lambda url: f"Could not reach Anthropic at {url}, even after retries",
        dropped=lambda url: "The connection to Anthropic broke off mid-reply",
        provider=lambda url: "Anthropic",
        key_hint="ANTHROPIC_API_KEY or api_key=",
    ),
)


FIXTURES = [
    "anthropic_text_then_tool_use",
    "anthropic_thinking_tool_use",
    "anthropic_tool_use_no_args",
    "anthropic_server_tools_escape_split",
]


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return AnthropicTransport("claude-x", client=MockAPI().client()).request_messages(messages)
