//! Property tests ("fuzzing" on stable Rust) of the two parsers of hostile
//! input: the spec loader and the matcher.
//!
//! - `unguard::spec::load` on arbitrary bytes, on YAML-ish text built from the
//!   real spec's keys, and on truncated and shuffled valid specs: never a
//!   panic, and every diagnostic has a position (line and column ≥ 1) inside
//!   the file and a fix.
//! - `unguard::mutate::{apply, sites, compile, line_col, unified_diff}` on
//!   arbitrary content, finds, replacements, regexes and counts: never a panic;
//!   a success changes the file, points inside it, keeps the bytes around the
//!   sites, matches what the reference regex matches, can be reversed, and its
//!   diff is non-empty, bounded and applies back to the mutant.
//!
//! The default case count keeps the whole file to a few seconds in `cargo
//! test`; set `PROPTEST_CASES` (e.g. 2560) for a longer local run. Inputs
//! that once failed are plain regression tests at the end of this file.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::Config;

use unguard::mutate::{self, ApplyProblem};
use unguard::spec::{self, Count, Pattern};

/// Cases per property unless `PROPTEST_CASES` says otherwise.
fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        // Shrunk inputs are copied into the regression tests below by hand.
        failure_persistence: None,
        ..Config::default()
    }
}

// ------------------------------------------------------------- spec loader

const A_PY: &str = "def f(x):\n    if x > 5:\n        return 1\n    return 0\n";

/// A valid spec that uses most of the format (every key appears somewhere).
const VALID: &str = r#"version: 1
test:
  command: "python3 -m pytest -q --junitxml={junit}"
  junit: "{junit}"
  timeout: 45s
  env: {PYTHONPATH: src}
  preset: pytest
  check: ["python3", "-m", "py_compile", "{file}"]
workspace:
  link: [.venv]
include: ["mutations/*.yaml"]
gate:
  min_score: 90
  max_survived: 0
  timeout_is: killed
  allow:
    - id: b
      reason: "tracked in #42"
thresholds: {high: 80, low: 60}
mutations:
  - id: a
    control: "port-exact Host allow-list"
    rule: "transport/4"
    file: src/a.py
    find: "x > 5"
    replace: "True"
    count: 1
    canary: true
    expect:
      killed_by: ["tests/test_a.py::test_x"]
    timeout: 30s
  - id: b
    control: c
    file: src/a.py
    regex: 'return (\d)'
    replace: "return 2"
    exact_whitespace: false
    test: {command: "python3 -m pytest -q tests/test_a.py --junitxml={junit}"}
"#;

const INCLUDE: &str =
    "mutations:\n  - id: inc\n    control: c\n    file: src/a.py\n    find: \"return 0\"\n    replace: \"return 9\"\n";

/// A target root with the files the specs name; `unguard.yaml` is rewritten
/// per case.
fn spec_root() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("ug-fuzz-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("mutations")).unwrap();
    std::fs::write(dir.path().join("src/a.py"), A_PY).unwrap();
    std::fs::write(dir.path().join("mutations/more.yaml"), INCLUDE).unwrap();
    std::os::unix::fs::symlink("a.py", dir.path().join("src/link.py")).unwrap();
    dir
}

/// Load `bytes` as `unguard.yaml` and check the diagnostics' contract.
fn load_checked(root: &Path, bytes: &[u8]) -> Result<(), TestCaseError> {
    let spec_path = root.join("unguard.yaml");
    std::fs::write(&spec_path, bytes).unwrap();
    let Err(diags) = spec::load(root, &spec_path) else {
        return Ok(());
    };
    prop_assert!(!diags.is_empty(), "an error without a diagnostic");
    let lines = bytes
        .iter()
        .filter(|b| **b == b'\n' || **b == b'\r')
        .count() as u64
        + 1;
    for d in &diags.0 {
        let rendered = d.to_string();
        let pos = d.position();
        prop_assert!(pos.is_some(), "diagnostic without a position:\n{rendered}");
        let (line, col) = pos.unwrap();
        prop_assert!(line >= 1 && col >= 1, "{rendered}");
        // Positions in the main spec lie inside it (include files are fixed
        // and valid, so every diagnostic is about the main spec).
        prop_assert!(
            line <= lines + 1,
            "line {line} beyond the {lines} lines of the spec:\n{rendered}"
        );
        prop_assert!(
            d.fix.as_deref().is_some_and(|f| !f.trim().is_empty()),
            "diagnostic without a fix:\n{rendered}"
        );
        prop_assert!(
            rendered.starts_with(&format!("error: {}:{line}:{col}: ", d.path)),
            "{rendered}"
        );
        // Nothing leaks the Rust types behind the YAML.
        for internal in ["RawSpec", "RawMutation", "RawTest", "Spanned", "Option<"] {
            prop_assert!(
                !rendered.contains(internal),
                "leaks {internal}:\n{rendered}"
            );
        }
    }
    Ok(())
}

