"""What the provider transports share: clear errors without secrets, and the history as providers need it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ai_widgets.messages import Message, Role, ToolCallPart
from ai_widgets.tools import ToolOutcome

__all__ = [
    "ProviderError",
    "describe_status",
    "history",
    "import_sdk",
    "outcome_text",
    "redact",
]

# Things that look like credentials, whatever the provider: removed from every error text we produce.
_SECRET_PATTERNS = [
    # Full keys, and the masked forms providers echo back (sk-proj-****...6789), whose tail is still a secret's.
    re.compile(r"sk-[A-Za-z0-9_\-\*\.…]{4,}"),
    re.compile(r"(?i)(api[_-]?key|authorization|x-api-key|bearer)([\"'\s:=]+)[A-Za-z0-9_\-\.]{8,}"),
]


class ProviderError(RuntimeError):
    """A provider request failed; the message says why and what to do, and never contains a key."""


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with the given secrets and anything that looks like a key replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) + m.group(2) if m.lastindex else "") + "[redacted]", text)
    return text


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
    """What the model is told about a call's result (every call in a request has an outcome)."""
    outcome = part.outcome or ToolOutcome.failure("Not run.")
    return outcome.model_content()


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
