"""A bounded fingerprint of a mutable value (a pandas frame or series, a numpy array, a list, a dict, a set), to see
cheaply whether code changed it in place.

A fingerprint reads a fixed amount of the value whatever its size: its length or shape and dtype, where its data
lives, and a sample of its elements (a few hundred, spread over the whole), never every element. A 300 MB array
costs microseconds. A change the sample does not cover (one element in the middle of a long list) is not seen:
what is reported as changed in place was changed, but not every change is reported.

pandas and numpy are never imported here: a value is one of theirs only when its library is loaded already.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from ai_widgets._rich import loaded

__all__ = ["MAX_SAMPLE", "Fingerprint", "fingerprint"]

#: The most elements (array items, frame rows, list items, dict entries, set members) one fingerprint samples.
MAX_SAMPLE = 64
#: The most columns of a frame whose sampled values are read.
MAX_COLUMNS = 16
#: A float NaN in a frame's sample: NaN is not equal to itself, and each read of a frame makes new float objects.
NAN = object()


@dataclass(frozen=True, slots=True, eq=False)
class Fingerprint:
    """What a value looked like, in a bounded form.

    Attributes:
        key: Lengths, shapes, dtypes, ids and sampled values; two fingerprints of one value are equal when the
            sample saw no change.
        keep: The objects whose ids ``key`` holds, kept alive so that no new object takes one of their ids.
    """

    key: tuple[Any, ...]
    keep: tuple[Any, ...] = ()

    def same(self, other: Fingerprint) -> bool:
        """Whether ``other`` (the same value's fingerprint, taken later) saw no change. A sampled element whose
        ``==`` raises counts as unchanged: a change that cannot be seen cheaply is not reported."""
        try:
            return bool(self.key == other.key)
        except Exception:
            return True


def positions(length: int) -> list[int]:
    """At most :data:`MAX_SAMPLE` positions spread evenly over ``range(length)``, the first and the last included."""
    if length <= MAX_SAMPLE:
        return list(range(length))
    step = (length - 1) / (MAX_SAMPLE - 1)
    return sorted({round(i * step) for i in range(MAX_SAMPLE)})


def fingerprint(value: Any) -> Fingerprint | None:
    """The bounded fingerprint of ``value``, or ``None`` for a value of another kind (or one that could not be read:
    an object of the person's may raise from anything)."""
    try:
        return read(value)
    except Exception:
        return None


def read(value: Any) -> Fingerprint | None:
    kind = type(value)
    if kind is list:
        return sequence_print("list", value)
    if kind is dict:
        return dict_print(value)
    if kind is set:
        members = tuple(itertools.islice(value, MAX_SAMPLE))
        return Fingerprint(("set", len(value), tuple(map(id, members))), members)
    array = loaded("numpy", "ndarray")
    if array is not None and isinstance(value, array):
        return array_print(value)
    frame, series = loaded("pandas", "DataFrame"), loaded("pandas", "Series")
    if frame is not None and isinstance(value, frame):
        return frame_print(value)
    if series is not None and isinstance(value, series):
        return series_print(value)
    if isinstance(value, list):  # a subclass: its own methods may do anything, its items are still a list's
        return sequence_print(kind.__qualname__, value)
    return None


def sequence_print(kind: str, value: list[Any]) -> Fingerprint:
    items = tuple(list.__getitem__(value, i) for i in positions(list.__len__(value)))
    return Fingerprint((kind, list.__len__(value), tuple(map(id, items))), items)


def dict_print(value: dict[Any, Any]) -> Fingerprint:
    """The first and the last entries (a dict keeps its order; a middle entry set again is not seen)."""
    half = MAX_SAMPLE // 2
    keys = [*itertools.islice(value, half), *itertools.islice(reversed(value), half)]
    values = [value[k] for k in keys]
    return Fingerprint(("dict", len(value), tuple(map(id, keys)), tuple(map(id, values))), (*keys, *values))


def array_print(value: Any) -> Fingerprint:
    """Shape, dtype, strides, where the data lives (a resize moves it), and the bytes of a sample of the elements
    (``flat`` with positions reads only those, also from an array that is not contiguous)."""
    data = value.__array_interface__["data"][0]
    sample = value.flat[positions(int(value.size))].tobytes() if value.size else b""
    return Fingerprint(("ndarray", value.shape, value.dtype.str, value.strides, data, sample))


def frame_print(value: Any) -> Fingerprint:
    """Shape, the index and columns objects (setting either, or adding a column, replaces them), and the values
    of sampled rows of the first :data:`MAX_COLUMNS` columns."""
    index, columns = value.index, value.columns
    rows = positions(int(value.shape[0]))
    sample = value.iloc[:, :MAX_COLUMNS].take(rows).to_numpy(dtype=object) if rows else None
    cells = () if sample is None else tuple(map(cell_key, sample.ravel().tolist()))
    return Fingerprint(("DataFrame", value.shape, id(index), id(columns), cells), (index, columns))


def series_print(value: Any) -> Fingerprint:
    index = value.index
    rows = positions(len(value))
    cells = tuple(map(cell_key, value.take(rows).to_numpy(dtype=object).tolist())) if rows else ()
    return Fingerprint(("Series", len(value), str(value.dtype), id(index), cells), (index,))


def cell_key(value: Any) -> Any:
    """A sampled frame cell as it compares: NaN as one marker; an unhashable object (a list in an object column,
    the same object at each read) by its id."""
    if isinstance(value, float) and math.isnan(value):
        return NAN
    try:
        hash(value)
    except Exception:
        return ("id", id(value))
    return value
