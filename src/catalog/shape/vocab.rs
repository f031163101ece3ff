//! The vocabulary table (`vocabulary.yaml`, embedded): which catalog control
//! a shape site belongs to, by the words around it. Identifiers and text are
//! split into lower-case words ([`words`]); each entry's terms are matched
//! as runs of consecutive words, so one term covers `isReadOnly`,
//! `is_read_only` and "read-only mode".

use std::sync::OnceLock;

use serde_saphyr::Spanned;

/// One row of the table, as written in the YAML: terms as text (the
/// built-in table), or with their positions (`Spanned`, a user's file).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry<T = String> {
    control: T,
    #[serde(default = "Vec::new")]
    words: Vec<T>,
    #[serde(default = "Vec::new")]
    names: Vec<T>,
    #[serde(default = "Vec::new")]
    not: Vec<T>,
    #[serde(default = "Vec::new")]
    settings: Vec<T>,
    #[serde(default = "Vec::new")]
    calls: Vec<T>,
    #[serde(default = "Vec::new")]
    lists: Vec<T>,
    #[serde(default = "Vec::new")]
    absent: Vec<T>,
}

/// A term: words matched in a row; a word ending in `*` is a prefix.
#[derive(Debug, Clone)]
struct Term {
    text: String,
    parts: Vec<String>,
}

impl Term {
    fn new(text: &str) -> Term {
        Term {
            text: text.to_string(),
            parts: words(text),
        }
        .with_stars(text)
    }
    /// [`words`] drops `*`; put it back on the words that had it.
    fn with_stars(mut self, text: &str) -> Term {
        let starred: Vec<bool> = text
            .split_whitespace()
            .flat_map(|w| {
                let n = words(w).len();
                let star = w.ends_with('*');
                (0..n).map(move |i| star && i + 1 == n)
            })
            .collect();
        for (p, s) in self.parts.iter_mut().zip(starred) {
            if s {
                p.push('*');
            }
        }
        self
    }
    fn found_in(&self, toks: &[String]) -> bool {
        let n = self.parts.len();
        n > 0 && toks.len() >= n && toks.windows(n).any(|w| self.is(w))
    }
    /// The term is the last words of `toks` (what a name ends in is what
    /// it holds: `access_token` is a token, `token_url` is not).
    fn ends(&self, toks: &[String]) -> bool {
        let n = self.parts.len();
        n > 0 && toks.len() >= n && self.is(&toks[toks.len() - n..])
    }
    fn is(&self, w: &[String]) -> bool {
        w.iter()
            .zip(&self.parts)
            .all(|(t, p)| match p.strip_suffix('*') {
                Some(prefix) => t.starts_with(prefix),
                None => t == p,
            })
    }
}

/// One control's vocabulary.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The catalog control (operator id) it names.
    pub control: String,
    words: Vec<Term>,
    names: Vec<Term>,
    not: Vec<Term>,
    settings: Vec<Term>,
    calls: Vec<Term>,
    lists: Vec<Term>,
    absent: Vec<Term>,
}

/// The words a site offers: its condition (with the call that decides),
/// its refusal (message, status code, error name) and the name of the
/// function it sits in.
#[derive(Debug, Default, Clone)]
pub(crate) struct Evidence {
    /// Words of the condition and the call that decides it.
    pub site: Vec<String>,
    /// Words of the refusal: its message, status code and error name.
    pub refusal: Vec<String>,
    /// Words of the enclosing function's name.
    pub name: Vec<String>,
    /// Words of the value a presence test refuses without (`if not token:`,
    /// `if (!apiKey)`, `if token == "" {`: `token`, `api key`); empty for
    /// any other condition.
    pub absent: Vec<String>,
}

/// The control a site is named after, with the terms that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Naming {
    pub control: String,
    pub terms: Vec<String>,
}

const TABLE: &str = include_str!("vocabulary.yaml");

/// The embedded table, parsed once (a broken table is a build error caught
/// by the unit tests, so it panics nowhere else: it yields an empty table).
pub(crate) fn table() -> &'static [Entry] {
    static T: OnceLock<Vec<Entry>> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).unwrap_or_default())
}

/// Parse a vocabulary table.
pub(crate) fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let raw: Vec<RawEntry> =
        serde_saphyr::from_str(text).map_err(|e| format!("vocabulary.yaml: {e}"))?;
    Ok(raw.into_iter().map(RawEntry::entry).collect())
}

