//! Loading and validating `unguard.yaml` (version 1) and the files it includes.
//!
//! The raw serde types mirror the YAML one to one (`deny_unknown_fields`
//! everywhere); [`load`] turns them into a validated [`Spec`] or a list of
//! [`Diagnostic`]s, each with file, line, column and a fix.

pub mod diag;

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::results::{Allow, Direction, GateConfig, Thresholds, TimeoutPolicy, TwinsPolicy};
use crate::spec::diag::{Diagnostic, Diagnostics, SourceLines};

// ---------------------------------------------------------------- raw YAML

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    version: Spanned<u32>,
    #[serde(default)]
    test: Option<Spanned<RawTest>>,
    #[serde(default)]
    workspace: Option<RawWorkspace>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    mutations: Vec<Spanned<RawMutation>>,
    #[serde(default)]
    gate: Option<RawGate>,
    #[serde(default)]
    thresholds: Option<Spanned<RawThresholds>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGate {
    #[serde(default)]
    min_score: Option<Spanned<f64>>,
    #[serde(default)]
    max_survived: Option<u32>,
    #[serde(default)]
    timeout_is: Option<Spanned<String>>,
    #[serde(default)]
    allow: Vec<Spanned<RawAllow>>,
    #[serde(default)]
    twins: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAllow {
    id: Spanned<String>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThresholds {
    high: f64,
    low: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInclude {
    #[serde(default)]
    mutations: Vec<Spanned<RawMutation>>,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct RawTest {
    #[serde(default)]
    command: Option<Spanned<RawCommand>>,
    #[serde(default)]
    junit: Option<Spanned<String>>,
    #[serde(default)]
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    preset: Option<Spanned<String>>,
    #[serde(default)]
    fail_codes: Option<Vec<i32>>,
    #[serde(default)]
    check: Option<Spanned<RawCommand>>,
    #[serde(default)]
    select: Option<Spanned<RawCommand>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
enum RawCommand {
    Shell(String),
    Argv(Vec<String>),
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawWorkspace {
    #[serde(default)]
    link: Vec<Spanned<String>>,
    #[serde(default)]
    git: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMutation {
    id: Spanned<String>,
    control: String,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    direction: Option<Spanned<String>>,
    file: Spanned<String>,
    #[serde(default)]
    find: Option<Spanned<String>>,
    #[serde(default)]
    regex: Option<Spanned<String>>,
    replace: Spanned<String>,
    #[serde(default)]
    exact_whitespace: bool,
    #[serde(default)]
    count: Option<Spanned<RawCount>>,
    #[serde(default)]
    canary: Option<bool>,
    #[serde(default)]
    expect: Option<RawExpect>,
    #[serde(default)]
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    test: Option<Spanned<RawTest>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
enum RawCount {
    N(u32),
    Word(String),
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    #[serde(default)]
    killed_by: Vec<Spanned<String>>,
}

// ---------------------------------------------------------- validated model

/// How the test command is started.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Command {
    /// Run through `sh -c`.
    Shell(String),
    /// Executed directly, no shell.
    Argv(Vec<String>),
}

impl Command {
    pub fn display(&self) -> String {
        match self {
            Command::Shell(s) => s.clone(),
            Command::Argv(v) => v.join(" "),
        }
    }
}

/// Which exit codes of the test command mean "tests failed".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FailCodes {
    /// Every non-zero exit counts as tests failed (generic runners).
    AnyNonZero,
    /// Only these codes; any other non-zero code is not a test failure.
    Only(Vec<i32>),
}

impl FailCodes {
    pub fn is_test_failure(&self, code: i32) -> bool {
        match self {
            FailCodes::AnyNonZero => code != 0,
            FailCodes::Only(codes) => codes.contains(&code),
        }
    }
}

/// Where `fail_codes` came from: a runner's preset, or the spec's own list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// pytest: only exit 1 is "tests failed" (2–5 are usage, collection, no tests).
    Pytest,
    /// Any non-zero exit is "tests failed".
    Generic,
    /// `fail_codes` listed in the spec.
    Custom,
}

impl Preset {
    /// A preset by its name in the spec (`pytest` or `generic`).
    pub fn named(name: &str) -> Option<Preset> {
        match name {
            "pytest" => Some(Preset::Pytest),
            "generic" => Some(Preset::Generic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Pytest => "pytest",
            Preset::Generic => "generic",
            Preset::Custom => "custom",
        }
    }

    /// The exit codes this preset counts as test failures (`Custom` has
    /// none of its own: the spec lists them).
    pub fn fail_codes(self) -> FailCodes {
        match self {
            Preset::Pytest => FailCodes::Only(vec![1]),
            Preset::Generic | Preset::Custom => FailCodes::AnyNonZero,
        }
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeoutSetting {
    /// max(20 s, 5 × baseline duration).
    Auto,
    Fixed(Duration),
}

/// The effective test configuration for one mutant (global merged with overrides).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TestConfig {
    pub command: Command,
    /// Where the command writes JUnit XML; may contain `{junit}`.
    pub junit: Option<String>,
    pub timeout: TimeoutSetting,
    pub env: BTreeMap<String, String>,
    pub fail_codes: FailCodes,
    /// The preset that set `fail_codes`.
    pub preset: Preset,
    /// Optional viability check run on each mutant before the suite.
    pub check: Option<Command>,
    /// `workspace.git`: which git repository the suite sees (the same for
    /// every test config of a spec).
    pub git: SuiteGit,
    /// `test.select`: how a subset of the tests is run (kill-first).
    pub select: Select,
}

/// `test.select`: how unguard runs a subset of the suite by test id, to try
/// the tests that can kill a mutant before the full suite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Select {
    /// Unset: the runner's own adapter, when unguard knows the runner
    /// (pytest, `python -m unittest`); else the full suite only.
    #[default]
    Auto,
    /// `off`: every mutant runs the full suite.
    Off,
    /// A command with `{tests}`: the selected test ids (JUnit form,
    /// `classname::name`), one argument each.
    Template(Command),
}

/// `workspace.git`: the git repository a suite sees in its copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SuiteGit {
    /// None: git finds no repository in the copy (the default).
    #[default]
    None,
    /// `private`: a fresh repository of the copy for each run, outside it
    /// (`GIT_DIR`, `GIT_WORK_TREE`), its one commit the copy as the run
    /// starts (the mutant included); see [`crate::run::child_env`].
    Private,
}

/// How a mutation finds its site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// Literal text; unless `exact_whitespace`, every whitespace run matches any
    /// whitespace run (including line breaks) in the file.
    Literal {
        text: String,
        exact_whitespace: bool,
    },
    /// A regular expression (Rust `regex` syntax), `$1`/`${name}` in the replacement.
    Regex(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Exactly(usize),
    All,
}

/// A source position inside a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecPos {
    pub path: String,
    pub line: u64,
    pub col: u64,
}

#[derive(Debug, Clone)]
pub struct MutationSpec {
    pub id: String,
    pub control: String,
    pub rule: Option<String>,
    /// `direction:` `loosen` or `tighten` (seed 002 rule 5), when declared.
    pub direction: Option<Direction>,
    /// Path relative to the target root, with `/` separators.
    pub file: String,
    pub pattern: Pattern,
    pub replace: String,
    pub count: Count,
    pub canary: bool,
    pub killed_by: Vec<String>,
    pub timeout: Option<Duration>,
    pub test: TestConfig,
    /// Where the mutation is declared (its `id:`).
    pub pos: SpecPos,
}

#[derive(Debug, Clone)]
pub struct Spec {
    /// Canonical target root; every relative path resolves against it.
    pub root: PathBuf,
    pub spec_path: PathBuf,
    /// The top-level `test` block, what mutations inherit. Its `command` is
    /// empty when the spec sets none there (every mutation sets its own).
    pub test: TestConfig,
    /// Extra ignored directories to symlink into every copy.
    pub link: Vec<String>,
    pub mutations: Vec<MutationSpec>,
    /// `gate:` (flags override it).
    pub gate: GateConfig,
    /// `gate.timeout_is`, when set.
    pub timeout_is: Option<TimeoutPolicy>,
    /// `thresholds:` (Stryker-style colouring), defaults 80/60.
    pub thresholds: Thresholds,
}

// ------------------------------------------------------------------ loading

struct SourceFile {
    display: String,
    /// The text, indexed by line for snippets.
    source: SourceLines,
}

impl SourceFile {
    fn new(display: String, text: &str) -> SourceFile {
        SourceFile {
            display,
            source: SourceLines::new(text),
        }
    }
    fn text(&self) -> &str {
        self.source.text()
    }
    fn diag(&self, line: u64, col: u64, msg: impl Into<String>) -> Diagnostic {
        self.source
            .snippet(Diagnostic::new(&self.display, line, col, msg))
    }
    fn at<T>(&self, s: &Spanned<T>, msg: impl Into<String>) -> Diagnostic {
        self.diag(s.referenced.line(), s.referenced.column(), msg)
    }
}

/// A path as the user should see it: relative to the current directory when
/// it lies below it, without `./` noise.
pub fn display_path(p: &Path) -> String {
    let p = match std::env::current_dir() {
        Ok(cwd) if p.is_absolute() => p.strip_prefix(&cwd).unwrap_or(p).to_path_buf(),
        _ => p.to_path_buf(),
    };
    let cleaned: PathBuf = p
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if cleaned.as_os_str().is_empty() {
        ".".into()
    } else {
        cleaned.display().to_string()
    }
}

fn read_source(path: &Path) -> Result<SourceFile, Diagnostic> {
    let display = display_path(path);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return Err(
                Diagnostic::new(display, 0, 0, format!("cannot read spec file: {e}")).with_fix(
                    "create it (`unguard.yaml` in the target root) or pass --config FILE",
                ),
            )
        }
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(
            Diagnostic::new(display, 1, 1, "spec file is UTF-16, not UTF-8")
                .with_fix("save the file as UTF-8"),
        );
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = upto.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            let line_start = upto.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
            let col = String::from_utf8_lossy(&upto[line_start..]).chars().count() as u64 + 1;
            let byte = e.as_bytes()[upto.len()];
            return Err(Diagnostic::new(
                display,
                line,
                col,
                format!("spec file is not valid UTF-8 (byte 0x{byte:02X})"),
            )
            .with_fix("save the file as UTF-8"));
        }
    };
    // A BOM is not content; CR and CRLF line breaks count as one line break
    // (as in the YAML parser), so snippets show the lines positions refer to.
    Ok(SourceFile::new(display, &text))
}

/// No YAML content at all: blank, comments, document markers.
fn only_comments(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    })
}

