"""One turn at a time, whatever thread asks: checking that the session is idle and taking it is one step.

Two threads, each with its own event loop, start at the same moment (a ``threading.Barrier``), many times over; the
session writes a history file, which widens any gap between the check and the claim. The second caller gets
``SessionBusyError``, and the history stays what turns taken one after the other make.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import ChatSession, Message, MessageStatus, SessionBusyError, tool
from ai_widgets.changes import BusyChanged, ConversationCleared, MessageAdded, MessageFinished, SessionChange
from ai_widgets.events import ResponseCompleted, ResponseStarted, StreamEvent, TextDelta
from ai_widgets.messages import FinishReason, Role
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedTransport

TRIES = 30


class Activity:
    """Counts what runs at once (model streams and tool runs), across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = 0
        self.most = 0

    def enter(self) -> None:
        with self._lock:
            self.active += 1
            self.most = max(self.most, self.active)

    def leave(self) -> None:
        with self._lock:
            self.active -= 1


class SlowModel:
    """Answers every request with a short text, slowly enough that a second turn would overlap it."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.activity.enter()
        try:
            yield ResponseStarted()
            await asyncio.sleep(0.005)
            yield TextDelta("done")
            yield ResponseCompleted(FinishReason.STOP)
        finally:
            self.activity.leave()


def make_session(path: Path, activity: Activity) -> ChatSession:
    @tool
    async def echo(text: str) -> str:
        """Returns its argument, slowly.

        Args:
            text: Any text.
        """
        activity.enter()
        try:
            await asyncio.sleep(0.005)
            return text
        finally:
            activity.leave()

    return ChatSession(SlowModel(activity), tools=[echo], history=path)


async def send(session: ChatSession) -> object:
    return await session.send("hello", steer=False)


async def steer(session: ChatSession) -> object:
    """A send that steers a running turn (its message then starts the next turn: the model calls no tools)."""
    return await session.send("hello")


async def resume(session: ChatSession) -> object:
    return await session.resume()


async def run_call(session: ChatSession) -> object:
    return await session.run_call("echo", {"text": "by hand"})


async def clear(session: ChatSession) -> object:
    session.clear()
    return None


Starter = Callable[[ChatSession], Any]


def race(session: ChatSession, first: Starter, second: Starter) -> list[object]:
    """Runs both starters at once, each on its own thread and event loop; what each returned or raised."""
    barrier = threading.Barrier(2)
    results: list[object] = [None, None]

    def run(index: int, starter: Starter) -> None:
        async def main() -> object:
            barrier.wait()
            return await starter(session)

        try:
            results[index] = asyncio.run(main())
        except BaseException as exc:  # reported to the test
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return results


def check_history(messages: list[Message]) -> None:
    """No reply was cut off by another turn, and no turn's messages are interleaved with another's."""
    for message in messages:
        if message.role is Role.ASSISTANT:
            assert message.status is MessageStatus.COMPLETED, message
    for before, after in itertools.pairwise(messages):
        assert not (before.role is Role.USER and after.role is Role.USER), [m.role.value for m in messages]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (send, send),
        (steer, steer),
        (steer, run_call),
        (send, clear),
        (send, resume),
        (send, run_call),
        (resume, resume),
        (run_call, run_call),
        (run_call, clear),
    ],
    ids=lambda starter: starter.__name__,
)
def test_two_threads_never_run_two_turns_at_once(tmp_path: Path, first: Starter, second: Starter) -> None:
    for attempt in range(TRIES):
        activity = Activity()
        session = make_session(tmp_path / f"chat{attempt}.json", activity)
        changes: list[SessionChange] = []
        session.subscribe(changes.append)
        asyncio.run(session.send("start"))  # something to resume
        results = race(session, first, second)
        for result in results:
            assert result is None or isinstance(result, (Message, SessionBusyError)), result
        assert activity.most == 1, f"two turns ran at once (try {attempt})"
        messages = session.messages
        check_history(messages)
        # The history is what was added since the last clear, nothing lost: a clear never lands inside a turn.
        added: list[str] = []
        for change in changes:
            if isinstance(change, ConversationCleared):
                added.clear()
            elif isinstance(change, MessageAdded):
                added.append(change.message.id)
        assert [m.id for m in messages] == added, f"try {attempt}"
        started = [r for r in results if isinstance(r, Message)]
        if not any(isinstance(c, ConversationCleared) for c in changes):
            assert messages[0].text == "start"
            assert len([m for m in messages if m.role is Role.ASSISTANT]) == 1 + len(started)


def test_a_stop_while_the_session_is_being_claimed_stops_that_turn(tmp_path: Path) -> None:
    # stop() in the moment between the claim and the turn's task (the user message being written to the history
    # file) is not lost: the turn ends stopped before its first request.
    activity = Activity()
    session = make_session(tmp_path / "chat.json", activity)
    stopped: list[bool] = []

    def on_change(change: object) -> None:
        if type(change).__name__ == "MessageAdded" and not stopped:
            stopped.append(session.stop())

    session.subscribe(on_change)
    reply = asyncio.run(session.send("hello"))
    assert stopped == [True]
    assert reply.status is MessageStatus.CANCELLED
    assert activity.most == 0
    assert not session.busy
    assert asyncio.run(session.send("again")).status is MessageStatus.COMPLETED


def test_observers_hear_a_turn_end_before_a_turn_started_on_another_thread_begins() -> None:
    """Defect: a turn freed the session before it told its observers it had ended, so a turn another thread started
    in between added its messages before that end, and an observer following one turn (the asking cell's view of it)
    took them for that turn's. Here the other thread starts its turn as the first reply finishes, and gets every
    chance to add its message before the first turn says it ended."""
    session = ChatSession(ScriptedTransport(lambda request: ScriptedReply(text=f"re: {request.last_user_text}")))
    heard: list[str] = []
    second: dict[str, Any] = {}

    def send_second() -> None:
        second["reply"] = asyncio.run(session.send("second"))

    def observe(change: SessionChange) -> None:
        match change:
            case MessageAdded(message=message):
                heard.append(f"added {message.text}")
            case BusyChanged(busy=busy):
                heard.append(f"busy {busy}")
            case MessageFinished(message=message) if message.text == "re: first" and "thread" not in second:
                second["thread"] = threading.Thread(target=send_second)
                second["thread"].start()
                deadline = time.monotonic() + 0.5
                while "added second" not in heard and time.monotonic() < deadline:
                    time.sleep(0.005)

    session.subscribe(observe)
    first = asyncio.run(session.send("first"))
    second["thread"].join(10)
    assert heard.index("busy False") < heard.index("added second"), heard
    assert first.text == "re: first"
    assert second["reply"].text == "re: second"
    assert [m.text for m in session.messages] == ["first", "re: first", "second", "re: second"]
