"""A conversation kept with ``history=`` survives a real kernel restart, a call that was waiting included."""

from __future__ import annotations

import json
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from ai_widgets.session import read_history
from tests.kernel.frontend import FakeFrontend

CELL = textwrap.dedent(
    """\
    from ai_widgets import ChatWidget, ToolRisk, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport


    @tool(risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.\"\"\"
        return f"deleted {{path}}"


    def model(request):
        if request.last_user_text == "so?":
            return "Nothing was deleted."
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="delete_file", arguments={{"path": "notes.txt"}})])


    transport = ScriptedTransport(model)
    chat = ChatWidget(transport=transport, tools=[delete_file], history={path!r})
    """
)


def _wait(fe: FakeFrontend, expression: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while fe.run(f"print(bool({expression}))").strip() != "True":
        assert time.monotonic() < deadline, f"never true: {expression}"
        time.sleep(0.1)


def _call_states(path: str) -> list[str]:
    return [p.state.value for m in read_history(path) for p in m.tool_calls]


def test_a_waiting_call_survives_a_kernel_restart(kernel_config: tuple[str, str, str]) -> None:
    python, _version, mode = kernel_config
    if mode != "main":
        pytest.skip("the restart does not depend on where comm messages arrive")
    with tempfile.TemporaryDirectory(prefix="aiw-history-") as folder:
        path = str(Path(folder) / "chat.json")
        fe = FakeFrontend(python)
        try:
            fe.run(CELL.format(path=path), timeout=60)
            fe.run('chat.send("delete my notes")')
            _wait(fe, "chat.session.pending_approvals")
            # Written when the call began to wait, by the file's own writer thread, without anyone asking.
            deadline = time.monotonic() + 10
            while _call_states(path) != ["awaiting_approval"]:
                assert time.monotonic() < deadline, _call_states(path)
                time.sleep(0.05)

            # The kernel dies with the call waiting (a new kernel process is what a restart gives; a fresh client
            # also avoids old clients' trouble with a restarted ipykernel 7.4's iopub welcome message). Killed, not
            # shut down: shutdown_kernel interrupts first, which stops the turn (a cancelled call, saved when the
            # save beats the kill).
            fe.kill()
            fe = FakeFrontend(python)
            fe.run(CELL.format(path=path), timeout=60)  # the cell, re-run in the new kernel
            restored = json.loads(
                fe.run(
                    "import json\n"
                    "print(json.dumps([[m.role.value, m.status.value, [(p.state.value, p.outcome.message) "
                    "for p in m.tool_calls]] for m in chat.session.messages]))"
                )
            )
            assert restored[0] == ["user", "completed", []]
            role, status, calls = restored[1]
            assert (role, status) == ("assistant", "cancelled")
            assert calls[0][0] == "skipped"
            assert "kernel stopped" in calls[0][1]

            fe.run('chat.send("so?")')
            _wait(fe, "not chat.session.busy and len(chat.session.messages) == 4")
            checked = fe.run(
                "print(all(p.state.terminal and p.outcome is not None "
                "for m in transport.requests[-1].messages for p in m.tool_calls), chat.session.messages[-1].text)"
            )
            assert checked.strip() == "True Nothing was deleted."
        finally:
            fe.close()
