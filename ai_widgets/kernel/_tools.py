"""``KernelTools``: the tools that let the model work in the notebook's kernel (run Python as a cell, read the rest of
a run's output), offered to a session as one source of tools."""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import sys
from collections.abc import Callable
from typing import Any, Literal

from ai_widgets.kernel._cell import CellRunner, RunRecord
from ai_widgets.kernel._outputs import OutputStore
from ai_widgets.kernel._report import report_of
from ai_widgets.kernel._shell import ipython_shell, running_shell, shell_escapes
from ai_widgets.messages import InputRequest
from ai_widgets.outcome import CellRun, ToolOutcome
from ai_widgets.tools import Tool, ToolDefinition, ToolInvocation, ToolRisk

__all__ = ["KernelTools"]

Ask = Literal["always", "never"]
#: How long a stop waits for the code to stop before the call ends anyway (a blocking C call stops when it returns).
STOP_WAIT = 1.0
#: How often a thread waiting for the person's answer to ``input()`` looks whether it was stopped.
ANSWER_POLL = 0.05
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
      and ``exit()`` end the code with an error, never the kernel.
    - ``read_output(tool_call_id, start=0)``: the whole output of a run, from character ``start``, when the model's
      text had to cut it (read-only, runs unasked).

    Args:
        namespace: The variables the code runs in: IPython's user namespace in a kernel, else ``__main__``'s globals;
            a plain dict works.
        ask: ``"always"``: every ``run_python`` call asks the person. ``"never"``: its calls run without asking.
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
            self._tools = {key: [self._run_python_tool(), self._read_output_tool()]}
        return list(self._tools[key])

    def read_output(self, tool_call_id: str, start: int = 0) -> str:
        """The whole output of a ``run_python`` call from character ``start``, bounded by ``max_output_chars``.

        Raises:
            KeyError: No output of that call is kept.
            ValueError: ``start`` is negative.
        """
        return self._outputs.read(tool_call_id, start, self.max_output_chars)

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
            icon="▶",
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
            shell=shell,
            ask=answerer(invocation, asyncio.get_running_loop()),
        )
        done = asyncio.wrap_future(runner.start())
        try:
            finished, _ = await asyncio.wait({done}, timeout=self.timeout)
        except asyncio.CancelledError:
            invocation.stopped_outcome = self._outcome(invocation, cell, runner.record, stopped=True)
            invocation.stopped_outcome = await self._stop(invocation, cell, runner, done)
            raise
        if not finished:
            account = await self._stop(invocation, cell, runner, done)
            told = f"It ran longer than timeout={self.timeout:g} seconds and was stopped. {account.message}"
            invocation.stopped_outcome = account.model_copy(update={"message": told})
            raise asyncio.CancelledError
        return self._outcome(invocation, cell, runner.record, stopped=False)

    async def _stop(
        self, invocation: ToolInvocation, cell: CellRun, runner: CellRunner, done: asyncio.Future[RunRecord]
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
        return self._outcome(invocation, cell, record, stopped=True)

    def _outcome(self, invocation: ToolInvocation, cell: CellRun, record: RunRecord, *, stopped: bool) -> ToolOutcome:
        report = report_of(
            record,
            filename=f"<run_python {invocation.tool_call_id}>",
            tool_call_id=invocation.tool_call_id,
            max_chars=self.max_output_chars,
        )
        self._outputs.put(invocation.tool_call_id, report.full)
        ran = cell.model_copy(update={"outputs": tuple(record.outputs), "stopped_at": record.stopped_at})
        if stopped:
            return ToolOutcome.failure(report.told, retryable=True, cell=ran)
        if record.error is not None:
            return ToolOutcome.failure(report.told, retryable=True, cell=ran)
        return ToolOutcome.success(text=report.told, cell=ran)


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
