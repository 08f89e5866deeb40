"""Token counts and cost of model requests (re-exported by :mod:`ai_widgets.messages`, where a message keeps them),
and the price of one request from genai-prices' table."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import genai_prices
from genai_prices import data_snapshot

__all__ = ["Usage", "format_usd", "price_provider_for_url", "request_cost"]

COUNTS = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", "requests", "cache_write_tokens")


@dataclass(slots=True)
class Usage:
    """Token counts and cost; ``requests`` counts the model requests they came from.

    Attributes:
        input_tokens: Prompt tokens, the cached and the cache-written ones included.
        output_tokens: Completion tokens, the reasoning ones included.
        cached_tokens: Prompt tokens read from the provider's prompt cache.
        reasoning_tokens: Output tokens spent on reasoning, where the provider says.
        requests: The model requests counted.
        cache_write_tokens: Prompt tokens written to the provider's prompt cache (Anthropic's
            ``cache_creation_input_tokens``), which cost more than plain input.
        cost: What the requests cost in USD, exactly as genai-prices prices each one (for the provider and the
            model that answered, cached and cache-written tokens at their own prices, unrounded); ``None`` when the
            price of any request counted is unknown: a model or provider genai-prices does not know, a transport
            that does not say which it used, or a request the provider reported no usage for (stopped or broken off
            before it did). A sum with an unknown part is unknown: a partial sum would read as the whole.
            A usage of no requests adds nothing, so the sum of the priced replies of a conversation is priced.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    cache_write_tokens: int = 0
    cost: Decimal | None = None

    def __add__(self, other: Usage) -> Usage:
        if not self.requests:
            cost = other.cost
        elif not other.requests:
            cost = self.cost
        else:
            cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
            self.cache_write_tokens + other.cache_write_tokens,
            cost,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``cost`` as the decimal's text, so no digit is lost, or ``None``)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "requests": self.requests,
            "cache_write_tokens": self.cache_write_tokens,
            "cost": None if self.cost is None else str(self.cost),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Rebuilds usage from :meth:`to_dict`'s output; one saved before costs were kept has ``cost`` ``None``.

        Raises:
            ValueError: A field is unknown, a count is not a non-negative integer, or the cost not a non-negative
                decimal's text.
        """
        counts: dict[str, int] = {}
        cost: Decimal | None = None
        for key, value in data.items():
            if key == "cost":
                cost = cost_from_text(value)
            elif key in COUNTS and type(value) is int and value >= 0:
                counts[key] = value
            else:
                raise ValueError(f"usage field {key!r} must be a known, non-negative integer")
        return cls(**counts, cost=cost)


def cost_from_text(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        cost = Decimal(value) if isinstance(value, str) else None
    except InvalidOperation:
        cost = None
    if cost is None or not cost.is_finite() or cost < 0:
        raise ValueError(f"usage field 'cost' must be a non-negative decimal number as text, or null, not {value!r}")
    return cost


def request_cost(
    *,
    provider: str | None,
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> Decimal | None:
    """The price in USD of one request, genai-prices' ``total_price`` as it computes it; ``None`` when it is unknown.

    Args:
        provider: genai-prices' id of the provider that answered (``"openai"``, ``"anthropic"``, ``"google"``,
            ``"groq"``...); ``None`` (not known) prices nothing, since a model's price differs between providers.
        model: The model that answered, as the provider names it.
        input_tokens: All prompt tokens, the cache-read and cache-written ones included.
        output_tokens: All output tokens, reasoning included.
        cache_read_tokens: Prompt tokens read from the cache (priced at the cache-read price).
        cache_write_tokens: Prompt tokens written to the cache (priced at the cache-write price).
    """
    if not provider or not model:
        return None
    usage = genai_prices.Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
    )
    try:
        return genai_prices.calc_price(usage, model, provider_id=provider).total_price
    except Exception:  # an unknown model or provider (LookupError), counts the table cannot price (ValueError)
        return None


def price_provider_for_url(url: str | None) -> str | None:
    """genai-prices' id of the provider whose API is at ``url`` (``https://api.groq.com/openai/v1`` is ``"groq"``),
    by the API URL patterns of its table; ``None`` for a server it does not know (a local one, a proxy)."""
    if not url:
        return None
    try:
        return data_snapshot.get_snapshot().find_provider(None, None, url).id
    except LookupError:
        return None


def format_usd(cost: Decimal) -> str:
    """A cost for people: ``$1.23`` from a dollar up, ``$0.0042`` or ``$0.50`` below it (four decimals at most, two
    at least), ``<$0.0001`` for less than that but more than nothing, ``$0`` for nothing."""
    if cost == 0:
        return "$0"
    if cost < Decimal("0.0001"):
        return "<$0.0001"
    if cost < 1:
        text = f"{cost.quantize(Decimal('0.0001')):f}"
        while text.endswith("0") and len(text) > 4:  # "0.50" keeps its cents
            text = text[:-1]
        return f"${text}"
    return f"${cost.quantize(Decimal('0.01')):,f}"
