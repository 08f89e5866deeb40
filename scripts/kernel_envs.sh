#!/usr/bin/env bash
# Creates (idempotently) one venv per supported ipykernel version for the kernel tests (tests/kernel/),
# and prints the os.pathsep-joined list of their pythons, then the main .venv's python (latest
# ipykernel), for AIW_KERNEL_PYTHONS:
#
#   AIW_KERNEL_PYTHONS="$(scripts/kernel_envs.sh)" .venv/bin/python -m pytest tests/kernel
#
# The versions are in scripts/_versions.sh; each venv installs exactly requirements/ipykernel-VERSION.lock (written
# by scripts/lock.sh) with the main .venv's uv, so run scripts/setup.sh first. A venv is reused and brought to its
# lock (uv installs only what differs). Progress goes to stderr; stdout carries only the list.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PYTHON="${PYTHON:-python3}"
source scripts/_versions.sh
UV="$ROOT/.venv/bin/uv"
[ -x "$UV" ] || { echo "kernel_envs: no $UV; run scripts/setup.sh first" >&2; exit 1; }
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
  local venv="$DIR/ipykernel-$1" lock="$ROOT/requirements/ipykernel-$1.lock"
  [ -f "$lock" ] || { echo "kernel_envs: no $lock; add it with scripts/lock.sh" >&2; return 1; }
  [ -x "$venv/bin/python" ] || { echo "kernel_envs: creating $venv" >&2; "$PYTHON" -m venv "$venv" >&2; }
  # The front-end bundle is irrelevant to these tests: never build it here.
  AI_WIDGETS_SKIP_JS_BUILD=1 "$UV" pip install --quiet --python "$venv/bin/python" -c "$lock" \
    --build-constraints "$lock" "ipykernel==$1" anywidget ipywidgets -e "$ROOT" >&2
  ready "$1" "$venv/bin/python" || { echo "kernel_envs: $venv is not usable" >&2; return 1; }
}

pythons=()
for v in ${AIW_IPYKERNEL_VERSIONS:-$IPYKERNEL_VERSIONS}; do
  make_venv "$v"
  pythons+=("$DIR/ipykernel-$v/bin/python")
done
main="$ROOT/.venv/bin/python"
if [ -x "$main" ]; then
  "$main" -c "import ipykernel, jupyter_client, anywidget, ipywidgets" \
    || { echo "kernel_envs: $main lacks the kernel packages; run scripts/setup.sh" >&2; exit 1; }
  pythons+=("$main")
fi
sep="$("${pythons[0]}" -c 'import os; print(os.pathsep)')"
(IFS="$sep"; echo "${pythons[*]}")
