//! The schema-constraint shape: a bound or pattern declared on a tool's
//! input by a schema library, the declarative form of a limit or
//! allow-list test. The mutant drops the constraint:
//!
//! - zod (and Joi/yup chains rooted at `z`, `zod`, `Joi`, `yup`):
//!   `.max(n)`, `.length(n)`, `.size(n)`, `.lte(n)`, `.lt(n)` (size),
//!   `.regex(…)`, `.email()`, `.url()`, `.uuid()`, `.startsWith(…)`, a custom
//!   `.refine(…)`/`.superRefine(…)`, a text's or list's `.min(n)` (n ≥ 1) or
//!   `.nonempty()` (pattern),
//!   `.strict()` (unknown keys refused): the call is cut out of the chain;
//! - pydantic/FastAPI (`Field`, `Query`, `Body`, `Path`, `Form`, `con*`):
//!   `max_length=`, `le=`, `lt=`, `max_items=` (size), `pattern=`/`regex=`
//!   (pattern) become `None` (pydantic's "no constraint"); a model's
//!   `extra="forbid"` becomes `extra="ignore"`;
//! - mcp-go property options: `mcp.Max(n)`, `mcp.MaxLength(n)`,
//!   `mcp.MaxItems(n)` get `1 << 30`, `mcp.Pattern(p)` gets `".*"`,
//!   `mcp.Enum(…)` becomes an option that sets nothing;
//! - Go struct tags `jsonschema:"enum=a,enum=b,maxLength=64"` (the input
//!   schema of reflected tool arguments): the enum/pattern/format items go in
//!   one mutant, the maximum items in another.
//!
//! A number's lower bound (`z.number().min(0)`, `ge=0`) is left alone:
//! dropping one rarely removes a protection.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;

/// Which control a constraint is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// A size bound: `input-size-limited`.
    Size,
    /// A pattern or format: `input-pattern-validated`.
    Pattern,
    /// Unknown keys refused: `additional-properties-false`.
    Closed,
}

impl Bound {
    /// The catalog control it is a site of.
    pub fn control(self) -> &'static str {
        match self {
            Bound::Size => "input-size-limited",
            Bound::Pattern => "input-pattern-validated",
            Bound::Closed => "additional-properties-false",
        }
    }
}

/// One declared constraint.
#[derive(Debug, Clone)]
pub(crate) struct Constraint {
    /// What the mutant replaces.
    pub range: Range<usize>,
    /// The text without the constraint.
    pub replacement: String,
    /// Its kind.
    pub bound: Bound,
    /// The constraint as written (evidence).
    pub text: String,
    /// A tightening twin (seed 002 rule 5): one accepted value of an enum
    /// left out, the others kept.
    pub twin: bool,
}

fn zod_bound(method: &str) -> Option<Bound> {
    match method {
        "max" | "length" | "size" | "lte" | "lt" | "maxLength" | "maxItems" => Some(Bound::Size),
        "regex" | "email" | "url" | "uuid" | "cuid" | "ulid" | "startsWith" | "endsWith" | "ip"
        | "pattern" | "refine" | "superRefine" => Some(Bound::Pattern),
        "strict" => Some(Bound::Closed),
        _ => None,
    }
}

/// The first method of a schema chain (`string` of `z.string().min(1)`).
fn chain_base(n: &Node<'_, Doc>) -> String {
    let mut cur = n.clone();
    let mut base = String::new();
    loop {
        let next = match cur.kind().as_ref() {
            "call_expression" => cur.field("function"),
            "member_expression" => {
                base = cur
                    .field("property")
                    .map(|p| p.text().to_string())
                    .unwrap_or_default();
                cur.field("object")
            }
            _ => None,
        };
        match next {
            Some(x) => cur = x,
            None => return base,
        }
    }
}

/// A lower bound that makes a text or a list non-empty (`z.string().min(1)`,
/// `.nonempty()`): a required value, the pattern "not empty". A number's
/// lower bound (`z.number().min(0)`) is left alone: dropping one rarely
/// removes a protection.
fn non_empty(method: &str, obj: &Node<'_, Doc>, call: &Node<'_, Doc>) -> bool {
    let at_least_one = match method {
        "nonempty" => true,
        "min" => call
            .field("arguments")
            .and_then(|a| a.named_children().next())
            .and_then(|v| v.text().parse::<u64>().ok())
            .is_some_and(|v| v >= 1),
        _ => false,
    };
    at_least_one && matches!(chain_base(obj).as_str(), "string" | "array" | "set")
}

