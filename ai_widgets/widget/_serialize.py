"""Messages as the front end shows them (docs/protocol.md, "Message shape")."""

from __future__ import annotations

import math
import re
from typing import Any

from ai_widgets.messages import Message, ReasoningPart, TextPart, ToolCallPart, Usage
from ai_widgets.tools import ToolDefinition, ToolOutcome

_SURROGATE = re.compile("[\ud800-\udfff]")

__all__ = ["call_fields", "json_safe", "message_dict", "message_fields", "part_dict", "tool_info", "usage_dict"]


def json_safe(value: Any) -> Any:
    """``value`` with what the kernel's JSON packer refuses replaced: non-finite floats become ``None`` and lone
    surrogates U+FFFD. Returns ``value`` itself when nothing needed replacing."""
    match value:
        case float() if not math.isfinite(value):
            return None
        case str():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return _SURROGATE.sub("\ufffd", value)
            return value
        case dict():
            return {json_safe(k) if isinstance(k, str) else k: json_safe(v) for k, v in value.items()}
        case list() | tuple():
            return [json_safe(item) for item in value]
        case _:
            return value


def usage_dict(usage: Usage) -> dict[str, int]:
    """Usage as JSON."""
    return usage.to_dict()


def outcome_dict(outcome: ToolOutcome | None) -> dict[str, Any] | None:
    """An outcome as JSON (the exception object itself stays in the kernel)."""
    return None if outcome is None else json_safe(outcome.model_dump(mode="json"))


def call_fields(part: ToolCallPart) -> dict[str, Any]:
    """The fields of a call that change after it started (everything but its id, name and arguments)."""
    return {
        "state": part.state.value,
        "progress": None
        if part.progress is None
        else {"fraction": part.progress.fraction, "message": json_safe(part.progress.message)},
        "outcome": outcome_dict(part.outcome),
        "approval_reason": json_safe(part.approval_reason),
        "decision": part.decision,
        "decision_reason": json_safe(part.decision_reason),
        "provider_executed": part.provider_executed,
        "run_started_at": part.run_started_at,
        "finished_at": part.finished_at,
    }


def part_dict(part: TextPart | ReasoningPart | ToolCallPart) -> dict[str, Any]:
    """A part as the front end shows it."""
    match part:
        case TextPart():
            return {"kind": "text", "text": json_safe(part.text)}
        case ReasoningPart():
            return {"kind": "reasoning", "text": json_safe(part.text)}
        case ToolCallPart():
            return {
                "kind": "tool_call",
                "tool_call_id": part.tool_call_id,
                "tool_name": part.tool_name,
                "parsed_arguments": json_safe(part.parsed_arguments),
                "started_at": part.started_at,
                **call_fields(part),
            }


def message_fields(message: Message) -> dict[str, Any]:
    """The fields of a message that change while it is in progress."""
    return {
        "status": message.status.value,
        "status_text": json_safe(message.status_text),
        "finish_reason": None if message.finish_reason is None else message.finish_reason.value,
        "usage": usage_dict(message.usage),
        "error": json_safe(message.error),
    }


def message_dict(message: Message, index: int) -> dict[str, Any]:
    """A whole message as the front end shows it."""
    return {
        "id": message.id,
        "index": index,
        "role": message.role.value,
        "created_at": message.created_at,
        "parts": [part_dict(part) for part in message.parts],
        **message_fields(message),
    }


def tool_info(definition: ToolDefinition) -> dict[str, Any]:
    """What a card shows about a tool."""
    return {
        "title": definition.title,
        "icon": definition.icon,
        "risk": definition.risk.value,
        "description": definition.description,
        "requires_approval": definition.requires_approval,
    }
