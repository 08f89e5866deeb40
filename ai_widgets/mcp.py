"""Tools from MCP servers: :class:`MCPServer`, a source of tools on the official ``mcp`` SDK (extra ``[mcp]``).

::

    files = MCPServer.stdio("python", ["fs_server.py"], prefix="fs")
    chat = ChatWidget(transport=..., tools=[get_weather, files])   # or registry.add(files)

The server is started (or reached) on first use: the first request of a turn lists its tools. Its tools are
listed again before every request, from a cache that the server's ``notifications/tools/list_changed`` clears, so
the model always sees the tools the server has now. ``await files.aclose()`` (or ``async with files:``) closes the
connection and stops the process.

Threads and loops
    A turn runs on whatever event loop awaits it: the kernel's, or the private loop thread of ``ask_sync``. The SDK's
    client session is anyio-based: it must be entered and left by one task, on the loop it was made on. So each
    server has a thread of its own that runs an event loop, and one task there owns the connection (opens it,
    keeps it, closes it: the transport and the child process with it). Every request (a listing, a call, a close)
    is sent to that loop and awaited from the caller's through a future; cancelling the caller's await cancels the
    request there, which sends the MCP cancellation. Progress the server reports goes to the call's
    ``invocation.progress``, which hands it to the session's loop.

Failures
    A server that cannot start, exits, or does not answer in time gives the turn a clear error when its tools are
    listed (:class:`MCPServerError`, naming the server, with the end of its stderr) or the call a failure the model
    sees; the child process is always reaped, and the next use starts the server again.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import concurrent.futures
import contextlib
import importlib.util
import logging
import math
import os
import re
import threading
import weakref
from collections import deque
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ai_widgets._safe import redact, safe_text
from ai_widgets.tools import (
    Attachment,
    Citation,
    Tool,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
    ToolProgress,
    ToolRisk,
    parse_arguments,
)

__all__ = ["MCPServer", "MCPServerError"]

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


class MCPServer:
    """An MCP server as a source of tools, for ``tools=[...]`` and :meth:`ToolRegistry.add`.

    Build one with :meth:`stdio` (a command the library starts, talking over its stdin and stdout) or :meth:`http`
    (a streamable HTTP endpoint). It connects on first use and is closed with ``await server.aclose()``,
    :meth:`close`, or ``async with server:``; after a close (or a crash) the next use connects again.

    Each MCP tool becomes a :class:`~ai_widgets.Tool`: its input schema is the parameters (checked before the call
    is sent), its title (or its annotations' title) is the card's title, and its risk comes from its annotations:
    ``readOnlyHint`` -> ``read_only``; ``destructiveHint: false`` -> ``normal``; otherwise ``destructive`` (the MCP
    default), so the default approval policy asks before it runs. With ``trust_annotations=False`` every tool of the
    server asks.

    Results: text becomes the value (a string), structured content the value shown as JSON (and sent to the model
    as JSON), images and audio attachments, resource links and embedded resources citations; a result marked
    ``isError`` is a failure the model sees, as the server wrote it. Progress the server reports moves the card's
    progress bar; cancelling a call (Stop, or the card's Cancel) cancels it on the server.

    Args (of both constructors):
        prefix: Put before every tool name, joined with ``_`` (``prefix="fs"``: ``fs_read_file``), so two servers'
            tools cannot clash.
        trust_annotations: Derive each tool's risk from its annotations; ``False``: every call asks a person.
        name: How messages name the server; what the server calls itself, or its command or URL, by default.
        timeout: Seconds to connect (start, handshake) and to list the tools; ``None`` for no limit.
        call_timeout: Seconds a call may take before it fails (and is cancelled on the server); ``None``: only the
            session's ``tool_timeout`` applies.
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        trust_annotations: bool = True,
        name: str | None = None,
        timeout: float | None = 30.0,
        call_timeout: float | None = None,
    ) -> None:
        if importlib.util.find_spec("mcp") is None:  # pragma: no cover - the extra is installed in development
            raise ImportError(_MISSING_SDK)
        if (command is None) == (url is None):
            raise TypeError("an MCPServer needs a command (MCPServer.stdio) or a url (MCPServer.http), not both")
        if command is not None and (not isinstance(command, str) or not command):
            raise ValueError("MCPServer.stdio needs a command to run")
        if isinstance(args, str):
            raise TypeError("args must be a list of strings, not one string (MCPServer.stdio('python', ['server.py']))")
        if url is not None and urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"MCPServer.http needs an http:// or https:// URL, not {url!r}")
        if prefix is not None and (not prefix or _NOT_NAME.search(prefix)):
            raise ValueError(f"prefix {prefix!r} must be letters, digits, '_' or '-'")
        for label, seconds in (("timeout", timeout), ("call_timeout", call_timeout)):
            if seconds is not None and not seconds > 0:
                raise ValueError(f"{label} must be a positive number of seconds or None, not {seconds!r}")
        self._command = command
        self._args = [str(a) for a in args]
        self._env = None if env is None else dict(env)
        self._cwd = None if cwd is None else os.fspath(cwd)
        self._url = url
        self._headers = None if headers is None else dict(headers)
        self.prefix = prefix
        self.trust_annotations = trust_annotations
        self._name = name
        self._reported_name: str | None = None
        self.timeout = timeout
        self.call_timeout = call_timeout
        # The thread and loop that own the connection; started on first use, stopped by a close.
        self._lock = threading.Lock()
        self._runner: _LoopThread | None = None
        # What follows is touched on the server's loop only, except ``_tools`` (read from any thread).
        self._link: _Link | None = None
        self._tools: list[Tool] | None = None  # the last listing, while no list_changed said it is stale
        self._generation = 0  # bumped by each invalidation: a listing that raced one is not cached
        self._requests: set[asyncio.Task[Any]] = set()

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        prefix: str | None = None,
        trust_annotations: bool = True,
        name: str | None = None,
        timeout: float | None = 30.0,
        call_timeout: float | None = None,
    ) -> MCPServer:
        """A server the library starts as a child process and talks to over its stdin and stdout.

        Args:
            command: The program (``"python"``, ``"uvx"``, ``"npx"``, a path).
            args: Its arguments.
            env: Environment variables for it, over the SDK's safe defaults (``PATH``, ``HOME``, ...).
            cwd: Its working directory.
            prefix, trust_annotations, name, timeout, call_timeout: See :class:`MCPServer`.
        """
        return cls(
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            prefix=prefix,
            trust_annotations=trust_annotations,
            name=name,
            timeout=timeout,
            call_timeout=call_timeout,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        trust_annotations: bool = True,
        name: str | None = None,
        timeout: float | None = 30.0,
        call_timeout: float | None = None,
    ) -> MCPServer:
        """A server reached over streamable HTTP.

        Args:
            url: Its endpoint (``http://127.0.0.1:8000/mcp``).
            headers: Sent with every request (``{"Authorization": "Bearer ..."}``).
            prefix, trust_annotations, name, timeout, call_timeout: See :class:`MCPServer`.
        """
        return cls(
            url=url,
            headers=headers,
            prefix=prefix,
            trust_annotations=trust_annotations,
            name=name,
            timeout=timeout,
            call_timeout=call_timeout,
        )

    # --- what others see --------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """How messages name the server: ``name=``, or what it calls itself, or its command or URL."""
        if self._name:
            return self._name
        if self._reported_name:
            return self._reported_name
        if self._command is not None:
            return " ".join([Path(self._command).name, *(Path(a).name for a in self._args[:1])])
        parts = urlsplit(self._url or "")
        return f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r})"

    @property
    def connected(self) -> bool:
        """Whether a connection is open (it opens on first use)."""
        link = self._link
        return link is not None and link.ready.done() and not link.ready.cancelled() and not link.stop.is_set()

    async def list_tools(self) -> list[Tool]:
        """The server's tools as they are now, connecting first if needed; from the cache while nothing changed.

        Raises:
            MCPServerError: The server could not be started, reached or listed (the message says which and why).
        """
        cached = self._tools
        if cached is not None:
            return list(cached)
        return list(await self._run(self._list_here()))

    async def aclose(self) -> None:
        """Closes the connection, stopping the process of a stdio server (waits until it has been reaped). A call
        still running fails, saying the connection was closed. The next use connects again."""
        runner = self._detach()
        if runner is None:
            return
        try:
            await asyncio.shield(asyncio.wrap_future(runner.submit(self._shutdown_here())))
        finally:
            runner.stop()

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code (not from the loop of a running turn's tool)."""
        runner = self._detach()
        if runner is None:
            return
        try:
            runner.submit(self._shutdown_here()).result(_CLOSE_TIMEOUT)
        except Exception:
            logger.warning("ai_widgets: closing the MCP server %s did not finish cleanly", self.name, exc_info=True)
        finally:
            runner.stop()

    async def __aenter__(self) -> MCPServer:
        """Connects now (rather than on first use): a server that cannot start says so here."""
        await self._run(self._connect_here())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- the server's own loop --------------------------------------------------------------------------------------

    def _loop_thread(self) -> _LoopThread:
        with self._lock:
            runner = self._runner
            if runner is None or not runner.alive:
                runner = self._runner = _LoopThread(f"ai_widgets MCP {self.name}")
                _open_servers.add(self)
            return runner

    def _detach(self) -> _LoopThread | None:
        with self._lock:
            runner, self._runner = self._runner, None
        return runner if runner is not None and runner.alive else None

    async def _run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Runs ``coroutine`` on the server's loop and waits for it here; cancelling this await cancels it there.
        A close that stops the loop first fails it (it never hangs)."""
        tracked = self._tracked(coroutine)
        for _ in range(3):
            try:
                future = self._loop_thread().submit(tracked)
            except _Stopped:
                continue  # closed meanwhile: the next use starts a new loop
            return await asyncio.wrap_future(future)
        tracked.close()
        raise MCPServerError(f"the MCP server {self.name!r} was being closed")

    async def _tracked(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        task = asyncio.current_task()
        if task is not None:
            self._requests.add(task)
        try:
            return await coroutine
        finally:
            if task is not None:
                self._requests.discard(task)

    async def _connect_here(self) -> None:
        await self._connect()

    async def _connect(self) -> _Link:
        """The open connection, opened now if there is none (on the server's loop).

        Raises:
            MCPServerError: It could not be opened.
        """
        link = self._link
        if link is None or link.stop.is_set() or (link.task is not None and link.task.done()):
            loop = asyncio.get_running_loop()
            link = _Link(ready=loop.create_future(), stop=asyncio.Event())
            self._link = link
            link.task = loop.create_task(self._own(link), name=f"ai_widgets MCP connection {self.name}")
        await asyncio.shield(link.ready)
        return link

    async def _own(self, link: _Link) -> None:
        """The one task that opens, keeps and closes a connection (anyio wants them in one task, and its cancel
        scopes nested: the connect deadline is a scope around the whole connection, lifted once connected)."""
        import anyio

        connected = False
        scope = anyio.CancelScope()
        try:
            with scope:
                if self.timeout is not None:
                    scope.deadline = anyio.current_time() + self.timeout
                async with contextlib.AsyncExitStack() as stack:
                    link.client = await self._open(stack, link)
                    scope.deadline = math.inf
                    connected = True
                    await self._serve(link)
            if scope.cancelled_caught and not connected:
                raise TimeoutError
        except asyncio.CancelledError:
            if not link.ready.done():
                link.ready.set_exception(MCPServerError(f"the MCP server {self.name!r} was closed while it connected"))
            raise
        except Exception as exc:
            if not connected:
                if not link.ready.done():
                    # The deadline's cancel may come out of the SDK as another error: it is still the deadline.
                    cause = TimeoutError() if scope.cancel_called else exc
                    link.ready.set_exception(await self._start_error(cause, link))
            else:  # a fault of ours after connecting: logged, and a waiting request told
                logger.exception("ai_widgets: the connection to the MCP server %s failed", self.name)
                if not link.ready.done():
                    link.ready.set_exception(MCPServerError(f"the MCP server {self.name!r} failed: {_describe(exc)}"))
        finally:
            link.stop.set()
            if link.stderr is not None:
                link.stderr.close_writer()
            if self._link is link:
                self._link = None
            self._invalidate()
            if not link.ready.done():
                link.ready.set_exception(MCPServerError(f"the connection to the MCP server {self.name!r} was closed"))

    async def _serve(self, link: _Link) -> None:
        """Keeps the open connection until it is stopped (a close, the server gone), following list changes."""
        reported = getattr(link.client.server_info, "name", None)
        if isinstance(reported, str) and reported.strip() and self._reported_name is None:
            self._reported_name = safe_text(reported.strip())[:80]
        capabilities = link.client.server_capabilities
        listener: asyncio.Task[None] | None = None
        if capabilities.tools is not None and capabilities.tools.list_changed:
            listener = asyncio.get_running_loop().create_task(self._listen(link))
        link.ready.set_result(None)
        try:
            await link.stop.wait()
        finally:
            if listener is not None:
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)

    async def _open(self, stack: contextlib.AsyncExitStack, link: _Link) -> Any:
        mcp = _sdk()
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self._command is not None:
            link.stderr = _StderrTail(self.name)
            parameters = StdioServerParameters(command=self._command, args=self._args, env=self._env, cwd=self._cwd)
            transport: Any = stdio_client(parameters, errlog=link.stderr.writer)
        else:
            import httpx2

            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self._headers, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            assert self._url is not None
            transport = streamable_http_client(self._url, http_client=http)

        def on_end() -> None:
            if not link.stop.is_set():
                link.lost = True
                link.stop.set()

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                logger.debug("ai_widgets: MCP server %s: %r", self.name, message)
                return
            method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
            if method == "notifications/tools/list_changed":
                self._invalidate()

        from mcp_types import Implementation

        client = mcp.Client(
            _watched(transport, on_end),
            message_handler=on_message,
            client_info=Implementation(name="ai_widgets", version=_version()),
            cache=None,
        )
        try:
            return await stack.enter_async_context(client)
        finally:
            if link.stderr is not None:
                link.stderr.close_writer()  # the child has its own end now (or never started)

    async def _listen(self, link: _Link) -> None:
        """Follows ``notifications/tools/list_changed`` on a 2026-era connection (a ``subscriptions/listen``
        stream); older connections deliver it to the message handler."""
        from mcp.client.subscriptions import ListenNotSupportedError, ToolsListChanged

        try:
            async with link.client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._invalidate()
        except ListenNotSupportedError:
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Changes can no longer be followed: list on every request from now on (never a stale list).
            link.cacheable = False
            self._invalidate()
            logger.debug("ai_widgets: MCP server %s: its list_changed stream ended: %r", self.name, exc)
        else:
            link.cacheable = False
            self._invalidate()

    def _invalidate(self) -> None:
        self._generation += 1
        self._tools = None

    async def _shutdown_here(self) -> None:
        link = self._link
        if link is not None:
            link.closing = True
            link.stop.set()
            if link.task is not None:
                await asyncio.wait([link.task], timeout=_CLOSE_TIMEOUT)
        others = [task for task in self._requests if task is not asyncio.current_task()]
        if others:  # calls still running end with "connection closed" as the link goes
            await asyncio.wait(others, timeout=2.0)

    # --- listing --------------------------------------------------------------------------------------------------

    async def _list_here(self) -> list[Tool]:
        import anyio

        if self._tools is not None:
            return self._tools
        generation = self._generation
        link = await self._connect()
        try:
            with anyio.fail_after(self.timeout):
                listed = await self._fetch(link)
        except TimeoutError:
            raise MCPServerError(
                f"the MCP server {self.name!r} did not list its tools within {self.timeout:g} seconds"
            ) from None
        except Exception as exc:
            if _connection_closed(exc) or link.lost:
                link.stop.set()
                note = await self._stderr_note(link)
                raise MCPServerError(
                    f"the MCP server {self.name!r} closed the connection while listing its tools{note}"
                ) from exc
            reason = self._scrub(_describe(exc))
            raise MCPServerError(f"the MCP server {self.name!r} could not list its tools: {reason}") from exc
        tools = self._build(listed)
        if generation == self._generation and link.cacheable and not link.stop.is_set():
            self._tools = tools
        return tools

    async def _fetch(self, link: _Link) -> list[Any]:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await link.client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    def _build(self, listed: Sequence[Any]) -> list[Tool]:
        tools: list[Tool] = []
        seen: set[str] = set()
        for spec in listed:
            shown = self._shown_name(spec.name)
            if shown is None or shown.casefold() in seen:
                logger.warning(
                    "ai_widgets: MCP server %s: skipped its tool %r (no usable unique name)", self.name, spec.name
                )
                continue
            parameters = _parameters(spec.input_schema)
            if parameters is None:
                logger.warning(
                    "ai_widgets: MCP server %s: skipped its tool %r (its input schema is not an object schema)",
                    self.name,
                    spec.name,
                )
                continue
            annotations = spec.annotations
            title = spec.title or (annotations.title if annotations is not None else None)
            try:
                definition = ToolDefinition(
                    name=shown,
                    description=spec.description or "",
                    parameters=parameters,
                    title=title or None,
                    risk=self._risk(annotations),
                    requires_approval=not self.trust_annotations,
                )
            except ValueError as exc:
                logger.warning("ai_widgets: MCP server %s: skipped its tool %r: %s", self.name, spec.name, exc)
                continue
            seen.add(shown.casefold())
            tools.append(Tool(definition, self._handler(spec.name)))
        return tools

    def _shown_name(self, name: str) -> str | None:
        full = f"{self.prefix}_{name}" if self.prefix else name
        cleaned = _NOT_NAME.sub("_", full)[:64]
        return cleaned or None

    def _risk(self, annotations: Any) -> ToolRisk:
        if not self.trust_annotations or annotations is None:
            return ToolRisk.DESTRUCTIVE
        if annotations.read_only_hint is True:
            return ToolRisk.READ_ONLY
        if annotations.destructive_hint is False:
            return ToolRisk.NORMAL
        return ToolRisk.DESTRUCTIVE

    # --- calling --------------------------------------------------------------------------------------------------

    def _handler(self, mcp_name: str) -> Any:
        async def call(invocation: ToolInvocation) -> ToolOutcome:
            arguments = invocation.parsed_arguments
            if arguments is None:
                parsed = parse_arguments(invocation.arguments)
                if isinstance(parsed, str):
                    return ToolOutcome.failure(f"The arguments are not a valid JSON object ({parsed}).")
                arguments = parsed
            return await self._run(
                self._call_here(mcp_name, invocation.tool_name, dict(arguments), invocation.progress)
            )

        call.__name__ = call.__qualname__ = f"mcp_{_NOT_NAME.sub('_', mcp_name)}"
        return call

    async def _call_here(
        self, mcp_name: str, shown: str, arguments: dict[str, Any], progress: ToolProgress
    ) -> ToolOutcome:
        import anyio
        from mcp.shared.exceptions import MCPError

        try:
            link = await self._connect()
        except MCPServerError as exc:
            return ToolOutcome.failure(f"Not run: {exc}.", retryable=True, error=exc)

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            fraction: float | None = None
            if total is not None and math.isfinite(total) and total > 0 and math.isfinite(done):
                fraction = min(1.0, max(0.0, done / total))
            text = safe_text(message)[:300] if isinstance(message, str) and message else None
            if text is None and fraction is None and math.isfinite(done):
                text = f"{done:g}"
            with contextlib.suppress(ValueError):
                progress.report(fraction, text)

        try:
            with anyio.fail_after(self.call_timeout):
                result = await link.client.call_tool(mcp_name, arguments, progress_callback=on_progress)
        except TimeoutError:
            # The timeout cancelled the request, which told the server.
            message = f"The MCP server {self.name!r} did not finish the call within {self.call_timeout:g} seconds."
            return ToolOutcome.failure(message, retryable=True, error=message)
        except MCPError as exc:
            if not (_connection_closed(exc) or link.lost):
                # An error the server sent (an unknown tool, invalid arguments, an internal error): told as it wrote it.
                text = safe_text(exc.message)[:2000]
                return ToolOutcome.failure(
                    f"The MCP server {self.name!r} refused the call of {shown}: {text}", retryable=True, error=exc
                )
            if link.closing:
                message = f"The connection to the MCP server {self.name!r} was closed during the call of {shown}."
                return ToolOutcome.failure(message, retryable=True, error=message)
            link.stop.set()
            note = await self._stderr_note(link)
            went = "exited" if self._command is not None else "closed the connection"
            message = f"The MCP server {self.name!r} {went} during the call of {shown}, so it did not finish."
            return ToolOutcome.failure(message, retryable=True, error=message + note)
        except Exception as exc:
            link.stop.set()  # the connection is in doubt: the next use opens a new one
            return ToolOutcome.failure(
                f"The call of {shown} to the MCP server {self.name!r} failed ({type(exc).__name__}).",
                retryable=True,
                error=exc,
            )
        return _outcome(result, shown, self.name)

    # --- errors ---------------------------------------------------------------------------------------------------

    async def _start_error(self, exc: BaseException, link: _Link) -> MCPServerError:
        leaf = _leaf(exc)
        what = f"the MCP server {self.name!r}"
        if isinstance(leaf, TimeoutError):
            doing = "start and answer" if self._command is not None else "answer"
            return MCPServerError(
                f"{what} did not {doing} within {self.timeout:g} seconds{await self._stderr_note(link)}"
            )
        if isinstance(leaf, asyncio.CancelledError):
            return MCPServerError(f"{what} was closed while it connected")
        if isinstance(leaf, OSError) and self._command is not None and not link.lost:
            reason = leaf.strerror or str(leaf)
            return MCPServerError(f"{what} could not start: {reason}: {self._command!r}")
        if _connection_closed(leaf) or link.lost:
            gone = "exited before it was ready" if self._command is not None else "closed the connection"
            return MCPServerError(f"{what} {gone}{await self._stderr_note(link)}")
        if self._url is not None:
            reason = self._scrub(_describe(leaf))
            return MCPServerError(f"{what} could not be reached at {_shown_url(self._url)}: {reason}")
        return MCPServerError(f"{what} could not connect: {_describe(leaf)}{await self._stderr_note(link)}")

    def _scrub(self, text: str) -> str:
        """``text`` without the credentials of the server's URL (user and password), should an error quote it."""
        parts = urlsplit(self._url or "")
        for secret in (parts.password, parts.username):
            if secret:
                text = text.replace(secret, "***")
        return text

    async def _stderr_note(self, link: _Link) -> str:
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
        if len(text) > _STDERR_SHOWN:
            text = "…" + text[-_STDERR_SHOWN:]
        return f"\n\nIts last output (stderr):\n{redact(text)}"


# --- the connection ---------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Link:
    """One connection, owned by one task on the server's loop."""

    ready: asyncio.Future[None]
    stop: asyncio.Event
    task: asyncio.Task[None] | None = None
    client: Any = None
    stderr: _StderrTail | None = None
    lost: bool = False  # the server ended the connection (a stdio server's process exited)
    closing: bool = False  # a close (ours) ends it
    cacheable: bool = True  # the tool list's changes can be followed, so a listing may be kept


class _WatchedReads:
    """A transport's read stream that says when the server has ended it (a process that exited): the connection
    is then closed at once, and the process reaped, instead of when it is next used."""

    def __init__(self, inner: Any, on_end: Any) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedReads:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise
        except Exception as exc:
            import anyio

            if isinstance(exc, anyio.ClosedResourceError):
                self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReads:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc_info)
        return result


@contextlib.asynccontextmanager
async def _watched(transport: Any, on_end: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (reads, writes):
        yield _WatchedReads(reads, on_end), writes


class _StderrTail:
    """A stdio server's stderr, read on a thread of its own: the end of it kept for error messages, every line
    logged at DEBUG (a server's log lines stay out of the notebook)."""

    def __init__(self, label: str) -> None:
        read_end, write_end = os.pipe()
        self.writer = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")  # the child's stderr
        self.done = threading.Event()
        self._label = label
        self._kept: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()
        threading.Thread(
            target=self._pump, args=(read_end,), name=f"ai_widgets MCP stderr {label}", daemon=True
        ).start()

    def close_writer(self) -> None:
        """Closes this process's copy of the pipe's write end, so the pipe ends when the child's does."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def text(self) -> str:
        with self._lock:
            return "".join(self._kept)

    def _pump(self, fd: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                text = decoder.decode(chunk, final=not chunk)
                if text:
                    self._keep(text)
                    if logger.isEnabledFor(logging.DEBUG):
                        for line in text.splitlines():
                            logger.debug("MCP server %s (stderr): %s", self._label, line)
                if not chunk:
                    break
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
            self.done.set()

    def _keep(self, text: str) -> None:
        with self._lock:
            self._kept.append(text)
            self._size += len(text)
            while self._size > _STDERR_KEPT and len(self._kept) > 1:
                self._size -= len(self._kept.popleft())
            if self._size > _STDERR_KEPT:
                only = self._kept.pop()[-_STDERR_KEPT:]
                self._kept.append(only)
                self._size = len(only)


class _Stopped(RuntimeError):
    """The loop thread was stopped (a close) before a request could be sent to it."""


class _LoopThread:
    """A thread running an event loop of its own, where one server's connection lives.

    Every request sent to it is remembered until it is done: a request the loop never ran, because a close stopped
    the loop first, is failed by :meth:`stop`, so nobody waits for it forever.
    """

    def __init__(self, label: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._stopped = False
        self._label = label
        self._thread = threading.Thread(target=self._run, name=label, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    def submit(self, coroutine: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        """Runs ``coroutine`` on the loop.

        Raises:
            _Stopped: The loop was stopped (``coroutine`` was not started).
        """
        with self._lock:
            if self._stopped:
                raise _Stopped(self._label)
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def stop(self) -> None:
        """Stops the loop (its tasks cancelled), waits for the thread, and fails the requests it never finished."""
        with self._lock:
            self._stopped = True
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self._thread is not threading.current_thread():
            self._thread.join(_CLOSE_TIMEOUT)
        with self._lock:
            left = [future for future in self._pending if not future.done()]
        for future in left:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(MCPServerError(f"{self._label}: the connection was closed"))

    def _run(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            try:
                pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()


#: Servers with a loop thread: closed when the interpreter exits, so no child process outlives the kernel.
_open_servers: weakref.WeakSet[MCPServer] = weakref.WeakSet()


@atexit.register
def _close_open_servers() -> None:
    for server in list(_open_servers):
        with contextlib.suppress(Exception):
            server.close()


# --- results ------------------------------------------------------------------------------------------------------------


def _outcome(result: Any, shown: str, server: str) -> ToolOutcome:
    """A ``CallToolResult`` as an outcome: text and structured content for the value, images and audio as
    attachments (the card shows images), resource links and embedded resources as citations."""
    texts: list[str] = []
    attachments: list[Attachment] = []
    citations: list[Citation] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            attachments.append(Attachment(mime_type=block.mime_type, data=block.data))
        elif kind == "resource_link":
            citations.append(
                Citation(url=str(block.uri), title=block.title or block.name or None, snippet=block.description)
            )
        elif kind == "resource":
            resource = block.resource
            uri = str(resource.uri)
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                texts.append(text)
                citations.append(Citation(url=uri, snippet=text[:200] or None))
            else:
                mime = resource.mime_type or "application/octet-stream"
                attachments.append(Attachment(mime_type=mime, data=resource.blob, name=uri))
                citations.append(Citation(url=uri))
    text = "\n\n".join(t for t in texts if t)
    if result.is_error:
        return ToolOutcome.failure(text or f"The MCP server {server!r} reported an error from {shown}.", retryable=True)
    structured = result.structured_content
    if structured is not None:
        value: Any = structured
    elif text:
        value = text
    else:
        value = None
    shown_text = None
    if value is None and attachments:
        kinds = ", ".join(sorted({a.mime_type for a in attachments}))
        shown_text = f"Returned {len(attachments)} file{'' if len(attachments) == 1 else 's'} ({kinds})."
    try:
        return ToolOutcome.success(value, text=shown_text, citations=citations, attachments=attachments)
    except ValueError as exc:
        return ToolOutcome.failure(
            f"The MCP server {server!r} returned a result from {shown} that cannot be kept: {exc}.",
            retryable=False,
            error=exc,
        )


def _parameters(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type", "object")
    if kind != "object":
        return None
    return {"type": "object", **schema} if "type" not in schema else dict(schema)


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
