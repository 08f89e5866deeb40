"""A proxy that nothing may reach: the agent's ``HTTPS_PROXY``/``HTTP_PROXY`` point here (``NO_PROXY`` lets loopback
through to the fake servers), so any request of a proxy-honouring client for the network is caught and recorded.

It accepts connections on 127.0.0.1 (a free port), records the first bytes of each, and closes them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class ProxyTrap:
    """The trap's URL and what reached it (the first bytes of each connection: ``CONNECT host:443 ...``)."""

    url: str
    caught: list[bytes] = field(default_factory=list)


@contextmanager
def proxy_trap() -> Iterator[ProxyTrap]:
    """Listens while the context is open."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    trap = ProxyTrap(f"http://127.0.0.1:{listener.getsockname()[1]}")

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed
            with connection:
                connection.settimeout(2)
                try:
                    trap.caught.append(connection.recv(300) or b"(connected, sent nothing)")
                except OSError:
                    trap.caught.append(b"(connected, sent nothing)")

    thread = threading.Thread(target=serve, name="proxy-trap", daemon=True)
    thread.start()
    try:
        yield trap
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        listener.close()
        thread.join(5)
