#!/usr/bin/env bash
# Installs (idempotently) the ACP agents that nobody here wrote, for tests/integrations/test_acp_claude_code.py and
# tests/e2e/test_acp_claude_code.py, into one cache directory, and prints its path for AIW_ACP_AGENTS:
#
#   AIW_ACP_AGENTS="$(bash scripts/acp_agents.sh)" .venv/bin/python -m pytest tests/integrations/test_acp_claude_code.py
#
# The cache (.venv-acp-agents, or $AIW_ACP_AGENTS_CACHE) holds the npm packages exactly as
# tests/integrations/acp_real/package-lock.json pins them (@zed-industries/claude-code-acp, which bundles Claude
# Code); they run on the machine's Node (20 or later). They are installed again only when the lock changed.
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
command -v npm >/dev/null || { echo "acp_agents: npm is needed to install the ACP agents" >&2; exit 1; }
DIR="${AIW_ACP_AGENTS_CACHE:-$ROOT/.venv-acp-agents}"
NPM_DIR="$ROOT/tests/integrations/acp_real"

want="$(cat "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$DIR/.aiw-npm-lock" 2>/dev/null)" != "$want" ]; then
  echo "acp_agents: installing $NPM_DIR/package-lock.json" >&2
  mkdir -p "$DIR"
  cp "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json" "$DIR/"
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$DIR/.aiw-npm-lock"
fi
agent="$DIR/node_modules/.bin/claude-code-acp"
[ -x "$agent" ] || { echo "acp_agents: $agent is missing" >&2; exit 1; }

echo "$DIR"
