"""Loopback emulators of two local OpenAI-compatible servers, Ollama and vLLM.

Each one answers ``POST /v1/chat/completions`` (streamed, with tools), ``GET /v1/models`` and its own error cases the
way the real server does where a client can tell the difference: which fields each chunk carries, where reasoning,
tool calls, the finish reason and usage arrive, how arguments are encoded, how errors are shaped and worded. What the
model says is scripted: ``reply(body) -> Turn``; the emulator decides only how it travels.

What each behaviour is based on (public source, read at the commit or release named):

Ollama, github.com/ollama/ollama at fb307609 (2026-08-21, v0.33 line):
- ``server/routes.go``: ``/v1/chat/completions`` goes through ``middleware.ChatMiddleware`` then ``ChatHandler``;
  ``/v1/models`` through ``ListMiddleware``. No route checks ``Authorization``: any key, or none, is accepted
  (``docs/api/openai-compatibility.mdx``: ``api_key='ollama',  # required but ignored``).
- ``middleware/openai.go`` ``ChatMiddleware``: an empty ``messages`` is 400 ``[] is too short - 'messages'``; errors of
  ``openai.FromChatRequest`` are 400 with its text.
- ``openai/openai.go`` ``FromChatRequest``: an assistant message whose ``content`` is not a string needs
  ``tool_calls`` (else ``invalid message content type: <nil>``); each call's ``arguments`` must be a JSON object
  (else ``invalid tool call arguments``); a ``tool`` message's ``tool_call_id`` is turned into the tool's name by
  looking it up in the earlier assistant ``tool_calls`` (``nameFromToolCallID``): that name is what the model sees.
  ``tool_choice`` and ``parallel_tool_calls`` are not fields of its request, so they are ignored.
- ``server/routes.go`` ``ChatHandler``: an unknown model is 404 ``model '<name>' not found``; tools for a model
  without the ``tools`` capability are 400 ``<full name> does not support tools`` (``server/images.go``
  ``CheckCapabilities``, wrapped with the model's full name ``registry.ollama.ai/library/<model>:<tag>`` by
  ``scheduleRunner``); a model with the ``thinking`` capability thinks unless asked not to; a parsed tool call gets
  the id ``call_`` + 8 lowercase letters or digits (``toolCallId``) and comes whole, in one response.
- ``middleware/openai.go`` ``BaseWriter.writeError`` and ``openai.NewError``: every error body is
  ``{"error": {"message", "type": "invalid_request_error" | "not_found_error" | "api_error", "param": null,
  "code": null}}``.
- ``middleware/openai.go`` ``ChatWriter.writeResponse`` and ``openai/openai.go`` ``ToStreamChunks``/``FinishChunk``
  (the format since #17485 "match openai's streaming wire format", 8edecb5c, first in v0.32.6): chunk id
  ``chatcmpl-<0..998>``, ``system_fingerprint: "fp_ollama"``; ``role`` only in the first delta; ``content`` present
  (``""`` too) except in a reasoning-only split; reasoning in ``delta.reasoning``; each tool call whole in one delta
  (``id``, ``index``, ``type``, ``function.name``, the full ``arguments`` string); then a finish chunk with an empty
  delta and ``finish_reason`` ``"tool_calls"`` (when a call was sent) or ``"stop"``; then, only when the request had
  ``stream_options.include_usage``, a usage chunk with ``choices: []``; then ``data: [DONE]``.
  Before v0.32.6 (``release="0.32.5"``, as at 8edecb5c^): every delta carries ``role`` and ``content``, and the finish
  reason rides on a last ``{"role": "assistant", "content": ""}`` delta instead of its own empty one.
- JSON is Go's ``encoding/json``: compact, arguments in the order the model wrote them
  (``api.ToolCallFunctionArguments`` is an ordered map), and ``<``, ``>``, ``&`` escaped as ``\\u003c`` and so on.
- ``openai/openai.go`` ``ToListCompletion``: ``{"object": "list", "data": [{"id": "qwen3:latest", "object": "model",
  "created", "owned_by": "library"}]}``; with nothing pulled, ``"data": null`` (a nil Go slice).

vLLM, github.com/vllm-project/vllm (``vllm serve``):
- ``vllm/entrypoints/openai/serving_chat.py`` (v0.10) and ``chat_completion/serving.py`` (2026)
  ``create_chat_completion``: a model that is not served is 404 ``The model `<name>` does not exist.``
  (``NotFoundError``, ``_check_model``); ``tool_choice: "auto"`` without ``--enable-auto-tool-choice`` and
  ``--tool-call-parser`` is 400 ``"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to
  be set``.
- ``entrypoints/openai/engine/protocol.py`` ``ErrorResponse``: since v0.10.1 (PR #22099) ``{"error": {"message",
  "type": "BadRequestError", "param": null, "code": 400}}``; before it the flat ``{"object": "error", "message",
  "type", "param", "code"}`` (``legacy=True``).
- ``chat_completion_stream_generator``: chunk id ``chatcmpl-<uuid hex>``; a first delta ``{"role": "assistant",
  "content": ""}``; every choice carries ``logprobs: null`` and ``finish_reason`` (``exclude_unset``); the last one
  ``finish_reason`` (``"tool_calls"`` once a tool call was streamed) and ``stop_reason: null``, with the delta of the
  last token (``{"content": ""}`` for the end-of-sequence token); a usage chunk with ``choices: []`` only with
  ``stream_options.include_usage``; ``data: [DONE]``. The "remaining_call" step sends arguments a parser held back
  in that finish chunk (``tool_call_parser="llama3_json"`` here: its last piece arrives with the finish reason).
- ``entrypoints/openai/tool_parsers/hermes_tool_parser.py`` ``extract_tool_calls_streaming``: the first delta of
  a call has ``id`` (``chatcmpl-tool-<uuid hex>``, ``make_tool_call_id``), ``type``, ``index`` and ``function.name``
  only; later deltas only ``index`` and ``function.arguments`` pieces of ``json.dumps(arguments)`` (Python's
  spacing); the ``"\\n"`` between two ``<tool_call>`` blocks streams as content.
- ``vllm/reasoning/qwen3_reasoning_parser.py``: with ``--reasoning-parser``, thinking goes to ``delta.reasoning``
  (``delta.reasoning_content`` before PR #27752, ``legacy=True``); a delta that holds the end of thinking carries
  ``"content": null``. Without a reasoning parser the model's ``<think>...</think>`` is plain content.
- ``entrypoints/openai/api_server.py`` ``AuthenticationMiddleware``: with ``--api-key`` every ``/v1`` path needs
  ``Authorization: Bearer <key>``, else 401 ``{"error": "Unauthorized"}``; without it any header is accepted.
- ``ModelList``/``ModelCard``: ``{"object": "list", "data": [{"id": <served name>, "object": "model", "created",
  "owned_by": "vllm", "root": <model path>, "parent": null, "max_model_len", "permission": [...]}]}``.
"""

