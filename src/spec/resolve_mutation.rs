//! The `mutations:` entries resolved into [`MutationSpec`]s: ids (valid,
//! unique), the file to mutate (inside the root, a real file), the pattern
//! (`find` or a `regex` whose `replace` names its groups), `count`, timeout,
//! test override, `expect.killed_by` and direction.

use std::collections::HashMap;
use std::path::Path;

use serde_saphyr::Spanned;

use crate::config::Direction;
use crate::mutate::pattern::{bad_capture_refs, Count, Pattern};
use crate::spec::diag::{Diagnostic, Diagnostics};
use crate::spec::model::{Command, MutationSpec, SpecPos, TestConfig};
use crate::spec::paths::{check_rel_path, display_path};
use crate::spec::test_config::{parse_timeout, resolve_test};
use crate::spec::yaml::{MutationSource, RawCount, RawExpect, RawMutation, SourceFile};

/// Validate the mutations of every source, in order; a spec without any
/// (and without other problems) is a diagnostic on the main file.
pub(super) fn resolve_mutations(
    root: &Path,
    sources: &[MutationSource],
    global: &TestConfig,
    diags: &mut Diagnostics,
) -> Vec<MutationSpec> {
    let mut mutations = Vec::new();
    let mut seen_ids: HashMap<String, SpecPos> = HashMap::new();
    for (src, raws) in sources {
        for m in raws {
            if let Some(ms) = resolve_mutation(root, src, m, global, &mut seen_ids, diags) {
                mutations.push(ms);
            }
        }
    }
    if mutations.is_empty() && diags.is_empty() {
        diags.push(
            Diagnostic::new(
                &sources[0].0.display,
                1,
                1,
                "the spec declares no mutations",
            )
            .with_fix("add a `mutations:` list (or an `include:` of files that have one)"),
        );
    }
    mutations
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn resolve_mutation(
    root: &Path,
    src: &SourceFile,
    m: &Spanned<RawMutation>,
    global: &TestConfig,
    seen: &mut HashMap<String, SpecPos>,
    diags: &mut Diagnostics,
) -> Option<MutationSpec> {
    let raw = &m.value;
    let before = diags.0.len();
    let pos = SpecPos {
        path: src.display.clone(),
        line: raw.id.referenced.line(),
        col: raw.id.referenced.column(),
    };
    check_id(src, &raw.id, &pos, seen, diags);
    if raw.control.trim().is_empty() {
        diags.push(
            src.at(m, "`control` is empty")
                .with_fix("say which security control this mutation removes"),
        );
    }
    let file = resolve_file(root, src, &raw.file, diags);
    let pattern = resolve_pattern(src, m, diags);
    let count = resolve_count(src, raw.count.as_ref(), diags);
    let timeout = raw
        .timeout
        .as_ref()
        .and_then(|s| parse_timeout(src, s, "`30s` or `2m`", diags));
    let test = match &raw.test {
        None => Some(global.clone()),
        Some(t) => resolve_test(src, t, Some(global), diags),
    };
    let killed_by = resolve_killed_by(src, raw.expect.as_ref(), test.as_ref(), diags);
    let direction = raw.direction.as_ref().and_then(|d| {
        let named = Direction::named(d.value.trim());
        if named.is_none() {
            diags.push(
                src.at(d, format!("unknown direction `{}`", d.value))
                    .with_fix("use `loosen` (a negative test must kill it) or `tighten` (a positive twin must kill it), or leave it out"),
            );
        }
        named
    });

    if diags.0.len() > before {
        return None;
    }
    Some(MutationSpec {
        id: raw.id.value.clone(),
        control: raw.control.trim().to_string(),
        rule: raw.rule.clone(),
        direction,
        file: file?,
        pattern: pattern?,
        replace: raw.replace.value.clone(),
        count,
        canary: raw.canary.unwrap_or(true),
        killed_by,
        timeout,
        test: test?,
        pos,
    })
}

/// A mutation id must be valid and unique; the first declaration of each
/// id is remembered in `seen`.
fn check_id(
    src: &SourceFile,
    id: &Spanned<String>,
    pos: &SpecPos,
    seen: &mut HashMap<String, SpecPos>,
    diags: &mut Diagnostics,
) {
    let value = &id.value;
    if !valid_id(value) {
        diags.push(src.at(id, format!("invalid mutation id `{value}`")).with_fix(
            "ids use letters, digits, `-`, `_` and `.` (they name files in the output dir), e.g. `host-allowlist-port-exact`",
        ));
    } else if let Some(prev) = seen.get(value) {
        diags.push(
            src.at(
                id,
                format!(
                    "duplicate mutation id `{value}` (first declared at {}:{}:{})",
                    prev.path, prev.line, prev.col
                ),
            )
            .with_fix("give every mutation a unique id"),
        );
    } else {
        seen.insert(value.clone(), pos.clone());
    }
}

/// `file:` inside the root, existing, a regular file, reached without a
/// symlink; returns it relative to the root.
fn resolve_file(
    root: &Path,
    src: &SourceFile,
    file: &Spanned<String>,
    diags: &mut Diagnostics,
) -> Option<String> {
    let rel = match check_rel_path(&file.value) {
        Ok(rel) => rel,
        Err(why) => {
            diags.push(
                src.at(file, why.to_string())
                    .with_fix("give the path relative to the target root"),
            );
            return None;
        }
    };
    if rel.split('/').any(|part| part == ".git") {
        diags.push(
            src.at(
                file,
                format!("file `{rel}` is inside `.git`: git's own files are never part of the copied tree"),
            )
            .with_fix("name a source file of the target (tracked, or untracked and not ignored by git)"),
        );
        return None;
    }
    match real_file_problem(root, &rel) {
        None => Some(rel),
        Some((why, fix)) => {
            diags.push(src.at(file, why).with_fix(fix));
            None
        }
    }
}

/// What is wrong with `root/rel` as a file to mutate (the message and its
/// fix), or `None` when it is a regular file inside the root, not a link.
fn real_file_problem(root: &Path, rel: &str) -> Option<(String, String)> {
    let full = root.join(rel);
    let problem = match full.canonicalize() {
        Err(e) => {
            // A link that exists but leads nowhere is not a missing file.
            let why = match std::fs::symlink_metadata(&full) {
                Ok(_) => format!("file `{rel}` is a symlink that cannot be resolved ({e})"),
                Err(_) => format!("file `{rel}` does not exist in {}", display_path(root)),
            };
            (why, "correct the path (relative to the target root)".into())
        }
        Ok(c) if !c.starts_with(root) => (
            format!(
                "file `{rel}` resolves outside the target root (symlink to {})",
                c.display()
            ),
            "mutate the real file inside the target, not a link that leaves it".into(),
        ),
        Ok(c) if !c.is_file() => (
            format!("`{rel}` is not a regular file"),
            "name a source file".into(),
        ),
        Ok(c) if c != full => {
            // Refused, not followed: the copy recreates links as links,
            // and writing through one could land outside the copy.
            let real = c
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| c.display().to_string());
            let how = if std::fs::symlink_metadata(&full)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false)
            {
                "is a symlink"
            } else {
                "goes through a symlinked directory"
            };
            (
                format!("`{rel}` {how} (to `{real}`)"),
                format!("write `file: {real}`: unguard mutates real files only, not links"),
            )
        }
        Ok(_) => return None,
    };
    Some(problem)
}

