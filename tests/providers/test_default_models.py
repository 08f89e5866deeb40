"""The default models are current: each is in the installed SDK's model list and not deprecated there.

The SDKs are pinned by requirements/dev.lock, so these checks change only when the lock is refreshed
(scripts/drift.sh): then they fail when an upgrade retires a default, before a person's first request does. Each
check's reading of an SDK is itself tested on inputs the test controls, so none depends on which models a vendor
lists or retires today.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import typing
import warnings
from pathlib import Path

import pytest

from ai_widgets.transports._models import DEFAULT_MODELS, default_model
from tests.providers.loopback import Response, loopback


def literal_values(alias: object) -> set[str]:
    """Every string literal inside a typing alias (``Union[Literal[...], str]`` and nested ones)."""
    found: set[str] = set()
    stack = [alias]
    while stack:
        current = stack.pop()
        for arg in typing.get_args(current):
            if isinstance(arg, str):
                found.add(arg)
            else:
                stack.append(arg)
    return found


def deprecated_in_docstring(source: str) -> set[str]:
    """The model ids a module's source lists under "Deprecated values" (how the openai SDK marks retired models)."""
    match = re.search(r'"""Deprecated values:(.*?)"""', source, re.S)
    return set(re.findall(r'"([^"]+)"', match.group(1))) if match else set()


def openai_deprecated_models() -> set[str]:
    """The model ids the openai SDK lists under "Deprecated values" in its ``ChatModel`` documentation."""
    import openai.types.shared.chat_model as chat_model

    return deprecated_in_docstring(Path(chat_model.__file__).read_text(encoding="utf-8"))


def test_the_deprecation_reading_sees_what_a_docstring_lists() -> None:
    source = '''ChatModel = Literal["m-new", "m-old"]
"""Deprecated values:
    - "m-old"
    - "m-older"
"""
'''
    assert deprecated_in_docstring(source) == {"m-old", "m-older"}
    assert deprecated_in_docstring('ChatModel = Literal["m-new"]\n"""Current models."""') == set()


def test_openai_defaults_are_listed_and_not_deprecated() -> None:
    from openai.types.shared import ChatModel, ResponsesModel

    deprecated = openai_deprecated_models()
    assert deprecated, "the openai SDK no longer documents deprecations where this test reads them: update it"
    for provider, models in (("openai-chat", ChatModel), ("openai-responses", ResponsesModel)):
        model = DEFAULT_MODELS[provider]  # type: ignore[index]
        assert model in literal_values(models), f"{provider} default {model!r} is not in the openai SDK's list"
        assert model not in deprecated, f"{provider} default {model!r} is deprecated in the openai SDK"


def test_anthropic_default_is_listed_and_the_sdk_does_not_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic
    from anthropic.types import Model

    # The SDK warns for the models in its deprecation table: a name the test retires there must warn, so the check
    # can fail (its own entries change from release to release and are not this test's business).
    data = pytest.importorskip("anthropic._data", reason="the anthropic SDK's deprecation table moved: update this")
    retired = "claude-retired-for-this-test"
    monkeypatch.setitem(data.DEPRECATED_MODELS, retired, "2020-01-01")

    model = DEFAULT_MODELS["anthropic"]
    assert model in literal_values(Model), f"Anthropic default {model!r} is not in the SDK's model list"
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    answer = Response(headers={"content-type": "application/json"}, chunks=[json.dumps(message).encode()])
    with loopback(lambda request: answer) as server:
        client = anthropic.Anthropic(api_key="test-key", base_url=server.url, max_retries=0)
        for name, expect_warning in ((model, False), (retired, True)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                client.messages.create(model=name, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
            said = [str(w.message) for w in caught if "deprecated" in str(w.message)]
            assert bool(said) is expect_warning, (name, said)


def gemini_models_in(source: str) -> set[str]:
    """The keys of every ``_GEMINI_*`` dict literal in a module's source (google-genai's table of its models)."""
    tree = ast.parse(source)
    return {
        key.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.startswith("_GEMINI_")
        for key in node.value.keys
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    }


def test_the_gemini_table_reading_takes_the_keys_of_its_dicts() -> None:
    source = '_GEMINI_MODELS = {"gemini-9-pro": "a", "gemini-9-flash": "b"}\n_OTHER = {"x": 1}\n_GEMINI_N = 3\n'
    assert gemini_models_in(source) == {"gemini-9-pro", "gemini-9-flash"}


def test_gemini_default_is_in_the_sdks_list_of_current_models() -> None:
    """google-genai has no model enum; its local tokenizer keeps the table of Gemini models it supports, which is
    the SDK's own list (private: if it moves, this test says so rather than passing)."""
    pytest.importorskip("google.genai", reason="google-genai is not installed (the gemini extra)")
    spec = importlib.util.find_spec("google.genai._local_tokenizer_loader")
    assert spec is not None, "google-genai's model table moved: update this test"
    assert spec.origin
    # Read, not imported: importing it needs sentencepiece, an optional dependency of the SDK.
    listed = gemini_models_in(Path(spec.origin).read_text(encoding="utf-8"))
    assert any(model.startswith("gemini-") for model in listed), "google-genai's model table moved: update this test"
    assert DEFAULT_MODELS["gemini"] in listed, f"{DEFAULT_MODELS['gemini']!r} is not among {sorted(listed)}"


def test_ai_widgets_model_overrides_every_default() -> None:
    assert default_model("anthropic", {}) == DEFAULT_MODELS["anthropic"]
    assert default_model("anthropic", {"AI_WIDGETS_MODEL": " my-model "}) == "my-model"
    assert default_model("openai-chat", {"AI_WIDGETS_MODEL": ""}) == DEFAULT_MODELS["openai-chat"]
    with pytest.raises(ValueError, match="no default model for 'cohere'"):
        default_model("cohere", {})  # type: ignore[arg-type]


def test_transports_use_the_defaults_when_no_model_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_widgets.transports import AnthropicTransport, OpenAIChatTransport, OpenAIResponsesTransport

    monkeypatch.delenv("AI_WIDGETS_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIChatTransport(api_key="k").model == DEFAULT_MODELS["openai-chat"]
    assert OpenAIChatTransport(base_url="http://127.0.0.1:9/v1").model == DEFAULT_MODELS["openai-compatible"]
    assert OpenAIResponsesTransport(api_key="k").model == DEFAULT_MODELS["openai-responses"]
    assert AnthropicTransport(api_key="k").model == DEFAULT_MODELS["anthropic"]
    from ai_widgets.transports import GeminiTransport

    assert GeminiTransport(api_key="k").model == DEFAULT_MODELS["gemini"]
    monkeypatch.setenv("AI_WIDGETS_MODEL", "chosen-model")
    assert OpenAIChatTransport(api_key="k").model == "chosen-model"
    assert AnthropicTransport(api_key="k").model == "chosen-model"
    assert GeminiTransport(api_key="k").model == "chosen-model"
    assert OpenAIChatTransport("named", api_key="k").model == "named"  # a named model wins
    with pytest.raises(ValueError, match="a model name is needed"):
        AnthropicTransport("", api_key="k")
