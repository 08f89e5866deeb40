"""The OpenAI SDK's errors as clear, key-free :class:`ProviderError`s, for both OpenAI transports (Chat Completions
and Responses): one wording for an HTTP status, a timeout, a connection that failed or broke off, an error the API
reported inside the stream, and stream data that is not JSON.

Both transports read the stream's body themselves (the SDK sends the request, retries it and raises on an HTTP
status; see ``with_streaming_response``), so what breaks mid-stream reaches them as the HTTP library's own errors
(``httpx``'s ``ReadTimeout``, ``RemoteProtocolError``...), which the SDK would have wrapped: they are sorted by the
one rule every transport uses (:func:`~ai_widgets.transports._errors.http_failure`) and get the same wording as the
SDK's ``APITimeoutError`` and ``APIConnectionError``."""

from __future__ import annotations

import json
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import (
    Failure,
    ProviderError,
    broke_off,
    describe_status,
    http_failure,
    seconds_of,
    unreachable,
)

import_sdk("openai", "openai")  # says which extra to install when the SDK is missing

import openai  # noqa: E402

__all__ = ["error_detail", "in_band_error", "map_openai_error", "stream_error"]

#: The message the SDK gives an in-band error without one.
NO_MESSAGE = "An error occurred during streaming"


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
        case ProviderError():  # raised while reading the stream: an in-band error, a malformed stream
            return ProviderError(redact(str(exc), secret))
        case openai.APIStatusError(status_code=status):
            detail = redact(error_detail(exc.body, exc.message), secret)
            text = describe_status(label, status, detail, key_hint=key_hint) + no_tools_hint(detail, exc)
            return ProviderError(redact(text, secret))
        case openai.APITimeoutError():
            return timed_out(label, client, responded)
        case openai.APIConnectionError():
            return connection_failed(label, client, responded, exc.__cause__ or exc.__context__, secret)
        case openai.APIError():
            # An error event inside a 200 stream (the SDK raises on a payload with an "error" key).
            code = exc.code or (exc.type if isinstance(exc.type, str) else None)
            return ProviderError(redact(in_band_error(label, code, error_detail(exc.body, exc.message)), secret))
        case openai.OpenAIError():
            return ProviderError(f"{label}: {redact(str(exc), secret)}")
        case json.JSONDecodeError():
            return ProviderError(f"{label} sent stream data that is not JSON ({exc.msg}).")
        case UnicodeDecodeError():
            return ProviderError(f"{label} sent stream data that is not UTF-8 ({exc.reason}).")
    # The HTTP library's errors while the body streams (httpx or httpx2, which the SDK wraps only before the body).
    match http_failure(exc):
        case Failure.TIMEOUT:
            return timed_out(label, client, responded)
        case Failure.CONNECTION:
            return connection_failed(label, client, responded, exc, secret)
    return None


def stream_error(label: str, error: object) -> ProviderError:
    """The error a provider reported in the stream's data, ``{"error": {"code", "type", "message"}}`` (or a
    string): ``"<label>: <code or type>: <message>"``, worded as :func:`map_openai_error` words the SDK's."""
    code: Any = None
    if isinstance(error, dict):
        kind = error.get("type")
        code = error.get("code") or (kind if isinstance(kind, str) else None)
    message = error if isinstance(error, str) else error_detail(error, NO_MESSAGE)
    return ProviderError(in_band_error(label, code, message))


def timed_out(label: str, client: Any, responded: bool) -> ProviderError:
    # Worded apart from ``_errors.timed_out`` (which the other transports use): the tests of both OpenAI transports
    # pin this sentence, with the timeout and, before the response, the retries.
    retries = "" if responded else ", even after retries"
    return ProviderError(f"{label} did not answer in time (timeout {seconds(client)}{retries}).")


def connection_failed(
    label: str, client: Any, responded: bool, cause: BaseException | None, secret: str | None
) -> ProviderError:
    if responded:
        return broke_off(label, cause=cause, secrets=(secret,))
    return unreachable(label, base_url=str(getattr(client, "base_url", "")), cause=cause, secrets=(secret,))


def in_band_error(label: str, code: str | None, message: str | None) -> str:
    """The text of an error the provider reported inside the stream: ``"<label>: <code>: <message>"``."""
    text = message or "the response failed without saying why"
    return redact(f"{label}: {code}: {text}" if code else f"{label}: {text}")


def error_detail(body: object, fallback: str) -> str:
    """The provider's own message from an error body (``{"error": {"message": ...}}`` and variants)."""
    error = body.get("error", body) if isinstance(body, dict) else body  # vLLM's 401 body is a bare string
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(error, str) and error:
        return error
    return fallback


def seconds(client: Any) -> str:
    timeout = getattr(client, "timeout", None)
    seconds = seconds_of(timeout)  # an httpx Timeout, or seconds
    return f"{seconds:g} s" if seconds is not None else str(getattr(timeout, "read", timeout))


# --- a local server that cannot call tools ----------------------------------------------------------------------------
# Ollama answers 400 "<model> does not support tools" (server/images.go CheckCapabilities); vLLM started without
# tool calling answers 400 '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
# (entrypoints/openai/serving_chat.py). Both say what failed; the hint says what to do, naming the requested model.


def no_tools_hint(detail: str, exc: openai.APIStatusError) -> str:
    """What to do when a server refuses tools for the model (empty for any other error)."""
    if "does not support tools" in detail:
        return (
            f" The model {requested_model(exc)} cannot call tools: pick one that can (e.g. `ollama pull qwen3`; "
            "`ollama show <model>` lists 'tools' among its capabilities), or send no tools (ToolChoice.NONE)."
        )
    if "--enable-auto-tool-choice" in detail:
        return (
            f" For the model {requested_model(exc)} to call tools, start vLLM with --enable-auto-tool-choice "
            "--tool-call-parser <its parser> (hermes for Qwen, llama3_json for Llama 3, mistral for Mistral), "
            "or send no tools (ToolChoice.NONE)."
        )
    return ""


def requested_model(exc: openai.APIStatusError) -> str:
    """The model named in the failed request's JSON body, quoted (``"of this request"`` when it cannot be read)."""
    try:
        model = json.loads(exc.request.content)["model"]
    except Exception:  # a request without a JSON body, or none at all: the hint goes without the name
        return "of this request"
    return repr(model) if isinstance(model, str) else "of this request"
