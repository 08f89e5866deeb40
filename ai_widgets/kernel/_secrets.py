"""The values of the secrets a run could print: kept out of what the model is told, the card and the history."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.kernel._names import looks_secret
from ai_widgets.outcome import CellOutput, DisplayBundle

__all__ = ["redacted_outputs", "secret_values"]

#: The lines of a newline-joined list of names that may be a secret's (the rest are never split into parts).
CANDIDATE_LINE = re.compile(r"^[^\n]*(?:key|token|secret|passw|passphrase|credential|creds)[^\n]*$", re.I | re.M)
#: The most secret values looked for (a namespace of thousands of tokens keeps the first).
MAX_SECRETS = 100
#: Shorter values are not secrets worth replacing everywhere they occur (``"abc"`` would be cut out of every word).
MIN_SECRET_CHARS = 6


def secret_values(namespace: Mapping[str, Any]) -> list[str]:
    """The string values of the namespace's names and of the environment variables that look like secrets'
    (:func:`~ai_widgets.kernel._names.looks_secret`: ``api_key``, ``OPENAI_API_KEY``, ``db_password``), longest
    first. One scan of the names by a regular expression, in C; only the few candidates are split into parts."""
    found: list[str] = []
    for source in (namespace, os.environ):
        names = [key for key in source if isinstance(key, str)]
        for name in CANDIDATE_LINE.findall("\n".join(names)):
            if not looks_secret(name):
                continue
            value = source.get(name)
            if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS and value not in found:
                found.append(value)
                if len(found) >= MAX_SECRETS:
                    break
    return sorted(found, key=len, reverse=True)


def redacted_outputs(outputs: Iterable[CellOutput], secrets: list[str]) -> tuple[CellOutput, ...]:
    """``outputs`` with the secrets and anything that looks like a key replaced by ``[redacted]`` in their texts
    (printed text, tracebacks, and the text forms of displays: plain, HTML, markdown, JSON as text). Images are
    kept as they are."""
    kept: list[CellOutput] = []
    for output in outputs:
        text = redact(output.text, *secrets) if output.text else output.text
        display = output.display
        if display is not None:
            data = {
                mime: redact(value, *secrets) if isinstance(value, str) and not mime.startswith("image/") else value
                for mime, value in display.data.items()
            }
            shown_text = redact(display.text, *secrets) if display.text else display.text
            if data != display.data or shown_text != display.text:
                display = DisplayBundle(data=data, metadata=display.metadata, text=shown_text)
        if text != output.text or display is not output.display:
            output = output.model_copy(update={"text": text, "display": display})
        kept.append(output)
    return tuple(kept)
