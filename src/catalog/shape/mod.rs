//! Finding controls by their shape, not their spelling.
//!
//! The catalog's operators match the spellings seen so far; a server that
//! spells its checks differently slips through them. This module finds the
//! shapes almost every control has, in every language, on the tree-sitter
//! tree ([`refusal`]: an `if` whose body refuses; [`fallback`]: the
//! `default:`/`else` of a dispatch that refuses; [`predicate`]: a check
//! function whose verdict gates a refusal; [`setting`]: a protective
//! boolean default, a declared maximum or timeout ([`setting::bounds`]) and
//! one passed where it takes effect ([`setting::bound_arguments`]);
//! [`constraint`]: a schema library's bound or pattern, Go `jsonschema`
//! tags; [`result`]: a tool result flagged `isError`; [`marker`]: a private
//! file mode, an end-of-options marker;
//! [`call`]: a redaction/sanitizer call or a check called for its
//! exception; [`branch`]: an `if` on a protective setting or a check's
//! verdict; [`limit`]: an item tested against a named allow- or block-list,
//! a time against now; [`setting::wirings`]: a protective switch wired to a
//! value), and names the control from the words around the site with the
//! vocabulary table ([`vocab`], `vocabulary.yaml`): the condition, the
//! refusal's message and status code, the error's name, the enclosing
//! function's name, a setting's, a list's or a called function's name.
//!
//! A site the vocabulary names becomes a site of that catalog control. A
//! site it cannot name is a generic [`GUARD`] site, listed only on request
//! (`--guards`) and after the named ones. A site an operator of the catalog
//! already found (same file, within the guard's lines) is not doubled.

mod branch;
mod call;
mod constraint;
mod fallback;
mod limit;
mod marker;
mod predicate;
mod refusal;
mod result;
mod setting;
mod vocab;

pub use vocab::Vocabulary;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use ast_grep_core::AstGrep;

use super::grammar::Grammar;
use super::matcher::Doc;
use super::{Group, Language, Operator, OperatorKind, Site};
use crate::globs::Globs;

/// The control id of a refusal guard the vocabulary does not name.
pub const GUARD: &str = "guard";

/// Which shape a site has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An `if` whose body refuses; the mutant never takes it.
    RefusalGuard,
    /// A check function whose verdict gates a refusal; the mutant always accepts.
    SecurityPredicate,
    /// A setting that switches a protection on or bounds something; the
    /// mutant loosens it.
    ProtectiveSetting,
    /// A bound or pattern a schema library declares on an input; the mutant
    /// drops it.
    SchemaConstraint,
    /// A call that makes a value safe; the mutant passes the value through.
    ProtectiveTransform,
    /// A check called for its exception; the mutant does not call it.
    AssertionCall,
    /// An `if` on a protective setting alone; the mutant acts as if it were off.
    ProtectiveBranch,
    /// An item tested against an allow- or block-list, or a time against
    /// now; the mutant loosens the list or never expires.
    LimitTest,
    /// A tool result flagged as an error (`isError: true`); the mutant
    /// reports success.
    ErrorResult,
    /// A private file mode or an end-of-options marker; the mutant opens
    /// the mode or leaves the marker out.
    ProtectiveLiteral,
    /// The tightening twin of a limit test (seed 002 rule 5): one entry of
    /// an allow-list left out, or the value exactly at a bound refused.
    TighteningTwin,
}

/// A site found by shape.
#[derive(Debug, Clone)]
pub struct ShapeSite {
    /// The site, its `operator` being the control it is named after (or [`GUARD`]).
    pub site: Site,
    /// Its shape.
    pub shape: Shape,
    /// Why: the vocabulary terms that named it, or the refusing statement
    /// of a generic guard.
    pub evidence: String,
    /// 1-based lines the guard (or the predicate's first statement) spans.
    pub lines: (usize, usize),
}

/// The operator generic guards are listed under: not in the catalog (no
/// matcher finds it; the shape finder does).
pub fn guard_operator() -> &'static Operator {
    static OP: OnceLock<Operator> = OnceLock::new();
    OP.get_or_init(|| Operator {
        id: GUARD.to_string(),
        control: "A branch that refuses (raise, throw, an error value, an HTTP 4xx answer) is taken when it must be; its control is not named by the vocabulary.".to_string(),
        rule: "002/6".to_string(),
        check: None,
        group: Group::Input,
        languages: vec![Language::Python, Language::TypeScript, Language::Go],
        files: Globs::new(&["**/*"]).unwrap_or_default(),
        exclude: Globs::default(),
        expected: false,
        presence_only: false,
        direction: Some(crate::config::Direction::Loosen),
        twin_of: None,
        kind: OperatorKind::Audit,
        sdk: String::new(),
        note: Some("Found by shape (src/catalog/shape/): add a word to vocabulary.yaml to name its control.".to_string()),
        template: None,
        positive: Vec::new(),
        negative: Vec::new(),
        matchers: Vec::new(),
    })
}

