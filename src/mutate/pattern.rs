//! The pattern type, shared by the spec (which reads and checks it) and
//! the matcher (which applies it): how a mutation finds its sites
//! ([`Pattern`]), how many it must find ([`Count`]), and the capture
//! references of a regex `replace` (`$1`, `${name}`), read exactly as the
//! regex crate expands them, with the ones that name no group of the regex
//! (they would expand to nothing, silently). A leaf: it imports nothing of
//! this crate, so `spec` and `mutate` both use it without a cycle.

/// How a mutation finds its site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// Literal text; unless `exact_whitespace`, every whitespace run matches any
    /// whitespace run (including line breaks) in the file.
    Literal {
        /// `find:`: the text as the spec writes it.
        text: String,
        /// `exact_whitespace: true`: whitespace must match byte for byte.
        exact_whitespace: bool,
    },
    /// A regular expression (Rust `regex` syntax), `$1`/`${name}` in the replacement.
    Regex(String),
}

/// How many sites a pattern must match: exactly this many (`count: N`, 1
/// when unset) or every one there is (`count: all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// `count: N` (1 when unset): exactly N matches, all replaced; any
    /// other number makes the mutant `ambiguous`.
    Exactly(usize),
    /// `count: all`: every match is replaced, however many (at least one).
    All,
}

/// The group a `$…` reference in a regex replacement names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRef<'a> {
    /// A group by number (`$1`, `${2}`; `$0` is the whole match).
    Number(usize),
    /// A named group (`$name`, `${name}`).
    Name(&'a str),
}

impl<'a> GroupRef<'a> {
    /// A name that parses as a `usize` is a group number (`01` and `+1` too).
    fn of(name: &'a str) -> GroupRef<'a> {
        match name.parse::<usize>() {
            Ok(n) => GroupRef::Number(n),
            Err(_) => GroupRef::Name(name),
        }
    }

    /// Whether a regex whose groups are `names` has this group.
    fn exists_in(self, names: &[Option<&str>]) -> bool {
        match self {
            GroupRef::Number(n) => n < names.len(),
            GroupRef::Name(s) => names.contains(&Some(s)),
        }
    }
}

/// One capture reference in a replacement template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureRef<'a> {
    /// The reference as written: `$1`, `$name`, `${1}`.
    pub written: &'a str,
    /// The group it names.
    pub group: GroupRef<'a>,
    /// Written `${…}`.
    pub braced: bool,
}

/// Every capture reference in a regex `replace`, in order, read exactly as
/// the regex crate's `Captures::expand` reads it: `$$` is a literal `$`;
/// `${name}` runs to the next `}` (without one the `$` is literal); `$name`
/// takes the longest run of `[_0-9a-zA-Z]`, so `$1_x` names the group `1_x`;
/// a name that parses as a `usize` is a group number; a `$` followed by
/// anything else is literal.
pub fn capture_refs(replace: &str) -> Vec<CaptureRef<'_>> {
    let bytes = replace.as_bytes();
    let mut refs = Vec::new();
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|b| *b == b'$') {
        let at = i + off;
        i = at + 1;
        let (name, end, braced) = match bytes.get(at + 1) {
            Some(b'$') => {
                i = at + 2;
                continue;
            }
            Some(b'{') => match bytes[at + 2..].iter().position(|b| *b == b'}') {
                Some(len) => (&replace[at + 2..at + 2 + len], at + 3 + len, true),
                None => continue,
            },
            _ => {
                let len = bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                if len == 0 {
                    continue;
                }
                (&replace[at + 1..at + 1 + len], at + 1 + len, false)
            }
        };
        refs.push(CaptureRef {
            written: &replace[at..end],
            group: GroupRef::of(name),
            braced,
        });
        i = end;
    }
    refs
}

/// A reference in a regex `replace` to a group the regex does not have: it
/// would expand to nothing, silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCaptureRef {
    /// What is wrong, naming the reference as written.
    pub message: String,
    /// One line telling the user what to write instead.
    pub fix: String,
}

