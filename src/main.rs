//! unguard's entry point: parse flags, call in, print the error (if any)
//! once, exit with its code.

use clap::Parser;
use unguard::error::ExitCode;
use unguard::{cli, commands};

fn main() -> std::process::ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // --help and --version are not errors; every usage error exits 1.
            let code = if e.use_stderr() {
                ExitCode::Failure
            } else {
                ExitCode::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    let result = match &cli.command {
        cli::Commands::Run(args) => commands::run(args),
        cli::Commands::Check(t) => commands::check(t),
        cli::Commands::List(a) => commands::list(a),
        cli::Commands::Report(a) => commands::report(a),
        cli::Commands::Merge(a) => commands::merge(a),
        cli::Commands::Schema => commands::schema(),
        cli::Commands::Audit(a) => commands::audit(a),
        cli::Commands::Init(a) => commands::init(a),
        cli::Commands::Catalog(a) => commands::catalog(a),
        cli::Commands::Supervise(a) => commands::supervise(a),
        cli::Commands::Warm(a) => commands::warm(a),
    };
    result.unwrap_or_else(|e| e.print()).into()
}
