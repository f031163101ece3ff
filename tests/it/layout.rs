//! `.ci/layout_check.py` (ARCHITECTURE.md, "Checking the layout") passes on
//! this repository's `src/` and fails, naming what broke, on trees that
//! break each of its rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run the check on `src`: (exit code, stdout + stderr).
fn check(src: &Path) -> (i32, String) {
    let out = Command::new("python3")
        .arg(repo_root().join(".ci/layout_check.py"))
        .arg(src)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// An ARCHITECTURE.md naming every given file and folder by its path, but
/// those in `leave_out`.
fn doc_naming(files: &[(&str, &str)], leave_out: &[&str]) -> String {
    let mut named = BTreeSet::new();
    for (rel, _) in files {
        let mut dir = Path::new(rel).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            named.insert(format!("`src/{}/`", d.display()));
            dir = d.parent();
        }
        named.insert(format!("`src/{rel}`"));
    }
    named
        .into_iter()
        .filter(|n| !leave_out.iter().any(|l| n == &format!("`src/{l}`")))
        .map(|n| n + "\n")
        .collect()
}

/// A `src/` of `files` in a temp dir, with an ARCHITECTURE.md beside it that
/// names every file and folder but those in `leave_out`.
fn tree_leaving_out(files: &[(&str, &str)], leave_out: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join("src").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(
        dir.path().join("ARCHITECTURE.md"),
        doc_naming(files, leave_out),
    )
    .unwrap();
    dir
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    tree_leaving_out(files, &[])
}

fn check_tree(t: &tempfile::TempDir) -> (i32, String) {
    check(&t.path().join("src"))
}

#[test]
fn this_repository_keeps_its_layout() {
    let (code, text) = check(&repo_root().join("src"));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("no cycle"), "{text}");
    assert!(text.contains("point upstream only"), "{text}");
    assert!(
        text.contains("every file named in ARCHITECTURE.md"),
        "{text}"
    );
}

#[test]
fn an_import_cycle_between_files_is_named() {
    // `a` uses `b` through a re-export of its child, `b` uses `a` through
    // an imported module name: both spellings count as edges.
    let t = tree(&[
        ("lib.rs", "pub mod engine;\n"),
        ("engine/mod.rs", "pub mod a;\npub mod b;\n"),
        ("engine/a/mod.rs", "mod inner;\npub use inner::thing;\n"),
        (
            "engine/a/inner.rs",
            "pub fn thing() { crate::engine::b::other(); }\n",
        ),
        (
            "engine/b.rs",
            "use crate::engine::a;\npub fn other() {}\npub fn x() { a::thing(); }\n",
        ),
    ]);
    let (code, text) = check_tree(&t);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("import cycle:"), "{text}");
    assert!(
        text.contains("engine/a/inner.rs") && text.contains("engine/b.rs"),
        "{text}"
    );
}

#[test]
fn a_child_using_its_parent_is_not_a_cycle_and_test_code_does_not_count() {
    let t = tree(&[
        ("lib.rs", "pub mod engine;\npub mod gate;\n"),
        (
            "engine/mod.rs",
            "mod inner;\npub struct T;\npub fn f() { inner::g(); }\n",
        ),
        (
            "engine/inner.rs",
            "use super::T;\npub fn g() -> Option<T> { None }\n",
        ),
        (
            "gate/mod.rs",
            "pub fn h() {}\n#[cfg(test)]\nmod tests { fn t() { crate::engine::f(); } }\n",
        ),
    ]);
    let (code, text) = check_tree(&t);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn too_many_top_level_files_and_a_long_file_are_named() {
    let long = "pub fn f() {}\n".repeat(1001);
    let tests =
        "#[cfg(test)]\nmod tests {\n".to_string() + &"// x\nfn t() {}\n".repeat(2000) + "}\n";
    let mut files: Vec<(String, String)> = ["error", "globs", "progress", "config", "cli"]
        .iter()
        .chain(&["commands", "spec", "plan", "run", "outcome"])
        .map(|m| (format!("{m}.rs"), String::new()))
        .collect();
    files.push(("lib.rs".into(), String::new()));
    files.push(("gate.rs".into(), long));
    files.push(("report.rs".into(), format!("pub fn f() {{}}\n{tests}")));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let t = tree(&refs);
    let (code, text) = check_tree(&t);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("13 .rs files directly in"), "{text}");
    assert!(
        text.contains("gate.rs: 1001 lines of non-test code"),
        "{text}"
    );
    assert!(
        !text.contains("report.rs:"),
        "test code does not count: {text}"
    );
}

