"""The conversation's earlier branches: what an edit or a regenerate replaced, kept, and switched back to.

``session.messages`` is the active path, the conversation the model is sent. Where an edit or a regenerate replaced
the messages from some position on, those messages are kept as an alternative at that place (a *fork*), with the new
ones as the next alternative; a switch puts another alternative on the active path and keeps the one it replaces.
Nothing is ever deleted.

A fork is keyed by the id of the message before it (``""`` at the conversation's start), so it stays valid while the
path it sits on is itself an inactive alternative of an earlier fork: each message is kept in exactly one place,
either on the active path or in one stored alternative (whose own forks are keyed by its messages' ids).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ai_widgets.messages import Message, Role, conversation_markdown
from ai_widgets.messages._json import conversation_json, read_field

__all__ = [
    "BranchError",
    "BranchPoint",
    "ConversationBranches",
    "branches_json",
    "branches_markdown",
    "conversation_json_with",
    "conversation_with_branches",
    "message_position",
    "regenerate_position",
    "user_position",
]


class BranchError(ValueError):
    """An edit, regenerate or branch switch that cannot be done: an unknown message, one that is not a user message,
    a branch that does not exist, or nothing to regenerate. Nothing changed."""


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """The alternatives at one place of the conversation (:meth:`ChatSession.branches`).

    Attributes:
        position: Where they start in ``session.messages`` (the index of the active alternative's first message).
        alternatives: The first message of each alternative, oldest first: the user messages an edit replaced, or
            the replies a regenerate replaced. One alone when nothing was replaced there.
        active: The index in ``alternatives`` of the one ``session.messages`` follows.
    """

    position: int
    alternatives: tuple[Message, ...]
    active: int

    @property
    def count(self) -> int:
        """How many alternatives there are (the ``2`` of ``< 1/2 >``)."""
        return len(self.alternatives)


@dataclass(slots=True)
class Fork:
    # Each alternative's messages from the fork on; ``None`` for the active one, which is the enclosing path itself.
    alternatives: list[list[Message] | None] = field(default_factory=list)
    active: int = 0


class ConversationBranches:
    """The forks of one conversation, beside its active path (which the session keeps as its message list)."""

    def __init__(self) -> None:
        self._forks: dict[str, Fork] = {}

    def __bool__(self) -> bool:
        return bool(self._forks)

    # --- reading --------------------------------------------------------------------------------------------------

    def point(self, messages: Sequence[Message], position: int) -> BranchPoint:
        """The alternatives at ``position`` of the active path ``messages``."""
        fork = self._forks.get(fork_key(messages, position))
        if fork is None:
            return BranchPoint(position, (messages[position],), 0)
        firsts = tuple(
            messages[position] if alternative is None else alternative[0] for alternative in fork.alternatives
        )
        return BranchPoint(position, firsts, fork.active)

    def points(self, messages: Sequence[Message]) -> Iterator[BranchPoint]:
        """Every place of the active path with more than one alternative, in order."""
        for position in range(len(messages)):
            if fork_key(messages, position) in self._forks:
                yield self.point(messages, position)

    def alternative(self, messages: Sequence[Message], position: int, index: int) -> list[Message]:
        """The messages of alternative ``index`` at ``position`` of the active path ``messages``, from there on.

        Raises:
            BranchError: There is no such alternative there.
        """
        fork = self._forks.get(fork_key(messages, position))
        count = 1 if fork is None else len(fork.alternatives)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise BranchError(f"there is no branch {index!r} at message {position}: it has {count} (0 to {count - 1})")
        chosen = None if fork is None else fork.alternatives[index]
        return list(messages[position:] if chosen is None else chosen)

    def stored(self) -> Iterator[Message]:
        """Every message kept off the active path (each once)."""
        for fork in self._forks.values():
            for alternative in fork.alternatives:
                yield from alternative or ()

    # --- changing -------------------------------------------------------------------------------------------------

    def replace_from(self, messages: list[Message], position: int) -> None:
        """Keeps ``messages[position:]`` as an alternative at ``position`` and removes it from the path, so the new
        messages appended there become the next, active, alternative."""
        tail = messages[position:]
        if not tail:
            return  # nothing is replaced: the new messages simply go on the path
        key = fork_key(messages, position)
        fork = self._forks.get(key)
        if fork is None:
            fork = self._forks[key] = Fork([tail, None], 1)
        else:
            fork.alternatives[fork.active] = tail
            fork.alternatives.append(None)
            fork.active = len(fork.alternatives) - 1
        del messages[position:]

    def switch(self, messages: list[Message], position: int, index: int) -> bool:
        """Puts alternative ``index`` at ``position`` on the path (keeping the one it replaces); whether it changed.

        Raises:
            BranchError: There is no such alternative there.
        """
        fork = self._forks.get(fork_key(messages, position))
        count = 1 if fork is None else len(fork.alternatives)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise BranchError(f"there is no branch {index!r} at message {position}: it has {count} (0 to {count - 1})")
        if fork is None or index == fork.active:
            return False
        chosen = fork.alternatives[index]
        assert chosen is not None
        fork.alternatives[fork.active] = messages[position:]
        fork.alternatives[index] = None
        fork.active = index
        messages[position:] = chosen
        return True

    def clear(self) -> None:
        """Forgets every fork (the conversation was cleared)."""
        self._forks.clear()

    # --- saving ---------------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: per fork, its active index and each stored alternative's messages."""
        return {
            key: {
                "active": fork.active,
                "alternatives": [None if alt is None else [m.to_dict() for m in alt] for alt in fork.alternatives],
            }
            for key, fork in self._forks.items()
        }

    @classmethod
    def from_dict(cls, data: Any, messages: Sequence[Message]) -> ConversationBranches:
        """Rebuilds the forks from :meth:`to_dict`'s output, checked against the active path ``messages``.

        Raises:
            ValueError: The data is malformed, or a message id appears twice.
        """
        if not isinstance(data, dict):
            raise ValueError(f"'branches' must be an object, not {type(data).__name__}")
        branches = cls()
        for key, entry in data.items():
            if not isinstance(entry, dict):
                raise ValueError(f"branch point {key!r} must be an object")
            alternatives_data = read_field(entry, "alternatives", list)
            active = read_field(entry, "active", int)
            if not 0 <= active < len(alternatives_data) or len(alternatives_data) < 2:
                raise ValueError(f"branch point {key!r}: active {active} of {len(alternatives_data)} alternatives")
            alternatives: list[list[Message] | None] = []
            for index, alternative in enumerate(alternatives_data):
                if (alternative is None) != (index == active):
                    raise ValueError(f"branch point {key!r}: only the active alternative is left out")
                if alternative is None:
                    alternatives.append(None)
                    continue
                if not isinstance(alternative, list) or not alternative:
                    raise ValueError(f"branch point {key!r}: an alternative is a non-empty list of messages")
                alternatives.append([Message.from_dict(m) for m in alternative])
            branches._forks[key] = Fork(alternatives, active)
        seen: set[str] = set()
        for message in (*messages, *branches.stored()):
            if message.id in seen:
                raise ValueError(f"message id {message.id!r} appears twice in the conversation and its branches")
            seen.add(message.id)
        return branches


def user_position(messages: Sequence[Message], message_id: object) -> int:
    """The position of the user message ``message_id`` on the active path.

    Raises:
        BranchError: There is no such message on the path, or it is not a user message.
    """
    position = message_position(messages, message_id)
    if messages[position].role is not Role.USER:
        raise BranchError(f"message {message_id!r} is the assistant's: only a user message can be edited")
    return position


def message_position(messages: Sequence[Message], message_id: object) -> int:
    """The position of ``message_id`` on the active path.

    Raises:
        BranchError: There is no such message on the path.
    """
    if not isinstance(message_id, str):
        raise BranchError(f"a message id is text, not {type(message_id).__name__}")
    for position in range(len(messages) - 1, -1, -1):
        if messages[position].id == message_id:
            return position
    shown = message_id if len(message_id) <= 80 else message_id[:80] + "…"
    raise BranchError(f"there is no message {shown!r} in the conversation (as it is now, on its active branch)")


def regenerate_position(messages: Sequence[Message]) -> int:
    """Where a regenerate starts its new branch: right after the last user message.

    Raises:
        BranchError: The conversation has no user message.
    """
    for position in range(len(messages) - 1, -1, -1):
        if messages[position].role is Role.USER:
            return position + 1
    raise BranchError("there is nothing to regenerate: the conversation has no user message")


def conversation_with_branches(messages: Sequence[Message], branches: ConversationBranches) -> str:
    """The conversation's JSON text (:func:`~ai_widgets.messages.dump_messages`'s format) with its forks under
    ``"branches"``; a reader of that format that knows nothing of branches reads the active path."""
    text = conversation_json(m.to_dict() for m in messages)
    if not branches:
        return text
    return conversation_json_with(text, branches_json(branches))


def branches_markdown(branches: ConversationBranches) -> str:
    """The earlier branches as markdown (for an export beside the active path's transcript); ``""`` when none."""
    blocks: list[str] = []
    for fork in branches._forks.values():
        for number, alternative in enumerate(fork.alternatives, start=1):
            if alternative is None:
                continue
            blocks.append(
                f"### Earlier branch {number} of {len(fork.alternatives)}\n\n{conversation_markdown(alternative)}"
            )
    return "\n\n".join(blocks)


def branches_json(branches: ConversationBranches) -> str:
    """The forks as JSON text (ASCII, as the history file holds it)."""
    return json.dumps(branches.to_dict(), ensure_ascii=True, allow_nan=False)


def conversation_json_with(conversation: str, branches: str) -> str:
    """A conversation's JSON text with ``"branches": <branches>`` added before its closing brace."""
    return f'{conversation[:-1]}, "branches": {branches}}}'


def fork_key(messages: Sequence[Message], position: int) -> str:
    return messages[position - 1].id if position else ""