impl<T> RawEntry<T> {
    /// Every term with its key, in file order.
    fn terms(&self) -> impl Iterator<Item = (&'static str, &T)> {
        [
            ("words", &self.words),
            ("names", &self.names),
            ("not", &self.not),
            ("settings", &self.settings),
            ("calls", &self.calls),
            ("lists", &self.lists),
            ("absent", &self.absent),
        ]
        .into_iter()
        .flat_map(|(k, v)| v.iter().map(move |t| (k, t)))
    }
    /// The same row with every term (and the control) passed through `f`.
    fn map<U>(self, f: impl Fn(T) -> U) -> RawEntry<U> {
        let all = |v: Vec<T>| v.into_iter().map(&f).collect();
        RawEntry {
            words: all(self.words),
            names: all(self.names),
            not: all(self.not),
            settings: all(self.settings),
            calls: all(self.calls),
            lists: all(self.lists),
            absent: all(self.absent),
            control: f(self.control),
        }
    }
}

impl RawEntry {
    fn entry(self) -> Entry {
        let terms = |v: &[String]| v.iter().map(|t| Term::new(t)).collect();
        Entry {
            words: terms(&self.words),
            names: terms(&self.names),
            not: terms(&self.not),
            settings: terms(&self.settings),
            calls: terms(&self.calls),
            lists: terms(&self.lists),
            absent: terms(&self.absent),
            control: self.control,
        }
    }
}

impl Entry {
    /// This entry with `more`'s terms added after its own.
    fn extend(&mut self, more: Entry) {
        self.words.extend(more.words);
        self.names.extend(more.names);
        self.not.extend(more.not);
        self.settings.extend(more.settings);
        self.calls.extend(more.calls);
        self.lists.extend(more.lists);
        self.absent.extend(more.absent);
    }
}

/// The vocabulary a scan names its shape sites with: the built-in table,
/// with the words of the user's own files (`audit --vocabulary FILE`)
/// added to the controls they name.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    entries: Vec<Entry>,
}

impl Vocabulary {
    /// The built-in table alone.
    pub fn builtin() -> Vocabulary {
        Vocabulary {
            entries: table().to_vec(),
        }
    }

    /// The built-in table with the entries of `files` added: a file's
    /// entry for a control adds its terms to that control's. A file that
    /// cannot be read or parsed, an unknown control id or a term with no
    /// word is an error naming the file, line and column, with the fix.
    pub fn with_files(files: &[std::path::PathBuf]) -> crate::error::Result<Vocabulary> {
        let mut v = Vocabulary::builtin();
        let mut problems = crate::spec::diag::Diagnostics::default();
        for path in files {
            match user_entries(path) {
                Ok(entries) => {
                    for e in entries {
                        match v.entries.iter_mut().find(|x| x.control == e.control) {
                            Some(x) => x.extend(e),
                            None => v.entries.push(e),
                        }
                    }
                }
                Err(d) => problems.push(d),
            }
        }
        if problems.is_empty() {
            Ok(v)
        } else {
            Err(crate::error::Error::Diagnostics(problems))
        }
    }

    pub(crate) fn name(&self, ev: &Evidence) -> Option<Naming> {
        name_in(&self.entries, ev)
    }
    pub(crate) fn name_setting(&self, name: &[String]) -> Option<Naming> {
        name_setting_in(&self.entries, name)
    }
    pub(crate) fn name_call(&self, name: &[String]) -> Option<Naming> {
        name_call_in(&self.entries, name)
    }
    pub(crate) fn name_list(&self, name: &[String]) -> Option<Naming> {
        name_list_in(&self.entries, name)
    }
}

