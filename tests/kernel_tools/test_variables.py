"""The person's variables as the model sees them (ai_widgets.kernel.list_variables and inspect_variable): bounded,
largest first, without IPython's names, and never a secret's value."""

from __future__ import annotations

import base64
import math
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import pytest

from ai_widgets.kernel import UndoLog, VariableError, VariableView, inspect_variable, list_variables
from ai_widgets.kernel._variables import approximate_size, describe_shape, human_size, type_label


def rows_of(table: str) -> list[list[str]]:
    """The table's rows as cells (the header and the rule left out)."""
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_variables_are_listed_largest_first_with_type_shape_and_size() -> None:
    frame = pd.DataFrame({"x": np.arange(1000), "y": np.zeros(1000)})
    namespace: dict[str, Any] = {"n": 1, "arr": np.zeros((20, 50)), "df": frame, "words": ["a", "b"], "s": "hello"}
    table = list_variables(namespace)
    assert table.startswith("5 variables, about ")
    rows = rows_of(table)
    assert [row[0] for row in rows] == ["df", "arr", "words", "s", "n"]
    assert rows[0] == ["df", "pandas DataFrame", "1,000 × 2", human_size(int(frame.memory_usage().sum()))]
    assert rows[1] == ["arr", "numpy ndarray[float64]", "20 × 50", "7.8 KB"]
    assert rows[2][1:3] == ["list", "2"]
    assert rows[3][1:3] == ["str", "5"]
    assert rows[4][1:3] == ["int", ""]


def test_ipythons_names_private_names_modules_functions_and_classes_are_left_out() -> None:
    namespace: dict[str, Any] = {
        "In": [""],
        "Out": {},
        "_": 1,
        "__": 2,
        "_i3": "x",
        "_3": 4,
        "_oh": {},
        "_dh": [],
        "exit": object(),
        "quit": object(),
        "get_ipython": lambda: None,
        "__builtins__": {},
        "_private": 5,
        "os": os,
        "helper": lambda: None,
        "Thing": type("Thing", (), {}),
        "length": len,
        "method": [].append,
        "kept": 6,
        1: "not a name",
    }
    assert [row[0] for row in rows_of(list_variables(namespace))] == ["kept"]
    listed = [row[0] for row in rows_of(list_variables(namespace, include_functions=True))]
    assert sorted(listed) == ["Thing", "helper", "kept", "length", "method"]


def test_nothing_to_list() -> None:
    assert list_variables({"os": os, "_x": 1}).startswith("No variables.")


def test_the_list_is_bounded_and_says_how_many_more() -> None:
    namespace: dict[str, Any] = {f"v{n:05}": "x" * n for n in range(10_000)}
    table = list_variables(namespace, limit=3)
    rows = rows_of(table)
    assert [row[0] for row in rows] == ["v09999", "v09998", "v09997"]
    assert "10,000 variables" in table
    assert "the 3 largest" in table
    assert table.endswith("(Not shown: 9,997 smaller variables.)")
    assert len(list_variables(namespace)) < 5_000


@pytest.mark.parametrize("limit", [0, -3, 2.5, True, None])
def test_the_limit_is_a_positive_integer(limit: Any) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        list_variables({}, limit=limit)


def test_a_secrets_value_is_never_listed_nor_its_size() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    namespace: dict[str, Any] = {"OPENAI_API_KEY": secret, "githubToken": secret, "monkey": "banana"}
    table = list_variables(namespace)
    assert secret not in table
    rows = {row[0]: row for row in rows_of(table)}
    assert rows["OPENAI_API_KEY"][1:] == ["str", "(value not shown: the name looks like a secret's)", ""]
    assert rows["githubToken"][3] == ""
    assert rows["monkey"][2:] == ["6", human_size(approximate_size("banana"))]


def test_the_librarys_own_objects_are_listed_by_type_only() -> None:
    table = list_variables({"log": UndoLog()})
    assert rows_of(table) == [["log", "ai_widgets UndoLog", "(the chat's own object)", ""]]


