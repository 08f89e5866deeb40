"""The terminals an ACP agent runs through the chat (``terminal/*``), under the session's approvals: a command runs
unasked only when it is what a call the person allowed said it runs, else its own card asks first (showing the command
and where it runs); the card that shows a terminal shows its output and exit live. No SDK type appears here: the ACP
client maps requests and errors to these calls."""

from __future__ import annotations

import asyncio
import collections
import json
import os
from collections.abc import Mapping, Sequence

from ai_widgets.events import ProviderToolResult, StreamEvent, ToolApprovalRequested, ToolCallRevised, ToolCallStarted
from ai_widgets.integrations._acp_session import AgentSession, Question
from ai_widgets.integrations._acp_terminals import ExitStatus, Terminal, TerminalError, Terminals
from ai_widgets.integrations._acp_updates import PROVIDER, CallSeen, command_line
from ai_widgets.messages import CallLocation, CallTerminal
from ai_widgets.outcome import ToolOutcome

__all__ = ["CARD_OUTPUT_CHARS", "TerminalCalls", "TerminalRefused"]

#: The most output characters a card shows of a terminal (its end): the agent still reads all it asked to keep.
CARD_OUTPUT_CHARS = 50_000
#: How many released terminals the cards still show the last output of.
KEPT_VIEWS = 64


class TerminalRefused(Exception):
    """The person did not let the command run: declined it, or nobody decided (``cancelled``: Stop)."""

    def __init__(self, message: str, *, cancelled: bool) -> None:
        super().__init__(message)
        self.cancelled = cancelled


def card_output(text: str) -> str:
    """The end of a terminal's output, within :data:`CARD_OUTPUT_CHARS`, saying when the start was cut."""
    if len(text) <= CARD_OUTPUT_CHARS:
        return text
    return "[… earlier output cut …]\n" + text[-CARD_OUTPUT_CHARS:]


def ended_outcome(status: ExitStatus) -> ToolOutcome:
    """A finished command as its card's result: exit code 0 succeeded, anything else failed."""
    if status.exit_code == 0:
        return ToolOutcome.success(text="Exited with code 0.")
    how = f"exited with code {status.exit_code}" if status.signal is None else f"was ended by {status.signal}"
    return ToolOutcome.failure(f"The command {how}.", retryable=True)


def view_of(terminal: Terminal) -> CallTerminal:
    """What a card shows of a terminal: its command line, where it runs, its output so far and how it ended."""
    output = terminal.output()
    status = output.exit_status
    return CallTerminal(
        terminal.id,
        command=command_line(terminal.command, terminal.args),
        cwd=terminal.cwd,
        output=card_output(output.output),
        exit_code=None if status is None else status.exit_code,
        signal=None if status is None else status.signal,
    )


