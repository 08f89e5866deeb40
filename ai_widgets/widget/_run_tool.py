"""``run_tool``: one tool call, shown as a card in the cell, for developing a tool interactively."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ai_widgets._html import mark_shown_by_card
from ai_widgets.approval import ApprovalPolicy
from ai_widgets.messages import Message
from ai_widgets.options import SessionOptions
from ai_widgets.session import ChatSession
from ai_widgets.tools import Tool, ToolOutcome, tool
from ai_widgets.transports import EchoTransport

__all__ = ["arun_tool", "run_tool"]


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
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"run_tool needs JSON arguments: {exc}") from None
    session = ChatSession(
        EchoTransport(),  # never asked: the call is the person's, run by the session's tool round
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
    mark_shown_by_card(part.outcome)  # as the cell's value it shows nothing more: the card above shows it
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
    its approval buttons, and this call waits for the click), and progress shows in the card. As the value of the
    cell the outcome shows nothing more (the card shows it); displayed later, it shows in one line.

    Args:
        target: A tool, or a plain function (made a tool with default options).
        approval_policy: Who decides on approval; a fresh default policy when ``None``.
        context: The application's object, passed as ``invocation.context``.
        timeout: Seconds the call may run.
        **arguments: The tool's arguments.
    """
    session, widget = _prepare(target, arguments, approval_policy, context, timeout)
    _show(widget)
    name = session.tools.names()[0]
    return _outcome(widget._wait_turn(lambda: session.run_call(name, arguments)))


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
    name = session.tools.names()[0]
    return _outcome(await widget._await_turn(lambda: session.run_call(name, arguments)))
