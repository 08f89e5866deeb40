"""What this client offers a server, in one place (:meth:`Features.client_options`, the SDK client's options):
the person's answers to its questions (elicitation), the chat's model for its completions once the person allows
each (sampling), the roots it may work in, and where its log messages go
(Python logging, and the card of the call that was running). Also the bound on a call (:data:`DEFAULT_CALL_TIMEOUT`)
and the probe that tells a frozen server from a slow one after a call ran out of time."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ai_widgets.mcp._apps import APP_MIME_TYPE, APPS_EXTENSION
from ai_widgets.mcp._asking import Callers, elicitation_callback
from ai_widgets.mcp._link import Link
from ai_widgets.mcp._related import related_task
from ai_widgets.mcp._sampling import sampling_callback
from ai_widgets.messages._call_log import log_line
from ai_widgets.outcome import ToolOutcome

__all__ = ["DEFAULT_CALL_TIMEOUT", "Features", "timed_out"]

#: Seconds an MCP tool call may take by default (``MCPServer(..., call_timeout=...)``; ``None``: no bound).
DEFAULT_CALL_TIMEOUT = 120.0
#: Seconds a server has to answer ``tools/list`` after a call ran out of time, or the connection is stopped.
PROBE_TIMEOUT = 5.0

#: MCP's log levels (RFC 5424) as Python's.
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

#: What a server's roots may be given as: paths, or ``file://`` URIs.
RootsOption = Sequence[str | os.PathLike[str]] | None


def root_uris(roots: RootsOption) -> tuple[str, ...]:
    """The roots as ``file://`` URIs (none for ``None``).

    Raises:
        ValueError: A root is neither a path nor a ``file://`` URI.
        TypeError: ``roots`` is one string rather than a sequence.
    """
    if roots is None:
        return ()
    if isinstance(roots, (str, bytes, os.PathLike)):
        raise TypeError("roots must be a list of paths or file:// URIs, not one (roots=['/data'])")
    uris: list[str] = []
    for root in roots:
        if isinstance(root, os.PathLike):
            root = os.fspath(root)
        if not isinstance(root, str) or not root:
            raise ValueError(f"a root must be a path or a file:// URI, not {root!r}")
        scheme = urlsplit(root).scheme
        if scheme == "file":
            uris.append(root)
        elif scheme and len(scheme) > 1:
            raise ValueError(f"a root must be a path or a file:// URI, not {root!r}")
        else:
            uris.append(Path(root).expanduser().resolve().as_uri())
    return tuple(uris)


def server_logger(name: str) -> logging.Logger:
    """The Python logger a server's log messages go to: ``ai_widgets.mcp.server.<name>``."""
    return logging.getLogger(f"ai_widgets.mcp.server.{name}")


def log_text(params: Any) -> str:
    """A server's log message as one line of text, sanitised and shortened."""
    data = getattr(params, "data", None)
    if isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(data)
    source = getattr(params, "logger", None)
    if isinstance(source, str) and source:
        text = f"{source}: {text}"
    return log_line(text)


class Features:
    """The client side of one server's connection: what it declares and how it answers.

    Args:
        callers: The server's running calls (whose card a question or a log line belongs to).
        server: How messages name the server (read when needed: it may learn its name on connecting).
        roots: See :class:`~ai_widgets.mcp.MCPServer`.
    """

    def __init__(self, callers: Callers, server: Callable[[], str], *, roots: RootsOption = None) -> None:
        self._callers = callers
        self._server = server
        self.roots = root_uris(roots)

    def client_options(self) -> dict[str, Any]:
        """The SDK client's options for the features: each callback given declares its capability (roots only
        when some were given: a server that is given roots may trade its own directories for them, as the
        filesystem server does); MCP Apps is declared as an extension (the widget's cards show a tool's app), so
        servers offer their app tools."""
        from mcp.client.extension import advertise

        options: dict[str, Any] = {
            "extensions": [advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})],
            "elicitation_callback": elicitation_callback(self._callers, self._server),
            "sampling_callback": sampling_callback(self._callers, self._server),
            "logging_callback": self._on_log,
            "log_level": "info",  # the opt-in a 2026 server needs to send log messages at all
        }
        if self.roots:
            options["list_roots_callback"] = self._on_list_roots
        return options

    async def _on_list_roots(self, context: Any) -> Any:
        from mcp import types

        del context
        return types.ListRootsResult(roots=[types.Root(uri=uri, name=root_name(uri)) for uri in self.roots])

    async def _on_log(self, params: Any) -> None:
        name = str(getattr(params, "level", "info"))
        level = LEVELS.get(name, logging.INFO)
        text = log_text(params)
        server_logger(self._server()).log(level, "%s", text)
        asker = self._callers.asker(related_task(params))
        if level >= logging.INFO and not isinstance(asker, str):  # the card shows info and above (as 2026 opts in)
            asker.progress.log(text if level <= logging.INFO else f"{name}: {text}")


def root_name(uri: str) -> str | None:
    name = Path(unquote(urlsplit(uri).path)).name
    return name or None


async def answers(link: Link) -> bool:
    """Whether the server still answers (``tools/list`` within :data:`PROBE_TIMEOUT`), after a call ran out of
    time: a slow tool leaves it answering, a frozen server (or one that hung) does not."""
    import anyio

    try:
        with anyio.move_on_after(PROBE_TIMEOUT):
            await link.client.list_tools()
            return True
    except Exception:
        return False
    return False


async def timed_out(link: Link, *, server: str, shown: str, seconds: float | None) -> ToolOutcome:
    """The failure of a call that ran out of time (the SDK told the server it is cancelled). A server that does
    not answer a probe either is taken for frozen: its connection is stopped, a stdio server's process reaped, and
    the next use opens a new one; one that answers keeps its connection (and its state)."""
    message = (
        f"The MCP server {server!r} did not finish the call of {shown} within {seconds:g} seconds, so it was cancelled."
    )
    if not link.stop.is_set() and not await answers(link):
        link.stop.set()
        message += (
            f" It did not answer within {PROBE_TIMEOUT:g} seconds afterwards either, so its connection was closed "
            "(the next call connects again)."
        )
    return ToolOutcome.failure(message, retryable=True, error=message)
