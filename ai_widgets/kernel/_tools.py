"""``KernelTools``: the tools that let the model work in the notebook's kernel (run Python as a cell, read the rest of
a run's output, list and inspect the variables), offered to a session as one source of tools, and the undo of a
run."""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import sys
from collections.abc import Callable
from typing import Any, Literal

from ai_widgets._safe import redact
from ai_widgets.kernel._cell import CellRunner, RunRecord
from ai_widgets.kernel._changes import RunChanges
from ai_widgets.kernel._outputs import OutputStore
from ai_widgets.kernel._report import report_of
from ai_widgets.kernel._secrets import redacted_outputs, secret_values
from ai_widgets.kernel._shell import ipython_shell, running_shell, shell_escapes
from ai_widgets.kernel._undo import UndoError, UndoLog
from ai_widgets.kernel._variables import VariableError, inspect_variable, list_variables
from ai_widgets.kernel._watch import NamespaceWatch, code_names, watch_start
from ai_widgets.messages import InputRequest
from ai_widgets.outcome import CellRun, ToolOutcome
from ai_widgets.tools import Tool, ToolDefinition, ToolInvocation, ToolRisk

__all__ = ["KernelTools"]

Ask = Literal["always", "never"]
#: How long a stop waits for the code to stop before the call ends anyway (a blocking C call stops when it returns).
STOP_WAIT = 1.0
#: How often a thread waiting for the person's answer to ``input()`` looks whether it was stopped.
ANSWER_POLL = 0.05
#: What marks each run_python call that ran without asking, with ``ask="never"``.
UNASKED_REASON = "KernelTools(ask='never')"
ANSWER_FORM = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Answer"}},
    "required": ["answer"],
}


