//! How a command ends: the exit codes, in the gate's order of precedence,
//! and the one error type every stage returns. Each error knows its exit
//! code and how it is printed; `main` prints it once.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::globs::BadGlob;
use crate::spec::diag::Diagnostics;

/// unguard's exit codes, declared most serious first: when several apply,
/// the first in declaration order wins (`Ord` is that order, so the worst of
/// two codes is their minimum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExitCode {
    /// 130: Ctrl-C or SIGTERM before every mutant ran.
    Interrupted,
    /// 1: invalid command line or input, or an internal error.
    Failure,
    /// 4: the unmutated suite is red, flaky or ran no tests.
    BaselineRed,
    /// 5: the spec is stale (no-op, ambiguous or unreached mutations).
    SpecStale,
    /// 2: the gate failed (survived, no-coverage, wrong-reason or flaky
    /// mutants, score).
    GateFailed,
    /// 6 (audit): nothing proven: the catalog found no site to mutate, or
    /// no mutant reached a verdict (all unreached or unviable).
    NothingProven,
    /// 7 (audit): a control a server of this kind should have is absent.
    ExpectedAbsent,
    /// 3: a mutant timed out under `--timeout-is error`.
    Timeout,
    /// 0: everything ran and the gate passed.
    Ok,
}

impl ExitCode {
    /// Every exit code, the most serious first.
    pub const ALL: [ExitCode; 9] = [
        ExitCode::Interrupted,
        ExitCode::Failure,
        ExitCode::BaselineRed,
        ExitCode::SpecStale,
        ExitCode::GateFailed,
        ExitCode::NothingProven,
        ExitCode::ExpectedAbsent,
        ExitCode::Timeout,
        ExitCode::Ok,
    ];

    /// The order of `unguard audit`, most serious first. There the mutants
    /// are the catalog's, not a hand-written spec: a mutant in a file no
    /// test loads (5) is reported apart and no longer hides survivors (2);
    /// survivors are the strongest finding, then a repo that proved nothing.
    pub const AUDIT_ORDER: [ExitCode; 9] = [
        ExitCode::Interrupted,
        ExitCode::Failure,
        ExitCode::BaselineRed,
        ExitCode::GateFailed,
        ExitCode::NothingProven,
        ExitCode::SpecStale,
        ExitCode::ExpectedAbsent,
        ExitCode::Timeout,
        ExitCode::Ok,
    ];

    /// The process exit status.
    pub const fn code(self) -> i32 {
        match self {
            ExitCode::Interrupted => 130,
            ExitCode::Failure => 1,
            ExitCode::BaselineRed => 4,
            ExitCode::SpecStale => 5,
            ExitCode::NothingProven => 6,
            ExitCode::GateFailed => 2,
            ExitCode::ExpectedAbsent => 7,
            ExitCode::Timeout => 3,
            ExitCode::Ok => 0,
        }
    }

    /// The exit code with this status (as stored in `outcomes.json`).
    pub fn from_code(code: i32) -> Option<ExitCode> {
        ExitCode::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The more serious of two codes (e.g. across the repos of a portfolio).
    pub fn worst(self, other: ExitCode) -> ExitCode {
        self.min(other)
    }

    /// The more serious of two codes in `audit`'s order ([`ExitCode::AUDIT_ORDER`]).
    pub fn worst_in_audit(self, other: ExitCode) -> ExitCode {
        let rank = |c: ExitCode| ExitCode::AUDIT_ORDER.iter().position(|a| *a == c);
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }
}

impl fmt::Display for ExitCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(c: ExitCode) -> Self {
        // Every code is in 0..=130.
        std::process::ExitCode::from(c.code() as u8)
    }
}

