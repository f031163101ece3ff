//! The ways in besides a git checkout (issue 20): the crates.io package, the
//! PyPI wheel, the npm packages and the pre-commit hook, each installed the
//! way its users install it and run against a fixture repository, offline.
//!
//! The wheel tests take the wheel from `UNGUARD_WHEEL` (`.ci/run` builds the
//! release wheel and runs this file again with it). Without it they build a
//! debug wheel with maturin under `target/<host triple>/` (not `target/debug/`,
//! whose binary the other tests run), except under `CI`, where they print a
//! skip message and leave the wheel to `.ci/run`'s packaging step.

use crate::common::packaging::*;
use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use assert_cmd::cargo::cargo_bin;
use regex::Regex;
use serde_json::Value;

const SPEC: &str = "\
version: 1
test:
  command: python3 check.py
  preset: generic
  timeout: 20s
mutations:
  - id: m-a
    control: \"control a\"
    file: app.py
    find: \"return 1\"
    replace: \"return 0\"
  - id: m-f
    control: \"control f\"
    file: app.py
    find: \"return 6\"
    replace: \"return 0\"
";

/// A repository whose run exits 2: m-a killed, m-f survived.
fn fixture() -> Fixture {
    Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", SPEC),
    ])
}

fn assert_demo_verdicts(fx: &Fixture, out: &str, code: i32, log: &str) {
    assert_eq!(code, 2, "one survivor: the gate fails\n{log}");
    let v = fx.verdicts(out);
    assert_eq!(
        v.get("m-a").map(String::as_str),
        Some("killed"),
        "{v:?}\n{log}"
    );
    assert_eq!(
        v.get("m-f").map(String::as_str),
        Some("survived"),
        "{v:?}\n{log}"
    );
}