const KEYS: &[&str] = &[
    "version",
    "test",
    "command",
    "junit",
    "timeout",
    "env",
    "preset",
    "fail_codes",
    "check",
    "workspace",
    "link",
    "include",
    "mutations",
    "id",
    "control",
    "rule",
    "file",
    "find",
    "regex",
    "replace",
    "exact_whitespace",
    "count",
    "canary",
    "expect",
    "killed_by",
    "gate",
    "min_score",
    "max_survived",
    "timeout_is",
    "allow",
    "reason",
    "thresholds",
    "high",
    "low",
    "bogus",
    "<<",
    "? complex",
];

const VALUES: &[&str] = &[
    "1",
    "0",
    "-1",
    "2",
    "4294967296",
    "all",
    "\"x > 5\"",
    "'return 1'",
    "src/a.py",
    "src/link.py",
    "src/",
    "../x",
    "/etc/passwd",
    "mutations/*.yaml",
    "[",
    "[]",
    "{}",
    "[a, b]",
    "[1, 0]",
    "{command: \"true\"}",
    "{command: []}",
    "''",
    "\"\"",
    "~",
    "null",
    "true",
    "45s",
    "0s",
    "auto",
    "soon",
    "1e309",
    ".nan",
    "-.inf",
    "\"\\u0000\"",
    "\"\\x\"",
    "&a x",
    "&a {id: a}",
    "*a",
    "*b",
    "!!str 1",
    "!!binary aGk=",
    "!tag x",
    "|",
    "|-",
    ">",
    "- x",
    "\"unclosed",
    "'unclosed",
    "{a: 1",
    "'it''s'",
    "é",
    "\t",
    "# comment",
    "x: y: z",
    "a\u{feff}b",
    "pytest",
    "generic",
    "killed",
    "(\\d+",
    "a*",
    "---",
    "...",
    "%YAML 1.2",
];

/// One YAML-ish line: indentation, maybe a list dash, a key, maybe a value.
fn yaml_line() -> impl Strategy<Value = String> {
    (
        0usize..9,
        any::<bool>(),
        prop::sample::select(KEYS),
        prop::option::of(prop::sample::select(VALUES)),
        prop::sample::select(&["", ":", ": ", " :", ":\t"][..]),
    )
        .prop_map(|(indent, dash, key, value, sep)| {
            let mut s = " ".repeat(indent);
            if dash {
                s.push_str("- ");
            }
            s.push_str(key);
            s.push_str(sep);
            if let Some(v) = value {
                s.push_str(v);
            }
            s
        })
}

/// A whole YAML-ish document from grammar lines, with LF, CRLF or CR breaks.
fn yaml_doc() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(yaml_line(), 0..14),
        prop::sample::select(&["\n", "\r\n", "\r"][..]),
        any::<bool>(),
    )
        .prop_map(|(lines, nl, bom)| {
            let mut s = if bom {
                "\u{feff}".to_string()
            } else {
                String::new()
            };
            s.push_str(&lines.join(nl));
            s.into_bytes()
        })
}

const TEST_KEYS: &[&str] = &[
    "command",
    "junit",
    "timeout",
    "env",
    "preset",
    "fail_codes",
    "check",
];

const MUTATION_KEYS: &[&str] = &[
    "id",
    "control",
    "rule",
    "file",
    "find",
    "regex",
    "replace",
    "exact_whitespace",
    "count",
    "canary",
    "expect",
    "timeout",
    "test",
];

/// Values that are right for some key, so documents get past the parser.
const SANE: &[&str] = &[
    "1",
    "a",
    "b",
    "x",
    "\"x > 5\"",
    "\"return 1\"",
    "'return (\\d)'",
    "src/a.py",
    "src/link.py",
    "src/nope.py",
    "true",
    "45s",
    "all",
    "pytest",
    "generic",
    "killed",
    "\"true\"",
    "[\"t::x\"]",
    "[python3, x]",
    "{PYTHONPATH: src}",
    "[.venv]",
    "[\"mutations/*.yaml\"]",
    "{high: 80, low: 60}",
    "[{id: a, reason: r}]",
];

