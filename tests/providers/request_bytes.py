"""The exact requests each transport sends for a set of conversations, as a loopback server receives them, and the
fixture they are compared with (``tests/fixtures/providers/request_bytes.json``).

The fixture was recorded from the transports as they were before they stopped giving the SDKs typed arguments to
walk; re-record only for a change that means to alter what is sent:
``PYTHONPATH=$PWD python -m tests.providers.request_bytes --record``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from ai_widgets import (
    Message,
    ReasoningPart,
    RequestOptions,
    TextPart,
    ToolCallState,
    ToolChoice,
    ToolDefinition,
    ToolOutcome,
)
from ai_widgets.messages import Role
from ai_widgets.transports import (
    AnthropicTransport,
    ChatRequest,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ProviderError,
)
from tests.providers import histories
from tests.providers.histories import finished_call
from tests.providers.images import image_history
from tests.providers.loopback import Request, Response, loopback

FIXTURE = Path(__file__).parent.parent / "fixtures" / "providers" / "request_bytes.json"
# Built from pieces, and kept out of the fixture (which holds KEY_SHOWN where the key was sent), so nothing
# committed looks like a real key.
KEY = "sk-" + "request-bytes-0123456789"
KEY_SHOWN = "<the test key>"

#: The headers that say how the body is to be read, who sends it and where: compared exactly. The others carry the
#: SDKs' and the platform's versions (``user-agent``, ``x-stainless-*``, ``x-goog-api-client``) or the port.
HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "accept",
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "anthropic-version",
    "anthropic-beta",
    "x-server-timeout",
)

LOOKUP = ToolDefinition(
    name="lookup",
    description="Looks something up. Ünïcode in a description: “quoted” — 100 %.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to find"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
)
GET_TEMPERATURE = ToolDefinition(
    name="get_temperature",
    description="The temperature in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TOOLS = [LOOKUP, GET_TEMPERATURE]
GEMINI_SIGNATURE = base64.b64encode(b"gemini-signature-\x00\xff-bytes").decode()


def gemini_reply(index: int = 0) -> Message:
    """A reply streamed by Gemini: a signed thought summary, a call with its id and signature, a signature on text."""
    data = {"thought_signature": GEMINI_SIGNATURE}
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart(f"Thinking {index}.", provider="gemini", provider_data=data),
            finished_call(
                f"gm-{index}",
                "lookup",
                '{"query": "weather", "limit": 3}',
                provider="gemini",
                provider_data={"id": f"gm-{index}", **data},
            ),
            TextPart(f"Found {index}."),
            ReasoningPart("", provider="gemini", provider_data=data),
        ],
    )


def mixed_reply(index: int) -> Message:
    """One step of a long conversation: reasoning, text, a completed call with JSON arguments, a failed call, a
    declined call, and text after the results (a second response)."""
    return Message(
        Role.ASSISTANT,
        [
            ReasoningPart(f"Step {index}: think.", provider="openai", provider_data={"items": [{"id": f"rs_{index}"}]}),
            TextPart(f"Looking up item {index} — “ü”."),
            finished_call(
                f"call_{index}_a",
                "lookup",
                json.dumps({"query": f"item {index}", "limit": index, "ratio": index / 7}),
                outcome=ToolOutcome.success({"found": [index, index + 1], "text": "naïve \u2028 line"}),
            ),
            finished_call(
                f"call_{index}_b",
                "lookup",
                "{not json",
                state=ToolCallState.FAILED,
                outcome=ToolOutcome.failure(f"no item {index}"),
            ),
            finished_call(
                f"call_{index}_c",
                "get_temperature",
                '{"city": "Utrecht"}',
                state=ToolCallState.REJECTED,
                outcome=ToolOutcome.failure("The person declined."),
            ),
            TextPart(f"Item {index} is here.\n"),
        ],
    )


def long_history(steps: int) -> list[Message]:
    """``steps`` questions and replies of every kind (``2 * steps`` messages), a question last."""
    messages: list[Message] = []
    for index in range(steps):
        messages.append(Message.user(f"Question {index}: what about “{index}”?"))
        kind = index % 4
        if kind == 0:
            messages.append(mixed_reply(index))
        elif kind == 1:
            messages.append(gemini_reply(index))
        elif kind == 2:
            messages.append(histories.anthropic_reply())
        else:
            messages.append(Message(Role.ASSISTANT, [TextPart(f"Plain answer {index}.")]))
    messages.append(Message.user("And now?"))
    return messages


def conversations() -> dict[str, ChatRequest]:
    """Every conversation the fixture holds, by name."""
    out: dict[str, ChatRequest] = {
        "text": ChatRequest(messages=[Message.user("Hello — ü ✓ 😀")]),
        "system_and_options": ChatRequest(
            messages=[Message.user("hi")],
            tools=TOOLS,
            options=RequestOptions(
                system_prompt="You are terse.",
                temperature=0.25,
                max_tokens=300,
                tool_choice=ToolChoice.REQUIRED,
            ),
        ),
        "specific_tool_and_extra": ChatRequest(
            messages=[Message.user("hi")],
            tools=TOOLS,
            options=RequestOptions(
                tool_choice=ToolChoice.specific("lookup"),
                extra={"top_p": 0.5, "x_custom": [1, None], "metadata": {"user": "ü"}, "stop_sequences": ["END"]},
            ),
        ),
        "no_tools_choice": ChatRequest(
            messages=[Message.user("hi")], tools=TOOLS, options=RequestOptions(tool_choice=ToolChoice.NONE)
        ),
        "images": ChatRequest(messages=[*image_history(), Message.user("what do you see?")], tools=TOOLS),
        "gemini_signatures": ChatRequest(messages=[Message.user("go"), gemini_reply(), Message.user("more")]),
        "long": ChatRequest(
            messages=long_history(40),
            tools=TOOLS,
            options=RequestOptions(system_prompt="Long.", max_tool_result_chars=20),
        ),
    }
    for name, reply in histories.REPLIES.items():
        out[f"from_{name}"] = ChatRequest(messages=[Message.user("weather?"), reply(), Message.user("thanks")])
    return out


TransportFactory = Callable[[str], Any]


def _vertex(url: str) -> GeminiTransport:
    client = genai.Client(
        vertexai=True,
        project="test-project",
        location="us-central1",
        credentials=Credentials(token="ya29.request-bytes"),
        http_options=types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1)),
    )
    return GeminiTransport("gemini-3-flash-preview", client=client)


#: The transports, each made for a loopback URL.
TRANSPORTS: dict[str, TransportFactory] = {
    "openai_chat": lambda url: OpenAIChatTransport("gpt-5.4-mini", base_url=url, api_key=KEY, max_retries=0),
    "openai_chat_local": lambda url: OpenAIChatTransport(
        "qwen3", base_url=url, api_key=KEY, max_retries=0, parallel_tool_calls=False, tool_images=False
    ),
    "openai_responses": lambda url: OpenAIResponsesTransport(
        "gpt-5.4-mini", base_url=url, api_key=KEY, max_retries=0, reasoning={"effort": "low"}
    ),
    "anthropic": lambda url: AnthropicTransport(
        "claude-test", base_url=url, api_key=KEY, max_retries=0, thinking={"type": "enabled", "budget_tokens": 2048}
    ),
    # A client that rewrites the JSON body (the model moves into the URL): it must still get the body as JSON.
    "anthropic_vertex": lambda url: AnthropicTransport(
        "claude-test",
        client=anthropic.AsyncAnthropicVertex(
            region="us-east5", project_id="test-project", access_token="ya29.request-bytes", base_url=url, max_retries=0
        ),
    ),
    "gemini": lambda url: GeminiTransport("gemini-3-flash-preview", base_url=url, api_key=KEY, max_retries=0),
    "gemini_2": lambda url: GeminiTransport(
        "gemini-2.5-flash", base_url=url, api_key=KEY, max_retries=0, thinking={"includeThoughts": True}
    ),
    "gemini_vertex": _vertex,
}


def refuse(request: Request) -> Response:
    """Every request is refused (400, not retried): only what was sent matters here."""
    body = b'{"error": {"code": 400, "message": "recorded", "status": "INVALID_ARGUMENT", "type": "invalid"}}'
    return Response(status=400, headers={"content-type": "application/json"}, chunks=[body])


def _seen(request: Request) -> dict[str, Any]:
    return {
        "method": request.method,
        "path": request.path,
        "headers": {name: request.headers[name].replace(KEY, KEY_SHOWN) for name in HEADERS if name in request.headers},
        "body": request.body.decode("utf-8"),
    }


async def send_refused(transport: Any, request: ChatRequest) -> None:
    """Sends ``request`` through ``transport`` to a server that refuses it."""
    try:
        async for _ in transport.stream(request):
            pass
    except ProviderError:
        pass  # the refusal


async def close_client(transport: Any) -> None:
    """Closes the transport's SDK client."""
    client = transport.client
    aio = getattr(client, "aio", None)
    await (aio.aclose() if aio is not None else client.close())


async def _capture(
    url: str, requests: list[Request], chosen: dict[str, ChatRequest] | None
) -> dict[str, dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for transport_name, make in TRANSPORTS.items():
        transport = make(url + "/v1" if transport_name.startswith("openai") else url)
        for name, request in (conversations() if chosen is None else chosen).items():
            before = len(requests)
            await send_refused(transport, request)
            got = requests[before:]
            assert len(got) == 1, f"{transport_name}/{name}: {len(got)} requests"
            seen[f"{transport_name}/{name}"] = _seen(got[0])
        await close_client(transport)
    return seen


def capture(chosen: dict[str, ChatRequest] | None = None) -> dict[str, dict[str, Any]]:
    """``{"<transport>/<conversation>": {method, path, headers, body}}`` for every transport and conversation (or
    the ``chosen`` ones, by name), as the loopback server received them."""
    with loopback(refuse) as server:
        return asyncio.run(_capture(server.url, server.requests, chosen))


def recorded() -> dict[str, dict[str, Any]]:
    """The fixture."""
    loaded: dict[str, dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return loaded


def record() -> None:
    FIXTURE.write_text(json.dumps(capture(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python -m tests.providers.request_bytes --record")
    record()
    print(f"recorded {FIXTURE}")
