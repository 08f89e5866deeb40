"""One run of code as a notebook cell, on a thread of its own: what it printed, showed and drew, its last
expression's value or its error, and how to stop it from outside.

The code runs in the given namespace as a cell would (its last expression is its value); under IPython the shell
has transformed it first, so magics work. What its thread prints, displays or asks goes to this run only
(:mod:`ai_widgets.kernel._routing`). :meth:`CellRunner.stop` raises :class:`CodeStopped` in the run's thread, which
Python delivers between two bytecodes: a pure-Python loop stops at once, a blocking call in C (``time.sleep``, a
socket read) only when it returns.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import ctypes
import inspect
import linecache
import os
import re
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, TracebackType
from typing import Any, Literal

from ai_widgets._safe import UnsafeValueError, checked_json
from ai_widgets.kernel._routing import ROUTER
from ai_widgets.outcome import CellOutput, DisplayBundle

__all__ = ["CellRunner", "CodeStopped", "RunRecord"]

#: Characters of printed text one run keeps from its start; past it only the last :data:`TAIL_CHARS` are kept.
HEAD_CHARS = 500_000
TAIL_CHARS = 100_000
#: ``display(...)`` outputs one run keeps (a loop that displays thousands keeps the first ones, and says so).
MAX_DISPLAYS = 100
#: Characters of all the displays one run keeps (the card, the history and the saved notebook hold them): a loop of
#: large figures keeps the first ones that fit, and says so.
MAX_DISPLAY_CHARS_IN_ALL = 8_000_000
#: Runs whose code stays in ``linecache`` for tracebacks (a function defined by a run shows its lines while kept).
KEPT_SOURCES = 256

kept_sources: deque[str] = deque()
PACKAGE = str(Path(__file__).resolve().parent.parent) + os.sep


class CodeStopped(BaseException):
    """Raised in a run's thread to stop its code (a stop, a cancel, an interrupt, a timeout). A BaseException, so
    that the code's own ``except Exception`` does not swallow it."""


@dataclass
class RunRecord:
    """What one run did, in order. Filled by the run's thread; read once the run ended (or was given up on).

    Attributes:
        outputs: Printed text (one output per stretch of one stream), displays, figures, the value, the error.
        value_text: What the model reads of the last expression's value, or ``None``.
        figures: How many matplotlib figures the run drew.
        error: The exception that ended the code (not a stop), or ``None``.
        stopped_at: Where a stop reached the code (``line 3 of the code``), or ``None``.
        left_out: Printed characters that were neither in the head nor in the tail kept.
        displays_left_out: Displays and figures past :data:`MAX_DISPLAYS` or :data:`MAX_DISPLAY_CHARS_IN_ALL`.
    """

    outputs: list[CellOutput] = field(default_factory=list)
    value_text: str | None = None
    figures: int = 0
    error: BaseException | None = None
    error_text: str = ""
    stopped_at: str | None = None
    left_out: int = 0
    displays_left_out: int = 0


