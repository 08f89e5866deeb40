"""Transports: how a session talks to a model.

``ScriptedTransport`` and ``EchoTransport`` need no network. The provider transports import their SDK only when
they are used (``pip install "ai_widgets[openai]"`` or ``"ai_widgets[anthropic]"``).
"""

from typing import Any

from ai_widgets.transports._base import ChatRequest, Transport
from ai_widgets.transports._common import ProviderError
from ai_widgets.transports._scripted import (
    EchoTransport,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
    ScriptExhaustedError,
)

__all__ = [
    "AnthropicTransport",
    "ChatRequest",
    "EchoTransport",
    "OpenAIChatTransport",
    "OpenAIResponsesTransport",
    "ProviderError",
    "ScriptExhaustedError",
    "ScriptedReply",
    "ScriptedToolCall",
    "ScriptedTransport",
    "Transport",
]

_PROVIDERS = {
    "OpenAIChatTransport": "ai_widgets.transports._openai_chat",
    "OpenAIResponsesTransport": "ai_widgets.transports._openai_responses",
    "AnthropicTransport": "ai_widgets.transports._anthropic",
}


def __getattr__(name: str) -> Any:
    # Provider transports load on first use, so the core never imports a provider SDK.
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module 'ai_widgets.transports' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
