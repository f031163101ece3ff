//! The `no-coverage` outcome through every output: the gate, `unguard merge`
//! and each `unguard report` format. A real sharded run of the six-function
//! fixture, then its one survivor's row rewritten as the per-test coverage run
//! would decide it (`no-coverage`, reason `no-test-executes`, the detail of
//! `outcome::no_coverage`), so everything downstream of the verdict is the
//! real binary's.

use crate::common::*;

use serde_json::Value;

/// The spec's three mutants: `m-a` and `m-b` are killed, `m-f` survives
/// (`check.py` never calls `f`).
const ONLY: [&str; 4] = ["--only", "m-a", "m-b", "m-f"];

fn fixture() -> Fixture {
    Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &six_fn_spec().build()),
        (".gitignore", "out*/\nmerged/\n__pycache__/\n"),
    ])
}

fn mutant<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no mutant {id} in {v}"))
}

/// `unguard report DIR --format F`: exits 0 whatever the gate said.
fn report(fx: &Fixture, dir: &str, format: &str) -> String {
    let (code, out, err) = fx.run(&["report", dir, "--format", format]);
    assert_eq!(code, 0, "--format {format}: {}", ctx(code, &out, &err));
    out
}

/// Two shards of the run, `m-f`'s row rewritten to no-coverage in its
/// shard; returns the fixture and `m-f`'s detail.
fn shards_with_a_no_coverage_row() -> (Fixture, String) {
    let fx = fixture();
    let mut holder = None;
    for k in 1..=2 {
        let dir = format!("out-{k}");
        let mut args = vec!["run", "-j", "1", "--shard"];
        let shard = format!("{k}/2");
        args.extend([shard.as_str(), "--out", dir.as_str()]);
        args.extend(ONLY);
        let (code, out, err) = fx.run(&args);
        assert!(code == 0 || code == 2, "{}", ctx(code, &out, &err));
        if fx.outcomes(&dir)["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "m-f")
        {
            holder = Some(dir);
        }
    }
    let dir = holder.expect("a shard holds m-f");
    let mut v = fx.outcomes(&dir);
    let line = {
        let m = mutant(&v, "m-f");
        assert_eq!(m["outcome"], "survived", "{m}");
        m["line"].as_u64().unwrap() as usize
    };
    let detail = unguard::outcome::no_coverage("app.py", &[line], 1).detail();
    let m = v["mutants"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["id"] == "m-f")
        .unwrap();
    // As the coverage run leaves it: nothing ran, so no log, exit or tests.
    m["outcome"] = "no-coverage".into();
    m["reason"] = "no-test-executes".into();
    m["detail"] = detail.clone().into();
    m["exit"] = Value::Null;
    m["log_file"] = Value::Null;
    m["tests_total"] = Value::Null;
    m["full_suite"] = false.into();
    fx.write(
        &format!("{dir}/outcomes.json"),
        &serde_json::to_string_pretty(&v).unwrap(),
    );
    (fx, detail)
}

#[test]
fn no_coverage_fails_the_gate_and_shows_in_every_report() {
    let (fx, detail) = shards_with_a_no_coverage_row();
    assert_eq!(
        detail,
        "no test executes line 12 of app.py (coverage run: 1 test measured); nothing ran"
    );

    // merge judges the rows anew: the no-coverage mutant is the only
    // undetected one, and it fails the gate like a survivor.
    let (code, out, err) = fx.run(&["merge", "out-1", "out-2", "--out", "merged"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let all = format!("{out}{err}");
    assert!(
        all.contains("3 mutants: 2 killed, 1 no-coverage; score 66.7% (2/3)"),
        "{all}"
    );
    assert!(all.contains(&format!("no-coverage m-f: {detail}")), "{all}");
    assert!(
        all.contains("1 undetected mutant(s) where max_survived allows 0: 1 no-coverage (no test executes the mutated lines)"),
        "{all}"
    );
    let v = fx.outcomes("merged");
    let s = &v["summary"];
    assert_eq!(
        (
            &s["no_coverage"],
            &s["survived"],
            &s["detected"],
            &s["scored"]
        ),
        (&1.into(), &0.into(), &2.into(), &3.into()),
        "{s}"
    );
    assert_eq!(
        (&v["gate"]["exit_code"], &v["gate"]["passed"]),
        (&2.into(), &false.into())
    );

    // json: the row as the model has it, valid against the outcome's schema.
    let json: Value = serde_json::from_str(&report(&fx, "merged", "json")).unwrap();
    let m = mutant(&json, "m-f");
    assert_eq!(
        (&m["outcome"], &m["reason"], &m["detail"]),
        (
            &"no-coverage".into(),
            &"no-test-executes".into(),
            &detail.clone().into()
        )
    );

    // md: the table, the findings section right after survivors, the gate.
    let md = report(&fx, "merged", "md");
    assert!(md.contains("| 🕳️ no-coverage |"), "{md}");
    assert!(
        md.contains("<summary>🕳️ <b>no-coverage</b> <code>m-f</code>"),
        "{md}"
    );
    assert!(
        md.contains("No test executes the lines this mutant changes"),
        "{md}"
    );
    assert!(md.contains(&format!("- **Why:** {detail}")), "{md}");
    assert!(md.contains("**Why the gate failed** (exit code 2)"), "{md}");
    assert!(
        md.contains("**Mutation score 66.7%** (2 of 3 detected)"),
        "{md}"
    );

    // html: its row, badge and filter, and among the findings.
    let html = report(&fx, "merged", "html");
    for needle in [
        r#"data-outcome="no-coverage""#,
        r#"<span class="badge o-no-coverage">no-coverage</span>"#,
        r#"value="no-coverage" checked>"#,
        r#"var FINDINGS = ["survived", "no-coverage","#,
        ".badge.o-no-coverage { background: var(--no-coverage); }",
    ] {
        assert!(html.contains(needle), "{needle}\n{html}");
    }

    // junit: a failure whose message says no test executes it.
    let xml = report(&fx, "merged", "junit");
    assert!(
        xml.contains(r#"tests="3""#) && xml.contains(r#"failures="1""#),
        "{xml}"
    );
    let at = xml.find(r#"name="m-f""#).expect("m-f's testcase");
    let case = &xml[at..at + xml[at..].find("</testcase>").unwrap()];
    assert!(
        case.contains(&format!(
            r#"<failure message="no-coverage: {detail}" type="no-coverage">"#
        )),
        "{case}"
    );

    // sarif: an error result at the mutated region, and only for m-f.
    let sarif: Value = serde_json::from_str(&report(&fx, "merged", "sarif")).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif}");
    let r = &results[0];
    assert_eq!(
        (&r["ruleId"], &r["level"]),
        (&"m-f".into(), &"error".into())
    );
    let text = r["message"]["text"].as_str().unwrap();
    assert!(text.contains(&format!("no-coverage: {detail}")), "{text}");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        12
    );

    // stryker: NoCoverage, and Stryker's score is unguard's (undetected).
    let st: Value = serde_json::from_str(&report(&fx, "merged", "stryker")).unwrap();
    let ms = st["files"]["app.py"]["mutants"].as_array().unwrap();
    let status = |id: &str| {
        ms.iter()
            .find(|m| m["mutatorName"] == id)
            .map(|m| m["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no {id} in {st}"))
    };
    assert_eq!(
        (status("m-a"), status("m-b"), status("m-f")),
        ("Killed".into(), "Killed".into(), "NoCoverage".into())
    );
    let count = |s: &str| ms.iter().filter(|m| m["status"] == s).count();
    let stryker_score = 100.0 * (count("Killed") + count("Timeout")) as f64
        / (count("Killed") + count("Timeout") + count("Survived") + count("NoCoverage")) as f64;
    let score = v["summary"]["score"].as_f64().unwrap();
    assert!(
        (stryker_score - score).abs() < 1e-9,
        "{stryker_score} vs {score}"
    );

    // merge published its own reports the same way.
    assert!(fx
        .read("merged/report.md")
        .contains("<summary>🕳️ <b>no-coverage</b> <code>m-f</code>"));
}
