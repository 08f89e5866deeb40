"""PydanticAITransport against pydantic-ai's own TestModel and FunctionModel: what the model receives, what the
session builds from its stream, stop, errors and bad inputs."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import exceptions as pai_errors
from pydantic_ai import messages as pai
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel

from ai_widgets import ChatSession, MessageStatus, RequestOptions, SessionOptions, ToolCallState, ToolChoice, tool
from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import (
    FilePart,
    FinishReason,
    Message,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    dump_messages,
    load_messages,
)
from ai_widgets.tools import ToolDefinition, ToolOutcome
from ai_widgets.transports import ChatRequest, ContextTooLongError, ProviderError, PydanticAITransport, TransportProfile
from ai_widgets.transports._pydantic_ai_stream import PartsReader
from tests.helpers import wait_for
from tests.providers.images import CHART_TEXT, PNG, image_history, image_reply

Item = Any  # what a FunctionModel stream function yields: text, or {index: DeltaToolCall | DeltaThinkingPart}


class Script:
    """A FunctionModel that answers each request with the next script, recording what each request carried and
    whether its generator was closed."""

    def __init__(self, *replies: list[Item]) -> None:
        self.replies = list(replies)
        self.received: list[list[pai.ModelMessage]] = []
        self.infos: list[AgentInfo] = []
        self.closed = 0
        self.model = FunctionModel(stream_function=self.stream, model_name="scripted")

    async def stream(self, messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[Item]:
        self.received.append(messages)
        self.infos.append(info)
        try:
            for item in self.replies.pop(0):
                if isinstance(item, asyncio.Event):
                    await item.wait()
                else:
                    yield item
        finally:
            self.closed += 1


def user(text: str) -> Message:
    return Message(Role.USER, [TextPart(text)])


async def events_of(transport: PydanticAITransport, request: ChatRequest) -> list[StreamEvent]:
    return [event async for event in transport.stream(request)]


def parts_of(messages: list[pai.ModelMessage], kind: type[Any]) -> list[Any]:
    return [part for message in messages for part in message.parts if isinstance(part, kind)]


# --- streaming --------------------------------------------------------------------------------------------------------


async def test_text_streams_delta_by_delta() -> None:
    script = Script(["Hel", "lo, ", "world"])
    events = await events_of(PydanticAITransport(script.model), ChatRequest([user("hi")]))
    assert events[0] == ResponseStarted()
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "world"]
    assert isinstance(events[-2], UsageUpdate)
    assert events[-1] == ResponseCompleted(FinishReason.STOP)
    assert parts_of(script.received[0], pai.UserPromptPart)[0].content == "hi"


async def test_reasoning_streams_and_goes_back_with_its_signature() -> None:
    thinking = [{0: DeltaThinkingPart(content="Let me ")}, {0: DeltaThinkingPart(content="think.", signature="sig-1")}]
    script = Script(thinking, ["Done."])
    session = ChatSession(PydanticAITransport(script.model))
    reply = await session.send("why?")
    reasoning = [p for p in reply.parts if isinstance(p, ReasoningPart)]
    assert [p.text for p in reasoning] == ["Let me think."]
    assert reasoning[0].provider == "pydantic_ai"
    await session.send("and then?")
    sent = parts_of(script.received[1], pai.ThinkingPart)
    assert [(p.content, p.signature) for p in sent] == [("Let me think.", "sig-1")]


async def test_a_tool_call_streams_its_arguments() -> None:
    script = Script(
        [
            {0: DeltaToolCall(name="add", json_args='{"a": ', tool_call_id="call-1")},
            {0: DeltaToolCall(json_args="1, ")},
            {0: DeltaToolCall(json_args='"b": 2}')},
        ]
    )
    request = ChatRequest([user("add")], tools=[ToolDefinition(name="add")])
    events = await events_of(PydanticAITransport(script.model), request)
    assert events[1] == ToolCallStarted("call-1", "add")
    assert [e.delta for e in events if isinstance(e, ToolCallDelta)] == ['{"a": ', "1, ", '"b": 2}']
    assert ToolCallArgumentsDone("call-1") in events
    assert events[-1] == ResponseCompleted(FinishReason.TOOL_CALLS)
    assert [t.name for t in script.infos[0].function_tools] == ["add"]


def test_dict_arguments_are_gathered_and_sent_whole_when_the_part_ends() -> None:
    reader = PartsReader()
    start = pai.PartStartEvent(index=0, part=pai.ToolCallPart("add", {"a": 1}, "c1"))
    delta = pai.PartDeltaEvent(index=0, delta=pai.ToolCallPartDelta(args_delta={"b": 2}))
    end = pai.PartEndEvent(index=0, part=pai.ToolCallPart("add", {"a": 1, "b": 2}, "c1"))
    events = [*reader.feed(start), *reader.feed(delta), *reader.feed(end)]
    assert events == [
        ToolCallStarted("c1", "add"),
        ToolCallDelta("c1", json.dumps({"a": 1, "b": 2})),
        ToolCallArgumentsDone("c1"),
    ]


def test_a_part_started_again_at_its_index_is_not_streamed_twice() -> None:
    reader = PartsReader()
    events = [
        *reader.feed(pai.PartStartEvent(index=0, part=pai.TextPart("Hel"))),
        *reader.feed(pai.PartDeltaEvent(index=0, delta=pai.TextPartDelta("lo"))),
        *reader.feed(pai.PartStartEvent(index=0, part=pai.TextPart("Hello"))),
        *reader.feed(pai.PartDeltaEvent(index=0, delta=pai.TextPartDelta("!"))),
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello!"


def test_a_calls_provider_item_id_goes_back_with_it() -> None:
    streamed = pai.ToolCallPart("add", '{"a": 1}', "call_1", id="fc_1", provider_name="openai")
    (started, _) = PartsReader().feed(pai.PartStartEvent(index=0, part=streamed))
    assert isinstance(started, ToolCallStarted)
    call = ToolCallPart(
        started.tool_call_id,
        started.tool_name,
        '{"a": 1}',
        provider=started.provider,
        provider_data=started.provider_data,
    )
    call.finish(ToolCallState.COMPLETED, ToolOutcome.success(2))
    sent = PydanticAITransport(Script().model).request_messages([user("add"), Message(Role.ASSISTANT, [call])])
    (back,) = parts_of(sent, pai.ToolCallPart)
    assert (back.tool_call_id, back.id, back.provider_name) == ("call_1", "fc_1", "openai")
    plain = ToolCallPart("call_2", "add", "{}")
    plain.finish(ToolCallState.COMPLETED, ToolOutcome.success(0))
    sent = PydanticAITransport(Script().model).request_messages([user("add"), Message(Role.ASSISTANT, [plain])])
    assert [(p.id, p.provider_name) for p in parts_of(sent, pai.ToolCallPart)] == [(None, None)]


async def test_a_provider_run_tool_is_provider_executed_with_its_result() -> None:
    call = pai.NativeToolCallPart("web_search", {"query": "x"}, "ws-1", provider_name="function")
    result = pai.NativeToolReturnPart("web_search", {"hits": ["a"]}, "ws-1", provider_name="function")
    script = Script([{0: call}, {1: result}], ["Found it."], ["ok"])
    session = ChatSession(PydanticAITransport(script.model))
    reply = await session.send("search")
    searched = reply.tool_calls[0]
    assert searched.provider_executed
    assert searched.state is ToolCallState.COMPLETED
    assert searched.outcome is not None
    assert searched.outcome.value == {"hits": ["a"]}
    await session.send("more")
    assert [p.tool_call_id for p in parts_of(script.received[1], pai.NativeToolCallPart)] == ["ws-1"]
    assert [p.content for p in parts_of(script.received[1], pai.NativeToolReturnPart)] == [{"hits": ["a"]}]


# --- through a session ------------------------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


async def test_a_conversation_with_tools_sends_the_results_back() -> None:
    script = Script(
        [{0: DeltaToolCall(name="add", json_args='{"a": 1, "b": 2}', tool_call_id="c1")}],
        ["It is ", "3."],
        ["Bye."],
    )
    session = ChatSession(
        PydanticAITransport(script.model), tools=[add], request_options=RequestOptions(system_prompt="Be brief.")
    )
    reply = await session.send("1+2?")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "It is 3."
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    second = script.received[1]
    assert isinstance(second[0], pai.ModelRequest)
    assert isinstance(second[0].parts[0], pai.SystemPromptPart)
    assert second[0].parts[0].content == "Be brief."
    assert [(p.tool_name, p.args, p.tool_call_id) for p in parts_of(second, pai.ToolCallPart)] == [
        ("add", '{"a": 1, "b": 2}', "c1")
    ]
    returns = parts_of(second, pai.ToolReturnPart)
    assert [(r.tool_call_id, r.content, r.outcome) for r in returns] == [("c1", "3", "success")]
    await session.send("thanks")
    third = script.received[2]
    kinds = [type(m).__name__ for m in third]
    assert kinds == ["ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse", "ModelRequest"]
    assert parts_of(third, pai.UserPromptPart)[-1].content == "thanks"
    assert [p.content for p in parts_of(third, pai.TextPart)] == ["It is 3."]


async def test_a_failing_tool_tells_the_model_its_error() -> None:
    script = Script([{0: DeltaToolCall(name="explode", json_args='{"reason": "why"}', tool_call_id="c1")}], ["Sorry."])
    options = SessionOptions(include_detailed_errors=True)
    session = ChatSession(PydanticAITransport(script.model), tools=[explode], options=options)
    reply = await session.send("go")
    assert reply.tool_calls[0].state is ToolCallState.FAILED
    (returned,) = parts_of(script.received[1], pai.ToolReturnPart)
    assert returned.outcome == "failed"
    assert "boom: why" in returned.content
    assert returned.content == reply.tool_calls[0].result_for_model()


async def test_usage_reaches_the_reply_as_pydantic_ai_counts_it() -> None:
    items = ["one ", "two ", "three"]
    script = Script(items, list(items))
    session = ChatSession(PydanticAITransport(script.model))
    reply = await session.send("count")
    messages = [pai.ModelRequest(parts=[pai.UserPromptPart("count")])]
    async with script.model.request_stream(messages, None, ModelRequestParameters()) as response:
        async for _ in response:
            pass
    expected = response.usage
    assert expected.input_tokens > 0
    assert expected.output_tokens > 0
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (expected.input_tokens, expected.output_tokens)
    assert reply.usage.requests == 1


async def test_stop_mid_stream_closes_the_models_stream_and_keeps_a_valid_history() -> None:
    never = asyncio.Event()
    script = Script(["Half a ", never], ["Again."])
    session = ChatSession(PydanticAITransport(script.model))
    task = asyncio.create_task(session.send("talk"))
    await wait_for(lambda: bool(session.messages) and session.messages[-1].text == "Half a ")
    assert session.stop()
    reply = await asyncio.wait_for(task, 5)
    assert reply.status is MessageStatus.CANCELLED
    assert script.closed == 1
    assert [m.text for m in load_messages(dump_messages(session.messages))] == ["talk", "Half a "]
    again = await session.send("once more")
    assert again.text == "Again."
    assert script.closed == 2


async def test_stop_closes_the_stream_while_a_call_streams() -> None:
    never = asyncio.Event()
    script = Script([{0: DeltaToolCall(name="add", json_args='{"a": 1', tool_call_id="c1")}, never], ["ok"])
    session = ChatSession(PydanticAITransport(script.model), tools=[add])
    task = asyncio.create_task(session.send("add"))
    await wait_for(lambda: bool(session.messages) and bool(session.messages[-1].tool_calls))
    session.stop()
    reply = await asyncio.wait_for(task, 5)
    assert script.closed == 1
    assert all(part.state.terminal for part in reply.tool_calls)
    assert (await session.send("again")).text == "ok"
    assert [r.outcome for r in parts_of(script.received[1], pai.ToolReturnPart)] == ["failed"]


async def test_a_model_name_is_resolved_by_pydantic_ai() -> None:
    transport = PydanticAITransport("test")
    assert isinstance(transport.model, TestModel)
    session = ChatSession(transport, tools=[add])
    reply = await session.send("use the tools")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.tool_calls[0].tool_name == "add"
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.text


def test_tool_images_and_attachments_go_as_pydantic_ai_content() -> None:
    transport = PydanticAITransport(Script().model)
    attached = Message(Role.USER, [TextPart("look"), FilePart("image/png", data=PNG, name="dot.png")])
    linked = Message(Role.USER, [FilePart("application/pdf", url="https://example.com/a.pdf")])
    sent = transport.request_messages([attached, image_reply(), linked])
    prompt = parts_of(sent, pai.UserPromptPart)
    assert prompt[0].content[0] == "look"
    assert prompt[0].content[1] == pai.BinaryContent(data=base64.b64decode(PNG), media_type="image/png")
    assert prompt[1].content == [pai.DocumentUrl(url="https://example.com/a.pdf", media_type="application/pdf")]
    returns = {r.tool_call_id: r for r in parts_of(sent, pai.ToolReturnPart)}
    chart = returns["call_chart"].content
    assert chart[0] == CHART_TEXT
    assert [type(item).__name__ for item in chart[1:]] == ["BinaryContent", "ImageUrl"]
    assert returns["call_photo"].content[1].media_type == "image/jpeg"  # labelled PNG, sniffed as what it is
    assert returns["call_failed"].content == "It broke."
    assert returns["call_failed"].outcome == "failed"
    no_images = PydanticAITransport(Script().model, tool_images=False).request_messages(image_history())
    assert parts_of(no_images, pai.ToolReturnPart)[0].content == CHART_TEXT


# --- options ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "expected", "tools"),
    [
        (ToolChoice.AUTO, None, ["add"]),
        (ToolChoice.REQUIRED, "required", ["add"]),
        (ToolChoice.specific("add"), ["add"], ["add"]),
        (ToolChoice.NONE, None, []),
    ],
)
async def test_options_become_model_settings(choice: ToolChoice, expected: object, tools: list[str]) -> None:
    script = Script(["ok"])
    transport = PydanticAITransport(script.model, settings={"seed": 7, "tool_choice": "required"})
    options = RequestOptions(temperature=0.5, max_tokens=99, tool_choice=choice, extra={"top_p": 0.9})
    definitions = [] if choice.mode == "none" else [ToolDefinition(name="add")]
    await events_of(transport, ChatRequest([user("hi")], tools=definitions, options=options))
    settings = script.infos[0].model_settings or {}
    assert (settings["temperature"], settings["max_tokens"], settings["seed"], settings["top_p"]) == (0.5, 99, 7, 0.9)
    assert settings.get("tool_choice") == expected
    assert [t.name for t in script.infos[0].function_tools] == tools


class City(BaseModel):
    name: str
    population: int


@pytest.mark.parametrize(("native", "mode"), [(True, "native"), (False, "prompted")])
async def test_a_typed_answer_asks_for_the_schema_and_validates_the_text(native: bool, mode: str) -> None:
    script = Script(['{"name": "Oslo", ', '"population": 700000}'])
    model = FunctionModel(stream_function=script.stream, profile={"supports_json_schema_output": native})
    session = ChatSession(PydanticAITransport(model))
    reply = await session.send("a city", output_type=City)
    assert reply.output == City(name="Oslo", population=700000)
    parameters = script.infos[0].model_request_parameters
    assert parameters.output_mode == mode
    assert parameters.output_object is not None
    assert parameters.output_object.json_schema["properties"].keys() == {"name", "population"}
    if mode == "prompted":  # pydantic-ai's instruction carries the schema
        assert '"population"' in (script.infos[0].instructions or "")


async def test_a_request_past_the_context_window_is_retried_shortened() -> None:
    too_long = pai_errors.ModelContextWindowExceededError("scripted", "prompt is too long: 5000 tokens > 4000 maximum")
    attempts: list[list[pai.ModelMessage]] = []

    async def stream(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        attempts.append(messages)
        if len(attempts) == 1:
            raise too_long
        yield "fits"

    history = [user("old " * 2000), Message(Role.ASSISTANT, [TextPart("noted")])]
    session = ChatSession(PydanticAITransport(FunctionModel(stream_function=stream)), messages=history)
    reply = await session.send("new")
    assert reply.text == "fits"
    assert len(attempts) == 2
    assert len(str(attempts[1])) < len(str(attempts[0]))


def test_the_context_window_comes_from_the_profile() -> None:
    windowed = FunctionModel(stream_function=Script().stream, profile={"context_window": 32_000})
    assert PydanticAITransport(windowed).profile.context_window == 32_000
    assert PydanticAITransport(FunctionModel(stream_function=Script().stream)).profile.context_window is None


def test_the_transport_declares_its_model_provider_and_the_output_limit_its_settings_ask_for() -> None:
    model = FunctionModel(stream_function=Script().stream, model_name="scripted-7", profile={"context_window": 32_000})
    assert PydanticAITransport(model, settings={"max_tokens": 900}).profile == TransportProfile(
        provider=None, model="scripted-7", context_window=32_000, max_output_tokens=900
    )
    assert PydanticAITransport(model).profile.max_output_tokens is None


# --- errors and bad inputs --------------------------------------------------------------------------------------------


def failing(error: Exception) -> FunctionModel:
    async def stream(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "partial "
        raise error

    return FunctionModel(stream_function=stream, model_name="failing")


@pytest.mark.parametrize(
    ("error", "kind", "words"),
    [
        (pai_errors.ModelHTTPError(429, "failing", body={"message": "slow down"}), ProviderError, "rate limiting"),
        (pai_errors.ModelHTTPError(401, "failing"), ProviderError, "rejected the API key"),
        (
            pai_errors.ModelHTTPError(
                400,
                "failing",
                body="This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9000 tokens.",
            ),
            ContextTooLongError,
            "maximum context length",
        ),
        (pai_errors.UnexpectedModelBehavior("garbled stream"), ProviderError, "garbled stream"),
        (pai_errors.UserError("tool_choice is not supported"), ProviderError, "tool_choice is not supported"),
    ],
)
async def test_pydantic_ai_errors_become_provider_errors(error: Exception, kind: type[Exception], words: str) -> None:
    transport = PydanticAITransport(failing(error))
    with pytest.raises(kind, match=words) as raised:
        await events_of(transport, ChatRequest([user("hi")]))
    assert "failing" in str(raised.value)
    if kind is ContextTooLongError:
        assert (raised.value.tokens, raised.value.limit) == (9000, 8192)  # type: ignore[attr-defined]


async def test_an_error_ends_the_reply_in_error_and_the_session_goes_on() -> None:
    session = ChatSession(PydanticAITransport(failing(pai_errors.ModelHTTPError(503, "failing"))))
    reply = await session.send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "server error (503)" in (reply.error or "")
    session.transport = PydanticAITransport(Script(["fine"]).model)
    assert (await session.send("again")).text == "fine"


def test_bad_models_and_settings_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match=r"pydantic-ai Model .* or a model name"):
        PydanticAITransport(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pydantic-ai Model"):
        PydanticAITransport(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a model name is needed"):
        PydanticAITransport("  ")
    with pytest.raises(ValueError, match="does not know the model 'nosuch:model'"):
        PydanticAITransport("nosuch:model")
    with pytest.raises(TypeError, match="settings must be"):
        PydanticAITransport("test", settings=[("seed", 1)])  # type: ignore[arg-type]


def test_the_stream_events_of_reasoning_carry_the_parts_for_the_provider() -> None:
    reader = PartsReader()
    first = pai.ThinkingPart("a", signature="s1", provider_name="anthropic")
    second = pai.ThinkingPart("b", signature="s2", provider_name="anthropic")
    events = [
        *reader.feed(pai.PartStartEvent(index=0, part=pai.ThinkingPart("a"))),
        *reader.feed(pai.PartEndEvent(index=0, part=first)),
        *reader.feed(pai.PartStartEvent(index=1, part=pai.ThinkingPart("b"))),
        *reader.feed(pai.PartEndEvent(index=1, part=second)),
    ]
    last = [e for e in events if isinstance(e, ReasoningDelta) and e.provider_data is not None][-1]
    assert [p["signature"] for p in last.provider_data["parts"]] == ["s1", "s2"]  # type: ignore[index]
    assert not [e for e in events if isinstance(e, ProviderToolResult)]


# --- optional extra ---------------------------------------------------------------------------------------------------


def loaded_after(code: str) -> list[str]:
    """The top-level packages of pydantic-ai and AG-UI a fresh interpreter has loaded after running ``code``."""
    code += "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic_ai', 'ag_ui'})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded: list[str] = json.loads(out)
    return loaded


@pytest.mark.parametrize("module", ["ai_widgets", "ai_widgets.integrations", "ai_widgets.transports"])
def test_importing_ai_widgets_loads_neither_pydantic_ai_nor_ag_ui(module: str) -> None:
    assert loaded_after(f"import {module}") == []


def test_the_transport_loads_pydantic_ai_only_when_it_is_taken() -> None:
    assert loaded_after("from ai_widgets.transports import PydanticAITransport") == ["pydantic_ai"]


def test_the_transport_lives_with_the_others_and_the_integration_names_the_same_class() -> None:
    from ai_widgets import transports
    from ai_widgets.integrations import pydantic_ai

    assert transports.PydanticAITransport is pydantic_ai.PydanticAITransport is PydanticAITransport
    assert PydanticAITransport.__module__ == "ai_widgets.transports._pydantic_ai"
    assert "PydanticAITransport" in transports.__all__
