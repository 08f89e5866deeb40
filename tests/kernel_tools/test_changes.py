"""What a run changed, as the model is told it (ai_widgets.kernel.RunChanges)."""

from __future__ import annotations

from ai_widgets.kernel import RunChanges


def test_the_line_names_each_kind_of_change() -> None:
    changes = RunChanges(created=("df2", "plot"), rebound=("df",), deleted=("tmp",), mutated=("rows",))
    assert changes.line() == (
        "Changed: created df2, plot; rebound df; deleted tmp; changed in place: rows (cannot be undone)."
    )
    assert not changes.is_empty
    assert changes.names == {"df2", "plot", "df", "tmp", "rows"}


def test_the_line_leaves_out_the_kinds_that_did_not_happen() -> None:
    assert RunChanges(deleted=("a", "b")).line() == "Changed: deleted a, b."
    assert RunChanges(mutated=("xs",)).line() == "Changed: changed in place: xs (cannot be undone)."


def test_no_change() -> None:
    assert RunChanges().is_empty
    assert RunChanges().line() == "No variables changed."


def test_the_line_is_bounded_however_many_names_changed() -> None:
    names = tuple(f"v{n:05}" for n in range(10_000))
    line = RunChanges(created=names).line()
    assert line.startswith("Changed: created v00000, v00001,")
    assert line.endswith("and 9,980 more.")
    assert len(line) < 300
