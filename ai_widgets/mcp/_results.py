"""An MCP tool result as a ToolOutcome: values, attachments, citations, failures."""

from __future__ import annotations

from typing import Any

from ai_widgets.mcp._payloads import Payloads
from ai_widgets.tools import (
    Attachment,
    Citation,
    ToolOutcome,
)

__all__: list[str] = ["outcome", "tool_parameters"]

# --- results ------------------------------------------------------------------------------------------------------------


def outcome(result: Any, shown: str, server: str) -> ToolOutcome:
    """A ``CallToolResult`` as an outcome: text and structured content for the value, images and audio as
    attachments (the card shows images), resource links and embedded resources as citations, each also named to the
    model (name, URI, MIME type; an embedded text inlined). Content whose annotations say its audience is the user
    alone stays on the card. Base64 payloads never reach the model as text (:mod:`ai_widgets.mcp._payloads`)."""
    texts: list[str] = []
    card_texts: list[str] = []
    named: list[str] = []
    payloads = Payloads()
    citations: list[Citation] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        card_only = for_user_only(block)
        if kind == "text":
            (card_texts if card_only else texts).append(block.text)
        elif kind in ("image", "audio"):
            payloads.attach(Attachment(mime_type=block.mime_type, data=block.data, card_only=card_only))
        elif kind == "resource_link":
            uri = str(block.uri)
            citations.append(Citation(url=uri, title=block.title or block.name or None, snippet=block.description))
            if not card_only:
                named.append(f"Resource link: {resource_label(block.name, uri, block.mime_type)}")
        elif kind == "resource":
            resource = block.resource
            uri = str(resource.uri)
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                (card_texts if card_only else texts).append(text)
                citations.append(Citation(url=uri, snippet=text[:200] or None))
            else:
                mime = resource.mime_type or "application/octet-stream"
                payloads.attach(Attachment(mime_type=mime, data=resource.blob, name=uri, card_only=card_only))
                citations.append(Citation(url=uri))
                if not card_only:
                    size = len(resource.blob) * 3 // 4 - resource.blob[-2:].count("=")
                    named.append(f"Embedded resource: {resource_label(None, uri, mime)}, {size} bytes")
    text = payloads.without_payloads("\n\n".join(t for t in texts if t))
    if result.is_error:
        return ToolOutcome.failure(text or f"The MCP server {server!r} reported an error from {shown}.", retryable=True)
    structured = result.structured_content
    value: Any
    if structured is not None:
        value = payloads.without_payloads(structured)
    else:
        value = "\n".join([text, *named]) if text else "\n".join(named) or None
    attachments = payloads.attachments
    shown_text = "\n\n".join(card_texts) or None
    if value is None:
        for_model = [a for a in attachments if not a.card_only]
        if for_model:
            kinds = ", ".join(sorted({a.mime_type for a in for_model}))
            value = f"Returned {len(for_model)} file{'' if len(for_model) == 1 else 's'} ({kinds})."
        elif shown_text or attachments:
            value = "The result was shown to the person only."
    try:
        return ToolOutcome.success(value, text=shown_text, citations=citations, attachments=attachments)
    except ValueError as exc:
        return ToolOutcome.failure(
            f"The MCP server {server!r} returned a result from {shown} that cannot be kept: {exc}.",
            retryable=False,
            error=exc,
        )


def for_user_only(block: Any) -> bool:
    """Whether a content block's annotations give the user as its only audience (MCP's ``audience: ["user"]``)."""
    audience = getattr(getattr(block, "annotations", None), "audience", None)
    return isinstance(audience, (list, tuple)) and bool(audience) and all(str(role) == "user" for role in audience)


def resource_label(name: str | None, uri: str, mime: str | None) -> str:
    label = f"{name} <{uri}>" if name else f"<{uri}>"
    return f"{label} ({mime})" if mime else label


def tool_parameters(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type", "object")
    if kind != "object":
        return None
    return {"type": "object", **schema} if "type" not in schema else dict(schema)
