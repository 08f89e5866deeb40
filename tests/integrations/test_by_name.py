"""Model strings (``ChatSession(model="openai:gpt-5-mini")``, ``ChatWidget(model=...)``): each prefix builds its
transport with the model's name and the provider's server, the key from the environment; ``OLLAMA_HOST`` in every
form Ollama takes; and the clear errors. Nothing here goes to the network: the transports are only built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import ChatSession
from ai_widgets.integrations._by_name import MODEL_PREFIXES, ollama_base_url, transport_for_model
from ai_widgets.integrations.pydantic_ai import PydanticAITransport
from ai_widgets.transports import (
    AnthropicTransport,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
    ProviderError,
    ScriptedTransport,
)
from ai_widgets.widget import ChatWidget
from tests.widget.widget_harness import recording_comms

KEY = "sk-test-" + "THIS-KEY-MUST-NOT-LEAK-0123456789"
#: Every variable that gives a transport a key or a server.
SETTINGS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Each provider's key set in the environment, nothing else that would change a server."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, KEY)
    return monkeypatch


def base_url(transport: Any) -> str:
    return str(transport.client.base_url).rstrip("/")


@pytest.mark.parametrize(
    ("model", "transport_class", "name", "server"),
    [
        ("openai:gpt-5-mini", OpenAIChatTransport, "gpt-5-mini", "https://api.openai.com/v1"),
        ("openai-responses:gpt-5-mini", OpenAIResponsesTransport, "gpt-5-mini", "https://api.openai.com/v1"),
        ("anthropic:claude-sonnet-4-5", AnthropicTransport, "claude-sonnet-4-5", "https://api.anthropic.com"),
        ("gemini:gemini-2.5-flash", GeminiTransport, "gemini-2.5-flash", None),
        ("ollama:qwen3", OpenAIChatTransport, "qwen3", "http://localhost:11434/v1"),
    ],
)
def test_each_prefix_builds_its_transport_with_the_model_and_server(
    keys: pytest.MonkeyPatch, model: str, transport_class: type[Any], name: str, server: str | None
) -> None:
    session = ChatSession(model=model)
    transport: Any = session.transport
    assert type(transport) is transport_class
    assert transport.model == name
    if server is not None:
        assert base_url(transport) == server
    assert KEY not in repr(transport)


def test_ollama_needs_no_key_and_is_named_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    transport: Any = transport_for_model("ollama:llama3.2:3b")  # Ollama's own tags have a colon too
    assert transport.model == "llama3.2:3b"
    assert transport.client.api_key == "not-needed"
    assert transport.attachment_limits.provider == "Ollama"


@pytest.mark.parametrize(
    ("host", "url"),
    [
        (None, "http://localhost:11434/v1"),
        ("  ", "http://localhost:11434/v1"),
        ("0.0.0.0", "http://localhost:11434/v1"),  # the server's listen-everywhere address
        ("0.0.0.0:8080", "http://localhost:8080/v1"),
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("gpu-box:9999", "http://gpu-box:9999/v1"),
        ("10.0.0.5", "http://10.0.0.5:11434/v1"),
        ("::1", "http://[::1]:11434/v1"),
        ("[::1]:9000", "http://[::1]:9000/v1"),
        ("http://gpu-box", "http://gpu-box/v1"),  # a URL means its scheme's port
        ("http://gpu-box:11434", "http://gpu-box:11434/v1"),
        ("https://ollama.example.com/", "https://ollama.example.com/v1"),
        ("https://example.com/ollama", "https://example.com/ollama/v1"),
        ("http://gpu-box:11434/v1", "http://gpu-box:11434/v1"),
    ],
)
def test_ollama_host_in_every_form_ollama_takes(host: str | None, url: str) -> None:
    assert ollama_base_url(host) == url


@pytest.mark.parametrize("host", ["ftp://gpu-box", "gpu-box:port", "http://gpu-box:99999", "http://gpu-box/?x=1"])
def test_an_ollama_host_that_is_no_address_is_refused_naming_it(host: str) -> None:
    with pytest.raises(ValueError, match=r"OLLAMA_HOST=.* is not a host, host:port or http\(s\) URL"):
        ollama_base_url(host)


def test_ollama_host_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:9999")
    assert base_url(ChatSession(model="ollama:qwen3").transport) == "http://gpu-box:9999/v1"
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.example.com")
    assert base_url(ChatSession(model="ollama:qwen3").transport) == "https://ollama.example.com/v1"


def test_pydantic_ai_takes_its_own_model_strings(keys: pytest.MonkeyPatch) -> None:
    test = transport_for_model("pydantic-ai:test")
    assert isinstance(test, PydanticAITransport)
    assert test.model.model_name == "test"
    openai = ChatSession(model="pydantic-ai:openai:gpt-5-mini").transport
    assert isinstance(openai, PydanticAITransport)
    assert (openai.model.system, openai.model.model_name) == ("openai", "gpt-5-mini")
    with pytest.raises(ValueError, match="pydantic-ai does not know the model 'nonsense:model'"):
        transport_for_model("pydantic-ai:nonsense:model")


@pytest.mark.parametrize(
    ("variable", "model"),
    [
        ("OPENAI_API_KEY", "openai:gpt-5-mini"),
        ("OPENAI_API_KEY", "openai-responses:gpt-5-mini"),
        ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
        ("GEMINI_API_KEY", "gemini:gemini-2.5-flash"),
        ("OPENAI_API_KEY", "pydantic-ai:openai:gpt-5-mini"),
    ],
)
def test_a_missing_key_is_a_clear_error_naming_the_variable_and_nothing_stays_open(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, model: str
) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials file of the person running the tests
    history = tmp_path / "chat.json"
    with pytest.raises(ProviderError, match=variable) as raised:
        ChatSession(model=model, history=history)
    assert repr(model) in str(raised.value)
    assert list(tmp_path.iterdir()) == []  # the model failed first: no history file was opened


def test_a_model_string_that_names_no_known_provider_is_a_clear_error(keys: pytest.MonkeyPatch) -> None:
    known = ", ".join(MODEL_PREFIXES)
    with pytest.raises(ValueError, match="unknown provider 'mistral'") as raised:
        ChatSession(model="mistral:mistral-large")
    assert known in str(raised.value)
    with pytest.raises(ValueError, match=r"model='gpt-5-mini' names no provider: write it as '<provider>:<model>'"):
        ChatSession(model="gpt-5-mini")
    for empty in ("openai:", "ollama: ", "pydantic-ai:"):
        with pytest.raises(ValueError, match="names no model"):
            ChatSession(model=empty)
    with pytest.raises(TypeError, match="model must be a model string"):
        ChatSession(model=42)  # type: ignore[arg-type]


def test_model_and_transport_together_is_a_clear_error(keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"pass model= or transport=, not both"):
        ChatSession(ScriptedTransport([]), model="openai:gpt-5-mini")
    with recording_comms():
        with pytest.raises(ValueError, match=r"pass model= or transport=, not both"):
            ChatWidget(transport=ScriptedTransport([]), model="openai:gpt-5-mini")
        with pytest.raises(TypeError, match="not both"):
            ChatWidget(ChatSession(ScriptedTransport([])), model="openai:gpt-5-mini")


def test_a_chat_from_a_model_string_keeps_the_key_out_of_its_state_and_transcripts(
    keys: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with recording_comms() as wire:
        chat = ChatWidget(model="openai:gpt-5-mini", tools=[])
        assert isinstance(chat.session.transport, OpenAIChatTransport)
        assert KEY not in str(chat.get_state())
        assert all(KEY not in str(sent.data) for sent in wire.sent)
        for name in ("chat.md", "chat.json"):
            assert KEY not in chat.export(tmp_path / name).read_text("utf-8")
        chat.close()


def test_a_provider_sdk_is_imported_only_for_its_own_prefix() -> None:
    code = (
        "import sys, os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-test'\n"
        "from ai_widgets import ChatSession\n"
        "sdks = ('openai', 'anthropic', 'google.genai', 'pydantic_ai')\n"
        "print([m for m in sdks if m in sys.modules])\n"
        "ChatSession(model='anthropic:claude-sonnet-4-5')\n"
        "print([m for m in sdks if m in sys.modules])\n"
    )
    before, after = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    ).stdout.splitlines()
    assert before == "[]"
    assert after == "['anthropic']"