fn value() -> impl Strategy<Value = &'static str> {
    prop_oneof![3 => prop::sample::select(SANE), 1 => prop::sample::select(VALUES)]
}

/// `key: value`, or `key:` with nested `k: v` lines `indent + 2` deep.
fn entry(keys: &'static [&'static str], indent: usize) -> impl Strategy<Value = Vec<String>> {
    (
        prop::sample::select(keys),
        value(),
        prop::option::weighted(
            0.2,
            prop::collection::vec((prop::sample::select(KEYS), value(), any::<bool>()), 0..4),
        ),
    )
        .prop_map(move |(key, value, nested)| {
            let pad = " ".repeat(indent);
            match nested {
                None => vec![format!("{pad}{key}: {value}")],
                Some(children) => {
                    let mut out = vec![format!("{pad}{key}:")];
                    for (k, v, dash) in children {
                        let d = if dash { "- " } else { "" };
                        out.push(format!("{pad}  {d}{k}: {v}"));
                    }
                    out
                }
            }
        })
}

/// Values for each key: right ones and typical mistakes.
fn values_for(key: &str) -> &'static [&'static str] {
    match key {
        "command" => &["\"true\"", "[python3, x]", "''", "[]", "[\"\"]", "{a: 1}"],
        "junit" => &["\"{junit}\"", "''"],
        "timeout" => &["45s", "auto", "0s", "soon", "99999999999999999999s", "1"],
        "env" => &["{A: b}", "{A: 1}", "[a]"],
        "preset" => &["pytest", "generic", "jest"],
        "fail_codes" => &["[1]", "[0]", "[]", "[1, 2]", "x"],
        "check" => &["\"true\"", "[]", "''"],
        "id" => &["a", "b", "a", "a/b", ".x", "''", "\"a b\"", "inc"],
        "control" => &["c", "c", "''", "\"  \""],
        "rule" => &["r", "~"],
        "file" => &[
            "src/a.py",
            "src/link.py",
            "src/nope.py",
            "../x",
            "/etc/passwd",
            "src",
            "''",
            "./src/a.py",
            "src//a.py",
            "\"src/a.py\\0\"",
        ],
        "find" => &[
            "\"x > 5\"",
            "\"return 1\"",
            "\"nope\"",
            "''",
            "\"  \"",
            "\"return\"",
            "\"x  >\\n5\"",
        ],
        "regex" => &[
            "'return (\\d)'",
            "'('",
            "'a*'",
            "'x > 5'",
            "''",
            "'(?-u:\\xE9)'",
        ],
        "replace" => &["\"True\"", "\"x > 5\"", "''", "\"$1\"", "\"\\r\\n\""],
        "exact_whitespace" | "canary" => &["true", "false", "maybe"],
        "count" => &["1", "2", "all", "0", "-1", "some", "4294967296"],
        "expect" => &[
            "{killed_by: [\"t::x\"]}",
            "{killed_by: [\"\"]}",
            "{killed_by: []}",
            "{}",
        ],
        "test" => &[
            "{command: \"true\"}",
            "{preset: generic}",
            "{command: ''}",
            "{timeout: 1s}",
            "{junit: \"{junit}\"}",
        ],
        _ => VALUES,
    }
}

/// `key: value` with a value for that key (now and then any value).
fn keyed(keys: &'static [&'static str], indent: usize) -> impl Strategy<Value = String> {
    prop::sample::select(keys).prop_flat_map(move |key| {
        prop_oneof![
            12 => prop::sample::select(values_for(key)),
            1 => prop::sample::select(VALUES),
        ]
        .prop_map(move |v| format!("{}{key}: {v}", " ".repeat(indent)))
    })
}

const TOP_EXTRA: &[&str] = &[
    "workspace: {link: [.venv]}",
    "workspace: {link: [a/b]}",
    "include: [\"mutations/*.yaml\"]",
    "include: [\"../x\"]",
    "include: [\"nomatch/*.yaml\"]",
    "include: [\"[\"]",
    "gate: {min_score: 90}",
    "gate: {min_score: 101}",
    "gate: {allow: [{id: a, reason: r}]}",
    "gate: {allow: [{id: a, reason: r}, {id: a, reason: r}]}",
    "gate: {allow: [{id: zz}]}",
    "gate: {timeout_is: maybe}",
    "thresholds: {high: 50, low: 60}",
    "thresholds: {high: 80, low: 60}",
    "version: 2",
];

