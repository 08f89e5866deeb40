"""Front-end actions: the messages a view sends to the kernel, validated before anything happens.

A refused message gets an error back that names what was wrong; every value it echoes is clipped, so a huge or
deeply nested field never makes a huge reply.
"""

from __future__ import annotations

import base64
import binascii
import reprlib
from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ai_widgets._safe import safe_text
from ai_widgets.approval import ApprovalDecision
from ai_widgets.attachments import File

__all__ = ["Action", "ActionError", "PastedFile", "clip", "parse_action"]

MAX_MESSAGE_CHARS = 200_000
#: The longest variable name after ``@``, and the most names one message attaches.
MAX_NAME_CHARS = 200
MAX_ATTACHED_NAMES = 20
#: A file pasted or dropped into the input box: the largest, the most bytes of them in one message, and the most
#: files. They come base64 in the ``send`` (a third larger): Jupyter's websocket takes 10 MiB a message by default.
MAX_PASTED_BYTES = 5 * 1024 * 1024
MAX_PASTED_TOTAL_BYTES = 7 * 1024 * 1024
MAX_PASTED_FILES = 10
#: The longest echo of a front-end value in an error, and the longest error sent back.
MAX_ECHO_CHARS = 80
MAX_ERROR_CHARS = 1_000
MAX_PROBLEMS = 5


class ActionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SyncAction(ActionModel):
    """A view asks for what it lacks (sent once by each new view): it holds the first ``have`` finished messages,
    the last of them ``last``."""

    type: Literal["sync"]
    have: Annotated[int, Field(ge=0, strict=True)] = 0
    last: Annotated[str, Field(max_length=512)] | None = None


#: A variable's name after ``@`` (an identifier; what IPython's namespace can hold is checked there).
VariableName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"^[^\W\d]\w*$")]


class OlderAction(ActionModel):
    """A view asks for the finished messages before the first it holds: ``before``, at position ``at``."""

    type: Literal["older"]
    at: Annotated[int, Field(gt=0, strict=True)]
    before: Annotated[str, Field(min_length=1, max_length=512)]


class PastedFile(ActionModel):
    """A file the person pasted or dropped into the input box: its name, its media type (as the browser says it)
    and its bytes, base64."""

    name: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[^\x00-\x1f\x7f/\\]+$")]
    media_type: Annotated[str, Field(max_length=255, pattern=r"^[\w.+-]+/[\w.+-]+$")]
    data: Annotated[str, Field(max_length=(MAX_PASTED_BYTES + 2) // 3 * 4)]

    def file(self) -> File:
        """The file, its bytes decoded.

        Raises:
            ValueError: ``data`` is not base64, or holds more than ``MAX_PASTED_BYTES``.
        """
        try:
            raw = base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{self.name}: its data is not base64") from None
        if len(raw) > MAX_PASTED_BYTES:
            raise ValueError(f"{self.name} is larger than {MAX_PASTED_BYTES // (1024 * 1024)} MB")
        return File(raw, self.media_type, name=self.name)


class SendAction(ActionModel):
    """The person sends a message, with the kernel variables attached by ``@name`` and the files pasted or dropped
    into the input box (``id``: the view's own tag for this send, echoed in the ``sent`` or ``error`` answer)."""

    type: Literal["send"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]
    attach: Annotated[tuple[VariableName, ...], Field(max_length=MAX_ATTACHED_NAMES)] = ()
    files: Annotated[tuple[PastedFile, ...], Field(max_length=MAX_PASTED_FILES)] = ()
    id: Annotated[str, Field(min_length=1, max_length=128)] | None = None

    def pasted(self) -> list[File]:
        """The pasted files, decoded.

        Raises:
            ValueError: One is not base64 or too large, or together they hold more than ``MAX_PASTED_TOTAL_BYTES``.
        """
        files = [pasted.file() for pasted in self.files]
        if sum(len(f.data) for f in files) > MAX_PASTED_TOTAL_BYTES:
            raise ValueError(f"the files come to more than {MAX_PASTED_TOTAL_BYTES // (1024 * 1024)} MB together")
        return files


class CompleteAction(ActionModel):
    """The input box asks which kernel variables start with ``prefix`` (what follows an ``@``)."""

    type: Literal["complete"]
    prefix: Annotated[str, Field(max_length=MAX_NAME_CHARS, pattern=r"^\w*$")]
    request: Annotated[int, Field(ge=0, strict=True)]


class DescribeAction(ActionModel):
    """The input box attaches ``@name`` and asks what its chip shows (kind, size, a thumbnail)."""

    type: Literal["describe"]
    name: VariableName
    request: Annotated[int, Field(ge=0, strict=True)]


#: The longest prompt name, argument name and argument value the input box sends, and the most arguments.
MAX_PROMPT_NAME_CHARS = 300
MAX_PROMPT_ARGUMENTS = 50


class PromptsAction(ActionModel):
    """The input box asks for the prompts of the session's MCP servers (``/`` typed at its start); ``request``
    is echoed in the ``prompts`` answer."""

    type: Literal["prompts"]
    request: Annotated[int, Field(ge=0, strict=True)]


class PromptAction(ActionModel):
    """The person sends prompt ``name`` (as the ``prompts`` answer named it) with its ``arguments`` (strings, as
    MCP prompt arguments are); ``id`` is echoed in the ``sent`` or ``error`` answer."""

    type: Literal["prompt"]
    name: Annotated[str, Field(min_length=1, max_length=MAX_PROMPT_NAME_CHARS)]
    arguments: Annotated[
        dict[
            Annotated[str, Field(min_length=1, max_length=MAX_PROMPT_NAME_CHARS)],
            Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)],
        ],
        Field(max_length=MAX_PROMPT_ARGUMENTS),
    ] = {}
    id: Annotated[str, Field(min_length=1, max_length=128)] | None = None


