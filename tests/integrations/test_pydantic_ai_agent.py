"""A pydantic-ai ``Agent`` in this project's session (``ChatSession.from_agent``, ``ChatWidget(agent=...)``), on
pydantic-ai's ``FunctionModel`` (a scripted model that also shows what it was sent) and ``TestModel``: no keys."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, SystemPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition as PydanticToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ExternalToolset, FunctionToolset, ToolsetTool

from ai_widgets import ApprovalDecision, ChatSession, ChatWidget, MessageStatus, ToolCallState, tool
from ai_widgets.approval import ApprovalError
from ai_widgets.integrations.pydantic_ai import AgentNotSupportedError, AgentTools, agent_parts
from ai_widgets.messages import Message, Role
from ai_widgets.transports import TransportProfile
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire

# --- a scripted model ------------------------------------------------------------------------------------------------

Step = str | list[tuple[str, dict[str, Any]]]


@dataclass
class Script:
    """A ``FunctionModel`` stream: each request answers with the next step (text, or tool calls), and is kept."""

    steps: list[Step]
    seen: list[tuple[list[ModelMessage], AgentInfo]] = field(default_factory=list)
    delay: float = 0.0

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.seen.append((messages, info))
        step = self.steps.pop(0) if self.steps else "done"
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(step, str):
            yield step
            return
        for index, (name, arguments) in enumerate(step):
            call_id = f"call_{len(self.seen)}_{index}"
            yield {index: DeltaToolCall(name, json.dumps(arguments), tool_call_id=call_id)}

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self)

    def returns(self, request: int) -> list[Any]:
        """What the model got back from the tools before its ``request``-th request (0-based)."""
        messages, _ = self.seen[request]
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return [p for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]

    def system(self, request: int) -> str:
        messages, info = self.seen[request]
        parts = [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts]
        prompts = [
            p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, SystemPromptPart)
        ]
        assert parts
        return "\n\n".join([*(p.content for p in prompts), info.instructions or ""])


@dataclass
class Deps:
    user: str
    log: list[str] = field(default_factory=list)


def greeter(script: Script, **kwargs: Any) -> Agent[Deps, str]:
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps, instructions="Be brief.", **kwargs)

    @agent.tool
    def greet(ctx: RunContext[Deps], times: int) -> str:
        """Greets the user.

        Args:
            times: How many times.
        """
        ctx.deps.log.append(f"greet {times} ({ctx.tool_call_id}, retry {ctx.retry})")
        return " ".join([f"hi {ctx.deps.user}"] * times)

    return agent


async def closed(session: ChatSession) -> None:
    for source in session.tools.sources:
        if isinstance(source, AgentTools):
            await source.aclose()


# --- tools, deps, instructions ---------------------------------------------------------------------------------------


async def test_the_agents_tool_runs_in_a_card_with_its_deps() -> None:
    script = Script([[("greet", {"times": 2})], "Greeted."])
    deps = Deps("ann")
    session = ChatSession.from_agent(greeter(script), deps=deps)
    reply = await session.send("hello")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.text == "Greeted."
    [part] = reply.tool_calls
    assert (part.tool_name, part.state, part.outcome.value) == ("greet", ToolCallState.COMPLETED, "hi ann hi ann")
    assert deps.log == [f"greet 2 ({part.tool_call_id}, retry 0)"]
    assert [t.name for t in script.seen[0][1].function_tools] == ["greet"]
    assert script.seen[0][1].function_tools[0].parameters_json_schema["properties"]["times"] == {
        "description": "How many times.",
        "type": "integer",
    }
    [returned] = script.returns(1)
    assert isinstance(returned, ToolReturnPart)
    assert returned.content == "hi ann hi ann"
    await closed(session)


async def test_instructions_and_system_prompts_static_and_dynamic_are_rendered_before_every_request() -> None:
    script = Script([[("greet", {"times": 1})], "ok", "again"])
    agent = greeter(script, system_prompt="You are a greeter.")
    counter = iter(range(100))

    @agent.instructions
    def who(ctx: RunContext[Deps]) -> str:
        return f"The user is {ctx.deps.user} (rendering {next(counter)})."

    @agent.system_prompt
    def where(ctx: RunContext[Deps]) -> str:
        return f"Greet {ctx.deps.user} warmly."

    session = ChatSession.from_agent(agent, deps=Deps("bo"))
    await session.send("hello")
    first, second = script.system(0), script.system(1)
    for text in (first, second):
        assert "You are a greeter." in text
        assert "Greet bo warmly." in text
        assert "Be brief." in text
    assert "The user is bo (rendering 0)." in first
    assert "The user is bo (rendering 1)." in second  # a function of RunContext runs again for each request
    await session.send("more")
    assert "The user is bo (rendering 2)." in script.system(2)
    await closed(session)


async def test_an_instruction_function_that_raises_ends_the_turn_with_its_error_and_the_session_goes_on() -> None:
    script = Script(["never asked", "fine"])
    agent = greeter(script)
    broken = [True]

    @agent.instructions
    def flaky(ctx: RunContext[Deps]) -> str:
        if broken[0]:
            raise RuntimeError("the profile service is down")
        return "Profile loaded."

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    reply = await session.send("hello")
    assert reply.status is MessageStatus.ERROR
    assert "the profile service is down" in (reply.error or "")
    assert script.seen == []  # the model was never asked
    broken[0] = False
    assert (await session.send("again")).text == "never asked"
    assert "Profile loaded." in script.system(0)
    await closed(session)


async def test_an_agent_with_static_instructions_only_is_probed_once() -> None:
    script = Script([[("greet", {"times": 1})], "ok", "again"])
    agent = greeter(script, system_prompt="Static too.")
    parts = agent_parts(agent, deps=Deps("x"))
    probes = 0
    probe = parts.probe

    async def counted(prompt: str) -> Any:
        nonlocal probes
        probes += 1
        return await probe(prompt)

    parts.probe = counted  # type: ignore[method-assign]
    session = ChatSession(parts.transport, tools=[parts.tools])
    await session.send("one")
    await session.send("two")
    assert len(script.seen) == 3
    assert probes == 1
    assert all("Be brief." in script.system(i) and "Static too." in script.system(i) for i in range(3))
    await parts.aclose()


async def test_the_sessions_own_system_prompt_comes_after_the_agents() -> None:
    from ai_widgets import RequestOptions

    script = Script(["hi"])
    session = ChatSession.from_agent(
        greeter(script), deps=Deps("x"), request_options=RequestOptions(system_prompt="Answer in French.")
    )
    await session.send("hello")
    text = script.system(0)
    assert text.index("Be brief.") < text.index("Answer in French.")
    await closed(session)


async def test_a_toolsets_tools_are_offered_prefixed_and_filtered_beside_the_sessions_own() -> None:
    maths = FunctionToolset[Deps]()

    @maths.tool_plain
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    @maths.tool_plain
    def secret() -> str:
        return "never offered"

    @tool
    def kernel_side(x: str) -> str:
        """A tool of this kernel's, not the agent's."""
        return x.upper()

    script = Script([[("m_add", {"a": 2, "b": "3"}), ("kernel_side", {"x": "yo"})], "5 and YO"])
    toolset = maths.filtered(lambda ctx, tool_def: tool_def.name != "secret").prefixed("m")
    session = ChatSession.from_agent(greeter(script, toolsets=[toolset]), deps=Deps("x"), tools=[kernel_side])
    reply = await session.send("add")
    assert sorted(t.name for t in script.seen[0][1].function_tools) == ["greet", "kernel_side", "m_add"]
    assert [(p.tool_name, p.outcome.value) for p in reply.tool_calls] == [("m_add", 5), ("kernel_side", "YO")]
    await closed(session)


async def test_a_toolset_built_per_step_from_run_context_is_offered_with_the_deps() -> None:
    script = Script([[("for_user", {})], "ok"])
    agent = greeter(script)

    @agent.toolset
    def per_user(ctx: RunContext[Deps]) -> FunctionToolset[Deps]:
        built = FunctionToolset[Deps]()

        @built.tool_plain(name="for_user")
        def for_user() -> str:
            return f"built for {ctx.deps.user} at step {ctx.run_step}"

        return built

    session = ChatSession.from_agent(agent, deps=Deps("ivy"))
    reply = await session.send("x")
    assert sorted(t.name for t in script.seen[0][1].function_tools) == ["for_user", "greet"]
    assert reply.tool_calls[0].outcome.value == "built for ivy at step 1"
    await closed(session)


async def test_a_registry_given_as_tools_gets_the_agents_tools_added_and_keeps_its_own() -> None:
    from ai_widgets import ToolRegistry

    @tool
    def shout(x: str) -> str:
        return x.upper()

    registry = ToolRegistry([shout])
    script = Script([[("shout", {"x": "a"}), ("greet", {"times": 1})], "ok"])
    session = ChatSession.from_agent(greeter(script), deps=Deps("jo"), tools=registry)
    assert session.tools is registry
    reply = await session.send("go")
    assert [p.outcome.value for p in reply.tool_calls] == ["A", "hi jo"]
    await closed(session)


async def test_invalid_arguments_come_back_to_the_model_as_pydantic_ai_validates_them_and_nothing_runs() -> None:
    deps = Deps("x")
    script = Script([[("greet", {"times": "many"})], [("greet", {"times": 1})], "ok"])
    session = ChatSession.from_agent(greeter(script, retries=2), deps=deps)
    reply = await session.send("hello")
    first, second = reply.tool_calls
    assert first.state is ToolCallState.FAILED
    assert first.outcome.retryable
    assert "times" in first.outcome.message
    assert second.state is ToolCallState.COMPLETED
    assert deps.log == [f"greet 1 ({second.tool_call_id}, retry 0)"]
    await closed(session)


async def test_model_retry_is_a_failure_the_model_sees_and_the_retry_count_reaches_the_tool() -> None:
    script = Script([[("flaky", {"n": 1})], [("flaky", {"n": 2})], "fine"])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps, retries=3)
    retries: list[int] = []

    @agent.tool
    def flaky(ctx: RunContext[Deps], n: int) -> str:
        retries.append(ctx.retry)
        if n == 1:
            raise ModelRetry("n must be 2, try again")
        return "got 2"

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    reply = await session.send("go")
    first, second = reply.tool_calls
    assert first.state is ToolCallState.FAILED
    assert first.outcome.retryable
    assert "n must be 2, try again" in first.outcome.message
    assert second.outcome.value == "got 2"
    assert retries == [0, 1]
    assert "n must be 2, try again" in str(script.returns(1)[0].content)
    await closed(session)


async def test_a_tool_past_its_retries_is_told_not_to_try_again() -> None:
    script = Script([[("always_bad", {})], [("always_bad", {})], "gave up"])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps, retries=1)

    @agent.tool_plain
    def always_bad() -> str:
        raise ModelRetry("no")

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    reply = await session.send("go")
    first, second = reply.tool_calls
    assert first.outcome.retryable
    assert not second.outcome.retryable
    assert "more than its 1 retries allow" in second.outcome.message
    await closed(session)


# --- approvals -----------------------------------------------------------------------------------------------------


def approving_agent(script: Script, ran: list[dict[str, Any]], output_type: Any = str) -> Agent[Deps, Any]:
    agent: Agent[Deps, Any] = Agent(script.model, deps_type=Deps, output_type=output_type)

    @agent.tool(requires_approval=True)
    def delete(ctx: RunContext[Deps], path: str) -> str:
        """Deletes a file."""
        ran.append({"path": path, "approved": ctx.tool_call_approved})
        return f"deleted {path}"

    return agent


# pydantic-ai wants DeferredToolRequests among the output types of an agent with an approval-required tool (so its own
# run can end with the call waiting): such an agent's output is still text here, its calls waiting in their cards.
@pytest.mark.parametrize(
    "output_type", [str, [str, DeferredToolRequests], str | DeferredToolRequests], ids=["str", "list", "union"]
)
async def test_a_requires_approval_tool_waits_in_the_card_and_an_edit_runs_with_the_edited_arguments(
    output_type: Any,
) -> None:
    ran: list[dict[str, Any]] = []
    script = Script([[("delete", {"path": "/etc/passwd"})], "done"])
    session = ChatSession.from_agent(approving_agent(script, ran, output_type), deps=Deps("x"))
    await session.tools.refresh()  # the agent's tools, listed as before a request
    assert session.tools["delete"].definition.requires_approval
    task = asyncio.create_task(session.send("clean up"))
    await wait_for(lambda: bool(session.pending_approvals))
    [waiting] = session.pending_approvals
    assert waiting.state is ToolCallState.AWAITING_APPROVAL
    assert ran == []  # nothing ran while it waits
    with pytest.raises(ApprovalError):
        session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED, arguments={"path": 42})
    session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED, arguments={"path": "/tmp/old.txt"})
    reply = await task
    assert ran == [{"path": "/tmp/old.txt", "approved": True}]
    [part] = reply.tool_calls
    assert part.edited_arguments == {"path": "/tmp/old.txt"}
    assert part.outcome.value == "deleted /tmp/old.txt"
    await closed(session)


async def test_a_declined_call_never_runs_and_the_model_is_told() -> None:
    ran: list[dict[str, Any]] = []
    script = Script([[("delete", {"path": "/etc"})], "ok, I did not"])
    session = ChatSession.from_agent(approving_agent(script, ran), deps=Deps("x"))
    task = asyncio.create_task(session.send("clean up"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve(session.pending_approvals[0].tool_call_id, ApprovalDecision.REJECTED, "not that one")
    reply = await task
    assert ran == []
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    told = script.returns(1)[0]
    assert "declined" in str(told.content)
    assert "not that one" in str(told.content)
    await closed(session)


async def test_approval_required_raised_inside_a_tool_asks_in_the_card_and_runs_it_again_approved() -> None:
    script = Script([[("transfer", {"amount": 5})], [("transfer", {"amount": 500})], "done"])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps)
    ran: list[tuple[int, bool]] = []

    @agent.tool
    def transfer(ctx: RunContext[Deps], amount: int) -> str:
        ran.append((amount, ctx.tool_call_approved))
        if amount > 100 and not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={"reason": "large amount"})
        return f"sent {amount}"

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    [waiting] = session.pending_approvals
    assert waiting.state is ToolCallState.AWAITING_APPROVAL
    assert "large amount" in (waiting.approval_reason or "")
    session.approve(waiting.tool_call_id, ApprovalDecision.APPROVED, arguments={"amount": 150})
    reply = await task
    small, large = reply.tool_calls
    assert small.outcome.value == "sent 5"  # under the limit: it never asked
    assert large.outcome.value == "sent 150"
    assert large.edited_arguments == {"amount": 150}
    assert ran == [(5, False), (500, False), (150, True)]
    await closed(session)


async def test_approval_required_declined_inside_a_tool_ends_it_rejected() -> None:
    script = Script([[("transfer", {"amount": 500})], "ok"])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps)

    @agent.tool
    def transfer(ctx: RunContext[Deps], amount: int) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired()
        raise AssertionError("never approved, so never run")

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    task = asyncio.create_task(session.send("pay"))
    await wait_for(lambda: bool(session.pending_approvals))
    session.approve(session.pending_approvals[0].tool_call_id, ApprovalDecision.REJECTED)
    reply = await task
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    assert "declined" in str(script.returns(1)[0].content)
    await closed(session)


# --- deferred calls --------------------------------------------------------------------------------------------------


async def test_an_external_tool_waits_for_the_person_to_type_its_result() -> None:
    external = ExternalToolset[Deps](
        [
            PydanticToolDefinition(
                name="ask_manager",
                description="Asks the manager.",
                parameters_json_schema={"type": "object", "properties": {"question": {"type": "string"}}},
            )
        ]
    )
    script = Script([[("ask_manager", {"question": "raise?"})], "The manager said yes."])
    session = ChatSession.from_agent(greeter(script, toolsets=[external]), deps=Deps("x"))
    task = asyncio.create_task(session.send("ask"))
    await wait_for(lambda: bool(session.pending_inputs))
    [waiting] = session.pending_inputs
    assert waiting.state is ToolCallState.AWAITING_INPUT
    assert "raise?" in waiting.input_request.message
    session.respond(waiting.tool_call_id, "accept", {"result": "yes"})
    reply = await task
    assert reply.tool_calls[0].outcome.value == "yes"
    assert script.returns(1)[0].content == "yes"
    await closed(session)


async def test_call_deferred_raised_inside_a_tool_waits_for_the_result_and_a_decline_tells_the_model() -> None:
    script = Script([[("deploy", {"env": "prod"})], "Not deployed."])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps)

    @agent.tool_plain
    def deploy(env: str) -> str:
        raise CallDeferred(metadata={"queue": "ops"})

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    task = asyncio.create_task(session.send("deploy"))
    await wait_for(lambda: bool(session.pending_inputs))
    assert "ops" in session.pending_inputs[0].input_request.message
    session.respond(session.pending_inputs[0].tool_call_id, "decline")
    reply = await task
    assert reply.tool_calls[0].state is ToolCallState.FAILED
    assert "declined to give a result" in str(script.returns(1)[0].content)
    await closed(session)


# --- stop, history, toolset lifecycle -------------------------------------------------------------------------------


async def test_a_stop_mid_tool_leaves_a_valid_history_and_the_next_turn_works() -> None:
    started = asyncio.Event()
    script = Script([[("slow", {})], "after the stop"])
    agent: Agent[Deps, str] = Agent(script.model, deps_type=Deps)

    @agent.tool_plain
    async def slow() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    session = ChatSession.from_agent(agent, deps=Deps("x"))
    task = asyncio.create_task(session.send("go"))
    await asyncio.wait_for(started.wait(), 10)
    assert session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    assert not session.busy
    again = await session.send("and now?")
    assert again.text == "after the stop"
    # the model got every call answered: the cancelled one with its outcome
    messages, _ = script.seen[1]
    answered = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [p.tool_call_id for p in answered] == [reply.tool_calls[0].tool_call_id]
    assert "Stopped" in str(answered[0].content)
    await closed(session)


async def test_one_call_cancelled_while_its_sibling_goes_on_and_a_call_the_person_runs_by_hand() -> None:
    started = asyncio.Event()
    script = Script([[("slow", {}), ("greet", {"times": 1})], "one was cancelled"])
    agent = greeter(script)

    @agent.tool_plain
    async def slow() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    deps = Deps("hal")
    session = ChatSession.from_agent(agent, deps=deps)
    task = asyncio.create_task(session.send("go"))
    await asyncio.wait_for(started.wait(), 10)
    reply = session.messages[-1]
    session.cancel(reply.tool_calls[0].tool_call_id, "too slow")
    reply = await task
    cancelled, greeted = reply.tool_calls
    assert cancelled.state is ToolCallState.CANCELLED
    assert "too slow" in (cancelled.outcome.message or "")
    assert greeted.outcome.value == "hi hal"
    assert reply.text == "one was cancelled"
    by_hand = await session.run_call("greet", {"times": 3})
    assert by_hand.tool_calls[0].outcome.value == "hi hal hi hal hi hal"
    await closed(session)


async def test_a_stop_mid_stream_leaves_a_valid_history() -> None:
    script = Script(["x" * 10, "second"], delay=0.5)
    session = ChatSession.from_agent(greeter(script), deps=Deps("x"))
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(script.seen))
    session.stop()
    reply = await task
    assert reply.status is MessageStatus.CANCELLED
    script.delay = 0
    assert (await session.send("again")).text == "second"
    await closed(session)


async def test_the_history_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    script = Script([[("greet", {"times": 1})], "Greeted.", "Still here."])
    first = ChatSession.from_agent(greeter(script), deps=Deps("cy"), history=path)
    await first.send("hello")
    first.close()
    await closed(first)
    again = ChatSession.from_agent(greeter(script), deps=Deps("cy"), history=path)
    assert [m.text for m in again.messages] == ["hello", "Greeted."]
    assert again.messages[1].tool_calls[0].outcome.value == "hi cy"
    reply = await again.send("still?")
    assert reply.text == "Still here."
    messages, _ = script.seen[-1]
    assert sum(isinstance(m, ModelRequest) for m in messages) >= 3  # the loaded turn went to the model
    again.close()
    await closed(again)


class Counted(AbstractToolset[Any]):
    """A toolset that holds a resource (as an MCP server holds its connection), counting how it is entered."""

    def __init__(self) -> None:
        self.entered = 0
        self.left = 0

    @property
    def id(self) -> str:
        return "counted"

    async def __aenter__(self) -> Counted:
        self.entered += 1
        return self

    async def __aexit__(self, *args: Any) -> None:
        self.left += 1

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        assert self.entered > self.left, "listed while not entered"
        from pydantic_core import SchemaValidator, core_schema

        validator = SchemaValidator(core_schema.dict_schema())
        spec = PydanticToolDefinition(name="ping", parameters_json_schema={"type": "object", "properties": {}})
        return {"ping": ToolsetTool(toolset=self, tool_def=spec, max_retries=1, args_validator=validator)}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: Any) -> Any:
        assert self.entered > self.left, "called while not entered"
        return f"pong for {ctx.deps.user}"


async def test_a_toolset_with_a_connection_is_entered_once_by_one_task_and_left_on_aclose() -> None:
    counted = Counted()
    script = Script([[("ping", {})], "ok", [("ping", {})], "ok", "ok"])
    session = ChatSession.from_agent(greeter(script, toolsets=[counted]), deps=Deps("di"))
    assert (await session.send("one")).tool_calls[0].outcome.value == "pong for di"
    assert (await session.send("two")).tool_calls[0].outcome.value == "pong for di"
    holding = counted.entered - counted.left
    assert holding == 1  # held between requests and turns (each of the agent's own probe runs enters it too)
    await session.transport.aclose()  # type: ignore[union-attr]
    assert counted.entered == counted.left
    assert (await session.send("three")).status is MessageStatus.COMPLETED  # entered again
    await closed(session)


async def test_the_agents_toolsets_are_left_by_close_from_sync_code_too() -> None:
    counted = Counted()
    script = Script([[("ping", {})], "ok", [("ping", {})], "ok"])
    session = ChatSession.from_agent(greeter(script, toolsets=[counted]), deps=Deps("di"))
    transport: Any = session.transport
    await session.send("one")
    assert counted.entered - counted.left == 1
    transport.close()  # on the thread of the toolsets' loop (a cell): left as soon as the loop goes on
    await wait_for(lambda: counted.entered == counted.left)
    await session.send("two")  # entered again
    assert counted.entered - counted.left == 1
    await asyncio.to_thread(transport.close)  # from another thread: it returns once they are left
    assert counted.entered == counted.left
    transport.close()  # again: nothing held
    await transport.aclose()


SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "server.py"


async def test_an_mcp_toolset_prefixed_and_filtered_lists_and_runs_its_servers_tools() -> None:
    pytest.importorskip("fastmcp", reason="pydantic-ai's MCPToolset needs the fastmcp client (pydantic-ai-slim[mcp])")
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    client = Client(StdioTransport(command=sys.executable, args=[str(SERVER)]))
    toolset = MCPToolset(client).prefixed("srv").filtered(lambda ctx, d: d.name in ("srv_add", "srv_fail"))
    script = Script(
        [
            [("srv_add", {"a": 2, "b": 3})],
            [("srv_fail", {"reason": "nope"})],
            "five",
            [("srv_add", {"a": 1, "b": 1})],
            "two",
        ]
    )
    session = ChatSession.from_agent(greeter(script, toolsets=[toolset]), deps=Deps("x"))
    reply = await session.send("add")
    assert sorted(t.name for t in script.seen[0][1].function_tools) == ["greet", "srv_add", "srv_fail"]
    added, failed = reply.tool_calls
    assert added.outcome.value == 5
    assert failed.state is ToolCallState.FAILED
    assert failed.outcome.retryable
    assert "nope" in failed.outcome.message
    assert session.tools["srv_add"].definition.described_by is not None  # the server's words, not this kernel's
    assert (await session.send("again")).tool_calls[0].outcome.value == 2  # the connection is kept between turns
    await closed(session)


class Unreachable(Counted):
    """A toolset whose connection cannot be opened (a server that will not start), until it can."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = True

    async def __aenter__(self) -> Counted:
        if self.broken:
            raise ConnectionError("the server would not start")
        return await super().__aenter__()