/// A spec-shaped document: `version`, a `test:` block, some top-level extras
/// and a list of mutations, with keys and values from the real format (and
/// its usual mistakes), and now and then a line re-indented or a random one.
fn spec_shaped() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(keyed(&TEST_KEYS[1..], 2), 0..3),
        prop::collection::vec(prop::sample::select(TOP_EXTRA), 0..3),
        prop::collection::vec(
            (
                keyed(&["id"], 0),
                keyed(&["control"], 4),
                keyed(&["file"], 4),
                keyed(&["find", "regex"], 4),
                keyed(&["replace"], 4),
                prop::collection::vec(keyed(MUTATION_KEYS, 4), 0..3),
            ),
            1..4,
        ),
        prop::option::weighted(0.2, (any::<prop::sample::Index>(), 0usize..7)),
        prop::option::weighted(0.2, (any::<prop::sample::Index>(), entry(KEYS, 2))),
        any::<bool>(),
    )
        .prop_map(|(test, top, mutations, reindent, noise, crlf)| {
            let mut lines = vec!["version: 1".to_string(), "test:".to_string()];
            lines.push("  command: \"true\"".into());
            lines.extend(test);
            lines.extend(top.iter().map(|l| l.to_string()));
            lines.push("mutations:".into());
            for (id, control, file, find, replace, rest) in mutations {
                lines.push(format!("  - {id}"));
                lines.extend([control, file, find, replace]);
                lines.extend(rest);
            }
            if let Some((at, indent)) = reindent {
                let i = at.index(lines.len());
                lines[i] = format!("{}{}", " ".repeat(indent), lines[i].trim_start());
            }
            if let Some((at, extra)) = noise {
                let i = at.index(lines.len() + 1);
                for (k, l) in extra.into_iter().enumerate() {
                    lines.insert(i + k, l);
                }
            }
            lines.join(if crlf { "\r\n" } else { "\n" }).into_bytes()
        })
}

/// The valid spec edited: some lines dropped, duplicated or swapped for
/// grammar lines, then maybe cut short.
fn edited_valid() -> impl Strategy<Value = Vec<u8>> {
    let n = VALID.lines().count();
    (
        prop::collection::vec((0..n, 0u8..4, yaml_line()), 0..4),
        prop::option::of(0..VALID.len() + 1),
    )
        .prop_map(|(edits, cut)| {
            let mut lines: Vec<String> = VALID.lines().map(String::from).collect();
            for (at, op, line) in edits {
                let at = at.min(lines.len().saturating_sub(1));
                if lines.is_empty() {
                    break;
                }
                match op {
                    0 => {
                        lines.remove(at);
                    }
                    1 => {
                        let l = lines[at].clone();
                        lines.insert(at, l);
                    }
                    2 => lines[at] = line,
                    _ => lines.insert(at, line),
                }
            }
            let mut bytes = (lines.join("\n") + "\n").into_bytes();
            if let Some(cut) = cut {
                bytes.truncate(cut);
            }
            bytes
        })
}

#[test]
fn valid_spec_loads() {
    // The base of the edits is valid, so errors below come from the edits.
    let root = spec_root();
    let spec_path = root.path().join("unguard.yaml");
    std::fs::write(&spec_path, VALID).unwrap();
    let spec = spec::load(root.path(), &spec_path).unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = spec.mutations.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "inc"]);
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn spec_arbitrary_bytes(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        // Mostly YAML punctuation, so the parser gets past the first byte.
        prop::collection::vec(prop::sample::select(&b"ab1 :-\n\t[]{}\"'#&*!|>,?%@`\\\r"[..]), 0..200),
    ]) {
        let root = spec_root();
        load_checked(root.path(), &bytes)?;
    }

    #[test]
    fn spec_yaml_grammar(doc in yaml_doc()) {
        let root = spec_root();
        load_checked(root.path(), &doc)?;
    }

    #[test]
    fn spec_shaped_documents(doc in spec_shaped()) {
        let root = spec_root();
        load_checked(root.path(), &doc)?;
    }

    #[test]
    fn spec_edited_and_truncated(doc in edited_valid()) {
        let root = spec_root();
        load_checked(root.path(), &doc)?;
    }
}

// ----------------------------------------------------------------- matcher