def test_sizes_are_cheap_approximations() -> None:
    strings = pd.DataFrame({"s": ["x" * 1000] * 10_000})
    assert approximate_size(strings) == int(strings.memory_usage(deep=False).sum())  # not every string's size
    series = strings["s"]
    assert approximate_size(series) == series.memory_usage(deep=False)
    assert approximate_size(strings.index) == strings.index.memory_usage(deep=False)
    assert approximate_size(np.zeros(1000)) == 8000
    assert approximate_size(np.zeros(2000)[::2]) == 8000  # the view's elements
    polars = pl.DataFrame({"x": range(1000)})
    assert approximate_size(polars) == polars.estimated_size()
    assert approximate_size([1, 2, 3]) == __import__("sys").getsizeof([1, 2, 3])


def test_a_size_or_shape_that_raises_is_left_blank() -> None:
    class Odd:
        def __sizeof__(self) -> int:
            raise RuntimeError("no")

    class Proxy:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"asked for {name}")

    assert approximate_size(Odd()) == 0
    assert approximate_size(Proxy()) > 0
    assert rows_of(list_variables({"odd": Odd(), "proxy": Proxy()}))[-1][0] == "odd"


def test_shapes_and_labels() -> None:
    assert describe_shape(pd.Series([1, 2])) == "2"
    assert describe_shape(pl.DataFrame({"a": [1, 2]})) == "2 × 1"
    assert describe_shape(range(10**12)) == "1,000,000,000,000"
    assert describe_shape(object()) == ""
    assert type_label(np.zeros(2, dtype=np.int8)) == "numpy ndarray[int8]"
    assert type_label(pl.DataFrame()) == "polars DataFrame"
    assert type_label(Path(".")) == f"pathlib {type(Path('.')).__qualname__}"


def test_listing_ten_thousand_names_is_quick() -> None:
    namespace: dict[str, Any] = {f"v{n}": [n] * (n % 50) for n in range(10_000)}
    namespace |= {"df": pd.DataFrame({"x": range(1000)}), "arr": np.zeros(1000)}
    started = time.perf_counter()
    list_variables(namespace)
    assert time.perf_counter() - started < 1.0  # tens of ms (the benchmark measures it)


# --- inspect_variable -------------------------------------------------------------------------------------------------


def test_a_frame_is_shown_as_attach_shows_it_with_what_it_is() -> None:
    frame = pd.DataFrame({"price": [1.5, 2.5, math.nan], "city": ["Paris", "Lyon", "Nice"]})
    view = inspect_variable({"sales": frame}, "sales")
    assert isinstance(view, VariableView)
    assert view.images == ()
    first, rest = view.text.split("\n", 1)
    assert first == f"`sales`: pandas DataFrame, 3 × 2, about {human_size(int(frame.memory_usage().sum()))}"
    assert rest.startswith("3 rows × 2 columns\nColumns (dtype): price (float64), city (")
    assert "| 2 | NaN | Nice |" in rest
    assert "Attached" not in view.text


def test_a_large_frame_is_shown_without_reading_it_whole() -> None:
    frame = pd.DataFrame({"x": np.arange(2_000_000), "s": np.array(["a", "b"], dtype=object)[np.arange(2_000_000) % 2]})
    started = time.perf_counter()
    view = inspect_variable({"big": frame}, "big")
    assert time.perf_counter() - started < 2.0
    assert "2,000,000 rows × 2 columns" in view.text
    assert "(Not shown: 1,999,980 of 2,000,000 rows" in view.text


def test_plain_values_arrays_and_strings() -> None:
    namespace: dict[str, Any] = {"xs": [1, 2], "arr": np.arange(5), "text": "hello", "flag": True}
    assert (
        inspect_variable(namespace, "xs").text
        == "`xs`: list, length 2, about " + human_size(approximate_size([1, 2])) + "\n[\n 1,\n 2\n]"
    )
    assert "shape (5,), dtype int64\n[0 1 2 3 4]" in inspect_variable(namespace, "arr").text
    assert inspect_variable(namespace, "text").text.endswith("\nhello")
    assert inspect_variable(namespace, "flag").text.endswith("\ntrue")


