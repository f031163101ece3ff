//! Command-line interface definition.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;
use crate::results::TimeoutPolicy;
use crate::run::isolation::Isolation;
use crate::run::network::NetworkIsolation;

/// The parsed command line: one subcommand and its flags.
#[derive(Debug, Parser)]
#[command(
    name = "unguard",
    version,
    about = "Mutation testing for the security controls of MCP servers",
    long_about = "Mutation testing for the security controls of MCP servers.\n\n\
For every control declared in unguard.yaml, unguard removes it in a scratch copy of the \
working tree, proves by diff that the mutation arrived, runs the target's own test suite \
under a timeout, and reports whether a test turned red.",
    after_help = EXIT_CODES_HELP
)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Commands,
}

const EXIT_CODES_HELP: &str = "Exit codes (the first that applies wins): 130 interrupted · \
1 invalid command line or spec · 4 baseline red or ran no tests · 5 no-op, ambiguous or \
unreached mutations · 2 gate failed (survived, no-coverage or wrong-reason mutants) · 3 timeout \
under --timeout-is error · 0 ok";

const AUDIT_EXIT_CODES_HELP: &str = "Exit codes (the first that applies wins): 130 interrupted · \
1 invalid command line · 4 baseline red or ran no tests · 2 survived, no-coverage or wrong-reason mutants · \
6 nothing proven (no site, or no mutant reached a verdict) · 5 mutants in files no test loads · \
7 an expected control is absent · 3 timeout under --timeout-is error · 0 ok";

/// unguard's subcommands; each one's doc comment is its `--help` text.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Run every mutation and write the killed/survived table.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(Box<RunArgs>),
    /// Validate the spec and dry-apply every mutation; runs no tests.
    #[command(after_help = EXIT_CODES_HELP)]
    Check(TargetArgs),
    /// One line per mutant: id, file:line, control (takes run's selection flags,
    /// so `unguard list --in-diff main` previews what a PR run covers).
    List(ListArgs),
    /// Render a finished run's results (DIR/outcomes.json) to stdout, without re-running tests.
    Report(ReportArgs),
    /// Join the output dirs of `run --shard k/n` into one, as if the run had not been split.
    #[command(after_help = EXIT_CODES_HELP)]
    Merge(MergeArgs),
    /// Print the JSON Schema of outcomes.json.
    Schema,
    /// Find the MCP security controls of a repo with the built-in catalog and
    /// prove each one: its removal must turn a test red. No spec needed.
    #[command(after_help = AUDIT_EXIT_CODES_HELP)]
    Audit(AuditArgs),
    /// Write a starter unguard.yaml: the detected test command and one
    /// single-site mutation per control the catalog finds.
    Init(InitArgs),
    /// List the built-in catalog of MCP controls (`--markdown` for README form).
    Catalog(CatalogArgs),
    /// Internal: the per-run supervisor unguard starts each test command
    /// under (see `src/run/supervise.rs`). Not for direct use.
    #[command(name = "__supervise", hide = true)]
    Supervise(SuperviseArgs),
    /// Internal: the leader of a run forked from a warm Python interpreter
    /// (see `src/run/warm/client.rs`). Not for direct use.
    #[command(name = "__warm", hide = true)]
    Warm(WarmArgs),
}

/// Flags of the hidden `__warm` subcommand.
#[derive(Debug, Args, Clone)]
pub struct WarmArgs {
    /// The warm interpreter's socket.
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
    /// Where the forked child writes the modules it ended with.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// A `VAR=value` the command line sets for the interpreter.
    #[arg(long, value_name = "VAR=VALUE")]
    pub set: Vec<String>,
    /// How many words of ARGV are the command as written (run when refused).
    #[arg(long, value_name = "N")]
    pub cold_argc: usize,
    /// The command as written, then the interpreter's arguments.
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<String>,
}

