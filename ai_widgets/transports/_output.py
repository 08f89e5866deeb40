"""Each provider's native structured output: where a request asks for ``ChatRequest.output_schema``, the one mapping
the transports put in their bodies.

The session validates the answer's text whatever the provider did with the schema (see
:mod:`ai_widgets.session._output`), so these only have to ask: strictly where the provider's strict mode takes the
schema, as it is otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ai_widgets.tools._checks import openai_strict_problems

__all__ = [
    "anthropic_output_config",
    "anthropic_schema",
    "gemini_generation_config",
    "gemini_takes_schema_with_tools",
    "json_instruction",
    "openai_chat_response_format",
    "openai_responses_text_format",
    "output_name",
]

JSON = dict[str, Any]

#: The name OpenAI's ``json_schema`` format needs: ``^[a-zA-Z0-9_-]{1,64}$``
#: (openai/types/shared_params/response_format_json_schema.py).
NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


def output_name(schema: JSON) -> str:
    """The schema's name for OpenAI: its ``title`` made to fit, or ``"response"``."""
    title = schema.get("title")
    name = NOT_IN_NAME.sub("_", title).strip("_")[:64] if isinstance(title, str) else ""
    return name or "response"


def strict(schema: JSON) -> bool:
    # The rules Tool.check() reports for tools (tools/_checks.py): every property required, every object closed,
    # no allOf/oneOf/not/if. A type with a default or an open dict is asked for without strict mode.
    return not openai_strict_problems(schema)


def openai_chat_response_format(schema: JSON) -> JSON:
    """Chat Completions' ``response_format``: ``{"type": "json_schema", "json_schema": {name, schema, strict}}``."""
    return {
        "type": "json_schema",
        "json_schema": {"name": output_name(schema), "schema": schema, "strict": strict(schema)},
    }


def openai_responses_text_format(schema: JSON) -> JSON:
    """The Responses API's ``text.format``: ``{"type": "json_schema", name, schema, strict}``."""
    return {"type": "json_schema", "name": output_name(schema), "schema": schema, "strict": strict(schema)}


def anthropic_output_config(schema: JSON) -> JSON:
    """Anthropic Messages' ``output_config``: ``{"format": {"type": "json_schema", "schema": ...}}`` (structured
    outputs: anthropic/types/output_config_param.py; the answer comes as the reply's text), the schema as
    :func:`anthropic_schema` makes it."""
    return {"format": {"type": "json_schema", "schema": anthropic_schema(schema)}}


# What Anthropic's structured outputs take of a schema node, as the SDK's own helper keeps it
# (anthropic/lib/_parse/_transform.py, transform_schema): everything else it moves into the description.
ANTHROPIC_KEYWORDS = frozenset(
    {"type", "enum", "const", "anyOf", "allOf", "description", "title", "properties", "additionalProperties"}
    | {"required", "items", "$defs", "$ref"}
)
ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def anthropic_schema(schema: JSON) -> JSON:
    """A copy of ``schema`` Anthropic's structured outputs take: the constraints they refuse (``minimum``,
    ``maxLength``, ``pattern``, ``default``, a ``minItems`` above 1, an unknown ``format``, ...) move into the node's
    description as ``{keyword: value}``, so the model still reads them, and ``oneOf`` becomes ``anyOf``.

    Nothing is lost: the session validates the answer against the type itself, constraints included. An open
    ``additionalProperties`` (a ``dict``) is left as it is: closing it would make the model answer ``{}``.
    """

    def node(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: JSON = {}
        moved: list[str] = []
        for key, item in value.items():
            if key in ("properties", "$defs") and isinstance(item, dict):
                out[key] = {name: node(sub) for name, sub in item.items()}
            elif key in ("anyOf", "allOf", "oneOf") and isinstance(item, list):
                out["anyOf" if key == "oneOf" else key] = [node(sub) for sub in item]
            elif key in ("items", "additionalProperties") and isinstance(item, dict):
                out[key] = node(item)
            elif key in ANTHROPIC_KEYWORDS or kept_bound(key, item):
                out[key] = item
            else:
                moved.append(f"{key}: {json.dumps(item, ensure_ascii=False)}")
        if moved:
            description = out.get("description")
            told = "{" + ", ".join(moved) + "}"
            out["description"] = f"{description}\n\n{told}" if isinstance(description, str) and description else told
        return out

    result: JSON = node(schema)
    return result


def kept_bound(key: str, value: Any) -> bool:
    """The two bounds Anthropic takes: a known string ``format``, and ``minItems`` of 0 or 1."""
    if key == "format":
        return isinstance(value, str) and value in ANTHROPIC_FORMATS
    return key == "minItems" and type(value) is int and value in (0, 1)


#: Gemini models before 3 refuse a JSON response with function calling: "Function calling with a response mime type:
#: 'application/json' is unsupported" (googleapis/python-genai#867); Gemini 3 takes both in one request.
GEMINI_VERSION = re.compile(r"gemini-(\d+)")


def gemini_takes_schema_with_tools(model: str) -> bool:
    """Whether a Gemini model takes ``responseJsonSchema`` in a request with function declarations: Gemini 3 and
    later, and any model whose name carries no Gemini version (assumed current)."""
    found = GEMINI_VERSION.search(model)
    return found is None or int(found.group(1)) >= 3


def json_instruction(schema: JSON) -> str:
    """The instruction that asks for the answer where a request cannot carry the schema natively."""
    return (
        "Your final answer (after any tool calls) must be only a JSON value matching this JSON Schema, with no other "
        "text and no code fence:\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )


def gemini_generation_config(schema: JSON) -> JSON:
    """What Gemini's ``generationConfig`` gets: ``responseMimeType: "application/json"`` and the JSON Schema as it
    is in ``responseJsonSchema`` (not the OpenAPI-subset ``responseSchema``), as tools use ``parametersJsonSchema``."""
    return {"responseMimeType": "application/json", "responseJsonSchema": schema}
