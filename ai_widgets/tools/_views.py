"""What the model sees of a tool: its definition as each provider API receives it, with its size.

The JSON comes from the transports' own mapping (:mod:`ai_widgets.tools._formats`), so what is shown is what
is sent. Sizes are of the JSON as sent: compact (no spaces), UTF-8. Tokens are an estimate, not a count: about 4 bytes
a token, OpenAI's rule of thumb for English text ("1 token ~= 4 chars in English", help.openai.com "What are tokens
and how to count them"). JSON's quotes and braces make real counts somewhat higher, each provider tokenises
differently, and each wraps the definitions in its own prompt template, so the billed number differs; the estimate
is for comparing tools and seeing what a big schema costs on every request.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ai_widgets.tools._definition import HasDefinition, ToolDefinition, definition_of
from ai_widgets.tools._formats import PROVIDER_FORMATS, PROVIDER_LABELS, openai_strict

__all__ = [
    "BYTES_PER_TOKEN",
    "ProviderView",
    "compact_json",
    "estimate_tokens",
    "provider_definitions",
    "provider_views",
]

#: The bytes of JSON per token the estimate assumes (see the module's docstring).
BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class ProviderView:
    """One provider API's view of a tool.

    Attributes:
        provider: The key: ``openai_chat``, ``openai_responses``, ``anthropic`` or ``gemini``.
        label: Its name for people, e.g. "OpenAI Chat Completions".
        definition: The tool's entry in that API's request, exactly as the transport sends it.
        size: Its size in bytes as sent (compact JSON, UTF-8).
        tokens: An estimate of its tokens (:func:`estimate_tokens`).
        strict: For the OpenAI APIs, whether strict mode is asked for; ``None`` for the others.
    """

    provider: str
    label: str
    definition: dict[str, Any]
    size: int
    tokens: int
    strict: bool | None


def provider_definitions(item: HasDefinition | ToolDefinition) -> dict[str, dict[str, Any]]:
    """The tool's entry in each provider API's request, as the transports send it.

    Returns:
        ``{"openai_chat": ..., "openai_responses": ..., "anthropic": ..., "gemini": ...}``; Gemini's is one of
        ``tools[0].functionDeclarations``.
    """
    definition = definition_of(item)
    return {key: mapping(definition) for key, mapping in PROVIDER_FORMATS.items()}


def compact_json(value: Any) -> str:
    """``value`` as compact JSON, as a request body carries it (non-ASCII as itself, not ``\\u`` escapes).

    A value JSON cannot carry (NaN, an object) is written anyway (``NaN``, its ``repr``) so it can be shown;
    ``Tool.check()`` reports it.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=repr)


def estimate_tokens(size: int) -> int:
    """An estimate of the tokens of ``size`` bytes of JSON: one per :data:`BYTES_PER_TOKEN` bytes, rounded up."""
    return math.ceil(size / BYTES_PER_TOKEN)


def provider_views(item: HasDefinition | ToolDefinition) -> list[ProviderView]:
    """Each provider API's view of the tool, with its size and token estimate, in a fixed order."""
    views = []
    for key, definition in provider_definitions(item).items():
        size = len(compact_json(definition).encode("utf-8", "surrogatepass"))
        views.append(
            ProviderView(
                provider=key,
                label=PROVIDER_LABELS[key],
                definition=definition,
                size=size,
                tokens=estimate_tokens(size),
                strict=openai_strict(definition) if key.startswith("openai") else None,
            )
        )
    return views
