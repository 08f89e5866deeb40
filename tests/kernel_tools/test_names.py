"""Which names are secrets' and which are IPython's own (ai_widgets.kernel._names)."""

from __future__ import annotations

import pytest

from ai_widgets.kernel import looks_secret
from ai_widgets.kernel._names import is_ipython_name, name_parts


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "api_key",
        "OPENAI_API_KEY",
        "apiKey",
        "APIKey",
        "openaiApiKey",
        "apikey",
        "GITHUB_TOKEN",
        "access_tokens",
        "client_secret",
        "SECRETS",
        "db_password",
        "Password2",
        "passwd",
        "aws_credentials",
        "myCreds",
        "private_key_1",
    ],
)
def test_a_secrets_name_is_seen_in_any_case_and_style(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize(
    "name", ["monkey", "keyboard", "tokenizer", "secretary", "passage", "df", "turkey_count", "hockey", "x"]
)
def test_only_whole_word_parts_count(name: str) -> None:
    assert not looks_secret(name)


def test_word_parts_split_on_underscores_capitals_and_digits() -> None:
    assert name_parts("OPENAI_API_KEY") == ["openai", "api", "key"]
    assert name_parts("openaiApiKey") == ["openai", "api", "key"]
    assert name_parts("APIKey2") == ["api", "key", "2"]
    assert name_parts("monkey") == ["monkey"]


@pytest.mark.parametrize(
    "name",
    [
        "In",
        "Out",
        "_",
        "__",
        "___",
        "_i",
        "_ii",
        "_iii",
        "_i12",
        "_12",
        "_oh",
        "_ih",
        "_dh",
        "exit",
        "quit",
        "get_ipython",
        "__builtins__",
        "__name__",
    ],
)
def test_ipythons_own_names(name: str) -> None:
    assert is_ipython_name(name)


@pytest.mark.parametrize("name", ["df", "_tmp", "_x1", "i", "input", "Output", "__x", "____"])
def test_the_persons_names(name: str) -> None:
    assert not is_ipython_name(name)
