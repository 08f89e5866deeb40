"""The pipe to one ACP agent process: it starts the agent, and moves JSON-RPC messages to and from it as the SDK's
message transport (``acp.connect_to_agent(client, wire)`` takes any object with ``send``, ``receive`` and ``close``).

What the SDK's own stdio pipe does not, this one does:
- The agent gets this process's environment plus ``env=``, not the SDK's short list, so a key the person set
  reaches it.
- stdout is newline-delimited JSON, a line at most 16 MiB. A line that is not JSON, JSON that is not a JSON-RPC 2.0
  message, or a longer line fails the wire at once: the agent's process group is killed and the waiting ``receive``
  raises the error (the SDK would skip the line and leave its requests waiting for ever).
- stderr is read all the time (a chatty agent would block on a full pipe) and its last 64 KB kept for error messages,
  with key-shaped text and the given secrets redacted.
- An agent that exits, whatever its pipes do, fails the wire with its exit code and its last output.
- ``close()`` ends the agent and everything it started: EOF on stdin, 2 s, SIGTERM to its process group, 2 s,
  SIGKILL.

This module imports no SDK type: the transport is duck-typed, and the SDK stays inside the modules that map it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import os
import re
import signal
import weakref
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ai_widgets._safe import redact, safe_text
from ai_widgets.integrations._acp_process_group import exited, kill_if_running, signal_group, stop_group
from ai_widgets.kernel import looks_secret

__all__ = [
    "CLOSE_GRACE",
    "LINE_LIMIT",
    "STDERR_KEPT",
    "AgentWire",
    "AgentWireError",
    "quiet_receive_failures",
]

logger = logging.getLogger("ai_widgets")

#: The longest line (one JSON-RPC message) read from the agent's stdout, in bytes, its newline not counted.
LINE_LIMIT = 16 * 1024 * 1024
#: How much of the agent's stderr is kept for error messages, in characters (its end, from a line's start).
STDERR_KEPT = 64 * 1024
#: How much of that an error message quotes, in characters.
QUOTED_OUTPUT = 2000
#: Seconds ``close()`` waits after EOF on stdin, and again after SIGTERM.
CLOSE_GRACE = 2.0
#: Seconds an agent that closed its stdout gets to exit before the wire calls it hung.
EXIT_AFTER_EOF = 2.0
#: Seconds the reader and the stderr drain get, once the agent has exited, to take what it wrote last.
LAST_OUTPUT_WAIT = 0.5
#: Seconds between two looks at whether the agent is still running (a failure in between is seen by the reader).
EXIT_WATCH_POLL = 0.1
#: How many bytes one read from a pipe takes at most.
READ_SIZE = 1024 * 1024
#: Messages read ahead of ``receive()``; past this the reader stops reading, and the agent's writes wait.
READ_AHEAD = 256
#: Environment variables shorter than this are not redacted wherever they occur ("abc" would be cut out of words).
MIN_SECRET_CHARS = 6
#: Where a kept stderr tail may start when no line starts in its first piece.
WHITESPACE = re.compile(r"\s")
#: The longest command line an error message shows, in characters.
LABEL_CHARS = 80


class AgentWireError(ConnectionError):
    """The agent could not be started, exited, or broke the protocol; the message says which and quotes its output.

    Attributes:
        output: The end of what the agent wrote to stderr (redacted), ``""`` if nothing.
        returncode: The agent's exit code (negative: the signal that ended it), ``None`` if it had not exited.
    """

    def __init__(self, message: str, *, output: str = "", returncode: int | None = None) -> None:
        super().__init__(message)
        self.output = output
        self.returncode = returncode


class Failed:
    """What the inbox holds after the last message of a failed wire."""


FAILED = Failed()


class AgentWire:
    """One running ACP agent, as a message transport for the SDK's ``connect_to_agent``; start it with :meth:`start`.

    All methods run on the loop that started the agent.
    """

    def __init__(self, process: asyncio.subprocess.Process, label: str, secrets: Sequence[str]) -> None:
        self._process = process
        self.label = label
        self._secrets = tuple(secrets)
        self._inbox: asyncio.Queue[dict[str, Any] | Failed | None] = asyncio.Queue()
        self._room = asyncio.Event()  # cleared while READ_AHEAD messages wait: the reader waits, and so the agent
        self._room.set()
        self._error: AgentWireError | None = None
        self._failed = asyncio.Event()
        self._closing = False
        self._closer: asyncio.Future[None] | None = None
        self._send_lock = asyncio.Lock()
        self._stderr: deque[str] = deque()
        self._stderr_size = 0
        self._reader = asyncio.ensure_future(self._read_stdout())
        self._drain = asyncio.ensure_future(self._drain_stderr())
        self._watcher = asyncio.ensure_future(self._watch_exit())
        # An agent nobody closed is killed when Python exits (a kernel shut down), never left running.
        self._finalizer = weakref.finalize(self, kill_if_running, process)

    @classmethod
    async def start(
        cls,
        command: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> AgentWire:
        """Starts the agent in a process group of its own and returns its wire.

        Args:
            command: The agent's executable, looked up on ``PATH`` unless it names a path.
            args: Its arguments (a sequence of strings, not one string).
            cwd: Its working directory (``None``: this process's).
            env: Variables added to (or replacing those of) this process's environment.
            secrets: Texts removed from its quoted output besides key-shaped text and the values of ``env``'s and
                this environment's secret-looking variables (``ANTHROPIC_API_KEY``, ``DB_PASSWORD``).

        Raises:
            TypeError: ``command``, ``args`` or ``env`` are not strings where strings belong.
            AgentWireError: The agent is not installed, cannot be run, or its working directory does not exist.
        """
        command = os.fspath(command)
        if not isinstance(command, str) or not command:
            raise TypeError("an ACP agent's command must be a non-empty string")
        if isinstance(args, (str, bytes)) or not all(isinstance(arg, str) for arg in args):
            raise TypeError("an ACP agent's args must be a sequence of strings, such as ['--acp']")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise TypeError("an ACP agent's env must map strings to strings")
        merged = {**os.environ, **(env or {})}
        hidden = [*(s for s in secrets if s), *secret_values(merged)]
        label = f"ACP agent '{describe_command(command, args, hidden)}'"
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=merged,
                start_new_session=True,
                limit=READ_SIZE,
            )
        except OSError as error:
            raise AgentWireError(start_error(label, command, cwd, error, hidden)) from None
        quiet_receive_failures()
        return cls(process, label, hidden)

    @property
    def pid(self) -> int:
        """The agent's process id (and its process group's)."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The agent's exit code once it exited (negative: the signal that ended it), else ``None``."""
        return self._process.returncode

    @property
    def error(self) -> AgentWireError | None:
        """Why the wire failed, or ``None``: what to tell the person when the SDK only says "Connection closed"."""
        return self._error

    def output(self) -> str:
        """The end of what the agent wrote to stderr (at most 64 KB, from a line's start), redacted."""
        return redact(safe_text("".join(self._stderr)), *self._secrets)

    async def send(self, message: dict[str, Any]) -> None:
        """Writes one message to the agent, as one line.

        Raises:
            AgentWireError: The wire failed or was closed (the agent exited: the error says with what).
        """
        if self._error is not None:
            raise self._error
        if self._closing:
            raise AgentWireError(f"{self.label} was closed")
        line = json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
        stdin = self._process.stdin
        assert stdin is not None  # started with a pipe
        try:
            async with self._send_lock:  # drain() takes one waiter at a time on Python 3.10
                stdin.write(line)
                await stdin.drain()
        except ConnectionError as error:  # stdin closed: the agent is gone or going (say why, as the watcher will)
            if not self._closing:  # or the wire is closing, and nothing will say more
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._failed.wait(), EXIT_AFTER_EOF + LAST_OUTPUT_WAIT + EXIT_WATCH_POLL)
            raise self._error or AgentWireError(f"cannot write to {self.label}: {error}") from None

    async def receive(self) -> dict[str, Any] | None:
        """The agent's next message, or ``None`` once the wire was closed.

        Raises:
            AgentWireError: The wire failed (raised again on every later call); the messages read before the
                failure come first.
        """
        if self._inbox.empty():
            if self._error is not None:
                raise self._error
            if self._closer is not None and self._closer.done():
                return None
        item = await self._inbox.get()
        self._room.set()
        if isinstance(item, Failed):
            assert self._error is not None
            raise self._error
        return item

    async def close(self) -> None:
        """Ends the agent and its process group: EOF on stdin, then SIGTERM after 2 s, then SIGKILL after 2 s more.

        Returns once the agent has exited and its pipes are read to their end. Safe to call again and concurrently;
        cancelling the call does not stop the close.
        """
        if self._closer is None:
            self._closer = asyncio.ensure_future(self._shut_down())
        await asyncio.shield(self._closer)

    def __repr__(self) -> str:
        state = "failed" if self._error else "closed" if self._closing else "running"
        return f"<AgentWire {self.label} pid={self.pid} {state}>"

    async def _shut_down(self) -> None:
        self._closing = True
        self._room.set()  # a reader waiting for room reads on to the end
        stdin = self._process.stdin
        assert stdin is not None
        stdin.close()
        if not await exited(self._process, CLOSE_GRACE):
            logger.debug("%s did not exit on EOF within %s s: SIGTERM", self.label, CLOSE_GRACE)
        await stop_group(self._process, CLOSE_GRACE)
        # The group is gone, so are the pipes' writers (a process that left the group could still hold them).
        tasks = [self._reader, self._drain, self._watcher]
        _, pending = await asyncio.wait(tasks, timeout=CLOSE_GRACE)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._inbox.put_nowait(None)
        self._finalizer.detach()

    def _fail(self, error: AgentWireError) -> None:
        """Fails the wire once: kills the agent's group and wakes the waiting ``receive``; the reader reads on to
        the pipe's end but delivers nothing more. The first failure wins, and nothing fails a wire that is closing."""
        if self._error is not None or self._closing:
            return
        self._error = error
        self._failed.set()
        signal_group(self._process, signal.SIGKILL)
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._inbox.put_nowait(FAILED)
        self._room.set()
        logger.debug("%s", error)

    def _exit_error(self) -> AgentWireError:
        code = self._process.returncode
        output = self.output()
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        if output.strip():
            quoted = output if len(output) <= QUOTED_OUTPUT else "…" + output[-QUOTED_OUTPUT:]
            message = f"{self.label} {how}; its last output:\n{quoted.rstrip()}"
        else:
            message = f"{self.label} {how} (it wrote nothing to stderr)"
        return AgentWireError(message, output=output, returncode=code)

    def _protocol_error(self, what: str, line: bytes) -> AgentWireError:
        shown = redact(safe_text(" ".join(line[:200].decode("utf-8", "replace").split())), *self._secrets)
        shown = shown if len(shown) <= 120 else shown[:119] + "…"
        return AgentWireError(
            f"{self.label} wrote {what} to stdout: {shown!r} (an ACP agent writes only JSON-RPC messages there, "
            "one a line); it was stopped",
            output=self.output(),
        )

    def _message(self, line: bytes) -> dict[str, Any] | None:
        """The message on one line, ``None`` for a blank line; raises the wire's error for anything else."""
        try:
            message = json.loads(line)
        except ValueError:  # UnicodeDecodeError included
            if not line.strip():
                return None
            raise self._protocol_error("a line that is not JSON", line) from None
        except RecursionError:
            raise self._protocol_error("JSON nested too deeply", line) from None
        if not is_json_rpc(message):
            raise self._protocol_error("JSON that is not a JSON-RPC 2.0 message", line)
        return message  # type: ignore[no-any-return]

    async def _deliver(self, message: dict[str, Any]) -> None:
        if self._error is not None:  # nothing after the failure
            return
        self._inbox.put_nowait(message)
        if self._inbox.qsize() >= READ_AHEAD and not self._closing:
            self._room.clear()
            await self._room.wait()

    async def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        partial = bytearray()  # the start of a line whose newline has not come yet
        try:
            while chunk := await stdout.read(READ_SIZE):
                if self._error is not None:  # read to the end, so the pipe closes, but take nothing
                    continue
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if partial:
                        partial += chunk[start:end]
                        line = bytes(partial)
                        partial.clear()
                    else:
                        line = chunk[start:end]
                    start = end + 1
                    if len(line) > LINE_LIMIT:
                        raise self._oversized()
                    if (message := self._message(line)) is not None:
                        await self._deliver(message)
                partial += chunk[start:]
                if len(partial) > LINE_LIMIT:  # fail before reading the rest of a line that can never be taken
                    raise self._oversized()
        except AgentWireError as error:
            self._fail(error)
        except Exception as error:  # a pipe's error, or a bug: fail the wire rather than leave receive() waiting
            self._fail(AgentWireError(f"cannot read from {self.label}: {error!r}", output=self.output()))
        else:
            if self._closing or self._error is not None:
                return
            # The agent closed stdout: it is exiting (the watcher says how), or it is hung.
            if not await exited(self._process, EXIT_AFTER_EOF):
                hung = f"{self.label} closed its stdout but did not exit; it was stopped"
                self._fail(AgentWireError(hung, output=self.output()))
            return
        with contextlib.suppress(OSError):  # read on to the end, so the pipe closes
            while await stdout.read(READ_SIZE):
                pass

    def _oversized(self) -> AgentWireError:
        return AgentWireError(
            f"{self.label} wrote a line of more than {LINE_LIMIT // (1024 * 1024)} MiB to stdout (one message a "
            "line); it was stopped",
            output=self.output(),
        )

    async def _drain_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with contextlib.suppress(OSError):
            while True:
                chunk = await stderr.read(READ_SIZE)
                text = decoder.decode(chunk, final=not chunk)
                if text:
                    self._keep(text)
                    if logger.isEnabledFor(logging.DEBUG):
                        for line in redact(text, *self._secrets).splitlines():
                            logger.debug("%s (stderr): %s", self.label, line)
                if not chunk:
                    return

    def _keep(self, text: str) -> None:
        self._stderr.append(text)
        self._stderr_size += len(text)
        if self._stderr_size <= STDERR_KEPT:
            return
        while self._stderr_size - len(self._stderr[0]) >= STDERR_KEPT:
            self._stderr_size -= len(self._stderr.popleft())
        first = self._stderr[0]
        rest = first[kept_start(first, self._stderr_size - STDERR_KEPT) :]
        self._stderr_size -= len(first) - len(rest)
        if rest:
            self._stderr[0] = rest
        else:
            self._stderr.popleft()

    async def _watch_exit(self) -> None:
        await exited(self._process, None, poll=EXIT_WATCH_POLL)
        if self._closing or self._error is not None:
            return
        # Let the reader and the drain take what the agent wrote last before quoting it.
        await asyncio.wait([self._reader, self._drain], timeout=LAST_OUTPUT_WAIT)
        self._fail(self._exit_error())


