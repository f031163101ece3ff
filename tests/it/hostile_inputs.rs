//! Hostile input files, through the real binary (`check`, `list`, `run`):
//! CRLF, no trailing newline, BOMs, Latin-1 bytes, 5 MB lines, NUL bytes,
//! symlinks, degenerate specs, and a spec with 10,000 mutations.
//!
//! The `run` tests use a tiny real suite (`python3 check.py`, preset
//! `generic`) that is green while every control's bytes are in the target
//! file, and that saves the bytes it saw to `$DUMP/<mutant id>.bin`, so a
//! test can check the mutant byte for byte.
//!
//! Decided behaviour (see also the module docs of `src/mutate/mod.rs`):
//! - a line break in a literal `find` (`\n` or `\r\n`) matches both line
//!   endings, also at the edges and with `exact_whitespace: true`; in a mostly
//!   CRLF file every `\n` of `replace` is written as `\r\n`;
//! - a UTF-8 BOM is not text: matches start after it (regex `^` too), columns
//!   do not count it, it is kept;
//! - non-UTF-8 bytes are kept byte for byte; a UTF-8 `find` cannot match them
//!   and the no-op says so (a `regex` with `(?-u:\xE9)` can);
//! - lines are cut to a window with `…` in diffs and error snippets;
//! - a `file:` that is (or goes through) a symlink is refused, naming the
//!   real path; one that resolves outside the root is refused too.

use crate::common::*;

use std::path::Path;

// ------------------------------------------------------------------ helpers

/// Lowercase hex of `bytes` (controls are passed to the suite as hex).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fixture whose suite is green while every control is in `target`.
struct Suite {
    fx: Fixture,
    dump: tempfile::TempDir,
}

impl Suite {
    /// `target` holds `content`; `mutations` is the YAML under `mutations:`.
    fn new(target: &str, content: &[u8], controls: &[&[u8]], mutations: &str) -> Suite {
        let dump = tempfile::Builder::new()
            .prefix("ug-dump-")
            .tempdir()
            .unwrap();
        let fx = Fixture::new();
        let controls: Vec<String> = controls.iter().map(|c| format!("'{}'", hex(c))).collect();
        let check = format!(
            "import os, sys\n\
             data = open({target:?}, 'rb').read()\n\
             label = os.environ.get('UNGUARD_MUTANT', '')\n\
             if label:\n    open(os.path.join(os.environ['DUMP'], label + '.bin'), 'wb').write(data)\n\
             controls = [bytes.fromhex(h) for h in [{}]]\n\
             sys.exit(0 if all(c in data for c in controls) else 1)\n",
            controls.join(", ")
        );
        fx.write("check.py", &check);
        let p = fx.path().join(target);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        let spec = format!(
            "version: 1\ntest:\n  command: \"python3 check.py\"\n  preset: generic\n  env: {{DUMP: \"{}\"}}\nmutations:\n{mutations}",
            dump.path().display()
        );
        fx.write("unguard.yaml", &spec);
        Suite { fx, dump }
    }

    /// The target file as the suite saw it under mutant `id`.
    fn seen(&self, id: &str) -> Vec<u8> {
        std::fs::read(self.dump.path().join(format!("{id}.bin")))
            .unwrap_or_else(|e| panic!("the suite never ran mutant {id}: {e}"))
    }

    /// `unguard run -j 1 --out out`: (code, stdout, stderr).
    fn run(&self) -> (i32, String, String) {
        self.fx.run(&["run", "-j", "1", "--out", "out"])
    }

    fn diff(&self, id: &str) -> String {
        std::fs::read_to_string(self.fx.path().join("out").join(format!("{id}.diff"))).unwrap()
    }
}

/// One mutation entry; `body` lines are indented under it.
fn mutation(id: &str, file: &str, body: &[&str]) -> String {
    Mutation::new(id, file).lines(body).yaml()
}

/// Assert `unguard run` killed every mutant in `ids` (and exited 0).
fn assert_all_killed(s: &Suite, ids: &[&str]) {
    let (code, out, err) = s.run();
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    let v = s.fx.verdicts("out");
    for id in ids {
        assert_eq!(
            v.get(*id).map(String::as_str),
            Some("killed"),
            "{id}: {v:?}"
        );
    }
    assert!(s.fx.leftover_tmp().is_empty(), "{:?}", s.fx.leftover_tmp());
}