/// Flags of the hidden `__supervise` subcommand.
#[derive(Debug, Args, Clone)]
pub struct SuperviseArgs {
    /// Seconds between the group's SIGTERM and the SIGKILL of what is left.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    pub grace: f64,
    /// A cgroup v2 directory to join before the command starts.
    #[arg(long, value_name = "DIR")]
    pub cgroup: Option<PathBuf>,
    /// Start the command in a network namespace of its own (loopback only).
    #[arg(long)]
    pub netns: bool,
    /// The test command.
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<String>,
}

/// Flags of `unguard audit`.
#[derive(Debug, Args, Clone)]
pub struct AuditArgs {
    /// The repository to audit (default: current directory).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// How mutants run (workers, output dir, canary, re-checks, timeouts).
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Extra report files to write.
    #[command(flatten)]
    pub reports: ReportOutputs,
    /// The test command, instead of the detected one (`{junit}` for a JUnit path).
    #[arg(long, value_name = "CMD")]
    pub test_command: Option<String>,
    /// A YAML list of repositories (relative to FILE), each a path or
    /// `{path, test_command, exclude, controls}`: audit each, then print one
    /// matrix of repos × controls. Each repo's results go to OUT/<n>-<name>.
    #[arg(long, value_name = "FILE", conflicts_with = "path")]
    pub portfolio: Option<PathBuf>,
    /// Which files and controls to scan.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// List the sites the catalog finds (file:line, control, mutant id) and
    /// exit: no test command needed, nothing runs.
    #[arg(long, conflicts_with = "portfolio")]
    pub list: bool,
    /// With --list: one JSON document (sites, the sites left out with why, presence-only controls).
    #[arg(long, requires = "list")]
    pub json: bool,
}

/// Which files and controls `audit` and `init` scan.
#[derive(Debug, Args, Clone, Default)]
pub struct ScopeArgs {
    /// Scan only files matching GLOB (repo-relative, e.g. `src/**/*.py`; a
    /// directory means everything under it; repeatable). Files it names are
    /// scanned even where the default excludes would skip them.
    #[arg(long = "file", value_name = "GLOB")]
    pub files: Vec<String>,
    /// Do not scan files matching GLOB (repeatable).
    #[arg(long = "skip-file", value_name = "GLOB")]
    pub skip_files: Vec<String>,
    /// Only this catalog control (repeatable; `unguard catalog` lists the ids).
    #[arg(long = "control", value_name = "ID")]
    pub controls: Vec<String>,
    /// Also scan what is not server code by default: tests, fixtures, scripts/,
    /// docs/, examples/, benchmarks/, vendored and built code.
    #[arg(long)]
    pub no_default_excludes: bool,
    /// Find controls by their shape too (the default): refusal guards,
    /// security predicates, protective settings and wired switches, schema
    /// constraints, protective calls and branches, limit and allow-list
    /// tests, named by the vocabulary table (docs/catalog.md, "Shapes").
    /// Accepted for scripts written when shapes were opt-in.
    #[arg(long, conflicts_with = "no_shapes")]
    pub shapes: bool,
    /// The catalog's matchers alone, without the shapes: the spellings of
    /// the servers the catalog was tuned on (higher precision there, far
    /// lower recall on code nobody tuned it on).
    #[arg(long, conflicts_with_all = ["guards", "shapes_only", "vocabulary"])]
    pub no_shapes: bool,
    /// Also list the refusal guards whose control the vocabulary does not
    /// name, as generic `guard` sites (after the named ones).
    #[arg(long)]
    pub guards: bool,
    /// Find controls by their shape alone, without the catalog's matchers
    /// (its presence checks stay): what the shapes find on code nobody
    /// tuned the catalog on.
    #[arg(long)]
    pub shapes_only: bool,
    /// Add the words of FILE to the vocabulary that names shape sites
    /// (repeatable): a YAML list like the built-in table, e.g.
    /// `- control: auth-required` / `calls: ["require_tenant_user"]`, so
    /// your framework's checks, settings and lists get their control.
    #[arg(long = "vocabulary", value_name = "FILE")]
    pub vocabulary: Vec<std::path::PathBuf>,
}