/// The identifier a call/member chain starts from (`z` of `z.string().max(5)`).
fn chain_root(n: &Node<'_, Doc>) -> String {
    let mut cur = n.clone();
    loop {
        let next = match cur.kind().as_ref() {
            "call_expression" => cur.field("function"),
            "member_expression" => cur.field("object"),
            _ => None,
        };
        match next {
            Some(x) => cur = x,
            None => return cur.text().to_string(),
        }
    }
}

fn typescript(n: &Node<'_, Doc>, out: &mut Vec<Constraint>) {
    if n.kind() != "call_expression" {
        return;
    }
    let Some(f) = n
        .field("function")
        .filter(|f| f.kind() == "member_expression")
    else {
        return;
    };
    let (Some(obj), Some(prop)) = (f.field("object"), f.field("property")) else {
        return;
    };
    let method = prop.text();
    let Some(bound) =
        zod_bound(&method).or_else(|| non_empty(&method, &obj, n).then_some(Bound::Pattern))
    else {
        return;
    };
    // Only a chain a schema library started (`z.string()…`), never `Math.max`.
    if obj.kind() != "call_expression"
        || !matches!(
            chain_root(&obj).as_str(),
            "z" | "zod" | "Joi" | "joi" | "yup"
        )
    {
        return;
    }
    let range = obj.range().end..n.range().end;
    out.push(Constraint {
        range,
        replacement: String::new(),
        bound,
        text: n.text()[obj.text().len()..].to_string(),
        twin: false,
    });
}

fn python(n: &Node<'_, Doc>, out: &mut Vec<Constraint>) {
    if n.kind() != "keyword_argument" {
        return;
    }
    let (Some(name), Some(value)) = (n.field("name"), n.field("value")) else {
        return;
    };
    let Some(call) = n
        .parent()
        .and_then(|a| a.parent())
        .filter(|c| c.kind() == "call")
    else {
        return;
    };
    let callee = call
        .field("function")
        .map(|f| f.text().rsplit('.').next().unwrap_or("").to_string())
        .unwrap_or_default();
    let key = name.text();
    let (bound, replacement) = match key.as_ref() {
        "extra" if value.text().trim_matches(['"', '\'']) == "forbid" => {
            (Bound::Closed, "\"ignore\"".to_string())
        }
        _ if !matches!(
            callee.as_str(),
            "Field" | "Query" | "Body" | "Path" | "Form" | "Header" | "Cookie"
        ) && !callee.starts_with("con") =>
        {
            return;
        }
        "max_length" | "le" | "lt" | "max_items" | "max_len" => (Bound::Size, "None".to_string()),
        "pattern" | "regex" => (Bound::Pattern, "None".to_string()),
        _ => return,
    };
    if value.text() == "None" {
        return;
    }
    out.push(Constraint {
        range: value.range(),
        replacement,
        bound,
        text: n.text().to_string(),
        twin: false,
    });
}

/// The items of a struct tag's `jsonschema:"…"` value (invopop/jsonschema:
/// `required,enum=a,enum=b,maxLength=64`), split at commas not escaped.
fn jsonschema_items(v: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = v.as_bytes();
    for i in 0..b.len() {
        if b[i] == b',' && (i == 0 || b[i - 1] != b'\\') {
            out.push(&v[start..i]);
            start = i + 1;
        }
    }
    out.push(&v[start..]);
    out
}

/// The key of a `jsonschema` tag item (`enum` of `enum=a`).
fn tag_key(item: &str) -> Option<&str> {
    item.split_once('=').map(|(k, _)| k.trim())
}

/// Which constraint a `jsonschema` tag item declares.
fn tag_bound(item: &str) -> Option<Bound> {
    match tag_key(item)? {
        "maxLength" | "maximum" | "exclusiveMaximum" | "maxItems" | "maxProperties" => {
            Some(Bound::Size)
        }
        "enum" | "pattern" | "format" | "const" => Some(Bound::Pattern),
        _ => None,
    }
}

