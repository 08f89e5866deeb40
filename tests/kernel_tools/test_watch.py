"""Watching a namespace across a run (ai_widgets.kernel.watch_start): names created, rebound and deleted by identity,
values changed in place by a bounded fingerprint, and neither copied nor hashed."""

from __future__ import annotations

import time
import tracemalloc
import weakref
from collections import UserDict
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ai_widgets.kernel import RunChanges, code_names, watch_start
from ai_widgets.kernel._fingerprint import MAX_SAMPLE, fingerprint


def run(namespace: dict[str, Any], code: str) -> RunChanges:
    watch = watch_start(namespace, code_names(code))
    exec(code, namespace)
    return watch.changes(namespace)


def test_created_rebound_and_deleted_names() -> None:
    namespace: dict[str, Any] = {"df": [1], "tmp": 2, "keep": 3}
    changes = run(namespace, "df = [1]\nplot = 'p'\ndf2 = df\ndel tmp\nkeep = keep")
    assert changes == RunChanges(created=("df2", "plot"), rebound=("df",), deleted=("tmp",))


def test_a_name_bound_to_the_same_object_again_is_not_rebound() -> None:
    namespace: dict[str, Any] = {"a": [1], "b": None}
    changes = run(namespace, "c = a\na = c\nb = None")
    assert changes == RunChanges(created=("c",))


def test_a_name_deleted_and_bound_again_to_another_object_is_rebound() -> None:
    namespace: dict[str, Any] = {"a": [1], "b": 2}
    assert run(namespace, "del a\nb = 3\na = [1]") == RunChanges(rebound=("a", "b"))


def test_ipythons_own_names_and_dunders_are_not_changes() -> None:
    namespace: dict[str, Any] = {"_": 1, "_i1": "x", "Out": {}}
    changes = run(namespace, "_ = 2\n_i2 = 'y'\n_3 = 4\n__x__ = 5\ndel _i1\nOut = {}\n_mine = 6")
    assert changes == RunChanges(created=("_mine",))  # exec's own __builtins__ is not one either


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("xs = [1, 2, 3]", "xs.append(4)"),
        ("xs = [1, 2, 3]", "xs[0] = 9"),
        ("xs = list(range(1000))", "xs.sort(reverse=True)"),
        ("d = {'a': 1}", "d['b'] = 2"),
        ("d = {'a': [1]}", "d['a'] = [1]"),
        ("s = {1, 2}", "s.add(3)"),
        ("s = {1, 2}", "s.discard(1)"),
        ("a = np.zeros(10)", "a[3] = 1"),
        ("a = np.zeros((1000, 1000))", "a[-1, -1] = 1"),
        ("a = np.zeros((1000, 1000))[:, ::3]", "a[0, 0] = 1"),
        ("a = np.zeros(10)", "a.resize(20, refcheck=False)"),
        ("a = np.zeros(10)", "a.shape = (2, 5)"),
        ("df = pd.DataFrame({'x': [1.0, None, 3.0]})", "df.loc[5] = 9.0"),
        ("df = pd.DataFrame({'x': [1.0, 2.0]})", "df['y'] = 1"),
        ("df = pd.DataFrame({'x': [1.0, 2.0]})", "df.loc[0, 'x'] = 5.0"),
        ("df = pd.DataFrame({'x': range(10_000)})", "df.loc[:, 'x'] = df['x'].to_numpy()[::-1]"),
        ("df = pd.DataFrame({'x': [1, 2]})", "df.columns = ['z']"),
        ("df = pd.DataFrame({'x': ['a', 'b']})", "df.iloc[1, 0] = 'c'"),
        ("ser = pd.Series([1.0, 2.0])", "ser.iloc[0] = 7.0"),
        ("ser = pd.Series([1.0, 2.0])", "ser.index = ['a', 'b']"),
    ],
)
def test_an_in_place_change_the_code_makes_is_seen(setup: str, code: str) -> None:
    namespace: dict[str, Any] = {"np": np, "pd": pd}
    exec(setup, namespace)
    (name,) = {n for n in namespace if n not in {"np", "pd", "__builtins__"}}
    assert run(namespace, code) == RunChanges(mutated=(name,))


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("xs = [1.5, float('nan')]", "len(xs)"),
        (
            "df = pd.DataFrame({'x': [1.0, float('nan')], 'when': pd.to_datetime(['2024-01-01', None])})",
            "df.describe()",
        ),
        (
            "df = pd.DataFrame({'x': pd.array([1, None], dtype='Int64'), 's': pd.array(['a', None], dtype='string')})",
            "df.head()",
        ),
        ("df = pd.DataFrame({'x': [[1], [2]]})", "df.shape"),
        ("ser = pd.Series(pd.Categorical(['a', 'b', None]))", "ser.value_counts()"),
        ("a = np.array([np.nan, 1.0])", "a.sum()"),
        ("d = {'k': float('nan')}", "d.get('k')"),
    ],
)
def test_reading_a_value_is_no_change(setup: str, code: str) -> None:
    """Each read of a frame makes new objects (a NaN, a Timestamp): what is equal stays equal."""
    namespace: dict[str, Any] = {"np": np, "pd": pd}
    exec(setup, namespace)
    assert run(namespace, code) == RunChanges()


