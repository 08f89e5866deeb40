#!/usr/bin/env bash
# Creates (idempotently) one venv per supported ipykernel version for the kernel tests (tests/kernel/),
# and prints the os.pathsep-joined list of their pythons, then the main .venv's python (latest
# ipykernel), for AIW_KERNEL_PYTHONS:
#
#   AIW_KERNEL_PYTHONS="$(scripts/kernel_envs.sh)" .venv/bin/python -m pytest tests/kernel
#
# Versions (override with AIW_IPYKERNEL_VERSIONS="..."): 6.29.5 (oldest supported), 6.31.0 (last 6.x),
# 7.0.1 (first 7.x: subshells, older internals), 7.3.0 (last before 7.4's concurrent comm dispatch).
# A venv is reused when it already has its ipykernel, anywidget, ipywidgets, and this checkout of the
# package (editable). Progress goes to stderr; stdout carries only the list.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PYTHON="${PYTHON:-python3}"
VERSIONS="${AIW_IPYKERNEL_VERSIONS:-6.29.5 6.31.0 7.0.1 7.3.0}"
DIR="$ROOT/.venv-kernels"
mkdir -p "$DIR"

ready() {  # ready VERSION PYTHON: the venv has what the tests need
  [ -x "$2" ] && "$2" - "$1" "$ROOT" >/dev/null 2>&1 <<'PY'
import importlib.metadata as md, importlib.util, pathlib, sys
assert md.version("ipykernel") == sys.argv[1]
md.version("anywidget"), md.version("ipywidgets")
origin = importlib.util.find_spec("ai_widgets").origin
assert pathlib.Path(origin).resolve().is_relative_to(pathlib.Path(sys.argv[2]).resolve())
PY
}

make_venv() {  # make_venv VERSION
  local venv="$DIR/ipykernel-$1"
  if ready "$1" "$venv/bin/python"; then
    echo "kernel_envs: reusing $venv" >&2
    return
  fi
  echo "kernel_envs: creating $venv" >&2
  [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv" >&2
  # The front-end bundle is irrelevant to these tests: never build it here.
  AI_WIDGETS_SKIP_JS_BUILD=1 "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "ipykernel==$1" anywidget ipywidgets -e "$ROOT" >&2
  ready "$1" "$venv/bin/python" || { echo "kernel_envs: $venv is not usable" >&2; return 1; }
}

pythons=()
for v in $VERSIONS; do  # one at a time: parallel pip installs were slower here
  make_venv "$v"
  pythons+=("$DIR/ipykernel-$v/bin/python")
done
main="$ROOT/.venv/bin/python"
if [ -x "$main" ]; then
  "$main" -c "import ipykernel, jupyter_client, anywidget, ipywidgets" 2>/dev/null \
    || "$main" -m pip install -q --disable-pip-version-check ipykernel jupyter_client anywidget ipywidgets >&2
  pythons+=("$main")
fi
sep="$("${pythons[0]}" -c 'import os; print(os.pathsep)')"
(IFS="$sep"; echo "${pythons[*]}")
