"""Messages serialise to JSON and back without loss; transports that need no network."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ai_widgets import (
    ChatSession,
    Message,
    MessageStatus,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
    ToolOutcome,
    ToolRisk,
    Usage,
    tool,
)
from ai_widgets.events import (
    ResponseCompleted,
    StatusUpdate,
    TextDelta,
    UsageUpdate,
)
from ai_widgets.messages import (
    ErrorKind,
    InvalidTransitionError,
    conversation_markdown,
    dump_messages,
    load_messages,
)
from ai_widgets.transports import (
    ChatRequest,
    EchoTransport,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
    ScriptExhaustedError,
    Transport,
)
from tests.helpers import wait_for


@tool(risk=ToolRisk.DESTRUCTIVE)
def wipe(path: str) -> str:
    """Wipes."""
    return "wiped"


@tool
def boom() -> str:
    """Fails."""
    raise ValueError("kaboom")


def test_text_parts_grow_by_appending() -> None:
    part = TextPart("a")
    for piece in ["b", "c", "d"]:
        part.append(piece)
    assert part.text == "abcd"
    part.append("e")
    assert part.text == "abcde"


def test_tool_call_part_rejects_a_non_terminal_finish() -> None:
    part = ToolCallPart("c", "t", '{"a": 1}')
    assert part.parsed_arguments == {"a": 1}
    with pytest.raises(ValueError, match="not a terminal state"):
        part.finish(ToolCallState.RUNNING, ToolOutcome.success())


async def test_a_whole_conversation_round_trips_with_a_pending_approval() -> None:
    script = [
        ScriptedReply(
            reasoning="The user wants a file gone.",
            text="I'll wipe it. ",
            tool_calls=[ScriptedToolCall(name="boom"), ScriptedToolCall(name="wipe", arguments={"path": "/tmp/é😀"})],
        ),
    ]
    session = ChatSession(ScriptedTransport(script), tools=[wipe, boom])
    task = asyncio.create_task(session.send("wipe /tmp/é😀"))
    await wait_for(lambda: bool(session.pending_approvals))

    text = dump_messages(session.messages)
    restored = load_messages(text)
    assert dump_messages(restored) == text
    user, reply = restored
    assert user.role is Role.USER
    assert user.text == "wipe /tmp/é😀"
    assert reply.status is MessageStatus.IN_PROGRESS
    assert isinstance(reply.parts[0], ReasoningPart)
    assert reply.reasoning == "The user wants a file gone."
    failed, waiting = reply.tool_calls
    assert failed.state is ToolCallState.FAILED
    assert failed.outcome is not None
    assert failed.outcome.error is not None
    assert failed.outcome.error.type == "ValueError"
    assert failed.outcome.error.traceback is not None
    assert waiting.state is ToolCallState.AWAITING_APPROVAL
    assert waiting.approval_reason == "Allow wipe?"
    assert waiting.parsed_arguments == {"path": "/tmp/é😀"}
    assert waiting.started_at == session.messages[1].tool_calls[1].started_at
    session.stop()
    await task


async def test_a_restored_conversation_continues_and_answers_open_calls() -> None:
    first = ChatSession(
        ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="wipe", arguments={"path": "x"})])]),
        tools=[wipe],
    )
    task = asyncio.create_task(first.send("wipe x"))
    await wait_for(lambda: bool(first.pending_approvals))
    saved = dump_messages(first.messages)
    first.stop()
    await task

    transport = ScriptedTransport(["Nothing was wiped."])
    second = ChatSession(transport, tools=[wipe], messages=load_messages(saved))
    reply = await second.send("so?")
    assert reply.text == "Nothing was wiped."
    for part in (p for m in transport.requests[0].messages for p in m.tool_calls):
        assert part.state.terminal
        assert part.outcome is not None


def test_load_refuses_other_json() -> None:
    with pytest.raises(ValueError, match="not an ai_widgets conversation"):
        load_messages(json.dumps({"messages": []}))
    with pytest.raises(ValueError, match="version"):
        load_messages(json.dumps({"format": "ai_widgets.conversation", "version": 99, "messages": []}))
    with pytest.raises(ValueError, match="unknown message part kind"):
        Message.from_dict({"id": "m", "role": "user", "parts": [{"kind": "image"}]})


def test_usage_adds_up() -> None:
    total = Usage(1, 2, 0, 0, 1) + Usage(10, 20, 5, 3, 1)
    assert total == Usage(11, 22, 5, 3, 2)
    assert total.total_tokens == 33


async def test_no_secret_enters_a_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-" + "test-THIS-MUST-NOT-LEAK-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)

    class KeyedTransport(ScriptedTransport):
        def __init__(self) -> None:
            super().__init__(["hello"])
            self.api_key = secret

    session = ChatSession(KeyedTransport())
    await session.send("hi")
    assert secret not in dump_messages(session.messages)


async def collect(transport: Transport, request: ChatRequest) -> list[Any]:
    return [event async for event in transport.stream(request)]


async def test_echo_transport_streams_the_last_user_message() -> None:
    events = await collect(EchoTransport(prefix="You said: "), ChatRequest(messages=[Message.user("hello there")]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "You said: hello there"
    assert isinstance(events[-1], ResponseCompleted)
    assert not any(isinstance(e, StatusUpdate) for e in events)


async def test_scripted_transport_streams_in_slices_with_a_status_first() -> None:
    transport = ScriptedTransport([ScriptedReply(text="x" * 100, usage=UsageUpdate(3, 4))], slice_size=(4, 8))
    events = await collect(transport, ChatRequest(messages=[Message.user("q")]))
    assert isinstance(events[1], StatusUpdate)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == "x" * 100
    assert all(1 <= len(d) <= 8 for d in deltas)
    assert len(deltas) >= 13
    assert UsageUpdate(3, 4) in events


async def test_scripted_transport_says_when_its_script_runs_out() -> None:
    transport = ScriptedTransport(["only one"])
    await collect(transport, ChatRequest(messages=[Message.user("q")]))
    with pytest.raises(ScriptExhaustedError, match="no reply for request 2"):
        await collect(transport, ChatRequest(messages=[Message.user("q")]))
    session = ChatSession(ScriptedTransport(["one"]))
    await session.send("a")
    reply = await session.send("b")
    assert reply.status is MessageStatus.ERROR
    assert reply.error is not None
    assert "ScriptExhaustedError" in reply.error


async def test_scripted_transport_repeat_and_realistic_timing() -> None:
    transport = ScriptedTransport(["a", "b"], repeat=True, delay=0.001, decide_delay=0.05)
    session = ChatSession(transport)
    loop = asyncio.get_running_loop()
    started = loop.time()
    texts = [(await session.send(str(i))).text for i in range(3)]
    assert texts == ["a", "b", "a"]
    assert loop.time() - started >= 0.15


def test_scripted_transport_checks_its_options() -> None:
    with pytest.raises(ValueError, match="slice_size"):
        ScriptedTransport(["x"], slice_size=(0, 3))
    with pytest.raises(ValueError, match="delays"):
        ScriptedTransport(["x"], delay=-1)


def test_a_script_with_a_placeholder_left_in_fails_when_it_is_built() -> None:
    # An example pasted with its "..." still in it: said at once, naming the step, not as a TypeError mid-turn.
    with pytest.raises(TypeError, match=r"step 2 of the script is Ellipsis \(\.\.\.\)"):
        ScriptedTransport(["Hello!", ...])
    with pytest.raises(TypeError, match="step 1 of the script is an int"):
        ScriptedTransport([3])
    with pytest.raises(TypeError, match="the script is a list of steps or a function, not a str"):
        ScriptedTransport("hello")  # type: ignore[arg-type]
    ScriptedTransport(["text", ScriptedReply(text="x"), lambda request: "y"])  # every kind of step is taken


def test_message_user_and_lookup() -> None:
    message = Message(Role.ASSISTANT, [TextPart("hi "), ToolCallPart("c1", "t"), TextPart("there")])
    assert message.text == "hi there"
    assert message.tool_call("c1") is message.parts[1]
    assert message.tool_call("nope") is None
    assert Message.from_dict(message.to_dict()).to_dict() == message.to_dict()


def test_masked_keys_that_providers_echo_are_redacted_too() -> None:
    from ai_widgets._safe import redact

    text = "Incorrect API key provided: sk-proj-****************************6789. You can find your key at ..."
    assert "6789" not in redact(text)
    key = "sk-" + "test-SECRET123456789"  # built, so secret scanners don't flag a test value
    assert key not in redact(f"key {key} bad", key)


# --- a call's record: its markdown, a dump that cannot be read, an older dump, the state table ------------------------


def test_the_transcript_shows_the_arguments_a_call_ran_with_and_that_they_were_edited() -> None:
    part = ToolCallPart("c1", "write_file", '{"path": "a.txt"}', state=ToolCallState.PENDING)
    part.move(ToolCallState.AWAITING_APPROVAL)
    part.edited_arguments = {"path": "b.txt"}
    part.move(ToolCallState.RUNNING)
    part.move(ToolCallState.COMPLETED, ToolOutcome.success("wrote b.txt"))
    line = conversation_markdown([Message(Role.ASSISTANT, [part])]).splitlines()[-1]
    assert line.startswith('> 🔧 `write_file` {"path": "b.txt"} *(edited by the person before it ran; the model ')
    assert 'asked for {"path": "a.txt"})* — *completed*: wrote b.txt' in line
    # A call nobody edited reads as before.
    plain = ToolCallPart("c2", "write_file", '{"path": "a.txt"}', state=ToolCallState.PENDING)
    assert conversation_markdown([Message(Role.ASSISTANT, [plain])]).endswith(
        '`write_file` {"path": "a.txt"} — *pending*'
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"role": "user"}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [5]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", "parts": '
        '[{"kind": "text", "text": 5}]}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", "parts": '
        '[{"kind": "tool_call", "tool_call_id": "c", "tool_name": "t", "state": "completed"}]}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": [{"id": "m", "role": "user", '
        '"usage": {"input_tokens": "many"}}]}',
        '{"format": "ai_widgets.conversation", "version": 2, "messages": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"format": "ai_widgets.conversation", "version": 2, "messages": {}}',
        '{"format": "ai_widgets.conversation", "version": 9, "messages": []}',
        "not json",
    ],
)
def test_a_corrupt_dump_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"conversation|message|field|part|version|must|outcome"):
        load_messages(text)


def test_a_version_1_dump_loads_with_its_provider_data_moved() -> None:
    v1 = {
        "format": "ai_widgets.conversation",
        "version": 1,
        "messages": [
            {
                "id": "m1",
                "role": "assistant",
                "parts": [
                    {"kind": "reasoning", "text": "hmm", "signature": "sig-abc"},
                    {"kind": "reasoning", "text": "", "signature": '[{"id": "rs_1", "encrypted_content": "e"}]'},
                    {"kind": "text", "text": "hello"},
                ],
            }
        ],
    }
    (message,) = load_messages(json.dumps(v1))
    first, second, _ = message.parts
    assert (first.provider, first.provider_data) == ("anthropic", {"signature": "sig-abc"})  # type: ignore[union-attr]
    assert (second.provider, second.provider_data) == (  # type: ignore[union-attr]
        "openai",
        {"items": [{"id": "rs_1", "encrypted_content": "e"}]},
    )
    assert json.loads(dump_messages([message]))["version"] == 2


def test_a_move_the_state_table_does_not_allow_raises() -> None:
    part = ToolCallPart("c", "t", "{}")
    part.move(ToolCallState.PENDING)
    part.move(ToolCallState.AWAITING_APPROVAL)
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.COMPLETED, ToolOutcome.success(1))
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.REJECTED)  # a terminal state needs an outcome
    part.move(ToolCallState.REJECTED, ToolOutcome.failure("no"))
    assert part.finished_at is not None
    assert part.approval_requested_at is not None
    with pytest.raises(InvalidTransitionError):
        part.move(ToolCallState.RUNNING)


def test_a_replys_error_kind_is_saved_and_loaded_and_an_unknown_one_is_left_out() -> None:
    reply = Message(Role.ASSISTANT, status=MessageStatus.LIMIT_REACHED, error="Paused.", error_kind=ErrorKind.MAX_COST)
    (loaded,) = load_messages(dump_messages([reply]))
    assert loaded.error_kind is ErrorKind.MAX_COST
    assert "error_kind" not in Message(Role.ASSISTANT).to_dict()  # files without errors do not change
    newer = {**reply.to_dict(), "error_kind": "a_kind_from_a_newer_version"}
    assert Message.from_dict(newer).error_kind is None
    assert Message.from_dict(newer).error == "Paused."  # the text still says it