class KernelTools:
    """Tools that run Python in the notebook's kernel: ``tools=[KernelTools()]``.

    It is a source of tools (:class:`~ai_widgets.tools.ToolSource`) offering:

    - ``run_python(code)``: runs the code as a notebook cell would, in ``namespace``, on a thread of its own (the
      kernel's event loop stays free for the card and Stop). It asks first (risk destructive): the card shows the
      code as code, and the person may edit it before allowing it; what runs is what was allowed. Printed text,
      ``display(...)`` outputs and matplotlib figures come back in order, then the last expression's value (or the
      error); the card shows them as a notebook does, the model gets a bounded text of them and the figures as
      images. Under IPython (when ``namespace`` is the shell's) the shell transforms the code first, so magics work;
      shell escapes (``!cmd``, ``%%bash``, ``%sx``, ``%pip``...) are refused, and nothing runs, unless
      ``allow_shell``. ``input()`` in the code asks the person in the card. Stop, the card's Cancel, a kernel
      interrupt and ``timeout`` stop the code within a second when it runs Python (a blocking call in C, such as
      ``time.sleep``, stops when it returns); the call ends ``cancelled``, saying where it stopped. ``sys.exit()``
      and ``exit()`` end the code with an error, never the kernel. Each run says which variables it created,
      rebound, deleted or changed in place (by identity, and bounded fingerprints of the values the code names);
      :meth:`undo` puts them back.
    - ``read_output(tool_call_id, start=0)``: the whole output of a run, from character ``start``, when the model's
      text had to cut it (read-only, runs unasked).
    - ``list_variables()`` and ``inspect_variable(name)``: the person's variables (type, shape or length,
      approximate size, largest first, bounded) and one variable's bounded view, the one ``attach=`` makes
      (read-only, run unasked). Values of names that look like secrets (``api_key``, ``password``...) are never
      shown or sent.

    It keeps the objects that runs rebound or deleted, to put them back, for its last runs (see
    :class:`~ai_widgets.kernel.UndoLog`): a large frame a run replaced stays in memory until then.

    Args:
        namespace: The variables the code runs in: IPython's user namespace in a kernel, else ``__main__``'s globals;
            a plain dict works.
        ask: ``"always"``: every ``run_python`` call asks the person. ``"never"``: its calls run without asking,
            whatever the approval policy says, each marked "KernelTools(ask='never')" on its card
            (:attr:`ToolDefinition.unasked <ai_widgets.tools.ToolDefinition.unasked>`); set in code only.
        max_output_chars: The most characters of a run's output the model is told (it reads the rest with
            ``read_output``).
        timeout: Seconds a run may take before it is stopped; ``None``: no limit.
        allow_shell: Whether IPython's shell escapes may run.

    Raises:
        ValueError: An option is out of range.
    """

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        *,
        ask: Ask = "always",
        max_output_chars: int = 20_000,
        timeout: float | None = None,
        allow_shell: bool = False,
    ) -> None:
        if namespace is not None and not isinstance(namespace, dict):
            raise ValueError(f"namespace must be a dict, not {type(namespace).__name__}")
        if isinstance(max_output_chars, bool) or not isinstance(max_output_chars, int) or max_output_chars < 200:
            raise ValueError(f"max_output_chars must be an int of at least 200, not {max_output_chars!r}")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
        self.namespace: dict[str, Any] = default_namespace() if namespace is None else namespace
        self.ask = ask
        self.max_output_chars = max_output_chars
        self.timeout = None if timeout is None else float(timeout)
        self.allow_shell = bool(allow_shell)
        self._outputs = OutputStore()
        self._undo = UndoLog()
        self._running = 0
        self._tools: dict[tuple[str, bool], list[Tool]] = {}

    @property
    def ask(self) -> Ask:
        """Whether ``run_python`` asks the person before each call (``"always"``) or not (``"never"``)."""
        return self._ask

    @ask.setter
    def ask(self, value: Ask) -> None:
        if value not in ("always", "never"):
            raise ValueError(f"ask must be 'always' or 'never', not {value!r}")
        self._ask: Ask = value

    async def list_tools(self) -> list[Tool]:
        """The tools as they are now (the definitions follow ``ask`` and ``allow_shell``)."""
        key = (self._ask, self.allow_shell)
        if key not in self._tools:
            tools = [self._run_python_tool(), self._read_output_tool(), *self._variable_tools()]
            self._tools = {key: tools}
        return list(self._tools[key])

    def read_output(self, tool_call_id: str, start: int = 0) -> str:
        """The whole output of a ``run_python`` call from character ``start``, bounded by ``max_output_chars``.

        Raises:
            KeyError: No output of that call is kept.
            ValueError: ``start`` is negative.
        """
        return self._outputs.read(tool_call_id, start, self.max_output_chars)

    def undo(self, tool_call_id: str) -> str:
        """Undoes what the ``run_python`` call ``tool_call_id`` changed: puts back the objects of the names it rebound
        or deleted, and removes the names it created. Newest first; values changed in place cannot be undone (the
        answer says so).

        Returns:
            What it did, in one line.

        Raises:
            UndoError: Nothing was changed: the call is unknown, too old or undone already; a later run that is not
                undone changed one of its names (the message says which to undo first); a name no longer holds what
                the run left; or code is running now.
        """
        if self._running:
            raise UndoError(f"cannot undo {tool_call_id} while run_python code runs: undo once it has ended")
        return self._undo.undo(tool_call_id, self.namespace)

    def __repr__(self) -> str:
        return f"KernelTools(ask={self._ask!r}, allow_shell={self.allow_shell!r})"

    # --- the tools --------------------------------------------------------------------------------------------------

    def _run_python_tool(self) -> Tool:
        shell = (
            "Shell commands (!cmd, %%bash, %pip) are allowed."
            if self.allow_shell
            else ("Shell commands (!cmd, %%bash, %sx, %pip) are refused: use Python.")
        )
        definition = ToolDefinition(
            name="run_python",
            title="Run Python",
            icon="🐍",
            description=(
                "Runs Python code in the person's notebook kernel, as a notebook cell: in their namespace, so their "
                "variables are there and what the code defines stays. Returns what it printed and displayed, the "
                "value of the last expression, matplotlib figures as images, or the error with its traceback, and "
                "which variables it created, rebound, deleted or changed in place. IPython magics work. "
                f"{shell} The person sees the code, may edit it before it runs, and can undo a run. Long output is "
                "cut: read_output gives the rest."
            ),
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python code to run, as a cell."}},
                "required": ["code"],
                "additionalProperties": False,
            },
            risk=ToolRisk.DESTRUCTIVE,
            sequential=True,
            code_arguments={"code": "python"},
            unasked=UNASKED_REASON if self._ask == "never" else None,
        )
        return Tool(definition, self._run_python)

    def _read_output_tool(self) -> Tool:
        definition = ToolDefinition(
            name="read_output",
            title="Read a run's output",
            icon="📄",
            description=(
                "Reads the whole output of an earlier run_python call, from character `start`, when its result said "
                "that not all of it was shown."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tool_call_id": {"type": "string", "description": "The id of the run_python call."},
                    "start": {"type": "integer", "minimum": 0, "default": 0, "description": "The first character."},
                },
                "required": ["tool_call_id"],
                "additionalProperties": False,
            },
            risk=ToolRisk.READ_ONLY,
        )
        return Tool(definition, self._read_output)

    def _variable_tools(self) -> list[Tool]:
        listing = ToolDefinition(
            name="list_variables",
            title="List variables",
            icon="🗂",
            description=(
                "Lists the variables in the person's notebook kernel: name, type, shape or length and approximate "
                "size, largest first. Leaves out modules, IPython's own and _private names, and functions and "
                "classes unless include_functions."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "include_functions": {
                        "type": "boolean",
                        "default": False,
                        "description": "Also list functions and classes.",
                    }
                },
                "additionalProperties": False,
            },
            risk=ToolRisk.READ_ONLY,
        )
        inspecting = ToolDefinition(
            name="inspect_variable",
            title="Inspect a variable",
            icon="🔍",
            description=(
                "Shows one variable of the person's notebook kernel: what it is, and a bounded view of it (a "
                "frame's columns and first rows, an array's summary, a figure as an image, a value's repr)."
            ),
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The variable's name."}},
                "required": ["name"],
                "additionalProperties": False,
            },
            risk=ToolRisk.READ_ONLY,
        )
        return [Tool(listing, self._list_variables), Tool(inspecting, self._inspect_variable)]

    async def _list_variables(self, invocation: ToolInvocation) -> ToolOutcome:
        arguments = invocation.get_arguments(dict)
        namespace = self.namespace
        include = bool(arguments.get("include_functions", False))
        # Off the event loop: a namespace of tens of thousands of names takes milliseconds.
        text = await asyncio.to_thread(list_variables, namespace, include_functions=include)
        return ToolOutcome.success(text=text)

    async def _inspect_variable(self, invocation: ToolInvocation) -> ToolOutcome:
        name = invocation.get_arguments(dict)["name"]
        try:
            view = await asyncio.to_thread(inspect_variable, self.namespace, name, max_chars=self.max_output_chars)
        except VariableError as exc:
            return ToolOutcome.failure(str(exc.args[0]) if exc.args else str(exc), retryable=True)
        return ToolOutcome.success(text=view.text, attachments=view.images)

    async def _read_output(self, invocation: ToolInvocation) -> ToolOutcome:
        arguments = invocation.get_arguments(dict)
        try:
            text = self.read_output(arguments["tool_call_id"], int(arguments.get("start", 0)))
        except (KeyError, ValueError) as exc:
            return ToolOutcome.failure(str(exc.args[0]) if exc.args else str(exc), retryable=False)
        return ToolOutcome.success(text=text)

    async def _run_python(self, invocation: ToolInvocation) -> ToolOutcome:
        code = invocation.get_arguments(dict)["code"]
        cell = CellRun(code=code, edited=invocation.edited)
        shell = ipython_shell(self.namespace)
        if not self.allow_shell:
            escapes = shell_escapes(code, shell)
            if escapes:
                return ToolOutcome.failure(
                    f"Refused, and nothing ran: the code runs shell commands ({', '.join(escapes)}), which "
                    "KernelTools runs only with allow_shell=True. Do it in Python instead (subprocess is visible "
                    "to the person in the code they approve).",
                    retryable=True,
                    cell=cell,
                )
        try:
            source = code if shell is None else shell.transform_cell(code)
        except Exception as exc:  # a magic the shell cannot read
            return ToolOutcome.failure(f"The code could not be read: {type(exc).__name__}: {exc}", cell=cell)
        self.namespace.setdefault("__builtins__", builtins)  # as exec would add it: not a change of the run's
        filename = f"<run_python {invocation.tool_call_id}>"
        runner = CellRunner(
            source,
            self.namespace,
            filename=filename,
            shell=running_shell(),  # its display() and exit() are the run's, whichever namespace it runs in
            ask=answerer(invocation, asyncio.get_running_loop()),
        )
        watch = watch_start(self.namespace, code_names(code))
        self._running += 1
        try:
            done = asyncio.wrap_future(runner.start())
            try:
                finished, _ = await asyncio.wait({done}, timeout=self.timeout)
            except asyncio.CancelledError:
                # Said at once, in case a second cancel cuts the wait for the code to stop short.
                invocation.stopped_outcome = self._outcome(invocation, cell, runner.record, None, stopped=True)
                invocation.stopped_outcome = await self._stop(invocation, cell, runner, done, watch)
                raise
            if not finished:
                account = await self._stop(invocation, cell, runner, done, watch)
                told = f"It ran longer than timeout={self.timeout:g} seconds and was stopped. {account.message}"
                invocation.stopped_outcome = account.model_copy(update={"message": told})
                raise asyncio.CancelledError
        finally:
            self._running -= 1
        return self._outcome(invocation, cell, runner.record, self._changes(invocation, watch), stopped=False)

    async def _stop(
        self,
        invocation: ToolInvocation,
        cell: CellRun,
        runner: CellRunner,
        done: asyncio.Future[RunRecord],
        watch: NamespaceWatch,
    ) -> ToolOutcome:
        """Stops the code, waits for it to stop (a second at most), and says what it did until then."""
        runner.stop()
        await asyncio.wait({done}, timeout=STOP_WAIT)
        record = runner.record
        if not done.done() and record.stopped_at is None:
            record.stopped_at = (
                f"{runner.where_now() or 'the code'}, in a blocking call that had not returned a second later (a "
                "call in C, such as time.sleep, stops when it returns; what the code does after is not shown)"
            )
        return self._outcome(invocation, cell, record, self._changes(invocation, watch), stopped=True)

    def _changes(self, invocation: ToolInvocation, watch: NamespaceWatch) -> RunChanges:
        """What the run changed, recorded for :meth:`undo`."""
        try:
            return self._undo.record(invocation.tool_call_id, watch, self.namespace)
        except ValueError:  # a call id run twice (a direct invoke): its first run is the one undo knows
            return watch.changes(self.namespace)

    def _outcome(
        self,
        invocation: ToolInvocation,
        cell: CellRun,
        record: RunRecord,
        changes: RunChanges | None,
        *,
        stopped: bool,
    ) -> ToolOutcome:
        outputs = tuple(record.outputs)
        secrets: list[str] = []
        if outputs:  # what the code printed or showed may hold a secret's value: never the model's, the card's
            secrets = secret_values(self.namespace)
            record.outputs = list(redacted_outputs(outputs, secrets))
            if record.value_text is not None:
                record.value_text = redact(record.value_text, *secrets)
            outputs = tuple(record.outputs)
        report = report_of(
            record,
            filename=f"<run_python {invocation.tool_call_id}>",
            tool_call_id=invocation.tool_call_id,
            max_chars=self.max_output_chars,
            changes=None if changes is None else changes.line(),
        )
        told, full = report.told, report.full
        if outputs:  # the traceback is written from the exception itself
            told, full = redact(told, *secrets), redact(full, *secrets)
        self._outputs.put(invocation.tool_call_id, full)
        update: dict[str, Any] = {"outputs": outputs, "stopped_at": record.stopped_at}
        if changes is not None:
            update |= {
                "created": changes.created,
                "rebound": changes.rebound,
                "deleted": changes.deleted,
                "mutated": changes.mutated,
            }
        ran = cell.model_copy(update=update)
        if stopped or record.error is not None:
            return ToolOutcome.failure(told, retryable=True, cell=ran)
        return ToolOutcome.success(text=told, cell=ran)


def answerer(invocation: ToolInvocation, loop: asyncio.AbstractEventLoop) -> Callable[[str], str]:
    """How the code's ``input(prompt)`` asks the person in the call's card, from the run's thread: it waits for the
    answer while staying stoppable (a stop withdraws the question)."""

    def ask(prompt: str) -> str:
        request = InputRequest(prompt.strip() or "The code asks for input.", schema=ANSWER_FORM, asker="run_python")
        future = asyncio.run_coroutine_threadsafe(invocation.ask_person(request), loop)
        try:
            while True:
                try:
                    response = future.result(timeout=ANSWER_POLL)
                    break
                except concurrent.futures.TimeoutError:
                    continue
        finally:
            future.cancel()
        if response.action != "accept":
            raise EOFError(f"the person chose {response.action!r} instead of answering input()")
        answer = (response.content or {}).get("answer", "")
        return answer if isinstance(answer, str) else str(answer)

    return ask


def default_namespace() -> dict[str, Any]:
    """IPython's user namespace in a kernel, else ``__main__``'s globals."""
    shell = running_shell()
    if shell is not None:
        namespace: dict[str, Any] = shell.user_ns
        return namespace
    return sys.modules["__main__"].__dict__
