//! The built-in catalog of MCP security controls: mutation *operators*, not
//! single-site specs.
//!
//! Each operator (one YAML file per group under `mutations/`, embedded in the
//! binary) names a control, the seed rule it comes from, the files it reads,
//! and a matcher that finds every site of the control in a repository. Each
//! site is one mutant: applying it ([`Site::apply`]) removes or weakens the
//! control in that one place. `unguard audit` runs the suite against every
//! site; `unguard init` writes the [`OperatorKind::Template`] entries (semantic
//! controls no pattern can find) into a spec for the user to anchor.
//!
//! Matchers are structural where the control is a call argument, a decorator
//! or a branch (ast-grep patterns on the tree-sitter Python, TypeScript and
//! Go grammars), regex where text is exact enough, and `ini` for pytest settings.
//! Every operator carries positive snippets (must match, with the expected
//! mutant text) and negative ones (must not match); `tests/catalog.rs` runs
//! them all.

mod grammar;
mod load;
mod matcher;
pub mod shape;
pub mod viable;

use std::path::Path;
use std::sync::OnceLock;

use ast_grep_core::AstGrep;

use crate::globs::Globs;
use grammar::Grammar;
use matcher::{Doc, Edit, Matcher};

/// A source language the catalog understands structurally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// Python (`.py`, `.pyi`).
    Python,
    /// TypeScript and JavaScript (`.ts`, `.tsx`, `.js`, `.mjs`, …).
    TypeScript,
    /// Go (`.go`).
    Go,
}

impl Language {
    /// The language of a file, by extension (`None` for config files).
    pub fn from_path(path: &str) -> Option<Language> {
        Grammar::for_path(path).map(Grammar::language)
    }
    /// The name used in the catalog YAML (`python`, `typescript`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Go => "go",
        }
    }
    fn parse(s: &str) -> Option<Language> {
        match s {
            "python" => Some(Language::Python),
            "typescript" => Some(Language::TypeScript),
            "go" => Some(Language::Go),
            _ => None,
        }
    }
}

/// The catalog's groups, one YAML file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// Transport hardening (seed 002): bind address, host and origin
    /// allowlists, DNS-rebinding protection, bearer tokens.
    Transport,
    /// Authentication and authorization: auth required, token scope and
    /// signature, OAuth checks, sessions, secret redaction.
    Access,
    /// Tool exposure: read-only mode, tool allowlists, confirmation before an
    /// action, filtering of untrusted content.
    Exposure,
    /// Input handling: path containment, egress allowlists, argument
    /// validation, size and rate limits.
    Input,
    /// Data fidelity (seeds 000/001): safeguards against silent incompleteness.
    DataFidelity,
    /// Schema drift (seed 003): strict input schemas, stale revisions refused,
    /// validation before side effects, `list_changed` only once the new list
    /// is ready.
    SchemaDrift,
    /// The suite's own safety nets (seed 002 rule 7), not the server's.
    TestHarness,
}

impl Group {
    /// Every group, in the order `unguard catalog` lists them.
    pub const ALL: [Group; 7] = [
        Group::Transport,
        Group::Access,
        Group::Exposure,
        Group::Input,
        Group::DataFidelity,
        Group::SchemaDrift,
        Group::TestHarness,
    ];
    /// The name used in the YAML (`transport`, `data-fidelity`, …), also the
    /// file name under `mutations/`.
    pub fn name(self) -> &'static str {
        match self {
            Group::Transport => "transport",
            Group::Access => "access",
            Group::Exposure => "exposure",
            Group::Input => "input",
            Group::DataFidelity => "data-fidelity",
            Group::SchemaDrift => "schema-drift",
            Group::TestHarness => "test-harness",
        }
    }
    /// A heading for listings.
    pub fn title(self) -> &'static str {
        match self {
            Group::Transport => "Transport hardening",
            Group::Access => "Authentication and authorization",
            Group::Exposure => "Tool exposure",
            Group::Input => "Input handling",
            Group::DataFidelity => "Data fidelity",
            Group::SchemaDrift => "Schema drift",
            Group::TestHarness => "Test harness",
        }
    }
    fn parse(s: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.name() == s)
    }
}

