"""The shared harness of the provider benchmarks: a stream replayed over loopback HTTP, the timing loop (marginal
CPU per event of each consumer, measured against the alternatives in the same run) and the markdown rows.

Each provider benchmark builds its stream (SSE frames, one per event, in the provider's wire format), lists its
consumers (the HTTP body alone as the floor, the SDK's typed stream, the ai_widgets transport, the session on it,
an alternative such as pydantic-ai) and words its own summary; everything else is here, so the providers' figures
are measured the same way.

Marginal CPU per event: ``(T(big) - T(small)) / (events(big) - events(small))``, so a request's fixed cost cancels
out. Each run gets a fresh event loop; a consumer times only what it wraps in the :class:`Stopwatch` it is given.
Rounds run outer and cases inner, so a slow spell of the machine touches every case alike.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import random
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.tools import ToolDefinition as PydanticAIToolDefinition

PROSE = "abcdefghijklmnopqrstuvwxyz     ,."
SIZES = ("big", "small")

# --- the stream ---------------------------------------------------------------------------------------------------


def pieces(rng: random.Random, n: int, alphabet: str = PROSE) -> list[str]:
    """``n`` deltas of prose, 4 to 8 characters each, as a model streams them."""
    return ["".join(rng.choices(alphabet, k=rng.randint(4, 8))) for _ in range(n)]


def sse_frame(data: Any, *, event: str | None = None, line_end: str = "\n", **dumps: Any) -> bytes:
    """One server-sent event: ``data: <json>`` (after ``event: <name>`` when given) and a blank line."""
    head = f"event: {event}{line_end}" if event is not None else ""
    return f"{head}data: {json.dumps(data, **dumps)}{line_end}{line_end}".encode()


async def pydantic_ai_write_file(model: Model, parameters_schema: dict[str, Any], watch: Stopwatch) -> None:
    """pydantic-ai's whole streaming path for the benchmarks' one turn: "go", answered by a ``write_file`` call of
    ``notes.txt``; ``watch`` times the request and the stream read to its end."""
    tool = PydanticAIToolDefinition(
        name="write_file", description="Writes a file.", parameters_json_schema=parameters_schema
    )
    parameters = ModelRequestParameters(function_tools=[tool])
    messages: list[Any] = [ModelRequest(parts=[UserPromptPart("go")])]
    with watch:
        async with model.request_stream(messages, None, parameters) as stream:
            async for _ in stream:
                pass
            response = stream.get()
    assert response.tool_calls[0].args_as_dict()["path"] == "notes.txt"


# --- serving it ---------------------------------------------------------------------------------------------------


def _handler(streams: dict[str, list[bytes]], no_delay: bool) -> type[BaseHTTPRequestHandler]:
    """Answers any request for ``/<whole|paced>/<stream name>/...`` with that stream, chunked, one frame per chunk."""

    class Handle(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            if no_delay:  # small writes without Nagle's delay, as a streaming server sends them
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            writing, name = self.path.split("/")[1:3]
            framed = [b"%x\r\n%s\r\n" % (len(frame), frame) for frame in streams[name]]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                if writing == "paced":
                    for frame in framed:
                        self.wfile.write(frame)
                else:
                    self.wfile.write(b"".join(framed))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_POST = _serve
        do_GET = _serve

    return Handle


def _server(streams: dict[str, list[bytes]], no_delay: bool) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(streams, no_delay))
    server.daemon_threads = True
    return server


def _serve_in_process(streams: dict[str, list[bytes]], no_delay: bool, ports: Any) -> None:
    """The body of the server's own process: serves until terminated."""
    server = _server(streams, no_delay)
    ports.put(server.server_address[1])
    server.serve_forever()


@dataclass(frozen=True)
class Replay:
    """A running replay server."""

    base: str

    def url(self, name: str, *, paced: bool = False) -> str:
        """The base URL to give a client for stream ``name``.

        Args:
            name: Which stream (a key of the streams served).
            paced: Write each event on its own as the reader takes it (a socket read then brings one event or a
                few, depending on how the two sides' threads alternate); otherwise the whole chunked body in one
                write, so every reader gets it in the same pieces.
        """
        return f"{self.base}/{'paced' if paced else 'whole'}/{name}"


