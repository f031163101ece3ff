//! Controls found by shape (src/catalog/shape/, on unless `--no-shapes`): a
//! refusal guard no catalog operator matches is listed with the control its
//! words name; `--guards` adds the ones no word names, after
//! the named sites. Protective settings and wired switches, schema
//! constraints, protective calls, list-membership and expiry tests are
//! shapes too (their Go mutants build and pass `go vet`); `--shapes-only`
//! lists what the shapes find without the catalog's matchers.

use crate::common::*;

const SERVER_GO: &str = "package main\n\nimport \"fmt\"\n\nconst maxQueryLength = 4096\n\n\
func runQuery(q string) error {\n\tif n := len(q); n > maxQueryLength {\n\t\treturn fmt.Errorf(\"query too long: %d\", n)\n\t}\n\treturn nil\n}\n\n\
func main() { _ = runQuery(\"x\") }\n";

const APP_PY: &str = "def delete_item(settings, mode, name):\n    \
if mode == \"write\" and settings.read_only_flag:\n        \
raise PermissionError(\"server is in read-only mode\")\n    \
if name.startswith(\"_\"):\n        \
raise ValueError(\"bad name\")\n    \
return name\n";

fn repo() -> Fixture {
    Fixture::git(&[
        ("server.go", SERVER_GO),
        ("go.mod", "module example.com/shp\n\ngo 1.19\n"),
        ("app.py", APP_PY),
    ])
}

#[test]
fn shapes_are_found_by_default_and_named_by_their_words() {
    let fx = repo();
    assert_eq!(
        fx.audit_sites(&["--no-shapes"]),
        vec![],
        "no operator spells these"
    );
    assert_eq!(fx.audit_sites(&["--shapes"]), fx.audit_sites(&[]));
    let named = fx.audit_sites(&[]);
    assert_eq!(
        named,
        vec![
            ("app.py".to_string(), 2, "read-only-enforced".to_string()),
            // The declared maximum, the guard comparing with it, and its
            // tightening twin (a query exactly at the maximum refused).
            ("server.go".to_string(), 5, "input-size-limited".to_string()),
            ("server.go".to_string(), 8, "input-size-limited".to_string()),
            (
                "server.go".to_string(),
                8,
                "input-size-limited-twin".to_string()
            ),
        ]
    );
}

#[test]
fn guards_adds_the_unnamed_refusals_after_the_named_ones() {
    let fx = repo();
    let all = fx.audit_sites(&["--guards"]);
    assert_eq!(
        all.last(),
        Some(&("app.py".to_string(), 4, "guard".to_string())),
        "{all:?}"
    );
    let named = fx.audit_sites(&[]);
    assert_eq!(&all[..named.len()], &named[..], "{all:?}");
}

const SERVER_TS: &str = "import { z } from \"zod\";\n\n\
export const QueryArgs = z.object({\n  table: z.string().max(64).regex(/^[a-z_]+$/),\n  limit: z.number().min(1).optional(),\n}).strict();\n\n\
export const defaults = {\n  readOnly: z.boolean().default(true),\n  allowRequestOverrides: false,\n  annotations: { readOnlyHint: true },\n  debug: true,\n};\n\n\
export function logCall(logger: { info(m: string): void }, args: string, secrets: string[]) {\n  logger.info(redact(args, secrets));\n}\n\n\
function redact(s: string, secrets: string[]): string {\n  return secrets.reduce((acc, x) => acc.split(x).join(\"***\"), s);\n}\n";

const TOOLS_PY: &str = "from mcp.server.fastmcp import FastMCP\n\n\n\
def validate_safe_path(path, root):\n    if not path.startswith(root):\n        raise PermissionError(\"path escapes the root\")\n    return path\n\n\n\
def read(path, root):\n    validate_safe_path(path, root)\n    return open(path).read()\n\n\n\
mcp = FastMCP(\"x\", enable_dns_rebinding_protection=True)\n";

fn declared() -> Fixture {
    Fixture::git(&[
        ("src/server.ts", SERVER_TS),
        ("src/tools.py", TOOLS_PY),
        (
            "package.json",
            "{\"name\":\"x\",\"version\":\"1.0.0\",\"dependencies\":{\"zod\":\"^3.0.0\",\"@modelcontextprotocol/sdk\":\"^1.0.0\"}}\n",
        ),
        ("requirements.txt", "mcp\n"),
    ])
}

