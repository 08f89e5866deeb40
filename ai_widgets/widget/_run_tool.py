"""``run_tool``: one tool call, shown as a card in the cell, for developing a tool interactively."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from ai_widgets.approval import ApprovalPolicy
from ai_widgets.events import ResponseCompleted, ResponseStarted, StreamEvent, ToolCallArgumentsDone, ToolCallStarted
from ai_widgets.messages import FinishReason, Message
from ai_widgets.options import SessionOptions
from ai_widgets.session import ChatSession
from ai_widgets.tools import Tool, ToolOutcome, tool
from ai_widgets.transports._base import ChatRequest

__all__ = ["arun_tool", "run_tool"]


class _OneCall:
    """A transport that makes one call of one tool, then stops without a word."""

    def __init__(self, tool_name: str, arguments: str) -> None:
        self._tool_name = tool_name
        self._arguments = arguments

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield ResponseStarted()
        if request.tool_results():
            yield ResponseCompleted(FinishReason.STOP)
            return
        yield ToolCallStarted("run_tool_call", self._tool_name, self._arguments)
        yield ToolCallArgumentsDone("run_tool_call")
        yield ResponseCompleted(FinishReason.TOOL_CALLS)


def _prepare(
    target: Tool | Callable[..., Any],
    arguments: dict[str, Any],
    approval_policy: ApprovalPolicy | None,
    context: Any,
    timeout: float | None,
) -> tuple[ChatSession, Any]:
    from ai_widgets.widget._chat import ChatWidget

    chosen = target if isinstance(target, Tool) else tool(target)
    try:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"run_tool needs JSON-compatible arguments: {exc}") from exc
    session = ChatSession(
        _OneCall(chosen.name, text),
        tools=[chosen],
        approval_policy=approval_policy,
        options=SessionOptions(max_iterations=1, max_consecutive_errors=1, tool_timeout=timeout),
        context=context,
    )
    widget = ChatWidget(session, compact=True, collapse_tool_calls=False)
    return session, widget


def _outcome(reply: Message) -> ToolOutcome:
    (part,) = reply.tool_calls
    assert part.outcome is not None, "every finished call has an outcome"
    return part.outcome


def _show(widget: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    display(widget)


def run_tool(
    target: Tool | Callable[..., Any],
    /,
    *,
    approval_policy: ApprovalPolicy | None = None,
    context: Any = None,
    timeout: float | None = None,
    **arguments: Any,
) -> ToolOutcome:
    """Runs one call of a tool the way a session would, showing its card in the cell, and returns the outcome.

    The arguments are validated against the tool's schema, the approval policy is asked (a destructive tool shows
    its approval buttons, and this call waits for the click), and progress shows in the card.

    Args:
        target: A tool, or a plain function (made a tool with default options).
        approval_policy: Who decides on approval; a fresh default policy when ``None``.
        context: The application's object, passed as ``invocation.context``.
        timeout: Seconds the call may run.
        **arguments: The tool's arguments.
    """
    session, widget = _prepare(target, arguments, approval_policy, context, timeout)
    _show(widget)
    return _outcome(widget.ask_sync(f"run {session.tools.names()[0]}"))


async def arun_tool(
    target: Tool | Callable[..., Any],
    /,
    *,
    approval_policy: ApprovalPolicy | None = None,
    context: Any = None,
    timeout: float | None = None,
    **arguments: Any,
) -> ToolOutcome:
    """Like :func:`run_tool`, awaited (``outcome = await arun_tool(tool, city="Lisbon")``)."""
    session, widget = _prepare(target, arguments, approval_policy, context, timeout)
    _show(widget)
    return _outcome(await widget.ask(f"run {session.tools.names()[0]}"))
