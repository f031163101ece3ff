#!/usr/bin/env bash
# The action's one step (action.yml): installs unguard (install.sh) and runs
# the mode in UNGUARD_MODE. Outputs go to GITHUB_OUTPUT.
#
#   run      unguard run [--shard K/N] [--incremental FILE] --out OUT [ARGS]:
#            records `exit`; fails when no outcomes.json was written, and,
#            without a shard, with unguard's own exit code (an unsharded run is
#            the gate). UNGUARD_INCREMENTAL names an earlier outcomes.json (the
#            base branch's last full run); when it is missing, every mutant runs
#   merge    unguard merge RESULTS --out OUT, then the reports comment.md,
#            unguard.sarif, unguard-junit.xml: records `exit`; fails only when
#            a report does not render
#   comment  comment.sh
#   gate     exits with UNGUARD_EXIT, with an ::error line that says why
set -euo pipefail
# The token is for mode comment alone (action.yml passes it to no other mode):
# run executes the pull request's tests, and merge and gate read what they
# wrote. The runner's own credentials (an OIDC token request, the runtime
# token) are for no mode. Dropped before anything else runs, whoever set
# them: by exec, so that this process's initial environment, which every
# descendant can read in /proc/<pid>/environ, no longer holds them (the
# step's shell execs into this script: action.yml).
drop=(ACTIONS_ID_TOKEN_REQUEST_TOKEN ACTIONS_ID_TOKEN_REQUEST_URL ACTIONS_RUNTIME_TOKEN)
if [ "${UNGUARD_MODE:-}" != comment ]; then
  drop+=(UNGUARD_TOKEN)
fi
for var in "${drop[@]}"; do
  if [ -n "${!var+set}" ]; then
    unset_args=()
    for v in "${drop[@]}"; do unset_args+=(-u "$v"); done
    exec env "${unset_args[@]}" bash "${BASH_SOURCE[0]}" "$@"
  fi
done
unset drop var
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set (not on a GitHub runner?)}"

output() {
  echo "$1=$2" >> "$GITHUB_OUTPUT"
}

mode_run() {
  local bin="$1" shard="${UNGUARD_SHARD:-}" out="${UNGUARD_OUT:-}" code=0
  local -a extra=()
  if [ -n "$shard" ]; then
    [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]] || { echo "::error title=unguard::shard '$shard' is not K/N"; exit 1; }
    out="${out:-unguard-shard-${shard%%/*}}"
  else
    out="${out:-unguard.out}"
  fi
  read -r -a extra <<< "${UNGUARD_ARGS:-}"
  local earlier="${UNGUARD_INCREMENTAL:-}"
  if [ -n "$earlier" ] && [ ! -f "$earlier" ]; then
    echo "::notice title=unguard run::no earlier results at $earlier (no full run of the base branch cached yet?): every mutant runs"
    earlier=""
  fi
  # The suite is the pull request's code: say so when a token is within its reach.
  local var
  for var in GITHUB_TOKEN GH_TOKEN; do
    if [ -n "${!var:-}" ]; then
      echo "::warning title=unguard run::$var is set in this job's environment, so the pull request's tests can read it; set it only on the job that posts the comment"
    fi
  done
  # actions/checkout keeps its token in .git/config by default: readable by
  # the tests as any file of the checkout is.
  if git -C "${UNGUARD_PATH:-.}" config --local --get-regexp '^http\..*\.extraheader$' >/dev/null 2>&1; then
    echo "::warning title=unguard run::the checkout left a credential in .git/config (http.<url>.extraheader), which the pull request's tests can read; check out with persist-credentials: false (actions/checkout), as the example workflows do"
  fi
  "$bin" run "${UNGUARD_PATH:-.}" ${shard:+--shard "$shard"} ${earlier:+--incremental "$earlier"} --out "$out" "${extra[@]}" || code=$?
  output exit "$code"
  output out "$out"
  echo "unguard run ${shard:+--shard $shard }exited $code"
  if [ ! -f "$out/outcomes.json" ]; then
    echo "::error title=unguard run::no $out/outcomes.json: unguard exited $code (1 invalid command line or spec, 4 baseline red, 5 spec errors, 130 interrupted); see the log above"
    exit "$(( code == 0 ? 1 : code ))"
  fi
  if [ -z "$shard" ]; then
    gate "$code"
  fi
}

mode_merge() {
  local bin="$1" out="${UNGUARD_OUT:-merged}" code=0 failed=0
  local -a dirs=()
  mapfile -t dirs < <(compgen -G "${UNGUARD_RESULTS:-unguard-shard-*/}" || true)
  if [ "${#dirs[@]}" -eq 0 ]; then
    echo "::error title=unguard merge::no shard results match '${UNGUARD_RESULTS:-unguard-shard-*/}'"
    code=1
  else
    "$bin" merge "${dirs[@]}" --out "$out" || code=$?
  fi
  output exit "$code"
  output out "$out"
  echo "unguard merge exited $code"
  if [ ! -f "$out/outcomes.json" ]; then
    # No results: still replace the previous comment, which would be stale.
    {
      echo '<!-- unguard -->'
      echo '## unguard: no results'
      echo
      echo "\`unguard merge\` exited $code without merged results: a shard did not finish."
      echo "See the logs of [the workflow run](${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:-}/actions/runs/${GITHUB_RUN_ID:-})."
    } > comment.md
    output comment comment.md
    return 0
  fi
  # A report that did not render leaves no file behind.
  "$bin" report "$out" --format md > comment.md || { rm -f comment.md; failed=1; }
  "$bin" report "$out" --format sarif > unguard.sarif || { rm -f unguard.sarif; failed=1; }
  "$bin" report "$out" --format junit > unguard-junit.xml || { rm -f unguard-junit.xml; failed=1; }
  if [ -s comment.md ]; then output comment comment.md; fi
  if [ -s unguard.sarif ]; then output sarif unguard.sarif; fi
  return "$failed"
}

gate() {
  local code="$1" why
  # Only a number is ever echoed back (the value ends up in a workflow command).
  [[ "$code" =~ ^[0-9]+$ ]] || code=""
  case "$code" in
    0) echo "unguard: every control proven"; exit 0 ;;
    2) why="gate failed: a control was removed and no test turned red (survived or wrong-reason mutants)" ;;
    3) why="a test suite hung (timeout under --timeout-is error)" ;;
    4) why="the baseline is red, or it ran no tests" ;;
    5) why="spec errors: no-op, ambiguous or unreached mutations" ;;
    130) why="interrupted" ;;
    *) why="invalid command line or spec, missing shard results, or an internal error" ;;
  esac
  echo "::error title=unguard::$why (exit ${code:-none}); see the PR comment or the job summary"
  [ -n "$code" ] || exit 1
  exit "$code"
}

case "${UNGUARD_MODE:-}" in
  run | merge)
    # A separate assignment, so a failed install stops here (set -e).
    bin="$(bash "$here/install.sh")"
    "mode_$UNGUARD_MODE" "$bin"
    ;;
  comment) exec bash "$here/comment.sh" ;;
  gate) gate "${UNGUARD_EXIT:-}" ;;
  *)
    echo "::error title=unguard::mode '${UNGUARD_MODE:-}' is not one of run, merge, comment, gate"
    exit 1
    ;;
esac
