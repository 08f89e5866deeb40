"""ChatWidget in a real kernel, driven the way a browser drives it: every ipykernel version, comms on the main
shell or a subshell.

The kernel holds a ``ChatWidget`` on a ``ScriptedTransport`` whose model calls a destructive tool (``delete``,
which records its calls); the fake front end sends anywidget custom messages (``sync``, ``send``, ``approve``,
``stop``, ``revoke``) and reads the widget's ``patch``/``snapshot``/``error`` messages and trait updates off
iopub. The three entry points:

(i)   the widget's input box: ``{"type": "send"}``; the turn runs in the background and cells stay free;
(ii)  ``reply = await chat.ask(...)`` in a cell;
(iii) ``reply = chat.ask_sync(...)`` in a cell.

A typed answer (``output_type=``) from (ii) and (iii) lands in a variable the next cell uses.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

SETUP = r"""
import asyncio, json
from ai_widgets import ChatWidget, tool
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

get_ipython().Completer.use_jedi = False  # jedi's first completion can take seconds on a loaded machine

def _script(request):
    results = request.tool_results()
    if results:  # the round after the tool: say how it went
        return ScriptedReply(text=f" Result: {results[-1].state.value}.", status=None)
    text = request.last_user_text
    if text.startswith("delete "):
        call = ScriptedToolCall(name="delete", arguments={"path": text[len("delete "):]})
        return ScriptedReply(text="Deleting.", tool_calls=[call])
    return ScriptedReply(text=f"You said: {text}", status=None)

def make_chat(tag):
    calls = []

    @tool(risk="destructive")
    def delete(path: str) -> str:
        "Deletes a file."
        calls.append(path)
        return f"deleted {path}"

    chat = ChatWidget(transport=ScriptedTransport(_script), tools=[delete], placeholder=tag)
    chat.calls = calls
    return chat

def show_state(chat):
    def call(p):
        return {"id": p.tool_call_id, "state": p.state.value, "decision": p.decision,
                "decision_reason": p.decision_reason}
    state = {
        "busy": chat.session.busy,
        "widget_busy": chat._busy,
        "calls": list(chat.calls),
        "pending": [p.tool_call_id for p in chat.session.pending_approvals],
        "allowed_always": list(chat._allowed_always),
        "messages": [
            {"role": m.role.value, "status": m.status.value, "text": m.text, "calls": [call(p) for p in m.tool_calls]}
            for m in chat.session.messages
        ],
    }
    print("STATE", json.dumps(state))
