#!/usr/bin/env bash
# Posts the Markdown report (UNGUARD_REPORT, default comment.md) as the pull
# request's one unguard comment: the comment written by UNGUARD_COMMENT_AUTHOR
# (default github-actions[bot]) that contains the marker `<!-- unguard -->` is
# updated in place; without one, a comment is created. A comment by anyone else
# is never touched, even when it quotes the marker.
#
# Reads GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_PATH (the pull request's
# number) or UNGUARD_PR, UNGUARD_TOKEN; writes `comment-url` to GITHUB_OUTPUT.
# Needs curl and jq (both on GitHub's runners). The token is handed to curl in
# a header file, never on a command line.
set -euo pipefail

fail() {
  echo "::error title=unguard comment::$*"
  exit 1
}

marker='<!-- unguard -->'
api_url="${GITHUB_API_URL:-https://api.github.com}"
repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
author="${UNGUARD_COMMENT_AUTHOR:-github-actions[bot]}"
report="${UNGUARD_REPORT:-comment.md}"
[ -n "${UNGUARD_TOKEN:-}" ] || fail "no token"

pr="${UNGUARD_PR:-}"
if [ -z "$pr" ] && [ -f "${GITHUB_EVENT_PATH:-}" ]; then
  pr="$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")"
fi
if [ -z "$pr" ]; then
  echo "unguard comment: not a pull request (${GITHUB_EVENT_NAME:-no event}): nothing to post"
  exit 0
fi
[[ "$pr" =~ ^[0-9]+$ ]] || fail "pull request number '$pr'"
[ -f "$report" ] || fail "$report does not exist (run the action with mode: merge first)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
umask 077
{
  echo "Authorization: Bearer $UNGUARD_TOKEN"
  echo "Accept: application/vnd.github+json"
  echo "X-GitHub-Api-Version: 2022-11-28"
} > "$tmp/headers"

# api METHOD PATH [BODY_FILE] > response
api() {
  local -a body=()
  if [ $# -ge 3 ]; then body=(--header "Content-Type: application/json" --data-binary "@$3"); fi
  curl --fail-with-body --silent --show-error --header "@$tmp/headers" \
    --request "$1" "${body[@]}" "$api_url$2" || fail "$1 $2 failed"
}

run_url="${GITHUB_SERVER_URL:-https://github.com}/$repo/actions/runs/${GITHUB_RUN_ID:-}"
sha="$(jq -r '.pull_request.head.sha // empty' "${GITHUB_EVENT_PATH:-/dev/null}" 2>/dev/null || true)"
# GitHub refuses comments over 65536 characters: cut the report, keep the footer.
jq -n --rawfile report "$report" --arg marker "$marker" \
  --arg footer $'\n\n'"<sub>[workflow run]($run_url)${sha:+ for $sha}</sub>"$'\n' '
  ($report | if startswith($marker) then . else $marker + "\n" + . end) as $b
  | (65000 - ($footer | length)) as $limit
  | { body: ((if ($b | length) > $limit
      then $b[0:$limit] + "\n\n… truncated: the full report is in the job summary and the unguard-report artifact."
      else $b end) + $footer) }' > "$tmp/body.json"

# The previous comment, if any: every page of the PR's comments.
id=""
page=1
while :; do
  api GET "/repos/$repo/issues/$pr/comments?per_page=100&page=$page" > "$tmp/page.json"
  id="$(jq -r --arg m "$marker" --arg a "$author" \
    '[.[] | select(.user.login == $a and ((.body // "") | contains($m)))][0].id // empty' "$tmp/page.json")"
  [ -z "$id" ] || break
  [ "$(jq length "$tmp/page.json")" -ge 100 ] || break
  page=$((page + 1))
done

if [ -n "$id" ]; then
  api PATCH "/repos/$repo/issues/comments/$id" "$tmp/body.json" > "$tmp/reply.json"
  verb=updated
else
  api POST "/repos/$repo/issues/$pr/comments" "$tmp/body.json" > "$tmp/reply.json"
  verb=created
fi
url="$(jq -r '.html_url // empty' "$tmp/reply.json")"
echo "comment-url=$url" >> "${GITHUB_OUTPUT:?}"
echo "unguard comment: $verb ${url:-comment}"