/// Content pieces that make matches likely and edges common: whitespace of
/// every kind, both line endings, a BOM, non-UTF-8 and non-ASCII bytes.
const CONTENT_TOKENS: &[&[u8]] = &[
    b"a",
    b"b",
    b"x",
    b"ab",
    b" ",
    b"  ",
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"\x0b",
    "é".as_bytes(),
    "\u{a0}".as_bytes(),
    "\u{2028}".as_bytes(),
    "\u{feff}".as_bytes(),
    b"\xe9",
    b"\xc3",
    b"\\xE9",
    b"$1",
    b"(",
];

const TEXT_TOKENS: &[&str] = &[
    "a", "b", "x", "ab", " ", "  ", "\t", "\n", "\r\n", "\r", "é", "\u{a0}", "\u{feff}", "\\",
];

const REPLACE_TOKENS: &[&str] = &[
    "a", "b", "y", "", " ", "\n", "\r\n", "é", "$1", "$0", "${n}", "$$", "$", "\\xE9",
];

const REGEX_TOKENS: &[&str] = &[
    "a",
    "b",
    "x",
    ".",
    "\\s+",
    "\\s*",
    "\\n",
    "\\r?\\n",
    "(a)",
    "(?P<n>b)",
    "(?-u:\\xE9)",
    "(?-u:.)",
    "[ab]",
    "a*",
    "b+",
    "^",
    "$",
    "(?m)^",
    "(?m)$",
    "a|b",
    "\\b",
    "é",
    "\\x{a0}",
    "(",
    "[",
    "\\",
];

fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(CONTENT_TOKENS), 0..40)
            .prop_map(|t| t.concat()),
        1 => prop::collection::vec(any::<u8>(), 0..80),
    ]
}

fn text_from(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(tokens), 0..max).prop_map(|t| t.concat())
}

fn pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        3 => (text_from(TEXT_TOKENS, 6), any::<bool>()).prop_map(|(text, exact_whitespace)| {
            Pattern::Literal { text, exact_whitespace }
        }),
        2 => text_from(REGEX_TOKENS, 5).prop_map(Pattern::Regex),
    ]
}

fn count() -> impl Strategy<Value = Count> {
    prop_oneof![
        3 => Just(Count::Exactly(1)),
        1 => (2usize..4).prop_map(Count::Exactly),
        2 => Just(Count::All),
    ]
}

/// 1-based line count of `content` as `line_col` counts lines.
fn line_count(content: &[u8]) -> usize {
    content.iter().filter(|b| **b == b'\n').count() + 1
}

/// Apply a unified diff (as `unified_diff` writes it) to `old`; `None` when
/// a context or removed line does not match.
fn patch(old: &str, diff: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0usize; // next unconsumed old line
                         // Split on `\n` only: a diff line may end in `\r` (CRLF text).
    let mut lines = diff
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .skip(2)
        .peekable();
    while let Some(h) = lines.next() {
        // "@@ -a,b +c,d @@"
        let range = h.strip_prefix("@@ -")?.split(' ').next()?;
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s.parse::<usize>().ok()?, l.parse::<usize>().ok()?),
            None => (range.parse::<usize>().ok()?, 1),
        };
        let first = if len == 0 { start } else { start - 1 };
        while at < first {
            out.push_str(old_lines.get(at)?);
            at += 1;
        }
        while let Some(l) = lines.peek() {
            if l.starts_with("@@") {
                break;
            }
            let l = lines.next()?;
            let no_newline = lines.peek() == Some(&"\\ No newline at end of file");
            if no_newline {
                lines.next();
            }
            let nl = if no_newline { "" } else { "\n" };
            let (sign, text) = l.split_at(1);
            match sign {
                " " | "-" => {
                    if old_lines.get(at)? != &format!("{text}{nl}") {
                        return None;
                    }
                    if sign == " " {
                        out.push_str(old_lines[at]);
                    }
                    at += 1;
                }
                "+" => {
                    out.push_str(text);
                    out.push_str(nl);
                }
                _ => return None,
            }
        }
    }
    for l in &old_lines[at.min(old_lines.len())..] {
        out.push_str(l);
    }
    Some(out)
}