"""

# A cell that waits for the reply: (ii) an awaiting cell, (iii) a blocking cell.
CELLS = {
    "ii": "reply = await chat.ask({prompt!r})",
    "iii": "reply = chat.ask_sync({prompt!r})",
}
PRINT_REPLY = "\nprint('REPLY', reply.status.value, '|', reply.text)"


@dataclass
class ChatKernel:
    fe: FakeFrontend
    version: str
    subshell: bool
    comm_id: str = ""
    _tags: Iterator[int] = field(default_factory=itertools.count)

    def new_chat(self) -> None:
        """``chat = make_chat(...)`` in the kernel; then a view opens on it and asks for a snapshot, as a browser."""
        tag = f"chat-{next(self._tags)}"
        mark = self.fe.mark()
        self.fe.run(f"chat = make_chat({tag!r})")
        self.comm_id = self.fe.comm_with_state("placeholder", tag, start=mark)
        snapshot = self.wait_custom(lambda c: c.get("type") == "snapshot", self.action({"type": "sync"}))
        assert snapshot == {"type": "snapshot", "from": 0, "finished": [], "live": []}

    def action(self, content: Any) -> int:
        """Sends what the view's ``model.send(content)`` sends; returns the iopub mark from before it."""
        mark = self.fe.mark()
        self.fe.send_custom(self.comm_id, content, subshell=self.subshell)
        return mark

    def approve(self, call_id: str, decision: str = "approved", reason: str | None = None) -> int:
        content: dict[str, Any] = {"type": "approve", "tool_call_id": call_id, "decision": decision}
        if reason is not None:
            content["reason"] = reason
        return self.action(content)

    def wait_custom(self, pred: Any, start: int, timeout: float = 10) -> Any:
        return self.fe.wait_custom(self.comm_id, pred, timeout=timeout, start=start)

    def wait_error(self, start: int) -> str:
        return str(self.wait_custom(lambda c: c.get("type") == "error", start)["message"])

    def wait_awaiting(self, start: int) -> str:
        """The id of the call the patches (from ``start`` on) show waiting for approval."""
        found: list[str] = []

        def awaiting(content: Any) -> bool:
            for op in content.get("ops", []) if content.get("type") == "patch" else []:
                if op[0] == "call" and op[3].get("state") == "awaiting_approval":
                    found.append(op[2])
                parts = [op[3]] if op[0] == "part" else op[1]["parts"] if op[0] == "start" else []
                found.extend(p["tool_call_id"] for p in parts if p.get("state") == "awaiting_approval")
            return bool(found)

        self.wait_custom(awaiting, start)
        return found[0]

    def start(self, entry: str, prompt: str = "delete x", after: str = PRINT_REPLY) -> tuple[str | None, str]:
        """Starts a turn from ``entry``; returns the waiting cell's msg_id (None for the input box) and the call id
        once the widget shows the call waiting for approval."""
        if entry == "i":
            return None, self.wait_awaiting(self.action({"type": "send", "text": prompt}))
        return self.start_cell(entry, prompt, after)

    def start_cell(self, entry: str, prompt: str = "delete x", after: str = PRINT_REPLY) -> tuple[str, str]:
        """Sends a cell that waits for the reply (``entry`` "ii" or "iii"); returns its msg_id and the call id."""
        mark = self.fe.mark()
        cell = self.fe.execute(CELLS[entry].format(prompt=prompt) + after)
        return cell, self.wait_awaiting(mark)

    def finish(self, cell: str | None, start: int) -> str:
        """Waits for the turn to end; returns what the waiting cell printed ("" for the input box)."""
        if cell is None:  # the reply's "finish" op comes last (the busy update may come before it)
            self.wait_custom(lambda c: c.get("type") == "patch" and any(is_reply_finish(op) for op in c["ops"]), start)
            self.fe.wait_state(self.comm_id, "_busy", False, start=start)
            return ""
        content = self.fe.reply(cell, timeout=15)["content"]
        assert content["status"] == "ok", content
        self.fe.wait_idle(cell)
        return self.fe.stream_text(cell).strip()

    def state(self, after_error: bool = False) -> dict[str, Any]:
        run = self.fe.run_after_error if after_error else self.fe.run
        lines = [line for line in run("show_state(chat)").splitlines() if line.startswith("STATE ")]
        assert len(lines) == 1, lines
        return dict(json.loads(lines[0][len("STATE ") :]))


@pytest.fixture(scope="module")
def kernel(kernel_config: tuple[str, str, str]) -> Iterator[ChatKernel]:
    python, version, mode = kernel_config
    fe = FakeFrontend(python)
    try:
        if mode == "subshell":
            assert fe.has_subshells, f"ipykernel {version} does not advertise subshells"
            fe.create_subshell()
        fe.run(SETUP, timeout=60)
        yield ChatKernel(fe, version, subshell=mode == "subshell")
    finally:
        fe.close()


@pytest.fixture
def k(kernel: ChatKernel) -> ChatKernel:
    """The module's kernel, with a new ``chat`` (its own transport, tool and comm) for each test."""
    kernel.new_chat()
    return kernel


def is_reply_finish(op: list[Any]) -> bool:
    return bool(op[0] == "finish" and op[2]["role"] == "assistant")


def only_message(messages: list[dict[str, Any]], role: str) -> dict[str, Any]:
    found = [m for m in messages if m["role"] == role]
    assert len(found) == 1, messages
    return found[0]


