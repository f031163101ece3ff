//! Documentation and example code: shipped in the repository, not part of
//! its server.
//!
//! The default excludes ([`crate::audit::scan_scope`]) know documentation
//! and examples by folder name (`docs/`, `examples/`). Many repositories put
//! them elsewhere: a `docs_src/` tree of snippets that the docs include, a
//! `guide/` of Markdown and code, `client.examples.ts` next to the server, a
//! `tutorial.py` at the top. Their controls are not the server's, so this
//! module finds them by what they are, for the repository being audited:
//!
//! - a **directory** whose code no shipped code outside it imports, that
//!   holds no package manifest and no source root, and whose code the
//!   repository's Markdown includes (`{!../docs_src/x.py!}`,
//!   `--8<-- "docs_src/x.py"`, `.. literalinclude::`, `{{#include x}}`,
//!   `<<< @/x.ts`, `file=./x.ts`: at least half its code files), or which
//!   holds more Markdown than code;
//! - a **file** whose name has `example`, `demo`, `tutorial`, `sample` or
//!   `snippet` as a word of its stem (`foo.examples.ts`, `example_client.py`,
//!   `demo-app.ts`; not `counterexample.py` or `sampler.py`), or whose header
//!   (module docstring or leading comments) presents it as an example,
//!   tutorial or demo, and which no shipped code imports.
//!
//! "Shipped code" is the code the default excludes keep (not tests, not
//! docs), and the server's start scripts. Imports are read per language,
//! best effort and generously (a doubtful import counts, so code stays in):
//! Python `import a.b` / `from .a import b`, TypeScript and JavaScript
//! `from './x'` / `require('./x')` / path aliases, Go import paths under the
//! repository's `go.mod` modules.
//!
//! Never set aside: a package marker (`__init__.py`, `index.ts`, `doc.go`,
//! `mod.rs`) by its header or name, the audited root itself, a start script,
//! a Go file whose package holds other code, and all the shipped code at
//! once (a repository that is only examples is audited as it is: its user
//! means it).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::audit::scan_scope::{default_excluded, SOURCE_ROOTS};
use crate::audit::server_entry::{normalize, resolve};

/// Words of a file stem that mark an example.
const EXAMPLE_WORDS: &[&str] = &[
    "example",
    "examples",
    "demo",
    "demos",
    "tutorial",
    "tutorials",
    "sample",
    "samples",
    "snippet",
    "snippets",
];

/// Files that make a directory a package of its own (built, installed or
/// imported by name): a directory holding one is never a docs tree.
const MANIFESTS: &[&str] = &[
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "Cargo.toml",
    "deno.json",
];

/// Stems of Markdown files about the repository itself, not documentation
/// of its code (not counted as a directory's prose).
const META_DOCS: &[&str] = &[
    "changelog",
    "changes",
    "history",
    "license",
    "licence",
    "contributing",
    "code_of_conduct",
    "security",
    "authors",
    "notice",
];

/// How many lines of a file its header may span.
const HEADER_LINES: usize = 15;

/// Why code was set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// A directory whose code the repository's Markdown includes.
    IncludedByDocs,
    /// A directory that holds more Markdown than code.
    MostlyProse,
    /// A file whose name marks an example.
    ExampleName,
    /// A file whose header presents an example, tutorial or demo.
    ExampleHeader,
}

/// A directory, or a class of files, set aside as documentation or examples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SetAside {
    /// The directory (`docs_src/`); empty for a class of files.
    pub dir: String,
    /// The evidence.
    pub why: Why,
    /// The code files set aside (repo-relative).
    pub files: Vec<String>,
}

impl SetAside {
    /// The summary line: `set aside as documentation/examples: docs_src/
    /// (14 files: Markdown includes them)`.
    pub fn line(&self) -> String {
        let n = self.files.len();
        let files = if n == 1 { "file" } else { "files" };
        let some = || {
            let mut s: Vec<&str> = self.files.iter().take(3).map(String::as_str).collect();
            if n > 3 {
                s.push("…");
            }
            s.join(", ")
        };
        let what = match self.why {
            Why::IncludedByDocs => format!(
                "{} ({n} {files}: the Markdown includes them, no shipped code imports them)",
                self.dir
            ),
            Why::MostlyProse => format!(
                "{} ({n} {files}: more Markdown than code, no shipped code imports them)",
                self.dir
            ),
            Why::ExampleName => {
                format!(
                    "{n} {files} named as examples that no shipped code imports ({})",
                    some()
                )
            }
            Why::ExampleHeader => format!(
                "{n} {files} whose header presents an example, tutorial or demo that no shipped code imports ({})",
                some()
            ),
        };
        format!("set aside as documentation/examples: {what}; --file scans them")
    }
}

/// The documentation and example code of one audited repository.
#[derive(Debug, Clone, Default)]
pub struct DocTrees {
    /// The directories and file classes set aside, directories first.
    pub groups: Vec<SetAside>,
}

impl DocTrees {
    /// Every file set aside.
    pub fn files(&self) -> BTreeSet<String> {
        self.groups
            .iter()
            .flat_map(|g| g.files.iter().cloned())
            .collect()
    }
}

/// The language of a code file, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Js,
    Go,
}

fn lang(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.')?.1;
    match ext {
        "py" => Some(Lang::Python),
        "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => Some(Lang::Js),
        "go" => Some(Lang::Go),
        _ => None,
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Is `path` inside directory `dir` (or `dir` itself)?
fn within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|r| r.is_empty() || r.starts_with('/'))
}

