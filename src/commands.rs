//! The subcommands: glue from parsed flags to the stages, and the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{RunArgs, TargetArgs};
use crate::diag::{Diagnostic, Diagnostics};
use crate::engine::{self, Abort, EngineOptions};
use crate::gate::{EXIT_BASELINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_SPEC, EXIT_USAGE};
use crate::plan::{self, Entry, Plan};
use crate::results::Outcome;
use crate::spec::{self, Spec};
use crate::{report, workspace};

fn spec_path(t: &TargetArgs) -> PathBuf {
    t.config
        .clone()
        .unwrap_or_else(|| t.path.join("unguard.yaml"))
}

fn load(t: &TargetArgs) -> Result<Spec, i32> {
    spec::load(&t.path, &spec_path(t)).map_err(|e| {
        eprint!("{e}");
        EXIT_USAGE
    })
}

fn build_plan(spec: &Spec, only: &[String]) -> Result<Plan, i32> {
    plan::build(spec, only).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })
}

/// Load the spec and pre-apply every mutation; on error, the exit code.
fn load_plan(t: &TargetArgs, only: &[String]) -> Result<(Spec, Plan), i32> {
    let spec = load(t)?;
    let plan = build_plan(&spec, only)?;
    Ok((spec, plan))
}

/// Print every mutation that cannot be applied, with its position, a caret
/// snippet of the spec and the fix.
fn print_rejected(plan: &Plan) -> usize {
    let mut n = 0;
    for r in plan.rejected() {
        n += 1;
        let source = std::fs::read_to_string(&r.pos.path).unwrap_or_default();
        let d = Diagnostic::new(
            &r.pos.path,
            r.pos.line,
            r.pos.col,
            format!(
                "{}: mutation `{}` on {}: {}",
                r.problem.kind(),
                r.id,
                r.file,
                r.problem.detail()
            ),
        )
        .with_source(&source)
        .with_fix(r.problem.fix());
        eprintln!("{d}");
    }
    n
}

pub fn check(t: &TargetArgs) -> i32 {
    let plan = match load_plan(t, &[]) {
        Ok((_, plan)) => plan,
        Err(code) => return code,
    };
    let mut out = std::io::stdout().lock();
    for e in &plan.entries {
        if let Entry::Ready(m) = e {
            let _ = writeln!(
                out,
                "ok  {}  {}:{}  ({} site{}, +{} -{} lines)",
                m.id,
                m.file,
                m.line,
                m.sites,
                if m.sites == 1 { "" } else { "s" },
                m.diff
                    .lines()
                    .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                    .count(),
                m.diff
                    .lines()
                    .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                    .count(),
            );
        }
    }
    let bad = print_rejected(&plan);
    let total = plan.entries.len();
    if bad > 0 {
        eprintln!("{bad} of {total} mutations cannot be applied");
        EXIT_SPEC
    } else {
        let _ = writeln!(out, "{total} mutations apply cleanly");
        EXIT_OK
    }
}

