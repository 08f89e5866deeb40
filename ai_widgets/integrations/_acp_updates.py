"""An ACP agent's ``session/update`` notifications as this project's stream events: pure, no I/O, one mapper per
agent session (it remembers the calls it has seen, so a repeated ``tool_call`` is an update, and the agent's running
cost, so each request is priced by its change)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AudioContentBlock,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ImageContentBlock,
    PromptResponse,
    ResourceContentBlock,
    TerminalToolCallContent,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)
from acp.schema import UsageUpdate as AgentUsage

from ai_widgets.events import (
    PlanUpdated,
    ProviderToolResult,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallRevised,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import CallDiff, CallLocation, CallTerminal, CallText, CallViewItem, PlanEntry
from ai_widgets.outcome import ToolOutcome

__all__ = ["NOT_RUN", "PROVIDER", "CallSeen", "UpdateMapper", "call_name", "command_line", "content_text"]

#: The provider name of everything an ACP agent sends (``ToolCallStarted.provider``, ``ProviderState``).
PROVIDER = "acp"

#: Gemini CLI's call ids are ``<tool>__<tool>_<milliseconds>_<n>``; its MCP tools are ``mcp_<server>_<tool>``.
GEMINI_ID = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+?)__(?P=name)_\d+(?:_\d+)?$")
#: The most characters of a finished call's raw output that become its result, when it sent no text.
MAX_RAW_OUTPUT_CHARS = 20_000

#: What a held call of the session's own tools ends with when the agent's turn ended and it never called the tool.
NOT_RUN = "The agent did not run this call (it was not allowed, or the agent changed its mind)."

TerminalView = Callable[[str], CallTerminal]
#: The session's own tool an agent's call name stands for (``mcp__<server>__<tool>``...), or ``None``.
OfferedName = Callable[[str], str | None]


AnyCall = ToolCallStart | ToolCallProgress | ToolCallUpdate


@dataclass(slots=True)
class CallSeen:
    """What the mapper keeps of a call the agent announced: its name, whether it was said to run or ended, and what
    it would write (its latest raw input, and the new text of each file its diffs show), by which a later
    ``fs/write_text_file`` with no call id is matched to it."""

    name: str
    running: bool = False
    ended: bool = False
    raw_input: Any = None
    writes: dict[str, str] = field(default_factory=dict)
    #: A call of one of the session's own tools offered over MCP: its card is held back until the chat runs it as a
    #: local call of the same id (``claimed``), or released as a provider-run card when the agent never calls it.
    held: bool = False
    claimed: bool = False
    #: Its updates kept while it is held, oldest first (a tuple until there is one: most calls are never held, and a
    #: chat keeps every call it saw).
    pending: list[Any] | tuple[()] = ()

    def would_write(self, path: str, content: str) -> bool:
        """Whether writing ``content`` to ``path`` is what this call said it does: a diff of it, or raw input
        naming the path (``path``, ``file_path``, ``filePath``, ``absolute_path``) with that content."""
        if self.writes.get(path) == content:
            return True
        raw = self.raw_input
        if not isinstance(raw, dict):
            return False
        named = any(raw.get(key) == path for key in ("path", "file_path", "filePath", "absolute_path"))
        return named and any(raw.get(key) == content for key in ("content", "new_text", "newText"))

    def would_run(self, command: str, args: tuple[str, ...]) -> bool:
        """Whether running ``command`` with ``args`` is what this call said it does: its raw input's ``command`` is
        that command line (Claude Code's Bash tool sends the line, then creates a terminal of it with no args)."""
        raw = self.raw_input
        if not isinstance(raw, dict) or not isinstance(raw.get("command"), str):
            return False
        return bool(raw["command"]) and raw["command"] == command_line(command, args)


def command_line(command: str, args: tuple[str, ...]) -> str:
    """The command line a terminal runs: ``command`` alone is already one (it runs by ``/bin/sh -c``)."""
    return shlex.join([command, *args]) if args else command


def call_name(update: AnyCall) -> str:
    """The tool a call is of: Claude Code's own name for it (``_meta.claudeCode.toolName``), else the prefix of a
    Gemini CLI id, else its kind, else ``"tool"``."""
    meta = update.field_meta or {}
    claude = meta.get("claudeCode") if isinstance(meta, dict) else None
    if isinstance(claude, dict) and isinstance(claude.get("toolName"), str) and claude["toolName"]:
        return str(claude["toolName"])
    found = GEMINI_ID.match(update.tool_call_id)
    if found is not None:
        return found.group(1)
    return update.kind or "tool"


def content_text(block: Any) -> str:
    """What a content block says, as text: its text, a link for a resource, a short note for an image or audio."""
    match block:
        case TextContentBlock(text=text):
            return text
        case ResourceContentBlock(uri=uri, name=name, title=title):
            return f"[{title or name}]({uri})"
        case EmbeddedResourceContentBlock(resource=resource):
            if isinstance(resource, TextResourceContents):
                return resource.text
            return f"[{resource.uri}]"
        case ImageContentBlock(mime_type=mime):
            return f"[image: {mime}]"
        case AudioContentBlock(mime_type=mime):
            return f"[audio: {mime}]"
    return ""


def says_nothing(update: AnyCall) -> bool:
    """Whether a call's update gives none of the fields a card's revision takes (its title, kind, locations, raw
    input, content)."""
    return (
        not update.title
        and update.kind is None
        and update.locations is None
        and update.raw_input is None
        and update.content is None
    )


#: ``json.dumps(value, ensure_ascii=False, allow_nan=False)`` without building an encoder each time.
JSON_TEXT = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def json_text(value: Any) -> str:
    try:
        return JSON_TEXT(value)
    except (TypeError, ValueError):
        return json.dumps(str(value), ensure_ascii=False)


class UpdateMapper:
    """Maps one agent session's updates to stream events.

    Args:
        terminal_view: The card's view of a terminal by its id (its command and output so far), served by the
            client side; a terminal it does not know shows by its id alone.
    """

    def __init__(self, terminal_view: TerminalView | None = None) -> None:
        self.calls: dict[str, CallSeen] = {}
        #: The session's own tool a call name stands for, when the session's tools are offered to the agent: such a
        #: call's card is held back, as the chat shows the call itself (its code card, its approval) when it runs.
        self.offered: OfferedName = lambda name: None
        #: While the agent replays a loaded session's history (``session/load``): its updates are not this turn's.
        self.replaying = False
        self._terminal_view = terminal_view or (lambda terminal_id: CallTerminal(terminal_id))
        self._content: dict[str, tuple[CallViewItem, ...]] = {}  # what each card of this turn shows, by call id
        self._cost: Decimal | None = None  # the agent's running total (USD) as it last said
        self._cost_at_start: Decimal | None = None  # ... when the current response began
        self._usage = UsageUpdate()

    def begin_response(self) -> None:
        """A new response of the session begins: its cost is the change of the agent's total from here."""
        self._cost_at_start = self._cost
        self._usage = UsageUpdate()

    def map(self, update: Any) -> list[StreamEvent]:
        """The events of one ``session/update``'s ``update`` (none for what the card does not show: the agent's
        commands, modes, config, session info, a replayed user message, anything while replaying)."""
        if self.replaying:
            return []
        kind = type(update)
        if kind is AgentMessageChunk or kind is AgentThoughtChunk:  # nearly every update: a chunk of text
            block = update.content
            text = block.text if type(block) is TextContentBlock else content_text(block)
            if not text:
                return []
            return [TextDelta(text)] if kind is AgentMessageChunk else [ReasoningDelta(text)]
        match update:
            case AgentMessageChunk(content=block):
                text = content_text(block)
                return [TextDelta(text)] if text else []
            case AgentThoughtChunk(content=block):
                text = content_text(block)
                return [ReasoningDelta(text)] if text else []
            case ToolCallStart():
                return self._start(update)
            case ToolCallProgress():
                return self._progress(update)
            case AgentPlanUpdate(entries=entries):
                return [PlanUpdated(tuple(PlanEntry(e.content, e.status, e.priority) for e in entries))]
            case AgentUsage():
                return self._agent_usage(update)
        return []

    def prompt_usage(self, response: PromptResponse) -> list[StreamEvent]:
        """The usage the prompt's answer reports (``PromptResponse.usage``, unstable in ACP), with the cost said so
        far; none when it reports none."""
        usage = response.usage
        if usage is None:
            return []
        self._usage = UsageUpdate(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_read_tokens or 0,
            reasoning_tokens=usage.thought_tokens or 0,
            cache_write_tokens=usage.cached_write_tokens or 0,
            cost=self._usage.cost,
        )
        return [self._usage]

    # --- tool calls -------------------------------------------------------------------------------------------------

    def announce(self, tool_call: ToolCallUpdate) -> list[StreamEvent]:
        """The events for the call a permission request is about: its card starts when the agent never announced
        it (Gemini CLI asks first), else what the request tells of it updates the card; its status is left alone
        (a call asked about has not run)."""
        seen = self.calls.get(tool_call.tool_call_id)
        if seen is None and self.offered(call_name(tool_call)) is not None:
            seen = self.calls[tool_call.tool_call_id] = CallSeen(call_name(tool_call), held=True)
        if seen is not None and seen.held:
            return self._hold(seen, tool_call)
        if seen is None:
            seen = self.calls[tool_call.tool_call_id] = CallSeen(call_name(tool_call))
            self._remember(seen, tool_call)
            arguments = "{}" if tool_call.raw_input is None else json_text(tool_call.raw_input)
            started = ToolCallStarted(
                tool_call.tool_call_id, seen.name, arguments, provider_executed=True, provider=PROVIDER
            )
            return [started, self._revision(tool_call, with_arguments=False)]
        self._remember(seen, tool_call)
        return [] if says_nothing(tool_call) else [self._revision(tool_call)]

    @staticmethod
    def _remember(seen: CallSeen, update: AnyCall) -> None:
        if update.raw_input is not None:
            seen.raw_input = update.raw_input
        for item in update.content or ():
            if isinstance(item, FileEditToolCallContent):
                seen.writes[item.path] = item.new_text

    def _start(self, update: AnyCall, *, hold: bool = True) -> list[StreamEvent]:
        call_id = update.tool_call_id
        events: list[StreamEvent] = []
        seen = self.calls.get(call_id)
        name = call_name(update) if seen is None else ""  # looked up once (its meta, its id's pattern)
        if seen is None and hold and self.offered(name) is not None:
            seen = self.calls[call_id] = CallSeen(name, held=True)
        if seen is not None and seen.held:
            return self._hold(seen, update)
        if seen is None:  # a repeat of an announced call (Claude Code sends the diff so) is an update of it
            seen = self.calls[call_id] = CallSeen(name)
            self._remember(seen, update)
            arguments = "{}" if update.raw_input is None else json_text(update.raw_input)
            events.append(ToolCallStarted(call_id, seen.name, arguments, provider_executed=True, provider=PROVIDER))
            events.append(self._revision(update, with_arguments=False))
        else:
            self._remember(seen, update)
            events.append(self._revision(update))
        return events + self._status(update, seen)

    def _progress(self, update: ToolCallProgress) -> list[StreamEvent]:
        seen = self.calls.get(update.tool_call_id)
        if seen is not None and seen.held:
            return self._hold(seen, update)
        if seen is None:
            # An update of a call never announced: the card starts here (an agent may skip ``tool_call``).
            return self._start(update)
        if seen.ended:
            return []  # after its result: nothing more changes a finished call
        self._remember(seen, update)
        if says_nothing(update):  # most updates only move the status: no revision to build and apply
            return self._status(update, seen)
        return [self._revision(update), *self._status(update, seen)]

    # --- calls of the session's own tools ------------------------------------------------------------------------

    def _hold(self, seen: CallSeen, update: AnyCall) -> list[StreamEvent]:
        """A held call's update: swallowed once the chat runs the call (its card is the chat's); before that, kept,
        and the card released when the agent says the call ended without calling the tool (its permission
        refused)."""
        if seen.claimed:
            return []
        self._remember(seen, update)
        if isinstance(seen.pending, list):
            seen.pending.append(update)
        else:
            seen.pending = [update]
        if update.status in ("completed", "failed"):
            return self.release(update.tool_call_id)
        return []

    def claim(self, call_id: str | None, tool: str) -> str | None:
        """The id under which the chat runs a call of its own tool ``tool`` that the agent made over MCP: the held
        call ``call_id`` (the card the agent announced, linked by Claude Code's ``claudecode/toolUseId``), or, with
        no id, the oldest held call of that tool (Gemini CLI links by name only); an id the agent never announced is
        taken as it is. ``None`` when no held call fits (the chat then gives the call an id of its own). Later
        updates of a claimed call are swallowed: the chat's card is the call's."""
        if call_id is None:
            call_id = next(
                (
                    c
                    for c, seen in self.calls.items()
                    if seen.held and not seen.claimed and self.offered(seen.name) == tool
                ),
                None,
            )
            if call_id is None:
                return None
        seen = self.calls.get(call_id)
        if seen is None:
            self.calls[call_id] = CallSeen(tool, held=True, claimed=True)
            return call_id
        if not seen.held or seen.claimed:
            return None
        seen.claimed = True
        seen.pending = ()
        return call_id

    def release(self, call_id: str) -> list[StreamEvent]:
        """The events of a held call that the chat will not run, as a provider-run card (its updates so far)."""
        seen = self.calls.get(call_id)
        if seen is None or not seen.held or seen.claimed:
            return []
        del self.calls[call_id]
        events: list[StreamEvent] = []
        for update in seen.pending:
            events += self._start(update, hold=False)
        return events

    def release_held(self) -> list[StreamEvent]:
        """At the end of the agent's prompt: each held call the chat never ran, as a provider-run card closed with
        :data:`NOT_RUN` (it must not vanish without a word)."""
        events: list[StreamEvent] = []
        for call_id in [c for c, seen in self.calls.items() if seen.held and not seen.claimed]:
            events += self.release(call_id)
            seen = self.calls.get(call_id)
            if seen is not None and not seen.ended:
                seen.ended = True
                events.append(ProviderToolResult(call_id, ToolOutcome.failure(NOT_RUN), provider=PROVIDER))
        return events

    def _revision(self, update: AnyCall, *, with_arguments: bool = True) -> ToolCallRevised:
        """The card's update: each field the agent sent replaces the card's."""
        arguments = None if update.raw_input is None or not with_arguments else json_text(update.raw_input)
        content = None if update.content is None else tuple([self._item(item) for item in update.content])
        if content is not None:
            self._content[update.tool_call_id] = content
        return ToolCallRevised(
            update.tool_call_id,
            title=update.title or None,
            kind=update.kind,
            locations=None if update.locations is None else tuple(self._location(loc) for loc in update.locations),
            arguments=arguments,
            content=content,
        )

    # --- terminals shown in cards -----------------------------------------------------------------------------------

    def show_terminal(self, call_id: str, terminal_id: str) -> list[StreamEvent]:
        """The revision that makes the card of ``call_id`` show the terminal: in place of a terminal not yet started
        (an empty id: the card that asked to run it), else after what the card shows; none for a finished card."""
        seen = self.calls.get(call_id)
        if seen is not None and seen.ended:
            return []
        content = self._content.get(call_id, ())
        view = self._terminal_view(terminal_id)
        if any(isinstance(item, CallTerminal) and item.terminal_id == terminal_id for item in content):
            content = tuple(self._fresh(item, terminal_id) for item in content)
        elif any(isinstance(item, CallTerminal) and not item.terminal_id for item in content):
            content = tuple(
                view if isinstance(item, CallTerminal) and not item.terminal_id else item for item in content
            )
        else:
            content = (*content, view)
        self._content[call_id] = content
        return [ToolCallRevised(call_id, content=content)]

    def show_content(self, call_id: str, content: tuple[CallViewItem, ...]) -> None:
        """Remembers what a card the client opened shows (its terminals are then refreshed like an agent's)."""
        self._content[call_id] = content

    def terminal_revisions(self, terminal_id: str) -> list[StreamEvent]:
        """The revisions of the open cards that show the terminal, with its output and exit as they are now."""
        events: list[StreamEvent] = []
        for call_id, content in self._content.items():
            seen = self.calls.get(call_id)
            if seen is not None and seen.ended:
                continue  # a finished card takes no more revisions
            if not any(isinstance(item, CallTerminal) and item.terminal_id == terminal_id for item in content):
                continue
            fresh = tuple(self._fresh(item, terminal_id) for item in content)
            self._content[call_id] = fresh
            events.append(ToolCallRevised(call_id, content=fresh))
        return events

    def forget_content(self) -> None:
        """The turn ended: its cards take no more live revisions (a later response could not revise them)."""
        self._content.clear()

    def _fresh(self, item: CallViewItem, terminal_id: str) -> CallViewItem:
        if isinstance(item, CallTerminal) and item.terminal_id == terminal_id:
            return self._terminal_view(terminal_id)
        return item

    def _status(self, update: AnyCall, seen: CallSeen) -> list[StreamEvent]:
        call_id = update.tool_call_id
        match update.status:
            case "in_progress" if not seen.running:
                seen.running = True
                return [ToolProgressUpdate(call_id)]
            case "completed" | "failed":
                seen.ended = True
                return [ProviderToolResult(call_id, self._outcome(update), provider=PROVIDER)]
        return []

    def _outcome(self, update: AnyCall) -> ToolOutcome:
        texts = [
            content_text(item.content) for item in update.content or () if isinstance(item, ContentToolCallContent)
        ]
        text = "\n".join(t for t in texts if t)
        if not text and update.raw_output is not None:
            raw = update.raw_output
            text = raw if isinstance(raw, str) else json_text(raw)
            text = text[:MAX_RAW_OUTPUT_CHARS]
        if update.status == "failed":
            return ToolOutcome.failure(text or "The agent's call failed.", retryable=True)
        return ToolOutcome(status="success", text=text or "Done.")  # as ``success(text=...)``, built directly

    def _item(self, item: Any) -> CallViewItem:
        match item:
            case FileEditToolCallContent(path=path, old_text=old, new_text=new):
                return CallDiff(path, old, new)
            case TerminalToolCallContent(terminal_id=terminal_id):
                return self._terminal_view(terminal_id)
            case ContentToolCallContent(content=block):
                return CallText(content_text(block))
        return CallText("")

    @staticmethod
    def _location(location: ToolCallLocation) -> CallLocation:
        return CallLocation(location.path, location.line)

    # --- usage ------------------------------------------------------------------------------------------------------

    def _agent_usage(self, update: AgentUsage) -> list[StreamEvent]:
        """The agent's running cost: the request's cost is the change of its total since the response began (in USD
        only; another currency leaves the request unpriced). Its ``used`` is how full the context is, not what the
        request took, so it is not counted as tokens (each request would count the whole context again)."""
        cost = None
        if update.cost is not None and update.cost.currency.upper() == "USD":
            try:
                total = Decimal(str(update.cost.amount))
            except InvalidOperation:
                total = None
            if total is not None and total.is_finite() and total >= 0:
                self._cost = total
                cost = max(total - (self._cost_at_start or Decimal(0)), Decimal(0))
        self._usage = UsageUpdate(
            input_tokens=self._usage.input_tokens,
            output_tokens=self._usage.output_tokens,
            cached_tokens=self._usage.cached_tokens,
            reasoning_tokens=self._usage.reasoning_tokens,
            cache_write_tokens=self._usage.cache_write_tokens,
            cost=cost,
        )
        return [self._usage]