/// `unguard check` in the fixture: (code, stdout, stderr).
fn check(fx: &Fixture) -> (i32, String, String) {
    fx.run(&["check"])
}

/// Every line break in `bytes` is CRLF.
fn all_crlf(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .enumerate()
        .all(|(i, b)| *b != b'\n' || (i > 0 && bytes[i - 1] == b'\r'))
}

/// The first site's column, from outcomes.json.
fn column(fx: &Fixture, id: &str) -> (u64, u64) {
    let o = fx.outcomes("out");
    let m = o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no mutant {id} in {o}"));
    let start = &m["location"]["start"];
    (
        start["line"].as_u64().unwrap(),
        start["column"].as_u64().unwrap(),
    )
}

// --------------------------------------------------------------- CRLF files

const CRLF_PY: &[u8] = b"def f(x):\r\n    if x > 5:\r\n        return 1\r\n    return 0\r\n";

#[test]
fn crlf_target_matches_lf_finds_and_keeps_crlf() {
    let mutations = [
        // Inner line break: flexible whitespace.
        mutation(
            "inner",
            "a.py",
            &[
                "find: \"if x > 5:\\n        return 1\"",
                "replace: \"if True:\\n        return 2\"",
            ],
        ),
        // A find that ends in a newline (like a YAML block scalar).
        mutation(
            "trailing-newline",
            "a.py",
            &["find: |", "  return 1", "replace: |", "  return 2"],
        ),
        // exact_whitespace: spaces exact, line endings still either.
        mutation(
            "exact",
            "a.py",
            &[
                "exact_whitespace: true",
                "find: \"x > 5:\\n        return 1\"",
                "replace: \"x > 6:\\n        return 1\"",
            ],
        ),
    ]
    .concat();
    let s = Suite::new("a.py", CRLF_PY, &[b"x > 5:", b"return 1\r\n"], &mutations);
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(out.contains("ok  inner  a.py:2"), "{out}");
    assert!(out.contains("ok  trailing-newline  a.py:3"), "{out}");
    assert!(out.contains("ok  exact  a.py:2"), "{out}");
    assert_all_killed(&s, &["inner", "trailing-newline", "exact"]);
    // The mutants the suite ran: CRLF everywhere, the new text included.
    let inner = s.seen("inner");
    assert_eq!(
        inner,
        b"def f(x):\r\n    if True:\r\n        return 2\r\n    return 0\r\n"
    );
    let trailing = s.seen("trailing-newline");
    assert_eq!(
        trailing,
        b"def f(x):\r\n    if x > 5:\r\n        return 2\r\n    return 0\r\n"
    );
    assert!(all_crlf(&s.seen("exact")), "{:?}", s.seen("exact"));
    // The diff shows the CR of both sides (it is a patch of the real bytes).
    let d = s.diff("trailing-newline");
    assert!(
        d.contains("-        return 1\r\n+        return 2\r\n"),
        "{d:?}"
    );
    assert!(!d.contains("\\ No newline"), "{d}");
}

#[test]
fn exact_whitespace_stays_exact_for_spaces_in_crlf_files() {
    // Only line endings are flexible: one space in the find does not match
    // the eight of the indentation.
    let s = Suite::new(
        "a.py",
        CRLF_PY,
        &[b"x > 5"],
        &mutation(
            "exact",
            "a.py",
            &[
                "exact_whitespace: true",
                "find: \"x > 5:\\n return 1\"",
                "replace: \"y\"",
            ],
        ),
    );
    let (code, _, err) = check(&s.fx);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("no-op: mutation `exact` on a.py"), "{err}");
}

#[test]
fn no_trailing_newline_is_kept() {
    let content = b"def f(x):\n    return x > 5";
    let s = Suite::new(
        "a.py",
        content,
        &[b"x > 5"],
        &mutation("last", "a.py", &["find: \"x > 5\"", "replace: \"True\""]),
    );
    assert_all_killed(&s, &["last"]);
    assert_eq!(s.seen("last"), b"def f(x):\n    return True");
    let d = s.diff("last");
    assert!(
        d.ends_with("-    return x > 5\n\\ No newline at end of file\n+    return True\n\\ No newline at end of file\n"),
        "{d}"
    );
}

// -------------------------------------------------------------------- BOMs

const BOM: &[u8] = b"\xef\xbb\xbf";

