"""Transports: how a session talks to a model. ``ScriptedTransport`` and ``EchoTransport`` need no network."""

from ai_widgets.transports._base import ChatRequest, Transport
from ai_widgets.transports._scripted import (
    EchoTransport,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
    ScriptExhaustedError,
)

__all__ = [
    "ChatRequest",
    "EchoTransport",
    "ScriptExhaustedError",
    "ScriptedReply",
    "ScriptedToolCall",
    "ScriptedTransport",
    "Transport",
]
