"""The ACP agents nobody here wrote, as ``scripts/acp_agents.sh`` installed them (pinned by
``tests/integrations/acp_real/package-lock.json``), for the tests that drive them.

``AIW_ACP_AGENTS`` names the cache (``scripts/test.sh`` sets it). Without it the tests skip, except in CI
(``CI=true``), where that is a failure; a cache that lacks the agent is always a failure.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

ENV = "AIW_ACP_AGENTS"

__all__ = ["ENV", "claude_code_acp", "claude_code_env"]


def claude_code_acp() -> Path:
    """The ``claude-code-acp`` command of ``@zed-industries/claude-code-acp`` in the cache ``AIW_ACP_AGENTS`` names.

    Skips the test when the variable is unset outside CI; fails it in CI, or when the agent is missing.
    """
    where = os.environ.get(ENV)
    if not where:
        reason = f"{ENV} is not set: run `export {ENV}=$(bash scripts/acp_agents.sh)` (scripts/test.sh does)"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason}; in CI the real ACP agents must be tested")
        pytest.skip(reason)
    command = Path(where) / "node_modules" / ".bin" / "claude-code-acp"
    if not command.is_file():
        pytest.fail(f"{ENV}={where} lacks {command}: run scripts/acp_agents.sh")
    return command


def claude_code_env(home: Path, anthropic_url: str, proxy_url: str) -> dict[str, str]:
    """What Claude Code needs to run with no key and no network: the fake Messages API's URL, a fake key made now
    (never one in the repository), a fresh ``HOME`` and ``CLAUDE_CONFIG_DIR`` under ``home`` (it writes its session
    files there), no updates, telemetry or error reports, ``IS_SANDBOX`` (we may run as root, where Claude Code wants
    it), and every proxy-honouring request for the network sent to a trap."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": anthropic_url,
        "ANTHROPIC_API_KEY": "fake-" + secrets.token_hex(16),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_FAST_MODE": "1",  # else it asks api.anthropic.com whether fast mode is on
        "IS_SANDBOX": "1",
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
    }
