"""The terminals an ACP agent asks its client for (``terminal/create``, ``terminal/output``,
``terminal/wait_for_exit``, ``terminal/kill``, ``terminal/release``), run here as plain subprocesses.

Each command runs in a process group of its own (killing it kills what it started), with stdin from ``/dev/null``
and stdout and stderr merged into one output. The output keeps its last ``output_byte_limit`` bytes (1 MB unless the
agent asks for another limit, 16 MB at most), cut where a UTF-8 character starts, and says whether it was
truncated. A callback sees the output live, at most 10 times a second, and once more with the exit. Closing the set
kills and releases every terminal. No SDK type appears here: the ACP client maps requests to these calls.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
import signal
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ai_widgets.integrations._acp_process_group import exited, kill_if_running, stop_group

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "MAX_OUTPUT_LIMIT",
    "MAX_TERMINALS",
    "UPDATE_INTERVAL",
    "ExitStatus",
    "OutputBuffer",
    "Terminal",
    "TerminalError",
    "TerminalOutput",
    "Terminals",
]

logger = logging.getLogger("ai_widgets")

#: The output a terminal keeps when the agent names no limit, in bytes.
DEFAULT_OUTPUT_LIMIT = 1024 * 1024
#: The most output a terminal keeps whatever the agent asks for, in bytes.
MAX_OUTPUT_LIMIT = 16 * 1024 * 1024
#: The most terminals open at once (not yet released): an agent cannot start processes without end.
MAX_TERMINALS = 64
#: The shortest time between two live updates of one terminal, in seconds (at most 10 a second).
UPDATE_INTERVAL = 0.1
#: Seconds a command gets after SIGTERM before SIGKILL.
KILL_GRACE = 2.0
#: Seconds the output gets, after the command exited, to be read to its end (a background job it started may hold
#: the output open: its later output still comes, but the exit is not held back for it).
OUTPUT_AFTER_EXIT = 0.5
#: Seconds between two looks at whether a command is still running.
EXIT_POLL = 0.05
#: How many bytes one read of the output takes at most.
READ_SIZE = 64 * 1024


class TerminalError(RuntimeError):
    """A terminal could not be created, or the id names no terminal (never created, or released)."""


@dataclass(frozen=True)
class ExitStatus:
    """How a command ended: its exit code, or the signal that ended it (``"SIGKILL"``)."""

    exit_code: int | None
    signal: str | None

    @classmethod
    def of(cls, returncode: int) -> ExitStatus:
        """The status of a process's ``returncode`` (negative: the number of the signal that ended it)."""
        if returncode >= 0:
            return cls(returncode, None)
        try:
            return cls(None, signal.Signals(-returncode).name)
        except ValueError:
            return cls(None, f"signal {-returncode}")


@dataclass(frozen=True)
class TerminalOutput:
    """What ``terminal/output`` answers: the kept output, whether some was cut off its start, and the exit status
    once the command ended."""

    output: str
    truncated: bool
    exit_status: ExitStatus | None


class OutputBuffer:
    """The last ``limit`` bytes of a command's output, starting where a UTF-8 character starts.

    Args:
        limit: The most bytes kept (``0``: none, every output truncated).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.truncated = False
        self._data = bytearray()

    def __len__(self) -> int:
        return len(self._data)

    def append(self, chunk: bytes) -> None:
        """Adds output, dropping the oldest bytes beyond the limit."""
        self._data += chunk
        excess = len(self._data) - self.limit
        if excess <= 0:
            return
        self.truncated = True
        # A character's continuation bytes (0b10xxxxxx), at most three, go with its first byte.
        for _ in range(3):
            if excess < len(self._data) and self._data[excess] & 0xC0 == 0x80:
                excess += 1
        del self._data[:excess]

    def text(self, *, final: bool) -> str:
        """The kept output as text; bytes that are not UTF-8 become U+FFFD. Unless ``final``, a character whose last
        bytes have not come yet is left for the next time."""
        end = len(self._data) if final else complete_length(self._data)
        return self._data[:end].decode("utf-8", "replace")


def complete_length(data: bytearray) -> int:
    """How many bytes of ``data`` end with a whole UTF-8 character (its last character may still be coming)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the first byte
            continue
        needed = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return len(data) - back if back < needed else len(data)
    return len(data)


