"""A code call's card in a real kernel, driven as a browser drives it. Insert as cell: while a cell awaits
``chat.ask(...)`` (its turn waiting for an approval), ``insert_cell`` for a finished code call puts the code into that
cell's reply as IPython's ``set_next_input`` (the notebook adds the cell below it); with no cell running, the kernel
tells the card to copy instead. With ``KernelTools``: the code edited before Allow is what runs, what Insert inserts,
and what Undo takes back. Every ipykernel version, comms on the main shell or a subshell."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

SETUP = r"""
from ai_widgets import ChatWidget, Tool, ToolDefinition, ToolOutcome, tool
from ai_widgets.outcome import CellRun
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

SCHEMA = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}

async def run_code(invocation):
    code = invocation.get_arguments(dict)["code"]
    exec(code, globals())
    return ToolOutcome.success(text="ran", cell=CellRun(code=code))

@tool(risk="destructive")
def hold() -> str:
    "Waits for a person's decision."
    return "held"

def script(request):
    done = len(request.tool_results())
    if done == 0:
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="run_code", arguments={"code": "answer = 41 + 1"}, id="c1")])
    if done == 1:
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="hold", id="c2")])
    return ScriptedReply(text="Done.")

code_tool = Tool(ToolDefinition(name="run_code", parameters=SCHEMA, code_arguments={"code": "python"}), run_code)
chat = ChatWidget(transport=ScriptedTransport(script), tools=[code_tool, hold], placeholder="insert-test")
"""


@pytest.fixture(scope="module")
def kernel(kernel_config: tuple[str, str, str]) -> Iterator[tuple[FakeFrontend, bool]]:
    python, version, mode = kernel_config
    fe = FakeFrontend(python)
    try:
        if mode == "subshell":
            assert fe.has_subshells, f"ipykernel {version} does not advertise subshells"
            fe.create_subshell()
        yield fe, mode == "subshell"
    finally:
        fe.close()


def test_insert_goes_below_the_asking_cell_and_elsewhere_the_card_copies(kernel: tuple[FakeFrontend, bool]) -> None:
    fe, subshell = kernel
    mark = fe.mark()
    fe.run(SETUP, timeout=60)
    comm_id = fe.comm_with_state("placeholder", "insert-test", start=mark)

    def answer(content: dict[str, Any]) -> Any:
        start = fe.mark()
        fe.send_custom(comm_id, content, subshell=subshell)
        return fe.wait_custom(comm_id, lambda c: c.get("type") == "cell_action", start=start, timeout=15)

    mark = fe.mark()
    cell = fe.execute("reply = await chat.ask('go', show=False)")

    def waiting(content: Any) -> bool:
        ops = content.get("ops", []) if content.get("type") == "patch" else []
        return any(op[0] == "call" and op[2] == "c2" and op[3].get("state") == "awaiting_approval" for op in ops)

    fe.wait_custom(comm_id, waiting, start=mark, timeout=15)  # the cell awaits: c1 ran, c2 waits for a decision
    inserted = answer({"type": "insert_cell", "tool_call_id": "c1"})
    assert inserted["ok"] is True, inserted
    fe.send_custom(comm_id, {"type": "approve", "tool_call_id": "c2", "decision": "approved"}, subshell=subshell)
    content = fe.reply(cell, timeout=15)["content"]
    assert content["status"] == "ok", content
    assert content["payload"] == [{"source": "set_next_input", "text": "answer = 41 + 1", "replace": False}]
    fe.wait_idle(cell)

    refused = answer({"type": "insert_cell", "tool_call_id": "c1"})  # no cell runs now
    assert (refused["ok"], refused.get("copy")) == (False, True)
    assert "no cell is running" in refused["message"]
    after = fe.execute("1")
    assert fe.reply(after)["content"]["payload"] == []  # nothing left over for the next cell


KERNEL_TOOLS = r"""
from ai_widgets.kernel import KernelTools

def script_k(request):
    done = len(request.tool_results())
    if done == 0:
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="run_python", arguments={"code": "total = 1"}, id="k1")])
    if done == 1:
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="hold", id="k2")])
    return ScriptedReply(text="Done.")

kernel_tools = KernelTools()
kchat = ChatWidget(transport=ScriptedTransport(script_k), tools=[kernel_tools, hold], placeholder="kernel-tools-test")
"""


def test_kernel_tools_code_edited_before_allow_is_inserted_and_undone(kernel: tuple[FakeFrontend, bool]) -> None:
    fe, subshell = kernel
    mark = fe.mark()
    fe.run(SETUP + KERNEL_TOOLS, timeout=60)
    comm_id = fe.comm_with_state("placeholder", "kernel-tools-test", start=mark)

    def send(content: dict[str, Any]) -> int:
        start = fe.mark()
        fe.send_custom(comm_id, content, subshell=subshell)
        return start

    def answer(content: dict[str, Any]) -> Any:
        start = send(content)
        return fe.wait_custom(comm_id, lambda c: c.get("type") == "cell_action", start=start, timeout=15)

    def waiting(call_id: str) -> Any:
        def check(content: Any) -> bool:
            ops = content.get("ops", []) if content.get("type") == "patch" else []
            for op in ops:
                parts = [op[3]] if op[0] == "part" else op[1]["parts"] if op[0] == "start" else []
                if op[0] == "call" and op[2] == call_id and op[3].get("state") == "awaiting_approval":
                    return True
                if any(p.get("tool_call_id") == call_id and p.get("state") == "awaiting_approval" for p in parts):
                    return True
            return False

        return check

    mark = fe.mark()
    cell = fe.execute("reply = await kchat.ask('go', show=False)")
    fe.wait_custom(comm_id, waiting("k1"), start=mark, timeout=15)
    mark = send({"type": "approve", "tool_call_id": "k1", "decision": "approved", "arguments": {"code": "total = 2"}})
    fe.wait_custom(comm_id, waiting("k2"), start=mark, timeout=15)  # k1 ran (edited); the cell still awaits
    inserted = answer({"type": "insert_cell", "tool_call_id": "k1"})
    assert inserted["ok"] is True, inserted
    send({"type": "approve", "tool_call_id": "k2", "decision": "approved"})
    content = fe.reply(cell, timeout=15)["content"]
    assert content["status"] == "ok", content
    assert content["payload"] == [{"source": "set_next_input", "text": "total = 2", "replace": False}]
    fe.wait_idle(cell)
    assert fe.run("print(total, kchat.session.tool_call('k1').outcome.cell.edited)").strip() == "2 True"

    mark = fe.mark()
    undone = answer({"type": "undo_call", "tool_call_id": "k1"})
    assert undone["ok"] is True, undone
    assert "total" in undone["message"]
    fe.wait_state(comm_id, "_undone", {"k1": undone["message"]}, start=mark)
    assert fe.run("print('total' in globals())").strip() == "False"
    again = answer({"type": "undo_call", "tool_call_id": "k1"})
    assert again["ok"] is False
    assert "undone already" in again["message"]
