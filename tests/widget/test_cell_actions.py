"""Undo and Insert as cell on a code call's card (``undo_call``, ``insert_cell``), with ``KernelTools`` in a dict
namespace: each answered to the views with a ``cell_action`` message; an undone call shown as undone by every view of
the session (``_undone``); a refusal (newest first, twice) said on the card; a malformed message refused with an error
that names it; Insert where no cell runs tells the card to copy instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from IPython.core.payload import PayloadManager

import ai_widgets.widget._cells as cells_module
from ai_widgets import Tool, ToolDefinition, ToolOutcome
from ai_widgets.kernel import KernelTools
from ai_widgets.outcome import CellRun
from ai_widgets.tools import ToolInvocation
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import KernelSupport
from tests.widget.widget_harness import Wire

CODE_SCHEMA = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}


def answers(wire: Wire, chat: ChatWidget) -> list[dict[str, Any]]:
    return [m for m in wire.custom(chat.comm.comm_id) if m.get("type") in ("cell_action", "error")]


async def ran(chat: ChatWidget, *codes: str) -> list[str]:
    """Runs each code in its own call of one turn; returns the call ids."""
    reply = await chat.ask("go", show=False)
    return [call.tool_call_id for call in reply.tool_calls] if codes else []


def chat_running(source: KernelTools, *codes: str) -> ChatWidget:
    calls = [ScriptedToolCall(name="run_python", arguments={"code": code}) for code in codes]
    return ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=calls), "Done."]), tools=[source])


async def test_undo_puts_back_newest_first_and_every_view_of_the_session_shows_it(wire: Wire) -> None:
    namespace: dict[str, Any] = {"x": 0}
    source = KernelTools(namespace, ask="never")
    chat = chat_running(source, "x = 1\ny = [1]", "x = 2\ndel y")
    first, second = await ran(chat, "x = 1\ny = [1]", "x = 2\ndel y")
    other = ChatWidget(chat.session)  # another view of the same session (as a turn shown in its cell is)
    assert namespace["x"] == 2
    assert "y" not in namespace
    front = wire.comms[chat.comm.comm_id]

    front.handle({"type": "undo_call", "tool_call_id": first})  # not the newest: refused, nothing changed
    refused = answers(wire, chat)[-1]
    assert (refused["action"], refused["tool_call_id"], refused["ok"]) == ("undo_call", first, False)
    assert f"Undo {second} first" in refused["message"]
    assert namespace["x"] == 2
    assert chat._undone == {}

    front.handle({"type": "undo_call", "tool_call_id": second})
    undone = answers(wire, chat)[-1]
    assert undone["ok"] is True
    line = undone["message"]
    assert line == f"Undid {second}: put back x, y."
    assert namespace["x"] == 1
    assert namespace["y"] == [1]
    assert chat._undone == other._undone == {second: line}

    front.handle({"type": "undo_call", "tool_call_id": second})  # twice: refused, the card says why
    again = answers(wire, chat)[-1]
    assert again["ok"] is False
    assert "undone already" in again["message"]
    assert chat._undone == {second: line}

    front.handle({"type": "undo_call", "tool_call_id": first})  # now the newest
    assert answers(wire, chat)[-1]["ok"] is True
    assert namespace["x"] == 0
    assert "y" not in namespace
    assert set(chat._undone) == {first, second}
    assert ChatWidget(chat.session)._undone == chat._undone  # a view made later: from the kernel's record


async def test_undo_says_why_it_cannot(wire: Wire) -> None:
    chat = chat_running(KernelTools({}, ask="never"), "x = 1")
    await ran(chat, "x = 1")
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "undo_call", "tool_call_id": "nope"})
    assert answers(wire, chat)[-1]["message"] == "There is no call 'nope' in this conversation."

    plain = ToolDefinition(name="note", parameters={"type": "object", "properties": {}})
    bare = ChatWidget(
        transport=ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="note")]), "ok"]),
        tools=[Tool(plain, lambda invocation: ToolOutcome.success(text="noted"))],
    )
    reply = await bare.ask("go", show=False)
    wire.comms[bare.comm.comm_id].handle({"type": "undo_call", "tool_call_id": reply.tool_calls[0].tool_call_id})
    assert answers(wire, bare)[-1]["message"] == "This call ran no code: there is nothing to undo."
    assert bare._undone == {}


async def test_undo_without_a_source_that_undoes(wire: Wire) -> None:
    async def run(invocation: ToolInvocation) -> ToolOutcome:
        return ToolOutcome.success(text="ran", cell=CellRun(code="x = 1", created=("x",)))

    definition = ToolDefinition(name="run_python", parameters=CODE_SCHEMA, code_arguments={"code": "python"})
    calls = [ScriptedToolCall(name="run_python", arguments={"code": "x = 1"})]
    chat = ChatWidget(
        transport=ScriptedTransport([ScriptedReply(tool_calls=calls), "ok"]), tools=[Tool(definition, run)]
    )
    reply = await chat.ask("go", show=False)
    wire.comms[chat.comm.comm_id].handle({"type": "undo_call", "tool_call_id": reply.tool_calls[0].tool_call_id})
    answer = answers(wire, chat)[-1]
    assert answer["ok"] is False
    assert "nothing can undo it" in answer["message"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            {"type": "undo_call"},
            "invalid 'undo_call' message from the front end: undo_call.tool_call_id: Field required",
        ),
        (
            {"type": "insert_cell", "tool_call_id": ""},
            "insert_cell.tool_call_id: String should have at least 1 character",
        ),
        ({"type": "undo_call", "tool_call_id": "c", "extra": 1}, "extra: Extra inputs are not permitted"),
    ],
)
def test_a_malformed_card_action_is_refused_with_what_is_wrong(wire: Wire, content: dict[str, Any], says: str) -> None:
    chat = chat_running(KernelTools({}, ask="never"))
    wire.comms[chat.comm.comm_id].handle(content)
    error = answers(wire, chat)[-1]
    assert error["type"] == "error"
    assert says in error["message"]


class Shell:
    """IPython's kernel shell as far as Insert uses it: the running cell's result, its payloads."""

    def __init__(self, running: bool) -> None:
        self.payload_manager = PayloadManager()
        self.displayhook = type("Hook", (), {"exec_result": object() if running else None})()

    def set_next_input(self, text: str, replace: bool = False) -> None:  # as ZMQInteractiveShell's
        self.payload_manager.write_payload({"source": "set_next_input", "text": text, "replace": replace})


@pytest.fixture
def in_kernel(monkeypatch: pytest.MonkeyPatch) -> Shell:
    shell = Shell(running=True)
    monkeypatch.setattr(cells_module, "kernel_support", lambda: KernelSupport("ipykernel7", "7.4.0", "test"))
    monkeypatch.setattr(cells_module, "ipython_shell", lambda: shell)
    return shell


async def test_insert_puts_the_code_as_it_ran_below_the_running_cell(wire: Wire, in_kernel: Shell) -> None:
    chat = chat_running(KernelTools({}, ask="never"), "x = 1", "y = 2")
    first, second = await ran(chat, "x = 1", "y = 2")
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "insert_cell", "tool_call_id": first})
    assert answers(wire, chat)[-1]["ok"] is True
    assert in_kernel.payload_manager.read_payload() == [{"source": "set_next_input", "text": "x = 1", "replace": False}]
    # The notebook makes one cell of a reply's set_next_input: a second insert goes below the first one's code.
    front.handle({"type": "insert_cell", "tool_call_id": second})
    assert in_kernel.payload_manager.read_payload() == [
        {"source": "set_next_input", "text": "x = 1\n\ny = 2", "replace": False}
    ]


async def test_insert_where_no_cell_runs_tells_the_card_to_copy(
    wire: Wire, in_kernel: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = chat_running(KernelTools({}, ask="never"), "x = 1")
    (call_id,) = await ran(chat, "x = 1")
    front = wire.comms[chat.comm.comm_id]
    in_kernel.displayhook.exec_result = None  # a turn from the input box: no cell runs
    front.handle({"type": "insert_cell", "tool_call_id": call_id})
    answer = answers(wire, chat)[-1]
    assert (answer["ok"], answer.get("copy")) == (False, True)
    assert "cannot insert a cell from here" in answer["message"]
    assert in_kernel.payload_manager.read_payload() == []

    monkeypatch.setattr(cells_module, "kernel_support", lambda: KernelSupport("none", None, "no kernel"))
    in_kernel.displayhook.exec_result = object()
    front.handle({"type": "insert_cell", "tool_call_id": call_id})
    assert answers(wire, chat)[-1].get("copy") is True
    assert in_kernel.payload_manager.read_payload() == []
    await asyncio.sleep(0)