class CellRunner:
    """Runs ``source`` once in ``namespace`` on a new thread (see the module).

    Args:
        source: The code to run (for IPython, already transformed by the shell).
        namespace: The globals it runs in.
        filename: The name its frames carry in tracebacks (``<run_python call_1>``).
        shell: The IPython shell whose display publisher and ``exit()`` the code may use, or ``None``.
        ask: Answers the code's ``input(prompt)`` (on the run's thread); ``None``: nobody can, and ``input()``
            raises.
    """

    def __init__(
        self,
        source: str,
        namespace: dict[str, Any],
        *,
        filename: str,
        shell: Any = None,
        ask: Callable[[str], str] | None = None,
    ) -> None:
        self.source = source
        self.namespace = namespace
        self.filename = filename
        self.record = RunRecord()
        self._shell = shell
        self._ask = ask
        self._lock = threading.Lock()
        self._phase: Literal["new", "running", "done"] = "new"
        self._stop_sent = False
        self._thread_id: int | None = None
        self._printed = 0  # characters of printed text kept from the start
        self._tail: deque[tuple[str, str]] = deque()
        self._tail_chars = 0
        self._display_chars = 0  # characters of the displays kept (MAX_DISPLAY_CHARS_IN_ALL)
        self.done: concurrent.futures.Future[RunRecord] = concurrent.futures.Future()

    # --- running --------------------------------------------------------------------------------------------------

    def start(self) -> concurrent.futures.Future[RunRecord]:
        """Starts the run's thread; the future ends with the record when the code has ended (never with an
        error: what the code raised is in the record)."""
        keep_source(self.filename, self.source)
        self.done.set_running_or_notify_cancel()  # never cancelled from outside: the record always comes
        thread = threading.Thread(target=self._work, name=f"ai_widgets {self.filename}", daemon=True)
        thread.start()
        return self.done

    def stop(self) -> bool:
        """Stops the code by raising :class:`CodeStopped` in its thread, once; whether it was running to stop."""
        with self._lock:
            if self._phase != "running" or self._stop_sent or self._thread_id is None:
                return False
            self._stop_sent = True
            set_async_exception(self._thread_id, CodeStopped)
            return True

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` reached the code (the record says where once it stopped)."""
        return self._stop_sent

    def _work(self) -> None:
        thread_id = threading.get_ident()
        try:
            with ROUTER.route(thread_id, self, self._shell):
                try:
                    with self._lock:
                        self._thread_id, self._phase = thread_id, "running"
                    self._run()
                    self._end_phase()
                    # A stop sent just before the phase ended is raised at the thread's next check, which a loop's
                    # backward jump makes: here, inside this try, rather than later in whatever the thread does.
                    for _ in range(3):
                        pass
                except CodeStopped:  # it came after the code had ended: there was nothing left to stop
                    self._end_phase()
        except BaseException as exc:  # a fault of ours: the run reports it rather than losing it
            self.record.error = exc
            self.record.error_text = f"{type(exc).__name__}: {exc}"
            self.record.outputs.append(CellOutput(kind="error", text=self.record.error_text))
        finally:
            self.done.set_result(self.record)

    def _end_phase(self) -> None:
        """Ends the phase in which :meth:`stop` raises in the thread. A stop already sent is never taken back
        (``PyThreadState_SetAsyncExc(id, NULL)`` would leave the interpreter's pending flag set, slowing every
        thread): it is raised, and caught, before the thread leaves :meth:`_work`."""
        with self._lock:
            self._phase = "done"

    def _run(self) -> None:
        record = self.record
        before = figure_numbers()
        try:
            body, last = compiled(self.source, self.filename)
            value = run_code(body, last, self.namespace)
            figures = self._figures(before, value)
            if value is not None:
                bundle = DisplayBundle.of(value)
                figures.append(CellOutput(kind="result", display=bundle))
                record.value_text = bundle.text
            record.outputs.extend(self._finished_streams())
            record.outputs.extend(figures)
        except CodeStopped as stopped:
            record.stopped_at = self._where(stopped.__traceback__)
            record.outputs.extend(self._finished_streams())
            close_new_figures(before)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: they end the code, never the kernel
            record.outputs.extend(self._finished_streams())
            record.outputs.extend(self._figures(before, None))
            record.error = exc
            record.error_text = code_traceback(exc, self.filename)
            record.outputs.append(CellOutput(kind="error", text=record.error_text))

    def _where(self, tb: TracebackType | None) -> str:
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:
            return "a place where none of the code's own lines was running (a library call or an event loop)"
        return f"line {line} of the code"

    def where_now(self) -> str | None:
        """The line of the code the run's thread is at now (its innermost frame of the code), or ``None``."""
        thread_id = self._thread_id
        frame = None if thread_id is None else sys._current_frames().get(thread_id)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return f"line {frame.f_lineno} of the code"
            frame = frame.f_back
        return None

    def _figures(self, before: set[int], value: Any) -> list[CellOutput]:
        """The matplotlib figures the run left open, shown as the inline backend shows them and closed (left open,
        they would show again under the cell the person runs next). A figure that is the value is shown once."""
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return []
        shown: list[CellOutput] = []
        for number in sorted(set(pyplot.get_fignums()) - before):
            figure = pyplot.figure(number)
            if value is not figure and getattr(value, "figure", None) is not figure:
                self.record.figures += 1
                bundle = DisplayBundle.of(figure)
                if self.admit(bundle):
                    shown.append(CellOutput(kind="display", display=bundle))
            pyplot.close(figure)
        return shown

    # --- the sink: what the code's thread prints, shows and asks --------------------------------------------------

    def write(self, name: Literal["stdout", "stderr"], text: str) -> None:
        if not text:
            return
        room = HEAD_CHARS - self._printed
        kept, rest = text[:room], text[room:]
        if kept:
            self._printed += len(kept)
            outputs = self.record.outputs
            if outputs and outputs[-1].kind == "stream" and outputs[-1].name == name:
                outputs[-1] = CellOutput(kind="stream", name=name, text=outputs[-1].text + kept)
            else:
                outputs.append(CellOutput(kind="stream", name=name, text=kept))
        if rest:
            self._tail.append((name, rest))
            self._tail_chars += len(rest)
            while self._tail_chars - len(self._tail[0][1]) >= TAIL_CHARS:
                self.record.left_out += len(self._tail[0][1])
                self._tail_chars -= len(self._tail.popleft()[1])

    def admit(self, bundle: DisplayBundle) -> bool:
        """Whether one more display is kept: within :data:`MAX_DISPLAYS` and :data:`MAX_DISPLAY_CHARS_IN_ALL`
        (else it is counted as left out)."""
        size = sum(len(value) if isinstance(value, str) else 0 for value in bundle.data.values())
        kept = sum(output.kind == "display" for output in self.record.outputs)
        if kept >= MAX_DISPLAYS or self._display_chars + size > MAX_DISPLAY_CHARS_IN_ALL:
            self.record.displays_left_out += 1
            return False
        self._display_chars += size
        return True

    def show(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        if sum(output.kind == "display" for output in self.record.outputs) >= MAX_DISPLAYS:
            self.record.displays_left_out += 1
            return
        bundle = DisplayBundle.of(data)
        if not self.admit(bundle):
            return
        if metadata:
            bundle = DisplayBundle(data=bundle.data, metadata=metadata_for(bundle, metadata), text=bundle.text)
        self.record.outputs.append(CellOutput(kind="display", display=bundle))

    def clear(self) -> None:
        self.record.outputs = [o for o in self.record.outputs if o.kind not in ("stream", "display")]
        self._tail.clear()
        self._tail_chars = 0

    def ask(self, prompt: str) -> str:
        if self._ask is None:
            raise EOFError(
                "input() was called, but nobody can answer here: the code runs outside a chat session (run it "
                "through a ChatSession or ChatWidget to be asked in its card)"
            )
        answer = self._ask(prompt)
        if prompt:
            self.write("stdout", prompt)
        self.write("stdout", answer + "\n")  # as a notebook shows an answered input()
        return answer

    def exit(self) -> None:
        raise SystemExit("exit() ends the code run by run_python, never the kernel")

    def _finished_streams(self) -> list[CellOutput]:
        """The tail of printed text past the head, after a line saying how much was left out between."""
        if not self._tail:
            return []
        tail = list(self._tail)
        overflow = self._tail_chars - TAIL_CHARS
        self._tail.clear()
        self._tail_chars = 0
        if overflow > 0:  # the first piece is cut to fit
            first_name, first_text = tail[0]
            tail[0] = (first_name, first_text[overflow:])
            self.record.left_out += overflow
        outputs = [
            CellOutput(kind="stream", name="stderr", text=f"\n[… {self.record.left_out:,} characters left out …]\n")
        ]
        for name, text in tail:
            if outputs[-1].name == name:
                outputs[-1] = CellOutput(kind="stream", name=name, text=outputs[-1].text + text)
            else:
                outputs.append(CellOutput(kind="stream", name=name, text=text))
        return outputs


def compiled(source: str, filename: str) -> tuple[CodeType, CodeType | None]:
    """The code without its last statement when that is an expression, and that expression; top-level ``await``
    is allowed (the code then runs in an event loop of its own thread)."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = ast.parse(source, filename, "exec", type_comments=False)
    last: ast.Expression | None = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = ast.Expression(final.value)
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    return body, None if last is None else compile(last, filename, "eval", flags=flags, dont_inherit=True)


def run_code(body: CodeType, last: CodeType | None, namespace: dict[str, Any]) -> Any:
    """Runs the code in ``namespace``; the last expression's value (``None`` when there is none)."""
    awaits = bool(body.co_flags & inspect.CO_COROUTINE) or (
        last is not None and bool(last.co_flags & inspect.CO_COROUTINE)
    )
    if not awaits:
        exec(body, namespace)
        return None if last is None else eval(last, namespace)

    async def both() -> Any:
        step = eval(body, namespace)
        if inspect.isawaitable(step):
            await step
        if last is None:
            return None
        value = eval(last, namespace)
        return (await value) if last.co_flags & inspect.CO_COROUTINE else value

    return asyncio.run(both())


def code_traceback(exc: BaseException, filename: str) -> str:
    """The exception as Python prints it, from the code's first frame on and without this package's frames (the
    machinery that ran the code is not the person's); a syntax error as Python prints one."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    error = traceback.TracebackException(type(exc), exc, tb)
    error.stack = traceback.StackSummary.from_list([f for f in error.stack if not is_own_frame(f.filename)])
    return named_lines("".join(error.format()), filename)


def named_lines(text: str, filename: str) -> str:
    """``File "<run_python call_1>", line 3, in f`` written as ``line 3 of the code, in f``."""
    text = re.sub(re.escape(f'File "{filename}", line ') + r"(\d+)", r"line \1 of the code", text)
    return text.replace(" of the code, in <module>", " of the code")


def is_own_frame(filename: str) -> bool:
    """Whether a frame is this package's (what ran the code, asked for input, routed a print)."""
    return filename.startswith(PACKAGE)


def set_async_exception(thread_id: int, exception: type[BaseException]) -> None:
    """Raises ``exception`` in the thread at its next check between bytecodes."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exception))


def keep_source(filename: str, source: str) -> None:
    """Keeps the code's lines for tracebacks (as IPython keeps a cell's), for the last :data:`KEPT_SOURCES` runs."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    kept_sources.append(filename)
    while len(kept_sources) > KEPT_SOURCES:
        linecache.cache.pop(kept_sources.popleft(), None)


def figure_numbers() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set() if pyplot is None else set(pyplot.get_fignums())


def close_new_figures(before: set[int]) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        for number in set(pyplot.get_fignums()) - before:
            pyplot.close(number)


def metadata_for(bundle: DisplayBundle, metadata: dict[str, Any]) -> dict[str, Any]:
    """The display's metadata for the mime types the bundle kept, where it is JSON."""
    kept = {mime: value for mime, value in metadata.items() if mime in bundle.data}
    try:
        return dict(checked_json(kept, where="the display's metadata"))
    except (UnsafeValueError, TypeError, ValueError):
        return {}