impl ScopeArgs {
    /// The scan scope these flags describe; an unknown control id or a bad
    /// glob is a usage error.
    pub fn scope(&self) -> crate::error::Result<crate::audit::scan_scope::ScanScope> {
        crate::audit::scan_scope::ScanScope::new(
            &self.files,
            &self.skip_files,
            &self.controls,
            !self.no_default_excludes,
        )
        .and_then(|s| {
            let shapes = !self.no_shapes;
            let s = s.with_shapes(shapes, self.guards, self.shapes_only);
            if self.vocabulary.is_empty() {
                return Ok(s);
            }
            Ok(
                s.with_vocabulary(crate::catalog::shape::Vocabulary::with_files(
                    &self.vocabulary,
                )?),
            )
        })
    }
}

/// Flags of `unguard init`.
#[derive(Debug, Args, Clone)]
pub struct InitArgs {
    /// The repository (default: current directory); writes PATH/unguard.yaml.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The test command, instead of the detected one (`{junit}` for a JUnit path).
    #[arg(long, value_name = "CMD")]
    pub test_command: Option<String>,
    /// Overwrite an existing unguard.yaml.
    #[arg(long)]
    pub force: bool,
    /// Print the spec to stdout instead of writing it.
    #[arg(long)]
    pub stdout: bool,
    /// Which files and controls to scan.
    #[command(flatten)]
    pub scope: ScopeArgs,
}

/// Flags of `unguard catalog`.
#[derive(Debug, Args, Clone)]
pub struct CatalogArgs {
    /// Print the README section (Markdown) instead of the plain list.
    #[arg(long)]
    pub markdown: bool,
}

/// Flags of `unguard report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Output directory of a run (holds outcomes.json).
    #[arg(default_value = "unguard.out")]
    pub dir: PathBuf,
    /// The report format to print.
    #[arg(long, short = 'f', value_enum, default_value = "md")]
    pub format: Format,
    /// Render the Markdown report with this minijinja template instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
}

/// Flags of `unguard merge`.
#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// The shard output dirs (every shard 1/n … n/n exactly once).
    #[arg(required = true, num_args = 1.., value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the merged results go.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Extra report files to write for the merged run.
    #[command(flatten)]
    pub reports: ReportOutputs,
}

/// Extra report files a run or merge writes.
#[derive(Debug, Args, Clone, Default)]
pub struct ReportOutputs {
    /// Also write the Markdown report (PR comment) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Render the Markdown report with this minijinja template.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
}

/// The target and its spec (`run`, `check`, `list`).
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// Target root: the directory the test command runs in (default: current directory).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Spec file (default: PATH/unguard.yaml).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Flags of `unguard list`.
#[derive(Debug, Args, Clone)]
pub struct ListArgs {
    /// The target and its spec.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Which mutations to list.
    #[command(flatten)]
    pub filters: FilterArgs,
}

/// Flags of `unguard run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// The target and its spec.
    #[command(flatten)]
    pub target: TargetArgs,
    /// How mutants run (workers, output dir, canary, re-checks, timeouts).
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Extra report files to write.
    #[command(flatten)]
    pub reports: ReportOutputs,
    /// Run the valid mutants even when others are no-op or ambiguous (exit stays 5).
    #[arg(long)]
    pub keep_going: bool,
    /// Which mutations to run.
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Fail the gate below this score (percent). Overrides `gate.min_score`.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub min_score: Option<f64>,
    /// Undetected mutants the gate tolerates. Overrides `gate.max_survived` (default 0).
    #[arg(long, value_name = "N")]
    pub max_survived: Option<usize>,
    /// Excuse a mutant from score and gate: `ID=REASON` (repeatable; adds to `gate.allow`).
    #[arg(long, value_name = "ID=REASON", value_parser = parse_allow)]
    pub allow: Vec<(String, String)>,
    /// Reuse the verdicts of an earlier run's outcomes.json that nothing
    /// they depend on has changed since (mutation, files, tests, config,
    /// locks, unguard's version); run only the others (docs/incremental.md).
    #[arg(long, value_name = "FILE")]
    pub incremental: Option<PathBuf>,
}

