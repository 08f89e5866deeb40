"""The OpenAI SDK's errors as clear, key-free :class:`ProviderError`s, for both OpenAI transports (Chat Completions
and Responses): one wording for an HTTP status, a timeout, a connection that failed or broke off, an error the API
reported inside the stream, and stream data that is not JSON."""

from __future__ import annotations

import json
from typing import Any

from ai_widgets.transports._common import ProviderError, describe_status, import_sdk, redact

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

__all__ = ["error_detail", "in_band_error", "map_openai_error"]


def map_openai_error(
    exc: BaseException, *, label: str, key_hint: str, client: Any, responded: bool
) -> ProviderError | None:
    """A clear error for what the OpenAI SDK (or the stream under it) raised, or ``None`` for anything else.

    Args:
        exc: What was raised.
        label: The provider's name for the message, e.g. ``"OpenAI"``, ``"Groq"``, ``"the server at <url>"``.
        key_hint: Where the key comes from, e.g. ``"OPENAI_API_KEY or api_key="``.
        client: The SDK client (its key is scrubbed from the text; its base URL and timeout are quoted).
        responded: Whether the response had begun (nothing is retried after that, and a connection error then
            means the reply broke off).
    """
    key = getattr(client, "api_key", None)
    secret = key if isinstance(key, str) else None
    match exc:
        case openai.APIStatusError(status_code=status):
            detail = redact(error_detail(exc.body, exc.message), secret)
            return ProviderError(redact(describe_status(label, status, detail, key_hint=key_hint), secret))
        case openai.APITimeoutError():
            retries = "" if responded else ", even after retries"
            return ProviderError(f"{label} did not answer in time (timeout {_seconds(client)}{retries}).")
        case openai.APIConnectionError():
            cause = exc.__cause__ or exc.__context__
            detail = redact(f": {cause}" if cause is not None and str(cause) else "", secret)
            if responded:
                return ProviderError(f"The connection to {label} broke off mid-reply{detail}.")
            url = str(getattr(client, "base_url", "")).rstrip("/")
            where = label if url in label else f"{label} at {url}"
            return ProviderError(redact(f"Could not reach {where}, even after retries{detail}.", secret))
        case openai.APIError():
            # An error event inside a 200 stream (the SDK raises on a payload with an "error" key).
            code = exc.code or (exc.type if isinstance(exc.type, str) else None)
            return ProviderError(redact(in_band_error(label, code, error_detail(exc.body, exc.message)), secret))
        case openai.OpenAIError():
            return ProviderError(f"{label}: {redact(str(exc), secret)}")
        case json.JSONDecodeError():
            return ProviderError(f"{label} sent stream data that is not JSON ({exc.msg}).")
    return None


def in_band_error(label: str, code: str | None, message: str | None) -> str:
    """The text of an error the provider reported inside the stream: ``"<label>: <code>: <message>"``."""
    text = message or "the response failed without saying why"
    return redact(f"{label}: {code}: {text}" if code else f"{label}: {text}")


def error_detail(body: object, fallback: str) -> str:
    """The provider's own message from an error body (``{"error": {"message": ...}}`` and variants)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(error, str) and error:
        return error
    return fallback


def _seconds(client: Any) -> str:
    timeout = getattr(client, "timeout", None)
    value = getattr(timeout, "read", timeout)  # an httpx Timeout, or seconds
    return f"{value:g} s" if isinstance(value, (int, float)) else str(value)
