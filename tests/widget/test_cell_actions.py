"""Undo and Insert as cell on a code call's card (``undo_call``, ``insert_cell``): each answered to the views with a
``cell_action`` message; an undone call shown as undone by every view of the session (``_undone``); a malformed
message refused with an error that names it; Insert where no cell runs tells the card to copy instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from IPython.core.payload import PayloadManager

import ai_widgets.widget._cells as cells_module
from ai_widgets import Tool, ToolDefinition, ToolOutcome
from ai_widgets.outcome import CellRun
from ai_widgets.tools import ToolInvocation
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import KernelSupport
from tests.widget.widget_harness import Wire

CODE_SCHEMA = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}


class Undoing:
    """A source of one code tool that runs code in a dict and can undo a run (what the card's Undo needs of it)."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.runs: dict[str, tuple[str, ...]] = {}

    async def list_tools(self) -> list[Tool]:
        definition = ToolDefinition(name="run_python", parameters=CODE_SCHEMA, code_arguments={"code": "python"})
        return [Tool(definition, self._run)]

    async def _run(self, invocation: ToolInvocation) -> ToolOutcome:
        code = invocation.get_arguments(dict)["code"]
        before = set(self.namespace)
        exec(code, self.namespace)
        created = tuple(sorted(set(self.namespace) - before - {"__builtins__"}))
        self.runs[invocation.tool_call_id] = created
        return ToolOutcome.success(text="ran", cell=CellRun(code=code, created=created))

    def undo(self, tool_call_id: str) -> str:
        created = self.runs.pop(tool_call_id, None)
        if created is None:
            raise LookupError(f"call {tool_call_id} has nothing left to undo")
        for name in created:
            del self.namespace[name]
        return f"Removed {', '.join(created)}."


def answers(wire: Wire, chat: ChatWidget) -> list[dict[str, Any]]:
    return [m for m in wire.custom(chat.comm.comm_id) if m.get("type") in ("cell_action", "error")]


async def ran(chat: ChatWidget, *codes: str) -> list[str]:
    """Runs each code in its own call of one turn; returns the call ids."""
    reply = await chat.ask("go", show=False)
    return [call.tool_call_id for call in reply.tool_calls] if codes else []


def chat_running(source: Undoing, *codes: str) -> ChatWidget:
    calls = [ScriptedToolCall(name="run_python", arguments={"code": code}) for code in codes]
    return ChatWidget(transport=ScriptedTransport([ScriptedReply(tool_calls=calls), "Done."]), tools=[source])


async def test_undo_puts_back_and_every_view_of_the_session_shows_it(wire: Wire) -> None:
    source = Undoing()
    chat = chat_running(source, "x = 1", "y = 2")
    first, second = await ran(chat, "x = 1", "y = 2")
    other = ChatWidget(chat.session)  # another view of the same session (as a turn shown in its cell is)
    assert source.namespace.keys() >= {"x", "y"}
    front = wire.comms[chat.comm.comm_id]

    front.handle({"type": "undo_call", "tool_call_id": second})
    assert answers(wire, chat)[-1] == {
        "type": "cell_action",
        "action": "undo_call",
        "tool_call_id": second,
        "ok": True,
        "message": "Removed y.",
    }
    assert "y" not in source.namespace
    assert source.namespace["x"] == 1
    assert chat._undone == other._undone == {second: "Removed y."}

    front.handle({"type": "undo_call", "tool_call_id": second})  # twice: the source refuses, the card says why
    refused = answers(wire, chat)[-1]
    assert refused["ok"] is False
    assert refused["message"] == f"call {second} has nothing left to undo"
    assert chat._undone == {second: "Removed y."}

    assert ChatWidget(chat.session)._undone == {second: "Removed y."}  # a view made later: the kernel's record
    assert first not in chat._undone


async def test_undo_says_why_it_cannot(wire: Wire) -> None:
    source = Undoing()
    chat = chat_running(source, "x = 1")
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
    chat = chat_running(Undoing())
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
    source = Undoing()
    chat = chat_running(source, "x = 1", "y = 2")
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
    chat = chat_running(Undoing(), "x = 1")
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
