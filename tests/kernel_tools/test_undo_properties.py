"""Random sequences of runs (create, rebind, alias, delete, mutate in place), changes made by the person between
them, and undos: what each run reports is what it did, and undoing puts the namespace back.

Each run applies its steps to a dict namespace between ``watch_start`` and ``UndoLog.record``. A model of the
namespace says what must hold: a run reports exactly the names whose binding it changed (by identity) and the names
it mentions whose list (as it was before the run) it appended to; undoing the newest runs gives back the namespace as it was before them (the same names,
the same objects by identity; only the in-place changes stay, and those were reported); an undo that must wait for a
later run, or that would lose a change the person made since, raises and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_widgets.kernel import RunChanges, UndoError, UndoLog, watch_start

NAMES = ("a", "b", "c", "d", "e")
name = st.sampled_from(NAMES)
step = st.one_of(
    st.tuples(st.just("bind"), name),  # create or rebind, to a new list
    st.tuples(st.just("alias"), name, name),  # the first name to the second's object
    st.tuples(st.just("delete"), name),
    st.tuples(st.just("mutate"), name),  # append to the list, in place
)
operation = st.one_of(
    st.tuples(st.just("run"), st.lists(step, max_size=6)),
    st.tuples(st.just("undo_newest"), st.integers(1, 4)),
    st.tuples(st.just("undo_any"), st.integers(0, 50)),
    st.tuples(st.just("person"), name),  # the person binds a name between runs
)


@dataclass
class Run:
    call: str
    before: dict[str, Any]
    after: dict[str, Any]
    changes: RunChanges
    undone: bool = False
    mutated: set[str] = field(default_factory=set)


def apply(namespace: dict[str, Any], steps: list[tuple[str, ...]], counter: list[int]) -> set[int]:
    """Applies a run's steps; returns the ids of the lists it appended to."""
    appended: set[int] = set()
    for kind, *args in steps:
        target = args[0]
        if kind == "bind":
            counter[0] += 1
            namespace[target] = [counter[0]]
        elif kind == "alias" and args[1] in namespace:
            namespace[target] = namespace[args[1]]
        elif kind == "delete":
            namespace.pop(target, None)
        elif kind == "mutate" and target in namespace:
            namespace[target].append(0)
            appended.add(id(namespace[target]))
    return appended


def expected_changes(
    before: dict[str, Any], after: dict[str, Any], appended: set[int], mentioned: set[str]
) -> RunChanges:
    created = sorted(n for n in after if n not in before)
    rebound = sorted(n for n in after if n in before and after[n] is not before[n])
    deleted = sorted(n for n in before if n not in after)
    # Reported for the names the run mentions whose object before the run it appended to, wherever that is now.
    mutated = sorted(n for n in mentioned if n in before and id(before[n]) in appended)
    return RunChanges(tuple(created), tuple(rebound), tuple(deleted), tuple(mutated))


def identities(namespace: dict[str, Any]) -> dict[str, int]:
    return {n: id(v) for n, v in namespace.items()}


def undo_expected(runs: list[Run], run: Run, namespace: dict[str, Any]) -> dict[str, Any] | str:
    """The namespace after undoing ``run``, or why it cannot be undone."""
    if run.undone:
        return "undone already"
    later = runs[runs.index(run) + 1 :]
    if any(not other.undone and other.changes.names & run.changes.names for other in later):
        return "later run"
    changes = run.changes
    for n in (*changes.created, *changes.rebound):
        if namespace.get(n) is not run.after[n]:
            return "changed since"
    if any(n in namespace for n in changes.deleted):
        return "changed since"
    result = dict(namespace)
    for n in changes.created:
        del result[n]
    for n in (*changes.rebound, *changes.deleted):
        result[n] = run.before[n]
    return result


@settings(max_examples=300, deadline=None)
@given(st.lists(operation, max_size=25))
def test_runs_report_what_they_did_and_undo_puts_the_namespace_back(operations: list[tuple[Any, ...]]) -> None:
    namespace: dict[str, Any] = {}
    log = UndoLog()
    runs: list[Run] = []
    counter = [0]
    for kind, arg in operations:
        if kind == "run":
            before = dict(namespace)
            mentioned = {n for _, *args in arg for n in args}
            watch = watch_start(namespace, mentioned)
            appended = apply(namespace, arg, counter)
            call = f"call_{len(runs)}"
            changes = log.record(call, watch, namespace)
            assert changes == expected_changes(before, namespace, appended, mentioned)
            runs.append(Run(call, before, dict(namespace), changes))
        elif kind == "person":
            counter[0] += 1
            namespace[arg] = [counter[0]]
        else:
            targets = [r for r in reversed(runs) if not r.undone][:arg] if kind == "undo_newest" else runs[arg:][:1]
            for run in targets:
                expected = undo_expected(runs, run, namespace)
                if isinstance(expected, str):
                    was = identities(namespace)
                    with pytest.raises(UndoError):
                        log.undo(run.call, namespace)
                    assert identities(namespace) == was, f"a refused undo ({expected}) changed nothing"
                    break
                log.undo(run.call, namespace)
                run.undone = True
                assert identities(namespace) == identities(expected)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(step, max_size=6), min_size=1, max_size=8))
def test_undoing_every_run_newest_first_gives_back_the_first_namespace(runs: list[list[tuple[str, ...]]]) -> None:
    """Without changes by the person, undoing all runs newest first always succeeds and ends where they started:
    the same names bound to the same objects; the objects appended to were reported as changed in place."""
    start_lists = {n: [n] for n in NAMES[:3]}
    namespace: dict[str, Any] = dict(start_lists)
    start = identities(namespace)
    log = UndoLog()
    counter = [0]
    reported: set[str] = set()
    for number, steps in enumerate(runs):
        mentioned = {n for _, *args in steps for n in args}
        watch = watch_start(namespace, mentioned)
        apply(namespace, steps, counter)
        reported |= set(log.record(f"c{number}", watch, namespace).mutated)
    for number in reversed(range(len(runs))):
        log.undo(f"c{number}", namespace)
    assert identities(namespace) == start
    changed_in_place = {n for n, value in start_lists.items() if value != [n]}
    # A start list appended to under another name (an alias) is reported under that name.
    assert not changed_in_place or reported
