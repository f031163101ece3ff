//! Would a mutant build? A catalog matcher or a shape rewrites one node
//! without seeing the rest of the file, so its mutant can break the build
//! where the node was the last of something: the only use of a Go local
//! variable (`ReadOnly: isReadOnly` → `false` leaves `isReadOnly declared and
//! not used`), the only use of a Go import (`url.PathEscape(id)` → `id`
//! leaves `"net/url" imported and not used`), or a rewrite that does not
//! parse at all. Such a mutant is killed by the compiler, not by a test: it
//! proves nothing, and `audit` would count it as a kill.
//!
//! [`unbuildable`] says why a mutant would not build (checked against the
//! original file, so what the original already does is never blamed on the
//! mutant); [`rescued`] keeps a Go name used where the rewrite puts a
//! boolean in its place (`false && (isReadOnly)`), the one rescue that keeps
//! both the type and the mutant's meaning.

use std::collections::{BTreeMap, HashMap, HashSet};

use ast_grep_core::source::Edit;
use ast_grep_core::{AstGrep, Node};

use super::grammar::Grammar;
use super::matcher::Doc;

/// Why the mutant of `source` that replaces `start..end` by `replacement`
/// would not build, or `None` when nothing says so (one site; a run over
/// many sites uses a [`Checker`], which reads each original file once).
pub fn unbuildable(
    file: &str,
    source: &str,
    start: usize,
    end: usize,
    replacement: &str,
) -> Option<String> {
    Checker::default().unbuildable(file, source, start, end, replacement)
}

/// What the checks of a file's mutants compare against, read once per file.
struct Original {
    /// The parsed original: each mutant is parsed from it incrementally.
    tree: AstGrep<Doc>,
    /// Syntax errors the original already has.
    broken: usize,
    /// Go: uses of each import's package name.
    imports: BTreeMap<String, usize>,
    /// Go: uses of each local variable, per top-level function (by the
    /// byte it starts at).
    locals: BTreeMap<usize, BTreeMap<String, usize>>,
}

/// Checks mutants against their original files, each file parsed once.
#[derive(Default)]
pub struct Checker {
    files: HashMap<String, Option<Original>>,
}

impl Checker {
    /// Why the mutant of `source` (the file `file`) that replaces
    /// `start..end` by `replacement` would not build, or `None` when nothing
    /// says so. Only what the mutant changes counts: a syntax error the
    /// original already has, or a name the original already leaves unused,
    /// is not the mutant's.
    pub fn unbuildable(
        &mut self,
        file: &str,
        source: &str,
        start: usize,
        end: usize,
        replacement: &str,
    ) -> Option<String> {
        let g = Grammar::for_path(file)?;
        if end > source.len() || !source.is_char_boundary(start) || !source.is_char_boundary(end) {
            return None;
        }
        let original = self
            .files
            .entry(file.to_string())
            .or_insert_with(|| read_original(g, source))
            .as_ref()?;
        // Reparsed from the original's tree: only the edited part is parsed again.
        let mut after = original.tree.clone();
        after
            .edit(Edit {
                position: start,
                deleted_length: end - start,
                inserted_text: replacement.as_bytes().to_vec(),
            })
            .ok()?;
        let root = after.root();
        if broken(&root) > original.broken {
            return Some("the rewrite does not parse".to_string());
        }
        if g != Grammar::Go {
            return None;
        }
        // Only a name the rewritten text held can lose its last use.
        let held: HashSet<&str> = source[start..end]
            .split(|c: char| !is_word(c))
            .filter(|w| !w.is_empty())
            .collect();
        if original.imports.keys().any(|k| held.contains(k.as_str())) {
            let now = import_uses(&root);
            if let Some(name) = original
                .imports
                .iter()
                .find(|(name, n)| **n > 0 && now.get(*name) == Some(&0))
                .map(|(name, _)| name)
            {
                return Some(format!(
                    "Go would not build it: the import `{name}` would be left unused"
                ));
            }
        }
        let f1 = outer_function(&root, start)?;
        let used0 = original.locals.get(&f1.range().start)?;
        if !used0.keys().any(|k| held.contains(k.as_str())) {
            return None;
        }
        let used1 = local_uses(&f1);
        used0
            .iter()
            // Still declared, no longer read (a rewrite that takes the
            // declaration away with its uses leaves nothing unused).
            .find(|(name, n)| **n > 0 && used1.get(*name) == Some(&0))
            .map(|(name, _)| {
                format!(
                    "Go would not build it: the variable `{name}` would be declared and not used"
                )
            })
    }
}