/// Line and column of the first character of YAML content.
fn first_content(text: &str) -> Option<(u64, u64)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') || t.starts_with("---") || t.starts_with('%') {
            return None;
        }
        Some((
            i as u64 + 1,
            (l.chars().count() - t.chars().count()) as u64 + 1,
        ))
    })
}

fn parse_yaml<T: for<'de> Deserialize<'de>>(src: &SourceFile) -> Result<T, Diagnostic> {
    if src.text().trim().is_empty() {
        return Err(Diagnostic::new(&src.display, 1, 1, "spec file is empty")
            .with_fix("start it with `version: 1` and a `mutations:` list (see README)"));
    }
    if only_comments(src.text()) {
        return Err(
            Diagnostic::new(&src.display, 1, 1, "spec file is empty (only comments)")
                .with_fix("start it with `version: 1` and a `mutations:` list (see README)"),
        );
    }
    serde_saphyr::from_str_with_options::<T>(src.text(), yaml_options(src.text())).map_err(|e| {
        // Without a location from the parser, point at the first content.
        let (line, col) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .filter(|(l, c)| *l > 0 && *c > 0)
            .or_else(|| first_content(src.text()))
            .unwrap_or((1, 1));
        let opts = serde_saphyr::render_options! { source_name: Some(src.display.as_str()) };
        let rendered = e.render_with_options(opts);
        // A flow bracket left open makes the parser trip over a later line;
        // point at the bracket instead.
        if rendered.contains("placement of ':'") || rendered.contains("mapping values") {
            if let Some((bl, bc)) = unclosed_flow_bracket(src.text(), line) {
                return src
                    .diag(bl, bc, "unclosed bracket: this `[` or `{` is never closed")
                    .with_fix("close it on the same line (`]` or `}`), or quote the text if the bracket is meant literally");
            }
        }
        // First line of the rendering is "error: line L column C: message"; keep the message.
        let mut lines = rendered.lines();
        let head = lines.next().unwrap_or_default();
        let message = head
            .split_once(": ")
            .map(|(_, rest)| rest)
            .map(|rest| match rest.split_once(": ") {
                Some((pos, msg)) if pos.starts_with("line ") => msg,
                _ => rest,
            })
            .unwrap_or(head)
            .to_string();
        let mut message = humanize_yaml_message(&message);
        if message.starts_with("expected a mapping") && first_content(src.text()) == Some((line, col)) {
            message = "the spec must be a mapping of keys (`version: 1`, `test:`, `mutations:`), not a list or a single value".into();
        }
        let snippet: Vec<String> = lines
            .map(|l| {
                // The parser's `-->` line counts columns in the window it
                // cut from a long line: name the position in the file, the
                // one the header gives.
                if let Some(rest) = l.trim_start().strip_prefix("--> ") {
                    if rest.starts_with(src.display.as_str()) {
                        let indent = &l[..l.len() - l.trim_start().len()];
                        return format!("{indent}--> {}:{line}:{col}", src.display);
                    }
                }
                // The parser repeats its raw message after the caret; keep the caret only.
                match l.find('^') {
                    Some(i) if l[..i].trim_start().starts_with('|') => l[..=i].to_string(),
                    _ => l.to_string(),
                }
            })
            .collect();
        let fix = yaml_fix_hint(&message);
        // The parser's own snippet, unless it has none or a line too long to
        // print: then ours (cut around the caret).
        let long = snippet.iter().any(|l| l.chars().count() > crate::spec::diag::MAX_SHOWN);
        let mut d = src.diag(line, col, message);
        if !snippet.is_empty() && !long {
            d.snippet = Some(snippet.join("\n"));
        }
        d.with_fix(fix)
    })
}