from __future__ import annotations

import json
import random
import string
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.providers.loopback import Request, Response

JSON = dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """What the emulated model says in one response: reasoning first, then text, then tool calls."""

    text: str = ""
    reasoning: str = ""
    calls: Sequence[tuple[str, dict[str, Any]]] = ()


Reply = Callable[[JSON], Turn]


def tool_results(body: JSON) -> list[JSON]:
    """The ``tool`` messages at the end of a request (the results the model is answering from)."""
    results: list[JSON] = []
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "tool":
            break
        results.insert(0, message)
    return results


def _pieces(text: str, size: int = 5) -> list[str]:
    """``text`` as the model's tokens would stream it (a few characters each)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _json_response(status: int, payload: Any, content_type: str) -> Response:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(status=status, headers={"content-type": content_type}, chunks=[body])


def _prompt_tokens(body: JSON) -> int:
    return max(1, len(json.dumps(body.get("messages"))) // 4)


# --- Ollama -----------------------------------------------------------------------------------------------------------

# What ``ollama show <model>`` lists as capabilities, for the models an emulated server has pulled.
OLLAMA_MODELS: dict[str, frozenset[str]] = {
    "qwen3:latest": frozenset({"completion", "tools", "thinking"}),
    "llama3.2:latest": frozenset({"completion", "tools"}),
    "gemma3:latest": frozenset({"completion", "vision"}),  # no tools: the request is refused
}


def _go_json(value: Any) -> str:
    """``encoding/json.Marshal``: compact, UTF-8, with ``<``, ``>``, ``&`` (and U+2028/9) escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(raw, escaped)
    return text.replace("\u2029", "\\u2029")


