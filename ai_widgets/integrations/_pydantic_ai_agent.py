"""A pydantic-ai ``Agent``'s pieces for this project's session (:func:`agent_parts`, used by
``ChatSession.from_agent``): its model as the transport, its instructions and system prompts as the system prompt,
its tools and toolsets as tools (:mod:`ai_widgets.integrations._pydantic_ai_tools`), its model settings.

The session's own loop runs the turn (cards, approvals, edits, stop, limits, history files), so what an agent's own
run loop would do and the session does not (output validators, history processors, event handlers, capabilities)
is not carried over: :func:`agent_parts` refuses an agent that has such a piece, naming it, unless the person says
to go without (``drop_unsupported=True``).

Instructions and system prompts that are functions of ``RunContext`` are rendered before every request through
pydantic-ai's public API: the agent is run up to its model request, on a ``FunctionModel`` that records what it
would be sent (the instructions, the system prompt parts, its tools' retry budget) and stops the run there. An agent
whose parts are all static strings (as pydantic-ai marks them) is probed once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import types
import typing
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, SystemPromptPart
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ToolsetTool
from pydantic_ai.usage import RunUsage

from ai_widgets.events import StreamEvent, UsageUpdate
from ai_widgets.integrations._pydantic_ai_tools import AgentTools
from ai_widgets.transports._base import ChatRequest, Transport, TransportProfile
from ai_widgets.transports._pydantic_ai import PydanticAITransport

__all__ = ["AgentNotSupportedError", "AgentParts", "AgentTransport", "agent_parts"]

logger = logging.getLogger("ai_widgets")


class AgentNotSupportedError(ValueError):
    """The agent has a piece this project's session cannot carry over, so a run here would behave differently from
    the agent's own run (the message names each piece, and how to go on)."""


@dataclass
class Seen:
    """What the agent would send with a request, as a probe run saw it."""

    instructions: str | None = None
    system_prompts: list[str] = field(default_factory=list)
    max_retries: int = 1
    dynamic: bool = True  # some part is a function of RunContext (or a toolset's), so it is rendered again each time


class Probed(Exception):
    """Stops a probe run at its model request, once what it would send is recorded."""


class Spy(AbstractToolset[Any]):
    """A toolset offering nothing, which records the run's ``RunContext`` (its tools' retry budget)."""

    def __init__(self, seen: Seen) -> None:
        self._seen = seen

    @property
    def id(self) -> str:
        return "ai_widgets_probe"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        self._seen.max_retries = ctx.max_retries
        return {}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        raise RuntimeError("the probe offers no tools")  # never listed, so never called


class AgentParts:
    """A pydantic-ai agent's pieces for a session: :attr:`transport` and :attr:`tools`.

    Attributes:
        agent: The agent.
        deps: What every ``RunContext`` carries as ``deps``.
        model: The agent's model.
        usage: The tokens and requests of the conversation so far, as every ``RunContext`` carries them.
        transport: The agent's model, with its instructions and system prompts rendered before every request.
        tools: The agent's tools and toolsets, a source of tools listed before every request.
    """

    def __init__(self, agent: Agent[Any, Any], *, deps: Any, model: Model, settings: Any) -> None:
        self.agent = agent
        self.deps = deps
        self.model = model
        self.usage = RunUsage()
        self._run_step = 0
        self._seen = Seen()
        label = f"the agent {agent.name!r}" if agent.name else "the agent"
        self.transport = AgentTransport(PydanticAITransport(model, settings=settings), self)
        self.tools = AgentTools(
            CombinedToolset(list(agent.toolsets)),
            context=self.context,
            step=self._next_step,
            label=label,
        )

    def _next_step(self) -> None:
        self._run_step += 1

    def context(self) -> RunContext[Any]:
        """The ``RunContext`` of the current request: deps, model, usage, the agent, the step, the retry budget."""
        return RunContext(
            deps=self.deps,
            model=self.model,
            usage=self.usage,
            agent=self.agent,
            run_step=self._run_step,
            max_retries=self._seen.max_retries,
        )

    async def probe(self, prompt: str, messages: Sequence[ModelMessage] = ()) -> Seen:
        """Renders what the agent would send with a request: its instructions, its system prompts and its tools'
        retry budget, through a run stopped at its model request (see the module's doc).

        Raises:
            Exception: An instruction or system prompt function raised (its error, as it raised it).
        """
        seen = Seen(max_retries=self._seen.max_retries)

        def record(sent: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.instructions = info.instructions or None
            prompts = [
                part
                for message in sent
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, SystemPromptPart) and part.content
            ]
            seen.system_prompts = [part.content for part in prompts]
            instruction_parts = info.model_request_parameters.instruction_parts or ()
            seen.dynamic = any(part.dynamic for part in instruction_parts) or any(p.dynamic_ref for p in prompts)
            raise Probed

        with contextlib.suppress(Probed):
            await self.agent.run(
                prompt or "(no text)",
                model=FunctionModel(record),
                deps=self.deps,
                message_history=list(messages) or None,
                toolsets=[Spy(seen)],
            )
        self._seen = seen
        return seen

    async def rendered(self, prompt: str) -> Seen:
        """What the agent sends with the next request: probed again unless the last probe found it all static."""
        seen = self._seen
        return await self.probe(prompt) if seen.dynamic else seen

    async def aclose(self) -> None:
        """Leaves the agent's toolsets (closes its MCP servers' connections)."""
        await self.tools.aclose()

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code (see :meth:`AgentTools.close`)."""
        self.tools.close()


class AgentTransport:
    """The agent's model as a transport (:class:`~ai_widgets.transports.PydanticAITransport`), with the
    agent's instructions and system prompts rendered before every request and put first in its system prompt (the
    session's own ``RequestOptions.system_prompt`` after them), and its usage counted for ``RunContext.usage``.
    Its profile (model, context window, output limit) is the model transport's (:attr:`inner`)."""

    def __init__(self, inner: Transport, parts: AgentParts) -> None:
        self.inner = inner
        self._parts = parts

    @property
    def profile(self) -> TransportProfile:
        """The model transport's profile."""
        return self.inner.profile

    def __repr__(self) -> str:
        return f"AgentTransport({self.inner!r})"

    async def aclose(self) -> None:
        """Leaves the agent's toolsets (closes its MCP servers' connections); the next request enters them again.
        ``await session.transport.aclose()`` for a session from ``ChatSession.from_agent``."""
        await self._parts.aclose()

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code: ``session.transport.close()`` in a cell (see
        :meth:`AgentTools.close`)."""
        self._parts.close()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``, its system prompt led by the agent's.

        Raises:
            Exception: What the agent's instruction functions or the model transport raised.
        """
        parts = self._parts
        seen = await parts.rendered(request.last_user_text)
        pieces = [*seen.system_prompts, seen.instructions, request.options.system_prompt]
        system = "\n\n".join(piece for piece in pieces if piece) or None
        sent = dataclasses.replace(request, options=dataclasses.replace(request.options, system_prompt=system))
        last: UsageUpdate | None = None
        async for event in self.inner.stream(sent):
            if isinstance(event, UsageUpdate):
                last = event
            yield event
        parts.usage.requests += 1
        if last is not None:
            parts.usage.input_tokens += last.input_tokens or 0
            parts.usage.output_tokens += last.output_tokens or 0


