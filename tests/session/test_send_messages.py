"""``session.send_messages``: several messages in one send (a rendered MCP prompt's examples before its question):
the earlier ones enter the conversation as finished turns, the last is the person's message the model answers; each
is a copy; their files meet the provider's limits like ``attach``; a history file keeps them all."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from ai_widgets import ChatSession, FilePart, Message, SessionBusyError, TextPart, attachments
from ai_widgets.attachments import AttachmentError, AttachmentLimits
from ai_widgets.messages import Role
from ai_widgets.session import NoTransportError
from ai_widgets.transports import ScriptedReply, ScriptedTransport, TransportProfile
from ai_widgets.transports._base import ChatRequest

PNG = FilePart.from_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png", name="pixel.png")


def said(request: ChatRequest) -> ScriptedReply:
    return ScriptedReply(text=" | ".join(f"{m.role.value}: {m.text}" for m in request.messages if m.text))


def example() -> list[Message]:
    return [
        Message(Role.USER, [TextPart("Translate 'cat'.")]),
        Message(Role.ASSISTANT, [TextPart("chat")]),
        Message(Role.USER, [TextPart("Translate 'dog'."), PNG]),
    ]


async def test_the_earlier_messages_are_turns_before_the_persons_and_a_history_file_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    session = ChatSession(ScriptedTransport(said), history=path)
    reply = await session.send_messages(example())
    assert reply.text == "user: Translate 'cat'. | assistant: chat | user: Translate 'dog'."
    assert [m.role.value for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.messages[2].parts[1] == PNG
    # The next turn goes on from the whole of it; regenerate answers the last person's message again.
    await session.send("and 'bird'?")
    again = await session.regenerate()
    assert again.text.startswith("user: Translate 'cat'. | assistant: chat | user: Translate 'dog'.")
    session.close()
    reopened = ChatSession(ScriptedTransport([said]), history=path)
    assert [(m.role.value, m.text) for m in reopened.messages][:3] == [
        ("user", "Translate 'cat'."),
        ("assistant", "chat"),
        ("user", "Translate 'dog'."),
    ]
    reopened.close()


async def test_a_file_the_provider_refuses_refuses_the_whole_send() -> None:
    limits = AttachmentLimits(
        "NoImages", max_image_bytes=1, max_images=0, max_document_bytes=1, max_total_bytes=1, image_types=frozenset()
    )
    transport = ScriptedTransport([said], profile=TransportProfile(attachment_limits=limits))
    session = ChatSession(transport)
    with pytest.raises(AttachmentError):
        await session.send_messages(example())
    assert session.messages == []


async def test_check_send_refuses_what_send_would_and_its_parts_are_sent_without_converting_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits = AttachmentLimits(
        "NoImages", max_image_bytes=1, max_images=0, max_document_bytes=1, max_total_bytes=1, image_types=frozenset()
    )
    refusing = ChatSession(ScriptedTransport([said], profile=TransportProfile(attachment_limits=limits)))
    with pytest.raises(AttachmentError):
        refusing.check_send("look", attach=[PNG])
    with pytest.raises(ValueError, match="non-empty"):
        refusing.check_send("  ")
    assert refusing.check_send("no file") == []
    assert refusing.messages == []  # checking claims and adds nothing
    with pytest.raises(NoTransportError):
        ChatSession().check_send("hi")

    session = ChatSession(ScriptedTransport([said, said]))
    parts = session.check_send("the table", attach={"table": {"a": 1}})
    assert [type(p) for p in parts] == [TextPart]
    assert "table" in parts[0].text  # type: ignore[union-attr]
    threads: list[int] = []
    real = attachments.message_attachments
    monkeypatch.setattr(attachments, "message_attachments", lambda a: threads.append(threading.get_ident()) or real(a))
    reply = await session.send("the table", attach=parts)
    assert threads == [threading.get_ident()]  # taken as they are: no worker thread to draw anything
    assert reply.text.startswith("user: the tableAttached dict `table`")
    assert [p.text for p in session.messages[0].parts[1:]] == [p.text for p in parts]  # type: ignore[union-attr]
    # Busy is checked too when the message may not steer, after the attachments (a caller that waits for that turn
    # has them checked already); a message that steers is not refused.
    started = asyncio.ensure_future(session.send("second"))
    await asyncio.sleep(0)
    assert session.busy
    with pytest.raises(SessionBusyError):
        session.check_send("third", steer=False)
    assert session.check_send("third") == []
    with pytest.raises(AttachmentError):
        session.check_send("third", attach=[object()], steer=False)
    await started