# --- approving ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_allow_once_runs_the_tool_once_and_the_reply_finishes(k: ChatKernel, entry: str) -> None:
    cell, call_id = k.start(entry)
    if entry == "i":  # the turn waits in the background: the kernel is free for cells
        assert k.fe.run("print(1 + 1)").strip() == "2"
    time.sleep(0.1)
    # a view opened now catches up: the snapshot has the user's message (finished) and the live reply with the
    # call waiting
    snapshot = k.wait_custom(lambda c: c.get("type") == "snapshot", k.action({"type": "sync"}))
    assert [(m["role"], m["parts"][0]["text"]) for m in snapshot["finished"]] == [("user", "delete x")]
    (live,) = snapshot["live"]
    assert [p["state"] for p in live["parts"] if p["kind"] == "tool_call"] == ["awaiting_approval"]
    mark = k.approve(call_id)
    out = k.finish(cell, mark)
    if cell is not None:
        assert out == "REPLY completed | Deleting. Result: completed."
    ops = [op for c in k.fe.custom_messages(k.comm_id, mark) if c["type"] == "patch" for op in c["ops"]]
    assert any(op[0] == "call" and op[2] == call_id and op[3]["decision"] == "approved" for op in ops), ops
    (finished,) = [op for op in ops if is_reply_finish(op)]
    assert finished[1] == 1  # the second finished message: the user's came first
    assert [p["state"] for p in finished[2]["parts"] if p["kind"] == "tool_call"] == ["completed"]
    # finishing sent that message alone: no state update carries the conversation
    updates = [m["content"]["data"] for m in k.fe.comm_messages(k.comm_id, mark)]
    assert not any("_history" in u.get("state", {}) for u in updates), updates
    state = k.state()
    assert state["calls"] == ["x"]
    assert (state["busy"], state["widget_busy"], state["pending"]) == (False, False, [])
    reply = only_message(state["messages"], "assistant")
    assert (reply["status"], reply["text"]) == ("completed", "Deleting. Result: completed.")
    assert reply["calls"] == [{"id": call_id, "state": "completed", "decision": "approved", "decision_reason": None}]


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_decline_with_a_reason_never_runs_the_tool(k: ChatKernel, entry: str) -> None:
    cell, call_id = k.start(entry)
    mark = k.approve(call_id, "rejected", "not today")
    out = k.finish(cell, mark)
    if cell is not None:
        assert out == "REPLY completed | Deleting. Result: rejected."
    state = k.state()
    assert state["calls"] == []
    reply = only_message(state["messages"], "assistant")
    assert reply["calls"] == [
        {"id": call_id, "state": "rejected", "decision": "rejected", "decision_reason": "not today"}
    ]
    assert reply["text"] == "Deleting. Result: rejected."


def test_allow_always_then_revoke(k: ChatKernel) -> None:
    cell, call_id = k.start_cell("ii")
    mark = k.approve(call_id, "approved_always")
    k.fe.wait_state(k.comm_id, "_allowed_always", ["delete"], start=mark)
    assert k.finish(cell, mark) == "REPLY completed | Deleting. Result: completed."
    k.fe.wait_state(k.comm_id, "_allowed_always", [], start=k.action({"type": "revoke", "tool_name": "delete"}))
    # asked again after the revoke
    cell, call_id = k.start_cell("ii", "delete y")
    k.approve(call_id)
    assert k.finish(cell, 0) == "REPLY completed | Deleting. Result: completed."
    assert k.state()["calls"] == ["x", "y"]