pub fn list(t: &TargetArgs) -> i32 {
    let plan = match load_plan(t, &[]) {
        Ok((_, plan)) => plan,
        Err(code) => return code,
    };
    let mut out = std::io::stdout().lock();
    for e in &plan.entries {
        match e {
            Entry::Ready(m) => {
                let _ = writeln!(out, "{}\t{}:{}\t{}", m.id, m.file, m.line, m.control);
            }
            Entry::Rejected(r) => {
                let _ = writeln!(
                    out,
                    "{}\t{}:?\t{}\t[{}]",
                    r.id,
                    r.file,
                    r.control,
                    r.problem.kind()
                );
            }
        }
    }
    EXIT_OK
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

pub fn run(args: &RunArgs) -> i32 {
    let (spec, plan) = match load_plan(&args.target, &args.only) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let rejected = print_rejected(&plan);
    if rejected > 0 && !args.keep_going {
        eprintln!(
            "{rejected} mutation(s) cannot be applied; nothing was run (fix the spec, or pass --keep-going to run the others)"
        );
        return EXIT_SPEC;
    }
    if let Err(e) = engine::prepare_out_dir(&args.out) {
        eprintln!("error: {e:#}");
        return EXIT_USAGE;
    }
    let out = args.out.canonicalize().unwrap_or_else(|_| args.out.clone());
    let manifest = match workspace::manifest(&spec.root, std::slice::from_ref(&out), &spec.link) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: listing the files of {}: {e:#}", spec.root.display());
            return EXIT_USAGE;
        }
    };
    // Every targeted file must be part of the copy (not ignored by git).
    let mut missing = Diagnostics::default();
    for m in plan.ready() {
        if manifest.entries.binary_search(&m.file).is_err() {
            let source = std::fs::read_to_string(&m.pos.path).unwrap_or_default();
            missing.push(
                Diagnostic::new(
                    &m.pos.path,
                    m.pos.line,
                    m.pos.col,
                    format!(
                        "mutation `{}`: {} is not part of the copied tree (ignored by git?)",
                        m.id, m.file
                    ),
                )
                .with_source(&source)
                .with_fix("mutate a tracked or untracked-but-not-ignored source file"),
            );
        }
    }
    if !missing.is_empty() {
        eprint!("{missing}");
        return EXIT_USAGE;
    }
    eprintln!(
        "unguard: {} mutation(s) in {} ({} files copied{}, {} linked: {})",
        plan.entries.len(),
        display(&args.target.path),
        manifest.entries.len(),
        if manifest.from_git { " from git" } else { "" },
        manifest.links.len(),
        if manifest.links.is_empty() {
            "-".to_string()
        } else {
            manifest.links.join(", ")
        }
    );
    let jobs = args.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = EngineOptions {
        out: out.clone(),
        jobs,
        no_canary: args.no_canary,
        timeout_policy: args.timeout_is,
        timeout: args.timeout,
        root_display: display(&args.target.path),
    };
    let results = match engine::execute(&spec, plan, manifest, opts) {
        Ok(r) => r,
        Err(Abort::BaselineRed(msg)) => {
            eprintln!("error: baseline: {msg}");
            return EXIT_BASELINE;
        }
        Err(Abort::Spec(d)) => {
            eprint!("{d}");
            return EXIT_USAGE;
        }
        Err(Abort::Interrupted) => {
            eprintln!("unguard: interrupted; no mutant finished");
            return EXIT_INTERRUPTED;
        }
        Err(Abort::Internal(e)) => {
            eprintln!("error: {e:#}");
            return EXIT_USAGE;
        }
    };

    // Outputs: diffs and logs are already in the dir; now the model and reports.
    let mut exit = results.gate.exit_code;
    if let Err(e) = report::write_outcomes(&out, &results) {
        eprintln!("error: {e:#}");
        exit = exit.max(EXIT_USAGE);
    }
    let md = report::markdown(&results);
    if let Some(path) = &args.markdown {
        if let Err(e) = std::fs::write(path, &md) {
            eprintln!("error: writing {}: {e}", path.display());
            exit = exit.max(EXIT_USAGE);
        }
    }
    if results.interrupted {
        eprintln!(
            "unguard: interrupted; {} mutant(s) finished",
            results
                .mutants
                .iter()
                .filter(|m| !matches!(m.outcome, Outcome::NoOp | Outcome::Ambiguous))
                .count()
        );
    }
    println!("{}", report::table(&results));
    println!();
    println!("{}", results.summary.line());
    let findings = report::findings(&results);
    if !findings.is_empty() {
        println!();
        for f in findings {
            println!("{f}");
        }
    }
    println!();
    if results.gate.passed {
        println!("gate: passed");
    } else {
        println!(
            "gate: failed (exit {}): {}",
            results.gate.exit_code,
            results.gate.reasons.join("; ")
        );
    }
    println!("output: {}", display(&out));
    exit
}