async def test_a_toolset_that_cannot_start_ends_the_turn_saying_so_and_the_next_turn_tries_again() -> None:
    unreachable = Unreachable()
    script = Script([[("ping", {})], "ok"])
    session = ChatSession.from_agent(greeter(script, toolsets=[unreachable]), deps=Deps("gil"))
    reply = await session.send("one")
    assert reply.status is MessageStatus.ERROR
    assert "the toolsets of the agent could not be started" in (reply.error or "")
    assert "would not start" in (reply.error or "")
    unreachable.broken = False
    assert (await session.send("two")).tool_calls[0].outcome.value == "pong for gil"
    await closed(session)


# --- what is not carried over ------------------------------------------------------------------------------------


def test_without_pydantic_ai_from_agent_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = ("pydantic_ai", "ai_widgets.integrations", "ai_widgets.transports._pydantic_ai")
    for name in [n for n in sys.modules if n.startswith(ours)]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)  # what an import of a package not installed meets
    with pytest.raises(ImportError, match=r'pip install "ai_widgets\[pydantic-ai\]"'):
        ChatSession.from_agent(object())


def test_an_agent_without_a_model_is_a_clear_error() -> None:
    with pytest.raises(AgentNotSupportedError, match="has no model"):
        ChatSession.from_agent(Agent())


