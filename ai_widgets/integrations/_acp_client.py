"""The client side of ACP that the chat serves to its agent, under the session's approvals: its updates handed to the
response being streamed, its permission requests as approvals in the card, file reads (read-only, unasked) and file
writes (asked, with the diff against the file on disk, unless the person already allowed the call that makes it),
and terminals (``terminal/*``, served by :class:`TerminalCalls`: asked unless allowed already, shown live)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import CreateElicitationResponse, RequestError
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ai_widgets.events import (
    ProviderToolResult,
    StreamEvent,
    ToolApprovalRequested,
    ToolCallRevised,
    ToolCallStarted,
)
from ai_widgets.integrations._acp_session import AgentSession, Question
from ai_widgets.integrations._acp_terminal_calls import TerminalCalls, TerminalRefused
from ai_widgets.integrations._acp_terminals import Terminal, TerminalError
from ai_widgets.integrations._acp_updates import PROVIDER
from ai_widgets.messages import CallDiff, CallLocation
from ai_widgets.outcome import ToolOutcome

__all__ = ["MAX_READ_BYTES", "ACPClient", "allow"]

#: The largest file the agent may read through the client (it reads code and data files, not whole datasets).
MAX_READ_BYTES = 10 * 1024 * 1024
#: The largest file the card diffs against: a longer one shows as a new text only.
MAX_DIFF_BYTES = 1024 * 1024
#: The JSON-RPC error code of a request answered "cancelled" (a command nobody allowed before Stop).
REQUEST_CANCELLED = -32800


def allow(options: list[PermissionOption], *kinds: str) -> RequestPermissionResponse | None:
    """The answer choosing the first option of the first of ``kinds`` the agent offers (chosen by kind: ids are the
    agent's own), or ``None`` when it offers none of them."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
    return None


def read_bytes(path: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the regular file at ``path``: the caller knows it is too large by the length.
    A device, a pipe or a directory is refused before anything is read (``/dev/zero`` never ends, a pipe's reader
    waits for a writer), and ``/proc``'s files, which say their size is 0, are read within the limit too.

    Raises:
        FileNotFoundError: There is no such file.
        IsADirectoryError: ``path`` is not a regular file.
        OSError: It cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe's open does not wait for a writer
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is not a regular file (a directory, a device or a pipe)")
        return file.read(limit + 1)


def on_disk(path: str) -> str | None:
    """The text of the file at ``path`` for the card's diff, or ``None`` when there is none (or it is too large, not
    a regular file, or not text)."""
    try:
        data = read_bytes(path, MAX_DIFF_BYTES)
    except OSError:
        return None
    if len(data) > MAX_DIFF_BYTES:
        return None
    return data.decode("utf-8", "replace")


def write_atomically(path: str, content: str) -> None:
    """Writes ``content`` to ``path`` through a temporary file beside it, so a reader never sees half of it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(content)
        if target.exists():
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_text(path: str) -> str:
    """The text of the file at ``path`` (undecodable bytes replaced), within :data:`MAX_READ_BYTES`.

    Raises:
        RequestError: There is no such file, it is too large or not a regular file, or it cannot be read.
    """
    try:
        data = read_bytes(path, MAX_READ_BYTES)
    except FileNotFoundError:
        raise RequestError.resource_not_found(path) from None
    except IsADirectoryError as exc:
        raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
    except OSError as exc:
        raise RequestError.internal_error({"path": path, "reason": f"{type(exc).__name__}: {exc}"[:300]}) from None
    if len(data) > MAX_READ_BYTES:
        reason = f"the file is larger than {MAX_READ_BYTES:,} bytes, the most that are read"
        raise RequestError.invalid_params({"path": path, "reason": reason})
    return data.decode("utf-8", "replace")


def absolute(path: str) -> str:
    if not isinstance(path, str) or not os.path.isabs(path):
        raise RequestError.invalid_params({"path": "must be an absolute path", "got": str(path)[:300]})
    return path


class ACPClient:
    """What the chat serves its agent (the SDK's ``Client`` interface), for every agent session of one process.

    Args:
        serve_files: Serve ``fs/read_text_file`` and ``fs/write_text_file`` (advertised only then).
        serve_terminals: Serve ``terminal/*`` (advertised only then).
        own_tool: Whether a call name is one of the session's own tools offered to the agent over MCP: the agent's
            permission request for it is allowed at once, since the session's own approval asks the person when the
            call runs (so they are asked once).
    """

    def __init__(
        self, *, serve_files: bool = True, serve_terminals: bool = True, own_tool: Callable[[str], bool] | None = None
    ) -> None:
        self.serve_files = serve_files
        self.serve_terminals = serve_terminals
        #: The agent's terminals, under the session's approvals (a new set for each agent connection).
        self.terminals = TerminalCalls()
        #: Whether a call name is one of the session's own tools offered over MCP (see the class's ``own_tool``).
        self.own_tool: Callable[[str], bool] = own_tool or (lambda name: False)
        #: The agent sessions, by the agent's session id.
        self.sessions: dict[str, AgentSession] = {}

    def on_connect(self, conn: Any) -> None:
        """The SDK hands over the agent's side of the connection; the transport keeps its own."""

    def _session(self, session_id: str) -> AgentSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {str(session_id)[:100]!r}"})
        return session

    # --- updates and permissions ------------------------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """An update of the agent's: its events go to the response being streamed, in order."""
        session = self.sessions.get(session_id)
        if session is None:
            return  # a session this client no longer keeps (ended): nothing shows it
        events = session.mapper.map(update)
        if events:
            session.put(events)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Asks the person in the call's card; answered by the chat's next request. A request for a call never
        announced starts its card; one asked again gets the same single answer."""
        session = self._session(session_id)
        call_id = tool_call.tool_call_id
        if call_id in session.answers:
            return session.answers[call_id]
        open_question = session.questions.get(call_id)
        if open_question is not None:
            answer = await asyncio.shield(open_question.future)
            assert isinstance(answer, RequestPermissionResponse)
            return answer
        events = session.mapper.announce(tool_call)
        name = session.mapper.calls[call_id].name
        if self.own_tool(name):
            own = allow(options, "allow_once", "allow_always")
            if own is not None:
                session.answers[call_id] = own  # not "allowed" for file writes: the session's approval decides
                if events:
                    session.put(events)
                return own
        if session.mapper.calls[call_id].held:
            events = [*events, *session.mapper.release(call_id)]  # the person is asked here: the card must show
        question = Question(call_id, asyncio.get_running_loop().create_future(), options=list(options))
        title = tool_call.title or name
        answer = await session.ask(question, [*events, ToolApprovalRequested(call_id, f"Allow {title}?")])
        assert isinstance(answer, RequestPermissionResponse)
        session.answers[call_id] = answer
        if answer.outcome.outcome == "selected" and any(
            option.option_id == getattr(answer.outcome, "option_id", None) and option.kind.startswith("allow")
            for option in options
        ):
            session.allowed.add(call_id)
        return answer

    # --- files ------------------------------------------------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """Reads a text file, unasked (read-only): from ``line`` (1-based), at most ``limit`` lines."""
        self._session(session_id)
        if not self.serve_files:
            raise RequestError.method_not_found("fs/read_text_file")
        path = absolute(path)
        text = await asyncio.to_thread(read_text, path)
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = len(lines) if limit is None else start + max(limit, 0)
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        """Writes a text file: unasked when it is what a call the person allowed said it writes, else after the
        person allows it in a card of its own that shows the diff against the file on disk."""
        session = self._session(session_id)
        if not self.serve_files:
            raise RequestError.method_not_found("fs/write_text_file")
        path = absolute(path)
        if any(
            session.mapper.calls[c].would_write(path, content) for c in session.allowed if c in session.mapper.calls
        ):
            await asyncio.to_thread(write_atomically, path, content)
            return WriteTextFileResponse()
        session.writes += 1
        call_id = f"acp_write_{session.writes}"
        question = Question(call_id, asyncio.get_running_loop().create_future(), write=(path, content))
        session.questions[call_id] = question  # open already while the disk is read: Stop then answers it
        before = await asyncio.to_thread(on_disk, path)
        events: list[StreamEvent] = [
            ToolCallStarted(
                call_id, "write_text_file", json.dumps({"path": path}), provider_executed=True, provider=PROVIDER
            ),
            ToolCallRevised(
                call_id,
                title=f"Write {path}",
                kind="edit",
                locations=(CallLocation(path),),
                content=(CallDiff(path, before, content),),
            ),
            ToolApprovalRequested(call_id, f"Allow the agent to write {path}?"),
        ]
        allowed = await session.ask(question, events)
        if not allowed:
            raise RequestError.invalid_request({"path": path, "reason": "the person did not allow this write"})
        try:
            await asyncio.to_thread(write_atomically, path, content)
        except OSError as exc:
            outcome = ToolOutcome.failure(f"Could not write {path}: {type(exc).__name__}: {exc}", retryable=True)
            session.put([ProviderToolResult(call_id, outcome, provider=PROVIDER)])
            raise RequestError.internal_error({"path": path, "reason": f"{type(exc).__name__}: {exc}"[:300]}) from None
        session.put([ProviderToolResult(call_id, ToolOutcome.success(text=f"Wrote {path}."), provider=PROVIDER)])
        return WriteTextFileResponse()

    # --- terminals --------------------------------------------------------------------------------------------------

    def _terminal(self, session_id: str, terminal_id: str) -> tuple[AgentSession, Terminal]:
        session = self._session(session_id)
        if not self.serve_terminals:
            raise RequestError.method_not_found("terminal/*")
        try:
            return session, self.terminals.get(session, terminal_id)
        except TerminalError as error:
            raise RequestError.invalid_params({"terminalId": str(error)}) from None

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """Runs a command once the person allowed it (see :class:`TerminalCalls`): a decline is an error, a question
        Stop left open is answered cancelled."""
        session = self._session(session_id)
        if not self.serve_terminals:
            raise RequestError.method_not_found("terminal/create")
        try:
            terminal = await self.terminals.create(
                session,
                command,
                args or (),
                cwd=cwd,
                env={variable.name: variable.value for variable in env or ()},
                output_byte_limit=output_byte_limit,
            )
        except TerminalError as error:
            raise RequestError.invalid_params({"command": str(command)[:300], "reason": str(error)[:500]}) from None
        except TerminalRefused as refused:
            if refused.cancelled:
                raise RequestError(REQUEST_CANCELLED, "Request cancelled", {"reason": str(refused)}) from None
            raise RequestError.invalid_request({"command": str(command)[:300], "reason": str(refused)}) from None
        return CreateTerminalResponse(terminal_id=terminal.id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """The terminal's output so far (its end, within its limit), and its exit once it ended."""
        session, terminal = self._terminal(session_id, terminal_id)
        output = terminal.output()
        status = output.exit_status
        if status is not None:
            self.terminals.show(session, terminal)
        return TerminalOutputResponse(
            output=output.output,
            truncated=output.truncated,
            exit_status=None
            if status is None
            else TerminalExitStatus(exit_code=status.exit_code, signal=status.signal),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """Waits for the terminal's command to end."""
        session, terminal = self._terminal(session_id, terminal_id)
        try:
            status = await terminal.wait()
        except TerminalError as error:  # released while waited for
            raise RequestError.invalid_params({"terminalId": str(error)}) from None
        self.terminals.show(session, terminal)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """Ends the terminal's command; its output stays readable until it is released."""
        session, terminal = self._terminal(session_id, terminal_id)
        await terminal.kill()
        self.terminals.show(session, terminal)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """Kills the terminal's command if it runs and forgets the terminal."""
        session, _ = self._terminal(session_id, terminal_id)
        try:
            await self.terminals.release(session, terminal_id)
        except TerminalError as error:  # released twice at once
            raise RequestError.invalid_params({"terminalId": str(error)}) from None
        return ReleaseTerminalResponse()

    # --- what is not served -----------------------------------------------------------------------------------------

    async def create_elicitation(self, message: str, mode: ElicitationMode, **kwargs: Any) -> CreateElicitationResponse:
        """Not served (not advertised): the protocol's elicitation is unstable."""
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """Not served."""

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods are served."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""
