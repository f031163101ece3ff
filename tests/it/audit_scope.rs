//! What `audit` and `init` scan: server code by default (not tests, fixtures,
//! scripts, docs, examples, benchmarks), narrowed or widened by `--file`,
//! `--skip-file`, `--control` and `--no-default-excludes`; `audit --list`
//! shows the sites without running anything.

use crate::common::*;

/// The same control (a call that passes `transport_security=`) in server
/// code and in places that are not server code.
const APP: &str = "from mcp.server.fastmcp import FastMCP\n\
\n\
def build(policy):\n    \
    return FastMCP(\"inventory\", transport_security=policy)\n";

fn repo() -> Fixture {
    Fixture::git(&[
        ("src/inventory/app.py", APP),
        ("tests/helpers.py", APP),
        ("src/inventory/test_app.py", APP),
        ("scripts/dev_server.py", APP),
        ("examples/server.py", APP),
        ("integtests/project.py", APP),
        ("docs/conf.py", APP),
    ])
}

/// The `transport-security-passed` sites `audit --list --json` reports.
fn listed(fx: &Fixture, extra: &[&str]) -> Vec<(String, u64, String)> {
    fx.audit_sites(extra)
        .into_iter()
        .filter(|(_, _, c)| c == "transport-security-passed")
        .collect()
}

fn files(sites: &[(String, u64, String)]) -> Vec<&str> {
    let mut f: Vec<&str> = sites.iter().map(|(f, _, _)| f.as_str()).collect();
    f.sort_unstable();
    f.dedup();
    f
}

#[test]
fn by_default_only_server_code_is_scanned() {
    let fx = repo();
    let sites = listed(&fx, &[]);
    assert_eq!(files(&sites), ["src/inventory/app.py"], "{sites:?}");
    assert_eq!(sites[0].1, 4, "the line of the keyword argument");
    // The plain listing says how much the defaults left out, and runs nothing.
    let (code, out, err) = fx.run(&["audit", "--list", "."]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "src/inventory/app.py:4\ttransport-security-passed\ttransport-security-passed\t"
        ),
        "{out}"
    );
    assert!(
        err.contains("6 file(s) of tests, fixtures, scripts"),
        "{err}"
    );
    assert!(
        !fx.path().join("unguard.out").exists(),
        "--list runs nothing"
    );
}

#[test]
fn file_skip_file_and_no_default_excludes_change_the_scope() {
    let fx = repo();
    // --file narrows, and names files the defaults would skip.
    let sites = listed(&fx, &["--file", "scripts"]);
    assert_eq!(files(&sites), ["scripts/dev_server.py"], "{sites:?}");
    let sites = listed(
        &fx,
        &["--file", "src/**/*.py", "--file", "examples/server.py"],
    );
    assert_eq!(
        files(&sites),
        ["examples/server.py", "src/inventory/app.py"]
    );
    // --skip-file wins over everything.
    let sites = listed(&fx, &["--skip-file", "src/inventory/app.py"]);
    assert!(sites.is_empty(), "{sites:?}");
    // --no-default-excludes scans the rest too (this operator's own
    // `exclude` still keeps test files out).
    let sites = listed(&fx, &["--no-default-excludes"]);
    assert_eq!(
        files(&sites),
        [
            "docs/conf.py",
            "examples/server.py",
            "integtests/project.py",
            "scripts/dev_server.py",
            "src/inventory/app.py"
        ],
        "{sites:?}"
    );
}

