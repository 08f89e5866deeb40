"""Agents built elsewhere, in the cell: each integration is its own module and imports its framework only when it
is imported (``pip install "ai_widgets[pydantic-ai]"``, ``"ai_widgets[ag-ui]"``).

- :mod:`ai_widgets.integrations.pydantic_ai`: a pydantic-ai ``Agent`` (``ChatSession.from_agent``) or any model it
  supports (``PydanticAITransport``) in this project's session.
- :mod:`ai_widgets.integrations.ag_ui`: a remote agent served over AG-UI (``AGUITransport``).

Beside them, ``_by_name`` builds the transport a model string names (``ChatSession(model="openai:gpt-5-mini")``):
one of its prefixes is pydantic-ai's, whose transport is here, so this is the lowest floor that sees every transport.
"""