/// The original file's syntax errors, and in Go its imports' and local
/// variables' uses; `None` when it cannot be parsed at all.
fn read_original(g: Grammar, source: &str) -> Option<Original> {
    let tree = AstGrep::try_new(source, g).ok()?;
    let (broken, imports, locals) = {
        let root = tree.root();
        let mut imports = BTreeMap::new();
        let mut locals = BTreeMap::new();
        if g == Grammar::Go {
            imports = import_uses(&root);
            for f in root.children().filter(|n| {
                matches!(
                    n.kind().as_ref(),
                    "function_declaration" | "method_declaration"
                )
            }) {
                locals.insert(f.range().start, local_uses(&f));
            }
        }
        (broken(&root), imports, locals)
    };
    Some(Original {
        tree,
        broken,
        imports,
        locals,
    })
}

/// The mutant rewritten so that a Go name it dropped stays used, when what
/// it puts in that name's place is `true` or `false`: the differing part
/// becomes `(false && (x))` / `(true || (x))`, which has the same value and
/// type as the literal and still reads `x`. `None` when the differing part
/// is anything else.
pub fn rescued(original: &str, replacement: &str) -> Option<String> {
    let prefix = common_prefix(original, replacement);
    let suffix = common_suffix(&original[prefix..], &replacement[prefix..]);
    let dropped = original[prefix..original.len() - suffix].trim();
    let put = replacement[prefix..replacement.len() - suffix].trim();
    if dropped.is_empty() {
        return None;
    }
    let kept = match put {
        "false" => format!("(false && ({dropped}))"),
        "true" => format!("(true || ({dropped}))"),
        _ => return None,
    };
    Some(format!(
        "{}{}{}",
        &replacement[..prefix],
        kept,
        &replacement[replacement.len() - suffix..]
    ))
}

/// Bytes two texts share at their start, cut back to a whole token (an
/// identifier is never split: `isReadOnly` and `is` share no token).
fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a
        .char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, x), _)| i + x.len_utf8());
    while n > 0 && (word_at(a, n) || word_at(b, n)) && word_before(a, n) {
        n = a[..n].char_indices().last().map_or(0, |(i, _)| i);
    }
    n
}

/// Bytes two texts share at their end, cut back to a whole token.
fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum::<usize>();
    while n > 0 {
        let (ia, ib) = (a.len() - n, b.len() - n);
        let split = (word_before(a, ia) || word_before(b, ib)) && word_at(a, ia);
        if !split {
            break;
        }
        n -= a[ia..].chars().next().map_or(1, char::len_utf8);
    }
    n
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Does a word character start at byte `i` of `s`?
fn word_at(s: &str, i: usize) -> bool {
    s[i..].chars().next().is_some_and(is_word)
}

/// Does a word character end just before byte `i` of `s`?
fn word_before(s: &str, i: usize) -> bool {
    s[..i].chars().next_back().is_some_and(is_word)
}

/// The top-level Go function or method around byte `at`: its nested
/// function literals share its variables.
fn outer_function<'r>(root: &Node<'r, Doc>, at: usize) -> Option<Node<'r, Doc>> {
    root.children().find(|n| {
        matches!(
            n.kind().as_ref(),
            "function_declaration" | "method_declaration"
        ) && n.range().start <= at
            && at < n.range().end
    })
}

/// Syntax errors in a tree: error and missing nodes.
fn broken(root: &Node<'_, Doc>) -> usize {
    if !root.get_inner_node().has_error() {
        return 0;
    }
    root.dfs()
        .filter(|n| n.is_error() || n.is_missing())
        .count()
}