def kept_start(text: str, cut: int) -> int:
    """Where the kept part of ``text`` starts when its first ``cut`` characters must go: at the next line's start,
    else after the next space, so that no key's tail is kept without its head (the part the patterns know)."""
    newline = text.find("\n", cut)
    if newline >= 0:
        return newline + 1
    space = WHITESPACE.search(text, cut)
    return space.end() if space else cut


def start_error(
    label: str, command: str, cwd: str | os.PathLike[str] | None, error: OSError, secrets: Sequence[str]
) -> str:
    """What to say when the agent could not be started: not installed, not runnable, or no working directory."""
    # The child's chdir failed, not its exec: the error names the directory as it was given (a path or a string).
    in_cwd = cwd is not None and error.filename is not None and os.fspath(error.filename) == os.fspath(cwd)
    match error:
        case FileNotFoundError() if in_cwd:
            return f"cannot start {label}: its working directory {os.fspath(error.filename)!r} does not exist"
        case FileNotFoundError():
            where = "no such file" if os.sep in command else "not found on PATH"
            return f"ACP agent '{describe_command(command, (), secrets)}' is not installed ({where})"
        case PermissionError() if in_cwd:
            return f"cannot start {label}: its working directory {os.fspath(error.filename)!r} cannot be entered"
        case PermissionError():
            return f"{label} cannot be run: permission denied"
        case _:
            return f"{label} could not start: {error}"


