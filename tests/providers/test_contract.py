"""What every transport does the same way, checked against all four kits over real HTTP (a loopback emulator started
by each test; the SDK's HTTP answered in process where a body must raise or be watched): timeouts, a refused
connection, a connection that breaks mid-reply (every way the HTTP library or the OS says so, in one wording), HTTP
errors mapped to one shape, the key never shown, a last event without its blank line read when its JSON is whole and
dropped when cut short (the reply then broke off), a reply cut short, the reply starting once, the stream stopping at
its terminal event, Stop closing the body, ``client=`` excluding the connection options, and a typed answer asked for
the provider's native way (a refused one asked for again with its errors).

Per-provider files keep only recorded streams and quirks; a behaviour all transports share is tested here, once.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pydantic
import pytest

from ai_widgets import ChatSession, Message, SessionOptions, transports
from ai_widgets.events import ResponseCompleted, ResponseStarted, StreamEvent, TextDelta
from ai_widgets.messages import MessageStatus, dump_messages
from ai_widgets.transports import ChatRequest, ProviderError
from ai_widgets.widget import ChatWidget
from tests.helpers import wait_for
from tests.providers.kits import KITS, Body, ProviderKit
from tests.providers.loopback import Request, Response, loopback
from tests.widget.widget_harness import recording_comms

EVERY_KIT = pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())
#: The kits whose wire format has a terminal event (Gemini's reply ends with the body).
TERMINATED = [kit for kit in KITS.values() if kit.terminal is not None]
#: What the session says of a reply whose stream ended before the reply was complete.
BROKE_OFF = "The model's response broke off before it was complete."
FAILED = "The model request failed: ProviderError: "


def request() -> ChatRequest:
    return ChatRequest(messages=[Message.user("hi")])


async def collect(transport: Any) -> tuple[list[StreamEvent], BaseException | None]:
    """The events ``transport`` streams for a "hi", and the error it ends with (``None`` when it completes)."""
    events: list[StreamEvent] = []
    try:
        async for event in transport.stream(request()):
            events.append(event)
    except Exception as exc:
        return events, exc
    return events, None


def serving(events: Sequence[bytes]) -> Response:
    return Response(chunks=list(events))


def until_text(events: list[bytes], text: bytes) -> list[bytes]:
    """``events`` up to and including the first that carries ``text``."""
    return events[: next(i for i, event in enumerate(events) if text in event) + 1]


def free_url() -> str:
    """The URL of a port nothing listens on."""
    with loopback(lambda request: Response()) as server:
        return server.url


def texts(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# --- timeouts and connections ----------------------------------------------------------------------------------------


@EVERY_KIT
async def test_a_server_that_does_not_answer_in_time(kit: ProviderKit) -> None:
    gave_up = threading.Event()  # the server answers only once the client has given up waiting

    def slow(request: Request) -> Response:
        gave_up.wait(10)
        return serving(kit.reply("late"))

    with loopback(slow) as server:
        try:
            reply = await ChatSession(kit.make(server.url, timeout=0.2)).send("hi")
        finally:
            gave_up.set()
    assert reply.status is MessageStatus.ERROR
    assert reply.error == FAILED + kit.wording.timeout(server.url, 0.2)


@EVERY_KIT
async def test_a_server_that_stalls_mid_reply_is_not_asked_again(kit: ProviderKit) -> None:
    gave_up = threading.Event()  # the stall lasts until the client has given up waiting

    def stalls(request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            yield from until_text(kit.reply("Hallo", pieces=2), b"Hal")
            gave_up.wait(10)

        return Response(chunks=chunks())

    with loopback(stalls) as server:
        try:
            reply = await ChatSession(kit.make(server.url, timeout=0.3, max_retries=2)).send("hi")
        finally:
            gave_up.set()
    assert len(server.requests) == 1  # what was streamed is not asked for again
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Hal"
    assert reply.error == FAILED + kit.wording.stalled(server.url, 0.3)


@EVERY_KIT
async def test_a_refused_connection(kit: ProviderKit) -> None:
    url = free_url()
    _, error = await collect(kit.make(url))
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith(kit.wording.refused(url)), str(error)
    assert kit.key not in str(error)


@EVERY_KIT
async def test_a_connection_that_breaks_off_mid_reply(kit: ProviderKit) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    start = b"".join(until_text(kit.reply("Hallo", pieces=2), b"Hal"))

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 100000\r\n\r\n"
        connection.sendall(head + start)
        connection.shutdown(socket.SHUT_WR)  # 100,000 bytes promised, far fewer sent
        connection.settimeout(10)
        connection.recv(1)  # the client read what was sent and hung up
        connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        events, error = await collect(kit.make(url, max_retries=2))
    finally:
        thread.join(2)
        listener.close()
    assert texts(events) == "Hal"
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith(kit.wording.dropped(url)), str(error)


#: Every way the HTTP library or the OS reports a connection breaking while the body is read.
BREAKS = [
    httpx2.RemoteProtocolError("peer closed connection"),
    httpx2.StreamClosed(),
    ssl.SSLError(1, "bad record mac"),
    anyio.EndOfStream(),
    ConnectionResetError(104, "reset"),
]


@EVERY_KIT
@pytest.mark.parametrize("error", BREAKS, ids=[type(error).__name__ for error in BREAKS])
async def test_every_way_the_connection_breaks_mid_reply_is_worded_the_same(kit: ProviderKit, error: Exception) -> None:
    """Before: the HTTP errors were sorted three ways, and an SSL error, anyio's end of stream, a body read after the
    connection closed or a reset connection left some transports as they were raised, not as a ProviderError."""
    body = Body(until_text(kit.reply("Hallo", pieces=2), b"Hal"), error=error)
    events, raised = await collect(kit.mock(body.handler))
    detail = f": {error}" if str(error) else ""
    assert isinstance(raised, ProviderError), repr(raised)
    assert str(raised) == f"{kit.wording.dropped(kit.mock_url)}{detail}."
    assert events[0] == ResponseStarted()
    assert texts(events) == "Hal"
    assert body.closed


# --- HTTP errors -----------------------------------------------------------------------------------------------------

HEADS = {
    400: "{provider} refused the request (400).",
    401: "{provider} rejected the API key (401): check {key_hint}.",
    403: "{provider} refused access (403): the key in {key_hint} lacks permission for this model.",
    404: "{provider}: not found (404), often a wrong model name or base_url.",
    429: "{provider} is rate limiting or out of quota (429), even after retries.",
    500: "{provider} had a server error (500), even after retries.",
}
RETRIED = {429, 500, 502}


@EVERY_KIT
@pytest.mark.parametrize("status", list(HEADS))
async def test_an_http_error_says_what_failed_in_the_providers_words(kit: ProviderKit, status: int) -> None:
    message = f"their own words about {kit.key} ({kit.key_as_echoed})"
    with loopback(lambda request: kit.error(status, message)) as server:
        events, error = await collect(kit.make(server.url, max_retries=1))
        assert len(server.requests) == (2 if status in RETRIED else 1)  # retried only when it may pass next time
        session = ChatSession(kit.make(server.url))
        reply = await session.send("hi")
    head = HEADS[status].format(provider=kit.wording.provider(server.url), key_hint=kit.wording.key_hint)
    assert events == []
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith(f"{head} "), str(error)
    assert str(error).endswith("their own words about [redacted] ([redacted])"), str(error)
    assert reply.status is MessageStatus.ERROR
    assert reply.error == FAILED + str(error)
    for text in (str(error), dump_messages(session.messages)):
        assert kit.key not in text
        assert kit.key_as_echoed not in text
        assert "SECRET" not in text


@EVERY_KIT
async def test_a_server_error_is_retried_before_the_stream_begins(kit: ProviderKit) -> None:
    answers = iter([kit.error(503, "busy")])
    with loopback(lambda request: next(answers, None) or serving(kit.reply("Fine."))) as server:
        reply = await ChatSession(kit.make(server.url, max_retries=2)).send("hi")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "Fine."
    assert len(server.requests) == 2


@EVERY_KIT
async def test_an_http_error_whose_body_is_not_json(kit: ProviderKit) -> None:
    page = b"<html><body>Bad gateway</body></html>"
    response = Response(status=502, headers={"content-type": "text/html", "retry-after-ms": "1"}, chunks=[page])
    with loopback(lambda request: response) as server:
        _, error = await collect(kit.make(server.url, max_retries=1))
    head = f"{kit.wording.provider(server.url)} had a server error (502), even after retries."
    assert isinstance(error, ProviderError), repr(error)
    assert str(error).startswith(head + " "), str(error)
    assert str(error).endswith(page.decode()), str(error)
    assert len(server.requests) == 2


# --- keys --------------------------------------------------------------------------------------------------------


@EVERY_KIT
@pytest.mark.parametrize("plain", [False, True], ids=["kit-key", "plain-key"])
async def test_the_key_never_shows(kit: ProviderKit, plain: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain key matches no generic key pattern: only the transport's own redaction keeps it out.
    key = "plain" + "SECRET-0123456789abcdefgh" if plain else kit.key
    monkeypatch.setenv(kit.key_variable, key)
    answers = iter(["refuse"])

    def echo_key(request: Request) -> Response:
        # A 401 whose message repeats the header the key came in, as a careless proxy might; then a reply.
        if next(answers, None):
            return kit.error(401, f"bad key {' '.join(request.headers.values())}")
        return serving(kit.reply("Hello."))

    with recording_comms() as wire, loopback(echo_key) as server:
        transport = kit.make(server.url, api_key=key)
        chat = ChatWidget(ChatSession(transport))
        failed = await chat.ask("hi")
        ok = await chat.ask("hi again")
        state = json.dumps(chat.get_state(), default=str)
        _, error = await collect(kit.make(server.url, api_key=key))  # the server refuses no more: a clean run
    assert key in " ".join(server.requests[0].headers.values())  # the server got the key, and said it back
    assert failed.status is MessageStatus.ERROR
    assert "rejected the API key (401)" in state
    assert ok.text == "Hello."
    assert error is None
    for text in (
        failed.error or "",
        dump_messages(chat.session.messages),
        state,
        json.dumps([sent.data for sent in wire.sent], default=str),
        repr(transport),
    ):
        assert key not in text
        assert "SECRET" not in text


@EVERY_KIT
async def test_a_server_given_by_base_url_needs_no_key(
    kit: ProviderKit, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in kit.settings:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile or credentials file either
    with loopback(lambda request: serving(kit.reply("Local."))) as server:
        reply = await ChatSession(kit.make(server.url, api_key=None)).send("hi")
    assert reply.text == "Local."
    # A placeholder: a remote server answers 401, and the error names the key to set.
    headers = server.requests[0].headers.values()
    assert {"not-needed", "Bearer not-needed"} & set(headers), headers


@EVERY_KIT
def test_no_key_at_all_is_a_clear_error_at_construction(
    kit: ProviderKit, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in kit.settings:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ProviderError) as raised:
        kit.transport(kit.model)
    assert str(raised.value).startswith(kit.missing_key), str(raised.value)


@EVERY_KIT
async def test_the_key_is_not_in_the_error_raised(kit: ProviderKit) -> None:
    with loopback(lambda request: kit.error(401, f"bad key {' '.join(request.headers.values())}")) as server:
        _, error = await collect(kit.make(server.url))
    assert isinstance(error, ProviderError), repr(error)
    for text in (str(error), repr(error), repr(error.args)):
        assert kit.key not in text
        assert "SECRET" not in text


# --- construction ----------------------------------------------------------------------------------------------------


@EVERY_KIT
def test_client_excludes_the_connection_options_the_same_way(kit: ProviderKit) -> None:
    connections = [{"api_key": kit.key}, {"base_url": "http://127.0.0.1:9"}, *kit.connection_options]
    for connection in connections:
        (name,) = connection
        with pytest.raises(ValueError, match=rf"pass either client= or .*\b{name}=.*, not both") as raised:
            kit.transport("a-model", client=kit.client(), **connection)
        assert kit.key not in str(raised.value)
    with pytest.raises(ValueError, match="model"):
        kit.transport("", api_key=kit.key)
    assert kit.key not in repr(kit.transport("a-model", api_key=kit.key))
    assert getattr(transports, kit.transport.__name__) is kit.transport  # exported from ai_widgets.transports


# --- how the stream ends ---------------------------------------------------------------------------------------------


@EVERY_KIT
async def test_a_last_event_without_its_blank_line_is_read_when_its_data_is_whole(kit: ProviderKit) -> None:
    reply = kit.reply("Hello there")
    with loopback(lambda request: serving(reply)) as server:
        whole, error = await collect(kit.make(server.url))
    assert error is None
    assert isinstance(whole[-1], ResponseCompleted)
    unended = [*reply[:-1], reply[-1].rstrip(b"\r\n")]  # the body ends right after the last event's data
    with loopback(lambda request: serving(unended)) as server:
        events, error = await collect(kit.make(server.url))
    assert error is None
    assert events == whole


def cut_short(event: bytes) -> bytes:
    """``event`` without its blank line and its data's last 7 bytes: the body ends inside its JSON."""
    data = event.rstrip(b"\r\n")
    return data[: len(data) - 7]


