"""Test-suite wide settings, and the fixtures that tests of several folders share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.widget.widget_harness import Wire, recording_comms

HERE = Path(__file__).resolve().parent
#: The folders whose every test carries a marker, so ``-m "not kernel"`` or ``-m e2e`` selects by folder.
FOLDER_MARKERS = {HERE / "kernel": pytest.mark.kernel, HERE / "e2e": pytest.mark.e2e}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folders = item.path.resolve().parents
        for folder, marker in FOLDER_MARKERS.items():
            if folder in folders:
                item.add_marker(marker)
    # Browser tests go last: Playwright's sync API leaves an event loop on the main thread, after which the
    # asyncio tests could no longer start their own.
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


@pytest.fixture
def wire() -> Iterator[Wire]:
    """What every widget made in the test sends to its front end, recorded in process (no kernel)."""
    with recording_comms() as recorded:
        yield recorded
