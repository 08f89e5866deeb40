#!/usr/bin/env bash
# Sets up everything the project needs, idempotently: .venv with the package (editable) and its dev extras, every
# Python package pinned by requirements/dev.lock (scripts/lock.sh writes it), and the front-end bundle built from
# js/ (pinned by js/package-lock.json). Used by scripts/test.sh and scripts/lab.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v npm >/dev/null || { echo "setup: npm (Node.js 18+) is needed to build the front end" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# uv at its locked version (pip reads the lock as constraints), then uv installs the rest from the lock: the build
# backend too, so an editable install resolves nothing unlocked.
.venv/bin/python -m pip install -q --disable-pip-version-check -c requirements/dev.lock uv

echo "== front end (js/)"
# npm ci again whenever the lock changed since the last one (a pull that adds a dependency), not only on a fresh clone.
(cd js && { cmp -s package-lock.json node_modules/.installed-lock.json \
  || { npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json; }; } \
  && npm run --silent build)

echo "== python packages"
# --compile-bytecode: every run of the tests then imports site-packages from .pyc, even where PYTHONDONTWRITEBYTECODE
# is set (each pytest process, xdist's workers too, would compile them again: seconds each).
AI_WIDGETS_SKIP_JS_BUILD=1 .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python \
  -c requirements/dev.lock --build-constraints requirements/dev.lock -r requirements/tools.in -e ".[dev]"
