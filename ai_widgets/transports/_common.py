"""What the provider transports share: clear errors without secrets, keys and clients set up the same way, and the
history as providers need it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.messages import Message, Role, ToolCallPart

__all__ = [
    "NO_KEY",
    "ProviderError",
    "arguments_json",
    "check_connection_arguments",
    "describe_status",
    "history",
    "import_sdk",
    "missing_key",
    "outcome_text",
    "own_data",
    "redact",
]

#: The key a transport gives its SDK for a server named by ``base_url`` when no key is configured: the SDKs refuse to
#: build a client without one, a local server needs none, and a remote one answers 401 with a message naming the key.
NO_KEY = "not-needed"


class ProviderError(RuntimeError):
    """A provider request failed; the message says why and what to do, and never contains a key."""


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


def check_connection_arguments(client: object, **connection: object) -> None:
    """Refuses ``client=`` together with arguments that configure a client (``base_url=``, ``api_key=``, ...).

    Raises:
        ValueError: Both were given.
    """
    given = [f"{name}=" for name, value in connection.items() if value is not None]
    if client is not None and given:
        raise ValueError(
            f"pass either client= or {'/'.join(given)}, not both: a client brings its own base URL and key"
        )


def own_data(part: Any, provider: str) -> dict[str, Any] | None:
    """A part's ``provider_data`` when it is a dict that ``provider`` stored, else ``None`` (another provider's, or
    none at all): a transport sends back only its own provider's data."""
    data = part.provider_data
    return data if part.provider == provider and isinstance(data, dict) else None


def import_sdk(module: str, extra: str) -> Any:
    """Imports a provider SDK, or says which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'this transport needs the {module!r} package: pip install "ai_widgets[{extra}]"') from exc


def history(messages: Iterable[Message]) -> Iterator[Message]:
    """The messages a provider should see: empty assistant messages (a reply that has not started) left out."""
    for message in messages:
        if message.role is Role.ASSISTANT and not message.parts:
            continue
        yield message


def outcome_text(part: ToolCallPart) -> str:
    """What the model is told about a call's result (every call in a request has an outcome), including that the
    person edited its arguments, when they did."""
    return part.result_for_model()


def arguments_json(part: ToolCallPart) -> str:
    """A call's arguments as valid JSON text for the provider (``{}`` when what the model sent was not JSON)."""
    text = part.arguments.strip()
    if not text:
        return "{}"
    try:
        json.loads(text)
    except ValueError:
        return json.dumps(part.parsed_arguments)
    return text
