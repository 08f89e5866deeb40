"""Test-suite wide settings."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Browser tests go last: Playwright's sync API leaves an event loop on the main thread, after which the
    # asyncio tests could no longer start their own.
    items.sort(key=lambda item: "/e2e/" in str(item.path).replace("\\", "/"))
