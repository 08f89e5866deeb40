"""The widget takes its colours from the JupyterLab theme (light and dark), not from its fallbacks."""

from __future__ import annotations

import re

import pytest
from chat_ui import WEATHER, assert_no_widget_errors, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# Resolves a CSS variable the way the browser does (a probe element inside the notebook), so values such as
# var(--md-grey-900, #212121) compare as computed rgb().
COLOURS = """root => {
  const probe = document.createElement('div');
  root.parentElement.append(probe);
  const resolve = (prop, v) => { probe.style.setProperty(prop, `var(${v})`); const c = getComputedStyle(probe)[prop];
                                 probe.style.removeProperty(prop); return c; };
  const vars = {
    fg: resolve('color', '--jp-ui-font-color1'),
    bg0: resolve('background-color', '--jp-layout-color0'),
    bg1: resolve('background-color', '--jp-layout-color1'),
    bg2: resolve('background-color', '--jp-layout-color2'),
    border: resolve('border-top-color', '--jp-border-color1'),
    brand: resolve('background-color', '--jp-brand-color1'),
  };
  probe.remove();
  const cs = sel => getComputedStyle(root.querySelector(sel));
  return {
    vars,
    text: cs('.aiw-message[data-role="assistant"] .aiw-text').color,
    rootColor: getComputedStyle(root).color,
    inputBg: cs('.aiw-input').backgroundColor,
    inputFg: cs('.aiw-input').color,
    cardBg: cs('.aiw-tool-card').backgroundColor,
    cardBorder: cs('.aiw-tool-card').borderTopColor,
    userBg: cs('.aiw-message[data-role="user"]').backgroundColor,
    sendBg: cs('.aiw-send').backgroundColor,
    sendFg: cs('.aiw-send').color,
    sendOpacity: cs('.aiw-send').opacity,
    sendDisabled: root.querySelector('.aiw-send').disabled,
  };
}"""

# The widget's fallbacks (widget.css) when no --jp-* variable is defined: a theme that did not reach the widget
# shows these.
FALLBACK_TEXT = "rgb(31, 35, 40)"  # #1f2328


def luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in re.findall(r"\d+", rgb)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of text colour ``fg`` (its alpha composited over ``bg``) on ``bg``."""
    f = [float(x) for x in re.findall(r"[\d.]+", fg)]
    b = [float(x) for x in re.findall(r"[\d.]+", bg)[:3]]
    alpha = f[3] if len(f) > 3 else 1.0
    mixed = [alpha * f[i] + (1 - alpha) * b[i] for i in range(3)]

    def rel(c: list[float]) -> float:
        lin = [(v / 255 / 12.92) if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((rel(mixed), rel(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


SEEN: dict[str, dict] = {}


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"], ids=["light", "dark"])
def test_theme_colours_reach_widget(chromium_page, server, notebook_name, artifacts, theme):
    page = chromium_page
    srv = server("lab", theme=None if theme == "JupyterLab Light" else theme)
    nb = notebook_name
    srv.write_notebook(nb, [WEATHER])
    widget = open_and_run(page, srv, nb)
    dark = theme == "JupyterLab Dark"
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false" if dark else "true")
    send_from_input(widget, "weather?")
    expect(widget.locator(".aiw-tool-card")).to_have_attribute("data-state", "completed")
    wait_idle(widget)

    # With nothing typed, Send is disabled: still readable (it was the brand colour at half opacity, dark text on
    # dark in the dark theme), at full opacity.
    idle = widget.evaluate(COLOURS)
    assert idle["sendDisabled"], idle
    assert idle["sendOpacity"] == "1", idle
    assert contrast(idle["sendFg"], idle["sendBg"]) >= 4.5, idle
    screenshot(widget, artifacts, f"test_theme_colours_reach_widget-{'dark' if dark else 'light'}-send-disabled")
    widget.locator(".aiw-input").fill("more?")

    c = widget.evaluate(COLOURS)
    assert not c["sendDisabled"], c
    v = c["vars"]
    assert v["fg"], v
    assert v["bg0"], v
    # Each colour is the theme's variable, resolved.
    assert c["rootColor"] == v["fg"], c
    assert c["text"] == v["fg"], c
    assert c["inputFg"] == v["fg"], c
    assert c["inputBg"] == v["bg0"], c
    assert c["cardBg"] == v["bg1"], c
    assert c["cardBorder"] == v["border"], c
    assert c["userBg"] == v["bg2"], c
    assert c["sendBg"] == v["brand"], c
    # And the theme is really light or dark.
    if dark:
        assert luminance(c["inputBg"]) < 80 < luminance(c["text"]), c
        assert c["text"] != FALLBACK_TEXT, c
    else:
        assert luminance(c["inputBg"]) > 200 > luminance(c["text"]) + 60, c
    SEEN[theme] = c
    other = SEEN.get("JupyterLab Light" if dark else "JupyterLab Dark")
    if other:  # both ran in this session: the colours differ
        for key in ("text", "inputBg", "cardBg", "userBg"):
            assert c[key] != other[key], (key, c[key], other[key])
    screenshot(widget, artifacts, f"test_theme_colours_reach_widget-{'dark' if dark else 'light'}")
    assert_no_widget_errors(page)
