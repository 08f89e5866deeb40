"""``run_tool``: one tool, run by hand in the cell, with a form built from its schema, for developing a tool.

The cell shows a widget whose only content is one bench entry (``scope`` ``"bench"``, docs/protocol.md): the form,
and the card of the latest run. With every required argument given the tool runs at once and the outcome is
returned; with some missing the form waits for the person, and a :class:`ToolRun` is returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from ai_widgets._safe import check_size
from ai_widgets.approval import ApprovalError, ApprovalPolicy
from ai_widgets.attachments import AttachmentPart
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.messages import Message, ToolCallPart, ToolCallState
from ai_widgets.options import SessionOptions
from ai_widgets.outcome import mark_shown_by_card
from ai_widgets.session import ChatSession
from ai_widgets.tools import Tool, ToolOutcome, ToolRegistry, tool
from ai_widgets.widget._kernel import await_with_comms, kernel_support, private_loop, wait_with_comms
from ai_widgets.widget._view import SessionView

__all__ = ["RunToolView", "ToolRun", "arun_tool", "run_tool"]


class RunToolView(SessionView):
    """``run_tool``'s widget: one bench entry (the tool's form and its latest run) on a session of its own.

    Args:
        session: The session whose tool, approval policy, context and options the runs use.
        flush_interval: Seconds between updates while a run streams.
    """

    def __init__(self, session: ChatSession, *, flush_interval: float = 1 / 30) -> None:
        super().__init__(
            session, flush_interval=flush_interval, _scope="bench", compact=True, collapse_tool_calls=False
        )

    def _on_send(self, text: str, attach: list[AttachmentPart], send_id: str | None) -> None:
        del text, attach
        self._send_error("This runs one tool by hand: there is no conversation to send to.", send_id)

    def _on_continue(self) -> None:
        self._send_error("This runs one tool by hand: there is no conversation to continue.")


def cell() -> int | None:
    """The execution count of the cell running now, in IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    count = getattr(get_ipython(), "execution_count", None)
    return count if isinstance(count, int) else None


class ToolRun:
    """What ``run_tool`` returns when required arguments are missing: the form in the cell runs the tool, as often
    as the person likes; :attr:`outcome` is the latest run's.

    As the value of the cell that made it, it shows nothing more (the form above is what it is); displayed later, it
    shows one line.
    """

    def __init__(self, widget: RunToolView, entry_id: str) -> None:
        self.widget = widget
        self._entry_id = entry_id
        self._cell = cell()

    @property
    def tool_name(self) -> str:
        """The tool's name."""
        return self.widget.session.tools.names()[0]

    @property
    def outcome(self) -> ToolOutcome | None:
        """The latest run's outcome; ``None`` before the first run has finished, and while a run goes on."""
        return self.widget._bench_host.outcome(self._entry_id)

    @property
    def running(self) -> bool:
        """Whether a run goes on."""
        return self.widget._bench_host.running(self._entry_id)

    def __repr__(self) -> str:
        outcome = self.outcome
        state = "running" if self.running else "not run yet" if outcome is None else outcome.status
        return f"ToolRun({self.tool_name!r}, {state})"

    def _ipython_display_(self) -> None:
        if self._cell is not None and self._cell == cell():
            return  # the value of the run_tool cell: the form above shows it
        from IPython.display import display

        display({"text/plain": repr(self)}, raw=True)


def prepare(
    target: Tool | Callable[..., Any],
    arguments: dict[str, Any],
    approval_policy: ApprovalPolicy | None,
    context: Any,
    timeout: float | None,
) -> tuple[RunToolView, str, bool]:
    """The widget with its one entry (the form filled with ``arguments``), and whether every required argument
    is there."""
    chosen = target if isinstance(target, Tool) else tool(target)
    try:
        check_size(arguments, where="the arguments")  # before json.dumps, which would expand shared lists
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"run_tool needs JSON arguments: {exc}") from None
    session = ChatSession(  # no transport: the calls are the person's, run by the sessions' tool rounds
        # Quiet when a chat's own version of the tool is defined elsewhere: this form runs the tool it was given.
        tools=ToolRegistry([chosen], warn_when_kept=False),
        approval_policy=approval_policy,
        options=SessionOptions(max_iterations=1, max_consecutive_errors=1, tool_timeout=timeout),
        context=context,
    )
    widget = RunToolView(session)
    entry_id = widget._bench_host.open(chosen.name, arguments)
    required = chosen.definition.parameters.get("required")
    complete = all(name in arguments for name in required) if isinstance(required, list) else True
    return widget, entry_id, complete


