"""A tool's sampling request run on the session's own transport (``session/_sampling.py``), on its own: the model that
answered is the one the stream names, else the one the transport declares, else unknown."""

from __future__ import annotations

from ai_widgets.events import UsageUpdate
from ai_widgets.messages._questions import SamplingMessage, SamplingRequest
from ai_widgets.options import RequestOptions
from ai_widgets.session._sampling import run_sampling
from ai_widgets.transports import ScriptedReply, ScriptedTransport, TransportProfile

ASKED = SamplingRequest(asker="the MCP server 'notes'", messages=(SamplingMessage("user", "Summarise."),))


async def test_the_answer_names_the_model_the_transport_declares_when_the_stream_names_none() -> None:
    transport = ScriptedTransport(["Short."], profile=TransportProfile(model="gpt-5-mini"))
    answer = await run_sampling(transport, RequestOptions(), ASKED)
    assert (answer.text, answer.model) == ("Short.", "gpt-5-mini")


async def test_the_model_the_stream_names_wins_and_a_model_nobody_names_is_unknown() -> None:
    named = ScriptedReply(text="Short.", usage=UsageUpdate(input_tokens=3, output_tokens=1, model="gpt-5-mini-2026"))
    declared = ScriptedTransport([named], profile=TransportProfile(model="gpt-5-mini"))
    assert (await run_sampling(declared, RequestOptions(), ASKED)).model == "gpt-5-mini-2026"
    assert (await run_sampling(ScriptedTransport(["Short."]), RequestOptions(), ASKED)).model == "unknown"
