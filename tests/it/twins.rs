//! Both directions of a control (seed 002 rule 5, issue 18): a loosening
//! mutant must be killed by the negative test, a tightening mutant (one
//! accepted class dropped) by its positive twin. A tightening survivor is a
//! negative test without its twin; it fails the gate by default, and
//! `gate.twins: report` lists it without failing.

use crate::common::*;

/// A Host allow-list with two accepted classes (the public name and
/// loopback); the suite has a negative test and a positive twin for
/// loopback only, none for the public name.
const APP_PY: &str = r#"PORT = 8000
PUBLIC = "mcp.example.ch:8000"
ALLOWED_HOSTS = [PUBLIC, f"127.0.0.1:{PORT}"]


def admit(host):
    if host not in ALLOWED_HOSTS:
        return 421
    return 200
"#;

const TEST_APP_PY: &str = r#"from app import PORT, admit
import app


def test_foreign_host_is_rejected():
    assert admit("evil.example:8000") == 421


def test_loopback_is_accepted():
    assert admit(f"127.0.0.1:{PORT}") == 200


def test_the_served_port_is_8000():
    assert app.PORT == 8000
"#;

fn spec(mutations: &str, gate: &str) -> String {
    format!(
        r#"version: 1
test:
  command: "{py} -m pytest -q -p no:cacheprovider --junitxml={{junit}}"
  junit: "{{junit}}"
  preset: pytest
  timeout: 60s
mutations:
{mutations}{gate}"#,
        py = python()
    )
}

/// The control's three mutants: removed (loosen), loopback dropped and the
/// public name dropped (tighten).
const THREE: &str = r#"  - id: host-check-enforced
    control: "Requests whose Host is not on the allow-list get 421"
    direction: loosen
    file: app.py
    find: "if host not in ALLOWED_HOSTS:"
    replace: "if False:"
    expect:
      killed_by: ["test_app.py::test_foreign_host_is_rejected"]
  - id: keeps-loopback
    control: "Requests whose Host is not on the allow-list get 421"
    direction: tighten
    file: app.py
    find: ', f"127.0.0.1:{PORT}"]'
    replace: "]"
    expect:
      killed_by: ["test_app.py::test_loopback_is_accepted"]
  - id: keeps-public-host
    control: "Requests whose Host is not on the allow-list get 421"
    direction: tighten
    file: app.py
    find: "[PUBLIC, "
    replace: "["
    expect:
      killed_by: ["test_app.py::test_*_is_accepted"]
"#;

fn fixture(mutations: &str, gate: &str) -> Fixture {
    Fixture::git(&[
        ("app.py", APP_PY),
        ("test_app.py", TEST_APP_PY),
        ("unguard.yaml", &spec(mutations, gate)),
        (".gitignore", "out*/\n__pycache__/\n"),
    ])
}

#[test]
fn a_tightening_survivor_fails_the_gate_by_default_at_j1_and_j2() {
    let fx = fixture(THREE, "");
    let mut tables = Vec::new();
    for jobs in ["1", "2"] {
        let out = format!("out-j{jobs}");
        let (code, stdout, err) = fx.run(&["run", "--out", &out, "-j", jobs]);
        assert_eq!(
            code,
            2,
            "a tightening survivor fails the gate by default: {}",
            ctx(code, &stdout, &err)
        );
        let v = fx.verdicts(&out);
        assert_eq!(v["host-check-enforced"], "killed", "{v:?}");
        assert_eq!(v["keeps-loopback"], "killed", "{v:?}");
        assert_eq!(v["keeps-public-host"], "survived", "{v:?}");
        let o = fx.outcomes(&out);
        let m = |id: &str| mutant(&o, id).clone();
        assert_eq!(m("host-check-enforced")["direction"], "loosen");
        assert_eq!(m("keeps-public-host")["direction"], "tighten");
        assert_eq!(reason(&o, "keeps-public-host"), "no-positive-twin");
        assert_eq!(reason(&o, "host-check-enforced"), "killed-by-expected");
        assert_eq!(o["summary"]["survived"], 1, "{}", o["summary"]);
        assert!(
            o["gate"]["reasons"][0]
                .as_str()
                .unwrap()
                .contains("1 survived"),
            "{}",
            o["gate"]
        );
        tables.push(v);
    }
    assert_eq!(tables[0], tables[1], "-j 1 and -j 2 give the same verdicts");
}

