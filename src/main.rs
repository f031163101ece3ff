//! unguard's entry point: parse flags, call in, exit with the gate's code.

use clap::Parser;
use unguard::{cli, commands, gate};

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // --help and --version are not errors; every usage error exits 1.
            let code = if e.use_stderr() { gate::EXIT_USAGE } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match &cli.command {
        cli::Commands::Run(args) => commands::run(args),
        cli::Commands::Check(t) => commands::check(t),
        cli::Commands::List(a) => commands::list(a),
        cli::Commands::Report(a) => commands::report(a),
        cli::Commands::Merge(a) => commands::merge(a),
        cli::Commands::Schema => commands::schema(),
        cli::Commands::Audit(a) => commands::audit(a),
        cli::Commands::Init(a) => commands::init(a),
        cli::Commands::Catalog(a) => commands::catalog(a),
    };
    std::process::exit(code);
}
