"""The OpenAI Responses kit: the transport against a loopback emulator, SDK clients answered in process, the wire
format's event builders, and a scripted emulator for the loopback server; and what the Responses test files share
(recorded streams, chunkings, a transport and a reply made for a test, a tool).

Event shapes follow the recorded stream ``openai_responses_reasoning_text_function_call.sse``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import openai
import pytest

from ai_widgets import (
    Message,
    tool,
)
from ai_widgets.transports import ChatRequest, OpenAIResponsesTransport
from tests.providers.kits._kit import MockAPI as _MockAPI
from tests.providers.kits._kit import ProviderKit, Wording
from tests.providers.kits.openai_chat import error_response  # both OpenAI APIs word errors alike
from tests.providers.loopback import Request, Response

FAKE_KEY = "sk-" + "test-SECRET123456789"


def frames(events: Iterable[dict[str, Any]]) -> list[bytes]:
    """Events as the API frames them (``event: <type>``, ``data: <json>``), numbered: one bytes per event."""
    out = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
    return out


def sse(events: Iterable[dict[str, Any]]) -> bytes:
    """Events as one SSE body."""
    return b"".join(frames(events))


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The data payloads of an SSE body."""
    return [json.loads(line[len("data: ") :]) for line in body.decode().splitlines() if line.startswith("data: ")]


# --- event builders -----------------------------------------------------------------------------------------------


def created(response_id: str = "resp_test") -> dict[str, Any]:
    return {
        "type": "response.created",
        "response": {"id": response_id, "object": "response", "status": "in_progress", "output": []},
    }


def message(text_pieces: Iterable[str], index: int, item_id: str = "msg_test") -> list[dict[str, Any]]:
    pieces = list(text_pieces)
    item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    events += [
        {
            "type": "response.output_text.delta",
            "content_index": 0,
            "delta": piece,
            "item_id": item_id,
            "output_index": index,
        }
        for piece in pieces
    ]
    done = {**item, "status": "completed", "content": [{"type": "output_text", "text": "".join(pieces)}]}
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def function_call(
    name: str, argument_pieces: Iterable[str], index: int, call_id: str, item_id: str | None = None
) -> list[dict[str, Any]]:
    """A function call item: added, argument deltas, arguments done, item done (as recorded)."""
    pieces = list(argument_pieces)
    item_id = item_id or f"fc_{call_id}"
    item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id}
    item["name"] = name
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    events += [
        {"type": "response.function_call_arguments.delta", "delta": p, "item_id": item_id, "output_index": index}
        for p in pieces
    ]
    arguments = "".join(pieces)
    events.append(
        {
            "type": "response.function_call_arguments.done",
            "arguments": arguments,
            "item_id": item_id,
            "output_index": index,
        }
    )
    done = {**item, "status": "completed", "arguments": arguments}
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def reasoning(index: int, item_id: str, encrypted: str, summary: Iterable[str] = ()) -> list[dict[str, Any]]:
    summaries = list(summary)
    item = {"id": item_id, "type": "reasoning", "summary": []}
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "item": item, "output_index": index}]
    for n, text in enumerate(summaries):
        events.append(
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": item_id,
                "output_index": index,
                "summary_index": n,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        events.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": item_id,
                "output_index": index,
                "summary_index": n,
                "delta": text,
            }
        )
    done = {
        **item,
        "encrypted_content": encrypted,
        "summary": [{"type": "summary_text", "text": t} for t in summaries],
    }
    events.append({"type": "response.output_item.done", "item": done, "output_index": index})
    return events


def completed(
    input_tokens: int = 10,
    output_tokens: int = 5,
    *,
    cached: int = 0,
    reasoning_tokens: int = 0,
    status: str = "completed",
    reason: str | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": "resp_test",
        "object": "response",
        "status": status,
        "output": [],
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        },
    }
    kind = "response.completed" if status == "completed" else f"response.{status}"
    return {"type": kind, "response": response}


# --- the SDK answered in process, and a scripted emulator for the loopback server --------------------------------------