# --- the turn shown in the asking cell (ask(..., show=True), the default) ----------------------------------------

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shown_widgets(k: ChatKernel, start: int, parent: str | None = None) -> list[str]:
    """The model ids of widgets displayed (from iopub ``start`` on), in cell ``parent`` if given."""
    with k.fe._cv:
        messages = [m for _, m in k.fe.iopub[start:]]
    return [
        m["content"]["data"][WIDGET_VIEW]["model_id"]
        for m in messages
        if m["msg_type"] == "display_data"
        and WIDGET_VIEW in m["content"].get("data", {})
        and (parent is None or m["parent_header"].get("msg_id") == parent)
    ]


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_the_asking_cell_shows_its_turn_and_allow_once_there_decides_once(k: ChatKernel, entry: str) -> None:
    fe = k.fe
    mark = fe.mark()
    if entry == "i":
        # The input box is the chat's own view: the turn shows there, and no cell shows anything.
        cell, call_id = k.start("i")
        k.finish(cell, k.approve(call_id))
        assert shown_widgets(k, mark) == []
        assert k.state()["calls"] == ["x"]
        return
    cell = fe.execute(CELLS[entry].format(prompt="delete x") + PRINT_REPLY)
    turn_comm = fe.comm_with_state("_scope", "turn", start=mark)
    # Displayed in the asking cell's own output.
    fe.wait_iopub(lambda m: m["msg_type"] == "display_data" and turn_comm in json.dumps(m["content"]), start=mark)
    assert shown_widgets(k, mark, parent=cell) == [turn_comm]
    call_id = k.wait_awaiting(mark)  # the chat's own view shows the call waiting
    # A view of the asking cell's output opens: it gets the person's message and the waiting call.
    sync = fe.mark()
    fe.send_custom(turn_comm, {"type": "sync"}, subshell=k.subshell)
    snapshot = fe.wait_custom(turn_comm, lambda c: c.get("type") == "snapshot", start=sync)
    assert [(m["role"], m["parts"][0]["text"]) for m in snapshot["finished"]] == [("user", "delete x")]
    (live,) = snapshot["live"]
    calls = [(p["tool_call_id"], p["state"]) for p in live["parts"] if p["kind"] == "tool_call"]
    assert calls == [(call_id, "awaiting_approval")]
    # Allow once in the asking cell; the chat's own view shows the decision, and a click there now is refused.
    click = fe.mark()
    fe.send_custom(turn_comm, {"type": "approve", "tool_call_id": call_id, "decision": "approved"}, subshell=k.subshell)
    k.wait_custom(
        lambda c: (
            c.get("type") == "patch"
            and any(op[0] == "call" and op[2] == call_id and op[3].get("decision") == "approved" for op in c["ops"])
        ),
        click,
    )
    assert call_id in k.wait_error(k.approve(call_id, "rejected"))
    assert k.finish(cell, click) == "REPLY completed | Deleting. Result: completed."
    assert k.state()["calls"] == ["x"]
    # The asking cell's view keeps the whole turn and is no longer busy.
    ops = [op for c in fe.custom_messages(turn_comm, mark) if c["type"] == "patch" for op in c["ops"]]
    finished = [op[2] for op in ops if op[0] == "finish"]
    assert [(m["role"], m["status"]) for m in finished] == [("user", "completed"), ("assistant", "completed")]
    fe.wait_state(turn_comm, "_busy", False, start=mark)


@pytest.mark.parametrize("entry", ["ii", "iii"])
def test_show_false_shows_nothing_in_the_asking_cell(k: ChatKernel, entry: str) -> None:
    mark = k.fe.mark()
    code = CELLS[entry].format(prompt="delete x").replace("')", "', show=False)")
    cell = k.fe.execute(code + PRINT_REPLY)
    call_id = k.wait_awaiting(mark)
    assert k.finish(cell, k.approve(call_id)) == "REPLY completed | Deleting. Result: completed."
    assert shown_widgets(k, mark) == []


