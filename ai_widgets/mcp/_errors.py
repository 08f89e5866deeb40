"""How an MCP server's failures are worded: for a start, a listing or a call, naming the server, with the end of a
stdio server's stderr where it helps, and no credentials. Also keeps the SDK's own noise out of the notebook."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from ai_widgets._safe import redact, safe_text
from ai_widgets.mcp._base import STDERR_SHOWN, Endpoint, MCPServerError
from ai_widgets.mcp._link import Link
from ai_widgets.outcome import ToolOutcome

__all__: list[str] = ["call_failure", "describe", "junk", "listing_error", "quiet_sdk_parse_errors", "start_error"]


def leaf_exception(exc: BaseException) -> BaseException:
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


def connection_closed(exc: BaseException) -> bool:
    try:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
    except ImportError:  # pragma: no cover
        return False
    leaf = leaf_exception(exc)
    return isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED


def describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = redact(safe_text(text))[:500]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def shown_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def scrub(text: str, url: str | None) -> str:
    """``text`` without the credentials of the server's URL (user and password), should an error quote it."""
    parts = urlsplit(url or "")
    for secret in (parts.password, parts.username):
        if secret:
            text = text.replace(secret, "***")
    return text


async def stderr_note(link: Link) -> str:
    """The end of a stdio server's stderr, for an error (after a short wait for the last of it)."""
    tail = link.stderr
    if tail is None:
        return ""
    for _ in range(50):
        if tail.done.is_set():
            break
        await asyncio.sleep(0.01)
    text = tail.text().strip()
    if not text:
        return ""
    if len(text) > STDERR_SHOWN:
        text = "…" + text[-STDERR_SHOWN:]
    return f"\n\nIts last output (stderr):\n{redact(text)}"


def refusal(server: str, status: int, url: str) -> str:
    """What to say when an HTTP server refused the requests (401, 403): it wants credentials, and how to give them."""
    if status == 401:
        why = "needs authentication (HTTP 401): it refused the requests as they carried no valid credentials"
    else:
        why = "refused access (HTTP 403): the credentials sent are not allowed to use it"
    return (
        f"the MCP server {server!r} at {shown_url(url)} {why}. Give them with "
        'MCPServer.http(url, headers={"Authorization": "Bearer <token>"}), or auth= (an httpx authentication flow, '
        "such as the MCP SDK's OAuthClientProvider)"
    )


async def start_error(
    exc: BaseException, link: Link, *, server: str, endpoint: Endpoint, timeout: float | None
) -> MCPServerError:
    """Why a connection could not be opened."""
    leaf = leaf_exception(exc)
    what = f"the MCP server {server!r}"
    if isinstance(leaf, TimeoutError):
        doing = "start and answer" if endpoint.stdio else "answer"
        return MCPServerError(f"{what} did not {doing} within {timeout:g} seconds{await stderr_note(link)}")
    if isinstance(leaf, asyncio.CancelledError):
        return MCPServerError(f"{what} was closed while it connected")
    if isinstance(leaf, OSError) and endpoint.stdio and not link.lost:
        reason = leaf.strerror or str(leaf)
        return MCPServerError(f"{what} could not start: {reason}: {endpoint.command!r}")
    if connection_closed(leaf) or link.lost:
        gone = "exited before it was ready" if endpoint.stdio else "closed the connection"
        return MCPServerError(f"{what} {gone}{await stderr_note(link)}")
    if endpoint.url is not None and link.refused is not None:
        return MCPServerError(refusal(server, link.refused, endpoint.url))
    if endpoint.url is not None:
        reason = scrub(describe(leaf), endpoint.url)
        return MCPServerError(f"{what} could not be reached at {shown_url(endpoint.url)}: {reason}")
    return MCPServerError(f"{what} could not connect: {describe(leaf)}{await stderr_note(link)}")


async def listing_error(
    exc: Exception, link: Link, *, server: str, timeout: float | None, url: str | None
) -> MCPServerError:
    """Why the tools could not be listed; a connection the server closed is stopped (the next use opens one)."""
    if isinstance(exc, TimeoutError):
        return MCPServerError(f"the MCP server {server!r} did not list its tools within {timeout:g} seconds")
    if url is not None and link.refused is not None:
        return MCPServerError(refusal(server, link.refused, url))
    if connection_closed(exc) or link.lost:
        link.stop.set()
        note = await stderr_note(link)
        return MCPServerError(f"the MCP server {server!r} closed the connection while listing its tools{note}")
    return MCPServerError(f"the MCP server {server!r} could not list its tools: {scrub(describe(exc), url)}")