/// What one file offers: its guards, its check functions, its source.
struct FileShapes {
    file: String,
    grammar: Grammar,
    source: Vec<u8>,
    offset: usize,
    guards: Vec<refusal::Guard>,
    predicates: Vec<predicate::Predicate>,
    settings: Vec<setting::Setting>,
    constraints: Vec<constraint::Constraint>,
    error_results: Vec<result::ErrorResult>,
    markers: Vec<marker::Marker>,
    calls: Vec<call::Call>,
    branches: Vec<branch::Branch>,
    tests: Vec<limit::Test>,
    twins: Vec<limit::Twin>,
    lists: Vec<limit::ListDef>,
}

fn parse(file: &str, source: Vec<u8>) -> Option<FileShapes> {
    let grammar = Grammar::for_path(file)?;
    if source.contains(&0) {
        return None;
    }
    let offset = if source.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let text = std::str::from_utf8(&source[offset..]).ok()?.to_string();
    let tree: AstGrep<Doc> = AstGrep::try_new(&text, grammar).ok()?;
    let root = tree.root();
    let mut guards = refusal::guards(grammar, &root);
    let typed = grammar == Grammar::TypeScript || file.ends_with(".tsx");
    guards.extend(fallback::fallbacks(grammar, typed, &root));
    let predicates = predicate::predicates(grammar, &root, &text);
    let mut settings = setting::settings(grammar, &root);
    settings.extend(setting::wirings(grammar, &root));
    settings.extend(setting::bounds(grammar, &root));
    settings.extend(setting::bound_arguments(grammar, &root));
    settings.extend(setting::flag_defaults(grammar, &root));
    settings.extend(setting::env_defaults(grammar, &root));
    let constraints = constraint::constraints(grammar, &root);
    let error_results = result::error_results(grammar, &root);
    let markers = marker::markers(grammar, typed, &root);
    let calls = call::calls(grammar, &root);
    let branches = branch::branches(grammar, &root);
    let tests = limit::tests(grammar, &root);
    let lists = limit::list_definitions(grammar, &root);
    let twins = limit::twins(grammar, &root, &lists);
    Some(FileShapes {
        file: file.to_string(),
        grammar,
        source,
        offset,
        guards,
        predicates,
        settings,
        constraints,
        error_results,
        markers,
        calls,
        branches,
        tests,
        twins,
        lists,
    })
}

/// A shape site that spans the one line its mutant changes.
fn on_changed_line(site: Site, shape: Shape, evidence: String) -> ShapeSite {
    let l = site.changed_line;
    ShapeSite {
        site,
        shape,
        evidence,
        lines: (l, l),
    }
}

fn site(control: &str, f: &FileShapes, range: std::ops::Range<usize>, replacement: String) -> Site {
    let range = range.start + f.offset..range.end + f.offset;
    let src = &f.source;
    let (line, col) = crate::mutate::line_col(src, range.start);
    let (end_line, end_col) = crate::mutate::line_col(src, range.end);
    let changed_line =
        crate::mutate::first_changed_line_of_edit(src, range.clone(), replacement.as_bytes())
            .unwrap_or(line);
    Site {
        operator: control.to_string(),
        file: f.file.clone(),
        start: range.start,
        end: range.end,
        line,
        col,
        end_line,
        end_col,
        changed_line,
        original: String::from_utf8_lossy(&src[range]).into_owned(),
        replacement,
    }
}

/// The shape sites of parsed files: guards, and the predicates some guard
/// (in any of the files) calls with one polarity.
fn sites_of(files: &[FileShapes], voc: &Vocabulary) -> Vec<ShapeSite> {
    // Predicate name -> the polarities guards call it with.
    let mut called: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for f in files {
        for g in &f.guards {
            for (name, negated) in &g.calls {
                let e = called.entry(name.as_str()).or_default();
                if *negated {
                    e.0 = true;
                } else {
                    e.1 = true;
                }
            }
        }
    }
    let mut out = Vec::new();
    for f in files {
        // Each guard's control, named once: the branches and tests beside a
        // named guard defer to it.
        let names: Vec<Option<vocab::Naming>> =
            f.guards.iter().map(|g| guard_naming(g, voc)).collect();
        for (g, named) in f.guards.iter().zip(names.iter().cloned()) {
            if named.is_none() && g.propagation {
                continue;
            }
            // A generic guard whose `if` a protective branch names
            // (`if not is_path_excluded(p):`) is that branch's site.
            if named.is_none()
                && f.branches
                    .iter()
                    .any(|b| b.range == g.range && branch_naming(b, voc).is_some())
            {
                continue;
            }
            let (control, evidence) = match named {
                Some(n) => (n.control, n.terms.join(", ")),
                None => (GUARD.to_string(), g.refusal.clone()),
            };
            out.push(ShapeSite {
                site: site(&control, f, g.range.clone(), g.replacement.clone()),
                shape: Shape::RefusalGuard,
                evidence,
                lines: g.lines,
            });
        }
        for p in &f.predicates {
            // Negated calls refuse on "no": accepting is `true`.
            let accept = match called.get(p.name.as_str()) {
                Some((true, false)) => true,
                Some((false, true)) => false,
                _ => continue,
            };
            // Its own words, else those of a guard that calls it.
            let naming = voc.name(&p.evidence).or_else(|| {
                files.iter().flat_map(|f| &f.guards).find_map(|g| {
                    g.calls
                        .iter()
                        .any(|(c, _)| *c == p.name)
                        .then(|| voc.name(&g.evidence))
                        .flatten()
                })
            });
            let (control, evidence) = match naming {
                Some(n) => (n.control, n.terms.join(", ")),
                None => (GUARD.to_string(), format!("{}()", p.name)),
            };
            let original = String::from_utf8_lossy(
                &f.source[p.range.start + f.offset..p.range.end + f.offset],
            )
            .into_owned();
            let s = site(
                &control,
                f,
                p.range.clone(),
                p.mutant(f.grammar, accept, &original),
            );
            out.push(on_changed_line(s, Shape::SecurityPredicate, evidence));
        }
        others(f, &names, voc, &mut out);
        twins(files, f, &names, voc, &mut out);
    }
    out
}

