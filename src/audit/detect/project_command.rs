//! The test command a project itself runs, read before unguard guesses one
//! (see [`crate::audit::detect`]): in order, the `run:` steps of its CI workflows
//! ([`crate::audit::detect::ci_workflow`]), its `Makefile`/`justfile` test target, its tox
//! or nox default environment ([`crate::audit::detect::task_files`]). Each
//! shell command is read as a test invocation
//! ([`crate::audit::detect::invocation`]) and translated to the local
//! environment ([`crate::audit::detect::translate`]); a `make test`, `tox`
//! or `nox` call is followed into the recipe, environment or session it
//! runs.
//!
//! Steps that are not the unit tests (lint, docs, release, live or
//! end-to-end jobs, a pytest run that *selects* a network marker) are
//! skipped. Where the command came from (file:line) goes with it.

use std::path::Path;

use crate::audit::detect::ci_workflow;
use crate::audit::detect::invocation::{clean_dir, recognize, tokens, Call, Found};
use crate::audit::detect::task_files;
use crate::audit::detect::test_command::TestCommand;
use crate::audit::detect::translate::{translate, Cx};
use crate::outcome::network_hint::NETWORK_WORDS;
use crate::run::shell_line::{self, Word};

/// Job or step labels that are not the unit tests: tooling jobs, and
/// every suite of [`OTHER_SUITES`].
const NOT_UNIT: &[&str] = &[
    "lint",
    "linting",
    "lints",
    "docs",
    "doc",
    "documentation",
    "release",
    "publish",
    "deploy",
    "format",
    "typecheck",
    "mypy",
];

/// Words that name a suite other than the unit tests: end-to-end, live,
/// integration, contract (pact), accuracy or evaluation (an LLM's
/// answers), benchmark, smoke and conformance suites. A job or step with
/// one in its name is skipped; a workflow with one in its name, or a
/// command that selects one (`pytest tests/contract`, `pnpm run
/// test:accuracy`), is taken only when nothing else is found.
const OTHER_SUITES: &[&str] = &[
    "e2e",
    "live",
    "integration",
    "integrations",
    "integtest",
    "integtests",
    "contract",
    "contracts",
    "pact",
    "accuracy",
    "eval",
    "evals",
    "evaluation",
    "evaluations",
    "benchmark",
    "benchmarks",
    "bench",
    "smoke",
    "conformance",
    "acceptance",
    "perf",
    "performance",
];

/// Whether a label or name says the step is not the unit tests.
fn not_unit_label(s: &str) -> bool {
    tokens(s)
        .iter()
        .any(|t| NOT_UNIT.contains(&t.as_str()) || OTHER_SUITES.contains(&t.as_str()))
}

/// Whether a command selects another suite ([`OTHER_SUITES`], or a
/// network word): its words, leaving out assignments, what it excludes
/// (`--ignore …`, `--deselect …`, a `'!pkg'` filter) and what a marker or
/// keyword expression negates (`-m "not live"`).
fn selects_other_suite(words: &[Word]) -> bool {
    let mut skip_next = false;
    for w in words {
        let v = w.value.as_str();
        if std::mem::take(&mut skip_next) || shell_line::assignment(w).is_some() {
            continue;
        }
        if ["--ignore", "--ignore-glob", "--deselect", "--exclude"].contains(&v) {
            skip_next = true;
            continue;
        }
        if v.starts_with('!') || v.starts_with("--ignore") || v.starts_with("--deselect") {
            continue;
        }
        let t = tokens(v);
        let named = t.iter().enumerate().any(|(k, word)| {
            (OTHER_SUITES.contains(&word.as_str()) || NETWORK_WORDS.contains(&word.as_str()))
                && (k == 0 || t[k - 1] != "not")
        });
        if named {
            return true;
        }
    }
    false
}