/// The parser's options: its defaults, with the budgets that grow with the
/// size of a legitimate spec (nodes, events, scalar bytes) scaled to the
/// text. The defaults (250,000 nodes) stop a generated spec of about 20,000
/// mutations; these counts come from the text itself (aliases replay under
/// their own, unchanged limits), so a budget linear in its length cannot be
/// amplified.
fn yaml_options(text: &str) -> serde_saphyr::Options {
    let d = serde_saphyr::Budget::default();
    let n = text.len();
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_nodes: d.max_nodes.max(n.saturating_mul(2)),
            max_events: d.max_events.max(n.saturating_mul(4)),
            max_total_scalar_bytes: d.max_total_scalar_bytes.max(n.saturating_mul(2)),
            // Many mutations sharing one anchored block (`control: *c`,
            // `test: *narrow`) is a legitimate spec; alias replay keeps its
            // own caps, so the ratio heuristic only refuses good specs.
            enforce_alias_anchor_ratio: false,
        },
    }
}

/// A parser budget breach (`budget breached: Aliases { aliases: 50001 }`)
/// in words, or `None` for any other message.
fn budget_breach_words(message: &str) -> Option<String> {
    let detail = message.strip_prefix("budget breached: ")?;
    let what = match detail.split([' ', '{']).next().unwrap_or_default() {
        "Aliases" | "AliasAnchorRatio" | "Anchors" | "MergeKeys" => {
            "too many YAML aliases (`*name`), anchors (`&name`) or merge keys (`<<`)"
        }
        "Depth" => "YAML nested too deeply",
        _ => "too much YAML for one file",
    };
    Some(format!(
        "the spec goes beyond a limit of the YAML parser: {what} ({detail})"
    ))
}

/// The last bracket `[`/`{` before `before_line` that is still open at the end
/// of its line (outside quotes), as 1-based (line, column).
fn unclosed_flow_bracket(text: &str, before_line: u64) -> Option<(u64, u64)> {
    let mut found = None;
    for (i, line) in text
        .lines()
        .enumerate()
        .take(before_line.saturating_sub(1) as usize)
    {
        let mut stack: Vec<usize> = Vec::new();
        let mut quote: Option<char> = None;
        for (col, ch) in line.chars().enumerate() {
            match (quote, ch) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(ch),
                (None, '#') => break,
                (None, '[' | '{') => stack.push(col),
                (None, ']' | '}') => {
                    stack.pop();
                }
                _ => {}
            }
        }
        if let Some(col) = stack.first() {
            found = Some((i as u64 + 1, *col as u64 + 1));
        }
    }
    found
}

/// Rewrite parser messages that leak Rust or library internals.
fn humanize_yaml_message(message: &str) -> String {
    let m = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    if let Some(words) = budget_breach_words(&m) {
        return words;
    }
    if m.contains("cannot deserialize null into string") {
        return "missing value: a string is expected here".into();
    }
    if m.contains("untagged enum RawCount") {
        return "bad `count`: expected a positive number or `all`".into();
    }
    if m.contains("untagged enum RawCommand") {
        return "bad command: expected a string (run by `sh -c`) or a list of strings (argv)"
            .into();
    }
    if m.contains("did not match any variant") {
        return "value has the wrong type here".into();
    }
    if m.contains("expected mapping start") {
        return "expected a mapping (`key: value` entries) here".into();
    }
    if m.contains("expected sequence start") {
        return "expected a list (`- item` lines or `[a, b]`) here".into();
    }
    if m.contains("expected string scalar") {
        return "expected a single value here, not a list or a mapping".into();
    }
    if m.contains("multiple YAML documents") {
        return "the spec holds more than one YAML document (a `---` line in the middle)".into();
    }
    m
}

fn yaml_fix_hint(message: &str) -> String {
    if message.contains("unknown field") {
        "remove the key or correct its spelling to one of the expected keys".into()
    } else if message.contains("duplicate mapping key") {
        "each key may appear once per mapping: delete or merge the repeated key".into()
    } else if message.contains("missing field") {
        "add the missing key (see the spec format in README)".into()
    } else if message.contains("unclosed") {
        "close the bracket or quote that opens here".into()
    } else if message.contains("missing value") {
        "write the value after the key (quote it if it is empty: `''`)".into()
    } else if message.contains("bad `count`") {
        "use `count: 1`, another positive number, or `count: all`".into()
    } else if message.contains("the spec must be a mapping") {
        "start the file with `version: 1`, then `test:` and `mutations:` at column 1 (see README)"
            .into()
    } else if message.contains("expected a mapping") {
        "write `key: value` entries here, indented under their parent key".into()
    } else if message.contains("expected a list") {
        "write the entries as a list: one `- ` line per entry".into()
    } else if message.contains("more than one YAML document") {
        "keep one document: remove the `---` line and merge what follows into the first part".into()
    } else if message.contains("a limit of the YAML parser") {
        "write repeated values out instead of aliasing them, nest less, or split the spec into files listed under `include:`".into()
    } else if message.contains("bad command") {
        "e.g. `command: \"python3 -m pytest -q\"` or `command: [python3, -m, pytest]`".into()
    } else if message.contains("placement of ':'") || message.contains("mapping values") {
        "look for an unclosed `[`, `{` or quote above this line, or quote a string that contains `: `".into()
    } else {
        "fix the YAML at this position (quote strings that contain `:` or `#`)".into()
    }
}

/// A duration that does not parse (see [`parse_duration`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadDuration {
    #[error("expected a number with a unit, like `45s`, `2m` or `1m30s`")]
    Unparsable,
    /// Well formed, but beyond what a duration holds (2^64 nanoseconds).
    #[error("too large: a duration is at most 213503d (about 584 years)")]
    TooLarge,
}

/// Parse a duration like `45s`, `2m`, `1m30s`, `1h 5m`, `500ms`: one or more
/// whole numbers, each followed by a unit (`ns`, `us`, `ms`, `s`, `m`, `h`,
/// `d`, or their long forms such as `sec`, `mins`, `hours`).
pub fn parse_duration(s: &str) -> Result<Duration, BadDuration> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(BadDuration::Unparsable);
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = match rest[..digits].parse() {
            Ok(n) => n,
            Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                return Err(BadDuration::TooLarge)
            }
            Err(_) => return Err(BadDuration::Unparsable),
        };
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let nanos_per: u64 = match &rest[..unit_len] {
            "ns" | "nsec" | "nanos" => 1,
            "us" | "µs" | "usec" | "micros" => 1_000,
            "ms" | "msec" | "millis" => 1_000_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
            "d" | "day" | "days" => 86_400_000_000_000,
            _ => return Err(BadDuration::Unparsable),
        };
        let part = n.checked_mul(nanos_per).ok_or(BadDuration::TooLarge)?;
        total = total.checked_add(part).ok_or(BadDuration::TooLarge)?;
        rest = rest[unit_len..].trim_start();
    }
    Ok(Duration::from_nanos(total))
}