class StopAction(ActionModel):
    """The person stops the running turn."""

    type: Literal["stop"]


class RunUnaskedAction(ActionModel):
    """The person turns "Run code without asking" on or off (this session only)."""

    type: Literal["run_unasked"]
    on: Annotated[bool, Field(strict=True)]


class ApproveAction(ActionModel):
    """The person decides on a call that waits; with ``arguments``, they edited the arguments before allowing."""

    type: Literal["approve"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    decision: ApprovalDecision
    reason: Annotated[str, Field(max_length=2000)] | None = None
    arguments: dict[str, Any] | None = None


class CancelAction(ActionModel):
    """The person cancels one call, waiting for approval or running."""

    type: Literal["cancel"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    reason: Annotated[str, Field(max_length=2000)] | None = None


class RespondAction(ActionModel):
    """The person answers what a waiting call's server asks (``awaiting_input``): ``accept`` (with the form's
    ``content``), ``decline`` or ``cancel``."""

    type: Literal["respond"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class RevokeAction(ActionModel):
    """The person withdraws "allow always" for a tool."""

    type: Literal["revoke"]
    tool_name: Annotated[str, Field(min_length=1, max_length=128)]


class ContinueAction(ActionModel):
    """The person lets the model go on after the tool-round limit."""

    type: Literal["continue"]


class EditAction(ActionModel):
    """The person edits one of their messages (``message_id``) to ``text``: the turn runs again from there."""

    type: Literal["edit"]
    message_id: Annotated[str, Field(min_length=1, max_length=512)]
    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]


class RegenerateAction(ActionModel):
    """The person asks for another answer to their last message (Regenerate, or Retry after an error or a stop)."""

    type: Literal["regenerate"]


class SwitchBranchAction(ActionModel):
    """The person shows branch ``index`` at the place of message ``message_id`` (the ``< 1/2 >`` switcher)."""

    type: Literal["switch_branch"]
    message_id: Annotated[str, Field(min_length=1, max_length=512)]
    index: Annotated[int, Field(ge=0, strict=True)]


class NewChatAction(ActionModel):
    """The person starts a new chat (New chat): the conversation so far is kept as an earlier branch at its start."""

    type: Literal["new_chat"]


class BenchOpenAction(ActionModel):
    """The person asks to run a finished call again by hand ("Run again"): a bench entry with its arguments."""

    type: Literal["bench_open"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]


class BenchRunAction(ActionModel):
    """The person runs a bench entry's tool with the arguments of its form."""

    type: Literal["bench_run"]
    id: Annotated[str, Field(min_length=1, max_length=128)]
    arguments: dict[str, Any]


class BenchCloseAction(ActionModel):
    """The person closes a bench entry (its run, if one goes on, is stopped)."""

    type: Literal["bench_close"]
    id: Annotated[str, Field(min_length=1, max_length=128)]


class AppOpenAction(ActionModel):
    """A card asks for the page of its tool's MCP App (the ``ui://`` resource its definition names)."""

    type: Literal["app_open"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]


class ResourceOpenAction(ActionModel):
    """A card asks to read a resource its call's result links to (an MCP resource link or embedded resource), to
    show it in the card."""

    type: Literal["resource_open"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    uri: Annotated[str, Field(min_length=1, max_length=4096)]


class AppCallAction(ActionModel):
    """The MCP App in a call's card calls a tool of its server (``tools/call``): it runs like a model's call,
    approval included, and its result goes back to the app as the answer to its request ``request``."""

    type: Literal["app_call"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    request: Annotated[int, Field(ge=0, le=2**53)]
    name: Annotated[str, Field(min_length=1, max_length=256)]
    arguments: dict[str, Any] = Field(default_factory=dict)


class UndoCallAction(ActionModel):
    """The person undoes what a finished code call's run changed (Undo on its card): the session's ``KernelTools``
    puts back what it rebound or deleted and removes what it created."""

    type: Literal["undo_call"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]


class InsertCellAction(ActionModel):
    """The person puts the code a call ran into a new notebook cell (Insert as cell on its card)."""

    type: Literal["insert_cell"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]


ACTIONS = (
    SyncAction,
    OlderAction,
    SendAction,
    CompleteAction,
    DescribeAction,
    PromptsAction,
    PromptAction,
    StopAction,
    ApproveAction,
    CancelAction,
    RespondAction,
    RevokeAction,
    ContinueAction,
    EditAction,
    RegenerateAction,
    SwitchBranchAction,
    NewChatAction,
    BenchOpenAction,
    BenchRunAction,
    BenchCloseAction,
    AppOpenAction,
    AppCallAction,
    ResourceOpenAction,
    RunUnaskedAction,
    UndoCallAction,
    InsertCellAction,
)
TYPES: tuple[str, ...] = tuple(get_args(cls.model_fields["type"].annotation)[0] for cls in ACTIONS)

Action: TypeAlias = Annotated[
    SyncAction
    | OlderAction
    | SendAction
    | CompleteAction
    | DescribeAction
    | PromptsAction
    | PromptAction
    | StopAction
    | ApproveAction
    | CancelAction
    | RespondAction
    | RevokeAction
    | ContinueAction
    | EditAction
    | RegenerateAction
    | SwitchBranchAction
    | NewChatAction
    | BenchOpenAction
    | BenchRunAction
    | BenchCloseAction
    | AppOpenAction
    | AppCallAction
    | ResourceOpenAction
    | RunUnaskedAction
    | UndoCallAction
    | InsertCellAction,
    Field(discriminator="type"),
]

ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)

REPR = reprlib.Repr()
REPR.maxlevel = 2
REPR.maxstring = MAX_ECHO_CHARS
REPR.maxother = MAX_ECHO_CHARS
REPR.maxlong = MAX_ECHO_CHARS
for _name in ("maxdict", "maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(REPR, _name, 3)


class ActionError(ValueError):
    """A front-end message that is not a valid action."""


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters (with an ellipsis) and made UTF-8-safe."""
    text = safe_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def echo(value: Any) -> str:
    """A short, bounded repr of a value from the front end (never raises, whatever its size or depth)."""
    if isinstance(value, str):
        return repr(clip(value))
    try:
        shown = REPR.repr(value)
    except Exception:
        shown = f"<{type(value).__name__}>"
    return clip(shown)


def problems(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    shown = [
        f"{clip('.'.join(str(p) for p in error['loc']) or 'message')}: {clip(error['msg'], 200)}"
        for error in errors[:MAX_PROBLEMS]
    ]
    if len(errors) > MAX_PROBLEMS:
        shown.append(f"and {len(errors) - MAX_PROBLEMS} more")
    return "; ".join(shown)


def parse_action(content: Any) -> Action:
    """Validates a message from the front end.

    Raises:
        ActionError: It is not one of the actions, or its fields are wrong; the message says which, in at most
            :data:`MAX_ERROR_CHARS` characters.
    """
    if not isinstance(content, dict):
        raise ActionError(f"a front-end message must be an object, not {type(content).__name__}")
    kind = content.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        expected = ", ".join(repr(t) for t in TYPES)
        raise ActionError(f"unknown front-end message type {echo(kind)}: expected one of {expected}")
    try:
        return ADAPTER.validate_python(content)
    except ValidationError as exc:
        raise ActionError(
            clip(f"invalid {kind!r} message from the front end: {problems(exc)}", MAX_ERROR_CHARS)
        ) from None