fn site(file: &str, line: u64, control: &str) -> (String, u64, String) {
    (file.to_string(), line, control.to_string())
}

#[test]
fn settings_and_protective_calls_are_shapes_and_advice_is_not() {
    let fx = declared();
    let plain = fx.audit_sites(&["--no-shapes"]);
    let shaped = fx.audit_sites(&[]);
    let added: Vec<_> = shaped
        .iter()
        .filter(|s| !plain.contains(s))
        .cloned()
        .collect();
    assert_eq!(
        added,
        vec![
            // A config default that keeps a protection on, one that keeps a
            // risky feature off; a check called for its exception.
            site("src/server.ts", 9, "read-only-enforced"),
            site("src/server.ts", 10, "config-override-restricted"),
            site("src/tools.py", 11, "path-contained"),
        ],
        "{shaped:?}"
    );
    // A tool annotation (`readOnlyHint`) advises a client; `debug` protects nothing.
    assert!(!shaped
        .iter()
        .any(|s| s.0 == "src/server.ts" && (s.1 == 11 || s.1 == 12)));
}

#[test]
fn shapes_only_finds_schema_bounds_and_redaction_without_the_catalog() {
    let fx = declared();
    let only = fx.audit_sites(&["--shapes-only"]);
    let shaped = fx.audit_sites(&["--shapes"]);
    // The catalog's named API fact is not a shape; everything else the
    // catalog spells here, the shapes find on the same lines.
    let expected: Vec<_> = shaped
        .iter()
        .filter(|s| s.2 != "dns-rebinding-protection-on")
        .cloned()
        .collect();
    assert_eq!(only, expected);
    for s in [
        site("src/server.ts", 4, "input-size-limited"),
        site("src/server.ts", 4, "input-pattern-validated"),
        site("src/server.ts", 6, "additional-properties-false"),
        site("src/server.ts", 16, "secret-redacted"),
    ] {
        assert!(only.contains(&s), "{s:?} not in {only:?}");
    }
}

/// A Go server on the standard library only: a map allow-list tested in a
/// refusal and in a filter, a token expiry compared with now, and a
/// read-only switch wired from the environment and through an option.
const LIMITS_GO: &str = "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"io\"\n\t\"os\"\n\t\"strings\"\n\t\"time\"\n)\n\n\
type Config struct {\n\tReadOnly bool\n\tName     string\n}\n\n\
type Server struct{ readOnly bool }\n\n\
func (s *Server) WithReadOnly(on bool) *Server { s.readOnly = on; return s }\n\n\
var enabledTools = map[string]bool{\"read\": true, \"list\": true}\n\n\
type token struct{ Expiry time.Time }\n\n\
func visible(names []string) []string {\n\tvar out []string\n\tfor _, n := range names {\n\t\tif enabledTools[n] {\n\t\t\tout = append(out, n)\n\t\t}\n\t}\n\treturn out\n}\n\n\
func cached(tok token) bool {\n\tif time.Now().After(tok.Expiry) {\n\t\treturn false\n\t}\n\treturn true\n}\n\n\
const maxPages = 10\n\n\
func pages(segments []string, apiToken string) (int, error) {\n\tif apiToken == \"\" {\n\t\treturn 0, fmt.Errorf(\"missing\")\n\t}\n\
\tn := 0\n\tfor range segments {\n\t\tif n >= maxPages {\n\t\t\tbreak\n\t\t}\n\t\tn++\n\t}\n\treturn n, nil\n}\n\n\
const fetchTimeout = 5 * time.Second\n\n\
func fetch(ctx context.Context, body string) (string, error) {\n\tctx, cancel := context.WithTimeout(ctx, fetchTimeout)\n\tdefer cancel()\n\
\tb, err := io.ReadAll(io.LimitReader(strings.NewReader(body), 1<<16))\n\tif ctx.Err() != nil {\n\t\treturn \"\", ctx.Err()\n\t}\n\treturn string(b), err\n}\n\n\
func main() {\n\tcfg := Config{ReadOnly: os.Getenv(\"READ_ONLY\") == \"1\", Name: \"x\"}\n\
\tfmt.Println(fetch(context.Background(), \"b\"))\n\
\ts := (&Server{}).WithReadOnly(cfg.Name != \"\" && cfg.ReadOnly)\n\
\tp, err := pages([]string{\"a\"}, \"t\")\n\
\tfmt.Println(s.readOnly, visible([]string{\"read\"}), cached(token{Expiry: time.Now()}), p, err)\n}\n";

