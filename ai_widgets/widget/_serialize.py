"""What the kernel sends the front end of a conversation: each message, part and tool as JSON in the shape the
views read (docs/protocol.md, "Message shape"), and argument patches as ops.

Everything the widget sends goes through :func:`shown_json`, which never raises: whatever a session holds (a value
from an old dump, a provider's result, a tool's odd return value), the kernel's JSON packer, the saved notebook and
the view all accept it. Provider data (``provider``, ``provider_data``) stays in the kernel.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from ai_widgets._safe import safe_text
from ai_widgets.arguments import ArgumentPatch
from ai_widgets.messages import (
    FilePart,
    InputRequest,
    Message,
    Part,
    PlanPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    TypedAnswer,
    Usage,
)
from ai_widgets.tools import ToolDefinition, ToolOutcome
from ai_widgets.widget._help import troubleshooting_link
from ai_widgets.widget._thumbnail import image_thumbnail

__all__ = [
    "AFTER_STOP_FIELDS",
    "CYCLE",
    "MAX_SHOWN_DEPTH",
    "TOO_DEEP",
    "TOO_LARGE",
    "after_stop_fields",
    "answer_dict",
    "argument_ops",
    "call_fields",
    "input_request_dict",
    "message_dict",
    "message_fields",
    "part_dict",
    "shown_json",
    "tool_info",
    "usage_dict",
]

#: The deepest nesting shown: a container deeper than this is replaced by :data:`TOO_DEEP`.
MAX_SHOWN_DEPTH = 64
TOO_DEEP = "… (nested too deep to show)"
TOO_LARGE = "… (too large to show)"
CYCLE = "… (contains itself)"
MAX_SHOWN_ITEMS = 1_000_000  # items in nested containers; past it, containers are not shown
#: The most characters of a tool result the widget shows and keeps in its state (so in the saved notebook): its
#: value's strings together, its text, its message. The session, its history file and exports keep the whole result;
#: a 10 MB result made 20 MB of comm messages and 10 MB in the notebook file.
MAX_SHOWN_RESULT_CHARS = 100_000
#: The most items of a tool result's value the widget shows (past them, containers are not shown), and of one of its
#: lists or dicts (past them, a note says how many more there are).
MAX_SHOWN_RESULT_ITEMS = 10_000
MAX_SHOWN_RESULT_ITEMS_EACH = 1_000
#: The longest key of a result's value shown whole (a longer one is cut; it does not count against the characters).
MAX_SHOWN_KEY_CHARS = 200
REPR_CHARS = 200
CONTAINERS = (dict, list, tuple)


def text(value: str) -> str:
    """A plain ``str`` (not a subclass) with lone surrogates replaced."""
    return safe_text(value if type(value) is str else str.__str__(value))


def short_key(name: str, taken: dict[str, Any]) -> str:
    """A long key cut to :data:`MAX_SHOWN_KEY_CHARS`, numbered when another key was cut to the same text."""
    short = name[:MAX_SHOWN_KEY_CHARS] + "…"
    n = 1
    while short in taken:
        n += 1
        short = f"{name[:MAX_SHOWN_KEY_CHARS]}… #{n}"
    return short


def clip_shown(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a note of how many more were not shown."""
    if len(text) <= limit:
        return text
    more = len(text) - limit
    return f"{text[:limit]}… ({more:,} more character{'' if more == 1 else 's'} not shown here)"


def describe(value: Any) -> str:
    """A short text for a value JSON has no form for (it is shown, not kept)."""
    try:
        shown = repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
    if type(shown) is not str:
        return f"<{type(value).__name__}>"
    return text(shown if len(shown) <= REPR_CHARS else shown[: REPR_CHARS - 1] + "…")