/// Why a command stopped. Each variant carries its exit code
/// ([`Error::exit_code`]) and its printed form ([`Error::print`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Invalid command line, flag value or input file (exit 1), where no
    /// caller tells one case from another.
    #[error("{0}")]
    Usage(String),
    /// A flag that names what is not there (exit 1), by case.
    #[error("{0}")]
    Flag(FlagError),
    /// Positioned problems in a YAML input, each with its snippet and fix (exit 1).
    #[error("{0}")]
    Diagnostics(Diagnostics),
    /// Mutations that cannot be applied: their rendered diagnostics (one
    /// per line group) and a summary line (exit 5: the spec is stale).
    #[error("{details}{summary}")]
    Stale {
        /// The rendered diagnostics of every mutation that does not apply.
        details: String,
        /// One line: how many cannot be applied, and what happens now.
        summary: String,
    },
    /// The baseline is red, hung, flaky or ran no tests (exit 4).
    #[error("baseline: {0}")]
    Baseline(BaselineError),
    /// Interrupted before any mutant finished (exit 130).
    #[error("interrupted; no mutant finished")]
    Interrupted,
    /// A file-system or process operation failed (exit 1).
    #[error("{context}: {source}")]
    Io {
        /// What unguard was doing (e.g. `cannot read src/app.py`).
        context: String,
        /// The operation's error, printed after `context`.
        #[source]
        source: std::io::Error,
    },
    /// Writing to stdout failed (e.g. `| head` closed it): nothing to say (exit 1).
    #[error("stdout closed")]
    StdoutClosed,
    /// A report template failed to parse or render (exit 1): `context` names
    /// the template. Printed as `{context}, line N: {kind}: {detail}`, the
    /// template line with a caret under the failing expression, and the
    /// causes (e.g. a filter's error), one `caused by:` line each.
    #[error("{}", describe_template_error(.context, .source))]
    Template {
        /// The template it was rendering (built-in or `--template FILE`).
        context: String,
        /// minijinja's error: its kind, line and causes.
        #[source]
        source: minijinja::Error,
    },
    /// A JSON input or output failed (exit 1).
    #[error("{context}: {source}")]
    Json {
        /// What unguard was reading or writing.
        context: String,
        /// serde_json's error, printed after `context`.
        #[source]
        source: serde_json::Error,
    },
    /// A git operation failed (exit 1).
    #[error("{context}: {source}")]
    Git {
        /// What unguard asked git for.
        context: String,
        /// git2's error, printed after `context`.
        #[source]
        source: git2::Error,
    },
    /// unguard itself failed (a bug; exit 1).
    #[error("{0}")]
    Internal(String),
    /// The output dir is locked by another unguard run, named (exit 1).
    #[error("{0}")]
    OutDirBusy(String),
    /// A write into the output dir failed (a full disk): the path, the
    /// cause and what to do (exit 1).
    #[error("{0}")]
    OutDirFull(String),
}

/// A flag's value names what is not there ([`Error::Flag`], exit 1): each
/// case prints the flag, the value and where to look.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// `--allow`, `--only` or `--skip` names no mutation of the spec.
    #[error("{flag} {id}: no mutation with that id in {} (see `unguard list`)", .spec.display())]
    NoSuchMutation {
        /// The flag, e.g. `--allow`.
        flag: &'static str,
        /// The id it names.
        id: String,
        /// The spec it was looked up in.
        spec: PathBuf,
    },
    /// `--file GLOB` matches the file of no mutation of the spec.
    #[error(
        "--file {glob}: matches the file of no mutation in {} (mutated files: {}; paths are relative to the target root, `*` stays inside one directory, `**` crosses them)",
        .spec.display(),
        shown(.files)
    )]
    NoSuchFile {
        /// The glob as given.
        glob: String,
        /// The spec.
        spec: PathBuf,
        /// The spec's mutated files, sorted, each once.
        files: Vec<String>,
    },
    /// `--control` names no operator of the catalog.
    #[error(
        "--control {control:?}: no such control in the catalog{}; `unguard catalog` lists the ids",
        did_you_mean(.near)
    )]
    NoSuchControl {
        /// The id as given.
        control: String,
        /// Catalog ids that share a word with it (at most five).
        near: Vec<String>,
    },
    /// `--file` or `--skip-file` of audit is not a glob.
    #[error("{flag} {glob:?}: not a glob ({why}); globs are repo-relative like `src/**/*.py`")]
    NotAGlob {
        /// The flag, e.g. `--skip-file`.
        flag: &'static str,
        /// The glob that does not compile.
        glob: String,
        /// Why.
        why: BadGlob,
    },
    /// `--out` names a non-empty directory unguard did not make.
    #[error(
        "output directory {} exists and was not made by unguard; refusing to clear it (choose another --out)",
        .0.display()
    )]
    ForeignOutDir(PathBuf),
}