# --- stopping -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_stop_while_waiting_for_approval_ends_the_turn(k: ChatKernel, entry: str) -> None:
    cell, call_id = k.start(entry)
    mark = k.action({"type": "stop"})
    out = k.finish(cell, mark)
    if cell is not None:
        assert out == "REPLY cancelled | Deleting."
    assert k.fe.run("print('next')").strip() == "next"
    state = k.state()
    assert (state["calls"], state["busy"], state["pending"]) == ([], False, [])
    reply = only_message(state["messages"], "assistant")
    assert reply["status"] == "cancelled"
    assert reply["calls"][0]["state"] == "cancelled"
    # too late now: the call is not waiting any more
    assert call_id in k.wait_error(k.approve(call_id))
    assert k.state()["calls"] == []


# --- waiting cells: queued cells and interrupts -------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["ii", "iii"])
def test_a_queued_cell_runs_after_the_waiting_cell(k: ChatKernel, entry: str) -> None:
    fe = k.fe
    fe.run("order = []")
    cell, call_id = k.start_cell(entry, after="; order.append(1)")
    queued = fe.execute("order.append(2)")
    with pytest.raises(TimeoutError):  # reads the shell channel: the queued cell must not run while the first waits
        fe.reply(queued, timeout=0.3)
    assert cell not in fe.replies
    k.approve(call_id)
    last = fe.execute("order.append(3)")
    replies = [fe.reply(msg_id, timeout=15) for msg_id in (cell, queued, last)]
    assert [r["content"]["status"] for r in replies] == ["ok"] * 3
    positions = [fe.reply_order.index(msg_id) for msg_id in (cell, queued, last)]
    assert positions == sorted(positions)
    assert fe.run("print(order, reply.status.value, chat.calls)").strip() == "[1, 2, 3] completed ['x']"


@pytest.mark.parametrize("entry", ["ii", "iii"])
def test_interrupt_while_waiting_ends_the_turn_and_the_next_cell_runs(k: ChatKernel, entry: str) -> None:
    fe = k.fe
    cell, _ = k.start_cell(entry)
    time.sleep(0.1)
    fe.interrupt()
    content = fe.reply(cell, timeout=15)["content"]
    assert content["status"] == "error"
    # ipykernel cancels an awaiting cell; a blocking one gets KeyboardInterrupt
    assert content["ename"] == ("CancelledError" if entry == "ii" else "KeyboardInterrupt")
    state = k.state(after_error=True)
    assert (state["calls"], state["busy"], state["pending"]) == ([], False, [])
    assert state["messages"][-1]["status"] == "cancelled"
    assert state["messages"][-1]["calls"][0]["state"] == "cancelled"
    # the chat goes on
    out = fe.run("r = chat.ask_sync('hello'); print('REPLY', r.status.value, '|', r.text)")
    assert out.strip() == "REPLY completed | You said: hello"
    assert not k.state()["widget_busy"]


def test_interrupt_stops_a_turn_started_from_the_input_box(k: ChatKernel) -> None:
    fe = k.fe
    _, call_id = k.start("i")
    time.sleep(0.1)
    mark = fe.mark()
    fe.interrupt()
    k.finish(None, mark)
    state = k.state()
    assert (state["calls"], state["busy"], state["pending"]) == ([], False, [])
    reply = state["messages"][-1]
    assert (reply["status"], reply["calls"][0]["id"], reply["calls"][0]["state"]) == ("cancelled", call_id, "cancelled")
    # With no turn running an interrupt is ignored while idle, as before; during a cell it interrupts the cell.
    fe.interrupt()
    time.sleep(0.3)
    assert fe.run("print('alive')").strip() == "alive"
    cell = fe.execute("import time; time.sleep(30)")
    time.sleep(0.5)
    fe.interrupt()
    assert fe.reply(cell, timeout=15)["content"]["ename"] == "KeyboardInterrupt"
    out = fe.run_after_error("r = chat.ask_sync('hello', show=False); print('REPLY', r.status.value, '|', r.text)")
    assert out.strip() == "REPLY completed | You said: hello"


# --- refused front-end messages -----------------------------------------------------------------------------------