/// A reflected tool input with a `jsonschema` enum, a command with an
/// end-of-options marker, a file written owner-only, a dispatch whose
/// fall-back refuses.
const EXTRA_GO: &str = "package main\n\nimport (\n\t\"errors\"\n\t\"os\"\n\t\"os/exec\"\n)\n\n\
// Args is a tool's input.\n\
type Args struct {\n\tOp string `json:\"op\" jsonschema:\"required,enum=list,enum=get\"`\n}\n\n\
func save(b []byte, ref string) error {\n\t_ = exec.Command(\"git\", \"checkout\", \"--\", ref)\n\
\treturn os.WriteFile(\"t\", b, 0600)\n}\n\n\
const maxRef = 256\n\n\
func checkRef(ref string) error {\n\tif len(ref) > maxRef {\n\t\treturn errors.New(\"ref too long\")\n\t}\n\treturn nil\n}\n\n\
func checkOp(op string) (bool, error) {\n\tswitch op {\n\tcase \"list\", \"get\":\n\t\treturn true, nil\n\tdefault:\n\t\treturn false, errors.New(\"invalid operation \" + op)\n\t}\n}\n";

#[test]
fn go_shape_mutants_compile_and_pass_go_vet() {
    if !skip::have_go() {
        return;
    }
    let fx = Fixture::git(&[
        ("main.go", LIMITS_GO),
        ("extra.go", EXTRA_GO),
        ("go.mod", "module example.com/lim\n\ngo 1.19\n"),
    ]);
    let sites = fx.audit_sites(&["--shapes-only"]);
    assert_eq!(
        sites,
        vec![
            // A schema tag's enum, an end-of-options marker, a private file mode.
            site("extra.go", 11, "input-pattern-validated"),
            // Its twin: the enum's first value left out.
            site("extra.go", 11, "input-pattern-validated-twin"),
            site("extra.go", 15, "argument-injection-refused"),
            site("extra.go", 16, "secret-redacted"),
            // A declared maximum, the refusal that uses it, and its
            // tightening twin (the length exactly at the maximum refused).
            site("extra.go", 19, "input-size-limited"),
            site("extra.go", 22, "input-size-limited"),
            site("extra.go", 22, "input-size-limited-twin"),
            // The fall-back of a dispatch: the error discarded.
            site("extra.go", 33, "input-pattern-validated"),
            // The allow-list's twin: one entry of its literal left out.
            site("main.go", 21, "tool-allowlist-enforced-twin"),
            site("main.go", 28, "tool-allowlist-enforced"),
            site("main.go", 36, "token-expiry-checked"),
            // The declared maximum and the comparison that uses it.
            site("main.go", 42, "input-size-limited"),
            site("main.go", 45, "auth-required"),
            site("main.go", 50, "input-size-limited"),
            // A declared timeout, the bound of `context.WithTimeout` and of
            // `io.LimitReader`.
            site("main.go", 58, "input-size-limited"),
            site("main.go", 61, "input-size-limited"),
            site("main.go", 63, "input-size-limited"),
            site("main.go", 71, "read-only-enforced"),
            site("main.go", 73, "read-only-enforced"),
        ],
        "{sites:?}"
    );
    let verdicts = survive_go_vet(&fx, &["--shapes-only"]);
    assert_eq!(verdicts.len(), 19, "{verdicts:?}");
}

/// Audit with `go vet ./...` as the whole suite: a mutant that leaves a
/// variable or an import unused, or a type wrong, fails it and would count
/// as killed. Asserts every mutant survived (so every one builds) and
/// returns the verdicts.
fn survive_go_vet(fx: &Fixture, extra: &[&str]) -> std::collections::BTreeMap<String, String> {
    let mut args = vec!["audit"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--no-canary",
        "--test-command",
        "go vet ./...",
        "-o",
        "vet.out",
        ".",
    ]);
    let (code, out, err) = fx.run(&args);
    assert_eq!(code, 2, "{out}\n{err}");
    let verdicts = fx.verdicts("vet.out");
    assert!(
        verdicts.values().all(|v| v == "survived"),
        "a mutant broke the build: {verdicts:?}"
    );
    verdicts
}

