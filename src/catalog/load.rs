//! Parsing and validating the catalog YAML (`mutations/*.yaml`).
//!
//! Everything that can be checked without running a snippet is checked here:
//! unknown keys, ids (kebab-case, unique), rule references, languages,
//! regexes, ast-grep patterns (compiled for every grammar of the language),
//! node kinds, and the shape of snippets and templates. Errors are collected
//! and returned together, each naming the file and the operator.

use std::collections::{BTreeMap, HashSet};

use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::{Language as _, Pattern};
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::grammar::Grammar;
use super::matcher::{AstRule, Cond, EditKind, Head, IniRule, Matcher, NodeCond, RegexRule};
use super::{Group, Language, Operator, OperatorKind, Snippet};
use crate::globs::Globs;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    group: String,
    operators: Vec<RawOperator>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperator {
    id: String,
    control: String,
    rule: String,
    #[serde(default)]
    check: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    languages: Vec<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    expected: bool,
    #[serde(default)]
    presence_only: bool,
    /// `loosen` or `tighten` (seed 002 rule 5); absent where it does not apply.
    #[serde(default)]
    direction: Option<String>,
    /// For `direction: tighten`: the loosening operator of the same control.
    #[serde(default)]
    twin_of: Option<String>,
    /// The positive side of a control that accepts a class (an allow-list's
    /// entries, the sizes up to a bound), in one sentence: the shape finder
    /// builds its tightening twin (`<id>-twin`, see [`shape_twin`]).
    #[serde(default)]
    shape_twin: Option<String>,
    sdk: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    template: Option<String>,
    #[serde(default)]
    matchers: Vec<RawMatcher>,
    #[serde(default)]
    positive: Vec<RawSnippet>,
    #[serde(default)]
    negative: Vec<RawNegative>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawCond {
    Regex(String),
    Full(RawCondFull),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCondFull {
    #[serde(default)]
    matches: Option<String>,
    #[serde(default)]
    not: Option<String>,
    #[serde(default)]
    kind: Option<OneOrMany>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNodeCond {
    kind: OneOrMany,
    #[serde(default)]
    stop: Vec<String>,
    #[serde(default)]
    field: Option<String>,
    #[serde(default)]
    matches: Option<String>,
    #[serde(default)]
    not: Option<String>,
    #[serde(default)]
    any: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawNodeConds {
    One(RawNodeCond),
    Many(Vec<RawNodeCond>),
}

impl RawNodeConds {
    fn into_vec(self) -> Vec<RawNodeCond> {
        match self {
            RawNodeConds::One(c) => vec![c],
            RawNodeConds::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIni {
    sections: Vec<String>,
    key: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    replace: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatcher {
    #[serde(default)]
    lang: Option<String>,
    // structural
    #[serde(default)]
    pattern: Option<OneOrMany>,
    #[serde(default)]
    selector: Option<String>,
    #[serde(default)]
    kind: Option<OneOrMany>,
    #[serde(default, rename = "where")]
    where_: BTreeMap<String, RawCond>,
    #[serde(default)]
    inside: Option<RawNodeConds>,
    #[serde(default)]
    not_inside: Option<RawNodeConds>,
    #[serde(default)]
    followed_by: Option<RawNodeCond>,
    #[serde(default)]
    preceded_by: Option<RawNodeCond>,
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    rewrite: Option<String>,
    #[serde(default)]
    remove: bool,
    #[serde(default)]
    drop_last: bool,
    // regex
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    replace: Option<Spanned<String>>,
    // ini
    #[serde(default)]
    ini: Option<RawIni>,
    /// regex/ini only: narrow the operator's files (e.g. `**/*.json`).
    #[serde(default)]
    files: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSnippet {
    #[serde(default)]
    file: Option<String>,
    code: String,
    #[serde(default)]
    mutated: Option<String>,
    #[serde(default)]
    mutants: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawNegative {
    Code(String),
    Full(RawNegativeFull),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNegativeFull {
    #[serde(default)]
    file: Option<String>,
    code: String,
}

/// `NNN/N` with an optional letter (`002/7d`), NNN one of the seed documents.
pub(crate) fn valid_rule(rule: &str) -> bool {
    let Some((doc, num)) = rule.split_once('/') else {
        return false;
    };
    let num = num.trim_end_matches(|c: char| c.is_ascii_lowercase());
    doc.len() == 3
        && doc.chars().all(|c| c.is_ascii_digit())
        && !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit())
}

fn kebab(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

struct Ctx<'a> {
    file: &'a str,
    id: String,
    errors: &'a mut Vec<String>,
}

impl Ctx<'_> {
    fn err(&mut self, msg: impl AsRef<str>) {
        self.errors.push(format!(
            "{}: operator `{}`: {}",
            self.file,
            self.id,
            msg.as_ref()
        ));
    }
    /// An error at a value's position: `file:line:col: operator `id`: msg`.
    fn err_at<T>(&mut self, at: &Spanned<T>, msg: impl AsRef<str>) {
        self.errors.push(format!(
            "{}:{}:{}: operator `{}`: {}",
            self.file,
            at.referenced.line(),
            at.referenced.column(),
            self.id,
            msg.as_ref()
        ));
    }
    /// Every capture reference in `replace` must name a group of the regex
    /// whose groups are `names` (one would expand to nothing); `false` when
    /// one does not.
    fn capture_refs(&mut self, replace: &Spanned<String>, names: &[Option<&str>]) -> bool {
        let bad = crate::mutate::bad_capture_refs(&replace.value, names);
        for b in &bad {
            self.err_at(replace, format!("{}; fix: {}", b.message, b.fix));
        }
        bad.is_empty()
    }
    fn regex(&mut self, what: &str, r: &str) -> Option<regex::Regex> {
        match regex::Regex::new(r) {
            Ok(re) => Some(re),
            Err(e) => {
                self.err(format!("{what}: bad regex `{r}`: {e}"));
                None
            }
        }
    }
    fn kinds(&mut self, lang: Option<Language>, kinds: &[String]) {
        let Some(lang) = lang else { return };
        for k in kinds {
            for g in Grammar::of(lang) {
                if g.kind_to_id(k) == 0 {
                    self.err(format!(
                        "node kind `{k}` does not exist in the {g:?} grammar"
                    ));
                }
            }
        }
    }
    fn fields(&mut self, lang: Option<Language>, path: &str) {
        let Some(lang) = lang else { return };
        if path == "_" || path.starts_with(|c: char| c.is_ascii_uppercase()) {
            return;
        }
        for part in path.split('.') {
            for g in Grammar::of(lang) {
                if g.get_ts_language().field_id_for_name(part).is_none() {
                    self.err(format!(
                        "field `{part}` does not exist in the {g:?} grammar"
                    ));
                }
            }
        }
    }
    fn cond(&mut self, lang: Option<Language>, raw: RawCond) -> Cond {
        match raw {
            RawCond::Regex(r) => Cond {
                matches: self.regex("where", &r),
                ..Cond::default()
            },
            RawCond::Full(f) => {
                let kinds = f.kind.map(OneOrMany::into_vec).unwrap_or_default();
                self.kinds(lang, &kinds);
                Cond {
                    matches: f.matches.and_then(|r| self.regex("where.matches", &r)),
                    not: f.not.and_then(|r| self.regex("where.not", &r)),
                    kinds,
                }
            }
        }
    }
    /// `followed_by`/`preceded_by`: its `matches` may name variables (`$V`,
    /// `${field}`, or a named group of a `where` regex), so it is compiled
    /// per site; here it is checked once with every variable as `x`.
    fn neighbour_cond(
        &mut self,
        lang: Language,
        key: &str,
        mut raw: RawNodeCond,
    ) -> (NodeCond, Option<String>) {
        let pattern = raw.matches.take();
        if let Some(p) = &pattern {
            let probe = super::matcher::expand(p, |_| Some("x".to_string()));
            if let Some(probe) = probe {
                self.regex(&format!("{key}.matches"), &probe);
            }
        }
        (self.node_cond(Some(lang), raw), pattern)
    }
    fn node_cond(&mut self, lang: Option<Language>, raw: RawNodeCond) -> NodeCond {
        let kinds = raw.kind.into_vec();
        self.kinds(lang, &kinds);
        self.kinds(lang, &raw.stop);
        if let Some(f) = &raw.field {
            self.fields(lang, f);
        }
        NodeCond {
            kinds,
            stop: raw.stop,
            field: raw.field,
            cond: Cond {
                matches: raw.matches.and_then(|r| self.regex("matches", &r)),
                not: raw.not.and_then(|r| self.regex("not", &r)),
                kinds: Vec::new(),
            },
            any: raw.any,
        }
    }
}

fn build_matcher(cx: &mut Ctx<'_>, langs: &[Language], mut raw: RawMatcher) -> Option<Matcher> {
    let lang = match raw.lang.as_deref() {
        None => None,
        Some(l) => Some(matcher_lang(cx, langs, l)?),
    };
    if !check_matcher_shape(cx, &raw) {
        return None;
    }
    let inside = node_conds(cx, lang, raw.inside.take());
    let not_inside = node_conds(cx, lang, raw.not_inside.take());
    if let Some(ini) = raw.ini.take() {
        let files = globs(cx, &raw.files);
        return build_ini(cx, ini, files);
    }
    if let Some(re) = raw.regex.take() {
        return build_regex(cx, lang, &re, raw, inside, not_inside);
    }
    let Some(lang) = lang else {
        cx.err("a structural matcher needs `lang`");
        return None;
    };
    build_structural(cx, lang, raw, inside, not_inside)
}

/// A matcher's `lang`, which must be one of the operator's `languages`;
/// `None` (after the error) when it is no language at all.
fn matcher_lang(cx: &mut Ctx<'_>, langs: &[Language], name: &str) -> Option<Language> {
    let Some(l) = Language::parse(name) else {
        cx.err(format!(
            "unknown matcher language `{name}` (python, typescript, go)"
        ));
        return None;
    };
    if !langs.contains(&l) {
        cx.err(format!(
            "matcher language `{}` is not in `languages`",
            l.name()
        ));
    }
    Some(l)
}

/// Check that the matcher is exactly one of structural, regex or ini;
/// `false` when it is not.
fn check_matcher_shape(cx: &mut Ctx<'_>, raw: &RawMatcher) -> bool {
    let structural = raw.pattern.is_some() || raw.kind.is_some();
    if structural && !raw.files.is_empty() {
        cx.err("`files` on a matcher is for `regex`/`ini`; a structural matcher reads its language's files");
    }
    let kinds_used = [structural, raw.regex.is_some(), raw.ini.is_some()]
        .iter()
        .filter(|b| **b)
        .count();
    if kinds_used != 1 {
        cx.err("a matcher needs exactly one of `pattern`/`kind` (structural), `regex`, `ini`");
        return false;
    }
    true
}

/// `inside` / `not_inside`: one condition or a list of them.
fn node_conds(
    cx: &mut Ctx<'_>,
    lang: Option<Language>,
    raw: Option<RawNodeConds>,
) -> Vec<NodeCond> {
    raw.map(RawNodeConds::into_vec)
        .unwrap_or_default()
        .into_iter()
        .map(|c| cx.node_cond(lang, c))
        .collect()
}

/// `patterns` compiled into one set; each bad glob is an error (the set
/// then holds the others).
fn globs(cx: &mut Ctx<'_>, patterns: &[String]) -> Globs {
    let mut good = Vec::new();
    for g in patterns {
        match Globs::check(g) {
            Ok(()) => good.push(g.as_str()),
            Err(e) => cx.err(format!("bad glob `{g}`: {e}")),
        }
    }
    Globs::new(&good).unwrap_or_default()
}

/// An `ini` matcher: a key in sections, optionally with a value to replace.
fn build_ini(cx: &mut Ctx<'_>, ini: RawIni, files: Globs) -> Option<Matcher> {
    let value = match (ini.value, ini.replace) {
        (Some(v), Some(r)) => {
            let re = cx.regex("ini.value", &v)?;
            let names: Vec<Option<&str>> = re.capture_names().collect();
            if !cx.capture_refs(&r, &names) {
                return None;
            }
            Some((re, r.value))
        }
        (None, None) => None,
        _ => {
            cx.err("ini: `value` and `replace` go together");
            return None;
        }
    };
    Some(Matcher::Ini(IniRule {
        sections: ini.sections,
        key: ini.key,
        value,
        files,
    }))
}

/// A `regex` matcher with its `replace`; with a `lang` and no `not_inside`,
/// it skips comments.
fn build_regex(
    cx: &mut Ctx<'_>,
    lang: Option<Language>,
    re: &str,
    raw: RawMatcher,
    inside: Vec<NodeCond>,
    not_inside: Vec<NodeCond>,
) -> Option<Matcher> {
    let files = globs(cx, &raw.files);
    let Some(replace) = raw.replace else {
        cx.err("a `regex` matcher needs `replace`");
        return None;
    };
    let re = match regex::bytes::Regex::new(re) {
        Ok(r) => r,
        Err(e) => {
            cx.err(format!("bad regex `{re}`: {e}"));
            return None;
        }
    };
    let names: Vec<Option<&str>> = re.capture_names().collect();
    let refs_ok = cx.capture_refs(&replace, &names);
    if lang.is_none() && !(inside.is_empty() && not_inside.is_empty()) {
        cx.err("`inside`/`not_inside` on a regex need `lang`");
    }
    if !refs_ok {
        return None;
    }
    let not_inside = if lang.is_some() && not_inside.is_empty() {
        vec![NodeCond {
            kinds: vec!["comment".into()],
            stop: Vec::new(),
            field: None,
            cond: Cond::default(),
            any: false,
        }]
    } else {
        not_inside
    };
    Some(Matcher::Regex(RegexRule {
        re,
        replace: replace.value,
        lang,
        inside,
        not_inside,
        files,
    }))
}

/// A structural (ast-grep) matcher: its head, edit, `where` conditions,
/// `target`, `followed_by` and `preceded_by`.
fn build_structural(
    cx: &mut Ctx<'_>,
    lang: Language,
    raw: RawMatcher,
    inside: Vec<NodeCond>,
    not_inside: Vec<NodeCond>,
) -> Option<Matcher> {
    let head = build_head(cx, lang, raw.pattern, raw.selector.as_deref(), raw.kind);
    if raw.replace.is_some() {
        cx.err("`replace` belongs to `regex`; a structural matcher uses `rewrite`");
    }
    let edit = match (raw.rewrite, raw.remove, raw.drop_last) {
        (Some(t), false, false) => EditKind::Rewrite(t),
        (None, true, false) => EditKind::Remove,
        (None, false, true) => EditKind::DropLast,
        _ => {
            cx.err("a structural matcher needs exactly one of `rewrite`, `remove: true`, `drop_last: true`");
            return None;
        }
    };
    let mut where_ = Vec::new();
    for (var, c) in raw.where_ {
        cx.fields(Some(lang), &var);
        let c = cx.cond(Some(lang), c);
        where_.push((var, c));
    }
    if let Some(t) = &raw.target {
        cx.fields(Some(lang), t);
    }
    let followed_by = raw
        .followed_by
        .map(|f| cx.neighbour_cond(lang, "followed_by", f));
    let preceded_by = raw
        .preceded_by
        .map(|f| cx.neighbour_cond(lang, "preceded_by", f));
    Some(Matcher::Ast(Box::new(AstRule {
        lang,
        head,
        where_,
        inside,
        not_inside,
        followed_by,
        preceded_by,
        target: raw.target,
        edit,
    })))
}

/// What a structural matcher starts from: its `pattern`s, compiled for
/// every grammar of the language, or node `kind`s.
fn build_head(
    cx: &mut Ctx<'_>,
    lang: Language,
    pattern: Option<OneOrMany>,
    selector: Option<&str>,
    kind: Option<OneOrMany>,
) -> Head {
    let Some(p) = pattern else {
        if selector.is_some() {
            cx.err("`selector` needs `pattern`");
        }
        let kinds = kind.map(OneOrMany::into_vec).unwrap_or_default();
        cx.kinds(Some(lang), &kinds);
        return Head::Kinds(kinds);
    };
    if kind.is_some() {
        cx.err("`pattern` and `kind` exclude each other");
    }
    let pats = p.into_vec();
    let mut per = Vec::new();
    for g in Grammar::of(lang) {
        let mut compiled = Vec::new();
        for src in &pats {
            let res = match selector {
                Some(sel) => Pattern::contextual(src, sel, *g),
                None => Pattern::try_new(src, *g),
            };
            match res {
                Ok(p) => compiled.push(p),
                Err(e) => cx.err(format!("pattern `{src}` ({g:?}): {e}")),
            }
        }
        per.push((*g, compiled));
    }
    Head::Patterns(per)
}

fn default_file(langs: &[Language]) -> Option<String> {
    match langs.first() {
        Some(Language::Python) => Some("server.py".into()),
        Some(Language::TypeScript) => Some("server.ts".into()),
        Some(Language::Go) => Some("server.go".into()),
        None => None,
    }
}

fn build_operator(cx: &mut Ctx<'_>, group: Group, mut raw: RawOperator) -> Option<Operator> {
    check_operator_header(cx, &raw);
    let kind = match raw.kind.as_deref() {
        None | Some("audit") => OperatorKind::Audit,
        Some("template") => OperatorKind::Template,
        Some(k) => {
            cx.err(format!("unknown kind `{k}` (audit, template)"));
            return None;
        }
    };
    let mut languages = Vec::new();
    for l in &raw.languages {
        match Language::parse(l) {
            Some(l) => languages.push(l),
            None => cx.err(format!("unknown language `{l}` (python, typescript, go)")),
        }
    }
    let files = globs(cx, &raw.files);
    let exclude = globs(cx, &raw.exclude);
    let matchers: Vec<Matcher> = std::mem::take(&mut raw.matchers)
        .into_iter()
        .filter_map(|m| build_matcher(cx, &languages, m))
        .collect();
    check_kind_parts(cx, kind, &matchers, &raw);
    let direction = match raw.direction.as_deref() {
        None => None,
        Some(d) => {
            let named = crate::config::Direction::named(d);
            if named.is_none() {
                cx.err(format!("unknown direction `{d}` (loosen, tighten)"));
            }
            named
        }
    };
    if raw.twin_of.is_some() && direction != Some(crate::config::Direction::Tighten) {
        cx.err("`twin_of` needs `direction: tighten`");
    }
    let dflt = default_file(&languages);
    let positive = positive_snippets(cx, raw.positive, dflt.as_deref());
    let negative = negative_snippets(cx, raw.negative, dflt.as_deref());
    Some(Operator {
        id: raw.id,
        control: raw.control,
        rule: raw.rule,
        check: raw.check,
        group,
        languages,
        files,
        exclude,
        expected: raw.expected,
        presence_only: raw.presence_only,
        direction,
        twin_of: raw.twin_of,
        kind,
        sdk: raw.sdk.trim().to_string(),
        note: raw.note.map(|n| n.trim().to_string()),
        template: raw.template,
        positive,
        negative,
        matchers,
    })
}

/// The tightening twin the shape finder builds for `op`
/// (`src/catalog/shape/limit.rs`, `constraint.rs`): drops one entry of an
/// allow-list literal or one value of a schema enum, or refuses the value
/// exactly at a bound. Id `<id>-twin`, control
/// `positive` (what a positive test proves), rule 002/5 (both directions),
/// no matchers of its own: only the shapes find its sites.
fn shape_twin(cx: &mut Ctx<'_>, op: &Operator, positive: String) -> Option<Operator> {
    if op.kind != OperatorKind::Audit || op.presence_only || op.twin_of.is_some() {
        cx.err("`shape_twin` needs an audit operator that loosens (not presence-only, not a twin)");
        return None;
    }
    if positive.trim().is_empty() || positive.contains('\n') {
        cx.err("`shape_twin` must be one sentence on one line");
        return None;
    }
    Some(Operator {
        id: format!("{}-twin", op.id),
        control: positive.trim().to_string(),
        rule: "002/5".to_string(),
        check: None,
        group: op.group,
        languages: op.languages.clone(),
        files: op.files.clone(),
        exclude: op.exclude.clone(),
        expected: false,
        presence_only: false,
        direction: Some(crate::config::Direction::Tighten),
        twin_of: Some(op.id.clone()),
        kind: OperatorKind::Audit,
        sdk: op.sdk.clone(),
        note: Some(
            "Built by the shapes: one entry of the allow-list literal or one value of the schema enum left out, or the value exactly at the bound refused. A positive test (this accepted input is still accepted) kills it."
                .to_string(),
        ),
        template: None,
        positive: Vec::new(),
        negative: Vec::new(),
        matchers: Vec::new(),
    })
}

/// The operator's id (kebab-case), `control` (one line) and `rule` (`NNN/N`).
fn check_operator_header(cx: &mut Ctx<'_>, raw: &RawOperator) {
    if !kebab(&raw.id) {
        cx.err("id must be kebab-case (a-z, 0-9, single dashes)");
    }
    if raw.control.trim().is_empty() || raw.control.contains('\n') {
        cx.err("`control` must be one sentence on one line");
    }
    if !valid_rule(&raw.rule) {
        cx.err(format!(
            "rule `{}` is not `NNN/N` (seed document/rule)",
            raw.rule
        ));
    }
}

/// An audit operator has matchers, files and both kinds of snippets; a
/// template has a `template` and none of those.
fn check_kind_parts(cx: &mut Ctx<'_>, kind: OperatorKind, matchers: &[Matcher], raw: &RawOperator) {
    match kind {
        OperatorKind::Audit => {
            if matchers.is_empty() {
                cx.err("an audit operator needs `matchers`");
            }
            if raw.files.is_empty() {
                cx.err("an audit operator needs `files`");
            }
            if raw.positive.is_empty() {
                cx.err("an audit operator needs at least one `positive` snippet");
            }
            if raw.negative.is_empty() {
                cx.err("an audit operator needs at least one `negative` snippet");
            }
            if raw.template.is_some() {
                cx.err("`template` belongs to `kind: template`");
            }
        }
        OperatorKind::Template => {
            if !matchers.is_empty() || !raw.positive.is_empty() || !raw.negative.is_empty() {
                cx.err("a template has no `matchers` and no snippets");
            }
            if raw.template.as_deref().is_none_or(|t| t.trim().is_empty()) {
                cx.err("a template operator needs `template`");
            }
        }
    }
}

/// `positive` snippets: each with a file (defaulting from the language) and
/// exactly one of `mutated` or `mutants`.
fn positive_snippets(cx: &mut Ctx<'_>, raw: Vec<RawSnippet>, dflt: Option<&str>) -> Vec<Snippet> {
    let mut positive = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let Some(file) = s.file.or_else(|| dflt.map(str::to_string)) else {
            cx.err(format!(
                "positive #{}: needs `file` (no language to default from)",
                i + 1
            ));
            continue;
        };
        let mutants = match (s.mutated, s.mutants) {
            (Some(m), None) => vec![m],
            (None, Some(v)) if !v.is_empty() => v,
            _ => {
                cx.err(format!(
                    "positive #{}: needs exactly one of `mutated` (one site) or `mutants` (a list, one per site)",
                    i + 1
                ));
                continue;
            }
        };
        positive.push(Snippet {
            file,
            code: s.code,
            mutants,
        });
    }
    positive
}

/// `negative` snippets: code (with a file, defaulting from the language)
/// that must not match.
fn negative_snippets(cx: &mut Ctx<'_>, raw: Vec<RawNegative>, dflt: Option<&str>) -> Vec<Snippet> {
    let mut negative = Vec::new();
    for (i, n) in raw.into_iter().enumerate() {
        let (file, code) = match n {
            RawNegative::Code(c) => (None, c),
            RawNegative::Full(f) => (f.file, f.code),
        };
        let Some(file) = file.or_else(|| dflt.map(str::to_string)) else {
            cx.err(format!(
                "negative #{}: needs `file` (no language to default from)",
                i + 1
            ));
            continue;
        };
        negative.push(Snippet {
            file,
            code,
            mutants: Vec::new(),
        });
    }
    negative
}

/// Parse and validate catalog files; all problems at once.
pub(crate) fn load(sources: &[(&str, &str)]) -> Result<Vec<Operator>, String> {
    let mut errors = Vec::new();
    let mut ops = Vec::new();
    for (name, text) in sources {
        let raw: RawFile = match serde_saphyr::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                errors.push(format!("{name}: {e}"));
                continue;
            }
        };
        let Some(group) = Group::parse(&raw.group) else {
            errors.push(format!("{name}: unknown group `{}`", raw.group));
            continue;
        };
        for op in raw.operators {
            let mut cx = Ctx {
                file: name,
                id: op.id.clone(),
                errors: &mut errors,
            };
            let twin = op.shape_twin.clone();
            if let Some(op) = build_operator(&mut cx, group, op) {
                let twin = twin.and_then(|t| shape_twin(&mut cx, &op, t));
                ops.push(op);
                ops.extend(twin);
            }
        }
    }
    let mut seen = HashSet::new();
    for op in &ops {
        if !seen.insert(op.id.as_str()) {
            errors.push(format!("operator id `{}` is used twice", op.id));
        }
    }
    pair_twins(&mut ops, &mut errors);
    if errors.is_empty() {
        Ok(ops)
    } else {
        Err(errors.join("\n"))
    }
}

/// Every `twin_of` names a loosening operator of the catalog; an operator
/// named by one without a `direction` of its own is the loosening side.
fn pair_twins(ops: &mut [Operator], errors: &mut Vec<String>) {
    use crate::config::Direction;
    let pairs: Vec<(String, String)> = ops
        .iter()
        .filter_map(|o| Some((o.id.clone(), o.twin_of.clone()?)))
        .collect();
    for (id, twin) in pairs {
        match ops.iter_mut().find(|o| o.id == twin) {
            None => errors.push(format!(
                "operator `{id}`: `twin_of: {twin}` names no operator"
            )),
            Some(t) if t.direction == Some(Direction::Tighten) => errors.push(format!(
                "operator `{id}`: `twin_of: {twin}` names a tightening operator; name the loosening one"
            )),
            Some(t) => t.direction = Some(Direction::Loosen),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_references() {
        assert!(valid_rule("002/4"));
        assert!(valid_rule("002/7d"));
        assert!(!valid_rule("2/4"));
        assert!(!valid_rule("002"));
        assert!(!valid_rule("002/x"));
    }

    #[test]
    fn kebab_ids() {
        assert!(kebab("transport-security-passed"));
        assert!(!kebab("Transport"));
        assert!(!kebab("a--b"));
        assert!(!kebab("-a"));
    }

    #[test]
    fn errors_are_collected_with_file_and_operator() {
        let yaml = "group: transport\noperators:\n  - id: Bad_Id\n    control: c\n    rule: '2/4'\n    languages: [python]\n    files: ['**/*.py']\n    expected: false\n    sdk: s\n    matchers:\n      - lang: python\n        regex: '('\n        replace: ''\n";
        let err = load(&[("t.yaml", yaml)]).unwrap_err();
        assert!(
            err.contains("t.yaml: operator `Bad_Id`: id must be kebab-case"),
            "{err}"
        );
        assert!(err.contains("rule `2/4`"), "{err}");
        assert!(err.contains("bad regex"), "{err}");
        assert!(err.contains("positive"), "{err}");
    }

    #[test]
    fn neighbour_regexes_are_checked_at_load() {
        let yaml = "group: access\noperators:\n  - id: a-b\n    control: c\n    rule: '002/6'\n    languages: [python]\n    files: ['**/*.py']\n    expected: false\n    sdk: s\n    matchers:\n      - lang: python\n        kind: if_statement\n        preceded_by: {kind: expression_statement, matches: '\\\\b$V=('}\n        rewrite: 'False'\n";
        let err = load(&[("t.yaml", yaml)]).unwrap_err();
        assert!(err.contains("preceded_by.matches: bad regex"), "{err}");
    }

    #[test]
    fn a_shape_twin_is_a_tightening_operator_paired_with_its_control() {
        let ops = crate::catalog::catalog();
        let base = ops
            .iter()
            .find(|o| o.id == "tool-allowlist-enforced")
            .unwrap();
        let twin = ops
            .iter()
            .find(|o| o.id == "tool-allowlist-enforced-twin")
            .unwrap();
        assert_eq!(twin.direction, Some(crate::config::Direction::Tighten));
        assert_eq!(twin.twin_of.as_deref(), Some("tool-allowlist-enforced"));
        assert_eq!(twin.rule, "002/5");
        assert!(twin.matchers.is_empty() && !twin.expected);
        // Its mutants carry the loosening side's control text; that side loosens.
        assert_eq!(twin.mutant_control(), base.control);
        assert_eq!(base.direction, Some(crate::config::Direction::Loosen));
        // Only where the catalog declares one.
        assert!(!ops.iter().any(|o| o.id == "secret-redacted-twin"));
        let yaml = "group: access\noperators:\n  - id: a-b\n    control: c\n    rule: '002/6'\n    shape_twin: 'x'\n    presence_only: true\n    languages: [python]\n    files: ['**/*.py']\n    expected: false\n    sdk: s\n    matchers:\n      - lang: python\n        regex: 'x'\n        replace: ''\n";
        let err = load(&[("t.yaml", yaml)]).unwrap_err();
        assert!(
            err.contains("`shape_twin` needs an audit operator that loosens"),
            "{err}"
        );
    }
}
