"""The same weather flow in Notebook 7 (``/notebooks/...``)."""

from __future__ import annotations

import pytest
from chat_ui import weather_flow

pytestmark = pytest.mark.e2e


def test_weather_flow_notebook7(chromium_page, server, notebook_name, artifacts):
    weather_flow(chromium_page, server("notebook"), notebook_name, artifacts, "test_weather_flow_notebook7")