/// Python and TypeScript: a block-list and an allow-list tested for
/// membership, an expiry compared with now; a list whose name says neither
/// is not a site.
const LIMITS_PY: &str = "import time\n\n\
def visible(tools, excluded_tools):\n    return [t for t in tools if t not in excluded_tools]\n\n\
def fresh(entry):\n    return entry.expires_at > time.time()\n\n\
def known(name, names):\n    return name in names\n";

const LIMITS_TS: &str = "export function register(config: { disabledTools: string[] }, name: string): boolean {\n  \
if (config.disabledTools.includes(name)) {\n    return false;\n  }\n  return true;\n}\n\
export function forward(allowedHeaders: Set<string>, h: string): boolean {\n  return allowedHeaders.has(h);\n}\n";

#[test]
fn list_membership_and_expiry_are_limit_tests_named_by_the_lists_words() {
    let fx = Fixture::git(&[("src/limits.py", LIMITS_PY), ("src/limits.ts", LIMITS_TS)]);
    let sites = fx.audit_sites(&["--shapes-only"]);
    assert_eq!(
        sites,
        vec![
            site("src/limits.py", 4, "tool-allowlist-enforced"),
            site("src/limits.py", 7, "token-expiry-checked"),
            site("src/limits.ts", 2, "tool-allowlist-enforced"),
        ],
        "{sites:?}"
    );
}

/// A check of the user's own framework (`tenant_matches`) that no built-in
/// word names: a generic guard, until the user's vocabulary file names it.
const TENANT_PY: &str = "def get_record(user, record):\n    \
if not tenant_matches(user, record):\n        \
raise PermissionError(\"no\")\n    \
return record\n";

#[test]
fn a_users_vocabulary_file_names_their_frameworks_checks() {
    let fx = Fixture::git(&[("app.py", TENANT_PY)]);
    assert_eq!(fx.audit_sites(&["--shapes"]), vec![], "no built-in word");
    assert_eq!(
        fx.audit_sites(&["--guards"]),
        vec![site("app.py", 2, "guard")]
    );
    fx.write(
        "vocab.yaml",
        "# our tenant checks are scope checks\n- control: token-scope-checked\n  words: [\"tenant match*\"]\n",
    );
    assert_eq!(
        fx.audit_sites(&["--vocabulary", "vocab.yaml"]),
        vec![site("app.py", 2, "token-scope-checked")]
    );
}

#[test]
fn a_bad_vocabulary_file_is_refused_with_its_line_column_and_fix() {
    let fx = Fixture::git(&[("app.py", TENANT_PY)]);
    // Audit with `yaml` as the vocabulary file: it must be refused (exit
    // 1) with every one of `said` in its message.
    let refused = |yaml: &str, said: &[&str]| {
        fx.write("vocab.yaml", yaml);
        let (code, out, err) = fx.run(&["audit", "--list", "--vocabulary", "vocab.yaml", "."]);
        assert_eq!(code, 1, "{out}\n{err}");
        for s in said {
            assert!(err.contains(s), "{s:?} not in:\n{err}");
        }
    };
    refused(
        "- control: tenant-checked\n  words: [\"tenant\"]\n",
        &[
            "vocab.yaml:1:12",
            "`tenant-checked` is not a catalog control",
            "unguard catalog",
        ],
    );
    refused(
        "- control: token-scope-checked\n  calls: [\"ok\", \"***\"]\n",
        &["vocab.yaml:2:", "has no word to match"],
    );
    refused(
        "- control: token-scope-checked\n  word: [x]\n",
        &["vocab.yaml:2:", "not a vocabulary file"],
    );
}

/// A tool allow-list and its refusal, with a negative test and one
/// positive test per allowed tool (`test_search_is_allowed` is the twin's
/// killer: the twin leaves `search`, the list's first entry, out).
const ALLOWLIST_PY: &str = "ALLOWED_TOOLS = [\"search\", \"fetch\"]\n\n\n\
def call(tool):\n    if tool not in ALLOWED_TOOLS:\n        \
raise PermissionError(f\"tool {tool} is not allowed\")\n    return f\"ran {tool}\"\n";

const ALLOWLIST_TEST_PY: &str = "import unittest\n\nimport tools\n\n\n\
class Tools(unittest.TestCase):\n    def test_an_unknown_tool_is_refused(self):\n        \
with self.assertRaises(PermissionError):\n            tools.call(\"delete\")\n\n    \
def test_fetch_is_allowed(self):\n        self.assertEqual(tools.call(\"fetch\"), \"ran fetch\")\n\n    \
def test_search_is_allowed(self):\n        self.assertEqual(tools.call(\"search\"), \"ran search\")\n";

