"""Where the documentation's troubleshooting page explains each kind of error a reply can end with: the link in the
reply's error (``error_help`` in what the front end gets)."""

from __future__ import annotations

from ai_widgets.messages import ErrorKind, Message, MessageStatus

__all__ = ["ANCHORS", "DOCS_URL", "TROUBLESHOOTING", "troubleshooting_link"]

#: Where the documentation site is published (``site_url`` in mkdocs.yml, ``Documentation`` in pyproject.toml: a
#: test keeps the three equal). A link must open from a notebook in any host, so it is absolute.
DOCS_URL = "https://ai-widgets.readthedocs.io/en/latest/"
#: The troubleshooting page (docs/troubleshooting.md) on that site.
TROUBLESHOOTING = f"{DOCS_URL}troubleshooting/"

#: Each kind's anchor on that page: an error class's name in lower case where one is raised for it (as the page
#: names its entries), else the option or the situation's name.
ANCHORS: dict[ErrorKind, str] = {
    ErrorKind.REQUEST: "providererror",
    ErrorKind.CONTEXT_TOO_LONG: "contexttoolongerror",
    ErrorKind.STREAM_PROTOCOL: "streamprotocolerror",
    ErrorKind.TOOLS_UNAVAILABLE: "mcpservererror",
    ErrorKind.TOOL_FAILURES: "max-consecutive-errors",
    ErrorKind.UNKNOWN_TOOL: "unknown-tool",
    ErrorKind.OUTPUT_INVALID: "outputvalidationerror",
    ErrorKind.TURN_FAILED: "turn-failed",
    ErrorKind.HISTORY_UNSAVED: "historyerror",
    ErrorKind.MAX_ITERATIONS: "max-iterations",
    ErrorKind.MAX_COST: "max-cost",
}


def troubleshooting_link(message: Message) -> str | None:
    """The troubleshooting page's entry for how ``message`` ended: its kind's anchor; the page itself for an error
    of no known kind (a reply saved before kinds were kept); ``None`` for a message that did not end in an error or
    at a limit."""
    if message.status not in (MessageStatus.ERROR, MessageStatus.LIMIT_REACHED):
        return None
    if message.error_kind is None:
        return TROUBLESHOOTING if message.status is MessageStatus.ERROR else None
    return f"{TROUBLESHOOTING}#{ANCHORS[message.error_kind]}"
