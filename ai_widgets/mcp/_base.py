"""What every part of the MCP integration shares: limits, the error type, where a server is, the lazily imported SDK."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

__all__ = [
    "CLOSE_TIMEOUT",
    "MAX_PAGES",
    "MISSING_SDK",
    "NOT_NAME",
    "STDERR_KEPT",
    "STDERR_SHOWN",
    "Endpoint",
    "MCPServerError",
    "T",
    "package_version",
    "sdk",
]

logger = logging.getLogger("ai_widgets.mcp")

T = TypeVar("T")

#: What a tool name may hold (what providers accept); anything else in an MCP tool's name becomes ``_``.
NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
#: Pages of ``tools/list`` read at most: a server that paginates forever cannot hang a listing.
MAX_PAGES = 100
#: Characters of a stdio server's stderr kept, and shown in an error.
STDERR_KEPT = 8000
STDERR_SHOWN = 800
#: How long a close waits for the connection to wind down (the SDK bounds the process's stop to a few seconds).
CLOSE_TIMEOUT = 15.0


class MCPServerError(RuntimeError):
    """An MCP server could not be started, reached or listed; the message names the server and says why."""


@dataclass(frozen=True, eq=False)
class Endpoint:
    """Where a server is: a command the library starts (stdio), or a URL (streamable HTTP)."""

    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None

    @property
    def stdio(self) -> bool:
        """Whether the library starts the server (and talks over its stdin and stdout)."""
        return self.command is not None

    @property
    def label(self) -> str:
        """The server's name when nothing better is known: its command and first argument, or its URL's host and
        path."""
        if self.command is not None:
            return " ".join([Path(self.command).name, *(Path(a).name for a in self.args[:1])])
        parts = urlsplit(self.url or "")
        return f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


MISSING_SDK = "ai_widgets.mcp.MCPServer needs the official MCP SDK: pip install 'ai_widgets[mcp]'"


def sdk() -> Any:
    try:
        import mcp
    except ImportError as exc:  # pragma: no cover - the extra is installed in development
        raise ImportError(MISSING_SDK) from exc
    return mcp


def package_version() -> str:
    try:
        return version("ai_widgets")
    except Exception:
        return "0"