#[test]
fn an_allow_lists_twin_is_killed_only_by_its_positive_test() {
    let fx = Fixture::git(&[
        ("tools.py", ALLOWLIST_PY),
        ("test_tools.py", ALLOWLIST_TEST_PY),
    ]);
    let audit = |out: &str| {
        fx.run(&[
            "audit",
            "--test-command",
            "python3 -m unittest -q",
            "-j",
            "1",
            "--out",
            out,
            ".",
        ])
    };
    let (code, out, err) = audit("both");
    // Every mutant killed; the gate's only finding is the suite's missing timeout.
    assert_eq!(code, 7, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("expected control absent: suite-timeout"),
        "{out}"
    );
    let v = fx.verdicts("both");
    assert_eq!(v["tool-allowlist-enforced"], "killed", "{v:?}");
    assert_eq!(v["tool-allowlist-enforced-twin"], "killed", "{v:?}");
    let report = fx.read("both/audit.md");
    assert!(
        report.contains("negative proven: ✅ proven · positive proven: ✅ proven"),
        "{report}"
    );
    // Without the positive test of `search`, nothing proves it is accepted.
    let without = ALLOWLIST_TEST_PY
        .split("\n\n    def test_search_is_allowed")
        .next()
        .unwrap();
    fx.write("test_tools.py", &format!("{without}\n"));
    fx.git_cmd(&["commit", "-qam", "drop the positive test of search"]);
    let (code, out, err) = audit("fetch-only");
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("fetch-only");
    assert_eq!(v["tool-allowlist-enforced"], "killed", "{v:?}");
    assert_eq!(v["tool-allowlist-enforced-twin"], "survived", "{v:?}");
    let report = fx.read("fetch-only/audit.md");
    assert!(report.contains("positive proven: ❌"), "{report}");
}

/// A dispatch whose fall-back refuses, with a test of the refusal.
const DISPATCH_PY: &str =
    "def act(action):\n    if action == \"list\":\n        return [\"a\"]\n    \
elif action == \"get\":\n        return \"a\"\n    else:\n        \
raise ValueError(f\"Invalid action: {action}\")\n";

const DISPATCH_TEST_PY: &str = "import unittest\n\nimport dispatch\n\n\n\
class Dispatch(unittest.TestCase):\n    def test_list(self):\n        \
self.assertEqual(dispatch.act(\"list\"), [\"a\"])\n\n    \
def test_an_unknown_action_is_refused(self):\n        with self.assertRaises(ValueError):\n            \
dispatch.act(\"drop\")\n";

#[test]
fn a_fall_back_refusal_is_killed_by_the_test_of_an_unknown_value() {
    let fx = Fixture::git(&[
        ("dispatch.py", DISPATCH_PY),
        ("test_dispatch.py", DISPATCH_TEST_PY),
    ]);
    assert_eq!(
        fx.audit_sites(&[]),
        vec![site("dispatch.py", 7, "input-pattern-validated")]
    );
    let audit = |out: &str| {
        fx.run(&[
            "audit",
            "--test-command",
            "python3 -m unittest -q",
            "-j",
            "1",
            "--out",
            out,
            ".",
        ])
    };
    let (code, out, err) = audit("tested");
    assert_eq!(code, 7, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("tested")["input-pattern-validated"], "killed");
    // Without the test of an unknown action the refusal can go unnoticed.
    let without = DISPATCH_TEST_PY
        .split("\n\n    def test_an_unknown_action_is_refused")
        .next()
        .unwrap();
    fx.write("test_dispatch.py", &format!("{without}\n"));
    fx.git_cmd(&["commit", "-qam", "drop the refusal's test"]);
    let (code, out, err) = audit("untested");
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(
        fx.verdicts("untested")["input-pattern-validated"],
        "survived"
    );
}