/// The first five files, then `, …` when there are more.
fn shown(files: &[String]) -> String {
    let more = if files.len() > 5 { ", …" } else { "" };
    format!(
        "{}{more}",
        files.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
    )
}

/// ` (did you mean a, b?)`, or nothing.
fn did_you_mean(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", near.join(", "))
    }
}

impl From<FlagError> for Error {
    fn from(e: FlagError) -> Self {
        Error::Flag(e)
    }
}

/// Why the unmutated suite stopped the run ([`Error::Baseline`], exit 4),
/// in parts a caller adds to without reading the text back: whether it was
/// red or flaky, what the run showed, the command without the red tests
/// that need the network, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineError {
    /// Red (or hung, or no tests counted), or flaky.
    pub kind: BaselineKind,
    /// What the run showed, as printed: the reason, the log, its tail.
    pub detail: String,
    /// Every red test looks like it needs the network: said after `detail`.
    pub network: Option<NetworkNote>,
    /// What to do, one printed line each, after the rest (e.g. audit's
    /// command without the network tests, or the environment's setup).
    pub hints: Vec<String>,
}

/// How the baseline failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineKind {
    /// Red, hung or no tests counted.
    Red,
    /// Run `run` of `runs` differs from run 1, which was green.
    Flaky {
        /// The run that differs (2 or later).
        run: usize,
        /// How many runs were asked for (`--baseline-runs`).
        runs: usize,
    },
}

/// The note of a red baseline whose red tests all look like the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkNote {
    /// As printed: the red tests, why each looks like the network, the flag
    /// that deselects them and the command with it.
    pub text: String,
    /// The test command with that flag.
    pub command: String,
}

impl BaselineError {
    /// A red baseline: what its run showed, and the network note if any.
    pub fn red(detail: String, network: Option<NetworkNote>) -> BaselineError {
        BaselineError {
            kind: BaselineKind::Red,
            detail,
            network,
            hints: Vec::new(),
        }
    }

    /// This error as run `run` of `runs`, which differs from a green run 1.
    pub fn flaky(self, run: usize, runs: usize) -> BaselineError {
        BaselineError {
            kind: BaselineKind::Flaky { run, runs },
            ..self
        }
    }
}

impl fmt::Display for BaselineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let BaselineKind::Flaky { run, runs } = self.kind {
            write!(
                f,
                "flaky baseline: run {run} of {runs} differs from run 1, which was green: "
            )?;
        }
        f.write_str(&self.detail)?;
        if let Some(n) = &self.network {
            write!(f, "\n{}", n.text)?;
        }
        for h in &self.hints {
            write!(f, "\n{h}")?;
        }
        Ok(())
    }
}

