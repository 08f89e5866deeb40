"""A sync call sent to another executor (a process pool, a Dask cluster): the invocation built where it runs."""

from __future__ import annotations

import logging
from typing import Any

from ai_widgets._remote_progress import ProgressSender, RemoteCall
from ai_widgets.tools._invocation import Handler, ToolInvocation, ToolProgress

__all__: list[str] = []


class _DetachedProgress(ToolProgress):
    """The progress of a call running where an executor sent it: sent back to the card through ``sender`` (on a
    Dask worker), or else kept there and not shown on the card (logged once)."""

    __slots__ = ("_logged", "_sender")

    def __init__(self, sender: ProgressSender | None = None) -> None:
        super().__init__()
        self._sender = sender
        self._logged = False

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        super().report(fraction, message)
        if self._sender is not None:
            self._sender.send(self.fraction, self.message)
            return
        if not self._logged:
            self._logged = True
            logging.getLogger(__name__).info(
                "progress reported by a tool running on another executor is not shown on its card"
            )


def _call_detached(
    handler: Handler,
    fields: dict[str, Any],
    invocation_parameter: str | None,
    remote: RemoteCall | None,
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Runs where the executor sends it: builds the call's invocation there and calls the handler with it.

    ``context`` is ``None`` (it stays in the kernel). On a Dask worker (``remote`` given) ``progress`` goes back to
    the card and ``cancelled`` is set once the kernel has cancelled the call; elsewhere ``progress`` is not shown
    and ``cancelled`` is never set (nothing crosses back over the process boundary).
    """
    link = None if remote is None else remote.attach()
    if link is None:
        invocation = ToolInvocation(**fields, progress=_DetachedProgress())
    else:
        invocation = ToolInvocation(**fields, progress=_DetachedProgress(link.sender), cancelled=link.cancelled)
    try:
        if invocation_parameter is None:
            return handler(invocation, *args, **kwargs)
        return handler(*args, **kwargs, **{invocation_parameter: invocation})
    finally:
        if link is not None:
            link.close()
