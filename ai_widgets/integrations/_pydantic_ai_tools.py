"""A pydantic-ai agent's tools and toolsets as a source of this project's tools (:class:`AgentTools`).

Every request lists them through pydantic-ai's public toolset API (``get_tools(ctx)``), so a toolset's own changes
(``prepare`` functions, filtered and prefixed toolsets, an MCP server's new tools) are followed; every call runs
through ``call_tool(...)`` with a ``RunContext`` carrying the agent's ``deps``, its model, the usage so far, the call's
id and its retry count, after its arguments are validated by the tool's own validator, as pydantic-ai does. The
session asks, runs, cancels and records as for any tool.

What a tool raises becomes what a person in a notebook expects: ``ModelRetry`` a failure the model sees and may
correct (up to the tool's ``max_retries``), ``ToolFailed`` a failure it should not retry, ``ApprovalRequired`` the
approval question in the card (the tool runs again, approved, with the arguments as the person left them), and a
deferred call (``CallDeferred``, an ``ExternalToolset``'s tool) a form in the card where the person types the result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pydantic_core
from pydantic import ValidationError
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
from pydantic_ai.messages import ToolReturn
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, ToolsetTool

from ai_widgets._threads import running_loop
from ai_widgets.messages import InputRequest
from ai_widgets.tools import Tool, ToolDefinition, ToolInvocation, ToolOutcome, parse_arguments

__all__ = ["AgentTools"]

logger = logging.getLogger("ai_widgets")

#: How long a close from another thread waits for the toolsets to be left (an MCP server's process to stop).
CLOSE_TIMEOUT = 15.0

#: What the person fills in for a deferred call: the result the model gets.
RESULT_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "result": {
            "type": "string",
            "title": "Result",
            "description": "What the call returned, as the model should read it (JSON or text).",
        }
    },
    "required": ["result"],
}


class AgentTools:
    """A pydantic-ai agent's toolsets as a :class:`~ai_widgets.tools.ToolSource` (add it to a session's tools).

    The toolsets (an MCP server's connection, say) are entered on first use by a task of their own on the loop that
    uses them, and left by :meth:`aclose`.

    Args:
        toolset: The agent's toolsets, combined (``CombinedToolset(agent.toolsets)``).
        context: Builds the ``RunContext`` of the current request (deps, model, usage, the agent, the retries'
            budget, the step); see :class:`~ai_widgets.integrations._pydantic_ai_agent.AgentParts`.
        step: Counts a step (a model request, whose tools are listed first), as ``RunContext.run_step`` does.
        label: Who owns these tools, as a sentence names them ("the agent 'support'").
    """

    def __init__(
        self,
        toolset: AbstractToolset[Any],
        *,
        context: Callable[[], RunContext[Any]],
        step: Callable[[], None],
        label: str,
    ) -> None:
        self._toolset = toolset
        # The toolsets as this conversation's "run" has them (for_run), then as the current step has them
        # (for_run_step: a toolset built per step by a function of RunContext, @agent.toolset, is built there).
        self._active: AbstractToolset[Any] = toolset
        self._context = context
        self._step = step
        self.label = label
        self._listed: dict[str, ToolsetTool[Any]] = {}
        self._tools: dict[str, Tool] = {}
        # Failures in a row per tool (ModelRetry, invalid arguments): RunContext.retry, held to max_retries.
        self._retries: dict[str, int] = {}
        self._holder: asyncio.Task[None] | None = None
        self._leave: asyncio.Event | None = None

    def __repr__(self) -> str:
        return f"AgentTools({self.label})"

    # --- entering the toolsets ----------------------------------------------------------------------------------

    async def _enter(self) -> None:
        """Enters the toolsets once per loop, in a task that holds them: an MCP server's connection is opened and
        closed by one task, as its cancel scopes require, whichever turn first needs it."""
        loop = asyncio.get_running_loop()
        holder = self._holder
        if holder is not None and not holder.done() and holder.get_loop() is loop:
            return
        entered: asyncio.Future[None] = loop.create_future()
        leave = asyncio.Event()

        async def hold() -> None:
            try:
                active = await self._toolset.for_run(self._context())
                async with active:
                    self._active = active
                    entered.set_result(None)
                    await leave.wait()
            except BaseException as exc:
                if not entered.done():
                    entered.set_exception(exc)
                    return
                raise

        self._holder, self._leave = loop.create_task(hold(), name=f"ai_widgets: {self.label}'s toolsets"), leave
        try:
            await entered
        except BaseException as exc:
            self._holder = self._leave = None
            raise RuntimeError(f"the toolsets of {self.label} could not be started: {exc}") from exc

    async def aclose(self) -> None:
        """Leaves the toolsets (closes an MCP server's connection), from any loop, and waits until they are left; the
        next use enters them again."""
        holder = self._let_go()
        if holder is None:
            return
        loop = holder.get_loop()
        if loop is asyncio.get_running_loop():
            await asyncio.wait({holder})
        elif loop.is_running():
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.wait({holder}), loop))

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code. From another thread it waits (up to a few seconds) until the
        toolsets are left; on the thread of the loop that holds them (a cell in a kernel) it cannot wait, so they
        are left as soon as that loop goes on."""
        holder = self._let_go()
        if holder is None:
            return
        loop = holder.get_loop()
        if running_loop() is not loop and loop.is_running():
            with contextlib.suppress(concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(asyncio.wait({holder}), loop).result(CLOSE_TIMEOUT)

    def _let_go(self) -> asyncio.Task[None] | None:
        """Tells the task that holds the toolsets to leave them, on its loop, and forgets it; returns it (``None``:
        nothing is held)."""
        holder, leave = self._holder, self._leave
        self._holder = self._leave = None
        if holder is None or leave is None or holder.done() or holder.get_loop().is_closed():
            return None
        loop = holder.get_loop()
        if running_loop() is loop:
            leave.set()
        else:
            loop.call_soon_threadsafe(leave.set)  # an asyncio.Event is set on its own loop
        return holder

    # --- listing ------------------------------------------------------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        """The agent's tools as the toolsets list them now (``get_tools``), output tools left out.

        Raises:
            RuntimeError: The toolsets could not be started or listed (the message names the agent).
            ValueError: A tool's name or schema cannot be offered (the message names it).
        """
        await self._enter()
        self._step()
        try:
            ctx = self._context()
            self._active = await self._active.for_run_step(ctx)
            listed = await self._active.get_tools(ctx)
        except Exception as exc:
            raise RuntimeError(f"the tools of {self.label} could not be listed: {exc}") from exc
        tools: dict[str, Tool] = {}
        for name, listed_tool in listed.items():
            spec = listed_tool.tool_def
            if spec.kind == "output":
                continue
            definition = self._definition(name, listed_tool)
            kept = self._tools.get(name)
            tools[name] = kept if kept is not None and kept.definition == definition else self._tool(definition)
        self._listed, self._tools = listed, tools
        return list(tools.values())

    def _definition(self, name: str, listed_tool: ToolsetTool[Any]) -> ToolDefinition:
        spec = listed_tool.tool_def
        parameters = dict(spec.parameters_json_schema or {"type": "object", "properties": {}})
        parameters.setdefault("type", "object")
        try:
            return ToolDefinition(
                name=name,
                description=spec.description or "",
                parameters=parameters,
                requires_approval=spec.kind == "unapproved",
                sequential=bool(spec.sequential),
                # Whose words the description is when not this kernel's functions (an MCP server's), for the checks.
                described_by=None
                if isinstance(listed_tool.toolset, FunctionToolset)
                else f"{self.label} ({listed_tool.toolset.label})",
            )
        except ValueError as exc:
            raise ValueError(f"{self.label}: its tool {name!r} cannot be offered: {exc}") from None

    def _tool(self, definition: ToolDefinition) -> Tool:
        name = definition.name

        async def call(invocation: ToolInvocation) -> ToolOutcome:
            return await self._call(name, invocation)

        call.__name__ = call.__qualname__ = f"agent_tool_{name}"
        return AgentTool(definition, call, self)

    # --- calling ------------------------------------------------------------------------------------------------

    async def _call(self, name: str, invocation: ToolInvocation) -> ToolOutcome:
        listed_tool = self._listed.get(name)
        if listed_tool is None:
            return ToolOutcome.failure(f"The tool {name} is no longer offered by {self.label}.", retryable=False)
        ctx = dataclasses.replace(
            self._context(),
            tool_name=name,
            tool_call_id=invocation.tool_call_id,
            retry=self._retries.get(name, 0),
            retries=dict(self._retries),
            max_retries=listed_tool.max_retries,
            # A tool marked requires_approval runs only once the person allowed it (the session asked first).
            tool_call_approved=listed_tool.tool_def.kind == "unapproved",
        )
        if listed_tool.tool_def.kind == "external":
            return await self._ask_result(invocation, name, None)
        while True:
            arguments = call_arguments(invocation)
            if isinstance(arguments, ToolOutcome):
                return arguments
            try:
                validated = listed_tool.args_validator.validate_python(arguments, context=ctx.validation_context)
                if listed_tool.args_validator_func is not None:
                    checked = listed_tool.args_validator_func(ctx, **validated)
                    if inspect.isawaitable(checked):
                        await checked
                result = await self._active.call_tool(name, validated, ctx, listed_tool)
            except ValidationError as exc:
                return self._retry(name, listed_tool, invalid(name, exc), exc)
            except ModelRetry as exc:
                return self._retry(name, listed_tool, exc.message, exc)
            except ToolFailed as exc:
                self._retries.pop(name, None)
                return ToolOutcome.failure(exc.message, retryable=False, error=exc)
            except ApprovalRequired as exc:
                if ctx.tool_call_approved:
                    return ToolOutcome.failure(
                        f"The tool {name} asked for approval again after the person approved it; it was not run.",
                        retryable=False,
                        error=exc,
                    )
                if not await invocation.ask_approval(approval_question(name, exc.metadata)):
                    return ToolOutcome.failure("The person declined this call, so nothing was done.")
                ctx = dataclasses.replace(ctx, tool_call_approved=True, tool_call_metadata=exc.metadata)
                continue
            except CallDeferred as exc:
                return await self._ask_result(invocation, name, exc.metadata)
            self._retries.pop(name, None)
            return outcome(name, result)

    def check(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any] | ToolOutcome:
        """The arguments as the tool's own validator reads them (pydantic's lax mode: ``"3"`` is 3), or the failure
        the model is told; what the card checks before anyone is asked, and an edit before it is taken."""
        listed_tool = self._listed.get(name)
        if listed_tool is None:
            return ToolOutcome.failure(f"The tool {name} is no longer offered by {self.label}.", retryable=False)
        try:
            return dict(listed_tool.args_validator.validate_python(dict(arguments)))
        except ValidationError as exc:
            return ToolOutcome.failure(invalid(name, exc), retryable=True, error=exc)

    def _retry(self, name: str, listed_tool: ToolsetTool[Any], message: str, error: Exception) -> ToolOutcome:
        """A failure the model may correct, counted against the tool's ``max_retries`` as pydantic-ai counts it."""
        failures = self._retries.get(name, 0)
        if failures >= listed_tool.max_retries:
            self._retries.pop(name, None)
            return ToolOutcome.failure(
                f"{message}\n\nThe tool {name} has failed {failures + 1} times in a row, more than its "
                f"{listed_tool.max_retries} retries allow: do not call it again with these arguments.",
                retryable=False,
                error=error,
            )
        self._retries[name] = failures + 1
        return ToolOutcome.failure(f"{message}\n\nFix the errors and try again.", retryable=True, error=error)

    async def _ask_result(self, invocation: ToolInvocation, name: str, metadata: Any) -> ToolOutcome:
        """A deferred call (its result comes from outside this run): the person types the result in the card."""
        shown = json.dumps(invocation.parsed_arguments or {}, ensure_ascii=False)[:1500]
        lines = [f"The tool {name} of {self.label} runs outside this kernel: give its result.", f"Arguments: {shown}"]
        if metadata is not None:
            lines.append(f"Metadata: {json.dumps(metadata, ensure_ascii=False, default=str)[:800]}")
        request = InputRequest("\n".join(lines), schema=RESULT_FORM, asker=self.label)
        response = await invocation.ask_person(request)
        if response.action == "accept" and response.content is not None:
            text = str(response.content.get("result", ""))
            parsed = parse_arguments(text) if text.lstrip().startswith("{") else text
            return ToolOutcome.success(parsed if isinstance(parsed, dict) else text)
        if response.action == "decline":
            return ToolOutcome.failure(
                f"The person declined to give a result for the call of {name}; nothing was done.", retryable=False
            )
        return ToolOutcome.failure(f"The call of {name} was cancelled before a result was given.", retryable=False)


class AgentTool(Tool):
    """An agent's tool: its arguments checked by pydantic-ai's validator for it, not by the JSON Schema alone."""

    def __init__(self, definition: ToolDefinition, handler: Callable[..., Any], source: AgentTools) -> None:
        super().__init__(definition, handler)
        self._source = source

    def bind(self, arguments: str | Mapping[str, Any]) -> dict[str, Any] | ToolOutcome:
        """Validates arguments with the tool's own validator (see :meth:`AgentTools.check`)."""
        if isinstance(arguments, str):
            parsed = parse_arguments(arguments)
            if isinstance(parsed, str):
                return ToolOutcome.failure(f"The arguments for {self.name} are not valid JSON ({parsed}).")
            arguments = parsed
        return self._source.check(self.name, arguments)


def invalid(name: str, error: ValidationError) -> str:
    problems = json.dumps(error.errors(include_url=False, include_context=False), default=str)
    return f"Invalid arguments for {name}: {problems}"


def call_arguments(invocation: ToolInvocation) -> dict[str, Any] | ToolOutcome:
    """The arguments the call runs with: the one parse the person saw (their edit, when they changed them)."""
    if invocation.parsed_arguments is not None:
        return dict(invocation.parsed_arguments)
    parsed = parse_arguments(invocation.arguments)
    if isinstance(parsed, str):
        return ToolOutcome.failure(f"The arguments are not a valid JSON object ({parsed}).")
    return parsed


def approval_question(name: str, metadata: Any) -> str:
    question = f"The tool {name} asks for approval before it goes on."
    if metadata:
        question += f" It says: {json.dumps(metadata, ensure_ascii=False, default=str)[:800]}"
    return question


def outcome(name: str, result: Any) -> ToolOutcome:
    """What a tool returned, as the model gets it: a ``ToolReturn``'s value (its extra content as text), a
    pydantic model or dataclass as JSON data, anything else as pydantic-ai would serialize it."""
    text = None
    if isinstance(result, ToolReturn):
        if isinstance(result.content, str):
            text = result.content
        result = result.return_value
    try:
        value = pydantic_core.to_jsonable_python(result)
    except pydantic_core.PydanticSerializationError as exc:
        return ToolOutcome.failure(
            f"The tool {name} returned a value that cannot be sent to the model: {exc}.", retryable=False, error=exc
        )
    if text is not None:
        # The model reads the text when there is no value: the return value and the content, as pydantic-ai sends both.
        return ToolOutcome.success(text=f"{json.dumps(value, ensure_ascii=False, default=str)}\n\n{text}")
    return ToolOutcome.success(value)
