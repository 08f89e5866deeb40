"""Making values safe to keep: JSON- and UTF-8-safe, not too deep, free of secrets.

Everything that enters a conversation (stream events, tool values, errors) passes through here, so that every later
request, dump, widget update and transcript keeps working. The walks are iterative: a value nested thousands of
levels deep is refused with a clear error, never a ``RecursionError``.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["MAX_DEPTH", "UnsafeValueError", "check_size", "checked_json", "redact", "safe_text"]

#: The deepest nesting kept anywhere in a conversation (arguments, results, provider data). Deeper values are
#: refused: the JSON encoders and validators this data meets later recurse, and none of them go this deep safely.
MAX_DEPTH = 200

SURROGATE = re.compile("[\ud800-\udfff]")

# Things that look like credentials, whatever the provider: removed from every text a person sees or a file keeps.
# Each pattern keeps its first two groups (what names the secret) and replaces the rest. Every pattern runs in
# linear time (no two repeats can match the same characters, and each starts with a fixed name, so no long run is
# scanned again from each of its characters). A pattern with markers runs only on text that holds one of them (in
# lower case): a substring search is far quicker than a case-insensitive pattern tried at every position, and an
# error text can be megabytes long.
SECRET_PATTERNS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    # Full keys, and the masked forms providers echo back (sk-proj-****...6789), whose tail is still a secret's.
    (re.compile(r"sk-[A-Za-z0-9_\-\*\.…]{4,}"), ()),
    (re.compile(r"AIza[0-9A-Za-z_\-]{20,}"), ()),
    # A key given to its name ("api_key=...", "x-api-key: ..."; prose such as "the API key provided" is not one).
    (re.compile(r"(?i)(api[_-]?key|x-api-key|x-goog-api-key)([\"']?[ \t]*[:=][\"'\s]*)[A-Za-z0-9_\-\.]{8,}"), ("key",)),
    (re.compile(r"(?i)(bearer)(\s+)[A-Za-z0-9_\-\.~+/]{8,}=*"), ("bearer",)),
    # A value given to a credential's name: password=hunter2, "token": "abc", DB_PASSWORD: x, client_secret=...
    # The name must be followed by = or : ("the token count" and "password reset" are prose, not secrets).
    (
        re.compile(r"(?i)(passw(?:or)?d|passphrase|token|secret)([\"']?[ \t]*[:=][ \t]*[\"']?)[^\s\"'&,;]+"),
        ("passw", "passphrase", "token", "secret"),
    ),
    # ODBC's PWD=... ("pwd: /home" is a directory).
    (re.compile(r"(?i)((?<![a-z])pwd)([ \t]*=[ \t]*)[^\s\"'&,;]+"), ("pwd",)),
    # An Authorization header of any scheme: Authorization: Basic dXNlcjpwYXNz, Authorization: Token abc.
    (
        re.compile(
            r"(?i)(authorization)([\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest)[ \t]+)?)[^\s\"',;]+"
        ),
        ("authorization",),
    ),
    # The password of a URL's user: postgres://app:hunter2@db/x keeps postgres://app: and the @.
    (re.compile(r"(://)([^\s/@:]*:)[^\s/@]+(?=@)"), ()),
]


class UnsafeValueError(ValueError):
    """A value cannot be kept in a conversation (a cycle, nesting too deep, a number JSON cannot hold...)."""


def safe_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so it always encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE.sub("\ufffd", text)
    return text


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with the given secrets and anything that looks like a key replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    lower: str | None = None
    for pattern, markers in SECRET_PATTERNS:
        if markers:
            lower = text.lower() if lower is None else lower  # redactions add no marker: the first copy serves all
            if not any(marker in lower for marker in markers):
                continue
        text = pattern.sub(keep_the_name, text)
    return text


def keep_the_name(match: re.Match[str]) -> str:
    return (match.group(1) + match.group(2) if match.lastindex else "") + "[redacted]"


def scalar(value: Any, where: str, finite: bool = False) -> Any:
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        return safe_text(value)
    if kind is int or isinstance(value, int):
        if value.bit_length() > 13_000:  # about 3,900 digits: under Python's 4,300-digit conversion limit
            try:
                str(value)
            except ValueError:
                raise UnsafeValueError(
                    f"{where}: an integer with more than 4,300 digits cannot be written as JSON"
                ) from None
        return int(value)
    if kind is float or isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        if finite:
            raise UnsafeValueError(f"{where}: {value!r} is not a JSON number (JSON has no NaN or Infinity)")
        return None
    if isinstance(value, str):
        return safe_text(str(value))
    raise UnsafeValueError(f"{where}: a {type(value).__name__} is not JSON")


def checked_json(value: Any, *, where: str = "value", max_depth: int = MAX_DEPTH, finite: bool = False) -> Any:
    """A JSON- and UTF-8-safe copy of ``value`` (plain dicts, lists, strings, numbers, booleans, ``None``).

    Lone surrogates become U+FFFD and non-finite floats ``None``; tuples become lists. Returns ``value`` itself
    always a new container for a container.

    Args:
        value: Plain JSON-like data (already converted from models and dataclasses).
        where: What the value is, for the error message.
        max_depth: The deepest nesting allowed.
        finite: Refuse NaN and infinities (arguments a person gives must be strict JSON) instead of making them
            ``None``.

    Raises:
        UnsafeValueError: A cycle, nesting deeper than ``max_depth``, a non-string key, an integer too long for
            JSON, a type JSON has no form for, or (with ``finite``) NaN or an infinity.
    """
    if not isinstance(value, (dict, list, tuple)):
        return scalar(value, where, finite)
    # An explicit stack of (source container, its copy, depth); children are copied into the copy. A cycle shows
    # as nesting past ``max_depth``; the item budget stops a value that shares containers exponentially.
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    budget = MAX_ITEMS
    while stack:
        source, target, depth = stack.pop()
        if depth > max_depth:
            raise UnsafeValueError(f"{where}: nested deeper than {max_depth} levels (or it contains itself)")
        budget -= len(source)
        if budget < 0:
            raise UnsafeValueError(f"{where}: more than {MAX_ITEMS:,} values")
        is_dict = isinstance(source, dict)
        for key, item in source.items() if is_dict else enumerate(source):
            if is_dict and not isinstance(key, str):
                raise UnsafeValueError(f"{where}: a key must be a string, not {type(key).__name__}")
            if isinstance(item, (dict, list, tuple)):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child, depth + 1))
            else:
                child = scalar(item, where, finite)
            if is_dict:
                target[safe_text(str(key))] = child
            else:
                target.append(child)
    return root


MAX_ITEMS = 10_000_000


def check_size(value: Any, *, where: str = "value") -> None:
    """Refuses, before anything copies it, a value whose dicts, lists and tuples hold more than 10,000,000 items in
    all, counted as a copy would count them: a list that holds one list a thousand times counts it a thousand times,
    so ``[[[[0] * 100] * 100] * 100] * 100`` (100 million items in a few kilobytes) is refused at once instead of
    being expanded until memory runs out. Nesting deeper than :data:`MAX_DEPTH` (a cycle) is left to the copy to
    report.

    Raises:
        UnsafeValueError: More than 10,000,000 items.
    """
    if not isinstance(value, (dict, list, tuple)):
        return
    budget = MAX_ITEMS
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        budget -= len(container)
        if budget < 0:
            raise UnsafeValueError(f"{where}: more than {MAX_ITEMS:,} values")
        if depth >= MAX_DEPTH:
            continue
        for item in container.values() if isinstance(container, dict) else container:
            if isinstance(item, (dict, list, tuple)):
                stack.append((item, depth + 1))
