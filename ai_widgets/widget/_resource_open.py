"""A resource opened from a card: what a call's result links to (an MCP resource link, or an embedded resource),
read from the call's own server when the person asks, and sent to that card as a ``resource`` message: its text
(bounded), or what a blob is (its type and size). Only a URI the result cites can be read this way, so a card never
reads what its server did not offer (docs/protocol.md, "Resources in a card")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ai_widgets._safe import redact, safe_text
from ai_widgets.mcp import MCPServer, ResourceBlob, ResourceText
from ai_widgets.messages import ToolCallPart
from ai_widgets.session import ChatSession
from ai_widgets.widget._actions import clip
from ai_widgets.widget._serialize import shown_json

__all__ = ["MAX_RESOURCE_CHARS", "ResourceOpener"]

logger = logging.getLogger("ai_widgets")

#: The most text of a resource a card shows (the rest is said to be left out).
MAX_RESOURCE_CHARS = 20_000


class ResourceOpener:
    """Reads the resources cards ask for.

    Args:
        find: The session and call with this id, or ``None``.
        send: Sends a message to the front end.
        loop: Where reading runs.
    """

    def __init__(
        self,
        *,
        find: Callable[[str], tuple[ChatSession, ToolCallPart] | None],
        send: Callable[[dict[str, Any]], None],
        loop: Callable[[], asyncio.AbstractEventLoop],
    ) -> None:
        self._find = find
        self._send = send
        self._loop = loop

    def open(self, tool_call_id: str, uri: str) -> None:
        """Reads ``uri`` from the call's server and sends it to the card (an error says why it could not be).

        Raises:
            ValueError: No such call, its result does not cite ``uri``, or its tool is not an MCP server's.
        """
        found = self._find(tool_call_id)
        if found is None:
            raise ValueError(f"there is no tool call {clip(tool_call_id)!r} here")
        session, part = found
        cited = part.outcome is not None and any(c.url == uri for c in part.outcome.citations)
        if not cited:
            raise ValueError(f"the result of {clip(part.tool_name)} does not link to {clip(uri)!r}")
        server = next(
            (s for s in session.tools.sources if isinstance(s, MCPServer) and s.owns(part.tool_name)),
            None,
        )
        if server is None:
            raise ValueError(f"the server of {clip(part.tool_name)} is not among this chat's tools any more")

        async def read() -> None:
            message: dict[str, Any] = {"type": "resource", "tool_call_id": tool_call_id, "uri": uri}
            try:
                message.update(shown(await server.read(uri)))
            except Exception as exc:  # said in the card, where the person asked
                message["error"] = clip(redact(safe_text(f"It could not be read: {exc}")), 1_000)
            try:
                self._send(shown_json(message))
            except Exception:  # pragma: no cover - the comm closed meanwhile
                logger.debug("ai_widgets: a resource could not be sent to its card", exc_info=True)

        asyncio.run_coroutine_threadsafe(read(), self._loop())


def shown(read: Any) -> dict[str, Any]:
    """What the card shows of a read: the text items joined (bounded), and a line for each blob."""
    texts: list[str] = []
    for item in read.contents:
        if isinstance(item, ResourceText):
            texts.append(item.text)
        elif isinstance(item, ResourceBlob):
            texts.append(f"[{item.mime_type or 'binary data'}, {len(item.data)} bytes]")
    text = safe_text("\n\n".join(texts))
    if len(text) > MAX_RESOURCE_CHARS:
        text = text[:MAX_RESOURCE_CHARS] + f"\n… ({len(text) - MAX_RESOURCE_CHARS} more characters not shown)"
    return {"text": text}