/// The entries of a user's vocabulary file, checked.
fn user_entries(path: &std::path::Path) -> Result<Vec<Entry>, crate::spec::diag::Diagnostic> {
    use crate::spec::diag::{Diagnostic, SourceLines};
    let display = path.display().to_string();
    const FORMAT: &str = "a list of entries like `- control: auth-required` with `words:`, `names:`, `not:`, `settings:`, `calls:`, `lists:` or `absent:` term lists (docs/catalog.md, \"Adding a vocabulary word\")";
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostic::new(&display, 0, 0, format!("cannot read vocabulary file: {e}"))
            .with_fix("pass the path of a YAML file to --vocabulary")
    })?;
    let src = SourceLines::new(&text);
    let at =
        |line: u64, col: u64, msg: String| src.snippet(Diagnostic::new(&display, line, col, msg));
    let raw: Vec<RawEntry<Spanned<String>>> = serde_saphyr::from_str(&text).map_err(|e| {
        let (line, col) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .filter(|(l, c)| *l > 0 && *c > 0)
            .unwrap_or((1, 1));
        // The parser's first line, without its own `error: line L column C:`.
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("");
        let msg = match first.split_once(": line ") {
            Some((_, rest)) => rest.split_once(": ").map_or(rest, |(_, m)| m),
            None => first,
        };
        at(line, col, format!("not a vocabulary file: {msg}")).with_fix(format!("write {FORMAT}"))
    })?;
    let mut out = Vec::new();
    for r in raw {
        let id = &r.control;
        if super::super::operator(&id.value).is_none() {
            return Err(at(
                id.referenced.line(),
                id.referenced.column(),
                format!("`{}` is not a catalog control", id.value),
            )
            .with_fix("use a control id `unguard catalog` lists (e.g. `auth-required`)"));
        }
        for (key, span) in r.terms() {
            let term = &span.value;
            if words(term).is_empty() {
                return Err(at(
                    span.referenced.line(),
                    span.referenced.column(),
                    format!("`{term}` in `{key}` has no word to match"),
                )
                .with_fix("write one or more words, e.g. `tenant check` (a `*` at a word's end matches any ending)"));
            }
        }
        out.push(r.map(|s| s.value).entry());
    }
    Ok(out)
}

/// The answer a name's words give, by whole words: `Some(true)` when one of
/// `accept` is there and none of `refuse` (an allow-list, a verdict that
/// lets a request through), `Some(false)` the other way round, `None` when
/// the name says neither or both.
pub(crate) fn polarity(name: &[String], accept: &[&str], refuse: &[&str]) -> Option<bool> {
    let has = |set: &[&str]| name.iter().any(|w| set.contains(&w.as_str()));
    match (has(accept), has(refuse)) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// Split text into lower-case words: at every non-alphanumeric character, at
/// camelCase humps (`HTTPError` → `http`, `error`) and between letters and
/// digits (`HTTP_401` → `http`, `401`).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur).to_lowercase());
            }
            continue;
        }
        if let Some(&p) = cur.chars().last().as_ref() {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let hump = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_ascii_digit() != c.is_ascii_digit());
            if hump {
                out.push(std::mem::take(&mut cur).to_lowercase());
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur.to_lowercase());
    }
    out
}

/// The control `ev` names in `table`, or `None` for a generic guard. A
/// `words` term in the condition scores 2, in the refusal 1, in the
/// function's name 2; a `names` term in the function's name 1. A control
/// needs 2 without the `names` terms.
pub(crate) fn name_in(table: &[Entry], ev: &Evidence) -> Option<Naming> {
    let mut best: Option<(usize, Naming)> = None;
    for e in table {
        let anywhere =
            |t: &Term| t.found_in(&ev.site) || t.found_in(&ev.refusal) || t.found_in(&ev.name);
        if e.not.iter().any(anywhere) {
            continue;
        }
        // The value whose absence refuses names the control like a
        // condition word (`absent` terms: `if not access_token:`).
        let cond: Vec<&Term> = e
            .words
            .iter()
            .filter(|t| t.found_in(&ev.site))
            .chain(e.absent.iter().filter(|t| t.ends(&ev.absent)))
            .collect();
        let refusal: Vec<&Term> = e
            .words
            .iter()
            .filter(|t| t.found_in(&ev.refusal) && !cond.iter().any(|c| c.text == t.text))
            .collect();
        let own = 2 * cond.len() + refusal.len();
        // The check function a guard sits in says what it checks
        // (`validate_url_for_ssrf`): its vocabulary words count like the
        // condition's; the `names` terms (weaker: `auth*`) once.
        let strong: Vec<&Term> = e
            .words
            .iter()
            .filter(|t| t.found_in(&ev.name))
            .filter(|t| !cond.iter().chain(&refusal).any(|s| s.text == t.text))
            .collect();
        let weak: Vec<&Term> = e
            .names
            .iter()
            .filter(|t| t.found_in(&ev.name))
            .filter(|t| {
                !cond
                    .iter()
                    .chain(&refusal)
                    .chain(&strong)
                    .any(|s| s.text == t.text)
            })
            .collect();
        if own + 2 * strong.len() < 2 {
            continue;
        }
        let named: Vec<&Term> = strong.iter().chain(&weak).copied().collect();
        let score = own + 2 * strong.len() + weak.len();
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            let terms = cond
                .iter()
                .chain(&refusal)
                .chain(&named)
                .map(|t| t.text.clone())
                .collect();
            best = Some((
                score,
                Naming {
                    control: e.control.clone(),
                    terms,
                },
            ));
        }
    }
    best.map(|(_, n)| n)
}