/// How mutants are run (shared by `run` and `audit`).
#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Parallel workers, each with its own scratch copy (default: number of cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    /// Output directory for outcomes.json, diffs and logs (default: ./unguard.out).
    #[arg(long, short = 'o', value_name = "DIR", default_value = "unguard.out")]
    pub out: PathBuf,
    /// Skip the canary (the reach proof that empties each target file once).
    #[arg(long)]
    pub no_canary: bool,
    /// Run every mutant against the full suite: no kill-first (the tests
    /// that can kill a mutant, run before the full suite).
    #[arg(long)]
    pub full: bool,
    /// Start every run of the test command as written: no warm Python
    /// interpreter forked for pytest and unittest runs (also
    /// `UNGUARD_COLD=1`). Verdicts are the same either way; warm runs only
    /// skip the interpreter's start and the third-party imports.
    #[arg(long)]
    pub cold: bool,
    /// No per-test coverage: no coverage run after the baseline, so no
    /// covering tests first and no `no-coverage` verdict (`--full` implies it).
    #[arg(long)]
    pub no_coverage: bool,
    /// Run each baseline N times; any run that differs from the first (red,
    /// hung, another test count) stops the run as a flaky baseline (exit 4).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub baseline_runs: u16,
    /// Re-run each survivor N more times; one that goes red on a re-check is
    /// reported as `flaky`, never as killed.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=100))]
    pub recheck_survivors: u16,
    /// Re-run each kill N more times (default 1); a kill that does not
    /// reproduce (a timing test that failed under load) is reported as
    /// `flaky`, never as killed. 0 turns the confirmation off.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=100))]
    pub recheck_kills: u16,
    /// How a hung suite counts: killed (detected; the default), survived (fails the gate)
    /// or error (exit 3). Overrides `gate.timeout_is`.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub timeout_is: Option<TimeoutPolicy>,
    /// Timeout for every test run, overriding the spec (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// How every process a test run starts is tied to that run and killed
    /// when it ends (whatever it does to its session, group or environment).
    /// Default: $UNGUARD_ISOLATION, else auto. Each log's `# isolation:`
    /// line says what ran.
    #[arg(long, value_enum, value_name = "MODE")]
    pub isolation: Option<Isolation>,
    /// Whether test runs get a network namespace of their own (loopback
    /// only), so no two runs share a port and a confirmation need not wait
    /// for the other workers. Default: $UNGUARD_NETWORK_ISOLATION, else
    /// auto. `outcomes.json` says which each command's runs had
    /// (`baselines[].network`).
    #[arg(long, value_enum, value_name = "MODE")]
    pub network_isolation: Option<NetworkIsolation>,
}

/// Which mutations `run` and `list` select (`--only`, `--skip`, `--file`,
/// `--in-diff`, `--shard`).
#[derive(Debug, Args, Clone, Default)]
pub struct FilterArgs {
    /// Run only these mutation ids.
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub only: Vec<String>,
    /// Leave out these mutation ids.
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub skip: Vec<String>,
    /// Run only mutations of files matching GLOB (relative to PATH; repeatable).
    #[arg(long = "file", value_name = "GLOB")]
    pub files: Vec<String>,
    /// Run only mutants whose site lines changed since the git rev BASE
    /// (committed, staged, unstaged and untracked changes).
    #[arg(long, value_name = "BASE")]
    pub in_diff: Option<String>,
    /// Run shard K of N, 1-based: `--shard 1/3`, `2/3`, `3/3`. Mutants are dealt
    /// round-robin in spec order; join the shards' dirs with `unguard merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<crate::results::Shard>,
}

fn parse_shard(s: &str) -> Result<crate::results::Shard, String> {
    let err = || format!("`{s}`: expected K/N with 1 ≤ K ≤ N, e.g. 1/3 (shards are 1-based)");
    let (k, n) = s.split_once('/').ok_or_else(err)?;
    let k: usize = k.trim().parse().map_err(|_| err())?;
    let n: usize = n.trim().parse().map_err(|_| err())?;
    if n == 0 || k == 0 || k > n {
        return Err(err());
    }
    Ok(crate::results::Shard { k, n })
}

fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}`: expected a percentage from 0 to 100")),
    }
}

fn parse_allow(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((id, reason)) if !id.trim().is_empty() && !reason.trim().is_empty() => {
            Ok((id.trim().to_string(), reason.trim().to_string()))
        }
        _ => Err(format!(
            "`{s}`: expected ID=REASON, e.g. --allow 'handle-expiry=tracked in #123'"
        )),
    }
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::spec::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("timeout must be greater than zero".into());
    }
    Ok(d)
}

// The value enums of the flags, by hand: the report and results modules know
// nothing of the command line. Each help text is its variant's doc comment
// without the final period (what `#[derive(ValueEnum)]` made of it).

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Format::Md,
            Format::Json,
            Format::Html,
            Format::Junit,
            Format::Sarif,
            Format::Stryker,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            Format::Md => (
                "md",
                "The PR comment (Markdown, from templates/pr-comment.md or --template)",
            ),
            Format::Json => ("json", "outcomes.json itself (`\"schema\": \"unguard/1\"`)"),
            Format::Html => (
                "html",
                "Self-contained HTML page: summary, filterable table, diffs",
            ),
            Format::Junit => (
                "junit",
                "JUnit XML: one testcase per mutant, survived/no-coverage/wrong-reason as failures",
            ),
            Format::Sarif => (
                "sarif",
                "SARIF 2.1.0: one result per undetected mutant (survived, no-coverage, wrong-reason), \
                 at the mutated region",
            ),
            Format::Stryker => (
                "stryker",
                "Stryker mutation-testing-report-schema JSON (HTML viewer, dashboard)",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

impl ValueEnum for TimeoutPolicy {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            TimeoutPolicy::Killed,
            TimeoutPolicy::Survived,
            TimeoutPolicy::Error,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            TimeoutPolicy::Killed => (
                "killed",
                "Detected (counts toward the score); listed separately; exit unaffected",
            ),
            TimeoutPolicy::Survived => ("survived", "Not detected: fails the gate (exit 2)"),
            TimeoutPolicy::Error => ("error", "Any timeout makes the run exit 3"),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

impl ValueEnum for Isolation {
    fn value_variants<'a>() -> &'a [Self] {
        &[Isolation::Auto, Isolation::Cgroup, Isolation::Subreaper]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            Isolation::Auto => (
                "auto",
                "A per-run supervisor (child subreaper), plus a per-run cgroup v2 emptied with \
                 cgroup.kill where unguard may create one below its own, until joining one \
                 takes over 2 ms",
            ),
            Isolation::Cgroup => (
                "cgroup",
                "Like auto, but keeps the per-run cgroup whatever joining it costs",
            ),
            Isolation::Subreaper => (
                "subreaper",
                "The per-run supervisor alone: no cgroup (works for any user)",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

impl ValueEnum for NetworkIsolation {
    fn value_variants<'a>() -> &'a [Self] {
        &[NetworkIsolation::Auto, NetworkIsolation::Off]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            NetworkIsolation::Auto => (
                "auto",
                "With more than one worker, a network namespace per run (loopback only) for \
                 every test command whose baseline is the same inside one, where the kernel \
                 allows one",
            ),
            NetworkIsolation::Off => (
                "off",
                "Every run shares the machine's network; confirmations run alone",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_policy_values_are_its_names_in_outcomes_json() {
        for p in TimeoutPolicy::value_variants() {
            let name = p.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(serde_json::to_value(p).unwrap(), name.as_str());
            assert_eq!(TimeoutPolicy::from_str(&name, false), Ok(*p));
        }
    }

    #[test]
    fn every_format_parses_back_from_its_value() {
        for f in Format::value_variants() {
            let name = f.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(Format::from_str(&name, false), Ok(*f));
        }
        assert_eq!(Format::value_variants().len(), 6);
    }
}
