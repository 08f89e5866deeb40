"""A conversation kept in a JSON file, so it survives kernel restarts (``ChatSession(history=path)``).

The file is the format of :func:`ai_widgets.messages.dump_messages`. It is rewritten whole at each checkpoint (a
message added, a call starting to wait for a decision, a turn's end, a clear), atomically: written to a temporary
file beside it and renamed over it, so a crash mid-write never leaves a broken file. A file that is corrupt or from
a newer format is never overwritten: loading it fails with an error that names it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ai_widgets.messages import Message, MessageStatus, Role, ToolCallState, dump_messages, load_messages
from ai_widgets.tools import ToolOutcome

__all__ = ["HistoryError", "HistoryFile"]

_KERNEL_STOPPED = "Not run: the kernel stopped before it ran."


class HistoryError(ValueError):
    """A history file cannot be read (corrupt, or from a newer ai_widgets); the file is left as it is."""


class HistoryFile:
    """One conversation's file.

    Args:
        path: The JSON file; it need not exist yet (its folder must).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise HistoryError(f"history={str(path)!r} is a folder; give a file path such as 'chat.json'")

    def load(self) -> list[Message]:
        """The conversation in the file (none if there is no file yet), made ready to continue: a turn that was
        running when the kernel stopped ends as cancelled, and its open calls get an outcome saying they never ran.

        Raises:
            HistoryError: The file cannot be read, is corrupt, or is from a newer format.
        """
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise HistoryError(f"cannot read the history file {str(self.path)!r}: {exc}") from exc
        try:
            messages = load_messages(text)
        except ValueError as exc:
            raise HistoryError(
                f"the history file {str(self.path)!r} is not a conversation this version can read ({exc}); "
                "it was left untouched. Move it away, or pass another history= path."
            ) from None
        for message in messages:
            _close_interrupted(message)
        return messages

    def save(self, messages: Iterable[Message]) -> None:
        """Writes the conversation atomically (a temporary file, then a rename over the old one).

        Raises:
            OSError: The file cannot be written (the old one, if any, is left as it was).
        """
        text = dump_messages(messages)
        folder = self.path.parent
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def _close_interrupted(message: Message) -> None:
    """A message saved mid-turn: its open calls never ran (the kernel stopped), and the turn is over."""
    if message.role is not Role.ASSISTANT:
        return
    for part in message.tool_calls:
        if not part.state.terminal:
            state = ToolCallState.FAILED if part.state is ToolCallState.RUNNING else ToolCallState.SKIPPED
            message_text = (
                "Interrupted: the kernel stopped while it ran." if state is ToolCallState.FAILED else _KERNEL_STOPPED
            )
            part.move(state, ToolOutcome.failure(message_text, retryable=True))
    if message.status is MessageStatus.IN_PROGRESS:
        message.status = MessageStatus.CANCELLED
        message.error = "The kernel stopped before this turn finished."