def is_json_rpc(message: Any) -> bool:
    """Whether ``message`` is a JSON-RPC 2.0 request, notification or response (a batch is none of them: ACP sends
    none)."""
    if type(message) is not dict or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str)
    return "id" in message and ("result" in message or "error" in message)


def secret_values(env: Mapping[str, str]) -> list[str]:
    """The values of ``env``'s secret-looking variables (``OPENAI_API_KEY``, ``DB_PASSWORD``), longest first."""
    found = {value for name, value in env.items() if len(value) >= MIN_SECRET_CHARS and looks_secret(name)}
    return sorted(found, key=len, reverse=True)


def describe_command(command: str, args: Sequence[str], secrets: Sequence[str]) -> str:
    """The command line as messages show it: on one line, redacted, and cut short."""
    text = redact(safe_text(" ".join(" ".join(word.split()) for word in [command, *args])), *secrets)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def not_a_wire_failure(record: logging.LogRecord) -> bool:
    """Whether to log ``record``: not when it is the SDK's traceback for a failure this wire raised from
    ``receive`` (the wire's error says it better, once, where the person sees it)."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, AgentWireError)


def quiet_receive_failures() -> None:
    """Keeps the SDK's "Receive loop failed" tracebacks for the wire's own errors out of the root logger (which a
    kernel prints into the cell). The filter drops those records only: the SDK logs them on the root logger itself."""
    root = logging.getLogger()
    if not_a_wire_failure not in root.filters:
        root.addFilter(not_a_wire_failure)