/// A file that makes its directory a package (`__init__.py`, `index.ts`,
/// `doc.go`, `mod.rs`): it speaks for the package, never for an example.
fn package_marker(path: &str) -> bool {
    let name = file_name(path);
    matches!(name, "__init__.py" | "doc.go" | "mod.rs")
        || name
            .strip_prefix("index.")
            .is_some_and(|ext| lang(&format!("x.{ext}")) == Some(Lang::Js))
}

fn markup(path: &str) -> bool {
    let n = file_name(path).to_ascii_lowercase();
    [".md", ".mdx", ".markdown", ".rst"]
        .iter()
        .any(|e| n.ends_with(e))
}

/// The words of a file's stem: `foo.examples.ts` → foo, examples;
/// `demoApp.ts` → demo, app.
fn stem_words(path: &str) -> Vec<String> {
    let name = file_name(path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    let mut prev_digit = false;
    for c in stem.chars() {
        if !c.is_alphanumeric() {
            words.push(std::mem::take(&mut word));
            prev_lower = false;
            continue;
        }
        // `demoApp` → demo, app; `tutorial001` → tutorial, 001.
        let digit = c.is_ascii_digit();
        if c.is_uppercase() && prev_lower || !word.is_empty() && digit != prev_digit {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || digit;
        prev_digit = digit;
        word.extend(c.to_lowercase());
    }
    words.push(word);
    words.retain(|w| !w.is_empty());
    words
}

/// Does the file's name mark an example (a word of its stem)?
fn example_name(path: &str) -> bool {
    stem_words(path)
        .iter()
        .any(|w| EXAMPLE_WORDS.contains(&w.as_str()))
}

/// The paragraphs of a file's header: its leading comments and module
/// docstring, within the first [`HEADER_LINES`] lines, comment markers
/// stripped. A new comment block or a blank line starts a paragraph.
fn header(text: &str, lang: Lang) -> Vec<Vec<String>> {
    let mut paras: Vec<Vec<String>> = vec![Vec::new()];
    let push = |paras: &mut Vec<Vec<String>>, line: &str| {
        let t = line.trim().trim_matches(['*', '#', '=', '-', '/']).trim();
        if t.is_empty() {
            paras.push(Vec::new());
        } else if let Some(p) = paras.last_mut() {
            p.push(t.to_string());
        }
    };
    let mut quote: Option<&str> = None;
    let mut block = false;
    for (i, line) in text.lines().take(HEADER_LINES).enumerate() {
        let t = line.trim();
        if let Some(q) = quote {
            match t.find(q) {
                Some(at) => {
                    push(&mut paras, &t[..at]);
                    paras.push(Vec::new());
                    quote = None;
                }
                None => push(&mut paras, t),
            }
            continue;
        }
        if block {
            let end = t.find("*/");
            push(&mut paras, &t[..end.unwrap_or(t.len())]);
            if end.is_some() {
                paras.push(Vec::new());
                block = false;
            }
            continue;
        }
        if t.is_empty() || i == 0 && t.starts_with("#!") {
            paras.push(Vec::new());
            continue;
        }
        match lang {
            Lang::Python if t.starts_with('#') => push(&mut paras, t),
            Lang::Python => {
                let body = t.trim_start_matches(['r', 'u', 'R', 'U']);
                let Some(q) = ["\"\"\"", "'''"].into_iter().find(|q| body.starts_with(q)) else {
                    break;
                };
                paras.push(Vec::new());
                let rest = &body[3..];
                match rest.find(q) {
                    Some(at) => {
                        push(&mut paras, &rest[..at]);
                        paras.push(Vec::new());
                    }
                    None => {
                        push(&mut paras, rest);
                        quote = Some(q);
                    }
                }
            }
            _ if t.starts_with("//") => push(&mut paras, t),
            _ if t.starts_with("/*") => {
                paras.push(Vec::new());
                let rest = &t[2..];
                match rest.find("*/") {
                    Some(at) => {
                        push(&mut paras, &rest[..at]);
                        paras.push(Vec::new());
                    }
                    None => {
                        push(&mut paras, rest);
                        block = true;
                    }
                }
            }
            // Directives before the header: 'use strict', "use client".
            Lang::Js if t.starts_with("'use ") || t.starts_with("\"use ") => {}
            _ => break,
        }
    }
    paras.retain(|p| !p.is_empty());
    paras
}

/// A paragraph of licence text, tool directives or file tags, not a
/// description.
fn boilerplate(para: &[String]) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^(copyright|\(c\)|©|spdx-|licen[sc]ed\b|all rights reserved|eslint|prettier|@ts-|ts-(no)?check|-\*-|vim:|go:build|\+build|nolint|type:|pylint|noqa|mypy|ruff|fmt:|isort|biome-|jshint|jscs|global |coding[:=])|licen[cs]e")
            .expect("a valid regex")
    });
    para.iter().any(|l| RE.is_match(l))
}

