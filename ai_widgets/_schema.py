"""Deriving a compact JSON Schema and an argument validator from a function signature."""

from __future__ import annotations

import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

__all__ = ["DerivedSignature", "UnusableSchemaError", "argument_problems", "derive_signature", "parse_docstring"]

# Keys pydantic adds that tell a model nothing it can use, but cost tokens on every request.
NOISE_KEYS = frozenset({"title"})

# One configuration for the schema the model is told and the validation that binds its arguments:
# extra keys are ignored, and only lax (lossless) coercions such as "2" -> 2 are allowed.
ARGUMENTS_CONFIG = ConfigDict(extra="ignore", arbitrary_types_allowed=False, defer_build=False)

ARGS_HEADERS = ("args:", "arguments:", "parameters:", "params:")
OTHER_HEADERS = (
    "returns:",
    "return:",
    "yields:",
    "raises:",
    "examples:",
    "example:",
    "notes:",
    "note:",
    "attributes:",
    "see also:",
    "references:",
    "warnings:",
    "warning:",
    "todo:",
)
PARAM_LINE = re.compile(r"^(?P<name>\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<desc>.*)$")


@dataclass(frozen=True)
class DocstringInfo:
    """What a Google-style docstring says: the summary text and per-parameter descriptions."""

    description: str
    parameters: dict[str, str]


def parse_docstring(doc: str | None) -> DocstringInfo:
    """Splits a Google-style docstring into its description and its ``Args:`` entries.

    Args:
        doc: The docstring, possibly ``None``.

    Returns:
        The text before the first section header, and a map from parameter name to its description.
    """
    if not doc:
        return DocstringInfo("", {})
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    args_indent: int | None = None
    for raw in lines:
        stripped = raw.strip()
        lowered = stripped.lower()
        indent = len(raw) - len(raw.lstrip())
        if indent == 0 and lowered in ARGS_HEADERS:
            section, current, args_indent = "args", None, None
            continue
        if indent == 0 and lowered in OTHER_HEADERS:
            section, current = "other", None
            continue
        if section is None:
            description.append(raw)
        elif section == "args":
            if not stripped:
                current = None
                continue
            if args_indent is None:
                args_indent = indent
            match = PARAM_LINE.match(stripped)
            if indent <= args_indent and match:
                current = match.group("name").lstrip("*")
                params[current] = match.group("desc").strip()
            elif current is not None:
                params[current] = (params[current] + " " + stripped).strip()
    return DocstringInfo("\n".join(description).strip(), params)


@dataclass(frozen=True)
class DerivedSignature:
    """The schema a model is told and the pydantic model that validates and binds its arguments."""

    parameters: dict[str, Any]
    arguments_model: type[BaseModel]
    invocation_parameter: str | None
    positional_only: tuple[str, ...]
    description: str
    parameter_names: dict[str, str]