MALFORMED: list[Any] = [
    "send",
    [1, 2],
    None,
    {},
    {"type": "explode"},
    {"type": 7},
    {"type": "send"},
    {"type": "send", "text": ""},
    {"type": "send", "text": 5},
    {"type": "send", "text": "delete z", "extra": True},
    {"type": "stop", "now": True},
    {"type": "approve", "decision": "approved"},
    {"type": "approve", "tool_call_id": "call_1"},
    {"type": "approve", "tool_call_id": "call_1", "decision": "maybe"},
    {"type": "approve", "tool_call_id": "call_1", "decision": "approved", "reason": 3},
    {"type": "approve", "tool_call_id": "no-such-call", "decision": "approved"},
    {"type": "revoke"},
]


def send_each_and_expect_an_error(k: ChatKernel, messages: list[Any]) -> list[str]:
    errors = []
    for content in messages:
        mark = k.action(content)
        try:
            errors.append(k.wait_error(mark))
        except TimeoutError:
            raise AssertionError(f"no error back for {content!r}") from None
    return errors


def test_malformed_messages_get_an_error_and_change_nothing(k: ChatKernel) -> None:
    before = k.state()
    mark = k.fe.mark()
    bad = [*MALFORMED, {"type": "continue"}]  # the last is well formed, but there is nothing to continue
    errors = send_each_and_expect_an_error(k, bad)
    assert "must be an object, not str" in errors[0]
    assert "must be an object, not list" in errors[1]
    assert "no-such-call" in errors[-3]
    assert "nothing to resume" in errors[-1]
    assert k.state() == before
    assert (before["messages"], before["calls"]) == ([], [])
    sent = k.fe.comm_messages(k.comm_id, mark)
    assert [m["content"]["data"]["content"]["type"] for m in sent] == ["error"] * len(bad)


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_malformed_messages_while_a_call_waits_change_nothing_and_a_second_click_is_refused(
    k: ChatKernel, entry: str
) -> None:
    cell, call_id = k.start(entry)
    time.sleep(0.1)
    before = k.state() if entry == "i" else None  # a cell can look only while the kernel is free
    mark = k.fe.mark()
    bad = [*MALFORMED, {"type": "approve", "tool_call_id": call_id, "decision": "approve"}, {"type": "continue"}]
    send_each_and_expect_an_error(k, bad)
    sent = k.fe.comm_messages(k.comm_id, mark)
    assert [m["content"]["data"]["content"]["type"] for m in sent] == ["error"] * len(bad)
    if before is not None:
        assert k.state() == before
    # the call still waits: the first click decides, a second one is refused
    mark = k.approve(call_id)
    k.approve(call_id, "rejected")
    error = k.wait_error(mark)
    assert error.startswith("Approval refused")
    assert call_id in error
    out = k.finish(cell, mark)
    if cell is not None:
        assert out == "REPLY completed | Deleting. Result: completed."
    state = k.state()
    assert state["calls"] == ["x"]
    assert [m["role"] for m in state["messages"]] == ["user", "assistant"]
    assert state["messages"][1]["calls"][0]["decision"] == "approved"
    errors = [c for c in k.fe.custom_messages(k.comm_id, mark) if c["type"] == "error"]
    assert len(errors) == 1, errors


@pytest.mark.parametrize("entry", ["i", "ii", "iii"])
def test_a_second_send_while_busy_steers_the_turn_and_nothing_interleaves(k: ChatKernel, entry: str) -> None:
    cell, call_id = k.start(entry)
    sent = k.action({"type": "send", "text": "and say hi", "id": "s1"})
    k.wait_custom(lambda c: c.get("type") == "sent" and c.get("id") == "s1", sent)
    mark = k.approve(call_id)
    out = k.finish(cell, mark)
    if entry == "iii":
        # A blocking cell holds the kernel's loop, where the box's message is sent from: it is sent once the cell
        # ends, and so starts the next turn.
        assert out == "REPLY completed | Deleting. Result: completed."
        k.wait_custom(
            lambda c: (
                c.get("type") == "patch" and any(is_reply_finish(op) and "and say hi" in str(op) for op in c["ops"])
            ),
            mark,
            timeout=15,
        )
        expected = [("user", "delete x"), ("assistant", "Deleting. Result: completed.")]
    else:
        if cell is not None:
            assert out == "REPLY completed | You said: and say hi"  # the last reply of the turn it joined
        expected = [("user", "delete x"), ("assistant", "Deleting.")]  # then it was delivered, after the result
    state = k.state()
    assert state["calls"] == ["x"]
    assert [(m["role"], m["text"]) for m in state["messages"]] == [
        *expected,
        ("user", "and say hi"),
        ("assistant", "You said: and say hi"),
    ]


