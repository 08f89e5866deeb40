#!/usr/bin/env bash
# The main job: sets everything up, then opens JupyterLab on the quickstart notebook (no API key needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
extra=()
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
exec .venv/bin/jupyter lab notebooks/quickstart.ipynb "${extra[@]}" "$@"
