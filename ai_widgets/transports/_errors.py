"""How a provider request fails, for every transport: :class:`ProviderError` (a clear message that never holds a key),
the wording of an HTTP status and of a missing key, and the one rule that sorts what the HTTP library (or an SDK
wrapping it) raised into a timeout or a failed connection, and words it.

The SDKs wrap the HTTP library's errors only until the response begins; what breaks while the body streams reaches a
transport as the library's own exception (``httpx``'s or ``httpx2``'s ``ReadTimeout``, ``RemoteProtocolError``...,
anyio's ``EndOfStream``, an ``ssl.SSLError``). :func:`http_failure` sorts both kinds the same way for all four
transports, and :func:`unreachable`, :func:`broke_off` and :func:`timed_out` give each its one wording.

A request longer than the model's context window is refused by every provider in its own words; :func:`classified`
is the one rule that sorts those into a :class:`ContextTooLongError` with the sizes the provider stated, for every
transport (the session retries such a request once, shortened).
"""

from __future__ import annotations

import enum
import json
import re
import ssl
from typing import Any

from ai_widgets._safe import redact

__all__ = [
    "ContextTooLongError",
    "Failure",
    "ProviderError",
    "broke_off",
    "classified",
    "describe_status",
    "http_failure",
    "missing_key",
    "seconds_of",
    "timed_out",
    "unreachable",
    "unreadable_payload",
]


class ProviderError(RuntimeError):
    """A provider request failed; the message says why and what to do, and never contains a key."""