#[test]
fn bom_target_matches_at_the_start_and_keeps_the_bom() {
    let content = [BOM, b"def check(x):\n    return x > 5\n"].concat();
    let mutations = [
        mutation(
            "anchored",
            "a.py",
            &["regex: '^def check'", "replace: 'def nocheck'"],
        ),
        mutation(
            "literal",
            "a.py",
            &["find: 'def check(x)'", "replace: 'def check(y)'"],
        ),
    ]
    .concat();
    let s = Suite::new("a.py", &content, &[b"def check(x)"], &mutations);
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert_all_killed(&s, &["anchored", "literal"]);
    assert_eq!(
        s.seen("anchored"),
        [BOM, b"def nocheck(x):\n    return x > 5\n"].concat()
    );
    assert_eq!(
        s.seen("literal"),
        [BOM, b"def check(y):\n    return x > 5\n"].concat()
    );
    // Column 1: the BOM is not a character the user sees.
    assert_eq!(column(&s.fx, "anchored"), (1, 1));
    assert_eq!(column(&s.fx, "literal"), (1, 1));
}

const A_PY: &str = "def f(x):\n    if x > 5:\n        return 1\n";

/// A spec whose mutation has `count: 0` on its line 8 (column 12).
const BAD_COUNT: &str = "version: 1\ntest: {command: \"true\"}\nmutations:\n  - id: a\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    count: 0\n    replace: \"True\"\n";

#[test]
fn bom_in_the_spec_loads() {
    let fx = Fixture::new();
    fx.write("src/a.py", A_PY);
    let good = BAD_COUNT.replace("    count: 0\n", "");
    fx.write("unguard.yaml", &format!("\u{feff}{good}"));
    let (code, out, err) = check(&fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(out.contains("ok  a  src/a.py:2"), "{out}");
    // Positions on line 1 do not count the BOM, and the snippet does not
    // show it.
    fx.write(
        "unguard.yaml",
        &format!("\u{feff}{}", good.replace("version: 1", "version: 2")),
    );
    let (code, _, err) = check(&fx);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("error: unguard.yaml:1:10: unsupported spec version 2"),
        "{err}"
    );
    assert!(!err.contains('\u{feff}'), "{err:?}");
}

#[test]
fn crlf_and_cr_specs_load_with_right_positions() {
    for nl in ["\r\n", "\r"] {
        let fx = Fixture::new();
        fx.write("src/a.py", A_PY);
        fx.write("unguard.yaml", &BAD_COUNT.replace('\n', nl));
        let (code, out, err) = check(&fx);
        assert_eq!(code, 1, "{nl:?}: {out}{err}");
        assert!(
            err.starts_with("error: unguard.yaml:8:12: `count` must be at least 1"),
            "{nl:?}: {err}"
        );
        assert!(
            err.contains("\n8 |     count: 0\n  |            ^"),
            "{nl:?}: {err:?}"
        );
        assert!(!err.contains('\r'), "{nl:?}: {err:?}");
        // And a valid CRLF spec checks clean.
        fx.write(
            "unguard.yaml",
            &BAD_COUNT.replace("    count: 0\n", "").replace('\n', nl),
        );
        let (code, out, err) = check(&fx);
        assert_eq!(code, 0, "{nl:?}: {out}{err}");
    }
}

