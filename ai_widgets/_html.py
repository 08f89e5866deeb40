"""Small helpers for the HTML a notebook shows: every text escaped, long texts cut saying so."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ai_widgets._safe import safe_text

__all__ = ["DIM", "clipped", "cut", "escaped", "json_text"]

#: The style of secondary text (JupyterLab's variable, with a fallback for other front ends).
DIM = "color: var(--jp-content-font-color2, #666)"


def escaped(value: object) -> str:
    """``str(value)`` made UTF-8-safe and escaped for HTML text and attribute values."""
    return escape(safe_text(str(value)), quote=True)


def clipped(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, the last one ``…`` when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut(text: str, limit: int, what: str = "characters") -> str:
    """``text`` up to ``limit`` characters, with a note of how much is left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more {what})"


def json_text(value: Any) -> str:
    """``value`` as JSON text (non-ASCII as itself), or its ``repr`` when JSON cannot hold it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