class ContextTooLongError(ProviderError):
    """The provider refused the request as longer than the model's context window.

    Attributes:
        tokens: How many tokens the provider counted in the request (input, and the output asked for where the
            provider adds it), when it said.
        limit: The model's limit it stated, when it said.
    """

    def __init__(self, message: str, *, tokens: int | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.limit = limit


# How each provider words a request past the context window (each from a real response; the tests replay them):
# OpenAI Chat Completions (and vLLM, which copies it): 400, code "context_length_exceeded", "This model's maximum
# context length is 8192 tokens. However, your messages resulted in 8227 tokens." (or "you requested 4130 tokens (3130
# in the messages, 1000 in the completion)"); OpenAI Responses: code "context_length_exceeded", "Your input exceeds
# the context window of this model.", no sizes; Anthropic: 400 invalid_request_error "prompt is too long: 208656
# tokens > 200000 maximum", or "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000", and 413
# request_too_large for a body past its size limit; Gemini: 400 INVALID_ARGUMENT "The input token count (132478)
# exceeds the maximum number of tokens allowed (131072)."
TOO_LONG_WORDS = re.compile(
    r"maximum context length|prompt is too long|exceed context limit|exceeds the context window|"
    r"input token count.{0,20}exceeds the maximum|context window exceeded|context_length_exceeded|request_too_large",
    re.IGNORECASE | re.DOTALL,
)
SIZES: tuple[
    tuple[re.Pattern[str], int | tuple[int, int], int], ...
] = (  # (pattern, index of the tokens counted, index of the limit); a sum where the provider states its parts
    (re.compile(r"maximum context length is (\d+) tokens.{0,40}?(?:resulted in|requested) (\d+) tokens", re.S), 2, 1),
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum"), 1, 2),
    (re.compile(r"exceed context limit: (\d+) \+ (\d+) > (\d+)"), (1, 2), 3),
    (re.compile(r"input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)"), 1, 2),
)


def classified(error: ProviderError) -> ProviderError:
    """``error`` as a :class:`ContextTooLongError` when its text says the request was past the model's context window
    (the provider's code or words, see above), with the sizes it stated; else ``error`` itself. The one rule every
    transport applies to the errors it raises."""
    text = str(error)
    if isinstance(error, ContextTooLongError) or not TOO_LONG_WORDS.search(text):
        return error
    tokens = limit = None
    for pattern, counted, stated in SIZES:
        found = pattern.search(text)
        if found is not None:
            parts = counted if isinstance(counted, tuple) else (counted,)
            tokens = sum(int(found.group(index)) for index in parts)
            limit = int(found.group(stated))
            break
    too_long = ContextTooLongError(text, tokens=tokens, limit=limit)
    too_long.__cause__ = error.__cause__
    return too_long


def describe_status(provider: str, status: int, detail: str, *, key_hint: str) -> str:
    """A clear message for an HTTP failure.

    Args:
        provider: The provider's name, e.g. "OpenAI".
        status: The HTTP status.
        detail: The provider's own message (already redacted).
        key_hint: Where the key comes from, e.g. "OPENAI_API_KEY or api_key=".
    """
    if status == 401:
        return f"{provider} rejected the API key (401): check {key_hint}. {detail}".strip()
    if status == 403:
        return (
            f"{provider} refused access (403): the key in {key_hint} lacks permission for this model. {detail}".strip()
        )
    if status == 404:
        return f"{provider}: not found (404), often a wrong model name or base_url. {detail}".strip()
    if status == 429:
        return f"{provider} is rate limiting or out of quota (429), even after retries. {detail}".strip()
    if status >= 500:
        return f"{provider} had a server error ({status}), even after retries. {detail}".strip()
    return f"{provider} refused the request ({status}). {detail}".strip()


def missing_key(provider: str, variable: str) -> ProviderError:
    """The error a transport raises at construction when it has no key for the provider's own API."""
    return ProviderError(f"No API key for {provider}: set {variable}, or pass api_key= or client=.")


def unreadable_payload(label: str, exc: BaseException) -> ProviderError:
    """The error for a stream event's data that ``json.loads`` could not read: not UTF-8, not JSON, or JSON Python will
    not read (an integer of more than 4,300 digits, nesting deeper than the interpreter's recursion limit)."""
    if isinstance(exc, UnicodeDecodeError):
        return ProviderError(f"{label} sent stream data that is not UTF-8 ({exc.reason}).")
    if isinstance(exc, json.JSONDecodeError):
        return ProviderError(f"{label} sent stream data that is not JSON ({exc.msg}).")
    if isinstance(exc, RecursionError):
        return ProviderError(f"{label} sent stream data that is not JSON Python can read: it is nested too deeply.")
    return ProviderError(f"{label} sent stream data that cannot be read ({' '.join(str(exc).split())[:200]}).")


# --- the HTTP library's errors ----------------------------------------------------------------------------------------


class Failure(enum.Enum):
    """What went wrong on the way to the provider."""

    TIMEOUT = "timeout"
    """The provider did not answer (or stopped sending) within the client's timeout."""
    CONNECTION = "connection"
    """The connection could not be made, or broke: refused, reset, closed mid-body, a protocol or TLS error."""


# The HTTP library's exception classes, by name: ``httpx`` and ``httpx2`` (which the SDKs vendor or pin) share them,
# and naming them keeps this module free of either. ``RequestError`` holds every transport error (connect, read,
# write, remote and local protocol errors, a body that fails to decode); ``StreamError`` is a body read after the
# connection closed; ``EndOfStream`` is anyio's, raised when a connection ends under a read.
TIMEOUTS = frozenset({"TimeoutException"})
CONNECTION_FAILURES = frozenset({"RequestError", "TransportError", "StreamError", "EndOfStream"})


def http_failure(exc: BaseException) -> Failure | None:
    """What the HTTP library's exception means (the one rule every transport sorts these by), or ``None`` for an
    exception that is not the HTTP library's (an SDK's own errors are the transport's to sort first)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & TIMEOUTS:  # before the connection failures: a timeout is a transport error too
        return Failure.TIMEOUT
    if names & CONNECTION_FAILURES or isinstance(exc, (ssl.SSLError, ConnectionError)):
        return Failure.CONNECTION
    return None


def seconds_of(timeout: Any) -> float | None:
    """A client's read timeout in seconds: a number, or an ``httpx.Timeout``'s ``read`` (``None``: none known)."""
    value = getattr(timeout, "read", timeout)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def timed_out(label: str, *, seconds: float | None, responded: bool) -> ProviderError:
    """A timeout: before the response began (the SDK retried it), or while the body streamed (never retried)."""
    if responded:
        return ProviderError(f"{label} stopped sending the reply (read timeout).")
    within = f" within {seconds:g} s" if seconds is not None else ""
    return ProviderError(f"{label} did not answer{within}, even after retries.")


def unreachable(
    label: str, *, base_url: str | None, cause: BaseException | None, secrets: tuple[str | None, ...]
) -> ProviderError:
    """A connection that could not be made, even after the SDK's retries: refused, no route, a TLS failure."""
    url = (base_url or "").rstrip("/")
    where = label if not url or url in label else f"{label} at {url}"
    return ProviderError(redact(f"Could not reach {where}, even after retries{detail(cause)}.", *secrets))


def broke_off(label: str, *, cause: BaseException | None, secrets: tuple[str | None, ...]) -> ProviderError:
    """A connection that broke while the reply streamed (nothing is retried once the reply has begun)."""
    return ProviderError(redact(f"The connection to {label} broke off mid-reply{detail(cause)}.", *secrets))


def detail(cause: BaseException | None) -> str:
    text = str(cause) if cause is not None else ""
    return f": {text}" if text else ""