/// The mutations declared in one spec file (the main file or an include).
type MutationSource = (SourceFile, Vec<Spanned<RawMutation>>);

/// Load `spec_path` (and its includes) for the target `root`; on error, every
/// problem found, each with its position and fix.
pub fn load(root: &Path, spec_path: &Path) -> Result<Spec, Diagnostics> {
    let one = |d: Diagnostic| Diagnostics(vec![d]);
    let root = root.canonicalize().map_err(|e| {
        one(
            Diagnostic::new(display_path(root), 0, 0, format!("target directory: {e}"))
                .with_fix("pass an existing directory as PATH"),
        )
    })?;
    let src = read_source(spec_path).map_err(one)?;
    let raw: RawSpec = parse_yaml(&src).map_err(one)?;

    let mut diags = Diagnostics::default();
    if raw.version.value != 1 {
        diags.push(
            src.at(
                &raw.version,
                format!("unsupported spec version {}", raw.version.value),
            )
            .with_fix("this unguard reads `version: 1`"),
        );
    }
    let global = match &raw.test {
        // No command of its own: every mutation must set one (checked below).
        Some(t) if t.value.command.is_none() => {
            resolve_test(&src, t, Some(&no_command()), &mut diags)
        }
        Some(t) => resolve_test(&src, t, None, &mut diags),
        // Every mutation must set its own `test.command` (checked below).
        None => Some(no_command()),
    };
    let link = resolve_links(&src, raw.workspace.as_ref(), &mut diags);
    let git = resolve_git(&src, raw.workspace.as_ref(), &mut diags);
    let global = global.map(|g| TestConfig { git, ..g });

    // Mutations from the main file and every include, in order.
    let include_files = resolve_includes(&root, spec_path, &src, &raw.include, &mut diags);
    let mut sources: Vec<MutationSource> = vec![(src, raw.mutations)];
    sources.extend(read_includes(include_files, &mut diags));
    let mutations = match &global {
        Some(global) => resolve_mutations(&root, &sources, global, &mut diags),
        None => Vec::new(),
    };

    if let Some(g) = &global {
        check_commands(&sources[0].0, raw.test.as_ref(), g, &mutations, &mut diags);
    }
    let (gate, timeout_is) = resolve_gate(&sources[0].0, raw.gate, &mutations, &mut diags);
    let thresholds = resolve_thresholds(&sources[0].0, raw.thresholds, &mut diags);

    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Spec {
        root,
        spec_path: spec_path.to_path_buf(),
        test: global.expect("global test config is present when there are no diagnostics"),
        link,
        mutations,
        gate,
        timeout_is,
        thresholds,
    })
}

/// The top-level `test` block of a spec that sets no `command` there: every
/// mutation must set its own. (An empty command is never a resolved one:
/// [`resolve_command`] refuses it.)
fn no_command() -> TestConfig {
    TestConfig {
        command: Command::Shell(String::new()),
        junit: None,
        timeout: TimeoutSetting::Auto,
        env: BTreeMap::new(),
        fail_codes: FailCodes::AnyNonZero,
        preset: Preset::Generic,
        check: None,
        git: SuiteGit::default(),
        select: Select::Auto,
    }
}

/// The top-level `test.command` (or the whole `test:` section) may be left
/// out only when every mutation sets its own `test.command` (it would never
/// run); otherwise the spec error names the mutations that need it.
fn check_commands(
    src: &SourceFile,
    t: Option<&Spanned<RawTest>>,
    global: &TestConfig,
    mutations: &[MutationSpec],
    diags: &mut Diagnostics,
) {
    if global.command != no_command().command {
        return;
    }
    let lacking: Vec<String> = mutations
        .iter()
        .filter(|m| m.test.command == global.command)
        .map(|m| format!("`{}`", m.id))
        .collect();
    if lacking.is_empty() {
        return;
    }
    let why = format!(
        "{} mutation(s) set no `test.command` of their own ({})",
        lacking.len(),
        lacking.join(", ")
    );
    let (diag, add) = match t {
        Some(t) => (
            src.at(t, format!("`test` needs a `command`: {why}")),
            "add `command: \"python3 -m pytest -q --junitxml={junit}\"` under `test:`",
        ),
        None => (
            src.diag(1, 1, format!("missing `test:` section: {why}")),
            "add `test: {command: \"python3 -m pytest -q\"}`",
        ),
    };
    diags.push(diag.with_fix(format!(
        "{add} (it runs every mutation without one), or give each of them a `test.command`"
    )));
}

/// `workspace.git`: `private` or `none` (the default).
fn resolve_git(
    src: &SourceFile,
    workspace: Option<&RawWorkspace>,
    diags: &mut Diagnostics,
) -> SuiteGit {
    let Some(g) = workspace.and_then(|ws| ws.git.as_ref()) else {
        return SuiteGit::None;
    };
    match g.value.as_str() {
        "private" => SuiteGit::Private,
        "none" => SuiteGit::None,
        other => {
            diags.push(
                src.at(g, format!("unknown `workspace.git` value `{other}`"))
                    .with_fix(
                        "use `git: private` (the suite gets a fresh repository of its copy for each run) \
                         or leave it out (git finds no repository: never the user's)",
                    ),
            );
            SuiteGit::None
        }
    }
}

/// `workspace.link`: ignored directories to symlink into every copy: a
/// name (linked at the top of the target and, where git ignores it, deeper
/// down) or a path relative to the root (`packages/a/.venv`). Never `.git`:
/// a copy never leads git back to the user's repository.
fn resolve_links(
    src: &SourceFile,
    workspace: Option<&RawWorkspace>,
    diags: &mut Diagnostics,
) -> Vec<String> {
    let mut link = Vec::new();
    for l in workspace.map_or(&[][..], |ws| &ws.link) {
        match check_rel_path(&l.value) {
            Ok(p) if p.split('/').any(|c| c == ".git") => diags.push(
                src.at(l, "`workspace.link` cannot name `.git`: a copy never reaches the user's repository")
                    .with_fix("remove it; a suite that needs git metadata opts in with `workspace.git: private`"),
            ),
            Ok(p) => link.push(p),
            Err(why) => diags.push(src.at(l, why.to_string()).with_fix(
                "name an ignored directory relative to the target root (e.g. `.venv` or `packages/a/node_modules`)",
            )),
        }
    }
    link
}

