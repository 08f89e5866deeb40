"""The shortener of a request past the model's context window (``session/_context.py``), on its own: the estimate,
what is cut in which order, the note to the model, and (with hypothesis) that whatever the conversation, the result
fits when it can, the current turn goes whole, every call goes with its result, and the order is kept; then in a
session, what is sent again after the provider refused a request as too long."""

from __future__ import annotations

import base64
import dataclasses
import json
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar, overload

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_widgets import ChatSession, tool
from ai_widgets.events import ResponseCompleted, ResponseStarted, StreamEvent, TextDelta
from ai_widgets.messages import (
    FilePart,
    FinishReason,
    Message,
    MessageStatus,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
)
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS, RequestOptions
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session import _context as context
from ai_widgets.session._context import (
    IMAGE_TOKENS,
    NOTE_TOKENS,
    SHORT_RESULT_CHARS,
    HistoryTokens,
    current_turn_start,
    estimate_tokens,
    fit_messages,
    fit_request,
    message_tokens,
    request_tokens,
    retry_window,
    window_of,
)
from ai_widgets.transports import (
    ChatRequest,
    ContextTooLongError,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
    Transport,
    TransportProfile,
)
from ai_widgets.transports._history import outcome_text


def call(call_id: str, result: str, *, ok: bool = True) -> ToolCallPart:
    part = ToolCallPart(call_id, "lookup", json.dumps({"q": call_id}), state=ToolCallState.PENDING)
    outcome = ToolOutcome.success(result) if ok else ToolOutcome.failure(result)
    part.move(ToolCallState.RUNNING)
    part.finish(ToolCallState.COMPLETED if ok else ToolCallState.FAILED, outcome)
    return part


