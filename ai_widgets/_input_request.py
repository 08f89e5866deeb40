"""What a tool call asks the person (an MCP server's elicitation: a form or a link) and what the person answers, with
the check that an answer fits the question."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ai_widgets._safe import safe_text
from ai_widgets._schema import UnusableSchemaError, argument_problems

__all__ = ["InputAction", "InputMode", "InputRequest", "InputResponse", "InputResponseError", "checked_response"]

InputMode = Literal["form", "url"]
InputAction = Literal["accept", "decline", "cancel"]
_ACTIONS: tuple[InputAction, ...] = ("accept", "decline", "cancel")
#: Characters of a server's message kept: it is shown in a card, never a document.
_MESSAGE_CHARS = 4000
#: The JSON types a flat form's fields may hold (MCP's primitive schema definitions).
_FIELD_TYPES = frozenset({"string", "number", "integer", "boolean", "array"})


class InputResponseError(ValueError):
    """An answer to a call's question that cannot be taken: an unknown call, a call not waiting for input, an unknown
    action, or content that does not fit the form. Nothing changes; the call still waits.

    Attributes:
        fields: For content that does not fit: each field's problem, by field name (what a form shows at the field).
    """

    def __init__(self, message: str, *, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields: dict[str, str] = dict(fields or {})


@dataclass(frozen=True, slots=True)
class InputRequest:
    """What a running call asks the person.

    Attributes:
        message: What the asker says to the person (made safe to show).
        mode: ``"form"`` (fill in ``schema``) or ``"url"`` (open ``url``, out of band).
        schema: For a form: a flat JSON Schema (an object whose properties are strings, numbers, booleans or lists
            of choices); the form starts from its defaults.
        url: For a link: an ``http(s)`` URL the person may open.
        asker: Who asks (the MCP server's name), or ``None``.
    """

    message: str
    mode: InputMode = "form"
    schema: dict[str, Any] | None = None
    url: str | None = None
    asker: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.message, str):
            raise ValueError(f"an input request's message must be text, not {type(self.message).__name__}")
        object.__setattr__(self, "message", safe_text(self.message)[:_MESSAGE_CHARS])
        match self.mode:
            case "form":
                _check_flat(self.schema)
                if self.url is not None:
                    raise ValueError("a form input request has no url")
            case "url":
                if self.schema is not None:
                    raise ValueError("a url input request has no schema")
                _check_url(self.url)
            case other:
                raise ValueError(f"an input request's mode is 'form' or 'url', not {other!r}")

    @property
    def defaults(self) -> dict[str, Any]:
        """The form's starting values: each field's ``default``, where it has one."""
        properties = (self.schema or {}).get("properties", {})
        return {name: spec["default"] for name, spec in properties.items() if "default" in spec}

    @property
    def domain(self) -> str | None:
        """The host of a link, what the person is shown before opening it."""
        return None if self.url is None else urlsplit(self.url).hostname

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"message": self.message, "mode": self.mode, "schema": self.schema, "url": self.url, "asker": self.asker}

    @classmethod
    def from_dict(cls, data: Any) -> InputRequest:
        """Rebuilds a request from :meth:`to_dict`'s output.

        Raises:
            ValueError: It is not an input request.
        """
        if not isinstance(data, dict):
            raise ValueError(f"an input request must be an object, not {type(data).__name__}")
        asker = data.get("asker")
        return cls(
            data.get("message"),  # type: ignore[arg-type]  # checked in __post_init__
            mode=data.get("mode", "form"),
            schema=data.get("schema"),
            url=data.get("url"),
            asker=asker if isinstance(asker, str) else None,
        )


@dataclass(frozen=True, slots=True)
class InputResponse:
    """The person's answer: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``."""

    action: InputAction
    content: dict[str, Any] | None = None


def checked_response(request: InputRequest, action: object, content: object) -> InputResponse:
    """The answer to ``request``, checked: a known action, and for an accepted form content that fits its schema
    (the form's defaults fill what the content leaves out).

    Raises:
        InputResponseError: The action is unknown, or the content does not fit; the message says what is wrong.
    """
    if action not in _ACTIONS:
        raise InputResponseError(f"unknown action {str(action)[:40]!r}: use 'accept', 'decline' or 'cancel'")
    if action != "accept" or request.mode == "url":
        if content is not None:
            raise InputResponseError(f"content goes with accepting a form, not with {action!r} on a {request.mode}")
        return InputResponse(action)
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise InputResponseError(f"the content must be an object of the form's fields, not {type(content).__name__}")
    filled = {**request.defaults, **content}
    schema = request.schema or {}
    unknown = sorted(set(filled) - set(schema.get("properties", {})))
    if unknown:
        raise InputResponseError(
            f"the form has no field {', '.join(repr(k[:40]) for k in unknown[:5])}",
            fields={k[:200]: "The form has no such field." for k in unknown[:5]},
        )
    try:
        problems = argument_problems(schema, filled)
    except UnusableSchemaError as exc:  # checked when the request came in; kept safe anyway
        raise InputResponseError(f"the form's schema cannot check the content: {exc}") from None
    if problems:
        said = "; ".join(_problem(p) for p in problems[:5])
        raise InputResponseError(f"the content does not fit the form: {said}", fields=_field_problems(problems[:5]))
    return InputResponse("accept", json.loads(json.dumps(filled)))


def _problem(error: Any) -> str:
    where = ".".join(str(step) for step in error.absolute_path)
    return f"{where}: {error.message}"[:200] if where else str(error.message)[:200]


def _field_problems(errors: list[Any]) -> dict[str, str]:
    """Each problem at its field: the first step of its path, or the field a ``required`` error names."""
    fields: dict[str, str] = {}
    for error in errors:
        path = list(error.absolute_path)
        name = path[0] if path else None
        if name is None and error.validator == "required" and isinstance(error.validator_value, list):
            missing = [n for n in error.validator_value if isinstance(n, str) and n not in (error.instance or {})]
            name = missing[0] if missing else None
        if isinstance(name, str):
            fields.setdefault(name[:200], "Required." if error.validator == "required" else str(error.message)[:200])
    return fields


def _check_flat(schema: object) -> None:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("a form input request needs an object schema")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError("a form's schema properties must be an object")
    for name, spec in properties.items():
        if not isinstance(spec, dict) or spec.get("type") not in _FIELD_TYPES:
            raise ValueError(f"the form's field {str(name)[:40]!r} is not a flat field (string, number, boolean, list)")
    try:
        argument_problems(schema, {})
    except UnusableSchemaError as exc:
        raise ValueError(f"the form's schema cannot be used: {exc}") from None


def _check_url(url: object) -> None:
    if not isinstance(url, str) or len(url) > 4000:
        raise ValueError("a url input request needs a url")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c in url for c in "\x00\r\n\t \"'<>`"):
        raise ValueError(f"a url input request needs an http(s) link, not {url[:80]!r}")
