//! Just enough of the POSIX shell's word splitting to read the test command
//! a project writes in its CI steps, Makefile recipes and scripts: quotes,
//! backslashes, comments, line continuations and the list operators (`&&`,
//! `||`, `;`, `|`, `&`). Each word keeps its raw text (re-emitted as the
//! project wrote it) beside its unquoted value (what is looked at).

use std::iter::Peekable;
use std::str::Chars;

/// One shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// As written, quotes included.
    pub raw: String,
    /// With quotes and backslashes removed (expansions left as text).
    pub value: String,
}

/// A simple command of a line: its words (assignments included), the
/// 0-based offset of the physical line it starts on, and the list operator
/// after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    /// Its words, in order, assignments included.
    pub words: Vec<Word>,
    /// 0-based offset of the physical line it starts on.
    pub line: usize,
    /// The operator that follows it (`&&`, `||`, `;`, `|`, `&`; a newline
    /// or a comment is `;`); `None` for the script's last command.
    pub then: Option<&'static str>,
}

/// The simple commands of a script, in order: backslash-newline joins
/// lines, a `#` at a word's start comments out the rest of the line.
/// `None` on an unterminated quote.
pub fn commands(script: &str) -> Option<Vec<Simple>> {
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut cur: Option<Word> = None;
    let mut line = 0usize;
    let mut start_line = 0usize;
    let mut chars = script.chars().peekable();
    let flush = |cur: &mut Option<Word>, words: &mut Vec<Word>| {
        if let Some(w) = cur.take() {
            words.push(w);
        }
    };
    let end = |words: &mut Vec<Word>, out: &mut Vec<Simple>, start: usize, then: &'static str| {
        if !words.is_empty() {
            out.push(Simple {
                words: std::mem::take(words),
                line: start,
                then: Some(then),
            });
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some(n) => {
                    let w = cur.get_or_insert_with(empty);
                    w.raw.push('\\');
                    w.raw.push(n);
                    w.value.push(n);
                }
                None => {}
            },
            '\'' | '"' => read_quoted(c, &mut chars, cur.get_or_insert_with(empty), &mut line)?,
            '#' if cur.is_none() => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        line += 1;
                        break;
                    }
                }
                end(&mut words, &mut out, start_line, ";");
                start_line = line;
            }
            '\n' | ';' | '&' | '|' => {
                flush(&mut cur, &mut words);
                let doubled = (c == '&' || c == '|') && chars.peek() == Some(&c);
                if doubled {
                    chars.next();
                }
                let op = match (c, doubled) {
                    ('&', true) => "&&",
                    ('|', true) => "||",
                    ('&', false) => "&",
                    ('|', false) => "|",
                    _ => ";",
                };
                end(&mut words, &mut out, start_line, op);
                if c == '\n' {
                    line += 1;
                }
                start_line = line;
            }
            ' ' | '\t' | '\r' => flush(&mut cur, &mut words),
            // A GitHub Actions expression is one word, spaces and all.
            '$' if chars.clone().take(2).eq(['{', '{']) => {
                read_expression(&mut chars, cur.get_or_insert_with(empty))
            }
            _ => {
                if cur.is_none() && words.is_empty() {
                    start_line = line;
                }
                let w = cur.get_or_insert_with(empty);
                w.raw.push(c);
                w.value.push(c);
            }
        }
    }
    flush(&mut cur, &mut words);
    end(&mut words, &mut out, start_line, ";");
    if let Some(last) = out.last_mut().filter(|l| l.then == Some(";")) {
        last.then = None;
    }
    Some(out)
}

/// The rest of a quoted part opened by `quote` (`'` or `"`) into `w`: raw
/// text as written, value without the quotes (inside `"`, a backslash
/// escapes only `"`, `\\`, `$` and `` ` ``); newlines counted into `line`.
/// `None` when the quote is never closed.
fn read_quoted(
    quote: char,
    chars: &mut Peekable<Chars<'_>>,
    w: &mut Word,
    line: &mut usize,
) -> Option<()> {
    w.raw.push(quote);
    loop {
        let n = chars.next()?;
        w.raw.push(n);
        if n == '\n' {
            *line += 1;
        }
        if n == quote {
            return Some(());
        }
        if quote == '"' && n == '\\' {
            let e = chars.next()?;
            w.raw.push(e);
            if !matches!(e, '"' | '\\' | '$' | '`') {
                w.value.push('\\');
            }
            w.value.push(e);
            continue;
        }
        w.value.push(n);
    }
}

/// A GitHub Actions expression (`${{ … }}`, the `$` already read) into `w`,
/// spaces and all, up to its closing `}}`.
fn read_expression(chars: &mut Peekable<Chars<'_>>, w: &mut Word) {
    w.raw.push('$');
    w.value.push('$');
    while let Some(n) = chars.next() {
        w.raw.push(n);
        w.value.push(n);
        if n == '}' && chars.peek() == Some(&'}') {
            chars.next();
            w.raw.push('}');
            w.value.push('}');
            break;
        }
    }
}

fn empty() -> Word {
    Word {
        raw: String::new(),
        value: String::new(),
    }
}

/// `NAME=value` (a shell assignment word): the name and the value.
pub fn assignment(w: &Word) -> Option<(&str, &str)> {
    let (name, value) = w.value.split_once('=')?;
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &Simple) -> Vec<&str> {
        s.words.iter().map(|w| w.value.as_str()).collect()
    }

    #[test]
    fn lists_quotes_continuations_and_comments() {
        let c = commands(
            "pip install -e . # deps\nPYTHONPATH=src pytest tests/ \\\n  -m \"not live\" -k 'a or b' && echo ok\n",
        )
        .unwrap();
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(values(&c[0]), ["pip", "install", "-e", "."]);
        assert_eq!(
            values(&c[1]),
            [
                "PYTHONPATH=src",
                "pytest",
                "tests/",
                "-m",
                "not live",
                "-k",
                "a or b"
            ]
        );
        assert_eq!(c[1].line, 1);
        assert_eq!(c[1].words[4].raw, "\"not live\"");
        assert_eq!(values(&c[2]), ["echo", "ok"]);
        assert_eq!(c[2].line, 2);
        assert!(commands("pytest -m 'open").is_none());
        assert_eq!(
            assignment(&c[1].words[0]),
            Some(("PYTHONPATH", "src")),
            "{:?}",
            c[1].words[0]
        );
        assert_eq!(assignment(&c[1].words[1]), None);
        let c = commands("pytest ${{ matrix.extra }} -x").unwrap();
        assert_eq!(values(&c[0]), ["pytest", "${{ matrix.extra }}", "-x"]);
    }
}