def turn(n: int, result_chars: int, *, calls: int = 1, stamp: float = 1_780_000_000.0) -> list[Message]:
    """A user message and a reply with ``calls`` calls of ``result_chars``-character results."""
    user = Message(Role.USER, [TextPart(f"question {n}")], created_at=stamp + n * 60)
    parts: list = [TextPart(f"looking {n}")]
    parts += [call(f"c{n}_{i}", f"r{n} " + "x y " * (result_chars // 4)) for i in range(calls)]
    parts.append(TextPart(f"answer {n}"))
    return [user, Message(Role.ASSISTANT, parts, created_at=stamp + n * 60 + 1)]


def conversation(turns: int, result_chars: int) -> list[Message]:
    return [m for n in range(turns) for m in turn(n, result_chars)]


# --- the estimate -----------------------------------------------------------------------------------------------------


def test_the_estimate_is_on_the_high_side_for_prose_json_numbers_base64_and_cjk() -> None:
    prose = "The quick brown fox jumps over the lazy dog. " * 100  # about 10 tokens a sentence for every tokenizer
    assert estimate_tokens(prose) >= 1_000
    numbers = json.dumps([[1.2345, 67.891, -0.5]] * 100)  # a digit can be a token (Gemini)
    assert estimate_tokens(numbers) >= sum(ch.isdigit() for ch in numbers)
    blob = base64.b64encode(bytes(range(256)) * 10).decode()  # base64 tokenizes at under 3 characters a token
    assert estimate_tokens(blob) >= len(blob) / 2
    cjk = "這是一個測試句子用來估計中文的標記數量" * 20  # about a token a character
    assert estimate_tokens(cjk) >= len(cjk)
    assert estimate_tokens("") == 0


def test_images_and_files_count_a_fixed_cost() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 30).decode()
    message = Message(Role.USER, [FilePart("image/png", data=png), FilePart("application/pdf", data=png)])
    assert message_tokens(message) >= IMAGE_TOKENS + 6_000
    text = FilePart("text/csv", data=base64.b64encode(b"a,b\n1,2\n" * 100).decode())
    assert message_tokens(Message(Role.USER, [text])) < IMAGE_TOKENS  # a text file counts its text


def test_a_tool_result_counts_as_much_of_it_as_the_transports_send() -> None:
    result = "word " * 200_000  # 1 MB; the transports send at most max_tool_result_chars (100,000) of it
    part = call("c", result)
    message = Message(Role.ASSISTANT, [part])
    sent = outcome_text(part, DEFAULT_MAX_TOOL_RESULT_CHARS)  # what a transport sends of it, cut with a note
    assert len(sent) < 100_200
    framing = message_tokens(Message(Role.ASSISTANT, [call("c", "")]))
    assert message_tokens(message) == framing + estimate_tokens(sent)
    assert message_tokens(message, max_result_chars=None) == framing + estimate_tokens(result)  # no limit: whole
    assert message_tokens(message, max_result_chars=500) == framing + estimate_tokens(outcome_text(part, 500))
    short = call("s", "a short result")
    assert message_tokens(Message(Role.ASSISTANT, [short])) == message_tokens(
        Message(Role.ASSISTANT, [short]), max_result_chars=None
    )


# --- what is cut, in which order --------------------------------------------------------------------------------------


def test_a_conversation_that_fits_is_sent_as_it_is() -> None:
    messages = conversation(3, 100)
    fitted = fit_messages(messages, current_start=4, budget=100_000)
    assert fitted.messages == messages
    assert not fitted.cut
    assert fitted.fits


def test_the_oldest_tool_results_are_shortened_first_and_nothing_is_left_out_when_that_is_enough() -> None:
    messages = [*conversation(6, 5000), Message.user("now")]
    whole = sum(message_tokens(m) for m in messages)
    fitted = fit_messages(messages, current_start=12, budget=whole - 1_500)
    assert fitted.fits
    assert fitted.left_out == 0
    assert fitted.shortened >= 1
    sent_results = [part.result_for_model() for m in fitted.messages for part in m.tool_calls]
    originals = [part.result_for_model() for m in messages for part in m.tool_calls]
    shortened = [i for i, (a, b) in enumerate(zip(sent_results, originals, strict=True)) if a != b]
    assert shortened == list(range(len(shortened)))  # the oldest ones
    assert "left out of this request to fit the model's context window" in sent_results[0]
    assert sent_results[0].startswith(originals[0][:SHORT_RESULT_CHARS])
    assert sent_results[0].endswith(originals[0][-SHORT_RESULT_CHARS:])
    # The history itself is untouched: the request carries copies.
    assert [p.result_for_model() for m in messages for p in m.tool_calls] == originals


def test_then_the_oldest_turns_are_left_out_and_the_model_is_told_what_and_when() -> None:
    messages = [*conversation(40, 5000), Message.user("the question now")]
    fitted = fit_messages(messages, current_start=80, budget=6_000)
    assert fitted.fits
    assert fitted.tokens <= 6_000
    assert fitted.left_out > 0
    assert fitted.left_out % 2 == 0
    assert fitted.left_out_turns == fitted.left_out // 2
    first = fitted.messages[0]
    assert first.role is Role.USER
    assert first.id == messages[fitted.left_out].id
    note = first.parts[0].text
    assert f"leaves out its {fitted.left_out:,} oldest messages ({fitted.left_out_turns:,} turns" in note
    assert "from 2026-" in note
    assert "UTC" in note
    assert fitted.messages[-1] is messages[-1]  # the current turn, whole and as it is
    assert fitted.left_out_tokens > 0
    # The count of results shortened is of those it carries (the ones of the turns left out are not sent at all).
    carried = [
        p for m in fitted.messages for p in m.tool_calls if "to fit the model's context window" in p.result_for_model()
    ]
    assert fitted.shortened == len(carried)


def test_the_current_turn_is_never_cut_even_when_it_alone_is_too_large() -> None:
    messages = conversation(3, 1_000) + turn(9, 40_000, calls=2)
    start = 6
    fitted = fit_messages(messages, current_start=start, budget=2_000)
    assert not fitted.fits
    assert fitted.messages[-2:][1] is messages[-1]
    assert fitted.messages[-1].tool_calls[0].result_for_model() == messages[-1].tool_calls[0].result_for_model()
    assert fitted.left_out == start


def test_the_note_goes_in_a_user_message_never_in_the_models() -> None:
    messages = [Message(Role.ASSISTANT, [call("a", "z " * 5_000)]), *conversation(2, 10), Message.user("now")]
    fitted = fit_messages(messages, current_start=5, budget=message_tokens(messages[0]) // 2 + 600)
    assert fitted.shortened == 1
    assert fitted.left_out == 0
    assert not any("Note from the chat application" in p.text for p in fitted.messages[0].parts if hasattr(p, "text"))
    assert fitted.messages[1].parts[0].text.startswith("[Note from the chat application")


def test_current_turn_start_is_the_user_message_before_the_reply() -> None:
    messages = conversation(2, 10)
    reply = Message(Role.ASSISTANT, [], status=Message.user("x").status)
    history = [*messages, Message.user("now"), reply]
    assert current_turn_start(history, reply) == 4
    assert current_turn_start(messages, None) == 2  # no reply: the last user message
    assert current_turn_start([reply], reply) == 0


class Reads(Sequence[Message]):
    """A history that notes which of its messages were read."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            raise AssertionError("sliced")
        self.read.add(index % len(self.messages))
        return self.messages[index]


def test_the_current_turn_is_found_from_the_end_without_reading_the_history_before_it() -> None:
    reply = Message(Role.ASSISTANT, [TextPart("thinking")], status=MessageStatus.IN_PROGRESS)
    history = Reads([*conversation(2_000, 10), Message.user("now"), reply])
    assert current_turn_start(history, reply) == 4_000
    assert history.read <= {4_000, 4_001}


# --- estimates kept between requests --------------------------------------------------------------------------------


def fresh(messages: list[Message], limit: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS) -> int:
    return sum(message_tokens(m, max_result_chars=limit) for m in messages)


def counting(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """Notes every message the module estimates."""
    estimated: list[Message] = []
    original = context.message_tokens

    def spy(message: Message, **kwargs: Any) -> int:
        estimated.append(message)
        return original(message, **kwargs)

    monkeypatch.setattr(context, "message_tokens", spy)
    return estimated


def test_a_finished_message_is_estimated_once_however_many_requests_carry_it(monkeypatch: pytest.MonkeyPatch) -> None:
    estimated = counting(monkeypatch)
    estimates = HistoryTokens()
    history = conversation(50, 300)
    reply = Message(Role.ASSISTANT, [TextPart("so")], status=MessageStatus.IN_PROGRESS)
    messages = [*history, Message.user("now"), reply]
    assert fit_messages(messages, current_start=100, budget=10**9, estimates=estimates).tokens == fresh(messages)
    assert len(estimated) == len(messages)
    estimated.clear()
    reply.parts.append(TextPart("more"))
    assert fit_messages(messages, current_start=100, budget=10**9, estimates=estimates).tokens == fresh(messages)
    assert estimated == [reply]  # the reply in progress only: everything before it is finished
    estimated.clear()
    reply.status = MessageStatus.COMPLETED
    messages += [Message.user("next"), Message(Role.ASSISTANT, [], status=MessageStatus.IN_PROGRESS)]
    assert fit_messages(messages, current_start=102, budget=10**9, estimates=estimates).tokens == fresh(messages)
    assert estimated == messages[-3:]  # the reply now finished, once more; the new turn
    estimated.clear()
    # Cut, the kept estimates give each message's share: the same cut as estimated afresh.
    again = fit_messages(messages, current_start=102, budget=5_000, estimates=estimates)
    afresh = fit_messages(messages, current_start=102, budget=5_000)
    assert again.cut
    assert dataclasses.replace(again, messages=[]) == dataclasses.replace(afresh, messages=[])
    assert [(m.id, m.text) for m in again.messages] == [(m.id, m.text) for m in afresh.messages]


def test_a_kept_estimate_never_outlives_a_change_of_its_message() -> None:
    estimates = HistoryTokens()

    def check(messages: list[Message], limit: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS) -> None:
        fitted = fit_messages(
            messages, current_start=len(messages), budget=10**9, estimates=estimates, max_result_chars=limit
        )
        assert fitted.tokens == fresh(messages, limit)

    history = conversation(6, 300)
    waiting = ToolCallPart("w", "lookup", "{}", state=ToolCallState.PENDING)  # a call nobody ran (execute_tools off)
    history[3].parts.append(waiting)
    check(history)
    # A result recorded on a call of the reply in progress.
    open_call = ToolCallPart("c", "lookup", "{}", state=ToolCallState.PENDING)
    reply = Message(Role.ASSISTANT, [open_call], status=MessageStatus.IN_PROGRESS)
    messages = [*history, Message.user("now"), reply]
    check(messages)
    open_call.move(ToolCallState.RUNNING)
    check(messages)
    open_call.finish(ToolCallState.COMPLETED, ToolOutcome.success("word " * 3_000))
    check(messages)
    reply.parts.append(TextPart("long " * 500))
    check(messages)
    reply.status = MessageStatus.COMPLETED
    check(messages)
    # The call nobody ran, answered when the next turn starts.
    waiting.finish(ToolCallState.SKIPPED, ToolOutcome.failure("Not run: the conversation went on without it." * 50))
    check(messages)
    # An edit: the conversation from a user message on is replaced by new messages.
    edited = [*messages[:4], Message.user("other " * 400), Message(Role.ASSISTANT, [TextPart("else")])]
    check(edited)
    check(messages)  # and back to the branch it replaced
    check(messages[:5] + messages[6:])  # a message left out of the middle
    # Another limit on what is told of a result.
    check(messages, limit=100)
    check(messages, limit=None)
    check(messages)


# --- a request ----------------------------------------------------------------------------------------------------


#: What a transport declares of a model with a 9,000-token window that it asks for at most 1,000 output tokens.
KNOWN = TransportProfile(context_window=9_000, max_output_tokens=1_000)


def test_the_window_is_the_persons_number_else_the_transports_else_none() -> None:
    request = ChatRequest(messages=[])
    assert window_of(request, KNOWN) == 9_000
    assert window_of(ChatRequest(messages=[], options=RequestOptions(context_window=500)), KNOWN) == 500
    assert window_of(request, TransportProfile()) is None


@pytest.mark.parametrize("bad", [0, -1, 2.5, "1000", True])
def test_a_context_window_that_is_not_a_whole_number_of_tokens_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="context_window"):
        RequestOptions(context_window=bad)  # type: ignore[arg-type]


def test_a_request_leaves_room_for_the_tools_the_system_prompt_and_the_output() -> None:
    messages = [*conversation(30, 2000), Message.user("now")]
    options = RequestOptions(system_prompt="Be brief. " * 200, max_tokens=2_000)
    request = ChatRequest(messages=messages, options=options)
    fitted, cut = fit_request(request, window=10_000, profile=KNOWN, current_start=60)
    assert cut is not None
    assert cut.window == 10_000
    assert cut.sent_tokens <= 10_000
    body = sum(message_tokens(m) for m in fitted.messages)
    assert body + 2_000 + estimate_tokens(options.system_prompt or "") <= 10_000
    assert cut.first_sent_id == fitted.messages[0].id
    assert cut.left_out_messages == len(messages) - len(fitted.messages)


def test_the_retry_window_scales_by_what_the_provider_counted_or_halves() -> None:
    assert retry_window(ContextTooLongError("x", tokens=25_000, limit=20_000), 18_000) == int(18_000 * 0.8 * 0.9)
    assert retry_window(ContextTooLongError("x"), 18_000) == 9_000


# --- properties -------------------------------------------------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[Message], int]:
    """Turns of a user message and 0-2 replies with 0-3 calls each (results of any size, some failed), and the
    current turn's start."""
    messages: list[Message] = []
    for n in range(draw(st.integers(1, 12))):
        messages.append(Message.user("q" * draw(st.integers(0, 300))))
        for r in range(draw(st.integers(0, 2))):
            parts: list = [TextPart("a" * draw(st.integers(0, 200)))]
            for i in range(draw(st.integers(0, 3))):
                size = draw(st.sampled_from([0, 10, 500, 3_000, 20_000]))
                parts.append(call(f"c{n}_{r}_{i}", "w " * (size // 2), ok=draw(st.booleans())))
            messages.append(Message(Role.ASSISTANT, parts))
    users = [i for i, m in enumerate(messages) if m.role is Role.USER]
    return messages, users[-1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(50, 60_000))
def test_whatever_the_history_the_result_fits_when_it_can_and_stays_consistent(
    drawn: tuple[list[Message], int], budget: int
) -> None:
    messages, start = drawn
    current = messages[start:]
    fitted = fit_messages(messages, current_start=start, budget=budget)
    sent = fitted.messages
    # The current turn is whole, as it is (the note may go in front of its user message only).
    assert sent[-len(current) :][1:] == current[1:]
    assert [p for p in sent[-len(current)].parts if not _is_note(p)] == current[0].parts
    # Order kept, ids unique: what is sent is a run of the history's messages up to its end.
    ids = [m.id for m in messages]
    assert [m.id for m in sent] == ids[len(ids) - len(sent) :]
    # Every call goes with its result, and only calls of the history are sent.
    calls = {p.tool_call_id for m in messages for p in m.tool_calls}
    for message in sent:
        for part in message.tool_calls:
            assert part.tool_call_id in calls
            assert part.outcome is not None
            assert part.state.terminal
    # The first message sent is the user's whenever anything was left out.
    if fitted.left_out:
        assert sent[0].role is Role.USER
    # It fits whenever the current turn (with the note) does.
    current_cost = sum(message_tokens(m) for m in current) + NOTE_TOKENS
    if current_cost <= budget:
        assert fitted.fits
        assert fitted.tokens <= budget
    assert fitted.tokens == sum(message_tokens(m) for m in sent)
    originals = {p.tool_call_id: p.result_for_model() for m in messages for p in m.tool_calls}
    changed = [p for m in sent for p in m.tool_calls if p.result_for_model() != originals[p.tool_call_id]]
    assert fitted.shortened == len(changed)
    if fitted.cut:
        assert any(_is_note(p) for m in sent for p in m.parts) or not any(m.role is Role.USER for m in sent)


def _is_note(part: object) -> bool:
    return isinstance(part, TextPart) and part.text.startswith("[Note from the chat application")


# --- in a session: the provider's own "too long" ----------------------------------------------------------------------

#: An OpenAI Chat refusal with sizes: 131,072 tokens counted against its limit of 128,000.
TOO_LONG = "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens."


class RefusingOnce:
    """A scripted model that refuses its first request as too long (the provider's error, with its sizes), then
    answers; it keeps every request it got."""

    def __init__(self, window: int | None = None) -> None:
        self.window = window
        self.requests: list[ChatRequest] = []
        #: Each request's estimated tokens as it was sent: its messages', and all of it (the reply fills later).
        self.sizes: list[tuple[int, int]] = []

    def __call__(self, request: ChatRequest) -> ScriptedReply:
        self.requests.append(request)
        messages = sum(message_tokens(m) for m in request.messages)
        self.sizes.append((messages, request_tokens(request, TransportProfile(), self.window or 0)))
        if len(self.requests) == 1:
            error = ContextTooLongError(TOO_LONG, tokens=131_072, limit=128_000)
            return ScriptedReply(status=None, error=error, error_after=0)
        return ScriptedReply(text="fine")


@pytest.mark.parametrize("window", [8_000, 128_000, None], ids=["small-window", "128k-window", "unknown-window"])
async def test_a_too_long_request_is_sent_again_with_its_messages_cut_by_what_the_provider_counted(
    window: int | None,
) -> None:
    history = conversation(12, 2_000 if window == 8_000 else 40_000)
    model = RefusingOnce(window)
    options = RequestOptions(context_window=window)
    session = ChatSession(ScriptedTransport(model), messages=history, request_options=options)
    reply = await session.send("the question now")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    again = model.requests[1]
    (refused_messages, refused_tokens), (again_messages, again_tokens) = model.sizes
    assert again_messages < refused_messages  # strictly smaller: never the same request again
    # The request is scaled by what the provider counted against its limit (a tenth to spare), and the cut comes out
    # of the messages: the tools, the system prompt and the room for the output stay what they were.
    overhead = refused_tokens - refused_messages
    assert again_tokens - again_messages == overhead
    assert again_tokens <= int(refused_tokens * 128_000 / 131_072 * 0.9)
    assert again.messages[-2].parts[-1].text == "the question now"  # the current turn, whole (the reply last)
    cut = session.context_cut
    assert cut is not None
    assert cut.sent_tokens == again_tokens


async def test_a_current_turn_too_long_by_itself_is_not_sent_again_and_the_turn_ends_with_the_error() -> None:
    model = RefusingOnce()
    history = conversation(3, 200)
    session = ChatSession(
        ScriptedTransport(model), messages=history, request_options=RequestOptions(context_window=4_000)
    )
    reply = await session.send("look at this: " + "word " * 8_000)  # the current turn alone is past the window
    assert len(model.requests) == 1  # nothing else could be cut: the same request is not sent again
    assert reply.status is MessageStatus.ERROR
    error = reply.error or ""
    assert error.startswith("The conversation is too long for the model's context window: the request was about ")
    assert "(the provider counted 131,072 tokens, its limit is 128,000)" in error
    assert "the current turn is always sent whole, and it is too long by itself" in error
    assert "even shortened" not in error
    # With no earlier messages at all, the same: nothing to leave out.
    model = RefusingOnce()
    session = ChatSession(ScriptedTransport(model))
    reply = await session.send("hello")
    assert len(model.requests) == 1
    assert reply.status is MessageStatus.ERROR
    assert session.messages[0].text == "hello"  # nothing lost; the session goes on


# --- in a session: a large tool result in the current turn ---------------------------------------------------------


async def test_a_large_tool_result_in_the_current_turn_leaves_nothing_out_when_what_is_sent_fits() -> None:
    """A 1 MB result is sent cut to ``max_tool_result_chars`` (100,000 characters): with 20 earlier messages the
    request is about 112,000 characters, which fits a 128,000-token window with room to spare."""

    @tool
    def dump() -> str:
        """Returns a large text."""
        return "word " * 200_000

    history = conversation(10, 200)
    seen: list[ChatRequest] = []

    def model(request: ChatRequest) -> ScriptedReply:
        seen.append(request)
        if len(seen) == 1:
            return ScriptedReply(tool_calls=[ScriptedToolCall(name="dump", arguments={})])
        return ScriptedReply(text="It is long.")

    options = RequestOptions(context_window=128_000)
    session = ChatSession(ScriptedTransport(model), tools=[dump], messages=history, request_options=options)
    reply = await session.send("dump it")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    follow_up = seen[1]
    assert [m.id for m in follow_up.messages[:20]] == [m.id for m in history]  # nothing left out
    assert not any(isinstance(p, TextPart) and _is_note(p) for m in follow_up.messages for p in m.parts)
    assert session.context_cut is None
    # A smaller window cuts, and the marker's figures are those of what is sent.
    seen.clear()
    session = ChatSession(
        ScriptedTransport(model),
        tools=[dump],
        messages=history,
        request_options=RequestOptions(context_window=28_000),
    )
    await session.send("dump it")
    cut = session.context_cut
    assert cut is not None
    assert cut.sent_tokens <= 28_000
    whole = sum(message_tokens(m) for m in history)
    assert cut.left_out_tokens <= whole  # what was left out is of the earlier messages, not of the result's cut


# --- what the transport declares --------------------------------------------------------------------------------------


class OwnTransport:
    """A transport of one's own with only ``stream``: it declares no profile. Its ``context_window`` attribute is
    nobody's business but its own: the session reads what a transport declares, and probes for nothing else."""

    context_window = 500

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        yield ResponseStarted()
        yield TextDelta("fine")
        yield ResponseCompleted(FinishReason.STOP)


class OwnSubclass(Transport):
    """A transport of one's own that subclasses the protocol and leaves its profile as the protocol gives it."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        yield ResponseStarted()
        yield TextDelta("fine")
        yield ResponseCompleted(FinishReason.STOP)


@pytest.mark.parametrize("make", [OwnTransport, OwnSubclass], ids=["stream-only", "subclass"])
async def test_a_transport_that_declares_no_profile_knows_no_window_so_everything_is_sent(make: type) -> None:
    transport = make()
    history = conversation(10, 2_000)
    session = ChatSession(transport, messages=history)
    reply = await session.send("now")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert [m.id for m in transport.requests[0].messages[:20]] == [m.id for m in history]
    assert session.context_cut is None
    # Nor are files refused ahead of the provider: no limits are known.
    image = FilePart(media_type="image/png", data=base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"x" * 64).decode())
    assert session.check_attachments([image]) == [image]


async def test_a_declared_window_and_output_limit_shorten_what_is_sent() -> None:
    history = conversation(30, 2_000)
    transport = ScriptedTransport(["fine"], profile=TransportProfile(context_window=8_000, max_output_tokens=1_000))
    session = ChatSession(transport, messages=history)
    await session.send("now")
    cut = session.context_cut
    assert cut is not None
    assert cut.window == 8_000
    assert cut.sent_tokens <= 8_000  # the room for the output counted in
    assert len(transport.requests[0].messages) < len(history) + 1


class Counting(ScriptedTransport):
    """A scripted model that counts how often its profile is read."""

    reads = 0

    @property
    def profile(self) -> TransportProfile:
        self.reads += 1
        return TransportProfile(context_window=100_000)


async def test_the_profile_is_read_once_per_model_request() -> None:
    @tool
    def lookup(q: str) -> str:
        """Looks something up."""
        return q.upper()

    transport = Counting([ScriptedReply(tool_calls=[ScriptedToolCall(name="lookup", arguments={"q": "a"})]), "done"])
    session = ChatSession(transport, tools=[lookup])
    reply = await session.send("look it up")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert len(transport.requests) == 2
    # Once per request, and once when the message was checked before the turn. Before Python 3.12, the protocol's
    # isinstance check that tells a transport with a profile from one with only ``stream`` reads it too.
    per_read = 1 if sys.version_info >= (3, 12) else 2
    assert transport.reads == (2 + 1) * per_read


async def test_a_profile_that_is_not_a_transport_profile_is_refused_before_anything_is_sent() -> None:
    class Misdeclared(OwnTransport):
        profile: ClassVar[object] = {"context_window": 8_000}

    transport = Misdeclared()
    session = ChatSession(transport)
    with pytest.raises(TypeError, match=r"Misdeclared\.profile must be a TransportProfile, not dict"):
        await session.send("now")
    assert session.messages == []
    assert transport.requests == []


# --- in a session: estimates kept from turn to turn ------------------------------------------------------------------


async def test_a_session_estimates_each_finished_message_once_however_long_the_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @tool
    def lookup(q: str) -> str:
        """Looks it up.

        Args:
            q: What to look up.
        """
        return f"found {q} " * 50

    def model(request: ChatRequest) -> ScriptedReply:
        if request.tool_results():
            return ScriptedReply(text="Here it is.")
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="lookup", arguments={"q": request.last_user_text})])

    estimated = counting(monkeypatch)
    options = RequestOptions(context_window=1_000_000)
    session = ChatSession(ScriptedTransport(model), tools=[lookup], request_options=options)
    turns = 30
    for n in range(turns):
        reply = await session.send(f"question {n}")
        assert reply.status is MessageStatus.COMPLETED, reply.error
    # Per turn: the last turn's reply, now finished, and the user message once; the reply in progress once a request.
    assert len(estimated) <= 4 * turns
    assert len(session.messages) == 2 * turns