async def completing(kit: ProviderKit, reply: list[bytes]) -> int:
    """The index of the event of ``reply`` that completes it: a body that ends before it ends broken off."""
    for count in range(1, len(reply) + 1):
        events, error = await collect(kit.mock(Body(reply[:count]).handler))
        assert error is None, repr(error)
        if any(isinstance(e, ResponseCompleted) for e in events):
            return count - 1
    raise AssertionError(f"{kit.name}: the reply never completes")


@EVERY_KIT
async def test_a_last_event_cut_short_is_dropped(kit: ProviderKit) -> None:
    reply = kit.reply("Hello there")
    with loopback(lambda request: serving(reply[:-1])) as server:
        without, error = await collect(kit.make(server.url))
    assert error is None, repr(error)
    with loopback(lambda request: serving([*reply[:-1], cut_short(reply[-1])])) as server:
        events, error = await collect(kit.make(server.url))
    assert error is None, repr(error)  # not an error about the data: the body ended before the event did
    assert events == without


@EVERY_KIT
async def test_a_last_event_cut_short_leaves_the_reply_broken_off(kit: ProviderKit) -> None:
    """The body ends inside the event that would complete the reply: the reply broke off, as any whose stream ends
    before it is complete, the text before it kept."""
    reply = kit.reply("Hello there")
    last = await completing(kit, reply)
    cut = [*reply[:last], cut_short(reply[last])]
    with loopback(lambda request: serving(cut)) as server:
        events, error = await collect(kit.make(server.url))
        answer = await ChatSession(kit.make(server.url)).send("hi")
    assert error is None, repr(error)
    assert not any(isinstance(e, ResponseCompleted) for e in events)
    assert texts(events) == "Hello there"
    assert answer.status is MessageStatus.ERROR
    assert answer.text == "Hello there"
    assert answer.error == BROKE_OFF