/// A Go struct field's `jsonschema:"…"` tag (the tool input schema of
/// mcp-go's and invopop's reflected structs): one mutant per kind of
/// constraint, without its items (`enum=…`, `pattern=…`; `maxLength=…`,
/// `maximum=…`), the rest of the tag kept.
fn go_tag(n: &Node<'_, Doc>, out: &mut Vec<Constraint>) {
    let Some(tag) = n.field("tag") else {
        return;
    };
    let text = tag.text().to_string();
    let Some(at) = text.find("jsonschema:\"") else {
        return;
    };
    let from = at + "jsonschema:\"".len();
    let Some(len) = text[from..].find('"') else {
        return;
    };
    let value = &text[from..from + len];
    let items = jsonschema_items(value);
    for bound in [Bound::Pattern, Bound::Size] {
        if !items.iter().any(|i| tag_bound(i) == Some(bound)) {
            continue;
        }
        let kept: Vec<&str> = items
            .iter()
            .copied()
            .filter(|i| tag_bound(i) != Some(bound))
            .collect();
        let replacement = format!("{}{}{}", &text[..from], kept.join(","), &text[from + len..]);
        out.push(Constraint {
            range: tag.range(),
            replacement,
            bound,
            text: value.to_string(),
            twin: false,
        });
    }
    // The twin: the first of two or more `enum=` values left out.
    let is_enum = |i: &&str| tag_key(i) == Some("enum");
    if items.iter().filter(|i| is_enum(i)).count() >= 2 {
        let mut kept = items.clone();
        if let Some(first) = kept.iter().position(is_enum) {
            kept.remove(first);
        }
        out.push(Constraint {
            range: tag.range(),
            replacement: format!("{}{}{}", &text[..from], kept.join(","), &text[from + len..]),
            bound: Bound::Pattern,
            text: value.to_string(),
            twin: true,
        });
    }
}

fn go(n: &Node<'_, Doc>, out: &mut Vec<Constraint>) {
    if n.kind() == "field_declaration" {
        return go_tag(n, out);
    }
    if n.kind() != "call_expression" {
        return;
    }
    let Some(f) = n
        .field("function")
        .filter(|f| f.kind() == "selector_expression")
    else {
        return;
    };
    if f.field("operand").map(|o| o.text().to_string()).as_deref() != Some("mcp") {
        return;
    }
    let Some(args) = n.field("arguments") else {
        return;
    };
    let method = f
        .field("field")
        .map(|x| x.text().to_string())
        .unwrap_or_default();
    if method == "Enum" {
        // `mcp.Enum("a", "b")` is a `PropertyOption` (`func(map[string]any)`):
        // one that sets nothing accepts every value.
        out.push(Constraint {
            range: n.range(),
            replacement: "func(map[string]any) {}".to_string(),
            bound: Bound::Pattern,
            text: n.text().to_string(),
            twin: false,
        });
        // The twin: `mcp.Enum("b")`, the first of two or more values left out.
        let values: Vec<Node<'_, Doc>> = args
            .named_children()
            .filter(|c| c.kind() != "comment")
            .collect();
        if values.len() >= 2 && values[0].kind() != "variadic_argument" {
            out.push(Constraint {
                range: values[0].range().start..values[1].range().start,
                replacement: String::new(),
                bound: Bound::Pattern,
                text: n.text().to_string(),
                twin: true,
            });
        }
        return;
    }
    let (bound, arg) = match method.as_str() {
        "Max" | "MaxLength" | "MaxItems" => (Bound::Size, "1 << 30"),
        "Pattern" => (Bound::Pattern, "\".*\""),
        _ => return,
    };
    if args.named_children().count() != 1 {
        return;
    }
    out.push(Constraint {
        range: args.range(),
        replacement: format!("({arg})"),
        bound,
        text: n.text().to_string(),
        twin: false,
    });
}

