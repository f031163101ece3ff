//! Kill-first on the real-SDK example (`examples/sdk-server`, mcp 2.3.0
//! from PyPI; `bash examples/sdk-server/setup.sh` creates its venv): the
//! same verdicts as `--full`, and a subset kill confirmed by its red tests
//! alone (issue 17).

use crate::common::*;

use std::path::PathBuf;

/// The SDK example: every verdict the same with kill-first as with
/// `--full`; every kill by its expected killers alone. Its
/// `allowlist-loopback-port-exact` mutant turns one of its three expected
/// killers red: that test alone confirms the kill, after it ran green alone
/// on the unmutated copy.
#[test]
fn the_sdk_example_gives_the_same_verdicts_with_and_without_selection() {
    if sdk_venv().is_none() {
        return;
    }
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sdk-server");
    let fx = Fixture::new();
    let run = |out: &str, extra: &[&str]| {
        let dir = fx.path().join(out);
        let mut args = vec![
            "run".to_string(),
            example.display().to_string(),
            "--out".into(),
            dir.display().to_string(),
            "-j".into(),
            "2".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = fx.run(&refs);
        (dir, ctx(code, &out, &err))
    };
    let (sel, said) = run("sel", &[]);
    let o: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sel.join("outcomes.json")).unwrap()).unwrap();
    let mutants = o["mutants"].as_array().unwrap();
    assert_eq!(mutants.len(), 20, "{said}");
    for m in mutants {
        // The one tightening mutant without a positive twin, allowed with a
        // reason in the example's spec: its expected killer stays green, so
        // the full suite runs and decides.
        let expected = if m["id"] == "origin-http-scheme-included" {
            (Some("survived"), serde_json::json!(true))
        } else {
            (Some("killed"), serde_json::json!(false))
        };
        assert_eq!(
            (m["outcome"].as_str(), m["full_suite"].clone()),
            expected,
            "{m:#}"
        );
    }
    let m = mutant(&o, "allowlist-loopback-port-exact");
    let red = m["red_tests"].as_array().unwrap().clone();
    assert_eq!(
        m["subset_runs"][0]["tests"].as_array().unwrap().len(),
        3,
        "{m:#}"
    );
    assert_eq!(red.len(), 1, "{m:#}");
    // Its confirmation ran the red test alone (pytest's summary line), and
    // that test ran green alone on the unmutated copy first.
    let log =
        std::fs::read_to_string(sel.join("allowlist-loopback-port-exact@recheck-1.log")).unwrap();
    assert!(log.contains("1 failed, 58 deselected"), "{log}");
    let alone = o["subset_checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tests"] == serde_json::Value::Array(red.clone()));
    assert_eq!(
        alone.map(|c| &c["green"]),
        Some(&serde_json::json!(true)),
        "{}",
        o["subset_checks"]
    );
    let (full, said_full) = run("full", &["--full"]);
    assert_eq!(verdicts_in(&sel), verdicts_in(&full), "{said}\n{said_full}");
}