/// The files the `include:` globs match, sorted and without duplicates; each
/// must stay inside the target root. The spec itself is never one of them
/// (a glob like `*.yaml` that also matches it includes the others); an
/// entry that matches only the spec is a diagnostic.
fn resolve_includes(
    root: &Path,
    spec_path: &Path,
    src: &SourceFile,
    include: &[Spanned<String>],
    diags: &mut Diagnostics,
) -> Vec<PathBuf> {
    let itself = spec_path.canonicalize().ok();
    let mut include_files: Vec<PathBuf> = Vec::new();
    for inc in include {
        if let Err(why) = check_rel_path(&inc.value) {
            diags.push(
                src.at(inc, format!("include: {why}"))
                    .with_fix("include paths are relative to the target root and stay inside it"),
            );
            continue;
        }
        let rel = inc.value.trim_start_matches("./");
        // Checked as written, so a position counts in the user's pattern,
        // not in the root it is joined to.
        if let Err(e) = glob::Pattern::new(rel) {
            let at = e.pos + (inc.value.len() - rel.len());
            let near = inc.value[at.min(inc.value.len())..]
                .chars()
                .next()
                .map_or(String::new(), |c| format!(" (`{c}`)"));
            diags.push(
                src.at(
                    inc,
                    format!(
                        "bad include pattern `{}`: {} at character {}{near} of the pattern",
                        inc.value,
                        e.msg,
                        inc.value[..at.min(inc.value.len())].chars().count() + 1
                    ),
                )
                .with_fix("use a glob like `mutations/*.yaml` (`[` opens a character class: write `[[]` for a literal `[`)"),
            );
            continue;
        }
        // The root may contain glob metacharacters (`[`, `*`): escape it.
        let pattern = format!("{}/{rel}", glob::Pattern::escape(&root.to_string_lossy()));
        let mut matched: Vec<PathBuf> = match glob::glob(&pattern) {
            Ok(paths) => paths.filter_map(Result::ok).collect(),
            Err(e) => {
                diags.push(
                    src.at(
                        inc,
                        format!("bad include pattern `{}`: {}", inc.value, e.msg),
                    )
                    .with_fix("use a glob like `mutations/*.yaml`"),
                );
                continue;
            }
        };
        let before = matched.len();
        matched.retain(|m| m.canonicalize().ok() != itself);
        if matched.is_empty() && before > 0 {
            diags.push(
                src.at(
                    inc,
                    format!(
                        "include `{}` matches this spec file itself (and nothing else): its mutations are loaded already, and an included file holds only a `mutations:` list",
                        inc.value
                    ),
                )
                .with_fix("remove the entry, or name the files that hold more mutations (e.g. `mutations/*.yaml`)"),
            );
            continue;
        }
        if matched.is_empty() {
            diags.push(
                src.at(inc, format!("include `{}` matches no file", inc.value))
                    .with_fix("correct the path or remove the entry"),
            );
        }
        for m in matched {
            match m.canonicalize() {
                Ok(c) if c.starts_with(root) => include_files.push(c),
                _ => diags.push(
                    src.at(
                        inc,
                        format!("include `{}` leaves the target root", m.display()),
                    )
                    .with_fix("keep included spec files inside the target"),
                ),
            }
        }
    }
    include_files.sort();
    include_files.dedup();
    include_files
}

/// Read and parse the included spec files; one that fails is a diagnostic.
fn read_includes(paths: Vec<PathBuf>, diags: &mut Diagnostics) -> Vec<MutationSource> {
    let mut sources = Vec::new();
    for path in paths {
        match read_source(&path).and_then(|s| parse_yaml::<RawInclude>(&s).map(|r| (s, r))) {
            Ok((s, r)) => sources.push((s, r.mutations)),
            Err(d) => diags.push(d),
        }
    }
    sources
}

/// Validate the mutations of every source, in order; a spec without any
/// (and without other problems) is a diagnostic on the main file.
fn resolve_mutations(
    root: &Path,
    sources: &[MutationSource],
    global: &TestConfig,
    diags: &mut Diagnostics,
) -> Vec<MutationSpec> {
    let mut mutations = Vec::new();
    let mut seen_ids: HashMap<String, SpecPos> = HashMap::new();
    for (src, raws) in sources {
        for m in raws {
            if let Some(ms) = resolve_mutation(root, src, m, global, &mut seen_ids, diags) {
                mutations.push(ms);
            }
        }
    }
    if mutations.is_empty() && diags.is_empty() {
        diags.push(
            Diagnostic::new(
                &sources[0].0.display,
                1,
                1,
                "the spec declares no mutations",
            )
            .with_fix("add a `mutations:` list (or an `include:` of files that have one)"),
        );
    }
    mutations
}

/// Validate `gate:`; every allowed id must name a declared mutation and carry a reason.
fn resolve_gate(
    src: &SourceFile,
    raw: Option<RawGate>,
    mutations: &[MutationSpec],
    diags: &mut Diagnostics,
) -> (GateConfig, Option<TimeoutPolicy>) {
    let raw = raw.unwrap_or_default();
    let mut gate = GateConfig {
        max_survived: raw.max_survived.unwrap_or(0) as usize,
        ..GateConfig::default()
    };
    if let Some(ms) = &raw.min_score {
        if (0.0..=100.0).contains(&ms.value) {
            gate.min_score = Some(ms.value);
        } else {
            diags.push(
                src.at(ms, format!("min_score {} is not a percentage", ms.value))
                    .with_fix("write a number from 0 to 100, e.g. `min_score: 90`"),
            );
        }
    }
    let timeout_is = raw
        .timeout_is
        .as_ref()
        .and_then(|t| match t.value.as_str() {
            "killed" => Some(TimeoutPolicy::Killed),
            "survived" => Some(TimeoutPolicy::Survived),
            "error" => Some(TimeoutPolicy::Error),
            other => {
                diags.push(
                    src.at(t, format!("unknown timeout_is `{other}`"))
                        .with_fix("use `killed`, `survived` or `error`"),
                );
                None
            }
        });
    if let Some(t) = &raw.twins {
        match t.value.trim() {
            "count" => gate.twins = TwinsPolicy::Count,
            "report" => gate.twins = TwinsPolicy::Report,
            other => diags.push(
                src.at(t, format!("unknown twins `{other}`"))
                    .with_fix("use `count` (tightening survivors fail the gate, the default) or `report` (listed as findings, gate unaffected)"),
            ),
        }
    }
    let mut seen: HashMap<String, u64> = HashMap::new();
    for a in &raw.allow {
        let id = &a.value.id;
        let reason = a.value.reason.as_deref().unwrap_or("").trim();
        if reason.is_empty() {
            diags.push(
                src.at(
                    &a.value.id,
                    format!("allow entry for `{}` has no reason", id.value),
                )
                .with_fix("add `reason: …`: say why this surviving mutant is acceptable"),
            );
        }
        if !mutations.iter().any(|m| m.id == id.value) {
            diags.push(
                src.at(
                    id,
                    format!("allow names `{}`, but no mutation has that id", id.value),
                )
                .with_fix("use an id from `unguard list`, or remove the entry"),
            );
        }
        if let Some(line) = seen.insert(id.value.clone(), id.referenced.line()) {
            diags.push(
                src.at(
                    id,
                    format!("`{}` is allowed twice (first on line {line})", id.value),
                )
                .with_fix("keep one allow entry per mutant"),
            );
        }
        gate.allow.push(Allow {
            id: id.value.clone(),
            reason: reason.to_string(),
        });
    }
    (gate, timeout_is)
}

