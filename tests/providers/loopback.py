"""A loopback HTTP server for provider tests: a handler decides each response, which may stream in chunks.

Only 127.0.0.1; the server runs in a thread and stops when the context exits.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Response:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunks: Iterable[bytes] = ()
    #: Write (and flush) each chunk as it comes; ``False`` writes the whole chunked body at once, so a reader gets it
    #: in the same pieces whatever its speed (each chunk still framed on its own).
    paced: bool = True


Handler = Callable[[Request], Response]


class _Quiet(ThreadingHTTPServer):
    """A client that hangs up before its request is read (a test that stops a transport early) is not a failure of
    the server: it is not printed as a traceback in the middle of the test output."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


@dataclass
class Server:
    url: str
    requests: list[Request]


@contextmanager
def loopback(handler: Handler) -> Iterator[Server]:
    """Serves ``handler`` on 127.0.0.1 (a free port) while the context is open."""
    requests: list[Request] = []

    class Handle(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = Request(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length)
            )
            requests.append(request)
            response = handler(request)
            self.send_response(response.status)
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                framed = (f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for chunk in response.chunks if chunk)
                if response.paced:
                    for frame in framed:
                        self.wfile.write(frame)
                        self.wfile.flush()
                else:
                    self.wfile.write(b"".join(framed))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_POST = _serve
        do_GET = _serve

    server = _Quiet(("127.0.0.1", 0), Handle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()


def sse(events: Iterable[dict[str, Any] | str], *, event_names: bool = False) -> Iterator[bytes]:
    """Server-sent events: each dict as ``data: <json>`` (with ``event: <type>`` when ``event_names``)."""
    for event in events:
        if isinstance(event, str):
            yield f"data: {event}\n\n".encode()
            continue
        head = f"event: {event['type']}\n" if event_names else ""
        yield (head + f"data: {json.dumps(event)}\n\n").encode()


def reframe(body: bytes) -> bytes:
    """``body``'s events framed the other ways SSE allows: CRLF line ends, a comment line before each event, and each
    ``data: {...}`` line split in two ``data:`` lines (after its opening brace, where JSON takes a line break)."""
    out = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: {"):
            out += [b": keep-alive", b"data: {", b"data:" + line[len(b"data: {") :]]
        else:
            out.append(line)
    return b"\r\n".join(out)