def test_the_view_is_bounded() -> None:
    view = inspect_variable({"text": "x" * 100_000}, "text", max_chars=1000)
    assert len(view.text) < 1300
    assert "more characters left out" in view.text


def test_a_figure_comes_as_its_image() -> None:
    figure, axes = plt.subplots()
    axes.plot([1, 2, 3])
    try:
        view = inspect_variable({"fig": figure}, "fig")
    finally:
        plt.close(figure)
    (image,) = view.images
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data or "").startswith(b"\x89PNG")
    assert view.text.startswith("`fig`: matplotlib Figure")
    assert view.text.endswith("(1 image sent with this view.)")


def test_an_object_nothing_converts_is_shown_by_its_repr() -> None:
    class Point:
        def __repr__(self) -> str:
            return "Point(1, 2)"

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert inspect_variable({"p": Point()}, "p").text.endswith("\nPoint(1, 2)")
    assert "\n<Broken instance at 0x" in inspect_variable({"b": Broken()}, "b").text
    assert inspect_variable({"s": {3}}, "s").text.endswith("\n{3}")


def test_a_huge_container_nothing_converts_is_shown_by_its_first_items() -> None:
    huge = set(range(2_000_000))
    tracemalloc.start()
    try:
        text = inspect_variable({"s": huge}, "s").text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # the repr of the whole set would be a string of about 16 MB
    assert text.startswith("`s`: set, length 2,000,000, about ")
    assert text.endswith(", ...}")
    assert len(text) < 1000
    keyed = inspect_variable({"d": {(n, n): "x" * 5000 for n in range(1000)}}, "d").text
    assert len(keyed) < 21_000
    assert keyed.endswith("this view is at most 20,000 characters]")


def test_a_path_is_shown_without_reading_its_file(tmp_path: Path) -> None:
    secret_file = tmp_path / "notes.txt"
    secret_file.write_text("the file's content")
    text = inspect_variable({"p": secret_file}, "p").text
    assert str(secret_file) in text
    assert "not read" in text
    assert "the file's content" not in text


def test_bytes_that_are_no_image_are_not_sent() -> None:
    pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
    view = inspect_variable({"doc": pdf}, "doc")
    assert view.images == ()
    assert "(a application/pdf file (doc): not sent here; attach= sends it)" in view.text


def test_a_secrets_value_is_never_inspected() -> None:
    with pytest.raises(VariableError, match="'db_password' looks like a secret's name: its value is never shown"):
        inspect_variable({"db_password": "hunter2"}, "db_password")


def test_secrets_inside_a_value_are_redacted() -> None:
    config = {"model": "gpt", "api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123", "url": "postgres://u:hunter22@db/x"}
    text = inspect_variable({"config": config}, "config").text
    assert "abcdefghij" not in text
    assert "hunter22" not in text
    assert '"model": "gpt"' in text


def test_the_librarys_own_objects_are_shown_by_type_only() -> None:
    view = inspect_variable({"log": UndoLog()}, "log")
    assert view == VariableView("`log`: ai_widgets UndoLog (the chat's own object): its contents are not shown.")


def test_an_unknown_name_suggests_close_ones() -> None:
    namespace: dict[str, Any] = {"sales": 1, "sales_2024": 2, "_sales": 3, "os": os}
    with pytest.raises(VariableError, match=r"no variable is named 'sales_204' \(did you mean sales_2024, sales\?\)"):
        inspect_variable(namespace, "sales_204")
    with pytest.raises(VariableError, match=r"no variable is named 'zzz' \(list_variables lists them\)"):
        inspect_variable(namespace, "zzz")
    with pytest.raises(VariableError, match="a variable's name is a str, not int"):
        inspect_variable(namespace, 3)  # type: ignore[arg-type]


def test_a_private_name_or_a_module_can_still_be_inspected_by_name() -> None:
    assert inspect_variable({"_tmp": 5}, "_tmp").text.endswith("\n5")
    assert "module 'os'" in inspect_variable({"os": os}, "os").text