def test_two_sends_at_once_start_one_turn(k: ChatKernel) -> None:
    mark = k.action({"type": "send", "text": "delete x"})
    k.action({"type": "send", "text": "and hi"})  # steers the first one's turn
    call_id = k.wait_awaiting(mark)
    k.finish(None, k.approve(call_id))
    state = k.state()
    assert state["calls"] == ["x"]
    assert [m["text"] for m in state["messages"] if m["role"] == "user"] == ["delete x", "and hi"]
    assert not [c for c in k.fe.custom_messages(k.comm_id, mark) if c["type"] == "error"]


def _shown_text(fe: FakeFrontend, cell: str, start: int) -> list[str]:
    """The plain text of what ``cell`` displayed and updated (from ``start`` on), in order."""
    return [
        m["content"]["data"].get("text/plain", "")
        for _, m in fe.iopub[start:]
        if m["parent_header"].get("msg_id") == cell and m["msg_type"] in ("display_data", "update_display_data")
    ]


def test_asking_while_the_input_box_turn_waits_waits_for_it_then_asks_and_leaves_that_turn_alone(k: ChatKernel) -> None:
    """Before: the asking cell failed at once with a SessionBusyError traceback (``chat.ask`` after Run All while a
    turn ran). Now it says it waits, and asks once that turn has ended: ``ask`` never steers."""
    _, call_id = k.start("i")
    mark = k.fe.mark()
    cell = k.fe.execute(CELLS["ii"].format(prompt="hello") + PRINT_REPLY)
    k.fe.wait_iopub(lambda m: "Waiting for the turn in progress…" in str(m["content"]), timeout=15, start=mark)
    k.finish(None, k.approve(call_id))
    assert k.finish(cell, mark) == "REPLY completed | You said: hello"
    assert _shown_text(k.fe, cell, mark)[0] == "Waiting for the turn in progress…"
    assert "Waited for the turn in progress, then asked." in _shown_text(k.fe, cell, mark)
    state = k.state()
    assert state["calls"] == ["x"]
    assert [m["text"] for m in state["messages"]] == [
        "delete x",
        "Deleting. Result: completed.",
        "hello",
        "You said: hello",
    ]


def test_a_blocking_ask_while_the_input_box_turn_waits_is_refused_saying_to_await_and_leaves_that_turn_alone(
    k: ChatKernel,
) -> None:
    """The input box's turn runs on the kernel's loop, which a blocking cell stops: ask_sync cannot wait for it."""
    _, call_id = k.start("i")
    cell = k.fe.execute(CELLS["iii"].format(prompt="hello"))
    content = k.fe.reply(cell, timeout=15)["content"]
    assert (content["status"], content["ename"]) == ("error", "SessionBusyError"), content
    assert "use `await chat.ask(...)`, which waits for it" in content["evalue"]
    state = k.state(after_error=True)
    assert (state["busy"], state["pending"]) == (True, [call_id]), state
    k.finish(None, k.approve(call_id))
    assert [m["text"] for m in k.state()["messages"]] == ["delete x", "Deleting. Result: completed."]


