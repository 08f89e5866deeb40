#!/usr/bin/env bash
# The main job: sets everything up, then opens JupyterLab on the quickstart notebook (no API key needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
extra=()
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
# The URL JupyterLab prints is its default URL: the quickstart's (with --no-browser, the Launcher's otherwise). The
# server's root is the notebook's folder, so the notebook is at /lab/tree/quickstart.ipynb.
exec .venv/bin/jupyter lab notebooks/quickstart.ipynb --LabApp.default_url=/lab/tree/quickstart.ipynb "${extra[@]}" "$@"
