"""Fixtures of the MCP tests: no test leaves a server process behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import no_new_children


@pytest.fixture(autouse=True)
def no_leftover_children() -> Iterator[None]:
    """Every test ends with no child process of its own left: each server it started was stopped and reaped."""
    with no_new_children():
        yield