/// `find` (literal text) or `regex`: exactly one, not empty.
fn resolve_pattern(
    src: &SourceFile,
    m: &Spanned<RawMutation>,
    diags: &mut Diagnostics,
) -> Option<Pattern> {
    let raw = &m.value;
    match (&raw.find, &raw.regex) {
        (Some(_), Some(r)) => {
            diags.push(
                src.at(r, "both `find` and `regex` are set")
                    .with_fix("keep one of them"),
            );
            None
        }
        (None, None) => {
            diags.push(
                src.at(m, "mutation needs `find` (literal text) or `regex`")
                    .with_fix("add `find: '<text of the control>'`"),
            );
            None
        }
        (Some(f), None) if f.value.trim().is_empty() => {
            diags.push(
                src.at(f, "`find` is empty")
                    .with_fix("give the exact text of the control to remove"),
            );
            None
        }
        (Some(f), None) => Some(Pattern::Literal {
            text: f.value.clone(),
            exact_whitespace: raw.exact_whitespace,
        }),
        (None, Some(r)) => resolve_regex(src, r, &raw.replace, diags),
    }
}

/// A `regex` that compiles and cannot match the empty string, with a
/// `replace` whose capture references all name groups of it.
fn resolve_regex(
    src: &SourceFile,
    r: &Spanned<String>,
    replace: &Spanned<String>,
    diags: &mut Diagnostics,
) -> Option<Pattern> {
    match regex::bytes::Regex::new(&r.value) {
        Ok(re) if re.is_match(b"") => {
            diags.push(
                src.at(r, "regex matches the empty string")
                    .with_fix("anchor the regex to the control's text"),
            );
            None
        }
        Ok(re) => {
            let names: Vec<Option<&str>> = re.capture_names().collect();
            let bad = bad_capture_refs(&replace.value, &names);
            for b in &bad {
                diags.push(src.at(replace, &b.message).with_fix(&b.fix));
            }
            bad.is_empty().then(|| Pattern::Regex(r.value.clone()))
        }
        Err(e) => {
            let msg = e
                .to_string()
                .lines()
                .last()
                .unwrap_or("invalid regex")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            diags.push(src.at(r, format!("bad regex: {msg}")).with_fix(
                "fix the pattern (Rust regex syntax; escape `(`, `.`, `[` as `\\(` `\\.` `\\[`)",
            ));
            None
        }
    }
}

