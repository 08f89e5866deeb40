"""The client scenarios of ``@modelcontextprotocol/conformance`` (pinned, installed by ``scripts/mcp_servers.sh``)
against ``tests/mcp/conformance_client.py``, a client built on ``ai_widgets.mcp``.

For each scenario the tool (on the pinned Node 22) starts the scenario's server on loopback, runs the client with
its URL, and judges what the server saw: each check is SUCCESS, FAILURE, WARNING or INFO. A scenario passes when
the client exited 0, no check failed or warned, and at least one succeeded (the tool's own rule, plus that).

The auth suite runs once, its scenarios in parallel (the tool's ``--suite auth``); each is a test of its own here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.installed import Installed, installed

pytestmark = pytest.mark.slow

CLIENT = Path(__file__).parent / "conformance_client.py"
CONFORMANCE = "@modelcontextprotocol/conformance"

SCENARIOS = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"]
# The tool's auth suite (0.1.16): OAuth discovery, registration (dynamic, pre-registered, by metadata document),
# scopes and token endpoint authentication.
AUTH_SUITE = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]


@dataclass(frozen=True)
class Result:
    """One scenario's run: its checks, and what the client printed."""

    scenario: str
    checks: list[dict[str, Any]]
    stderr: str
    exit_code: int | None  # the conformance tool's (a single scenario's), None in a suite run

    def count(self, status: str) -> int:
        return sum(1 for check in self.checks if check["status"] == status)

    @property
    def figures(self) -> str:
        judged = self.count("SUCCESS") + self.count("FAILURE")
        return f"{self.scenario}: {self.count('SUCCESS')}/{judged} passed, {self.count('WARNING')} warnings"

    def assert_passed(self) -> None:
        bad = [
            f"{check['status']} {check['id']}: {check.get('errorMessage') or check['description']}"
            for check in self.checks
            if check["status"] in ("FAILURE", "WARNING")
        ]
        assert not bad, f"{self.figures}\n" + "\n".join(bad) + f"\nclient stderr:\n{self.stderr}"
        assert self.count("SUCCESS") > 0, f"{self.figures}: no check succeeded\nclient stderr:\n{self.stderr}"
        assert self.exit_code in (0, None), f"{self.figures}; the tool exited {self.exit_code}\n{self.stderr}"


@pytest.fixture(scope="module")
def servers() -> Installed:
    return installed()


def _conformance(servers: Installed, out: Path, *selection: str, timeout: float) -> subprocess.CompletedProcess[str]:
    command = f"{sys.executable} {CLIENT}"
    assert " " not in sys.executable + str(CLIENT), "the tool splits its --command at spaces"
    return subprocess.run(
        [
            str(servers.node),
            str(servers.npm_entry(CONFORMANCE)),
            "client",
            "--command",
            command,
            *selection,
            "--timeout",
            "30000",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=out,
    )


def _read(out: Path, scenario: str, exit_code: int | None) -> Result:
    # The tool writes <out>/<scenario>-<timestamp>/ (an auth/... scenario in a folder auth/).
    (folder,) = [p for p in (out / scenario).parent.glob(f"{Path(scenario).name}-*") if p.is_dir()]
    checks = json.loads((folder / "checks.json").read_text())
    stderr = (folder / "stderr.txt").read_text() if (folder / "stderr.txt").exists() else ""
    return Result(scenario, checks, stderr, exit_code)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario(servers: Installed, tmp_path: Path, scenario: str) -> None:
    run = _conformance(servers, tmp_path, "--scenario", scenario, timeout=90)
    result = _read(tmp_path, scenario, run.returncode)
    print(result.figures)
    result.assert_passed()


@pytest.fixture(scope="module")
def auth_suite(servers: Installed, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    out = tmp_path_factory.mktemp("conformance-auth")
    _conformance(servers, out, "--suite", "auth", timeout=150)
    return {scenario: _read(out, scenario, None) for scenario in AUTH_SUITE}


@pytest.mark.parametrize("scenario", AUTH_SUITE)
def test_auth_scenario(auth_suite: dict[str, Result], scenario: str) -> None:
    result = auth_suite[scenario]
    print(result.figures)
    result.assert_passed()


def test_the_auth_suite_is_the_one_listed_here(servers: Installed, tmp_path: Path) -> None:
    """So a scenario the tool adds to its auth suite is not silently left out (nor one it drops kept)."""
    listed = subprocess.run(
        [str(servers.node), str(servers.npm_entry(CONFORMANCE)), "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    client_part = listed.split("Client scenarios", 1)[1]
    names = [line.strip()[2:].split(" ")[0] for line in client_part.splitlines() if line.strip().startswith("- ")]
    assert {n for n in names if not n.startswith("auth/")} == set(SCENARIOS)
    assert set(AUTH_SUITE) <= set(names)