@EVERY_KIT
async def test_a_reply_whose_stream_ends_before_it_is_complete(kit: ProviderKit) -> None:
    start = until_text(kit.reply("Hallo", pieces=2), b"Hal")
    with loopback(lambda request: serving(start)) as server:
        session = ChatSession(kit.make(server.url))
        reply = await session.send("hi")
        assert reply.status is MessageStatus.ERROR
        assert reply.text == "Hal"
        assert reply.error == BROKE_OFF
    # The session stays usable.
    with loopback(lambda request: serving(kit.reply("fine"))) as server:
        session.transport = kit.make(server.url)
        assert (await session.send("again")).text == "fine"


@EVERY_KIT
async def test_a_reply_whose_stream_is_cut_mid_event(kit: ProviderKit) -> None:
    body = b"".join(kit.reply("Hallo", pieces=2))
    second = body.index(b'"lo"')
    cut = body[: second - 3]  # inside the event of the second text piece
    with loopback(lambda request: Response(chunks=[cut])) as server:
        reply = await ChatSession(kit.make(server.url)).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "Hal"
    assert reply.error is not None
    assert reply.error == BROKE_OFF or reply.error.startswith(FAILED), reply.error


@EVERY_KIT
@pytest.mark.parametrize("skip", [0, 1], ids=["whole", "without-its-first-event"])
async def test_the_reply_starts_once_first_whatever_its_first_event(kit: ProviderKit, skip: int) -> None:
    """Before: Anthropic's and Responses' ``ResponseStarted`` came with their first event (``message_start``,
    ``response.created``) only, which compatible servers may leave out; now the stream yields it once the response
    begins, as every transport does."""
    reply = kit.reply("ok")[skip:]
    with loopback(lambda request: serving(reply)) as server:
        events, error = await collect(kit.make(server.url))
    assert error is None, repr(error)
    assert events[0] == ResponseStarted()
    assert sum(isinstance(e, ResponseStarted) for e in events) == 1
    assert isinstance(events[-1], ResponseCompleted)


