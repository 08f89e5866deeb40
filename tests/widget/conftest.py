"""Fixtures of the widget tests: what a cell displays, as if in an ipykernel."""

from __future__ import annotations

from typing import Any

import IPython.display
import pytest

import ai_widgets.widget._chat as chat_module
from ai_widgets.widget._kernel import KernelSupport
from tests.widget.widget_harness import Handle


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What ``ask`` displays, as if in an ipykernel: turn views, and a :class:`Handle` for each display made to be
    updated (the note that ``ask`` waits for a running turn)."""
    displayed: list[Any] = []

    def display(obj: Any, *, raw: bool = False, display_id: bool | str | None = None, **_: Any) -> Handle | None:
        if display_id is True:
            assert raw
            return Handle(displayed, obj)
        displayed.append(obj)
        return None

    monkeypatch.setattr(chat_module, "kernel_support", lambda: KernelSupport("ipykernel6", "6.29.5", "test"))
    monkeypatch.setattr(IPython.display, "display", display)
    return displayed
