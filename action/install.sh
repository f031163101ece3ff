#!/usr/bin/env bash
# Installs a released unguard binary for this runner and prints its path (the
# only line on stdout; the log goes to stderr).
#
# The archive is <release-url>/v<version>/unguard-<version>-<target>.tar.gz. It
# is verified before it is unpacked: its SHA-256 must equal UNGUARD_SHA256 when
# that is set (a pin in the workflow), else its line in the release's
# SHA256SUMS. A mismatch, a missing line or a failed download is an error: no
# binary is installed.
#
# Reads UNGUARD_VERSION (or a vX.Y.Z tag in UNGUARD_ACTION_REF),
# UNGUARD_RELEASE_URL (or https://github.com/UNGUARD_ACTION_REPOSITORY/releases/download),
# UNGUARD_SHA256 (optional), RUNNER_TEMP.
set -euo pipefail

fail() {
  echo "::error title=unguard install::$*" >&2
  exit 1
}

version="${UNGUARD_VERSION:-}"
if [ -z "$version" ]; then
  ref="${UNGUARD_ACTION_REF:-}"
  case "$ref" in
    v[0-9]*) version="$ref" ;;
    *) fail "no version: set the action's \`version\` input (the action is used at '${ref:-?}', not at a release tag)" ;;
  esac
fi
version="${version#v}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] \
  || fail "version '$version' is not a release version (X.Y.Z)"

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-gnu ;;
  *) fail "no unguard release for $(uname -s)/$(uname -m): Linux x86_64 and aarch64 only" ;;
esac

base="${UNGUARD_RELEASE_URL:-}"
if [ -z "$base" ]; then
  [ -n "${UNGUARD_ACTION_REPOSITORY:-}" ] || fail "no release-url and no action repository"
  base="https://github.com/$UNGUARD_ACTION_REPOSITORY/releases/download"
fi
base="${base%/}/v$version"
name="unguard-$version-$target"
asset="$name.tar.gz"

dest="${RUNNER_TEMP:?RUNNER_TEMP is not set}/unguard-$version"
if [ -x "$dest/unguard" ] && [ -f "$dest/.verified" ]; then
  echo "unguard $version already installed (and verified) in $dest" >&2
  echo "$dest/unguard"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch() {
  curl --fail --silent --show-error --location --retry 3 --proto-redir =https \
    --output "$2" "$1" || fail "could not download $1"
}

fetch "$base/$asset" "$tmp/$asset"
if [ -n "${UNGUARD_SHA256:-}" ]; then
  expected="${UNGUARD_SHA256,,}"
  source="the sha256 input"
else
  fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS"
  expected="$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1; exit }' "$tmp/SHA256SUMS")"
  source="SHA256SUMS of v$version"
  [ -n "$expected" ] || fail "$asset is not listed in $base/SHA256SUMS"
fi
actual="$(sha256sum "$tmp/$asset" | cut -d ' ' -f 1)"
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $asset: expected $expected ($source), got $actual; nothing installed"
fi
echo "unguard install: $asset sha256 $actual matches $source" >&2

tar -xzf "$tmp/$asset" -C "$tmp"
[ -f "$tmp/$name/unguard" ] || fail "$asset has no $name/unguard"
mkdir -p "$dest"
install -m 0755 "$tmp/$name/unguard" "$dest/unguard"
got="$("$dest/unguard" --version)" || fail "the installed binary does not run"
[ "$got" = "unguard $version" ] || fail "the installed binary says '$got', expected 'unguard $version'"
echo "$actual  $asset" > "$dest/.verified"
echo "unguard install: $got in $dest" >&2
echo "$dest/unguard"