def ended_reply(kit: ProviderKit, text: str) -> list[bytes]:
    """A reply saying ``text`` that ends with the terminal event."""
    reply = kit.reply(text)
    assert kit.terminal is not None
    return reply if reply[-1] == kit.terminal else [*reply, kit.terminal]


@pytest.mark.parametrize("kit", TERMINATED, ids=[kit.name for kit in TERMINATED])
async def test_nothing_after_the_terminal_event_is_read_as_the_reply(kit: ProviderKit) -> None:
    ended = ended_reply(kit, "ok")
    with loopback(lambda request: serving(ended)) as server:
        whole, error = await collect(kit.make(server.url))
    assert error is None
    after = [*kit.reply("late"), b"data: {not json\n\n", b'data: {"error": "late"}\n\n']
    with loopback(lambda request: serving([*ended, *after])) as server:
        events, error = await collect(kit.make(server.url))
    assert error is None, repr(error)
    assert events == whole
    assert texts(events) == "ok"


@pytest.mark.parametrize("kit", TERMINATED, ids=[kit.name for kit in TERMINATED])
async def test_after_the_terminal_event_the_rest_of_the_body_is_read_and_closed(kit: ProviderKit) -> None:
    # Read to its end, the connection goes back to the pool for the next request.
    body = Body([*ended_reply(kit, "ok"), b": trailing comment\n\n", b"\n"])
    events, error = await collect(kit.mock(body.handler))
    assert error is None, repr(error)
    assert isinstance(events[-1], ResponseCompleted)
    assert body.read == len(body.pieces)
    assert body.closed