/// An audit operator finds sites and mutates them; a template is a spec
/// entry for `unguard init`, for a control no pattern can find generically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperatorKind {
    /// Finds its sites with matchers and mutates each (`unguard audit`).
    Audit,
    /// A commented spec entry `unguard init` writes, for the user to anchor.
    Template,
}

/// A code snippet the operator is tested against: a positive snippet must
/// yield exactly `mutants` (one mutated text per site, in file order); a
/// negative snippet must yield none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The path the snippet is matched as (decides language and globs).
    pub file: String,
    /// The snippet's source text.
    pub code: String,
    /// The expected mutated text of each site, in file order (empty for a
    /// negative snippet).
    pub mutants: Vec<String>,
}

/// One catalog entry.
#[derive(Debug)]
pub struct Operator {
    /// Stable kebab-case id.
    pub id: String,
    /// One sentence: what the control guarantees.
    pub control: String,
    /// Seed document and rule, e.g. `002/4` (`003/N` is the N-th question of
    /// the schema-drift release gate).
    pub rule: String,
    /// The mcp-audit check id, where the seed names one (e.g. `FID-003`).
    pub check: Option<String>,
    /// The group (YAML file under `mutations/`) it belongs to.
    pub group: Group,
    /// The languages its matchers handle.
    pub languages: Vec<Language>,
    /// Globs over repo-relative paths (`**/*.py`); `*` stays in one directory.
    pub files: Globs,
    /// Globs excluded from `files` (e.g. test files for server controls).
    pub exclude: Globs,
    /// A server should have this control: "no site found" is itself a finding.
    pub expected: bool,
    /// Only its presence can be checked: no test can kill its mutant on a
    /// healthy suite (a suite timeout only acts when something hangs). Audit
    /// reports present / not present and runs no mutant; init writes it
    /// commented out.
    pub presence_only: bool,
    /// `loosen` (a negative test must kill its mutants) or `tighten` (it
    /// narrows the control by one accepted class: a positive twin must kill
    /// it); `None` where no direction applies (data fidelity, harness). An
    /// operator some `twin_of` names is `loosen`.
    pub direction: Option<crate::config::Direction>,
    /// For a tightening operator: the id of the loosening operator of the
    /// same control. Its mutants carry that operator's `control` text, so
    /// reports show both directions on one control.
    pub twin_of: Option<String>,
    /// Whether it is an audit operator or an `init` template.
    pub kind: OperatorKind,
    /// Which SDK APIs the operator knows (mcp 1.x FastMCP, 2.x MCPServer,
    /// `@modelcontextprotocol/sdk`).
    pub sdk: String,
    /// Anything a user should know when reading this operator's result.
    pub note: Option<String>,
    /// For [`OperatorKind::Template`]: a YAML `mutations:` entry with
    /// comments saying which line to anchor.
    pub template: Option<String>,
    /// Snippets it must match, with their expected mutants.
    pub positive: Vec<Snippet>,
    /// Snippets it must not match.
    pub negative: Vec<Snippet>,
    pub(crate) matchers: Vec<Matcher>,
}

impl Operator {
    /// The matcher kinds this operator uses (`structural`, `regex`, `ini`),
    /// deduplicated, in order of first use; empty for templates.
    pub fn matcher_kinds(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for m in &self.matchers {
            if !out.contains(&m.kind_name()) {
                out.push(m.kind_name());
            }
        }
        out
    }

    /// The control its mutants name: a tightening operator's twin's
    /// `control`, so both directions land on one control.
    pub fn mutant_control(&self) -> &str {
        self.twin_of
            .as_deref()
            .and_then(|t| catalog().iter().find(|o| o.id == t))
            .map_or(self.control.as_str(), |t| t.control.as_str())
    }

