"""The Chat Completions kit: the transport against a loopback emulator, SDK clients answered in process, the wire
format to script replies with, and an OpenAI-compatible emulator (SSE in the wire format) for the loopback server;
and what the Chat Completions test files share (a request, reading a stream whole, a tool).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from ai_widgets import (
    Message,
    RequestOptions,
    tool,
)
from ai_widgets.events import (
    StreamEvent,
)
from ai_widgets.transports import ChatRequest, OpenAIChatTransport
from tests.providers.kits._kit import MockAPI as _MockAPI
from tests.providers.kits._kit import ProviderKit, Wording
from tests.providers.loopback import Request, Response

FAKE_KEY = "sk-" + "test-SECRET123456789"


def pieces(body: bytes, size: int | None) -> Iterator[bytes]:
    """``body`` whole, or cut into ``size``-byte pieces."""
    if size is None:
        yield body
        return
    for start in range(0, len(body), size):
        yield body[start : start + size]


class MockAPI(_MockAPI):
    """``AsyncOpenAI`` clients whose HTTP is answered in process (see :class:`tests.providers.kits._kit.MockAPI`)."""

    def client(
        self, *, base_url: str = "https://api.openai.com/v1", api_key: str = FAKE_KEY, max_retries: int = 0
    ) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=max_retries, http_client=self.http_client()
        )

    def transport(self, model: str = "gpt-4o", **kwargs: Any) -> OpenAIChatTransport:
        return OpenAIChatTransport(model, client=self.client(), **kwargs)


# --- the wire format, written by a scripted server ------------------------------------------------------------


def _chunk(choices: list[dict[str, Any]], *, usage: dict[str, Any] | None = None, rid: str) -> bytes:
    payload: dict[str, Any] = {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "emulated",
        "choices": choices,
    }
    if usage is not None:
        payload["usage"] = usage
    return f"data: {json.dumps(payload)}\n\n".encode()


def _slices(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass(frozen=True)
class Call:
    """A tool call the emulated model makes."""

    id: str
    name: str
    arguments: dict[str, Any]


def sse_reply(
    *,
    text: str = "",
    reasoning: str = "",
    calls: Sequence[Call] = (),
    usage: tuple[int, int] = (50, 20),
    finish: str | None = None,
    slice_size: int = 4,
    rid: str = "chatcmpl-emulated",
    done: bool = True,
) -> list[bytes]:
    """One streamed Chat Completions response, one SSE event per chunk, as OpenAI sends it."""
    out = [_chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}], rid=rid)]
    for piece in _slices(reasoning, slice_size) if reasoning else []:
        out.append(_chunk([{"index": 0, "delta": {"reasoning_content": piece}, "finish_reason": None}], rid=rid))
    for piece in _slices(text, slice_size) if text else []:
        out.append(_chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}], rid=rid))
    for index, call in enumerate(calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(_chunk([{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}], rid=rid))
        for piece in _slices(json.dumps(call.arguments), slice_size):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            out.append(_chunk([{"index": 0, "delta": delta, "finish_reason": None}], rid=rid))
    reason = finish or ("tool_calls" if calls else "stop")
    out.append(_chunk([{"index": 0, "delta": {}, "finish_reason": reason}], rid=rid))
    prompt, completion = usage
    usage_body = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    out.append(_chunk([], usage=usage_body, rid=rid))
    if done:
        out.append(b"data: [DONE]\n\n")
    return out


# --- a scripted model behind the loopback server --------------------------------------------------------------


class Emulator:
    """An OpenAI-compatible server: the first request of a turn gets a streamed tool call; a follow-up (the last
    message is a ``tool`` result) gets text built from the tool results it carries.

    Args:
        calls: The calls made on a turn's first request (from its body).
        answer: The follow-up's text, from the ``tool`` messages after the last assistant message.
    """

    def __init__(
        self,
        calls: Callable[[dict[str, Any]], Sequence[Call]],
        answer: Callable[[list[dict[str, Any]]], str],
    ) -> None:
        self._calls = calls
        self._answer = answer
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Request) -> Response:
        body = request.json()
        self.bodies.append(body)
        rid = f"chatcmpl-{len(self.bodies)}"
        messages = body["messages"]
        if messages[-1]["role"] == "tool":
            results: list[dict[str, Any]] = []
            for message in reversed(messages):
                if message["role"] != "tool":
                    break
                results.insert(0, message)
            return Response(chunks=sse_reply(text=self._answer(results), rid=rid))
        return Response(chunks=sse_reply(calls=self._calls(body), rid=rid))


def sse(events: Iterable[dict[str, Any] | str]) -> bytes:
    """Chunks as the API frames them (``data: <json>`` and a blank line; a string is sent as it is, ``[DONE]``)."""
    return b"".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events)


def text_events(text: str, *, pieces: int = 3) -> list[bytes]:
    """A reply of ``text`` in ``pieces`` deltas, one bytes per event, ending with its usage (no ``[DONE]``)."""
    return sse_reply(text=text, slice_size=max(1, -(-len(text) // pieces)), done=False)


#: OpenAI's own server, which ``MockAPI``'s clients are for: the transport's errors name it "OpenAI", not by its URL.
OPENAI_URL = "https://api.openai.com"


def server(url: str) -> str:
    """How the transport's errors name the server at ``url`` (as ``KIT.make`` takes it)."""
    return "OpenAI" if url == OPENAI_URL else f"the server at {url}/v1"