def test_only_the_values_of_names_the_code_mentions_are_fingerprinted() -> None:
    """A change made through another name is not seen: the watch reads no value the code does not name."""
    namespace: dict[str, Any] = {"xs": [1], "grow": None}
    exec("def grow():\n    xs.append(2)", namespace)
    assert run(namespace, "grow()") == RunChanges()
    assert run(namespace, "grow()  # and xs") == RunChanges(mutated=("xs",))


def test_a_change_between_the_sampled_elements_is_not_reported() -> None:
    """The fingerprint is bounded: what it reports changed, but not every change is reported."""
    namespace: dict[str, Any] = {"xs": list(range(100_000))}
    assert run(namespace, "xs[12345] = -1") == RunChanges()


def test_a_value_changed_in_place_and_then_rebound_or_deleted_is_reported_as_both() -> None:
    """Undo puts the old object back, changed: the change must have been reported."""
    namespace: dict[str, Any] = {"xs": [1], "ys": [1]}
    assert run(namespace, "xs.append(2)\nxs = [3]\nys.append(2)\ndel ys") == RunChanges(
        rebound=("xs",), deleted=("ys",), mutated=("xs", "ys")
    )


def test_code_names_reads_every_identifier_also_in_magics_and_code_that_does_not_parse() -> None:
    assert code_names("df.sort_values(inplace=True)") >= {"df", "sort_values", "inplace", "True"}
    assert "rows" in code_names("%time rows.append(1)")
    assert "frame" in code_names("get_ipython().run_line_magic('time', 'frame.dropna(inplace=True)')")
    assert {"données", "x"} <= code_names("données = x +")
    assert "9x" not in code_names("9x = 1")
    assert "x" in code_names("9x = 1")


def test_the_watch_keeps_the_objects_it_saw() -> None:
    class Thing:
        pass

    thing = Thing()
    namespace: dict[str, Any] = {"thing": thing}
    ref = weakref.ref(thing)
    watch = watch_start(namespace, ["thing"])
    del thing, namespace["thing"]
    assert ref() is not None
    assert watch.before["thing"] is ref()
    assert watch.changes(namespace) == RunChanges(deleted=("thing",))


def test_names_that_are_not_strings_are_left_out() -> None:
    namespace: dict[Any, Any] = {1: "one"}
    watch = watch_start(namespace, [])
    namespace[2] = "two"
    del namespace[1]
    assert watch.changes(namespace) == RunChanges()


def test_a_value_whose_reading_raises_is_not_fingerprinted() -> None:
    class Odd(list[int]):
        def __len__(self) -> int:
            raise RuntimeError("no")

    odd = Odd([1, 2])
    assert fingerprint(odd) is not None  # read as a list, without its own methods
    assert fingerprint(object()) is None

    class Raising(pd.DataFrame):
        @property
        def index(self) -> Any:  # type: ignore[override]
            raise RuntimeError("no index")

    assert fingerprint(Raising({"x": [1]})) is None


def test_a_large_namespace_and_a_large_array_are_neither_copied_nor_read_whole() -> None:
    big = np.zeros(40_000_000)  # 320 MB
    namespace: dict[str, Any] = {f"v{n}": [n] for n in range(10_000)} | {"big": big}
    tracemalloc.start()
    try:
        started = time.perf_counter()
        watch = watch_start(namespace, code_names("x = 1\nbig[0] = big[1]"))
        exec("x = 1", namespace)
        changes = watch.changes(namespace)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert changes == RunChanges(created=("x",))
    assert peak < 5_000_000, "the watch copies references and a bounded sample only"
    assert seconds < 0.25  # some ms here; under a tracer, on a shared machine


def test_an_array_fingerprint_reads_a_bounded_sample() -> None:
    print_ = fingerprint(np.arange(10_000_000))
    assert print_ is not None
    assert len(print_.key[-1]) == MAX_SAMPLE * 8


def test_a_namespace_that_is_a_mapping_but_no_dict() -> None:
    class Namespace(UserDict[str, Any]):
        pass

    namespace = Namespace({"a": [1], "b": 2, "gone": 3})
    watch = watch_start(namespace, ["a"])
    namespace["a"].append(2)
    namespace["b"] = 4
    namespace["new"] = 5
    del namespace["gone"]
    assert watch.changes(namespace) == RunChanges(created=("new",), rebound=("b",), deleted=("gone",), mutated=("a",))


def test_what_an_undo_needs_comes_with_the_changes() -> None:
    old_b, gone = [2], [3]
    namespace: dict[str, Any] = {"a": 1, "b": old_b, "gone": gone}
    watch = watch_start(namespace, [])
    namespace["b"] = new_b = [4]
    namespace["c"] = c = [5]
    diff = watch.diff(namespace)
    assert diff.old == {"b": old_b}
    assert diff.old["b"] is old_b
    assert diff.left["b"] is new_b
    assert diff.left["c"] is c
    del namespace["gone"]
    diff = watch.diff(namespace)
    assert diff.changes == RunChanges(created=("c",), rebound=("b",), deleted=("gone",))
    assert diff.old["gone"] is gone
    assert set(diff.left) == {"b", "c"}
