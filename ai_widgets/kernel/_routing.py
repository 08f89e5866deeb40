"""What code run as a cell prints, shows, asks and exits with, taken from its own thread only.

The process has one ``sys.stdout``, one ``sys.stderr``, one ``builtins.input`` and (in a kernel) one display
publisher, shared by every thread. While at least one run is going, :class:`ThreadRouter` puts a thin stand-in in
each place that hands what a run's thread writes, shows or asks to that run's :class:`Sink`, and passes everything
else, from every other thread, to what was there before: the kernel goes on printing other cells' output as usual.
When the last run ends, the stand-ins are taken out again, unless something else replaced them meanwhile (then
that is left alone, and the stand-in, still passing through, is harmless).
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, Protocol

__all__ = ["ROUTER", "Sink", "ThreadRouter"]

StreamName = Literal["stdout", "stderr"]


class Sink(Protocol):
    """Where one run's output goes (called on the run's own thread)."""

    def write(self, name: StreamName, text: str) -> None:
        """Printed text."""

    def show(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """A ``display(...)``: its mime bundle, as IPython's formatter made it."""

    def clear(self) -> None:
        """``clear_output()``: what the run showed so far goes."""

    def ask(self, prompt: str) -> str:
        """``input(prompt)``: the person's answer.

        Raises:
            Exception: Nobody can answer (the message says why).
        """

    def exit(self) -> None:
        """IPython's ``exit()`` / ``quit()``: raises what ends the run (never the kernel)."""


class RoutedStream:
    """``sys.stdout`` or ``sys.stderr`` while runs go: a run's thread writes to its sink, others to ``target``."""

    def __init__(self, name: StreamName, target: Any, router: ThreadRouter) -> None:
        self._name: StreamName = name
        self.target = target
        self._router = router

    def write(self, text: str) -> int:
        sink = self._router.sink()
        if sink is None:
            written = self.target.write(text)
            return written if isinstance(written, int) else len(text)
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        sink.write(self._name, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._router.sink() is None:
            self.target.flush()

    def isatty(self) -> bool:
        return False if self._router.sink() is not None else bool(self.target.isatty())

    def __getattr__(self, name: str) -> Any:
        # Everything else (encoding, fileno, ipykernel's set_parent...) is the stream's own.
        return getattr(self.target, name)


class ThreadRouter:
    """Routes what registered threads print, show, ask and exit with to their sinks (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sinks: dict[int, Sink] = {}
        self._shells: dict[int, int] = {}  # id(shell) -> how many runs use it
        self._saved: dict[str, Any] = {}  # what a shell's stand-ins replaced, by shell

    def sink(self) -> Sink | None:
        """The sink of the calling thread, or ``None`` when it is not a run's."""
        return self._sinks.get(threading.get_ident())

    @contextmanager
    def route(self, thread_id: int, sink: Sink, shell: Any = None) -> Iterator[None]:
        """While the block runs, what ``thread_id`` prints, shows, asks or exits with goes to ``sink``.

        Args:
            thread_id: The run's thread (``threading.get_ident()`` there).
            sink: Where it goes.
            shell: The IPython shell whose display publisher and ``exit()`` the run may use, or ``None``.
        """
        with self._lock:
            self._install()
            self._sinks = {**self._sinks, thread_id: sink}  # replaced, never mutated: read without the lock
            if shell is not None:
                count = self._shells.get(id(shell), 0)
                if count == 0:
                    self._install_shell(shell)
                self._shells[id(shell)] = count + 1
        try:
            yield
        finally:
            with self._lock:
                self._sinks = {k: v for k, v in self._sinks.items() if k != thread_id}
                if shell is not None:
                    count = self._shells[id(shell)] - 1
                    if count == 0:
                        del self._shells[id(shell)]
                        self._uninstall_shell(shell)
                    else:
                        self._shells[id(shell)] = count
                if not self._sinks:
                    self._uninstall()

    # --- the process's streams and input ----------------------------------------------------------------------

    def _install(self) -> None:
        """Puts the stand-ins in place, wrapping what is there now: on every run's start, since something may have
        replaced them since the first (a test's capture, a cell's ``redirect_stdout``)."""
        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if not (isinstance(current, RoutedStream) and current._router is self):
                setattr(sys, name, RoutedStream(name, current, self))
        if getattr(builtins.input, "router", None) is self:
            return
        previous = builtins.input
        router = self

        def routed_input(prompt: object = "") -> str:
            sink = router.sink()
            if sink is None:
                return str(previous(prompt))
            return sink.ask(str(prompt))

        routed_input.router = self  # type: ignore[attr-defined]
        routed_input.previous = previous  # type: ignore[attr-defined]
        builtins.input = routed_input

    def _uninstall(self) -> None:
        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if isinstance(current, RoutedStream) and current._router is self:
                setattr(sys, name, current.target)
        if getattr(builtins.input, "router", None) is self:
            builtins.input = builtins.input.previous  # type: ignore[attr-defined]

    # --- an IPython shell's display publisher and exit ----------------------------------------------------------

    def _install_shell(self, shell: Any) -> None:
        router = self
        publisher = getattr(shell, "display_pub", None)
        if publisher is not None:
            publish, clear_output = publisher.publish, publisher.clear_output

            def routed_publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
                sink = router.sink()
                if sink is None:
                    return publish(data, metadata, *args, **kwargs)
                sink.show(dict(data or {}), dict(metadata or {}))
                return None

            def routed_clear(*args: Any, **kwargs: Any) -> Any:
                sink = router.sink()
                if sink is None:
                    return clear_output(*args, **kwargs)
                sink.clear()
                return None

            publisher.publish, publisher.clear_output = routed_publish, routed_clear
            self._saved[f"publisher:{id(shell)}"] = (publisher, routed_publish, routed_clear)
        # ipykernel puts its own input() in place as each cell starts (for that cell's front end): a cell that starts
        # while a run goes would take the run's input() too. Its pre_run_cell event comes after that, and puts the
        # stand-in back over it (ipykernel restores what it saved, the stand-in, when the cell ends).
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("pre_run_cell", self._reinstall)
        ask_exit = shell.ask_exit

        def routed_exit(*args: Any, **kwargs: Any) -> Any:
            sink = router.sink()
            if sink is None:
                return ask_exit(*args, **kwargs)
            sink.exit()
            return None

        shell.ask_exit = routed_exit
        self._saved[f"exit:{id(shell)}"] = routed_exit

    def _reinstall(self, info: Any = None) -> None:
        with self._lock:
            if self._sinks:
                self._install()

    def _uninstall_shell(self, shell: Any) -> None:
        events = getattr(shell, "events", None)
        if events is not None:
            with contextlib.suppress(ValueError):
                events.unregister("pre_run_cell", self._reinstall)
        saved = self._saved.pop(f"publisher:{id(shell)}", None)
        if saved is not None:
            publisher, routed_publish, routed_clear = saved
            # Instance attributes over the class's methods: removing them puts the methods back.
            if publisher.__dict__.get("publish") is routed_publish:
                del publisher.publish
            if publisher.__dict__.get("clear_output") is routed_clear:
                del publisher.clear_output
        routed_exit = self._saved.pop(f"exit:{id(shell)}", None)
        if routed_exit is not None and shell.__dict__.get("ask_exit") is routed_exit:
            del shell.ask_exit


#: The one router of the process: there is one ``sys.stdout`` to stand in for.
ROUTER = ThreadRouter()
