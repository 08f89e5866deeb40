"""``ChatSession.from_agent``: a session that runs a pydantic-ai ``Agent``'s pieces (a base class of
:class:`~ai_widgets.session.ChatSession`). pydantic-ai is an optional extra, so its integration is imported only here,
when a person asks for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ai_widgets.tools import Tool, ToolRegistry, ToolSource

__all__ = ["AgentSession"]

_S = TypeVar("_S", bound="AgentSession")


class AgentSession:
    """Build a session from a pydantic-ai agent; the rest of the session is :class:`~ai_widgets.session.ChatSession`."""

    @classmethod
    def from_agent(
        cls: type[_S],
        agent: Any,
        *,
        deps: Any = None,
        drop_unsupported: bool = False,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None,
        **options: Any,
    ) -> _S:
        """A session whose turns run a pydantic-ai ``Agent``'s pieces in this project's loop: cards, approvals,
        edits, stop, limits and history files work as with any transport.

        Carried over: the agent's model (the transport, with its model settings); its instructions and system
        prompts, static or functions of ``RunContext``, rendered before every request and put first in the system
        prompt; its function tools and toolsets (MCP servers, combined, prefixed, filtered and prepared toolsets
        included), listed before every request and called through pydantic-ai's toolset API with a ``RunContext``
        carrying ``deps``, the model, the usage, the call's id and retry count; ``requires_approval`` tools and
        ``ApprovalRequired`` asking in the card; deferred and external tools waiting in the card for the person
        to type their result; ``ModelRetry`` as a failure the model sees, within the tool's retries.

        Args:
            agent: A ``pydantic_ai.Agent`` with a model.
            deps: The agent's dependencies (``ctx.deps`` for its tools, instructions and system prompts).
            drop_unsupported: Chat without the agent's pieces the session cannot carry over (output types,
                capabilities such as history processors, event stream handlers, model settings computed per run;
                each is logged) instead of refusing the agent.
            tools: More tools, beside the agent's (a :class:`ToolRegistry` gets the agent's tools added to it).
            **options: The session's other options, as :class:`ChatSession` takes them (``approval_policy``,
                ``options``, ``request_options``, ``context``, ``messages``, ``conversation_id``, ``history``).

        Raises:
            ImportError: pydantic-ai is not installed (``pip install "ai_widgets[pydantic-ai]"``).
            TypeError: ``agent`` is not a pydantic-ai ``Agent``, or an option is unknown.
            AgentNotSupportedError: The agent has no model, or pieces that cannot be carried over (named).
        """
        try:
            from ai_widgets.integrations import pydantic_ai  # optional: imported only for an agent
        except ImportError as exc:
            if not (exc.name or "").startswith("pydantic_ai"):
                raise
            raise ImportError(
                'ChatSession.from_agent needs pydantic-ai: pip install "ai_widgets[pydantic-ai]"', name=exc.name
            ) from exc
        parts = pydantic_ai.agent_parts(agent, deps=deps, drop_unsupported=drop_unsupported)
        if isinstance(tools, ToolRegistry):
            tools.add(parts.tools)
            registry: ToolRegistry | list[Tool | Callable[..., Any] | ToolSource] = tools
        else:
            registry = [parts.tools, *(tools or ())]
        made: Any = cls
        session: _S = made(parts.transport, tools=registry, **options)
        return session
