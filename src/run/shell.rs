//! Quoting a value as one `sh` word: the one quoter for every command
//! unguard writes (placeholders expanded into a shell command, the lock
//! file's holder record, the commands `init` and error messages propose).
//! A leaf: it uses nothing else of unguard.
//!
//! Two rules come before the `shlex` crate, so that the commands unguard
//! shows in logs and `outcomes.json` read as they always have:
//! - a word of letters, digits and `/._-+=:,@%` stays bare (paths and
//!   `key=value` options as typed; `shlex` would quote `=`, `,` and `%`);
//! - a value without a `'` goes in single quotes, inside which `sh` and
//!   Python's `shlex.split` (pytest's reading of `PYTEST_ADDOPTS`) take
//!   every byte literally (`shlex` would break a regex like `a\.b` or
//!   `^x` into several quoted pieces, for shells unguard never feeds:
//!   fish, interactive bash).
//!
//! A value with a `'` in it is quoted by `shlex`: pieces in single or
//! double quotes, which both read back as the value.

use std::borrow::Cow;

/// Characters a bare word may hold besides ASCII letters and digits.
const BARE: &str = "/._-+=:,@%";

/// `value` as one shell word: bare when it needs no quoting, in single
/// quotes when it has no `'`, else quoted by `shlex` (see the module docs).
pub fn quote(value: &str) -> String {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || BARE.contains(c))
    {
        return value.to_string();
    }
    if !value.contains('\'') {
        return format!("'{value}'");
    }
    // `allow_nul`: a NUL (which no argument can carry anyway) is quoted
    // like any other byte, so quoting cannot fail; the fallback is
    // unreachable.
    shlex::Quoter::new()
        .allow_nul(true)
        .quote(value)
        .map_or_else(|_| String::from("''"), Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `sh` makes of `words` written one after the other, each
    /// quoted: one argument per word, byte for byte.
    fn through_sh(words: &[String]) -> Vec<String> {
        let script = format!(
            "printf '%s\\0' {}",
            words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
        let mut args: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .map(|a| String::from_utf8(a.to_vec()).unwrap())
            .collect();
        assert_eq!(args.pop().as_deref(), Some(""), "{script}");
        args
    }

    #[test]
    fn ordinary_words_stay_bare_as_before() {
        for w in [
            "/tmp/a-b/x.xml",
            "--junitxml=/tmp/out/j.xml",
            "tests/test_x.py::test_y",
            "a,b",
            "100%",
            "user@host",
            "v1.2+local",
            "-k",
        ] {
            assert_eq!(quote(w), w);
        }
    }

    #[test]
    fn anything_else_is_one_word_sh_reads_back() {
        let words: Vec<String> = [
            "",
            "a b",
            "it's",
            "'",
            "''",
            "say \"hi\"",
            "$HOME",
            "${x:-y}",
            "`id`",
            "$(id)",
            "a\nb",
            "back\\slash",
            "\\'",
            "^caret",
            "!bang",
            "*.py",
            "~",
            "#comment",
            "a;b&&c|d",
            "tab\there",
            "é ü",
            "{junit}",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(through_sh(&words), words);
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("a\nb"), "'a\nb'");
        assert_eq!(quote("^a\\.b$"), "'^a\\.b$'");
        // A `'` is shlex's: double quotes around it (the hand-written
        // quoter before it wrote `'it'\''s'`; sh reads both the same).
        assert_eq!(quote("it's"), "\"it's\"");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn every_value_is_one_word_sh_reads_back(
            words in proptest::collection::vec("[^\\x00]*", 1..6)
        ) {
            prop_assert_eq!(through_sh(&words), words);
        }

        #[test]
        fn a_value_of_quotes_and_escapes_is_one_word_sh_reads_back(
            words in proptest::collection::vec("[a '\"\\\\$`^!*{}\n]{0,12}", 1..6)
        ) {
            prop_assert_eq!(through_sh(&words), words);
        }

        #[test]
        fn a_word_of_ordinary_characters_is_left_bare(w in "[A-Za-z0-9/._+=:,@%-]{1,40}") {
            prop_assert_eq!(quote(&w), w);
        }
    }
}
