"""One server's connection over its life: opened on first use by one task on the server's own loop thread, kept
while the server lives (following its tool list's changes), closed on request, after a crash or at exit, with a
stdio server's process always reaped. Every request reaches that loop through :meth:`Connection.run`."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import math
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from ai_widgets._safe import safe_text
from ai_widgets.mcp._asking import Callers
from ai_widgets.mcp._base import CLOSE_TIMEOUT, Endpoint, MCPServerError, T, logger, package_version, sdk
from ai_widgets.mcp._errors import describe, junk, quiet_sdk_parse_errors, start_error
from ai_widgets.mcp._features import Features, RootsOption
from ai_widgets.mcp._link import Link, LoopThread, StderrTail, Stopped, watched
from ai_widgets.mcp._screen import Screen, screening

__all__: list[str] = ["Connection"]


class Connection:
    """The connection to one server, opened again on the next use after a close or a crash.

    The thread and loop that own the connection start on first use and stop at a close. All but the loop thread's
    lifecycle (``_runner``, ``_closing``) is touched on the server's loop only.

    Args:
        endpoint: Where the server is.
        name: How messages name the server (``None``: what it calls itself, or its command or URL).
        timeout: Seconds to connect (start, handshake); ``None`` for no limit.
        on_tools_changed: Called on the server's loop when the server's tool list may have changed (it said so,
            its changes can no longer be followed, or the connection ended).
        roots: The roots given to the server (see :class:`~ai_widgets.mcp.MCPServer`).
        auth: An ``httpx`` authentication flow for an HTTP server, or ``None``.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        name: str | None,
        timeout: float | None,
        on_tools_changed: Callable[[], None],
        roots: RootsOption = None,
        auth: Any = None,
    ) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._given_name = name
        self._reported_name: str | None = None
        self._on_tools_changed = on_tools_changed
        self._lock = threading.Lock()
        self._runner: LoopThread | None = None
        self._closing: concurrent.futures.Future[None] | None = None  # the last close: done once its process is reaped
        self._link: Link | None = None
        self._requests: set[asyncio.Task[Any]] = set()
        self.callers = Callers()  # the calls running now, for a server's questions to the person
        self.features = Features(self.callers, lambda: self.name, roots=roots)
        self._auth = auth

    @property
    def name(self) -> str:
        """How messages name the server: ``name=``, or what it calls itself, or its command or URL."""
        return self._given_name or self._reported_name or self.endpoint.label

    @property
    def connected(self) -> bool:
        """Whether a connection is open."""
        link = self._link
        return link is not None and link.ready.done() and not link.ready.cancelled() and not link.stop.is_set()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs ``coroutine`` on the server's loop and waits for it here; cancelling this await cancels it there.
        A close that stops the loop first fails it (it never hangs)."""
        tracked = self._tracked(coroutine)
        for _ in range(3):
            try:
                future = self._loop_thread().submit(tracked)
            except Stopped:
                continue  # closed meanwhile: the next use starts a new loop
            return await asyncio.wrap_future(future)
        tracked.close()
        raise MCPServerError(f"the MCP server {self.name!r} was being closed")

    async def connect(self) -> Link:
        """The open connection, opened now if there is none (on the server's loop).

        Raises:
            MCPServerError: It could not be opened.
        """
        link = self._link
        if link is None or link.stop.is_set() or (link.task is not None and link.task.done()):
            loop = asyncio.get_running_loop()
            link = Link(ready=loop.create_future(), stop=asyncio.Event())
            self._link = link
            link.task = loop.create_task(self._own(link), name=f"ai_widgets MCP connection {self.name}")
        await asyncio.shield(link.ready)
        return link

    async def aclose(self) -> None:
        """Closes the connection and stops the loop thread, waiting until a stdio server's process is reaped (also
        when another close, from any thread or loop, is doing it)."""
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
        """Like :meth:`aclose`, from synchronous code (not from the server's loop)."""
        runner, done = self._detach()
        if runner is None:
            if done is not None and not done.done():
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    done.result(2 * CLOSE_TIMEOUT)  # another close is under way: wait for its end
            return
        assert done is not None
        try:
            runner.submit(self._shutdown_here()).result(CLOSE_TIMEOUT)
        except Exception:
            logger.warning("ai_widgets: closing the MCP server %s did not finish cleanly", self.name, exc_info=True)
        finally:
            try:
                runner.stop()
            finally:
                done.set_result(None)

    # --- the loop thread ------------------------------------------------------------------------------------------

    def _loop_thread(self) -> LoopThread:
        with self._lock:
            runner = self._runner
            if runner is None or not runner.alive:
                runner = self._runner = LoopThread(f"ai_widgets MCP {self.name}")
                open_connections.add(self)
            return runner

    def _detach(self) -> tuple[LoopThread | None, concurrent.futures.Future[None] | None]:
        """The loop thread to close, with the future its close completes; or ``None`` and the close under way (if
        any), which a second closer waits for."""
        with self._lock:
            runner, self._runner = self._runner, None
            if runner is not None and runner.alive:
                done: concurrent.futures.Future[None] = concurrent.futures.Future()
                self._closing = done
                return runner, done
            return None, self._closing

    async def _tracked(self, coroutine: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        if task is not None:
            self._requests.add(task)
        try:
            return await coroutine
        finally:
            if task is not None:
                self._requests.discard(task)

    # --- the task that owns the connection --------------------------------------------------------------------------

    async def _own(self, link: Link) -> None:
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
                    error = await start_error(
                        cause, link, server=self.name, endpoint=self.endpoint, timeout=self.timeout
                    )
                    link.ready.set_exception(error)
            else:  # a fault of ours after connecting: logged, and a waiting request told
                logger.exception("ai_widgets: the connection to the MCP server %s failed", self.name)
                if not link.ready.done():
                    link.ready.set_exception(MCPServerError(f"the MCP server {self.name!r} failed: {describe(exc)}"))
        finally:
            link.stop.set()
            link.wire.ended()
            if link.stderr is not None:
                link.stderr.close_writer()
            if self._link is link:
                self._link = None
            self._on_tools_changed()
            if not link.ready.done():
                link.ready.set_exception(MCPServerError(f"the connection to the MCP server {self.name!r} was closed"))

    async def _serve(self, link: Link) -> None:
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

    async def _open(self, stack: contextlib.AsyncExitStack, link: Link) -> Any:
        mcp = sdk()
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        endpoint = self.endpoint
        if endpoint.command is not None:
            quiet_sdk_parse_errors()
            link.stderr = StderrTail(self.name)
            parameters = StdioServerParameters(
                command=endpoint.command, args=endpoint.args, env=endpoint.env, cwd=endpoint.cwd
            )
            transport: Any = stdio_client(parameters, errlog=link.stderr.writer)
        else:
            import httpx2

            async def on_response(response: Any) -> None:
                # Only the status is kept: never a header or a token. A request that got through clears it.
                if response.status_code in (401, 403):
                    link.refused = response.status_code
                elif response.is_success:
                    link.refused = None

            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=endpoint.headers,
                    auth=self._auth,
                    timeout=httpx2.Timeout(30.0, read=300.0),
                    event_hooks={"response": [on_response]},
                )
            )
            assert endpoint.url is not None
            transport = streamable_http_client(endpoint.url, http_client=http)

        def on_end() -> None:
            if not link.stop.is_set():
                link.lost = True
                link.stop.set()

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                if endpoint.stdio and isinstance(message, ValueError) and not link.junk_said:
                    # A line on stdout that is not JSON-RPC (a print() in the server): said once, in one line (the
                    # SDK's own traceback for each such line is kept out of the notebook, see quiet_sdk_parse_errors).
                    link.junk_said = True
                    logger.warning(
                        "ai_widgets: the MCP server %s wrote to its stdout a line that the MCP SDK cannot read as a "
                        "message, so it is ignored: %s (stdout carries only the protocol: a server logs to stderr)",
                        self.name,
                        junk(message),
                    )
                else:
                    logger.debug("ai_widgets: MCP server %s: %r", self.name, message)
                return
            method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
            if method == "notifications/tools/list_changed":
                self._on_tools_changed()

        from mcp_types import Implementation

        client = mcp.Client(
            watched(screening(transport, Screen(lambda: self.name, lambda: negotiated(link), link.wire)), on_end),
            message_handler=on_message,
            client_info=Implementation(name="ai_widgets", version=package_version()),
            **self.features.client_options(),
            cache=None,
        )
        try:
            return await stack.enter_async_context(client)
        finally:
            if link.stderr is not None:
                link.stderr.close_writer()  # the child has its own end now (or never started)

    async def _listen(self, link: Link) -> None:
        """Follows ``notifications/tools/list_changed`` on a 2026-era connection (a ``subscriptions/listen``
        stream); older connections deliver it to the message handler."""
        from mcp.client.subscriptions import ListenNotSupportedError, ToolsListChanged

        try:
            async with link.client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._on_tools_changed()
        except ListenNotSupportedError:
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Changes can no longer be followed: list on every request from now on (never a stale list).
            link.cacheable = False
            self._on_tools_changed()
            logger.debug("ai_widgets: MCP server %s: its list_changed stream ended: %r", self.name, exc)
        else:
            link.cacheable = False
            self._on_tools_changed()

    async def _shutdown_here(self) -> None:
        link = self._link
        if link is not None:
            link.closing = True
            link.stop.set()
            if link.task is not None:
                await asyncio.wait([link.task], timeout=CLOSE_TIMEOUT)
        others = [task for task in self._requests if task is not asyncio.current_task()]
        if others:  # calls still running end with "connection closed" as the link goes
            await asyncio.wait(others, timeout=2.0)


def negotiated(link: Link) -> str | None:
    """The protocol version the connection agreed on, or ``None`` before it is known."""
    try:
        return str(link.client.protocol_version) if link.client is not None else None
    except RuntimeError:  # not connected yet
        return None


#: Connections with a loop thread: closed when the interpreter exits, so no child process outlives the kernel.
open_connections: weakref.WeakSet[Connection] = weakref.WeakSet()


@atexit.register
def close_open_connections() -> None:
    for connection in list(open_connections):
        with contextlib.suppress(Exception):
            connection.close()
