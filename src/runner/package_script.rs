//! Package scripts seen through: `npm test`, `npm run X`, `pnpm [--filter
//! P] X`, `yarn X` run a script of `package.json`; when that script is one
//! runner invocation (`[VAR=v …] vitest run …`, `jest …`, `node --test`),
//! its runner is recognised from the script's words, and unguard's
//! arguments (a reporter, a test filter) reach the runner's end:
//!
//! - **run as the script runs it** ([`Direct`]): when the package has no
//!   `pre`/`post` script for it and the runner is in a `node_modules/.bin`
//!   of the package or above it, unguard runs the script's words itself,
//!   in the package's directory, with the script's variables, those
//!   `node_modules/.bin` first on `PATH` and the variables npm gives a
//!   script (`npm_lifecycle_event`, `npm_package_name`, …), then its
//!   arguments: what the package manager would run, without starting it
//!   (half a second a run);
//! - **else through the package manager**, which passes them on to the
//!   script: after `--` for npm, after the script's name for pnpm and yarn.
//!
//! Either is an addition the baseline checks as every other: red with it
//! and green without it, the command runs as written from then on. A
//! script that is not one runner invocation (`vitest run && eslint .`,
//! `$VAR` expansions) stays whole, as any other command.

use std::path::{Path, PathBuf};

use super::words::{append, plain_words};
use crate::spec::Command;

/// The package manager a command runs a script with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    /// npm: arguments for the script go after `--`.
    Npm,
    /// pnpm: arguments after the script's name go to the script.
    Pnpm,
    /// yarn (classic and berry): arguments after the script's name go to the script.
    Yarn,
}

/// `VAR=value` words, in order.
pub type Vars = Vec<(String, String)>;

/// A package script as the test command runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The test command.
    pub command: Command,
    /// Its package manager.
    pub manager: Manager,
    /// Whether the command already passes arguments after `--` (npm).
    pub passes: bool,
    /// The package's directory, relative to the copy (empty: the root).
    pub dir: PathBuf,
    /// The script's name.
    pub name: String,
    /// The runner's words: the script's, without its leading `VAR=value`
    /// words (and an `npx` / `cross-env` in front), then the arguments the
    /// command passes on to it.
    pub words: Vec<String>,
    /// The script's `VAR=value` words (what it sets for the runner).
    pub vars: Vars,
    /// How unguard runs the script's words itself, when it may.
    pub direct: Option<Direct>,
}

/// A script run as the package manager would run it, without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Direct {
    /// The `node_modules/.bin` directories on `PATH`, relative to the
    /// package's directory, nearest first (`node_modules/.bin`,
    /// `../node_modules/.bin`, …, up to the copy's root).
    bins: Vec<String>,
    /// The variables npm gives a script, then the script's own.
    vars: Vars,
}

impl Script {
    /// The command that runs the script's runner with `extra` at its end:
    /// the script's words run as the script runs them ([`Direct`]), else
    /// the test command with `extra` passed on (after `--` for npm, unless
    /// the command has one).
    pub fn append(&self, extra: Vec<String>) -> Command {
        if let Some(d) = &self.direct {
            return self.run_directly(d, extra);
        }
        let mut words = Vec::new();
        if self.manager == Manager::Npm && !self.passes {
            words.push("--".to_string());
        }
        words.extend(extra);
        append(&self.command, words)
    }
}

impl Script {
    /// `INIT_CWD=… [cd DIR &&] PATH=… npm_…=… VAR=v exec WORDS… EXTRA…`
    /// (a shell line).
    fn run_directly(&self, d: &Direct, extra: Vec<String>) -> Command {
        use crate::run::shell::quote;
        let mut line = String::from("INIT_CWD=\"$PWD\" && export INIT_CWD && ");
        if !self.dir.as_os_str().is_empty() {
            line.push_str(&format!(
                "cd {} && ",
                quote(&self.dir.display().to_string())
            ));
        }
        let bins: Vec<String> = d.bins.iter().map(|b| format!("$PWD/{b}")).collect();
        line.push_str(&format!("PATH=\"{}:$PATH\" ", bins.join(":")));
        for (k, v) in &d.vars {
            line.push_str(&format!("{k}={} ", quote(v)));
        }
        line.push_str("exec");
        for w in self.words.iter().chain(extra.iter()) {
            line.push(' ');
            line.push_str(&quote(w));
        }
        Command::Shell(line)
    }
}

