//! The three matcher kinds a catalog operator can use, and how each turns a
//! file into [`Edit`]s (byte range + replacement):
//!
//! - **structural** ([`AstRule`]): ast-grep patterns (or node kinds) on the
//!   tree-sitter tree, narrowed by conditions on metavariables, fields and
//!   ancestors; the edit rewrites or removes the matched node (or one of its
//!   parts). Comments, strings, nesting and line breaks are the parser's
//!   business, so they neither hide a site nor fake one.
//! - **regex** ([`RegexRule`]): a byte regex with `$1` replacements; in a
//!   Python/TypeScript file a match that starts inside a comment is dropped
//!   (and `inside`/`not_inside` can ask for more, e.g. "inside a list").
//! - **ini** ([`IniRule`]): a `key = value` line inside named sections of an
//!   INI/TOML file (`[pytest]`, `[tool.pytest.ini_options]`).

use std::ops::Range;

use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::meta_var::MetaVarEnv;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Node, NodeMatch, Pattern};
use regex::Regex;

use super::grammar::Grammar;
use super::Language;
use crate::globs::Globs;

pub(crate) type Doc = StrDoc<Grammar>;

/// One way an operator finds its sites.
#[derive(Debug)]
pub(crate) enum Matcher {
    Ast(Box<AstRule>),
    Regex(RegexRule),
    Ini(IniRule),
}

impl Matcher {
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Matcher::Ast(_) => "structural",
            Matcher::Regex(_) => "regex",
            Matcher::Ini(_) => "ini",
        }
    }
}

/// A text condition: `matches` must match, `not` must not, and the node's
/// kind must be one of `kinds` (when given).
#[derive(Debug, Default)]
pub(crate) struct Cond {
    pub matches: Option<Regex>,
    pub not: Option<Regex>,
    pub kinds: Vec<String>,
}

impl Cond {
    fn text_ok(&self, text: &str) -> bool {
        self.matches.as_ref().is_none_or(|r| r.is_match(text))
            && self.not.as_ref().is_none_or(|r| !r.is_match(text))
    }
    fn node_ok(&self, node: &Node<'_, Doc>) -> bool {
        (self.kinds.is_empty() || kind_in(&self.kinds, node)) && self.text_ok(&node.text())
    }
}

/// A condition on an ancestor (or, for `followed_by`, a sibling): the nearest
/// node of one of `kinds` (or, with `any`, some node of those kinds), whose
/// `field` (or whole text) satisfies `cond`. An ancestor of a `stop` kind met
/// first ends the search ("directly in a list, not in a call inside it").
#[derive(Debug)]
pub(crate) struct NodeCond {
    pub kinds: Vec<String>,
    pub stop: Vec<String>,
    pub field: Option<String>,
    pub cond: Cond,
    pub any: bool,
}

fn kind_in(kinds: &[String], node: &Node<'_, Doc>) -> bool {
    let k = node.kind();
    kinds.iter().any(|x| x.as_str() == k.as_ref())
}

impl NodeCond {
    fn holds(&self, node: &Node<'_, Doc>) -> bool {
        let part = match &self.field {
            Some(f) => field_path(node, f),
            None => Some(node.clone()),
        };
        part.is_some_and(|p| self.cond.node_ok(&p))
    }

    /// Is `node` inside such an ancestor?
    fn inside(&self, node: &Node<'_, Doc>) -> bool {
        let mut candidates = node
            .ancestors()
            .take_while(|a| !kind_in(&self.stop, a) || kind_in(&self.kinds, a))
            .filter(|a| kind_in(&self.kinds, a));
        if self.any {
            candidates.any(|a| self.holds(&a))
        } else {
            candidates.next().is_some_and(|a| self.holds(&a))
        }
    }
}

/// Which neighbouring statement a `followed_by`/`preceded_by` reads.
#[derive(Debug, Clone, Copy)]
enum Side {
    After,
    Before,
}

impl Side {
    fn step<'r>(self, n: Node<'r, Doc>) -> Option<Node<'r, Doc>> {
        match self {
            Side::After => n.next(),
            Side::Before => n.prev(),
        }
    }
}

/// What a structural rule does to the node it matched.
#[derive(Debug)]
pub(crate) enum EditKind {
    /// Replace the target by this template (`$VAR`, `$$$VAR`, `${field.path}`).
    Rewrite(String),
    /// Remove the target as an element of its list (arguments, list or dict
    /// entries, decorators): with one separating comma, and the whole line
    /// when it stood alone on it.
    Remove,
    /// The target is a tuple/array: drop its last element (a 2-tuple
    /// becomes its first element).
    DropLast,
}