class _BadRequest(Exception):
    pass


class OllamaEmulator:
    """``ollama serve`` with some models pulled, as the loopback server's handler.

    Args:
        reply: The model: what it says to a request body.
        models: Pulled models and their capabilities (``ollama show``), by ``name:tag``.
        release: ``"0.32.6"`` (the current streaming format) or ``"0.32.5"`` (the format before it).

    Attributes:
        bodies: The JSON bodies of the chat requests that reached the model.
        seen: For each of them, the messages as Ollama turned them into its own (``FromChatRequest``): what the model
            was shown, a ``tool`` result with the ``tool_name`` resolved from its ``tool_call_id``.
        streams: The raw SSE bytes of each streamed answer.
    """

    def __init__(
        self,
        reply: Reply,
        *,
        models: dict[str, frozenset[str]] | None = None,
        release: Literal["0.32.6", "0.32.5"] = "0.32.6",
    ) -> None:
        self.reply = reply
        self.models = dict(OLLAMA_MODELS if models is None else models)
        self.release = release
        self.bodies: list[JSON] = []
        self.seen: list[list[JSON]] = []
        self.streams: list[bytes] = []

    def __call__(self, request: Request) -> Response:
        path = request.path.split("?")[0].rstrip("/")
        if request.method == "GET" and path == "/v1/models":
            return self._list()
        if request.method == "GET" and path.startswith("/v1/models/"):
            return self._show(path.removeprefix("/v1/models/"))
        if request.method == "POST" and path == "/v1/chat/completions":
            return self._chat(request.json())
        if request.method == "GET" and path == "":
            return Response(headers={"content-type": "text/plain; charset=utf-8"}, chunks=[b"Ollama is running"])
        return Response(status=404, headers={"content-type": "text/plain"}, chunks=[b"404 page not found"])

    # --- routes ---

    def _list(self) -> Response:
        data = [{"id": name, "object": "model", "created": 1767225600, "owned_by": "library"} for name in self.models]
        return self._json(200, {"object": "list", "data": data or None})

    def _show(self, name: str) -> Response:
        if _tagged(name) not in self.models:
            return self._error(404, f"model '{name}' not found")
        return self._json(200, {"id": name, "object": "model", "created": 1767225600, "owned_by": "library"})

    def _chat(self, body: JSON) -> Response:
        messages = body.get("messages") or []
        if not messages:
            return self._error(400, "[] is too short - 'messages'")
        try:
            seen = _from_chat_request(messages)
        except _BadRequest as exc:
            return self._error(400, str(exc))
        name = body.get("model") or ""
        if not name:
            return self._error(400, "model is required")
        capabilities = self.models.get(_tagged(name))
        if capabilities is None:
            return self._error(404, f"model '{name}' not found")
        if body.get("tools") and "tools" not in capabilities:
            return self._error(400, f"registry.ollama.ai/library/{_tagged(name)} does not support tools")
        if not body.get("stream"):
            return self._error(500, "the emulator only streams")
        self.bodies.append(body)
        self.seen.append(seen)
        turn = self.reply(body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        stream = b"".join(
            self._stream(name, turn, body, thinks="thinking" in capabilities, include_usage=include_usage)
        )
        self.streams.append(stream)
        return Response(headers={"content-type": "text/event-stream"}, chunks=[stream])

    # --- the stream ---

    def _stream(self, model: str, turn: Turn, body: JSON, *, thinks: bool, include_usage: bool) -> Iterator[bytes]:
        rid = f"chatcmpl-{random.randrange(999)}"
        created = int(time.time())
        current = self.release == "0.32.6"
        first = True
        completion_tokens = 0

        def chunk(choices: list[JSON], usage: JSON | None = None) -> bytes:
            payload: JSON = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_ollama",
                "choices": choices,
            }
            if usage is not None:
                payload["usage"] = usage
            return f"data: {_go_json(payload)}\n\n".encode()

        def delta(content: str | None, reasoning: str = "", tool_calls: list[JSON] | None = None) -> JSON:
            nonlocal first
            out: JSON = {}
            if first or not current:
                out["role"] = "assistant"
            first = False
            if content is not None:  # a Go ``any`` holding "" is still written
                out["content"] = content
            if reasoning:
                out["reasoning"] = reasoning
            if tool_calls:
                out["tool_calls"] = tool_calls
            return out

        # One runner response per token; thinking only when the model thinks (``req.Think`` defaults to on then).
        for piece in _pieces(turn.reasoning) if thinks else []:
            completion_tokens += 1
            yield chunk([{"index": 0, "delta": delta("", piece), "finish_reason": None}])
        for piece in _pieces(turn.text):
            completion_tokens += 1
            yield chunk([{"index": 0, "delta": delta(piece), "finish_reason": None}])
        for index, (name, arguments) in enumerate(turn.calls):
            call_id = "call_" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
            call = {
                "id": call_id,
                "index": index,
                "type": "function",
                "function": {"name": name, "arguments": _go_json(arguments)},
            }
            completion_tokens += 8
            yield chunk([{"index": 0, "delta": delta("", tool_calls=[call]), "finish_reason": None}])
        reason = "tool_calls" if turn.calls else "stop"
        if current:
            # The empty done response is dropped; a finish chunk of its own follows (``FinishChunk``).
            last = chunk([{"index": 0, "delta": {}, "finish_reason": reason}])
        else:
            last = chunk([{"index": 0, "delta": delta(""), "finish_reason": reason}])
        yield last
        if include_usage:
            prompt = _prompt_tokens(body)
            totals = {"prompt_tokens": prompt, "completion_tokens": completion_tokens}
            totals["total_tokens"] = prompt + completion_tokens
            yield chunk([], usage=totals)  # the last chunk again, its choices emptied
        yield b"data: [DONE]\n\n"

    # --- bodies ---

    def _json(self, status: int, payload: Any) -> Response:
        text = _go_json(payload) + "\n"  # json.NewEncoder adds a newline
        return Response(status=status, headers={"content-type": "application/json"}, chunks=[text.encode()])

    def _error(self, status: int, message: str) -> Response:
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        return self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})