class Terminal:
    """One command the agent runs: its output so far, its exit, and its end. Made by :meth:`Terminals.create`.

    Attributes:
        id: The terminal's id, as the agent names it.
        command: The command as the agent gave it (run by ``/bin/sh -c`` when it came without ``args``).
        args: Its arguments.
        cwd: The directory it runs in.
        output_byte_limit: The most output bytes it keeps.
    """

    def __init__(
        self,
        terminal_id: str,
        process: asyncio.subprocess.Process,
        *,
        command: str,
        args: Sequence[str],
        cwd: str,
        output_byte_limit: int,
        on_output: Callable[[Terminal], None] | None,
    ) -> None:
        self.id = terminal_id
        self.command = command
        self.args = tuple(args)
        self.cwd = cwd
        self.output_byte_limit = output_byte_limit
        self._process = process
        self._buffer = OutputBuffer(output_byte_limit)
        self._on_output = on_output
        self._last_update = -math.inf
        self._pending_update: asyncio.TimerHandle | None = None
        self._released = False
        self._exit: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read())
        self._watcher = asyncio.ensure_future(self._watch())
        # A terminal nobody released is killed when Python exits (a kernel shut down), never left running.
        self._finalizer = weakref.finalize(self, kill_if_running, process)

    @property
    def pid(self) -> int:
        """The command's process id (and its process group's)."""
        return self._process.pid

    @property
    def exit_status(self) -> ExitStatus | None:
        """How the command ended, once it ended and its output was read; ``None`` while it runs."""
        return self._exit.result() if self._exit.done() else None

    def output(self) -> TerminalOutput:
        """The output kept so far, whether its start was cut off, and the exit status once the command ended."""
        status = self.exit_status
        return TerminalOutput(self._buffer.text(final=status is not None), self._buffer.truncated, status)

    async def wait(self) -> ExitStatus:
        """Waits for the command to end (and its output to be read) and returns how it ended."""
        return await asyncio.shield(self._exit)

    async def kill(self) -> None:
        """Ends the command and its process group (SIGTERM, then SIGKILL after 2 s); its output stays readable."""
        await stop_group(self._process, KILL_GRACE)
        await self.wait()

    async def release(self) -> None:
        """Kills the command if it runs, and stops its live updates. Prefer :meth:`Terminals.release`, which also
        forgets the id."""
        self._released = True
        if self._pending_update is not None:
            self._pending_update.cancel()
            self._pending_update = None
        await stop_group(self._process, KILL_GRACE)
        _, pending = await asyncio.wait([self._reader, self._watcher], timeout=OUTPUT_AFTER_EXIT + EXIT_POLL * 4)
        for task in pending:  # a process outside the group holds the output: stop reading it
            task.cancel()
        await asyncio.gather(self._reader, self._watcher, return_exceptions=True)
        self._finalizer.detach()

    def __repr__(self) -> str:
        status = self.exit_status
        state = "running" if status is None else f"exit_code={status.exit_code}, signal={status.signal}"
        return f"<Terminal {self.id} {self.command!r} {state}>"

    async def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None  # started with a pipe
        while chunk := await stdout.read(READ_SIZE):
            self._buffer.append(chunk)
            self._changed()

    async def _watch(self) -> None:
        try:
            await exited(self._process, None, poll=EXIT_POLL)
            await asyncio.wait([self._reader], timeout=OUTPUT_AFTER_EXIT)
        finally:  # cancelled too (a release that could not wait): no wait() is left hanging
            code = self._process.returncode
            if code is not None:
                self._exit.set_result(ExitStatus.of(code))
            else:
                self._exit.set_exception(TerminalError(f"terminal {self.id} was released before its command ended"))
                self._exit.exception()  # retrieved: nobody may be waiting
        self._changed()  # the last update shows the exit

    def _changed(self) -> None:
        """Schedules a live update: now if the last was long enough ago, else when it will be. One waits at most,
        and it shows the state when it runs."""
        if self._on_output is None or self._pending_update is not None or self._released:
            return
        loop = asyncio.get_running_loop()
        delay = self._last_update + UPDATE_INTERVAL - loop.time()
        if delay <= 0:
            self._update()
        else:
            self._pending_update = loop.call_later(delay, self._update)

    def _update(self) -> None:
        self._pending_update = None
        self._last_update = asyncio.get_running_loop().time()
        assert self._on_output is not None
        try:
            self._on_output(self)
        except Exception:
            logger.exception("the live output callback of terminal %s failed", self.id)


