//! One shell command of a project's script read as a test invocation
//! (pytest, a package script, a JavaScript runner, `go test`, `cargo
//! test`, a `make`/`just` target, tox, nox), with the environment and
//! working directory the script set before it (`cd`, `export`, leading
//! assignments). Wrappers (`uv run`, `coverage run -m`, `python -m`,
//! `timeout`, `env`) are looked through; a call that selects only network
//! or end-to-end tests, or runs no tests, is not an invocation.

use crate::audit::detect::ci_workflow;
use crate::outcome::network_hint::NETWORK_WORDS;
use crate::run::shell_line::{self, Word};

/// The lower-case alphanumeric tokens of `s`.
pub fn tokens(s: &str) -> Vec<String> {
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

/// A recognized test invocation.
#[derive(Debug, Clone)]
pub enum Call {
    /// pytest, bare or through a runner (`uv run`, `poetry run`, `python -m`,
    /// `coverage run -m`).
    Pytest {
        /// The words after `pytest`: the project's selection (paths, `-m`, `-k`).
        args: Vec<Word>,
        /// Whether it ran through `uv run` (kept only where uv is installed).
        uv: bool,
    },
    /// A package script (`npm test`, `pnpm -r test`, `yarn run test:unit`).
    Script {
        /// The script's name in package.json (`test`, `test:unit`).
        script: String,
        /// Run in every workspace package (`-r`, `--recursive`, `--workspaces`).
        recursive: bool,
        /// The call as written (tool first) when it selects packages
        /// (`--filter`, `-F`, `--workspace`): run so, the project's own
        /// selection.
        selected: Option<Vec<Word>>,
    },
    /// A JavaScript runner called directly (`vitest run`, `npx jest`).
    JsRunner {
        /// The runner and its arguments, as written.
        words: Vec<Word>,
    },
    /// `go test`.
    Go {
        /// The words after `go test` (packages, flags).
        args: Vec<Word>,
    },
    /// `cargo test`.
    Cargo {
        /// The words after `cargo test`.
        args: Vec<Word>,
    },
    /// A test script of the repository itself (`script/test`,
    /// `./scripts/run_tests.sh`, `bash ci/test.sh`), followed into the
    /// commands it runs.
    RepoScript {
        /// The script's path relative to the repository root.
        path: String,
    },
    /// `make TARGET` / `just TARGET`.
    Target {
        /// `make` or `just`.
        tool: &'static str,
        /// The target or recipe name (`test`, `unit`).
        target: String,
    },
    /// `tox`, followed into the environment's commands.
    Tox {
        /// The environment `-e` names; `None`: the default `env_list`.
        env: Option<String>,
    },
    /// `nox`, followed into the session's commands.
    Nox {
        /// The session `-s`/`--session`/`-e` names; `None`: the default sessions.
        session: Option<String>,
    },
}

/// An invocation in context: the environment and working directory it
/// runs with, and where it was read.
#[derive(Debug, Clone)]
pub struct Found {
    /// Variables set for the call (the step's `env:` and leading assignments).
    pub env: Vec<(String, String)>,
    /// The directory it runs in, relative to the root (`working-directory:`, `cd dir &&`).
    pub workdir: Option<String>,
    /// The test invocation itself.
    pub call: Call,
    /// `file:line` where it was read (empty for a guess).
    pub at: String,
    /// The line as written there.
    pub text: String,
}

/// A repo-relative directory without `.`/`..` tricks; `None` when it
/// leaves the repo or is absolute. An empty result is the root.
pub fn clean_dir(dir: &str) -> Option<Option<String>> {
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
pub fn recognize(
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
            if let Some(v) = ci_workflow::resolve(v) {
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

/// A `make`/`just` call of a test target (`make test`, `make -j 4 unit`);
/// `rest` are the words after the tool. `make -C dir test` is not followed
/// (another Makefile).
fn task_target(tool: &str, rest: &[Word]) -> Option<Call> {
    let tool = if tool == "just" { "just" } else { "make" };
    let after = |n: usize| rest.get(n).map(|w| w.value.as_str());
    let mut k = 0;
    while let Some(o) = after(k).filter(|o| o.starts_with('-') || o.contains('=')) {
        if o == "-C" || o == "-f" {
            return None;
        }
        k += if o == "-j" { 2 } else { 1 };
    }
    let target = after(k)?.to_string();
    if !target.contains("test") && target != "unit" {
        return None;
    }
    Some(Call::Target { tool, target })
}

/// The test invocation `words` (no leading assignments) make, if any.
fn call_of(words: &[Word]) -> Option<Call> {
    let mut i = 0;
    let mut uv = false;
    let at = |i: usize| words.get(i).map(|w| w.value.as_str());
    // Wrappers in front of the runner.
    loop {
        let w = words.get(i)?;
        match base(w) {
            "time" | "xvfb-run" | "exec" => i += 1,
            // `bash script/test.sh`: the script is the call.
            "bash" | "sh" if at(i + 1).is_some_and(|a| !a.starts_with('-')) => i += 1,
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
        "npm" | "pnpm" | "yarn" => script_call(&words[i..])?,
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
        "make" | "gmake" | "just" => task_target(base(&words[i]), rest)?,
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
        _ => repo_script(&words[i])?,
    };
    (!selects_only_network(&call)).then_some(call)
}

/// A word that runs a test script of the repository (`script/test`,
/// `./scripts/run_tests.sh`, `ci/test.sh`): a relative path inside the
/// repo whose file name says test. Whether the file exists is checked when
/// it is followed.
fn repo_script(w: &Word) -> Option<Call> {
    let path = w.value.trim_start_matches("./");
    let name = path.rsplit('/').next().unwrap_or(path);
    let inside =
        !path.starts_with('/') && !path.contains('$') && !path.split('/').any(|p| p == "..");
    let scripted = w.value.contains('/') || name.ends_with(".sh");
    (inside && scripted && name.to_ascii_lowercase().contains("test")).then(|| Call::RepoScript {
        path: path.to_string(),
    })
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
        Call::RepoScript { path } => names_network(path),
        Call::Tox { env: Some(e) } | Call::Nox { session: Some(e) } => names_network(e),
        _ => false,
    }
}

/// `npm test`, `npm run X`, `pnpm -r test`, `yarn workspaces run test` …
/// `words` is the whole call, the tool first.
fn script_call(words: &[Word]) -> Option<Call> {
    let tool = base(words.first()?);
    let rest = &words[1..];
    let mut recursive = false;
    let mut selects = false;
    let mut k = 0;
    let mut positional: Vec<&str> = Vec::new();
    while let Some(w) = rest.get(k) {
        let v = w.value.as_str();
        match v {
            "-r" | "--recursive" | "--workspaces" | "-ws" => recursive = true,
            "--filter" | "-F" | "-w" | "--workspace" => {
                selects = true;
                k += 1;
            }
            "--prefix" | "-C" => return None,
            "workspaces" if tool == "yarn" => recursive = true,
            _ if v.starts_with("--filter=") || v.starts_with("--workspace=") => selects = true,
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
        selected: selects.then(|| words.to_vec()),
    })
}

fn js_runner(words: &[Word]) -> Option<Call> {
    matches!(base(words.first()?), "vitest" | "jest" | "mocha").then(|| Call::JsRunner {
        words: words.to_vec(),
    })
}