fn resolve_thresholds(
    src: &SourceFile,
    raw: Option<Spanned<RawThresholds>>,
    diags: &mut Diagnostics,
) -> Thresholds {
    let Some(t) = raw else {
        return Thresholds::default();
    };
    let (high, low) = (t.value.high, t.value.low);
    if !(0.0..=100.0).contains(&low) || !(0.0..=100.0).contains(&high) || low > high {
        diags.push(
            src.at(
                &t,
                format!("thresholds high {high} / low {low} are not 0 ≤ low ≤ high ≤ 100"),
            )
            .with_fix("e.g. `thresholds: {high: 80, low: 60}`"),
        );
        return Thresholds::default();
    }
    Thresholds { high, low }
}

fn resolve_command(
    src: &SourceFile,
    c: &Spanned<RawCommand>,
    diags: &mut Diagnostics,
) -> Option<Command> {
    match &c.value {
        RawCommand::Shell(s) if s.trim().is_empty() => {
            diags.push(
                src.at(c, "empty command")
                    .with_fix("give the command that runs the test suite"),
            );
            None
        }
        RawCommand::Argv(v) if v.is_empty() || v[0].trim().is_empty() => {
            diags.push(
                src.at(c, "empty argv list")
                    .with_fix("the first element is the program to run"),
            );
            None
        }
        RawCommand::Shell(s) => Some(Command::Shell(s.clone())),
        RawCommand::Argv(v) => Some(Command::Argv(v.clone())),
    }
}

fn looks_like_pytest(c: &Command) -> bool {
    let text = c.display();
    text.split(|ch: char| ch.is_whitespace() || ch == '/')
        .any(|w| w == "pytest" || w == "py.test")
}

/// A positive duration, or a diagnostic at `s` (suggesting `examples`).
fn parse_timeout(
    src: &SourceFile,
    s: &Spanned<String>,
    examples: &str,
    diags: &mut Diagnostics,
) -> Option<Duration> {
    match parse_duration(&s.value) {
        Ok(d) if !d.is_zero() => Some(d),
        Ok(_) => {
            diags.push(
                src.at(s, "timeout must be greater than zero")
                    .with_fix(format!("write a duration like {examples}")),
            );
            None
        }
        Err(e) => {
            diags.push(
                src.at(s, format!("bad timeout `{}`: {e}", s.value))
                    .with_fix(format!("write a duration like {examples}")),
            );
            None
        }
    }
}

/// Resolve a `test:` block; with `base`, unset keys inherit from it.
fn resolve_test(
    src: &SourceFile,
    t: &Spanned<RawTest>,
    base: Option<&TestConfig>,
    diags: &mut Diagnostics,
) -> Option<TestConfig> {
    let raw = &t.value;
    let before = diags.0.len();
    let command = match (&raw.command, base) {
        (Some(c), _) => resolve_command(src, c, diags),
        (None, Some(b)) => Some(b.command.clone()),
        (None, None) => {
            diags.push(
                src.at(t, "`test` needs a `command`")
                    .with_fix("add `command: \"python3 -m pytest -q --junitxml={junit}\"`"),
            );
            None
        }
    };
    let timeout = match &raw.timeout {
        None => base.map(|b| b.timeout).unwrap_or(TimeoutSetting::Auto),
        Some(s) if s.value.trim() == "auto" => TimeoutSetting::Auto,
        Some(s) => parse_timeout(src, s, "`45s`, `2m`, or `auto`", diags)
            .map(TimeoutSetting::Fixed)
            .unwrap_or(TimeoutSetting::Auto),
    };
    let junit = match &raw.junit {
        Some(j) if j.value.trim().is_empty() => {
            diags.push(
                src.at(j, "empty `junit` path")
                    .with_fix("use `{junit}` and pass it to the test command"),
            );
            None
        }
        Some(j) => Some(j.value.clone()),
        None => base.and_then(|b| b.junit.clone()),
    };
    let mut env = base.map(|b| b.env.clone()).unwrap_or_default();
    if let Some(e) = &raw.env {
        env.extend(e.clone());
    }
    let check = match &raw.check {
        Some(c) => resolve_command(src, c, diags),
        None => base.and_then(|b| b.check.clone()),
    };
    let select = match &raw.select {
        Some(c) => resolve_select(src, c, diags),
        None => base.map(|b| b.select.clone()).unwrap_or_default(),
    };
    let command = command?;
    let (fail_codes, preset) = match (&raw.fail_codes, &raw.preset) {
        (Some(codes), _) => {
            if codes.is_empty() || codes.contains(&0) {
                diags.push(
                    src.at(t, "`fail_codes` must list non-zero exit codes")
                        .with_fix("e.g. `fail_codes: [1]`"),
                );
            }
            (FailCodes::Only(codes.clone()), Preset::Custom)
        }
        (None, Some(p)) => match Preset::named(&p.value) {
            Some(preset) => (preset.fail_codes(), preset),
            None => {
                diags.push(
                    src.at(p, format!("unknown preset `{}`", p.value))
                        .with_fix("use `pytest` or `generic`, or set `fail_codes`"),
                );
                (FailCodes::AnyNonZero, Preset::Generic)
            }
        },
        (None, None) => match base {
            Some(b) if raw.command.is_none() => (b.fail_codes.clone(), b.preset),
            _ if looks_like_pytest(&command) => (Preset::Pytest.fail_codes(), Preset::Pytest),
            _ => (FailCodes::AnyNonZero, Preset::Generic),
        },
    };
    if diags.0.len() > before {
        return None;
    }
    Some(TestConfig {
        command,
        junit,
        timeout,
        env,
        fail_codes,
        preset,
        check,
        git: base.map(|b| b.git).unwrap_or_default(),
        select,
    })
}

/// `test.select`: `auto`, `off`, or a command template with `{tests}`.
fn resolve_select(src: &SourceFile, c: &Spanned<RawCommand>, diags: &mut Diagnostics) -> Select {
    match &c.value {
        RawCommand::Shell(s) if s.trim() == "auto" => return Select::Auto,
        RawCommand::Shell(s) if s.trim() == "off" => return Select::Off,
        _ => {}
    }
    let Some(cmd) = resolve_command(src, c, diags) else {
        return Select::Auto;
    };
    let has = |key: &str| match &cmd {
        Command::Shell(s) => s.contains(key),
        Command::Argv(v) => v.iter().any(|a| a == key),
    };
    if !has("{tests}") && !has("{files}") {
        diags.push(
            src.at(
                c,
                "`test.select` must contain `{tests}` or `{files}` (as an argument of its own in an argv list)",
            )
            .with_fix(
                "e.g. `select: \"python3 tests/run_tests.py --junit {junit} {tests}\"`, or `off`",
            ),
        );
        return Select::Auto;
    }
    Select::Template(cmd)
}

/// Why a path is not a relative path inside the target root (see [`check_rel_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRelPath {
    #[error("empty path")]
    Empty,
    #[error("path `{0}` leaves the target root (`..`)")]
    LeavesRoot(String),
    #[error("path `{0}` is absolute")]
    Absolute(String),
    #[error("path `{0}` names the root itself")]
    IsRoot(String),
}

