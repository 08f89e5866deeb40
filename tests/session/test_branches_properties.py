"""Random sequences of send, edit, regenerate and switch: the invariants of branches hold after every step.

The active path is a valid conversation (a user message, then the replies to it, turn after turn; every message
finished); nothing is lost (every message ever added is on the active path or in exactly one earlier branch); ids
are unique; every branch point's active alternative is the message at its place; and the history file, reopened,
holds the same active path and the same branches.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_widgets import BranchError, ChatSession, MessageStatus, Role
from ai_widgets.changes import MessageAdded, SessionChange
from ai_widgets.messages import Message
from ai_widgets.transports import ScriptedReply, ScriptedTransport

# One step: ("send",), ("edit", which user message), ("regenerate",), ("switch", which place, which branch).
steps = st.one_of(
    st.tuples(st.just("send")),
    st.tuples(st.just("edit"), st.integers(0, 5)),
    st.tuples(st.just("regenerate")),
    st.tuples(st.just("switch"), st.integers(0, 12), st.integers(0, 3)),
)


def _answer(number: int) -> ScriptedReply | str:
    # Some replies fail, as a provider does: a regenerate then answers again.
    return ScriptedReply(text="half", error=RuntimeError("down"), error_after=1) if number % 5 == 3 else f"a{number}"


def _check(session: ChatSession, added: list[Message]) -> None:
    messages = session.messages
    stored = session._stored_messages()
    ids = [m.id for m in (*messages, *stored)]
    assert len(ids) == len(set(ids)), "a message is in two places"
    assert set(ids) == {m.id for m in added}, "a message was lost (or came from nowhere)"
    if messages:
        assert messages[0].role is Role.USER
    for previous, message in itertools.pairwise(messages):
        assert not (previous.role is Role.USER and message.role is Role.USER), "a user message without its reply"
    assert all(m.status is not MessageStatus.IN_PROGRESS for m in messages)
    for point in session.all_branches():
        assert point.count >= 2
        assert point.alternatives[point.active] is messages[point.position]
        assert {m.role for m in point.alternatives} == {messages[point.position].role}
        assert session.branches(messages[point.position].id) == point


async def _drive(plan: list[tuple[object, ...]], folder: Path) -> None:
    path = folder / "chat.json"
    counter = iter(range(10_000))
    session = ChatSession(ScriptedTransport(lambda _request: _answer(next(counter))), history=path)
    added: list[Message] = []

    def observe(change: SessionChange) -> None:
        if isinstance(change, MessageAdded):
            added.append(change.message)

    session.subscribe(observe)
    for number, step in enumerate(plan):
        messages = session.messages
        users = [m for m in messages if m.role is Role.USER]
        match step:
            case ("send",):
                await session.send(f"q{number}")
            case ("edit", int(which)) if users:
                await session.edit(users[which % len(users)].id, f"e{number}")
            case ("regenerate",):
                if users:
                    await session.regenerate()
                else:
                    try:
                        await session.regenerate()
                    except BranchError:
                        pass
                    else:
                        raise AssertionError("a regenerate with no user message went through")
            case ("switch", int(place), int(index)) if messages:
                point = session.branches(messages[place % len(messages)].id)
                if index < point.count:
                    session.switch_branch(messages[point.position].id, index)
                    assert session.branches(session.messages[point.position].id).active == index
                else:
                    try:
                        session.switch_branch(messages[point.position].id, index)
                    except BranchError:
                        assert session.messages == messages
                    else:
                        raise AssertionError("a switch to a branch that does not exist went through")
            case _:
                pass
        _check(session, added)
    shown = [m.id for m in session.messages]
    points = [(p.position, p.active, [m.id for m in p.alternatives]) for p in session.all_branches()]
    stored = sorted(m.id for m in session._stored_messages())
    session.close()
    again = ChatSession(None, history=path)
    assert [m.id for m in again.messages] == shown
    assert [(p.position, p.active, [m.id for m in p.alternatives]) for p in again.all_branches()] == points
    assert sorted(m.id for m in again._stored_messages()) == stored
    again.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.lists(steps, min_size=1, max_size=12))
def test_random_edits_regenerates_and_switches_keep_the_invariants(plan: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_drive(plan, Path(folder)))