/// How a structural rule finds candidate nodes.
#[derive(Debug)]
pub(crate) enum Head {
    /// ast-grep patterns (any of them), compiled per grammar.
    Patterns(Vec<(Grammar, Vec<Pattern>)>),
    /// Node kinds; their fields are the rule's variables.
    Kinds(Vec<String>),
}

#[derive(Debug)]
pub(crate) struct AstRule {
    pub lang: Language,
    pub head: Head,
    /// Conditions on metavariables (`A`), fields (`value.body`) or `_`.
    pub where_: Vec<(String, Cond)>,
    pub inside: Vec<NodeCond>,
    pub not_inside: Vec<NodeCond>,
    /// The statement holding the match must be followed by a statement for
    /// which this holds; `$VAR` in its regex is the variable's text, escaped.
    pub followed_by: Option<(NodeCond, Option<String>)>,
    /// The same for the statement before it ("the `if` right after the
    /// call that authenticates"). Besides fields and metavariables, its
    /// regex may name a named group of a `where` regex (`(?P<CRED>\w+)`).
    pub preceded_by: Option<(NodeCond, Option<String>)>,
    /// Variable or field path the edit applies to (default: the match).
    pub target: Option<String>,
    pub edit: EditKind,
}

#[derive(Debug)]
pub(crate) struct RegexRule {
    pub re: regex::bytes::Regex,
    pub replace: String,
    /// When set, only files of this language, with `inside`/`not_inside`
    /// checked on the node at the match start (default `not_inside`: comment).
    pub lang: Option<Language>,
    pub inside: Vec<NodeCond>,
    pub not_inside: Vec<NodeCond>,
    /// Only files matching one of these globs (empty: all the operator reads).
    pub files: Globs,
}

#[derive(Debug)]
pub(crate) struct IniRule {
    /// Section names as written between `[` and `]`.
    pub sections: Vec<String>,
    /// The key, matched case-insensitively.
    pub key: String,
    /// Edit inside the value (`$1` in `replace`); without it the whole
    /// `key = value` entry (continuation lines included) is removed.
    pub value: Option<(regex::Regex, String)>,
    /// Only files matching one of these globs (empty: all the operator reads).
    pub files: Globs,
}

/// One edit: replace `range` of the file by `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub range: Range<usize>,
    pub replacement: String,
}

// ------------------------------------------------------------- structural

/// A field path (`value.body`) below `node`.
fn field_path<'r>(node: &Node<'r, Doc>, path: &str) -> Option<Node<'r, Doc>> {
    let mut cur = node.clone();
    for part in path.split('.') {
        cur = cur.field(part)?;
    }
    Some(cur)
}

fn is_metavar(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && name != "_"
}

/// The byte range and text of a variable: `_` (the match), a metavariable
/// (single or multiple) or a field path.
fn var_range(nm: &NodeMatch<'_, Doc>, src: &str, name: &str) -> Option<Range<usize>> {
    let node = nm.get_node();
    if name == "_" {
        return Some(node.range());
    }
    if is_metavar(name) {
        let env = nm.get_env();
        if let Some(n) = env.get_match(name) {
            return Some(n.range());
        }
        let many = env.get_multiple_matches(name);
        let first = many.first()?;
        let last = many.last()?;
        let r = first.range().start..last.range().end;
        return (r.end <= src.len()).then_some(r);
    }
    field_path(node, name).map(|n| n.range())
}

fn var_node<'r>(nm: &NodeMatch<'r, Doc>, name: &str) -> Option<Node<'r, Doc>> {
    let node = nm.get_node();
    if name == "_" {
        return Some(node.clone());
    }
    if is_metavar(name) {
        return nm.get_env().get_match(name).cloned();
    }
    field_path(node, name)
}

/// Expand `$VAR`, `$$$VAR` and `${field.path}` in a template.
pub(crate) fn expand(tpl: &str, mut lookup: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = tpl;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(body) = rest.strip_prefix("${") {
            let end = body.find('}')?;
            out.push_str(&lookup(&body[..end])?);
            rest = &body[end + 1..];
            continue;
        }
        let after = rest.trim_start_matches('$');
        let len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        if len == 0 {
            out.push('$');
            rest = &rest[1..];
            continue;
        }
        out.push_str(&lookup(&after[..len])?);
        rest = &after[len..];
    }
    out.push_str(rest);
    Some(out)
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t')
}

