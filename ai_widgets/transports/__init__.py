"""Transports: how a session talks to a model.

``ScriptedTransport`` and ``EchoTransport`` need no network. The provider transports import their SDK only when
they are used (``pip install "ai_widgets[openai]"``, ``"ai_widgets[anthropic]"`` or ``"ai_widgets[gemini]"``), and so
do ``PydanticAITransport`` (any model pydantic-ai supports, ``"ai_widgets[pydantic-ai]"``) and ``AGUITransport`` (a
remote agent served over AG-UI, ``"ai_widgets[ag-ui]"``). Each declares what it is in its ``profile``
(:class:`TransportProfile`), which the session reads once per request.

The provider transports follow one template: a class whose docstring lists its mapping and the provider's quirks,
then its request mapping (``request_body``, ``request_messages``), its stream mapping (``stream``: the one loop of
``_sse.sse_stream``, or for Gemini the SDK's chunks, feeding the provider's parser, a ``_sse.StreamParser`` in the
provider's ``_<provider>_stream`` module) and its error mapping (``_map_error``, which sorts the HTTP library's
errors by the one rule of ``_errors.http_failure``; the OpenAI SDK's errors are mapped once for both OpenAI
transports). The pieces they share: ``_client`` (setting up the SDK client), ``_history`` (the history and the images
of tool results as requests carry them), ``_errors``, ``_sse`` and ``_coerce`` (reading stream fields). They behave
the same way at construction: ``client=`` together with ``base_url=``/``api_key=`` is a ``ValueError``; no key for the
provider's own API is a :class:`ProviderError` naming the variable to set, while a server named by ``base_url``
(a local or compatible one) may go without. Provider data a transport streams (reasoning signatures, encrypted
reasoning, server-tool blocks) is stored on the part with its provider (``provider``, ``provider_data``), and each
transport sends back only its own, so a conversation can move between providers mid-way.
"""

import importlib
from typing import Any

from ai_widgets.transports._base import ChatRequest, Transport, TransportProfile
from ai_widgets.transports._errors import ContextTooLongError, ProviderError
from ai_widgets.transports._models import DEFAULT_MODELS, default_model
from ai_widgets.transports._scripted import (
    EchoTransport,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedTransport,
    ScriptExhaustedError,
)

__all__ = [
    "DEFAULT_MODELS",
    "AGUITransport",
    "AnthropicTransport",
    "ChatRequest",
    "ContextTooLongError",
    "EchoTransport",
    "GeminiTransport",
    "OpenAIChatTransport",
    "OpenAIResponsesTransport",
    "ProviderError",
    "PydanticAITransport",
    "ScriptExhaustedError",
    "ScriptedReply",
    "ScriptedToolCall",
    "ScriptedTransport",
    "Transport",
    "TransportProfile",
    "default_model",
]

_PROVIDERS = {
    "OpenAIChatTransport": "ai_widgets.transports._openai_chat",
    "OpenAIResponsesTransport": "ai_widgets.transports._openai_responses",
    "AnthropicTransport": "ai_widgets.transports._anthropic",
    "GeminiTransport": "ai_widgets.transports._gemini",
    "PydanticAITransport": "ai_widgets.transports._pydantic_ai",
    "AGUITransport": "ai_widgets.transports._ag_ui",
}


def __getattr__(name: str) -> Any:
    # Provider transports load on first use, so the core never imports a provider SDK (nor pydantic-ai, nor ag-ui).
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module 'ai_widgets.transports' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