    /// Does this operator read `file` (repo-relative, `/`-separated)?
    pub fn applies_to(&self, file: &str) -> bool {
        self.files.is_match(file) && !self.exclude.is_match(file)
    }
}

/// One mutant: replacing `original` (bytes `start..end` of the file) by
/// `replacement` removes or weakens the control at this site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Id of the operator that found the site.
    pub operator: String,
    /// The file, relative to the scanned root, with `/` separators.
    pub file: String,
    /// Byte range in the original file.
    pub start: usize,
    /// Byte just after the range.
    pub end: usize,
    /// Where the matched node starts and ends: 1-based, like
    /// `mutate::line_col` (columns in characters, no BOM). A node can start
    /// on a line the mutation leaves unchanged (a multi-line call); outputs
    /// show [`Site::changed_line`].
    pub line: usize,
    /// 1-based column where the node starts, in characters.
    pub col: usize,
    /// 1-based line where the node ends.
    pub end_line: usize,
    /// 1-based column just after the node's end, in characters.
    pub end_col: usize,
    /// The site's line: the first line the mutation changes
    /// ([`crate::mutate::first_changed_line`]), the one line every output
    /// shows for this site.
    pub changed_line: usize,
    /// The site's text in the original file (bytes `start..end`).
    pub original: String,
    /// The text that replaces it in the mutant.
    pub replacement: String,
}

impl Site {
    /// The mutated file: `source` with this site replaced. `source` must be
    /// the file the site was found in (see [`Site::apply_checked`]).
    pub fn apply(&self, source: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(source.len() + self.replacement.len());
        out.extend_from_slice(&source[..self.start]);
        out.extend_from_slice(self.replacement.as_bytes());
        out.extend_from_slice(&source[self.end..]);
        out
    }

    /// [`Site::apply`], or `None` when `source` no longer holds `original`
    /// at `start..end` (the file changed since the scan).
    pub fn apply_checked(&self, source: &[u8]) -> Option<Vec<u8>> {
        let here = source.get(self.start..self.end)?;
        (here == self.original.as_bytes() && self.original != self.replacement)
            .then(|| self.apply(source))
    }

    /// The column the changed region starts at on [`Site::changed_line`]:
    /// the node's column when it starts on that line, else 1 (as
    /// [`crate::mutate::Change`] does for spec mutants).
    pub fn changed_col(&self) -> usize {
        if self.changed_line == self.line {
            self.col
        } else {
            1
        }
    }

    /// `file:line` (the changed line), for listings.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.changed_line)
    }
}

/// One mutant id per site, usable as a file name and stable while the code
/// around the site does not move: `<operator>--<file>-l<line>` (the changed
/// line) with `/` and
/// `.` in the path as `-`, and `-2`, `-3`, … for further sites of the same
/// operator on the same line.
pub fn mutant_ids(sites: &[Site]) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    sites
        .iter()
        .map(|s| {
            let path: String = s
                .file
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c.to_ascii_lowercase()
                    } else {
                        '-'
                    }
                })
                .collect();
            let base = format!(
                "{}--{}-l{}",
                s.operator,
                path.trim_matches('-'),
                s.changed_line
            );
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                base
            } else {
                format!("{base}-{n}")
            }
        })
        .collect()
}

/// The embedded catalog files, in group order.
pub const SOURCES: [(&str, &str); 7] = [
    (
        "mutations/transport.yaml",
        include_str!("../../mutations/transport.yaml"),
    ),
    (
        "mutations/access.yaml",
        include_str!("../../mutations/access.yaml"),
    ),
    (
        "mutations/exposure.yaml",
        include_str!("../../mutations/exposure.yaml"),
    ),
    (
        "mutations/input.yaml",
        include_str!("../../mutations/input.yaml"),
    ),
    (
        "mutations/data-fidelity.yaml",
        include_str!("../../mutations/data-fidelity.yaml"),
    ),
    (
        "mutations/schema-drift.yaml",
        include_str!("../../mutations/schema-drift.yaml"),
    ),
    (
        "mutations/test-harness.yaml",
        include_str!("../../mutations/test-harness.yaml"),
    ),
];

