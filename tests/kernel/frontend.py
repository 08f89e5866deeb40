"""A fake Jupyter front end on jupyter_client: drives a real ipykernel the way a browser does.

- Cells are sent without waiting; shell replies and iopub messages are collected as they come.
- A widget's state arrives on iopub (``comm_open``, then ``comm_msg`` updates).
- anywidget's ``model.send(x)`` in the browser is a shell ``comm_msg`` ``{"method": "custom", "content": x}``.
- JupyterLab >= 4.4 ("commsOverSubshells": "perCommTarget") first sends ``create_subshell_request`` on
  the control channel, then puts ``header.subshell_id`` on every comm message: ``subshell=True``.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

Message = dict[str, Any]


@functools.cache  # asked for each test that takes a kernel, when the tests are collected
def ipykernel_version(python: str) -> str:
    """The ipykernel version installed for ``python``, without starting a kernel."""
    code = "import importlib.metadata as m; print(m.version('ipykernel'))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


class FakeFrontend:
    """One kernel, started with a given Python, and the channels a notebook front end uses."""

    def __init__(self, python: str, startup_timeout: float = 60) -> None:
        self._spec_dir = tempfile.TemporaryDirectory(prefix="aiw-kernelspec-")
        spec = Path(self._spec_dir.name, "aiw-test")
        spec.mkdir()
        argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        spec.joinpath("kernel.json").write_text(json.dumps({"argv": argv, "display_name": "aiw", "language": "python"}))
        self.km = KernelManager(
            kernel_name="aiw-test", kernel_spec_manager=KernelSpecManager(kernel_dirs=[self._spec_dir.name])
        )
        # AIW_KERNEL_LOG=1 shows the kernel's own log (tracebacks in comm handlers end up there).
        output = None if os.environ.get("AIW_KERNEL_LOG") else subprocess.DEVNULL
        self.km.start_kernel(stderr=output, stdout=output)
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=startup_timeout)
        self.iopub: list[tuple[float, Message]] = []
        self.replies: dict[str, Message] = {}
        self.reply_order: list[str] = []
        self._cv = threading.Condition()
        self._stop = False
        self._reader = threading.Thread(target=self._read_iopub, name="fake-frontend-iopub", daemon=True)
        self._reader.start()
        self.subshell_id: str | None = None
        info = self.request("kernel_info_request", {})
        self.supported_features: list[str] = self.reply(info)["content"].get("supported_features", [])
        self._stacks = Path(self._spec_dir.name, "stacks.txt")
        self._stacks_dumped = False
        self._dump_stacks_on_signal()

    # --- a hung kernel's threads, for the failure message -------------------------------------------------------
    def _dump_stacks_on_signal(self) -> None:
        """Makes the kernel write every thread's stack to a file on SIGUSR1 (silently: no execution count, no
        name in the namespace), so a test that times out can say where the kernel is stuck."""
        code = (
            "__import__('faulthandler').register(__import__('signal').SIGUSR1, "
            f"file=open({str(self._stacks)!r}, 'w'), all_threads=True)"
        )
        content = {"code": code, "silent": True, "store_history": False, "allow_stdin": False}
        self.reply(self.request("execute_request", content))

    def _timed_out(self, text: str) -> TimeoutError:
        """A ``TimeoutError`` saying ``text``, with the kernel's thread stacks the first time (a hang's cause)."""
        if getattr(self, "_stacks_dumped", True) or not hasattr(signal, "SIGUSR1"):
            return TimeoutError(text)
        self._stacks_dumped = True
        try:
            os.kill(self.km.provisioner.pid, signal.SIGUSR1)  # type: ignore[union-attr]
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and not self._stacks.stat().st_size:
                time.sleep(0.05)
            stacks = self._stacks.read_text(errors="replace")
        except (OSError, AttributeError) as exc:
            stacks = f"(could not get them: {exc!r})"
        return TimeoutError(f"{text}\n--- the kernel's threads when it timed out ---\n{stacks}")

    # --- iopub ------------------------------------------------------------------------------------------------
    def _read_iopub(self) -> None:
        while not self._stop:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            except Exception:
                if self._stop:
                    return
                raise
            with self._cv:
                self.iopub.append((time.monotonic(), msg))
                self._cv.notify_all()

    def mark(self) -> int:
        """Index of the next iopub message, to wait only for what comes after."""
        with self._cv:
            return len(self.iopub)

    def wait_iopub(self, pred: Callable[[Message], bool], timeout: float = 10, start: int = 0) -> Message:
        """The first iopub message from index ``start`` on that satisfies ``pred``."""
        deadline = time.monotonic() + timeout
        i = start
        with self._cv:
            while True:
                while i < len(self.iopub):
                    if pred(self.iopub[i][1]):
                        return self.iopub[i][1]
                    i += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timed_out("iopub message not seen in time")
                self._cv.wait(remaining)

    def widget_comm(self, model_module_class: str, timeout: float = 10, start: int = 0) -> str:
        """comm_id of the first widget opened (from ``start`` on) whose Python class has this name.

        anywidget models all have ``_model_name == "AnyModel"``; the probe widget adds a synced ``kind``
        trait so tests can tell widgets apart.
        """

        def is_it(m: Message) -> bool:
            state = m["content"].get("data", {}).get("state", {})
            return m["msg_type"] == "comm_open" and state.get("kind") == model_module_class

        return str(self.wait_iopub(is_it, timeout, start)["content"]["comm_id"])

    def wait_state(
        self, comm_id: str, key: str, value: Any, timeout: float = 10, start: int = 0
    ) -> Message:  # an update of the widget's synced trait ``key`` to ``value``
        def is_it(m: Message) -> bool:
            c = m["content"]
            return (
                m["msg_type"] == "comm_msg"
                and c.get("comm_id") == comm_id
                and c["data"].get("method") in ("update", "echo_update")
                and c["data"].get("state", {}).get(key) == value
            )

        return self.wait_iopub(is_it, timeout, start)

    def comm_with_state(self, key: str, value: Any, timeout: float = 10, start: int = 0) -> str:
        """comm_id of the first widget opened (from ``start`` on) whose synced trait ``key`` is ``value``."""

        def is_it(m: Message) -> bool:
            state = m["content"].get("data", {}).get("state", {})
            return m["msg_type"] == "comm_open" and state.get(key) == value

        return str(self.wait_iopub(is_it, timeout, start)["content"]["comm_id"])

    def custom_messages(self, comm_id: str, start: int = 0) -> list[Any]:
        """What the kernel sent with ``widget.send(x)`` on this comm (from ``start`` on): anywidget's ``msg:custom``."""
        with self._cv:
            return [m["content"]["data"]["content"] for _, m in self.iopub[start:] if _is_custom(m, comm_id)]

    def comm_messages(self, comm_id: str, start: int = 0) -> list[Message]:
        """Every ``comm_msg`` the kernel sent on this comm (from ``start`` on): custom messages and state updates."""
        with self._cv:
            return [
                m
                for _, m in self.iopub[start:]
                if m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == comm_id
            ]

    def wait_custom(
        self, comm_id: str, pred: Callable[[Any], bool], timeout: float = 10, start: int = 0
    ) -> Any:  # the first custom message on this comm (from ``start`` on) that satisfies ``pred``
        msg = self.wait_iopub(
            lambda m: _is_custom(m, comm_id) and pred(m["content"]["data"]["content"]), timeout, start
        )
        return msg["content"]["data"]["content"]

    def stream_text(self, parent_id: str, name: str | None = None) -> str:
        """What a request printed: on ``name`` (``"stdout"`` or ``"stderr"``) only, or on both."""
        with self._cv:
            return "".join(
                m["content"]["text"]
                for _, m in self.iopub
                if m["msg_type"] == "stream"
                and m["parent_header"].get("msg_id") == parent_id
                and (name is None or m["content"].get("name") == name)
            )

    # --- shell ------------------------------------------------------------------------------------------------
    def request(
        self,
        msg_type: str,
        content: dict[str, Any],
        subshell_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Sends a shell request without waiting; returns its msg_id."""
        msg = self.kc.session.msg(msg_type, content, metadata=metadata)
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def execute(self, code: str, metadata: dict[str, Any] | None = None) -> str:
        """Queues a cell, as a notebook does; returns the request's msg_id.

        ``metadata``: the request's metadata; JupyterLab and Notebook 7 send ``{"cellId": ...}`` (the cell's id,
        which stays the same when the cell is edited and run again).
        """
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        return self.request("execute_request", content, metadata=metadata)

    def reply(self, msg_id: str, timeout: float = 10) -> Message:
        """The shell reply to ``msg_id``; replies to other requests are kept, in arrival order."""
        deadline = time.monotonic() + timeout
        while msg_id not in self.replies:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timed_out(f"no shell reply to {msg_id} in {timeout} s")
            try:
                msg = self.kc.get_shell_msg(timeout=remaining)
            except queue.Empty:
                continue
            msg["received"] = time.monotonic()
            parent = msg["parent_header"].get("msg_id", "")
            self.replies[parent] = msg
            self.reply_order.append(parent)
        return self.replies[msg_id]

    def run(
        self, code: str, timeout: float = 10, *, metadata: dict[str, Any] | None = None, stream: str | None = None
    ) -> str:
        """Runs a cell to its end; returns what it printed (on ``stream`` only, when given). Fails on an error in
        the cell."""
        msg_id = self.execute(code, metadata)
        content = self.reply(msg_id, timeout)["content"]
        if content["status"] != "ok":
            tb = "\n".join(content.get("traceback", []))
            raise AssertionError(f"cell failed: {content.get('ename')}: {content.get('evalue')}\n{tb}")
        self.wait_idle(msg_id)
        return self.stream_text(msg_id, stream)

    def run_after_error(self, code: str, timeout: float = 10) -> str:
        """``run`` for the cell after a failed one: ipykernel aborts requests that arrive right after an error."""
        deadline = time.monotonic() + timeout
        while True:
            msg_id = self.execute(code)
            content = self.reply(msg_id, timeout)["content"]
            if content["status"] != "aborted" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if content["status"] != "ok":
            raise AssertionError(
                f"cell failed: {content.get('status')}: {content.get('ename')}: {content.get('evalue')}"
            )
        self.wait_idle(msg_id)
        return self.stream_text(msg_id)

    def wait_idle(self, msg_id: str, timeout: float = 10) -> None:
        """Waits for the ``idle`` status of a request, after which all of its output has arrived."""
        self.wait_iopub(
            lambda m: (
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_id") == msg_id
            ),
            timeout,
        )

    def send_custom(self, comm_id: str, content: Any, subshell: bool = False) -> str:
        """What anywidget's ``model.send(content)`` sends from the browser."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        if subshell:
            if self.subshell_id is None:
                raise RuntimeError("no subshell: call create_subshell() first")
            msg["header"]["subshell_id"] = self.subshell_id
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    # --- control ----------------------------------------------------------------------------------------------
    @property
    def has_subshells(self) -> bool:
        return "kernel subshells" in self.supported_features

    def create_subshell(self) -> str:
        """What JupyterLab >= 4.4 does before it sends comm messages on a subshell."""
        msg = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(msg)
        deadline = time.monotonic() + 10
        while True:
            reply = self.kc.control_channel.get_msg(timeout=max(0.01, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                break
        self.subshell_id = str(reply["content"]["subshell_id"])
        return self.subshell_id

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def kill(self) -> None:
        """The kernel process dies at once (SIGKILL), with no interrupt first as ``shutdown_kernel`` sends (which
        would stop a running turn, as the ■ button does), then the channels close."""
        self.km.signal_kernel(signal.SIGKILL)
        self.close()

    def close(self) -> None:
        self._stop = True
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
            self._reader.join(timeout=2)
            self._spec_dir.cleanup()


def _is_custom(m: Message, comm_id: str) -> bool:
    c = m["content"]
    return bool(
        m["msg_type"] == "comm_msg" and c.get("comm_id") == comm_id and c.get("data", {}).get("method") == "custom"
    )