/// [`name_in`] with the embedded table.
#[cfg(test)]
pub(crate) fn name(ev: &Evidence) -> Option<Naming> {
    name_in(table(), ev)
}

/// The control a protective setting's name (its words) belongs to in
/// `table`: the entry with the longest `settings` term found in the name
/// (the first listed on a tie), unless one of its `not` terms is there too.
pub(crate) fn name_setting_in(table: &[Entry], name: &[String]) -> Option<Naming> {
    longest_in(table, name, |e| &e.settings)
}

/// The control a protective call's name (its words) belongs to in `table`,
/// by the entries' `calls` terms, as [`name_setting_in`] does.
pub(crate) fn name_call_in(table: &[Entry], name: &[String]) -> Option<Naming> {
    longest_in(table, name, |e| &e.calls)
}

/// The control an allow- or block-list's name (its words) belongs to in
/// `table`, by the entries' `lists` terms, as [`name_setting_in`] does.
pub(crate) fn name_list_in(table: &[Entry], name: &[String]) -> Option<Naming> {
    longest_in(table, name, |e| &e.lists)
}

fn longest_in(
    table: &[Entry],
    name: &[String],
    terms: impl Fn(&Entry) -> &[Term],
) -> Option<Naming> {
    let mut best: Option<(usize, Naming)> = None;
    for e in table {
        if e.not.iter().any(|t| t.found_in(name)) {
            continue;
        }
        let Some(t) = terms(e)
            .iter()
            .filter(|t| t.found_in(name))
            .max_by_key(|t| t.parts.len())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| t.parts.len() > *b) {
            best = Some((
                t.parts.len(),
                Naming {
                    control: e.control.clone(),
                    terms: vec![t.text.clone()],
                },
            ));
        }
    }
    best.map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(site: &str, name: &str) -> Evidence {
        Evidence {
            site: words(site),
            name: words(name),
            ..Default::default()
        }
    }

    #[test]
    fn words_split_identifiers_and_text() {
        assert_eq!(words("isReadOnly"), ["is", "read", "only"]);
        assert_eq!(words("HTTPError(401)"), ["http", "error", "401"]);
        assert_eq!(
            words("http.StatusUnauthorized"),
            ["http", "status", "unauthorized"]
        );
        assert_eq!(words("read-only mode"), ["read", "only", "mode"]);
        assert_eq!(words("HTTP_401"), ["http", "401"]);
    }

    #[test]
    fn the_embedded_table_parses_and_names_known_controls() {
        let t = parse(TABLE).expect("vocabulary.yaml parses");
        assert!(t.len() > 10);
        let ids: Vec<&str> = crate::catalog::catalog()
            .iter()
            .map(|o| o.id.as_str())
            .collect();
        for e in &t {
            assert!(
                ids.contains(&e.control.as_str()),
                "{} is no catalog control",
                e.control
            );
        }
    }

    #[test]
    fn a_site_is_named_by_its_words() {
        let n = name(&ev(
            "if cfg.ReadOnly { return errors.New(\"read-only mode\") }",
            "",
        ))
        .unwrap();
        assert_eq!(n.control, "read-only-enforced");
        let n = name(&ev("raise HTTPException(status_code=401)", "")).unwrap();
        assert_eq!(n.control, "auth-required");
        let n = name(&ev(
            "if len(q) > MAX_QUERY_LENGTH: raise ValueError('query too long')",
            "",
        ))
        .unwrap();
        assert_eq!(n.control, "input-size-limited");
        // A prefix word: unauthorised and unauthorized.
        assert_eq!(
            name(&ev("'Unauthorised'", "")).unwrap().control,
            "auth-required"
        );
    }

    #[test]
    fn veto_words_and_function_names_alone_do_not_name() {
        // `scope` vetoes auth-required and names token-scope-checked.
        let n = name(&ev(
            "if 'repo' not in token.scopes: raise Unauthorized()",
            "",
        ))
        .unwrap();
        assert_eq!(n.control, "token-scope-checked");
        // A check function's name with a vocabulary word names its guards
        // (the refusal shape leaves the name out for bare presence tests)…
        assert_eq!(
            name(&ev(
                "if '\\' in netloc: return 'blocked'",
                "validate_url_for_ssrf"
            ))
            .unwrap()
            .control,
            "egress-allowlisted"
        );
        // …a weaker `names` term alone does not.
        assert_eq!(
            name(&ev("if x > 3: raise ValueError('bad')", "login")),
            None
        );
        assert_eq!(name(&ev("if x is None: return", "")), None);
    }
}
