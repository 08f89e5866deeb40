"""One AG-UI run's events as this project's stream events (:class:`RunMapper`), and the shared state the agent keeps
with them (``STATE_SNAPSHOT`` replaces it, ``STATE_DELTA`` patches it: :func:`apply_patch`, RFC 6902)."""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ai_widgets.events import (
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
    ToolCallStarted,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason, ToolCallPart, ToolCallState
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import ProviderError
from ai_widgets.transports._sse import load_json

import_sdk("ag_ui", "ag-ui")  # says which extra to install when the protocol's package is missing

from ag_ui.core import (  # noqa: E402
    ActivitySnapshotEvent,
    BaseEvent,
    Interrupt,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

__all__ = ["PROVIDER", "PatchError", "RunMapper", "agent_call_id", "apply_patch", "interrupt_of"]

#: The provider name on the parts this transport keeps data on (its remote calls, and the pauses they answer).
PROVIDER = "ag-ui"

# Keys of an activity's content that read as a line for a person, in the order tried.
ACTIVITY_TEXT = ("message", "title", "status", "text", "label")


def interrupt_of(part: ToolCallPart) -> dict[str, Any] | None:
    """The pause (an AG-UI ``Interrupt``, as JSON) a remote call waits on or waited on, or ``None``."""
    data = part.provider_data
    if part.provider != PROVIDER or not isinstance(data, dict):
        return None
    interrupt = data.get("interrupt")
    return interrupt if isinstance(interrupt, dict) and isinstance(interrupt.get("id"), str) else None


def agent_call_id(part: ToolCallPart) -> str:
    """The id the agent gave a call: the call's own, unless the conversation already had that id when the call
    came (an agent whose ids restart with each run); the agent's is then kept in the part's provider data."""
    data = part.provider_data
    agent_id = data.get("agent_id") if part.provider == PROVIDER and isinstance(data, dict) else None
    return agent_id if isinstance(agent_id, str) else part.tool_call_id


@dataclass
class Held:
    """A call that names the tool of an ended earlier call with the same id: a replay of it, or a new call that
    reuses its id. Its arguments are held until they are complete, and then decide which."""

    name: str
    earlier: list[ToolCallPart]
    deltas: list[str] = field(default_factory=list)


class RunMapper:
    """Maps the events of one run, in order, to stream events.

    Args:
        label: Who the agent is, for the errors.
        offered: The names of the session's own tools offered to the agent (its frontend tools): a call to one of
            them runs here; a call to any other tool is the agent's own (``provider_executed``).
        earlier: The calls of the reply this run continues: the result of one the person allowed arrives in this
            run; results for calls that ended here (declined, cancelled) are the agent's record, not ours.
        taken: The ids of the conversation's calls (``earlier``'s are added): a new call whose id is among them
            gets one of its own.
        state: The shared state before the run.

    The agent names a call by its own id in every event, and may send a call of an earlier run again (a replay:
    nothing new). A replay names the same tool with the same arguments (or none); an id an earlier run used for
    another tool or other arguments is a new call (an agent whose ids restart with each run), which gets an id
    of its own here, ``provider_data["agent_id"]`` keeping the agent's for the runs that follow.
    """

    def __init__(
        self,
        *,
        label: str,
        offered: set[str],
        earlier: Sequence[ToolCallPart] = (),
        taken: Collection[str] = (),
        state: Any = None,
    ) -> None:
        self.label = label
        self.state = state
        self._offered = offered
        self._earlier: dict[str, list[ToolCallPart]] = {}  # by the agent's id
        for part in earlier:
            self._earlier.setdefault(agent_call_id(part), []).append(part)
        self._taken = {*taken, *(part.tool_call_id for part in earlier)}
        self._started = False
        self._ids: dict[str, str] = {}  # this run's calls: the agent's id -> the session's
        self._remote: set[str] = set()  # the session's ids of this run's calls to the agent's own tools
        self._local: set[str] = set()  # the session's ids of this run's calls to our tools
        self._replayed: dict[str, ToolCallPart] = {}  # calls of an earlier run announced again: nothing new
        self._held: dict[str, Held] = {}  # calls that may be replays, until their arguments are complete
        self._chunk_call: str | None = None
        self._roles: dict[str, str | None] = {}
        self.finished = False

    def feed(self, event: BaseEvent) -> list[StreamEvent]:
        """The stream events of one AG-UI event.

        Raises:
            ProviderError: The run failed (``RUN_ERROR``), was cancelled, paused for something other than a tool
                approval, or sent events that do not fit together.
        """
        out: list[StreamEvent] = [] if self._started else [ResponseStarted()]
        self._started = True
        match event:
            case TextMessageContentEvent(message_id=message_id, delta=delta):
                if delta and self._roles.get(message_id) in (None, "assistant"):
                    out.append(TextDelta(delta))
            case TextMessageChunkEvent(message_id=message_id, role=role, delta=delta):
                if message_id is not None and role is not None:
                    self._roles[message_id] = role
                if delta and self._roles.get(message_id or "") in (None, "assistant"):
                    out.append(TextDelta(delta))
            case TextMessageStartEvent(message_id=message_id, role=role):
                self._roles[message_id] = role
            case ReasoningMessageContentEvent(delta=delta) | ReasoningMessageChunkEvent(delta=delta):
                if delta:
                    out.append(ReasoningDelta(delta))
            case ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name):
                out += self._start(call_id, name)
            case ToolCallArgsEvent(tool_call_id=call_id, delta=delta):
                out += self._arguments(call_id, delta, "TOOL_CALL_ARGS")
            case ToolCallEndEvent(tool_call_id=call_id):
                out += self._settle(call_id)
                if (local := self._local_id(call_id, "TOOL_CALL_END")) is not None:
                    out.append(ToolCallArgumentsDone(local))
            case ToolCallChunkEvent(tool_call_id=call_id, tool_call_name=name, delta=delta):
                out += self._chunk(call_id, name, delta)
            case ToolCallResultEvent(tool_call_id=call_id, content=content):
                out += self._result(call_id, content)
            case StateSnapshotEvent(snapshot=snapshot):
                self.state = snapshot
            case StateDeltaEvent(delta=delta):
                try:
                    self.state = apply_patch(self.state, [op.model_dump(by_alias=True) for op in delta])
                except PatchError as exc:
                    raise ProviderError(f"{self.label} sent a STATE_DELTA that does not apply: {exc}") from None
            case ActivitySnapshotEvent(content=content):
                shown = next((content[k] for k in ACTIVITY_TEXT if isinstance(content.get(k), str)), None)
                if shown:
                    out.append(StatusUpdate(shown))
            case StepStartedEvent(step_name=name):
                out.append(StatusUpdate(f"{name}…"))
            case StepFinishedEvent():
                out.append(StatusUpdate(""))
            case RunErrorEvent(message=message, code=code):
                said = f"{message} ({code})" if code else message
                raise ProviderError(f"{self.label} reported an error and stopped the run: {said}")
            case RunFinishedEvent():
                out += self._finish(event)
            case RunStartedEvent():
                pass
            case _:  # messages snapshots (the history is ours), raw and custom events, reasoning bounds, subagents
                pass
        return out

    def end(self) -> list[StreamEvent]:
        """Nothing more to say once the run finished (the client raises for a stream that ended before)."""
        return []

    # --- tool calls -------------------------------------------------------------------------------------------------

    def _start(self, call_id: str, name: str) -> list[StreamEvent]:
        if call_id in self._replayed:
            return []  # announced again in this run too
        if call_id in self._ids or call_id in self._held:
            raise ProviderError(f"{self.label} started tool call {call_id!r} twice")
        same = [part for part in self._earlier.get(call_id, ()) if part.tool_name == name]
        running = next((part for part in same if not part.state.terminal), None)
        if running is not None:
            self._replayed[call_id] = running  # the agent announced again the call it now runs: its card exists
            return []
        if same:
            self._held[call_id] = Held(name, same)
            return []
        return self._new_call(call_id, name)

    def _new_call(self, call_id: str, name: str) -> list[StreamEvent]:
        local, count = call_id, 1
        while local in self._taken:  # the id of a call of an earlier run: this one gets its own
            count += 1
            local = f"{call_id}~{count}"
        self._taken.add(local)
        self._ids[call_id] = local
        remote = name not in self._offered
        (self._remote if remote else self._local).add(local)
        data: dict[str, Any] = {"remote": True} if remote else {}
        if local != call_id:
            data["agent_id"] = call_id
        return [ToolCallStarted(local, name, provider_executed=remote, provider=PROVIDER, provider_data=data or None)]

    def _settle(self, call_id: str) -> list[StreamEvent]:
        """Decides whether a held call is a replay (nothing) or a new call (started, with its arguments so far)."""
        held = self._held.pop(call_id, None)
        if held is None:
            return []
        arguments = "".join(held.deltas)
        same = next((part for part in held.earlier if same_arguments(arguments, part.arguments)), None)
        if same is not None:
            self._replayed[call_id] = same
            return []
        out = self._new_call(call_id, held.name)
        if arguments:
            out.append(ToolCallDelta(self._ids[call_id], arguments))
        return out

    def _local_id(self, call_id: str, kind: str) -> str | None:
        """The session's id for a call of this run, or ``None`` for a replay (its events change nothing)."""
        if call_id in self._replayed:
            return None
        local = self._ids.get(call_id)
        if local is None:
            raise ProviderError(f"{self.label} sent {kind} for tool call {call_id!r}, which it never started")
        return local

    def _arguments(self, call_id: str, delta: str | None, kind: str) -> list[StreamEvent]:
        if call_id in self._held:
            self._held[call_id].deltas.append(delta or "")
            return []
        local = self._local_id(call_id, kind)
        return [ToolCallDelta(local, delta)] if local is not None and delta else []

    def _chunk(self, call_id: str | None, name: str | None, delta: str | None) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        call_id = call_id or self._chunk_call
        if call_id is None:
            raise ProviderError(f"{self.label} sent TOOL_CALL_CHUNK without a tool call id")
        if self._chunk_call is not None and self._chunk_call != call_id:
            out += self._settle(self._chunk_call)  # chunks have no end: the next call's ends the one before
        if call_id not in self._ids and call_id not in self._replayed and call_id not in self._held:
            if not name:
                raise ProviderError(f"{self.label} started tool call {call_id!r} by TOOL_CALL_CHUNK without a name")
            out += self._start(call_id, name)
        self._chunk_call = call_id
        return out + self._arguments(call_id, delta, "TOOL_CALL_CHUNK")

    def _result(self, call_id: str, content: str | Sequence[Any]) -> list[StreamEvent]:
        out = self._settle(call_id)
        local = self._ids.get(call_id)
        if local is not None:  # a call of this run: the agent's own gets its result; ours is only its record
            return [*out, ProviderToolResult(local, outcome(content))] if local in self._remote else out
        replayed = self._replayed.get(call_id)
        earlier = [replayed] if replayed is not None else self._earlier.get(call_id, [])
        running = next((p for p in earlier if p.provider_executed and p.state is ToolCallState.RUNNING), None)
        if running is not None:
            return [*out, ProviderToolResult(running.tool_call_id, outcome(content))]
        if earlier:
            return out  # the agent's record of a call that ended here (declined, cancelled)
        raise ProviderError(f"{self.label} sent a result for tool call {call_id!r}, which it never started")

    # --- the end of the run -----------------------------------------------------------------------------------------

    def _finish(self, event: RunFinishedEvent) -> list[StreamEvent]:
        self.finished = True
        out: list[StreamEvent] = []
        for call_id in list(self._held):
            out += self._settle(call_id)
        outcome = event.outcome
        if isinstance(outcome, RunFinishedCancelledOutcome):
            raise ProviderError(f"{self.label} cancelled the run before it finished.")
        if event.usage:
            usage = event.usage
            one = usage[0] if len(usage) == 1 else None
            out.append(
                UsageUpdate(
                    input_tokens=sum(u.input_tokens or 0 for u in usage),
                    output_tokens=sum(u.output_tokens or 0 for u in usage),
                    cached_tokens=sum(u.cached_input_tokens or 0 for u in usage),
                    reasoning_tokens=sum(u.reasoning_tokens or 0 for u in usage),
                    cache_write_tokens=sum(u.cache_write_input_tokens or 0 for u in usage),
                    model=None if one is None else one.model,
                    provider=None if one is None else one.provider,
                )
            )
        interrupts = outcome.interrupts if isinstance(outcome, RunFinishedInterruptOutcome) else []
        for interrupt in interrupts:
            out.append(self._approval(interrupt))
        paused = bool(interrupts) or bool(self._local)
        out.append(ResponseCompleted(FinishReason.TOOL_CALLS if paused else FinishReason.STOP))
        return out

    def _approval(self, interrupt: Interrupt) -> ToolApprovalRequested:
        call_id = interrupt.tool_call_id
        local = None if call_id is None else self._ids.get(call_id)
        if call_id is None or local is None or local not in self._remote:
            what = f"{interrupt.reason}: {interrupt.message}" if interrupt.message else interrupt.reason
            raise ProviderError(
                f"{self.label} paused the run for something this widget cannot answer ({what}); it answers pauses "
                "for the approval of a call of the agent's own tools."
            )
        data: dict[str, Any] = {"interrupt": interrupt.model_dump(mode="json", by_alias=True)}
        if local != call_id:
            data["agent_id"] = call_id  # the call's data is replaced by this: the agent's id stays in it
        return ToolApprovalRequested(
            local,
            reason=interrupt.message,
            arguments_schema=edit_schema(interrupt.response_schema),
            provider=PROVIDER,
            provider_data=data,
        )


def edit_schema(response_schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """What edited arguments must match: the ``editedArgs`` property of the answer's schema, where it has one."""
    properties = (response_schema or {}).get("properties")
    edited = properties.get("editedArgs") if isinstance(properties, dict) else None
    if not isinstance(edited, dict):
        return None
    return edited if edited.get("type") == "object" else {**edited, "type": "object"}


def same_arguments(sent: str, earlier: str) -> bool:
    """Whether a call sent again carries the earlier call's arguments: the same JSON value (compared strictly:
    ``1`` is not ``true``), or none at all (named again without them)."""
    if not sent.strip():
        return True
    try:
        return canonical(sent) == canonical(earlier)
    except (ValueError, RecursionError):
        return sent.strip() == earlier.strip()


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def outcome(content: str | Sequence[Any]) -> ToolOutcome:
    """A remote result as the card shows it: JSON text as its value, other text as text."""
    if not isinstance(content, str):
        texts = [getattr(part, "text", None) for part in content]
        others = sum(1 for text in texts if text is None)
        content = "\n".join(text for text in texts if text is not None)
        if others:
            content += f"\n[{others} part{'s' if others > 1 else ''} of the result that are not text]"
    stripped = content.strip()
    if stripped[:1] in ("{", "["):
        try:
            return ToolOutcome.success(load_json(stripped.encode()))
        except (ValueError, RecursionError):
            pass
    return ToolOutcome.success(content)


# --- JSON Patch (RFC 6902) ------------------------------------------------------------------------------------------


class PatchError(ValueError):
    """A JSON Patch operation that does not apply to the document."""


def apply_patch(document: Any, operations: Sequence[Mapping[str, Any]]) -> Any:
    """``document`` with the operations applied, in order (a new value; ``document`` is not changed).

    Raises:
        PatchError: An operation is malformed, its path does not exist, or its ``test`` fails; nothing is applied.
    """
    result = copy.deepcopy(document)
    for operation in operations:
        op, path = operation.get("op"), operation.get("path")
        if not isinstance(path, str):
            raise PatchError(f"an operation without a path: {operation!r}"[:200])
        match op:
            case "add":
                result = put(result, path, copy.deepcopy(operation.get("value")), insert=True)
            case "replace":
                get(result, path)
                result = put(result, path, copy.deepcopy(operation.get("value")), insert=False)
            case "remove":
                result = remove(result, path)
            case "move" | "copy":
                source = operation.get("from")
                if not isinstance(source, str):
                    raise PatchError(f"a {op} without 'from': {operation!r}"[:200])
                value = copy.deepcopy(get(result, source))
                if op == "move":
                    result = remove(result, source)
                result = put(result, path, value, insert=True)
            case "test":
                if get(result, path) != operation.get("value"):
                    raise PatchError(f"test failed at {path!r}")
            case _:
                raise PatchError(f"unknown operation {op!r}"[:200])
    return result


def steps(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"a JSON Pointer starts with '/': {path!r}"[:200])
    return [step.replace("~1", "/").replace("~0", "~") for step in path[1:].split("/")]


def step_index(container: list[Any], step: str, *, insert: bool) -> int:
    if insert and step == "-":
        return len(container)
    if not step.isdigit() or (len(step) > 1 and step.startswith("0")):
        raise PatchError(f"{step!r} is not an array index")
    index = int(step)
    if index > len(container) or (index == len(container) and not insert):
        raise PatchError(f"index {index} is out of range")
    return index


def parent_of(document: Any, path: str) -> tuple[Any, str]:
    *head, last = steps(path)
    node = document
    for step in head:
        node = child(node, step, path)
    return node, last


def child(node: Any, step: str, path: str) -> Any:
    if isinstance(node, dict) and step in node:
        return node[step]
    if isinstance(node, list):
        return node[step_index(node, step, insert=False)]
    raise PatchError(f"no value at {path!r}")


def get(document: Any, path: str) -> Any:
    node = document
    for step in steps(path):
        node = child(node, step, path)
    return node


def put(document: Any, path: str, value: Any, *, insert: bool) -> Any:
    if path == "":
        return value
    parent, last = parent_of(document, path)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = step_index(parent, last, insert=insert)
        if insert:
            parent.insert(index, value)
        else:
            parent[index] = value
    else:
        raise PatchError(f"no object or array to hold {path!r}")
    return document


def remove(document: Any, path: str) -> Any:
    if path == "":
        raise PatchError("the whole document cannot be removed")
    parent, last = parent_of(document, path)
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list):
        del parent[step_index(parent, last, insert=False)]
    else:
        raise PatchError(f"no value at {path!r}")
    return document