#[test]
fn block_scalar_find_in_a_crlf_spec_matches() {
    // YAML folds the spec's CRLF into `\n` inside the scalar; the find still
    // matches the LF target (and would match a CRLF one).
    let fx = Fixture::new();
    fx.write("src/a.py", A_PY);
    let spec = "version: 1\r\ntest: {command: \"true\"}\r\nmutations:\r\n  - id: a\r\n    control: c\r\n    file: src/a.py\r\n    find: |\r\n      if x > 5:\r\n    replace: |\r\n      if True:\r\n";
    fx.write("unguard.yaml", spec);
    let (code, out, err) = check(&fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(out.contains("ok  a  src/a.py:2"), "{out}");
}

// ------------------------------------------------------------ Latin-1 bytes

#[test]
fn latin1_target_is_mutated_byte_for_byte() {
    // "café" and "naïve" in Latin-1: not UTF-8.
    let content = b"# caf\xe9 na\xefve\ndef f(x):\n    return x > 5  # \xe0 bient\xf4t\n";
    let mutations = [
        mutation("ascii", "a.py", &["find: \"x > 5\"", "replace: \"True\""]),
        // A regex reaches the Latin-1 bytes themselves.
        mutation(
            "byte",
            "a.py",
            &["regex: 'caf(?-u:\\xE9)'", "replace: 'cafe'"],
        ),
    ]
    .concat();
    let s = Suite::new("a.py", content, &[b"x > 5", b"caf\xe9"], &mutations);
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert_all_killed(&s, &["ascii", "byte"]);
    assert_eq!(
        s.seen("ascii"),
        b"# caf\xe9 na\xefve\ndef f(x):\n    return True  # \xe0 bient\xf4t\n"
    );
    assert_eq!(
        s.seen("byte"),
        b"# cafe na\xefve\ndef f(x):\n    return x > 5  # \xe0 bient\xf4t\n"
    );
    // The diff names the bytes instead of blurring them into U+FFFD.
    let d = s.diff("byte");
    assert!(
        d.contains("-# caf\\xE9 na\\xEFve\n+# cafe na\\xEFve\n"),
        "{d}"
    );
}

#[test]
fn utf8_find_cannot_match_latin1_bytes_and_says_so() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.path().join("src")).unwrap();
    std::fs::write(fx.path().join("src/a.py"), b"name = 'caf\xe9'\n").unwrap();
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n{}",
            mutation("utf8", "src/a.py", &["find: \"café\"", "replace: \"cafe\""])
        ),
    );
    let (code, _, err) = check(&fx);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("no-op: mutation `utf8` on src/a.py"), "{err}");
    assert!(
        err.contains("not UTF-8: byte 0xE9 at line 1, column 12"),
        "{err}"
    );
    assert!(err.contains("(?-u:\\xE9)"), "{err}");
}

#[test]
fn swapping_two_latin1_bytes_is_a_real_mutant() {
    // Found while testing: both sides decode to "��", the diff was empty and
    // a debug build panicked on it (release: an empty proof).
    let s = Suite::new(
        "a.py",
        b"sep = '\xe9\xe8'\n",
        &[b"\xe9\xe8"],
        &mutation(
            "swap",
            "a.py",
            &["regex: '(?-u:(\\xE9)(\\xE8))'", "replace: '$2$1'"],
        ),
    );
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(
        out.contains("ok  swap  a.py:1  (1 site, +1 -1 lines)"),
        "{out}"
    );
    assert_all_killed(&s, &["swap"]);
    assert_eq!(s.seen("swap"), b"sep = '\xe8\xe9'\n");
    assert!(s
        .diff("swap")
        .contains("-sep = '\\xE9\\xE8'\n+sep = '\\xE8\\xE9'\n"));
}

// --------------------------------------------------------------- long lines

/// A 5 MB minified line with `CONTROL_CHECK(x)` in its middle.
fn minified() -> Vec<u8> {
    let half = "var a=function(b){return b+1};".repeat(85_000);
    format!("{half}if(!CONTROL_CHECK(x))throw e;{half}\n").into_bytes()
}

/// Nothing printed holds a long run of the minified text.
fn assert_bounded(what: &str, text: &str, limit: usize) {
    assert!(
        text.len() < limit,
        "{what}: {} bytes, starting {:?}",
        text.len(),
        &text[..text.len().min(300)]
    );
    assert!(
        !text.contains(&"var a=function(b){return b+1};".repeat(20)),
        "{what} prints the long line"
    );
}

