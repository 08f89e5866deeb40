"""Undoing runs of code (ai_widgets.kernel.UndoLog): what a run rebound, deleted and created is put back, newest
first, all or nothing, and in-place changes are said to be beyond undoing."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest

from ai_widgets.kernel import RunChanges, UndoError, UndoLog, code_names, watch_start


class Value:
    """An object a weak reference can follow."""


def run(log: UndoLog, call: str, namespace: dict[str, Any], code: str) -> RunChanges:
    watch = watch_start(namespace, code_names(code))
    exec(code, namespace)
    return log.record(call, watch, namespace)


def snapshot(namespace: dict[str, Any]) -> dict[str, int]:
    return {name: id(value) for name, value in namespace.items() if name != "__builtins__"}


def test_undo_puts_back_what_a_run_rebound_and_deleted_and_removes_what_it_created() -> None:
    log = UndoLog()
    df, tmp = Value(), Value()
    namespace: dict[str, Any] = {"df": df, "tmp": tmp, "other": 1}
    before = snapshot(namespace)
    changes = run(log, "call_1", namespace, "df = [1]\ndf2 = df\ndel tmp")
    assert changes == RunChanges(created=("df2",), rebound=("df",), deleted=("tmp",))
    assert log.changes("call_1") == changes
    assert log.undo("call_1", namespace) == "Undid call_1: removed df2; put back df, tmp."
    assert snapshot(namespace) == before
    assert namespace["df"] is df
    assert namespace["tmp"] is tmp
    assert log.is_undone("call_1")


def test_undo_says_in_place_changes_cannot_be_undone() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"rows": [1]}
    run(log, "c1", namespace, "rows.append(2)\nn = len(rows)")
    assert log.undo("c1", namespace) == "Undid c1: removed n. The in-place changes to rows cannot be undone."
    assert namespace == {"rows": [1, 2], "__builtins__": namespace["__builtins__"]}


def test_a_run_that_only_changed_values_in_place_says_nothing_was_undone() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"rows": [1]}
    run(log, "c1", namespace, "rows.append(2)")
    assert log.undo("c1", namespace) == (
        "Nothing undone for c1: it only changed rows in place, which cannot be undone."
    )
    run(log, "c2", namespace, "print(1)")
    assert log.undo("c2", namespace) == "Nothing to undo for c2: it changed no variables."


def test_a_later_run_that_touched_the_same_names_must_be_undone_first() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"df": Value()}
    original = namespace["df"]
    run(log, "c1", namespace, "df = [1]")
    run(log, "c2", namespace, "other = 1")
    run(log, "c3", namespace, "df.append(2)")
    run(log, "c4", namespace, "df = df + [3]")
    with pytest.raises(UndoError, match=r"a later run \(c4\) changed df too. Undo c4, then c3 first"):
        log.undo("c1", namespace)
    assert namespace["df"] == [1, 2, 3], "nothing changed"
    assert log.undo("c4", namespace) == "Undid c4: put back df."
    with pytest.raises(UndoError, match=r"Undo c3 first"):
        log.undo("c1", namespace)
    assert "cannot be undone" in log.undo("c3", namespace)
    assert log.undo("c1", namespace) == "Undid c1: put back df."
    assert namespace["df"] is original
    assert log.undo("c2", namespace) == "Undid c2: removed other."


def test_a_name_changed_since_the_run_is_not_undone() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"a": 1}
    run(log, "c1", namespace, "a = [2]\nb = [3]\ndel_me = 0")
    namespace["b"] = "the person's"
    with pytest.raises(UndoError, match=r"c1: b changed since it ran .* nothing was undone"):
        log.undo("c1", namespace)
    assert namespace["a"] == [2], "all or nothing"
    assert "del_me" in namespace
    namespace["b"] = log_left = [3]
    with pytest.raises(UndoError, match="b changed since"):
        log.undo("c1", namespace)  # equal is not enough: the very object the run left
    del log_left


def test_a_deleted_name_bound_again_since_is_not_undone() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"tmp": 1}
    run(log, "c1", namespace, "del tmp")
    namespace["tmp"] = 2
    with pytest.raises(UndoError, match="tmp changed since"):
        log.undo("c1", namespace)


def test_a_created_name_the_person_deleted_since_is_not_undone() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {}
    run(log, "c1", namespace, "x = [1]")
    del namespace["x"]
    with pytest.raises(UndoError, match="x changed since"):
        log.undo("c1", namespace)


def test_undoing_twice_an_unknown_call_or_one_too_old_is_an_error() -> None:
    log = UndoLog(limit=2)
    namespace: dict[str, Any] = {}
    run(log, "c1", namespace, "a = 1")
    run(log, "c2", namespace, "b = 2")
    log.undo("c2", namespace)
    with pytest.raises(UndoError, match="c2 was undone already"):
        log.undo("c2", namespace)
    with pytest.raises(UndoError, match="no run of code by that call is known"):
        log.undo("nope", namespace)
    run(log, "c3", namespace, "c = 3")
    assert len(log) == 2
    assert "c1" not in log
    with pytest.raises(UndoError, match=r"c1: it is too old \(only the last 2 runs are kept\)"):
        log.undo("c1", namespace)
    assert namespace["a"] == 1


def test_a_call_is_recorded_once() -> None:
    log = UndoLog(limit=1)
    namespace: dict[str, Any] = {}
    run(log, "c1", namespace, "a = 1")
    with pytest.raises(ValueError, match="recorded already"):
        run(log, "c1", namespace, "a = 2")
    run(log, "c2", namespace, "a = 3")  # c1 dropped
    with pytest.raises(ValueError, match="recorded already"):
        run(log, "c1", namespace, "a = 4")


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3"])
def test_the_limit_is_a_positive_integer(limit: Any) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        UndoLog(limit=limit)


def test_the_log_keeps_old_objects_alive_until_undone_dropped_or_cleared() -> None:
    log = UndoLog(limit=2)
    namespace: dict[str, Any] = {"a": Value(), "b": Value(), "c": Value()}
    refs = {name: weakref.ref(value) for name, value in namespace.items()}
    run(log, "c1", namespace, "a = 1")
    run(log, "c2", namespace, "b = 1")
    gc.collect()
    assert refs["a"]() is not None, "kept to be put back"
    assert refs["b"]() is not None
    run(log, "c3", namespace, "c = 1")  # c1 dropped
    gc.collect()
    assert refs["a"]() is None
    log.clear()
    gc.collect()
    assert refs["b"]() is None
    assert refs["c"]() is None
    with pytest.raises(UndoError, match="too old"):
        log.undo("c3", namespace)


def test_undo_releases_what_the_run_left() -> None:
    log = UndoLog()
    namespace: dict[str, Any] = {"Value": Value}
    run(log, "c1", namespace, "x = Value()")
    ref = weakref.ref(namespace["x"])
    log.undo("c1", namespace)
    gc.collect()
    assert ref() is None


def test_recording_and_undoing_from_several_threads() -> None:
    log = UndoLog(limit=1000)
    namespace: dict[str, Any] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                name = f"t{n}_{i}"
                watch = watch_start(namespace, [])
                namespace[name] = [i]
                log.record(name, watch, namespace)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(log) == 200
