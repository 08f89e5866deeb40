"""``Tool.check()``: where a provider would refuse a tool's definition, or take it and do worse with it.

Every rule reads what the transports really send (:mod:`ai_widgets.tools._formats`), and cites where the
provider's rule comes from. A warning says which provider (``None``: all of them), a stable ``code``, a sentence
saying what is wrong and what to do, and where in the schema (a JSON path such as ``$.properties.tags.items``).

Rules, by provider:

- every provider: a tool or a parameter without a description; a parameter the model can never fill (its type has no
  JSON form, its schema accepts nothing, or it is required without being among the properties); a value in the
  schema that is not JSON (NaN, Infinity: the request cannot be encoded); text UTF-8 cannot encode (a lone
  surrogate in the description or the schema); a ``$ref`` that points nowhere.
- ``openai`` (Chat Completions and Responses): a name outside ``^[a-zA-Z0-9_-]{1,64}$``; an array without ``items``
  (refused even without strict mode); and, only where a transport asks for strict mode (none does today, see
  :data:`~ai_widgets.tools._formats.OPENAI_STRICT`), what strict mode refuses
  (:func:`openai_strict_problems`).
- ``anthropic``: a name outside ``^[a-zA-Z0-9_-]{1,128}$``; an ``input_schema`` that is not valid JSON Schema 2020-12.
- ``gemini`` (the transport sends ``parametersJsonSchema``, the JSON Schema form, so ``anyOf``, ``$ref``/``$defs``,
  type lists such as ``["string", "null"]`` and ``additionalProperties`` are accepted; the older OpenAPI-subset
  ``parameters`` field would refuse them): a name Gemini refuses; a ``$ref`` with keywords beside it other than
  ``description``/``default``; a loop of ``$ref``s that the model could never end (only required, non-nullable
  properties and non-empty arrays on the way round); keywords outside the JSON Schema subset Gemini documents (it
  may ignore them, so the model is not held to them).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ai_widgets.tools._definition import HasDefinition, ToolDefinition, definition_of
from ai_widgets.tools._formats import PROVIDER_FORMATS, openai_strict

__all__ = ["PROVIDERS", "ToolWarning", "check_tool", "openai_strict_problems"]

#: The providers a warning can name (``ToolWarning.provider``); both OpenAI APIs take the same function schemas.
PROVIDERS = ("openai", "anthropic", "gemini")
PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}


@dataclass(frozen=True)
class ToolWarning:
    """Something in a tool's definition that a provider would refuse, or accept and do worse with.

    Attributes:
        provider: ``"openai"``, ``"anthropic"`` or ``"gemini"``; ``None`` when it concerns every provider.
        code: A stable slug naming the rule, e.g. ``"openai-array-items"``.
        message: What is wrong and what to do, in a sentence or two.
        path: Where in the parameters' JSON Schema, as a JSON path (``$.properties.tags``); ``None`` for the tool
            as a whole (its name or description).
    """

    provider: str | None
    code: str
    message: str
    path: str | None = None

    def __str__(self) -> str:
        where = f" (at {self.path})" if self.path else ""
        return f"[{self.provider or 'all providers'}] {self.code}: {self.message}{where}"


def check_tool(item: HasDefinition | ToolDefinition) -> list[ToolWarning]:
    """The warnings for a tool (or a bare definition: then a parameter's fillability is judged by its schema only).

    Returns:
        The warnings, the provider-independent ones first; ``[]`` for a clean tool.
    """
    definition = definition_of(item)
    schema = definition.parameters
    warnings: list[ToolWarning] = []
    warnings += descriptions(definition)
    warnings += not_utf8(definition)
    warnings += not_json(schema)
    warnings += unresolved_refs(schema)
    warnings += unfillable(item, schema)
    warnings += names(definition.name)
    warnings += openai_array_items(schema)
    strict_apis = [
        key for key in ("openai_chat", "openai_responses") if openai_strict(PROVIDER_FORMATS[key](definition))
    ]
    if strict_apis:
        warnings += openai_strict_problems(schema)
    warnings += anthropic_schema(schema)
    warnings += gemini_ref_siblings(schema)
    warnings += gemini_ref_loops(schema)
    warnings += gemini_keywords(schema)
    return warnings


# --- walking a schema -----------------------------------------------------------------------------------------------

# Keywords whose value is a map of name -> schema, a list of schemas, or one schema (JSON Schema 2020-12 and draft 7).
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_ONE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
SURROGATE = re.compile("[\ud800-\udfff]")


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if IDENTIFIER.match(key):
        return f"{path}.{key}"
    # A lone surrogate is written as its JSON escape, so the path stays printable and encodable.
    return f"{path}[{json.dumps(key, ensure_ascii=bool(SURROGATE.search(key)))}]"


def subschemas(node: Any, path: str = "$") -> Iterator[tuple[dict[str, Any], str]]:
    """Every schema object in ``node`` (itself first) with its JSON path; boolean schemas and non-schemas skipped."""
    if not isinstance(node, dict):
        return
    yield node, path
    for key in SCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            for name, child in value.items():
                yield from subschemas(child, join(join(path, key), str(name)))
    for key in SCHEMA_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for index, child in enumerate(value):
                yield from subschemas(child, join(join(path, key), index))
    for key in SCHEMA_ONE:
        value = node.get(key)
        if isinstance(value, list):  # draft 4's tuple form of items
            for index, child in enumerate(value):
                yield from subschemas(child, join(join(path, key), index))
        else:
            yield from subschemas(value, join(path, key))


def types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def resolve(root: dict[str, Any], ref: str) -> Any:
    """The schema a local ``$ref`` points to (a JSON pointer into the root), or ``None``."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    target: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def required_of(schema: dict[str, Any]) -> set[str]:
    required = schema.get("required")
    return {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()


def properties_of(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


# --- every provider -------------------------------------------------------------------------------------------------


def descriptions(definition: ToolDefinition) -> list[ToolWarning]:
    # Every provider's guide says the description is what the model decides by: OpenAI ("Write clear and detailed
    # function names, parameter descriptions, and instructions", platform.openai.com/docs/guides/function-calling),
    # Anthropic ("Provide extremely detailed descriptions. This is by far the most important factor in tool
    # performance", docs.anthropic.com/en/docs/build-with-claude/tool-use), Gemini (ai.google.dev function calling
    # best practices: clear descriptions of functions and parameters).
    warnings = []
    if not definition.description.strip():
        warnings.append(
            ToolWarning(
                None,
                "missing-description",
                f"The tool {definition.name!r} has no description, so the model must guess from its name when to "
                f"call it: {fix('add a docstring or description=', definition)}.",
            )
        )
    for name, prop in properties_of(definition.parameters).items():
        described = isinstance(prop, dict) and isinstance(prop.get("description"), str) and prop["description"].strip()
        if not described:
            warnings.append(
                ToolWarning(
                    None,
                    "missing-parameter-description",
                    f"The parameter {name!r} has no description: "
                    + fix(
                        "say what it is and its format in the docstring's Args section or with "
                        "Annotated[..., Field(description=...)]",
                        definition,
                    )
                    + ".",
                    join("$.properties", name),
                )
            )
    return warnings


def fix(advice: str, definition: ToolDefinition) -> str:
    """How to add a description: ``advice`` for Python code; for a tool described elsewhere, whose to change."""
    if definition.described_by is None:
        return advice
    return f"the tool is described by {definition.described_by}, which alone can add one"


def not_utf8(definition: ToolDefinition) -> list[ToolWarning]:
    # A request body is UTF-8, which has no form for a lone surrogate ("\ud800", from decoding bytes with
    # errors="surrogateescape", or half of a pair): encoding the request fails, for every provider, every time.
    return [
        ToolWarning(
            None,
            "not-utf8",
            f"The tool's {what} holds a lone surrogate, which UTF-8 cannot encode, so no request with this tool can be "
            "sent: remove it (decode text with errors='replace').",
        )
        for what, text in (("description", definition.description),)
        if SURROGATE.search(text)
    ]


def not_json(schema: Any, path: str = "$") -> list[ToolWarning]:
    # A request body must be JSON (RFC 8259 has no NaN or Infinity); the SDKs encode with allow_nan=False, so such a
    # value (a default of float("nan"), say) makes every request with this tool fail before it is sent.
    if isinstance(schema, float) and not math.isfinite(schema):
        return [
            ToolWarning(
                None,
                "not-json",
                f"The schema holds {schema!r}, which JSON cannot carry, so no request with this tool can be sent: "
                "use a finite number or leave the default out.",
                path,
            )
        ]
    if isinstance(schema, str):
        return [lone_surrogate(path)] if SURROGATE.search(schema) else []
    if isinstance(schema, dict):
        found = []
        for key, value in schema.items():
            if not isinstance(key, str):
                found.append(ToolWarning(None, "not-json", f"The schema has a non-string key {key!r}.", path))
                continue
            if SURROGATE.search(key):
                found.append(lone_surrogate(join(path, key)))
            found += not_json(value, join(path, key))
        return found
    if isinstance(schema, list):
        return [warning for index, item in enumerate(schema) for warning in not_json(item, join(path, index))]
    if schema is None or isinstance(schema, (str, int, float, bool)):
        return []
    return [
        ToolWarning(
            None,
            "not-json",
            f"The schema holds a {type(schema).__name__}, which is not JSON, so no request with this tool can be "
            "sent: use JSON values only (strings, numbers, booleans, null, lists and objects).",
            path,
        )
    ]


def lone_surrogate(path: str) -> ToolWarning:
    return ToolWarning(
        None,
        "not-utf8",
        "The schema holds a lone surrogate, which UTF-8 cannot encode, so no request with this tool can be sent: "
        "remove it (decode text with errors='replace').",
        path,
    )


def unresolved_refs(schema: dict[str, Any]) -> list[ToolWarning]:
    # Providers resolve only local references ("#/$defs/Name"); none fetches a URL. A reference that points nowhere
    # leaves the model without that part of the schema, and is refused by the validators that resolve references.
    warnings = []
    for node, path in subschemas(schema):
        ref = node.get("$ref")
        if isinstance(ref, str) and resolve(schema, ref) is None:
            warnings.append(
                ToolWarning(
                    None,
                    "unresolved-ref",
                    f"$ref {ref!r} does not point into this schema (only local references such as '#/$defs/Name' "
                    "work): add the definition under $defs, or inline it.",
                    path,
                )
            )
    return warnings


# JSON values a model can write: if a parameter's validator takes none of them, no call can ever fill it.
SAMPLES: tuple[Any, ...] = (None, True, 0, 1.5, "", "text", [], {})


def unfillable(item: HasDefinition | ToolDefinition, schema: dict[str, Any]) -> list[ToolWarning]:
    warnings = []
    model = getattr(item, "_arguments_model", None)
    properties = properties_of(schema)
    for name in sorted(required_of(schema) - set(properties)):
        # Required but never described: the model is not told the parameter exists, and every call without it is
        # refused before the tool runs (the arguments are checked against this schema).
        warnings.append(
            ToolWarning(
                None,
                "undeclared-required",
                f"The parameter {name!r} is required but not among the properties, so the model is never told about "
                "it and every call without it is refused: add it to the properties, or drop it from 'required'.",
                "$.required",
            )
        )
    for name, prop in properties_of(schema).items():
        path = join("$.properties", name)
        if prop is False or (isinstance(prop, dict) and (prop.get("not") == {} or prop.get("enum") == [])):
            warnings.append(
                ToolWarning(
                    None,
                    "unfillable-parameter",
                    f"The parameter {name!r} has a schema that no value satisfies, so the model can never fill it: "
                    "give it a schema of the values it takes.",
                    path,
                )
            )
            continue
        # A type with no JSON form (``type[int]``, a class pydantic only checks with isinstance) reaches the schema as
        # ``{}``: the model is told "anything", and the validator then refuses everything it can send.
        if model is None or not isinstance(prop, dict) or constrains(prop):
            continue
        if not any(accepts(model, name, sample) for sample in SAMPLES):
            warnings.append(
                ToolWarning(
                    None,
                    "unfillable-parameter",
                    f"The parameter {name!r} has a type with no JSON form: the model is told it may send anything, "
                    "and every JSON value it can send is refused. Take a JSON type (str, int, a pydantic model...) "
                    "and convert it in the function.",
                    path,
                )
            )
    return warnings


def constrains(prop: dict[str, Any]) -> bool:
    return any(key in prop for key in ("type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "properties"))


def accepts(model: Any, name: str, value: Any) -> bool:
    from pydantic import ValidationError

    try:
        model.model_validate({name: value})
    except ValidationError as exc:
        return not any(error["loc"][:1] == (name,) for error in exc.errors(include_url=False))
    except Exception:
        return False
    return True


# Tool names. OpenAI: "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64" (the
# ``name`` of FunctionDefinition in the openai SDK, openai/types/shared_params/function_definition.py). Anthropic:
# the API refuses other names with "tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
# (quoted in vybestack/llxprt-code#482 and anthropics/claude-code#96152). Gemini: "Must start with a letter or an
# underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 128"
# (FunctionDeclaration.name in the google-genai SDK, google/genai/types.py, for Vertex AI); the Developer API's
# reference (ai.google.dev/api/caching#FunctionDeclaration) says "maximum length of 64": the stricter of the two.
NAME_RULES = (
    ("openai", re.compile(r"^[a-zA-Z0-9_-]{1,64}$"), "1 to 64 letters, digits, '_' or '-'"),
    ("anthropic", re.compile(r"^[a-zA-Z0-9_-]{1,128}$"), "1 to 128 letters, digits, '_' or '-'"),
    (
        "gemini",
        re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"),
        "a letter or '_' first, then letters, digits, '_', '.', ':' or '-', at most 64 in all",
    ),
)


def names(name: str) -> list[ToolWarning]:
    return [
        ToolWarning(
            provider,
            "invalid-name",
            f"{PROVIDER_NAMES[provider]} refuses the tool name {name!r} (it takes {rule}): rename the tool.",
        )
        for provider, pattern, rule in NAME_RULES
        if not pattern.match(name)
    ]


# --- OpenAI ---------------------------------------------------------------------------------------------------------


def openai_array_items(schema: dict[str, Any]) -> list[ToolWarning]:
    # OpenAI validates function schemas even without strict mode, and refuses an array schema without ``items``:
    # "Invalid schema for function 'f': In context=('properties', 'x'), array schema missing items." (code
    # invalid_function_parameters; quoted in sigoden/aichat#1049, digitalocean-labs/mcp-digitalocean#265). A tuple's
    # ``prefixItems`` does not count (AnswerDotAI/fastcore#798, camel-ai/camel#393).
    return [
        ToolWarning(
            "openai",
            "openai-array-items",
            "OpenAI refuses an array schema without 'items' (\"array schema missing items\"), which fails every "
            "request with this tool: say what the array holds (list[str] rather than a bare list or a tuple).",
            path,
        )
        for node, path in subschemas(schema)
        if "array" in types(node) and "items" not in node
    ]


# Strict mode (Structured Outputs) accepts a subset of JSON Schema: platform.openai.com/docs/guides/structured-outputs
# "Supported schemas": the root must be an object and not anyOf; "all fields must be required" (an optional one is a
# union with null); "additionalProperties: false must always be set in objects"; composition keywords allOf, not,
# dependentRequired, dependentSchemas, if, then, else are not supported; oneOf is refused ("In context=(), 'oneOf' is
# not permitted", community.openai.com/t/932422). $defs, recursion, anyOf (below the root) and the string, number and
# array keywords are accepted.
STRICT_UNSUPPORTED = ("allOf", "not", "oneOf", "dependentRequired", "dependentSchemas", "if", "then", "else")


def openai_strict_problems(schema: dict[str, Any]) -> list[ToolWarning]:
    """Why OpenAI's strict mode would refuse this parameters schema (``[]``: it qualifies).

    ``Tool.check()`` reports these only where a transport asks for strict mode; a tool's display says whether its
    schema would qualify.
    """
    warnings = []
    if "anyOf" in schema or "object" not in types(schema):
        warnings.append(
            ToolWarning(
                "openai",
                "openai-strict-root",
                "Strict mode needs the root of the schema to be an object, not anyOf.",
                "$",
            )
        )
    for node, path in subschemas(schema):
        is_object = "object" in types(node) or isinstance(node.get("properties"), dict)
        if is_object and node.get("additionalProperties") is not False:
            warnings.append(
                ToolWarning(
                    "openai",
                    "openai-strict-additional-properties",
                    "Strict mode needs 'additionalProperties': false on every object (so no dict[str, X] either).",
                    path,
                )
            )
        properties = properties_of(node)
        required = required_of(node)
        optional = [name for name in properties if name not in required]
        if optional:
            warnings.append(
                ToolWarning(
                    "openai",
                    "openai-strict-optional",
                    f"Strict mode needs every property required; {', '.join(map(repr, optional))} "
                    f"{'is' if len(optional) == 1 else 'are'} optional (a parameter with a default is).",
                    path,
                )
            )
        for keyword in STRICT_UNSUPPORTED:
            if keyword in node:
                warnings.append(
                    ToolWarning(
                        "openai",
                        "openai-strict-keyword",
                        f"Strict mode does not support {keyword!r}.",
                        join(path, keyword),
                    )
                )
    return warnings


# --- Anthropic ------------------------------------------------------------------------------------------------------


def anthropic_schema(schema: dict[str, Any]) -> list[ToolWarning]:
    # Anthropic refuses an input_schema that is not valid JSON Schema 2020-12: "tools.N.custom.input_schema: JSON
    # schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12)" (quoted in
    # anthropics/claude-code#63673). Checked here against the 2020-12 meta-schema.
    import jsonschema  # type: ignore[import-untyped]

    validator = jsonschema.Draft202012Validator
    try:
        problem = jsonschema.exceptions.best_match(validator(validator.META_SCHEMA).iter_errors(schema))
    except Exception:  # a schema the validator cannot even read (a non-JSON value: reported as not-json)
        return []
    if problem is None:
        return []
    path = "$"
    for part in problem.absolute_path:
        path = join(path, part)
    return [
        ToolWarning(
            "anthropic",
            "anthropic-invalid-schema",
            f"Anthropic refuses a schema that is not valid JSON Schema 2020-12, and this one is not: "
            f"{problem.message[:200]}. Fix that part of the schema.",
            path,
        )
    ]


# --- Gemini ---------------------------------------------------------------------------------------------------------

# "If a schema node has $ref set, then only description and default can be set alongside it" (the API's error,
# quoted in anomalyco/opencode#12295 and su-kaka/gcli2api#374); the SDK's docs allow keywords starting with "$" too
# ("If $ref is set on a sub-schema, no other properties, except for than those starting as a $, may be set",
# GenerationConfig.response_json_schema in google/genai/types.py).
GEMINI_REF_SIBLINGS = frozenset({"description", "default"})


def gemini_ref_siblings(schema: dict[str, Any]) -> list[ToolWarning]:
    warnings = []
    for node, path in subschemas(schema):
        if "$ref" not in node:
            continue
        extra = sorted(k for k in node if k != "$ref" and k not in GEMINI_REF_SIBLINGS and not k.startswith("$"))
        if extra:
            warnings.append(
                ToolWarning(
                    "gemini",
                    "gemini-ref-siblings",
                    f"Gemini refuses a $ref with other keywords beside it ({', '.join(extra)}); only description and "
                    "default may stand next to $ref. Move them into the definition, or inline it.",
                    path,
                )
            )
    return warnings


def gemini_ref_loops(schema: dict[str, Any]) -> list[ToolWarning]:
    # "ref loops are only supported if they include optional or nullable property values, or a potentially-zero-length
    # array items, but a ref loop of required fields was found at ..." (the API's error, quoted in
    # juspay/juspay-mcp#132); the SDK's docs: "Cyclic references are unrolled to a limited degree and, as such, may
    # only be used within non-required properties" (google/genai/types.py, response_json_schema).
    found: dict[str, ToolWarning] = {}
    budget = [20_000]  # nodes visited: shared definitions are walked once per path, so bound the work

    def visit(node: Any, path: str, stack: list[tuple[str, int]], exits: int) -> None:
        budget[0] -= 1
        if budget[0] < 0 or not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str):
            entered = next((count for name, count in stack if name == ref), None)
            if entered is not None:
                if entered == exits and ref not in found:
                    found[ref] = ToolWarning(
                        "gemini",
                        "gemini-required-ref-loop",
                        f"Gemini refuses this recursive schema: {ref} refers back to itself only through required, "
                        "non-nullable properties and non-empty arrays, so a value could never end. Make one "
                        "property on the way optional (give it a default) or nullable.",
                        path,
                    )
                return
            target = resolve(schema, ref)
            if target is not None:
                visit(target, path, [*stack, (ref, exits)], exits)
        nullable = is_nullable(node)
        required = required_of(node)
        for name, child in properties_of(node).items():
            escape = nullable or name not in required or (isinstance(child, dict) and is_nullable(child))
            visit(child, join(join(path, "properties"), name), stack, exits + escape)
        items = node.get("items")
        min_items = node.get("minItems")
        empty_ok = nullable or not (isinstance(min_items, int) and min_items > 0)
        if isinstance(items, dict):
            visit(items, join(path, "items"), stack, exits + empty_ok)
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            for index, child in enumerate(prefix):
                optional = nullable or not (isinstance(min_items, int) and min_items > index)
                visit(child, join(join(path, "prefixItems"), index), stack, exits + optional)
        if isinstance(node.get("additionalProperties"), dict):
            visit(node["additionalProperties"], join(path, "additionalProperties"), stack, exits + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                for index, child in enumerate(branches):
                    visit(child, join(join(path, key), index), stack, exits + (nullable and key != "allOf"))

    visit(schema, "$", [("#", 0)], 0)
    return list(found.values())


def is_nullable(node: dict[str, Any]) -> bool:
    if "null" in types(node) or node.get("nullable") is True:
        return True
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and any(isinstance(b, dict) and "null" in types(b) for b in branches):
            return True
    return False


# The JSON Schema keywords Gemini documents: "$id, $defs, $ref, $anchor, type, format, title, description, enum (for
# strings and numbers), items, prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf (interpreted the same as
# anyOf), properties, additionalProperties, required" and "the non-standard propertyOrdering" (google/genai/types.py,
# GenerationConfig.response_json_schema; parametersJsonSchema documents no list of its own), plus the fields of its
# own Schema that the JSON form maps onto (ai.google.dev/api/caching#Schema: nullable, default, example, minLength,
# maxLength, pattern, minProperties, maxProperties). Anything else (const, allOf, not, exclusiveMinimum, multipleOf,
# uniqueItems, patternProperties...) Gemini may ignore or refuse.
GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
        "nullable",
        "default",
        "example",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
    }
)


def gemini_keywords(schema: dict[str, Any]) -> list[ToolWarning]:
    seen: dict[str, list[str]] = {}
    for node, path in subschemas(schema):
        for key in node:
            if isinstance(key, str) and not key.startswith("$") and key not in GEMINI_KEYWORDS:
                seen.setdefault(key, []).append(join(path, key))
    return [
        ToolWarning(
            "gemini",
            "gemini-unsupported-keyword",
            f"{key!r} is outside the JSON Schema that Gemini supports"
            f"{f' (used {len(paths)} times)' if len(paths) > 1 else ''}: Gemini may ignore it, so the model is not "
            "held to it. Say the constraint in the description too, or use a supported form (enum for const).",
            paths[0],
        )
        for key, paths in seen.items()
    ]
