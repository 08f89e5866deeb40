"""Agents built elsewhere that use this project's session and its tools: each integration is its own module and
imports its framework only when it is imported (``pip install "ai_widgets[pydantic-ai]"``).

- :mod:`ai_widgets.integrations.pydantic_ai`: a pydantic-ai ``Agent`` (``ChatSession.from_agent``): its model, its
  instructions, its tools and toolsets.
- :mod:`ai_widgets.integrations.acp`: an agent people already run (Claude Code, Codex, Gemini CLI) over the Agent
  Client Protocol, as a subprocess (``ACPTransport``, ``ChatWidget(acp=[command, *args])``;
  ``pip install "ai_widgets[acp]"``).

The transports such agents talk through live in :mod:`ai_widgets.transports` (``PydanticAITransport``,
``AGUITransport``); :mod:`ai_widgets.integrations.ag_ui` keeps ``AGUITransport`` by the path DESIGN.md names.

Beside them, ``_by_name`` builds the transport a model string names (``ChatSession(model="openai:gpt-5-mini")``): the
session may import this floor but no provider's transport module, and this floor sees every transport.
"""
