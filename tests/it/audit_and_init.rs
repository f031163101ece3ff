//! `unguard audit`, `unguard init` and `unguard catalog` on the real-SDK
//! example (`examples/sdk-server`, mcp 2.3.0 from PyPI; `bash
//! examples/sdk-server/setup.sh` creates its venv) and on the stdlib demo.

use crate::common::*;

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copy an example (tracked files only) into a fresh git repo; link `venv`.
fn example_repo(name: &str, venv: Option<&Path>) -> Fixture {
    let src = repo_root().join("examples").join(name);
    let fx = Fixture::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let n = e.file_name().to_string_lossy().into_owned();
            if [".venv", "__pycache__", ".pytest_cache"].contains(&n.as_str()) {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
                fx.write(&rel, &std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    if let Some(v) = venv {
        std::os::unix::fs::symlink(v, fx.path().join(".venv")).unwrap();
    }
    fx.write(".gitignore", ".venv\nout*/\n__pycache__/\n");
    fx.git_cmd(&["init", "-q", "-b", "main"]);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("example");
    fx
}

#[test]
fn audit_proves_every_control_of_the_sdk_example_and_init_gives_the_same_verdicts() {
    let Some(venv) = sdk_venv() else { return };
    let fx = example_repo("sdk-server", Some(&venv));
    std::fs::remove_file(fx.path().join("unguard.yaml")).unwrap();
    fx.git_cmd(&["commit", "-qam", "no spec"]);

    let (code, out, err) = fx.run(&["audit", ".", "-j", "2", "--out", "out-audit"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(err.contains("mcp 2.x (MCPServer)"), "{err}");
    assert!(err.contains(".venv/bin/python -m pytest"), "{err}");
    let audit = fx.verdicts("out-audit");
    // The controls the example has, each site a mutant, each killed.
    for id in [
        "transport-security-passed",
        "transport-security-passed-2",
        "port-forwarded-to-app",
        "allowlist-port-exact",
        "allowlist-loopback-included",
        "allowlist-no-wildcard",
        "dns-rebinding-protection-on",
        "bearer-token-compared",
        "mcp-headers-match-body",
        "mcp-header-missing-rejected",
        "full-scope-sent",
        "total-sort-order",
        "transport-error-is-error",
        "empty-result-hint",
    ] {
        assert_eq!(
            audit.get(id).map(String::as_str),
            Some("killed"),
            "{id}: {audit:?}"
        );
    }
    assert!(audit.values().all(|o| o == "killed"), "{audit:?}");
    // The grouped report: proven, present by presence only, not present.
    let report = fx.read("out-audit/audit.md");
    assert!(report.contains("### proven (killed)"), "{report}");
    assert!(
        report.contains("- **suite-timeout** (002/7)") && report.contains("at pytest.ini:4"),
        "{report}"
    );
    assert!(report.contains("### not present"), "{report}");
    assert!(!report.contains("### unproven"), "{report}");
    assert!(out.contains("## unguard audit: "), "{out}");

    // init writes the same mutations; `unguard run` on it gives the same verdicts.
    let (code, _, err) = fx.run(&["init", "."]);
    assert_eq!(code, 0, "{err}");
    let yaml = fx.read("unguard.yaml");
    assert!(
        yaml.contains("  - id: transport-security-passed-2\n"),
        "{yaml}"
    );
    assert!(yaml.contains("# sdk_server/app.py:"), "{yaml}");
    assert!(
        yaml.contains("# Semantic controls no pattern can find"),
        "{yaml}"
    );
    let (code, _, err) = fx.run(&["init", "."]);
    assert_eq!(code, 1, "init must not overwrite: {err}");
    assert!(err.contains("--force"), "{err}");
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "-j", "2", "--out", "out-run"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out-run"), audit);
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn audit_reports_a_control_whose_test_was_deleted_as_unproven() {
    let Some(venv) = sdk_venv() else { return };
    let fx = example_repo("sdk-server", Some(&venv));
    let tests = fx.read("tests/test_auth.py");
    let start = tests
        .find("def test_wrong_token_is_rejected")
        .expect("the negative token test");
    let end = tests[start..]
        .find("\n\n\ndef ")
        .map_or(tests.len(), |e| start + e + 3);
    fx.write(
        "tests/test_auth.py",
        &format!("{}{}", &tests[..start], &tests[end..]),
    );
    fx.git_cmd(&["commit", "-qam", "drop the negative token test"]);
    let (code, out, err) = fx.run(&["audit", ".", "-j", "2", "--out", "out"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("out");
    assert_eq!(v["bearer-token-compared"], "survived", "{v:?}");
    assert_eq!(
        v.values().filter(|o| *o != "killed").count(),
        1,
        "only the token check lost its proof: {v:?}"
    );
    let report = fx.read("out/audit.md");
    let unproven = report
        .split("### unproven (survived) (1)")
        .nth(1)
        .expect("an unproven section");
    assert!(
        unproven
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("- **bearer-token-compared** (002/4)")),
        "{report}"
    );
}

#[test]
fn portfolio_prints_one_matrix_of_repos_and_controls() {
    let demo = example_repo("demo-server", None);
    std::fs::remove_file(demo.path().join("unguard.yaml")).unwrap();
    demo.git_cmd(&["commit", "-qam", "no spec"]);
    // A repo without MCP code: every control not present.
    let plain = Fixture::git(&[
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "import unittest\nimport calc\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n",
        ),
        ("tests/__init__.py", ""),
    ]);
    let list = Fixture::new();
    list.write(
        "servers.yaml",
        &format!(
            "- {}\n- {}\n",
            demo.path().display(),
            plain.path().display()
        ),
    );
    let out_dir = list.path().join("out");
    let (code, out, err) = list.run(&[
        "audit",
        "--portfolio",
        "servers.yaml",
        "--out",
        out_dir.to_str().unwrap(),
        // Generous: it is the baselines' timeout too, and a loaded machine
        // starts Python slowly.
        "--timeout",
        "15s",
        "-j",
        "2",
    ]);
    // The demo has its deliberate gaps: the portfolio's exit is the worst one.
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let matrix = out
        .split("## unguard audit portfolio")
        .nth(1)
        .expect("the matrix");
    let header = matrix.lines().find(|l| l.starts_with("| control")).unwrap();
    let demo_name = demo
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(header.contains(&demo_name), "{header}");
    let row = |id: &str| {
        matrix
            .lines()
            .find(|l| l.starts_with(&format!("| {id} ")))
            .unwrap_or_else(|| panic!("no row {id}:\n{matrix}"))
            .to_string()
    };
    assert!(
        row("bearer-token-compared").contains("✅ proven"),
        "{matrix}"
    );
    assert!(
        row("handle-expiry-checked").contains("❌ unproven"),
        "{matrix}"
    );
    assert!(
        row("bearer-token-compared").contains("— not present"),
        "{matrix}"
    );
    assert!(out_dir
        .join("1-".to_string() + &demo_name)
        .join("audit.md")
        .exists());

    let (code, _, err) = list.run(&["audit", "--portfolio", "nope.yaml"]);
    assert_eq!(code, 1);
    assert!(err.contains("nope.yaml"), "{err}");
    list.write("bad.yaml", "servers: [a]\n");
    let (code, _, err) = list.run(&["audit", "--portfolio", "bad.yaml"]);
    assert_eq!(code, 1);
    assert!(err.contains("a YAML list of repository paths"), "{err}");
}

#[test]
fn audit_without_a_test_command_says_how_to_give_one() {
    let fx = Fixture::git(&[("notes.txt", "nothing to test\n")]);
    let (code, _, err) = fx.run(&["audit", "."]);
    assert_eq!(code, 1);
    assert!(err.contains("no test command found"), "{err}");
    assert!(err.contains("--test-command"), "{err}");
}

#[test]
fn catalog_lists_every_operator() {
    let fx = Fixture::new();
    let (code, out, _) = fx.run(&["catalog"]);
    assert_eq!(code, 0);
    let ids: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(ids.len(), unguard::catalog::catalog().len());
    assert!(ids.contains(&"transport-security-passed"));
    let (code, md, _) = fx.run(&["catalog", "--markdown"]);
    assert_eq!(code, 0);
    assert_eq!(md, unguard::catalog::readme_section());
}

#[test]
fn audit_says_which_files_it_could_not_scan_for_their_names() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    fx.write("notes.txt", "nothing to test\n");
    let odd = fx.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.py"));
    std::fs::write(&odd, "def f(token):\n    return token == 'x'\n").unwrap();
    let (_, _, err) = fx.run(&["audit", ".", "--test-command", "true"]);
    assert!(
        err.contains("1 file(s) not scanned: their names are not UTF-8"),
        "{err}"
    );
    assert!(err.contains("caf\u{FFFD}.py"), "{err}");
}
