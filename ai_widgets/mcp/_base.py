"""What every part of the MCP integration shares: limits, the error type, and the lazily imported SDK."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ai_widgets._safe import redact, safe_text

__all__ = ["MCPServerError"]

logger = logging.getLogger("ai_widgets.mcp")

_T = TypeVar("_T")

#: What a tool name may hold (what providers accept); anything else in an MCP tool's name becomes ``_``.
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
#: Pages of ``tools/list`` read at most: a server that paginates forever cannot hang a listing.
_MAX_PAGES = 100
#: Characters of a stdio server's stderr kept, and shown in an error.
_STDERR_KEPT = 8000
_STDERR_SHOWN = 800
#: How long a close waits for the connection to wind down (the SDK bounds the process's stop to a few seconds).
_CLOSE_TIMEOUT = 15.0


class MCPServerError(RuntimeError):
    """An MCP server could not be started, reached or listed; the message names the server and says why."""


_MISSING_SDK = "ai_widgets.mcp.MCPServer needs the official MCP SDK: pip install 'ai_widgets[mcp]'"


def _sdk() -> Any:
    try:
        import mcp
    except ImportError as exc:  # pragma: no cover - the extra is installed in development
        raise ImportError(_MISSING_SDK) from exc
    return mcp


# --- small helpers ------------------------------------------------------------------------------------------------------


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside task-group wrappers (an ``ExceptionGroup``)."""
    seen = 0
    while seen < 20:
        inner = getattr(exc, "exceptions", None)
        if not inner:
            return exc
        chosen = next((e for e in inner if not isinstance(e, asyncio.CancelledError)), inner[0])
        exc = chosen
        seen += 1
    return exc


def _connection_closed(exc: BaseException) -> bool:
    try:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
    except ImportError:  # pragma: no cover
        return False
    leaf = _leaf(exc)
    return isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = redact(safe_text(text))[:500]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _shown_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ai_widgets")
    except Exception:
        return "0"
