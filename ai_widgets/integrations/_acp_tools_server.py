"""The session's own tools offered to an ACP agent as an MCP server that the kernel serves (:class:`ACPToolsServer`):
streamable HTTP on loopback behind a secret bearer token, on a thread and event loop of its own, each call run on the
session's event loop and answered with its outcome.

Why a thread of its own: the agent calls these tools while the session's loop awaits the agent's turn, and a kernel's
loop must never be handed to a web server (uvicorn replaces SIGINT's handler when it serves on the main thread, and
then a kernel interrupt no longer reaches the person's code). The server's loop only moves bytes; what a call does
(the card, the person's approval, the code in the kernel) happens on the session's loop, through
``asyncio.run_coroutine_threadsafe``.

What keeps other programs out: the socket listens on 127.0.0.1 only, on a port the OS picks; every request needs
``Authorization: Bearer <token>`` (a fresh ``secrets.token_urlsafe(32)`` per server, compared in constant time) or
gets 401; and a request whose ``Host`` is not this loopback address and port (a web page reaching it by DNS
rebinding) gets 421. The token is in :meth:`ACPToolsServer.headers` alone: never in the repr, a log line or an error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import contextlib
import logging
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

try:
    import mcp_types as types
    import uvicorn
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.models import InitializationOptions
    from mcp.server.session import ServerSession
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise ImportError(
        'offering the session\'s tools to an ACP agent needs the MCP SDK: pip install "ai_widgets[acp]"'
    ) from exc

from ai_widgets._media import IMAGE_TYPES, sniff_image, whole_image
from ai_widgets.messages import ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.tools import Tool, ToolDefinition, ToolOutcome, ToolRisk

__all__ = ["ACPToolsServer", "OfferedToolCall"]

logger = logging.getLogger("ai_widgets")

T = TypeVar("T")

#: The key under which Claude Code puts, in a ``tools/call``'s ``_meta``, the id of the tool call it announced to the
#: ACP client (and asked permission for): the card this call belongs to.
CLAUDE_TOOL_USE_ID = "claudecode/toolUseId"

#: The largest image of a result that goes to the agent, in base64 characters (Anthropic's limit, the strictest).
DEFAULT_MAX_IMAGE_CHARS = 5 * 1024 * 1024

#: The name of the server's thread.
THREAD_NAME = "ai_widgets-acp-tools"

#: Where the server answers; any other path is 404.
PATH = "/mcp"

#: Seconds to wait for the server's thread to stop before giving up on it (it is a daemon thread: it ends with the
#: process at the latest).
STOP_TIMEOUT = 10.0

CLOSED_AS_IT_STARTED = "the tools server was closed as it started"

CLOSING = "The call was not run: the session's tools server is closing."

INSTRUCTIONS = (
    "These tools run in the person's Jupyter kernel session, beside their data. A call may wait while the person is "
    "asked to allow it, and the person may decline it."
)


@dataclass(frozen=True)
class OfferedToolCall:
    """One call of an offered tool, as the agent made it.

    Attributes:
        name: The tool's name.
        arguments: The arguments the agent sent (not validated here: the tool validates them when it runs).
        meta: The call's ``_meta``, as JSON (``progressToken``, Claude Code's ``claudecode/toolUseId``...).
        definition: The tool's definition as the server listed it when the call came.
    """

    name: str
    arguments: dict[str, Any]
    meta: dict[str, Any]
    definition: ToolDefinition

    @property
    def tool_use_id(self) -> str | None:
        """The id of the agent's own tool call this call belongs to (Claude Code sends it in ``_meta``), if any."""
        value = self.meta.get(CLAUDE_TOOL_USE_ID)
        return value if isinstance(value, str) and value else None


#: Runs one call on the session's event loop: its outcome, or the call's part once it ended (whose text then says
#: that the person edited the arguments, where they did).
CallTool = Callable[[OfferedToolCall], Awaitable["ToolOutcome | ToolCallPart"]]


