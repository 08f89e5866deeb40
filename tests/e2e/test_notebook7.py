"""The same flows in Notebook 7 (``/notebooks/...``)."""

from __future__ import annotations

import pytest
from chat_ui import keys_stay_in_widget, weather_flow

pytestmark = pytest.mark.e2e


def test_weather_flow_notebook7(chromium_page, server, notebook_name, artifacts):
    weather_flow(chromium_page, server("notebook"), notebook_name, artifacts, "test_weather_flow_notebook7")


def test_keys_stay_in_widget_notebook7(chromium_page, server, notebook_name, artifacts):
    keys_stay_in_widget(chromium_page, server("notebook"), notebook_name, artifacts, "test_keys_stay_in_widget_nb7")
