"""One kit per transport, the same shape for all (see :class:`ProviderKit`), and ``KITS``, the one table of them that
every test run per transport takes its transports from.

Each kit module has the same names: ``FAKE_KEY``; ``MockAPI`` (the SDK's HTTP answered in process: ``client()``,
``transport()``, the ``requests`` and ``bodies`` it got); ``Emulator`` (a scripted server for
:func:`tests.providers.loopback.loopback`); ``sse`` (the wire format); ``text_events`` (a text reply, one bytes per
event); ``error_response`` (the provider's error body); ``KIT``. The recorded streams and their expected parses are
read with :func:`recorded` and :func:`expected`.
"""

from __future__ import annotations

from tests.providers.kits import anthropic, gemini, openai_chat, openai_responses
from tests.providers.kits._kit import Body, MockAPI, ProviderKit, Recording, Wording, expected, recorded, sse_response

#: The kits, by name: the transports every shared behaviour is checked against.
KITS: dict[str, ProviderKit] = {
    kit.name: kit for kit in (openai_chat.KIT, openai_responses.KIT, anthropic.KIT, gemini.KIT)
}

__all__ = ["KITS", "Body", "MockAPI", "ProviderKit", "Recording", "Wording", "expected", "recorded", "sse_response"]
