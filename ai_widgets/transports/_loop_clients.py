"""An SDK client for each event loop a transport's requests run on.

A chat's turns run on the kernel's loop (``send``, ``ask``) and on the package's private loop (``ask_sync``, whose
cell blocks the kernel's). An SDK client pools its HTTP connections, and a connection made on one loop cannot be used
from another: the first request after a switch failed ("bound to a different event loop"; the anthropic SDK then
retried it after a pause, the openai one ended the reply in an error). A client is therefore copied, with an HTTP
client of its own, for each further loop: one the transport built, or one passed in as ``client=`` whose HTTP client
is the SDK's default. One passed in with an HTTP client of its own (a proxy, certificates, which a copy would lose) is
used as given on every loop.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import weakref
from typing import Any

__all__ = ["ClientPerLoop"]


class ClientPerLoop:
    """The client to send through from the running event loop.

    Args:
        client: The transport's SDK client (an openai or anthropic async client): the one the first loop uses.
        own: Whether the transport built ``client``; one it did not is copied only if its HTTP client is the SDK's
            default.
    """

    def __init__(self, client: Any, *, own: bool) -> None:
        self.client = client
        self._own = own or default_http_client(client)
        self._home: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._copies: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # turns on two loops run on two threads

    def current(self) -> Any:
        """The client for the running loop: the transport's own on the first loop that sends, a copy with its own
        HTTP connections on any other (made once per loop, let go with it)."""
        if not self._own:
            return self.client
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._home is None:
                self._home = weakref.ref(loop)
            if self._home() is loop:
                return self.client
            copy = self._copies.get(loop)
            if copy is None:
                copy = self._copies[loop] = self.client.copy(http_client=fresh_http_client(self.client))
            return copy


def fresh_http_client(client: Any) -> Any:
    """An HTTP client like the one the SDK of ``client`` makes by default (its timeouts, limits and redirects)."""
    return sys.modules[type(client).__module__.split(".")[0]].DefaultAsyncHttpxClient()


def default_http_client(client: Any) -> bool:
    """Whether ``client`` sends through the HTTP client its SDK made itself (the openai and anthropic SDKs wrap their
    default in ``AsyncHttpxClientWrapper``; one a person passed as ``http_client=`` is not wrapped)."""
    return type(getattr(client, "_client", None)).__name__ == "AsyncHttpxClientWrapper"