#[test]
fn gate_twins_report_lists_tightening_survivors_without_failing_the_gate() {
    let fx = fixture(THREE, "gate:\n  twins: report\n");
    let (code, stdout, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    assert_eq!(
        code,
        0,
        "gate.twins: report does not fail on a tightening survivor: {}",
        ctx(code, &stdout, &err)
    );
    let o = fx.outcomes("out");
    let s = &o["summary"];
    assert_eq!(
        (&s["twins_reported"], &s["survived"], &s["score"]),
        (
            &serde_json::json!(1),
            &serde_json::json!(0),
            &serde_json::json!(100.0)
        ),
        "{s}"
    );
    assert_eq!(fx.verdicts("out")["keeps-public-host"], "survived");
    let m = mutant(&o, "keeps-public-host");
    assert_eq!(m["twin_reported"], true, "{m}");
    let notes = o["gate"]["notes"].to_string();
    assert!(
        notes.contains("keeps-public-host") && notes.contains("gate.twins: report"),
        "the survivor is a finding in the gate's notes: {notes}"
    );
    assert!(stdout.contains("1 twin-reported"), "{stdout}");

    // `report` excuses tightening survivors only: a loosening survivor (the
    // negative test no longer checks anything) still fails the gate.
    fx.write(
        "test_app.py",
        &TEST_APP_PY.replace(
            r#"admit("evil.example:8000") == 421"#,
            r#"admit("evil.example:8000") in (200, 421)"#,
        ),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("drop the negative test");
    let (code, stdout, err) = fx.run(&["run", "--out", "out2", "-j", "2"]);
    assert_eq!(code, 2, "{}", ctx(code, &stdout, &err));
    let v = fx.verdicts("out2");
    assert_eq!(v["host-check-enforced"], "survived", "{v:?}");
    assert_eq!(fx.outcomes("out2")["summary"]["twins_reported"], 1);
}

#[test]
fn a_tightening_mutant_red_only_by_other_tests_is_wrong_reason() {
    // Moving the served port keeps loopback accepted (the test reads PORT),
    // so the named positive twin stays green; only an unrelated test is red.
    let mutation = r#"  - id: keeps-served-port
    control: "Requests whose Host is not on the allow-list get 421"
    direction: tighten
    file: app.py
    find: "PORT = 8000"
    replace: "PORT = 8001"
    expect:
      killed_by: ["test_app.py::test_loopback_is_accepted"]
"#;
    let fx = fixture(mutation, "");
    let (code, stdout, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        code,
        2,
        "red for the wrong reason is not proof: {}",
        ctx(code, &stdout, &err)
    );
    assert_eq!(fx.verdicts("out")["keeps-served-port"], "wrong-reason");
    let m = &fx.outcomes("out")["mutants"][0];
    assert_eq!(m["direction"], "tighten");
    assert_eq!(
        m["red_tests"],
        serde_json::json!(["test_app::test_the_served_port_is_8000"]),
        "{m}"
    );
}

#[test]
fn the_pr_comment_shows_negative_and_positive_proof_per_control() {
    let fx = fixture(THREE, "");
    let (code, stdout, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    assert_eq!(code, 2, "{}", ctx(code, &stdout, &err));
    let (code, md, err) = fx.run(&["report", "out", "--format", "md"]);
    assert_eq!(code, 0, "{}", ctx(code, &md, &err));
    assert!(
        md.contains("| control | negative proven | positive proven |"),
        "the PR comment has the both-directions table:\n{md}"
    );
    assert!(
        md.contains(
            "| Requests whose Host is not on the allow-list get 421 | ✅ proven | ❌ unproven |"
        ),
        "negative proven, positive unproven (one twin missing):\n{md}"
    );
    assert!(
        md.contains("no positive twin proves it is accepted"),
        "the survivor's finding names the missing positive twin:\n{md}"
    );
}

#[test]
fn a_bad_direction_or_twins_value_is_a_spec_error_at_its_position() {
    let fx = fixture(
        &THREE.replacen("direction: loosen", "direction: sideways", 1),
        "gate:\n  twins: sometimes\n",
    );
    let (code, stdout, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "{}", ctx(code, &stdout, &err));
    assert!(
        err.contains("unguard.yaml:10:16") && err.contains("unknown direction `sideways`"),
        "the bad direction, at its line and column: {err}"
    );
    assert!(
        err.contains("unknown twins `sometimes`"),
        "the bad gate.twins value: {err}"
    );
}

/// A server whose allow-list the catalog recognises, with negative tests
/// (wrong port) and a positive twin for the served name, none for loopback.
const SERVER_PY: &str = r#"from dataclasses import dataclass


@dataclass
class TransportSecuritySettings:
    allowed_hosts: list


def transport_policy(name, port, extra_hosts=()):
    hosts = [
        f"{name}:{port}",
        f"127.0.0.1:{port}",
        *extra_hosts,
    ]
    return TransportSecuritySettings(allowed_hosts=hosts)


def admit(policy, host):
    for entry in policy.allowed_hosts:
        if entry == host or (entry.endswith(":*") and host.rpartition(":")[0] == entry[:-2]):
            return 200
    return 421
"#;

const TEST_SERVER_PY: &str = r#"from server import admit, transport_policy


def test_served_name_and_port_are_accepted():
    assert admit(transport_policy("mcp.example.ch", 8000), "mcp.example.ch:8000") == 200


def test_right_name_wrong_port_is_rejected():
    assert admit(transport_policy("mcp.example.ch", 8000), "mcp.example.ch:9999") == 421


def test_loopback_wrong_port_is_rejected():
    assert admit(transport_policy("mcp.example.ch", 8000), "127.0.0.1:9999") == 421
"#;

#[test]
fn audit_and_init_emit_both_directions_and_the_grouped_report_shows_them() {
    let fx = Fixture::git(&[
        ("server.py", SERVER_PY),
        ("tests/test_server.py", TEST_SERVER_PY),
        ("tests/__init__.py", ""),
        ("conftest.py", ""),
        (".gitignore", "out*/\n__pycache__/\n"),
    ]);
    let cmd = format!(
        "{} -m pytest -q -p no:cacheprovider --junitxml={{junit}}",
        python()
    );
    let (code, stdout, err) = fx.run(&[
        "audit",
        ".",
        "-j",
        "2",
        "--out",
        "out-audit",
        "--test-command",
        &cmd,
    ]);
    let v = fx.verdicts("out-audit");
    // The catalog's tightening twin of allowlist-port-exact ran, and the
    // positive test killed it; the loopback twin has no positive test.
    assert_eq!(
        v.get("allowlist-served-host-included").map(String::as_str),
        Some("killed"),
        "{v:?}\n{}",
        ctx(code, &stdout, &err)
    );
    assert_eq!(v["allowlist-port-exact"], "killed", "{v:?}");
    assert_eq!(v["allowlist-loopback-included"], "survived", "{v:?}");
    assert_eq!(code, 2, "{}", ctx(code, &stdout, &err));
    let o = fx.outcomes("out-audit");
    let m = |id: &str| mutant(&o, id).clone();
    assert_eq!(m("allowlist-served-host-included")["direction"], "tighten");
    assert_eq!(m("allowlist-port-exact")["direction"], "loosen");
    assert_eq!(
        m("allowlist-served-host-included")["control"],
        m("allowlist-port-exact")["control"],
        "a twin's mutants name the control of the operator it pairs with"
    );
    let grouped = fx.read("out-audit/audit.md");
    let line = grouped
        .lines()
        .find(|l| l.starts_with("- **allowlist-port-exact**"))
        .unwrap_or_else(|| panic!("{grouped}"));
    assert!(
        line.contains("negative proven: ✅ proven · positive proven: ✅ proven"),
        "{line}"
    );

    let (code, stdout, err) = fx.run(&["init", ".", "--test-command", &cmd]);
    assert_eq!(code, 0, "{}", ctx(code, &stdout, &err));
    let spec = fx.read("unguard.yaml");
    let block = spec
        .split("  - id: ")
        .find(|b| b.starts_with("allowlist-served-host-included\n"))
        .unwrap_or_else(|| panic!("{spec}"));
    assert!(block.contains("    direction: tighten\n"), "{block}");
    assert!(block.contains("the positive twin"), "{block}");
}