def json_scalar(value: Any) -> Any:
    """A JSON scalar for a non-container value; never raises."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return text(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if value.bit_length() > 13_000:  # about 3,900 digits: JSON encoders refuse more than 4,300
            try:
                str(value)
            except ValueError:
                return "… (an integer too long to show)"
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return describe(value)


def json_key(key: Any) -> str:
    """A dict key as JSON writes it (``json.dumps`` turns ``None``, booleans and numbers into text)."""
    if isinstance(key, str):
        return text(key)
    if key is None or isinstance(key, (bool, int, float)):
        try:
            return json.dumps(key)
        except ValueError:
            return describe(key)
    return describe(key)


def shown_json(
    value: Any,
    *,
    max_depth: int = MAX_SHOWN_DEPTH,
    max_items: int = MAX_SHOWN_ITEMS,
    max_items_each: int | None = None,
    max_chars: int | None = None,
) -> Any:
    """A copy of ``value`` that the kernel's JSON packer and the front end accept, whatever ``value`` holds.

    Never raises: lone surrogates become U+FFFD, non-finite floats ``None``, tuples lists, non-string keys text,
    and anything JSON has no form for a short description. A container nested deeper than ``max_depth`` levels
    becomes :data:`TOO_DEEP`, one inside itself :data:`CYCLE`, and containers past a budget of items
    :data:`TOO_LARGE`. The walk is iterative, so no depth raises ``RecursionError``, and its cost
    is bounded by the value's size.

    Args:
        value: What to send.
        max_depth: The deepest container kept; the root container is level 1 (0: a container is not shown).
        max_items: The budget of items in containers.
        max_items_each: The most items of one container; past them, a note says how many more there are (a last
            list item, or the key ``"…"`` of a dict). ``None``: no limit.
        max_chars: The most characters of all the strings together (not keys); past them each string is cut with a
            note (:func:`clip_shown`). ``None``: no limit.
    """
    if max_chars is None:
        if type(value) is str:  # the common case (a text delta): no walk
            return safe_text(value)
        scalar: Callable[[Any], Any] = json_scalar
    else:
        chars = [max_chars]  # what is left of the budget, shared by the strings of the walk

        def scalar(item: Any) -> Any:
            shown = json_scalar(item)
            if type(shown) is not str:
                return shown
            left = chars[0]
            chars[0] = max(0, left - len(shown))
            return clip_shown(shown, left)

    if not isinstance(value, CONTAINERS):
        return scalar(value)
    if max_depth < 1:
        return TOO_DEEP
    root: Any = {} if isinstance(value, dict) else []
    # A depth-first walk on an explicit stack: (source container, its copy, depth) copies the container's children
    # into the copy; (None, None, id) marks the end of a container's subtree, so ``path`` holds the ids of the
    # containers above the one being copied (a child among them is a cycle).
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    path: set[int] = set()
    budget = max_items
    while stack:
        source, target, depth = stack.pop()
        if target is None:
            path.discard(depth)
            continue
        is_dict = isinstance(target, dict)
        try:
            items = list(source.items()) if is_dict else list(enumerate(source))
        except Exception:  # a container subclass whose iteration fails: shown as empty
            continue
        hidden = 0
        if max_items_each is not None and len(items) > max_items_each:
            hidden = len(items) - max_items_each
            items = items[:max_items_each]
        budget -= len(items)
        path.add(id(source))
        stack.append((None, None, id(source)))
        children: list[tuple[Any, Any, int]] = []
        for key, item in items:
            if isinstance(item, CONTAINERS):
                if depth >= max_depth:
                    child: Any = TOO_DEEP
                elif id(item) in path:
                    child = CYCLE
                elif budget < 0:
                    child = TOO_LARGE
                else:
                    child = {} if isinstance(item, dict) else []
                    children.append((item, child, depth + 1))
            else:
                child = scalar(item)
            if is_dict:
                name = json_key(key)
                if max_chars is not None and len(name) > MAX_SHOWN_KEY_CHARS:
                    name = short_key(name, target)
                target[name] = child
            else:
                target.append(child)
        stack += reversed(children)  # taken in order: the first items get the budgets first
        if hidden:
            note = f"… ({hidden:,} more {'key' if is_dict else 'item'}{'' if hidden == 1 else 's'} not shown here)"
            if is_dict:
                target["…"] = note
            else:
                target.append(note)
    return root


def usage_dict(usage: Usage) -> dict[str, Any]:
    """Usage as JSON (its cost as the decimal's text)."""
    return shown_json(usage.to_dict())  # type: ignore[no-any-return]


def outcome_dict(outcome: ToolOutcome | None) -> dict[str, Any] | None:
    """An outcome as JSON (the exception object itself stays in the kernel).

    The value is walked here, not by pydantic, whose serialiser refuses deep values.
    """
    if outcome is None:
        return None
    try:
        rest = outcome.model_dump(exclude={"value"})
    except Exception:
        rest = {"message": "(this result cannot be shown)"}
    # The value shows as many levels as arguments do, within MAX_SHOWN_RESULT_CHARS and the MAX_SHOWN_RESULT_ITEMS.
    value = shown_json(
        getattr(outcome, "value", None),
        max_items=MAX_SHOWN_RESULT_ITEMS,
        max_items_each=MAX_SHOWN_RESULT_ITEMS_EACH,
        max_chars=MAX_SHOWN_RESULT_CHARS,
    )
    for key in ("text", "message"):
        if isinstance(rest.get(key), str):
            rest[key] = clip_shown(rest[key], MAX_SHOWN_RESULT_CHARS)
    shown: dict[str, Any] = shown_json({"status": getattr(outcome, "status", "failure"), "value": None, **rest})
    shown["value"] = value
    return shown


def progress(part: ToolCallPart) -> dict[str, Any] | None:
    progress = part.progress
    if progress is None:
        return None
    return {"fraction": json_scalar(progress.fraction), "message": json_scalar(progress.message)}


#: A tool call's fields that a ``call`` op carries: the one list of them on this side (the front end's is
#: ``CALL_FIELDS`` in js/src/live.ts; the trace fixture records this one and a JS test compares them).
CALL_FIELDS = (
    "state",
    "progress",
    "log_lines",
    "outcome",
    "edited_arguments",
    "approval_reason",
    "decision",
    "decision_reason",
    "decision_remembered",
    "provider_executed",
    "approval_requested_at",
    "run_started_at",
    "finished_at",
    "input_request",
    "unasked_reason",
)
#: What a ``call`` op may also carry about a sync call's thread after the call ended (cancelled, stopped, timed out):
#: display only, never the call's record, so a view applies them to a finished message too (the front end's
#: ``AFTER_STOP_FIELDS``). ``stopping``: the thread has not returned yet; ``late``: ``{"kind": "returned" |
#: "raised", "preview": text}``, what it returned or raised after the stop (discarded), or ``None``.
AFTER_STOP_FIELDS = ("stopping", "late")
#: A message's fields that a ``msg`` op carries (the front end's ``MESSAGE_FIELDS``).
MESSAGE_FIELDS = ("status", "status_text", "finish_reason", "usage", "error", "error_kind", "error_help")


def call_fields(part: ToolCallPart) -> dict[str, Any]:
    """The fields of a call that change after it started (everything but its id, name and arguments). Provider
    data is never among them."""
    return {
        "state": json_scalar(part.state.value),
        "progress": progress(part),
        "log_lines": [json_scalar(line) for line in part.log_lines],
        "outcome": outcome_dict(part.outcome),
        "edited_arguments": shown_json(part.edited_arguments),
        "approval_reason": json_scalar(part.approval_reason),
        "decision": json_scalar(part.decision),
        "decision_reason": json_scalar(part.decision_reason),
        "decision_remembered": bool(part.decision_remembered),
        "provider_executed": bool(part.provider_executed),
        "approval_requested_at": json_scalar(part.approval_requested_at),
        "run_started_at": json_scalar(part.run_started_at),
        "finished_at": json_scalar(part.finished_at),
        "input_request": input_request_dict(part.input_request),
        "unasked_reason": json_scalar(part.unasked_reason),
    }


#: The deepest a form's schema is shown (a flat schema is three levels: the object, a field, a list's items).
MAX_FORM_DEPTH = 8


def input_request_dict(request: InputRequest | None) -> dict[str, Any] | None:
    """What a call waiting for input asks, as the card shows it: the message (text), the mode, a form's flat schema,
    a link's URL and its host (data for the card, never markup), and who asks."""
    if request is None:
        return None
    return {
        "message": json_scalar(request.message),
        "mode": json_scalar(request.mode),
        "schema": None if request.schema is None else shown_json(request.schema, max_depth=MAX_FORM_DEPTH),
        "url": json_scalar(request.url),
        "domain": json_scalar(request.domain),
        "asker": json_scalar(request.asker),
    }


def after_stop_fields(phase: str, preview: str | None) -> dict[str, Any]:
    """The :data:`AFTER_STOP_FIELDS` for a :class:`~ai_widgets.changes.ToolCallStraggling` change's phase
    (``stopping``, ``returned`` or ``raised``) and preview."""
    if phase == "stopping":
        return {"stopping": True, "late": None}
    return {"stopping": False, "late": {"kind": json_scalar(phase), "preview": json_scalar(preview or "")}}


def part_dict(part: Part) -> dict[str, Any]:
    """A part as the front end shows it; a file without its bytes (its name, type and size are what a chip shows,
    and megabytes of base64 would go into every view and the saved notebook)."""
    match part:
        case TextPart():
            if part.answer is not None:
                return {"kind": "text", "text": shown_json(part.text), "answer": answer_dict(part.answer)}
            return {"kind": "text", "text": shown_json(part.text)}
        case ReasoningPart():
            return {"kind": "reasoning", "text": shown_json(part.text)}
        case ToolCallPart():
            return {
                "kind": "tool_call",
                "tool_call_id": json_scalar(part.tool_call_id),
                "tool_name": json_scalar(part.tool_name),
                "parsed_arguments": shown_json(part.parsed_arguments),
                "started_at": json_scalar(part.started_at),
                **call_fields(part),
                **({} if part.view is None else {"view": shown_json(part.view.to_dict())}),
            }
        case PlanPart():
            return {"kind": "plan", "entries": shown_json([entry.to_dict() for entry in part.entries])}
        case FilePart():
            return {
                "kind": "file",
                "media_type": json_scalar(part.media_type),
                "name": json_scalar(part.name),
                "size": part.size,
                "url": json_scalar(part.url),
            }


def answer_dict(answer: TypedAnswer) -> dict[str, Any]:
    """A typed answer's mark as the front end shows it: ``parsed`` is what ``answer`` ops patch as the text streams,
    ``value`` the validated object once ``state`` is ``valid``; ``parse_error`` says the text is not JSON."""
    return {
        "type_name": json_scalar(answer.type_name),
        "state": json_scalar(answer.state),
        "parsed": shown_json(answer.parsed),
        "value": shown_json(answer.value),
        "errors": json_scalar(answer.errors),
        "refused": [json_scalar(errors) for errors in answer.refused],
        "parse_error": json_scalar(answer.parse_error),
    }


def message_fields(message: Message) -> dict[str, Any]:
    """The fields of a message that change while it is in progress."""
    return {
        "status": message.status.value,
        "status_text": json_scalar(message.status_text),
        "finish_reason": None if message.finish_reason is None else message.finish_reason.value,
        "usage": usage_dict(message.usage),
        "error": json_scalar(message.error),
        # What kind of failure or limit (the view's action: Retry or Continue), and its troubleshooting entry.
        "error_kind": None if message.error_kind is None else message.error_kind.value,
        "error_help": troubleshooting_link(message),
    }


def attachment_marked(shown: dict[str, Any], message: Message, index: int) -> dict[str, Any]:
    """A user message is the typed text and then its attachments' parts (``send(text, attach=...)``): a text part
    after the first is an attachment's text view, which the front end shows folded under its chip."""
    if message.role is Role.USER and index > 0 and shown["kind"] == "text":
        shown["attachment"] = True
    return shown


def message_dict(message: Message, index: int) -> dict[str, Any]:
    """A whole message as the front end shows it; a user message with images also has ``thumbnails`` (part index
    -> a small PNG ``data:`` URL, for their chips: the parts themselves never carry a file's bytes)."""
    shown = {
        "id": json_scalar(message.id),
        "index": index,
        "role": message.role.value,
        "created_at": json_scalar(message.created_at),
        "parts": [attachment_marked(part_dict(part), message, i) for i, part in enumerate(message.parts)],
        **message_fields(message),
    }
    if message.role is Role.USER:
        thumbnails = {
            str(i): thumbnail
            for i, part in enumerate(message.parts)
            if isinstance(part, FilePart) and (thumbnail := image_thumbnail(part)) is not None
        }
        if thumbnails:
            shown["thumbnails"] = thumbnails
    return shown


def tool_info(definition: ToolDefinition) -> dict[str, Any]:
    """What a card shows about a tool."""
    info: dict[str, Any] = {
        "title": definition.title,
        "icon": definition.icon,
        "risk": definition.risk.value,
        "description": definition.description,
        "requires_approval": definition.requires_approval,
        "parameters": definition.parameters,  # the fields of the approval prompt's Edit form
    }
    if definition.app is not None:
        info["app"] = definition.app  # the ui:// page of its MCP App (the card shows it; the apps trait)
    if definition.code_arguments:
        info["code_arguments"] = dict(definition.code_arguments)  # shown and edited as code
    return shown_json(info)  # type: ignore[no-any-return]


def argument_ops(patches: Iterable[ArgumentPatch]) -> list[list[Any]]:
    """Argument patches as ``[op, path, value]`` ops, capped like the whole arguments (:func:`shown_json`), so that
    a view that applies them holds what :func:`part_dict` sends. A patch lands at level ``len(path) + 1``: one
    inside a container that is not shown is dropped, and its value keeps only the levels left."""
    return [
        [
            patch.op,
            [json_scalar(step) for step in patch.path],
            shown_json(patch.value, max_depth=MAX_SHOWN_DEPTH - depth),
        ]
        for patch in patches
        if (depth := len(patch.path)) <= MAX_SHOWN_DEPTH
    ]
