"""An MCP tool result as a ToolOutcome: values, attachments, citations, failures."""

from __future__ import annotations

from typing import Any

from ai_widgets.tools import (
    Attachment,
    Citation,
    ToolOutcome,
)

__all__: list[str] = []

# --- results ------------------------------------------------------------------------------------------------------------


def _outcome(result: Any, shown: str, server: str) -> ToolOutcome:
    """A ``CallToolResult`` as an outcome: text and structured content for the value, images and audio as
    attachments (the card shows images), resource links and embedded resources as citations."""
    texts: list[str] = []
    attachments: list[Attachment] = []
    citations: list[Citation] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            attachments.append(Attachment(mime_type=block.mime_type, data=block.data))
        elif kind == "resource_link":
            citations.append(
                Citation(url=str(block.uri), title=block.title or block.name or None, snippet=block.description)
            )
        elif kind == "resource":
            resource = block.resource
            uri = str(resource.uri)
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                texts.append(text)
                citations.append(Citation(url=uri, snippet=text[:200] or None))
            else:
                mime = resource.mime_type or "application/octet-stream"
                attachments.append(Attachment(mime_type=mime, data=resource.blob, name=uri))
                citations.append(Citation(url=uri))
    text = "\n\n".join(t for t in texts if t)
    if result.is_error:
        return ToolOutcome.failure(text or f"The MCP server {server!r} reported an error from {shown}.", retryable=True)
    structured = result.structured_content
    if structured is not None:
        value: Any = structured
    elif text:
        value = text
    else:
        value = None
    shown_text = None
    if value is None and attachments:
        kinds = ", ".join(sorted({a.mime_type for a in attachments}))
        shown_text = f"Returned {len(attachments)} file{'' if len(attachments) == 1 else 's'} ({kinds})."
    try:
        return ToolOutcome.success(value, text=shown_text, citations=citations, attachments=attachments)
    except ValueError as exc:
        return ToolOutcome.failure(
            f"The MCP server {server!r} returned a result from {shown} that cannot be kept: {exc}.",
            retryable=False,
            error=exc,
        )


def _parameters(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type", "object")
    if kind != "object":
        return None
    return {"type": "object", **schema} if "type" not in schema else dict(schema)
