"""What a conversation costs (``Usage.cost`` per reply, ``session.usage`` for all of it) and the budget of a turn
(``SessionOptions(max_cost=...)``), with the scripted transport saying which model answered."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import genai_prices
import pydantic
import pytest

from ai_widgets import ChatSession, MessageStatus, SessionOptions, ToolCallState, tool
from ai_widgets.events import UsageUpdate
from ai_widgets.messages import ErrorKind, Message, Role, TextPart
from ai_widgets.messages._usage import format_usd
from ai_widgets.transports import ChatRequest, ContextTooLongError, ScriptedReply, ScriptedToolCall, ScriptedTransport

MODEL, PROVIDER = "gpt-4o-mini", "openai"
#: What each scripted request costs: genai-prices' figure for 1,000 input tokens (200 cached) and 100 output.
PRICE = genai_prices.calc_price(
    genai_prices.Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=200), MODEL, provider_id=PROVIDER
).total_price
PRICED = UsageUpdate(input_tokens=1000, output_tokens=100, cached_tokens=200, model=MODEL, provider=PROVIDER)
UNPRICED = UsageUpdate(input_tokens=1000, output_tokens=100)  # a transport that does not say who answered


class Counted(pydantic.BaseModel):
    n: int


@tool
def step(n: int) -> int:
    """One step of a long loop.

    Args:
        n: The step.
    """
    return n


def looping(usage: UsageUpdate, *, answer_after: int | None = None) -> Any:
    """A model that calls ``step`` on every request (answering in text after ``answer_after`` requests)."""
    requests = 0

    def model(request: ChatRequest) -> ScriptedReply:
        nonlocal requests
        requests += 1
        if answer_after is not None and requests > answer_after:
            return ScriptedReply(text="Done.", usage=usage)
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="step", arguments={"n": requests})], usage=usage)

    return model


async def test_each_reply_costs_its_requests_and_the_session_sums_every_turn(tmp_path: Any) -> None:
    transport = ScriptedTransport(looping(PRICED, answer_after=2))
    history = tmp_path / "chat.jsonl"
    session = ChatSession(transport, tools=[step], history=history)
    first = await session.send("go")
    assert first.usage.requests == 3
    assert first.usage.cost == 3 * PRICE  # exactly genai-prices' figure per request, summed, unrounded
    second = await session.send("again")  # the model answers at once now
    assert second.usage.cost == PRICE
    assert session.usage.cost == 4 * PRICE
    assert session.usage.cached_tokens == 800
    # Saved and read back: the cost is kept to the last digit.
    costs = [m.usage.cost for m in session.messages]
    session.close()
    reloaded = ChatSession(transport, history=history)
    assert [m.usage.cost for m in reloaded.messages] == costs
    assert reloaded.usage.cost == 4 * PRICE


async def test_an_unknown_price_makes_the_sum_unknown_and_never_fails() -> None:
    session = ChatSession(ScriptedTransport([ScriptedReply(text="a", usage=PRICED), ScriptedReply(text="b")]))
    priced = await session.send("one")
    assert priced.usage.cost == PRICE
    unpriced = await session.send("two")  # the scripted transport's own usage names no model
    assert unpriced.status is MessageStatus.COMPLETED
    assert unpriced.usage.cost is None
    assert session.usage.cost is None  # a sum with an unknown part is unknown, not the known part
    assert session.usage.total_tokens > 0
    unknown_model = UsageUpdate(input_tokens=10, output_tokens=1, model="no-such-model", provider=PROVIDER)
    session = ChatSession(ScriptedTransport([ScriptedReply(text="c", usage=unknown_model)]))
    assert (await session.send("three")).usage.cost is None


async def test_max_cost_ends_the_turn_after_the_request_that_reached_it_and_continue_has_a_fresh_budget() -> None:
    transport = ScriptedTransport(looping(PRICED))
    budget = PRICE * Decimal("2.5")
    session = ChatSession(transport, tools=[step], options=SessionOptions(max_cost=budget))
    reply = await session.send("loop")
    assert len(transport.requests) == 3  # 1 and 2 price under the budget, the third reaches it
    assert reply.usage.cost == 3 * PRICE
    assert reply.status is MessageStatus.LIMIT_REACHED
    ran = [part for part in reply.tool_calls if part.state is ToolCallState.COMPLETED]
    skipped = reply.tool_calls[-1]
    assert len(ran) == 2
    assert skipped.state is ToolCallState.SKIPPED
    assert skipped.outcome is not None
    assert skipped.outcome.message == "Not run: this turn reached its limit of $0.0005 (max_cost)."
    assert reply.error == (
        "Paused at the budget of this turn: it spent $0.0006 of $0.0005 (max_cost); "
        "Continue runs the call the model asked for next, with a fresh budget."
    )
    assert reply.error_kind is ErrorKind.MAX_COST  # the reply's error offers Continue
    resumed = await session.resume()
    # The skipped call runs first, then the model again: three more requests, a budget of its own.
    assert resumed.tool_calls[0].parsed_arguments == skipped.parsed_arguments
    assert resumed.tool_calls[0].state is ToolCallState.COMPLETED
    assert len(transport.requests) == 6
    assert resumed.status is MessageStatus.LIMIT_REACHED
    assert resumed.usage.cost == 3 * PRICE
    assert session.usage.cost == 6 * PRICE


async def test_a_turn_that_answers_within_its_last_request_completes_whatever_it_spent() -> None:
    transport = ScriptedTransport(looping(PRICED, answer_after=1))
    session = ChatSession(transport, tools=[step], options=SessionOptions(max_cost=PRICE * Decimal("1.5")))
    reply = await session.send("go")
    assert reply.status is MessageStatus.COMPLETED  # the second request crossed it, but nothing was left to do
    assert reply.usage.cost == 2 * PRICE


async def test_with_max_cost_a_turn_whose_price_is_unknown_stops_after_one_request_saying_why() -> None:
    transport = ScriptedTransport(looping(UNPRICED))
    session = ChatSession(transport, tools=[step], options=SessionOptions(max_cost=1))
    reply = await session.send("loop")
    assert len(transport.requests) == 1
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.tool_calls[0].state is ToolCallState.SKIPPED
    assert reply.error is not None
    assert reply.error.startswith("Paused: the price of this model's requests is unknown")
    assert "the budget of $1.00 per turn (max_cost) cannot be kept" in reply.error
    # A plain answer needs no budget: it completes.
    session = ChatSession(ScriptedTransport([ScriptedReply(text="Hi.")]), options=SessionOptions(max_cost=1))
    assert (await session.send("hi")).status is MessageStatus.COMPLETED


async def test_max_cost_ends_a_typed_turn_before_asking_again_for_an_answer_that_did_not_validate() -> None:
    transport = ScriptedTransport(lambda _request: ScriptedReply(text='{"n": "not a number"}', usage=PRICED))
    options = SessionOptions(max_cost=PRICE / 2, output_retries=4)
    session = ChatSession(transport, options=options)
    reply = await session.send("a number", output_type=Counted)
    assert len(transport.requests) == 1  # the first request reached the budget: no retry is sent
    assert reply.usage.cost == PRICE
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.output is None
    assert reply.error is not None
    assert reply.error.startswith(f"Paused at the budget of this turn: it spent {format_usd(PRICE)} of ")
    assert "the answer did not match Counted and was not asked for again" in reply.error
    assert "- n: Input should be a valid integer" in reply.error
    answer = reply.parts[-1]
    assert isinstance(answer, TextPart)
    assert answer.text == '{"n": "not a number"}'  # the refused answer stays, marked so
    assert answer.answer is not None
    assert answer.answer.state == "invalid"
    # Under the budget, the retries go on as before, each request counted against it.
    transport = ScriptedTransport(lambda _request: ScriptedReply(text='{"n": "x"}', usage=PRICED))
    session = ChatSession(transport, options=SessionOptions(max_cost=PRICE * Decimal("2.5"), output_retries=4))
    reply = await session.send("a number", output_type=Counted)
    assert len(transport.requests) == 3
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.usage.cost == 3 * PRICE


def earlier() -> list[Message]:
    """An earlier turn long enough that leaving it out makes a request shorter."""
    return [Message.user("earlier " * 2_000), Message(Role.ASSISTANT, [TextPart("ok")])]


async def test_a_request_refused_as_too_long_costs_nothing_and_the_retry_keeps_to_the_budget() -> None:
    too_long = ContextTooLongError("prompt is too long: 210000 tokens > 200000 maximum", tokens=210_000, limit=200_000)
    refused = ScriptedReply(status=None, error=too_long, error_after=0)  # refused before it began: no usage
    transport = ScriptedTransport([refused, ScriptedReply(text="Fine.", usage=PRICED)])
    session = ChatSession(transport, messages=earlier(), options=SessionOptions(max_cost=PRICE / 2))
    reply = await session.send("now")
    assert len(transport.requests) == 2  # the retry goes: the refusal spent nothing
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.usage.requests == 1
    assert reply.usage.cost == PRICE  # known: the refused request reported no usage and is not counted
    # A refusal that did report a priced usage counts, and a retry past the budget is not sent.
    billed = ScriptedReply(
        status=None, usage=PRICED, error=too_long, error_after=2
    )  # started, then usage, then refused
    transport = ScriptedTransport([billed, ScriptedReply(text="Fine.", usage=PRICED)])
    session = ChatSession(
        transport,
        messages=earlier(),
        options=SessionOptions(max_cost=PRICE / 2),
    )
    reply = await session.send("now")
    assert len(transport.requests) == 1
    assert reply.status is MessageStatus.LIMIT_REACHED
    assert reply.usage.cost == PRICE
    assert reply.error == (
        f"Paused at the budget of this turn: it spent {format_usd(PRICE)} of {format_usd(PRICE / 2)} (max_cost); "
        "the request the model refused as too long was not sent again."
    )


def test_max_cost_is_a_positive_amount_kept_as_a_decimal() -> None:
    assert SessionOptions(max_cost=0.1).max_cost == Decimal("0.1")  # the float's shortest text, not its binary
    assert SessionOptions(max_cost=2).max_cost == Decimal(2)
    assert SessionOptions(max_cost=Decimal("0.005")).max_cost == Decimal("0.005")
    assert SessionOptions().max_cost is None
    for bad in (0, -1, math.nan, math.inf, True, "1", Decimal("NaN"), Decimal("-0.5")):
        with pytest.raises(ValueError, match="max_cost must be a positive amount"):
            SessionOptions(max_cost=bad)  # type: ignore[arg-type]


async def test_the_session_counts_what_earlier_branches_spent() -> None:
    """A regenerate or an edit replaces messages on the active path, not the money their requests cost."""
    session = ChatSession(ScriptedTransport(lambda _request: ScriptedReply(text="Hi.", usage=PRICED)))
    await session.send("hello")
    await session.regenerate()
    await session.edit(session.messages[0].id, "hello again")
    assert [m.text for m in session.messages] == ["hello again", "Hi."]
    assert session.usage.requests == 3
    assert session.usage.cost == 3 * PRICE
    session.switch_branch(session.messages[0].id, 0)  # back to the first branch: nothing counted twice
    assert session.usage.cost == 3 * PRICE