#[test]
fn five_mb_line_matches_with_bounded_diff_and_errors() {
    let content = minified();
    assert!(content.len() > 5_000_000);
    let mutations = [
        mutation(
            "min",
            "min.js",
            &["find: 'if(!CONTROL_CHECK(x))throw e;'", "replace: ''"],
        ),
        // 170,000 sites on one line: every site replaced, lines counted once.
        mutation(
            "all-sites",
            "min.js",
            &["find: 'return b+1'", "replace: 'return b+2'", "count: all"],
        ),
    ]
    .concat();
    let s = Suite::new(
        "min.js",
        &content,
        &[b"CONTROL_CHECK(x))throw", b"b+1}"],
        &mutations,
    );
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 0, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(
        out.contains("ok  min  min.js:1  (1 site, +1 -1 lines)"),
        "{out}"
    );
    assert!(
        out.contains("ok  all-sites  min.js:1  (170000 sites"),
        "{out}"
    );
    assert_bounded("check stdout", &out, 1_000);
    assert_all_killed(&s, &["min", "all-sites"]);
    assert_eq!(
        s.seen("min").len(),
        content.len() - "if(!CONTROL_CHECK(x))throw e;".len()
    );
    let d = s.diff("min");
    assert_bounded("diff", &d, 2_000);
    assert!(d.contains("…"), "{d}");
    assert!(
        d.contains("if(!CONTROL_CHECK(x))throw e;"),
        "the diff shows the change: {d}"
    );
    let o = std::fs::read_to_string(s.fx.path().join("out/outcomes.json")).unwrap();
    let mutants: serde_json::Value = serde_json::from_str(&o).unwrap();
    for m in mutants["mutants"].as_array().unwrap() {
        assert_bounded("diff in outcomes.json", m["diff"].as_str().unwrap(), 2_000);
    }

    // Errors on the long line stay short: ambiguous (count) ...
    let ambiguous = mutation("twice", "min.js", &["find: 'return b+1'", "replace: 'x'"]);
    s.fx.write(
        "unguard.yaml",
        &format!("version: 1\ntest: {{command: \"true\"}}\nmutations:\n{ambiguous}"),
    );
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 5, "{out}{err}");
    assert!(
        err.contains("matches 170000 times (lines 1, 1, 1, 1, 1, …)"),
        "{err}"
    );
    assert_bounded("ambiguous stderr", &err, 2_000);
    // ... and a spec whose own line is 5 MB long (a pasted minified `find`).
    let huge_find = String::from_utf8(content[..5_000_000].to_vec()).unwrap();
    s.fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n  - id: a\n    control: c\n    file: min.js\n    find: '{huge_find}'\n    replace: 'x'\n    count: 0\n    bogus: {huge_find}\n"
        ),
    );
    let (code, out, err) = check(&s.fx);
    assert_eq!(code, 1, "{}", &err[..err.len().min(500)]);
    assert!(out.is_empty());
    assert!(
        err.starts_with("error: unguard.yaml:10:5: unknown field"),
        "{}",
        &err[..300]
    );
    assert_bounded("spec error stderr", &err, 3_000);
}

#[test]
fn long_value_in_an_error_message_is_cut() {
    let fx = Fixture::new();
    fx.write("src/a.py", A_PY);
    let long_id = "x".repeat(100_000) + "/";
    let long_timeout = format!("timeout: {}", "p".repeat(100_000));
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n{}",
            mutation(
                &long_id,
                "src/a.py",
                &["find: 'x > 5'", "replace: 'True'", &long_timeout]
            )
        ),
    );
    let (code, _, err) = check(&fx);
    assert_eq!(code, 1);
    assert!(err.contains("bad timeout `ppp"), "{}", &err[..300]);
    assert!(err.contains("invalid mutation id `xxx"), "{}", &err[..300]);
    assert!(err.contains('…'));
    assert!(err.len() < 3_000, "{} bytes", err.len());
}

// ------------------------------------------------------------------- binary

