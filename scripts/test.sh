#!/usr/bin/env bash
# Sets up everything (idempotently) and runs every check: lint, format, types, the import contracts of DESIGN.md's
# floors, the front end's type check and unit tests, then the whole pytest suite (unit, kernel tests against each
# supported ipykernel, tests against pinned MCP servers and ACP agents of others (scripts/mcp_servers.sh,
# scripts/acp_agents.sh), notebooks, and browser
# tests in JupyterLab / Notebook 7 in headless Chromium).
#
#   bash scripts/test.sh                        everything (what .ci/run runs): the unit tests in parallel, then the
#                                                kernel and browser tests one after another
#   bash scripts/test.sh [pytest args]          the checks, then pytest with these arguments alone
#   bash scripts/test.sh --fast [pytest args]   only the tests that are neither e2e, kernel nor slow, in parallel
#                                                (pytest-xdist, one worker per core), after scripts/setup.sh alone
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
if [ "${1:-}" = "--fast" ]; then
  fast=1
  shift
fi

# pytest's exit 5 (no test collected) is a failure.
run_pytest() {
  set +e
  .venv/bin/python -m pytest "$@"
  local status=$?
  set -e
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    return 1
  fi
  return "$status"
}

bash scripts/setup.sh
if [ "$fast" -eq 1 ]; then
  echo "== pytest --fast: neither e2e, kernel nor slow, in parallel"
  run_pytest -n auto --durations=20 -m "not e2e and not kernel and not slow" "$@"
  exit $?
fi
bash scripts/browser_setup.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== import contracts (DESIGN.md's floors)"
.venv/bin/lint-imports --no-logo --no-cache
echo "== documentation site (a broken link or reference fails)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet  # into site/ (git ignores it)
echo "== front end: kernel-side fixtures, tsc, vitest"
# Fresh from the Python serialiser, so a change there cannot leave the JS tests green on a stale recording.
rm -rf js/tests/fixtures/generated
.venv/bin/python js/tests/fixtures/make_trace_fixture.py js/tests/fixtures/generated
(cd js && npm run --silent typecheck && npm test --silent)

echo "== kernels for the kernel tests"
AIW_KERNEL_PYTHONS="$(AI_WIDGETS_SKIP_JS_BUILD=1 bash scripts/kernel_envs.sh)"
echo "== MCP servers of others (pinned) for tests/mcp/test_real_servers.py and test_conformance.py"
AIW_MCP_SERVERS="$(bash scripts/mcp_servers.sh)"
echo "== ACP agents of others (pinned) for tests/integrations/test_acp_claude_code.py and its browser test"
AIW_ACP_AGENTS="$(bash scripts/acp_agents.sh)"
# Browser tests must run here, not skip: chromium was installed above.
export AIW_E2E_REQUIRED=1
export AIW_KERNEL_PYTHONS
# Set, so the real-server tests run (a missing server fails them; they skip only without it, outside CI).
export AIW_MCP_SERVERS
# Set, so the real-agent tests run (a missing agent fails them; they skip only without it, outside CI).
export AIW_ACP_AGENTS

if [ "$#" -gt 0 ]; then
  echo "== pytest $*"
  run_pytest "$@"
  exit $?
fi
# The tests that need neither a browser nor a kernel of their own run in parallel, one worker per core; the kernel
# and browser tests then run one after another (each starts servers and kernels that time out under contention).
echo "== pytest: unit tests, in parallel"
run_pytest -n auto -m "not e2e and not kernel"
echo "== pytest: kernel and browser tests"
run_pytest --durations=25 -m "e2e or kernel"
