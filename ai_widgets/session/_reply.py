"""Applying a transport's stream to the reply: the only place events become parts.

Every event is checked for its types and its order before it touches the reply; a transport that breaks the
protocol ends the turn with a :class:`StreamProtocolError` and nothing malformed enters the history. Every value
that enters is made JSON- and UTF-8-safe on the way in. Tool calls change state only through
:func:`ai_widgets.session._calls.move_call`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from decimal import Decimal
from operator import is_
from typing import Any

from ai_widgets._safe import UnsafeValueError, checked_json
from ai_widgets.changes import (
    MessageUpdated,
    PartAdded,
    PartChanged,
    TextAppended,
    ToolCallArgumentsChanged,
    ToolCallUpdated,
)
from ai_widgets.events import (
    PlanUpdated,
    ProviderState,
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolApprovalRequested,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallRevised,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import (
    CallDiff,
    CallLocation,
    CallTerminal,
    CallText,
    CallViewItem,
    FinishReason,
    Message,
    PlanEntry,
    PlanPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolCallProgress,
    ToolCallState,
    ToolCallView,
    TypedAnswer,
    Usage,
)
from ai_widgets.messages._call_view import MAX_VIEW_ITEMS, clip_view_text
from ai_widgets.messages._plan import MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_CHARS
from ai_widgets.messages._usage import request_cost
from ai_widgets.outcome import ToolOutcome
from ai_widgets.session._calls import Notify, move_call

__all__ = ["ReplyBuilder", "StreamProtocolError"]

#: The events that take :meth:`ReplyBuilder.apply`'s fast path, and the part each one grows.
FAST_KINDS: dict[type, type[TextPart] | type[ReasoningPart]] = {TextDelta: TextPart, ReasoningDelta: ReasoningPart}

PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
LONE = re.compile("[\ud800-\udfff]")


class StreamProtocolError(RuntimeError):
    """A transport sent events that do not fit together (a wrong type, an unknown call, events after the end)."""


def safe_delta(held: str, text: str) -> tuple[str, str]:
    """Text safe to keep, and a trailing high surrogate held back for the next delta (it may pair with it)."""
    if not held and text.isascii():
        return text, ""
    text = held + text
    held = ""
    if text and "\ud800" <= text[-1] <= "\udbff":
        held, text = text[-1], text[:-1]
    if LONE.search(text) is not None:
        text = PAIR.sub(lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + ord(m[0][1]) - 0xDC00), text)
        text = LONE.sub("\ufffd", text)
    return text, held


def check(condition: bool, message: str) -> None:
    # Only on paths that are not per-delta: the message is built whether or not it is needed.
    if not condition:
        raise StreamProtocolError(f"the transport broke the stream protocol: {message}")


def text_field(value: object, name: str, *, optional: bool = False) -> None:
    if type(value) is str or (optional and value is None) or isinstance(value, str):
        return
    raise StreamProtocolError(
        f"the transport broke the stream protocol: {name} must be text, not {type(value).__name__}"
    )


def count(value: object, name: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise StreamProtocolError(
        f"the transport broke the stream protocol: {name} must be a non-negative integer, not {value!r}"[:300]
    )


def with_request(before: Usage, event: UsageUpdate) -> Usage:
    """``before`` (the reply's usage before this request) with this request's usage and price added."""
    text_field(event.model, "UsageUpdate.model", optional=True)
    text_field(event.provider, "UsageUpdate.provider", optional=True)
    request = Usage(
        input_tokens=count(event.input_tokens, "UsageUpdate.input_tokens"),
        output_tokens=count(event.output_tokens, "UsageUpdate.output_tokens"),
        cached_tokens=count(event.cached_tokens, "UsageUpdate.cached_tokens"),
        reasoning_tokens=count(event.reasoning_tokens, "UsageUpdate.reasoning_tokens"),
        requests=1,
        cache_write_tokens=count(event.cache_write_tokens, "UsageUpdate.cache_write_tokens"),
    )
    if event.cost is not None:  # the provider's own price of the request wins over one from the tokens
        check(
            isinstance(event.cost, Decimal) and event.cost.is_finite() and event.cost >= 0,
            f"UsageUpdate.cost must be a non-negative Decimal, not {event.cost!r}"[:200],
        )
        request.cost = event.cost
        return before + request
    request.cost = request_cost(
        provider=event.provider,
        model=event.model,
        input_tokens=request.input_tokens,
        output_tokens=request.output_tokens,
        cache_read_tokens=request.cached_tokens,
        cache_write_tokens=request.cache_write_tokens,
    )
    return before + request


def checked_entries(entries: object) -> tuple[PlanEntry, ...]:
    """A plan's entries, checked and bounded (:data:`MAX_PLAN_ENTRIES`, :data:`MAX_PLAN_ENTRY_CHARS`)."""
    check(isinstance(entries, tuple), "PlanUpdated.entries must be a tuple of PlanEntry")
    assert isinstance(entries, tuple)
    kept = []
    for entry in entries[:MAX_PLAN_ENTRIES]:
        check(isinstance(entry, PlanEntry), f"a plan entry must be a PlanEntry, not {type(entry).__name__}")
        text_field(entry.content, "PlanEntry.content")
        content = safe_delta("", entry.content[:MAX_PLAN_ENTRY_CHARS])[0]
        kept.append(entry if content == entry.content else dataclasses.replace(entry, content=content))
    return tuple(kept)


def safe_text(value: object, name: str) -> str:
    """Text from a transport, checked, made UTF-8-safe and bounded."""
    text_field(value, name)
    assert isinstance(value, str)
    return safe_delta("", value)[0]


def checked_locations(locations: object) -> tuple[CallLocation, ...]:
    check(isinstance(locations, tuple), "ToolCallRevised.locations must be a tuple of CallLocation")
    assert isinstance(locations, tuple)
    kept = []
    for location in locations[:MAX_VIEW_ITEMS]:
        check(isinstance(location, CallLocation), "ToolCallRevised.locations must hold CallLocation")
        check(
            location.line is None or (type(location.line) is int and location.line >= 0),
            "CallLocation.line must be a non-negative integer or None",
        )
        kept.append(CallLocation(safe_text(location.path, "CallLocation.path"), location.line))
    return tuple(kept)


def checked_item(item: object) -> CallViewItem:
    """A view item from a transport, checked, UTF-8-safe and bounded (:data:`MAX_VIEW_CHARS` a text); the item
    itself when it was so already (they are frozen: an agent that sends the same diff again costs no copy)."""
    match item:
        case CallText(text=text):
            kept = clip_view_text(safe_text(text, "CallText.text"))
            if kept is text and type(item) is CallText and item.type == "text":
                return item
            return CallText(kept)
        case CallDiff(path=path, old_text=old, new_text=new):
            safe_path = safe_text(path, "CallDiff.path")
            safe_old = None if old is None else clip_view_text(safe_text(old, "CallDiff.old_text"))
            safe_new = clip_view_text(safe_text(new, "CallDiff.new_text"))
            if (
                safe_path is path
                and safe_old is old
                and safe_new is new
                and type(item) is CallDiff
                and item.type == "diff"
            ):
                return item
            return CallDiff(safe_path, safe_old, safe_new)
        case CallTerminal():
            check(
                item.exit_code is None or (type(item.exit_code) is int),
                "CallTerminal.exit_code must be an integer or None",
            )
            return CallTerminal(
                safe_text(item.terminal_id, "CallTerminal.terminal_id"),
                None if item.command is None else safe_text(item.command, "CallTerminal.command"),
                None if item.cwd is None else safe_text(item.cwd, "CallTerminal.cwd"),
                clip_view_text(safe_text(item.output, "CallTerminal.output"), keep_end=True),
                item.exit_code,
                None if item.signal is None else safe_text(item.signal, "CallTerminal.signal"),
            )
        case _:
            raise StreamProtocolError(
                f"the transport broke the stream protocol: a call view item must be CallText, CallDiff or "
                f"CallTerminal, not {type(item).__name__}"
            )


#: The view of a call no revision has described yet.
NO_VIEW = ToolCallView()


def revised_view(view: ToolCallView | None, event: ToolCallRevised) -> ToolCallView:
    """``view`` with what ``event`` gives replaced, checked."""
    view = view or NO_VIEW
    title, kind = view.title, view.kind
    if event.title is not None:
        title = event.title
        if not (type(title) is str and title.isascii()):  # plain ASCII text is safe as it is
            title = safe_text(title, "ToolCallRevised.title")
        title = title[:500]
    if event.kind is not None:
        kind = event.kind
        if not (type(kind) is str and kind.isascii()):
            kind = safe_text(kind, "ToolCallRevised.kind")
        kind = kind[:50]
    locations = view.locations if event.locations is None else checked_locations(event.locations)
    content = view.content
    if event.content is not None:
        check(isinstance(event.content, tuple), "ToolCallRevised.content must be a tuple of view items")
        content = tuple([checked_item(item) for item in event.content[:MAX_VIEW_ITEMS]])
        if (
            type(event.content) is tuple
            and len(content) == len(event.content)
            and all(map(is_, content, event.content))
        ):
            content = event.content  # nothing changed: the agent's tuple is kept, not a copy of it
    return ToolCallView(title, kind, locations, content)


class ReplyBuilder:
    """Applies the events of one model response to the reply in progress.

    Args:
        reply: The turn's reply (one message however many requests the turn takes).
        notify: Tells the session's observers about each change.
        new_answer: In a typed turn: the mark for each text part this response starts (from its first text), so
            the part's parse grows with its text; ``None`` otherwise.
    """

    def __init__(
        self, reply: Message, notify: Notify, *, new_answer: Callable[[str], TypedAnswer] | None = None
    ) -> None:
        self.reply = reply
        self._notify = notify
        self._new_answer = new_answer
        self.calls: dict[str, ToolCallPart] = {}
        self._indices: dict[int, int] = {}  # a part's index in the reply, by id(part): found once, not per update
        # The reply's calls from the turn's earlier responses: an id may not come back (one lookup per started call,
        # not a scan of the reply); the result of a provider-run call among them may (a remote agent that paused
        # for the person's approval runs the call in the next response).
        self._earlier = {part.tool_call_id: part for part in reply.tool_calls}
        #: The schemas edits of provider-run calls must match, by call id (``ToolApprovalRequested.arguments_schema``).
        self.arguments_schemas: dict[str, dict[str, Any]] = {}
        self.finish_reason: FinishReason | None = None
        #: Whether the provider's run goes on after the session's round (``ResponseCompleted.continues``).
        self.continues = False
        self._usage_before = dataclasses.replace(reply.usage)
        #: Whether the response reported its usage (``UsageUpdate``).
        self.usage_reported = False
        self._started = False
        self._appended = False  # whether this response has added a text or reasoning part yet
        self._held = ""  # a high surrogate held back from the last text delta
        self._held_kind: type[TextPart] | type[ReasoningPart] | None = None
        reply.usage.requests += 1
        reply.usage.cost = None  # this request's price is unknown until its usage says who answered
        reply.finish_reason = None

    @property
    def completed(self) -> bool:
        """Whether the response said it was complete."""
        return self.finish_reason is not None

    def apply(self, event: StreamEvent) -> None:
        """Applies one event.

        Raises:
            StreamProtocolError: The event is malformed or out of order; nothing of it was applied.
        """
        grows = FAST_KINDS.get(type(event))
        if grows is not None:
            # Nearly every event of a reply: plain text or reasoning, added to the part this response is writing, or
            # starting a part after one of the other kind (an agent may switch between them chunk by chunk), at the
            # least cost. Anything else (a status to clear, surrogates, a typed answer, provider data) takes the
            # general path.
            chunk: TextDelta | ReasoningDelta = event  # type: ignore[assignment]  # its type was just looked up
            text, reply = chunk.text, self.reply
            parts = reply.parts
            if (
                type(text) is str
                and text
                and text.isascii()
                and not self._held
                and self._appended
                and self.finish_reason is None
                and reply.status_text is None
                and (grows is ReasoningPart or self._new_answer is None)
                and (isinstance(chunk, TextDelta) or (chunk.provider is None and chunk.provider_data is None))
            ):
                last = parts[-1]
                if type(last) is grows:
                    last.append(text)
                    self._notify(TextAppended(reply, len(parts) - 1, text))
                    return
                started = grows(text)
                parts.append(started)
                self._notify(PartAdded(reply, len(parts) - 1, started))
                return
        if self.finish_reason is not None:
            raise StreamProtocolError(
                f"the transport broke the stream protocol: {type(event).__name__} arrived after the response completed"
            )
        handle = CALL_KINDS.get(type(event))
        if handle is not None:  # a call's events (an agent sends several of each call): no walk down the match
            handle(self, event)
            self._started = True
            return
        reply = self.reply
        match event:
            case TextDelta(text=text):
                text_field(text, "TextDelta.text")
                self._append_text(TextPart, text)
            case ToolCallDelta(tool_call_id=call_id, delta=delta):
                part = self._call(call_id, "ToolCallDelta")
                text_field(delta, "ToolCallDelta.delta")
                if part.state is not ToolCallState.STREAMING:
                    check(False, f"arguments for call {call_id!r} after they were done")
                part.feed_arguments(delta)
                self._notify(ToolCallArgumentsChanged(reply, part, delta, part.streaming_arguments.last_patches))
            case ReasoningDelta(text=text, provider=provider, provider_data=provider_data):
                text_field(text, "ReasoningDelta.text")
                text_field(provider, "ReasoningDelta.provider", optional=True)
                data = self._provider_data(provider_data, "ReasoningDelta.provider_data")
                reasoning = self._append_text(ReasoningPart, text)
                if provider_data is not None and isinstance(reasoning, ReasoningPart):
                    reasoning.provider, reasoning.provider_data = provider, data
            case StatusUpdate(text=text):
                text_field(text, "StatusUpdate.text")
                reply.status_text = safe_delta("", text)[0] or None
                self._notify(MessageUpdated(reply))
            case ToolCallStarted():
                self._start_call(event)
            case ToolCallArgumentsDone(tool_call_id=call_id):
                part = self._call(call_id, "ToolCallArgumentsDone")
                if part.state is ToolCallState.STREAMING:
                    move_call(self._notify, reply, part, ToolCallState.PENDING)
            case ToolApprovalRequested(tool_call_id=call_id, reason=reason, arguments_schema=schema):
                part = self._call(call_id, "ToolApprovalRequested", earlier=True)
                text_field(reason, "ToolApprovalRequested.reason", optional=True)
                check(
                    part.decision is None,
                    f"approval requested again for call {call_id!r}, which the person decided on already",
                )
                text_field(event.provider, "ToolApprovalRequested.provider", optional=True)
                check(not part.state.terminal, f"approval requested for call {call_id!r}, which has ended")
                check(
                    schema is None or (isinstance(schema, dict) and schema.get("type") == "object"),
                    "ToolApprovalRequested.arguments_schema must be an object schema",
                )
                data = self._provider_data(event.provider_data, "ToolApprovalRequested.provider_data")
                if schema is not None:
                    self.arguments_schemas[call_id] = self._provider_data(schema, "ToolApprovalRequested.schema")
                if event.provider_data is not None:
                    part.provider, part.provider_data = event.provider, data
                part.approval_requested_by_transport = True
                part.approval_reason = safe_delta("", reason)[0] if reason else part.approval_reason
                self._notify(ToolCallUpdated(reply, part))
            case ToolCallRevised():
                self._revise(event)
            case PlanUpdated(entries=entries):
                self._plan(checked_entries(entries))
            case ProviderState(provider=provider, data=data):
                text_field(provider, "ProviderState.provider")
                check(bool(provider), "ProviderState.provider must not be empty")
                reply.provider_state[provider] = self._provider_data(data, "ProviderState.data")
            case ToolProgressUpdate():
                self._provider_progress(event)
            case ProviderToolResult():
                self._provider_result(event)
            case UsageUpdate():
                reply.usage = with_request(self._usage_before, event)
                self.usage_reported = True
                self._notify(MessageUpdated(reply))
            case ResponseCompleted(finish_reason=finish_reason, continues=continues):
                check(isinstance(continues, bool), "ResponseCompleted.continues must be a bool")
                self.continues = continues
                try:
                    reason = FinishReason(finish_reason)
                except ValueError:
                    raise StreamProtocolError(
                        f"the transport broke the stream protocol: unknown finish reason {finish_reason!r}"[:300]
                    ) from None
                self._flush_held()
                self.finish_reason = reply.finish_reason = reason
                for part in self.calls.values():
                    if part.state is ToolCallState.STREAMING:
                        move_call(self._notify, reply, part, ToolCallState.PENDING)
                self._notify(MessageUpdated(reply))
            case ResponseStarted():
                check(not self._started, "a second ResponseStarted in one response")
            case _:
                raise StreamProtocolError(
                    f"the transport broke the stream protocol: it yielded {type(event).__name__}, which is not a "
                    "stream event"
                )
        self._started = True

    def show_status(self, text: str | None) -> None:
        """Shows ``text`` on the status line until the response's first content (or the transport's own status)."""
        if text and self.reply.status_text is None:
            self.reply.status_text = text
            self._notify(MessageUpdated(self.reply))

    def uncount(self) -> None:
        """Takes this request out of the reply's usage: one the provider refused before it began and reported no
        usage for (it did no work, and bills none), so the reply's cost stays known."""
        if not self.usage_reported:
            self.reply.usage = dataclasses.replace(self._usage_before)
            self._notify(MessageUpdated(self.reply))

    def close(self) -> None:
        """Ends the response (completed or not): text held back for a surrogate pair is written out, and the status
        line goes (it describes this response only)."""
        self._flush_held()
        self._clear_status()

    # --- helpers ----------------------------------------------------------------------------------------------------

    def _start_call(self, event: ToolCallStarted) -> None:
        call_id, name, arguments = event.tool_call_id, event.tool_name, event.arguments
        if not (isinstance(call_id, str) and call_id):
            check(False, f"ToolCallStarted.tool_call_id must be text, not {call_id!r}")
        if not (isinstance(name, str) and name):
            check(False, f"ToolCallStarted.tool_name must be text, not {name!r}"[:200])
        text_field(arguments, "ToolCallStarted.arguments", optional=True)
        check(isinstance(event.provider_executed, bool), "ToolCallStarted.provider_executed must be a bool")
        text_field(event.provider, "ToolCallStarted.provider", optional=True)
        if call_id in self.calls or call_id in self._earlier:
            check(False, f"tool call id {call_id!r} was used twice")
        data = self._provider_data(event.provider_data, "ToolCallStarted.provider_data")
        self._flush_held()
        self._clear_status()
        part = ToolCallPart(
            call_id,
            safe_delta("", name)[0],
            arguments or "",
            state=ToolCallState.PENDING if arguments is not None else ToolCallState.STREAMING,
            provider_executed=event.provider_executed,
            provider=event.provider if event.provider_data is not None else None,
            provider_data=data,
        )
        self.calls[call_id] = part
        self._indices[id(part)] = len(self.reply.parts)
        self.reply.parts.append(part)
        self._notify(PartAdded(self.reply, len(self.reply.parts) - 1, part))

    def _revise(self, event: ToolCallRevised) -> None:
        call_id, arguments, reply = event.tool_call_id, event.arguments, self.reply
        part = self._call(call_id, "ToolCallRevised", earlier=True)
        text_field(arguments, "ToolCallRevised.arguments", optional=True)
        part.view = revised_view(part.view, event)
        if arguments is not None and arguments != part.arguments:
            part.replace_arguments(safe_delta("", arguments)[0])
        self._notify(PartChanged(reply, self._index_of(part), part))

    def _provider_progress(self, event: ToolProgressUpdate) -> None:
        call_id, fraction, message, reply = event.tool_call_id, event.fraction, event.message, self.reply
        part = self._call(call_id, "ToolProgressUpdate", earlier=True)
        if fraction is not None and not (
            isinstance(fraction, (int, float))
            and not isinstance(fraction, bool)
            and math.isfinite(fraction)
            and 0 <= fraction <= 1
        ):  # the message is built only when it is needed: an agent sends several updates of each call
            check(False, f"ToolProgressUpdate.fraction must be a number from 0 to 1, not {fraction!r}"[:200])
        text_field(message, "ToolProgressUpdate.message", optional=True)
        if not part.state.terminal:
            part.provider_executed = True
            if part.state is not ToolCallState.RUNNING:
                move_call(self._notify, reply, part, ToolCallState.RUNNING)
            shown = None if message is None else safe_delta("", message)[0]
            part.progress = ToolCallProgress(None if fraction is None else float(fraction), shown)
            self._notify(ToolCallUpdated(reply, part))

    def _provider_result(self, event: ProviderToolResult) -> None:
        call_id, outcome, provider, data = event.tool_call_id, event.outcome, event.provider, event.provider_data
        reply = self.reply
        part = self._call(call_id, "ProviderToolResult", earlier=True)
        check(isinstance(outcome, ToolOutcome), "ProviderToolResult.outcome must be a ToolOutcome")
        text_field(provider, "ProviderToolResult.provider", optional=True)
        if part.state.terminal:
            check(False, f"a second result for call {call_id!r}")
        safe_data = self._provider_data(data, "ProviderToolResult.provider_data")
        part.provider_executed = True
        if data is not None:
            part.provider, part.provider_data = provider, safe_data
        state = ToolCallState.COMPLETED if outcome.ok else ToolCallState.FAILED
        move_call(self._notify, reply, part, state, outcome)
        self._clear_status()  # a status the provider's call set ("Searching the web…") ends with it

    def _index_of(self, part: ToolCallPart) -> int:
        """Where ``part`` is in the reply (remembered: an agent sends many updates of one call)."""
        parts = self.reply.parts
        index = self._indices.get(id(part))
        if index is None or index >= len(parts) or parts[index] is not part:
            index = self._indices[id(part)] = parts.index(part)
        return index

    def _plan(self, entries: tuple[PlanEntry, ...]) -> None:
        """Shows the plan: the reply's plan part takes the new entries in place, or the reply gets one."""
        reply = self.reply
        for index, part in enumerate(reply.parts):
            if isinstance(part, PlanPart):
                part.entries = entries
                self._notify(PartChanged(reply, index, part))
                return
        self._flush_held()
        self._clear_status()
        plan = PlanPart(entries)
        reply.parts.append(plan)
        self._notify(PartAdded(reply, len(reply.parts) - 1, plan))

    def _call(self, call_id: object, event_name: str, *, earlier: bool = False) -> ToolCallPart:
        part = self.calls.get(call_id) if isinstance(call_id, str) else None
        if part is None and earlier and isinstance(call_id, str):
            # A provider-run call of an earlier response that is still open (approved, run remotely now).
            found = self._earlier.get(call_id)
            part = found if found is not None and found.provider_executed and not found.state.terminal else None
        if part is None:
            if not isinstance(call_id, str):
                problem = f"{event_name}.tool_call_id must be text, not {type(call_id).__name__}"
            else:
                problem = f"{event_name} for tool call {call_id!r}, which this response never started"
            raise StreamProtocolError(f"the transport broke the stream protocol: {problem}"[:300])
        return part

    @staticmethod
    def _provider_data(data: object, name: str) -> Any:
        if data is None:
            return None
        try:
            return checked_json(data, where=name)
        except UnsafeValueError as exc:
            raise StreamProtocolError(f"the transport broke the stream protocol: {exc}") from None

    def _clear_status(self) -> None:
        if self.reply.status_text is not None:
            self.reply.status_text = None
            self._notify(MessageUpdated(self.reply))

    def _append_text(self, kind: type[TextPart] | type[ReasoningPart], text: str) -> TextPart | ReasoningPart:
        self._clear_status()
        if self._held_kind is not kind:
            self._flush_held()
        text, self._held = safe_delta(self._held, text)
        self._held_kind = kind if self._held else None
        reply = self.reply
        parts = reply.parts
        last = parts[-1] if parts else None
        if type(last) is kind and self._appended:  # never join a part of an earlier response (its provider data)
            if text:
                self._grow(last, text)
            return last
        part = kind(text)
        if isinstance(part, TextPart) and self._new_answer is not None:
            part.answer = self._new_answer(text)
        parts.append(part)
        self._appended = True
        self._notify(PartAdded(reply, len(parts) - 1, part))
        return part

    def _flush_held(self) -> None:
        """A high surrogate that no low one followed becomes U+FFFD."""
        if not self._held:
            return
        kind = self._held_kind
        self._held, self._held_kind = "", None
        parts = self.reply.parts
        last = parts[-1] if parts else None
        if kind is not None and type(last) is kind:
            self._grow(last, "\ufffd")

    def _grow(self, part: TextPart | ReasoningPart, text: str) -> None:
        """Appends ``text`` to the reply's last part (and to a typed answer's parse), and says so."""
        part.append(text)
        index = len(self.reply.parts) - 1
        answer = part.answer if isinstance(part, TextPart) else None
        if answer is None:
            self._notify(TextAppended(self.reply, index, text))
            return
        was_json = answer.parse_error is None
        self._notify(TextAppended(self.reply, index, text, answer.feed(text)))
        if was_json and answer.parse_error is not None:  # not JSON after all (prose, a code fence): shown as text
            self._notify(PartChanged(self.reply, index, part))


#: The events of a call that :meth:`ReplyBuilder.apply` hands straight to their handler, by their exact type.
CALL_KINDS: dict[type, Callable[[ReplyBuilder, Any], None]] = {
    ToolCallStarted: ReplyBuilder._start_call,
    ToolCallRevised: ReplyBuilder._revise,
    ToolProgressUpdate: ReplyBuilder._provider_progress,
    ProviderToolResult: ReplyBuilder._provider_result,
}