/// Extend `range` to whole lines when only whitespace stands beside it on
/// its first and last line.
fn whole_lines(src: &[u8], range: Range<usize>) -> Range<usize> {
    let mut start = range.start;
    while start > 0 && is_ws(src[start - 1]) {
        start -= 1;
    }
    let at_line_start = start == 0 || src[start - 1] == b'\n';
    let mut end = range.end;
    while end < src.len() && is_ws(src[end]) {
        end += 1;
    }
    let at_line_end = end == src.len() || src[end] == b'\n' || src[end] == b'\r';
    if at_line_start && at_line_end {
        if src.get(end) == Some(&b'\r') {
            end += 1;
        }
        if src.get(end) == Some(&b'\n') {
            end += 1;
        }
        start..end
    } else {
        range
    }
}

fn is_comment(n: &Node<'_, Doc>) -> bool {
    n.kind() == "comment"
}

/// The range that removes `node` from its list: the node and the comma after
/// it (or, for the last element, the comma before it), as whole lines when
/// the element stood on its own line.
fn removal_range(src: &str, node: &Node<'_, Doc>) -> Range<usize> {
    let bytes = src.as_bytes();
    let r = node.range();
    let mut next = node.next();
    while next.as_ref().is_some_and(is_comment) {
        next = next.and_then(|n| n.next());
    }
    if let Some(comma) = next.filter(|n| n.kind() == ",") {
        let mut end = comma.range().end;
        // Spaces after the comma on the same line go too.
        while end < bytes.len() && is_ws(bytes[end]) {
            end += 1;
        }
        let candidate = whole_lines(bytes, r.start..comma.range().end);
        if candidate.start < r.start {
            return candidate;
        }
        // Keep the text after the comma where it was (a comment, the next element).
        let at_eol = end == bytes.len() || bytes[end] == b'\n' || bytes[end] == b'\r';
        return r.start..if at_eol { comma.range().end } else { end };
    }
    let mut prev = node.prev();
    while prev.as_ref().is_some_and(is_comment) {
        prev = prev.and_then(|n| n.prev());
    }
    if let Some(comma) = prev.filter(|n| n.kind() == ",") {
        return comma.range().start..r.end;
    }
    whole_lines(bytes, r)
}

