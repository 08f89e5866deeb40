"""pydantic-ai in this project's session (``pip install "ai_widgets[pydantic-ai]"``): :class:`PydanticAITransport`
streams any model pydantic-ai supports (``"openai:gpt-5"``, ``"groq:..."``, ``"bedrock:..."``, a ``Model`` object)
through the session's own loop, tools and cards."""

from ai_widgets.integrations._pydantic_ai_model import PydanticAITransport

__all__ = ["PydanticAITransport"]
