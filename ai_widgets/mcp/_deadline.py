"""A call's deadline that stops while the person is asked (:class:`CallDeadline`): the seconds a call may take are
the server's, not the time a person takes to answer its question."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

__all__: list[str] = ["CallDeadline"]


class CallDeadline:
    """The deadline of one call, as an anyio cancel scope whose clock can be paused.

    Enter :meth:`scope` around the call (on the server's loop); :meth:`paused` around a wait for the person, from
    the call's task or another task on the same loop (a 2025 server asks by a request of its own). Pauses may
    overlap: the clock runs again when the last one ends.

    Args:
        seconds: The seconds the call may run; ``None`` for no bound.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._left = math.inf if seconds is None else float(seconds)
        self._scope: Any = None
        self._pauses = 0
        self._expired = False

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Runs the block under the deadline; :attr:`expired` tells afterwards whether it ran out."""
        import anyio

        scope = anyio.CancelScope(deadline=anyio.current_time() + self._left)
        self._scope = scope
        try:
            with scope:
                yield
        finally:
            self._scope = None
            # The cancel may come out of the SDK as another error: it is still the deadline.
            self._expired = scope.cancel_called

    @property
    def expired(self) -> bool:
        """Whether the deadline ran out (and cancelled the block), once the block has ended."""
        return self._expired

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stops the clock while the block runs (a wait for the person)."""
        import anyio

        self._pauses += 1
        if self._pauses == 1 and self._scope is not None:
            self._left = max(0.0, self._scope.deadline - anyio.current_time())
            self._scope.deadline = math.inf
        try:
            yield
        finally:
            self._pauses -= 1
            if self._pauses == 0 and self._scope is not None:
                self._scope.deadline = anyio.current_time() + self._left
