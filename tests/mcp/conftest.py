"""Fixtures of the MCP tests: no test leaves a server process behind."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psutil
import pytest

from tests.helpers import children


@pytest.fixture(autouse=True)
def no_leftover_children() -> Iterator[None]:
    """Every test ends with no child process of its own left: each server it started was stopped and reaped."""
    before = children()
    yield
    deadline = time.monotonic() + 5
    while (left := children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"child processes left behind: {[psutil.Process(p).cmdline() for p in left]}"
