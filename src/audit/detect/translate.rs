//! A found test invocation translated to the command unguard runs here:
//! the project's selection kept (`-m "not live"`, `-k`, `--ignore`,
//! paths, `PYTHONPATH=src`, a working directory), the runner translated to
//! the environment found locally (`.venv/bin/python -m pytest` for a bare
//! `pytest`, `uv run` only where uv is installed), unguard's own flags
//! added (`-q -p no:cacheprovider --junitxml={junit}`, `go test -json`),
//! and a `make`/`just` target, tox environment or nox session followed
//! into what it runs ([`crate::audit::detect::task_files`]).

use std::path::Path;

use crate::audit::detect::environment;
use crate::audit::detect::invocation::{recognize, Call, Found};
use crate::audit::detect::package_scripts;
use crate::audit::detect::task_files;
use crate::audit::detect::test_command::{Runner, TestCommand};
use crate::run::shell;
use crate::run::shell_line::Word;
use crate::spec::Preset;

/// What the project is looked at with.
pub(super) struct Cx<'a> {
    pub root: &'a Path,
    pub files: &'a [String],
}

/// Environment variables of a workflow that only style output or set up
/// tools, not the suite.
fn cosmetic(name: &str) -> bool {
    [
        "FORCE_COLOR",
        "PY_COLORS",
        "NO_COLOR",
        "TERM",
        "CI",
        "COLUMNS",
    ]
    .contains(&name)
        || [
            "PIP_", "UV_", "POETRY_", "GITHUB_", "RUNNER_", "CLICOLOR", "NPM_", "PNPM_",
        ]
        .iter()
        .any(|p| name.starts_with(p))
        || name.ends_with("_VERSION")
}

/// `NAME=value` as a shell word (double quotes keep `$PWD` expanding).
fn assign(name: &str, value: &str) -> String {
    let plain = shell::quote(value);
    if plain == value || !value.contains('$') || value.contains(['"', '`', '\\']) {
        format!("{name}={plain}")
    } else {
        format!("{name}=\"{value}\"")
    }
}

/// pytest options unguard drops: coverage (a coverage gate would make a
/// red run for the wrong reason), the project's own report, verbosity
/// (unguard sets `-q`); the bool says whether it takes the next word.
fn dropped_pytest_opt(o: &str) -> Option<bool> {
    match o {
        "--cov" => Some(true),
        "--cov-report" | "--cov-fail-under" | "--cov-config" | "--junitxml" | "--junit-xml" => {
            Some(true)
        }
        "-q" | "-qq" | "-v" | "-vv" | "-vvv" | "--quiet" | "--verbose" | "--cov-append"
        | "--cov-branch" | "--no-cov" => Some(false),
        _ if o.starts_with("--cov")
            || o.starts_with("--junitxml")
            || o.starts_with("--junit-xml") =>
        {
            Some(false)
        }
        _ => None,
    }
}

/// pytest options whose value is the next word.
const PYTEST_VALUE_OPTS: &[&str] = &[
    "-m",
    "-k",
    "-n",
    "-p",
    "-c",
    "-o",
    "--ignore",
    "--deselect",
    "--maxfail",
    "--timeout",
    "--rootdir",
    "--dist",
    "--durations",
    "--tb",
    "--ignore-glob",
];

/// The project's pytest arguments, as written, minus what unguard sets or
/// cannot resolve (`${{ matrix.x }}`).
fn pytest_args(args: &[Word]) -> Vec<String> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let w = &args[k];
        k += 1;
        if w.value.starts_with('>') || w.value.starts_with("2>") {
            k += usize::from(w.value == ">" || w.value == "2>");
            continue;
        }
        if w.value.contains("${{") {
            if out
                .last()
                .is_some_and(|(o, _)| PYTEST_VALUE_OPTS.contains(&o.as_str()))
            {
                out.pop();
            }
            continue;
        }
        match dropped_pytest_opt(&w.value) {
            Some(true) => {
                if w.value == "--cov" {
                    // Optional value: a path after it is the coverage source.
                    k += usize::from(args.get(k).is_some_and(|n| !n.value.starts_with('-')));
                } else {
                    k += 1;
                }
            }
            Some(false) => {}
            None => out.push((w.raw.clone(), true)),
        }
    }
    out.into_iter().map(|(w, _)| w).collect()
}

/// `../` per component of `workdir`: an interpreter path relative to the
/// repo, from inside `workdir`.
fn from_workdir(python: &str, workdir: Option<&str>) -> String {
    match workdir {
        Some(w) if !python.starts_with('/') && python.contains('/') => {
            format!("{}{python}", "../".repeat(w.split('/').count()))
        }
        _ => python.to_string(),
    }
}