def unreachable(url: str) -> str:
    """The start of the error for nothing listening at ``url`` (OpenAI's own server is named, then its URL given)."""
    where = f"OpenAI at {OPENAI_URL}/v1" if url == OPENAI_URL else server(url)
    return f"Could not reach {where}, even after retries"


def error_response(status: int, message: str) -> Response:
    """OpenAI's error body (``retry-after-ms`` keeps the SDK's retries quick: it honours the header)."""
    payload = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}).encode()
    headers = {"content-type": "application/json", "retry-after-ms": "1"}
    return Response(status=status, headers=headers, chunks=[payload])


KIT = ProviderKit(
    name="openai_chat",
    transport=OpenAIChatTransport,
    make=lambda url, **options: OpenAIChatTransport(
        "gpt-test", base_url=url + "/v1", **({"api_key": FAKE_KEY, "max_retries": 0} | options)
    ),
    mock=lambda handler, **options: OpenAIChatTransport("gpt-test", client=MockAPI(handler).client(), **options),
    mock_url=OPENAI_URL,
    client=lambda: MockAPI().client(),
    key=FAKE_KEY,
    key_as_echoed=FAKE_KEY[:8] + "*" * 10 + FAKE_KEY[-4:],
    key_variable="OPENAI_API_KEY",
    settings=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    missing_key="No API key for OpenAI: set OPENAI_API_KEY, or pass api_key= or client=.",
    terminal=b"data: [DONE]\n\n",
    reply=text_events,
    error=error_response,
    connection_options=({"organization": "org-x"},),
    recordings=(
        "openai_chat_parallel_tools_usage",
        "openai_chat_parallel_mixed_empty_args",
        "openai_chat_refusal",
        "qwen_chat_tool_call_empty_id_deltas",
        "groq_chat_reasoning_then_error_event",
    ),
    wording=Wording(
        timeout=lambda url, seconds: (
            f"{server(url)} did not answer in time (timeout {seconds:g} s, even after retries)."
        ),
        stalled=lambda url, seconds: f"{server(url)} did not answer in time (timeout {seconds:g} s).",
        refused=unreachable,
        dropped=lambda url: f"The connection to {server(url)} broke off mid-reply",
        provider=server,
        key_hint="api_key=",
    ),
)


def user_request(text: str = "hi", **options: Any) -> ChatRequest:
    return ChatRequest(messages=[Message.user(text)], options=RequestOptions(**options))


async def collect(transport: OpenAIChatTransport, request: ChatRequest) -> tuple[list[StreamEvent], Exception | None]:
    events: list[StreamEvent] = []
    try:
        async for event in transport.stream(request):
            events.append(event)
    except Exception as exc:
        return events, exc
    return events, None


@tool
def get_time() -> str:
    """Gets the time."""
    return "12:00"
