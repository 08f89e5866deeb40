"""A turn's cost and budget through the widget: the front end is sent each reply's cost and the conversation's
(decimal text, the footer's numbers), the budget's pause as the reply's status and error (the banner's text), and
its Continue runs on with a fresh budget (the session's side: tests/session/test_cost.py)."""

from __future__ import annotations

from decimal import Decimal

import genai_prices

from ai_widgets import MessageStatus, SessionOptions, tool
from ai_widgets.events import UsageUpdate
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire, finished_messages

USAGE = UsageUpdate(input_tokens=2000, output_tokens=50, model="claude-haiku-4-5", provider="anthropic")
PRICE = genai_prices.calc_price(
    genai_prices.Usage(input_tokens=2000, output_tokens=50), "claude-haiku-4-5", provider_id="anthropic"
).total_price


@tool
def lookup(n: int) -> int:
    """Looks something up.

    Args:
        n: What.
    """
    return n


def model(request: ChatRequest) -> ScriptedReply:
    done = len(request.tool_results())
    if done >= 3:
        return ScriptedReply(text="Found it.", usage=USAGE)
    return ScriptedReply(tool_calls=[ScriptedToolCall(name="lookup", arguments={"n": done})], usage=USAGE)


async def test_the_front_end_gets_the_costs_the_budget_pause_and_continue_has_a_fresh_budget(wire: Wire) -> None:
    chat = ChatWidget(transport=ScriptedTransport(model), tools=[lookup], options=SessionOptions(max_cost=PRICE))
    reply = await chat.ask("find it")
    assert reply.status is MessageStatus.LIMIT_REACHED  # the first request reached the budget
    sent = finished_messages(chat)[-1]
    assert sent["status"] == "limit_reached"
    assert sent["usage"]["cost"] == str(PRICE)
    assert Decimal(chat._usage["cost"]) == PRICE
    assert sent["error"].startswith("Paused at the budget of this turn: it spent $0.0022 of $0.0022 (max_cost)")
    assert sent["error"].endswith("Continue runs the call the model asked for next, with a fresh budget.")
    wire.comms[chat.comm.comm_id].handle({"type": "continue"})
    await wait_for(lambda: len(chat.session.messages) == 3 and not chat._busy)
    resumed = chat.session.messages[-1]
    assert resumed.status is MessageStatus.LIMIT_REACHED  # one more request, a budget of its own
    assert resumed.usage.cost == PRICE
    assert Decimal(chat._usage["cost"]) == 2 * PRICE