class ACPToolsServer:
    """An MCP server offering the session's tools to an ACP agent, over streamable HTTP on loopback.

    It lists what ``tools`` returns at each ``tools/list`` (so it follows the session's tools), and tells connected
    agents ``notifications/tools/list_changed`` when :meth:`refresh` finds the list changed. A ``tools/call`` of a
    listed tool is handed to ``call`` on the session's event loop (the loop :meth:`start` ran on); its outcome becomes
    the MCP result: the text the model would read (``ToolOutcome.model_content()``, cut to ``max_text_chars`` in the
    middle as for any provider), the images of the outcome (a code run's figures, image attachments, the image its
    display shows), and ``isError`` for a failure. A call of a tool that is not listed, a ``call`` that raises or is
    cancelled, and a server closing mid-call all answer ``isError`` with a sentence saying so; when the agent cancels
    its request, ``call``'s task is cancelled.

    The server speaks both eras of the protocol: 2025's ``initialize`` handshake (what Claude Code and Gemini CLI
    use), with ``list_changed`` on the session's standalone stream, and 2026's per-request protocol, with
    ``list_changed`` on ``subscriptions/listen`` streams.

    Args:
        tools: The tools to offer, as they are now: ``Tool`` objects or their ``ToolDefinition`` (a request's
            ``tools``). Called on the session's loop; the first tool of a name is the one offered.
        call: Runs one call on the session's loop and returns its outcome (or its ``ToolCallPart`` once ended).
        name: The name the server gives itself in ``initialize``.
        max_text_chars: The most characters of a result's text sent to the agent.
        max_image_chars: The largest image of a result sent to the agent, in base64 characters; larger ones are left
            out (the text still says what the result was).

    Raises:
        ValueError: A limit is below 1.
    """

    def __init__(
        self,
        tools: Callable[[], Iterable[Tool | ToolDefinition]],
        call: CallTool,
        *,
        name: str = "ai_widgets",
        max_text_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
        max_image_chars: int = DEFAULT_MAX_IMAGE_CHARS,
    ) -> None:
        for label, limit in (("max_text_chars", max_text_chars), ("max_image_chars", max_image_chars)):
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(f"{label} must be a positive int, not {limit!r}")
        self._tools = tools
        self._call = call
        self._name = name
        self._max_text_chars = max_text_chars
        self._max_image_chars = max_image_chars
        self._token = secrets.token_urlsafe(32)
        self._expected = f"Bearer {self._token}".encode("ascii")
        self._state: Literal["new", "starting", "running", "closed"] = "new"
        self._port: int | None = None
        self._hosts: frozenset[bytes] = frozenset()
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self._server_loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._stopped: concurrent.futures.Future[None] = concurrent.futures.Future()
        # Touched on the session's loop only: the list agents last saw (listed, or announced as changed).
        self._known: tuple[ToolDefinition, ...] | None = None
        # Touched on the server's loop only: the handshake-era connections, by their Mcp-Session-Id, to tell of a
        # changed list (2026-era clients listen on the bus instead).
        self._connections: dict[str, ServerSession] = {}
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        # The calls running on the session's loop, to cancel on close (added and removed on the server's loop).
        self._calls: set[concurrent.futures.Future[Any]] = set()
        self._calls_lock = threading.Lock()
        self._posting = 0  # POST requests being answered (on the server's loop)
        self._manager: StreamableHTTPSessionManager | None = None

    # --- what the owner uses --------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's URL (``http://127.0.0.1:<port>/mcp``).

        Raises:
            RuntimeError: The server has not been started.
        """
        if self._port is None:
            raise RuntimeError("the tools server has no URL before start()")
        return f"http://127.0.0.1:{self._port}{PATH}"

    def headers(self) -> dict[str, str]:
        """The headers an agent sends with every request: ``Authorization: Bearer <token>``. Hand them to the agent
        only (ACP's ``HttpMcpServer.headers``); they are the key to running code in the kernel."""
        return {"Authorization": f"Bearer {self._token}"}

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._state == "running"

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called (or a start failed): it never serves again."""
        return self._state == "closed"

    async def start(self) -> None:
        """Binds a loopback port and serves on a thread of its own; returns once it accepts connections. Calls run
        on the loop this is awaited on. Starting a running server does nothing.

        Raises:
            RuntimeError: The server was closed (start a new one), or it could not start (the reason attached).
        """
        if self._state == "running":
            return
        if self._state == "starting":
            await asyncio.shield(asyncio.wrap_future(self._ready))
            return
        if self._state == "closed":
            raise RuntimeError("this tools server was closed; start a new one")
        self._state = "starting"
        self._session_loop = asyncio.get_running_loop()
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind(("127.0.0.1", 0))
            except OSError:
                sock.close()
                raise
            self._socket = sock
            self._port = sock.getsockname()[1]
            self._hosts = frozenset(f"{host}:{self._port}".encode("ascii") for host in ("127.0.0.1", "localhost"))
            ready = self._ready
            self._thread = threading.Thread(target=self._run_thread, args=(ready,), name=THREAD_NAME, daemon=True)
            self._thread.start()
            # Shielded: a cancelled start must not cancel `ready` under the thread, which sets it.
            await asyncio.shield(asyncio.wrap_future(ready))
        except BaseException as exc:  # it failed, or the start was cancelled: nothing may be left serving
            self._state = "closed"
            self._signal_stop()
            await self._wait_stopped()
            if isinstance(exc, Exception):
                raise RuntimeError(f"the tools server could not start: {self._redacted(repr(exc))}") from None
            raise
        if self.closed:  # aclose() came while it started
            raise RuntimeError(CLOSED_AS_IT_STARTED)
        self._state = "running"

    async def refresh(self) -> bool:
        """Reads the tools again and, when they differ from what agents last saw, tells connected agents
        ``notifications/tools/list_changed`` (they then list them again). Call it on the session's loop, whenever
        the session's tools may have changed (each request).

        Returns:
            Whether it told agents of a change (never before an agent listed the tools: it will list them as they
            are).
        """
        current = self._snapshot()
        if self._known is None or current == self._known:
            return False
        self._known = current
        loop = self._server_loop
        if self._state == "running" and loop is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._announce(), loop))
        return True

    async def aclose(self) -> None:
        """Stops serving: the calls in flight are cancelled (the agent gets ``isError``), the connections closed, the
        thread ended and the port freed. Closing again does nothing."""
        with self._calls_lock:
            previous, self._state = self._state, "closed"
            running = list(self._calls)
        if previous == "closed":
            return
        for future in running:
            future.cancel()
        self._signal_stop()
        await self._wait_stopped()

    def __repr__(self) -> str:
        where = f"http://127.0.0.1:{self._port}{PATH}" if self._port is not None else "not started"
        return f"ACPToolsServer({self._name!r}, {where}, {self._state})"

    # --- the server's thread --------------------------------------------------------------------------------------

    def _run_thread(self, ready: concurrent.futures.Future[None]) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve(ready))
        except BaseException as exc:  # uvicorn exits with SystemExit when it cannot start
            if not ready.done():
                ready.set_exception(RuntimeError(f"{type(exc).__name__}: {exc}"))
            else:
                logger.warning("ai_widgets: the ACP tools server stopped: %s", self._redacted(repr(exc)))
        finally:
            try:
                # What the libraries left on this loop (sse-starlette's shutdown watcher), as asyncio.run does.
                left = asyncio.all_tasks(loop)
                for task in left:
                    task.cancel()
                if left:
                    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                if self._socket is not None:
                    self._socket.close()
                if not ready.done():
                    ready.set_exception(RuntimeError("the server's thread ended before it served"))
                self._stopped.set_result(None)

    async def _serve(self, ready: concurrent.futures.Future[None]) -> None:
        self._server_loop = asyncio.get_running_loop()
        self._stop = stop = asyncio.Event()
        if self._state == "closed":  # closed while the thread started
            ready.set_exception(RuntimeError(CLOSED_AS_IT_STARTED))
            return
        hosts = [f"127.0.0.1:{self._port}", f"localhost:{self._port}"]
        server = ToolsServer(
            self._name,
            version="1",
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_subscriptions_listen=self._listen,
        )
        self._manager = StreamableHTTPSessionManager(
            server,
            security_settings=TransportSecuritySettings(
                allowed_hosts=hosts, allowed_origins=[f"http://{host}" for host in hosts]
            ),
            # An agent's chat may sit idle for hours; its session lives until it ends it or the server closes.
            session_idle_timeout=None,
            max_sessions=64,
        )
        config = uvicorn.Config(
            self._asgi,
            interface="asgi3",
            lifespan="off",
            proxy_headers=False,
            ws="none",
            # Never reconfigure the process's logging (a kernel's): no logging config, and access_log left on, as
            # turning it off empties and detaches uvicorn's access logger for the whole process. Its lines hold no
            # header, so never the token.
            log_config=None,
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        web = uvicorn.Server(config)
        assert self._socket is not None
        async with self._manager.run():
            serving = asyncio.create_task(web.serve(sockets=[self._socket]))
            while not web.started:
                if serving.done():
                    await serving
                    raise RuntimeError("the web server ended as it started")
                await asyncio.sleep(0.005)
            ready.set_result(None)
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            # The calls in flight were cancelled on the session's loop: let their isError answers go out first.
            for _ in range(100):
                if not self._posting:
                    break
                await asyncio.sleep(0.01)
            self._listen.close()
            self._connections.clear()
        # The sessions have ended (their streams closed), so the web server stops at once.
        web.should_exit = True
        await serving

    async def _asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        host = auth = session_id = b""
        for key, value in scope["headers"]:
            if key == b"host" and not host:
                host = value
            elif key == b"authorization" and not auth:
                auth = value
            elif key == b"mcp-session-id":
                session_id = value
        if host not in self._hosts:
            await respond(send, 421, b"Invalid Host header")
            return
        if not secrets.compare_digest(auth, self._expected):
            await respond(send, 401, b"Unauthorized", [(b"www-authenticate", b"Bearer")])
            return
        if scope["path"] != PATH:
            await respond(send, 404, b"Not Found")
            return
        assert self._manager is not None
        posting = scope["method"] == "POST"
        self._posting += posting
        try:
            await self._manager.handle_request(scope, receive, send)
        finally:
            self._posting -= posting
        if scope["method"] == "DELETE" and session_id:
            self._connections.pop(session_id.decode("latin-1"), None)

    # --- MCP requests (on the server's loop) ----------------------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        definitions = await self._listed()
        # ttl 0: never cached by a client, as the list follows the session.
        return types.ListToolsResult(tools=[mcp_tool(d) for d in definitions], ttl_ms=0)

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._remember(ctx)
        definitions = await self._listed()
        if self._state == "closed":
            return error_result(CLOSING)
        definition = next((d for d in definitions if d.name == params.name), None)
        if definition is None:
            names = ", ".join(d.name for d in definitions) or "none"
            return error_result(f"There is no tool named {params.name!r} here (the tools are: {names}).")
        dumped = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        meta = dumped.get("_meta")
        call = OfferedToolCall(
            name=params.name,
            arguments=dict(params.arguments or {}),
            meta=meta if isinstance(meta, dict) else {},
            definition=definition,
        )

        async def run() -> ToolOutcome | ToolCallPart:
            return await self._call(call)

        with self._calls_lock:  # so that a close either sees this call (and cancels it) or keeps it from starting
            future = self._on_session_loop(run())
            if future is not None:
                self._calls.add(future)
        if future is None:
            return error_result(CLOSING)
        try:
            await settled(future)
        finally:
            with self._calls_lock:
                self._calls.discard(future)
        if future.cancelled():
            return error_result("The call was cancelled before it finished.")
        problem = future.exception()
        if problem is not None:
            logger.warning(
                "ai_widgets: the call of %s from the ACP agent failed: %s", call.name, self._redacted(repr(problem))
            )
            text = self._redacted(f"{type(problem).__name__}: {problem}")
            return error_result(f"The call could not be run: {text}")
        result: object = future.result()
        if not isinstance(result, (ToolOutcome, ToolCallPart)):
            return error_result(f"The call gave no outcome (the session returned a {type(result).__name__}).")
        return call_result(result, call, max_text_chars=self._max_text_chars, max_image_chars=self._max_image_chars)

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        """Keeps a handshake-era connection, to tell it later that the list changed."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.request is None:
            return
        key = ctx.request.headers.get("mcp-session-id")
        if key and key not in self._connections:
            self._connections[key] = ctx.session

    async def _listed(self) -> tuple[ToolDefinition, ...]:
        """The tools now, read on the session's loop; what agents know from then on."""

        async def read() -> tuple[ToolDefinition, ...]:
            definitions = self._snapshot()
            self._known = definitions
            return definitions

        future = self._on_session_loop(read())
        if future is None:
            return ()
        await settled(future)
        if future.cancelled():
            return ()
        return future.result()

    async def _announce(self) -> None:
        await self._bus.publish(ToolsListChanged())
        for key, session in list(self._connections.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # the connection is gone
                logger.debug("ai_widgets: ACP tools server: list_changed not delivered: %r", exc)
                self._connections.pop(key, None)

    # --- helpers ----------------------------------------------------------------------------------------------------

    def _snapshot(self) -> tuple[ToolDefinition, ...]:
        definitions: list[ToolDefinition] = []
        seen: set[str] = set()
        for item in self._tools():
            if isinstance(item, Tool):
                definition = item.definition
            elif isinstance(item, ToolDefinition):
                definition = item
            else:
                raise TypeError(f"the tools to offer must be Tools or ToolDefinitions, not {type(item).__name__}")
            if definition.name not in seen:  # the first of a name is the one a call runs
                seen.add(definition.name)
                definitions.append(definition)
        return tuple(definitions)

    def _on_session_loop(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T] | None:
        loop = self._session_loop
        if loop is None or loop.is_closed() or self._state == "closed":
            close_unawaited(coroutine)
            return None
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, loop)
        except RuntimeError:  # the loop closed meanwhile
            close_unawaited(coroutine)
            return None

    def _signal_stop(self) -> None:
        """Tells the server's thread to stop (once the state is ``closed``: a thread that has not yet made its stop
        event sees that state and stops by itself)."""
        loop, stop = self._server_loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(stop.set)

    async def _wait_stopped(self) -> None:
        thread = self._thread
        if thread is None:
            if self._socket is not None:
                self._socket.close()
            return
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._stopped)), STOP_TIMEOUT)
        except asyncio.TimeoutError:
            logger.warning("ai_widgets: the ACP tools server's thread did not stop within %s s", STOP_TIMEOUT)
            return
        thread.join(1.0)

    def _redacted(self, text: str) -> str:
        return text.replace(self._token, "[token]")