#[test]
fn binary_file_is_refused_by_check_and_run() {
    // A NUL byte after the first 8 KiB still makes the file binary.
    let mut content = b"x > 5\n".repeat(2_000);
    content.extend_from_slice(b"\0tail x > 5\n");
    let mutations = [
        mutation("text", "a.py", &["find: 'x > 5'", "replace: 'True'"]),
        mutation("blob", "blob.bin", &["find: 'x > 5'", "replace: 'True'"]),
    ]
    .concat();
    let s = Suite::new("a.py", b"x > 5\n", &[b"x > 5"], &mutations);
    std::fs::write(s.fx.path().join("blob.bin"), &content).unwrap();
    for args in [&["check"][..], &["run", "-j", "1", "--out", "out"][..]] {
        let (code, _, err) = s.fx.run(args);
        assert_eq!(code, 5, "{args:?}: {err}");
        assert!(
            err.contains("binary file: mutation `blob` on blob.bin: file looks binary (a NUL byte on line 2001)"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("= fix: point the mutation at a text source file"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(s.fx.path().join("blob.bin")).unwrap(),
        content
    );
    // Nothing ran: the baseline would have dumped nothing, but no mutant either.
    assert!(std::fs::read_dir(s.dump.path()).unwrap().next().is_none());
}

// ----------------------------------------------------------------- symlinks

/// A target with `src/real.py`, and `unguard.yaml` mutating `file`.
fn link_fx(file: &str) -> Fixture {
    let fx = Fixture::new();
    fx.write("src/real.py", A_PY);
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n{}",
            mutation("a", file, &["find: 'x > 5'", "replace: 'True'"])
        ),
    );
    fx
}

/// exit 1, `error: unguard.yaml:6:11: <message>`, caret and fix.
fn assert_file_refused(fx: &Fixture, message: &str, fix: &str) -> String {
    let (code, out, err) = check(fx);
    assert_eq!(code, 1, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.starts_with(&format!("error: unguard.yaml:6:11: {message}")),
        "{err}"
    );
    assert!(err.contains("\n6 |     file: "), "{err}");
    assert!(err.contains("\n  |           ^"), "{err}");
    assert!(err.contains(&format!("= fix: {fix}")), "{err}");
    err
}

#[test]
fn symlinked_file_inside_the_root_is_refused_naming_the_real_file() {
    let fx = link_fx("src/link.py");
    std::os::unix::fs::symlink("real.py", fx.path().join("src/link.py")).unwrap();
    assert_file_refused(
        &fx,
        "`src/link.py` is a symlink (to `src/real.py`)",
        "write `file: src/real.py`",
    );
    // The real file itself is fine.
    let fx2 = link_fx("src/real.py");
    assert_eq!(check(&fx2).0, 0);
}

#[test]
fn symlinked_directory_inside_the_root_is_refused() {
    let fx = link_fx("alias/real.py");
    std::os::unix::fs::symlink("src", fx.path().join("alias")).unwrap();
    assert_file_refused(
        &fx,
        "`alias/real.py` goes through a symlinked directory (to `src/real.py`)",
        "write `file: src/real.py`",
    );
}

#[test]
fn symlinked_directory_leaving_the_root_is_refused() {
    let outside = tempfile::Builder::new()
        .prefix("ug-outside-")
        .tempdir()
        .unwrap();
    std::fs::write(outside.path().join("real.py"), A_PY).unwrap();
    let fx = link_fx("vendor/real.py");
    std::os::unix::fs::symlink(outside.path(), fx.path().join("vendor")).unwrap();
    let err = assert_file_refused(
        &fx,
        "file `vendor/real.py` resolves outside the target root",
        "mutate the real file inside the target",
    );
    let real = outside.path().canonicalize().unwrap();
    assert!(
        err.contains(&real.join("real.py").display().to_string()),
        "{err}"
    );
    // `run` refuses too, before touching anything.
    let (code, _, err) = fx.run(&["run", "-j", "1", "--out", "out"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("real.py")).unwrap(),
        A_PY
    );
}

#[test]
fn dangling_and_looping_symlinks_are_not_called_missing() {
    let fx = link_fx("src/loop.py");
    std::os::unix::fs::symlink("loop.py", fx.path().join("src/loop.py")).unwrap();
    assert_file_refused(
        &fx,
        "file `src/loop.py` is a symlink that cannot be resolved",
        "correct the path",
    );
    let fx = link_fx("src/dangling.py");
    std::os::unix::fs::symlink("gone.py", fx.path().join("src/dangling.py")).unwrap();
    assert_file_refused(
        &fx,
        "file `src/dangling.py` is a symlink that cannot be resolved",
        "correct the path",
    );
}

// --------------------------------------------------------- degenerate specs

/// exit 1, nothing on stdout, `error: unguard.yaml:L:C: <message>`, a fix,
/// and no panic.
fn assert_spec_refused(content: &[u8], line: u64, col: u64, message: &str) -> String {
    let fx = Fixture::new();
    fx.write("src/a.py", A_PY);
    std::fs::write(fx.path().join("unguard.yaml"), content).unwrap();
    let (code, out, err) = check(&fx);
    assert_eq!(
        code, 1,
        "{content:?}\n--- stdout:\n{out}\n--- stderr:\n{err}"
    );
    assert!(out.is_empty(), "{out}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.starts_with(&format!("error: unguard.yaml:{line}:{col}: {message}")),
        "{content:?}:\n{err}"
    );
    assert!(err.contains("\n  = fix: "), "{err}");
    // `list` and `run` refuse it the same way.
    for args in [&["list"][..], &["run"][..]] {
        let (code, _, err2) = fx.run(args);
        assert_eq!(code, 1, "{args:?}: {err2}");
        assert_eq!(err2, err, "{args:?}");
    }
    err
}

#[test]
fn empty_spec_is_refused() {
    assert_spec_refused(b"", 1, 1, "spec file is empty");
}

#[test]
fn spec_of_only_comments_is_refused() {
    let err = assert_spec_refused(
        b"# unguard.yaml\n# TODO: add mutations\n\n",
        1,
        1,
        "spec file is empty (only comments)",
    );
    assert!(
        err.contains("version: 1"),
        "the fix says how to start: {err}"
    );
}

#[test]
fn spec_that_is_a_list_is_refused() {
    let err = assert_spec_refused(
        b"# mutations\n- id: a\n  file: src/a.py\n",
        2,
        1,
        "the spec must be a mapping of keys (`version: 1`, `test:`, `mutations:`), not a list or a single value",
    );
    assert!(err.contains("\n2 | - id: a\n"), "{err}");
    assert_spec_refused(b"just words\n", 1, 1, "the spec must be a mapping");
}

#[test]
fn non_utf8_and_utf16_specs_are_refused_with_a_position() {
    assert_spec_refused(
        b"version: 1\ncontrol: caf\xe9\n",
        2,
        13,
        "spec file is not valid UTF-8 (byte 0xE9)",
    );
    assert_spec_refused(b"\xff\xfev\0e\0r\0", 1, 1, "spec file is UTF-16, not UTF-8");
}

#[test]
fn two_documents_are_refused_in_plain_words() {
    let err = assert_spec_refused(
        b"version: 1\n---\nversion: 1\n",
        3,
        1,
        "the spec holds more than one YAML document",
    );
    assert!(!err.contains("from_str_multiple"), "{err}");
}

// ------------------------------------------------------- 10,000 mutations

/// 100 files × 100 functions, one mutation per function.
fn ten_thousand(root: &Path) -> String {
    let mut spec = String::from("version: 1\ntest: {command: \"true\"}\nmutations:\n");
    for f in 0..100 {
        let mut body = String::new();
        for i in 0..100 {
            body.push_str(&format!("def check_{i}(x):\n    return x > {i}\n"));
            spec.push_str(&format!(
                "  - id: f{f}-c{i}\n    control: \"check {i} of file {f}\"\n    file: src/m{f}.py\n    find: \"return x > {i}\\n\"\n    replace: \"return True\\n\"\n"
            ));
        }
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(format!("src/m{f}.py")), body).unwrap();
    }
    spec
}

