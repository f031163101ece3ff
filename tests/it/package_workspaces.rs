//! Workspaces installed by real package managers (pnpm, npm, yarn classic
//! with its `node_modules` linker): package `a`'s test imports the scoped
//! package `@ws/b` through the link the manager made in a git-ignored
//! `node_modules` (pnpm: `packages/a/node_modules/@ws/b -> ../../../b`;
//! npm and yarn: `node_modules/@ws/b -> ../../packages/b`). In git mode the
//! copy's `node_modules` must lead to the copy's `b`, where the mutant is:
//! each mutant of `b` is killed by `a`'s test at -j 1 and -j 2, and the
//! user's checkout, `node_modules` included, is byte-identical afterwards.
//!
//! The workspaces have no external dependency: every install runs offline,
//! with `HOME` in a temp dir (the managers' caches land there).

use crate::common::packaging::tool;
use crate::common::*;
use std::process::Command;

const B_INDEX: &str = "exports.allowed = (role) => role === \"admin\";\n\
                       exports.level = (role) => (role === \"admin\" ? 2 : 0);\n";

const A_TEST: &str = r#"const test = require("node:test");
const assert = require("node:assert");
const { allowed, level } = require("@ws/b");
test("a guest is refused", () => assert.strictEqual(allowed("guest"), false));
test("an admin is allowed", () => assert.strictEqual(allowed("admin"), true));
test("a guest has no level", () => assert.strictEqual(level("guest"), 0));
"#;

/// `a` depends on `@ws/b` as `dep` says (`workspace:*` for pnpm, the
/// version for npm and yarn).
fn workspace(manager_files: &[(&str, &str)], dep: &str) -> Fixture {
    let spec = SpecBuilder::new("node --test packages/a/test.js")
        .preset("generic")
        .timeout("60s")
        .mutation(mutation(
            "b-allows-all",
            "packages/b/index.js",
            "role === \"admin\";",
            "true;",
        ))
        .mutation(mutation(
            "b-levels-all",
            "packages/b/index.js",
            "? 2 : 0",
            "? 2 : 2",
        ))
        .build();
    let a_package = format!(
        "{{\"name\": \"a\", \"version\": \"1.0.0\", \"dependencies\": {{\"@ws/b\": \"{dep}\"}}}}\n"
    );
    let mut files = vec![
        (".gitignore", "node_modules/\nout/\n"),
        (
            "packages/b/package.json",
            "{\"name\": \"@ws/b\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n",
        ),
        ("packages/b/index.js", B_INDEX),
        ("packages/a/package.json", a_package.as_str()),
        ("packages/a/test.js", A_TEST),
        ("unguard.yaml", spec.as_str()),
    ];
    files.extend_from_slice(manager_files);
    Fixture::git(files.as_slice())
}

/// Run `argv` in the fixture (offline, `HOME` in a temp dir); panics with
/// its output when it fails.
fn install(fx: &Fixture, home: &tempfile::TempDir, argv: &[&str]) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(fx.path())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("npm_config_update_notifier", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    assert!(
        out.status.success(),
        "{argv:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Install with `argv`, check the link `link` the manager made, then run
/// unguard in git mode at -j 1 and -j 2: both mutants of `b` killed, the
/// checkout byte-identical.
fn killed_through_the_workspace_link(fx: &Fixture, argv: &[&str], link: &str) {
    let home = tempfile::tempdir().unwrap();
    install(fx, &home, argv);
    let root = fx.path().canonicalize().unwrap();
    assert!(
        std::fs::symlink_metadata(root.join(link)).is_ok_and(|m| m.file_type().is_symlink()),
        "{argv:?} made no workspace link at {link}"
    );
    // The suite is green outside unguard.
    let (code, out) = crate::common::packaging::output(
        Command::new("node")
            .args(["--test", "packages/a/test.js"])
            .current_dir(&root),
    );
    assert_eq!(code, 0, "node --test outside unguard:\n{out}");
    let before = tree_state(&root, &[".git", "out"]);
    for jobs in ["1", "2"] {
        let (code, out, err) = fx.run(&["run", "--out", "out", "-j", jobs]);
        let c = ctx(code, &out, &err);
        assert!(!err.contains("baseline: red"), "-j {jobs}: {c}");
        let v = fx.verdicts("out");
        assert_eq!(v["b-allows-all"], "killed", "-j {jobs}: {c}");
        assert_eq!(v["b-levels-all"], "killed", "-j {jobs}: {c}");
        assert_eq!(code, 0, "-j {jobs}: {c}");
        assert_eq!(
            tree_state(&root, &[".git", "out"]),
            before,
            "-j {jobs}: the checkout changed"
        );
        assert!(fx.leftover_tmp().is_empty(), "-j {jobs}: scratch dirs left");
    }
}

fn have_node() -> bool {
    tool(&["node", "--version"], "apt-get install nodejs npm")
}

#[test]
fn pnpm_workspace_package_is_mutated_in_the_copy() {
    if !have_node() || !tool(&["pnpm", "--version"], "npm install -g pnpm") {
        return;
    }
    let fx = workspace(
        &[
            ("package.json", "{\"private\": true}\n"),
            ("pnpm-workspace.yaml", "packages:\n  - \"packages/*\"\n"),
        ],
        "workspace:*",
    );
    killed_through_the_workspace_link(
        &fx,
        &["pnpm", "install", "--offline"],
        "packages/a/node_modules/@ws/b",
    );
}

#[test]
fn npm_workspace_package_is_mutated_in_the_copy() {
    if !have_node() || !tool(&["npm", "--version"], "apt-get install npm") {
        return;
    }
    let fx = workspace(
        &[(
            "package.json",
            "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n",
        )],
        "1.0.0",
    );
    killed_through_the_workspace_link(
        &fx,
        &["npm", "install", "--offline", "--no-audit", "--no-fund"],
        "node_modules/@ws/b",
    );
}

#[test]
fn yarn_workspace_package_is_mutated_in_the_copy() {
    if !have_node() || !tool(&["yarn", "--version"], "npm install -g yarn") {
        return;
    }
    let fx = workspace(
        &[(
            "package.json",
            "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n",
        )],
        "1.0.0",
    );
    killed_through_the_workspace_link(
        &fx,
        &["yarn", "install", "--offline", "--non-interactive"],
        "node_modules/@ws/b",
    );
}
