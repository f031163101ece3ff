//! The demo table in README.md is the one the binary really prints, and the
//! demo shows every outcome it promises.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// Table rows as cells, without the time column (the last one).
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|--"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect();
            cells[..cells.len() - 1].to_vec()
        })
        .collect()
}

fn summary(text: &str) -> String {
    text.lines()
        .find(|l| l.contains(" mutants: "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn readme_demo_table_matches_a_real_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("<!-- demo-table-start -->")
        .expect("start marker");
    let end = readme.find("<!-- demo-table-end -->").expect("end marker");
    let block = &readme[start..end];

    let out = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("unguard")
        .unwrap()
        .args(["run", "examples/demo-server", "--out"])
        .arg(out.path().join("demo.out"))
        .current_dir(root)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(2),
        "the demo fails the gate on purpose\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let real = rows(&stdout);
    assert_eq!(real.len(), 15, "header + 14 mutants:\n{stdout}");
    assert_eq!(
        rows(block),
        real,
        "README demo table is stale; paste the real table:\n{stdout}"
    );
    assert_eq!(summary(block), summary(&stdout));

    // Every outcome the demo promises is really there.
    for outcome in ["killed", "survived", "timeout", "wrong-reason"] {
        assert!(
            real.iter().any(|r| r[3] == outcome),
            "no {outcome} row:\n{stdout}"
        );
    }
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "scratch dirs left behind"
    );
}
