"""Each provider's tool JSON: a tool's definition as each provider receives it, the one mapping the transports put
in their requests.

Pure functions of a :class:`~ai_widgets.tools.ToolDefinition`, with no provider SDK imported, so a tool's display
and ``Tool.check()`` show and check exactly what the transports send (the transports call these; nothing else builds
a provider's tool JSON). Each returns a new dict; the schema inside it is the definition's own ``parameters``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ai_widgets.tools._definition import ToolDefinition

__all__ = [
    "OPENAI_STRICT",
    "PROVIDER_FORMATS",
    "PROVIDER_LABELS",
    "anthropic_tool",
    "gemini_function_declaration",
    "openai_chat_tool",
    "openai_responses_tool",
    "openai_strict",
]

JSON = dict[str, Any]

#: Whether the OpenAI transports ask for strict mode (Structured Outputs) on function tools. They do not: strict mode
#: accepts only a subset of JSON Schema (every property required, ``additionalProperties: false`` on every object,
#: no ``allOf``/``not``/``if``), which most derived schemas are not (a parameter with a default is optional), and
#: arguments are validated against the schema before any tool runs anyway. Chat Completions leaves ``strict`` out
#: (off by default there: openai/types/shared_params/function_definition.py); Responses sends ``"strict": false``
#: (a required field there, openai/types/responses/function_tool_param.py, which the API's reference defaults to on).
OPENAI_STRICT = False


def openai_chat_tool(definition: ToolDefinition) -> JSON:
    """An entry of Chat Completions' ``tools``: ``{"type": "function", "function": {name, description, parameters}}``
    (``strict`` left out, so off, unless :data:`OPENAI_STRICT`)."""
    function = definition.model_schema()
    if OPENAI_STRICT:
        function["strict"] = True
    return {"type": "function", "function": function}


def openai_responses_tool(definition: ToolDefinition) -> JSON:
    """An entry of the Responses API's ``tools``: ``{"type": "function", name, description, parameters, "strict"}``
    with ``strict`` as :data:`OPENAI_STRICT`."""
    return {"type": "function", **definition.model_schema(), "strict": OPENAI_STRICT}


def anthropic_tool(definition: ToolDefinition) -> JSON:
    """An entry of Anthropic Messages' ``tools``: ``{name, description, input_schema}``."""
    return {"name": definition.name, "description": definition.description, "input_schema": definition.parameters}


def gemini_function_declaration(definition: ToolDefinition) -> JSON:
    """An entry of Gemini's ``tools[0].functionDeclarations``: ``name``, ``description`` (left out when empty) and
    the JSON Schema as it is in ``parametersJsonSchema`` (not the OpenAPI-subset ``parameters`` field)."""
    declaration: JSON = {"name": definition.name}
    if definition.description:
        declaration["description"] = definition.description
    declaration["parametersJsonSchema"] = definition.parameters
    return declaration


def openai_strict(tool_json: JSON) -> bool:
    """Whether an OpenAI tool entry (Chat or Responses form) asks for strict mode."""
    function = tool_json.get("function")
    holder = function if isinstance(function, dict) else tool_json
    return holder.get("strict") is True


#: Each provider API's tool mapping, in display order (the keys of ``provider_definitions``).
PROVIDER_FORMATS: dict[str, Callable[[ToolDefinition], JSON]] = {
    "openai_chat": openai_chat_tool,
    "openai_responses": openai_responses_tool,
    "anthropic": anthropic_tool,
    "gemini": gemini_function_declaration,
}

#: What a person calls each of them.
PROVIDER_LABELS: dict[str, str] = {
    "openai_chat": "OpenAI Chat Completions",
    "openai_responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "gemini": "Gemini (functionDeclarations)",
}