def test_not_an_agent_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"pydantic_ai\.Agent"):
        ChatSession.from_agent(TestModel())


class Answer(BaseModel):
    value: int


def test_pieces_the_session_cannot_carry_over_are_named_and_can_be_dropped() -> None:
    agent = Agent(TestModel(), output_type=Answer, capabilities=[ProcessHistory(lambda messages: messages[-3:])])
    with pytest.raises(AgentNotSupportedError) as raised:
        ChatSession.from_agent(agent)
    text = str(raised.value)
    assert "output type Answer" in text
    assert "ProcessHistory" in text
    assert "drop_unsupported=True" in text
    session = ChatSession.from_agent(agent, drop_unsupported=True)
    assert session.transport is not None
    with pytest.raises(AgentNotSupportedError, match="output type"):  # text or a number: not text alone
        ChatSession.from_agent(Agent(TestModel(), output_type=[str, int]))


def test_model_settings_computed_per_run_are_named() -> None:
    agent = Agent(TestModel(), model_settings=lambda ctx: {"temperature": 0.1})
    with pytest.raises(AgentNotSupportedError, match="model settings computed from RunContext"):
        ChatSession.from_agent(agent)


async def test_the_agents_model_settings_reach_the_model() -> None:
    script = Script(["hi"])
    session = ChatSession.from_agent(greeter(script, model_settings={"temperature": 0.3, "seed": 7}), deps=Deps("x"))
    await session.send("hello")
    settings = script.seen[0][1].model_settings or {}
    assert (settings.get("temperature"), settings.get("seed")) == (0.3, 7)
    await closed(session)


