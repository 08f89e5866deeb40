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
from typing import Any

from ai_widgets.kernel._changes import RunChanges
from ai_widgets.kernel._fingerprint import Fingerprint, fingerprint
from ai_widgets.kernel._names import is_ipython_name

__all__ = ["MAX_WATCHED", "NamespaceWatch", "code_names", "watch_start"]

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


class NamespaceWatch:
    """A namespace as it was before a run: its name -> object map (a shallow copy: references only, which keep the
    objects alive while the watch lives) and the fingerprints of the mutable values of the names the code mentions.

    Build one with :func:`watch_start`.
    """

    def __init__(self, namespace: Mapping[str, Any], code_names: Iterable[str]) -> None:
        self._before: dict[str, Any] = dict(namespace)
        self._prints: dict[str, Fingerprint] = {}
        for name in code_names:
            value = self._before.get(name, MISSING)
            if value is MISSING or not isinstance(name, str) or is_ipython_name(name):
                continue
            found = fingerprint(value)
            if found is not None:
                self._prints[name] = found
                if len(self._prints) >= MAX_WATCHED:
                    break

    @property
    def before(self) -> Mapping[str, Any]:
        """The namespace's name -> object map as it was when the watch started (read only)."""
        return self._before

    def changes(self, namespace: Mapping[str, Any]) -> RunChanges:
        """What changed in ``namespace`` since the watch started: names created, rebound (to another object) and
        deleted, and names whose value (the object they held before) the run changed in place (``mutated``: its
        fingerprint changed; a name can be rebound or deleted and mutated too). IPython's own
        names (``_``, ``_i3``, ``Out``...) and dunder names are left out."""
        after = dict(namespace)  # one step for a dict: another thread's change cannot come between two reads
        before = self._before
        keys = list(after)
        # The names whose object is not the one before (bound now, absent before, included): identity, in C.
        olds = map(before.get, keys, itertools.repeat(MISSING))
        moved = itertools.compress(keys, map(operator.is_not, olds, after.values()))
        created: list[str] = []
        rebound: list[str] = []
        for name in moved:
            if isinstance(name, str) and not is_ipython_name(name):
                (created if name not in before else rebound).append(name)
        deleted = [n for n in before.keys() - after.keys() if isinstance(n, str) and not is_ipython_name(n)]
        # The values the names held before, wherever they are now: one the run changed in place and then rebound
        # or deleted comes back changed when the run is undone, and is reported too.
        mutated = []
        for name, earlier in self._prints.items():
            later = fingerprint(before[name])
            if later is not None and not earlier.same(later):
                mutated.append(name)
        return RunChanges(
            tuple(sorted(created)), tuple(sorted(rebound)), tuple(sorted(deleted)), tuple(sorted(mutated))
        )