/// A result whose error is unguard's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The exit code this error ends the command with.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Interrupted => ExitCode::Interrupted,
            Error::Baseline(_) => ExitCode::BaselineRed,
            Error::Stale { .. } => ExitCode::SpecStale,
            Error::Usage(_)
            | Error::Flag(_)
            | Error::Diagnostics(_)
            | Error::Io { .. }
            | Error::StdoutClosed
            | Error::Template { .. }
            | Error::Json { .. }
            | Error::Git { .. }
            | Error::Internal(_)
            | Error::OutDirBusy(_)
            | Error::OutDirFull(_) => ExitCode::Failure,
        }
    }

    /// What goes to stderr for this error (empty: nothing).
    pub fn message(&self) -> String {
        match self {
            // Rendered with their own `error:` lines, snippets and fixes.
            Error::Diagnostics(d) => d.to_string(),
            Error::Stale { details, summary } => format!("{details}{summary}\n"),
            Error::Interrupted => format!("unguard: {self}\n"),
            Error::StdoutClosed => String::new(),
            other => format!("error: {other}\n"),
        }
    }

    /// Print the error to stderr, once, and return its exit code.
    pub fn print(&self) -> ExitCode {
        eprint!("{}", self.message());
        self.exit_code()
    }

    /// An I/O error with what unguard was doing.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// An I/O error on a path: `{what} {path}: {source}`.
    pub fn at(what: &str, path: &Path, source: std::io::Error) -> Error {
        Error::io(format!("{what} {}", path.display()), source)
    }
}

impl From<Diagnostics> for Error {
    fn from(d: Diagnostics) -> Self {
        Error::Diagnostics(d)
    }
}

/// `.context(..)` for I/O, git and JSON results: the operation's error with
/// what unguard was doing.
pub trait Context<T> {
    /// The result, its error wrapped with `context`.
    fn context(self, context: impl Into<String>) -> Result<T>;
    /// Like [`Context::context`], the context built only on error.
    fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T>;
}

macro_rules! context_for {
    ($err:ty, $variant:ident) => {
        impl<T> Context<T> for std::result::Result<T, $err> {
            fn context(self, context: impl Into<String>) -> Result<T> {
                self.map_err(|source| Error::$variant {
                    context: context.into(),
                    source,
                })
            }
            fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T> {
                self.map_err(|source| Error::$variant {
                    context: f().into(),
                    source,
                })
            }
        }
    };
}

context_for!(std::io::Error, Io);
context_for!(git2::Error, Git);
context_for!(serde_json::Error, Json);
context_for!(minijinja::Error, Template);

/// Context for errors that are already unguard's: prefixes the message of
/// `Usage`, `Internal` and `Io` errors; others pass through unchanged.
impl<T> Context<T> for Result<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.prefixed(context.into()))
    }
    fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| e.prefixed(f().into()))
    }
}

/// The printed form of [`Error::Template`]: `what, line N: kind: detail`,
/// the template line and a caret under the failing expression (from the
/// template source minijinja keeps in debug mode), and any cause.
fn describe_template_error(what: &str, e: &minijinja::Error) -> String {
    let mut msg = match e.line() {
        Some(line) => format!("{what}, line {line}: {}", e.kind()),
        None => format!("{what}: {}", e.kind()),
    };
    if let Some(detail) = e.detail() {
        msg.push_str(": ");
        msg.push_str(detail);
    }
    if let (Some(line), Some(src)) = (e.line(), e.template_source()) {
        if let Some(text) = src.split('\n').nth(line - 1) {
            let text = text.trim_end_matches('\r');
            msg.push_str(&format!("\n{line:>5} | {text}"));
            if let Some(caret) = caret(e, src, line, text) {
                msg.push_str(&format!("\n      | {caret}"));
            }
        }
    }
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        msg.push_str(&format!("\ncaused by: {c}"));
        cause = c.source();
    }
    msg
}

/// `^^^` under the template error's span, when the span lies on `line`.
fn caret(e: &minijinja::Error, src: &str, line: usize, text: &str) -> Option<String> {
    let range = e.range()?;
    let line_start: usize = src.split('\n').take(line - 1).map(|l| l.len() + 1).sum();
    let start = range.start.checked_sub(line_start)?;
    let end = range.end.checked_sub(line_start)?.min(text.len());
    let before = text.get(..start)?;
    let under = text.get(start..end.max(start))?;
    Some(format!(
        "{}{}",
        " ".repeat(before.chars().count()),
        "^".repeat(under.chars().count().max(1))
    ))
}

