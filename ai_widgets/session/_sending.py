"""What ``ChatSession.send_messages`` sends, checked: messages of text and files, copied in, the last the person's."""

from __future__ import annotations

from collections.abc import Sequence

from ai_widgets._safe import safe_text
from ai_widgets.messages import FilePart, Message, Role, TextPart

__all__ = ["checked_messages", "files_of"]


def checked_messages(messages: Sequence[Message]) -> list[Message]:
    """``send_messages``' messages, checked and copied (finished, new ids): text and files only, the last a user's.

    Raises:
        ValueError: Saying which message is wrong, and why.
    """
    if isinstance(messages, Message) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("send_messages() needs a non-empty list of messages, the last one the user's")
    shaped: list[Message] = []
    for number, message in enumerate(messages, 1):
        if not isinstance(message, Message):
            raise ValueError(f"send_messages(): item {number} is a {type(message).__name__}, not a Message")
        copied: list[TextPart | FilePart] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                copied.append(TextPart(safe_text(part.text)))
            elif isinstance(part, FilePart):
                copied.append(part)
            else:
                raise ValueError(
                    f"send_messages(): message {number} holds a {type(part).__name__}; only text and files can be sent"
                )
        if not any(isinstance(part, FilePart) or part.text.strip() for part in copied):
            raise ValueError(f"send_messages(): message {number} holds no text or file")
        shaped.append(Message(message.role, copied))
    if shaped[-1].role is not Role.USER:
        raise ValueError("send_messages(): the last message must be the user's (the one the model answers)")
    return shaped


def files_of(messages: Sequence[Message]) -> list[FilePart]:
    """The files the messages carry (for the provider's attachment limits)."""
    return [part for message in messages for part in message.parts if isinstance(part, FilePart)]
