"""The AG-UI client's pieces without a server: reading events (``parse_event``), mapping a run's events
(``RunMapper``), state patches (``apply_patch``), and the run input a request becomes (``AGUITransport.run_input``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from ag_ui.core import (
    ReasoningMessageContentEvent,
    RunFinishedEvent,
    TextMessageContentEvent,
)

from ai_widgets import Message, RequestOptions, ToolCallPart, ToolCallState, ToolChoice, ToolDefinition
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    TextDelta,
    ToolApprovalRequested,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, Role, TextPart
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports import AGUITransport, ChatRequest, ProviderError, TransportProfile
from ai_widgets.transports._ag_ui_client import AGUIClient, parse_event
from ai_widgets.transports._ag_ui_stream import PatchError, RunMapper, apply_patch


def event(**data: Any) -> Any:
    parsed = parse_event(json.dumps(data).encode())
    assert parsed is not None
    return parsed


# --- reading events ---------------------------------------------------------------------------------------------


def test_an_event_is_read_as_the_protocols_model() -> None:
    parsed = event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="Hi")
    assert isinstance(parsed, TextMessageContentEvent)
    assert parsed.delta == "Hi"


def test_an_event_of_a_type_this_version_does_not_know_is_skipped() -> None:
    assert parse_event(b'{"type": "SOMETHING_NEW", "x": 1}') is None


def test_the_thinking_events_of_servers_before_1_0_are_reasoning() -> None:
    parsed = event(type="THINKING_TEXT_MESSAGE_CONTENT", delta="hmm")
    assert isinstance(parsed, ReasoningMessageContentEvent)
    assert parsed.delta == "hmm"
    assert parse_event(b'{"type": "THINKING_START"}') is None


def test_an_unknown_outcome_is_read_as_success() -> None:
    parsed = event(type="RUN_FINISHED", threadId="t", runId="r", outcome={"type": "someday"})
    assert isinstance(parsed, RunFinishedEvent)
    assert parsed.outcome is None


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        (b'{"type": "TOOL_CALL_ARGS", "toolCallId": "c"}', "malformed TOOL_CALL_ARGS event: TOOL_CALL_ARGS.delta"),
        (b'{"type": "TEXT_MESSAGE_CONTENT", "messageId": 3, "delta": "x"}', "malformed TEXT_MESSAGE_CONTENT"),
        (b"{not json", "not JSON"),
        (b'["TEXT_MESSAGE_CONTENT"]', "not an object with a type"),
        (b'{"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": 7}', "its delta must be text"),
    ],
)
def test_a_malformed_event_is_a_clear_error(payload: bytes, words: str) -> None:
    with pytest.raises(ProviderError, match="The AG-UI agent") as raised:
        parse_event(payload)
    assert words in str(raised.value)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"url": "ftp://x"}, "must start with http"),
        ({"url": "http://x", "headers": {"a": 1}}, "headers must map text to text"),
        ({"url": "http://x", "timeout": 0}, "positive number"),
        ({"url": "http://x", "timeout": True}, "positive number"),
    ],
)
def test_the_client_refuses_bad_settings(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        AGUIClient(**kwargs)


def test_the_error_mapper_keeps_the_headers_out() -> None:
    client = AGUIClient("http://127.0.0.1:9/a", headers={"Authorization": "Bearer sekrit-token-value"})
    error = client.error(ProviderError("the server said Bearer sekrit-token-value"), responded=True)
    assert "sekrit-token-value" not in str(error)
    error = client.error(ConnectionResetError("reset by peer"), responded=True)
    assert "broke off mid-run: reset by peer" in str(error)


# --- mapping a run ------------------------------------------------------------------------------------------------


def mapper(offered: frozenset[str] = frozenset(), earlier: list[ToolCallPart] | None = None) -> RunMapper:
    return RunMapper(label="The agent", offered=set(offered), earlier=earlier or [])


def feed(run: RunMapper, *events: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for data in events:
        out += run.feed(event(**data))
    return out


def finished(**extra: Any) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", **extra}


def test_text_reasoning_and_steps_map_in_order() -> None:
    out = feed(
        mapper(),
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "Planning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "z", "delta": "think"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hi"},
        {"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u", "delta": "echo of the user"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "!"},
        {"type": "STEP_FINISHED", "stepName": "Planning"},
        finished(),
    )
    assert out == [
        ResponseStarted(),
        StatusUpdate("Planning…"),
        ReasoningDelta("think"),
        TextDelta("Hi"),
        TextDelta("!"),
        StatusUpdate(""),
        ResponseCompleted(FinishReason.STOP),
    ]


def test_a_call_to_an_offered_tool_is_ours_and_any_other_the_agents() -> None:
    out = feed(
        mapper({"add"}),
        {"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "add"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": '{"a":1}'},
        {"type": "TOOL_CALL_END", "toolCallId": "a"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "s", "toolCallName": "search", "delta": '{"q":'},
        {"type": "TOOL_CALL_CHUNK", "delta": '"x"}'},
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "s", "content": '{"hits": 2}'},
        finished(),
    )
    assert out[1] == ToolCallStarted("a", "add", provider_executed=False, provider="ag-ui")
    assert out[2:4] == [ToolCallDelta("a", '{"a":1}'), ToolCallArgumentsDone("a")]
    assert out[4] == ToolCallStarted(
        "s", "search", provider_executed=True, provider="ag-ui", provider_data={"remote": True}
    )
    assert out[5:7] == [ToolCallDelta("s", '{"q":'), ToolCallDelta("s", '"x"}')]
    assert out[7] == ProviderToolResult("s", ToolOutcome.success({"hits": 2}))
    assert out[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)  # our call waits to run here


@pytest.mark.parametrize(
    ("events", "words"),
    [
        ([{"type": "TOOL_CALL_ARGS", "toolCallId": "x", "delta": "{}"}], "never started"),
        ([{"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "x", "content": "?"}], "never started"),
        ([{"type": "TOOL_CALL_CHUNK", "toolCallId": "x", "delta": "{}"}], "without a name"),
        ([{"type": "RUN_ERROR", "message": "quota", "code": "429"}], "reported an error and stopped the run: quota"),
        ([finished(outcome={"type": "cancelled"})], "cancelled the run"),
        (
            [
                finished(
                    outcome={"type": "interrupt", "interrupts": [{"id": "i", "reason": "input", "message": "Age?"}]}
                )
            ],
            "cannot answer (input: Age?)",
        ),
        ([{"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/nope"}]}], "does not apply"),
    ],
)
def test_what_a_run_cannot_mean_is_a_clear_error(events: list[dict[str, Any]], words: str) -> None:
    with pytest.raises(ProviderError, match="The agent") as raised:
        feed(mapper(), *events)
    assert words in str(raised.value)


def test_an_interrupt_for_the_agents_call_asks_the_person_with_its_edit_schema() -> None:
    schema = {"type": "object", "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}}}
    interrupt = {
        "id": "int-c",
        "reason": "tool_call",
        "message": "Approve?",
        "toolCallId": "c",
        "responseSchema": schema,
    }
    out = feed(
        mapper(),
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "pay"},
        finished(
            outcome={"type": "interrupt", "interrupts": [interrupt]},
            usage=[{"inputTokens": 10, "outputTokens": 3, "model": "m1", "provider": "p"}],
        ),
    )
    assert out[-3] == UsageUpdate(input_tokens=10, output_tokens=3, model="m1", provider="p")
    approval = out[-2]
    assert isinstance(approval, ToolApprovalRequested)
    assert (approval.tool_call_id, approval.reason, approval.arguments_schema) == ("c", "Approve?", {"type": "object"})
    assert approval.provider_data == {"interrupt": interrupt}
    assert out[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)


def test_a_result_for_an_earlier_call_completes_it_only_while_it_runs_remotely() -> None:
    running = ToolCallPart("c", "pay", "{}", state=ToolCallState.RUNNING, provider_executed=True)
    declined = ToolCallPart("d", "pay", "{}", state=ToolCallState.AWAITING_APPROVAL, provider_executed=True)
    declined.finish(ToolCallState.REJECTED, ToolOutcome.failure("no"))
    out = feed(
        mapper(earlier=[running, declined]),
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "pay"},  # announced again: nothing new
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "paid"},
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "d", "content": "denied"},
        finished(),
    )
    assert out == [
        ResponseStarted(),
        ProviderToolResult("c", ToolOutcome.success("paid")),
        ResponseCompleted(FinishReason.STOP),
    ]


def ended(call_id: str, name: str, arguments: str, *, remote: bool = False) -> ToolCallPart:
    """A call of an earlier run of the reply, done."""
    part = ToolCallPart(call_id, name, arguments, state=ToolCallState.PENDING, provider_executed=remote)
    part.finish(ToolCallState.COMPLETED, ToolOutcome.success(5))
    return part


def call(call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def test_an_id_an_earlier_run_gave_another_tool_is_a_new_call_with_an_id_of_its_own() -> None:
    out = feed(
        mapper({"add", "mul"}, earlier=[ended("call_0", "add", '{"a": 2, "b": 3}')]),
        *call("call_0", "mul", '{"a": 5, "b": 4}'),
        finished(),
    )
    started = out[1]
    assert isinstance(started, ToolCallStarted)
    new_id = started.tool_call_id
    assert new_id != "call_0"
    assert started == ToolCallStarted(
        new_id, "mul", provider_executed=False, provider="ag-ui", provider_data={"agent_id": "call_0"}
    )
    assert out[2:] == [
        ToolCallDelta(new_id, '{"a": 5, "b": 4}'),
        ToolCallArgumentsDone(new_id),
        ResponseCompleted(FinishReason.TOOL_CALLS),  # the new call waits to run here
    ]


def test_an_earlier_call_sent_again_is_a_replay_only_with_the_same_tool_and_arguments() -> None:
    add = ended("call_0", "add", '{"a": 2, "b": 3}')
    replayed = feed(mapper({"add"}, earlier=[add]), *call("call_0", "add", '{"a":2,"b":3}'), finished())
    assert replayed == [ResponseStarted(), ResponseCompleted(FinishReason.STOP)]
    announced = feed(
        mapper({"add"}, earlier=[add]),
        {"type": "TOOL_CALL_START", "toolCallId": "call_0", "toolCallName": "add"},
        {"type": "TOOL_CALL_END", "toolCallId": "call_0"},
        finished(),
    )
    assert announced == [ResponseStarted(), ResponseCompleted(FinishReason.STOP)]  # named again, without arguments
    out = feed(mapper({"add"}, earlier=[add]), *call("call_0", "add", '{"a": 5, '), finished())
    new_id = out[1].tool_call_id
    assert new_id != "call_0"
    assert out[1:] == [
        ToolCallStarted(new_id, "add", provider_executed=False, provider="ag-ui", provider_data={"agent_id": "call_0"}),
        ToolCallDelta(new_id, '{"a": 5, '),
        ToolCallArgumentsDone(new_id),
        ResponseCompleted(FinishReason.TOOL_CALLS),
    ]


def test_the_pause_and_the_result_of_a_call_with_a_reused_id_reach_that_call() -> None:
    earlier = [ended("call_0", "add", "{}")]
    interrupt = {"id": "int-call_0", "reason": "tool_call", "toolCallId": "call_0"}
    out = feed(
        mapper({"add"}, earlier=earlier),
        {"type": "TOOL_CALL_START", "toolCallId": "call_0", "toolCallName": "pay"},
        finished(outcome={"type": "interrupt", "interrupts": [interrupt]}),
    )
    started, approval = out[1], out[2]
    assert isinstance(started, ToolCallStarted)
    assert isinstance(approval, ToolApprovalRequested)
    assert started.tool_call_id == approval.tool_call_id == "call_0~2"
    assert started.provider_data == {"remote": True, "agent_id": "call_0"}
    assert approval.provider_data == {"interrupt": interrupt, "agent_id": "call_0"}
    # Allowed, the call runs on the agent in the next run, which names it by the agent's id again.
    pay = ToolCallPart("call_0~2", "pay", "{}", state=ToolCallState.AWAITING_APPROVAL, provider_executed=True)
    pay.provider, pay.provider_data = "ag-ui", approval.provider_data
    pay.move(ToolCallState.RUNNING)
    out = feed(
        mapper({"add"}, earlier=[*earlier, pay]),
        {"type": "TOOL_CALL_START", "toolCallId": "call_0", "toolCallName": "pay"},
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "call_0", "content": "paid"},
        finished(),
    )
    assert out == [
        ResponseStarted(),
        ProviderToolResult("call_0~2", ToolOutcome.success("paid")),
        ResponseCompleted(FinishReason.STOP),
    ]


def test_a_call_with_a_reused_id_goes_back_under_the_agents_id() -> None:
    add = ended("call_0", "add", '{"a": 2}')
    mul = ToolCallPart("call_0~2", "mul", '{"a": 3}', state=ToolCallState.PENDING, provider="ag-ui")
    mul.provider_data = {"agent_id": "call_0"}
    mul.finish(ToolCallState.COMPLETED, ToolOutcome.success(6))
    wire = json.loads(AGUITransport("http://x/a").run_input(request_with(add, mul)).model_dump_json(by_alias=True))
    # Each call in a response of its own (one response cannot hold one id twice), each result after its call.
    assert [m["role"] for m in wire["messages"]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [m["toolCalls"] for m in wire["messages"] if m["role"] == "assistant"] == [
        [{"id": "call_0", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}}],
        [{"id": "call_0", "type": "function", "function": {"name": "mul", "arguments": '{"a": 3}'}}],
    ]
    assert len({m["id"] for m in wire["messages"]}) == len(wire["messages"])  # the messages' own ids stay unique
    assert [(m["toolCallId"], m["content"]) for m in wire["messages"] if m["role"] == "tool"] == [
        ("call_0", "5"),
        ("call_0", "6"),
    ]


def test_an_id_an_earlier_turn_used_is_not_used_again() -> None:
    run = RunMapper(label="The agent", offered={"add"}, earlier=[], taken={"call_0", "call_0~2"})
    out = feed(run, *call("call_0", "add", "{}"), finished())
    assert out[1] == ToolCallStarted(
        "call_0~3", "add", provider_executed=False, provider="ag-ui", provider_data={"agent_id": "call_0"}
    )


def test_state_snapshots_and_deltas_update_the_state() -> None:
    run = mapper()
    feed(
        run,
        {"type": "STATE_SNAPSHOT", "snapshot": {"items": ["a"], "n": 1}},
        {
            "type": "STATE_DELTA",
            "delta": [{"op": "add", "path": "/items/-", "value": "b"}, {"op": "replace", "path": "/n", "value": 2}],
        },
    )
    assert run.state == {"items": ["a", "b"], "n": 2}


def test_apply_patch_follows_rfc_6902() -> None:
    doc = {"a": {"b": [1, 2]}, "c~d": 1, "e/f": 2}
    patched = apply_patch(
        doc,
        [
            {"op": "add", "path": "/a/b/0", "value": 0},
            {"op": "remove", "path": "/c~0d"},
            {"op": "move", "from": "/e~1f", "path": "/g"},
            {"op": "copy", "from": "/a/b", "path": "/h"},
            {"op": "test", "path": "/g", "value": 2},
        ],
    )
    assert patched == {"a": {"b": [0, 1, 2]}, "g": 2, "h": [0, 1, 2]}
    assert doc == {"a": {"b": [1, 2]}, "c~d": 1, "e/f": 2}  # a new value; the old one is untouched
    for bad in (
        [{"op": "test", "path": "/a", "value": 1}],
        [{"op": "replace", "path": "/zz", "value": 1}],
        [{"op": "add", "path": "/a/b/9", "value": 1}],
        [{"op": "add", "path": "a", "value": 1}],
        [{"op": "jump", "path": "/a"}],
    ):
        with pytest.raises(PatchError):
            apply_patch(doc, bad)


# --- the run input ------------------------------------------------------------------------------------------------


def paused_call(state: ToolCallState, *, decision: str | None, schema: dict[str, Any] | None = None) -> ToolCallPart:
    part = ToolCallPart("c1", "pay", '{"amount": 10}', state=ToolCallState.PENDING, provider_executed=True)
    interrupt: dict[str, Any] = {"id": "int-c1", "reason": "tool_call", "toolCallId": "c1"}
    if schema is not None:
        interrupt["responseSchema"] = schema
    part.provider, part.provider_data = "ag-ui", {"interrupt": interrupt}
    part.decision = decision
    part.move(ToolCallState.AWAITING_APPROVAL)
    if state is ToolCallState.RUNNING:
        part.move(ToolCallState.RUNNING)
    elif state.terminal:
        part.finish(state, ToolOutcome.failure("The person declined this call."))
    return part


def request_with(*parts: Any, tools: list[ToolDefinition] | None = None, **options: Any) -> ChatRequest:
    reply = Message(Role.ASSISTANT, list(parts))
    return ChatRequest(
        messages=[Message.user("pay"), reply],
        tools=tools or [],
        options=RequestOptions(**options),
        conversation_id="conv-1",
    )


def test_the_history_tools_and_thread_go_as_the_protocol_has_them() -> None:
    done = ToolCallPart("l1", "add", '{"a": 1}', state=ToolCallState.PENDING)
    done.finish(ToolCallState.COMPLETED, ToolOutcome.success(2))
    add = ToolDefinition(name="add", description="Adds.", parameters={"type": "object", "properties": {}})
    run = AGUITransport("http://x/agent", state={"k": 1}).run_input(
        request_with(TextPart("Let me add."), done, TextPart("It is 2."), tools=[add], system_prompt="Be brief.")
    )
    wire = json.loads(run.model_dump_json(by_alias=True))
    assert wire["threadId"] == "conv-1"
    assert wire["protocolVersion"] == "1.0"
    assert wire["state"] == {"k": 1}
    assert wire["tools"] == [
        {"name": "add", "description": "Adds.", "parameters": {"type": "object", "properties": {}}}
    ]
    assert [m["role"] for m in wire["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert wire["messages"][2]["toolCalls"][0]["function"] == {"name": "add", "arguments": '{"a": 1}'}
    assert wire["messages"][3] == {"id": "l1-result", "role": "tool", "content": "2", "toolCallId": "l1"}
    assert "resume" not in wire


def test_the_agent_declares_nothing_so_requests_are_not_shortened_nor_files_refused_here() -> None:
    assert AGUITransport("http://x/agent").profile == TransportProfile()


def test_the_transport_lives_with_the_others_and_the_path_design_names_is_the_same_class() -> None:
    from ai_widgets import transports
    from ai_widgets.integrations import ag_ui

    assert transports.AGUITransport is ag_ui.AGUITransport is AGUITransport
    assert AGUITransport.__module__ == "ai_widgets.transports._ag_ui"
    assert "AGUITransport" in transports.__all__


def test_the_transport_loads_ag_ui_only_when_it_is_taken() -> None:
    code = (
        "import sys\n"
        "import ai_widgets.transports\n"
        "assert 'ag_ui' not in sys.modules\n"
        "from ai_widgets.transports import AGUITransport\n"
        "print('ag_ui' in sys.modules, 'pydantic_ai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (
            paused_call(ToolCallState.RUNNING, decision="approved"),
            {"status": "resolved", "payload": {"approved": True}},
        ),
        (
            paused_call(ToolCallState.REJECTED, decision="rejected"),
            {"status": "resolved", "payload": {"approved": False, "reason": "too much"}},
        ),
        (paused_call(ToolCallState.CANCELLED, decision=None), {"status": "cancelled"}),
    ],
)
def test_a_decision_goes_back_as_a_resume_entry_keyed_by_the_interrupt(
    part: ToolCallPart, expected: dict[str, Any]
) -> None:
    part.decision_reason = "too much"
    wire = json.loads(AGUITransport("http://x/a").run_input(request_with(part)).model_dump_json(by_alias=True))
    assert wire["resume"] == [{"interruptId": "int-c1", **expected}]
    assistant = wire["messages"][-1]
    assert assistant["toolCalls"][0]["id"] == "c1"  # the call the agent paused on, and no result for it
    assert all(m["role"] != "tool" for m in wire["messages"])


def test_an_edit_goes_as_edited_args_and_the_answer_is_checked_against_the_schema() -> None:
    part = paused_call(ToolCallState.RUNNING, decision="approved")
    part.edited_arguments = {"amount": 3}
    wire = json.loads(AGUITransport("http://x/a").run_input(request_with(part)).model_dump_json(by_alias=True))
    assert wire["resume"][0]["payload"] == {"approved": True, "editedArgs": {"amount": 3}}
    strict = {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["note"],
    }
    part = paused_call(ToolCallState.RUNNING, decision="approved", schema=strict)
    with pytest.raises(ProviderError, match="does not match the schema it gave"):
        AGUITransport("http://x/a").run_input(request_with(part))


def test_the_protocol_has_no_forced_tool_choice() -> None:
    with pytest.raises(ProviderError, match="cannot make the agent call a tool"):
        AGUITransport("http://x/a").run_input(request_with(tool_choice=ToolChoice.REQUIRED))


def test_other_providers_own_calls_are_left_out() -> None:
    theirs = ToolCallPart(
        "w1", "web_search", "{}", state=ToolCallState.PENDING, provider_executed=True, provider="anthropic"
    )
    theirs.finish(ToolCallState.COMPLETED, ToolOutcome.success("results"))
    wire = json.loads(
        AGUITransport("http://x/a").run_input(request_with(TextPart("Found."), theirs)).model_dump_json(by_alias=True)
    )
    assert [m["role"] for m in wire["messages"]] == ["user", "assistant"]
    assert "toolCalls" not in wire["messages"][-1]


def test_the_transport_refuses_state_that_is_not_json() -> None:
    with pytest.raises(ValueError, match="state"):
        AGUITransport("http://x/a", state={"o": object()})