/// Every property of one `apply` call.
fn check_apply(
    pattern: &Pattern,
    replace: &str,
    count: Count,
    content: &[u8],
) -> Result<(), TestCaseError> {
    let result = mutate::apply(pattern, replace, count, content);
    let sites = mutate::sites(pattern, content);
    // A literal finds what the reference regex finds (an empty `find`
    // matches nothing; the spec refuses it anyway).
    if let Pattern::Literal { text, .. } = pattern {
        if !text.is_empty() {
            let re = mutate::compile(pattern).expect("a literal always compiles");
            let bom = if content.starts_with("\u{feff}".as_bytes()) {
                3
            } else {
                0
            };
            let reference: Vec<_> = mutate::find_matches(&re, &content[bom..])
                .into_iter()
                .map(|r| r.start + bom..r.end + bom)
                .collect();
            prop_assert_eq!(sites.as_ref().ok(), Some(&reference), "literal vs regex");
        }
    }
    let a = match result {
        Ok(a) => a,
        Err(ApplyProblem::Binary(_)) => {
            prop_assert!(content.contains(&0));
            return Ok(());
        }
        Err(p) => {
            prop_assert!(!p.detail().is_empty() && !p.fix().is_empty());
            if let (ApplyProblem::Ambiguous(_), Ok(s), Count::Exactly(n)) = (&p, &sites, count) {
                prop_assert_ne!(s.len(), n);
            }
            return Ok(());
        }
    };
    prop_assert!(!content.contains(&0));
    let sites = sites.expect("apply succeeded, so the pattern compiles");
    prop_assert_ne!(&a.mutated, content, "a success must change the file");
    prop_assert_eq!(a.sites, sites.len());
    prop_assert_eq!(a.site_lines.len(), sites.len());
    if let Count::Exactly(n) = count {
        prop_assert_eq!(a.sites, n);
    }
    // Positions: 1-based, inside the file, end not before start.
    prop_assert!(a.line >= 1 && a.col >= 1 && a.end_line >= 1 && a.end_col >= 1);
    prop_assert!(a.end_line <= line_count(content));
    prop_assert!((a.line, a.col) <= (a.end_line, a.end_col));
    prop_assert_eq!((a.line, a.col), mutate::line_col(content, sites[0].start));
    prop_assert_eq!(
        (a.end_line, a.end_col),
        mutate::line_col(content, sites[0].end)
    );
    let mut prev = 0;
    for (r, (first, last)) in sites.iter().zip(&a.site_lines) {
        prop_assert!(r.start >= prev && r.start <= r.end && r.end <= content.len());
        prev = r.end;
        prop_assert!(first <= last && *last <= line_count(content));
    }
    // The bytes around the sites are kept (the BOM too).
    let (first, last) = (&sites[0], &sites[sites.len() - 1]);
    prop_assert!(a.mutated.starts_with(&content[..first.start]));
    prop_assert!(a.mutated.ends_with(&content[last.end..]));
    // The diff proves the change: non-empty, bounded lines, and (for text it
    // shows as is) it turns the original into the mutant.
    let diff = mutate::unified_diff("f", content, &a.mutated);
    prop_assert!(diff.starts_with("--- a/f\n+++ b/f\n@@ -"), "{}", diff);
    for l in diff.lines() {
        let n = l.chars().count();
        prop_assert!(n <= mutate::MAX_DIFF_LINE + 3, "a diff line of {} chars", n);
    }
    if let (Ok(old), Ok(new)) = (
        std::str::from_utf8(content),
        std::str::from_utf8(&a.mutated),
    ) {
        let old_long = old
            .lines()
            .any(|l| l.chars().count() > mutate::MAX_DIFF_LINE);
        let new_long = new
            .lines()
            .any(|l| l.chars().count() > mutate::MAX_DIFF_LINE);
        if !old_long && !new_long {
            let patched = patch(old, &diff);
            prop_assert_eq!(
                patched.as_deref(),
                Some(new),
                "diff:\n{}",
                &diff[..diff.len().min(2000)]
            );
        }
    }
    // Reversal: a single literal site, put back by an exact regex of what
    // replaced it, restores the file (unless the original text has a bare LF
    // that a mostly-CRLF mutant would write as CRLF).
    if let (Pattern::Literal { .. }, 1) = (pattern, a.sites) {
        let original =
            std::str::from_utf8(&content[first.clone()]).expect("literal sites are text");
        let inserted = &a.mutated[first.start..a.mutated.len() - (content.len() - first.end)];
        let inserted = std::str::from_utf8(inserted)
            .expect("replace is text")
            .to_string();
        let bare_lf = original.replace("\r\n", "").contains('\n');
        let crlf_file = {
            let n = a.mutated.windows(2).filter(|w| w == b"\r\n").count();
            n * 2 > a.mutated.iter().filter(|b| **b == b'\n').count()
        };
        let normalised = bare_lf && crlf_file;
        if !inserted.is_empty() && !normalised {
            let back = Pattern::Regex(regex::escape(&inserted));
            let at = first.start..first.start + inserted.len();
            // Only when the one match is the inserted text itself (an earlier
            // overlapping occurrence would take its place).
            if mutate::sites(&back, &a.mutated).ok() == Some(vec![at]) {
                let r = mutate::apply(
                    &back,
                    &original.replace('$', "$$"),
                    Count::Exactly(1),
                    &a.mutated,
                );
                match r {
                    Ok(r) => prop_assert_eq!(&r.mutated, content, "reversal via {:?}", inserted),
                    Err(p) => prop_assert!(false, "reversal via {:?} failed: {:?}", inserted, p),
                }
            }
        }
    }
    Ok(())
}

