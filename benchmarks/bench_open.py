"""Bytes to open a view of a long conversation: a ChatWidget of 5,000 finished messages, when it is created and for
each view opened later (a new page, another browser tab).

The comm is one that does what ipykernel does with a message except the socket write (built with
``jupyter_client.Session.msg``, packed with the kernel's JSON packer, signed, serialised); a view is played the way
the front end opens one: the state it asks for (``request_state``), its ``sync``, then ``older`` requests until it
holds every message. Bytes are the content frames (the envelope adds about 540 B a message), the bundle
(``_esm``, ``_css``, sent with the state at creation) included.

Compared in the same run: the same widget with the state it had before (the whole ``history`` in every state),
whose views then need nothing more.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import traitlets
from comm.base_comm import BaseComm

from ai_widgets import ChatSession, ChatWidget
from ai_widgets.transports import ScriptedTransport
from benchmarks.bench_widget import _history, serialising_comms

MESSAGES = 5_000
#: The goal: a view gets the conversation once (the bundle aside), and the first thing it gets is about a screen.
GOAL_TIMES = 1.0
TITLE = f"## Bytes to open a view of a {MESSAGES:,}-message conversation (kernel side)"


@dataclass
class _Sent:
    method: str | None
    content: dict[str, Any]
    nbytes: int


@dataclass
class _Wire:
    sent: list[_Sent] = field(default_factory=list)
    comms: list[BaseComm] = field(default_factory=list)


@contextmanager
def _kernel_like_comms() -> Iterator[_Wire]:
    wire = _Wire()

    def record(data: dict[str, Any], nbytes: int) -> None:
        wire.sent.append(_Sent(data.get("method"), data, nbytes))

    with serialising_comms(record, created=wire.comms.append):
        yield wire


class _WholeStateWidget(ChatWidget):
    """The state as it was: every finished message in ``history``, nothing left out."""

    history: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    older = traitlets.Dict().tag(sync=True)


def _handle(channel: BaseComm, data: dict[str, Any]) -> None:
    channel.handle_msg({"content": {"comm_id": channel.comm_id, "data": data}, "buffers": []})


def _open_view(wire: _Wire, channel: BaseComm) -> dict[str, Any]:
    """Plays a view opening on a new page: the state, ``sync``, then ``older`` until every message is held."""
    mark = len(wire.sent)
    _handle(channel, {"method": "request_state"})
    state = wire.sent[-1].content["state"]
    first_bytes = wire.sent[-1].nbytes
    history = list(state["_history"])
    first_count = len(history)
    missing = int(state.get("_older", {}).get("count", 0))
    _handle(
        channel,
        {"method": "custom", "content": {"type": "sync", "have": missing + len(history), "last": history[-1]["id"]}},
    )
    chunks = 0
    while missing:
        at, before = missing, history[0]["id"]
        _handle(channel, {"method": "custom", "content": {"type": "older", "at": at, "before": before}})
        answer = wire.sent[-1].content["content"]
        assert answer["type"] == "older", answer
        history[:0] = answer["finished"]
        missing = answer["from"]
        chunks += 1
    sent = wire.sent[mark:]
    return {
        "bytes": sum(s.nbytes for s in sent),
        "messages": len(sent),
        "first": first_bytes,
        "first_count": first_count,
        "chunks": chunks,
        "held": len(history),
        "newest_first": history[-1]["id"],
    }


def measure(messages: int) -> dict[str, dict[str, Any]]:
    conversation = _history(messages)
    results: dict[str, dict[str, Any]] = {}
    for name, cls in (("now", ChatWidget), ("before", _WholeStateWidget)):
        with _kernel_like_comms() as wire:
            started = time.perf_counter()
            widget = cls(ChatSession(ScriptedTransport([]), messages=conversation))
            created = wire.sent[:]
            opening = next(s for s in created if s.content.get("state", {}).get("_history") is not None)
            state = opening.content["state"]
            channel = wire.comms[-1]
            view = _open_view(wire, channel)
            second = _open_view(wire, channel)
            results[name] = {
                "created": sum(s.nbytes for s in created),
                "created_messages": len(state["_history"]),
                "bundle": len(json.dumps(state.get("_esm", ""))) + len(json.dumps(state.get("_css", ""))),
                "view": view,
                "second": second,
                "seconds": time.perf_counter() - started,
                "total": len(widget._history),
            }
            widget.close()
    return results


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def run(*, quick: bool = False) -> str:
    messages = 1_000 if quick else MESSAGES
    results = measure(messages)
    now, old = results["now"], results["before"]
    conversation = old["created"] - old["bundle"]  # the whole conversation as one state carries it
    lines = [
        TITLE if not quick else TITLE.replace(f"{MESSAGES:,}", f"{messages:,}"),
        "",
        f"A conversation of {messages:,} finished messages ({_mb(conversation)} as JSON, the bundle aside). Created: "
        "the comm's opening state (with the bundle, "
        f"{_mb(now['bundle'])}, which every state carries). Each view: a page that opens it later (its state, its `sync`, and the `older` "
        "chunks it asks for). Goal: each view gets the conversation once, and first what is on screen.",
        "",
        "| design | at creation | first message of a view | each view, in all | conversation copies per view "
        "| chunks | view holds | before / now (each view) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in (
        ("now: newest in the state, the rest asked for", now),
        ("before: whole history in every state", old),
    ):
        view = r["view"]
        copies = (view["bytes"] - r["bundle"]) / conversation
        lines.append(
            f"| {name} | {_mb(r['created'])} ({r['created_messages']:,} messages) | {_mb(view['first'])} "
            f"({view['first_count']:,} messages) | "
            f"{_mb(view['bytes'])} | {copies:.2f} | {view['chunks']} | {view['held']:,} of {r['total']:,} | "
            f"{old['view']['bytes'] / view['bytes']:.1f}× |"
        )
    lines += [
        "",
        "In the page that ran the cell the view starts from the opening state (no `request_state`): before, "
        f"{_mb(old['created'])} in one message; now {_mb(now['created'])}, then its `older` chunks "
        f"({_mb(now['view']['bytes'] - now['view']['first'])}). Every other connected page gets the opening state "
        "too, shown or not.",
        "",
        f"Creation plus a view on a new page: now {_mb(now['created'] + now['view']['bytes'])}, before "
        f"{_mb(old['created'] + old['view']['bytes'])} "
        f"({(old['created'] + old['view']['bytes']) / (now['created'] + now['view']['bytes']):.1f}×). A second view "
        f"costs the same as the first (now {_mb(now['second']['bytes'])}, before {_mb(old['second']['bytes'])}). "
        f"Within the goal (the conversation at most {GOAL_TIMES:.0f}× per view): "
        + ("**yes**." if now["view"]["bytes"] - now["bundle"] <= conversation * GOAL_TIMES * 1.01 else "**no**."),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv[1:]))
