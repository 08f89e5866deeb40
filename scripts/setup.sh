#!/usr/bin/env bash
# Sets up everything the project needs, idempotently: .venv with the package (editable) and its dev extras,
# and the front-end bundle built from js/. Used by scripts/test.sh and scripts/lab.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v npm >/dev/null || { echo "setup: npm (Node.js 18+) is needed to build the front end" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip

echo "== front end (js/)"
(cd js && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run --silent build)

echo "== python packages"
AI_WIDGETS_SKIP_JS_BUILD=1 .venv/bin/python -m pip install -q -e ".[dev]"