/// Does the header present the file as an example, tutorial or demo? Its
/// summary (the first descriptive line) says so (`Example: …`, `A minimal
/// demo of …`, `Tutorial 3`, `Weather server example`, `Package main is an
/// example …`), or a line refers to the file as one (`This example shows`,
/// `In this tutorial`, `This script demonstrates`). A passing "for example"
/// does not.
fn example_header(text: &str, lang: Lang) -> bool {
    static SUMMARY: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        [
            r"^(?:(?:package|command|module)\s+[\w.]+\s+)?(?:is\s+)?(?:(?:an?|the|this|one)\s+)?(?:(?:simple|minimal|basic|small|quick|complete|full|toy|tiny|short|little|working|runnable|trivial|hello[- ]world)\s+)*(?:examples?|tutorials?|demos?|demonstrations?|walkthrough)\b",
            r"^(?:(?:an?|the|this)\s+)?(?:(?:simple|minimal|basic|small)\s+)*samples?\s+(?:mcp\s+)?(?:server|client|app|application|code|usage|program|script|implementation|project|integration|of|for|showing|that|using)\b",
            r"\b(?:server|client|app|application|script|program|usage|code|project|integration|agent|tools?|implementation|bot|plugin|extension)\s+(?:examples?|demos?|tutorials?)\)?[.!]?$",
            r"\((?:an?\s+)?(?:example|demo|tutorial)\)[.!]?$",
        ]
        .iter()
        .map(|r| Regex::new(r).expect("a valid regex"))
        .collect()
    });
    static ANYWHERE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        [
            r"\bthis\s+(?:(?:simple|minimal|basic|small|quick|short)\s+)*(?:example|tutorial|demo|demonstration|walkthrough)\b",
            r"\bthis\s+(?:file|module|script|program|code|server|client|app|application|snippet|package)\s+(?:is\s+(?:only\s+|just\s+|meant\s+as\s+)?(?:an?|the)\s+(?:[\w-]+\s+){0,3}?(?:example|demo|demonstration|tutorial)\b|demonstrates\b|illustrates\b)",
        ]
        .iter()
        .map(|r| Regex::new(r).expect("a valid regex"))
        .collect()
    });
    let paras: Vec<Vec<String>> = header(text, lang)
        .into_iter()
        .filter(|p| !boilerplate(p))
        .collect();
    let Some(summary) = paras.first().and_then(|p| p.first()) else {
        return false;
    };
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^@(?:fileoverview|file|overview|description|module)\b\s*")
            .expect("a valid regex")
    });
    let summary = TAG.replace(&summary.to_lowercase(), "").into_owned();
    SUMMARY.iter().any(|r| r.is_match(&summary))
        || paras
            .iter()
            .flatten()
            .any(|l| ANYWHERE.iter().any(|r| r.is_match(&l.to_lowercase())))
}

/// The repo-relative paths (files, or directories for Go and packages)
/// the shipped code imports, best effort.
struct Imports<'a> {
    /// Module path suffix (`a/b`) → files and directories it may name.
    python: HashMap<String, Vec<&'a str>>,
    /// Module path suffix (extension and `/index` dropped) → files.
    js: HashMap<String, Vec<&'a str>>,
    /// `go.mod` module path → its directory.
    go_modules: Vec<(String, String)>,
    known: BTreeSet<&'a str>,
}

/// Insert every trailing run of components of `module` (`a/b/c`: `c`,
/// `b/c`, `a/b/c`) as a key for `target`.
fn index_suffixes<'a>(map: &mut HashMap<String, Vec<&'a str>>, module: &str, target: &'a str) {
    let mut key = module;
    loop {
        map.entry(key.to_string()).or_default().push(target);
        match key.split_once('/') {
            Some((_, rest)) => key = rest,
            None => break,
        }
    }
}