def _tagged(name: str) -> str:
    """``qwen3`` -> ``qwen3:latest`` (``model.ParseName`` fills in the default tag)."""
    short = name.removeprefix("registry.ollama.ai/").removeprefix("library/")
    return short if ":" in short else f"{short}:latest"


def _from_chat_request(messages: list[JSON]) -> list[JSON]:
    """``openai.FromChatRequest``: the request's messages as Ollama's own ``api.Message``s."""
    out: list[JSON] = []
    for message in messages:
        role = str(message.get("role") or "")
        tool_name = ""
        if role.lower() == "tool":
            tool_name = message.get("name") or _name_from_tool_call_id(messages, message.get("tool_call_id") or "")
        content = message.get("content")
        if isinstance(content, str):
            out.append(
                {
                    "role": role,
                    "content": content,
                    "tool_calls": _tool_calls(message.get("tool_calls") or []),
                    "tool_name": tool_name,
                }
            )
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                    raise _BadRequest("invalid message format")
                out.append({"role": role, "content": part["text"], "tool_calls": [], "tool_name": ""})
        else:
            if message.get("tool_calls") is None:  # content is only optional if tool calls are present
                raise _BadRequest(f"invalid message content type: {'<nil>' if content is None else type(content)}")
            out.append({"role": role, "content": "", "tool_calls": _tool_calls(message["tool_calls"]), "tool_name": ""})
    return out


def _tool_calls(calls: list[JSON]) -> list[JSON]:
    out: list[JSON] = []
    for call in calls:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "")
        except ValueError:
            raise _BadRequest("invalid tool call arguments") from None
        if not isinstance(arguments, dict):
            raise _BadRequest("invalid tool call arguments")
        out.append({"function": {"name": function.get("name") or "", "arguments": arguments}})
    return out


