"""How the provider transports set up their SDK client, the same way for all: the SDK imported only when its transport
is used (or a clear message naming the extra to install), ``client=`` refused together with arguments that configure
a client, an SDK's synchronous client refused, and a placeholder key for a server named by ``base_url``."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NO_KEY", "check_async_client", "check_connection_arguments", "import_sdk"]

#: The key a transport gives its SDK for a server named by ``base_url`` when no key is configured: the SDKs refuse to
#: build a client without one, a local server needs none, and a remote one answers 401 with a message naming the key.
NO_KEY = "not-needed"


def import_sdk(module: str, extra: str) -> Any:
    """Imports a provider SDK, or says which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'this transport needs the {module!r} package: pip install "ai_widgets[{extra}]"') from exc


def check_connection_arguments(client: object, **connection: object) -> None:
    """Refuses ``client=`` together with arguments that configure a client (``base_url=``, ``api_key=``, ...).

    Raises:
        ValueError: Both were given.
    """
    given = [f"{name}=" for name, value in connection.items() if value is not None]
    if client is not None and given:
        raise ValueError(
            f"pass either client= or {'/'.join(given)}, not both: a client brings its own base URL and key"
        )


def check_async_client(client: object, example: str) -> None:
    """Refuses an SDK's synchronous client as ``client=``: the transports stream on the event loop.

    Raises:
        ValueError: ``client`` is a synchronous client of the anthropic or openai SDK (both build their clients on
            a ``SyncAPIClient`` or an ``AsyncAPIClient`` base).
    """
    if client is not None and any(cls.__name__ == "SyncAPIClient" for cls in type(client).__mro__):
        raise ValueError(
            f"client= must be an asynchronous client, such as {example}: {type(client).__name__} is the SDK's "
            "synchronous one, and the transport streams on the event loop"
        )