static CATALOG: OnceLock<Result<Vec<Operator>, String>> = OnceLock::new();

/// The built-in catalog, parsed and validated once. An error names the YAML
/// file and operator; call this at startup to report it instead of panicking.
pub fn try_catalog() -> Result<&'static [Operator], &'static str> {
    match CATALOG.get_or_init(|| load::load(&SOURCES)) {
        Ok(ops) => Ok(ops),
        Err(e) => Err(e),
    }
}

/// The built-in catalog. `tests/catalog.rs` loads it, so a build whose
/// catalog does not load cannot pass its tests; use [`try_catalog`] where an
/// error must be reported rather than panic.
pub fn catalog() -> &'static [Operator] {
    match try_catalog() {
        Ok(ops) => ops,
        Err(e) => panic!("the built-in catalog is broken: {e}"),
    }
}

/// Parse a catalog from YAML texts (`(name, text)` pairs, one group each),
/// with the same validation as the built-in one.
pub fn parse_catalog(sources: &[(&str, &str)]) -> Result<Vec<Operator>, String> {
    load::load(sources)
}

/// An operator of the built-in catalog by id.
pub fn operator(id: &str) -> Option<&'static Operator> {
    catalog().iter().find(|o| o.id == id)
}

/// The shape of a Python source that its import runs, as byte ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonShape {
    /// The module's statements, comments left out.
    pub statements: Vec<std::ops::Range<usize>>,
    /// The bodies of its functions and methods, outermost only (a nested
    /// function lies inside its outer body): code its import does not run
    /// unless it is called.
    pub bodies: Vec<std::ops::Range<usize>>,
    /// Its plain functions: defined at module level, no decorator (binding
    /// a name is all their import does).
    pub plain: Vec<std::ops::Range<usize>>,
}

/// The [`PythonShape`] of `source`; `None` when it is not UTF-8, holds a
/// NUL byte or does not parse cleanly.
pub fn python_shape(source: &[u8]) -> Option<PythonShape> {
    if source.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(source).ok()?;
    let tree: AstGrep<Doc> = AstGrep::try_new(text, Grammar::Python).ok()?;
    let root = tree.root();
    if root.dfs().any(|n| n.is_error() || n.is_missing()) {
        return None;
    }
    let mut shape = PythonShape::default();
    for n in root.children() {
        if n.is_named() && n.kind() != "comment" {
            shape.statements.push(n.range());
            if n.kind() == "function_definition" {
                shape.plain.push(n.range());
            }
        }
    }
    for n in root.dfs() {
        if n.kind() != "function_definition" {
            continue;
        }
        let Some(body) = n.field("body") else {
            continue;
        };
        let r = body.range();
        let outer = shape.bodies.last();
        if outer.is_some_and(|b| b.start <= r.start && r.end <= b.end) {
            continue;
        }
        shape.bodies.push(r);
    }
    Some(shape)
}

/// A file, parsed lazily once per grammar for all operators that need it.
struct Parsed<'a> {
    source: &'a [u8],
    grammar: Option<Grammar>,
    tree: OnceLock<Option<(AstGrep<Doc>, usize)>>,
}