#[test]
fn a_folder_using_one_below_it_is_named_with_the_file_and_the_cycle() {
    // spec is the first stage: it may not use gate, the last. gate may use
    // results, not spec; together they make a folder cycle.
    let t = tree(&[
        ("lib.rs", "pub mod spec;\npub mod gate;\npub mod results;\n"),
        ("spec/mod.rs", "pub mod model;\n"),
        (
            "spec/model.rs",
            "pub struct S;\npub fn f() { crate::gate::judge(); }\n",
        ),
        (
            "gate/mod.rs",
            "use crate::spec::model::S;\npub fn judge() -> Option<S> { crate::results::r(); None }\n",
        ),
        ("results/mod.rs", "pub fn r() {}\n"),
    ]);
    let (code, text) = check_tree(&t);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("folder edge spec → gate (below it): src/spec/model.rs uses gate"),
        "{text}"
    );
    assert!(
        text.contains("folder edge gate → spec (not in its row of LAYERS)"),
        "{text}"
    );
    assert!(
        text.contains("folder cycle (2 folders: gate, spec)"),
        "{text}"
    );
    assert!(
        !text.contains("gate → results"),
        "gate may use results: {text}"
    );
    // Without the back edge the tree passes: the check fails for it alone.
    let ok = tree(&[
        ("lib.rs", "pub mod spec;\npub mod gate;\npub mod results;\n"),
        ("spec/mod.rs", "pub struct S;\n"),
        ("gate/mod.rs", "pub fn judge() { crate::results::r(); }\n"),
        ("results/mod.rs", "pub fn r() {}\n"),
    ]);
    let (code, text) = check_tree(&ok);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_leaf_is_used_by_all_and_uses_only_leaves() {
    // run::shell is a leaf: spec (above run) may use it, and it may use
    // error (a leaf) but not spec.
    let ok = tree(&[
        ("lib.rs", "pub mod error;\npub mod run;\npub mod spec;\n"),
        ("error.rs", "pub struct Error;\n"),
        ("run/mod.rs", "pub mod shell;\n"),
        (
            "run/shell.rs",
            "pub fn quote() -> Option<crate::error::Error> { None }\n",
        ),
        (
            "spec/mod.rs",
            "pub fn f() { crate::run::shell::quote(); }\n",
        ),
    ]);
    let (code, text) = check_tree(&ok);
    assert_eq!(code, 0, "{text}");

    let bad = tree(&[
        ("lib.rs", "pub mod run;\npub mod spec;\n"),
        ("run/mod.rs", "pub mod shell;\npub struct Exit;\n"),
        (
            "run/shell.rs",
            "use super::Exit;\npub fn quote() -> Option<Exit> { crate::spec::g(); None }\n",
        ),
        ("spec/mod.rs", "pub fn g() {}\n"),
    ]);
    let (code, text) = check_tree(&bad);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("leaf src/run/shell.rs uses src/spec/mod.rs, which is not a leaf"),
        "{text}"
    );
    assert!(
        text.contains("leaf src/run/shell.rs uses src/run/mod.rs, which is not a leaf"),
        "its own parent counts for a leaf: {text}"
    );
}

#[test]
fn super_inside_an_inline_module_is_the_file_itself() {
    // In `run/platform/mod.rs`, `mod linux { use super::Proc; }` names the
    // file's own `Proc`: no edge, and the leaf stays a leaf. One `super`
    // more names `run`, which a leaf may not use.
    let files = |linux: &'static str| {
        tree(&[
            ("lib.rs", "pub mod run;\n"),
            ("run/mod.rs", "pub mod platform;\npub struct Exit;\n"),
            ("run/platform/mod.rs", linux),
        ])
    };
    let ok =
        files("pub struct Proc;\nmod linux {\n    use super::Proc;\n    pub fn f(_: Proc) {}\n}\n");
    let (code, text) = check_tree(&ok);
    assert_eq!(code, 0, "{text}");

    let up = files("mod linux {\n    pub fn f(_: super::super::Exit) {}\n}\n");
    let (code, text) = check_tree(&up);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("leaf src/run/platform/mod.rs uses src/run/mod.rs"),
        "{text}"
    );
}

#[test]
fn a_file_or_folder_missing_from_architecture_md_is_named() {
    let files = [
        ("lib.rs", "pub mod run;\npub mod widgets;\n"),
        ("run/mod.rs", "pub mod platform;\npub mod extra;\n"),
        ("run/extra.rs", ""),
        ("run/platform/mod.rs", ""),
        ("widgets/mod.rs", ""),
    ];
    let t = tree_leaving_out(&files, &["run/extra.rs", "run/platform/"]);
    let (code, text) = check_tree(&t);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("src/run/extra.rs: file not named in ARCHITECTURE.md"),
        "{text}"
    );
    assert!(
        text.contains("src/run/platform/: folder not named in ARCHITECTURE.md"),
        "{text}"
    );
    assert!(
        text.contains("folder `widgets` is in neither LAYERS nor LEAVES"),
        "{text}"
    );
    // A file is also named by its stem, in backticks, in the row that names its folder.
    std::fs::write(
        t.path().join("ARCHITECTURE.md"),
        doc_naming(&files, &["run/extra.rs"])
            + "| run | `src/run/` (`mod`, `extra`), `src/run/platform/` | one run |\n",
    )
    .unwrap();
    let (_, text) = check_tree(&t);
    assert!(!text.contains("not named"), "{text}");
}

#[test]
fn the_table_of_folder_edges_points_upstream_only() {
    // LAYERS itself: a row allowing a folder below it fails.
    let out = Command::new("python3")
        .current_dir(repo_root().join(".ci"))
        .args([
            "-c",
            "import layout_check as L\n\
             print(L.check_layers('src', {}, {}, {}, layers=[('spec', ['gate']), ('gate', [])]))\n\
             print(L.check_layers('src', {}, {}, {}))",
        ])
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .is_some_and(|l| l.contains("`spec` may use `gate`, which is not above it")),
        "{text}"
    );
    assert_eq!(lines.next(), Some("[]"), "the real table: {text}");
}