/// The control a guard is named after: its words; a check whose error is
/// passed on (`if err := validatePathSegment(ns); err != nil`) also by the
/// check's name (its `calls` terms), like a check called for its exception,
/// when the name starts with a check's verb.
fn guard_naming(g: &refusal::Guard, voc: &Vocabulary) -> Option<vocab::Naming> {
    const VERBS: [&str; 7] = [
        "validate", "verify", "check", "ensure", "require", "assert", "enforce",
    ];
    voc.name(&g.evidence).or_else(|| {
        // An inline allow-list of values (`op != "list" && op != "get"`)
        // validates its input whatever the words around it.
        if g.value_set {
            return Some(vocab::Naming {
                control: "input-pattern-validated".to_string(),
                terms: vec!["none of the accepted values".to_string()],
            });
        }
        if !g.propagation {
            return None;
        }
        g.calls
            .iter()
            .filter(|(c, _)| {
                vocab::words(c)
                    .first()
                    .is_some_and(|w| VERBS.contains(&w.as_str()))
            })
            .find_map(|(c, _)| voc.name_call(&vocab::words(c)))
    })
}

/// The control a protective branch is named after: a check's or verdict's
/// by the `calls` terms, a setting's by the `settings` terms.
fn branch_naming(b: &branch::Branch, voc: &Vocabulary) -> Option<vocab::Naming> {
    if b.check {
        voc.name_call(&b.name)
    } else {
        voc.name_setting(&b.name)
    }
}

/// The sites of a file's tightening twins (seed 002 rule 5), named like
/// the loosening side of their test. A list the file does not bind is
/// narrowed where the repository (`files`) binds it once, to a literal.
fn twins(
    files: &[FileShapes],
    f: &FileShapes,
    names: &[Option<vocab::Naming>],
    voc: &Vocabulary,
    out: &mut Vec<ShapeSite>,
) {
    for t in &f.twins {
        let within = |r: &std::ops::Range<usize>| r.start <= t.test.start && t.test.end <= r.end;
        // A bound's twin only where reaching the bound refuses: a branch
        // that caps (`if n > MAX: n = MAX`, `items[:MAX]`) does the same at
        // the bound either way, an equivalent mutant.
        if t.kind == limit::Kind::Bound && !f.guards.iter().any(|g| within(&g.range)) {
            continue;
        }
        let (file, range) = match &t.at {
            limit::TwinAt::Here(r) => (f, r.clone()),
            limit::TwinAt::Elsewhere { name, same_dir } => {
                let dir = |file: &str| file.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                let here = dir(&f.file);
                let mut bound = files
                    .iter()
                    .filter(|o| !same_dir || dir(&o.file) == here)
                    .flat_map(|o| {
                        o.lists
                            .iter()
                            .filter(move |d| d.name == *name && d.top)
                            .map(move |d| (o, d.entry.clone()))
                    });
                match (bound.next(), bound.next()) {
                    (Some((o, Some(e))), None) => (o, e),
                    _ => continue,
                }
            }
        };
        // The control of the loosening side: a named refusal guard around
        // the test, else the test's own words; a twin only where the
        // catalog declares one for it (`shape_twin`).
        let around = f
            .guards
            .iter()
            .zip(names)
            .filter(|(g, _)| within(&g.range))
            .find_map(|(_, n)| n.clone());
        let own = match t.kind {
            limit::Kind::Member => voc.name_list(&t.name),
            limit::Kind::Expiry | limit::Kind::Bound => voc.name_setting(&t.name),
        };
        let Some((n, id)) = [around, own]
            .into_iter()
            .flatten()
            .map(|n| {
                let id = format!("{}-twin", n.control);
                (n, id)
            })
            .find(|(_, id)| super::operator(id).is_some())
        else {
            continue;
        };
        out.push(on_changed_line(
            site(&id, file, range, t.replacement.clone()),
            Shape::TighteningTwin,
            n.terms.join(", "),
        ));
    }
}

