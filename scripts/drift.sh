#!/usr/bin/env bash
# Finds drift on purpose: rewrites every lock in requirements/ with the newest releases that pyproject.toml allows
# (scripts/lock.sh --upgrade), installs them, and runs every check (scripts/test.sh, extra arguments go to pytest).
# Green: commit the new locks. Red: the newest releases broke something; git diff requirements/ shows what moved.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/lock.sh --upgrade
git --no-pager diff --stat -- requirements/ || true
exec bash scripts/test.sh "$@"