/// Whitespace a flexible `find` must match: every kind, both line endings.
const WHITESPACE: &[&str] = &[
    " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u{a0}", "\u{85}", "\u{2028}", "\u{3000}",
    " \r\n\t",
];

/// Content with the `find` planted in it, its whitespace runs swapped for
/// other whitespace: the matches the flexible matcher exists for.
fn planted() -> impl Strategy<Value = (String, Vec<u8>)> {
    (
        text_from(TEXT_TOKENS, 6),
        prop::collection::vec(prop::sample::select(WHITESPACE), 8),
        content(),
        content(),
    )
        .prop_map(|(find, ws, before, after)| {
            let mut planted = String::new();
            let mut k = 0;
            let mut in_ws = false;
            for ch in find.chars() {
                if ch.is_whitespace() {
                    if !in_ws {
                        planted.push_str(ws[k % ws.len()]);
                        k += 1;
                    }
                    in_ws = true;
                } else {
                    planted.push(ch);
                    in_ws = false;
                }
            }
            (find, [before, planted.into_bytes(), after].concat())
        })
}

/// A file of many short lines and an edit of some of them.
fn lines_and_edit() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let line = prop::sample::select(&["a", "b", "x = 1", "", "\t}", "é"][..]);
    (
        prop::collection::vec(line.clone(), 0..40),
        prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, line), 1..4),
        any::<bool>(),
    )
        .prop_map(|(lines, edits, final_newline)| {
            let join = |l: &[&str]| {
                let mut s = l.join("\n");
                if final_newline && !l.is_empty() {
                    s.push('\n');
                }
                s.into_bytes()
            };
            let old = join(&lines);
            let mut new = lines.clone();
            for (at, op, l) in edits {
                let i = at.index(new.len() + 1);
                match op {
                    0 if i < new.len() => new[i] = l,
                    1 if i < new.len() => {
                        new.remove(i);
                    }
                    _ => new.insert(i, l),
                }
            }
            (old, join(&new))
        })
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn matcher_finds_planted_text(
        (find, content) in planted(),
        exact_whitespace in any::<bool>(),
        replace in text_from(REPLACE_TOKENS, 4),
        count in count(),
    ) {
        let pattern = Pattern::Literal { text: find, exact_whitespace };
        check_apply(&pattern, &replace, count, &content)?;
    }

    #[test]
    fn diff_turns_the_original_into_the_mutant((old, new) in lines_and_edit()) {
        let d = mutate::unified_diff("f", &old, &new);
        prop_assert_eq!(d.is_empty(), old == new);
        let (old, new) = (String::from_utf8(old).unwrap(), String::from_utf8(new).unwrap());
        let patched = patch(&old, &d);
        prop_assert_eq!(patched.as_deref(), Some(new.as_str()), "{}", d);
    }

    #[test]
    fn matcher_never_panics_and_keeps_its_promises(
        pattern in pattern(),
        replace in text_from(REPLACE_TOKENS, 4),
        count in count(),
        content in content(),
    ) {
        check_apply(&pattern, &replace, count, &content)?;
    }

    #[test]
    fn line_col_is_total(content in content(), offset in 0usize..200) {
        let (line, col) = mutate::line_col(&content, offset);
        prop_assert!(line >= 1 && col >= 1);
        prop_assert!(line <= line_count(&content));
    }

    #[test]
    fn diff_is_empty_exactly_when_nothing_changed(a in content(), b in content()) {
        let d = mutate::unified_diff("p", &a, &b);
        prop_assert_eq!(d.is_empty(), a == b, "{}", d);
        if a != b {
            prop_assert!(d.starts_with("--- a/p\n+++ b/p\n@@ -"), "{}", d);
        }
        // Diffing against itself is always empty, and never panics.
        prop_assert_eq!(mutate::unified_diff("p", &a, &a), "");
    }

    #[test]
    fn diff_of_a_changed_non_utf8_byte_is_not_empty(
        mut a in content(),
        at in any::<prop::sample::Index>(),
        byte in 0x80u8..=0xFF,
    ) {
        // Lossy decoding turns every invalid byte into U+FFFD: a change from
        // one to another must still show.
        a.push(0xE9);
        let i = at.index(a.len());
        let mut b = a.clone();
        b[i] = byte;
        let d = mutate::unified_diff("p", &a, &b);
        prop_assert_eq!(d.is_empty(), a == b, "{}", d);
    }
}

