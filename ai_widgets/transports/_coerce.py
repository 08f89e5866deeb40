"""Reading the fields of a provider's stream events, whatever the stream sent: each coercer gives a value of the type
a parser expects, or an empty one when the field is missing or malformed, so a malformed event means nothing rather
than a ``TypeError`` in a parser."""

from __future__ import annotations

from typing import Any

__all__ = ["as_int", "as_object", "as_str", "get_field"]


def get_field(value: Any, name: str) -> Any:
    """``value[name]`` when ``value`` is a JSON object, else ``None``."""
    return value.get(name) if isinstance(value, dict) else None


def as_int(value: Any) -> int:
    """``value`` when it is an integer, else 0 (a count the stream left out)."""
    return value if isinstance(value, int) else 0


def as_str(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
