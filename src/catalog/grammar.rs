//! The tree-sitter grammars the catalog matches with, as one ast-grep
//! [`Language`](ast_grep_core::Language): Python, TypeScript, TSX (which
//! also parses JavaScript and JSX), and Go.

use std::borrow::Cow;

use ast_grep_core::matcher::{Pattern, PatternBuilder, PatternError};
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};
use ast_grep_core::Language as AstLanguage;

use super::Language;

/// One parser. [`Language::TypeScript`] files are parsed with `TypeScript`
/// (`.ts`, `.mts`, `.cts`) or `Tsx` (`.tsx`, `.js`, `.jsx`, `.mjs`, `.cjs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grammar {
    Python,
    TypeScript,
    Tsx,
    Go,
}

/// Python and Go identifiers cannot hold `$`, so pattern metavariables are
/// written with this letter before parsing (as ast-grep-language does).
const PY_EXPANDO: char = 'µ';

impl Grammar {
    /// The grammar for a file path, by extension.
    pub fn for_path(path: &str) -> Option<Grammar> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "py" | "pyi" => Some(Grammar::Python),
            "ts" | "mts" | "cts" => Some(Grammar::TypeScript),
            "tsx" | "js" | "jsx" | "mjs" | "cjs" => Some(Grammar::Tsx),
            "go" => Some(Grammar::Go),
            _ => None,
        }
    }

    pub fn language(self) -> Language {
        match self {
            Grammar::Python => Language::Python,
            Grammar::TypeScript | Grammar::Tsx => Language::TypeScript,
            Grammar::Go => Language::Go,
        }
    }

    /// The grammars that parse files of a language.
    pub fn of(lang: Language) -> &'static [Grammar] {
        match lang {
            Language::Python => &[Grammar::Python],
            Language::TypeScript => &[Grammar::TypeScript, Grammar::Tsx],
            Language::Go => &[Grammar::Go],
        }
    }
}

/// `$A`, `$$A` and `$$$A` (and anonymous `$$$`) with the expando letter.
fn expand_metavars(expando: char, query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    let mut dollars = 0;
    for c in query.chars() {
        if c == '$' {
            dollars += 1;
            continue;
        }
        let sigil = if c.is_ascii_uppercase() || c == '_' || dollars == 3 {
            expando
        } else {
            '$'
        };
        out.extend(std::iter::repeat_n(sigil, dollars));
        dollars = 0;
        out.push(c);
    }
    let sigil = if dollars == 3 { expando } else { '$' };
    out.extend(std::iter::repeat_n(sigil, dollars));
    out
}

impl AstLanguage for Grammar {
    fn kind_to_id(&self, kind: &str) -> u16 {
        self.get_ts_language().id_for_node_kind(kind, true)
    }
    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.get_ts_language()
            .field_id_for_name(field)
            .map(|f| f.get())
    }
    fn expando_char(&self) -> char {
        match self {
            Grammar::Python | Grammar::Go => PY_EXPANDO,
            Grammar::TypeScript | Grammar::Tsx => '$',
        }
    }
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self {
            Grammar::Python | Grammar::Go => Cow::Owned(expand_metavars(PY_EXPANDO, query)),
            Grammar::TypeScript | Grammar::Tsx => Cow::Borrowed(query),
        }
    }
    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Grammar {
    fn get_ts_language(&self) -> TSLanguage {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_by_extension() {
        assert_eq!(Grammar::for_path("src/a/server.py"), Some(Grammar::Python));
        assert_eq!(Grammar::for_path("x.ts"), Some(Grammar::TypeScript));
        assert_eq!(Grammar::for_path("x.mjs"), Some(Grammar::Tsx));
        assert_eq!(
            Grammar::for_path("pkg/http/middleware.go"),
            Some(Grammar::Go)
        );
        assert_eq!(Grammar::for_path("pyproject.toml"), None);
        assert_eq!(Grammar::for_path("Makefile"), None);
    }

    #[test]
    fn python_metavars_use_the_expando_letter() {
        assert_eq!(expand_metavars('µ', "f($A, $$$B, $$$)"), "f(µA, µµµB, µµµ)");
        assert_eq!(expand_metavars('µ', "'$5'"), "'$5'");
    }
}
