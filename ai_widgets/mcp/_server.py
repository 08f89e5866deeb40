"""``MCPServer``: the API of a source of tools on an MCP server, and how its tools and calls map to ai_widgets
(the connection's life is :mod:`ai_widgets.mcp._connection`, the wording of failures :mod:`ai_widgets.mcp._errors`,
the requests for its resources and prompts :mod:`ai_widgets.mcp._catalog`)."""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from ai_widgets._safe import UnsafeValueError, checked_json, safe_text
from ai_widgets.mcp._apps import AppPage, tool_app
from ai_widgets.mcp._auth import OAuth
from ai_widgets.mcp._base import MAX_PAGES, MISSING_SDK, NOT_NAME, Endpoint, MCPServerError, logger
from ai_widgets.mcp._catalog import Catalog
from ai_widgets.mcp._connection import Connection
from ai_widgets.mcp._deadline import CallDeadline
from ai_widgets.mcp._errors import call_failure, listing_error
from ai_widgets.mcp._features import DEFAULT_CALL_TIMEOUT, RootsOption, timed_out
from ai_widgets.mcp._link import Link
from ai_widgets.mcp._offers import MCPPrompt, MCPResource, MCPResourceTemplate, RenderedPrompt, ResourceRead
from ai_widgets.mcp._results import outcome, tool_parameters
from ai_widgets.mcp._screen import not_offered
from ai_widgets.mcp._tasks import call_as_task, task_support, tasks_refused
from ai_widgets.tools import (
    Tool,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
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

    Besides tools: :meth:`resources`, :meth:`resource_templates` and :meth:`read` (resources, whose contents
    ``send(..., attach=...)`` takes), :meth:`prompts` and :meth:`prompt` (prompts, rendered).

    Results: text becomes the value (a string), structured content the value shown as JSON (and sent to the model
    as JSON), images and audio attachments, resource links and embedded resources citations; a result marked
    ``isError`` is a failure the model sees, as the server wrote it. Progress the server reports moves the card's
    progress bar; cancelling a call (Stop, or the card's Cancel) cancels it on the server.

    A tool that requires task execution (MCP 2025-11-25's ``execution.taskSupport: "required"``) runs as an MCP task:
    the task's status message is the call's progress, its questions to the person are the call's, and Stop or the
    ``call_timeout`` cancels the task (``tasks/cancel``); it is not offered where no task can be sent (a server that
    does not declare task-augmented tool calls, a 2026-07-28 connection), with a warning saying why. A tool for which
    tasks are ``"optional"`` is called plainly.

    Args (of both constructors):
        prefix: Put before every tool name, joined with ``_`` (``prefix="fs"``: ``fs_read_file``), so two servers'
            tools cannot clash.
        trust_annotations: Vouch for the server: derive each tool's risk from its annotations, so read-only and
            non-destructive tools run unasked. ``False`` (the default): every call asks a person.
        name: How messages name the server; what the server calls itself, or its command or URL, by default.
        timeout: Seconds to connect (start, handshake) and to list the tools; ``None`` for no limit.
        call_timeout: Seconds a call may take before it fails (:data:`DEFAULT_CALL_TIMEOUT`, 120, by default;
            ``None``: only the session's ``tool_timeout`` applies). A call that runs out of time is cancelled on the
            server, which is then asked for its tools (5 seconds): a server that does not answer either is taken
            for frozen, and its connection closed (a stdio server's process stopped; the next call starts it
            again). The time a call waits for the person (a question the server asks) does not count.
        roots: The directories the server may work in (MCP roots), as paths or ``file://`` URIs, given when the
            server asks (a server may take them in place of the directories it was started with, as the filesystem
            server does). ``None`` (the default) or empty: no roots are declared (the client does not offer the
            capability), so the server keeps its own.
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
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        roots: RootsOption = None,
        auth: Any = None,
    ) -> None:
        if importlib.util.find_spec("mcp") is None:  # pragma: no cover - the extra is installed in development
            raise ImportError(MISSING_SDK)
        if (command is None) == (url is None):
            raise TypeError("an MCPServer needs a command (MCPServer.stdio) or a url (MCPServer.http), not both")
        if auth is not None and command is not None:
            raise TypeError("auth= is for an HTTP server (MCPServer.http); a stdio server takes env= instead")
        if command is not None and (not isinstance(command, str) or not command):
            raise ValueError("MCPServer.stdio needs a command to run")
        if isinstance(args, str):
            raise TypeError("args must be a list of strings, not one string (MCPServer.stdio('python', ['server.py']))")
        if url is not None and urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"MCPServer.http needs an http:// or https:// URL, not {url!r}")
        if prefix is not None and (not prefix or NOT_NAME.search(prefix)):
            raise ValueError(f"prefix {prefix!r} must be letters, digits, '_' or '-'")
        check_seconds("timeout", timeout)
        if isinstance(auth, OAuth):
            assert url is not None
            auth = auth.provider(url)
        self.prefix = prefix
        self.trust_annotations = trust_annotations
        self.call_timeout = call_timeout
        endpoint = Endpoint(
            command=command,
            args=[str(a) for a in args],
            env=None if env is None else dict(env),
            cwd=None if cwd is None else os.fspath(cwd),
            url=url,
            headers=None if headers is None else dict(headers),
        )
        self._connection = Connection(
            endpoint, name=name, timeout=timeout, on_tools_changed=self._invalidate, roots=roots, auth=auth
        )
        self._catalog = Catalog(self._connection)  # its resources and prompts
        # Touched on the server's loop only, except ``_tools`` (read from any thread).
        self._tools: list[Tool] | None = None  # the last listing, while no list_changed said it is stale
        self._generation = 0  # bumped by each invalidation: a listing that raced one is not cached
        # The server's own name of each tool, by the name shown (casefolded): an app's calls name them so.
        self._mcp_names: dict[str, tuple[str, str]] = {}  # casefolded shown name -> (shown, the server's name)
        self._app_tools: dict[str, Tool] = {}  # the server's name -> its tool for its apps alone
        self._for_apps: frozenset[str] = frozenset()  # the server's names of the tools its apps may call

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
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        roots: RootsOption = None,
    ) -> MCPServer:
        """A server the library starts as a child process and talks to over its stdin and stdout.

        ``prefix``, ``trust_annotations``, ``name``, ``timeout``, ``call_timeout`` and ``roots`` are
        :class:`MCPServer`'s.

        Args:
            command: The program (``"python"``, ``"uvx"``, ``"npx"``, a path).
            args: Its arguments.
            env: Environment variables for it, over the SDK's safe defaults (``PATH``, ``HOME``, ...).
            cwd: Its working directory.
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
            roots=roots,
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
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        roots: RootsOption = None,
        auth: Any = None,
    ) -> MCPServer:
        """A server reached over streamable HTTP.

        ``prefix``, ``trust_annotations``, ``name``, ``timeout``, ``call_timeout`` and ``roots`` are
        :class:`MCPServer`'s.

        Args:
            url: Its endpoint (``http://127.0.0.1:8000/mcp``).
            headers: Sent with every request (``{"Authorization": "Bearer ..."}``).
            auth: Sign-in: :class:`OAuth` (the authorization link shows in the cell; the redirect comes back to a
                loopback listener), or any ``httpx`` authentication flow (the MCP SDK's ``OAuthClientProvider``).
        """
        return cls(
            url=url,
            headers=headers,
            prefix=prefix,
            trust_annotations=trust_annotations,
            name=name,
            timeout=timeout,
            call_timeout=call_timeout,
            roots=roots,
            auth=auth,
        )

    # --- what others see --------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """How messages name the server: ``name=``, or what it calls itself, or its command or URL."""
        return self._connection.name

    @property
    def timeout(self) -> float | None:
        """Seconds to connect (start, handshake) and to list the tools; ``None`` for no limit."""
        return self._connection.timeout

    @timeout.setter
    def timeout(self, seconds: float | None) -> None:
        self._connection.timeout = check_seconds("timeout", seconds)

    @property
    def call_timeout(self) -> float | None:
        """Seconds a call may take (:data:`DEFAULT_CALL_TIMEOUT` by default); ``None`` for no bound. A new value holds
        for the calls that start after it is set.

        Raises:
            ValueError: (when set) Not a positive number or ``None``.
        """
        return self._call_timeout

    @call_timeout.setter
    def call_timeout(self, seconds: float | None) -> None:
        self._call_timeout = check_seconds("call_timeout", seconds)

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r})"

    @property
    def connected(self) -> bool:
        """Whether a connection is open (it opens on first use)."""
        return self._connection.connected

    async def list_tools(self) -> list[Tool]:
        """The server's tools as they are now, connecting first if needed; from the cache while nothing changed.

        Raises:
            MCPServerError: The server could not be started, reached or listed (the message says which and why).
        """
        cached = self._tools
        if cached is not None:
            return list(cached)
        return list(await self._connection.run(self._list_here()))

    async def aclose(self) -> None:
        """Closes the connection, stopping the process of a stdio server (waits until it has been reaped, also when
        another close, from any thread or loop, is doing it). A call still running fails, saying the connection was
        closed. The next use connects again."""
        await self._connection.aclose()

    def close(self) -> None:
        """Like :meth:`aclose`, from synchronous code (not from the loop of a running turn's tool)."""
        self._connection.close()

    async def __aenter__(self) -> MCPServer:
        """Connects now (rather than on first use): a server that cannot start says so here."""
        await self._connection.run(self._connection.connect())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    def _invalidate(self) -> None:
        """Forgets the listing (the server said its tools changed, or the connection ended); a listing under way
        when this happens is not kept either."""
        self._generation += 1
        self._tools = None

    # --- resources and prompts ------------------------------------------------------------------------------------

    async def resources(self) -> list[MCPResource]:
        """The server's resources (every page of ``resources/list``); empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._catalog.resources()

    async def resource_templates(self) -> list[MCPResourceTemplate]:
        """The server's resource templates (every page of ``resources/templates/list``): URIs with parameters,
        such as ``notes://{topic}``, to fill in and :meth:`read`; empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._catalog.resource_templates()

    async def read(self, uri: str) -> ResourceRead:
        """Reads one resource (``resources/read``): a listed resource's URI, or a template's filled in.

        Args:
            uri: The resource's URI.

        Raises:
            TypeError: ``uri`` is not a non-empty string.
            MCPServerError: The server offers no resources, has none at ``uri``, or could not be reached.
        """
        return await self._catalog.read(uri)

    async def read_app(self, uri: str) -> AppPage:
        """Reads an MCP App's page (the ``ui://`` resource a tool names), for its card: a page that cannot be
        shown (too large, not of the app MIME type, not there) is an :class:`AppPage` whose ``error`` says why.

        Args:
            uri: The app's ``ui://`` URI.

        Raises:
            TypeError: ``uri`` is not a ``ui://`` URI.
        """
        return await self._catalog.read_app(uri)

    async def prompts(self) -> list[MCPPrompt]:
        """The server's prompts (every page of ``prompts/list``); empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._catalog.prompts()

    async def prompt(self, name: str, /, **arguments: str) -> RenderedPrompt:
        """Renders one prompt (``prompts/get``) with its arguments.

        The prompt is looked up in the server's listing first, so an unknown name, a missing required argument or
        one the prompt does not take is a clear error before anything is asked of the server.

        Args:
            name: The prompt's name (as :meth:`prompts` lists it).
            **arguments: Its arguments, strings (MCP prompt arguments are).

        Raises:
            MCPServerError: The server has no prompt ``name`` (the message lists those it has), or rendering failed.
            TypeError: A required argument is missing, one is not the prompt's, or a value is not a string.
        """
        return await self._catalog.prompt(name, **arguments)

    # --- listing --------------------------------------------------------------------------------------------------

    async def _list_here(self) -> list[Tool]:
        import anyio

        if self._tools is not None:
            return self._tools
        generation = self._generation
        link = await self._connection.connect()
        try:
            with anyio.fail_after(self.timeout):
                listed = await self._fetch(link)
        except Exception as exc:
            error = await listing_error(
                exc, link, server=self.name, timeout=self.timeout, url=self._connection.endpoint.url
            )
            raise error from (None if isinstance(exc, TimeoutError) else exc)
        tools = self._build(listed, tasks_refused=tasks_refused(link))
        if generation == self._generation and link.cacheable and not link.stop.is_set():
            self._tools = tools
        return tools

    async def _fetch(self, link: Link) -> list[Any]:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await link.client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    def tool_for(self, mcp_name: str) -> str | None:
        """The name shown (registered) of this server's tool that the server calls ``mcp_name`` (what an MCP App
        names in its ``tools/call``), from the last listing; ``None`` when it lists no such tool for the model."""
        return next((shown for shown, name in self._mcp_names.values() if name == mcp_name), None)

    def app_may_call(self, mcp_name: str) -> bool:
        """Whether this server's apps may call its tool ``mcp_name`` (the server's name for it), from the last
        listing: its ``_meta.ui.visibility`` includes ``"app"``, as it does when not given. MCP Apps: a host must
        refuse an app's call of any other tool (one for the model alone)."""
        return mcp_name in self._for_apps

    def app_tool(self, mcp_name: str) -> Tool | None:
        """This server's tool for its apps alone (``visibility: ["app"]``, never offered to the model) that the
        server calls ``mcp_name``, from the last listing, or ``None``."""
        return self._app_tools.get(mcp_name)

    def owns(self, tool_name: str) -> bool:
        """Whether ``tool_name`` (as registered) is one of this server's tools, in its last listing (a tool for its
        apps alone included)."""
        folded = tool_name.casefold() if isinstance(tool_name, str) else None
        return folded in self._mcp_names or any(t.name.casefold() == folded for t in self._app_tools.values())

    def _build(self, listed: Sequence[Any], *, tasks_refused: str | None) -> list[Tool]:
        tools: list[Tool] = []
        seen: set[str] = set()
        names: dict[str, tuple[str, str]] = {}
        app_only: dict[str, Tool] = {}
        for_apps: set[str] = set()
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
            parameters = tool_parameters(spec.input_schema)
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
            unusable = not_offered(spec, tasks_refused)
            if unusable is not None:
                logger.warning("ai_widgets: MCP server %s: skipped its tool %r: %s", self.name, spec.name, unusable)
                continue
            app, who = tool_app(spec.meta)
            if not who:
                logger.warning(
                    "ai_widgets: MCP server %s: skipped its tool %r (its visibility names neither model nor app)",
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
                    annotations=None if annotations is None else claims(annotations),
                    described_by=f"the MCP server {self.name!r}",
                    app=app,
                )
            except ValueError as exc:
                logger.warning("ai_widgets: MCP server %s: skipped its tool %r: %s", self.name, spec.name, exc)
                continue
            seen.add(shown.casefold())
            tool = Tool(definition, self._handler(spec.name, as_task=task_support(spec) == "required"))
            # MCP Apps: a tool for the app alone is never offered to the model; one for the model alone, never
            # called by an app.
            if "model" in who:
                names[shown.casefold()] = (shown, spec.name)
                tools.append(tool)
            else:
                app_only[spec.name] = tool
            if "app" in who:
                for_apps.add(spec.name)
        self._mcp_names, self._app_tools, self._for_apps = names, app_only, frozenset(for_apps)
        return tools

    def _full_name(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else name

    def _shown_name(self, name: str) -> str | None:
        """The name every provider takes: characters outside letters, digits, ``_`` and ``-`` become ``_``; at most
        64 characters; a letter or ``_`` first (Gemini refuses any other first character, failing every request that
        offers the tool)."""
        cleaned = NOT_NAME.sub("_", self._full_name(name))
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

    def _handler(self, mcp_name: str, *, as_task: bool = False) -> Any:
        async def call(invocation: ToolInvocation) -> ToolOutcome:
            arguments = invocation.parsed_arguments
            if arguments is None:
                parsed = parse_arguments(invocation.arguments)
                if isinstance(parsed, str):
                    return ToolOutcome.failure(f"The arguments are not a valid JSON object ({parsed}).")
                arguments = parsed
            return await self._connection.run(self._call_here(mcp_name, dict(arguments), invocation, as_task=as_task))

        call.__name__ = call.__qualname__ = f"mcp_{NOT_NAME.sub('_', mcp_name)}"
        return call

    async def _call_here(
        self, mcp_name: str, arguments: dict[str, Any], invocation: ToolInvocation, *, as_task: bool = False
    ) -> ToolOutcome:
        shown, progress = invocation.tool_name, invocation.progress

        try:
            link = await self._connection.connect()
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

        deadline = CallDeadline(self.call_timeout)
        try:
            with deadline.scope(), self._connection.callers.running(invocation, deadline):
                if as_task:
                    result = await call_as_task(
                        link,
                        self._connection.callers,
                        invocation,
                        name=mcp_name,
                        arguments=arguments,
                        call_timeout=deadline.seconds,
                        server=self.name,
                    )
                else:
                    result = await link.client.call_tool(mcp_name, arguments, progress_callback=on_progress)
        except Exception as exc:
            if deadline.expired:
                return await timed_out(link, server=self.name, shown=shown, seconds=deadline.seconds)
            return await call_failure(
                exc,
                link,
                server=self.name,
                shown=shown,
                stdio=self._connection.endpoint.stdio,
                url=self._connection.endpoint.url,
            )
        if deadline.expired:
            return await timed_out(link, server=self.name, shown=shown, seconds=deadline.seconds)
        if isinstance(result, ToolOutcome):
            return result
        return outcome(result, shown, self.name)


def check_seconds(label: str, seconds: float | None) -> float | None:
    """``seconds`` if it is a positive number or ``None``.

    Raises:
        ValueError: It is not.
    """
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0):
        raise ValueError(f"{label} must be a positive number of seconds or None, not {seconds!r}")
    return seconds


def claims(annotations: Any) -> dict[str, Any] | None:
    """A tool's annotations as the server sent them (JSON), or ``None`` where they cannot be read as JSON."""
    try:
        claims = checked_json(
            annotations.model_dump(mode="json", by_alias=True, exclude_none=True), where="annotations"
        )
    except (UnsafeValueError, ValueError, TypeError):
        return None
    return claims if isinstance(claims, dict) else None
