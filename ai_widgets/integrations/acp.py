"""Agents people already run (Claude Code, Codex, Gemini CLI...) in the chat, over the Agent Client Protocol
(``pip install "ai_widgets[acp]"``): :class:`ACPTransport` runs one as a subprocess."""

from ai_widgets.integrations._acp_transport import ACPTransport

__all__ = ["ACPTransport"]
