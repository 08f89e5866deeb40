#!/usr/bin/env bash
# Writes the locks in requirements/ with uv: every Python package that scripts/setup.sh (.venv: the package's dev
# extra and requirements/tools.in), scripts/kernel_envs.sh (one venv per supported ipykernel) and
# scripts/mcp_servers.sh (the MCP servers of others, from requirements/mcp-servers.in) install, pinned exactly, for
# CPython 3.11 and later on any platform. pyproject.toml's ranges stay open (users install the package
# beside their own packages); the locks make the test and demo environments the same on every day.
#
#   bash scripts/lock.sh            re-resolve, keeping every pin that still satisfies pyproject.toml
#   bash scripts/lock.sh --upgrade  take the newest releases (scripts/drift.sh does this, then runs the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/uv ] || { echo "lock: no .venv/bin/uv; run scripts/setup.sh first" >&2; exit 1; }
source scripts/_versions.sh
compile=(.venv/bin/uv pip compile --quiet --universal --python-version 3.11 --no-annotate
         --custom-compile-command "bash scripts/lock.sh" "$@")

"${compile[@]}" pyproject.toml requirements/tools.in --extra dev -o requirements/dev.lock
for v in $IPYKERNEL_VERSIONS; do
  printf 'ipykernel==%s\nanywidget\nipywidgets\nhatchling\n' "$v" \
    | "${compile[@]}" pyproject.toml - -o "requirements/ipykernel-$v.lock"
done
"${compile[@]}" requirements/mcp-servers.in -o requirements/mcp-servers.lock
echo "lock: wrote $(ls requirements/*.lock | tr '\n' ' ')"