def outcome(reply: Message) -> ToolOutcome:
    (part,) = reply.tool_calls
    assert part.outcome is not None, "every finished call has an outcome"
    mark_shown_by_card(part.outcome)  # as the cell's value it shows nothing more: the card above shows it
    return part.outcome


class NoOneToApprove:
    """Outside a Jupyter kernel (a script, marimo), a click cannot reach a cell that waits: a run that asks for
    approval while ``run_tool`` waits is stopped at once, and ``run_tool`` raises, rather than wait forever."""

    def __init__(self, session: ChatSession) -> None:
        self.asked: ToolCallPart | None = None
        self._session = session
        self._unsubscribe = session.subscribe(self._watch) if kernel_support().kind == "none" else None

    def _watch(self, change: SessionChange) -> None:
        if (
            self.asked is None
            and isinstance(change, ToolCallUpdated)
            and change.part.state is ToolCallState.AWAITING_APPROVAL
        ):
            self.asked = change.part
            asyncio.get_running_loop().call_soon(self._session.stop)

    def check(self) -> None:
        """Stops watching; raises when a run was stopped for want of someone to approve it.

        Raises:
            ApprovalError: The run asked for approval.
        """
        if self._unsubscribe is not None:
            self._unsubscribe()
        part = self.asked
        if part is not None:
            raise ApprovalError(
                f"run_tool({part.tool_name}): this call needs approval, and outside a Jupyter kernel nothing "
                "can approve it while run_tool waits, so it was stopped before it ran. Pass an approval_policy "
                "that allows it, or run it in a Jupyter notebook."
            )


def show(widget: Any) -> None:
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
) -> ToolOutcome | ToolRun:
    """Runs a tool by hand the way a session would, in a card in the cell, with a form to run it again.

    The cell shows a form built from the tool's schema (filled with ``arguments`` and the defaults) and the card of
    the latest run. A run is validated against the schema (a problem shows at its field, worded as the model would
    be told it), the approval policy is asked (a destructive tool shows its approval buttons, and this call waits
    for the click), and progress shows in the card. The form stays: change a value, press Run, again and again.

    Args:
        target: A tool, or a plain function (made a tool with default options).
        approval_policy: Who decides on approval; a fresh default policy when ``None``.
        context: The application's object, passed as ``invocation.context``.
        timeout: Seconds a run may take.
        **arguments: The tool's arguments.

    Returns:
        With every required argument given: the outcome of the run (as the value of the cell it shows nothing more:
        the card shows it; displayed later, it shows in one line). With some missing: nothing runs, and a
        :class:`ToolRun` is returned at once, whose ``outcome`` is the latest run's from the form.

    Raises:
        ValueError: The arguments are not JSON data.
        ApprovalError: The run needs approval outside a Jupyter kernel (a script, marimo), where no click can reach
            a cell while it waits: the run is stopped before the tool runs. Pass an ``approval_policy`` that allows
            it there.
    """
    widget, entry_id, complete = prepare(target, arguments, approval_policy, context, timeout)
    show(widget)
    if not complete:
        return ToolRun(widget, entry_id)
    bench = widget._bench_host
    bench.prepare(entry_id, arguments, check=False)  # invalid ones run too: the call fails as the model's would
    no_one = NoOneToApprove(bench.session_of(entry_id))
    future = asyncio.run_coroutine_threadsafe(bench.run(entry_id), private_loop())
    try:
        reply = wait_with_comms(future)
    except BaseException:
        if not future.done():
            bench.stop(entry_id)
            with contextlib.suppress(BaseException):  # let the run record its cancellation
                future.result(timeout=5)
        bench.release(entry_id)
        raise
    finally:
        no_one.check()
    return outcome(reply)


async def arun_tool(
    target: Tool | Callable[..., Any],
    /,
    *,
    approval_policy: ApprovalPolicy | None = None,
    context: Any = None,
    timeout: float | None = None,
    **arguments: Any,
) -> ToolOutcome | ToolRun:
    """Like :func:`run_tool`, awaited (``outcome = await arun_tool(tool, city="Lisbon")``)."""
    widget, entry_id, complete = prepare(target, arguments, approval_policy, context, timeout)
    show(widget)
    if not complete:
        return ToolRun(widget, entry_id)
    bench = widget._bench_host
    bench.prepare(entry_id, arguments, check=False)
    no_one = NoOneToApprove(bench.session_of(entry_id))
    try:
        reply = await await_with_comms(bench.run(entry_id))
    finally:
        bench.release(entry_id)  # a run that never started (this kernel cannot wait) leaves the form usable
        no_one.check()
    return outcome(reply)
