"""A tool's request to run the session's own model (an MCP server's *sampling*): what it asks to send
(:class:`SamplingRequest`, shown to the person before anything is sent), and what the model answered
(:class:`SamplingReply`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["SamplingDeclinedError", "SamplingMessage", "SamplingReply", "SamplingRequest"]

#: How much of the messages the approval question quotes (the person sees what goes; the card stays readable).
_QUOTED_CHARS = 1200


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
        if len(text) > _QUOTED_CHARS:
            text = text[: _QUOTED_CHARS - 1] + f"… ({len(text) - _QUOTED_CHARS + 1} more characters)"
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