async def call_failure(
    exc: Exception, link: Link, *, server: str, shown: str, stdio: bool, url: str | None = None
) -> ToolOutcome:
    """The failure the model sees for a call that raised (one that ran out of time is
    :func:`ai_widgets.mcp._features.timed_out`'s). A connection the call showed gone, or in doubt, is
    stopped (the next use opens a new one); one that answered, even wrongly, is kept with the server's state."""
    from mcp.shared.exceptions import MCPError

    if url is not None and link.refused is not None:
        # The HTTP server refused the call's request (a token revoked or expired mid-session).
        message = f"The call of {shown} failed: {refusal(server, link.refused, url)}."
        return ToolOutcome.failure(message, retryable=False, error=message)
    if isinstance(exc, MCPError):
        if not (connection_closed(exc) or link.lost):
            # An error the server sent (an unknown tool, invalid arguments, an internal error): told as it wrote it.
            text = safe_text(exc.message)[:2000]
            return ToolOutcome.failure(
                f"The MCP server {server!r} refused the call of {shown}: {text}", retryable=True, error=exc
            )
        if link.closing:
            message = f"The connection to the MCP server {server!r} was closed during the call of {shown}."
            return ToolOutcome.failure(message, retryable=True, error=message)
        link.stop.set()
        note = await stderr_note(link)
        went = "exited" if stdio else "closed the connection"
        message = f"The MCP server {server!r} {went} during the call of {shown}, so it did not finish."
        return ToolOutcome.failure(message, retryable=True, error=message + note)
    leaf = leaf_exception(exc)
    if isinstance(leaf, ValidationError):
        # The server answered, with a result that does not follow the protocol (a content type this SDK does
        # not know, say): that call fails, and the connection (with the server's state) is kept.
        message = (
            f"The MCP server {server!r} answered the call of {shown} with a result that does not follow the "
            f"MCP protocol, so it cannot be read ({unreadable(leaf)})."
        )
        return ToolOutcome.failure(message, retryable=False, error=leaf)
    if off_schema(leaf):
        # The SDK checks a structured result against the tool's output schema after the server answered: that call
        # fails, and the connection (with the server's state) is kept.
        message = (
            f"The MCP server {server!r} returned a result from {shown} that does not match the tool's output schema, "
            f"so it was not used ({safe_text(str(leaf))[:300]})."
        )
        return ToolOutcome.failure(message, retryable=False, error=message)
    link.stop.set()  # the connection is in doubt: the next use opens a new one
    return ToolOutcome.failure(
        f"The call of {shown} to the MCP server {server!r} failed ({type(exc).__name__}).",
        retryable=True,
        error=exc,
    )


def off_schema(error: BaseException) -> bool:
    """Whether ``error`` is the SDK's refusal of a structured result that its tool's output schema does not allow
    (a ``RuntimeError`` raised in ``ClientSession.validate_tool_result``, after the server answered)."""
    if type(error) is not RuntimeError:
        return False
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_name == "validate_tool_result":
            return True
        trace = trace.tb_next
    return False


def unreadable(error: ValidationError) -> str:
    """What in a result does not follow the protocol, in a few words: a content block of a type the SDK does not know,
    or the first field that is wrong."""
    problems = error.errors(include_url=False)
    for problem in problems:
        block = problem.get("input")
        kind = block.get("type") if isinstance(block, dict) else None
        if problem["loc"][:1] == ("content",) and isinstance(kind, str):
            where = ".".join(str(step) for step in problem["loc"][:2])
            return safe_text(f"{where}: a content block of type {kind[:60]!r}, which it cannot read")
    if not problems:
        return safe_text(str(error))[:300]
    where = ".".join(str(step) for step in problems[0]["loc"])
    return safe_text(f"{where}: {problems[0]['msg']}")[:300]


def junk(error: ValueError) -> str:
    """The line a server wrote to stdout that is not a message, as the SDK's parse error quotes it, shortened."""
    line: Any = None
    if isinstance(error, ValidationError) and error.error_count():
        line = error.errors(include_url=False)[0].get("input")
    text = line if isinstance(line, str) else str(error)
    text = safe_text(" ".join(text.split()))
    return repr(text if len(text) <= 120 else text[:119] + "…")


class OwnParseErrors(logging.Filter):
    """Drops the SDK's traceback for a stdout line that is not a message when it comes from one of this library's
    connections (their loop threads are named ``ai_widgets MCP ...``); the connection says so once instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.msg == "Failed to parse JSONRPC message from server"
            and record.threadName is not None
            and record.threadName.startswith("ai_widgets MCP ")
        )


parse_filter = OwnParseErrors()


def quiet_sdk_parse_errors() -> None:
    sdk_logger = logging.getLogger("mcp.client.stdio")
    if parse_filter not in sdk_logger.filters:
        sdk_logger.addFilter(parse_filter)
