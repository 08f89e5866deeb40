"""Typed answers: the JSON Schema a turn asks the model's answer to match, and the answer's validation.

``send(..., output_type=T)`` builds one :class:`OutputSpec` for its turn. The schema goes in every request of the
turn (``ChatRequest.output_schema``) and the transports ask for it the provider's native way; the final text reply is
validated here, with pydantic, whatever the transport did, so a transport with no native way just answers JSON.
"""

from __future__ import annotations

import copy
from typing import Any

import pydantic

from ai_widgets._safe import checked_json
from ai_widgets.messages import Message

__all__ = ["NoOutputError", "OutputSpec", "OutputValidationError"]

#: The key a schema that is not an object is wrapped under: providers' structured outputs take an object at the root.
WRAPPER_KEY = "response"

#: The most characters of validation errors told to the model (and kept on the error).
MAX_ERRORS_CHARS = 4_000


class NoOutputError(RuntimeError):
    """The turn ended without a typed answer: it failed, was stopped or reached a limit (see ``reply``).

    Attributes:
        reply: The reply, as it ended (its ``status`` and ``error`` say why).
    """

    def __init__(self, message: str, *, reply: Message) -> None:
        super().__init__(message)
        self.reply = reply


class OutputValidationError(NoOutputError):
    """The model's answer did not validate against ``output_type``, after every retry (``output_retries``).

    Attributes:
        reply: The reply, ended in error; it keeps the last answer as its text.
        raw: The last answer's text, as the model wrote it.
        errors: The validation errors of that answer, as told to the model.
    """

    def __init__(self, message: str, *, reply: Message, raw: str, errors: str) -> None:
        super().__init__(message, reply=reply)
        self.raw = raw
        self.errors = errors


class OutputSpec:
    """What a typed turn asks for and how its answer is checked.

    Args:
        output_type: A pydantic model, dataclass, TypedDict or any type pydantic validates (``int``,
            ``list[Model]``, a ``Literal``, a union).

    Raises:
        TypeError: pydantic cannot make a JSON Schema of ``output_type``.
    """

    def __init__(self, output_type: Any) -> None:
        self.output_type = output_type
        try:
            self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output_type)
            schema = self.adapter.json_schema()
        except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, TypeError) as exc:
            raise TypeError(f"output_type {output_type!r} has no JSON Schema: {exc}") from None
        schema = root_resolved(schema)
        self.wrapped = not is_object(schema)
        # The answer to a wrapped type is ``{"response": ...}``, validated whole, so errors name where from its root.
        self._wrapper = pydantic.TypeAdapter(pydantic.create_model("Response", response=(output_type, ...)))
        self.schema = closed(wrap(schema) if self.wrapped else schema)
        self.failure: OutputValidationError | None = None

    @property
    def name(self) -> str:
        """The type's name, for messages."""
        return str(getattr(self.output_type, "__name__", None) or self.output_type)

    def validate(self, text: str) -> Any:
        """The validated object of an answer's ``text``.

        Raises:
            pydantic.ValidationError: The text is not JSON or does not match the type (the errors name where).
        """
        if not self.wrapped:
            return self.adapter.validate_json(text)
        return getattr(self._wrapper.validate_json(text), WRAPPER_KEY)

    def shown(self, output: Any) -> Any:
        """The validated object as JSON (pydantic's JSON mode: what a card shows), or ``None`` if it has none."""
        try:
            return checked_json(self.adapter.dump_python(output, mode="json"), where="the typed answer")
        except Exception:  # a type whose serialiser fails, or a value JSON has no form for: the text stays shown
            return None

    def correction(self, errors: str) -> str:
        """The user message that tells the model why its answer was refused."""
        return (
            f"Your answer did not match the required JSON Schema:\n{errors}\n"
            "Answer again with only the corrected JSON, no other text."
        )


def describe_errors(exc: pydantic.ValidationError) -> str:
    """The validation errors as the model is told them: one line per error, where and what (no input echoed)."""
    lines = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(step) for step in error.get("loc", ())) or "(the answer)"
        lines.append(f"- {where}: {error.get('msg', 'invalid')}")
    text = "\n".join(lines) or str(exc)
    return text if len(text) <= MAX_ERRORS_CHARS else text[:MAX_ERRORS_CHARS] + "\n- …"


def root_resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a root that is only a ``$ref`` into its ``$defs`` replaced by what it points to, the ``$defs``
    kept for the references inside (pydantic makes a recursive model's schema so). Providers' structured outputs
    want an object schema at the root, and the answer is then the object itself, not one wrapped around it."""
    reference, defs = schema.get("$ref"), schema.get("$defs")
    if not isinstance(reference, str) or not isinstance(defs, dict) or not reference.startswith("#/$defs/"):
        return schema
    target = defs.get(reference.removeprefix("#/$defs/"))
    if not isinstance(target, dict) or "$ref" in target:
        return schema
    rest = {key: value for key, value in schema.items() if key not in ("$ref", "$defs")}
    return {**target, **rest, "$defs": defs}


def is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" and not any(key in schema for key in ("anyOf", "oneOf", "allOf"))


def wrap(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"response": schema}`` as an object schema; the ``$defs`` move to its root, where ``$ref``s look for them."""
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {WRAPPER_KEY: inner},
        "required": [WRAPPER_KEY],
    }
    if defs is not None:
        wrapper["$defs"] = defs
    return wrapper


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy with ``additionalProperties: false`` on every object with properties that says nothing of others.

    Providers' structured outputs want it (OpenAI's strict mode, Anthropic's); it changes nothing of what validates
    here, since pydantic ignores keys a type does not name unless the type says otherwise (and then it says so in
    the schema, which is left as it is).
    """
    result = copy.deepcopy(schema)

    def walk(node: Any, *, names: bool = False) -> None:
        # ``names``: ``node`` maps names to schemas (``properties``, ``$defs``), so every value is a schema.
        if isinstance(node, dict):
            if not names and isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for key, value in node.items():
                if names or key not in ("const", "default", "enum", "examples"):
                    walk(value, names=not names and key in ("properties", "$defs", "patternProperties"))
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(result)
    return result