/// The package name a Go import brings into the file: its alias, else the
/// last element of its path without a major version (`…/go-github/v79/github`
/// → `github`, `gopkg.in/yaml.v3` → `yaml`); `None` for a blank or dot import
/// and for a path whose name is not an identifier (`mcp-go`: the package
/// clause decides, which this file does not show).
fn import_name(spec: &Node<'_, Doc>) -> Option<String> {
    if let Some(alias) = spec.field("name") {
        let a = alias.text().to_string();
        return (a != "_" && a != ".").then_some(a);
    }
    let path = spec.field("path")?.text().trim_matches('"').to_string();
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts.len() > 1
        && parts.last().is_some_and(|p| {
            p.len() > 1 && p.starts_with('v') && p[1..].bytes().all(|b| b.is_ascii_digit())
        })
    {
        parts.pop();
    }
    let last = parts.last()?;
    let last = match last.rsplit_once(".v") {
        Some((name, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => last,
    };
    (!last.is_empty()
        && last.chars().all(is_word)
        && !last.starts_with(|c: char| c.is_ascii_digit()))
    .then(|| last.to_string())
}

/// Uses of each Go import's package name in a file, in one pass. A
/// package is used as `pkg.Name`: the operand of a selector, or the package
/// of a qualified type. A bare `url` is a variable, a struct key or a field,
/// never the package.
fn import_uses(root: &Node<'_, Doc>) -> BTreeMap<String, usize> {
    let mut imports: BTreeMap<String, usize> = BTreeMap::new();
    let mut uses: HashMap<String, usize> = HashMap::new();
    for n in root.dfs() {
        match n.kind().as_ref() {
            "import_spec" => {
                if let Some(name) = import_name(&n) {
                    imports.insert(name, 0);
                }
            }
            "package_identifier" if !n.ancestors().any(|a| a.kind() == "import_spec") => {
                *uses.entry(n.text().to_string()).or_insert(0) += 1;
            }
            "selector_expression" => {
                if let Some(o) = n.field("operand").filter(|o| o.kind() == "identifier") {
                    *uses.entry(o.text().to_string()).or_insert(0) += 1;
                }
            }
            _ => {}
        }
    }
    for (name, n) in imports.iter_mut() {
        *n = uses.get(name).copied().unwrap_or(0);
    }
    imports
}

/// Uses of each variable declared in a Go function (its nested function
/// literals included): every occurrence of the name that neither declares
/// it nor is assigned to. Parameters and named results are not counted
/// (Go lets them go unused).
fn local_uses(function: &Node<'_, Doc>) -> BTreeMap<String, usize> {
    let names: Vec<(Node<'_, Doc>, Role)> = function
        .dfs()
        .filter(|n| n.kind() == "identifier")
        .map(|n| {
            let r = role(&n);
            (n, r)
        })
        .collect();
    let mut uses: BTreeMap<String, usize> = names
        .iter()
        .filter(|(n, r)| *r == Role::Declares && n.text() != "_")
        .map(|(n, _)| (n.text().to_string(), 0))
        .collect();
    for (n, r) in &names {
        if *r == Role::Read {
            if let Some(count) = uses.get_mut(n.text().as_ref()) {
                *count += 1;
            }
        }
    }
    uses
}

/// Where a Go identifier stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Declaring a variable: `x := …`, `var x …`, `for k, v := range …`.
    Declares,
    /// Assigned to: `x = …` (not a use, for Go).
    Assigned,
    /// Anywhere else: a use.
    Read,
}

fn role(n: &Node<'_, Doc>) -> Role {
    let Some(p) = n.parent() else {
        return Role::Read;
    };
    match p.kind().as_ref() {
        "var_spec" => Role::Declares,
        "expression_list" => {
            let left_of = p
                .parent()
                .filter(|pp| pp.field("left").is_some_and(|l| l.range() == p.range()));
            match left_of.as_ref().map(|pp| pp.kind()).as_deref() {
                Some("short_var_declaration" | "range_clause") => Role::Declares,
                Some("assignment_statement") => Role::Assigned,
                _ => Role::Read,
            }
        }
        _ => Role::Read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(file: &str, source: &str, find: &str, replacement: &str) -> Option<String> {
        let start = source.find(find).expect("find occurs");
        unbuildable(file, source, start, start + find.len(), replacement)
    }

    const GO: &str = "package p\n\nimport (\n\t\"fmt\"\n\t\"net/url\"\n)\n\ntype C struct {\n\turl string\n}\n\nfunc n(u string) C {\n\treturn C{url: u}\n}\n\nfunc f(t *Tool, id string, ready bool) Info {\n\tisReadOnly := t.IsReadOnly()\n\thosts := t.Hosts()\n\tp := fmt.Sprintf(\"/a/%s\", url.PathEscape(id))\n\tfor _, h := range hosts {\n\t\t_ = h\n\t}\n\treturn Info{ReadOnly: isReadOnly, Path: p, Ready: ready}\n}\n";

    #[test]
    fn the_last_use_of_a_go_local_or_import_makes_a_mutant_unbuildable() {
        assert_eq!(
            why("f.go", GO, "ReadOnly: isReadOnly", "ReadOnly: false").as_deref(),
            Some("Go would not build it: the variable `isReadOnly` would be declared and not used")
        );
        assert_eq!(
            why("f.go", GO, "url.PathEscape(id)", "id").as_deref(),
            Some("Go would not build it: the import `url` would be left unused")
        );
        // A name still used elsewhere, a parameter, a range variable read
        // elsewhere: Go builds these.
        assert_eq!(why("f.go", GO, "p := fmt.Sprintf", "p := fmt.Sprint"), None);
        assert_eq!(why("f.go", GO, "Ready: ready", "Ready: false"), None);
        assert_eq!(
            why("f.go", GO, "range hosts", "range []string{}").as_deref(),
            Some("Go would not build it: the variable `hosts` would be declared and not used")
        );
        // A variable of the function read only in a closure it passes on.
        let closure = "package p\n\nfunc f(t *T) {\n\tisReadOnly := t.RO()\n\trun(func() Info {\n\t\treturn Info{ReadOnly: isReadOnly}\n\t})\n}\n";
        assert!(
            why("f.go", closure, "ReadOnly: isReadOnly", "ReadOnly: false")
                .is_some_and(|w| w.contains("`isReadOnly`"))
        );
        // A rewrite that takes the declaration away with its use.
        let scoped = "package p\n\nfunc f(s string) error {\n\tif n := len(s); n > 9 {\n\t\treturn errTooLong\n\t}\n\treturn nil\n}\n";
        assert_eq!(
            why(
                "f.go",
                scoped,
                "if n := len(s); n > 9 {\n\t\treturn errTooLong\n\t}",
                ""
            ),
            None
        );
        // An assignment is not a use: `x = …` keeps nothing alive.
        let assigned = "package p\n\nfunc f() bool {\n\tok := false\n\tok = g()\n\treturn ok\n}\n";
        assert!(
            why("f.go", assigned, "return ok", "return true").is_some_and(|w| w.contains("`ok`"))
        );
    }

    #[test]
    fn a_rewrite_that_does_not_parse_is_unbuildable_in_every_language() {
        let go =
            "package p\n\nfunc f(h *H) Opts {\n\treturn Opts{\n\t\tMaxBody: h.max(),\n\t}\n}\n";
        assert_eq!(
            why("f.go", go, "h.max()", "").as_deref(),
            Some("the rewrite does not parse")
        );
        let py = "def f(x):\n    return g(x)\n";
        assert_eq!(
            why("f.py", py, "g(x)", "g(x").as_deref(),
            Some("the rewrite does not parse")
        );
        let ts = "export const f = (x: string) => g(x);\n";
        assert_eq!(
            why("f.ts", ts, "g(x)", "").as_deref(),
            Some("the rewrite does not parse")
        );
        assert_eq!(why("f.ts", ts, "g(x)", "x"), None);
        // Python and TypeScript have no unused-name errors to check.
        assert_eq!(
            why(
                "f.py",
                "import os\n\ndef f():\n    return os.sep\n",
                "os.sep",
                "'/'"
            ),
            None
        );
    }

    #[test]
    fn an_error_the_original_already_has_is_not_the_mutants() {
        let go = "package p\n\nfunc f() {\n\tx := 1\n\tif {\n}\n";
        assert_eq!(why("f.go", go, "x := 1", "x := 2"), None);
        // `unused` was never used in the original: not the mutant's doing.
        let go = "package p\n\nfunc f() bool {\n\tunused := 1\n\tok := g()\n\treturn ok\n}\n";
        assert!(why("f.go", go, "return ok", "return true").is_some_and(|w| w.contains("`ok`")));
        assert!(why("f.go", go, "return ok", "return true").is_some_and(|w| !w.contains("unused")));
    }

    #[test]
    fn a_boolean_put_in_a_names_place_keeps_the_name_used() {
        assert_eq!(
            rescued("ReadOnly: isReadOnly", "ReadOnly: false").as_deref(),
            Some("ReadOnly: (false && (isReadOnly))")
        );
        assert_eq!(
            rescued("return !blocked, nil", "return true, nil").as_deref(),
            Some("return (true || (!blocked)), nil")
        );
        // A name sharing its first letters with the literal is not split.
        assert_eq!(
            rescued("return fine", "return false").as_deref(),
            Some("return (false && (fine))")
        );
        assert_eq!(
            rescued("return trusted", "return true").as_deref(),
            Some("return (true || (trusted))")
        );
        // Anything but a boolean has no rescue: its type is unknown here.
        assert_eq!(
            rescued("AllowedHosts: allowedHosts", "AllowedHosts: nil"),
            None
        );
        assert_eq!(rescued("url.PathEscape(id)", "id"), None);
        let go = "package p\n\nfunc f(t *T) Info {\n\tisReadOnly := t.RO()\n\treturn Info{ReadOnly: isReadOnly}\n}\n";
        let fixed = rescued("ReadOnly: isReadOnly", "ReadOnly: false").unwrap();
        assert_eq!(why("f.go", go, "ReadOnly: isReadOnly", &fixed), None);
    }
}
