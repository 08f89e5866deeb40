"""A cell waits for a widget click, in a real kernel: every ipykernel version, comms on the main shell or a subshell.

The kernel side is a minimal anywidget whose ``on_msg`` handler resolves a thread-safe future, like an
approval click: the handler may run on the main thread, in the comm pump, or on a subshell thread.

(i)   a turn started by a widget message runs on the kernel's main loop; cells stay free;
(ii)  ``await await_with_comms(...)`` in a cell gets the click;
(iii) ``wait_with_comms(...)`` in a blocking cell gets the click;
and later requests queued during a wait are answered after it, in order; an interrupt ends a wait cleanly.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("jupyter_client")

from tests.kernel.frontend import FakeFrontend

# The module under test is loaded from its file, so these tests need neither the widget layer nor its
# front-end bundle.
SETUP = r"""
import asyncio, concurrent.futures, importlib.util, pathlib, sys, threading
import anywidget, traitlets

def _load_kernel_module():
    root = pathlib.Path(importlib.util.find_spec("ai_widgets").origin).parent
    spec = importlib.util.spec_from_file_location("aiw_kernel", root / "widget" / "_kernel.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["aiw_kernel"] = module
    spec.loader.exec_module(module)
    return module

aiw = _load_kernel_module()
get_ipython().Completer.use_jedi = False  # jedi's first completion can take seconds on a loaded machine

class Probe(anywidget.AnyWidget):
    _esm = "export default { render() {} }"
    kind = traitlets.Unicode("aiw-probe").tag(sync=True)
    pending = traitlets.Unicode("").tag(sync=True)

    def __init__(self):
        super().__init__()
        self.futures = {}
        self.seen = []
        self.on_msg(self._on_msg)

    def request(self, rid):
        future = self.futures[rid] = concurrent.futures.Future()
        self.pending = rid
        return future

    def _on_msg(self, _widget, content, _buffers):
        self.seen.append((content.get("type"), threading.current_thread().name))
        if content.get("type") == "approval":
            future = self.futures.get(content["id"])
            if future is not None and not future.done():
                future.set_result(content["decision"])
        elif content.get("type") == "start":  # the widget's input box
            aiw.run_on_main_loop(self._turn(content["id"]))

    async def _turn(self, rid):
        decision = await asyncio.wrap_future(self.request(rid))
        on_main = asyncio.get_running_loop() is aiw.main_loop()
        self.pending = f"done:{rid}:{decision}:{threading.current_thread().name}:{on_main}"

probe = Probe()
"""

CHECK_CLEAN = """
f = aiw.FILTER
assert f is None or (f.depth == 0 and f.internals.stream._recv_callback != f._on_recv), "comm filter left installed"
"""

# What the cell waits in: (ii) an awaiting cell, (iii) a blocking cell.
WAITS = {
    "ii": "result = await aiw.await_with_comms(asyncio.wrap_future(probe.request({rid!r})))",
    "iii": "result = aiw.wait_with_comms(probe.request({rid!r}))",
}


@dataclass
class Kernel:
    fe: FakeFrontend
    comm_id: str
    version: str
    subshell: bool

    def click(self, rid: str, decision: str = "allow") -> None:
        content = {"type": "approval", "id": rid, "decision": decision}
        self.fe.send_custom(self.comm_id, content, subshell=self.subshell)

    def start_waiting(self, wait: str, rid: str, after: str = "") -> str:
        """Sends a cell that waits for the click on ``rid``; returns once the request is on screen."""
        mark = self.fe.mark()
        cell = self.fe.execute(WAITS[wait].format(rid=rid) + f"\nprint('RESULT', result){after}")
        self.fe.wait_state(self.comm_id, "pending", rid, start=mark)
        return cell

    def check_clean(self) -> None:
        self.fe.run(CHECK_CLEAN)

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(x) for x in self.version.split(".")[:2])


@pytest.fixture(scope="module")
def kernel(kernel_config: tuple[str, str, str]) -> Iterator[Kernel]:
    python, version, mode = kernel_config
    fe = FakeFrontend(python)
    try:
        if mode == "subshell":
            assert fe.has_subshells, f"ipykernel {version} does not advertise subshells"
            fe.create_subshell()
        fe.run(SETUP)
        yield Kernel(fe, fe.widget_comm("aiw-probe"), version, subshell=mode == "subshell")
    finally:
        fe.close()


def run_after_error(fe: FakeFrontend, code: str) -> str:
    """Runs a cell after a failed one; ipykernel aborts cells that arrive right after an error, so retry those."""
    for _ in range(20):
        msg_id = fe.execute(code)
        if fe.reply(msg_id, timeout=10)["content"]["status"] != "aborted":
            break
        time.sleep(0.05)
    assert fe.replies[msg_id]["content"]["status"] == "ok", fe.replies[msg_id]["content"]
    fe.wait_idle(msg_id)
    return fe.stream_text(msg_id)


def expected_kind(version: tuple[int, ...]) -> str:
    if version < (7, 0):
        return "ipykernel6"
    return "ipykernel7" if version < (7, 4) else "ipykernel7-concurrent-comms"


def test_kernel_support_is_detected(kernel: Kernel) -> None:
    out = kernel.fe.run("s = aiw.kernel_support(); print(s.kind, s.version)")
    assert out.split() == [expected_kind(kernel.version_tuple), kernel.version]


@pytest.mark.parametrize("wait", ["ii", "iii"])
def test_waiting_cell_gets_the_click(kernel: Kernel, wait: str) -> None:
    rid = f"click-{wait}"
    cell = kernel.start_waiting(wait, rid)
    time.sleep(0.1)  # the cell is waiting now
    kernel.click(rid)
    reply = kernel.fe.reply(cell, timeout=10)
    assert reply["content"]["status"] == "ok", reply["content"]
    kernel.fe.wait_idle(cell)
    assert kernel.fe.stream_text(cell).strip() == "RESULT allow"
    kernel.check_clean()


@pytest.mark.parametrize("wait", ["ii", "iii"])
def test_requests_queued_during_a_wait_are_answered_after_it_in_order(kernel: Kernel, wait: str) -> None:
    fe = kernel.fe
    fe.run("order = []")
    rid = f"order-{wait}"
    first = kernel.start_waiting(wait, rid, after="; order.append(1)")
    later = [
        fe.execute("order.append(2)"),
        fe.request("complete_request", {"code": "ord", "cursor_pos": 3}),
        fe.request("kernel_info_request", {}),
        fe.execute("order.append(3)"),
    ]
    kernel.click("someone-else", "deny")  # unrelated comm traffic is handled too, and changes nothing
    # Read the shell channel for a while before the click: any reply that arrives now overtook the waiting cell.
    with pytest.raises(TimeoutError):
        fe.reply(first, timeout=0.3)
    assert not any(msg_id in fe.replies for msg_id in later), "a request was answered while the cell waited"
    kernel.click(rid)
    later.append(fe.execute("order.append(4)"))  # queued right behind the click
    names = ["waiting cell", "cell 2", "complete", "kernel_info", "cell 3", "cell 4"]
    try:
        replies = [fe.reply(msg_id, timeout=10) for msg_id in [first, *later]]
    except TimeoutError:
        got = [name for name, msg_id in zip(names, [first, *later], strict=True) if msg_id in fe.replies]
        raise AssertionError(f"replies only to {got}; kernel output: {fe.stream_text(first)!r}") from None
    assert [r["content"]["status"] for r in replies] == ["ok"] * 6
    positions = [fe.reply_order.index(msg_id) for msg_id in [first, *later]]
    assert positions == sorted(positions), "replies out of order"
    assert "order" in replies[2]["content"]["matches"]
    assert fe.run("print(order, result)").strip() == "[1, 2, 3, 4] allow"
    kernel.check_clean()


@pytest.mark.parametrize("wait", ["ii", "iii"])
def test_interrupt_ends_the_wait_and_the_next_cell_runs(kernel: Kernel, wait: str) -> None:
    fe = kernel.fe
    waiting = kernel.start_waiting(wait, f"interrupt-{wait}")
    queued = fe.execute("print('queued')")
    time.sleep(0.2)
    fe.interrupt()
    reply: dict[str, Any] = fe.reply(waiting, timeout=10)["content"]
    assert reply["status"] == "error"
    # An awaiting cell is cancelled by ipykernel (CancelledError); a blocking one gets KeyboardInterrupt.
    assert reply["ename"] == ("KeyboardInterrupt" if wait == "iii" else "CancelledError")
    assert fe.reply(queued, timeout=10)["content"]["status"] in ("ok", "aborted")
    assert run_after_error(fe, "print('next')").strip() == "next"
    kernel.check_clean()
    # and the next wait still gets its click
    rid = f"after-interrupt-{wait}"
    cell = kernel.start_waiting(wait, rid)
    kernel.click(rid)
    assert fe.reply(cell, timeout=10)["content"]["status"] == "ok"


def test_turn_started_from_the_widget_runs_on_the_main_loop_and_cells_stay_free(kernel: Kernel) -> None:
    fe = kernel.fe
    mark = fe.mark()
    fe.send_custom(kernel.comm_id, {"type": "start", "id": "box"}, subshell=kernel.subshell)
    fe.wait_state(kernel.comm_id, "pending", "box", start=mark)
    assert fe.run("print(1 + 1)").strip() == "2"  # the turn waits in the background; cells run
    kernel.click("box", "deny")
    fe.wait_state(kernel.comm_id, "pending", "done:box:deny:MainThread:True", start=mark, timeout=10)


def test_a_background_wait_does_not_hold_later_cells(kernel: Kernel) -> None:
    fe = kernel.fe
    mark = fe.mark()
    fe.run("bg = asyncio.ensure_future(aiw.await_with_comms(asyncio.wrap_future(probe.request('bg'))))")
    fe.wait_state(kernel.comm_id, "pending", "bg", start=mark)
    assert fe.run("print(bg.done())").strip() == "False"
    kernel.click("bg")
    fe.run("await asyncio.wait_for(asyncio.shield(bg), 5)\nprint(bg.result())")
    kernel.check_clean()
