"""An in-process stand-in for a front end: records what widgets send and mirrors it the way the JS store does.

The comm is replaced by one that packs every message with jupyter_client's real JSON packer (so anything a real
kernel could not send fails here too) and counts its bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import comm
from comm.base_comm import BaseComm
from jupyter_client.session import json_packer

from ai_widgets import ToolRisk, tool
from ai_widgets.arguments import ArgumentPatch, apply_patches
from ai_widgets.transports import ScriptedReply, ScriptedToolCall
from ai_widgets.widget._serialize import AFTER_STOP_FIELDS


@dataclass
class Sent:
    comm_id: str
    msg_type: str
    data: dict[str, Any]
    nbytes: int


@dataclass
class Wire:
    """Everything every recording comm sent, in order."""

    sent: list[Sent] = field(default_factory=list)
    comms: dict[str, RecordingComm] = field(default_factory=dict)

    def custom(self, comm_id: str) -> list[dict[str, Any]]:
        return [s.data["content"] for s in self.sent if s.comm_id == comm_id and s.data.get("method") == "custom"]

    def mark(self) -> int:
        return len(self.sent)

    def since(self, mark: int) -> list[Sent]:
        return self.sent[mark:]


class RecordingComm(BaseComm):  # type: ignore[misc]
    wire: Wire

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        payload = data or {}
        nbytes = len(json_packer(payload))  # the kernel's packer: raises on what a kernel could not send
        self.wire.sent.append(Sent(self.comm_id, msg_type, json.loads(json_packer(payload)), nbytes))

    def handle(self, content: dict[str, Any]) -> None:
        """Delivers a message as if the front end sent it (``model.send(content)``)."""
        data = {"method": "custom", "content": content}
        self.handle_msg({"content": {"comm_id": self.comm_id, "data": data}, "buffers": []})


class Handle:
    """What ``display(..., display_id=True)`` returns in a kernel: its updates are recorded."""

    def __init__(self, shown: list[Any], data: Any) -> None:
        self.texts = [data["text/plain"]]
        shown.append(self)

    def update(self, data: Any, **_: Any) -> None:
        self.texts.append(data["text/plain"])


@contextmanager
def recording_comms() -> Iterator[Wire]:
    wire = Wire()
    original = comm.create_comm

    class Comm(RecordingComm):
        pass

    Comm.wire = wire  # set before __init__, which already publishes comm_open

    def create(*args: Any, **kwargs: Any) -> RecordingComm:
        created = Comm(*args, **kwargs)
        wire.comms[created.comm_id] = created
        return created

    comm.create_comm = create
    try:
        yield wire
    finally:
        comm.create_comm = original


class Mirror:
    """What a front-end view holds, as the JS store builds it: finished messages (the widget's ``history`` it
    started from, then ``finish`` ops and snapshots) and live ones from patches.

    ``ended`` keeps each live copy as it stood when its ``finish`` op came, to compare with the finished message.
    """

    def __init__(self, history: list[dict[str, Any]] | None = None, *, missing: int = 0) -> None:
        self.finished: list[dict[str, Any]] = list(history or [])
        #: How many finished messages come before ``finished[0]`` that this view does not hold (yet).
        self.missing = missing
        self.live: dict[str, dict[str, Any]] = {}
        self.ended: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []

    def apply(self, content: dict[str, Any]) -> None:
        match content.get("type"):
            case "patch":
                for op in content["ops"]:
                    self.apply_op(op)
            case "snapshot":
                start = content["from"]
                if content.get("fresh"):
                    self.finished, self.missing = [], start
                assert self.missing <= start <= self.missing + len(self.finished), (start, len(self.finished))
                self.finished[start - self.missing :] = content["finished"]
                done = {m["id"] for m in self.finished}
                self.live = {m["id"]: m for m in content["live"] if m["id"] not in done}
            case "older":
                if content["from"] + len(content["finished"]) == self.missing and self.finished:
                    assert content["before"] == self.finished[0]["id"]
                    self.finished[:0] = content["finished"]
                    self.missing = content["from"]
            case "error":
                self.errors.append(content["message"])

    def apply_op(self, op: list[Any]) -> None:
        kind = op[0]
        if kind == "clear":
            self.live.clear()
            self.finished.clear()
            return
        if kind == "cut":  # the finished messages from that position on left the active path
            del self.finished[max(op[1] - self.missing, 0) :]
            return
        if kind == "start":
            self.live[op[1]["id"]] = op[1]
            return
        if kind == "finish":
            position, message = op[1], op[2]
            assert position == self.missing + len(self.finished), (position, self.missing, len(self.finished))
            self.finished.append(message)
            if message["id"] in self.live:
                self.ended[message["id"]] = self.live.pop(message["id"])
            return
        message = self.live.get(op[1])
        if message is None:
            if kind == "call":  # on a finished message only what a call's thread did after the call ended applies
                finished = next((m for m in self.finished if m.get("id") == op[1]), None)
                if finished is not None:
                    call = self._call(finished, op[2])
                    call.update({k: v for k, v in op[3].items() if k in AFTER_STOP_FIELDS})
            return
        match kind:
            case "msg":
                message.update(op[2])
            case "part":  # added at the end, or replacing the part at that index (as the JS store does)
                parts = message["parts"]
                if op[2] < len(parts):
                    parts[op[2]] = op[3]
                else:
                    parts.append(op[3])
            case "text":
                message["parts"][op[2]]["text"] += op[3]
            case "answer":
                part = message["parts"][op[2]]
                part["text"] += op[3]
                apply_patches(part["answer"]["parsed"], [ArgumentPatch(p[0], tuple(p[1]), p[2]) for p in op[4]])
            case "args":
                call = self._call(message, op[2])
                apply_patches(call["parsed_arguments"], [ArgumentPatch(p[0], tuple(p[1]), p[2]) for p in op[3]])
            case "call":
                self._call(message, op[2]).update(op[3])

    @staticmethod
    def _call(message: dict[str, Any], call_id: str) -> dict[str, Any]:
        return next(p for p in message["parts"] if p.get("tool_call_id") == call_id)


def opening_state(widget: Any) -> tuple[list[dict[str, Any]], int]:
    """The finished messages a new view's state carries (through the kernel's packer), and how many come before."""
    state = json.loads(json_packer(widget.get_state(["_history", "_older"])))
    return list(state["_history"]), int(state["_older"].get("count", 0))


def fetch_older(widget: Any, mirror: Mirror) -> list[dict[str, Any]]:
    """Asks ``widget`` for the finished messages before ``mirror``'s first, a chunk at a time as a view does, until
    it holds them all; the answers, in the order they came."""
    answers: list[dict[str, Any]] = []
    wire: Wire = widget.comm.wire
    while mirror.missing:
        mark = wire.mark()
        widget.comm.handle({"type": "older", "at": mirror.missing, "before": mirror.finished[0]["id"]})
        sent = [s.data["content"] for s in wire.since(mark) if s.comm_id == widget.comm.comm_id]
        for content in sent:
            mirror.apply(content)
        answers += sent
        assert sent, "no answer to older"
        assert sent[-1]["type"] == "older", sent
    return answers


def finished_messages(widget: Any) -> list[dict[str, Any]]:
    """The widget's finished messages as a new view gets them: its state's ``history`` (through the kernel's
    packer), and the earlier ones it asks for."""
    history, missing = opening_state(widget)
    mirror = Mirror(history, missing=missing)
    fetch_older(widget, mirror)
    return mirror.finished


# --- a model and a tool for turns that ask for approval ---------------------------------------------------------------


@tool(risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


def script(request: Any) -> ScriptedReply:
    """Answers "delete X" with a call of :func:`delete_file`, its result with the call's state, anything else
    with an echo."""
    if request.tool_results():
        return ScriptedReply(text=f"Result: {request.tool_results()[-1].state.value}.")
    text = request.last_user_text
    if text.startswith("delete "):
        return ScriptedReply(
            text="Deleting.", tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": text[7:]})]
        )
    return ScriptedReply(text=f"You said: {text}")
