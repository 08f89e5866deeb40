"""The stdio relay an ACP agent without MCP over HTTP runs (``python -m ai_widgets.integrations._acp_bridge``): what it
does without its environment. Its relaying is tested through the agent in ``test_acp_offer.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

ROOT = str(Path(__file__).resolve().parents[2])


def test_without_its_url_and_token_it_says_so_and_exits_2() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_WIDGETS_ACP_MCP_")}
    env["PYTHONPATH"] = ROOT
    done = subprocess.run(
        [sys.executable, "-m", "ai_widgets.integrations._acp_bridge"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "AI_WIDGETS_ACP_MCP_URL and AI_WIDGETS_ACP_MCP_TOKEN must be set" in done.stderr
    assert done.stdout == ""  # stdout is the agent's MCP channel