class MockAPI(_MockAPI):
    """``AsyncOpenAI`` clients whose HTTP is answered in process (see :class:`tests.providers.kits._kit.MockAPI`)."""

    def client(self, *, api_key: str = FAKE_KEY, max_retries: int = 0) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key, base_url="https://api.test/v1", http_client=self.http_client(), max_retries=max_retries
        )

    def transport(self, model: str = "gpt-5.5", **kwargs: Any) -> OpenAIResponsesTransport:
        return OpenAIResponsesTransport(model, client=self.client(), **kwargs)


Script = Callable[[dict[str, Any]], list[dict[str, Any]]]


class Emulator:
    """A loopback handler: ``script(request_json)`` gives the events, streamed one event per chunk."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Request) -> Response:
        self.bodies.append(request.json())
        return Response(chunks=frames(self.script(self.bodies[-1])))


def last_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function_call_output items after the last user message of a request body."""
    items = body["input"]
    last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
    return [item for item in items[last_user:] if item.get("type") == "function_call_output"]


#: ``response.completed``, the event the stream stops at: the same bytes end every :func:`text_events` reply (not
#: numbered, so the contract can tell a reply that ends with it).
TERMINAL = f"event: response.completed\ndata: {json.dumps(completed(), ensure_ascii=False)}\n\n".encode()


def text_events(text: str, *, pieces: int = 3) -> list[bytes]:
    """A reply of ``text`` in ``pieces`` deltas, one bytes per event, ending with ``response.completed``
    (:data:`TERMINAL`)."""
    size = max(1, -(-len(text) // pieces))
    return [*frames([created(), *message([text[i : i + size] for i in range(0, len(text), size)], 0)]), TERMINAL]


KIT = ProviderKit(
    name="openai_responses",
    transport=OpenAIResponsesTransport,
    make=lambda url, **options: OpenAIResponsesTransport(
        "gpt-test", base_url=url + "/v1", **({"api_key": FAKE_KEY, "max_retries": 0} | options)
    ),
    mock=lambda handler, **options: OpenAIResponsesTransport("gpt-test", client=MockAPI(handler).client(), **options),
    mock_url="https://api.test",
    client=lambda: MockAPI().client(),
    key=FAKE_KEY,
    key_as_echoed=FAKE_KEY[:8] + "*" * 10 + FAKE_KEY[-4:],
    key_variable="OPENAI_API_KEY",
    settings=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    missing_key="No API key for OpenAI: set OPENAI_API_KEY, or pass api_key= or client=.",
    terminal=TERMINAL,
    reply=text_events,
    error=error_response,
    connection_options=(),
    recordings=("openai_responses_reasoning_text_function_call", "openai_responses_error_insufficient_quota"),
    wording=Wording(
        timeout=lambda url, seconds: f"OpenAI did not answer in time (timeout {seconds:g} s, even after retries).",
        stalled=lambda url, seconds: f"OpenAI did not answer in time (timeout {seconds:g} s).",
        refused=lambda url: f"Could not reach OpenAI at {url}/v1, even after retries",
        dropped=lambda url: "The connection to OpenAI broke off mid-reply",
        provider=lambda url: "OpenAI",
        key_hint="OPENAI_API_KEY or api_key=",
    ),
)


REASONING_FIXTURE = "openai_responses_reasoning_text_function_call"


CHUNKINGS = pytest.mark.parametrize("chunk_size", [None, 1], ids=["whole", "1-byte"])


async def collect(transport: OpenAIResponsesTransport, request: ChatRequest | None = None) -> list[Any]:
    events = []
    async for event in transport.stream(request or ChatRequest(messages=[Message.user("hi")])):
        events.append(event)
    return events


def transport_for(*bodies: bytes, chunk_size: int | None = None, **kwargs: Any) -> tuple[Any, Any]:
    api = MockAPI(*bodies, chunk_size=chunk_size)
    return OpenAIResponsesTransport("gpt-5.5", client=api.client(), **kwargs), api


def text_reply(text: str) -> bytes:
    return sse([created(), *message([text], 0), completed()])


@tool
def get_capital(country: str) -> str:
    """Gets a country's capital.

    Args:
        country: The country.
    """
    return f"The capital of {country} is Spudville."