/// A relative path that stays inside the root: no absolute paths, no `..`.
/// Returns it normalised with `/` separators.
pub fn check_rel_path(p: &str) -> Result<String, BadRelPath> {
    if p.trim().is_empty() {
        return Err(BadRelPath::Empty);
    }
    let path = Path::new(p);
    let mut parts = Vec::new();
    for comp in path.components() {
        match comp {
            Component::Normal(s) => parts.push(s.to_string_lossy().to_string()),
            Component::CurDir => {}
            Component::ParentDir => return Err(BadRelPath::LeavesRoot(p.to_string())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(BadRelPath::Absolute(p.to_string()))
            }
        }
    }
    if parts.is_empty() {
        return Err(BadRelPath::IsRoot(p.to_string()));
    }
    Ok(parts.join("/"))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn resolve_mutation(
    root: &Path,
    src: &SourceFile,
    m: &Spanned<RawMutation>,
    global: &TestConfig,
    seen: &mut HashMap<String, SpecPos>,
    diags: &mut Diagnostics,
) -> Option<MutationSpec> {
    let raw = &m.value;
    let before = diags.0.len();
    let pos = SpecPos {
        path: src.display.clone(),
        line: raw.id.referenced.line(),
        col: raw.id.referenced.column(),
    };
    check_id(src, &raw.id, &pos, seen, diags);
    if raw.control.trim().is_empty() {
        diags.push(
            src.at(m, "`control` is empty")
                .with_fix("say which security control this mutation removes"),
        );
    }
    let file = resolve_file(root, src, &raw.file, diags);
    let pattern = resolve_pattern(src, m, diags);
    let count = resolve_count(src, raw.count.as_ref(), diags);
    let timeout = raw
        .timeout
        .as_ref()
        .and_then(|s| parse_timeout(src, s, "`30s` or `2m`", diags));
    let test = match &raw.test {
        None => Some(global.clone()),
        Some(t) => resolve_test(src, t, Some(global), diags),
    };
    let killed_by = resolve_killed_by(src, raw.expect.as_ref(), test.as_ref(), diags);
    let direction = raw.direction.as_ref().and_then(|d| {
        let named = Direction::named(d.value.trim());
        if named.is_none() {
            diags.push(
                src.at(d, format!("unknown direction `{}`", d.value))
                    .with_fix("use `loosen` (a negative test must kill it) or `tighten` (a positive twin must kill it), or leave it out"),
            );
        }
        named
    });

    if diags.0.len() > before {
        return None;
    }
    Some(MutationSpec {
        id: raw.id.value.clone(),
        control: raw.control.trim().to_string(),
        rule: raw.rule.clone(),
        direction,
        file: file?,
        pattern: pattern?,
        replace: raw.replace.value.clone(),
        count,
        canary: raw.canary.unwrap_or(true),
        killed_by,
        timeout,
        test: test?,
        pos,
    })
}

/// A mutation id must be valid and unique; the first declaration of each
/// id is remembered in `seen`.
fn check_id(
    src: &SourceFile,
    id: &Spanned<String>,
    pos: &SpecPos,
    seen: &mut HashMap<String, SpecPos>,
    diags: &mut Diagnostics,
) {
    let value = &id.value;
    if !valid_id(value) {
        diags.push(src.at(id, format!("invalid mutation id `{value}`")).with_fix(
            "ids use letters, digits, `-`, `_` and `.` (they name files in the output dir), e.g. `host-allowlist-port-exact`",
        ));
    } else if let Some(prev) = seen.get(value) {
        diags.push(
            src.at(
                id,
                format!(
                    "duplicate mutation id `{value}` (first declared at {}:{}:{})",
                    prev.path, prev.line, prev.col
                ),
            )
            .with_fix("give every mutation a unique id"),
        );
    } else {
        seen.insert(value.clone(), pos.clone());
    }
}

/// `file:` inside the root, existing, a regular file, reached without a
/// symlink; returns it relative to the root.
fn resolve_file(
    root: &Path,
    src: &SourceFile,
    file: &Spanned<String>,
    diags: &mut Diagnostics,
) -> Option<String> {
    let rel = match check_rel_path(&file.value) {
        Ok(rel) => rel,
        Err(why) => {
            diags.push(
                src.at(file, why.to_string())
                    .with_fix("give the path relative to the target root"),
            );
            return None;
        }
    };
    if rel.split('/').any(|part| part == ".git") {
        diags.push(
            src.at(
                file,
                format!("file `{rel}` is inside `.git`: git's own files are never part of the copied tree"),
            )
            .with_fix("name a source file of the target (tracked, or untracked and not ignored by git)"),
        );
        return None;
    }
    match real_file_problem(root, &rel) {
        None => Some(rel),
        Some((why, fix)) => {
            diags.push(src.at(file, why).with_fix(fix));
            None
        }
    }
}

/// What is wrong with `root/rel` as a file to mutate (the message and its
/// fix), or `None` when it is a regular file inside the root, not a link.
fn real_file_problem(root: &Path, rel: &str) -> Option<(String, String)> {
    let full = root.join(rel);
    let problem = match full.canonicalize() {
        Err(e) => {
            // A link that exists but leads nowhere is not a missing file.
            let why = match std::fs::symlink_metadata(&full) {
                Ok(_) => format!("file `{rel}` is a symlink that cannot be resolved ({e})"),
                Err(_) => format!("file `{rel}` does not exist in {}", display_path(root)),
            };
            (why, "correct the path (relative to the target root)".into())
        }
        Ok(c) if !c.starts_with(root) => (
            format!(
                "file `{rel}` resolves outside the target root (symlink to {})",
                c.display()
            ),
            "mutate the real file inside the target, not a link that leaves it".into(),
        ),
        Ok(c) if !c.is_file() => (
            format!("`{rel}` is not a regular file"),
            "name a source file".into(),
        ),
        Ok(c) if c != full => {
            // Refused, not followed: the copy recreates links as links,
            // and writing through one could land outside the copy.
            let real = c
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| c.display().to_string());
            let how = if std::fs::symlink_metadata(&full)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false)
            {
                "is a symlink"
            } else {
                "goes through a symlinked directory"
            };
            (
                format!("`{rel}` {how} (to `{real}`)"),
                format!("write `file: {real}`: unguard mutates real files only, not links"),
            )
        }
        Ok(_) => return None,
    };
    Some(problem)
}

/// `find` (literal text) or `regex`: exactly one, not empty.
fn resolve_pattern(
    src: &SourceFile,
    m: &Spanned<RawMutation>,
    diags: &mut Diagnostics,
) -> Option<Pattern> {
    let raw = &m.value;
    match (&raw.find, &raw.regex) {
        (Some(_), Some(r)) => {
            diags.push(
                src.at(r, "both `find` and `regex` are set")
                    .with_fix("keep one of them"),
            );
            None
        }
        (None, None) => {
            diags.push(
                src.at(m, "mutation needs `find` (literal text) or `regex`")
                    .with_fix("add `find: '<text of the control>'`"),
            );
            None
        }
        (Some(f), None) if f.value.trim().is_empty() => {
            diags.push(
                src.at(f, "`find` is empty")
                    .with_fix("give the exact text of the control to remove"),
            );
            None
        }
        (Some(f), None) => Some(Pattern::Literal {
            text: f.value.clone(),
            exact_whitespace: raw.exact_whitespace,
        }),
        (None, Some(r)) => resolve_regex(src, r, &raw.replace, diags),
    }
}

