"""The agent's ``session/update`` notifications handed to the client as they are read, in order, before the SDK's
general dispatch sees any message: a message transport in front of the wire.

The SDK runs each incoming message in a task of its own, inside tracing spans, through its router: for the stream of
updates that makes up nearly all of an agent's traffic (a chunk of a few words each), that dispatch costs several
times the message's parse, and the order of the updates rests on the order the loop runs those tasks in. Here each
update is validated with the SDK's own model (``SessionNotification``, as the SDK's router does) and given to the
client's ``session_update`` on the reading task, one after the other; every other message (requests, responses,
other notifications) goes on to the SDK unchanged. After such a message the next read first lets the loop run once,
so the SDK's task for it (a permission request's handler, which puts its card's events at once) starts before any
update read after it is handed over: the order the agent wrote stays the order the chat sees.

Connect it as ``acp.connect_to_agent(client, InlineUpdates(wire, client, SessionNotification.model_validate))``.
This module imports no SDK type (the model is handed in), so the SDK stays inside the modules that map it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["SESSION_UPDATE", "InlineUpdates", "MessageTransport", "UpdateTaker"]

logger = logging.getLogger("ai_widgets")

#: The method of the agent's update notifications.
SESSION_UPDATE = "session/update"


class MessageTransport(Protocol):
    """What the SDK's ``connect_to_agent`` takes: JSON-RPC messages as dicts, ``None`` from ``receive`` at the end."""

    async def send(self, message: dict[str, Any]) -> None: ...

    async def receive(self) -> dict[str, Any] | None: ...

    async def close(self) -> None: ...


class UpdateTaker(Protocol):
    """The client side's handler of updates (the SDK's ``Client.session_update``)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


class InlineUpdates:
    """A message transport that hands ``session/update`` notifications to ``client`` as they are read.

    Args:
        transport: The message transport to the agent (the wire).
        client: Whose ``session_update`` takes each update (with the notification's ``_meta`` as keyword
            arguments, as the SDK's router passes them).
        parse: The SDK's model of a notification's params, ``SessionNotification.model_validate``: an object with
            ``session_id``, ``update`` and ``field_meta``; it raises ``ValueError`` (pydantic's ``ValidationError``
            is one) for params that are not an update.
    """

    def __init__(self, transport: MessageTransport, client: UpdateTaker, parse: Callable[[Any], Any]) -> None:
        self._transport = transport
        self._client = client
        self._parse = parse
        self._handed_on = False  # the last message read went to the SDK, whose task for it has not started yet

    async def send(self, message: dict[str, Any]) -> None:
        """Sends ``message`` to the agent."""
        await self._transport.send(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next message that is not an update notification (those are handled on the way), ``None`` at the
        end."""
        transport, parse, client = self._transport, self._parse, self._client
        if self._handed_on:
            self._handed_on = False
            await asyncio.sleep(0)  # the SDK's task for the message before starts first
        while True:
            message = await transport.receive()
            if message is None or message.get("method") != SESSION_UPDATE or "id" in message:
                self._handed_on = True
                return message
            # As the SDK's dispatch: an update that does not validate, or whose handling fails, is logged and skipped
            # (a notification has no answer to carry the error), and the stream goes on.
            try:
                notification = parse(message.get("params"))
            except ValueError as exc:
                logger.warning("an ACP agent sent a session/update that is not valid; skipped: %s", str(exc)[:500])
                continue
            meta = notification.field_meta
            try:
                if meta:
                    await client.session_update(notification.session_id, notification.update, **meta)
                else:
                    await client.session_update(notification.session_id, notification.update)
            except Exception:
                logger.exception("handling an ACP agent's session/update failed")

    async def close(self) -> None:
        """Closes the transport to the agent."""
        await self._transport.close()
