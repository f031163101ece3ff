//! `go test -json` (issue 15): a Go MCP-style server that uses only the
//! standard library, its own tests, and unguard reading Go's per-test
//! events, from the log and from a file, with Go's exit codes.
//!
//! Needs `go` on PATH (Debian's golang-go; `.ci/run` installs it). Without
//! it the tests say so and pass, except under `CI`, where they fail.

use crate::common::*;

const GO_MOD: &str = "module example.com/srv\n\ngo 1.19\n";

/// An MCP endpoint's middleware: a Host allow-list and an Origin check
/// against DNS rebinding, and a size limit on the body.
const SERVER_GO: &str = r#"package srv

import (
	"io"
	"net"
	"net/http"
	"strings"
)

// AllowedHosts are the Host values the server answers.
var AllowedHosts = []string{"127.0.0.1", "localhost"}

// MaxBody is the largest request body read.
const MaxBody = 1 << 16

func hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, a := range AllowedHosts {
		if strings.EqualFold(host, a) {
			return true
		}
	}
	return false
}

func originAllowed(origin string) bool {
	return origin == "" || strings.HasPrefix(origin, "http://127.0.0.1")
}

// Handler refuses foreign Host and Origin headers, then echoes the body.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host) {
			http.Error(w, "bad host", http.StatusForbidden)
			return
		}
		if !originAllowed(r.Header.Get("Origin")) {
			http.Error(w, "bad origin", http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.Write(body)
	})
}
"#;

/// Tests for the Host check (both directions); none for the Origin check.
const SERVER_TEST_GO: &str = r#"package srv

import (
	"net/http/httptest"
	"testing"
)

func serve(host string) int {
	r := httptest.NewRequest("POST", "http://"+host+"/mcp", nil)
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, r)
	return w.Code
}

func TestForeignHostIsRefused(t *testing.T) {
	if code := serve("evil.example"); code != 403 {
		t.Fatalf("a foreign Host got %d, want 403", code)
	}
}

func TestLoopbackHostIsServed(t *testing.T) {
	for _, host := range []string{"127.0.0.1:8080", "localhost"} {
		host := host
		t.Run(host, func(t *testing.T) {
			if code := serve(host); code != 200 {
				t.Fatalf("%s got %d, want 200", host, code)
			}
		})
	}
}
"#;

fn spec(command: &str, junit: Option<&str>) -> String {
    let junit = junit.map(|j| format!("  junit: {j}\n")).unwrap_or_default();
    format!(
        r#"version: 1
test:
  command: {command}
{junit}  timeout: 120s
mutations:
  - id: host-check
    control: "the Host allow-list"
    file: server.go
    find: "if !hostAllowed(r.Host) {{"
    replace: "if false {{"
    expect:
      killed_by: ["example.com/srv::TestForeignHostIsRefused"]
  - id: loopback-entry
    control: "localhost is an allowed host (positive twin)"
    file: server.go
    find: '"127.0.0.1", "localhost"}}'
    replace: '"127.0.0.1"}}'
    expect:
      killed_by: ["example.com/srv::TestLoopbackHostIsServed/localhost"]
  - id: origin-check
    control: "the Origin check"
    file: server.go
    find: "if !originAllowed(r.Header.Get(\"Origin\")) {{"
    replace: "if false {{"
  - id: broken-build
    control: "a mutant that does not compile"
    file: server.go
    find: "return false\n}}\n\nfunc originAllowed"
    replace: "return nope\n}}\n\nfunc originAllowed"
    canary: false
"#
    )
}

fn fixture(spec_text: &str) -> Fixture {
    Fixture::git(&[
        ("go.mod", GO_MOD),
        ("server.go", SERVER_GO),
        ("server_test.go", SERVER_TEST_GO),
        ("unguard.yaml", spec_text),
    ])
}