/// How the package manager would run script `name` (`body`) of the package
/// in `dir` (relative to the copy at `tree`, its `package.json` read into
/// `package`), with the script's `vars`: `None` when it would run more
/// than the script (a `pre`/`post` script of it), or the runner `program`
/// is in no `node_modules/.bin` of the package or above it.
fn direct(
    tree: &Path,
    dir: &Path,
    package: &serde_json::Value,
    (name, body): (&str, &str),
    program: &str,
    vars: &Vars,
) -> Option<Direct> {
    let scripts = package.get("scripts")?;
    if scripts.get(format!("pre{name}")).is_some() || scripts.get(format!("post{name}")).is_some() {
        return None;
    }
    let depth = dir.components().count();
    let bins: Vec<String> = (0..=depth)
        .map(|up| format!("{}node_modules/.bin", "../".repeat(up)))
        .filter(|b| tree.join(dir).join(b).is_dir())
        .collect();
    let found = bins
        .iter()
        .any(|b| tree.join(dir).join(b).join(program).exists());
    if !found || program.contains('/') {
        return None;
    }
    let field = |k: &str| {
        package
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let mut all: Vars = vec![
        ("npm_lifecycle_event".into(), name.to_string()),
        ("npm_lifecycle_script".into(), body.to_string()),
        ("npm_package_name".into(), field("name")),
        ("npm_package_version".into(), field("version")),
        ("npm_command".into(), "run-script".into()),
    ];
    all.retain(|(_, v)| !v.is_empty());
    all.extend(vars.iter().cloned());
    Some(Direct { bins, vars: all })
}

/// Where a runner's words come from, and how arguments reach its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The test command itself runs the runner: arguments go at its end.
    Command(Command),
    /// A package script runs it: arguments are passed on to the script.
    Script(Script),
}

impl Target {
    /// How unguard runs it, for the name of its request in messages: empty,
    /// or how a package script's words run without the package manager.
    pub fn how(&self) -> String {
        match self {
            Target::Script(s) if s.direct.is_some() => format!(
                "; the script `{}` run as its package manager runs it, without starting it",
                s.name
            ),
            _ => String::new(),
        }
    }

    /// The command with `extra` at the runner's end.
    pub fn append(&self, extra: Vec<String>) -> Command {
        match self {
            Target::Command(c) => append(c, extra),
            Target::Script(s) => s.append(extra),
        }
    }
}

/// npm's options before or after the script's name that unguard reads
/// past (the second list takes a value).
const NPM_FLAGS: [&str; 4] = ["--silent", "-s", "--if-present", "--ignore-scripts"];
const NPM_VALUED: [&str; 4] = ["--prefix", "--loglevel", "--workspace", "-w"];
/// npm's commands that run the `test` script, and those that run a named one.
const NPM_TEST: [&str; 3] = ["test", "t", "tst"];
const NPM_RUN: [&str; 4] = ["run", "run-script", "rum", "urn"];
/// pnpm's and yarn's commands that are not scripts.
const PM_BUILTINS: [&str; 14] = [
    "install", "i", "add", "remove", "exec", "dlx", "x", "why", "list", "ls", "audit", "info",
    "build", "rebuild",
];

