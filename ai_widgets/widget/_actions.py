"""Front-end actions: the messages a view sends to the kernel, validated before anything happens."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ai_widgets.approval import ApprovalDecision

__all__ = ["Action", "ActionError", "parse_action"]

MAX_MESSAGE_CHARS = 200_000


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SyncAction(_Action):
    """A view asks for the live state (sent once by each new view)."""

    type: Literal["sync"]


class SendAction(_Action):
    """The person sends a message."""

    type: Literal["send"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]


class StopAction(_Action):
    """The person stops the running turn."""

    type: Literal["stop"]


class ApproveAction(_Action):
    """The person decides on a call that waits."""

    type: Literal["approve"]
    tool_call_id: Annotated[str, Field(min_length=1, max_length=512)]
    decision: ApprovalDecision
    reason: Annotated[str, Field(max_length=2000)] | None = None


class RevokeAction(_Action):
    """The person withdraws "allow always" for a tool."""

    type: Literal["revoke"]
    tool_name: Annotated[str, Field(min_length=1, max_length=128)]


class ContinueAction(_Action):
    """The person lets the model go on after the tool-round limit."""

    type: Literal["continue"]


Action: TypeAlias = Annotated[
    SyncAction | SendAction | StopAction | ApproveAction | RevokeAction | ContinueAction,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)


class ActionError(ValueError):
    """A front-end message that is not a valid action."""


def parse_action(content: Any) -> Action:
    """Validates a message from the front end.

    Raises:
        ActionError: It is not one of the actions, or its fields are wrong; the message says which.
    """
    if not isinstance(content, dict):
        raise ActionError(f"a front-end message must be an object, not {type(content).__name__}")
    try:
        return _ADAPTER.validate_python(content)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'message'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        kind = content.get("type")
        raise ActionError(f"invalid {kind!r} message from the front end: {problems}") from None