/// `count`: a positive number or `all` (default 1).
fn resolve_count(
    src: &SourceFile,
    count: Option<&Spanned<RawCount>>,
    diags: &mut Diagnostics,
) -> Count {
    let Some(c) = count else {
        return Count::Exactly(1);
    };
    match &c.value {
        RawCount::N(0) => {
            diags.push(
                src.at(c, "`count` must be at least 1")
                    .with_fix("use a positive number or `all`"),
            );
            Count::Exactly(1)
        }
        RawCount::N(n) => Count::Exactly(*n as usize),
        RawCount::Word(w) if w == "all" => Count::All,
        RawCount::Word(w) => {
            diags.push(
                src.at(c, format!("bad count `{w}`"))
                    .with_fix("use a positive number or `all`"),
            );
            Count::Exactly(1)
        }
    }
}

/// Whether `command` runs `go test -json`, whose per-test events unguard
/// reads from the log (see [`crate::outcome::reading::go_test_json`]).
fn prints_go_test_events(command: &Command) -> bool {
    let text = command.display();
    text.contains("go test")
        && text
            .split_whitespace()
            .any(|w| w == "-json" || w == "--json")
}

/// Whether `command` runs `cargo test`, whose per-test lines unguard reads
/// from the log (see [`crate::outcome::reading::libtest_text`]).
fn runs_cargo_test(command: &Command) -> bool {
    let words: Vec<&str> = match command {
        Command::Shell(s) => s.split_whitespace().collect(),
        Command::Argv(v) => v.iter().map(String::as_str).collect(),
    };
    words
        .windows(2)
        .any(|w| (w[0] == "cargo" || w[0].ends_with("/cargo")) && w[1] == "test")
}

/// `expect.killed_by`: non-empty test names, under a test config that
/// writes a JUnit report (or runs `go test -json`).
fn resolve_killed_by(
    src: &SourceFile,
    expect: Option<&RawExpect>,
    test: Option<&TestConfig>,
    diags: &mut Diagnostics,
) -> Vec<String> {
    let Some(expect) = expect else {
        return Vec::new();
    };
    if let Some(test) = test {
        if let Some(first) = expect.killed_by.first() {
            let logged = prints_go_test_events(&test.command) || runs_cargo_test(&test.command);
            if test.junit.is_none() && !logged {
                diags.push(src.at(first, "`expect.killed_by` needs a JUnit report to know which tests failed").with_fix(
                    "set `test.junit: \"{junit}\"` and pass {junit} to the test command (e.g. pytest --junitxml={junit}), or run `go test -json` or `cargo test`",
                ));
            }
        }
        for k in &expect.killed_by {
            if k.value.trim().is_empty() {
                diags.push(
                    src.at(k, "empty `killed_by` entry").with_fix(
                        "name a test as `path/test_x.py::test_name` or `classname::name`",
                    ),
                );
            }
        }
    }
    expect.killed_by.iter().map(|k| k.value.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(valid_id("host-allowlist.port_exact"));
        assert!(!valid_id("../x"));
        assert!(!valid_id("a b"));
        assert!(!valid_id(".hidden"));
    }
}
