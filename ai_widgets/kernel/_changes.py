"""What one run of code changed in a namespace (:class:`RunChanges`): the names it created, rebound and deleted, the
values it changed in place, and the one line the model is told of them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_LINE_NAMES", "RunChanges"]

#: The most names of one kind the line names; the rest are counted.
MAX_LINE_NAMES = 20


@dataclass(frozen=True, slots=True)
class RunChanges:
    """The names one run changed, each tuple sorted.

    Attributes:
        created: Names bound that did not exist before.
        rebound: Names bound to another object than before.
        deleted: Names that existed before and no longer do.
        mutated: Names whose value (the object they held before the run) was changed in place, where a bounded
            fingerprint could see it (pandas, numpy, list, dict, set); these cannot be undone. A name the run also
            rebound or deleted is in both: undoing puts back its object, as it is now.
    """

    created: tuple[str, ...] = ()
    rebound: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    mutated: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether the run changed no variable."""
        return not (self.created or self.rebound or self.deleted or self.mutated)

    @property
    def names(self) -> frozenset[str]:
        """Every name the run touched, whatever it did to it."""
        return frozenset((*self.created, *self.rebound, *self.deleted, *self.mutated))

    def line(self) -> str:
        """The one line the model is told: ``Changed: created df2, plot; rebound df; deleted tmp; changed in place:
        rows (cannot be undone).``, or ``No variables changed.``"""
        if self.is_empty:
            return "No variables changed."
        kinds = [("created", self.created), ("rebound", self.rebound), ("deleted", self.deleted)]
        said = [f"{verb} {listed(names)}" for verb, names in kinds if names]
        if self.mutated:
            said.append(f"changed in place: {listed(self.mutated)} (cannot be undone)")
        return f"Changed: {'; '.join(said)}."


def listed(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:MAX_LINE_NAMES])
    more = len(names) - MAX_LINE_NAMES
    return f"{shown} and {more:,} more" if more > 0 else shown