/// The sites of a file's protective settings, schema constraints,
/// protective calls and protective branches; `names` are its guards'
/// controls, in order.
fn others(
    f: &FileShapes,
    names: &[Option<vocab::Naming>],
    voc: &Vocabulary,
    out: &mut Vec<ShapeSite>,
) {
    let named_guards = || {
        f.guards
            .iter()
            .zip(names)
            .filter(|(_, n)| n.is_some())
            .map(|(g, _)| &g.range)
    };
    for b in &f.branches {
        // A refusal guard the vocabulary names on the same `if` is that
        // guard's site.
        if named_guards().any(|r| *r == b.range) {
            continue;
        }
        let Some(n) = branch_naming(b, voc) else {
            continue;
        };
        out.push(ShapeSite {
            site: site(&n.control, f, b.range.clone(), b.replacement.clone()),
            shape: Shape::ProtectiveBranch,
            evidence: n.terms.join(", "),
            lines: b.lines,
        });
    }
    for t in &f.tests {
        // Inside a named refusal guard's condition, the guard is the site.
        if named_guards().any(|r| r.start <= t.range.start && t.range.end <= r.end) {
            continue;
        }
        let named = match t.kind {
            limit::Kind::Member => voc.name_list(&t.name),
            limit::Kind::Expiry | limit::Kind::Bound => voc.name_setting(&t.name),
        };
        let Some(n) = named else {
            continue;
        };
        out.push(ShapeSite {
            site: site(&n.control, f, t.range.clone(), t.replacement.clone()),
            shape: Shape::LimitTest,
            evidence: n.terms.join(", "),
            lines: (t.line, t.line),
        });
    }
    for st in &f.settings {
        // A setting is a site only when the vocabulary names its control.
        let Some(n) = voc.name_setting(&st.name) else {
            continue;
        };
        out.push(ShapeSite {
            site: site(&n.control, f, st.range.clone(), st.replacement.clone()),
            shape: Shape::ProtectiveSetting,
            evidence: n.terms.join(", "),
            lines: (st.line, st.line),
        });
    }
    for m in &f.markers {
        out.push(on_changed_line(
            site(m.kind.control(), f, m.range.clone(), m.replacement.clone()),
            Shape::ProtectiveLiteral,
            m.text.clone(),
        ));
    }
    for r in &f.error_results {
        out.push(on_changed_line(
            site(result::CONTROL, f, r.range.clone(), r.replacement.clone()),
            Shape::ErrorResult,
            r.text.lines().next().unwrap_or("").trim().to_string(),
        ));
    }
    for c in &f.constraints {
        let (id, shape) = if c.twin {
            // Where the catalog declares a twin for the control.
            let id = format!("{}-twin", c.bound.control());
            if super::operator(&id).is_none() {
                continue;
            }
            (id, Shape::TighteningTwin)
        } else {
            (c.bound.control().to_string(), Shape::SchemaConstraint)
        };
        out.push(on_changed_line(
            site(&id, f, c.range.clone(), c.replacement.clone()),
            shape,
            c.text.clone(),
        ));
    }
    for c in &f.calls {
        // Named by the called function's words, else not a site; a value
        // made safe on its way into a log line is a secret kept out of it.
        let Some(mut n) = voc.name_call(&c.name) else {
            continue;
        };
        if c.logged && !c.assertion {
            n.control = "secret-redacted".to_string();
        }
        out.push(on_changed_line(
            site(&n.control, f, c.range.clone(), c.replacement.clone()),
            if c.assertion {
                Shape::AssertionCall
            } else {
                Shape::ProtectiveTransform
            },
            n.terms.join(", "),
        ));
    }
}

/// The shape sites of one file on its own (its guards, and its predicates
/// its own guards call); for tests and snippets.
pub fn find(file: &str, source: &[u8]) -> Vec<ShapeSite> {
    parse(file, source.to_vec())
        .map(|f| sites_of(std::slice::from_ref(&f), &Vocabulary::builtin()))
        .unwrap_or_default()
}

/// The shape sites of `files` under `root` (those `admits_file` keeps are
/// read), named with `vocabulary`, that `admits` keeps (asked with the named control's operator, or
/// [`guard_operator`]), generic guards only
/// with `generic`, and none where `found` (the catalog's sites) already has
/// a site in the same file within the guard's lines.
pub fn scan(
    root: &Path,
    files: &[String],
    found: &[Site],
    vocabulary: &Vocabulary,
    generic: bool,
    admits_file: impl Fn(&str) -> bool,
    admits: impl Fn(&Operator, &str) -> bool,
) -> Vec<Site> {
    let parsed: Vec<FileShapes> = files
        .iter()
        .filter(|f| Grammar::for_path(f).is_some() && admits_file(f))
        .filter_map(|f| std::fs::read(root.join(f)).ok().and_then(|s| parse(f, s)))
        .collect();
    sites_of(&parsed, vocabulary)
        .into_iter()
        .filter(|s| {
            let op = if s.site.operator == GUARD {
                generic.then(guard_operator)
            } else {
                super::operator(&s.site.operator)
            };
            op.is_some_and(|op| op.applies_to(&s.site.file) && admits(op, &s.site.file))
        })
        .filter(|s| {
            // A twin defers only to a tightening site of the catalog.
            let twin = s.shape == Shape::TighteningTwin;
            !found.iter().any(|c| {
                c.file == s.site.file
                    && (c.changed_line == s.site.changed_line
                        || (s.lines.0..=s.lines.1).contains(&c.changed_line))
                    && (!twin
                        || super::operator(&c.operator).is_some_and(|o| {
                            o.direction == Some(crate::config::Direction::Tighten)
                        }))
            })
        })
        .map(|s| s.site)
        .collect()
}