/// A verdict table as `fx.verdicts` gives it.
fn verdict_map(rows: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    rows.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn expected() -> std::collections::BTreeMap<String, String> {
    verdict_map(&[
        ("host-check", "killed"),
        ("loopback-entry", "killed"),
        ("origin-check", "survived"),
        ("broken-build", "wrong-reason"),
    ])
}

#[test]
fn go_test_json_in_the_log_gives_per_test_verdicts() {
    if !skip::have_go() {
        return;
    }
    let fx = fixture(&spec("go test -json ./...", None));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    assert_eq!(fx.verdicts("out"), expected(), "{}", ctx(code, &out, &err));
    // The survivor fails the gate.
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("out");
    let by_id = |id: &str| {
        o["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap()
    };
    // The kill names Go's test, the broken build says no test failed.
    let host = by_id("host-check");
    assert_eq!(reason(&o, "host-check"), "killed-by-expected");
    assert!(
        host["detail"]
            .as_str()
            .unwrap()
            .contains("example.com/srv::TestForeignHostIsRefused"),
        "{host}"
    );
    let broken = by_id("broken-build");
    assert_eq!(reason(&o, "broken-build"), "no-failed-test");
    let detail = broken["detail"].as_str().unwrap();
    assert!(
        detail.contains("go test's output"),
        "names its source: {detail}"
    );
    // The baseline counted Go's tests: 2 top-level tests and 2 subtests.
    assert_eq!(o["baselines"][0]["tests_total"], 4, "{}", o["baselines"]);
    // Kill-first: the expected killer ran alone through `-run`, and its red
    // was final (no full suite).
    assert_eq!(host["full_suite"], false, "{host}");
    let first = &host["subset_runs"][0];
    assert_eq!(
        (first["stage"].as_str(), first["result"].as_str()),
        (Some("expected-killers"), Some("killed")),
        "{host}"
    );
    let log = std::fs::read_to_string(
        fx.path()
            .join("out")
            .join(first["log_file"].as_str().unwrap()),
    )
    .unwrap();
    assert!(
        log.contains("$ go test -json ./... -run '^(TestForeignHostIsRefused)$'"),
        "{log}"
    );
    // The survivor ran the whole suite once after its subset passed.
    assert_eq!(by_id("origin-check")["full_suite"], true);
}

#[test]
fn go_test_json_written_to_the_junit_path_is_read_as_a_report() {
    if !skip::have_go() {
        return;
    }
    let fx = fixture(&spec(
        "\"go test -json ./... > {junit}\"",
        Some("\"{junit}\""),
    ));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(fx.verdicts("out"), expected(), "{}", ctx(code, &out, &err));
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
}

#[test]
fn audit_finds_the_go_controls_and_runs_go_test_json_without_a_spec() {
    if !skip::have_go() {
        return;
    }
    let fx = Fixture::git(&[
        ("go.mod", GO_MOD),
        ("server.go", SERVER_GO),
        ("server_test.go", SERVER_TEST_GO),
    ]);
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out", "-j", "2"]);
    let what = ctx(code, &out, &err);
    assert!(err.contains("tests: `go test -json ./...`"), "{what}");
    // The body cap (`io.LimitReader(r.Body, MaxBody)`) is a control too, and
    // so is its declared maximum (`const MaxBody`, loosened a thousandfold);
    // no test posts an oversized body: both survive. The Origin check is found
    // twice, as the predicate `originAllowed` (its shape: always accepts) and
    // as the guard calling it; no test sends a foreign Origin: both survive.
    let want = verdict_map(&[
        ("body-size-limited", "survived"),
        ("host-origin-compared", "survived"),
        ("host-origin-compared-2", "killed"),
        ("host-origin-compared-3", "survived"),
        ("input-size-limited", "survived"),
    ]);
    assert_eq!(fx.verdicts("out"), want, "{what}");
    // The Host check is killed by its negative test, named per test.
    let o = fx.outcomes("out");
    let host = o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "host-origin-compared-2")
        .unwrap();
    assert_eq!(host["line"], 35, "{host}");
    assert_eq!(code, 2, "{what}");
}
