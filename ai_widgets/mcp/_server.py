"""``MCPServer``: a source of tools on an MCP server, and how its tools and calls map to ai_widgets."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import importlib.util
import logging
import math
import os
import threading
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from ai_widgets._safe import UnsafeValueError, checked_json, redact, safe_text
from ai_widgets.mcp._base import (
    _CLOSE_TIMEOUT,
    _MAX_PAGES,
    _MISSING_SDK,
    _NOT_NAME,
    _STDERR_SHOWN,
    _T,
    MCPServerError,
    _connection_closed,
    _describe,
    _leaf,
    _sdk,
    _shown_url,
    _version,
    logger,
)
from ai_widgets.mcp._connection import _Link, _LoopThread, _StderrTail, _Stopped, _watched
from ai_widgets.mcp._results import _outcome, _parameters
from ai_widgets.tools import (
    Tool,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
    ToolProgress,
    ToolRisk,
    parse_arguments,
)

__all__ = ["MCPServer"]


class MCPServer:
    """An MCP server as a source of tools, for ``tools=[...]`` and :meth:`ToolRegistry.add`.

    Build one with :meth:`stdio` (a command the library starts, talking over its stdin and stdout) or :meth:`http`
    (a streamable HTTP endpoint). It connects on first use and is closed with ``await server.aclose()``,
    :meth:`close`, or ``async with server:``; after a close (or a crash) the next use connects again.

    Each MCP tool becomes a :class:`~ai_widgets.Tool`: its input schema is the parameters (checked before the call
    is sent), its title (or its annotations' title) is the card's title. A server's annotations are its own claims, which the MCP specification says a client must
    not trust unless it trusts the server: by default every tool is ``destructive`` and asks before each call (a
    person's "allow always" holds per tool), whatever it claims. With ``trust_annotations=True`` (the person vouches
    for the server) its risk comes from its annotations: ``readOnlyHint`` -> ``read_only``; ``destructiveHint:
    false`` -> ``normal``; otherwise ``destructive`` (the MCP default), asked about by the default policy.

    Results: text becomes the value (a string), structured content the value shown as JSON (and sent to the model
    as JSON), images and audio attachments, resource links and embedded resources citations; a result marked
    ``isError`` is a failure the model sees, as the server wrote it. Progress the server reports moves the card's
    progress bar; cancelling a call (Stop, or the card's Cancel) cancels it on the server.

    Args (of both constructors):
        prefix: Put before every tool name, joined with ``_`` (``prefix="fs"``: ``fs_read_file``), so two servers'
            tools cannot clash.
        trust_annotations: Vouch for the server: derive each tool's risk from its annotations, so read-only and
            non-destructive tools run unasked. ``False`` (the default): every call asks a person.
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
        trust_annotations: bool = False,
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
        self._closing: concurrent.futures.Future[None] | None = None  # the last close: done once its process is reaped
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
        trust_annotations: bool = False,
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
        trust_annotations: bool = False,
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
        """Closes the connection, stopping the process of a stdio server (waits until it has been reaped, also when
        another close, from any thread or loop, is doing it). A call still running fails, saying the connection was
        closed. The next use connects again."""
        runner, done = self._detach()
        if runner is None:
            if done is not None and not done.done():
                await asyncio.shield(asyncio.wrap_future(done))  # another close is under way: wait for its end
            return
        assert done is not None
        try:
            await asyncio.shield(asyncio.wrap_future(runner.submit(self._shutdown_here())))
        finally:
            try:
                runner.stop()
            finally:
                done.set_result(None)

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code (not from the loop of a running turn's tool)."""
        runner, done = self._detach()
        if runner is None:
            if done is not None and not done.done():
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    done.result(2 * _CLOSE_TIMEOUT)  # another close is under way: wait for its end
            return
        assert done is not None
        try:
            runner.submit(self._shutdown_here()).result(_CLOSE_TIMEOUT)
        except Exception:
            logger.warning("ai_widgets: closing the MCP server %s did not finish cleanly", self.name, exc_info=True)
        finally:
            try:
                runner.stop()
            finally:
                done.set_result(None)

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

    def _detach(self) -> tuple[_LoopThread | None, concurrent.futures.Future[None] | None]:
        """The loop thread to close, with the future its close completes; or ``None`` and the close under way (if
        any), which a second closer waits for."""
        with self._lock:
            runner, self._runner = self._runner, None
            if runner is not None and runner.alive:
                done: concurrent.futures.Future[None] = concurrent.futures.Future()
                self._closing = done
                return runner, done
            return None, self._closing

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
            _quiet_sdk_parse_errors()
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
                if self._command is not None and isinstance(message, ValueError) and not link.junk_said:
                    # A line on stdout that is not JSON-RPC (a print() in the server): said once, in one line (the
                    # SDK's own traceback for each such line is kept out of the notebook, see _quiet_sdk_parse_errors).
                    link.junk_said = True
                    logger.warning(
                        "ai_widgets: the MCP server %s wrote to its stdout a line that the MCP SDK cannot read as a "
                        "message, so it is ignored: %s (stdout carries only the protocol: a server logs to stderr)",
                        self.name,
                        _junk(message),
                    )
                else:
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
        # A name that needs no change keeps it: one that had to be changed ("my tool" -> "my_tool") gives way to it.
        exact = {
            spec.name.casefold()
            for spec in listed
            if isinstance(spec.name, str) and self._shown_name(spec.name) == self._full_name(spec.name)
        }
        for spec in listed:
            shown = self._shown_name(spec.name)
            changed = shown is not None and shown != self._full_name(spec.name)
            if shown is None or shown.casefold() in seen or (changed and shown.casefold() in exact):
                logger.warning(
                    "ai_widgets: MCP server %s: skipped its tool %r (no usable unique name)", self.name, spec.name
                )
                continue
            parameters = _parameters(spec.input_schema)
            if parameters is not None:
                try:
                    # JSON the SDK reads but no request can carry (NaN, Infinity: pydantic's parser takes them) would
                    # fail every request that offers any tool: NaN and Infinity become null.
                    parameters = checked_json(parameters, where="its input schema")
                except UnsafeValueError as exc:
                    logger.warning("ai_widgets: MCP server %s: skipped its tool %r: %s", self.name, spec.name, exc)
                    continue
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

    def _full_name(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else name

    def _shown_name(self, name: str) -> str | None:
        """The name every provider takes: characters outside letters, digits, ``_`` and ``-`` become ``_``; at most
        64 characters; a letter or ``_`` first (Gemini refuses any other first character, failing every request that
        offers the tool)."""
        cleaned = _NOT_NAME.sub("_", self._full_name(name))
        if cleaned and not (cleaned[0].isascii() and (cleaned[0].isalpha() or cleaned[0] == "_")):
            cleaned = "_" + cleaned
        return cleaned[:64] or None

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
            leaf = _leaf(exc)
            if isinstance(leaf, ValidationError):
                # The server answered, with a result that does not follow the protocol (a content type this SDK does
                # not know, say): that call fails, and the connection (with the server's state) is kept.
                message = (
                    f"The MCP server {self.name!r} answered the call of {shown} with a result that does not follow the "
                    f"MCP protocol, so it cannot be read ({_unreadable(leaf)})."
                )
                return ToolOutcome.failure(message, retryable=False, error=leaf)
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


def _unreadable(error: ValidationError) -> str:
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


def _junk(error: ValueError) -> str:
    """The line a server wrote to stdout that is not a message, as the SDK's parse error quotes it, shortened."""
    line: Any = None
    if isinstance(error, ValidationError) and error.error_count():
        line = error.errors(include_url=False)[0].get("input")
    text = line if isinstance(line, str) else str(error)
    text = safe_text(" ".join(text.split()))
    return repr(text if len(text) <= 120 else text[:119] + "…")


class _OwnParseErrors(logging.Filter):
    """Drops the SDK's traceback for a stdout line that is not a message when it comes from one of this library's
    connections (their loop threads are named ``ai_widgets MCP ...``); the connection says so once instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.msg == "Failed to parse JSONRPC message from server"
            and record.threadName is not None
            and record.threadName.startswith("ai_widgets MCP ")
        )


_parse_filter = _OwnParseErrors()


def _quiet_sdk_parse_errors() -> None:
    sdk_logger = logging.getLogger("mcp.client.stdio")
    if _parse_filter not in sdk_logger.filters:
        sdk_logger.addFilter(_parse_filter)


_open_servers: weakref.WeakSet[MCPServer] = weakref.WeakSet()


@atexit.register
def _close_open_servers() -> None:
    for server in list(_open_servers):
        with contextlib.suppress(Exception):
            server.close()