def derive_signature(
    fn: Callable[..., Any], *, tool_name: str, invocation_type: type, description: str | None
) -> DerivedSignature:
    """Builds the JSON Schema and the argument model for ``fn``.

    Args:
        fn: The handler.
        tool_name: The tool's name, used in error messages and as the model's name.
        invocation_type: The class of the invocation parameter, which is not part of the schema.
        description: An explicit description; the docstring's summary is used when ``None``.

    Returns:
        The derived signature.

    Raises:
        TypeError: The signature cannot be turned into a schema (``*args``, ``**kwargs``, an unresolvable
            annotation).
    """
    annotated, fixed = annotations_holder(fn)
    try:
        hints = typing.get_type_hints(annotated, include_extras=True, localns=caller_locals())
    except Exception as exc:
        raise TypeError(
            f"cannot resolve the type annotations of tool {tool_name!r}: {exc}. "
            "Define the types it uses at module level, or build the tool from a ToolDefinition."
        ) from exc
    doc = parse_docstring(inspect.getdoc(annotated if isinstance(fn, functools.partial) else fn))
    signature = inspect.signature(fn)
    fields: dict[str, Any] = {}
    invocation_parameter: str | None = None
    positional_only: list[str] = []
    parameter_names: dict[str, str] = {}
    for name, param in signature.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(
                f"tool {tool_name!r}: parameter {param}: *args and **kwargs cannot be described to a model; "
                "name each parameter"
            )
        if name in fixed:
            continue  # given by a functools.partial: fixed, not the model's to choose
        annotation = hints.get(name, Any)
        if annotation is invocation_type:
            if invocation_parameter is not None:
                raise TypeError(f"tool {tool_name!r} takes more than one ToolInvocation parameter")
            invocation_parameter = name
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(name)
        default = ... if param.default is inspect.Parameter.empty else param.default
        field = FieldInfo.from_annotated_attribute(annotation, default)
        if field.description is None and name in doc.parameters:
            field.description = doc.parameters[name]
        # Every parameter becomes a field under a neutral name with the parameter's name as its alias: a name that
        # pydantic reserves (``model_config``) or treats as private (``_x``) would otherwise vanish from the schema.
        internal = f"p{len(fields)}"
        parameter_names[internal] = name
        if field.alias is None:
            field.alias = name
            field.validation_alias = name
            field.serialization_alias = name
        fields[internal] = (field.annotation, field)
    model = create_model(model_name(tool_name), __config__=ARGUMENTS_CONFIG, **fields)
    schema = compact_schema(model.model_json_schema())
    schema.setdefault("properties", {})
    return DerivedSignature(
        parameters=schema,
        arguments_model=model,
        invocation_parameter=invocation_parameter,
        positional_only=tuple(positional_only),
        description=description if description is not None else doc.description,
        parameter_names=parameter_names,
    )


def annotations_holder(fn: Callable[..., Any]) -> tuple[Any, frozenset[str]]:
    """What holds the annotations of ``fn``'s parameters, and the names a ``functools.partial`` gives by keyword.

    A partial's annotations are its function's (its keywords are fixed: they are left out of the schema, so the model
    cannot choose another value); a callable object's are its ``__call__``'s.
    """
    fixed: set[str] = set()
    seen = 0
    while isinstance(fn, functools.partial) and seen < 100:
        fixed.update(fn.keywords)
        fn = fn.func
        seen += 1
    if inspect.isroutine(fn) or inspect.isclass(fn) or hasattr(fn, "__wrapped__"):
        return fn, frozenset(fixed)
    call = getattr(type(fn), "__call__", None)  # noqa: B004 (the method, not whether it exists)
    return (call if inspect.isroutine(call) else fn), frozenset(fixed)