#[test]
fn ten_thousand_mutations_check_and_list() {
    let fx = Fixture::new();
    let spec = ten_thousand(fx.path());
    fx.write("unguard.yaml", &spec);
    let (code, out, err) = check(&fx);
    assert_eq!(code, 0, "{}", &err[..err.len().min(2000)]);
    assert!(err.is_empty(), "{}", &err[..err.len().min(2000)]);
    let ok: Vec<&str> = out.lines().filter(|l| l.starts_with("ok  ")).collect();
    assert_eq!(ok.len(), 10_000);
    assert_eq!(ok[0], "ok  f0-c0  src/m0.py:2  (1 site, +1 -1 lines)");
    assert_eq!(
        ok[9_999],
        "ok  f99-c99  src/m99.py:200  (1 site, +1 -1 lines)"
    );
    assert!(
        out.ends_with("10000 mutations apply cleanly\n"),
        "{}",
        &out[out.len() - 200..]
    );

    let (code, out, err) = fx.run(&["list"]);
    assert_eq!(code, 0, "{}", &err[..err.len().min(2000)]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 10_000);
    assert_eq!(lines[5_050], "f50-c50\tsrc/m50.py:102\tcheck 50 of file 50");
    // The selection flags work at this size too.
    let (code, out, _) = fx.run(&["list", "--file", "src/m7.py", "--shard", "3/4"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 25, "{out}");
}

#[test]
fn ten_thousand_broken_mutations_are_all_reported() {
    // Every file missing: 10,000 diagnostics, each with its own position.
    let fx = Fixture::new();
    let spec = ten_thousand(fx.path()).replace("file: src/m", "file: src/gone");
    fx.write("unguard.yaml", &spec);
    let (code, out, err) = check(&fx);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert_eq!(err.matches("does not exist").count(), 10_000);
    assert!(
        err.contains("error: unguard.yaml:50001:11: file `src/gone99.py` does not exist"),
        "{}",
        &err[err.len() - 500..]
    );
    assert!(
        err.contains("\n50001 |     file: src/gone99.py\n"),
        "{}",
        &err[err.len() - 500..]
    );
}

#[test]
fn caret_far_right_on_a_long_line_is_shown_in_a_window() {
    // A flow mapping on one 100 kB line, the error at its end.
    let fx = Fixture::new();
    fx.write("src/a.py", A_PY);
    let control = "c".repeat(100_000);
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n  - {{id: a, control: \"{control}\", file: src/a.py, find: 'x > 5', replace: 'True', timeout: soon}}\n"
        ),
    );
    let (code, _, err) = check(&fx);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("error: unguard.yaml:4:100083: bad timeout `soon`"),
        "{}",
        &err[..err.len().min(300)]
    );
    assert!(err.len() < 2_000, "{} bytes", err.len());
    // The shown part of line 4 holds the error, and the caret is under it.
    let shown = err
        .lines()
        .find(|l| l.starts_with("4 | "))
        .expect("line 4 shown");
    let caret = err
        .lines()
        .find(|l| l.starts_with("  | ") && l.ends_with('^'))
        .expect("a caret line");
    assert!(shown.contains("timeout: soon}"), "{shown}");
    let at = |l: &str, i: usize| l.chars().nth(i);
    let caret_at = caret.chars().count() - 1;
    assert_eq!(at(shown, caret_at), Some('s'), "{shown}\n{caret}");
    assert!(shown.starts_with("4 | …"), "{shown}");
    // The short lines above are shown whole.
    assert!(err.contains("\n3 | mutations:\n"), "{err}");
}

