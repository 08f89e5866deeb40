"""A small AG-UI client on ``httpx``: POSTs a ``RunAgentInput`` and streams the run's events back as the protocol's own
models (``ag_ui.core``), with one error mapper for every way the request can fail.

There is no official Python AG-UI client; this is the part of one that :class:`~ai_widgets.transports.AGUITransport`
needs. The response is read with the server-sent-event decoder every transport shares
(``transports._sse.SSEDecoder``); each event's data is validated against ``ag_ui.core.Event``. Events of a type this
protocol version does not know are skipped, as the protocol asks of a consumer, and so is an outcome of
``RUN_FINISHED`` it does not know (read as success). The deprecated ``THINKING_*`` events of servers older than 1.0
are read as reasoning. Reading stops at ``RUN_FINISHED`` or ``RUN_ERROR``; leaving the iterator early (a stop) closes
the HTTP response, which tells the server the client went away, so it can cancel the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import Failure, ProviderError, http_failure, unreadable_payload
from ai_widgets.transports._sse import SSEDecoder, load_json

import_sdk("ag_ui", "ag-ui")  # says which extra to install when the protocol's package is missing
import_sdk("httpx", "ag-ui")

import httpx  # noqa: E402
import pydantic  # noqa: E402
from ag_ui.core import (  # noqa: E402
    BaseEvent,
    Event,
    EventType,
    ReasoningMessageContentEvent,
    RunAgentInput,
)

__all__ = ["AGUIClient", "parse_event"]

EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Event)
KNOWN_TYPES = frozenset(kind.value for kind in EventType)
KNOWN_OUTCOMES = frozenset({"success", "interrupt", "cancelled"})
# The reasoning events of servers before 1.0 (THINKING_*): their text is reasoning, the rest only marks its bounds.
LEGACY_THINKING_TEXT = "THINKING_TEXT_MESSAGE_CONTENT"
LEGACY_THINKING = frozenset(
    {"THINKING_START", "THINKING_END", "THINKING_TEXT_MESSAGE_START", "THINKING_TEXT_MESSAGE_END"}
)
ENDS = frozenset({EventType.RUN_FINISHED, EventType.RUN_ERROR})


def parse_event(payload: bytes, *, label: str = "The AG-UI agent") -> BaseEvent | None:
    """One server-sent event's data as the protocol's event model; ``None`` for an event to skip (a type this
    protocol version does not know, or a legacy marker that carries nothing).

    Raises:
        ProviderError: The data is not JSON, not an object with a ``type``, or not a valid event of its type; the
            message names the type and the field.
    """
    try:
        data = load_json(payload)
    except (ValueError, RecursionError) as exc:
        raise unreadable_payload(label, exc) from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ProviderError(f"{label} sent an event that is not an object with a type: {preview(payload)}")
    kind = data["type"]
    if kind == LEGACY_THINKING_TEXT:
        delta = data.get("delta")
        if not isinstance(delta, str):
            raise ProviderError(f"{label} sent a malformed {kind} event: its delta must be text")
        return ReasoningMessageContentEvent(message_id=str(data.get("messageId") or "thinking"), delta=delta)
    if kind in LEGACY_THINKING or kind not in KNOWN_TYPES:
        return None
    outcome = data.get("outcome")
    if kind == "RUN_FINISHED" and isinstance(outcome, dict) and outcome.get("type") not in KNOWN_OUTCOMES:
        data = {key: value for key, value in data.items() if key != "outcome"}  # unknown outcome: read as success
    try:
        event: BaseEvent = EVENTS.validate_python(data)
    except pydantic.ValidationError as exc:
        raise ProviderError(f"{label} sent a malformed {kind} event: {problems(exc)}") from None
    return event


class AGUIClient:
    """Runs a remote AG-UI agent: one POST of a ``RunAgentInput`` per run, its events streamed back.

    Args:
        url: The agent's endpoint (``http://`` or ``https://``).
        headers: Sent with every request (an ``Authorization`` header, say); their values never appear in errors.
        timeout: Seconds to wait to connect, and between two events of a run.

    Raises:
        ValueError: ``url`` is not an http(s) URL, or a header is not text.
    """

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 300.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"the AG-UI agent's URL must start with http:// or https://, not {url!r}"[:300])
        given = dict(headers or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
            raise ValueError("headers must map text to text")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.url = url
        self.headers = given
        self.timeout = float(timeout)
        self.label = f"The AG-UI agent at {url}"  # where a sentence starts with it
        self.named = f"the AG-UI agent at {url}"  # within a sentence
        self._secrets = tuple(value for value in given.values() if value)

    async def run(self, run_input: RunAgentInput) -> AsyncGenerator[BaseEvent, None]:
        """The run's events in order, up to and including ``RUN_FINISHED`` or ``RUN_ERROR``.

        Raises:
            ProviderError: The request failed (the server is down, refused the request, answered something other
                than an event stream, stopped sending) or an event is malformed; the message says which, and holds
                none of the headers' values. Events before the failure have been yielded.
        """
        body = run_input.model_dump_json(by_alias=True).encode()
        responded = False
        try:
            async with self._post(body) as response:
                responded = True
                decoder = SSEDecoder(self.label)
                async for chunk in response.aiter_bytes():
                    for payload in decoder.feed(chunk):
                        event = parse_event(payload, label=self.label)
                        if event is None:
                            continue
                        yield event
                        if event.type in ENDS:
                            return
                for payload in decoder.close():  # a last event the body ended in without its blank line
                    event = parse_event(payload, label=self.label)
                    if event is not None:
                        yield event
                        if event.type in ENDS:
                            return
            raise ProviderError(f"{self.label} ended its event stream before the run finished (no RUN_FINISHED).")
        except Exception as exc:
            raise self.error(exc, responded=responded) from None

    @contextlib.asynccontextmanager
    async def _post(self, body: bytes) -> AsyncIterator[httpx.Response]:
        """The streamed response of the POST, once it proved to be an event stream (a failed status raises)."""
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 30.0))
        headers = {"content-type": "application/json", "accept": "text/event-stream", **self.headers}
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream("POST", self.url, content=body, headers=headers) as response,
        ):
            if response.status_code >= 400:
                detail = (await response.aread())[:2000].decode("utf-8", "replace")
                raise ProviderError(self._status_message(response.status_code, detail))
            kind = response.headers.get("content-type", "")
            if not kind.lower().startswith("text/event-stream"):
                start = (await response.aread())[:200].decode("utf-8", "replace")
                raise ProviderError(
                    f"{self.label} answered with {kind or 'no content type'}, not an event stream "
                    f"(text/event-stream): is this the agent's endpoint? It said: {' '.join(start.split())}"
                )
            yield response

    def _status_message(self, status: int, detail: str) -> str:
        detail = " ".join(detail.split())[:500]
        said = f" It said: {detail}" if detail else ""
        if status == 401:
            return f"{self.label} refused the request as unauthenticated (401): check the headers= you gave.{said}"
        if status == 403:
            return f"{self.label} refused access (403): the credentials in headers= lack permission.{said}"
        if status in (404, 405):
            return f"{self.label} has no AG-UI endpoint there ({status}): check the URL and its path.{said}"
        if status == 422:
            return f"{self.label} refused the run input as invalid (422).{said}"
        if status == 429:
            return f"{self.label} is rate limiting (429).{said}"
        if status >= 500:
            return f"{self.label} had a server error ({status}).{said}"
        return f"{self.label} refused the request ({status}).{said}"

    def error(self, exc: BaseException, *, responded: bool) -> ProviderError:
        """The one clear, header-free error for whatever failed: an error of ours as it is, the HTTP library's
        timeouts and broken or refused connections worded by whether the run had begun, anything else named."""
        if isinstance(exc, ProviderError):
            return ProviderError(redact(str(exc), *self._secrets))
        cause = " ".join(str(exc).split())[:300] or type(exc).__name__
        match http_failure(exc):
            case Failure.TIMEOUT if responded:
                message = f"{self.label} sent nothing for {self.timeout:g} s mid-run (read timeout)."
            case Failure.TIMEOUT:
                message = f"{self.label} did not answer within {self.timeout:g} s."
            case Failure.CONNECTION if responded:
                message = f"The connection to {self.named} broke off mid-run: {cause}."
            case Failure.CONNECTION:
                message = f"Could not reach {self.named}: {cause}. Is the server running, and is the URL right?"
            case _:
                message = f"The request to {self.named} failed: {type(exc).__name__}: {cause}"
        return ProviderError(redact(message, *self._secrets))


def problems(exc: pydantic.ValidationError) -> str:
    found = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False)[:3]:
        where = ".".join(str(step) for step in error["loc"]) or "the event"
        found.append(f"{where}: {error['msg']}")
    return "; ".join(found)


def preview(payload: bytes) -> str:
    return " ".join(payload[:120].decode("utf-8", "replace").split())