/// A `regex` that compiles and cannot match the empty string, with a
/// `replace` whose capture references all name groups of it.
fn resolve_regex(
    src: &SourceFile,
    r: &Spanned<String>,
    replace: &Spanned<String>,
    diags: &mut Diagnostics,
) -> Option<Pattern> {
    match regex::bytes::Regex::new(&r.value) {
        Ok(re) if re.is_match(b"") => {
            diags.push(
                src.at(r, "regex matches the empty string")
                    .with_fix("anchor the regex to the control's text"),
            );
            None
        }
        Ok(re) => {
            let names: Vec<Option<&str>> = re.capture_names().collect();
            let bad = crate::mutate::bad_capture_refs(&replace.value, &names);
            for b in &bad {
                diags.push(src.at(replace, &b.message).with_fix(&b.fix));
            }
            bad.is_empty().then(|| Pattern::Regex(r.value.clone()))
        }
        Err(e) => {
            let msg = e
                .to_string()
                .lines()
                .last()
                .unwrap_or("invalid regex")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            diags.push(src.at(r, format!("bad regex: {msg}")).with_fix(
                "fix the pattern (Rust regex syntax; escape `(`, `.`, `[` as `\\(` `\\.` `\\[`)",
            ));
            None
        }
    }
}

/// `count`: a positive number or `all` (default 1).
fn resolve_count(
    src: &SourceFile,
    count: Option<&Spanned<RawCount>>,
    diags: &mut Diagnostics,
) -> Count {
    let Some(c) = count else {
        return Count::Exactly(1);
    };
    match &c.value {
        RawCount::N(0) => {
            diags.push(
                src.at(c, "`count` must be at least 1")
                    .with_fix("use a positive number or `all`"),
            );
            Count::Exactly(1)
        }
        RawCount::N(n) => Count::Exactly(*n as usize),
        RawCount::Word(w) if w == "all" => Count::All,
        RawCount::Word(w) => {
            diags.push(
                src.at(c, format!("bad count `{w}`"))
                    .with_fix("use a positive number or `all`"),
            );
            Count::Exactly(1)
        }
    }
}

/// Whether `command` runs `go test -json`, whose per-test events unguard
/// reads from the log (see [`crate::outcome::reading::go_test_json`]).
fn prints_go_test_events(command: &Command) -> bool {
    let text = command.display();
    text.contains("go test")
        && text
            .split_whitespace()
            .any(|w| w == "-json" || w == "--json")
}

/// Whether `command` runs `cargo test`, whose per-test lines unguard reads
/// from the log (see [`crate::outcome::reading::libtest_text`]).
fn runs_cargo_test(command: &Command) -> bool {
    let words: Vec<&str> = match command {
        Command::Shell(s) => s.split_whitespace().collect(),
        Command::Argv(v) => v.iter().map(String::as_str).collect(),
    };
    words
        .windows(2)
        .any(|w| (w[0] == "cargo" || w[0].ends_with("/cargo")) && w[1] == "test")
}

/// `expect.killed_by`: non-empty test names, under a test config that
/// writes a JUnit report (or runs `go test -json`).
fn resolve_killed_by(
    src: &SourceFile,
    expect: Option<&RawExpect>,
    test: Option<&TestConfig>,
    diags: &mut Diagnostics,
) -> Vec<String> {
    let Some(expect) = expect else {
        return Vec::new();
    };
    if let Some(test) = test {
        if let Some(first) = expect.killed_by.first() {
            let logged = prints_go_test_events(&test.command) || runs_cargo_test(&test.command);
            if test.junit.is_none() && !logged {
                diags.push(src.at(first, "`expect.killed_by` needs a JUnit report to know which tests failed").with_fix(
                    "set `test.junit: \"{junit}\"` and pass {junit} to the test command (e.g. pytest --junitxml={junit}), or run `go test -json` or `cargo test`",
                ));
            }
        }
        for k in &expect.killed_by {
            if k.value.trim().is_empty() {
                diags.push(
                    src.at(k, "empty `killed_by` entry").with_fix(
                        "name a test as `path/test_x.py::test_name` or `classname::name`",
                    ),
                );
            }
        }
    }
    expect.killed_by.iter().map(|k| k.value.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_paths_stay_inside() {
        assert_eq!(check_rel_path("./src/a.py").unwrap(), "src/a.py");
        assert!(check_rel_path("../x").is_err());
        assert!(check_rel_path("src/../../x").is_err());
        assert!(check_rel_path("/etc/passwd").is_err());
        assert!(check_rel_path("").is_err());
    }

    #[test]
    fn parser_budget_breaches_are_put_in_words() {
        let w = |m: &str| budget_breach_words(m).unwrap();
        assert!(w("budget breached: Depth { depth: 65 }")
            .contains("YAML nested too deeply (Depth { depth: 65 })"));
        assert!(w("budget breached: Aliases { aliases: 50001 }").contains("too many YAML aliases"));
        assert!(w("budget breached: Nodes").contains("too much YAML for one file"));
        assert_eq!(budget_breach_words("mapping values are not allowed"), None);
    }

    #[test]
    fn durations() {
        let secs = |s: &str| parse_duration(s).map(|d| d.as_secs_f64());
        assert_eq!(secs("45s"), Ok(45.0));
        assert_eq!(secs(" 2m "), Ok(120.0));
        assert_eq!(secs("1m30s"), Ok(90.0));
        assert_eq!(secs("1h 5m"), Ok(3900.0));
        assert_eq!(secs("500ms"), Ok(0.5));
        assert_eq!(secs("2 minutes"), Ok(120.0));
        for bad in ["", "45", "s", "45 seconds please", "1.5s", "-3s"] {
            assert_eq!(parse_duration(bad), Err(BadDuration::Unparsable), "{bad:?}");
        }
        for huge in [
            "99999999999999999999d",
            "99999999999999h",
            "213504d",
            "213503d 1d",
        ] {
            assert_eq!(parse_duration(huge), Err(BadDuration::TooLarge), "{huge:?}");
        }
        assert!(parse_duration("213503d").is_ok());
    }

    #[test]
    fn pytest_detection() {
        assert!(looks_like_pytest(&Command::Shell(
            "python3 -m pytest -q".into()
        )));
        assert!(looks_like_pytest(&Command::Argv(vec![
            ".venv/bin/pytest".into()
        ])));
        assert!(!looks_like_pytest(&Command::Shell(
            "python3 -m unittest".into()
        )));
    }

    #[test]
    fn fail_codes() {
        assert!(FailCodes::AnyNonZero.is_test_failure(2));
        assert!(!FailCodes::AnyNonZero.is_test_failure(0));
        assert!(FailCodes::Only(vec![1]).is_test_failure(1));
        assert!(!FailCodes::Only(vec![1]).is_test_failure(5));
    }

    #[test]
    fn ids() {
        assert!(valid_id("host-allowlist.port_exact"));
        assert!(!valid_id("../x"));
        assert!(!valid_id("a b"));
        assert!(!valid_id(".hidden"));
    }
}