@contextmanager
def replay(streams: dict[str, list[bytes]], *, own_process: bool = False, no_delay: bool = False) -> Iterator[Replay]:
    """Serves ``streams`` (name -> SSE frames) on 127.0.0.1 while the context is open.

    Args:
        own_process: Serve from a process of its own, so its work shows in neither ``time.thread_time`` nor
            ``time.process_time`` of the consumer; otherwise from a thread here (then measure with
            ``time.thread_time``, which does not count it).
        no_delay: Turn Nagle's delay off on each connection (``TCP_NODELAY``). It changes how a paced stream
            arrives in reads, and so the paced floor: a benchmark keeps the setting its figures were measured with.
    """
    if own_process:
        context = multiprocessing.get_context("spawn")
        ports = context.Queue()
        process = context.Process(target=_serve_in_process, args=(streams, no_delay, ports), daemon=True)
        process.start()
        try:
            yield Replay(f"http://127.0.0.1:{ports.get(timeout=60)}")
        finally:
            process.terminate()
            process.join()
        return
    server = _server(streams, no_delay)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Replay(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


# --- timing -------------------------------------------------------------------------------------------------------


class Stopwatch:
    """CPU seconds of what runs inside ``with watch:`` (on the clock the measurement uses); blocks add up."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._started = 0.0
        self.elapsed = 0.0

    def __enter__(self) -> Stopwatch:
        self._started = self._clock()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.elapsed += self._clock() - self._started


#: A consumer reads one stream (its ``source``: a URL, or frames for a consumer that needs no HTTP) and times the
#: part that counts with the stopwatch.
Consume = Callable[[Any, Stopwatch], Coroutine[Any, Any, object]]


@dataclass(frozen=True)
class Case:
    """One consumer of the stream, named as its table row."""

    name: str
    consume: Consume


@dataclass(frozen=True)
class Row:
    """A case's figures: marginal µs per event, and the CPU of reading the small stream (the run's fixed cost)."""

    name: str
    us_per_event: float
    fixed_ms: float


def _cpu(case: Case, source: Any, clock: Callable[[], float]) -> float:
    gc.collect()
    watch = Stopwatch(clock)
    asyncio.run(case.consume(source, watch))
    return watch.elapsed


def measure(
    cases: Sequence[Case],
    sources: dict[str, Any],
    events: int,
    *,
    repeats: int,
    warm_big: bool = True,
    clock: Callable[[], float] = time.thread_time,
    statistic: Callable[[list[float]], float] = min,
) -> list[Row]:
    """Every case's marginal CPU per event, in the order of ``cases``.

    Args:
        cases: The consumers.
        sources: ``{"big": ..., "small": ...}``: what each consumer reads (URLs of a :func:`replay`, or frames).
        events: How many more events the big stream has than the small one.
        repeats: Rounds of measurement, after one warm-up run per case and size (imports, caches, code paths).
        warm_big: Warm up on the big stream too, not only on the small one.
        clock: ``time.thread_time`` (the consuming thread only) or ``time.process_time`` (the whole process, when
            the server runs in its own).
        statistic: How a case's rounds make one figure: ``min`` (other load on the machine only slows a run down)
            or ``statistics.median``.
    """
    for case in cases:
        _cpu(case, sources["small"], clock)
        if warm_big:
            _cpu(case, sources["big"], clock)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for case in cases:
            for size in SIZES:
                times.setdefault((case.name, size), []).append(_cpu(case, sources[size], clock))
    rows = []
    for case in cases:
        big, small = statistic(times[case.name, "big"]), statistic(times[case.name, "small"])
        rows.append(Row(case.name, (big - small) / events * 1e6, small * 1e3))
    return rows


# --- the tables ---------------------------------------------------------------------------------------------------


def table(
    rows: Sequence[Row],
    *,
    heading: str = "consumer",
    floor: str = "above the HTTP floor (µs)",
    against: Sequence[tuple[str, Row]] = (),
    digits: int = 1,
    fixed: bool = False,
) -> list[str]:
    """Markdown lines: each row's µs per event, above the first row (the floor), and its ratio to each of
    ``against`` (column title, row); with ``fixed``, the fixed ms per run too."""
    titles = [heading, "µs / event", floor, *(title for title, _ in against), *(["fixed ms / run"] if fixed else [])]
    lines = ["| " + " | ".join(titles) + " |", "|---|" + "---:|" * (len(titles) - 1)]
    base = rows[0].us_per_event
    for row in rows:
        us = row.us_per_event
        cells = [row.name, f"{us:.{digits}f}", f"{us - base:.{digits}f}"]
        cells += [f"{us / max(other.us_per_event, 1e-9):.2f}" for _, other in against]
        cells += [f"{row.fixed_ms:.2f}"] if fixed else []
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio_above(ours: Row, theirs: Row, floor: Row) -> float:
    """``ours`` against ``theirs`` in the cost above reading the HTTP body (``floor``)."""
    return (ours.us_per_event - floor.us_per_event) / max(theirs.us_per_event - floor.us_per_event, 1e-9)
