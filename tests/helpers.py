"""Small helpers shared by the tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Polls ``predicate`` on the running loop until it holds; fails the test after ``timeout`` seconds (generous:
    a stdio server starting on a loaded machine takes seconds, and a passing test never waits that long)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)