impl AstRule {
    fn candidates<'r>(&self, grammar: Grammar, node: Node<'r, Doc>) -> Option<NodeMatch<'r, Doc>> {
        match &self.head {
            Head::Patterns(per) => {
                let (_, pats) = per.iter().find(|(g, _)| *g == grammar)?;
                pats.iter().find_map(|p| p.match_node(node.clone()))
            }
            Head::Kinds(kinds) => {
                if kind_in(kinds, &node) {
                    Some(NodeMatch::new(node, MetaVarEnv::new()))
                } else {
                    None
                }
            }
        }
    }

    fn conditions_hold(&self, nm: &NodeMatch<'_, Doc>, src: &str) -> bool {
        for (var, cond) in &self.where_ {
            let ok = if cond.kinds.is_empty() {
                var_range(nm, src, var).is_some_and(|r| cond.text_ok(&src[r]))
            } else {
                var_node(nm, var).is_some_and(|n| cond.node_ok(&n))
            };
            if !ok {
                return false;
            }
        }
        let node = nm.get_node();
        if !self.inside.iter().all(|c| c.inside(node)) {
            return false;
        }
        if self.not_inside.iter().any(|c| c.inside(node)) {
            return false;
        }
        if let Some((cond, raw)) = &self.followed_by {
            if !self.neighbour(nm, src, cond, raw.as_deref(), Side::After) {
                return false;
            }
        }
        if let Some((cond, raw)) = &self.preceded_by {
            if !self.neighbour(nm, src, cond, raw.as_deref(), Side::Before) {
                return false;
            }
        }
        true
    }

    /// The named groups of the `where` regexes, matched on their variables.
    fn captures(&self, nm: &NodeMatch<'_, Doc>, src: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (var, cond) in &self.where_ {
            let Some(re) = &cond.matches else { continue };
            if re.capture_names().flatten().next().is_none() {
                continue;
            }
            let Some(r) = var_range(nm, src, var) else {
                continue;
            };
            if let Some(caps) = re.captures(&src[r]) {
                for name in re.capture_names().flatten() {
                    if let Some(m) = caps.name(name) {
                        out.push((name.to_string(), m.as_str().to_string()));
                    }
                }
            }
        }
        out
    }

    /// The statement holding the match is followed (or preceded) by one
    /// satisfying `cond`.
    fn neighbour<'r>(
        &self,
        nm: &NodeMatch<'r, Doc>,
        src: &str,
        cond: &NodeCond,
        raw: Option<&str>,
        side: Side,
    ) -> bool {
        let stmt = std::iter::once(nm.get_node().clone())
            .chain(nm.get_node().ancestors())
            .find(|n| {
                n.parent().is_some_and(|p| {
                    matches!(
                        &*p.kind(),
                        "block" | "module" | "program" | "statement_block" | "statement_list"
                    )
                })
            });
        let Some(stmt) = stmt else { return false };
        let step = |n: Node<'r, Doc>| side.step(n);
        let mut other = step(stmt);
        while other
            .as_ref()
            .is_some_and(|n| is_comment(n) || !n.is_named())
        {
            other = other.and_then(step);
        }
        let Some(other) = other else { return false };
        if !cond.kinds.is_empty() && !kind_in(&cond.kinds, &other) {
            return false;
        }
        let part = match &cond.field {
            Some(f) => field_path(&other, f),
            None => Some(other.clone()),
        };
        let Some(part) = part else { return false };
        let text = part.text();
        if let Some(raw) = raw {
            let caps = self.captures(nm, src);
            let Some(pattern) = expand(raw, |v| {
                var_range(nm, src, v)
                    .map(|r| src[r].to_string())
                    .or_else(|| caps.iter().find(|(n, _)| n == v).map(|(_, t)| t.clone()))
                    .map(|t| regex::escape(&t))
            }) else {
                return false;
            };
            match Regex::new(&pattern) {
                Ok(re) if re.is_match(&text) => {}
                _ => return false,
            }
        }
        cond.cond.not.as_ref().is_none_or(|r| !r.is_match(&text))
    }

    fn edit(&self, nm: &NodeMatch<'_, Doc>, src: &str) -> Option<Edit> {
        let target = match &self.target {
            Some(t) => var_node(nm, t)?,
            None => nm.get_node().clone(),
        };
        let lookup = |v: &str| var_range(nm, src, v).map(|r| src[r].to_string());
        match &self.edit {
            EditKind::Rewrite(tpl) => {
                let range = match &self.target {
                    Some(t) => var_range(nm, src, t)?,
                    None => target.range(),
                };
                Some(Edit {
                    range,
                    replacement: expand(tpl, lookup)?,
                })
            }
            EditKind::Remove => Some(Edit {
                range: removal_range(src, &target),
                replacement: String::new(),
            }),
            EditKind::DropLast => {
                let elems: Vec<_> = target
                    .children()
                    .filter(|c| c.is_named() && !is_comment(c))
                    .collect();
                match elems.len() {
                    2 => Some(Edit {
                        range: target.range(),
                        replacement: elems[0].text().to_string(),
                    }),
                    n if n > 2 => Some(Edit {
                        range: removal_range(src, &elems[n - 1]),
                        replacement: String::new(),
                    }),
                    _ => None,
                }
            }
        }
    }

    /// Every edit of this rule in a parsed file.
    pub(crate) fn edits(&self, grammar: Grammar, root: &AstGrep<Doc>) -> Vec<Edit> {
        let src = root.get_text();
        let mut out = Vec::new();
        for node in root.root().dfs() {
            let Some(nm) = self.candidates(grammar, node) else {
                continue;
            };
            if !self.conditions_hold(&nm, src) {
                continue;
            }
            if let Some(e) = self.edit(&nm, src) {
                out.push(e);
            }
        }
        out
    }
}

// ------------------------------------------------------------------ regex

/// The smallest node covering `range`.
fn node_at<'r>(root: &'r AstGrep<Doc>, range: Range<usize>) -> Option<Node<'r, Doc>> {
    let mut cur = root.root();
    loop {
        let next = cur.children().find(|child| {
            let r = child.range();
            r.start <= range.start && range.end <= r.end
        });
        match next {
            Some(child) => cur = child,
            None => return Some(cur),
        }
    }
}