def caller_locals() -> dict[str, Any]:
    """The local names of the nearest frame outside this package, so types defined in a function resolve."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ai_widgets"):
        frame = frame.f_back  # type: ignore[assignment]
    return dict(frame.f_locals) if frame is not None else {}


def model_name(tool_name: str) -> str:
    name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", tool_name) if part)
    return (name or "Tool") + "Arguments"


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Returns ``schema`` without pydantic's noise: titles dropped, non-recursive ``$ref``s inlined.

    ``Optional[X]`` written as ``anyOf: [X, null]`` becomes ``type: [X, "null"]`` where ``X`` is a single
    simple type, which says the same in fewer tokens.

    Args:
        schema: A JSON Schema produced by pydantic.

    Returns:
        A new, equivalent schema.
    """
    defs: dict[str, Any] = schema.get("$defs", {})
    recursive = {name for name in defs if refers_to(defs[name], name, defs, set())}

    def walk(node: Any, *, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if in_properties:
            # Keys here are parameter names, which may legitimately be "title".
            return {key: walk(value) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name not in recursive and name in defs:
                return {**walk(defs[name]), **{k: walk(v) for k, v in node.items() if k != "$ref"}}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in NOISE_KEYS and not isinstance(value, dict):
                continue
            if key == "$defs":
                kept = {name: walk(body) for name, body in value.items() if name in recursive}
                if kept:
                    out[key] = kept
                continue
            out[key] = walk(value, in_properties=key == "properties")
        return collapse_nullable(out)

    result = walk(schema)
    assert isinstance(result, dict)
    return result


def collapse_nullable(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = options[0] if options[1] == {"type": "null"} else options[1]
    if not isinstance(other, dict) or not isinstance(other.get("type"), str):
        return node
    if other["type"] in ("object", "array") or "enum" in other or "const" in other:
        # Keep anyOf for structured types: a typed list with "null" confuses some providers' validators.
        return node
    collapsed = {key: value for key, value in node.items() if key != "anyOf"}
    return {**other, "type": [other["type"], "null"], **collapsed}


def refers_to(node: Any, target: str, defs: dict[str, Any], seen: set[str]) -> bool:
    if isinstance(node, list):
        return any(refers_to(item, target, defs, seen) for item in node)
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name == target:
            return True
        if name not in seen and name in defs:
            seen.add(name)
            if refers_to(defs[name], target, defs, seen):
                return True
    return any(refers_to(value, target, defs, seen) for key, value in node.items() if key != "$ref")


# --- checking arguments against a tool's own JSON Schema -----------------------------------------------------------


class UnusableSchemaError(ValueError):
    """A tool's own JSON Schema cannot be evaluated (a ``$ref`` to nowhere, a keyword with a value of the wrong kind):
    no arguments can be checked against it."""


def argument_problems(schema: dict[str, Any], arguments: Any) -> list[Any]:
    """The ``jsonschema`` errors of ``arguments`` against ``schema`` (a tool built from a definition), sorted by path.

    ``pattern`` and ``patternProperties`` are matched with pydantic-core's Rust regex engine, which runs in linear
    time: a pattern from a third party (an MCP server's schema) with a string from the model cannot stall the event
    loop, as Python's backtracking ``re`` can (``(a+)+$``). A pattern that engine cannot compile (lookarounds,
    backreferences, or not a regex at all) is not checked here; the tool (or its server) checks what it needs.

    Raises:
        UnusableSchemaError: The schema itself cannot be evaluated; the message says why.
    """
    import jsonschema  # type: ignore[import-untyped]

    try:
        validator_class = lenient_validator(jsonschema.validators.validator_for(schema))
        found = list(validator_class(schema).iter_errors(arguments))
    except RecursionError:
        raise UnusableSchemaError("it nests or refers to itself too deeply to be evaluated") from None
    except Exception as exc:
        text = " ".join(str(exc).split())[:200]
        kind = type(exc).__name__
        raise UnusableSchemaError(
            text if text and kind.startswith("_") else f"{kind}: {text}" if text else kind
        ) from None
    return sorted(found, key=lambda e: [str(step) for step in e.absolute_path])


LENIENT: dict[Any, Any] = {}


def lenient_validator(validator_class: Any) -> Any:
    extended = LENIENT.get(validator_class)
    if extended is None:
        import jsonschema

        def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Any:
            if validator.is_type(instance, "string") and search(patrn, instance) is False:
                yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

        def pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
            if not validator.is_type(instance, "object") or not isinstance(properties, dict):
                return
            for patrn, subschema in properties.items():
                for key, value in instance.items():
                    if search(patrn, key) is True:
                        yield from validator.descend(value, subschema, path=key, schema_path=patrn)

        extended = jsonschema.validators.extend(
            validator_class, {"pattern": pattern, "patternProperties": pattern_properties}
        )
        LENIENT[validator_class] = extended
    return extended


PATTERNS: dict[str, Any] = {}


def search(pattern: Any, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's meaning), in linear time; ``None`` when the
    pattern cannot be compiled by the Rust engine (not checked)."""
    if not isinstance(pattern, str):
        return None
    if pattern not in PATTERNS:
        from pydantic_core import SchemaValidator, core_schema

        try:
            compiled: Any = SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
        except Exception:
            compiled = None
        if len(PATTERNS) > 1000:
            PATTERNS.clear()
        PATTERNS[pattern] = compiled
    compiled = PATTERNS[pattern]
    if compiled is None:
        return None
    from pydantic_core import ValidationError

    try:
        compiled.validate_python(text)
    except ValidationError:
        return False
    return True
