"""Screens what a server lists before it is offered: each ``tools/list`` answer is read tool by tool on its way from the
transport to the SDK, so one tool whose definition breaks the protocol is left out (with a warning naming the server,
the tool and what is wrong) instead of making the SDK refuse the whole page; and says which well-formed tools cannot be
offered (those that require task execution where tasks cannot run); and takes the answers to the requests that go
past the SDK (:class:`~ai_widgets.mcp._wire.TaskWire`) out of the stream before the SDK reads it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import ValidationError

from ai_widgets._safe import safe_text
from ai_widgets.mcp._base import logger
from ai_widgets.mcp._tasks import task_support
from ai_widgets.mcp._wire import TaskWire

__all__: list[str] = ["Screen", "not_offered", "screening"]

#: The version the SDK assumes when none was negotiated (before the handshake, stateless servers).
FALLBACK_VERSION = "2025-11-25"


class Screen:
    """One connection's screen: notes the ids of the ``tools/list`` requests sent, and takes the tools that do not
    follow the protocol out of their answers. Each problem is said once per connection (a server re-listed on every
    request would repeat it).

    Args:
        server: How messages name the server (read when a warning is said: the name may be learnt at connect).
        version: The negotiated protocol version, or ``None`` while none is known.
        wire: The connection's requests past the SDK (task-augmented calls), whose answers the SDK never sees.
    """

    def __init__(self, server: Callable[[], str], version: Callable[[], str | None], wire: TaskWire) -> None:
        self._server = server
        self._version = version
        self.wire = wire
        self._listings: set[Any] = set()  # ids of tools/list requests sent and not answered yet
        self._said: set[str] = set()

    def sent(self, item: Any) -> None:
        from mcp_types import JSONRPCRequest

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest) and message.method == "tools/list":
            self._listings.add(message.id)

    def received(self, item: Any) -> Any:
        """``item`` as the SDK should read it: a listing's answer without its malformed tools."""
        from mcp_types import JSONRPCError, JSONRPCResponse

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCError) and message.id in self._listings:
            self._listings.discard(message.id)
        if not (isinstance(message, JSONRPCResponse) and message.id in self._listings):
            return item
        self._listings.discard(message.id)
        kept, problems = screened(message.result, self._version() or FALLBACK_VERSION)
        for problem in problems:
            if problem not in self._said:
                self._said.add(problem)
                logger.warning("ai_widgets: MCP server %s: skipped its tool %s", self._server(), problem)
        if kept is message.result:
            return item
        item.message = message.model_copy(update={"result": kept})
        return item


def screened(result: dict[str, Any], version: str) -> tuple[dict[str, Any], list[str]]:
    """The page without the tools that do not follow the protocol (the same dict when all do), and what is wrong
    with each one left out. A page wrong in itself (no tool list, a bad cursor) is left to the SDK, whose error
    says so for the whole listing."""
    from mcp_types.methods import parse_server_result

    tools = result.get("tools")
    if not isinstance(tools, list) or not tools:
        return result, []
    try:
        parse_server_result("tools/list", version, result)
        return result, []  # the common case: nothing to screen
    except ValidationError:
        pass
    except (KeyError, ValueError):  # a version this SDK has no listing for: its own error says so
        return result, []
    try:
        parse_server_result("tools/list", version, {**result, "tools": []})
    except (ValidationError, KeyError, ValueError):
        return result, []
    kept: list[Any] = []
    problems: list[str] = []
    for index, tool in enumerate(tools):
        try:
            parse_server_result("tools/list", version, {**result, "tools": [tool]})
        except ValidationError as exc:
            problems.append(f"{label(tool, index)}: its definition does not follow the MCP protocol ({why(exc)})")
            continue
        kept.append(tool)
    return {**result, "tools": kept}, problems


def label(tool: Any, index: int) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    if isinstance(name, str) and name:
        return repr(safe_text(name)[:80])
    return f"number {index + 1} of its page (it has no name)"


def why(error: ValidationError) -> str:
    """The first thing wrong with one tool, where it is in the tool's definition and what the protocol wants."""
    for problem in error.errors(include_url=False):
        loc = problem["loc"]
        if loc[:2] == ("tools", 0):
            where = ".".join(str(step) for step in loc[2:]) or "the tool"
            return safe_text(f"{where}: {problem['msg']}")[:300]
    return safe_text(str(error))[:300]


def not_offered(spec: Any, tasks_refused: str | None) -> str | None:
    """Why a well-formed tool cannot be offered, or ``None``: one that requires task execution (2025-11-25's
    ``execution.taskSupport: "required"``) rejects every plain call, so it is offered only where its calls can run as
    tasks (``tasks_refused`` says why they cannot here, or is ``None``). A tool for which tasks are ``"optional"``
    is called plainly."""
    if task_support(spec) == "required" and tasks_refused is not None:
        return (
            f"it requires task execution (execution.taskSupport is 'required') and {tasks_refused}, so every call "
            "of it would fail"
        )
    return None


class ScreenedReads:
    """A transport's read stream whose listing answers go through the screen."""

    def __init__(self, inner: Any, screen: Screen) -> None:
        self._inner = inner
        self._screen = screen

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not self._screen.wire.received(item):
                return self._screen.received(item)

    def __aiter__(self) -> ScreenedReads:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._inner.__anext__()
            if not self._screen.wire.received(item):
                return self._screen.received(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> ScreenedReads:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc_info)
        return result


class ScreenedWrites:
    """A transport's write stream that tells the screen which requests are listings."""

    def __init__(self, inner: Any, screen: Screen) -> None:
        self._inner = inner
        self._screen = screen

    async def send(self, item: Any, /) -> None:
        self._screen.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> ScreenedWrites:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc_info)
        return result


@contextlib.asynccontextmanager
async def screening(transport: Any, screen: Screen) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` with its listings screened (between the transport and the SDK's session)."""
    async with transport as (reads, writes):
        screen.wire.attach(writes)
        try:
            yield ScreenedReads(reads, screen), ScreenedWrites(writes, screen)
        finally:
            screen.wire.ended()
