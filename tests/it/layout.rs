//! `.ci/layout_check.py` (ARCHITECTURE.md, "Checking the layout") passes on
//! this repository's `src/` and fails, naming what broke, on trees that
//! break each of its three rules.

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

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn this_repository_keeps_its_layout() {
    let (code, text) = check(&repo_root().join("src"));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("no cycle"), "{text}");
}

#[test]
fn an_import_cycle_between_files_is_named() {
    // `a` uses `b` through a re-export of its child, `b` uses `a` through
    // an imported module name: both spellings count as edges.
    let t = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a/mod.rs", "mod inner;\npub use inner::thing;\n"),
        ("a/inner.rs", "pub fn thing() { crate::b::other(); }\n"),
        (
            "b.rs",
            "use crate::a;\npub fn other() {}\npub fn x() { a::thing(); }\n",
        ),
    ]);
    let (code, text) = check(t.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("import cycle:"), "{text}");
    assert!(
        text.contains("a/inner.rs") && text.contains("b.rs"),
        "{text}"
    );
}

#[test]
fn a_child_using_its_parent_is_not_a_cycle_and_test_code_does_not_count() {
    let t = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a/mod.rs", "mod inner;\npub struct T;\npub fn f() { inner::g(); }\n"),
        ("a/inner.rs", "use super::T;\npub fn g() -> Option<T> { None }\n"),
        (
            "b.rs",
            "pub fn h() { crate::a::f(); }\n#[cfg(test)]\nmod tests { fn t() { crate::a::f(); } }\n",
        ),
    ]);
    let (code, text) = check(t.path());
    assert_eq!(code, 0, "{text}");
}

#[test]
fn too_many_top_level_files_and_a_long_file_are_named() {
    let long = "pub fn f() {}\n".repeat(1001);
    let tests =
        "#[cfg(test)]\nmod tests {\n".to_string() + &"// x\nfn t() {}\n".repeat(2000) + "}\n";
    let mut files: Vec<(String, String)> = (0..10)
        .map(|i| (format!("m{i}.rs"), String::new()))
        .collect();
    files.push(("lib.rs".into(), String::new()));
    files.push(("long.rs".into(), long));
    files.push(("short.rs".into(), format!("pub fn f() {{}}\n{tests}")));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let t = tree(&refs);
    let (code, text) = check(t.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("13 .rs files directly in"), "{text}");
    assert!(
        text.contains("long.rs: 1001 lines of non-test code"),
        "{text}"
    );
    assert!(
        !text.contains("short.rs:"),
        "test code does not count: {text}"
    );
}