/// The script the command runs through a package manager, and the runner
/// words in it; `None` when the command is not one script run, the script
/// is missing, or it is not one simple command of plain words.
pub fn resolve(command: &Command, tree: &Path) -> Option<Script> {
    let (words, _) = plain_words(command)?;
    let program = words.first()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let (manager, dir, name, passed, passes) = match program {
        "npm" => npm(&words[1..])?,
        "pnpm" => pnpm_or_yarn(Manager::Pnpm, &words[1..], tree)?,
        "yarn" => pnpm_or_yarn(Manager::Yarn, &words[1..], tree)?,
        _ => return None,
    };
    let dir = PathBuf::from(dir.trim_start_matches("./").trim_end_matches('/'));
    if dir
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    let package = package_json(&tree.join(&dir))?;
    let body = package.get("scripts")?.get(&name)?.as_str()?.to_string();
    let (vars, mut runner) = runner_words(&body)?;
    let direct = direct(tree, &dir, &package, (&name, &body), runner.first()?, &vars);
    runner.extend(passed);
    Some(Script {
        command: command.clone(),
        manager,
        passes,
        dir,
        name,
        words: runner,
        vars,
        direct,
    })
}

/// What an npm command runs: (manager, package dir, script, arguments
/// passed on, whether it has `--`).
type Resolved = (Manager, String, String, Vec<String>, bool);

fn npm(args: &[String]) -> Option<Resolved> {
    let mut dir = String::new();
    let mut name = None;
    // `run` seen: the next word that is no option is the script's name.
    let mut run = false;
    let mut it = args.iter();
    while let Some(w) = it.next() {
        if w == "--" {
            let passed: Vec<String> = it.cloned().collect();
            return Some((Manager::Npm, dir, name?, passed, true));
        }
        if NPM_FLAGS.contains(&w.as_str()) {
            continue;
        }
        let valued = match w.split_once('=') {
            Some((k, v)) if NPM_VALUED.contains(&k) => Some((k, v.to_string())),
            Some(_) => return None,
            None if NPM_VALUED.contains(&w.as_str()) => Some((w.as_str(), it.next()?.clone())),
            None => None,
        };
        if let Some((k, v)) = valued {
            match k {
                "--prefix" => dir = v,
                // A workspace named by its directory (by name: unguard
                // cannot tell which package it is).
                "--workspace" | "-w" if v.contains('/') || v.starts_with('.') => dir = v,
                "--workspace" | "-w" => return None,
                _ => {}
            }
            continue;
        }
        if w.starts_with('-') || name.is_some() {
            return None;
        }
        if run {
            name = Some(w.clone());
        } else if NPM_TEST.contains(&w.as_str()) {
            name = Some("test".to_string());
        } else if NPM_RUN.contains(&w.as_str()) {
            run = true;
        } else {
            return None;
        }
    }
    Some((Manager::Npm, dir, name?, Vec::new(), false))
}

fn pnpm_or_yarn(manager: Manager, args: &[String], tree: &Path) -> Option<Resolved> {
    let mut dir = String::new();
    let mut it = args.iter().peekable();
    let name = loop {
        let w = it.next()?;
        let (key, inline) = match w.split_once('=') {
            Some((k, v)) if k.starts_with('-') => (k, Some(v.to_string())),
            _ => (w.as_str(), None),
        };
        match (manager, key) {
            (_, "-s" | "--silent") => {}
            (Manager::Pnpm, "-C" | "--dir") | (Manager::Yarn, "--cwd") => {
                dir = match inline {
                    Some(v) => v,
                    None => it.next()?.clone(),
                };
            }
            (Manager::Pnpm, "-F" | "--filter") => {
                let f = match inline {
                    Some(v) => v,
                    None => it.next()?.clone(),
                };
                dir = filtered_package(tree, &f)?;
            }
            (_, "run" | "run-script") => break it.next()?.clone(),
            (_, k) if k.starts_with('-') => return None,
            (_, k) if PM_BUILTINS.contains(&k) => return None,
            (_, k) => break k.to_string(),
        }
    };
    // After the script's name every word goes to the script (`--` too).
    let passed: Vec<String> = it.cloned().collect();
    if passed.iter().any(|w| w == "--") {
        return None;
    }
    Some((manager, dir, name, passed, false))
}

