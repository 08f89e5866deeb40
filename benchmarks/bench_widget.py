"""Kernel side of the widget: CPU and comm bytes per streamed delta, with 10 and 500 earlier messages.

The comm is replaced by one that does what ipykernel does with a message except the socket write: build it with
``jupyter_client.Session.msg``, pack it with the kernel's JSON packer, sign it (HMAC-SHA256) and serialise it.
Deltas arrive at about 1,000 a second in per-frame bursts (a fast provider), so the 30-per-second coalescing is
exercised for real.

Compared in the same run: ChatWidget (session + bridge, patches coalesced per frame) against the straightforward
design, a whole-conversation ``List`` trait reassigned on every delta, and the same trait coalesced to 30 syncs a
second.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import comm
import traitlets
from comm.base_comm import BaseComm
from jupyter_client.session import Session

from ai_widgets import ChatSession, Message
from ai_widgets.events import ResponseCompleted, ResponseStarted, StreamEvent, TextDelta, UsageUpdate
from ai_widgets.messages import FinishReason, dump_messages, load_messages
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport

# Deltas arrive in bursts of 33 every 33 ms (about 1,000 a second, one burst per frame), so the stream's own
# sleeping costs little and the 30-per-second coalescing is exercised for real.
BURST = 33
BURST_INTERVAL = 0.033


class _Counter:
    """Counts what the comms send, and the CPU, between ``start()`` and ``stop()`` (the turn, not the setup)."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0
        self._counting = False
        self._cpu_started = 0.0
        self.cpu = 0.0

    def start(self) -> None:
        self._counting = True
        self._cpu_started = time.process_time()

    def stop(self) -> None:
        self.cpu = time.process_time() - self._cpu_started
        self._counting = False

    def record(self, nbytes: int) -> None:
        if self._counting:
            self.messages += 1
            self.bytes += nbytes


@contextmanager
def serialising_comms(
    record: Callable[[dict[str, Any], int], None], *, created: Callable[[BaseComm], None] | None = None
) -> Iterator[None]:
    """Comms that build, pack, sign and serialise every message as ipykernel would (all but the socket write):
    ``record`` gets each message's data and the bytes of its content frame (the envelope adds about 540 B a
    message); ``created`` each comm as it is made."""
    session = Session(key=b"benchmark-key", username="kernel")

    class Comm(BaseComm):  # type: ignore[misc]
        def publish_msg(
            self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
        ) -> None:
            content = {"data": data or {}, "comm_id": self.comm_id, **keys}
            frames = session.serialize(session.msg(msg_type, content=content, metadata=metadata or {}))
            record(data or {}, len(frames[-1]))

    def create(*args: Any, **kwargs: Any) -> BaseComm:
        made = Comm(*args, **kwargs)
        if created is not None:
            created(made)
        return made

    original = comm.create_comm
    comm.create_comm = create
    try:
        yield
    finally:
        comm.create_comm = original


@contextmanager
def kernel_like_comms() -> Iterator[_Counter]:
    """Comms that serialise every message as ipykernel would, and count its bytes."""
    counter = _Counter()
    with serialising_comms(lambda _data, nbytes: counter.record(nbytes)):
        yield counter


class _Deltas:
    """A transport that replays prebuilt text deltas at about 1,000 a second."""

    def __init__(self, deltas: list[str]) -> None:
        self._deltas = deltas

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield ResponseStarted()
        for index, delta in enumerate(self._deltas, 1):
            yield TextDelta(delta)
            if index % BURST == 0:
                await asyncio.sleep(BURST_INTERVAL)
        yield UsageUpdate(100, len(self._deltas))
        yield ResponseCompleted(FinishReason.STOP)


def _deltas(n: int) -> list[str]:
    text = "The quick brown fox jumps over the lazy dog; "
    return [text[i % 40 : i % 40 + 4 + i % 5] for i in range(n)]