class ToolsServer(Server[Any]):
    """The MCP SDK's low-level server, saying in the handshake that its tool list changes (the SDK's session manager
    takes no initialization options, and its default says it never does)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


async def settled(future: concurrent.futures.Future[T]) -> concurrent.futures.Future[T]:
    """Waits, on this loop, until ``future`` (running on another loop) is done, however it ended: its cancellation is
    not this task's. When this task is cancelled, ``future`` is cancelled too."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not done.done():
            done.set_result(None)

    def finished(_: concurrent.futures.Future[T]) -> None:
        with contextlib.suppress(RuntimeError):  # this loop has ended
            loop.call_soon_threadsafe(wake)

    future.add_done_callback(finished)
    try:
        await done
    except asyncio.CancelledError:
        future.cancel()
        raise
    return future


def close_unawaited(coroutine: Coroutine[Any, Any, Any]) -> None:
    coroutine.close()


async def respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


# --- tools and results as MCP has them ------------------------------------------------------------------------------


def mcp_tool(definition: ToolDefinition) -> types.Tool:
    """A tool's definition as ``tools/list`` gives it: its name, title, description and schema, and its risk as the
    annotations' hints."""
    return types.Tool(
        name=definition.name,
        title=definition.title,
        description=definition.description,
        input_schema=definition.parameters,
        annotations=types.ToolAnnotations(
            title=definition.title,
            read_only_hint=definition.risk is ToolRisk.READ_ONLY,
            destructive_hint=definition.risk is ToolRisk.DESTRUCTIVE,
        ),
    )


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def call_result(
    result: ToolOutcome | ToolCallPart, call: OfferedToolCall, *, max_text_chars: int, max_image_chars: int
) -> types.CallToolResult:
    """A call's outcome as the MCP result the agent reads: the text the model would be told (cut in the middle past
    ``max_text_chars``), then its images, and ``isError`` for a failure."""
    if isinstance(result, ToolCallPart):
        part = result
    else:
        part = ToolCallPart(call.tool_use_id or call.name, call.name)
        part.outcome = result
    outcome = part.outcome or ToolOutcome.failure("Not run.")
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=part.result_for_model(max_text_chars))]
    for media_type, data in outcome_images(outcome, max_image_chars):
        content.append(types.ImageContent(type="image", data=data, mime_type=media_type))
    return types.CallToolResult(content=content, is_error=not outcome.ok)


