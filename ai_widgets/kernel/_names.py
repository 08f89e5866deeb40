"""Which of a namespace's names are the person's: not IPython's own bookkeeping, and not a secret's (whose value is
never shown or sent)."""

from __future__ import annotations

import re

__all__ = ["IPYTHON_NAMES", "is_ipython_name", "looks_secret", "name_parts"]

#: The names IPython keeps in a kernel's namespace for itself (its history, its output cache, its helpers).
IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "_oh", "_ih", "_dh", "_sh"})
# ``_``, ``__``, ``___`` (the last outputs), ``_i``, ``_ii``, ``_iii`` (the last inputs), ``_i7`` and ``_7`` (one
# cell's input and output), and dunder names (``__builtins__``, ``__name__``...).
IPYTHON_PATTERN = re.compile(r"_{1,3}|_i{1,3}|_i?\d+|__\w+__")

#: The word parts that make a name look like a secret's (``OPENAI_API_KEY``, ``apiKey``, ``db_password``).
SECRET_PARTS = frozenset(
    {
        "key",
        "keys",
        "apikey",
        "apikeys",
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "creds",
    }
)
# Names holding none of these (most names) are not secrets' without being split into parts.
SECRET_HINT = re.compile(r"key|token|secret|passw|passphrase|credential|creds", re.IGNORECASE)
# A word part: a run of capitals not followed by a lower-case letter (``API`` in ``APIKey``), a capitalised or
# lower-case word, or a number. Underscores and other characters separate parts.
WORD_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_parts(name: str) -> list[str]:
    """The word parts of an identifier, in lower case: ``OPENAI_API_KEY`` and ``openaiApiKey`` give ``openai``,
    ``api``, ``key``."""
    return [part.lower() for part in WORD_PART.findall(name)]


def looks_secret(name: str) -> bool:
    """Whether ``name`` looks like the name of a secret: one of its word parts is ``key``, ``token``, ``secret``,
    ``password``, ``passwd``, ``credential`` (or their plurals, ``apikey``, ``passphrase``, ``creds``), in any case.
    Whole parts only: ``monkey``, ``keyboard`` and ``tokenizer`` are not secrets; ``api_key``, ``apiKey``,
    ``GITHUB_TOKEN`` and ``db_password`` are."""
    return SECRET_HINT.search(name) is not None and any(part in SECRET_PARTS for part in name_parts(name))


def is_ipython_name(name: str) -> bool:
    """Whether ``name`` is one IPython keeps in the namespace for itself (``In``, ``Out``, ``_``, ``_i3``, ``_3``,
    ``_oh``, ``get_ipython``, ``exit``...) or a dunder name (``__builtins__``)."""
    return name in IPYTHON_NAMES or IPYTHON_PATTERN.fullmatch(name) is not None
