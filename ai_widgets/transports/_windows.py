"""How many tokens a model's context window holds, when the session is not told (``RequestOptions.context_window``):
genai-prices' model table where it knows the model, else our own small table below; ``None`` for a model neither
knows (a local server's), and the session then shortens nothing.

genai-prices (a dependency, for the cost of a request too) bundles a table of every major provider's models that its
maintainers keep current from the providers' model pages (``ModelInfo.context_window``); it finds the provider from the
API's URL, so a model served by another provider (Groq, OpenRouter...) gets that provider's figure. A server it does not
know (a local one, a proxy) gets ``None``: the same model name there may run with a much smaller window (Ollama's
default is a few thousand tokens), and a figure that is too large would shorten nothing anyway.
"""

from __future__ import annotations

import functools

from genai_prices import data_snapshot

__all__ = ["FAMILY_WINDOWS", "known_window"]

#: Context windows (tokens) of model families, by the start of the model's name, for a model of the provider's own
#: API that genai-prices does not list (a new snapshot name, a model it lists without a window). The longest matching
#: start wins. Sources: the providers' model pages, checked 2026-12-02: platform.openai.com/docs/models (GPT-5 family
#: 400,000; GPT-4.1 1,047,576; GPT-4o 128,000; o3 / o4-mini 200,000), docs.anthropic.com "Models overview" (every
#: current Claude model 200,000 without the 1M beta), ai.google.dev/gemini-api/docs/models (Gemini 2.x and 3.x
#: 1,048,576 input tokens).
FAMILY_WINDOWS: dict[str, dict[str, int]] = {
    "openai": {"gpt-5": 400_000, "gpt-4.1": 1_047_576, "gpt-4o": 128_000, "o3": 200_000, "o4-mini": 200_000},
    "anthropic": {"claude-": 200_000},
    "google": {"gemini-2": 1_048_576, "gemini-3": 1_048_576},
}


@functools.lru_cache(maxsize=256)
def known_window(provider: str, model: str, *, base_url: str | None = None) -> int | None:
    """The context window of ``model`` in tokens, or ``None`` when it is not known.

    Args:
        provider: The provider whose own API serves it: ``"openai"``, ``"anthropic"`` or ``"google"``.
        model: The model's name as the request sends it.
        base_url: The API's URL (``None``: the provider's own API).
    """
    snapshot = data_snapshot.get_snapshot()
    try:
        if base_url is not None:
            found = snapshot.find_provider(model, None, base_url)
        else:
            found = snapshot.find_provider(model, provider, None)
    except LookupError:
        return None  # a server genai-prices does not know: its own limits, which no table here knows
    info = found.find_model(model, all_providers=snapshot.providers)
    if info is not None and isinstance(info.context_window, int) and info.context_window > 0:
        return info.context_window
    if found.id != provider:
        return None  # another provider serving it: the family table is the provider's own API's
    family = FAMILY_WINDOWS.get(provider, {})
    starts = [start for start in family if model.lower().startswith(start)]
    return family[max(starts, key=len)] if starts else None