/// The references in `replace` that name no group of a regex whose groups
/// are `names` (indexed by group number, as `Regex::capture_names` yields
/// them), each once.
pub fn bad_capture_refs(replace: &str, names: &[Option<&str>]) -> Vec<BadCaptureRef> {
    let mut bad: Vec<BadCaptureRef> = Vec::new();
    let mut seen = Vec::new();
    for r in capture_refs(replace) {
        if r.group.exists_in(names) || seen.contains(&r.written) {
            continue;
        }
        seen.push(r.written);
        bad.push(describe_bad_ref(r, names));
    }
    bad
}

/// What is wrong with `r` (a group `names` does not have), and the fix.
fn describe_bad_ref(r: CaptureRef<'_>, names: &[Option<&str>]) -> BadCaptureRef {
    let written = r.written;
    let missing = match r.group {
        GroupRef::Number(n) => format!("capture group {n}"),
        GroupRef::Name(s) => format!("capture group named `{s}`"),
    };
    // `$1_x`, `$21`: the longest start of the name that is a group was meant.
    let name = &written[1..];
    let meant = (1..name.len())
        .rev()
        .filter(|_| !r.braced)
        .map(|n| name.split_at(n))
        .find(|(head, _)| GroupRef::of(head).exists_in(names));
    if let Some((head, tail)) = meant {
        let group = match GroupRef::of(head) {
            GroupRef::Number(n) => n.to_string(),
            GroupRef::Name(s) => format!("`{s}`"),
        };
        return BadCaptureRef {
            message: format!(
                "`{written}` in `replace` is read as the {missing} (a `$` reference takes every letter, digit and `_` that follows it), and the regex has no such group: it would expand to nothing"
            ),
            fix: format!("write `${{{head}}}{tail}` for group {group} followed by `{tail}`"),
        };
    }
    BadCaptureRef {
        message: format!(
            "`replace` refers to `{written}`, but the regex has no {missing}: it would expand to nothing"
        ),
        fix: format!(
            "{}, or write `$$` for a literal `$`",
            describe_groups(names)
        ),
    }
}

