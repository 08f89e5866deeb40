"""Each provider's native structured output: where a request asks for ``ChatRequest.output_schema``, the one mapping
the transports put in their bodies.

The session validates the answer's text whatever the provider did with the schema (see
:mod:`ai_widgets.session._output`), so these only have to ask: strictly where the provider's strict mode takes the
schema, as it is otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from ai_widgets.tools._checks import openai_strict_problems

__all__ = [
    "anthropic_output_config",
    "gemini_generation_config",
    "openai_chat_response_format",
    "openai_responses_text_format",
    "output_name",
]

JSON = dict[str, Any]

#: The name OpenAI's ``json_schema`` format needs: ``^[a-zA-Z0-9_-]{1,64}$``
#: (openai/types/shared_params/response_format_json_schema.py).
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


def output_name(schema: JSON) -> str:
    """The schema's name for OpenAI: its ``title`` made to fit, or ``"response"``."""
    title = schema.get("title")
    name = _NOT_IN_NAME.sub("_", title).strip("_")[:64] if isinstance(title, str) else ""
    return name or "response"


def _strict(schema: JSON) -> bool:
    # The rules Tool.check() reports for tools (tools/_checks.py): every property required, every object closed,
    # no allOf/oneOf/not/if. A type with a default or an open dict is asked for without strict mode.
    return not openai_strict_problems(schema)


def openai_chat_response_format(schema: JSON) -> JSON:
    """Chat Completions' ``response_format``: ``{"type": "json_schema", "json_schema": {name, schema, strict}}``."""
    return {
        "type": "json_schema",
        "json_schema": {"name": output_name(schema), "schema": schema, "strict": _strict(schema)},
    }


def openai_responses_text_format(schema: JSON) -> JSON:
    """The Responses API's ``text.format``: ``{"type": "json_schema", name, schema, strict}``."""
    return {"type": "json_schema", "name": output_name(schema), "schema": schema, "strict": _strict(schema)}


def anthropic_output_config(schema: JSON) -> JSON:
    """Anthropic Messages' ``output_config``: ``{"format": {"type": "json_schema", "schema": ...}}`` (structured
    outputs: anthropic/types/output_config_param.py; the answer comes as the reply's text)."""
    return {"format": {"type": "json_schema", "schema": schema}}


def gemini_generation_config(schema: JSON) -> JSON:
    """What Gemini's ``generationConfig`` gets: ``responseMimeType: "application/json"`` and the JSON Schema as it
    is in ``responseJsonSchema`` (not the OpenAPI-subset ``responseSchema``), as tools use ``parametersJsonSchema``."""
    return {"responseMimeType": "application/json", "responseJsonSchema": schema}