def _name_from_tool_call_id(messages: list[JSON], tool_call_id: str) -> str:
    for message in reversed(messages):  # the last one wins
        for call in message.get("tool_calls") or []:
            if call.get("id") == tool_call_id:
                return str((call.get("function") or {}).get("name") or "")
    return ""


# --- vLLM -------------------------------------------------------------------------------------------------------------

AUTO_TOOL_CHOICE_ERROR = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


@dataclass
class VLLMEmulator:
    """``vllm serve <model_path> --served-model-name <served_model_name> [--enable-auto-tool-choice
    --tool-call-parser <tool_call_parser>] [--reasoning-parser <reasoning_parser>] [--api-key <api_key>]``.

    Attributes:
        bodies: The JSON bodies of the chat requests that reached the model.
        seen: For each of them, the messages as the chat template gets them (``arguments`` parsed into objects).
        streams: The raw SSE bytes of each streamed answer.
    """

    reply: Reply
    model_path: str = "Qwen/Qwen3-8B"
    served_model_name: str | None = None
    enable_auto_tool_choice: bool = True
    tool_call_parser: Literal["hermes", "llama3_json"] | None = "hermes"
    reasoning_parser: str | None = "qwen3"
    api_key: str | None = None
    legacy: bool = False  # vLLM 0.10.0 and before: flat error bodies, ``reasoning_content``
    max_model_len: int = 40960
    bodies: list[JSON] = field(default_factory=list)
    seen: list[list[JSON]] = field(default_factory=list)
    streams: list[bytes] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The name requests must use (``--served-model-name``, else the model path)."""
        return self.served_model_name or self.model_path

    def __call__(self, request: Request) -> Response:
        path = request.path.split("?")[0].rstrip("/")
        authorized = self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}"
        if path.startswith("/v1") and not authorized:
            return _json_response(401, {"error": "Unauthorized"}, "application/json")
        if request.method == "GET" and path == "/v1/models":
            return self._list()
        if request.method == "POST" and path == "/v1/chat/completions":
            return self._chat(request.json())
        if request.method == "GET" and path == "/health":
            return Response(headers={"content-type": "application/json"}, chunks=[])
        return _json_response(404, {"detail": "Not Found"}, "application/json")

    def _list(self) -> Response:
        card = {
            "id": self.name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm",
            "root": self.model_path,
            "parent": None,
            "max_model_len": self.max_model_len,
            "permission": [
                {
                    "id": f"modelperm-{uuid.uuid4().hex}",
                    "object": "model_permission",
                    "created": int(time.time()),
                    "allow_create_engine": False,
                    "allow_sampling": True,
                    "allow_logprobs": True,
                    "allow_search_indices": False,
                    "allow_view": True,
                    "allow_fine_tuning": False,
                    "organization": "*",
                    "group": None,
                    "is_blocking": False,
                }
            ],
        }
        return _json_response(200, {"object": "list", "data": [card]}, "application/json")

    def _chat(self, body: JSON) -> Response:
        if body.get("model") != self.name:
            return self._error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
        tool_choice = body.get("tool_choice") or ("auto" if body.get("tools") else "none")
        if tool_choice == "auto" and not (self.enable_auto_tool_choice and self.tool_call_parser):
            return self._error(400, AUTO_TOOL_CHOICE_ERROR, "BadRequestError")
        try:
            seen = _template_messages(body.get("messages") or [])
        except ValueError as exc:
            return self._error(400, str(exc), "BadRequestError")
        if not body.get("stream"):
            return self._error(500, "the emulator only streams", "InternalServerError")
        self.bodies.append(body)
        self.seen.append(seen)
        turn = self.reply(body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        parse_tools = bool(body.get("tools")) and self.tool_call_parser is not None and tool_choice != "none"
        stream = b"".join(self._stream(turn, body, parse_tools=parse_tools, include_usage=include_usage))
        self.streams.append(stream)
        return Response(headers={"content-type": "text/event-stream; charset=utf-8"}, chunks=[stream])

    def _stream(self, turn: Turn, body: JSON, *, parse_tools: bool, include_usage: bool) -> Iterator[bytes]:
        rid = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        reasoning_field = "reasoning_content" if self.legacy else "reasoning"
        tokens = 0
        reasoning_tokens = 0

        def chunk(choices: list[JSON], usage: JSON | None = None) -> bytes:
            payload: JSON = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": self.name,
                "choices": choices,
            }
            if usage is not None:
                payload["usage"] = usage
            return f"data: {json.dumps(payload, separators=(',', ':'), ensure_ascii=False)}\n\n".encode()

        def choice(delta: JSON, finish: str | None = None) -> list[JSON]:
            out: JSON = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            if finish is not None:
                out["stop_reason"] = None
            return [out]

        yield chunk(choice({"role": "assistant", "content": ""}))
        content: list[str] = []
        if turn.reasoning and self.reasoning_parser:
            pieces = _pieces(turn.reasoning)
            for index, piece in enumerate(pieces):
                tokens += 1
                reasoning_tokens += 1
                delta: JSON = {reasoning_field: piece}
                if index == len(pieces) - 1:
                    delta["content"] = None  # this delta also held </think>; no content came after it
                yield chunk(choice(delta))
        elif turn.reasoning:
            content.extend(_pieces(f"<think>\n{turn.reasoning}\n</think>\n\n"))  # no parser: it is just text
        content.extend(_pieces(turn.text))
        for piece in content:
            tokens += 1
            yield chunk(choice({"content": piece}))
        held_back: JSON | None = None
        for index, (name, arguments) in enumerate(turn.calls if parse_tools else ()):
            if index:
                tokens += 1
                yield chunk(choice({"content": "\n"}))  # between </tool_call> and the next <tool_call>
            head = {"id": f"chatcmpl-tool-{uuid.uuid4().hex}", "type": "function", "index": index}
            head["function"] = {"name": name}
            tokens += 3
            yield chunk(choice({"tool_calls": [head]}))
            pieces = _pieces(json.dumps(arguments, ensure_ascii=False), 6)
            if self.tool_call_parser == "llama3_json" and index == len(turn.calls) - 1:
                held_back = {"tool_calls": [{"index": index, "function": {"arguments": pieces.pop()}}]}
            for piece in pieces:
                tokens += 1
                yield chunk(choice({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        if turn.calls and not parse_tools:
            for name, arguments in turn.calls:  # no parser: the model's tool-call markup is plain text
                markup = f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"
                for piece in _pieces(markup):
                    tokens += 1
                    yield chunk(choice({"content": piece}))
        finish = "tool_calls" if turn.calls and parse_tools else "stop"
        tokens += 1
        yield chunk(choice(held_back or {"content": ""}, finish))  # the end-of-sequence token's (empty) delta
        if include_usage:
            prompt = _prompt_tokens(body)
            totals: JSON = {"prompt_tokens": prompt, "total_tokens": prompt + tokens, "completion_tokens": tokens}
            if self.reasoning_parser and not self.legacy:
                totals["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
            yield chunk([], usage=totals)
        yield b"data: [DONE]\n\n"

    def _error(self, status: int, message: str, kind: str) -> Response:
        error = {"message": message, "type": kind, "param": None, "code": status}
        payload = {"object": "error", **error} if self.legacy else {"error": error}
        return _json_response(status, payload, "application/json")


def _template_messages(messages: list[JSON]) -> list[JSON]:
    """The messages as vLLM hands them to the chat template: a call's ``arguments`` string parsed into an object
    (``chat_utils``; a string that is not JSON fails the request)."""
    if not messages:
        raise ValueError("messages: List should have at least 1 item after validation, not 0")
    out: list[JSON] = []
    for message in messages:
        message = dict(message)
        if message.get("role") == "tool" and not message.get("tool_call_id"):
            raise ValueError("messages: a tool message needs tool_call_id")
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                function["arguments"] = json.loads(function.get("arguments") or "")
                calls.append({**call, "function": function})
            message["tool_calls"] = calls
        out.append(message)
    return out
