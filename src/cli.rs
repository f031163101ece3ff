//! Command-line interface definition.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::results::TimeoutPolicy;

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
    #[command(subcommand)]
    pub command: Commands,
}

const EXIT_CODES_HELP: &str = "Exit codes (the first that applies wins): 130 interrupted · \
1 invalid command line or spec · 4 baseline red or ran no tests · 5 no-op, ambiguous or \
unreached mutations · 2 gate failed (survived or wrong-reason mutants) · 3 timeout under \
--timeout-is error · 0 ok";

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Run every mutation and write the killed/survived table.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// Validate the spec and dry-apply every mutation; runs no tests.
    #[command(after_help = EXIT_CODES_HELP)]
    Check(TargetArgs),
    /// One line per mutant: id, file:line, control.
    List(TargetArgs),
}

#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// Target root: the directory the test command runs in (default: current directory).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Spec file (default: PATH/unguard.yaml).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Parallel workers, each with its own scratch copy (default: number of cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    /// Output directory for outcomes.json, diffs and logs (default: ./unguard.out).
    #[arg(long, short = 'o', value_name = "DIR", default_value = "unguard.out")]
    pub out: PathBuf,
    /// Also write the Markdown report (PR comment) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Run the valid mutants even when others are no-op or ambiguous (exit stays 5).
    #[arg(long)]
    pub keep_going: bool,
    /// Skip the canary (the reach proof that empties each target file once).
    #[arg(long)]
    pub no_canary: bool,
    /// How a hung suite counts: killed (detected), survived (fails the gate) or error (exit 3).
    #[arg(long, value_enum, default_value = "killed", value_name = "POLICY")]
    pub timeout_is: TimeoutPolicy,
    /// Timeout for every test run, overriding the spec (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Run only these mutation ids (repeatable).
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub only: Vec<String>,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::spec::parse_duration(s)?;
    if d.is_zero() {
        return Err("timeout must be greater than zero".into());
    }
    Ok(d)
}