impl Error {
    /// This error with `prefix: ` before its message (where it has one).
    pub fn prefixed(self, prefix: String) -> Error {
        match self {
            Error::Usage(m) => Error::Usage(format!("{prefix}: {m}")),
            Error::Internal(m) => Error::Internal(format!("{prefix}: {m}")),
            Error::Io { context, source } => Error::Io {
                context: format!("{prefix}: {context}"),
                source,
            },
            Error::Json { context, source } => Error::Json {
                context: format!("{prefix}: {context}"),
                source,
            },
            Error::Git { context, source } => Error::Git {
                context: format!("{prefix}: {context}"),
                source,
            },
            Error::Template { context, source } => Error::Template {
                context: format!("{prefix}: {context}"),
                source,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_declaration_order() {
        use ExitCode::*;
        assert_eq!(Ok.worst(GateFailed), GateFailed);
        assert_eq!(GateFailed.worst(SpecStale), SpecStale);
        assert_eq!(Timeout.worst(GateFailed), GateFailed);
        assert_eq!(Interrupted.worst(Failure), Interrupted);
        assert_eq!(BaselineRed.worst(SpecStale), BaselineRed);
        assert_eq!(Ok.worst(Ok), Ok);
        let codes: Vec<i32> = ExitCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(codes, [130, 1, 4, 5, 2, 6, 7, 3, 0]);
        for c in ExitCode::ALL {
            assert_eq!(ExitCode::from_code(c.code()), Some(c));
        }
        assert_eq!(ExitCode::from_code(8), None);
        // audit: survivors outrank a repo that proved nothing, which
        // outranks files no test loads; an absent expected control is last.
        let audit: Vec<i32> = ExitCode::AUDIT_ORDER.iter().map(|c| c.code()).collect();
        assert_eq!(audit, [130, 1, 4, 2, 6, 5, 7, 3, 0]);
        assert_eq!(NothingProven.worst_in_audit(GateFailed), GateFailed);
        assert_eq!(SpecStale.worst_in_audit(NothingProven), NothingProven);
        assert_eq!(SpecStale.worst_in_audit(GateFailed), GateFailed);
        assert_eq!(GateFailed.worst_in_audit(SpecStale), GateFailed);
        assert_eq!(ExpectedAbsent.worst_in_audit(SpecStale), SpecStale);
        assert_eq!(Ok.worst_in_audit(ExpectedAbsent), ExpectedAbsent);
        assert_eq!(NothingProven.worst_in_audit(BaselineRed), BaselineRed);
    }

    #[test]
    fn errors_carry_their_exit_code_and_print_form() {
        let e = Error::Baseline(BaselineError::red("red".into(), None));
        assert_eq!(e.exit_code(), ExitCode::BaselineRed);
        assert_eq!(e.message(), "error: baseline: red\n");
        assert_eq!(Error::Interrupted.exit_code().code(), 130);
        assert_eq!(
            Error::Interrupted.message(),
            "unguard: interrupted; no mutant finished\n"
        );
        assert_eq!(Error::StdoutClosed.message(), "");
        let io: Result<()> = Err(std::io::Error::other("disk full")).context("writing x");
        let io = io.unwrap_err();
        assert_eq!(io.message(), "error: writing x: disk full\n");
        let nested: Result<()> = Err(io);
        assert_eq!(
            nested.context("merging").unwrap_err().to_string(),
            "merging: writing x: disk full"
        );
    }

    #[test]
    fn flag_errors_print_the_flag_the_value_and_where_to_look() {
        let no_id = FlagError::NoSuchMutation {
            flag: "--only",
            id: "m-1".into(),
            spec: "u.yaml".into(),
        };
        assert_eq!(
            Error::from(no_id).message(),
            "error: --only m-1: no mutation with that id in u.yaml (see `unguard list`)\n"
        );
        let files = |n: usize| (1..=n).map(|i| format!("f{i}.py")).collect::<Vec<_>>();
        let no_file = |files| FlagError::NoSuchFile {
            glob: "x/*".into(),
            spec: "u.yaml".into(),
            files,
        };
        let tail = "; paths are relative to the target root, `*` stays inside one directory, `**` crosses them)";
        assert_eq!(
            no_file(files(2)).to_string(),
            format!("--file x/*: matches the file of no mutation in u.yaml (mutated files: f1.py, f2.py{tail}")
        );
        assert_eq!(
            no_file(files(6)).to_string(),
            format!("--file x/*: matches the file of no mutation in u.yaml (mutated files: f1.py, f2.py, f3.py, f4.py, f5.py, …{tail}")
        );
        let control = |near: &[&str]| FlagError::NoSuchControl {
            control: "auth".into(),
            near: near.iter().map(|n| n.to_string()).collect(),
        };
        assert_eq!(
            control(&[]).to_string(),
            "--control \"auth\": no such control in the catalog; `unguard catalog` lists the ids"
        );
        assert_eq!(
            control(&["a-b", "c"]).to_string(),
            "--control \"auth\": no such control in the catalog (did you mean a-b, c?); `unguard catalog` lists the ids"
        );
        let glob = FlagError::NotAGlob {
            flag: "--skip-file",
            glob: "src/[".into(),
            why: BadGlob("unclosed character class".into()),
        };
        assert_eq!(
            glob.to_string(),
            "--skip-file \"src/[\": not a glob (unclosed character class); globs are repo-relative like `src/**/*.py`"
        );
        let out = Error::from(FlagError::ForeignOutDir("o".into()));
        assert_eq!(out.exit_code(), ExitCode::Failure);
        assert_eq!(
            out.to_string(),
            "output directory o exists and was not made by unguard; refusing to clear it (choose another --out)"
        );
    }

    #[test]
    fn a_baseline_error_prints_its_parts_in_order() {
        let note = NetworkNote {
            text: "  = note\n  = run without them: `cmd`".into(),
            command: "cmd".into(),
        };
        let mut red = BaselineError::red("red\nlog: l".into(), Some(note.clone()));
        red.hints.push("  = hint".into());
        assert_eq!(
            Error::Baseline(red.clone()).message(),
            "error: baseline: red\nlog: l\n  = note\n  = run without them: `cmd`\n  = hint\n"
        );
        let flaky = red.flaky(2, 3);
        assert_eq!(flaky.kind, BaselineKind::Flaky { run: 2, runs: 3 });
        assert_eq!(flaky.network, Some(note));
        assert_eq!(
            flaky.to_string(),
            "flaky baseline: run 2 of 3 differs from run 1, which was green: red\nlog: l\n  = note\n  = run without them: `cmd`\n  = hint"
        );
        assert_eq!(Error::Baseline(flaky).exit_code(), ExitCode::BaselineRed);
    }

    #[test]
    fn template_errors_show_the_line_a_caret_and_the_causes() {
        let mut env = minijinja::Environment::new();
        env.set_debug(true);
        let parsed = env
            .template_from_named_str("t", "ok\n{% if %}x{% endif %}\n")
            .map(drop)
            .context("my.md");
        assert_eq!(
            parsed.unwrap_err().message(),
            "error: my.md, line 2: syntax error: unexpected end of block\n    \
             2 | {% if %}x{% endif %}\n      |       ^^\n"
        );

        env.add_filter(
            "boom",
            |_: minijinja::Value| -> std::result::Result<String, minijinja::Error> {
                Err(
                    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "boom")
                        .with_source(std::io::Error::other("disk full")),
                )
            },
        );
        let tmpl = env.template_from_named_str("t", "é {{ 1|boom }}").unwrap();
        let rendered: Result<String> = tmpl.render(()).context("my.md");
        assert_eq!(
            rendered.context("rendering").unwrap_err().to_string(),
            "rendering: my.md, line 1: invalid operation: boom\n    1 | é {{ 1|boom }}\n      \
             |        ^^^^\ncaused by: disk full"
        );
    }
}