/// The groups of a regex, for a fix: `the regex has groups 0 (the whole
/// match), 1 (`op`) and 2; refer to one of them`.
fn describe_groups(names: &[Option<&str>]) -> String {
    if names.len() <= 1 {
        return "the regex has no capture group, only 0 (the whole match); put `(…)` around the text to keep and refer to it as `${1}`".into();
    }
    let groups: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| match (i, name) {
            (0, _) => "0 (the whole match)".to_string(),
            (i, Some(n)) => format!("{i} (`{n}`)"),
            (i, None) => i.to_string(),
        })
        .collect();
    let (last, rest) = groups.split_last().expect("at least two groups");
    format!(
        "the regex has groups {} and {last}; refer to one of them",
        rest.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::bytes::Regex;

    fn refs(replace: &str) -> Vec<(&str, GroupRef<'_>)> {
        capture_refs(replace)
            .into_iter()
            .map(|r| (r.written, r.group))
            .collect()
    }

    #[test]
    fn capture_refs_follow_the_regex_crate() {
        use GroupRef::{Name, Number};
        assert_eq!(refs("$1"), [("$1", Number(1))]);
        assert_eq!(refs("a$12b"), [("$12b", Name("12b"))]);
        assert_eq!(refs("$1_x"), [("$1_x", Name("1_x"))]);
        assert_eq!(refs("${1}_x"), [("${1}", Number(1))]);
        assert_eq!(
            refs("$01 ${+2}"),
            [("$01", Number(1)), ("${+2}", Number(2))]
        );
        assert_eq!(
            refs("${a b}${}"),
            [("${a b}", Name("a b")), ("${}", Name(""))]
        );
        assert_eq!(refs("$name-x"), [("$name", Name("name"))]);
        assert_eq!(refs("é$é$x"), [("$x", Name("x"))]);
        // Literal dollars: `$$`, a lone `$`, `${` without `}`.
        for literal in ["$$", "$$1", "$", "a $ b", "$-", "${1", "$${1}", "$$$$x"] {
            assert_eq!(refs(literal), [], "{literal}");
        }
        assert_eq!(refs("$$$1"), [("$1", Number(1))]);
        assert_eq!(refs("${${1}}"), [("${${1}", Name("${1"))]);
        assert_eq!(
            refs("99999999999999999999999$99999999999999999999999"),
            [("$99999999999999999999999", Name("99999999999999999999999"))]
        );
    }

    /// `replace` expanded from [`capture_refs`]: each reference by its
    /// group's text (nothing for a missing group), `$$` by `$`.
    fn expand_by_refs(replace: &str, caps: &regex::bytes::Captures<'_>, re: &Regex) -> Vec<u8> {
        let literal = |s: &str, out: &mut Vec<u8>| {
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '$' && chars.peek() == Some(&'$') {
                    chars.next();
                }
                out.extend_from_slice(c.to_string().as_bytes());
            }
        };
        let mut out = Vec::new();
        let mut last = 0;
        for r in capture_refs(replace) {
            let at = r.written.as_ptr() as usize - replace.as_ptr() as usize;
            literal(&replace[last..at], &mut out);
            let index = match r.group {
                GroupRef::Number(n) => Some(n),
                GroupRef::Name(s) => re.capture_names().position(|n| n == Some(s)),
            };
            if let Some(m) = index.and_then(|i| caps.get(i)) {
                out.extend_from_slice(m.as_bytes());
            }
            last = at + r.written.len();
        }
        literal(&replace[last..], &mut out);
        out
    }

    #[test]
    fn capture_refs_expand_as_the_regex_crate_expands() {
        let re = Regex::new(r"(?P<a>x)(y)(?P<a_1>z)(?P<b>w)?").unwrap();
        let caps = re.captures(b"xyz").unwrap();
        let alphabet: Vec<char> = "$${}12a_b-x 0é".chars().collect();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let len = (seed >> 60) as usize;
            let template: String = (0..len)
                .map(|k| alphabet[((seed >> (k * 4 % 56)) % alphabet.len() as u64) as usize])
                .collect();
            let mut want = Vec::new();
            caps.expand(template.as_bytes(), &mut want);
            assert_eq!(expand_by_refs(&template, &caps, &re), want, "{template:?}");
        }
    }

    #[test]
    fn bad_capture_refs_name_the_groups_and_the_braced_form() {
        let names = [None, None, Some("op")];
        let bad = |r: &str| bad_capture_refs(r, &names);
        for good in ["$0 $1 $2 ${op} $op ${2}_x $$9 $", "${1}${2}$1$op"] {
            assert_eq!(bad(good), [], "{good}");
        }
        let b = bad("$9");
        assert_eq!(b.len(), 1);
        assert_eq!(
            b[0].message,
            "`replace` refers to `$9`, but the regex has no capture group 9: it would expand to nothing"
        );
        assert_eq!(
            b[0].fix,
            "the regex has groups 0 (the whole match), 1 and 2 (`op`); refer to one of them, or write `$$` for a literal `$`"
        );
        assert!(bad("${nope}")[0]
            .message
            .contains("no capture group named `nope`"));
        assert_eq!(
            bad("$1_x")[0].fix,
            "write `${1}_x` for group 1 followed by `_x`"
        );
        assert_eq!(
            bad("$op_x")[0].fix,
            "write `${op}_x` for group `op` followed by `_x`"
        );
        assert_eq!(
            bad("$21")[0].fix,
            "write `${2}1` for group 2 followed by `1`"
        );
        // Braced names are taken as written: no guess.
        assert!(bad("${1_x}")[0].fix.starts_with("the regex has groups"));
        // Each bad reference once.
        assert_eq!(bad("$9 $9 ${9} $x").len(), 3);
        let none = bad_capture_refs("$1", &[None]);
        assert!(
            none[0].fix.starts_with("the regex has no capture group"),
            "{none:?}"
        );
    }
}