def outcome_images(outcome: ToolOutcome, max_chars: int) -> list[tuple[str, str]]:
    """The images of an outcome an agent can take, as (media type, base64 data), in order: the figures a code run
    showed (failed or not), then, for a success, its image attachments (inline or ``data:`` URLs, not those for the
    card only) and the image its display shows. Each must be whole base64 of a PNG, JPEG, GIF or WebP of at most
    ``max_chars`` characters, its type read from its bytes; others are left out (MCP images carry no URL)."""
    candidates: list[str] = []
    if outcome.cell is not None:
        candidates += [data for _, data in outcome.cell.images()]
    if outcome.ok:
        for attachment in outcome.attachments:
            if attachment.card_only or not attachment.mime_type.lower().startswith("image/"):
                continue
            if attachment.data is not None:
                candidates.append(attachment.data)
            elif attachment.url is not None and attachment.url.startswith("data:"):
                candidates.append(attachment.url)
        shown = outcome.display.image() if outcome.display is not None else None
        if shown is not None:
            candidates.append(shown[1])
    images = []
    for data in candidates:
        image = inline_image(data, max_chars)
        if image is not None:
            images.append(image)
    return images


def inline_image(data: str, max_chars: int) -> tuple[str, str] | None:
    """(media type, base64) of an image given as base64 or a base64 ``data:`` URL, when whole and small enough."""
    if data.startswith("data:"):
        head, comma, data = data.partition(",")
        if not comma or not head.endswith(";base64"):
            return None
    data = "".join(data.split())  # base64 in MIME-style lines
    if len(data) > max_chars:
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    media_type = sniff_image(raw[:16])
    if media_type is None or media_type not in IMAGE_TYPES or not whole_image(media_type, raw):
        return None
    return media_type, data
