#!/usr/bin/env bash
# Create examples/sdk-server/.venv and install the pinned requirements into it.
# Idempotent: a venv whose stamp matches requirements.txt is left alone.
# Quiet on success; on failure prints pip's output and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
VENV=.venv
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum requirements.txt | cut -d' ' -f1)"

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "mcp 2.x needs Python >= 3.10, found " + sys.version.split()[0])'

if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -r requirements.txt >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup.sh: pip install failed" >&2
  exit 1
fi
"$VENV/bin/python" -c 'import mcp.server.mcpserver, pytest, pytest_timeout, httpx, uvicorn' >"$log" 2>&1 || {
  cat "$log" >&2
  echo "setup.sh: installed packages do not import" >&2
  exit 1
}
echo "$want" >"$STAMP"