def agent_parts(agent: Any, *, deps: Any = None, drop_unsupported: bool = False) -> AgentParts:
    """A pydantic-ai agent's pieces for this project's session (what ``ChatSession.from_agent`` runs).

    Args:
        agent: A ``pydantic_ai.Agent`` with a model.
        deps: The agent's dependencies, handed to its tools, instructions and system prompts as ``ctx.deps``.
        drop_unsupported: Go on without the agent's pieces the session cannot carry over (each is logged as a
            warning) rather than refusing the agent.

    Raises:
        TypeError: ``agent`` is not a pydantic-ai ``Agent``.
        AgentNotSupportedError: The agent has no model, or (without ``drop_unsupported``) has pieces the session
            cannot carry over; the message names them.
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"from_agent needs a pydantic_ai.Agent, not {type(agent).__name__}")
    if agent.model is None:
        raise AgentNotSupportedError(
            "the agent has no model: give it one (Agent('openai:gpt-5', ...), or agent.model = ...) before chatting"
        )
    model = infer_model(agent.model)
    settings = agent.model_settings
    dropped = not_carried_over(agent)
    if callable(settings):
        dropped.append("model settings computed from RunContext (a function as model_settings)")
        settings = None
    if dropped and not drop_unsupported:
        raise AgentNotSupportedError(
            "this agent has pieces the chat session cannot carry over, so it would behave differently here: "
            + "; ".join(dropped)
            + ". Remove them, or pass drop_unsupported=True to chat without them."
        )
    for piece in dropped:
        logger.warning("ai_widgets: the agent's %s is not carried over into the chat session", piece)
    return AgentParts(agent, deps=deps, model=model, settings=settings)


def not_carried_over(agent: Agent[Any, Any]) -> list[str]:
    """The agent's pieces the session's loop would not honour, in words."""
    found = []
    if not text_output(agent.output_type):
        found.append(
            f"output type {getattr(agent.output_type, '__name__', repr(agent.output_type))} (ask for a typed "
            "answer per message instead: session.send(text, output_type=...) or chat.ask(text, output_type=...))"
        )
    if agent.event_stream_handler is not None:
        found.append("event stream handler (the session's observers see every event: session.subscribe)")
    extra = [type(c).__name__ for c in agent.root_capability.capabilities if type(c) not in default_capabilities()]
    if extra:
        found.append(f"capabilities {', '.join(extra)} (history processors, hooks and the like run in its own loop)")
    return found


def text_output(output_type: object) -> bool:
    """Whether an agent's output is text: ``str``, or ``str`` with ``DeferredToolRequests`` (which pydantic-ai needs
    beside an approval-required tool, so a run can end with the calls waiting; here they wait in their cards)."""
    members: list[object] = []
    pending = [output_type]
    while pending:
        spec = pending.pop()
        if isinstance(spec, (list, tuple)):
            pending.extend(spec)
        elif typing.get_origin(spec) in (typing.Union, types.UnionType):
            pending.extend(typing.get_args(spec))
        else:
            members.append(spec)
    return str in members and all(m is str or m is DeferredToolRequests for m in members)


DEFAULTS: set[type] = set()


def default_capabilities() -> set[type]:
    """The capabilities every agent has without being given any (those of a bare ``Agent()``)."""
    if not DEFAULTS:
        DEFAULTS.update(type(c) for c in Agent().root_capability.capabilities)
    return DEFAULTS
