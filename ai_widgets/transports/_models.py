"""The models used when none is named: current small models, in one place.

``AI_WIDGETS_MODEL`` in the environment overrides them all (the quickstart's provider choice reads it too). A test
checks every default against the installed SDK's model list and its deprecations, so a retired default fails CI
instead of a person's first request.
"""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["DEFAULT_MODELS", "Provider", "default_model"]

Provider = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "openai-compatible"]

DEFAULT_MODELS: dict[Provider, str] = {
    "openai-chat": "gpt-5.4-mini",
    "openai-responses": "gpt-5.4-mini",
    "anthropic": "claude-haiku-4-5",
    "gemini": "gemini-3.5-flash",
    # A local server (Ollama, vLLM...): a small model that calls tools; the server must have pulled it.
    "openai-compatible": "qwen3",
}


def default_model(provider: Provider, environ: dict[str, str] | None = None) -> str:
    """The model for ``provider`` when none is named: ``AI_WIDGETS_MODEL`` if set, else the provider's default.

    Args:
        provider: Which API.
        environ: The environment to read (``os.environ`` by default).

    Raises:
        ValueError: ``provider`` is not one of :data:`DEFAULT_MODELS`.
    """
    if provider not in DEFAULT_MODELS:
        raise ValueError(f"no default model for {provider!r}; known: {', '.join(DEFAULT_MODELS)}")
    chosen = (os.environ if environ is None else environ).get("AI_WIDGETS_MODEL", "").strip()
    return chosen or DEFAULT_MODELS[provider]
