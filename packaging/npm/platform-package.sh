#!/usr/bin/env bash
# Writes the npm package of one platform's unguard binary (the optional
# dependencies of the `unguard` package): package.json, bin/unguard, README.
#
#   bash packaging/npm/platform-package.sh TARGET BINARY OUTDIR
#   e.g. x86_64-unknown-linux-gnu target/release/unguard dist/npm/linux-x64
#
# The version is the crate's (Cargo.toml); it must equal the `unguard`
# package's and its optionalDependencies' (tests/it/packaging.rs checks that).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 TARGET BINARY OUTDIR" >&2; exit 2; }
target="$1" binary="$2" outdir="$3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

case "$target" in
  x86_64-unknown-linux-gnu) os=linux cpu=x64 ;;
  aarch64-unknown-linux-gnu) os=linux cpu=arm64 ;;
  *) echo "platform-package: unsupported target $target" >&2; exit 2 ;;
esac
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "platform-package: no version in Cargo.toml" >&2; exit 1; }
[ -x "$binary" ] || { echo "platform-package: $binary is not an executable" >&2; exit 1; }

mkdir -p "$outdir/bin"
install -m 0755 "$binary" "$outdir/bin/unguard"
cat > "$outdir/package.json" <<JSON
{
  "name": "@unguard/$os-$cpu",
  "version": "$version",
  "description": "The unguard binary for $os $cpu (glibc); installed by the unguard package",
  "license": "MIT OR Apache-2.0",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "libc": ["glibc"],
  "files": ["bin/unguard", "README.md"],
  "preferUnplugged": true
}
JSON
cat > "$outdir/README.md" <<MD
# @unguard/$os-$cpu

The \`unguard\` binary for $os $cpu (glibc, built for $target). Install
[unguard](https://www.npmjs.com/package/unguard) instead: it depends on this package and
runs the binary.
MD
echo "platform-package: @unguard/$os-$cpu@$version in $outdir"
