"""Usage: how costs add up, their JSON (a history file's, the widget's) and its older form, the price of one
request as genai-prices computes it, and how a cost reads."""

from __future__ import annotations

from decimal import Decimal

import genai_prices
import pytest

from ai_widgets import Message, Role, TextPart, Usage
from ai_widgets.messages._usage import format_usd, price_provider_for_url, request_cost


def test_a_sum_is_priced_only_when_every_request_in_it_is() -> None:
    a = Usage(10, 2, requests=1, cost=Decimal("0.001"))
    b = Usage(20, 4, cached_tokens=5, requests=2, cache_write_tokens=3, cost=Decimal("0.0000001"))
    assert a + b == Usage(30, 6, 5, 0, 3, 3, Decimal("0.0010001"))
    assert (a + Usage(1, 1, requests=1)).cost is None  # an unknown part: the sum is unknown, not a's part
    assert (Usage(1, 1, requests=1) + a).cost is None
    # A usage of no requests (a user message's) adds nothing, so it leaves a priced sum priced.
    assert (Usage() + a + Usage()).cost == Decimal("0.001")
    assert Usage().cost is None  # nothing was priced: no guess of zero


def test_usage_round_trips_through_json_with_its_cost_as_text_and_old_files_still_read() -> None:
    usage = Usage(1000, 100, 200, 10, 2, 50, Decimal("0.000123456789"))
    data = usage.to_dict()
    assert data["cost"] == "0.000123456789"
    assert Usage.from_dict(data) == usage
    assert Usage.from_dict(Usage().to_dict()) == Usage()
    old = {"input_tokens": 5, "output_tokens": 6, "cached_tokens": 0, "reasoning_tokens": 0, "requests": 1}
    assert Usage.from_dict(old) == Usage(5, 6, requests=1)  # saved before costs were kept: unknown
    message = Message(Role.ASSISTANT, [TextPart("hi")], usage=usage)
    assert Message.from_dict(message.to_dict()).usage == usage
    saved_before = message.to_dict() | {"usage": old}
    assert Message.from_dict(saved_before).usage.cost is None
    for bad in ({"cost": 0.5}, {"cost": "-1"}, {"cost": "NaN"}, {"cost": "lots"}, {"requests": -1}, {"x": 1}):
        with pytest.raises(ValueError, match="usage field"):
            Usage.from_dict(bad)


def test_request_cost_is_genai_prices_total_price_and_none_when_it_cannot_price() -> None:
    usage = genai_prices.Usage(input_tokens=3000, output_tokens=400, cache_read_tokens=1000, cache_write_tokens=500)
    expected = genai_prices.calc_price(usage, "claude-sonnet-4-5", provider_id="anthropic").total_price
    cost = request_cost(
        provider="anthropic",
        model="claude-sonnet-4-5-20250929",
        input_tokens=3000,
        output_tokens=400,
        cache_read_tokens=1000,
        cache_write_tokens=500,
    )
    assert cost == expected
    plain = request_cost(provider="anthropic", model="claude-sonnet-4-5", input_tokens=3000, output_tokens=400)
    assert plain is not None
    assert plain != cost  # the cache's prices are not the input price
    assert request_cost(provider=None, model="gpt-4o", input_tokens=1, output_tokens=1) is None  # no guessing
    assert request_cost(provider="openai", model=None, input_tokens=1, output_tokens=1) is None
    assert request_cost(provider="openai", model="no-such-model", input_tokens=1, output_tokens=1) is None
    assert request_cost(provider="no-such-provider", model="gpt-4o", input_tokens=1, output_tokens=1) is None
    # Counts the table cannot price (more cached than input) are unknown, never an exception.
    assert request_cost(provider="openai", model="gpt-4o", input_tokens=1, output_tokens=1, cache_read_tokens=5) is None


def test_the_provider_at_a_url_is_genai_prices_own_match() -> None:
    assert price_provider_for_url("https://api.openai.com/v1/") == "openai"
    assert price_provider_for_url("https://api.mistral.ai/v1") == "mistral"
    assert price_provider_for_url("http://127.0.0.1:8000/v1") is None
    assert price_provider_for_url(None) is None


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        ("0", "$0"),
        ("0.00001", "<$0.0001"),
        ("0.0001", "$0.0001"),
        ("0.00424", "$0.0042"),
        ("0.004", "$0.004"),
        ("0.5", "$0.50"),
        ("0.123456", "$0.1235"),
        ("1", "$1.00"),
        ("1234.567", "$1,234.57"),
    ],
)
def test_a_cost_reads_in_dollars_to_four_places_below_a_dollar(cost: str, shown: str) -> None:
    assert format_usd(Decimal(cost)) == shown