impl<'a> Parsed<'a> {
    fn new(file: &str, source: &'a [u8]) -> Parsed<'a> {
        Parsed {
            source,
            grammar: Grammar::for_path(file),
            tree: OnceLock::new(),
        }
    }
    /// The tree and the byte offset its text starts at (after a BOM).
    /// `None` for files without a grammar, with NUL bytes or not UTF-8.
    fn tree(&self) -> Option<(&AstGrep<Doc>, usize)> {
        self.tree
            .get_or_init(|| {
                let g = self.grammar?;
                if self.source.contains(&0) {
                    return None;
                }
                let (offset, body) = match self.source.strip_prefix(b"\xEF\xBB\xBF") {
                    Some(b) => (3, b),
                    None => (0, self.source),
                };
                let text = std::str::from_utf8(body).ok()?;
                AstGrep::try_new(text, g).ok().map(|t| (t, offset))
            })
            .as_ref()
            .map(|(t, o)| (t, *o))
    }
}

fn edits_of(m: &Matcher, file: &str, parsed: &Parsed<'_>) -> Vec<Edit> {
    let lang = parsed.grammar.map(Grammar::language);
    let narrowed = |globs: &Globs| globs.is_empty() || globs.is_match(file);
    match m {
        Matcher::Ast(rule) => {
            if lang != Some(rule.lang) {
                return Vec::new();
            }
            let Some((tree, offset)) = parsed.tree() else {
                return Vec::new();
            };
            let g = parsed.grammar.expect("tree implies grammar");
            rule.edits(g, tree)
                .into_iter()
                .map(|e| Edit {
                    range: e.range.start + offset..e.range.end + offset,
                    replacement: e.replacement,
                })
                .collect()
        }
        Matcher::Regex(rule) if !narrowed(&rule.files) => Vec::new(),
        Matcher::Ini(rule) if !narrowed(&rule.files) => Vec::new(),
        Matcher::Regex(rule) => match rule.lang {
            Some(l) if lang != Some(l) => Vec::new(),
            Some(_) => match parsed.tree() {
                Some(tree) => rule.edits(parsed.source, Some(tree)),
                None => Vec::new(),
            },
            None => rule.edits(parsed.source, None),
        },
        Matcher::Ini(rule) => rule.edits(parsed.source),
    }
}

fn sites_in(op: &Operator, file: &str, parsed: &Parsed<'_>) -> Vec<Site> {
    if op.kind != OperatorKind::Audit || !op.applies_to(file) {
        return Vec::new();
    }
    let source = parsed.source;
    let mut edits: Vec<Edit> = op
        .matchers
        .iter()
        .flat_map(|m| edits_of(m, file, parsed))
        .filter(|e| {
            e.range.end <= source.len() && source[e.range.clone()] != *e.replacement.as_bytes()
        })
        .collect();
    edits.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.replacement).cmp(&(
            b.range.start,
            b.range.end,
            &b.replacement,
        ))
    });
    edits.dedup();
    edits
        .into_iter()
        .map(|e| {
            let (line, col) = crate::mutate::line_col(source, e.range.start);
            let (end_line, end_col) = crate::mutate::line_col(source, e.range.end);
            let changed_line = crate::mutate::first_changed_line_of_edit(
                source,
                e.range.clone(),
                e.replacement.as_bytes(),
            )
            .unwrap_or(line);
            Site {
                operator: op.id.clone(),
                file: file.to_string(),
                start: e.range.start,
                end: e.range.end,
                line,
                col,
                end_line,
                end_col,
                changed_line,
                original: String::from_utf8_lossy(&source[e.range.clone()]).into_owned(),
                replacement: e.replacement,
            }
        })
        .collect()
}

/// Every site of `op` in one file (`file` is repo-relative; it decides the
/// language and the globs). Empty for templates and files the operator does
/// not read. Sites are in file order; none of them is a no-op.
pub fn find_sites(op: &Operator, file: &str, source: &[u8]) -> Vec<Site> {
    sites_in(op, file, &Parsed::new(file, source))
}

/// Every audit operator of the built-in catalog over the given repo-relative
/// files under `root` (each file read and parsed once). Unreadable files are
/// skipped. Sites come per file (in the given order), then per operator (in
/// catalog order), then in file order.
pub fn scan(root: &Path, files: &[String]) -> Vec<Site> {
    scan_with(catalog(), root, files)
}

/// [`scan`] with another catalog.
pub fn scan_with(ops: &[Operator], root: &Path, files: &[String]) -> Vec<Site> {
    scan_where(ops, root, files, |_, _| true)
}