/// Go mutants a rewrite alone would leave unbuildable: a keyed boolean that
/// is its variable's only use, an import used only by the call a transform
/// drops, a bound passed with its cause, a pointer limit, a call unpacked
/// into two values.
const UNBUILDABLE_GO: &str = "package main\n\n\
import (\n\t\"errors\"\n\t\"fmt\"\n\t\"time\"\n\n\t\"example.com/vb/clean\"\n\t\"example.com/vb/context\"\n)\n\n\
type Tool struct{ readOnly bool }\n\n\
func (t Tool) IsReadOnly() bool { return t.readOnly }\n\n\
type Info struct {\n\tName     string\n\tReadOnly bool\n}\n\n\
type Args struct {\n\tLimit *int64\n}\n\n\
type Req struct {\n\tLimit *int64\n}\n\n\
func describe(t Tool, name string) Info {\n\tisReadOnly := t.IsReadOnly()\n\tn := clean.Sanitize(name)\n\treturn Info{Name: n, ReadOnly: isReadOnly}\n}\n\n\
func request(args Args) Req {\n\treturn Req{Limit: args.Limit}\n}\n\n\
func sanitizePair(s string) (string, bool) {\n\treturn s, false\n}\n\n\
func pair(s string) string {\n\tv, changed := sanitizePair(s)\n\tif changed {\n\t\treturn \"\"\n\t}\n\treturn v\n}\n\n\
func connect(ctx context.Context, wait time.Duration) error {\n\tctx, cancel := context.WithTimeoutCause(ctx, wait, fmt.Errorf(\"timed out after %s\", wait))\n\tdefer cancel()\n\t<-ctx.Done()\n\treturn errors.New(\"done\")\n}\n\n\
func main() {\n\tfmt.Println(describe(Tool{}, \"x\"), request(Args{}), pair(\"y\"), connect(context.Background(), time.Second))\n}\n";

const CLEAN_GO: &str = "package clean\n\nimport \"strings\"\n\n\
// Sanitize drops NUL bytes.\nfunc Sanitize(s string) string { return strings.ReplaceAll(s, \"\\x00\", \"\") }\n";

/// `context.WithTimeoutCause` for Go 1.19 (the standard library has it
/// from 1.21).
const CONTEXT_GO: &str = "package context\n\nimport (\n\tstd \"context\"\n\t\"time\"\n)\n\n\
type Context = std.Context\n\n\
func Background() Context { return std.Background() }\n\n\
func WithTimeoutCause(ctx Context, d time.Duration, cause error) (Context, std.CancelFunc) {\n\t_ = cause\n\treturn std.WithTimeout(ctx, d)\n}\n";

#[test]
fn go_mutants_that_would_not_build_are_rescued_or_left_out() {
    if !skip::have_go() {
        return;
    }
    let fx = Fixture::git(&[
        ("main.go", UNBUILDABLE_GO),
        ("clean/clean.go", CLEAN_GO),
        ("context/context.go", CONTEXT_GO),
        ("go.mod", "module example.com/vb\n\ngo 1.19\n"),
    ]);
    let (code, out, err) = fx.run(&["audit", "--list", "--json", "."]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rows: Vec<(u64, String, String, String)> = doc["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .filter(|s| s["file"] == "main.go")
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["control"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
                s["why"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let line_of = |needle: &str| {
        UNBUILDABLE_GO
            .lines()
            .position(|l| l.contains(needle))
            .map(|i| i as u64 + 1)
            .unwrap()
    };
    let at = |needle: &str| -> Vec<&(u64, String, String, String)> {
        rows.iter().filter(|r| r.0 == line_of(needle)).collect()
    };
    // The transform's package is used nowhere else: its mutant is listed,
    // left out, with the reason.
    let sanitize = at("clean.Sanitize(name)");
    let read_only = at("ReadOnly: isReadOnly");
    assert!(
        sanitize.iter().any(
            |r| r.2 == "unbuildable" && r.3.contains("the import `clean` would be left unused")
        ),
        "{rows:?}"
    );
    // The keyed boolean is kept used (`false && (isReadOnly)`) and run.
    assert!(
        read_only
            .iter()
            .any(|r| r.1 == "read-only-enforced" && r.2 == "mutant"),
        "{rows:?}"
    );
    // The timeout bound is `wait`, not the cause; the pointer limit and the
    // unpacked call are no sites.
    assert!(
        at("WithTimeoutCause").iter().any(|r| r.2 == "mutant"),
        "{rows:?}"
    );
    assert!(at("Limit: args.Limit").is_empty(), "{rows:?}");
    assert!(at("v, changed := sanitizePair(s)").is_empty(), "{rows:?}");
    let mutants = rows.iter().filter(|r| r.2 == "mutant").count();
    assert!(mutants >= 2, "{rows:?}");
    // Every mutant run builds, so none is killed by `go vet`.
    let verdicts = survive_go_vet(&fx, &[]);
    assert!(verdicts.len() >= mutants, "{verdicts:?}");
}
