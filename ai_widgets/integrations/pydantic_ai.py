"""A pydantic-ai ``Agent`` in this project's session (``pip install "ai_widgets[pydantic-ai]"``): :func:`agent_parts`
(what ``ChatSession.from_agent`` and ``ChatWidget(agent=...)`` run) takes its model, instructions, tools and toolsets
into it. :class:`PydanticAITransport`, which streams any model pydantic-ai supports (``"openai:gpt-5"``,
``"groq:..."``, ``"bedrock:..."``, a ``Model`` object) through the session's own loop, lives with the other
transports (``ai_widgets.transports.PydanticAITransport``) and is the same class here."""

from ai_widgets.integrations._pydantic_ai_agent import AgentNotSupportedError, AgentParts, AgentTransport, agent_parts
from ai_widgets.integrations._pydantic_ai_tools import AgentTools
from ai_widgets.transports._pydantic_ai import PydanticAITransport

__all__ = ["AgentNotSupportedError", "AgentParts", "AgentTools", "AgentTransport", "PydanticAITransport", "agent_parts"]
