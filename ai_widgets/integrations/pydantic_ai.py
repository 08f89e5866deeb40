"""pydantic-ai in this project's session (``pip install "ai_widgets[pydantic-ai]"``): :class:`PydanticAITransport`
streams any model pydantic-ai supports (``"openai:gpt-5"``, ``"groq:..."``, ``"bedrock:..."``, a ``Model`` object)
through the session's own loop, tools and cards; :func:`agent_parts` (what ``ChatSession.from_agent`` and
``ChatWidget(agent=...)`` run) takes a pydantic-ai ``Agent``'s model, instructions, tools and toolsets into it."""

from ai_widgets.integrations._pydantic_ai_agent import AgentNotSupportedError, AgentParts, AgentTransport, agent_parts
from ai_widgets.integrations._pydantic_ai_model import PydanticAITransport
from ai_widgets.integrations._pydantic_ai_tools import AgentTools

__all__ = ["AgentNotSupportedError", "AgentParts", "AgentTools", "AgentTransport", "PydanticAITransport", "agent_parts"]
