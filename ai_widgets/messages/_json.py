"""The JSON form of a conversation, below the message classes: the envelope (format marker and version) written
and read strictly (no NaN or Infinity, which no other JSON reader takes), version-1 messages upgraded to the
current shape, and the checked field reads that rebuilding a message from its dict uses."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["FORMAT_VERSION", "conversation_json", "conversation_messages", "read_field", "upgrade_v1_message"]

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MISSING_FIELD: Any = object()


def conversation_json(messages: Iterable[dict[str, Any]]) -> str:
    """The conversation's JSON text, from each message's dict (UTF-8-encodable: lone surrogates are escaped).

    Raises:
        ValueError: A message holds something that is not JSON.
    """
    payload = {"format": "ai_widgets.conversation", "version": FORMAT_VERSION, "messages": list(messages)}
    # ensure_ascii escapes any lone surrogate as \udXXX, so the text always encodes; allow_nan=False refuses what
    # no other JSON reader takes.
    return json.dumps(payload, ensure_ascii=True, allow_nan=False)


def conversation_messages(text: str | bytes) -> list[Any]:
    """The message dicts of a conversation's JSON text, in the current shape (a version-1 file upgraded); each is
    still to be checked as it is rebuilt.

    Raises:
        ValueError: The text is not a serialised conversation, is malformed, or is from a newer format.
    """
    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise ValueError("not an ai_widgets conversation: nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"not an ai_widgets conversation: invalid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != "ai_widgets.conversation":
        raise ValueError("not an ai_widgets conversation (missing format marker)")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION
        hint = ": it was written by a newer ai_widgets; upgrade to read it" if newer else ""
        raise ValueError(f"unsupported conversation format version {version!r}{hint}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ValueError("not an ai_widgets conversation: 'messages' must be a list")
    if version == 1:
        messages = [upgrade_v1_message(m) for m in messages]
    return messages


def read_field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = MISSING_FIELD) -> Any:
    """``data[name]``, checked to be of ``kind``; ``default`` when absent (required when no default)."""
    if name not in data:
        if default is MISSING_FIELD:
            raise ValueError(f"missing field {name!r}")
        return default
    value = data[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise ValueError(f"field {name!r} has the wrong type ({type(value).__name__})")
    return value


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def upgrade_v1_message(data: Any) -> Any:
    """A version-1 message in the version-2 shape: provider data moved out of ``signature`` and outcome values."""
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        return data
    parts = []
    for part in data["parts"]:
        if isinstance(part, dict):
            part = dict(part)
            if part.get("kind") == "reasoning":
                part.update(v1_reasoning_provider(part.pop("signature", None)))
            elif part.get("kind") == "tool_call" and part.get("provider_executed"):
                value = (part.get("outcome") or {}).get("value") if isinstance(part.get("outcome"), dict) else None
                if isinstance(value, dict) and value.get("tool_use_id") == part.get("tool_call_id") and "type" in value:
                    part["provider"], part["provider_data"] = "anthropic", {"result_block": value}
                    # The raw block was the value only so the transport could send it back: show its content.
                    outcome = dict(part["outcome"])
                    outcome["value"] = value.get("content")
                    part["outcome"] = outcome
        parts.append(part)
    return {**data, "parts": parts}


def v1_reasoning_provider(signature: Any) -> dict[str, Any]:
    """Tells apart what version 1 packed into a reasoning signature (it could only guess; this is the last time)."""
    if not isinstance(signature, str) or not signature:
        return {}
    if signature[:1] in "[{":
        try:
            decoded = json.loads(signature)
        except ValueError:
            decoded = None
        items = decoded if isinstance(decoded, list) else [decoded]
        if items and all(isinstance(i, dict) and "type" in i for i in items):
            return {"provider": "anthropic", "provider_data": {"blocks": items}}
        if items and all(isinstance(i, dict) and "id" in i for i in items):
            return {"provider": "openai", "provider_data": {"items": items}}
        return {}
    return {"provider": "anthropic", "provider_data": {"signature": signature}}
