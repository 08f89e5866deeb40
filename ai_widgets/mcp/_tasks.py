"""Tool calls that run as MCP tasks (2025-11-25's task-augmented ``tools/call``): a tool whose definition says
``execution.taskSupport: "required"`` rejects a plain call, so its call is sent with ``params.task``; the server
answers with the task (``CreateTaskResult``), which is followed (``notifications/tasks/status`` and ``tasks/get`` at
the server's ``pollInterval``) with its status message shown as the call's progress, until its result is fetched
(``tasks/result``). A call that is stopped, or runs out of time, cancels its task (``tasks/cancel``).

The SDK (2.3) has the task types but does not run tasks: it checks a ``tools/call`` answer against ``CallToolResult``,
which a ``CreateTaskResult`` is not. So that one request goes past it (:class:`~ai_widgets.mcp._wire.TaskWire`:
written to the transport, its answer and the notifications that name it taken out of the read stream before the SDK
reads them); ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` are ordinary requests through the SDK's session
(its public ``send_request``).

A tool for which tasks are ``"optional"`` is called plainly: the SDK's own path, with nothing to poll. The client
declares no ``tasks`` capability: that capability is about the requests a client runs as tasks itself (sampling,
elicitation); a task-augmented ``tools/call`` needs only the server's."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any

from ai_widgets._safe import safe_text
from ai_widgets.mcp._asking import Callers
from ai_widgets.mcp._base import logger
from ai_widgets.mcp._link import Link
from ai_widgets.mcp._wire import Followed
from ai_widgets.tools import ToolInvocation, ToolOutcome

__all__: list[str] = []

#: The one protocol version with tasks in its core (2026-07-28 moved them to an extension this client does not speak).
TASKS_VERSION = "2025-11-25"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: Seconds between ``tasks/get`` when the server suggests no ``pollInterval``, and the bounds put on its suggestion.
DEFAULT_POLL = 1.0
POLL_BOUNDS = (0.05, 30.0)
#: Seconds a ``tasks/cancel`` may take when a call is stopped (the call ends after it either way).
CANCEL_TIMEOUT = 5.0
#: Seconds a task is asked to be kept beyond the call's own bound (the result is fetched once it is done).
TTL_MARGIN = 300.0
#: The ``ttl`` asked for when the call has no bound (an hour, in milliseconds).
TTL_UNBOUNDED_MS = 3_600_000


def task_support(spec: Any) -> str | None:
    """A listed tool's ``execution.taskSupport`` (``"required"``, ``"optional"``, ``"forbidden"``), or ``None``."""
    value = getattr(getattr(spec, "execution", None), "task_support", None)
    return value if isinstance(value, str) else None


def tasks_refused(link: Link | None) -> str | None:
    """Why a tool that requires task execution cannot be called on this connection, or ``None`` when it can: the
    connection speaks 2025-11-25 and the server declares task-augmented tool calls
    (``capabilities.tasks.requests.tools.call``), as the specification wants before a client sends one."""
    client = getattr(link, "client", None)
    if client is None:
        return "the connection is not open"
    try:
        version = str(client.protocol_version)
    except RuntimeError:
        return "the connection is not open"
    if version != TASKS_VERSION:
        return (
            f"the connection speaks MCP {safe_text(version)[:20]}, where tasks are an extension ai_widgets does not "
            f"speak (it runs tasks on {TASKS_VERSION} connections)"
        )
    tasks = getattr(client.server_capabilities, "tasks", None)
    tools = getattr(getattr(tasks, "requests", None), "tools", None)
    if getattr(tools, "call", None) is None:
        return "the server does not declare task-augmented tool calls (capabilities.tasks.requests.tools.call)"
    return None


# --- one call as a task ------------------------------------------------------------------------------------------


class Shown:
    """What the card shows of a task: its status message (or status), beside the last fraction progress gave."""

    def __init__(self, invocation: ToolInvocation) -> None:
        self._progress = invocation.progress
        self.fraction: float | None = None
        self._said: str | None = None

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        """An MCP progress notification (as for a plain call; without a message of its own, the task's status
        message stays)."""
        fraction: float | None = None
        if total is not None and math.isfinite(total) and total > 0 and math.isfinite(done):
            fraction = min(1.0, max(0.0, done / total))
        text = safe_text(message)[:300] if isinstance(message, str) and message else self._said
        if text is None and fraction is None and math.isfinite(done):
            text = f"{done:g}"
        self.fraction = fraction if fraction is not None else self.fraction
        self._report(text)

    def status(self, task: dict[str, Any]) -> None:
        """A task's state (from a notification, or an answer to ``tasks/get``)."""
        message = task.get("statusMessage")
        status = task.get("status")
        if isinstance(message, str) and message.strip():
            text = safe_text(message.strip())[:300]
        elif status == "input_required":
            text = "waiting for input"
        elif isinstance(status, str):
            text = safe_text(status)[:40]
        else:
            return
        if text != self._said:
            self._said = text
            self._report(text)

    def _report(self, text: str | None) -> None:
        with contextlib.suppress(ValueError):
            self._progress.report(self.fraction, text)


def poll_seconds(task: dict[str, Any]) -> float:
    interval = task.get("pollInterval")
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or not math.isfinite(interval):
        return DEFAULT_POLL
    low, high = POLL_BOUNDS
    return min(high, max(low, interval / 1000))


def ttl_ms(call_timeout: float | None) -> int:
    if call_timeout is None:
        return TTL_UNBOUNDED_MS
    return int((call_timeout + TTL_MARGIN) * 1000)