fn cargo_version() -> String {
    let toml = read("Cargo.toml");
    Regex::new(r#"(?m)^version = "([^"]+)""#)
        .unwrap()
        .captures(&toml)
        .unwrap()[1]
        .to_string()
}

// ------------------------------------------------------------------ versions

#[test]
fn every_package_manifest_carries_the_crate_version() {
    let v = cargo_version();
    assert_eq!(v, VERSION);
    let npm: Value = serde_json::from_str(&read("packaging/npm/unguard/package.json")).unwrap();
    assert_eq!(npm["version"], v.as_str(), "npm launcher");
    let optional = npm["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies");
    assert_eq!(
        optional.keys().collect::<Vec<_>>(),
        ["@unguard/linux-arm64", "@unguard/linux-x64"]
    );
    assert!(optional.values().all(|p| p == v.as_str()), "{optional:?}");
    assert!(
        npm.get("scripts").is_none(),
        "no install scripts: nothing runs or downloads at install time"
    );
    let shim = read("pyproject.toml");
    assert!(shim.contains(&format!("version = \"{v}\"")), "{shim}");
    assert!(shim.contains(&format!("\"unguard=={v}\"")), "{shim}");
    let wheel = read("packaging/pypi/pyproject.toml");
    assert!(wheel.contains("bindings = \"bin\"") && wheel.contains("name = \"unguard\""));
    assert!(read("examples/github/unguard-action.yml").contains(&format!("unguard@v{v}")));
}

// ------------------------------------------------------------------ crates.io

fn cargo_package(args: &[&str]) -> (i32, String) {
    let target = tempfile::tempdir().unwrap();
    output(
        Command::new(env!("CARGO"))
            .arg("package")
            .args(["--allow-dirty", "--offline"])
            .args(args)
            .env("CARGO_TARGET_DIR", target.path())
            .current_dir(repo_root()),
    )
}

/// Every file `src/` embeds (include_str!/include_bytes!; a `concat!` with a
/// variable part gives its directory), relative to the repository root.
fn embedded_files() -> Vec<String> {
    let lit = Regex::new(r#"include_(?:str|bytes)!\(\s*(?:concat!\(\s*)?"([^"]+)""#).unwrap();
    let mut out = Vec::new();
    let mut stack = vec![repo_root().join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for c in lit.captures_iter(&text) {
                    let joined = p.parent().unwrap().join(&c[1]);
                    let mut parts: Vec<String> = Vec::new();
                    for comp in joined.strip_prefix(repo_root()).unwrap().components() {
                        match comp {
                            std::path::Component::ParentDir => {
                                parts.pop();
                            }
                            std::path::Component::Normal(s) => {
                                parts.push(s.to_string_lossy().into_owned())
                            }
                            _ => {}
                        }
                    }
                    out.push(parts.join("/"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn cargo_package_holds_every_embedded_file_and_the_demo_and_warns_of_nothing() {
    let embedded = embedded_files();
    assert!(
        embedded.iter().any(|f| f == "templates/report.html")
            && embedded.iter().any(|f| f.starts_with("mutations/")),
        "the scan finds the embedded files: {embedded:?}"
    );
    let (code, list) = cargo_package(&["--list"]);
    assert_eq!(code, 0, "{list}");
    let listed: Vec<&str> = list.lines().collect();
    for f in &embedded {
        // A directory prefix (concat! with a variable name) needs one file under it.
        assert!(
            listed.iter().any(|l| l == f || l.starts_with(f.as_str())),
            "`cargo package` leaves out {f}, which src/ embeds:\n{list}"
        );
    }
    for f in [
        "examples/demo-server/unguard.yaml",
        "Cargo.lock",
        "README.md",
    ] {
        assert!(listed.contains(&f), "the package has no {f}:\n{list}");
    }
    let (code, log) = cargo_package(&["--no-verify"]);
    assert_eq!(code, 0, "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("warning")).collect();
    assert!(warnings.is_empty(), "`cargo package` warns:\n{log}");
}

// ------------------------------------------------------------------ npm

#[test]
fn npm_packages_install_offline_and_npx_runs_unguard() {
    if !tool(&["npm", "--version"], "apt-get install nodejs npm") {
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("ug-npm-")
        .tempdir()
        .unwrap();
    let t = tmp.path();
    let platform = t.join("platform");
    let (code, log) = output(
        Command::new("bash")
            .arg(repo_root().join("packaging/npm/platform-package.sh"))
            .arg(host_target())
            .arg(cargo_bin("unguard"))
            .arg(&platform),
    );
    assert_eq!(code, 0, "{log}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(platform.join("package.json")).unwrap())
            .unwrap();
    assert!(manifest.get("scripts").is_none(), "{manifest}");
    let npm = |args: &[&str], cwd: &Path| {
        output(
            Command::new("npm")
                .args(args)
                .current_dir(cwd)
                .env("npm_config_cache", t.join("cache"))
                .env("npm_config_update_notifier", "false")
                .env("npm_config_fund", "false")
                .env("npm_config_audit", "false"),
        )
    };
    let packs = t.join("packs");
    std::fs::create_dir_all(&packs).unwrap();
    for dir in [platform.clone(), repo_root().join("packaging/npm/unguard")] {
        let (code, log) = npm(
            &[
                "pack",
                dir.to_str().unwrap(),
                "--pack-destination",
                packs.to_str().unwrap(),
            ],
            t,
        );
        assert_eq!(code, 0, "npm pack {}: {log}", dir.display());
    }
    let mut tarballs: Vec<PathBuf> = std::fs::read_dir(&packs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    tarballs.sort();
    let names: Vec<String> = tarballs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let arch = if host_target().starts_with("x86_64") {
        "x64"
    } else {
        "arm64"
    };
    assert_eq!(
        names,
        [
            format!("unguard-{VERSION}.tgz"),
            format!("unguard-linux-{arch}-{VERSION}.tgz")
        ]
    );

    // A project that installs both tarballs as devDependencies, offline.
    let project = t.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "p", "private": true}"#,
    )
    .unwrap();
    let mut args = vec!["install", "--offline", "--save-dev"];
    args.extend(tarballs.iter().map(|p| p.to_str().unwrap()));
    let (code, log) = npm(&args, &project);
    assert_eq!(code, 0, "npm install: {log}");

    let npx = |args: &[&str], cwd: &Path| {
        let mut c = Command::new("npx");
        c.arg("--offline")
            .arg("--no-install")
            .args(args)
            .current_dir(cwd)
            .env("npm_config_cache", t.join("cache"))
            .env("npm_config_update_notifier", "false");
        output(&mut c)
    };
    let (code, version) = npx(&["unguard", "--version"], &project);
    assert_eq!(code, 0, "{version}");
    assert_eq!(version.trim(), format!("unguard {VERSION}"));

    // The launcher passes the arguments through and exits with unguard's code.
    let fx = fixture();
    let out = fx.path().join("npx.out");
    let mut c = Command::new("npx");
    c.args(["--offline", "--no-install", "unguard", "run"])
        .arg(fx.path())
        .arg("--out")
        .arg(&out)
        .current_dir(&project)
        .env("npm_config_cache", t.join("cache"))
        .env("TMPDIR", fx.tmp.path())
        .env_remove("GITHUB_STEP_SUMMARY");
    let (code, log) = output(&mut c);
    assert_demo_verdicts(&fx, "npx.out", code, &log);
}

// ------------------------------------------------------------------ PyPI

/// The wheel to test: `UNGUARD_WHEEL`, or one built now with maturin (once
/// per test binary). None (a visible skip for every caller) when there is
/// none to test.
fn wheel() -> Option<PathBuf> {
    static WHEEL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let wheel = WHEEL.get_or_init(|| {
        assert!(
            repo_root().join("packaging/pypi/pyproject.toml").is_file(),
            "no wheel project: packaging/pypi/pyproject.toml is missing"
        );
        if let Some(w) = std::env::var_os("UNGUARD_WHEEL") {
            let w = PathBuf::from(w);
            assert!(w.is_file(), "UNGUARD_WHEEL={} is not a file", w.display());
            return Ok(w);
        }
        if in_ci() {
            return Err("no UNGUARD_WHEEL; .ci/run runs this test with the release wheel".into());
        }
        if !tool(&["maturin", "--version"], "python3 -m pip install maturin") {
            return Err("no wheel: maturin is not installed".into());
        }
        let out = repo_root().join("target/wheels-test");
        let _ = std::fs::remove_dir_all(&out);
        let (code, log) = output(
            Command::new("maturin")
                .args(["build", "--target", host_target(), "--out"])
                .arg(&out)
                .current_dir(repo_root().join("packaging/pypi")),
        );
        assert_eq!(code, 0, "maturin build: {log}");
        let w = std::fs::read_dir(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        Ok(w)
    });
    match wheel {
        Ok(w) => Some(w.clone()),
        Err(why) => {
            skip::not_here(why);
            None
        }
    }
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_unguard() {
    let Some(wheel) = wheel() else { return };
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        Regex::new(&format!(
            r"^unguard-{}-py3-none-manylinux_?\w*\.whl$",
            regex::escape(VERSION)
        ))
        .unwrap()
        .is_match(&name),
        "{name}"
    );
    let venv = tempfile::Builder::new()
        .prefix("ug-venv-")
        .tempdir()
        .unwrap();
    let (code, log) = output(Command::new(python()).args(["-m", "venv"]).arg(venv.path()));
    assert_eq!(code, 0, "{log}");
    let (code, log) = output(
        Command::new(venv.path().join("bin/python"))
            .args(["-m", "pip", "install", "-q", "--no-index", "--no-deps"])
            .arg(&wheel),
    );
    assert_eq!(code, 0, "pip install {name}: {log}");
    let bin = venv.path().join("bin/unguard");
    let (code, version) = output(Command::new(&bin).arg("--version"));
    assert_eq!(
        (code, version.trim()),
        (0, format!("unguard {VERSION}").as_str())
    );

    let fx = fixture();
    let (code, log) = output(
        Command::new(&bin)
            .args(["run", ".", "--out", "venv.out"])
            .current_dir(fx.path())
            .env("TMPDIR", fx.tmp.path())
            .env_remove("GITHUB_STEP_SUMMARY"),
    );
    assert_demo_verdicts(&fx, "venv.out", code, &log);
}

// ------------------------------------------------------------------ pre-commit

#[test]
fn the_pre_commit_hook_installs_the_wheel_with_no_rust_and_checks_the_spec() {
    if !tool(
        &["pre-commit", "--version"],
        "python3 -m pip install pre-commit",
    ) {
        return;
    }
    let Some(wheel) = wheel() else { return };
    let tmp = tempfile::Builder::new().prefix("ug-pc-").tempdir().unwrap();
    let t = tmp.path();

    // The hook repository as pre-commit sees it: .pre-commit-hooks.yaml and
    // the pyproject.toml it pip-installs (the rest of this repository plays
    // no part in the hook).
    let hooks = Fixture::git(&[
        (".pre-commit-hooks.yaml", &read(".pre-commit-hooks.yaml")),
        ("pyproject.toml", &read("pyproject.toml")),
    ]);
    // pip's offline index: the wheel, and setuptools for the shim's build
    // (virtualenv's own copy; pre-commit depends on virtualenv).
    let links = t.join("links");
    std::fs::create_dir_all(&links).unwrap();
    std::fs::copy(&wheel, links.join(wheel.file_name().unwrap())).unwrap();
    let (code, embed) = output(Command::new("python3").args([
        "-c",
        "import virtualenv, os; print(os.path.join(os.path.dirname(virtualenv.__file__), 'seed', 'wheels', 'embed'))",
    ]));
    assert_eq!(code, 0, "{embed}");
    let setuptools = std::fs::read_dir(embed.trim())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("setuptools-")
        })
        .max()
        .expect("virtualenv embeds a setuptools wheel");
    std::fs::copy(&setuptools, links.join(setuptools.file_name().unwrap())).unwrap();

    // No Rust: PATH without cargo's directories, cargo and rustup made unusable.
    let path: Vec<String> = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| {
            !d.contains(".cargo") && !d.contains("rustup") && !Path::new(d).join("cargo").exists()
        })
        .map(str::to_string)
        .collect();
    let fx = fixture();
    let try_repo = |fx: &Fixture| {
        output(
            Command::new("pre-commit")
                .args([
                    "try-repo",
                    hooks.path().to_str().unwrap(),
                    "unguard-check",
                    "--all-files",
                    "--verbose",
                ])
                .current_dir(fx.path())
                .env("PATH", path.join(":"))
                .env("CARGO", "/bin/false")
                .env("CARGO_HOME", t.join("no-cargo"))
                .env("RUSTUP_HOME", t.join("no-rustup"))
                .env("PIP_NO_INDEX", "1")
                .env("PIP_FIND_LINKS", &links)
                .env("PRE_COMMIT_HOME", t.join("pre-commit"))
                .env("TMPDIR", fx.tmp.path())
                .env_remove("GITHUB_STEP_SUMMARY"),
        )
    };
    let (code, log) = try_repo(&fx);
    assert_eq!(code, 0, "{log}");
    assert!(
        Regex::new(r"unguard check\.+Passed")
            .unwrap()
            .is_match(&log),
        "{log}"
    );
    assert!(
        log.contains("mutations apply cleanly"),
        "unguard check ran: {log}"
    );

    // A commit that rewrites the guarded line: the spec's find text is gone.
    fx.write("app.py", &SIX_FN_APP.replace("return 6", "return 3 * 2"));
    fx.git_cmd(&["add", "-A"]);
    let (code, log) = try_repo(&fx);
    assert_eq!(code, 1, "{log}");
    assert!(
        Regex::new(r"unguard check\.+Failed")
            .unwrap()
            .is_match(&log)
            && log.contains("m-f"),
        "{log}"
    );
}
