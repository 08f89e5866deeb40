"""The marker where the last request stopped sending, in the widget's state: a conversation longer than the context
window shortens the request, the view's ``context_cut`` says how (synced to the front end, in the state a later view
opens with), the static transcript shows the same line before the first message sent, and a request that carries
everything again (or a cleared chat) takes it away."""

from __future__ import annotations

import dataclasses
import json

from ai_widgets import ChatSession, Message, RequestOptions
from ai_widgets.messages import Role, TextPart
from ai_widgets.transports import ScriptedReply, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._transcript import transcript_html, transcript_markdown
from tests.widget.widget_harness import Wire

WINDOW = 2_000


def conversation(n: int) -> list[Message]:
    """``n`` finished messages, questions and answers of about 250 tokens each."""
    return [
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, [TextPart(f"message {i} " + "many words here " * 60)])
        for i in range(n)
    ]


def synced(wire: Wire, comm_id: str) -> list[dict[str, object]]:
    """Every ``context_cut`` the kernel sent the front end (in the opening state and in updates), in order."""
    states = [s.data.get("state", {}) for s in wire.sent if s.comm_id == comm_id]
    return [state["_context_cut"] for state in states if "_context_cut" in state]


async def test_the_cut_of_the_last_request_is_in_the_state_and_the_transcript(wire: Wire) -> None:
    session = ChatSession(
        ScriptedTransport([ScriptedReply(text="ok")]),
        messages=conversation(40),
        request_options=RequestOptions(context_window=WINDOW),
    )
    chat = ChatWidget(session)
    assert chat._context_cut == {}
    await chat.ask("and now?")
    cut = session.context_cut
    assert cut is not None
    assert cut.left_out_messages > 30
    assert cut.window == WINDOW
    assert chat._context_cut == dataclasses.asdict(cut)
    assert synced(wire, chat.comm.comm_id)[-1] == json.loads(json.dumps(dataclasses.asdict(cut)))
    # A view that opens later gets it in its state.
    assert ChatWidget(session).get_state(["_context_cut"])["_context_cut"]["first_sent_id"] == cut.first_sent_id
    # The static transcript: the line, right before the first message sent.
    html = transcript_html(session.messages, context_cut=cut)
    line = f"Earlier messages were not sent to the model: {cut.left_out_messages:,} messages, ~"
    assert line in html
    first_sent = next(m for m in session.messages if m.id == cut.first_sent_id)
    assert html.index(line) < html.index(first_sent.text[:40]) < html.index("and now?")
    assert html.index(session.messages[cut.left_out_messages - 1].text[:40]) < html.index(line)
    assert line[:-1] + "\\~" in transcript_markdown(session.messages, context_cut=cut)  # "~" escaped: not strikethrough
    assert line in chat._transcript()["text/html"]


async def test_the_marker_goes_when_a_request_carries_everything_again_and_on_clear(wire: Wire) -> None:
    session = ChatSession(
        ScriptedTransport([ScriptedReply(text="ok")]),
        messages=conversation(40),
        request_options=RequestOptions(context_window=WINDOW),
    )
    chat = ChatWidget(session)
    await chat.ask("first")
    assert chat._context_cut["left_out_messages"] > 0  # type: ignore[operator]
    session.request_options = RequestOptions(context_window=1_000_000)
    await chat.ask("second")
    assert session.context_cut is None
    assert chat._context_cut == {}
    assert synced(wire, chat.comm.comm_id)[-1] == {}
    session.request_options = RequestOptions(context_window=WINDOW)
    await chat.ask("third")
    assert chat._context_cut != {}
    session.clear()
    assert chat._context_cut == {}
    assert session.context_cut is None


async def test_the_marker_goes_when_the_window_is_no_longer_known(wire: Wire) -> None:
    session = ChatSession(
        ScriptedTransport([ScriptedReply(text="ok")]),
        messages=conversation(40),
        request_options=RequestOptions(context_window=WINDOW),
    )
    chat = ChatWidget(session)
    await chat.ask("first")
    assert chat._context_cut != {}
    session.request_options = RequestOptions()  # the person's number taken away; the scripted model has none
    await chat.ask("second")
    assert chat._context_cut == {}
    assert session.context_cut is None


async def test_nothing_is_cut_without_a_known_window(wire: Wire) -> None:
    session = ChatSession(ScriptedTransport([ScriptedReply(text="ok")]), messages=conversation(400))
    chat = ChatWidget(session)
    await chat.ask("now")
    assert session.context_cut is None
    assert chat._context_cut == {}
    assert len(session.transport.requests[-1].messages) == 402  # type: ignore[union-attr]
