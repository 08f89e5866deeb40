"""A server asking the person (MCP elicitation, form and URL mode): which running call asked, the question as an
:class:`~ai_widgets.messages.InputRequest`, and the one place a call waits for the answer (:func:`wait_for_person`).

A request that names an MCP task (its ``related-task`` ``_meta``, see :mod:`ai_widgets.mcp._tasks`) is the call's
whose task it is. Otherwise the call that asked is known from the (asyncio) task that makes it: on a 2026 connection the SDK answers a call's
input-required result inside that call's task, so a context variable set around the call names it. A 2025 server
asks by a request of its own, outside any call's task: it is the call's when exactly one call of that server is
running, and refused (saying why) when several are.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ai_widgets.mcp._deadline import CallDeadline
from ai_widgets.mcp._related import related_task
from ai_widgets.messages import InputRequest, InputResponse
from ai_widgets.tools import NobodyToAskError, ToolInvocation

__all__: list[str] = ["Callers"]

#: The call whose request runs in this task (set around ``tools/call`` on the server's loop).
calling: contextvars.ContextVar[ToolInvocation | None] = contextvars.ContextVar("ai_widgets_mcp_call", default=None)


class Callers:
    """The calls of one server that are running now, for the requests that do not say which call they belong to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: list[ToolInvocation] = []
        self._deadlines: dict[int, CallDeadline] = {}
        self._tasks: dict[str, ToolInvocation] = {}  # the calls running as MCP tasks, by task id

    @contextlib.contextmanager
    def running(self, invocation: ToolInvocation, deadline: CallDeadline | None = None) -> Iterator[None]:
        """Marks ``invocation`` as running (and as this task's call) while the block runs, with the deadline that a
        wait for the person pauses."""
        with self._lock:
            self._running.append(invocation)
            if deadline is not None:
                self._deadlines[id(invocation)] = deadline
        token = calling.set(invocation)
        try:
            yield
        finally:
            calling.reset(token)
            with self._lock:
                self._running.remove(invocation)
                self._deadlines.pop(id(invocation), None)

    @contextlib.contextmanager
    def in_task(self, task_id: str, invocation: ToolInvocation) -> Iterator[None]:
        """Marks ``invocation`` as the call whose MCP task is ``task_id`` while the block runs: a request that names
        the task (its ``related-task`` ``_meta``) is that call's."""
        with self._lock:
            self._tasks[task_id] = invocation
        try:
            yield
        finally:
            with self._lock:
                if self._tasks.get(task_id) is invocation:
                    del self._tasks[task_id]

    def deadline(self, invocation: ToolInvocation) -> CallDeadline | None:
        """The deadline of a running call, if it has one."""
        with self._lock:
            return self._deadlines.get(id(invocation))

    def asker(self, task_id: str | None = None) -> ToolInvocation | str:
        """The call that a request in this task belongs to, or why it cannot be told: the call whose MCP task the
        request names (``task_id``, from its ``related-task`` ``_meta``), when it names one."""
        if task_id is not None:
            with self._lock:
                owner = self._tasks.get(task_id)
            if owner is not None:
                return owner
            return f"the request names the task {task_id[:80]!r}, which is not a running call's"
        found = calling.get()
        if found is not None:
            return found
        with self._lock:
            running = list(self._running)
        if len(running) == 1:
            return running[0]
        if not running:
            return "no tool call of this server is running, so there is nobody to ask on its behalf"
        return f"{len(running)} tool calls of this server are running and the request does not say which one asks"


def person_time(deadline: CallDeadline | None) -> contextlib.AbstractContextManager[Any]:
    """The call's deadline (if any) paused while the person decides: the time a person takes is not the server's."""
    return deadline.paused() if deadline is not None else contextlib.nullcontext()


async def wait_for_person(
    invocation: ToolInvocation, request: InputRequest, deadline: CallDeadline | None = None
) -> InputResponse:
    """The one place an MCP call waits for the person's answer, its deadline paused meanwhile (:func:`person_time`)."""
    with person_time(deadline):
        return await invocation.ask_person(request)


def elicitation_callback(callers: Callers, server: Callable[[], str]) -> Any:
    """The SDK's elicitation callback for one server's connection (declaring it declares form and URL mode)."""

    async def on_elicit(context: Any, params: Any) -> Any:
        from mcp import types

        del context
        asker = callers.asker(related_task(params))
        if isinstance(asker, str):
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"ai_widgets cannot ask for input: {asker}")
        try:
            request = elicitation_request(params, server())
        except ValueError as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"ai_widgets cannot show this request: {exc}")
        try:
            answer = await wait_for_person(asker, request, callers.deadline(asker))
        except NobodyToAskError as exc:
            return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
        content = answer.content if answer.action == "accept" and request.mode == "form" else None
        return types.ElicitResult(action=answer.action, content=content)

    return on_elicit


def elicitation_request(params: Any, server: str) -> InputRequest:
    """The server's elicitation as the question the card shows."""
    mode = getattr(params, "mode", "form")
    if mode == "url":
        return InputRequest(params.message, mode="url", url=params.url, asker=server)
    return InputRequest(params.message, mode="form", schema=params.requested_schema, asker=server)
