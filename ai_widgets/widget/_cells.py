"""Undo and Insert as cell: the kernel's half of a code call's card buttons (``undo_call``, ``insert_cell``).

Each is answered to the views with a ``cell_action`` message: ``{"type": "cell_action", "action", "tool_call_id",
"ok", "message"}``, and ``"copy": true`` when the card should copy the code instead of inserting it (docs/protocol.md,
"Code calls").

Undo asks the session's ``KernelTools`` that ran the call to put back what the run changed; an undone call is kept in
the session's :class:`UndoneCalls` record, which every view of the session shows. Insert as cell puts the code as it
ran into a new cell below the cell that is running (a cell that awaits ``chat.ask(...)``), through IPython's
``set_next_input``: the notebook adds the cell when that cell finishes. With no cell running (a turn from the input
box), no host offers a documented way to insert, so the card copies the code instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ai_widgets.kernel import KernelTools, UndoError
from ai_widgets.messages import ToolCallPart
from ai_widgets.session import ChatSession
from ai_widgets.widget._actions import MAX_ERROR_CHARS, clip
from ai_widgets.widget._kernel import kernel_support
from ai_widgets.widget._serialize import shown_json
from ai_widgets.widget._undone import undone_calls

__all__ = ["CellActions", "ipython_shell"]


def ipython_shell() -> Any | None:
    """The IPython shell of this process, or ``None``; never imports IPython."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython() if callable(get_ipython) else None


def running_cell_shell() -> Any | None:
    """The kernel's shell while one of its cells executes (its result is being built), else ``None``: only then
    does a ``set_next_input`` reach a notebook, with that cell's reply."""
    if not kernel_support().kind.startswith("ipykernel"):
        return None
    shell = ipython_shell()
    if shell is None or getattr(shell, "payload_manager", None) is None:
        return None
    return shell if getattr(getattr(shell, "displayhook", None), "exec_result", None) is not None else None


def code_of(session: ChatSession, part: ToolCallPart) -> str | None:
    """The code a call ran (its cell's), else the first code argument it ran with, or ``None``."""
    outcome = part.outcome
    if outcome is not None and outcome.cell is not None:
        return outcome.cell.code
    tool = session.tools.get(part.tool_name)
    arguments = part.effective_arguments
    for name in tool.definition.code_arguments if tool is not None else ():
        if isinstance(arguments.get(name), str):
            return str(arguments[name])
    return None


class CellActions:
    """Answers a view's ``undo_call`` and ``insert_cell``.

    Args:
        session: The view's session (its record of undone calls is the view's).
        session_of: The session a call belongs to (a call run by hand belongs to its bench entry's).
        send: Sends a message to the views.
    """

    def __init__(
        self,
        session: ChatSession,
        *,
        session_of: Callable[[str], ChatSession],
        send: Callable[[dict[str, Any]], None],
    ) -> None:
        self._session = session
        self._session_of = session_of
        self._send = send

    def undo(self, tool_call_id: str) -> None:
        """Undoes what the run of call ``tool_call_id`` changed, with the ``KernelTools`` of the session that ran it;
        answers what was put back, or why it could not be."""
        session = self._session_of(tool_call_id)
        part = session.tool_call(tool_call_id)
        if part is None:
            self._answer("undo_call", tool_call_id, False, f"There is no call {tool_call_id!r} in this conversation.")
            return
        if part.outcome is None or part.outcome.cell is None:
            self._answer("undo_call", tool_call_id, False, "This call ran no code: there is nothing to undo.")
            return
        sources = self._kernel_tools(session)
        if not sources:
            self._answer(
                "undo_call", tool_call_id, False, "No KernelTools among this chat's tools: nothing can undo it."
            )
            return
        problems: list[str] = []
        for source in sources:  # the one that ran the call undoes it; another does not know it
            try:
                line = source.undo(tool_call_id)
            except UndoError as exc:  # nothing was changed: the card says why
                problems.append(str(exc))
                continue
            undone_calls(self._session).add(tool_call_id, line)
            self._answer("undo_call", tool_call_id, True, line)
            return
        self._answer("undo_call", tool_call_id, False, problems[0])

    def insert(self, tool_call_id: str) -> None:
        """Puts the code call ``tool_call_id`` ran into a new cell below the running cell; with none running, the
        answer tells the card to copy it instead."""
        session = self._session_of(tool_call_id)
        part = session.tool_call(tool_call_id)
        code = None if part is None else code_of(session, part)
        if code is None:
            self._answer("insert_cell", tool_call_id, False, "This call has no code to insert.")
            return
        shell = running_cell_shell()
        if shell is None:
            self._answer(
                "insert_cell",
                tool_call_id,
                False,
                "This notebook cannot insert a cell from here: no cell is running (Insert works while a cell "
                "awaits chat.ask(...)).",
                copy=True,
            )
            return
        # One new cell per running cell (the notebook takes the first set_next_input of a reply): a second insert
        # adds its code below the first one's.
        pending = [p for p in shell.payload_manager.read_payload() if p.get("source") == "set_next_input"]
        if pending and isinstance(pending[0].get("text"), str):
            code = f"{pending[0]['text'].rstrip()}\n\n{code}"
        shell.set_next_input(code, replace=False)
        self._answer(
            "insert_cell", tool_call_id, True, "The code goes into a new cell below the running cell when it ends."
        )

    def _kernel_tools(self, session: ChatSession) -> list[KernelTools]:
        """The ``KernelTools`` among the tools of the call's session, then of the view's (a run by hand's session may
        hold the tool alone)."""
        found: list[KernelTools] = []
        for registry in (session.tools, self._session.tools):
            for source in registry.sources:
                if isinstance(source, KernelTools) and all(source is not seen for seen in found):
                    found.append(source)
        return found

    def _answer(self, action: str, tool_call_id: str, ok: bool, message: str, *, copy: bool = False) -> None:
        answer: dict[str, Any] = {
            "type": "cell_action",
            "action": action,
            "tool_call_id": tool_call_id,
            "ok": ok,
            "message": clip(message, MAX_ERROR_CHARS),
        }
        if copy:
            answer["copy"] = True
        self._send(shown_json(answer))