impl RegexRule {
    /// Every edit of this rule; `tree` is the parsed file when the rule is
    /// bound to a language (`None` in other files). `offset` is where the
    /// tree's text starts in `source` (after a BOM).
    pub(crate) fn edits(&self, source: &[u8], tree: Option<(&AstGrep<Doc>, usize)>) -> Vec<Edit> {
        let mut out = Vec::new();
        for caps in self.re.captures_iter(source) {
            let m = caps.get(0).expect("group 0");
            if m.is_empty() {
                continue;
            }
            if let Some((root, offset)) = tree {
                let Some(start) = m.start().checked_sub(offset) else {
                    continue;
                };
                let end = m.end() - offset;
                // The node at the match: its start decides "in a comment";
                // the whole match decides "inside a list".
                let Some(at_start) = node_at(root, start..start + 1) else {
                    continue;
                };
                let Some(covering) = node_at(root, start..end) else {
                    continue;
                };
                let in_self_or_ancestor = |c: &NodeCond, n: &Node<'_, Doc>| {
                    (kind_in(&c.kinds, n) && c.holds(n)) || c.inside(n)
                };
                if self
                    .not_inside
                    .iter()
                    .any(|c| in_self_or_ancestor(c, &at_start))
                {
                    continue;
                }
                if !self
                    .inside
                    .iter()
                    .all(|c| in_self_or_ancestor(c, &covering))
                {
                    continue;
                }
            }
            let mut replacement = Vec::new();
            caps.expand(self.replace.as_bytes(), &mut replacement);
            let Ok(replacement) = String::from_utf8(replacement) else {
                continue;
            };
            out.push(Edit {
                range: m.range(),
                replacement,
            });
        }
        out
    }
}

// -------------------------------------------------------------------- ini

impl IniRule {
    pub(crate) fn edits(&self, source: &[u8]) -> Vec<Edit> {
        let Ok(text) = std::str::from_utf8(source) else {
            return Vec::new();
        };
        let key_re = Regex::new(&format!(
            r"(?i)^([ \t]*){}[ \t]*[=:]",
            regex::escape(&self.key)
        ))
        .expect("escaped key");
        let mut out = Vec::new();
        let mut section: Option<&str> = None;
        let mut lines = Vec::new();
        let mut pos = 0;
        for line in text.split_inclusive('\n') {
            lines.push((pos, line));
            pos += line.len();
        }
        let mut i = 0;
        while i < lines.len() {
            let (start, line) = lines[i];
            let content = line.trim_end_matches(['\n', '\r']);
            if let Some(rest) = content.strip_prefix('[') {
                section = rest.split_once(']').map(|(name, _)| name.trim());
                i += 1;
                continue;
            }
            let in_section = section.is_some_and(|s| self.sections.iter().any(|w| w == s));
            let Some(key) = key_re.find(content).filter(|_| in_section) else {
                i += 1;
                continue;
            };
            // The value: the rest of the line plus continuation lines (indented
            // lines in INI, or until a TOML array's brackets balance).
            let mut end_line = i;
            let mut depth: i32 = content[key.end()..]
                .chars()
                .map(|c| match c {
                    '[' => 1,
                    ']' => -1,
                    _ => 0,
                })
                .sum();
            while end_line + 1 < lines.len() {
                let next = lines[end_line + 1].1;
                let next_content = next.trim_end_matches(['\n', '\r']);
                let continues = depth > 0
                    || (next_content.starts_with([' ', '\t']) && !next_content.trim().is_empty());
                if !continues {
                    break;
                }
                depth += next_content
                    .chars()
                    .map(|c| match c {
                        '[' => 1,
                        ']' => -1,
                        _ => 0,
                    })
                    .sum::<i32>();
                end_line += 1;
            }
            let entry_end = lines[end_line].0 + lines[end_line].1.len();
            match &self.value {
                None => out.push(Edit {
                    range: start..entry_end,
                    replacement: String::new(),
                }),
                Some((re, replace)) => {
                    let value_start = start + key.end();
                    let value = &text[value_start..entry_end];
                    for caps in re.captures_iter(value) {
                        let m = caps.get(0).expect("group 0");
                        if m.is_empty() {
                            continue;
                        }
                        let mut replacement = String::new();
                        caps.expand(replace, &mut replacement);
                        out.push(Edit {
                            range: value_start + m.start()..value_start + m.end(),
                            replacement,
                        });
                    }
                }
            }
            i = end_line + 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_metavars_and_fields() {
        let got = expand("f($A, ${value.body}, $$$REST) $ 1", |v| {
            Some(format!("<{v}>"))
        });
        assert_eq!(got.as_deref(), Some("f(<A>, <value.body>, <REST>) $ 1"));
        assert_eq!(expand("$MISSING", |_| None), None);
    }

    #[test]
    fn whole_line_extension_only_when_alone_on_the_line() {
        let src = b"a(\n    x=1,\n)\n";
        assert_eq!(whole_lines(src, 7..11), 3..12);
        let src = b"a(y, x=1)\n";
        assert_eq!(whole_lines(src, 5..8), 5..8);
    }
}