/// The project's own test command, or `None` when it declares none unguard
/// can translate.
pub fn project_command(root: &Path, files: &[String]) -> Option<TestCommand> {
    let cx = Cx { root, files };
    // The first step of a label-gated job, of a workflow named for another
    // suite, or that selects another suite: taken only when nothing else is.
    let mut other: Option<TestCommand> = None;
    for step in ci_workflow::run_steps(root) {
        if step.labels.iter().any(|l| not_unit_label(l)) {
            continue;
        }
        let aside = step.gated || step.workflow.iter().any(|w| not_unit_label(w));
        let Some(workdir) = step.workdir.as_deref().map_or(Some(None), |w| {
            ci_workflow::resolve(w).and_then(|w| clean_dir(&w).map(Some))
        }) else {
            continue;
        };
        let mut env = step.env.clone();
        let mut workdir = workdir.flatten();
        for simple in shell_line::commands(&step.script).unwrap_or_default() {
            let at = step
                .callers
                .iter()
                .map(|c| format!("{c} → "))
                .chain([format!("{}:{}", step.file, step.line_of(root, simple.line))])
                .collect::<String>();
            if let Some(found) = recognize(&simple.words, &mut env, &mut workdir, &at) {
                if let Some(t) = translate(&cx, &found, 0) {
                    if !aside && !selects_other_suite(&simple.words) {
                        return Some(t);
                    }
                    other.get_or_insert(t);
                }
            }
        }
    }
    for file in [
        "Makefile",
        "GNUmakefile",
        "makefile",
        "justfile",
        "Justfile",
    ] {
        if !root.join(file).is_file() {
            continue;
        }
        let tool = if file.eq_ignore_ascii_case("justfile") {
            "just"
        } else {
            "make"
        };
        for target in [
            "test",
            "tests",
            "unit-test",
            "test-unit",
            "unittest",
            "unit",
        ] {
            let found = Found {
                env: Vec::new(),
                workdir: None,
                call: Call::Target {
                    tool,
                    target: target.into(),
                },
                at: String::new(),
                text: String::new(),
            };
            if let Some(t) = translate(&cx, &found, 0) {
                return Some(t);
            }
        }
    }
    for (present, call) in [
        (task_files::has_tox(root), Call::Tox { env: None }),
        (
            root.join("noxfile.py").is_file(),
            Call::Nox { session: None },
        ),
    ] {
        if present {
            let found = Found {
                env: Vec::new(),
                workdir: None,
                call,
                at: String::new(),
                text: String::new(),
            };
            if let Some(t) = translate(&cx, &found, 0) {
                return Some(t);
            }
        }
    }
    other
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::detect::translate::uv_installed;

    fn repo(list: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
        let d = tempfile::tempdir().unwrap();
        for (f, text) in list {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let files = list.iter().map(|(f, _)| f.to_string()).collect();
        (d, files)
    }

    #[test]
    fn the_workflow_selection_is_kept_and_the_runner_is_local() {
        let (d, files) = repo(&[
            (
                ".github/workflows/ci.yml",
                "on: [pull_request]\njobs:\n  lint:\n    steps:\n      - run: ruff check . && pytest --collect-only\n  test:\n    steps:\n      - run: pip install pytest && pytest --version\n      - run: |\n          PYTHONPATH=src pytest tests/ -m \"not live\" --cov=src -v\n",
            ),
            ("src/pkg/app.py", ""),
            (".venv/bin/python", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert_eq!(
            t.command,
            "PYTHONPATH=src .venv/bin/python -m pytest tests/ -m \"not live\" -q -p no:cacheprovider --junitxml={junit}"
        );
        assert_eq!(t.from.as_deref(), Some(".github/workflows/ci.yml:10"));
        assert!(
            t.reason.contains("ci.yml:10 `PYTHONPATH=src pytest"),
            "{}",
            t.reason
        );
    }

    #[test]
    fn network_only_runs_and_lint_jobs_are_skipped() {
        let (d, files) = repo(&[
            (
                ".github/workflows/live.yml",
                "on: pull_request\njobs:\n  t:\n    steps:\n      - run: pytest -m live\n      - run: uv run pytest -k 'not slow' ${{ matrix.extra }}\n",
            ),
            ("app.py", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        // `uv run` only where uv is installed (no environment in the repo).
        let py = if uv_installed() {
            "uv run python"
        } else {
            "python3"
        };
        assert_eq!(
            t.command,
            format!("{py} -m pytest -k 'not slow' -q -p no:cacheprovider --junitxml={{junit}}")
        );
        assert_eq!(t.from.as_deref(), Some(".github/workflows/live.yml:6"));
    }

    #[test]
    fn make_tox_and_nox_are_followed_into_what_they_run() {
        let (d, files) = repo(&[
            (
                "Makefile",
                "PYTEST ?= pytest\n\n.PHONY: test\ntest: deps\n\t@$(PYTEST) -m 'not network' tests\n",
            ),
            ("app.py", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert_eq!(
            t.command,
            "python3 -m pytest -m 'not network' tests -q -p no:cacheprovider --junitxml={junit}"
        );
        assert_eq!(t.from.as_deref(), Some("Makefile:5"));
        let (d, files) = repo(&[
            (
                ".github/workflows/ci.yml",
                "on: push\njobs:\n  t:\n    steps:\n      - run: tox -e py312\n",
            ),
            (
                "tox.ini",
                "[tox]\nenvlist = py312\n\n[testenv]\ncommands =\n    pytest {posargs:tests} -x\n",
            ),
            ("app.py", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert_eq!(
            t.command,
            "python3 -m pytest tests -x -q -p no:cacheprovider --junitxml={junit}"
        );
        assert_eq!(
            t.from.as_deref(),
            Some(".github/workflows/ci.yml:5 → tox.ini:6")
        );
        let (d, files) = repo(&[
            (
                "noxfile.py",
                "import nox\n\n@nox.session(python=False)\ndef tests(session):\n    session.install('.')\n    session.run(\"pytest\", \"-m\", \"not e2e\")\n",
            ),
            ("app.py", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert!(
            t.command.starts_with("python3 -m pytest -m 'not e2e' -q"),
            "{}",
            t.command
        );
        assert_eq!(t.from.as_deref(), Some("noxfile.py:6"));
    }

    #[test]
    fn go_gets_json_and_a_pnpm_workspace_runs_each_package() {
        let (d, files) = repo(&[
            (
                ".github/workflows/go.yml",
                "on: [push, pull_request]\njobs:\n  t:\n    steps:\n      - run: go test -race ./...\n        working-directory: ./server\n",
            ),
            ("server/go.mod", ""),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert_eq!(t.command, "cd server && go test -json -race ./...");
        let (d, files) = repo(&[
            (
                ".github/workflows/ci.yml",
                "on: pull_request\njobs:\n  t:\n    steps:\n      - run: pnpm install --frozen-lockfile\n      - run: pnpm -r test\n",
            ),
            ("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n"),
            ("package.json", "{\"name\": \"mono\"}"),
            ("packages/b/package.json", "{\"scripts\": {\"test\": \"x\"}}"),
            ("packages/a/package.json", "{\"scripts\": {\"test\": \"x\"}}"),
            ("packages/c/package.json", "{\"scripts\": {}}"),
        ]);
        let t = project_command(d.path(), &files).unwrap();
        assert_eq!(
            t.command,
            "npm test --silent --prefix packages/a && npm test --silent --prefix packages/b"
        );
        assert_eq!(t.setup.as_deref(), Some("pnpm install"));
    }
}
