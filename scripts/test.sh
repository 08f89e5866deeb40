#!/usr/bin/env bash
# Sets up everything (idempotently) and runs every check: lint, format, types, the import contracts of DESIGN.md's
# floors, the front end's type check and unit tests, then the whole pytest suite (unit, kernel tests against each
# supported ipykernel, notebooks, and browser tests in JupyterLab / Notebook 7 in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/browser_setup.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== import contracts (DESIGN.md's floors)"
.venv/bin/lint-imports --no-logo --no-cache
echo "== front end: kernel-side fixtures, tsc, vitest"
# Fresh from the Python serialiser, so a change there cannot leave the JS tests green on a stale recording.
rm -rf js/tests/fixtures/generated
.venv/bin/python js/tests/fixtures/make_trace_fixture.py js/tests/fixtures/generated
(cd js && npm run --silent typecheck && npm test --silent)

echo "== kernels for the kernel tests"
AIW_KERNEL_PYTHONS="$(AI_WIDGETS_SKIP_JS_BUILD=1 bash scripts/kernel_envs.sh)"
# Browser tests must run here, not skip: chromium was installed above.
export AIW_E2E_REQUIRED=1
export AIW_KERNEL_PYTHONS

echo "== pytest"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