#[test]
fn control_narrows_and_an_unknown_control_is_refused() {
    let fx = repo();
    let (code, out, err) = fx.run(&["audit", "--list", "--control", "bearer-token-compared", "."]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("transport-security-passed"), "{out}");
    let (code, _, err) = fx.run(&["audit", "--list", "--control", "transport-security", "."]);
    assert_ne!(code, 0);
    assert!(
        err.contains("--control \"transport-security\": no such control")
            && err.contains("transport-security-passed"),
        "{err}"
    );
    // init takes the same scope: its spec has the server's site only.
    let (code, out, err) = fx.run(&["init", "--stdout", "--test-command", "true", "."]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("file: \"src/inventory/app.py\""), "{out}");
    assert!(!out.contains("scripts/dev_server.py"), "{out}");
    let (code, out, err) = fx.run(&[
        "init",
        "--stdout",
        "--test-command",
        "true",
        "--file",
        "scripts",
        ".",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("file: \"scripts/dev_server.py\""), "{out}");
    assert!(!out.contains("src/inventory/app.py"), "{out}");
}

/// A server that starts from `scripts/` (`"dev": "tsx scripts/start-server.ts"`):
/// the start script and the excluded files it imports are server code; a
/// release helper next to them is not.
#[test]
fn the_start_script_package_json_runs_and_its_imports_are_scanned() {
    const GATE: &str = "export function gate(req: any, res: any) {\n  if (!req.headers.authorization) {\n    return res.status(401).json({ error: 'Unauthorized' });\n  }\n}\n";
    let fx = Fixture::git(&[
        (
            "package.json",
            r#"{"name": "srv", "scripts": {"dev": "tsx watch scripts/start-server.ts", "release": "tsx scripts/release.ts"}}"#,
        ),
        (
            "scripts/start-server.ts",
            "import { gate } from './auth-gate.js'\nexport const app = gate;\n",
        ),
        ("scripts/auth-gate.ts", GATE),
        ("scripts/release.ts", GATE),
        ("src/index.ts", "export const x = 1;\n"),
    ]);
    let (code, out, err) = fx.run(&["audit", "--list", "--json", "."]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let mut auth: Vec<(String, u64)> = doc["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .filter(|s| s["control"] == "auth-required")
        .map(|s| {
            (
                s["file"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
            )
        })
        .collect();
    auth.dedup();
    assert_eq!(auth, [("scripts/auth-gate.ts".to_string(), 2)], "{out}");
}

/// Documentation and example code outside the folders the defaults name
/// (issue 35): a `docs_src/` tree the Markdown includes, a
/// `client.examples.ts`, a tutorial nobody imports. Only the server's own
/// sites are listed, among them those of an imported module whose docstring
/// says "example" in passing; the listing says what it set aside and why,
/// and `--file` scans it again.
#[test]
fn docs_trees_and_example_files_are_set_aside_by_content_and_place() {
    const GATE: &str = "export function gate(req: any, res: any) {\n  if (!req.headers.authorization) {\n    return res.status(401).json({ error: 'Unauthorized' });\n  }\n}\n";
    let notes = format!(
        "\"\"\"Notes on items: for example, a note's title and body.\"\"\"\n{}",
        APP.replace("def build", "def build_notes")
    );
    let fx = Fixture::git(&[
        ("src/inventory/__init__.py", ""),
        (
            "src/inventory/app.py",
            &format!("from inventory.notes import build_notes\n{APP}"),
        ),
        ("src/inventory/notes.py", &notes),
        ("src/gate.ts", GATE),
        ("docs_src/__init__.py", ""),
        ("docs_src/serve/app_http.py", APP),
        ("docs_src/serve/app_stdio.py", APP),
        (
            "docs/serving.md",
            "# Serving\n\n{* ../docs_src/serve/app_http.py hl[4] *}\n\n--8<-- \"docs_src/serve/app_stdio.py\"\n",
        ),
        ("tests/test_docs.py", "from docs_src.serve import app_http\n"),
        ("client.examples.ts", GATE),
        (
            "serve_http.py",
            &format!("\"\"\"Tutorial: serve the inventory over HTTP.\"\"\"\n{APP}"),
        ),
    ]);
    let sites = fx.audit_sites(&[]);
    let of = |control: &str| -> Vec<String> {
        let mut f: Vec<String> = sites
            .iter()
            .filter(|(_, _, c)| c == control)
            .map(|(f, _, _)| f.clone())
            .collect();
        f.dedup();
        f
    };
    assert_eq!(
        of("transport-security-passed"),
        ["src/inventory/app.py", "src/inventory/notes.py"],
        "{sites:?}"
    );
    assert_eq!(of("auth-required"), ["src/gate.ts"], "{sites:?}");
    let (code, _, err) = fx.run(&["audit", "--list", "."]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "set aside as documentation/examples: docs_src/ (3 files: the Markdown includes them",
        "set aside as documentation/examples: 1 file named as examples that no shipped code imports (client.examples.ts)",
        "set aside as documentation/examples: 1 file whose header presents an example, tutorial or demo that no shipped code imports (serve_http.py)",
    ] {
        assert!(err.contains(line), "{line}\n{err}");
    }
    let (_, out, _) = fx.run(&["audit", "--list", "--json", "."]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(doc["set_aside"][0]["dir"], "docs_src/", "{out}");
    assert_eq!(doc["set_aside"][0]["why"], "included-by-docs", "{out}");
    // --file names them: scanned.
    let sites = listed(&fx, &["--file", "docs_src", "--file", "serve_http.py"]);
    assert_eq!(
        files(&sites),
        [
            "docs_src/serve/app_http.py",
            "docs_src/serve/app_stdio.py",
            "serve_http.py"
        ]
    );
    let sites = listed(&fx, &["--no-default-excludes"]);
    assert!(
        files(&sites).contains(&"docs_src/serve/app_http.py"),
        "{sites:?}"
    );
}