def _history(n: int) -> list[Message]:
    """``n`` finished messages: questions, and answers that carry a write_file call with its result."""

    async def build() -> list[Message]:
        code = "def handler(request):\n    return {'status': 200}\n" * 20
        script = []
        for i in range(n // 2):
            if i % 2:
                script.append(
                    ScriptedReply(
                        text="Writing it. ",
                        tool_calls=[
                            ScriptedToolCall(name="write_file", arguments={"path": f"f{i}.py", "content": code})
                        ],
                    )
                )
            else:
                script.append(ScriptedReply(text="An answer of a few sentences. " * 8))
        session = ChatSession(ScriptedTransport(script), options=None)
        from ai_widgets import SessionOptions

        session.options = SessionOptions(execute_tools=False)
        for i in range(n // 2):
            await session.send(f"question {i}")
        return session.messages

    return load_messages(dump_messages(asyncio.run(build())))


Case = Callable[[_Counter], Any]


def _measure(run: Case) -> _Counter:
    with kernel_like_comms() as counter:
        run(counter)
        return counter


def _session_only(history: list[Message], deltas: list[str]) -> Case:
    """The floor: the same turn with no widget (the stream's own cost, 1 ms sleeps included)."""

    def run(counter: _Counter) -> Any:
        async def turn() -> None:
            session = ChatSession(_Deltas(deltas), messages=history)
            counter.start()
            await session.send("go")
            counter.stop()

        asyncio.run(turn())

    return run


def _ours(history: list[Message], deltas: list[str]) -> Case:
    def run(counter: _Counter) -> Any:
        from ai_widgets.widget import ChatWidget

        async def turn() -> None:
            chat = ChatWidget(ChatSession(_Deltas(deltas), messages=history))
            counter.start()
            await chat.ask("go")
            counter.stop()

        asyncio.run(turn())

    return run


class _WholeConversation(traitlets.HasTraits):
    pass


def _whole_trait(history: list[Message], deltas: list[str], *, coalesce: bool) -> Case:
    """The straightforward widget: the whole conversation in one synced List trait, reassigned on changes."""

    def run(counter: _Counter) -> Any:
        import ipywidgets

        class NaiveChat(ipywidgets.DOMWidget):  # type: ignore[misc]
            messages = traitlets.List().tag(sync=True)

        async def turn() -> None:
            widget = NaiveChat()
            finished = [m.to_dict() for m in history]
            widget.messages = finished
            session = ChatSession(_Deltas(deltas), messages=history)
            loop = asyncio.get_running_loop()
            pending: dict[str, Any] = {"handle": None}

            def sync() -> None:
                pending["handle"] = None
                widget.messages = [*finished, *(m.to_dict() for m in session.messages[len(history) :])]

            def on_change(_change: Any) -> None:
                if not coalesce:
                    sync()
                elif pending["handle"] is None:
                    pending["handle"] = loop.call_later(1 / 30, sync)

            session.subscribe(on_change)
            counter.start()
            await session.send("go")
            sync()
            counter.stop()

        asyncio.run(turn())

    return run


def _unpaced_marginal(n: int, repeats: int) -> tuple[float, float]:
    """Session alone and session + widget on ``n`` deltas with no pacing (one flush at the end): µs per delta."""
    global BURST
    saved, BURST = BURST, n + 1  # never sleep: the stream runs flat out
    try:
        deltas = _deltas(n)
        floor = statistics.median(_measure(_session_only([], deltas)).cpu for _ in range(repeats))
        ours = statistics.median(_measure(_ours([], deltas)).cpu for _ in range(repeats))
    finally:
        BURST = saved
    return floor / n * 1e6, ours / n * 1e6


def run(*, quick: bool = False) -> str:
    n_deltas = 1000 if quick else 6000
    deltas = _deltas(n_deltas)
    rows = []
    floors = {}
    for earlier in (10, 500):
        history = _history(earlier)
        floors[earlier] = statistics.median(
            _measure(_session_only(history, deltas)).cpu for _ in range(1 if quick else 5)
        )
        cases = [
            ("ChatWidget (patches, coalesced)", _ours(history, deltas)),
            ("whole-conversation trait, coalesced to 30/s", _whole_trait(history, deltas, coalesce=True)),
        ]
        if earlier == 10 or not quick:
            cases.append(("whole-conversation trait, every change", _whole_trait(history, deltas, coalesce=False)))
        for name, case in cases:
            # The per-change design is slow enough (ms per delta) that one run says all it can.
            repeats = 1 if quick or name.endswith("every change") else 5
            counters = [_measure(case) for _ in range(repeats)]
            cpu = max(0.0, statistics.median(c.cpu for c in counters) - floors[earlier])
            nbytes, messages = counters[-1].bytes, counters[-1].messages
            rows.append((earlier, name, cpu / n_deltas * 1e6, nbytes / n_deltas, messages))
    ours = {earlier: (us, b) for earlier, name, us, b, _ in rows if name.startswith("ChatWidget")}
    lines = [
        f"## Widget bridge: kernel CPU and comm bytes per streamed delta ({n_deltas} deltas at ~1,000/s)",
        "",
        "CPU: the turn's CPU (bridge, message build, JSON pack, HMAC, serialise) minus the same turn with no widget",
        "(the floor: the stream and the session), divided by the deltas. Bytes: the content frames the",
        "turn sent (finishing its two messages included), divided by the deltas; the envelope adds ~540 B a message.",
        "",
        "| earlier messages | design | CPU µs / delta | bytes / delta | comm messages | CPU vs ours | bytes vs ours |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for earlier, name, us, per_delta, messages in rows:
        base_us, base_bytes = ours[earlier]
        lines.append(
            f"| {earlier} | {name} | {us:.1f} | {per_delta:,.0f} | {messages} | {us / base_us:.1f}× | "
            f"{per_delta / base_bytes:.1f}× |"
        )
    flat_cpu = ours[500][0] / ours[10][0]
    flat_bytes = ours[500][1] / ours[10][1]
    floor_us, ours_us = _unpaced_marginal(5000 if quick else 20000, 3 if quick else 5)
    lines += [
        "",
        f"Unpaced (deltas flat out, so only the per-delta path counts): session {floor_us:.2f} µs per delta, "
        f"session + widget bridge {ours_us:.2f} µs, the bridge {ours_us - floor_us:.2f} µs.",
        f"Floor (session alone, no widget): {floors[10] / n_deltas * 1e6:.0f} / {floors[500] / n_deltas * 1e6:.0f} µs per delta "
        "at 10 / 500 earlier messages.",
        f"ChatWidget from 10 to 500 earlier messages: CPU ×{flat_cpu:.2f}, bytes ×{flat_bytes:.2f} (flat is ×1).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
