"""What a tool call asks beyond its arguments: the person, for input (an MCP server's elicitation: a form or a link),
with the check that an answer fits the question; and the session's own model (an MCP server's *sampling*): what it
asks to send (:class:`SamplingRequest`, shown to the person before anything is sent), and what the model answered
(:class:`SamplingReply`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from ai_widgets._safe import safe_text
from ai_widgets._schema import UnusableSchemaError, argument_problems

__all__ = [
    "InputAction",
    "InputMode",
    "InputRequest",
    "InputResponse",
    "InputResponseError",
    "SamplingDeclinedError",
    "SamplingMessage",
    "SamplingReply",
    "SamplingRequest",
    "checked_response",
]

InputMode = Literal["form", "url"]
InputAction = Literal["accept", "decline", "cancel"]
ACTIONS: tuple[InputAction, ...] = ("accept", "decline", "cancel")
#: Characters of a server's message kept: it is shown in a card, never a document.
MESSAGE_CHARS = 4000
#: The JSON types a flat form's fields may hold (MCP's primitive schema definitions).
FIELD_TYPES = frozenset({"string", "number", "integer", "boolean", "array"})


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
        object.__setattr__(self, "message", safe_text(self.message)[:MESSAGE_CHARS])
        match self.mode:
            case "form":
                check_flat(self.schema)
                if self.url is not None:
                    raise ValueError("a form input request has no url")
            case "url":
                if self.schema is not None:
                    raise ValueError("a url input request has no schema")
                check_url(self.url)
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
    if action not in ACTIONS:
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
        said = "; ".join(problem(p) for p in problems[:5])
        raise InputResponseError(f"the content does not fit the form: {said}", fields=field_problems(problems[:5]))
    return InputResponse("accept", json.loads(json.dumps(filled)))


def problem(error: Any) -> str:
    where = ".".join(str(step) for step in error.absolute_path)
    return f"{where}: {error.message}"[:200] if where else str(error.message)[:200]


def field_problems(errors: list[Any]) -> dict[str, str]:
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


def check_flat(schema: object) -> None:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("a form input request needs an object schema")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError("a form's schema properties must be an object")
    for name, spec in properties.items():
        if not isinstance(spec, dict) or spec.get("type") not in FIELD_TYPES:
            raise ValueError(f"the form's field {str(name)[:40]!r} is not a flat field (string, number, boolean, list)")
    try:
        argument_problems(schema, {})
    except UnusableSchemaError as exc:
        raise ValueError(f"the form's schema cannot be used: {exc}") from None


def check_url(url: object) -> None:
    if not isinstance(url, str) or len(url) > 4000:
        raise ValueError("a url input request needs a url")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c in url for c in "\x00\r\n\t \"'<>`"):
        raise ValueError(f"a url input request needs an http(s) link, not {url[:80]!r}")


#: How much of the messages the approval question quotes (the person sees what goes; the card stays readable).
QUOTED_CHARS = 1200


class SamplingDeclinedError(RuntimeError):
    """The person declined a tool's request to run the model (``str(error)`` is what to tell the tool)."""


@dataclass(frozen=True, slots=True)
class SamplingMessage:
    """One message of a sampling request: its role, its text, and images as ``(mime type, base64)``."""

    role: Literal["user", "assistant"]
    text: str = ""
    images: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON for the card and the notebook file."""
        return {"role": self.role, "text": self.text, "images": [mime for mime, _ in self.images]}


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """What a tool asks the session's model to answer.

    Attributes:
        asker: Who asks, as a sentence names it mid-way ("the MCP server 'files'").
        messages: The conversation to answer, at least one message.
        system_prompt: The asker's system prompt, or ``None``.
        max_tokens: The most tokens the answer may have.
        temperature: The asker's temperature, or ``None``.
        stop_sequences: Texts that end the answer.
        model_hints: Models the asker prefers, by name (advice only: the session's model answers).
    """

    asker: str
    messages: tuple[SamplingMessage, ...]
    system_prompt: str | None = None
    max_tokens: int = 1000
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    model_hints: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a sampling request needs at least one message")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, not {self.max_tokens!r}")
        if self.temperature is not None and not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            raise ValueError(f"temperature must be between 0 and 2, not {self.temperature!r}")

    def question(self) -> str:
        """The approval question: who asks, and what would be sent (quoted, shortened when long)."""
        lines = [
            f"{self.asker[:1].upper()}{self.asker[1:]} asks to send this to the chat's model (an answer of at most {self.max_tokens} tokens), "
            "and to get the answer back:"
        ]
        if self.system_prompt:
            lines.append(f"System: {self.system_prompt}")
        for message in self.messages:
            images = (
                f" [{len(message.images)} image{'' if len(message.images) == 1 else 's'}]" if message.images else ""
            )
            lines.append(f"{message.role.capitalize()}: {message.text}{images}")
        text = "\n".join(lines)
        if len(text) > QUOTED_CHARS:
            text = text[: QUOTED_CHARS - 1] + f"… ({len(text) - QUOTED_CHARS + 1} more characters)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON for the card and the notebook file (images by type only)."""
        return {
            "asker": self.asker,
            "messages": [m.to_dict() for m in self.messages],
            "system_prompt": self.system_prompt,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True, slots=True)
class SamplingReply:
    """The model's answer to a :class:`SamplingRequest`.

    Attributes:
        text: The answer.
        model: The model that answered, as its transport names it.
        stop_reason: ``"endTurn"``, ``"maxTokens"`` or ``"stopSequence"`` (MCP's words).
    """

    text: str
    model: str
    stop_reason: Literal["endTurn", "maxTokens", "stopSequence"] = "endTurn"