/// The workspace package a pnpm `--filter` names: `./path` (a directory
/// with a `package.json`), or the name of exactly one package among the
/// workspace's (`pnpm-workspace.yaml` `packages:`, one level of `*`).
fn filtered_package(tree: &Path, filter: &str) -> Option<String> {
    if filter.starts_with("./") || filter.starts_with("../") {
        let d = filter.trim_start_matches("./").trim_end_matches('/');
        return tree
            .join(d)
            .join("package.json")
            .is_file()
            .then(|| d.to_string());
    }
    let ws = std::fs::read_to_string(tree.join("pnpm-workspace.yaml")).ok()?;
    let mut found = Vec::new();
    for line in ws.lines() {
        let Some(glob) = line.trim().strip_prefix("- ") else {
            continue;
        };
        let glob = glob.trim().trim_matches(['\'', '"']);
        let dirs: Vec<PathBuf> = match glob.strip_suffix("/*") {
            Some(parent) if !parent.contains('*') => std::fs::read_dir(tree.join(parent))
                .ok()?
                .flatten()
                .map(|e| Path::new(parent).join(e.file_name()))
                .collect(),
            None if !glob.contains('*') && !glob.starts_with('!') => vec![PathBuf::from(glob)],
            _ => continue,
        };
        for d in dirs {
            let named = std::fs::read_to_string(tree.join(&d).join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("name")?.as_str().map(str::to_string));
            if named.as_deref() == Some(filter) {
                found.push(d.display().to_string());
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The `package.json` in `dir`.
fn package_json(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A script's `VAR=value` words and the runner's words after them (an
/// `npx [--no-install]` or `cross-env VAR=v …` in front skipped); `None`
/// unless the script is one simple command of plain words.
fn runner_words(body: &str) -> Option<(Vars, Vec<String>)> {
    let simple = crate::run::shell_line::commands(body)?;
    let [only] = simple.as_slice() else {
        return None;
    };
    if only.then.is_some()
        || only
            .words
            .iter()
            .any(|w| w.raw.contains(['$', '`', '*', '?', '<', '>', '(', '{']))
    {
        return None;
    }
    let mut vars = Vec::new();
    let mut words = only.words.iter().peekable();
    loop {
        let w = words.peek()?;
        if let Some((k, v)) = crate::run::shell_line::assignment(w) {
            vars.push((k.to_string(), v.to_string()));
        } else if w.value == "cross-env" || w.value == "npx" || w.value == "--no-install" {
            // `cross-env` sets the assignments after it, as the shell does.
        } else {
            break;
        }
        words.next();
    }
    Some((vars, words.map(|w| w.value.clone()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(dir: &Path, scripts: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("package.json"),
            format!("{{\"name\": \"p\", \"scripts\": {scripts}}}"),
        )
        .unwrap();
    }

    fn sh(s: &str) -> Command {
        Command::Shell(s.into())
    }

    #[test]
    fn npm_pnpm_and_yarn_scripts_are_read_with_their_variables_and_arguments() {
        let d = tempfile::tempdir().unwrap();
        package(
            d.path(),
            r#"{"test": "NODE_ENV=test vitest run", "unit": "cross-env CI=1 npx jest --ci"}"#,
        );
        let s = resolve(&sh("npm test"), d.path()).unwrap();
        assert_eq!(s.manager, Manager::Npm);
        assert_eq!(s.words, ["vitest", "run"]);
        assert_eq!(s.vars, [("NODE_ENV".to_string(), "test".to_string())]);
        assert_eq!(
            s.append(vec!["-t".into(), "a b".into()]),
            sh("npm test -- -t 'a b'")
        );
        let s = resolve(&sh("npm run --silent unit -- --runInBand"), d.path()).unwrap();
        assert_eq!(s.words, ["jest", "--ci", "--runInBand"]);
        assert_eq!(
            s.append(vec!["-x".into()]),
            sh("npm run --silent unit -- --runInBand -x")
        );
        for pm in [
            "pnpm test",
            "pnpm run test",
            "yarn test",
            "yarn -s run test",
        ] {
            let s = resolve(&sh(pm), d.path()).unwrap();
            assert_eq!(s.words, ["vitest", "run"], "{pm}");
            assert_eq!(s.append(vec!["-x".into()]), sh(&format!("{pm} -x")), "{pm}");
        }
        // Not one script run, or a script unguard cannot read word by word.
        for c in [
            "npm install",
            "npm test && true",
            "pnpm exec vitest",
            "npm run",
            "make test",
        ] {
            assert!(resolve(&sh(c), d.path()).is_none(), "{c}");
        }
        package(d.path(), r#"{"test": "vitest run && eslint ."}"#);
        assert!(resolve(&sh("npm test"), d.path()).is_none());
        package(d.path(), r#"{"test": "vitest run $ARGS"}"#);
        assert!(resolve(&sh("npm test"), d.path()).is_none());
    }

    #[test]
    fn a_script_whose_runner_is_installed_runs_without_the_package_manager() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("server");
        package(&pkg, r#"{"test": "NODE_ENV=test vitest run"}"#);
        std::fs::create_dir_all(d.path().join("node_modules/.bin")).unwrap();
        std::fs::write(d.path().join("node_modules/.bin/vitest"), "").unwrap();
        let s = resolve(&sh("npm test --prefix server"), d.path()).unwrap();
        assert_eq!(
            s.append(vec!["-t".into(), "a b".into()]),
            sh("INIT_CWD=\"$PWD\" && export INIT_CWD && cd server && PATH=\"$PWD/../node_modules/.bin:$PATH\" npm_lifecycle_event=test npm_lifecycle_script='NODE_ENV=test vitest run' npm_package_name=p npm_command=run-script NODE_ENV=test exec vitest run -t 'a b'")
        );
        // A pre or post script runs too when npm runs the script: through npm.
        package(
            &pkg,
            r#"{"test": "NODE_ENV=test vitest run", "pretest": "tsc"}"#,
        );
        let s = resolve(&sh("npm test --prefix server"), d.path()).unwrap();
        assert_eq!(
            s.append(vec!["-x".into()]),
            sh("npm test --prefix server -- -x")
        );
        // A runner in no node_modules/.bin: through npm.
        package(&pkg, r#"{"test": "jest"}"#);
        let s = resolve(&sh("npm test --prefix server"), d.path()).unwrap();
        assert!(s.direct.is_none());
    }

    #[test]
    fn the_package_is_found_by_prefix_dir_and_filter() {
        let d = tempfile::tempdir().unwrap();
        package(d.path(), r#"{"test": "echo root"}"#);
        let pkg = d.path().join("packages/server");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name": "@acme/server", "scripts": {"test": "jest"}}"#,
        )
        .unwrap();
        std::fs::write(
            d.path().join("pnpm-workspace.yaml"),
            "packages:\n  - 'packages/*'\n",
        )
        .unwrap();
        for c in [
            "npm test --prefix packages/server",
            "npm test --workspace=packages/server",
            "npm test -w ./packages/server",
            "pnpm -C packages/server test",
            "pnpm --filter @acme/server test",
            "pnpm --filter ./packages/server test",
            "yarn --cwd packages/server test",
        ] {
            let s = resolve(&sh(c), d.path()).unwrap_or_else(|| panic!("{c}"));
            assert_eq!(s.dir, Path::new("packages/server"), "{c}");
            assert_eq!(s.words, ["jest"], "{c}");
        }
        assert!(resolve(&sh("pnpm --filter @acme/other test"), d.path()).is_none());
        assert!(resolve(&sh("npm test --prefix ../elsewhere"), d.path()).is_none());
    }
}
