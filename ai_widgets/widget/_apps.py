"""MCP Apps in a widget, on the kernel's side: the page of a card's app (read from its server when the card asks,
kept in the ``apps`` trait by tool name, bounded) and the app's own tool calls.

An app's ``tools/call`` names a tool of its own server (as the server calls it). It runs as a run by hand (the
bench: a private session with the host's tools and approval policy), so it is validated and asked about exactly
like a model's call while the conversation never changes; what it ends with goes back to the app in the card that
asked, as an ``app_reply`` message (docs/protocol.md, "MCP Apps")."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any

from ai_widgets.mcp import AppPage, MCPServer
from ai_widgets.messages import ToolCallPart, ToolCallState
from ai_widgets.session import ChatSession
from ai_widgets.widget._actions import clip
from ai_widgets.widget._bench import Bench, BenchError
from ai_widgets.widget._serialize import outcome_dict, shown_json

__all__ = ["AppHost"]

logger = logging.getLogger("ai_widgets")

#: The most app pages one widget keeps (each up to a megabyte): opening another forgets the oldest.
MAX_PAGES = 8


class AppHost:
    """The MCP Apps of one widget's cards.

    Args:
        session: The conversation (its tools and their sources).
        bench: Where an app's calls run.
        find: The session and call with this id (the conversation's, or a run by hand's), or ``None``.
        publish: Sets the ``apps`` trait (pages by tool name).
        send: Sends a message to the front end.
        loop: Where reading a page runs.
    """

    def __init__(
        self,
        session: ChatSession,
        bench: Bench,
        *,
        find: Callable[[str], tuple[ChatSession, ToolCallPart] | None],
        publish: Callable[[dict[str, Any]], None],
        send: Callable[[dict[str, Any]], None],
        loop: Callable[[], asyncio.AbstractEventLoop],
    ) -> None:
        self._session = session
        self._bench = bench
        self._find = find
        self._publish = publish
        self._send = send
        self._loop = loop
        self._pages: dict[str, dict[str, Any]] = {}
        self._reading: set[str] = set()
        self._lock = threading.Lock()

    def _server_of(self, session: ChatSession, tool_name: str) -> MCPServer | None:
        return next(
            (s for s in session.tools.sources if isinstance(s, MCPServer) and s.owns(tool_name)),
            None,
        )

    def open(self, tool_call_id: str) -> None:
        """Reads the page of the app of this call's tool (once per tool), and publishes it.

        Raises:
            ValueError: No such call, or its tool names no app.
        """
        found = self._find(tool_call_id)
        if found is None:
            raise ValueError(f"there is no tool call {clip(tool_call_id)!r} here")
        session, part = found
        tool = session.tools.get(part.tool_name)
        uri = tool.definition.app if tool is not None else None
        if tool is None or uri is None:
            raise ValueError(f"the tool {clip(part.tool_name)!r} has no MCP App")
        name = tool.name
        with self._lock:
            known = self._pages.get(name)
            if (known is not None and known.get("uri") == uri) or name in self._reading:
                return
            self._reading.add(name)
        server = self._server_of(session, name)

        async def read() -> None:
            try:
                if server is None:
                    page = AppPage(uri, error="The app's server is not among this chat's tools any more.")
                else:
                    page = await server.read_app(uri)
            except Exception as exc:  # a page that cannot be had shows why in the card
                page = AppPage(uri, error=clip(f"The app could not be read: {exc}", 500))
            with self._lock:
                self._reading.discard(name)
                self._pages.pop(name, None)
                self._pages[name] = page.to_json()
                while len(self._pages) > MAX_PAGES:
                    self._pages.pop(next(iter(self._pages)))
                pages = dict(self._pages)
            self._publish(pages)

        asyncio.run_coroutine_threadsafe(read(), self._loop())

    def call(self, tool_call_id: str, request: int, name: str, arguments: dict[str, Any]) -> None:
        """Runs the ``tools/call`` of the app in this call's card (``name`` as its server calls the tool) like a
        model's call, approval included; its end goes back to the app (``app_reply``). A call that cannot start
        (no such tool, one for the model alone, invalid arguments) is answered at once, with why."""
        found = self._find(tool_call_id)
        if found is None:
            return self._reply(tool_call_id, request, error=f"there is no tool call {clip(tool_call_id)!r} here")
        session, part = found
        server = self._server_of(session, part.tool_name)
        shown = server.tool_for(name) if server is not None else None
        app_only = server.app_tool(name) if server is not None and shown is None else None
        if app_only is not None:
            shown = app_only.name
        if server is None or shown is None:
            return self._reply(tool_call_id, request, error=f"the app's server has no tool {clip(name)!r} to call")
        if not server.app_may_call(name):  # MCP Apps: refused before anything is asked or run
            return self._reply(
                tool_call_id, request, error=f"{shown} is for the model alone: its server does not let apps call it"
            )
        try:
            entry = self._bench.open(shown, arguments, source=tool_call_id, by_app=True, tool=app_only)
            future = self._bench.start(entry, arguments)
        except (BenchError, RuntimeError) as exc:
            return self._reply(tool_call_id, request, error=str(exc))
        if future is None:
            return self._reply(tool_call_id, request, error=f"the arguments of {shown} are not valid")

        def done(ran: concurrent.futures.Future[Any]) -> None:
            call = None
            if ran.cancelled() or ran.exception() is not None:
                error: str | None = "the call was cancelled" if ran.cancelled() else str(ran.exception())
            else:
                calls = ran.result().tool_calls
                call = calls[0] if calls else None
                error = "the call ended without a result" if call is None or call.outcome is None else None
            if error is not None or call is None or call.outcome is None:
                self._reply(tool_call_id, request, error=error or "the call ended without a result")
            elif call.state in (ToolCallState.REJECTED, ToolCallState.CANCELLED, ToolCallState.SKIPPED):
                reason = call.outcome.message or call.state.value
                self._reply(tool_call_id, request, error=f"{shown} was not run: {reason}")
            else:
                self._reply(tool_call_id, request, outcome=outcome_dict(call.outcome))

        future.add_done_callback(done)
        return None

    def _reply(
        self, tool_call_id: str, request: int, *, error: str | None = None, outcome: dict[str, Any] | None = None
    ) -> None:
        message: dict[str, Any] = {"type": "app_reply", "tool_call_id": tool_call_id, "request": request}
        if error is not None:
            message["error"] = clip(error, 1_000)
        else:
            message["outcome"] = outcome
        try:
            self._send(shown_json(message))
        except Exception:  # pragma: no cover - the comm closed meanwhile
            logger.debug("ai_widgets: an app's reply could not be sent", exc_info=True)
