//! The test command a project itself runs, read before unguard guesses one
//! (see [`crate::audit::detect`]): in order, the `run:` steps of its CI workflows
//! ([`crate::audit::detect::ci_workflow`]), its `Makefile`/`justfile` test target, its tox
//! or nox default environment. A `make test`, `tox` or `nox` call is
//! followed into the recipe, environment or session it runs.
//!
//! The project's selection is kept (`-m "not live"`, `-k`, `--ignore`,
//! paths, `PYTHONPATH=src`, a working directory); the runner is translated
//! to the environment found locally (`.venv/bin/python -m pytest` for a
//! bare `pytest`, `uv run` only where uv is installed), and unguard's own
//! flags are added (`-q -p no:cacheprovider --junitxml={junit}`, `go test
//! -json`). Steps that are not the unit tests (lint, docs, release, live or
//! end-to-end jobs, a pytest run that *selects* a network marker) are
//! skipped. Where the command came from (file:line) goes with it.

use std::path::Path;

use crate::audit::detect::environment::{self, JsTool};
use crate::audit::detect::{Runner, TestCommand};
use crate::run::shell_line::{self, Word};
use crate::spec::Preset;

/// Words that name tests needing the network or a deployment.
pub const NETWORK_WORDS: &[&str] = &["live", "network", "integration", "e2e", "online"];

/// Job or step labels that are not the unit tests.
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
    "e2e",
    "live",
    "integration",
    "benchmark",
    "benchmarks",
    "bench",
    "format",
    "typecheck",
    "mypy",
];

/// The lower-case alphanumeric tokens of `s`.
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether `s` names a network or end-to-end selection (`live`, `e2e`, …).
pub fn names_network(s: &str) -> bool {
    tokens(s)
        .iter()
        .any(|t| NETWORK_WORDS.contains(&t.as_str()))
}

/// What the project is looked at with.
struct Cx<'a> {
    root: &'a Path,
    files: &'a [String],
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// A recognized test invocation.
#[derive(Debug, Clone)]
enum Call {
    Pytest {
        args: Vec<Word>,
        uv: bool,
    },
    /// A package script (`npm test`, `pnpm -r test`, `yarn run test:unit`).
    Script {
        script: String,
        recursive: bool,
    },
    /// A JavaScript runner called directly (`vitest run`, `npx jest`).
    JsRunner {
        words: Vec<Word>,
    },
    Go {
        args: Vec<Word>,
    },
    Cargo {
        args: Vec<Word>,
    },
    /// `make TARGET` / `just TARGET`.
    Target {
        tool: &'static str,
        target: String,
    },
    Tox {
        env: Option<String>,
    },
    Nox {
        session: Option<String>,
    },
}

/// An invocation in context: the environment and working directory it
/// runs with, and where it was read.
#[derive(Debug, Clone)]
struct Found {
    env: Vec<(String, String)>,
    workdir: Option<String>,
    call: Call,
    /// `file:line`, and the line as written.
    at: String,
    text: String,
}