impl<'a> Imports<'a> {
    fn new(root: &Path, files: &'a [String], code: &[&'a str]) -> Imports<'a> {
        let mut python: HashMap<String, Vec<&str>> = HashMap::new();
        let mut js: HashMap<String, Vec<&str>> = HashMap::new();
        let mut dirs = BTreeSet::new();
        for &f in code {
            let stem = f.rsplit_once('.').map_or(f, |(s, _)| s);
            match lang(f) {
                Some(Lang::Python) => {
                    let module = stem.strip_suffix("/__init__").unwrap_or(stem);
                    index_suffixes(&mut python, module, f);
                    let mut d = parent(f);
                    while !d.is_empty() && dirs.insert(d) {
                        d = parent(d);
                    }
                }
                Some(Lang::Js) => {
                    index_suffixes(&mut js, stem, f);
                    if let Some(dir) = stem.strip_suffix("/index") {
                        index_suffixes(&mut js, dir, f);
                    }
                }
                _ => {}
            }
        }
        // A directory is a (namespace) package: `import a.b` names `a/b/`.
        for d in dirs {
            index_suffixes(&mut python, d, d);
        }
        let mut go_modules = Vec::new();
        for f in files.iter().filter(|f| file_name(f) == "go.mod") {
            let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
            if let Some(m) = text.lines().find_map(|l| l.trim().strip_prefix("module ")) {
                let m = m.trim().trim_matches('"').to_string();
                go_modules.push((m, parent(f).to_string()));
            }
        }
        Imports {
            python,
            js,
            go_modules,
            known: files.iter().map(String::as_str).collect(),
        }
    }

    /// What `file` (with text `text`) imports: repo-relative files and
    /// directories.
    fn of(&self, file: &str, text: &str) -> Vec<String> {
        match lang(file) {
            Some(Lang::Python) => self.python_imports(file, text),
            Some(Lang::Js) => self.js_imports(file, text),
            Some(Lang::Go) => self.go_imports(text),
            None => Vec::new(),
        }
    }

    fn python_imports(&self, file: &str, text: &str) -> Vec<String> {
        static FROM: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?m)^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)")
                .expect("a valid regex")
        });
        static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?m)^[ \t]*import[ \t]+([^\n#]+)|import_module\(\s*["']([\w.]+)["']"#)
                .expect("a valid regex")
        });
        let mut modules: Vec<String> = Vec::new();
        // `a.b.c` names a/b/c, and runs a/b and a on the way.
        let mut add = |dotted: &str| {
            let mut m = dotted.trim_matches('.').replace('.', "/");
            while !m.is_empty() {
                modules.push(m.clone());
                m = parent(&m).to_string();
            }
        };
        for c in FROM.captures_iter(text) {
            let dots = c[1].len();
            let base = if dots == 0 {
                String::new()
            } else {
                let mut d = parent(file).to_string();
                for _ in 1..dots {
                    d = parent(&d).to_string();
                }
                d
            };
            let module = c[2].to_string();
            let names = c[3].trim_matches(['(', ')']).split(',').filter_map(|n| {
                n.split_whitespace()
                    .next()
                    .filter(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'))
            });
            let join = |a: &str, b: &str| match (a.is_empty(), b.is_empty()) {
                (true, _) => b.to_string(),
                (_, true) => a.to_string(),
                _ => format!("{a}.{b}"),
            };
            let full = join(&base.replace('/', "."), &module);
            for n in names {
                add(&join(&full, n));
            }
            add(&full);
        }
        for c in IMPORT.captures_iter(text) {
            if let Some(list) = c.get(1) {
                for part in list.as_str().split(',') {
                    if let Some(m) = part.split_whitespace().next() {
                        add(m.trim_matches(['(', ')', '\\']));
                    }
                }
            }
            if let Some(m) = c.get(2) {
                add(m.as_str());
            }
        }
        let mut out = Vec::new();
        for m in modules {
            for t in self.python.get(&m).into_iter().flatten() {
                out.push(t.to_string());
            }
        }
        out
    }

    fn js_imports(&self, file: &str, text: &str) -> Vec<String> {
        static RE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#"(?m)(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']"#,
            )
            .expect("a valid regex")
        });
        let mut out = Vec::new();
        for c in RE.captures_iter(text) {
            let spec = &c[1];
            if spec.starts_with('.') {
                if let Some(f) = resolve(file, spec, &self.known) {
                    out.push(f);
                }
                let dir = parent(file);
                if let Some(p) = normalize(&format!("{dir}/{spec}")) {
                    out.push(p);
                }
                continue;
            }
            // `@/lib/auth`, `~/lib/auth`, `@scope/pkg/sub`: the path after
            // the alias or scope.
            let mut parts: Vec<&str> = spec.split('/').collect();
            if parts.len() > 1 && parts[0].starts_with(['@', '~', '#']) {
                parts.remove(0);
            }
            let key = parts.join("/");
            let key = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"]
                .iter()
                .find_map(|e| key.strip_suffix(e))
                .unwrap_or(&key);
            for t in self.js.get(key).into_iter().flatten() {
                out.push(t.to_string());
            }
        }
        out
    }

    fn go_imports(&self, text: &str) -> Vec<String> {
        static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?s)\bimport\s*\((.*?)\)|\bimport\s+(?:[\w.]+\s+)?"([^"]+)""#)
                .expect("a valid regex")
        });
        static PATH: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r#""([^"]+)""#).expect("a valid regex"));
        let mut paths = Vec::new();
        for c in BLOCK.captures_iter(text) {
            if let Some(block) = c.get(1) {
                paths.extend(PATH.captures_iter(block.as_str()).map(|p| p[1].to_string()));
            }
            if let Some(p) = c.get(2) {
                paths.push(p.as_str().to_string());
            }
        }
        let mut out = Vec::new();
        for p in paths {
            for (module, dir) in &self.go_modules {
                let rest = if p == *module {
                    Some("")
                } else {
                    p.strip_prefix(&format!("{module}/"))
                };
                if let Some(rest) = rest {
                    let joined = [dir.as_str(), rest]
                        .iter()
                        .filter(|s| !s.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join("/");
                    out.push(joined);
                }
            }
        }
        out
    }
}

/// What every include directive of [`included`] has on its line (a cheap
/// test before the regex).
const INCLUDE_MARKS: &[&str] = &[
    "{*",
    "{!",
    "--8<--",
    "literalinclude",
    "{{#",
    "<<<",
    "file=",
    "embedme",
    "raw-loader!",
    "!include",
];

/// Every repo-relative code file that an include directive of the
/// repository's Markdown embeds.
fn included(root: &Path, files: &[String], known: &BTreeSet<&str>) -> BTreeSet<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r#"\{[*!]\s*([^\s*!}]+)"#,          // {* ../docs_src/x.py *}, {!x.py!}
            r#"|--8<--\s*["']([^"']+)["']"#,    // --8<-- "x.py"
            r#"|literalinclude::?\}?\s+(\S+)"#, // .. literalinclude:: x.py
            r#"|\{\{#(?:rustdoc_)?include\s+([^\s}]+)"#, // {{#include x.rs}}
            r#"|(?m:^\s*<<<\s+(\S+))"#,         // <<< @/snippets/x.ts
            r#"|```[^\n]*\bfile=["']?([^\s"'`]+)"#, // ```ts file=./x.ts
            r#"|\bembedme\s+(\S+)"#,            // <!-- embedme x.ts -->
            r#"|raw-loader!([^"'\s]+)"#,        // import X from '!!raw-loader!./x.ts'
            r#"|(?m:^\s*!include\s+(\S+))"#,    // !include x.py
        ))
        .expect("a valid regex")
    });
    let mut out = BTreeSet::new();
    for md in files.iter().filter(|f| markup(f)) {
        let Ok(text) = std::fs::read_to_string(root.join(md)) else {
            continue;
        };
        let mut paths: Vec<&str> = Vec::new();
        // The block form of snippets: a `--8<--` line, one path a line, `--8<--`.
        let mut in_block = false;
        for line in text.lines() {
            let t = line.trim();
            if t == "--8<--" {
                in_block = !in_block;
            } else if in_block && !t.is_empty() {
                paths.push(t);
            } else if INCLUDE_MARKS.iter().any(|m| line.contains(m)) {
                let found = RE.captures_iter(line);
                paths.extend(
                    found.filter_map(|c| Some(c.iter().skip(1).flatten().next()?.as_str())),
                );
            }
        }
        let dir = parent(md);
        for p in paths {
            // Line selectors: `x.py:3:9`, `x.py#L3-L9`, `x.ts{2-4}`, `x.py [ln:3]`.
            let p = p.split(['#', '{', '[']).next().unwrap_or(p);
            let p = p
                .split(':')
                .next()
                .unwrap_or(p)
                .trim_matches(['"', '\'', ')']);
            if lang(p).is_none() {
                continue;
            }
            let bare = p.trim_start_matches(['.', '/', '@']);
            let bare = bare.trim_start_matches(['.', '/']);
            let candidates = [
                normalize(&format!("{dir}/{p}")),
                normalize(bare),
                normalize(&format!("{dir}/{bare}")),
            ];
            for c in candidates.into_iter().flatten() {
                if known.contains(c.as_str()) {
                    out.insert(c);
                }
            }
        }
    }
    out
}