@pytest.mark.parametrize("kit", TERMINATED, ids=[kit.name for kit in TERMINATED])
async def test_a_server_that_stalls_after_the_terminal_event_does_not_hold_the_reply(kit: ProviderKit) -> None:
    ended = ended_reply(kit, "ok")
    body = Body([*ended, b": more\n\n"], stall_after=len(ended), stall=30)
    started = time.monotonic()
    reply = await asyncio.wait_for(ChatSession(kit.mock(body.handler)).send("hi"), 10)
    assert time.monotonic() - started < 5  # the rest of the body is waited for only a moment
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "ok"
    assert body.read == len(ended)
    assert body.closed


# --- Stop --------------------------------------------------------------------------------------------------------


class Endless:
    """A loopback handler serving a long reply, one event every few milliseconds, that knows how much it sent and
    when it stopped sending (the client closed the connection, or everything was sent)."""

    def __init__(self, kit: ProviderKit) -> None:
        self.events = kit.reply("word " * 400, pieces=400)
        self.sent = 0
        self.closed = threading.Event()

    def __call__(self, request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            try:
                for event in self.events:
                    time.sleep(0.005)
                    self.sent += 1
                    yield event
            finally:
                self.closed.set()

        return Response(chunks=chunks())


@EVERY_KIT
async def test_stop_mid_stream_closes_the_response_and_the_session_goes_on(kit: ProviderKit) -> None:
    endless = Endless(kit)
    with loopback(endless) as server:
        session = ChatSession(kit.make(server.url), options=SessionOptions(execute_tools=False))
        turn = asyncio.create_task(session.send("talk"))
        await wait_for(lambda: bool(session.messages) and "word word" in session.messages[-1].text, timeout=10)
        session.stop()
        stopped = await asyncio.wait_for(turn, 10)
        assert await asyncio.to_thread(endless.closed.wait, 5)  # the server saw the connection close
    assert stopped.status is MessageStatus.CANCELLED
    assert not session.busy
    assert endless.sent < len(endless.events) - 20  # closed mid-body, not read to its end
    with loopback(lambda request: serving(kit.reply("Next."))) as server:
        session.transport = kit.make(server.url)
        assert (await session.send("go on")).text == "Next."


@EVERY_KIT
async def test_closing_the_stream_closes_the_response(kit: ProviderKit) -> None:
    endless = Endless(kit)
    with loopback(endless) as server:
        stream = kit.make(server.url).stream(request())
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        await stream.aclose()  # what a consumer that leaves early does
        assert await asyncio.to_thread(endless.closed.wait, 5)  # the server saw the connection close
    assert endless.sent < len(endless.events) - 20


# --- typed answers ----------------------------------------------------------------------------------------------------


class City(pydantic.BaseModel):
    name: str
    population: int


#: Where each provider wants the schema of a typed answer, read off the request body it got.
SCHEMA_IN_BODY: dict[str, Any] = {
    "openai_chat": lambda body: body["response_format"]["json_schema"]["schema"],
    "openai_responses": lambda body: body["text"]["format"]["schema"],
    "anthropic": lambda body: body["output_config"]["format"]["schema"],
    "gemini": lambda body: body["generationConfig"]["responseJsonSchema"],
}


@EVERY_KIT
async def test_a_typed_answer_is_asked_for_natively_and_a_refused_one_again_with_its_errors(kit: ProviderKit) -> None:
    answers = iter(['{"name": "Lisbon"}', '{"name": "Lisbon", "population": 545000}'])
    with loopback(lambda request: serving(kit.reply(next(answers)))) as server:
        session = ChatSession(kit.make(server.url))
        reply = await session.send("The capital of Portugal?", output_type=City)
        bodies = [request.json() for request in server.requests]
    assert reply.status is MessageStatus.COMPLETED
    assert reply.output == City(name="Lisbon", population=545000)
    assert len(bodies) == 2
    want = {**City.model_json_schema(), "additionalProperties": False}
    assert [SCHEMA_IN_BODY[kit.name](body) for body in bodies] == [want, want]
    # The retry told the model what was wrong, in the provider's own message shape, after the refused answer.
    assert "population: Field required" in json.dumps(bodies[1], ensure_ascii=False)
    assert "population: Field required" not in json.dumps(bodies[0], ensure_ascii=False)
    assert '{\\"name\\": \\"Lisbon\\"}' in json.dumps(bodies[1])