async def test_the_agents_transport_declares_its_models_profile() -> None:
    script = Script(["hi"])
    model = FunctionModel(stream_function=script, model_name="scripted-7", profile={"context_window": 32_000})
    agent: Agent[Deps, str] = Agent(model, deps_type=Deps, model_settings={"max_tokens": 700})
    session = ChatSession.from_agent(agent, deps=Deps("x"))
    assert session.transport is not None
    assert session.transport.profile == TransportProfile(
        model="scripted-7", context_window=32_000, max_output_tokens=700
    )
    await closed(session)


async def test_test_model_drives_the_agents_tools_with_its_model_settings() -> None:
    agent: Agent[Deps, str] = Agent(TestModel(), deps_type=Deps, model_settings={"temperature": 0.2})

    @agent.tool
    def lookup(ctx: RunContext[Deps], key: str) -> str:
        return f"{ctx.deps.user}:{key}"

    session = ChatSession.from_agent(agent, deps=Deps("ed"))
    reply = await session.send("look it up")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.tool_calls[0].outcome.value.startswith("ed:")
    await closed(session)


# --- the widget -------------------------------------------------------------------------------------------------------


async def test_chat_widget_takes_an_agent_and_its_deps(wire: Wire) -> None:
    script = Script([[("greet", {"times": 1})], "Greeted."])
    chat = ChatWidget(agent=greeter(script), deps=Deps("fay"), flush_interval=0)
    reply = await chat.ask("hello", show=False)
    assert reply.text == "Greeted."
    assert reply.tool_calls[0].outcome.value == "hi fay"
    assert "greet" in chat._tools
    await closed(chat.session)


def test_chat_widget_refuses_an_agent_with_a_session_or_transport_and_deps_without_an_agent(wire: Wire) -> None:
    agent = greeter(Script([]))
    session = ChatSession.from_agent(agent, deps=Deps("x"))
    with pytest.raises(TypeError, match="agent= alone"):
        ChatWidget(session, agent=agent)
    with pytest.raises(TypeError, match="agent= alone"):
        ChatWidget(transport=session.transport, agent=agent)
    with pytest.raises(TypeError, match="deps= goes with agent="):
        ChatWidget(transport=session.transport, deps=Deps("x"))


def test_the_sessions_own_checks_still_apply() -> None:
    messages = [Message(Role.USER), Message(Role.ASSISTANT)]
    with pytest.raises(ValueError, match="messages= or history="):
        ChatSession.from_agent(greeter(Script([])), messages=messages, history="x.json")