async def call_as_task(
    link: Link,
    callers: Callers,
    invocation: ToolInvocation,
    *,
    name: str,
    arguments: dict[str, Any],
    call_timeout: float | None,
    server: str,
) -> Any:
    """Calls ``name`` as a task and follows it to its end: the tool's ``CallToolResult`` (mapped like a plain call's
    result), or a :class:`ToolOutcome` for a task that failed or was cancelled without one. Stopping this call (the
    person's Stop, the call's deadline) cancels the task on the server before the stop goes on.

    Raises:
        mcp.shared.exceptions.MCPError: The server refused a request (as for a plain call), or the connection closed.
        pydantic.ValidationError: An answer that does not follow the protocol.
    """
    from mcp_types import CallToolResult, CreateTaskResult

    shown = Shown(invocation)
    wire = link.wire
    with wire.progressing(shown.progress) as token:
        raw = await wire.request(
            "tools/call",
            {
                "name": name,
                "arguments": arguments,
                "task": {"ttl": ttl_ms(call_timeout)},
                "_meta": {"progressToken": token},
            },
        )
        if "task" not in raw and "content" in raw:
            # A server may run a task-augmented request as a plain one (one that does not declare tasks must): its
            # answer is then the tool's result.
            return CallToolResult.model_validate(raw, by_name=False)
        created = CreateTaskResult.model_validate(raw, by_name=False)
        task_id = created.task.task_id
        task = created.task.model_dump(mode="json", by_alias=True, exclude_none=True)
        ending = Ending(server=server, shown=invocation.tool_name)
        try:
            with callers.in_task(task_id, invocation), wire.following(task_id, shown.status) as followed:
                shown.status(task)
                return await follow(link, task_id, task, followed, shown, name=name, ending=ending)
        except BaseException:
            await cancel(link, task_id)
            raise


@dataclass(frozen=True)
class Ending:
    """How a task that ended without a result to map is told (the server's and the tool's names)."""

    server: str
    shown: str

    def failure(self, task: dict[str, Any], opening: str, detail: str | None = None) -> ToolOutcome:
        said = task.get("statusMessage")
        reason = safe_text(said.strip())[:2000] if isinstance(said, str) and said.strip() else detail
        text = f"{opening}: {reason}" if reason else opening
        text = text if text.endswith((".", "!", "?")) else text + "."
        return ToolOutcome.failure(text, retryable=True, error=text)


async def follow(
    link: Link, task_id: str, task: dict[str, Any], followed: Followed, shown: Shown, *, name: str, ending: Ending
) -> Any:
    """Polls the task (waking early for a status notification) until it ends or wants input, then fetches its
    result."""
    import anyio
    from mcp_types import GetTaskRequest, GetTaskRequestParams, GetTaskResult

    session = link.client.session
    while task.get("status") not in TERMINAL and task.get("status") != "input_required":
        with anyio.move_on_after(poll_seconds(task)):
            await followed.changed.wait()
        followed.changed.clear()
        latest = followed.latest
        if latest is not None and latest.get("status") in TERMINAL:
            task = latest
            break
        got = await session.send_request(GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), GetTaskResult)
        task = got.model_dump(mode="json", by_alias=True, exclude_none=True)
        shown.status(task)
    if task.get("status") == "cancelled":
        return ending.failure(
            task, f"The MCP server {ending.server!r} cancelled the task of the call of {ending.shown}"
        )
    return await result(link, task_id, task, name=name, ending=ending)


async def result(link: Link, task_id: str, task: dict[str, Any], *, name: str, ending: Ending) -> Any:
    """The task's result (``tasks/result`` waits while the task works, and carries the server's questions to the
    person while it wants input); a failed task without one is a failure with its status message."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CallToolResult, GetTaskPayloadRequest, GetTaskPayloadRequestParams

    session = link.client.session
    failed = f"The task of the call of {ending.shown} failed on the MCP server {ending.server!r}"
    try:
        result = await session.send_request(
            GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task_id)), CallToolResult
        )
    except MCPError as exc:
        if task.get("status") not in TERMINAL:
            # It ended while tasks/result waited (the status is from before): how it ended says what the error was.
            task = await now(session, task_id, task)
        if task.get("status") == "cancelled":
            return ending.failure(
                task, f"The MCP server {ending.server!r} cancelled the task of the call of {ending.shown}"
            )
        if task.get("status") != "failed":
            raise
        return ending.failure(task, failed, safe_text(exc.message)[:2000])
    if task.get("status") == "failed" and not result.is_error:
        return ending.failure(task, failed)
    if not result.is_error:
        await session.validate_tool_result(name, result)
    return result


async def now(session: Any, task_id: str, task: dict[str, Any]) -> dict[str, Any]:
    """The task's state now (``tasks/get``), or ``task`` when the server does not say."""
    from mcp_types import GetTaskRequest, GetTaskRequestParams, GetTaskResult

    try:
        got = await session.send_request(GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), GetTaskResult)
    except Exception:
        return task
    return dict(got.model_dump(mode="json", by_alias=True, exclude_none=True))


async def cancel(link: Link, task_id: str) -> None:
    """Asks the server to cancel the task (``tasks/cancel``), within :data:`CANCEL_TIMEOUT` seconds, whatever is
    cancelling the caller; a server that refuses (the task already ended) or does not answer is left be."""
    import anyio
    from mcp_types import CancelTaskRequest, CancelTaskRequestParams, CancelTaskResult

    if link.stop.is_set():
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT):
        try:
            await link.client.session.send_request(
                CancelTaskRequest(params=CancelTaskRequestParams(task_id=task_id)), CancelTaskResult
            )
        except Exception as exc:
            logger.debug("ai_widgets: tasks/cancel of %s was not accepted: %r", task_id, exc)
