"""The requests of a connection that go past the SDK (:class:`TaskWire`): the one a task-augmented ``tools/call``
is (see :mod:`ai_widgets.mcp._tasks` for why), with its answer, its progress and its task's status notifications
taken out of the read stream before the SDK reads it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__: list[str] = ["Followed", "TaskWire"]


@dataclass(eq=False)
class Followed:
    """One task's status as its notifications tell it (the latest), and a wake-up for whoever waits on it."""

    on_status: Callable[[dict[str, Any]], None]
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    latest: dict[str, Any] | None = None


class TaskWire:
    """The requests of one connection that go past the SDK (a task-augmented ``tools/call``): written to the
    transport's write stream with ids of their own (``ai_widgets-task-N``, which the SDK's integer ids never are);
    their answers, their progress (by a token of their own) and the status notifications of the tasks being followed
    are taken out of the read stream (:meth:`received`). Touched on the connection's loop only."""

    def __init__(self) -> None:
        self._writes: Any = None
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str, Callable[[float, float | None, str | None], None]] = {}
        self._followed: dict[str, Followed] = {}
        self._ended = False

    def attach(self, writes: Any) -> None:
        """The transport's write stream (when the connection opens)."""
        self._writes = writes
        self._ended = False

    def ended(self) -> None:
        """The read stream ended: every request still waiting fails as the SDK's do (connection closed)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        self._ended = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(MCPError(code=CONNECTION_CLOSED, message="Connection closed"))
        self._pending.clear()

    def received(self, item: Any) -> bool:
        """Whether ``item`` (from the read stream) was this wire's (then the SDK does not see it)."""
        from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCResponse

        message = getattr(item, "message", None)
        if isinstance(message, (JSONRPCResponse, JSONRPCError)):
            if not (isinstance(message.id, str) and message.id.startswith("ai_widgets-task-")):
                return False
            future = self._pending.pop(message.id, None)
            if future is not None and not future.done():
                if isinstance(message, JSONRPCResponse):
                    future.set_result(message.result if isinstance(message.result, dict) else {})
                else:
                    from mcp.shared.exceptions import MCPError

                    future.set_exception(MCPError.from_jsonrpc_error(message))
            return True  # an answer to one of ours (also a late one, whose caller has gone)
        if not isinstance(message, JSONRPCNotification) or not isinstance(message.params, dict):
            return False
        params = message.params
        if message.method == "notifications/progress":
            report = self._progress.get(str(params.get("progressToken")))
            if report is None:
                return False
            done, total, text = params.get("progress"), params.get("total"), params.get("message")
            if isinstance(done, (int, float)) and not isinstance(done, bool):
                report(
                    float(done),
                    float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else None,
                    text if isinstance(text, str) else None,
                )
            return True
        if message.method == "notifications/tasks/status":
            followed = self._followed.get(str(params.get("taskId")))
            if followed is None:
                return False
            followed.latest = params
            followed.changed.set()
            followed.on_status(params)
            return True
        return False

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Sends one request and waits for its answer (its ``result``).

        Raises:
            mcp.shared.exceptions.MCPError: The server answered with an error, or the connection closed.
        """
        from mcp.shared.exceptions import MCPError
        from mcp.shared.message import SessionMessage
        from mcp_types import CONNECTION_CLOSED, JSONRPCRequest

        if self._writes is None or self._ended:
            raise MCPError(code=CONNECTION_CLOSED, message="Connection closed")
        request_id = f"ai_widgets-task-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            message = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
            try:
                await self._writes.send(SessionMessage(message=message))
            except Exception as exc:  # the transport has gone (closed, broken)
                raise MCPError(code=CONNECTION_CLOSED, message="Connection closed") from exc
            return await future
        finally:
            self._pending.pop(request_id, None)

    @contextlib.contextmanager
    def progressing(self, on_progress: Callable[[float, float | None, str | None], None]) -> Iterator[str]:
        """A progress token of this wire's whose notifications go to ``on_progress`` while the block runs (a task's
        progress token holds for the task's life, not just its first request's)."""
        token = f"ai_widgets-task-progress-{next(self._ids)}"
        self._progress[token] = on_progress
        try:
            yield token
        finally:
            self._progress.pop(token, None)

    @contextlib.contextmanager
    def following(self, task_id: str, on_status: Callable[[dict[str, Any]], None]) -> Iterator[Followed]:
        """Takes the status notifications of ``task_id`` while the block runs (each to ``on_status``)."""
        followed = Followed(on_status)
        self._followed[task_id] = followed
        try:
            yield followed
        finally:
            if self._followed.get(task_id) is followed:
                del self._followed[task_id]
