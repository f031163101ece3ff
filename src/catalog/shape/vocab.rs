//! The vocabulary table (`vocabulary.yaml`, embedded): which catalog control
//! a shape site belongs to, by the words around it. Identifiers and text are
//! split into lower-case words ([`words`]); each entry's terms are matched
//! as runs of consecutive words, so one term covers `isReadOnly`,
//! `is_read_only` and "read-only mode".

use std::sync::OnceLock;

/// One row of the table, as written in the YAML.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    control: String,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    not: Vec<String>,
    #[serde(default)]
    settings: Vec<String>,
    #[serde(default)]
    calls: Vec<String>,
    #[serde(default)]
    lists: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
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
#[derive(Debug)]
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
    Ok(raw
        .into_iter()
        .map(|r| Entry {
            control: r.control,
            words: r.words.iter().map(|t| Term::new(t)).collect(),
            names: r.names.iter().map(|t| Term::new(t)).collect(),
            not: r.not.iter().map(|t| Term::new(t)).collect(),
            settings: r.settings.iter().map(|t| Term::new(t)).collect(),
            calls: r.calls.iter().map(|t| Term::new(t)).collect(),
            lists: r.lists.iter().map(|t| Term::new(t)).collect(),
            absent: r.absent.iter().map(|t| Term::new(t)).collect(),
        })
        .collect())
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

/// [`name_list_in`] the embedded table.
pub(crate) fn name_list(name: &[String]) -> Option<Naming> {
    name_list_in(table(), name)
}

/// [`name_call_in`] the embedded table.
pub(crate) fn name_call(name: &[String]) -> Option<Naming> {
    name_call_in(table(), name)
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

/// [`name_setting_in`] the embedded table.
pub(crate) fn name_setting(name: &[String]) -> Option<Naming> {
    name_setting_in(table(), name)
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