/// Every declared constraint in a parsed file.
pub(crate) fn constraints(g: Grammar, root: &Node<'_, Doc>) -> Vec<Constraint> {
    let mut out = Vec::new();
    for n in root.dfs() {
        match g {
            Grammar::TypeScript | Grammar::Tsx => typescript(&n, &mut out),
            Grammar::Python => python(&n, &mut out),
            Grammar::Go => go(&n, &mut out),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// The constraints (`twin`: the tightening twins) with their kind, as
    /// edited files.
    fn edits(file: &str, code: &str, twin: bool) -> Vec<(Bound, String)> {
        testing::found(file, code, constraints)
            .into_iter()
            .filter(|c| c.twin == twin)
            .map(|c| (c.bound, testing::edited(code, &c.range, &c.replacement)))
            .collect()
    }

    fn mutated(file: &str, code: &str) -> Vec<(Bound, String)> {
        edits(file, code, false)
    }

    /// The tightening twins, as edited files.
    fn twinned(file: &str, code: &str) -> Vec<String> {
        edits(file, code, true).into_iter().map(|e| e.1).collect()
    }

    #[test]
    fn an_enum_of_two_values_or_more_loses_its_first_in_the_twin() {
        let go = "package p\n\ntype Args struct {\n\tOp   string `json:\"op\" jsonschema:\"required,enum=list,enum=get,description=x\"`\n\tOne  string `json:\"one\" jsonschema:\"enum=only\"`\n}\n\nvar t = mcp.WithString(\"mode\", mcp.Enum(\"a\", \"b\"), mcp.Enum(\"c\"))\n";
        let t = twinned("a.go", go);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(
            t[0].contains("jsonschema:\"required,enum=get,description=x\"`"),
            "{}",
            t[0]
        );
        assert!(
            t[1].contains("mcp.Enum(\"b\"), mcp.Enum(\"c\"))"),
            "{}",
            t[1]
        );
    }

    #[test]
    fn zod_constraints_are_cut_out_of_the_chain() {
        let ts = "const s = z.object({ name: z.string().max(64, 'too long').regex(/^[a-z]+$/), n: z.number().min(1).max(100).default(5) }).strict();\nconst m = Math.max(a, b);\n";
        let m = mutated("t.ts", ts);
        let kinds: Vec<Bound> = m.iter().map(|x| x.0).collect();
        assert_eq!(
            kinds,
            [Bound::Closed, Bound::Pattern, Bound::Size, Bound::Size],
            "{m:?}"
        );
        assert!(m[0]
            .1
            .contains("n: z.number().min(1).max(100).default(5) });"));
        assert!(m[1].1.contains("z.string().max(64, 'too long'), n:"));
        assert!(m[2].1.contains("name: z.string().regex("));
        assert!(m[3].1.contains("z.number().min(1).default(5)"));
    }

    #[test]
    fn a_texts_or_lists_minimum_and_a_refinement_are_patterns_a_numbers_minimum_is_not() {
        let ts = "const s = z.object({ id: z.string().min(1).describe('x'), tags: z.array(z.string()).nonempty(), n: z.number().min(1), e: z.string().min(0), o: z.string().refine(isOrigin, { message: 'bad' }) });\n";
        let m = mutated("t.ts", ts);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(m.iter().all(|x| x.0 == Bound::Pattern), "{m:?}");
        assert!(
            m[0].1.contains("id: z.string().describe('x'),"),
            "{}",
            m[0].1
        );
        assert!(m[1].1.contains("tags: z.array(z.string()),"), "{}", m[1].1);
        assert!(m[2].1.contains("o: z.string() })"), "{}", m[2].1);
    }

    #[test]
    fn pydantic_and_mcp_go_constraints_are_lifted() {
        let py = "class Q(BaseModel):\n    model_config = ConfigDict(extra=\"forbid\")\n    key: str = Field(pattern=KEY, max_length=128, ge=0)\n    other = call(max_length=3)\n";
        let m = mutated("q.py", py);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(m[0].1.contains("ConfigDict(extra=\"ignore\")"));
        assert!(m[1].1.contains("Field(pattern=None, max_length=128"));
        assert!(m[2].1.contains("max_length=None, ge=0)"));
        let go = "package p\n\nvar t = mcp.NewTool(\"x\", mcp.WithString(\"q\", mcp.MaxLength(256), mcp.Pattern(`^\\w+$`), mcp.Min(1)))\n";
        let m = mutated("t.go", go);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].1.contains("mcp.MaxLength(1 << 30)"));
        assert!(m[1].1.contains("mcp.Pattern(\".*\")"));
    }

    #[test]
    fn go_schema_tags_and_enums_lose_their_constraints() {
        let go = "package p\n\ntype Args struct {\n\tOp   string `json:\"op\" jsonschema:\"required,enum=list,enum=get,description=What\\\\, or which\"`\n\tN    int    `json:\"n\" jsonschema:\"maximum=100,minimum=1\"`\n\tName string `json:\"name\" jsonschema:\"description=a name\"`\n}\n\nvar t = mcp.WithString(\"mode\", mcp.Enum(\"a\", \"b\"))\n";
        let m = mutated("a.go", go);
        let kinds: Vec<Bound> = m.iter().map(|x| x.0).collect();
        assert_eq!(
            kinds,
            [Bound::Pattern, Bound::Size, Bound::Pattern],
            "{m:?}"
        );
        assert!(
            m[0].1
                .contains("jsonschema:\"required,description=What\\\\, or which\"`"),
            "{}",
            m[0].1
        );
        assert!(m[1].1.contains("jsonschema:\"minimum=1\"`"), "{}", m[1].1);
        assert!(
            m[2].1
                .contains("mcp.WithString(\"mode\", func(map[string]any) {})"),
            "{}",
            m[2].1
        );
    }
}
