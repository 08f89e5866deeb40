"""The transport a model string names (``ChatSession(model="openai:gpt-5-mini")``): a prefix naming the provider, a
colon, and the model's name as that provider knows it.

It lives with the integrations because one of its prefixes is pydantic-ai's, whose transport is an integration: this
is the lowest floor that sees both the provider transports and that one. A provider's transport, and with it the
provider's SDK or pydantic-ai, is imported only when a model string names it. Each transport reads its key from the
provider's usual environment variable itself, and keeps it in its SDK client: the key never enters a message, the
widget's state or a transcript.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import ai_widgets.transports as provider_transports  # its provider classes load on first use
from ai_widgets.transports import DEFAULT_MODELS, ProviderError, Transport

__all__ = ["MODEL_PREFIXES", "OLLAMA_PORT", "ollama_base_url", "transport_for_agent", "transport_for_model"]

#: What each prefix names: the transport, and where its key or server comes from.
MODEL_PREFIXES: dict[str, str] = {
    "openai": "OpenAI's Chat Completions API (OpenAIChatTransport; key: OPENAI_API_KEY)",
    "openai-responses": "OpenAI's Responses API (OpenAIResponsesTransport; key: OPENAI_API_KEY)",
    "anthropic": "Anthropic's Messages API (AnthropicTransport; key: ANTHROPIC_API_KEY)",
    "gemini": "Google's Gemini API (GeminiTransport; key: GEMINI_API_KEY or GOOGLE_API_KEY)",
    "ollama": "an Ollama server, local by default (OpenAIChatTransport at OLLAMA_HOST's /v1; no key)",
    "pydantic-ai": "any model pydantic-ai knows, named as pydantic-ai names it (PydanticAITransport)",
}

#: The port an Ollama server listens on unless ``OLLAMA_HOST`` says otherwise.
OLLAMA_PORT = 11434

# prefix -> (its transport class, taken from ai_widgets.transports only when asked: that loads its SDK; an example)
NATIVE: dict[str, tuple[Callable[[], type[Transport]], str]] = {
    "openai": (lambda: provider_transports.OpenAIChatTransport, DEFAULT_MODELS["openai-chat"]),
    "openai-responses": (lambda: provider_transports.OpenAIResponsesTransport, DEFAULT_MODELS["openai-responses"]),
    "anthropic": (lambda: provider_transports.AnthropicTransport, DEFAULT_MODELS["anthropic"]),
    "gemini": (lambda: provider_transports.GeminiTransport, DEFAULT_MODELS["gemini"]),
    "ollama": (lambda: provider_transports.OpenAIChatTransport, DEFAULT_MODELS["openai-compatible"]),
}


def transport_for_model(model: str) -> Transport:
    """The transport ``model`` names, built with the provider's key from its usual environment variable.

    ``"openai:<model>"`` (Chat Completions), ``"openai-responses:<model>"``, ``"anthropic:<model>"``,
    ``"gemini:<model>"``, ``"ollama:<model>"`` (an Ollama server's OpenAI-compatible API, at
    :func:`ollama_base_url`) and ``"pydantic-ai:<pydantic-ai model string>"`` (``"pydantic-ai:groq:llama-3.3-70b"``,
    any model pydantic-ai's ``infer_model`` knows). For a key, base URL or option of your own, build the transport
    and pass ``transport=`` instead.

    Raises:
        TypeError: ``model`` is not text.
        ValueError: It names no provider (no prefix), one this does not know (the message lists the known ones),
            or no model after the prefix; for ``ollama``, ``OLLAMA_HOST`` is not a host, host:port or http(s) URL.
        ProviderError: The provider's key is not set (the message names the variable), or its SDK could not set
            up the client.
        ImportError: The provider's SDK (or pydantic-ai) is not installed; the message says which extra installs it.
    """
    if not isinstance(model, str):
        raise TypeError(f"model must be a model string such as 'openai:gpt-5-mini', not {type(model).__name__}")
    prefix, colon, name = model.strip().partition(":")
    known = ", ".join(MODEL_PREFIXES)
    if not colon:
        raise ValueError(
            f"model={model!r} names no provider: write it as '<provider>:<model>', e.g. "
            f"'openai:{DEFAULT_MODELS['openai-chat']}' (providers: {known})"
        )
    if prefix not in MODEL_PREFIXES:
        raise ValueError(f"model={model!r}: unknown provider {prefix!r} (known: {known})")
    name = name.strip()
    if prefix == "pydantic-ai":
        if not name:
            raise ValueError(
                f"model={model!r} names no model: write it as pydantic-ai names it, e.g. "
                "'pydantic-ai:groq:llama-3.3-70b-versatile'"
            )
        return built(model, pydantic_ai_transport(model), name)
    transport_of, example = NATIVE[prefix]
    if not name:
        raise ValueError(f"model={model!r} names no model: e.g. '{prefix}:{example}'")
    transport_class = transport_of()
    if prefix == "ollama":
        return built(
            model,
            transport_class,
            name,
            base_url=ollama_base_url(os.environ.get("OLLAMA_HOST")),
            provider_name="Ollama",
        )
    return built(model, transport_class, name)


def pydantic_ai_transport(model: str) -> Any:
    try:
        return provider_transports.PydanticAITransport  # loads pydantic-ai, an optional extra, only now
    except ImportError as exc:
        if not (exc.name or "").startswith("pydantic_ai"):
            raise
        raise ImportError(
            f'model={model!r} needs pydantic-ai: pip install "ai_widgets[pydantic-ai]"', name=exc.name
        ) from exc


def built(model: str, transport_class: Any, name: str, **options: Any) -> Transport:
    try:
        transport: Transport = transport_class(name, **options)
    except ProviderError as exc:  # no key: the transport's message names the variable
        raise ProviderError(f"model={model!r}: {exc}") from exc
    return transport


def ollama_base_url(host: str | None) -> str:
    """The OpenAI-compatible API of the Ollama server ``host`` names (``OLLAMA_HOST``, as Ollama reads it).

    Unset or empty: ``http://localhost:11434/v1``. A host or ``host:port`` (IPv6 in brackets) is reached over http, on
    port 11434 unless given; a URL (``http://`` or ``https://``) on its own port, or its scheme's. The server's
    listen-on-every-address ``0.0.0.0`` (or ``::``) is reached at ``localhost``. A path is kept, and ``/v1`` is added
    unless it ends so.

    Raises:
        ValueError: ``host`` is not a host, ``host:port`` or http(s) URL (the message quotes it).
    """
    text = (host or "").strip()
    if not text:
        return f"http://localhost:{OLLAMA_PORT}/v1"
    scheme_given = "://" in text
    if not scheme_given and is_ipv6(text):  # a bare IPv6 address has colons that are not a port's
        text = f"[{text.strip('[]')}]"
    problem = f"OLLAMA_HOST={host!r} is not a host, host:port or http(s) URL"
    try:
        parts = urlsplit(text if scheme_given else f"http://{text}")
        port = parts.port
    except ValueError as exc:  # a port that is no number, brackets that hold no IPv6 address
        raise ValueError(f"{problem}: {exc}") from None
    if parts.scheme not in ("http", "https") or parts.query or parts.fragment:
        raise ValueError(problem)
    hostname = parts.hostname or "localhost"
    if hostname in ("0.0.0.0", "::"):
        hostname = "localhost"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    if port is None and not scheme_given:
        port = OLLAMA_PORT
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, hostname if port is None else f"{hostname}:{port}", path, "", ""))


def is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text.strip("[]")).version == 6
    except ValueError:
        return False


def transport_for_agent(command: Sequence[str]) -> Any:
    """The transport that runs the ACP agent ``command`` (``["claude-code-acp"]``, ``["gemini", "--acp"]``): an
    :class:`~ai_widgets.integrations.acp.ACPTransport`, whose module (and the ``acp`` SDK) is imported only here.

    Raises:
        TypeError: ``command`` is not a sequence of text.
        ValueError: It is empty.
        ImportError: The ``acp`` extra is not installed (the message says how to install it).
    """
    if isinstance(command, str) or not isinstance(command, Sequence):
        raise TypeError(f"an agent's command is a list: the program and its arguments, not {command!r}"[:200])
    if not command:
        raise ValueError("an agent's command needs at least the program")
    if not all(isinstance(part, str) for part in command):
        raise TypeError("an agent's command is a list of text: the program and its arguments")
    module = importlib.import_module("ai_widgets.integrations.acp")  # optional: loads the acp SDK
    return module.ACPTransport(command[0], list(command[1:]))