/// The project's own test command, or `None` when it declares none unguard
/// can translate.
pub fn project_command(root: &Path, files: &[String]) -> Option<TestCommand> {
    let cx = Cx { root, files };
    for step in crate::audit::detect::ci_workflow::run_steps(root) {
        if step
            .labels
            .iter()
            .any(|l| tokens(l).iter().any(|t| NOT_UNIT.contains(&t.as_str())))
        {
            continue;
        }
        let Some(workdir) = step.workdir.as_deref().map_or(Some(None), |w| {
            crate::audit::detect::ci_workflow::resolve(w).and_then(|w| clean_dir(&w).map(Some))
        }) else {
            continue;
        };
        let mut env = step.env.clone();
        let mut workdir = workdir.flatten();
        for simple in shell_line::commands(&step.script).unwrap_or_default() {
            let at = format!("{}:{}", step.file, step.line_of(root, simple.line));
            if let Some(found) = recognize(&simple.words, &mut env, &mut workdir, &at) {
                if let Some(t) = translate(&cx, &found, 0) {
                    return Some(t);
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
    for (file, call) in [
        ("tox.ini", Call::Tox { env: None }),
        ("noxfile.py", Call::Nox { session: None }),
    ] {
        if root.join(file).is_file() {
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
    None
}

/// A repo-relative directory without `.`/`..` tricks; `None` when it
/// leaves the repo or is absolute. An empty result is the root.
fn clean_dir(dir: &str) -> Option<Option<String>> {
    let mut parts: Vec<&str> = Vec::new();
    if dir.starts_with('/') {
        return None;
    }
    for c in dir.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c if c.contains('$') => return None,
            c => parts.push(c),
        }
    }
    Some((!parts.is_empty()).then(|| parts.join("/")))
}

fn base(w: &Word) -> &str {
    w.value.rsplit('/').next().unwrap_or(&w.value)
}

/// Read one simple command of a script: `cd`/`export` update the state for
/// the commands after it; a test invocation is returned.
fn recognize(
    words: &[Word],
    env: &mut Vec<(String, String)>,
    workdir: &mut Option<String>,
    at: &str,
) -> Option<Found> {
    let text = words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut own_env = env.clone();
    let mut i = 0;
    let set = |e: &mut Vec<(String, String)>, w: &Word| {
        if let Some((k, v)) = shell_line::assignment(w) {
            e.retain(|(n, _)| n != k);
            if let Some(v) = crate::audit::detect::ci_workflow::resolve(v) {
                e.push((k.to_string(), v));
            }
        }
    };
    while i < words.len() && shell_line::assignment(&words[i]).is_some() {
        set(&mut own_env, &words[i]);
        i += 1;
    }
    let rest = &words[i..];
    match rest.first().map(|w| w.value.as_str()) {
        Some("cd") => {
            let joined = match (workdir.as_deref(), rest.get(1)) {
                (_, Some(d)) if d.value.starts_with('/') => return None,
                (Some(w), Some(d)) => format!("{w}/{}", d.value),
                (None, Some(d)) => d.value.clone(),
                (_, None) => String::new(),
            };
            *workdir = clean_dir(&joined).flatten();
            return None;
        }
        Some("export") => {
            for w in &rest[1..] {
                set(env, w);
            }
            return None;
        }
        _ => {}
    }
    let call = call_of(rest)?;
    Some(Found {
        env: own_env,
        workdir: workdir.clone(),
        call,
        at: at.to_string(),
        text,
    })
}

/// Options of `uv run` (and `coverage run`) that take a value.
const VALUE_OPTS: &[&str] = &[
    "--with",
    "--extra",
    "--group",
    "--only-group",
    "-p",
    "--python",
    "--package",
    "--directory",
    "--project",
    "--env-file",
    "--source",
    "--rcfile",
    "--omit",
    "--include",
    "--data-file",
    "--concurrency",
    "--context",
];

/// The test invocation `words` (no leading assignments) make, if any.
fn call_of(words: &[Word]) -> Option<Call> {
    let mut i = 0;
    let mut uv = false;
    let at = |i: usize| words.get(i).map(|w| w.value.as_str());
    // Wrappers in front of the runner.
    loop {
        let w = words.get(i)?;
        match base(w) {
            "time" | "xvfb-run" => i += 1,
            "timeout" => i += 2,
            "env" => {
                i += 1;
                while words
                    .get(i)
                    .is_some_and(|w| shell_line::assignment(w).is_some())
                {
                    i += 1;
                }
            }
            "uv" | "poetry" | "pdm" | "pipenv" | "rye" | "hatch" if at(i + 1) == Some("run") => {
                uv = base(w) == "uv";
                i += 2;
                while let Some(o) = at(i).filter(|o| o.starts_with('-')) {
                    i += if VALUE_OPTS.contains(&o) { 2 } else { 1 };
                }
            }
            "coverage" if at(i + 1) == Some("run") => {
                i += 2;
                while let Some(o) = at(i).filter(|o| o.starts_with('-') && *o != "-m") {
                    i += if VALUE_OPTS.contains(&o) { 2 } else { 1 };
                }
                if at(i) != Some("-m") {
                    return None;
                }
                i += 1;
            }
            p if p.starts_with("python") => {
                let m = (i + 1..words.len()).find(|&j| at(j) == Some("-m"))?;
                i = m + 1;
            }
            _ => break,
        }
    }
    let rest = &words[i + 1..];
    let after = |n: usize| rest.get(n).map(|w| w.value.as_str());
    let call = match base(&words[i]) {
        "pytest" | "py.test" => Call::Pytest {
            args: rest.to_vec(),
            uv,
        },
        "npm" | "pnpm" | "yarn" => script_call(base(&words[i]), rest)?,
        "npx" | "pnpx" => {
            let k = rest.iter().position(|w| !w.value.starts_with('-'))?;
            js_runner(&rest[k..])?
        }
        "vitest" | "jest" | "mocha" => js_runner(&words[i..])?,
        "go" if after(0) == Some("test") => Call::Go {
            args: rest[1..].to_vec(),
        },
        "cargo" if after(0) == Some("test") => Call::Cargo {
            args: rest[1..].to_vec(),
        },
        "make" | "gmake" | "just" => {
            let tool = if base(&words[i]) == "just" {
                "just"
            } else {
                "make"
            };
            let mut k = 0;
            while let Some(o) = after(k).filter(|o| o.starts_with('-') || o.contains('=')) {
                // `make -C dir test` is not followed (another Makefile).
                if o == "-C" || o == "-f" {
                    return None;
                }
                k += if o == "-j" { 2 } else { 1 };
            }
            let target = after(k)?.to_string();
            if !target.contains("test") && target != "unit" {
                return None;
            }
            Call::Target { tool, target }
        }
        "tox" => {
            let e = rest
                .iter()
                .position(|w| w.value == "-e")
                .and_then(|k| rest.get(k + 1))
                .map(|w| w.value.clone())
                .or_else(|| {
                    rest.iter()
                        .find_map(|w| w.value.strip_prefix("-e").map(str::to_string))
                        .filter(|s| !s.is_empty())
                });
            Call::Tox { env: e }
        }
        "nox" => {
            let s = rest
                .iter()
                .position(|w| w.value == "-s" || w.value == "--session" || w.value == "-e")
                .and_then(|k| rest.get(k + 1))
                .map(|w| w.value.clone());
            Call::Nox { session: s }
        }
        _ => return None,
    };
    (!selects_only_network(&call)).then_some(call)
}

/// A call that runs the network tests only (`pytest -m live`, `npm run
/// test:e2e`, `make test-integration`), or no tests (`pytest --version`):
/// not the unit suite.
fn selects_only_network(call: &Call) -> bool {
    match call {
        Call::Pytest { args, .. } => {
            // Not a test run at all: `pytest --version`, `--collect-only`.
            args.iter().any(|w| {
                [
                    "--version",
                    "-V",
                    "--help",
                    "-h",
                    "--collect-only",
                    "--co",
                    "--fixtures",
                ]
                .contains(&w.value.as_str())
            }) || args.windows(2).any(|p| {
                p[0].value == "-m" && names_network(&p[1].value) && !p[1].value.contains("not")
            })
        }
        Call::Script { script, .. } => names_network(script),
        Call::Target { target, .. } => names_network(target),
        Call::Tox { env: Some(e) } | Call::Nox { session: Some(e) } => names_network(e),
        _ => false,
    }
}

/// `npm test`, `npm run X`, `pnpm -r test`, `yarn workspaces run test` …
fn script_call(tool: &str, rest: &[Word]) -> Option<Call> {
    let mut recursive = false;
    let mut k = 0;
    let mut positional: Vec<&str> = Vec::new();
    while let Some(w) = rest.get(k) {
        let v = w.value.as_str();
        match v {
            "-r" | "--recursive" | "--workspaces" | "-ws" => recursive = true,
            "--filter" | "-F" | "-w" | "--workspace" | "--prefix" | "-C" => return None,
            "workspaces" if tool == "yarn" => recursive = true,
            _ if v.starts_with("--filter") || v.starts_with("--workspace=") => return None,
            _ if v.starts_with('-') => {}
            _ => positional.push(v),
        }
        k += 1;
    }
    let script = match positional.as_slice() {
        ["test" | "t" | "tst", ..] => "test",
        ["run" | "run-script", s, ..] => s,
        ["foreach", .., "run", s] => s,
        _ => return None,
    };
    let ok = script == "test" || script.starts_with("test:") || script.starts_with("test-");
    ok.then(|| Call::Script {
        script: script.to_string(),
        recursive,
    })
}

fn js_runner(words: &[Word]) -> Option<Call> {
    matches!(base(words.first()?), "vitest" | "jest" | "mocha").then(|| Call::JsRunner {
        words: words.to_vec(),
    })
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
    let plain = shell_line::quote(value);
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

fn uv_installed() -> bool {
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

/// Translate a found invocation into the command unguard runs. `depth`
/// bounds following `make`/`tox`/`nox` into what they run.
fn translate(cx: &Cx, f: &Found, depth: usize) -> Option<TestCommand> {
    if depth > 3 {
        return None;
    }
    let from = (!f.at.is_empty()).then(|| format!("{} `{}`", f.at, f.text));
    let lead = format!(
        "{}{}",
        f.workdir
            .as_ref()
            .map(|w| format!("cd {} && ", shell_line::quote(w)))
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
        Call::Script { script, recursive } => script_command(cx, f, &lead, script, *recursive)?,
        Call::JsRunner { words } => {
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
            return follow(cx, f, recipe(cx.root, tool, target)?, from, depth);
        }
        Call::Tox { env } => {
            return follow(cx, f, tox_commands(cx.root, env.as_deref())?, from, depth)
        }
        Call::Nox { session } => {
            return follow(
                cx,
                f,
                nox_commands(cx.root, session.as_deref())?,
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

/// A package script run through npm, in the package or (recursive) in
/// each workspace package that has it.
fn script_command(cx: &Cx, f: &Found, lead: &str, script: &str, recursive: bool) -> Option<Made> {
    let dir = match &f.workdir {
        Some(w) => cx.root.join(w),
        None => cx.root.to_path_buf(),
    };
    let dir = dir.canonicalize().ok()?;
    let run = |pkg: &str| {
        let prefix = if pkg.is_empty() {
            String::new()
        } else {
            format!(" --prefix {}", shell_line::quote(pkg))
        };
        if script == "test" {
            format!("npm test --silent{prefix}")
        } else {
            format!("npm run --silent {}{prefix}", shell_line::quote(script))
        }
    };
    let (command, tool, ws_root) = if recursive {
        let pkgs = workspace_packages(&dir, script);
        if pkgs.is_empty() {
            return None;
        }
        let cmd = pkgs.iter().map(|p| run(p)).collect::<Vec<_>>().join(" && ");
        (cmd, js_tool(&dir), dir.clone())
    } else {
        let js = environment::js_env(&dir)?;
        if !has_script(&dir, script) {
            return None;
        }
        let cmd = if script == "test" {
            js.command()
        } else if js.package_dir.is_empty() {
            run("")
        } else {
            return None;
        };
        (cmd, js.tool, js.root.clone())
    };
    // The copy is of the repo: a workspace above it is out of reach.
    if !ws_root.starts_with(cx.root.canonicalize().ok()?) {
        return None;
    }
    Some(Made {
        setup: (!ws_root.join("node_modules").is_dir()).then(|| format!("{} install", tool.name())),
        ..Made::generic(
            Runner::Npm,
            format!("{lead}{command}"),
            if recursive {
                "run through npm in each workspace package that has the script (its node_modules/.bin on PATH)"
            } else {
                "run through npm (its node_modules/.bin on PATH)"
            },
        )
    })
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

fn js_tool(dir: &Path) -> JsTool {
    if dir.join("pnpm-workspace.yaml").is_file() || dir.join("pnpm-lock.yaml").is_file() {
        JsTool::Pnpm
    } else if dir.join("yarn.lock").is_file() {
        JsTool::Yarn
    } else {
        JsTool::Npm
    }
}

fn has_script(dir: &Path, script: &str) -> bool {
    let pkg: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")).unwrap_or_default();
    pkg["scripts"][script].is_string()
}

/// The workspace packages of `dir` (from `pnpm-workspace.yaml` or
/// `package.json` `workspaces`) that have `script`, by path.
fn workspace_packages(dir: &Path, script: &str) -> Vec<String> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct PnpmWs {
        packages: Vec<String>,
    }
    let mut globs: Vec<String> =
        serde_saphyr::from_str::<PnpmWs>(&read(dir, "pnpm-workspace.yaml"))
            .map(|w| w.packages)
            .unwrap_or_default();
    let pkg: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")).unwrap_or_default();
    let ws = if pkg["workspaces"].is_array() {
        &pkg["workspaces"]
    } else {
        &pkg["workspaces"]["packages"]
    };
    globs.extend(
        ws.as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string)),
    );
    let mut out = Vec::new();
    for g in globs.iter().filter(|g| !g.starts_with('!')) {
        let pattern = format!("{}/{}/package.json", dir.display(), g.trim_end_matches('/'));
        for p in glob::glob(&pattern).into_iter().flatten().flatten() {
            let Some(pkg_dir) = p.parent() else { continue };
            let Ok(rel) = pkg_dir.strip_prefix(dir) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            if rel.is_empty() || rel.contains("node_modules") || out.contains(&rel) {
                continue;
            }
            if has_script(pkg_dir, script) {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Simple `VAR = value` assignments of a Makefile (`=`, `:=`, `?=`, `::=`).
fn make_vars(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('\t'))
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            let k = k.trim_end_matches([':', '?', '+', ' ']).trim();
            (!k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then(|| (k.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The recipe lines of `target` in the repo's Makefile or justfile, as
/// `(file:line, words)`, with simple variables expanded.
fn recipe(root: &Path, tool: &str, target: &str) -> Option<Vec<(String, Vec<Word>)>> {
    let names: &[&str] = if tool == "just" {
        &["justfile", "Justfile"]
    } else {
        &["GNUmakefile", "makefile", "Makefile"]
    };
    let file = names.iter().find(|n| root.join(n).is_file())?;
    let text = read(root, file);
    let lines: Vec<&str> = text.lines().collect();
    let vars = make_vars(&text);
    let head = lines.iter().position(|l| {
        let Some((name, rest)) = l.split_once(':') else {
            return false;
        };
        // `test:` / `test *ARGS:` (just) / `test: deps`, never `X := y`.
        !rest.starts_with('=')
            && !l.starts_with([' ', '\t', '#', '.'])
            && name.split_whitespace().next() == Some(target)
    })?;
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate().skip(head + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if !l.starts_with(['\t', ' ']) {
            break;
        }
        let mut s = l.trim().trim_start_matches(['@', '-', '+']).to_string();
        if tool == "make" {
            s = s.replace("$$", "\u{0}");
            for (name, value) in &vars {
                s = s
                    .replace(&format!("$({name})"), value)
                    .replace(&format!("${{{name}}}"), value);
            }
            s = s.replace("$(MAKE)", "make").replace('\u{0}', "$");
            if s.contains("$(") {
                continue;
            }
        } else if s.contains("{{") {
            continue;
        }
        for simple in shell_line::commands(&s).unwrap_or_default() {
            out.push((format!("{file}:{}", k + 1), simple.words));
        }
    }
    Some(out)
}

/// An INI file's `[section]` → `key` value (continuation lines joined with
/// newlines) and the line it starts on.
fn ini_value(text: &str, section: &str, key: &str) -> Option<(String, usize)> {
    let mut in_section = false;
    let mut value: Option<(String, usize)> = None;
    for (k, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            if value.is_some() {
                break;
            }
            in_section = t == format!("[{section}]");
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((v, _)) = &mut value {
            if l.starts_with([' ', '\t']) || t.is_empty() {
                v.push('\n');
                v.push_str(t);
                continue;
            }
            break;
        }
        if let Some((name, v)) = t.split_once('=') {
            if name.trim() == key {
                value = Some((v.trim().to_string(), k + 1));
            }
        }
    }
    value
}

/// The commands of tox environment `env` (else the first of `envlist`),
/// with tox's substitutions resolved.
fn tox_commands(root: &Path, env: Option<&str>) -> Option<Vec<(String, Vec<Word>)>> {
    let text = read(root, "tox.ini");
    let env = match env {
        Some(e) => e.split(',').next().unwrap_or(e).trim().to_string(),
        None => ini_value(&text, "tox", "envlist")
            .or_else(|| ini_value(&text, "tox", "env_list"))
            .and_then(|(v, _)| {
                v.split([',', '\n'])
                    .map(str::trim)
                    .find(|e| !e.is_empty() && !e.contains('{'))
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "py".into()),
    };
    let (value, line) = ini_value(&text, &format!("testenv:{env}"), "commands")
        .or_else(|| ini_value(&text, "testenv", "commands"))?;
    let mut out = Vec::new();
    for (k, l) in value.lines().enumerate() {
        let mut s = l.to_string();
        while let Some(start) = s.find("{posargs") {
            let end = s[start..].find('}')? + start;
            let default = s[start + "{posargs".len()..end]
                .strip_prefix(':')
                .unwrap_or("")
                .to_string();
            s.replace_range(start..=end, &default);
        }
        let s = s
            .replace("{toxinidir}", ".")
            .replace("{envpython}", "python")
            .replace("{envbindir}/", "");
        if s.contains('{') {
            continue;
        }
        for simple in shell_line::commands(&s).unwrap_or_default() {
            out.push((format!("tox.ini:{}", line + k), simple.words));
        }
    }
    Some(out)
}

/// The `session.run(...)` calls (string arguments only) of nox session
/// `session` (else the first of `nox.options.sessions`, else the first).
fn nox_commands(root: &Path, session: Option<&str>) -> Option<Vec<(String, Vec<Word>)>> {
    let text = read(root, "noxfile.py");
    let lines: Vec<&str> = text.lines().collect();
    let default = lines.iter().find_map(|l| {
        let rest = l.trim().strip_prefix("nox.options.sessions")?;
        let q = rest.find(['"', '\''])?;
        let quote = rest[q..].chars().next()?;
        let name = rest[q + 1..].split(quote).next()?;
        Some(name.to_string())
    });
    let wanted = session.map(str::to_string).or(default);
    // Every `def NAME(session…)` right under a `@nox.session` decorator.
    let mut sessions = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("def ") else {
            continue;
        };
        let decorated = lines[..k]
            .iter()
            .rev()
            .take_while(|p| p.starts_with('@') || p.starts_with(' ') || p.starts_with(')'))
            .any(|p| p.starts_with("@nox.session"));
        let name = rest.split('(').next().unwrap_or("").trim();
        if decorated {
            sessions.push((name.to_string(), k));
        }
    }
    let (_, def) = match &wanted {
        Some(w) => sessions.iter().find(|(n, _)| n == w)?,
        None => sessions.first()?,
    };
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate().skip(def + 1) {
        if !l.trim().is_empty() && !l.starts_with([' ', '\t']) {
            break;
        }
        let Some(start) = l.find("session.run(") else {
            continue;
        };
        let args = &l[start + "session.run(".len()..];
        let mut words = Vec::new();
        for a in args.split(',') {
            let a = a.trim().trim_end_matches(')').trim();
            let Some(q) = a.chars().next().filter(|c| *c == '"' || *c == '\'') else {
                continue;
            };
            let Some(v) = a.strip_prefix(q).and_then(|a| a.strip_suffix(q)) else {
                continue;
            };
            words.push(Word {
                raw: shell_line::quote(v),
                value: v.to_string(),
            });
        }
        if !words.is_empty() {
            out.push((format!("noxfile.py:{}", k + 1), words));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
