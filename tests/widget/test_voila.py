"""A cell that waits for a reply while Voilà runs the notebook (no page yet): a call there that asks for approval is
cancelled, saying why, instead of waiting for ever; with a view opened, outside Voilà, or for ``chat.send``, the
approval waits for the person as everywhere else."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from ai_widgets import ToolRisk, tool
from ai_widgets.messages import Message, ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget, _voila
from ai_widgets.widget._voila import CANCEL_REASON, VIEW_OPENED, served_by_voila
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire

deleted: list[str] = []


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file."""
    deleted.append(path)
    return f"deleted {path}"


def chat_that_deletes() -> ChatWidget:
    def model(request):  # type: ignore[no-untyped-def]
        if request.tool_results():
            return f"Call {request.tool_results()[-1].state.value}."
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})])

    return ChatWidget(transport=ScriptedTransport(model), tools=[delete_file])


@pytest.fixture(autouse=True)
def no_page_yet(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A kernel Voilà started (its environment), before any page: no view opened; a short grace."""
    monkeypatch.setenv("SERVER_SOFTWARE", "voila/0.5.13")
    monkeypatch.setattr(_voila, "PAGE_GRACE", 0.2)
    VIEW_OPENED.clear()
    deleted.clear()
    yield
    VIEW_OPENED.clear()


def test_voila_is_told_by_the_environment_of_its_kernels() -> None:
    assert served_by_voila({"SERVER_SOFTWARE": "voila/0.5.13", "VOILA_PREHEAT": "False"})
    assert served_by_voila({"VOILA_PREHEAT": "True"})  # a preheated kernel, started before any request
    assert not served_by_voila({"SERVER_SOFTWARE": "TornadoServer/6.4"})
    assert not served_by_voila({})


async def test_an_asking_cell_under_voila_gets_its_unapprovable_call_cancelled(wire: Wire) -> None:
    chat = chat_that_deletes()
    reply = await asyncio.wait_for(chat.ask("delete my notes"), timeout=10)  # before: waited for ever
    call = reply.tool_calls[0]
    assert call.state is ToolCallState.CANCELLED
    assert CANCEL_REASON in call.outcome.model_content()  # type: ignore[union-attr]
    assert reply.text == "Call cancelled."  # the model was told, and the turn went on
    assert deleted == []


def test_a_blocking_asking_cell_under_voila_too(wire: Wire) -> None:
    chat = chat_that_deletes()
    replies: list[Message] = []
    # A daemon thread bounds the wait: before, ask_sync blocked for ever.
    asking = threading.Thread(target=lambda: replies.append(chat.ask_sync("delete my notes")), daemon=True)
    asking.start()
    asking.join(timeout=10)
    assert replies, "ask_sync still waits for an approval no page can give"
    reply = replies[0]
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    assert deleted == []


async def approve_when_asked(chat: ChatWidget) -> None:
    await wait_for(lambda: bool(chat.session.pending_approvals))
    await asyncio.sleep(0.4)  # past the grace: still waiting for the person
    assert chat.session.pending_approvals
    chat.session.approve(chat.session.pending_approvals[0].tool_call_id, "approved")


async def test_once_a_view_opened_the_approval_waits_for_the_person(wire: Wire) -> None:
    chat = chat_that_deletes()
    wire.comms[chat.comm.comm_id].handle({"type": "sync", "have": 0})  # the page connected: its view asks to catch up
    assert VIEW_OPENED.is_set()
    reply, _ = await asyncio.gather(chat.ask("delete my notes"), approve_when_asked(chat))
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert deleted == ["notes.txt"]


async def test_outside_voila_the_approval_waits_for_the_person(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERVER_SOFTWARE")
    chat = chat_that_deletes()
    reply, _ = await asyncio.gather(chat.ask("delete my notes"), approve_when_asked(chat))
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED


async def test_a_sent_turn_under_voila_waits_for_the_page(wire: Wire) -> None:
    chat = chat_that_deletes()
    future = chat.send("delete my notes")
    assert future is not None
    await approve_when_asked(chat)
    reply = await asyncio.wrap_future(future)
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