/// [`scan`] limited to the (operator, file) pairs `admits` keeps (the
/// user's `--file`/`--skip-file`/`--control` and the default excludes).
pub fn scan_where(
    ops: &[Operator],
    root: &Path,
    files: &[String],
    admits: impl Fn(&Operator, &str) -> bool,
) -> Vec<Site> {
    let mut out = Vec::new();
    for file in files {
        let wanted: Vec<&Operator> = ops
            .iter()
            .filter(|o| o.kind == OperatorKind::Audit && o.applies_to(file) && admits(o, file))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let Ok(source) = std::fs::read(root.join(file)) else {
            continue;
        };
        let parsed = Parsed::new(file, &source);
        for op in wanted {
            out.extend(sites_in(op, file, &parsed));
        }
    }
    out
}

/// The audit operators that are `expected` but have no site in `sites`:
/// controls the server should have and does not (or not where unguard can
/// see them).
pub fn missing_expected<'a>(ops: &'a [Operator], sites: &[Site]) -> Vec<&'a Operator> {
    ops.iter()
        .filter(|o| o.kind == OperatorKind::Audit && o.expected)
        .filter(|o| !sites.iter().any(|s| s.operator == o.id))
        .collect()
}

/// The catalog as Markdown for the README: per group, one line per audit
/// operator (id, control, rule, matcher kinds, languages), then the init
/// templates. README.md holds it between `<!-- catalog-start -->` and
/// `<!-- catalog-end -->`; a test keeps the two equal.
pub fn readme_section() -> String {
    readme_section_of(catalog())
}

fn seed_refs(ops: &[&Operator]) -> String {
    let mut docs: Vec<&str> = ops
        .iter()
        .filter_map(|o| o.rule.split('/').next())
        .collect();
    docs.sort_unstable();
    docs.dedup();
    docs.join(", ")
}

fn operator_line(o: &Operator) -> String {
    let mut tags = vec![o.rule.clone()];
    if let Some(c) = &o.check {
        tags.push(c.clone());
    }
    if o.kind == OperatorKind::Audit {
        let kinds = o.matcher_kinds();
        // A shape twin has no matcher: the shape finder builds its sites.
        tags.push(if kinds.is_empty() {
            "shape".to_string()
        } else {
            kinds.join("+")
        });
    }
    let langs: Vec<&str> = o.languages.iter().map(|l| l.name()).collect();
    if !langs.is_empty() {
        tags.push(langs.join(", "));
    }
    if o.expected {
        tags.push("expected".into());
    }
    match (o.direction, &o.twin_of) {
        (Some(d), Some(t)) => tags.push(format!("{} (twin of `{t}`)", d.as_str())),
        (Some(d), None) => tags.push(d.as_str().to_string()),
        _ => {}
    }
    format!("- `{}`: {} ({})", o.id, o.control, tags.join(" · "))
}

/// [`readme_section`] for any catalog.
pub fn readme_section_of(ops: &[Operator]) -> String {
    let mut out = String::new();
    let audit: Vec<&Operator> = ops
        .iter()
        .filter(|o| o.kind == OperatorKind::Audit)
        .collect();
    let templates: Vec<&Operator> = ops
        .iter()
        .filter(|o| o.kind == OperatorKind::Template)
        .collect();
    out.push_str(&format!(
        "{} audit operators and {} init templates. Each line: id, the control, then seed rule \
         (document/rule), mcp-audit check id where the seed names one, matcher kind, languages, \
         and `expected` when a server should have the control (no site found is itself a \
         finding).\n",
        audit.len(),
        templates.len()
    ));
    for g in Group::ALL {
        let in_group: Vec<&Operator> = audit.iter().copied().filter(|o| o.group == g).collect();
        if in_group.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n**{}** (seed {})\n\n",
            g.title(),
            seed_refs(&in_group)
        ));
        for o in in_group {
            out.push_str(&operator_line(o));
            out.push('\n');
        }
    }
    if !templates.is_empty() {
        out.push_str(
            "\n**Init templates** (semantic controls no pattern finds generically; \
             `unguard init` writes them into `unguard.yaml` with a comment saying which line to \
             anchor)\n\n",
        );
        for o in templates {
            out.push_str(&operator_line(o));
            out.push('\n');
        }
    }
    out
}