// ------------------------------------------- file names that are not UTF-8

/// Files whose names are Latin-1 bytes (tracked, untracked, in a nested
/// dir) reach the scratch copy under their exact names: the suite finds
/// them by those bytes, so the baseline is green and the mutant is killed.
/// Before, the names were converted lossily (`caf\u{FFFD}.dat`), the copy
/// skipped them as missing, and the baseline went red (exit 4).
#[test]
fn files_with_non_utf8_names_are_copied_under_their_exact_names() {
    use std::os::unix::ffi::OsStrExt;
    for in_git in [true, false] {
        let fx = Fixture::new();
        let name = |bytes: &[u8]| std::ffi::OsStr::from_bytes(bytes).to_os_string();
        let tracked = name(b"caf\xe9.dat");
        let nested = fx.path().join(name(b"d\xfcr")).join(name(b"\xe9t\xe9.txt"));
        std::fs::write(fx.path().join(&tracked), b"tracked\n").unwrap();
        std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
        std::fs::write(&nested, b"nested\n").unwrap();
        fx.write("m.py", "GUARD = True\n");
        // Green only when all three files are there under their byte names
        // and the guard is in m.py.
        fx.write(
            "check.sh",
            "grep -q tracked \"$(printf 'caf\\351.dat')\" || exit 3\n\
             grep -q nested \"$(printf 'd\\374r/\\351t\\351.txt')\" || exit 3\n\
             grep -q untracked \"$(printf 'na\\357ve.txt')\" || exit 3\n\
             grep -q 'GUARD = True' m.py\n",
        );
        fx.write(
            "unguard.yaml",
            "version: 1\ntest:\n  command: sh check.sh\n  preset: generic\nmutations:\n  - id: guard\n    control: the guard\n    file: m.py\n    find: 'GUARD = True'\n    replace: 'GUARD = False'\n",
        );
        if in_git {
            fx.git_cmd(&["init", "-q", "-b", "main"]);
            fx.git_cmd(&["add", "-A"]);
            fx.commit("init");
        }
        // Untracked (in git: reported by git status, not the index).
        std::fs::write(fx.path().join(name(b"na\xefve.txt")), b"untracked\n").unwrap();
        let before = tree_state(fx.path(), &["out"]);
        let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
        let what = if in_git { "git repo" } else { "plain dir" };
        assert_eq!(code, 0, "{what}\n{}", ctx(code, &out, &err));
        assert_eq!(
            fx.verdicts("out").get("guard").map(String::as_str),
            Some("killed"),
            "{what}"
        );
        assert_eq!(before, tree_state(fx.path(), &["out"]), "{what}");
        assert!(
            fx.leftover_tmp().is_empty(),
            "{what}: {:?}",
            fx.leftover_tmp()
        );
        assert!(
            err.contains("3 of them with names that are not UTF-8"),
            "{what}\n{}",
            ctx(code, &out, &err)
        );
    }
}
