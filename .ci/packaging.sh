#!/usr/bin/env bash
# The ways in besides a git checkout, built and installed the way their users
# install them (issue 20), each step timed. Run by .ci/run after the tests.
#
#   1. the release wheel (maturin --release; the demo's `cargo run --release`
#      afterwards reuses its dependencies), installed into a fresh venv; the demo
#      run through the venv's `unguard` must exit 2
#   2. tests/it/packaging.rs again with that wheel (UNGUARD_WHEEL): the wheel in a
#      venv, and the pre-commit hook via `pre-commit try-repo` with no Rust
#   3. the npm packages (launcher + this platform's binary), packed, installed
#      offline into a temp project: `npx unguard --version` and the demo (exit 2)
#   4. the crates.io package: `cargo package`, unpacked, built on its own
#      (release, shared target dir) and its binary runs the packaged demo (exit 2)
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install -q "maturin>=1.9,<2" pre-commit
command -v shellcheck >/dev/null 2>&1 || {
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq shellcheck >/dev/null
}

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
timings=()

step() {
  local name="$1" start=$SECONDS
  shift
  echo "== packaging: $name"
  "$@"
  timings+=("$(printf '%4ds  %s' $((SECONDS - start)) "$name")")
}

# demo DIR UNGUARD...: the demo must exit 2 (its deliberate survivor).
demo() {
  local dir="$1" code=0
  shift
  "$@" run "$dir" --out "$work/demo-$RANDOM.out" > "$work/demo.txt" 2>&1 || code=$?
  tail -n 5 "$work/demo.txt"
  if [ "$code" -ne 2 ]; then
    cat "$work/demo.txt"
    echo "demo through $* exited $code, expected 2" >&2
    exit 1
  fi
}

wheel_build() {
  # No --strip here (release.yml strips): the same flags as `cargo build
  # --release`, so the demo below and this wheel share one build.
  (cd packaging/pypi && maturin build --release --locked --out "$work/wheels")
}

wheel_venv() {
  python3 -m venv "$work/venv"
  "$work/venv/bin/python" -m pip install -q --no-index "$work"/wheels/unguard-"$version"-*.whl
  test "$("$work/venv/bin/unguard" --version)" = "unguard $version"
  demo examples/demo-server "$work/venv/bin/unguard"
}

packaging_tests() {
  UNGUARD_WHEEL="$(ls "$work"/wheels/unguard-"$version"-*.whl)" \
    cargo test --test it -- packaging::the_wheel packaging::the_pre_commit
}

npm_packages() {
  local arch
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; esac
  bash packaging/npm/platform-package.sh "$(uname -m)-unknown-linux-gnu" target/release/unguard "$work/npm/platform"
  mkdir -p "$work/npm/packs" "$work/npm/project"
  npm pack --silent "$work/npm/platform" --pack-destination "$work/npm/packs" >/dev/null
  npm pack --silent ./packaging/npm/unguard --pack-destination "$work/npm/packs" >/dev/null
  echo '{"name": "p", "private": true}' > "$work/npm/project/package.json"
  (
    cd "$work/npm/project"
    export npm_config_cache="$work/npm/cache" npm_config_audit=false npm_config_fund=false
    npm install --offline --save-dev --silent "$work/npm/packs/unguard-$version.tgz" \
      "$work/npm/packs/unguard-linux-$arch-$version.tgz"
    test "$(npx --offline --no-install unguard --version)" = "unguard $version"
  )
  # npx from inside the project (where its node_modules/.bin is).
  printf '#!/usr/bin/env bash\ncd %q && exec npx --offline --no-install unguard "$@"\n' \
    "$work/npm/project" > "$work/npm/unguard"
  chmod +x "$work/npm/unguard"
  demo "$PWD/examples/demo-server" env npm_config_cache="$work/npm/cache" "$work/npm/unguard"
}

crate_package() {
  cargo package --locked --no-verify
  mkdir -p "$work/crate"
  tar -xzf "target/package/unguard-$version.crate" -C "$work/crate"
  # Built on its own (its own Cargo.lock, no workspace around it), in the
  # shared target dir so the dependencies are not compiled twice: this
  # replaces target/release/unguard with the packaged crate's build.
  CARGO_TARGET_DIR="$PWD/target" cargo build --release --locked \
    --manifest-path "$work/crate/unguard-$version/Cargo.toml"
  demo "$work/crate/unguard-$version/examples/demo-server" target/release/unguard
}

step "wheel (maturin --release)" wheel_build
step "wheel in a fresh venv + demo" wheel_venv
step "tests/it/packaging.rs with the wheel (venv, pre-commit try-repo)" packaging_tests
step "npm pack + offline install + npx demo" npm_packages
step "cargo package + build the packaged crate + demo" crate_package

echo "== packaging: time per step"
printf '%s\n' "${timings[@]}"