class Terminals:
    """The terminals of one agent connection, by id.

    Args:
        cwd: The directory a command runs in when the agent names none (``None``: this process's).
    """

    def __init__(self, *, cwd: str | os.PathLike[str] | None = None) -> None:
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)
        self._closed = False

    def __len__(self) -> int:
        return len(self._terminals)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: no terminal can be created."""
        return self._closed

    def __iter__(self) -> Iterator[Terminal]:
        return iter(list(self._terminals.values()))

    async def create(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
        on_output: Callable[[Terminal], None] | None = None,
    ) -> Terminal:
        """Starts a command and returns its terminal.

        Args:
            command: The program, run with ``args``; without ``args`` a command line, run by ``/bin/sh -c`` (agents
                such as Claude Code send a whole shell command this way).
            args: The program's arguments.
            cwd: Where it runs: an absolute path (``None``: the set's ``cwd``).
            env: Variables added to (or replacing those of) this process's environment.
            output_byte_limit: The most output bytes kept (``None``: 1 MB; more than 16 MB keeps 16 MB).
            on_output: Called on the loop with the terminal when its output grows, at most 10 times a second, and
                once more when it exits; it reads :meth:`Terminal.output`.

        Raises:
            TerminalError: The set is closed, too many terminals are open, an argument is wrong, or the command
                cannot be started (the message says why).
        """
        self._refuse_if_closed()
        if len(self._terminals) >= MAX_TERMINALS:
            raise TerminalError(f"{MAX_TERMINALS} terminals are open already: release one first")
        if not isinstance(command, str) or not command.strip():
            raise TerminalError("a terminal's command must be a non-empty string")
        if isinstance(args, (str, bytes)) or not all(isinstance(arg, str) for arg in args):
            raise TerminalError("a terminal's args must be a list of strings")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise TerminalError("a terminal's env must map names to string values")
        if cwd is not None and not os.path.isabs(cwd):
            raise TerminalError(f"a terminal's cwd must be an absolute path, not {cwd!r}")
        if output_byte_limit is not None and (not isinstance(output_byte_limit, int) or output_byte_limit < 0):
            raise TerminalError(
                f"a terminal's output_byte_limit must be a whole number of bytes, not {output_byte_limit!r}"
            )
        limit = DEFAULT_OUTPUT_LIMIT if output_byte_limit is None else min(output_byte_limit, MAX_OUTPUT_LIMIT)
        where = cwd if cwd is not None else self.cwd if self.cwd is not None else os.getcwd()
        merged = {**os.environ, **(env or {})}
        devnull, pipe, merge = asyncio.subprocess.DEVNULL, asyncio.subprocess.PIPE, asyncio.subprocess.STDOUT
        try:
            if args:
                process = await asyncio.create_subprocess_exec(
                    command,
                    *args,
                    stdin=devnull,
                    stdout=pipe,
                    stderr=merge,
                    cwd=where,
                    env=merged,
                    start_new_session=True,
                )
            else:
                process = await asyncio.create_subprocess_shell(
                    command, stdin=devnull, stdout=pipe, stderr=merge, cwd=where, env=merged, start_new_session=True
                )
        except OSError as error:
            raise TerminalError(start_error(command, where, error)) from None
        if self.closed:  # closed while it started
            await stop_group(process, KILL_GRACE)
            self._refuse_if_closed()
        terminal_id = f"terminal-{next(self._ids)}"
        terminal = Terminal(
            terminal_id,
            process,
            command=command,
            args=args,
            cwd=where,
            output_byte_limit=limit,
            on_output=on_output,
        )
        self._terminals[terminal_id] = terminal
        return terminal

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise TerminalError("the terminals were closed")

    def get(self, terminal_id: str) -> Terminal:
        """The terminal of ``terminal_id``.

        Raises:
            TerminalError: No open terminal has that id.
        """
        try:
            return self._terminals[terminal_id]
        except KeyError:
            raise TerminalError(f"no terminal {terminal_id!r}: it was released, or never created") from None

    async def release(self, terminal_id: str) -> None:
        """Kills the terminal's command if it runs and forgets the terminal.

        Raises:
            TerminalError: No open terminal has that id.
        """
        terminal = self.get(terminal_id)
        del self._terminals[terminal_id]
        await terminal.release()

    async def kill_all(self) -> None:
        """Ends every running command (Stop); the terminals stay, their output readable."""
        await asyncio.gather(*(terminal.kill() for terminal in self._terminals.values()))

    async def close(self) -> None:
        """Kills and releases every terminal; no terminal can be created after."""
        self._closed = True
        terminals = list(self._terminals.values())
        self._terminals.clear()
        await asyncio.gather(*(terminal.release() for terminal in terminals))


def start_error(command: str, cwd: str, error: OSError) -> str:
    """What to tell the agent when its command could not be started."""
    if error.filename is not None and os.fspath(error.filename) == cwd:  # the child's chdir failed, not its exec
        return f"cannot run {command!r}: its working directory {cwd!r} does not exist or cannot be entered"
    if isinstance(error, FileNotFoundError):
        return f"cannot run {command!r}: not found"
    if isinstance(error, PermissionError):
        return f"cannot run {command!r}: permission denied"
    return f"cannot run {command!r}: {error}"