/// What the shape finders' unit tests share: parse a snippet, run a
/// finder on it, apply one edit.
#[cfg(test)]
pub(crate) mod testing {
    use std::ops::Range;

    use ast_grep_core::{AstGrep, Node};

    use super::Grammar;
    use crate::catalog::matcher::Doc;

    /// What `find` finds in `code`, parsed in the language of `file`.
    pub(crate) fn found<T>(
        file: &str,
        code: &str,
        find: impl for<'r> Fn(Grammar, &Node<'r, Doc>) -> Vec<T>,
    ) -> Vec<T> {
        let g = Grammar::for_path(file).unwrap();
        let tree: AstGrep<Doc> = AstGrep::try_new(code, g).unwrap();
        find(g, &tree.root())
    }

    /// `code` with `range` replaced.
    pub(crate) fn edited(code: &str, range: &Range<usize>, replacement: &str) -> String {
        let mut s = code.to_string();
        s.replace_range(range.clone(), replacement);
        s
    }

    /// The 1-based `line` of the edited `code`, trimmed.
    pub(crate) fn edited_line(
        code: &str,
        range: &Range<usize>,
        replacement: &str,
        line: usize,
    ) -> String {
        edited(code, range, replacement)
            .lines()
            .nth(line - 1)
            .unwrap()
            .trim()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(file: &str, code: &str) -> Vec<(String, String, usize)> {
        find(file, code.as_bytes())
            .into_iter()
            .map(|s| {
                let mutated = String::from_utf8(s.site.apply(code.as_bytes())).unwrap();
                // Every mutant still parses: no shape leaves broken syntax.
                let g = Grammar::for_path(file).unwrap();
                let tree: AstGrep<Doc> = AstGrep::try_new(&mutated, g).unwrap();
                assert!(
                    !tree
                        .root()
                        .dfs()
                        .any(|n| n.is_error() || n.kind() == "ERROR"),
                    "{} leaves a syntax error:\n{mutated}",
                    s.site.operator
                );
                (s.site.operator, mutated, s.site.changed_line)
            })
            .collect()
    }

    #[test]
    fn declared_and_called_controls_in_each_language_are_named() {
        let ts = "const S = z.object({ q: z.string().max(10) }).strict();\nconst cfg = { readOnly: true };\nexport function f(log, m, s) {\n  log.debug(redact(m, s));\n  assertQueryAllowed(m);\n}\n";
        let ids: Vec<String> = sites("src/a.ts", ts).into_iter().map(|x| x.0).collect();
        assert_eq!(
            ids,
            [
                "read-only-enforced",
                "additional-properties-false",
                "input-size-limited",
                "secret-redacted",
                "sql-statement-gated",
            ],
            "{ids:?}"
        );
        let py = "class Q(BaseModel):\n    model_config = ConfigDict(extra='forbid')\n    key: str = Field(max_length=128)\n\nREAD_ONLY = True\n";
        let ids: Vec<String> = sites("src/q.py", py).into_iter().map(|x| x.0).collect();
        assert_eq!(
            ids,
            [
                "read-only-enforced",
                "additional-properties-false",
                "input-size-limited"
            ],
            "{ids:?}"
        );
        let go = "package p\n\nvar c = &tls.Config{InsecureSkipVerify: false}\n\nvar t = mcp.NewTool(\"q\", mcp.WithString(\"q\", mcp.MaxLength(64)))\n";
        let ids: Vec<String> = sites("pkg/c.go", go).into_iter().map(|x| x.0).collect();
        assert_eq!(ids, ["tls-verified", "input-size-limited"], "{ids:?}");
    }

    #[test]
    fn python_refusal_guards_are_named_or_generic() {
        let code = "def run(q, mode):\n    if mode == 'write' and settings.read_only:\n        raise ToolError('server is in read-only mode')\n    if not q:\n        raise ValueError('empty')\n    return q\n";
        let s = sites("src/app.py", code);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].0, "read-only-enforced");
        assert!(
            s[0].1.contains("    if False:\n        raise ToolError"),
            "{}",
            s[0].1
        );
        assert_eq!(s[0].2, 2);
        assert_eq!(s[1].0, GUARD);
        // A presence test is named by its own words only, not by the check
        // function it sits in.
        let empty = "def authenticate(q):\n    if not q:\n        raise ValueError('empty')\n    return q\n";
        assert_eq!(sites("src/auth.py", empty)[0].0, GUARD);
        // Not a refusal: logging, an upstream status translated, a script guard.
        let neg = "def f(r):\n    if r.status_code == 403:\n        raise PermissionError('forbidden')\n    if debug:\n        log.info('x')\nif __name__ == '__main__':\n    raise SystemExit(main())\n";
        assert!(
            sites("src/a.py", neg).is_empty(),
            "{:?}",
            sites("src/a.py", neg)
        );
    }

    #[test]
    fn typescript_refusal_guards_answer_4xx_or_throw() {
        let code = "function h(req: Req, res: Res) {\n  if (!req.headers.authorization) {\n    res.status(401).json({ error: 'unauthorized' });\n    return;\n  }\n  if (body.length > MAX_BODY_SIZE) throw new Error('payload too large');\n}\n";
        let s = sites("src/server.ts", code);
        let ids: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        // The bound's tightening twin refuses a body exactly at the limit.
        assert_eq!(
            ids,
            [
                "auth-required",
                "body-size-limited",
                "body-size-limited-twin"
            ],
            "{s:?}"
        );
        assert!(s[0].1.contains("if (false) {"), "{}", s[0].1);
        assert!(s[2].1.contains("if (body.length >= MAX_BODY_SIZE) throw"));
        let neg = "function f(x: number) {\n  if (x > 1) {\n    console.log('big');\n  }\n}\n";
        assert!(sites("src/a.ts", neg).is_empty());
    }

    #[test]
    fn a_bound_that_caps_has_no_twin_one_that_refuses_has() {
        // At the bound, capping to the bound changes nothing: no twin.
        let cap = "def page(per_page):\n    if per_page > MAX_PER_PAGE:\n        per_page = MAX_PER_PAGE\n    return per_page\n";
        let ids: Vec<String> = sites("src/a.py", cap).into_iter().map(|s| s.0).collect();
        assert_eq!(ids, ["input-size-limited"]);
        let refuse = "def page(per_page):\n    if per_page > MAX_PER_PAGE:\n        raise ValueError('too many')\n    return per_page\n";
        let s = sites("src/a.py", refuse);
        let ids: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(ids, ["input-size-limited", "input-size-limited-twin"]);
        assert!(
            s[1].1.contains("if per_page >= MAX_PER_PAGE:"),
            "{}",
            s[1].1
        );
    }

    /// The twins `sites_of` finds in several files: `file:line control`.
    fn twins_in(files: &[(&str, &str)]) -> Vec<String> {
        let parsed: Vec<FileShapes> = files
            .iter()
            .filter_map(|(f, c)| parse(f, c.as_bytes().to_vec()))
            .collect();
        sites_of(&parsed, &Vocabulary::builtin())
            .into_iter()
            .filter(|s| s.shape == Shape::TighteningTwin)
            .map(|s| {
                format!(
                    "{}:{} {}",
                    s.site.file, s.site.changed_line, s.site.operator
                )
            })
            .collect()
    }

    #[test]
    fn an_imported_allow_list_is_narrowed_where_the_repository_binds_it_once() {
        let config = "ALLOWED_TOOLS = [\"search\", \"fetch\"]\n";
        let server = "from config import ALLOWED_TOOLS\n\ndef call(tool):\n    if tool not in ALLOWED_TOOLS:\n        raise PermissionError('tool not allowed')\n    return tool\n";
        assert_eq!(
            twins_in(&[("config.py", config), ("server.py", server)]),
            ["config.py:1 tool-allowlist-enforced-twin"]
        );
        // Bound in two modules: which one is imported is not known.
        let other = "def f():\n    pass\nALLOWED_TOOLS = [\"a\", \"b\"]\n";
        assert!(twins_in(&[
            ("config.py", config),
            ("other.py", other),
            ("server.py", server)
        ])
        .is_empty());
        // Go: a package variable of another file; a parameter of the same
        // name is the caller's list, not the package's.
        let hosts = "package p\n\nvar allowedHosts = []string{\"a.example\", \"b.example\"}\n";
        let check = "package p\n\nfunc f(h string) error {\n\tif !slices.Contains(allowedHosts, h) {\n\t\treturn fmt.Errorf(\"host not allowed\")\n\t}\n\treturn nil\n}\n";
        assert_eq!(
            twins_in(&[("hosts.go", hosts), ("check.go", check)]),
            ["hosts.go:3 egress-allowlisted-twin"]
        );
        // A bare Go name is its own package's (directory's) variable.
        assert!(twins_in(&[("other/hosts.go", hosts), ("check.go", check)]).is_empty());
        let param = check.replace("f(h string)", "f(h string, allowedHosts []string)");
        assert!(twins_in(&[("hosts.go", hosts), ("check.go", &param)]).is_empty());
    }

    #[test]
    fn go_refusal_guards_keep_their_variables_used() {
        let code = "package p\n\nfunc limit(q string) error {\n\tif n := len(q); n > maxQueryLength {\n\t\treturn fmt.Errorf(\"query too long: %d\", n)\n\t}\n\tv, err := load(q)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\t_ = v\n\treturn nil\n}\n";
        let s = sites("pkg/a.go", code);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].0, "input-size-limited");
        assert_eq!(s[1].0, "input-size-limited-twin");
        assert!(s[1].1.contains("if n := len(q); n >= maxQueryLength {"));
        assert!(
            s[0].1
                .contains("if n := len(q); false && (n > maxQueryLength) {"),
            "{}",
            s[0].1
        );
        // `if err != nil { return nil, err }` passes an error on: named only by
        // a check that produced it.
        let named = "package p\n\nfunc h(r *Req) error {\n\tif err := verifyBearerToken(r); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n";
        let s = sites("pkg/h.go", named);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "auth-required");
        // A check verb's error passed on is named by the check's name like a
        // check called for its exception; a getter's error is not a check's.
        let by_call = "package p\n\nfunc h(ns string) error {\n\tif err := validatePathSegment(ns); err != nil {\n\t\treturn err\n\t}\n\tu, err := authorizationServerPath(ns)\n\tif err != nil {\n\t\treturn err\n\t}\n\t_ = u\n\treturn nil\n}\n";
        let s = sites("pkg/v.go", by_call);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "path-contained");
        assert_eq!(s[0].2, 4);
    }

    #[test]
    fn an_inline_allow_list_of_values_validates_input_whatever_its_words() {
        let go = "package p\n\nfunc f(op string) error {\n\tif op != \"list\" && op != \"get\" {\n\t\treturn fmt.Errorf(\"bad op\")\n\t}\n\tif op != \"list\" {\n\t\treturn fmt.Errorf(\"bad op\")\n\t}\n\treturn nil\n}\n";
        let s = sites("pkg/o.go", go);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!((s[0].0.as_str(), s[0].2), ("input-pattern-validated", 4));
        assert_eq!((s[1].0.as_str(), s[1].2), (GUARD, 7));
        let py =
            "def f(fmt):\n    if fmt not in ('json', 'csv'):\n        raise ValueError('no')\n";
        let s = sites("o.py", py);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "input-pattern-validated");
    }

    #[test]
    fn a_flag_refused_before_a_command_line_is_argument_injection() {
        // The refusal goes through a helper that never returns; the
        // escape hatch is wired to the environment; the checking call is
        // made for its exception.
        let ts = "const DANGEROUS_FLAGS = new Set<string>(['server', 'kubeconfig']);\nfunction reject(flag: string): never {\n  throw new Error(`refused ${flag}`);\n}\nfunction isUnsafeFlagsAllowed(): boolean {\n  return process.env.ALLOW_KUBECTL_UNSAFE_FLAGS === 'true';\n}\nexport function assertSafeArgv(args: string[]): void {\n  for (const tok of args) {\n    if (DANGEROUS_FLAGS.has(tok)) reject(tok);\n  }\n}\nexport function run(args: string[]) {\n  assertSafeArgv(args);\n  return spawn('kubectl', args);\n}\n";
        let s = sites("src/flags.ts", ts);
        let at: Vec<(&str, usize)> = s.iter().map(|x| (x.0.as_str(), x.2)).collect();
        for line in [6, 10, 14] {
            assert!(
                at.contains(&("argument-injection-refused", line)),
                "line {line}: {at:?}"
            );
        }
        assert!(
            s.iter().any(|x| x.1.contains("if (false) reject(tok);")),
            "{s:?}"
        );
    }

    #[test]
    fn a_credential_whose_absence_is_refused_names_the_guard() {
        // The tested value's name ends in a credential: auth-required, in
        // each language's presence test.
        let py = "def handler(request):\n    access_token = request.headers.get('x-token')\n    if not access_token:\n        raise ValueError('no')\n    if settings.token_url is None:\n        raise ValueError('no url')\n    return access_token\n";
        let s = sites("src/api.py", py);
        let ids: Vec<(&str, usize)> = s.iter().map(|x| (x.0.as_str(), x.2)).collect();
        // `token_url` is a URL, not a token: a generic guard.
        assert_eq!(ids, [("auth-required", 3), (GUARD, 5)], "{s:?}");
        let ts = "export function f(apiToken?: string) {\n  if (!apiToken) {\n    throw new Error('missing');\n  }\n}\n";
        assert_eq!(sites("src/a.ts", ts)[0].0, "auth-required");
        let none =
            "def f(access_token):\n    if access_token is None:\n        raise ValueError('no')\n";
        assert_eq!(sites("src/n.py", none)[0].0, "auth-required");
        let go = "package p\n\nfunc f(token string) error {\n\tif token == \"\" {\n\t\treturn errors.New(\"missing\")\n\t}\n\treturn nil\n}\n";
        assert_eq!(sites("pkg/a.go", go)[0].0, "auth-required");
        // A compound condition is not a presence test of one value.
        let both =
            "def f(token, page):\n    if not token and not page:\n        raise ValueError('no')\n";
        assert_eq!(sites("src/b.py", both)[0].0, GUARD);
    }

    #[test]
    fn sorting_a_caught_error_is_not_a_guard_except_in_go() {
        let py = "def f(e):\n    if isinstance(e, PermissionError) or e.code == 403:\n        raise HTTPException(status_code=403)\n    if not e:\n        raise ValueError('empty')\n";
        let s = sites("src/a.py", py);
        assert_eq!(s.iter().map(|x| x.2).collect::<Vec<_>>(), [4], "{s:?}");
        let ts = "function f(error: unknown) {\n  if (error instanceof InvalidParamsError) {\n    throw new McpError(ErrorCode.InvalidParams, 'invalid');\n  }\n  if (isQuotaError(error)) throw new Error('quota exceeded');\n  if (!(error instanceof Error) && !allowed) throw new Error('not allowed');\n}\n";
        let s = sites("src/a.ts", ts);
        // Only the last: it also tests `allowed`.
        assert_eq!(s.iter().map(|x| x.2).collect::<Vec<_>>(), [6], "{s:?}");
        // Go recognises a denial by its error value: still a guard.
        let go = "package p\n\nfunc f(err error) error {\n\tif errors.Is(err, ErrConfirmationDenied) {\n\t\treturn fmt.Errorf(\"denied: %w\", err)\n\t}\n\treturn nil\n}\n";
        assert_eq!(sites("pkg/a.go", go)[0].0, "confirmation-required");
    }

    #[test]
    fn a_regex_or_address_parse_that_refuses_validates_input() {
        let py = "def f(v):\n    if not _NAME_RE.fullmatch(v):\n        raise ValueError('bad')\n";
        assert_eq!(sites("src/a.py", py)[0].0, "input-pattern-validated");
        let go = "package p\n\nfunc f(v, ip string) error {\n\tif !reVersion.MatchString(v) {\n\t\treturn errors.New(\"bad\")\n\t}\n\tif net.ParseIP(ip) == nil {\n\t\treturn errors.New(\"bad\")\n\t}\n\treturn nil\n}\n";
        let ids: Vec<String> = sites("pkg/a.go", go).into_iter().map(|x| x.0).collect();
        assert_eq!(
            ids,
            ["input-pattern-validated", "input-pattern-validated"],
            "{ids:?}"
        );
    }

    #[test]
    fn a_refusal_no_word_names_is_named_by_the_check_it_branches_on() {
        let go = "package p\n\nfunc (rt *RT) round(gvk string) error {\n\tif !rt.isAllowed(gvk) {\n\t\treturn fmt.Errorf(\"kind %s\", gvk)\n\t}\n\treturn nil\n}\n";
        let s = sites("pkg/rt.go", go);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "tool-allowlist-enforced");
        assert!(
            s[0].1.contains("if false && (!rt.isAllowed(gvk)) {"),
            "{}",
            s[0].1
        );
    }

    #[test]
    fn an_error_value_a_check_hands_back_is_refused_when_returned() {
        let py = "async def get_access(request):\n    user, _, error_response = await _authenticate_request(request)\n    if error_response is not None:\n        return error_response\n    rows, err = load(user)\n    if err:\n        return err\n    return user\n";
        let s = sites("api/access.py", py);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "auth-required");
        assert!(s[0]
            .1
            .contains("    if False:\n        return error_response\n"));
        let ts = "export async function handle(req: Req) {\n  const authError = await verifyBearer(req);\n  if (authError) return authError;\n  return ok();\n}\n";
        let s = sites("src/h.ts", ts);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].0, "auth-required");
    }

    #[test]
    fn security_predicates_always_accept_in_the_polarity_their_callers_refuse() {
        let py = "def is_path_allowed(p) -> bool:\n    \"\"\"Inside the root?\"\"\"\n    return p.startswith(ROOT)\n\ndef read(p):\n    if not is_path_allowed(p):\n        raise PermissionError('path escapes the allowed root')\n    return open(p).read()\n";
        let s = sites("src/fs.py", py);
        let pred = s
            .iter()
            .find(|x| x.1.contains("return True\n"))
            .expect("predicate site");
        assert!(
            pred.1
                .contains("\"\"\"Inside the root?\"\"\"\n    return True\n    return p.startswith"),
            "{}",
            pred.1
        );
        assert_eq!(pred.0, "path-contained");
        let go = "package p\n\nfunc isBlockedHost(h string) bool {\n\treturn h == \"169.254.169.254\"\n}\n\nfunc fetch(h string) error {\n\tif isBlockedHost(h) {\n\t\treturn errors.New(\"blocked host\")\n\t}\n\treturn nil\n}\n";
        let s = sites("pkg/f.go", go);
        let pred = s
            .iter()
            .find(|x| x.1.contains("if true {"))
            .expect("predicate site");
        assert!(
            pred.1
                .contains("if true {\n\t\treturn false\n\t}\n\treturn h =="),
            "{}",
            pred.1
        );
        // Never called from a guard: not a site.
        let lonely = "def is_admin(u):\n    return u.role == 'admin'\n";
        assert!(sites("src/u.py", lonely).is_empty());
    }

    #[test]
    fn a_value_made_safe_on_its_way_into_a_log_is_a_secret_kept_out_of_it() {
        let py = "def show(body, log):\n    log.info('got %s', sanitize(body))\n    return sanitize(body)\n";
        let s = sites("src/show.py", py);
        let ids: Vec<(&str, usize)> = s.iter().map(|x| (x.0.as_str(), x.2)).collect();
        assert_eq!(
            ids,
            [("secret-redacted", 2), ("output-sanitized", 3)],
            "{s:?}"
        );
    }
}
