"""A loopback server that answers as Anthropic's Messages API, for driving a real Claude Code with no key and no
network (``ANTHROPIC_BASE_URL``): ``POST /v1/messages/count_tokens`` and streamed ``POST /v1/messages``.

Each streamed reply is a recorded Anthropic stream (``tests/fixtures/providers/data/anthropic_text_then_tool_use.sse``,
from anthropic-sdk-python, MIT: see ``tests/fixtures/providers/SOURCES.md`` and its ``licenses/``) reframed with the
text and the ``tool_use`` the test scripts: the recording's events, pings and chunking kept, its text, tool and
arguments replaced. Every request is logged (:attr:`FakeAnthropic.requests`), so a test asserts what Claude Code sent.

The server runs in a thread on 127.0.0.1, on a free port, while its context is open.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDING = Path(__file__).parents[1] / "fixtures" / "providers" / "data" / "anthropic_text_then_tool_use.sse"


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block the fake model asks for."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One scripted streamed reply: its text, then the tool call it asks for (it ends the turn when there is none)."""

    text: str
    tool_use: ToolUse | None = None


@dataclass
class Seen:
    """A request the server got: its method, path (query kept), headers (the key's left out) and JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def kind(self) -> str:
        """``count_tokens``, ``messages`` (streamed), ``messages (nonstream)`` or ``METHOD path``."""
        route = self.path.split("?", 1)[0]
        if self.method == "POST" and route == "/v1/messages/count_tokens":
            return "count_tokens"
        if self.method == "POST" and route == "/v1/messages":
            return "messages" if isinstance(self.body, dict) and self.body.get("stream") else "messages (nonstream)"
        return f"{self.method} {route}"

    @property
    def last_user_content(self) -> list[dict[str, Any]]:
        """The content blocks of the request's last message (a text message as one text block)."""
        messages = self.body.get("messages", []) if isinstance(self.body, dict) else []
        if not messages:
            return []
        content = messages[-1].get("content")
        return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the last message."""
        return [block for block in self.last_user_content if block.get("type") == "tool_result"]

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [tool.get("name", "") for tool in tools]


def recorded_events() -> list[dict[str, Any]]:
    """The recording's events, in order (its ``data:`` payloads)."""
    events = []
    for line in RECORDING.read_text().splitlines():
        if line.startswith("data:"):
            events.append(json.loads(line[len("data:") :]))
    return events


def reframe(reply: Reply, model: str) -> bytes:
    """The recording, with ``reply``'s text and tool call in place of its own, as SSE bytes."""
    out: list[dict[str, Any]] = []
    arguments = json.dumps(reply.tool_use.input) if reply.tool_use is not None else ""
    pieces = [arguments[i : i + 16] for i in range(0, len(arguments), 16)]
    for event in recorded_events():
        kind = event["type"]
        index = event.get("index")
        if index == 1 and reply.tool_use is None:
            continue  # no tool call: the text block alone
        if kind == "message_start":
            message = dict(event["message"], id=f"msg_fake{time.time_ns()}", model=model)
            out.append(dict(event, message=message))
        elif kind == "content_block_delta" and index == 0:
            if event["delta"]["text"] == "I":  # the recording's first text piece: ours goes in two pieces too
                out.append(dict(event, delta={"type": "text_delta", "text": reply.text[:1]}))
                out.append(dict(event, delta={"type": "text_delta", "text": reply.text[1:]}))
        elif kind == "content_block_start" and index == 1:
            assert reply.tool_use is not None
            block = {"type": "tool_use", "id": reply.tool_use.id, "name": reply.tool_use.name, "input": {}}
            out.append(dict(event, content_block=block))
        elif kind == "content_block_delta" and index == 1:
            if event["delta"]["partial_json"] == "":  # the recording opens with an empty piece; keep it, then ours
                out.append(event)
                out.extend(dict(event, delta={"type": "input_json_delta", "partial_json": piece}) for piece in pieces)
        elif kind == "message_delta":
            stop = "tool_use" if reply.tool_use is not None else "end_turn"
            out.append(dict(event, delta=dict(event["delta"], stop_reason=stop)))
        else:
            out.append(event)
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in out).encode()


@dataclass
class FakeAnthropic:
    """The running server: its URL (``ANTHROPIC_BASE_URL``), what it was asked, and the replies it has left.

    Each streamed ``/v1/messages`` takes the next scripted reply (:meth:`script`); with none left it answers 400 (not
    retried by the client), so a test that did not expect a request fails visibly.
    """

    url: str
    requests: list[Seen] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *replies: Reply) -> None:
        """Adds the replies the next streamed requests get, in order."""
        with self.lock:
            self.replies.extend(replies)

    def kinds(self) -> list[str]:
        with self.lock:
            return [seen.kind for seen in self.requests]

    def streamed(self) -> list[Seen]:
        with self.lock:
            return [seen for seen in self.requests if seen.kind == "messages"]

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        with self.lock:
            self.requests.append(seen)
            match seen.kind:
                case "count_tokens":
                    return 200, "application/json", b'{"input_tokens": 123}'
                case "messages" if self.replies:
                    reply = self.replies.pop(0)
                    return 200, "text/event-stream", reframe(reply, str(seen.body.get("model", "claude")))
                case kind:
                    error = {"type": "invalid_request_error", "message": f"fake Anthropic: nothing scripted for {kind}"}
                    return 400, "application/json", json.dumps({"type": "error", "error": error}).encode()


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up early (an agent stopped mid-request) is not the test's failure


@contextmanager
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """Serves the fake Messages API on 127.0.0.1 (a free port) while the context is open."""
    server: FakeAnthropic | None = None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = {"unparsed": raw[:200].decode("utf-8", "replace")}
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")}
            assert server is not None
            status, media_type, data = server.answer(Seen(self.command, self.path, headers, body))
            self.send_response(status)
            self.send_header("content-type", media_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_fake")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_HEAD = _handle

    httpd = _Quiet(("127.0.0.1", 0), Handler)
    server = FakeAnthropic(f"http://127.0.0.1:{httpd.server_address[1]}")
    thread = threading.Thread(target=httpd.serve_forever, name="fake-anthropic", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