class TerminalCalls:
    """The terminals of one agent connection as the chat serves them: which session made each, which card asked to
    run it, and the cards' live view of them. :meth:`open` starts the set for a new connection."""

    def __init__(self) -> None:
        self.terminals: Terminals | None = None
        self._owners: dict[str, AgentSession] = {}  # by terminal id
        self._cards: dict[str, str] = {}  # the card the client opened to ask, by terminal id
        self._used: set[tuple[str, str]] = set()  # (session id, call id): an allowed call runs one command unasked
        self._views: collections.OrderedDict[str, CallTerminal] = collections.OrderedDict()  # of released terminals
        self._asked = 0

    def open(self, cwd: str) -> Terminals:
        """A new set of terminals for a new agent connection (their default directory ``cwd``); the connection
        closes it when it ends."""
        self.terminals = Terminals(cwd=cwd)
        self._owners.clear()
        self._cards.clear()
        self._views.clear()
        return self.terminals

    def view(self, terminal_id: str) -> CallTerminal:
        """What a card shows of the terminal: its command, where, its output so far (its end) and how it ended."""
        terminals = self.terminals
        try:
            terminal = terminals.get(terminal_id) if terminals is not None else None
        except TerminalError:
            terminal = None
        if terminal is None:
            return self._views.get(terminal_id) or CallTerminal(terminal_id)
        return view_of(terminal)

    # --- terminal/create --------------------------------------------------------------------------------------------

    async def create(
        self,
        session: AgentSession,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> Terminal:
        """Runs a command for the agent once the person allowed it: unasked when it is what a call they allowed said
        it runs (each such call runs one command), else after its own card asks.

        Raises:
            TerminalError: The request is wrong, or the command could not be started (the message says why).
            TerminalRefused: The person declined, or nobody decided (Stop).
        """
        terminals = self.terminals
        if terminals is None or terminals.closed:
            raise TerminalError("the agent's terminals are closed")
        if not isinstance(command, str) or not command.strip():
            raise TerminalError("a terminal's command must be a non-empty string")
        if cwd is not None and (not isinstance(cwd, str) or not os.path.isabs(cwd)):
            raise TerminalError(f"a terminal's cwd must be an absolute path, not {cwd!r}")
        arguments = tuple(args)
        line = command_line(command, arguments)
        where = cwd or terminals.cwd or os.getcwd()
        allowed = self._allowed_call(session, command, arguments)
        if allowed is not None:
            self._used.add((session.session_id, allowed))
            terminal = await self._start(session, command, arguments, where, env, output_byte_limit)
            session.put(session.mapper.show_terminal(allowed, terminal.id))
            return terminal
        call_id = await self._ask(session, line, where)
        try:
            terminal = await self._start(session, command, arguments, where, env, output_byte_limit)
        except TerminalError as error:
            session.mapper.calls[call_id].ended = True
            session.put(
                [ProviderToolResult(call_id, ToolOutcome.failure(str(error), retryable=True), provider=PROVIDER)]
            )
            raise
        self._cards[terminal.id] = call_id
        session.put(session.mapper.show_terminal(call_id, terminal.id))
        return terminal

    def _allowed_call(self, session: AgentSession, command: str, args: tuple[str, ...]) -> str | None:
        calls = session.mapper.calls
        for call_id in session.allowed:
            seen = calls.get(call_id)
            if seen is not None and (session.session_id, call_id) not in self._used and seen.would_run(command, args):
                return call_id
        return None

    async def _ask(self, session: AgentSession, line: str, where: str) -> str:
        """Opens a card that asks to run ``line`` in ``where``; returns its call id once the person allowed it."""
        self._asked += 1
        call_id = f"acp_terminal_{self._asked}"
        session.mapper.calls[call_id] = CallSeen("terminal")
        content = (CallTerminal("", command=line, cwd=where),)
        session.mapper.show_content(call_id, content)
        arguments = json.dumps({"command": line, "cwd": where}, ensure_ascii=False)
        question = Question(call_id, asyncio.get_running_loop().create_future(), command=line)
        events: list[StreamEvent] = [
            ToolCallStarted(call_id, "terminal", arguments, provider_executed=True, provider=PROVIDER),
            ToolCallRevised(
                call_id, title=f"Run {line}", kind="execute", locations=(CallLocation(where),), content=content
            ),
            ToolApprovalRequested(call_id, f"Allow the agent to run {line} in {where}?"),
        ]
        allowed = await session.ask(question, events)
        if allowed is None:
            session.mapper.calls[call_id].ended = True
            raise TerminalRefused("the turn was stopped before the person decided", cancelled=True)
        if not allowed:
            session.mapper.calls[call_id].ended = True
            raise TerminalRefused("the person did not allow this command", cancelled=False)
        return call_id

    async def _start(
        self,
        session: AgentSession,
        command: str,
        args: tuple[str, ...],
        where: str,
        env: Mapping[str, str] | None,
        output_byte_limit: int | None,
    ) -> Terminal:
        assert self.terminals is not None
        terminal = await self.terminals.create(
            command, args, cwd=where, env=env, output_byte_limit=output_byte_limit, on_output=self._changed
        )
        self._owners[terminal.id] = session
        return terminal

    def _changed(self, terminal: Terminal) -> None:
        """Live output: the cards that show the terminal are revised; the card that asked ends with the command."""
        session = self._owners.get(terminal.id)
        if session is not None:
            self.show(session, terminal)

    def show(self, session: AgentSession, terminal: Terminal) -> None:
        """Shows the terminal as it is now in the cards that show it, and ends the card that asked once it exited.
        Called before the agent hears of an exit too (the live updates lag by up to a tenth of a second), so that its
        cards show the exit before what the agent says next."""
        events = session.mapper.terminal_revisions(terminal.id)
        status = terminal.exit_status
        card = self._cards.get(terminal.id)
        if status is not None and card is not None:
            events.extend(self._end_card(session, card, status))
        if events:
            session.put(events)

    @staticmethod
    def _end_card(session: AgentSession, call_id: str, status: ExitStatus) -> list[StreamEvent]:
        seen = session.mapper.calls.get(call_id)
        if seen is None or seen.ended:
            return []
        seen.ended = True
        return [ProviderToolResult(call_id, ended_outcome(status), provider=PROVIDER)]

    # --- the other requests -----------------------------------------------------------------------------------------

    def get(self, session: AgentSession, terminal_id: str) -> Terminal:
        """The session's terminal of ``terminal_id``.

        Raises:
            TerminalError: No open terminal of this session has that id (never created, released, another's).
        """
        if self.terminals is None or self._owners.get(terminal_id) is not session:
            raise TerminalError(f"no terminal {str(terminal_id)[:100]!r}: it was released, or never created")
        return self.terminals.get(terminal_id)

    async def release(self, session: AgentSession, terminal_id: str) -> None:
        """Kills the command if it runs and forgets the terminal; the cards keep showing its last output.

        Raises:
            TerminalError: No open terminal of this session has that id.
        """
        terminal = self.get(session, terminal_id)
        assert self.terminals is not None
        await self.terminals.release(terminal_id)
        self._views[terminal_id] = view_of(terminal)
        while len(self._views) > KEPT_VIEWS:
            self._views.popitem(last=False)
        events = session.mapper.terminal_revisions(terminal_id)
        card = self._cards.pop(terminal_id, None)
        status = terminal.exit_status
        if card is not None and status is not None:
            events.extend(self._end_card(session, card, status))
        del self._owners[terminal_id]
        if events:
            session.put(events)

    async def kill_running(self, session: AgentSession) -> None:
        """Ends the session's running commands (Stop); their terminals stay, for the agent to read and release."""
        terminals = self.terminals
        if terminals is None:
            return
        running = [t for t in terminals if self._owners.get(t.id) is session and t.exit_status is None]
        await asyncio.gather(*(terminal.kill() for terminal in running))
