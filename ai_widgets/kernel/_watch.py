"""Watching a namespace across one run of code (:func:`watch_start`, :class:`NamespaceWatch`): what it held before,
by identity, and what the run then changed (:class:`RunChanges`).

The names are compared by identity only, in time proportional to their number: no value is copied, hashed or
compared by ``==`` (a 300 MB array costs what an int does). In-place changes are looked for only in the values of
the names the code mentions, by a bounded fingerprint (:mod:`ai_widgets.kernel._fingerprint`).
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ai_widgets.kernel._changes import RunChanges
from ai_widgets.kernel._fingerprint import Fingerprint, fingerprint
from ai_widgets.kernel._names import is_ipython_name

__all__ = ["MAX_WATCHED", "NamespaceWatch", "RunDiff", "code_names", "watch_start"]

#: The most values one watch fingerprints (the names the code mentions that hold a list, a frame, an array...).
MAX_WATCHED = 256
IDENTIFIER = re.compile(r"[^\W\d]\w*")
MISSING = object()


def code_names(code: str) -> frozenset[str]:
    """The identifiers that appear anywhere in ``code``: the names it may read, bind, delete or change in place.

    Read from the text, not the syntax tree: a superset (attribute names, words in strings) that also holds the
    names in an IPython magic's arguments (``%time df.sort_values(inplace=True)``) and in code that does not parse.
    A name too many costs one bounded fingerprint if it holds a mutable value, nothing otherwise.
    """
    return frozenset(IDENTIFIER.findall(code))


def watch_start(namespace: Mapping[str, Any], code_names: Iterable[str]) -> NamespaceWatch:
    """Starts watching ``namespace`` across a run of code.

    Args:
        namespace: The namespace the code runs in (a kernel's user namespace, a dict).
        code_names: The names the code mentions (:func:`code_names`): their values are fingerprinted, to see
            whether the run changed them in place.

    Returns:
        The watch; after the run, :meth:`NamespaceWatch.changes` says what changed.
    """
    return NamespaceWatch(namespace, code_names)


@dataclass(frozen=True, slots=True)
class RunDiff:
    """What a run changed, with the objects an undo needs.

    Attributes:
        changes: The names created, rebound, deleted and changed in place.
        old: The rebound and deleted names -> the objects they held before the run.
        left: The created and rebound names -> the objects the run bound them to.
    """

    changes: RunChanges
    old: dict[str, Any]
    left: dict[str, Any]


def snapshot(namespace: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """A namespace's names and objects, as two lists in the same order, taken in one step.

    Two lists cost a third of a dict's copy in a namespace from which names were deleted (such a dict is copied
    entry by entry). For a dict, both lists are made within one bytecode instruction (the unpacking of a ``map``
    that only calls C code), so with the GIL no other thread's change can come between them.
    """
    if type(namespace) is dict:
        views = cast("tuple[Iterable[Any], Iterable[Any]]", (namespace.keys(), namespace.values()))
        keys, values = map(list, views)
        return keys, values
    copy = dict(namespace)
    return list(copy), list(copy.values())


class NamespaceWatch:
    """A namespace as it was before a run: its names and their objects (references only, which keep the objects
    alive while the watch lives), and the fingerprints of the mutable values of the names the code mentions.

    Build one with :func:`watch_start`.
    """

    def __init__(self, namespace: Mapping[str, Any], code_names: Iterable[str]) -> None:
        self._keys, self._values = snapshot(namespace)
        self._before: dict[str, Any] | None = None
        # The objects fingerprinted, with their fingerprints: looked at again after the run, wherever they are.
        self._prints: dict[str, tuple[Any, Fingerprint]] = {}
        for name in code_names:
            value = namespace.get(name, MISSING) if isinstance(name, str) else MISSING
            if value is MISSING or is_ipython_name(name):
                continue
            found = fingerprint(value)
            if found is not None:
                self._prints[name] = (value, found)
                if len(self._prints) >= MAX_WATCHED:
                    break

    @property
    def before(self) -> Mapping[str, Any]:
        """The namespace's name -> object map as it was when the watch started (made when first asked for)."""
        if self._before is None:
            self._before = dict(zip(self._keys, self._values, strict=True))
        return self._before

    def changes(self, namespace: Mapping[str, Any]) -> RunChanges:
        """What changed in ``namespace`` since the watch started: names created, rebound (to another object) and
        deleted, and names whose value (the object they held before) the run changed in place (``mutated``: its
        fingerprint changed; a name can be rebound or deleted and mutated too). IPython's own names (``_``,
        ``_i3``, ``Out``...) and dunder names are left out.

        Time proportional to the number of names, most of it in C: the names are compared by identity in place
        when no name was deleted (the usual run), else looked up once each."""
        return self.diff(namespace).changes

    def diff(self, namespace: Mapping[str, Any]) -> RunDiff:
        """:meth:`changes`, with the objects an undo needs (:class:`RunDiff`)."""
        keys, values = snapshot(namespace)
        held = len(self._keys)
        if keys[:held] == self._keys:
            # No name was deleted (a dict keeps its order, and adds at the end): the names past the old ones are
            # new, and the old ones are compared in place, by identity, in C (``map`` stops at the shorter).
            rebound_at = true_positions(list(map(operator.is_not, self._values, values)))
            old = {self._keys[i]: self._values[i] for i in rebound_at}
            left = {keys[i]: values[i] for i in (*rebound_at, *range(held, len(keys)))}
            created, rebound, deleted = keys[held:], list(old), []
        else:
            before = self.before
            after = dict(zip(keys, values, strict=True))
            olds = map(before.get, keys, itertools.repeat(MISSING))
            moved = list(itertools.compress(keys, map(operator.is_not, olds, values)))
            created = [name for name in moved if name not in before]
            rebound = [name for name in moved if name in before]
            # Only when some name is gone: the names now, less the new ones, are fewer than the names before.
            deleted = list(before.keys() - after.keys()) if held > len(keys) - len(created) else []
            old = {name: before[name] for name in (*rebound, *deleted)}
            left = {name: after[name] for name in (*created, *rebound)}
        created, rebound, deleted = (persons(names) for names in (created, rebound, deleted))
        # The values the names held before, wherever they are now: one the run changed in place and then rebound
        # or deleted comes back changed when the run is undone, and is reported too.
        mutated = []
        for name, (value, earlier) in self._prints.items():
            later = fingerprint(value)
            if later is not None and not earlier.same(later):
                mutated.append(name)
        changes = RunChanges(tuple(created), tuple(rebound), tuple(deleted), tuple(sorted(mutated)))
        kept = set(created) | set(rebound) | set(deleted)  # IPython's own names are not undone either
        return RunDiff(
            changes,
            {name: value for name, value in old.items() if name in kept},
            {name: value for name, value in left.items() if name in kept},
        )


def true_positions(flags: list[bool]) -> list[int]:
    """Where ``flags`` holds ``True``: found by ``list.index``, in C, in time proportional to the length and the
    number found (few: the names a run rebound), without an object made for each position."""
    found: list[int] = []
    position = -1
    while True:
        try:
            position = flags.index(True, position + 1)
        except ValueError:
            return found
        found.append(position)


def persons(names: list[Any]) -> list[str]:
    """The person's names among ``names``, sorted: IPython's own (``_``, ``_i3``, ``Out``...), dunder names and
    names that are not strings left out."""
    return sorted(name for name in names if isinstance(name, str) and not is_ipython_name(name))
