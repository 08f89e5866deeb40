"""What each transport declares it is (``Transport.profile``, a :class:`TransportProfile`): the provider that prices
its requests, the model, the model's known context window, the output limit it asks for and the attachment limits;
the scripted ones declare what they are told to stand for, and a profile is checked when it is made."""

from __future__ import annotations

import pytest

from ai_widgets import AttachmentLimits
from ai_widgets.transports import (
    DEFAULT_MODELS,
    AnthropicTransport,
    EchoTransport,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ScriptedTransport,
    Transport,
    TransportProfile,
)

LIMITS = AttachmentLimits("Mine", max_image_bytes=10, max_images=1, max_document_bytes=10, max_total_bytes=20)


def test_each_provider_transport_declares_its_provider_model_window_and_limits() -> None:
    chat = OpenAIChatTransport(DEFAULT_MODELS["openai-chat"], api_key="k")
    responses = OpenAIResponsesTransport(DEFAULT_MODELS["openai-responses"], api_key="k")
    anthropic = AnthropicTransport(DEFAULT_MODELS["anthropic"], api_key="k", max_tokens=2_000)
    gemini = GeminiTransport(DEFAULT_MODELS["gemini"], api_key="k")
    assert chat.profile == TransportProfile(
        provider="openai",
        model=DEFAULT_MODELS["openai-chat"],
        context_window=400_000,
        attachment_limits=chat.attachment_limits,
    )
    assert responses.profile == TransportProfile(
        "openai", DEFAULT_MODELS["openai-responses"], 400_000, None, responses.attachment_limits
    )
    assert anthropic.profile == TransportProfile(
        "anthropic", DEFAULT_MODELS["anthropic"], 200_000, 2_000, anthropic.attachment_limits
    )
    assert gemini.profile == TransportProfile(
        "google", DEFAULT_MODELS["gemini"], 1_000_000, None, gemini.attachment_limits
    )
    for transport in (chat, responses, anthropic, gemini):
        assert isinstance(transport, Transport)
        assert transport.profile.attachment_limits is not None


def test_a_local_server_is_no_known_provider_and_its_window_is_not_known() -> None:
    local = OpenAIChatTransport("qwen3", base_url="http://localhost:11434/v1")
    assert local.profile.provider is None
    assert local.profile.model == "qwen3"
    assert local.profile.context_window is None


def test_the_profile_follows_what_the_transport_is_now() -> None:
    """A person who changes the model, or says whose API a proxy is, changes what the transport declares."""
    transport = OpenAIChatTransport("gpt-5", api_key="k")
    transport.model = "gpt-4o"
    assert (transport.profile.model, transport.profile.context_window) == ("gpt-4o", 128_000)
    proxy = AnthropicTransport("claude-sonnet-4-5", api_key="k", base_url="http://127.0.0.1:9/proxy")
    assert proxy.profile.provider is None
    proxy.price_provider = "anthropic"
    assert proxy.profile.provider == "anthropic"


def test_a_scripted_model_knows_nothing_unless_told_what_it_stands_for() -> None:
    assert ScriptedTransport(["hi"]).profile == TransportProfile()
    assert EchoTransport().profile == TransportProfile()
    standing_in = TransportProfile(provider="openai", model="gpt-5", context_window=8_000, attachment_limits=LIMITS)
    assert ScriptedTransport(["hi"], profile=standing_in).profile is standing_in
    assert EchoTransport(profile=standing_in).profile is standing_in
    with pytest.raises(TypeError, match="profile"):
        ScriptedTransport(["hi"], profile={"context_window": 8_000})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "bad"),
    [("context_window", 0), ("context_window", -5), ("context_window", True), ("max_output_tokens", 2.5)],
)
def test_a_profile_with_a_limit_that_is_not_a_positive_number_of_tokens_is_refused(field: str, bad: object) -> None:
    with pytest.raises(ValueError, match=field):
        TransportProfile(**{field: bad})  # type: ignore[arg-type]


def test_a_profile_refuses_attachment_limits_of_another_kind() -> None:
    with pytest.raises(TypeError, match="attachment_limits"):
        TransportProfile(attachment_limits={"max_images": 1})  # type: ignore[arg-type]
