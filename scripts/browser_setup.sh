#!/usr/bin/env bash
# Installs what the browser end-to-end tests (tests/e2e) need from Debian: Chromium, and a colour-emoji font so
# tool icons render in screenshots. Idempotent and quiet: does nothing when both are present.
# Needs root (or sudo) for apt. Never runs `playwright install`: the tests launch /usr/bin/chromium.
# The Python side is the `e2e` extra: .venv/bin/pip install -e ".[e2e]"
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg-query -W -f='${Status}' fonts-noto-color-emoji 2>/dev/null | grep -q "ok installed" || missing+=(fonts-noto-color-emoji)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "browser_setup: run as root to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "browser_setup: installing ${missing[*]} (apt)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${sudo[@]}" apt-get update -qq && \
       "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "browser_setup: apt-get failed" >&2
  exit 1
fi
/usr/bin/chromium --version 2>/dev/null | head -1