/// Long lines: the diff stays bounded and still names the change.
#[test]
fn diff_of_a_change_in_a_long_line_is_cut_around_it() {
    let mut old = "v".repeat(300_000);
    old.push_str("CONTROL");
    old.push_str(&"w".repeat(300_000));
    let new = old.replace("CONTROL", "REMOVED");
    let d = mutate::unified_diff("min.js", old.as_bytes(), new.as_bytes());
    assert!(
        d.len() < 2 * mutate::MAX_DIFF_LINE + 200,
        "{} bytes: {}",
        d.len(),
        &d[..200]
    );
    assert!(
        d.contains("-…vvv") && d.contains("CONTROLwww") && d.contains("REMOVEDwww"),
        "{d}"
    );
    assert!(d.contains("…\n"), "{d}");
}

// ---------------------------------------------------- found by the fuzzer

/// Swapping two Latin-1 bytes: both sides decoded to "��", so the diff was
/// empty (a debug build of `unguard check` panicked on it in plan.rs).
#[test]
fn regression_swapped_invalid_bytes_have_a_diff() {
    let d = mutate::unified_diff("a.py", b"x = '\xe9\xe8'\n", b"x = '\xe8\xe9'\n");
    assert_eq!(
        d,
        "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = '\\xE9\\xE8'\n+x = '\\xE8\\xE9'\n"
    );
    // Even when the text spells out what an invalid byte is shown as.
    let d = mutate::unified_diff("a.py", b"\\xE9", b"\xe9");
    assert!(!d.is_empty());
    assert_ne!(
        d.lines().nth(3),
        d.lines().nth(4).map(|l| l.replacen('+', "-", 1)).as_deref()
    );
}

/// A lone CR inside a line: the old diff (similar's line splitting) broke the
/// line there and wrote a diff that did not apply.
#[test]
fn regression_lone_cr_stays_inside_its_line() {
    let content = b"a\raba";
    let pattern = Pattern::Literal {
        text: "a".into(),
        exact_whitespace: false,
    };
    let a = mutate::apply(&pattern, "", Count::Exactly(3), content).unwrap();
    assert_eq!(a.mutated, b"\rb");
    let d = mutate::unified_diff("f", content, &a.mutated);
    assert_eq!(patch("a\raba", &d).as_deref(), Some("\rb"), "{d:?}");
    // And a diff from nothing to lone-CR lines does not index out of bounds.
    assert!(!mutate::unified_diff("f", b"", b"\ra\ra").is_empty());
}

/// Two BOMs: only the first is not text; the second is a character, and
/// positions agree with `line_col` on the whole file.
#[test]
fn regression_second_bom_is_text() {
    let content = "\u{feff}\u{feff}\\xE9".as_bytes();
    let a = mutate::apply(&Pattern::Regex("x".into()), "", Count::All, content).unwrap();
    assert_eq!((a.line, a.col), (1, 3));
    assert_eq!((a.line, a.col), mutate::line_col(content, 7));
    assert!(a.mutated.starts_with("\u{feff}\u{feff}".as_bytes()));
}

/// An overlapping earlier occurrence: reversal is only promised when the
/// inserted text is the one match.
#[test]
fn regression_reversal_precondition() {
    let lit = Pattern::Literal {
        text: "b".into(),
        exact_whitespace: false,
    };
    let a = mutate::apply(&lit, "aa", Count::Exactly(1), b"ab").unwrap();
    assert_eq!(a.mutated, b"aaa");
    let back = Pattern::Regex(regex::escape("aa"));
    assert_eq!(mutate::sites(&back, &a.mutated).unwrap(), vec![0..2]);
}