/// Find the documentation and example code of the package at `prefix`
/// (empty, or a directory ending in `/`) of the repository at `root`.
/// `files` are the package's files (repo-relative), `entries` the start
/// scripts the default excludes would skip ([`crate::audit::server_entry`]).
pub fn find(root: &Path, prefix: &str, files: &[String], entries: &[String]) -> DocTrees {
    let prefix = prefix.trim_end_matches('/');
    let entry = |f: &str| entries.iter().any(|e| e == f);
    // Shipped code: what the default excludes keep, and the start scripts.
    let shipped: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| lang(f).is_some() && (!default_excluded(f) || entry(f)))
        .collect();
    if shipped.is_empty() {
        return DocTrees::default();
    }
    let texts: BTreeMap<&str, String> = shipped
        .iter()
        .map(|f| {
            let bytes = std::fs::read(root.join(f)).unwrap_or_default();
            (*f, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    let imports = Imports::new(root, files, &shipped);
    // What each file or directory is imported by (`targets`), and the
    // directories that code outside them imports (`imported_dirs`).
    let mut targets: HashMap<String, BTreeSet<&str>> = HashMap::new();
    let mut imported_dirs: BTreeSet<String> = BTreeSet::new();
    for (from, text) in &texts {
        for to in imports.of(from, text) {
            let mut d = to.as_str();
            while !d.is_empty() && !within(from, d) {
                imported_dirs.insert(d.to_string());
                d = parent(d);
            }
            targets.entry(to).or_default().insert(from);
        }
    }
    let imported_into = |dir: &str| imported_dirs.contains(dir);
    let imported = |file: &str| {
        let by = |t: &str| targets.get(t).is_some_and(|s| s.iter().any(|f| *f != file));
        by(file) || lang(file) == Some(Lang::Go) && by(parent(file))
    };
    let mut groups = directories(root, prefix, files, &shipped, &imports.known, &|dir| {
        imported_into(dir) || shipped.iter().any(|f| within(f, dir) && entry(f))
    });
    let in_dirs: BTreeSet<&str> = groups
        .iter()
        .flat_map(|g| g.files.iter().map(String::as_str))
        .collect();
    let mut by_name = Vec::new();
    let mut by_header = Vec::new();
    for &f in shipped.iter().filter(|f| !in_dirs.contains(*f)) {
        if package_marker(f) || entry(f) || imported(f) {
            continue;
        }
        let Some(l) = lang(f) else { continue };
        if example_name(f) {
            by_name.push(f);
        } else if example_header(&texts[f], l) {
            by_header.push(f);
        }
    }
    // A Go file is part of its directory's package: set aside only when
    // the whole package is.
    let marked: BTreeSet<&str> = by_name.iter().chain(&by_header).copied().collect();
    let whole_package = |f: &&str| {
        lang(f) != Some(Lang::Go)
            || shipped
                .iter()
                .filter(|g| lang(g) == Some(Lang::Go) && parent(g) == parent(f))
                .all(|g| marked.contains(g))
    };
    by_name.retain(whole_package);
    by_header.retain(whole_package);
    for (why, list) in [(Why::ExampleName, by_name), (Why::ExampleHeader, by_header)] {
        if !list.is_empty() {
            groups.push(SetAside {
                dir: String::new(),
                why,
                files: list.into_iter().map(str::to_string).collect(),
            });
        }
    }
    // A repository that is only examples is audited as it is.
    let aside: BTreeSet<&str> = groups
        .iter()
        .flat_map(|g| g.files.iter().map(String::as_str))
        .collect();
    if shipped
        .iter()
        .all(|f| aside.contains(f) || package_marker(f))
    {
        return DocTrees::default();
    }
    DocTrees { groups }
}

/// The directories below `prefix` that are documentation or example trees,
/// outermost first (a tree's subdirectories are part of it); `kept` tells
/// a directory that shipped code imports or that holds a start script.
fn directories(
    root: &Path,
    prefix: &str,
    files: &[String],
    shipped: &[&str],
    known: &BTreeSet<&str>,
    kept: &dyn Fn(&str) -> bool,
) -> Vec<SetAside> {
    let shipped_set: BTreeSet<&str> = shipped.iter().copied().collect();
    let all: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let in_dir = |set: &BTreeSet<&'_ str>, dir: &str| -> Vec<String> {
        let start = format!("{dir}/");
        let end = format!("{dir}0"); // '0' sorts right after '/'
        set.range(start.as_str()..end.as_str())
            .map(|s| s.to_string())
            .collect()
    };
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    for f in shipped {
        let mut d = parent(f);
        while d.len() > prefix.len() && within(d, prefix) && dirs.insert(d) {
            d = parent(d);
        }
    }
    let mut includes: Option<BTreeSet<String>> = None;
    let mut out: Vec<SetAside> = Vec::new();
    for dir in dirs {
        if out.iter().any(|g| within(dir, g.dir.trim_end_matches('/'))) {
            continue;
        }
        let below = dir[prefix.len()..].trim_start_matches('/');
        if below.split('/').any(|c| SOURCE_ROOTS.contains(&c)) {
            continue;
        }
        let everything = in_dir(&all, dir);
        if everything.iter().any(|f| MANIFESTS.contains(&file_name(f))) {
            continue;
        }
        let code = in_dir(&shipped_set, dir);
        let counted = code.iter().filter(|f| !package_marker(f)).count();
        if counted == 0 || kept(dir) {
            continue;
        }
        let includes = includes.get_or_insert_with(|| included(root, files, known));
        let embedded = code.iter().filter(|f| includes.contains(*f)).count();
        let prose = everything
            .iter()
            .filter(|f| markup(f) && !default_excluded(f))
            .filter(|f| {
                let name = file_name(f).to_ascii_lowercase();
                let stem = name.split('.').next().unwrap_or("");
                !META_DOCS.contains(&stem)
            })
            .count();
        let why = if embedded > 0 && 2 * embedded >= counted {
            Why::IncludedByDocs
        } else if prose > counted {
            Why::MostlyProse
        } else {
            continue;
        };
        out.push(SetAside {
            dir: format!("{dir}/"),
            why,
            files: code,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository in a temp dir, and its file list.
    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let mut list: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        list.sort();
        (dir, list)
    }

    /// `(dir or why, files)` of every group `find` sets aside.
    fn aside(files: &[(&str, &str)]) -> Vec<(String, Vec<String>)> {
        aside_in(files, "", &[])
    }

    fn aside_in(
        files: &[(&str, &str)],
        prefix: &str,
        entries: &[&str],
    ) -> Vec<(String, Vec<String>)> {
        let (dir, list) = tree(files);
        let list: Vec<String> = list.into_iter().filter(|f| f.starts_with(prefix)).collect();
        let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        find(dir.path(), prefix, &list, &entries)
            .groups
            .into_iter()
            .map(|g| {
                let what = if g.dir.is_empty() {
                    format!("{:?}", g.why)
                } else {
                    format!("{} {:?}", g.dir, g.why)
                };
                (what, g.files)
            })
            .collect()
    }

    fn group(what: &str, files: &[&str]) -> (String, Vec<String>) {
        (
            what.to_string(),
            files.iter().map(|f| f.to_string()).collect(),
        )
    }

    #[test]
    fn a_word_of_the_stem_marks_an_example_not_a_substring() {
        for f in [
            "foo.examples.ts",
            "example_client.py",
            "server_example.go",
            "demo-app.ts",
            "demoApp.ts",
            "tutorial_01.py",
            "tutorial001.py",
            "sample-server.js",
            "a/b/snippet.py",
            "ExampleServer.tsx",
        ] {
            assert!(example_name(f), "{f} is named as an example");
        }
        for f in [
            "counterexample.py",
            "sampler.py",
            "demographics.py",
            "exemplary.ts",
            "demon.go",
            "src/examples_dir/server.py",
            "__init__.py",
            "index.ts",
        ] {
            assert!(!example_name(f), "{f} is not named as an example");
        }
    }

    #[test]
    fn a_header_that_presents_an_example_in_each_language() {
        let yes: &[(&str, Lang)] = &[
            ("\"\"\"Example: a weather MCP server with bearer auth.\"\"\"\nimport x\n", Lang::Python),
            ("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\"\"\"A minimal demo of the SDK.\n\nRun it.\n\"\"\"\n", Lang::Python),
            ("# Tutorial 3: adding auth\nimport x\n", Lang::Python),
            ("\"\"\"Weather server.\n\nThis example shows how to check a token.\n\"\"\"\n", Lang::Python),
            ("'''Inventory MCP server example.'''\n", Lang::Python),
            ("/**\n * Demo of the streamable HTTP transport.\n */\nimport x from 'y';\n", Lang::Js),
            ("'use strict';\n// This script demonstrates OAuth with the SDK.\nconst a = 1;\n", Lang::Js),
            ("/** @fileoverview Sample server for the SDK. */\n", Lang::Js),
            ("// Copyright 2024 Acme. Licensed under MIT.\n\n// Package main is an example MCP server.\npackage main\n", Lang::Go),
            ("//go:build ignore\n\n// In this tutorial we add a tool.\npackage main\n", Lang::Go),
        ];
        for (text, l) in yes {
            assert!(example_header(text, *l), "{text:?} presents an example");
        }
        let no: &[(&str, Lang)] = &[
            (
                "\"\"\"Auth helpers, for example bearer tokens.\"\"\"\n",
                Lang::Python,
            ),
            (
                "\"\"\"Token checks.\n\nExample:\n    >>> check(t)\n\"\"\"\n",
                Lang::Python,
            ),
            (
                "\"\"\"Entry point. Reads settings, for example the port.\"\"\"\n",
                Lang::Python,
            ),
            (
                "import x\n\"\"\"Example: not a header.\"\"\"\n",
                Lang::Python,
            ),
            ("\"\"\"Sampler of events.\"\"\"\n", Lang::Python),
            (&"# x\n".repeat(15), Lang::Python),
            (
                "// Copyright Acme, see https://example.com/license\npackage auth\n",
                Lang::Go,
            ),
            (
                "// Package auth checks tokens; see the README for an example.\npackage auth\n",
                Lang::Go,
            ),
            ("import x from 'y';\n// Example: after code\n", Lang::Js),
            ("/* Sample rate limiter. */\n", Lang::Js),
        ];
        for (text, l) in no {
            assert!(!example_header(text, *l), "{text:?} presents no example");
        }
        let late = format!("{}// This example shows it too late\n", "// x\n".repeat(15));
        assert!(!example_header(&late, Lang::Go), "past the header's lines");
        assert!(example_header(&late[5..], Lang::Go), "within them");
    }

    #[test]
    fn python_files_named_or_headed_as_examples_that_nobody_imports() {
        let got = aside(&[
            (
                "server/__init__.py",
                "\"\"\"Demo MCP server package.\"\"\"\n",
            ),
            (
                "server/app.py",
                "from server.auth import check\nfrom . import demo_data\nimport guide\n",
            ),
            (
                "server/auth.py",
                "\"\"\"Auth, for example bearer tokens.\"\"\"\n",
            ),
            ("server/demo_data.py", "ROWS = []\n"),
            ("guide.py", "\"\"\"This example shows a tool.\"\"\"\n"),
            ("example_client.py", "import server.app\n"),
            ("serve_http.py", "\"\"\"Tutorial: serve over HTTP.\"\"\"\n"),
            (
                "counterexample.py",
                "\"\"\"Counterexamples for the checker.\"\"\"\n",
            ),
            // `.util` is server/util.py, not notes/util.py: the notes are prose.
            ("server/cli.py", "from .util import run\n"),
            ("server/util.py", ""),
            ("notes/util.py", ""),
            ("notes/a.md", ""),
            ("notes/b.md", ""),
            (
                "tests/test_serve.py",
                "import serve_http\nimport example_client\n",
            ),
        ]);
        assert_eq!(
            got,
            [
                group("notes/ MostlyProse", &["notes/util.py"]),
                group("ExampleName", &["example_client.py"]),
                group("ExampleHeader", &["serve_http.py"]),
            ]
        );
    }

    #[test]
    fn a_docs_tree_the_markdown_includes_unless_shipped_code_imports_it() {
        let files = [
            ("pkg/__init__.py", ""),
            ("pkg/app.py", "from pkg.security import check\n"),
            ("pkg/security/__init__.py", "def check(): ...\n"),
            ("docs_src/__init__.py", ""),
            ("docs_src/first/tutorial001.py", "import pkg\n"),
            ("docs_src/first/tutorial002.py", "import pkg\n"),
            ("docs_src/security/tutorial001.py", "import pkg\n"),
            ("docs_src/security/helper.py", "X = 1\n"),
            (
                "docs/en/first.md",
                "# First\n\n{* ../../docs_src/first/tutorial001.py hl[3] *}\n\n--8<-- \"docs_src/first/tutorial002.py:3:9\"\n",
            ),
            (
                "docs/en/security.md",
                "--8<--\ndocs_src/security/tutorial001.py\n--8<--\n",
            ),
            ("tests/test_first.py", "from docs_src.first import tutorial001\n"),
        ];
        assert_eq!(
            aside(&files),
            [group(
                "docs_src/ IncludedByDocs",
                &[
                    "docs_src/__init__.py",
                    "docs_src/first/tutorial001.py",
                    "docs_src/first/tutorial002.py",
                    "docs_src/security/helper.py",
                    "docs_src/security/tutorial001.py",
                ]
            )]
        );
        // Shipped code that imports a part keeps that part in the scan
        // (a file named as an example in it is still one).
        let mut imported = files.to_vec();
        imported[1] = ("pkg/app.py", "from docs_src.security import helper\n");
        assert_eq!(
            aside(&imported),
            [
                group(
                    "docs_src/first/ IncludedByDocs",
                    &[
                        "docs_src/first/tutorial001.py",
                        "docs_src/first/tutorial002.py"
                    ]
                ),
                group("ExampleName", &["docs_src/security/tutorial001.py"]),
            ]
        );
        imported[1] = (
            "pkg/app.py",
            "import docs_src.first.tutorial001, docs_src.first.tutorial002\n",
        );
        assert_eq!(
            aside(&imported),
            [group(
                "docs_src/security/ IncludedByDocs",
                &[
                    "docs_src/security/helper.py",
                    "docs_src/security/tutorial001.py"
                ]
            )]
        );
        // A Markdown file that only mentions the paths includes nothing.
        let mut mentioned = files.to_vec();
        mentioned[8] = (
            "docs/en/first.md",
            "See docs_src/first/tutorial001.py and docs_src/first/tutorial002.py.\n",
        );
        mentioned[9] = (
            "docs/en/security.md",
            "[code](../../docs_src/security/tutorial001.py)\n",
        );
        let by_name = |g: &[(String, Vec<String>)]| g.iter().all(|(w, _)| w == "ExampleName");
        assert!(by_name(&aside(&mentioned)), "{:?}", aside(&mentioned));
        // Fewer than half of its code files included: not a docs tree.
        let mut few = files.to_vec();
        few[8] = (
            "docs/en/first.md",
            "{* ../../docs_src/first/tutorial001.py *}\n",
        );
        few[9] = ("docs/en/security.md", "");
        few.push(("docs_src/first/tutorial003.py", ""));
        assert!(by_name(&aside(&few)), "{:?}", aside(&few));
    }

    #[test]
    fn javascript_trees_of_prose_and_example_files() {
        let files = [
            (
                "src/index.ts",
                "import { list } from './tools/examples.js'\nimport rows from '@/lib/demo-data'\nconst g = require('../walkthrough/step.js')\n",
            ),
            ("src/tools/examples.ts", "export const list = 1\n"),
            ("src/lib/demo-data.ts", "export default []\n"),
            ("client.examples.ts", "import { x } from './src/index.js'\n"),
            ("guide/README.md", "# Guide\n"),
            ("guide/auth.md", "# Auth\n"),
            ("guide/step1.ts", "// Step one\nexport {}\n"),
            ("walkthrough/a.md", ""),
            ("walkthrough/b.md", ""),
            ("walkthrough/step.js", "module.exports = 1\n"),
            ("server/README.md", "# Server\n"),
            ("server/CHANGELOG.md", ""),
            ("server/LICENSE.md", ""),
            ("server/main.ts", "export {}\n"),
            ("tool/package.json", "{}"),
            ("tool/a.md", ""),
            ("tool/b.md", ""),
            ("tool/cli.ts", "export {}\n"),
            ("web/index.ts", "/** Example: the web demo. */\n"),
            ("lib/guide/a.md", ""),
            ("lib/guide/b.md", ""),
            ("lib/guide/x.ts", "export {}\n"),
        ];
        assert_eq!(
            aside(&files),
            [
                group("guide/ MostlyProse", &["guide/step1.ts"]),
                group("ExampleName", &["client.examples.ts"]),
            ]
        );
    }

    #[test]
    fn go_trees_by_package_directory_and_module_path() {
        let got = aside(&[
            ("go.mod", "module github.com/acme/srv\n\ngo 1.22\n"),
            (
                "cmd/srv/main.go",
                "package main\n\nimport (\n\t\"fmt\"\n\tauth \"github.com/acme/srv/auth\"\n\t\"github.com/acme/srv/walkthrough\"\n\t\"github.com/acme/srv/tooldemo\"\n)\n",
            ),
            ("auth/auth.go", "package auth\n"),
            ("auth/server_example.go", "package auth\n"),
            ("tooldemo/demo_tools.go", "package tooldemo\n"),
            ("walkthrough/a.md", ""),
            ("walkthrough/b.md", ""),
            ("walkthrough/step.go", "package walkthrough\n"),
            ("tour/README.md", ""),
            ("tour/auth.md", ""),
            ("tour/main.go", "package main\n"),
            ("hello/server.go", "package main\n"),
            ("hello/example_tool.go", "package main\n"),
            (
                "quickstart/main.go",
                "// Package main is an example MCP server.\npackage main\n",
            ),
        ]);
        assert_eq!(
            got,
            [
                group("tour/ MostlyProse", &["tour/main.go"]),
                group("ExampleHeader", &["quickstart/main.go"]),
            ]
        );
    }

    #[test]
    fn the_root_markers_start_scripts_and_an_all_example_repo_are_kept() {
        // The audited package itself is never a tree, whatever its Markdown.
        let pkg = [
            ("pkg/README.md", ""),
            ("pkg/NOTES.md", ""),
            ("pkg/GUIDE.md", ""),
            ("pkg/server.py", "import x\n"),
            ("pkg/example_client.py", "import x\n"),
        ];
        assert_eq!(
            aside_in(&pkg, "pkg/", &[]),
            [group("ExampleName", &["pkg/example_client.py"])]
        );
        // A repository that is only examples is audited as it is.
        assert!(aside(&[("example_server.py", ""), ("README.md", "")]).is_empty());
        assert!(aside(&[
            ("docs/a.md", "{!docs_src/app.py!}\n"),
            ("docs_src/app.py", ""),
        ])
        .is_empty());
        // A package marker never presents an example; a start script is kept.
        assert!(aside(&[
            ("app/__init__.py", "\"\"\"Demo MCP server.\"\"\"\n"),
            ("web/index.js", "// Example: a demo\n"),
            ("scripts/demo-server.ts", "// Demo server\n"),
            ("main.py", "import x\n"),
        ])
        .is_empty());
        let started = [
            ("scripts/demo-server.ts", "// Demo server\n"),
            ("dev/README.md", ""),
            ("dev/NOTES.md", ""),
            ("dev/scripts/start.ts", ""),
            ("notes/a.md", ""),
            ("notes/b.md", ""),
            ("notes/run.ts", ""),
            ("main.py", "import x\n"),
        ];
        assert_eq!(
            aside_in(
                &started,
                "",
                &["scripts/demo-server.ts", "dev/scripts/start.ts"]
            ),
            [group("notes/ MostlyProse", &["notes/run.ts"])]
        );
    }

    #[test]
    fn the_summary_line_names_the_directory_or_the_class() {
        let g = SetAside {
            dir: "docs_src/".into(),
            why: Why::IncludedByDocs,
            files: vec!["a.py".into(), "b.py".into()],
        };
        assert!(g.line().starts_with(
            "set aside as documentation/examples: docs_src/ (2 files: the Markdown includes them"
        ));
        let g = SetAside {
            dir: String::new(),
            why: Why::ExampleName,
            files: (1..=4).map(|i| format!("e{i}.examples.ts")).collect(),
        };
        assert!(
            g.line()
                .contains("4 files named as examples that no shipped code imports (e1.examples.ts, e2.examples.ts, e3.examples.ts, …)"),
            "{}",
            g.line()
        );
    }
}
