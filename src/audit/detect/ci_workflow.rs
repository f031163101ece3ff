//! The `run:` steps of a repository's GitHub Actions workflows, in the
//! order `unguard audit`/`init` look for the project's own test command:
//! workflows that run on pull requests first, then those that run on push
//! (a scheduled or manual-only workflow is not the suite a change must
//! pass). Each step comes with its file and line, its working directory
//! and the environment the workflow, job and step set; values with a
//! `${{ }}` expression unguard cannot resolve are left out. A workflow that
//! does not parse is skipped, never an error: detection falls back.
//!
//! A job that calls a local reusable workflow (`uses:
//! ./.github/workflows/x.yml`, which runs `on: workflow_call`) is followed
//! into it: its steps come in the caller's place, with their own file and
//! line and the caller's `uses:` line. A workflow triggered only by
//! `workflow_call` is read through its callers, never on its own.

use std::path::Path;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;

/// A YAML mapping in file order.
struct Ordered<T>(Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<serde_json::Value, T>()? {
                    let k = match k {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    };
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Workflow {
    name: Option<String>,
    on: serde_json::Value,
    // YAML 1.1 readers take a bare `on` for `true`.
    #[serde(rename = "true")]
    on_bool: serde_json::Value,
    env: Ordered<serde_json::Value>,
    defaults: Defaults,
    jobs: Ordered<Job>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Defaults {
    run: RunDefaults,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RunDefaults {
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Job {
    name: Option<String>,
    #[serde(rename = "if")]
    if_: Option<serde_json::Value>,
    uses: Option<Spanned<String>>,
    env: Ordered<serde_json::Value>,
    defaults: Defaults,
    steps: Vec<Step>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Step {
    name: Option<String>,
    run: Option<Spanned<String>>,
    env: Ordered<serde_json::Value>,
    #[serde(rename = "working-directory")]
    working_directory: Option<String>,
}

/// One `run:` step of a workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStep {
    /// The workflow, relative to the repo (`.github/workflows/ci.yml`).
    pub file: String,
    /// A 1-based line of the `run:` value as the YAML reader placed it
    /// (for a block scalar, somewhere in the block: see [`RunStep::line_of`]).
    pub line: usize,
    /// The script.
    pub script: String,
    /// The job's id and name, and the step's name (to skip lint, docs,
    /// live or end-to-end jobs).
    pub labels: Vec<String>,
    /// The working directory (repo-relative), when set.
    pub workdir: Option<String>,
    /// The environment set by the workflow, job and step (later wins).
    pub env: Vec<(String, String)>,
    /// Whether the workflow runs on pull requests (else: on push).
    pub on_pull_request: bool,
    /// The workflow's name and file name (and a caller's, for a reusable
    /// workflow): what the whole workflow is for.
    pub workflow: Vec<String>,
    /// Whether the job (or a job calling its workflow) runs on a pull
    /// request only when it carries a label, or only on another event
    /// (its `if:`), or the workflow's pull-request trigger is a label.
    pub gated: bool,
    /// `file:line` of the `uses:` of each job that called this step's
    /// workflow, outermost first (empty for a step of a triggered workflow).
    pub callers: Vec<String>,
}

impl RunStep {
    /// The 1-based line of the script's line `offset` (0-based) in the
    /// workflow file: the `run:` line itself for a one-line script, else
    /// the line of a block scalar that holds it.
    pub fn line_of(&self, root: &Path, offset: usize) -> usize {
        let text = std::fs::read_to_string(root.join(&self.file)).unwrap_or_default();
        let first = self.script.lines().next().unwrap_or("").trim();
        let lines: Vec<&str> = text.lines().collect();
        // The script's first line: the nearest at or before where the
        // reader placed the value, else the nearest after it.
        let at = self.line.saturating_sub(1).min(lines.len());
        let is_first = |i: &usize| !first.is_empty() && lines[*i].contains(first);
        let start = (0..=at.min(lines.len().saturating_sub(1)))
            .rev()
            .find(is_first)
            .or_else(|| (at..lines.len()).find(is_first))
            .unwrap_or(at);
        start + offset + 1
    }
}

/// The scalar text of an `env:` value (`None` for a map or a list).
fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Which events a workflow's `on:` names.
fn events(on: &serde_json::Value) -> Vec<String> {
    match on {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(a) => a.iter().filter_map(scalar).collect(),
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// `${{ github.workspace }}` resolved (to `$PWD`: every run starts at the
/// copy's root); `None` when another expression is left.
pub fn resolve(value: &str) -> Option<String> {
    let mut v = value.to_string();
    for spelling in ["${{ github.workspace }}", "${{github.workspace}}"] {
        v = v.replace(spelling, "$PWD");
    }
    (!v.contains("${{")).then_some(v)
}

/// Whether a job's `if:` lets it run on a pull request only when the pull
/// request carries a label, or only on an event other than a pull request
/// (`github.event_name == 'push'`). Every `||` alternative must be so.
fn gated_if(cond: &serde_json::Value) -> bool {
    let Some(c) = scalar(cond) else { return false };
    let c = c.replace([' ', '\n'], "");
    c.split("||").all(gated_part)
}

/// One `||` alternative of a job's `if:` (see [`gated_if`]).
fn gated_part(c: &str) -> bool {
    // A label that must be there (`contains(….labels.*.name, 'x')`,
    // `github.event.label.name == 'x'`), not one that must be absent
    // (`!contains(…)`, `github.event.action != 'labeled'`).
    let needs_label = c.match_indices("label").any(|(at, _)| {
        let before = &c[..at];
        let negated_call = before
            .rfind("contains(")
            .is_some_and(|k| before[..k].ends_with('!'));
        !negated_call && !before.ends_with("!='") && !before.ends_with("!=\"")
    });
    needs_label
        || ["==", "!="].iter().any(|op| {
            c.split(&format!("github.event_name{op}"))
                .skip(1)
                .any(|rest| {
                    let event: String = rest
                        .trim_start_matches(['\'', '"'])
                        .chars()
                        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                        .collect();
                    // `== 'push'` excludes pull requests; `!= 'pull_request'` too.
                    (*op == "==") != event.starts_with("pull_request")
                })
        })
}

/// Whether a workflow's pull-request trigger fires only when a label is
/// added or removed (`pull_request: types: [labeled]`).
fn label_triggered(on: &serde_json::Value) -> bool {
    ["pull_request", "pull_request_target"].iter().any(|e| {
        on[*e]["types"].as_array().is_some_and(|t| {
            !t.is_empty()
                && t.iter()
                    .all(|v| v.as_str().is_some_and(|v| v.ends_with("labeled")))
        })
    })
}

/// The local workflow a job's `uses:` names (`./.github/workflows/x.yml`,
/// repo-relative without the `./`), if it is one.
fn local_workflow(uses: &str) -> Option<String> {
    let rel = uses.trim().strip_prefix("./")?;
    let name = rel.strip_prefix(".github/workflows/")?;
    (!name.contains('/') && !name.contains("..") && !name.contains('@')).then(|| rel.to_string())
}

/// What a step inherits from the jobs that called its workflow.
#[derive(Clone, Default)]
struct Caller {
    labels: Vec<String>,
    workflow: Vec<String>,
    gated: bool,
    callers: Vec<String>,
    /// Workflow files on the way (no file is entered twice).
    seen: Vec<String>,
}

/// The run steps of workflow `rel` (repo-relative), for a workflow that
/// runs on pull requests (`on_pr`) or on push, called through `caller`.
fn steps_of(root: &Path, rel: &str, on_pr: bool, caller: &Caller, out: &mut Vec<RunStep>) {
    let text = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
    let Ok(wf) = serde_saphyr::from_str::<Workflow>(&text) else {
        return;
    };
    let on = if wf.on.is_null() { &wf.on_bool } else { &wf.on };
    let stem = rel.rsplit('/').next().unwrap_or(rel);
    let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
    let mut workflow = caller.workflow.clone();
    workflow.extend(wf.name.clone());
    workflow.push(stem.to_string());
    let env_of = |m: &Ordered<serde_json::Value>, into: &mut Vec<(String, String)>| {
        for (k, v) in &m.0 {
            into.retain(|(n, _)| n != k);
            if let Some(v) = scalar(v).and_then(|v| resolve(&v)) {
                into.push((k.clone(), v));
            }
        }
    };
    for (id, job) in &wf.jobs.0 {
        let mut labels = caller.labels.clone();
        labels.extend([Some(id.clone()), job.name.clone()].into_iter().flatten());
        let gated = caller.gated || label_triggered(on) || job.if_.as_ref().is_some_and(gated_if);
        if let Some(uses) = &job.uses {
            let Some(called) = local_workflow(&uses.value) else {
                continue;
            };
            if caller.seen.contains(&called) || caller.seen.len() > 3 {
                continue;
            }
            let mut inner = Caller {
                labels,
                workflow: workflow.clone(),
                gated,
                callers: caller.callers.clone(),
                seen: caller.seen.clone(),
            };
            inner
                .callers
                .push(format!("{rel}:{}", uses.referenced.line()));
            inner.seen.push(called.clone());
            steps_of(root, &called, on_pr, &inner, out);
            continue;
        }
        for step in &job.steps {
            let Some(run) = &step.run else { continue };
            let mut env = Vec::new();
            env_of(&wf.env, &mut env);
            env_of(&job.env, &mut env);
            env_of(&step.env, &mut env);
            let workdir = step
                .working_directory
                .clone()
                .or_else(|| job.defaults.run.working_directory.clone())
                .or_else(|| wf.defaults.run.working_directory.clone());
            let mut labels = labels.clone();
            labels.extend(step.name.clone());
            out.push(RunStep {
                file: rel.to_string(),
                line: run.referenced.line() as usize,
                script: run.value.clone(),
                labels,
                workdir,
                env,
                on_pull_request: on_pr,
                workflow: workflow.clone(),
                gated,
                callers: caller.callers.clone(),
            });
        }
    }
}

/// The run steps of every workflow of `root`, pull-request workflows first
/// (each group by file name), in each file in job and step order; a job
/// calling a local reusable workflow gives that workflow's steps.
pub fn run_steps(root: &Path) -> Vec<RunStep> {
    let dir = root.join(".github/workflows");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .collect();
    files.sort();
    let mut pr = Vec::new();
    let mut push = Vec::new();
    for name in files {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
        let Ok(wf) = serde_saphyr::from_str::<Workflow>(&text) else {
            continue;
        };
        let ev = events(if wf.on.is_null() { &wf.on_bool } else { &wf.on });
        let on_pr = ev
            .iter()
            .any(|e| e == "pull_request" || e == "pull_request_target");
        if !on_pr && !ev.iter().any(|e| e == "push") {
            continue;
        }
        let rel = format!(".github/workflows/{name}");
        let caller = Caller {
            seen: vec![rel.clone()],
            ..Caller::default()
        };
        steps_of(
            root,
            &rel,
            on_pr,
            &caller,
            if on_pr { &mut pr } else { &mut push },
        );
    }
    pr.extend(push);
    pr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_with_their_line_env_and_working_directory() {
        let d = tempfile::tempdir().unwrap();
        let wf = d.path().join(".github/workflows");
        std::fs::create_dir_all(&wf).unwrap();
        std::fs::write(
            wf.join("ci.yml"),
            "name: CI\non:\n  push:\n  pull_request:\nenv:\n  FORCE_COLOR: 1\njobs:\n  test:\n    runs-on: ${{ matrix.os }}\n    env:\n      PYTHONPATH: src\n      TOKEN: ${{ secrets.T }}\n    defaults:\n      run:\n        working-directory: server\n    steps:\n      - uses: actions/checkout@v4\n      - name: Tests\n        run: |\n          pip install -e .\n          pytest -m \"not live\"\n",
        )
        .unwrap();
        std::fs::write(
            wf.join("nightly.yml"),
            "on:\n  schedule:\n    - cron: '0 0 * * *'\njobs:\n  live:\n    steps:\n      - run: pytest -m live\n",
        )
        .unwrap();
        std::fs::write(wf.join("broken.yml"), "on: [push\n").unwrap();
        let steps = run_steps(d.path());
        assert_eq!(steps.len(), 1, "{steps:?}");
        let s = &steps[0];
        assert_eq!(s.file, ".github/workflows/ci.yml");
        assert_eq!((s.line_of(d.path(), 0), s.line_of(d.path(), 1)), (20, 21));
        assert_eq!(s.workdir.as_deref(), Some("server"));
        assert_eq!(
            s.env,
            [
                ("FORCE_COLOR".to_string(), "1".to_string()),
                ("PYTHONPATH".to_string(), "src".to_string())
            ]
        );
        assert!(s.on_pull_request && s.labels.contains(&"Tests".to_string()));
        assert_eq!(
            resolve("${{ github.workspace }}/src").as_deref(),
            Some("$PWD/src")
        );
    }

    #[test]
    fn a_job_is_gated_by_a_required_label_or_another_event() {
        let g = |c: &str| gated_if(&serde_json::Value::String(c.into()));
        assert!(g(
            "contains(github.event.pull_request.labels.*.name, 'full')"
        ));
        assert!(g("github.event_name == 'push'"));
        assert!(g(
            "github.event_name != 'pull_request' || contains(x.labels, 'a')"
        ));
        assert!(!g(
            "!contains(github.event.pull_request.labels.*.name, 'skip-ci')"
        ));
        assert!(!g("github.event_name == 'pull_request'"));
        assert!(!g("always()"));
        // Either a push or a pull request from a fork; never on a label event.
        assert!(!g("github.event.action != 'labeled' && (github.event_name == 'push' || github.event.pull_request.head.repo.full_name != github.repository)"));
    }
}
