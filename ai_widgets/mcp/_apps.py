"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension) on the kernel's side: which ``ui://`` resource a tool
names, who may use the tool (the model, its apps), and the app's page as read (``resources/read``), bounded, for the
card. The card shows the page in a sandboxed frame and speaks the extension's messages with it (``js/src/apps.ts``)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._safe import safe_text

__all__ = ["APPS_EXTENSION", "APP_MIME_TYPE", "MAX_APP_BYTES", "AppPage"]

#: The extension's identifier, declared in the client's capabilities.
APPS_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an app's page.
APP_MIME_TYPE = "text/html;profile=mcp-app"
#: The largest page a card shows (it is kept in the widget's state, and saved with the notebook).
MAX_APP_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class AppPage:
    """An MCP App's page, as its card shows it.

    Attributes:
        uri: Its ``ui://`` URI.
        html: The page (``None`` when it cannot be shown: see ``error``).
        error: Why it cannot be shown (too large, not HTML, not there), for the card.
        csp: The origins it asks to reach (``_meta.ui.csp``: ``connectDomains``, ``resourceDomains``, ...), as sent.
        prefers_border: Whether it asks for a border (``None``: it did not say).
    """

    uri: str
    html: str | None = field(default=None, repr=False)
    error: str | None = None
    csp: dict[str, list[str]] | None = None
    prefers_border: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """As the widget's state keeps it."""
        return {
            "uri": self.uri,
            "html": self.html,
            "error": self.error,
            "csp": self.csp,
            "prefers_border": self.prefers_border,
        }


#: Who may see and call a tool when its ``_meta.ui.visibility`` does not say (the MCP Apps default).
EVERYONE = frozenset({"model", "app"})


def tool_app(meta: Any) -> tuple[str | None, frozenset[str]]:
    """The ``ui://`` URI a tool's ``_meta`` names (``ui.resourceUri``, or the older ``"ui/resourceUri"``), or
    ``None`` (none, or one that is not ``ui://``); and who may use the tool (``ui.visibility``): ``"model"`` (it is
    offered to the model), ``"app"`` (its server's apps may call it); both when the visibility is not a list."""
    if not isinstance(meta, dict):
        return None, EVERYONE
    ui = meta.get("ui")
    uri: Any = None
    who = EVERYONE
    if isinstance(ui, dict):
        uri = ui.get("resourceUri")
        visibility = ui.get("visibility")
        if isinstance(visibility, list):
            who = EVERYONE.intersection(v for v in visibility if isinstance(v, str))
    if uri is None:
        uri = meta.get("ui/resourceUri")
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) > 2000:
        return None, who
    return safe_text(uri), who


def app_page(uri: str, contents: Any, *, limit: int = MAX_APP_BYTES) -> AppPage:
    """The page from a ``resources/read`` result's contents: the first item of the app's MIME type (text, or a
    base64 blob of UTF-8), at most ``limit`` bytes."""
    items = list(contents or ())
    item = next((c for c in items if mime(c) == APP_MIME_TYPE), None)
    if item is None:
        kinds = ", ".join(sorted({mime(c) or "no type" for c in items})) or "nothing"
        return AppPage(uri, error=f"The app {uri} is not an MCP App page ({APP_MIME_TYPE}): the server sent {kinds}.")
    text = getattr(item, "text", None)
    if not isinstance(text, str):
        blob = getattr(item, "blob", None)
        try:
            text = base64.b64decode(blob or "", validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return AppPage(uri, error=f"The app {uri} came as a blob that is not base64 of UTF-8 text.")
    size = len(text.encode("utf-8", "replace"))
    if size > limit:
        return AppPage(
            uri,
            error=f"The app {uri} is {size / 1e6:.1f} MB, more than the {limit / 1e6:g} MB a card shows: its result "
            "shows as text.",
        )
    ui = ui_meta(item)
    csp = ui.get("csp")
    kept: dict[str, list[str]] | None = None
    if isinstance(csp, dict):
        kept = {
            key: [safe_text(v) for v in value if isinstance(v, str)][:50]
            for key, value in csp.items()
            if isinstance(key, str) and isinstance(value, list)
        }
    border = ui.get("prefersBorder")
    return AppPage(uri, html=safe_text(text), csp=kept, prefers_border=border if isinstance(border, bool) else None)


def mime(item: Any) -> str | None:
    mime = getattr(item, "mime_type", None)
    return mime.replace(" ", "").lower() if isinstance(mime, str) else None


def ui_meta(item: Any) -> dict[str, Any]:
    meta = getattr(item, "meta", None)
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else {}