pub(super) fn uv_installed() -> bool {
    std::process::Command::new("uv")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A translated command, before its provenance is added.
struct Made {
    runner: Runner,
    command: String,
    junit: Option<String>,
    preset: Preset,
    /// How it runs here (the environment used).
    how: String,
    setup: Option<String>,
}

impl Made {
    fn generic(runner: Runner, command: String, how: &str) -> Made {
        Made {
            runner,
            command,
            junit: None,
            preset: Preset::Generic,
            how: how.to_string(),
            setup: None,
        }
    }
}

/// A package.json script, run as the project selected it (`--filter`,
/// `-w`: `selected` holds the words) or through npm.
fn script_made(
    cx: &Cx,
    f: &Found,
    lead: &str,
    script: &str,
    recursive: bool,
    selected: Option<&[Word]>,
) -> Option<Made> {
    let run = match selected {
        Some(words) => package_scripts::as_written(cx.root, f.workdir.as_deref(), script, words)?,
        None => package_scripts::script_command(cx.root, f.workdir.as_deref(), script, recursive)?,
    };
    Some(Made {
        setup: run.setup,
        ..Made::generic(Runner::Npm, format!("{lead}{}", run.command), run.how)
    })
}

/// vitest, jest or mocha called directly: run with the repo's
/// node_modules (`vitest` gets `run`, never watch mode).
fn js_runner_made(lead: &str, words: &[Word]) -> Made {
    let mut w: Vec<String> = words.iter().map(|w| w.raw.clone()).collect();
    if w[0].ends_with("vitest") && !w.iter().any(|x| x == "run") {
        w.insert(1, "run".into());
    }
    Made::generic(
        Runner::Npm,
        format!("{lead}npx --no-install {}", w.join(" ")),
        "run with the repo's node_modules (npx --no-install)",
    )
}

/// Translate a found invocation into the command unguard runs. `depth`
/// bounds following `make`/`tox`/`nox` into what they run.
pub(super) fn translate(cx: &Cx, f: &Found, depth: usize) -> Option<TestCommand> {
    if depth > 3 {
        return None;
    }
    let from = (!f.at.is_empty()).then(|| format!("{} `{}`", f.at, f.text));
    let lead = format!(
        "{}{}",
        f.workdir
            .as_ref()
            .map(|w| format!("cd {} && ", shell::quote(w)))
            .unwrap_or_default(),
        f.env
            .iter()
            .filter(|(k, _)| !cosmetic(k))
            .map(|(k, v)| format!("{} ", assign(k, v)))
            .collect::<String>()
    );
    let kept = |args: &[Word]| -> String {
        args.iter()
            .filter(|w| !w.value.contains("${{"))
            .map(|w| format!(" {}", w.raw))
            .collect()
    };
    let made = match &f.call {
        Call::Pytest { args, uv } => pytest_command(cx, f, &lead, args, *uv),
        Call::Script {
            script,
            recursive,
            selected,
        } => script_made(cx, f, &lead, script, *recursive, selected.as_deref())?,
        Call::JsRunner { words } => js_runner_made(&lead, words),
        Call::Go { args } => {
            let json = if args.iter().any(|w| w.value == "-json") {
                ""
            } else {
                " -json"
            };
            Made::generic(
                Runner::Go,
                format!("{lead}go test{json}{}", kept(args)),
                "with -json (per-test results)",
            )
        }
        Call::Cargo { args } => Made::generic(
            Runner::Cargo,
            format!("{lead}cargo test{}", kept(args)),
            "as written",
        ),
        Call::Target { tool, target } => {
            if f.workdir.is_some() {
                return None;
            }
            return follow(
                cx,
                f,
                task_files::recipe(cx.root, tool, target)?,
                from,
                depth,
            );
        }
        Call::RepoScript { path } => {
            if f.workdir.is_some() {
                return None;
            }
            return follow(cx, f, task_files::script_lines(cx.root, path)?, from, depth);
        }
        Call::Tox { env } => {
            return follow(
                cx,
                f,
                task_files::tox_commands(cx.root, env.as_deref())?,
                from,
                depth,
            )
        }
        Call::Nox { session } => {
            return follow(
                cx,
                f,
                task_files::nox_commands(cx.root, session.as_deref())?,
                from,
                depth,
            )
        }
    };
    let reason = match &from {
        Some(from) => format!("the project's own command, from {from}; {}", made.how),
        None => made.how,
    };
    Some(TestCommand {
        runner: made.runner,
        command: made.command,
        junit: made.junit,
        preset: made.preset,
        reason,
        setup: made.setup,
        from: (!f.at.is_empty()).then(|| f.at.clone()),
    })
}

/// pytest with the project's selection, from the environment found here.
fn pytest_command(cx: &Cx, f: &Found, lead: &str, args: &[Word], uv: bool) -> Made {
    let env = environment::python_env(cx.root, cx.files);
    let has_path = f.env.iter().any(|(k, _)| k == "PYTHONPATH");
    let src_first = if has_path || f.workdir.is_some() {
        ""
    } else {
        environment::src_first(cx.files)
    };
    let (py, how, setup) = if uv && !env.found && uv_installed() {
        (
            "uv run python".to_string(),
            "run with `uv run` (uv is installed; no environment in the repo)".to_string(),
            None,
        )
    } else {
        (
            from_workdir(&env.python, f.workdir.as_deref()),
            format!("run with {}", env.reason),
            env.setup.clone(),
        )
    };
    let args: String = pytest_args(args)
        .into_iter()
        .map(|a| format!(" {a}"))
        .collect();
    Made {
        runner: Runner::Pytest,
        command: format!(
            "{lead}{src_first}{py} -m pytest{args} -q -p no:cacheprovider --junitxml={{junit}}"
        ),
        junit: Some("{junit}".to_string()),
        preset: Preset::Pytest,
        how,
        setup,
    }
}

/// Translate the first test invocation among `lines` (a recipe, a tox
/// environment's commands, a nox session's calls), keeping `outer`'s
/// environment and naming both places in the reason.
fn follow(
    cx: &Cx,
    outer: &Found,
    lines: Vec<(String, Vec<Word>)>,
    from: Option<String>,
    depth: usize,
) -> Option<TestCommand> {
    for (at, words) in lines {
        let mut env = outer.env.clone();
        let mut workdir = None;
        let Some(inner) = recognize(&words, &mut env, &mut workdir, &at) else {
            continue;
        };
        if inner.workdir.is_some() {
            continue;
        }
        let Some(mut t) = translate(cx, &inner, depth + 1) else {
            continue;
        };
        if let Some(from) = &from {
            t.reason = t
                .reason
                .replacen("from ", &format!("from {from}, which runs "), 1);
            t.from = Some(format!("{} → {}", outer.at, t.from.unwrap_or_default()));
        }
        return Some(t);
    }
    None
}