def test_chat_send_from_a_cell_while_a_turn_runs_steers_it(k: ChatKernel) -> None:
    _, call_id = k.start("i")
    cell = k.fe.execute("steered = chat.send('and hello')")
    assert k.fe.reply(cell, timeout=15)["content"]["status"] == "ok"
    k.finish(None, k.approve(call_id))
    assert [m["text"] for m in k.state()["messages"]] == ["delete x", "Deleting.", "and hello", "You said: and hello"]


def test_session_send_that_may_not_steer_is_refused_while_a_turn_runs(k: ChatKernel) -> None:
    _, call_id = k.start("i")
    cell = k.fe.execute("await chat.session.send('hello', steer=False)")
    content = k.fe.reply(cell, timeout=15)["content"]
    assert (content["status"], content["ename"]) == ("error", "SessionBusyError"), content
    state = k.state(after_error=True)
    assert (state["busy"], state["pending"]) == (True, [call_id]), state
    k.finish(None, k.approve(call_id))
    assert [m["text"] for m in k.state()["messages"]] == ["delete x", "Deleting. Result: completed."]


# --- typed answers ------------------------------------------------------------------------------------------------

TYPED_SETUP = r"""
from pydantic import BaseModel

class City(BaseModel):
    name: str
    population: int

typed = ChatWidget(transport=ScriptedTransport(["Lisbon, I think.", '{"name": "Lisbon", "population": 545000}']))
"""


@pytest.mark.parametrize(
    "cell",
    [
        "city = await typed.ask('The capital?', output_type=City, show=False)",
        "city = typed.ask_sync('The capital?', output_type=City, show=False)",
    ],
    ids=["ii", "iii"],
)
def test_a_typed_answer_lands_in_a_variable_for_the_next_cell(k: ChatKernel, cell: str) -> None:
    k.fe.run(TYPED_SETUP)
    k.fe.run(cell, timeout=15)  # the prose answer is refused, asked for again, and the JSON one validates
    printed = k.fe.run(
        "print('CITY', type(city).__name__, city.population + 1, typed.session.messages[-1].output is city)"
    )
    assert printed.strip() == "CITY City 545001 True"


# --- a cell that sends, then asks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("asking", ["await chat.ask('two')", "chat.ask_sync('two')"], ids=["ii", "iii"])
def test_send_then_ask_in_one_cell_answers_both_in_order(k: ChatKernel, asking: str) -> None:
    """Before: the cell's ask took the session first (a blocking one before the sent turn could even begin), and
    the sent message was answered after it, or lost with a stderr line "a turn started from the widget failed"."""
    mark = k.fe.mark()
    cell = k.fe.execute(f"pending = chat.send('one')\nreply = {asking}\nprint('REPLY', reply.text)")
    content = k.fe.reply(cell, timeout=15)["content"]
    assert content["status"] == "ok", content
    k.fe.wait_idle(cell)
    assert k.fe.stream_text(cell).strip() == "REPLY You said: two"
    assert k.fe.stream_text(cell, "stderr") == ""
    printed = k.fe.run("print('FIRST', (await pending).text)", timeout=15)
    assert printed.strip() == "FIRST You said: one"
    assert [m["text"] for m in k.state()["messages"]] == ["one", "You said: one", "two", "You said: two"]
    assert not [c for c in k.fe.custom_messages(k.comm_id, mark) if c["type"] == "error"]


def test_send_as_a_cells_last_expression_shows_nothing(k: ChatKernel) -> None:
    """Before: ``<ReplyFuture at 0x… state=pending>`` showed under the cell (and in Voilà's page)."""
    mark = k.fe.mark()
    cell = k.fe.execute("chat.send('hi')")
    assert k.fe.reply(cell, timeout=15)["content"]["status"] == "ok"
    k.fe.wait_idle(cell)
    shown = [
        m["msg_type"]
        for _, m in k.fe.iopub[mark:]
        if m["parent_header"].get("msg_id") == cell and m["msg_type"] in ("execute_result", "display_data")
    ]
    assert shown == []
    assert k.fe.run("print('SENT', (await _).text)", timeout=15).strip() == "SENT You said: hi"
