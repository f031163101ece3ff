//! The subcommands: glue from parsed flags to the stages, and the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::{
    AuditArgs, CatalogArgs, ExecArgs, FilterArgs, InitArgs, ListArgs, MergeArgs, ReportArgs,
    ReportOutputs, RunArgs, TargetArgs,
};
use crate::diag::{Diagnostic, Diagnostics, SourceLines};
use crate::engine::{self, Abort, EngineOptions};
use crate::gate::{EXIT_BASELINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_SPEC, EXIT_USAGE};
use crate::plan::{self, Entry, Filters, Plan};
use crate::report::markdown::Template;
use crate::report::Format;
use crate::results::{Allow, GateConfig, Outcome, Results, TimeoutPolicy};
use crate::spec::{self, Spec};
use crate::{audit, changes, merge, report, workspace};

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

/// Turn the filter flags into [`Filters`] (reading the git diff for `--in-diff`).
fn filters(spec: &Spec, f: &FilterArgs) -> Result<Filters, String> {
    let mut files = Vec::new();
    for g in &f.files {
        files.push(
            glob::Pattern::new(g.trim_start_matches("./"))
                .map_err(|e| format!("--file {g}: bad glob: {e}"))?,
        );
    }
    let in_diff = match &f.in_diff {
        Some(base) => Some((
            base.clone(),
            changes::since(&spec.root, base).map_err(|e| format!("{e:#}"))?,
        )),
        None => None,
    };
    Ok(Filters {
        only: f.only.clone(),
        skip: f.skip.clone(),
        files,
        in_diff,
        shard: f.shard,
    })
}

/// Load the spec and pre-apply every selected mutation; on error, the exit code.
fn load_plan(t: &TargetArgs, f: &FilterArgs) -> Result<(Spec, Plan), i32> {
    let spec = load(t)?;
    let plan = filters(&spec, f)
        .and_then(|filters| plan::build(&spec, &filters).map_err(|e| e.to_string()))
        .map_err(|e| {
            eprintln!("error: {e}");
            EXIT_USAGE
        })?;
    Ok((spec, plan))
}

/// Print every mutation that cannot be applied, with its position, a caret
/// snippet of the spec and the fix.
/// Each spec file read and indexed once, however many diagnostics point into it.
#[derive(Default)]
struct SpecSources(std::collections::HashMap<String, SourceLines>);

impl SpecSources {
    fn snippet(&mut self, d: Diagnostic, path: &str) -> Diagnostic {
        self.0
            .entry(path.to_string())
            .or_insert_with(|| SourceLines::new(&std::fs::read_to_string(path).unwrap_or_default()))
            .snippet(d)
    }
}

fn print_rejected(plan: &Plan) -> usize {
    let mut n = 0;
    let mut sources = SpecSources::default();
    for r in plan.rejected() {
        n += 1;
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
        .with_fix(r.problem.fix());
        eprintln!("{}", sources.snippet(d, &r.pos.path));
    }
    n
}

pub fn check(t: &TargetArgs) -> i32 {
    let plan = match load_plan(t, &FilterArgs::default()) {
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

pub fn list(args: &ListArgs) -> i32 {
    let plan = match load_plan(&args.target, &args.filters) {
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
    let (spec, plan) = match load_plan(&args.target, &args.filters) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    // The gate: unguard.yaml, overridden and extended by flags.
    let mut gate = spec.gate.clone();
    if let Some(min) = args.min_score {
        gate.min_score = Some(min);
    }
    if let Some(max) = args.max_survived {
        gate.max_survived = max;
    }
    for (id, reason) in &args.allow {
        if !spec.mutations.iter().any(|m| &m.id == id) {
            eprintln!(
                "error: --allow {id}: no mutation with that id in {} (see `unguard list`)",
                spec.spec_path.display()
            );
            return EXIT_USAGE;
        }
        gate.allow.retain(|a| &a.id != id);
        gate.allow.push(Allow {
            id: id.clone(),
            reason: reason.clone(),
        });
    }
    let template = match read_template(&args.reports) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let rejected = print_rejected(&plan);
    if rejected > 0 && !args.keep_going {
        eprintln!(
            "{rejected} mutation(s) cannot be applied; nothing was run (fix the spec, or pass --keep-going to run the others)"
        );
        return EXIT_SPEC;
    }
    let policy = args
        .exec
        .timeout_is
        .or(spec.timeout_is)
        .unwrap_or(TimeoutPolicy::Killed);
    let (out, results) = match execute_plan(
        &spec,
        plan,
        &args.exec,
        policy,
        gate,
        &display(&args.target.path),
    ) {
        Ok(r) => r,
        Err(code) => return code,
    };
    // Diffs and logs are already in the dir; now the model and reports.
    publish(&out, &Arc::new(results), &args.reports, template.as_ref())
}

/// Copy the tree, run baseline, canaries and mutants of `plan`, and return
/// the out dir and the results; on an early stop, the exit code (already
/// explained on stderr).
fn execute_plan(
    spec: &Spec,
    plan: Plan,
    exec: &ExecArgs,
    policy: TimeoutPolicy,
    gate: GateConfig,
    root_display: &str,
) -> Result<(PathBuf, Results), i32> {
    if let Err(e) = engine::prepare_out_dir(&exec.out) {
        eprintln!("error: {e:#}");
        return Err(EXIT_USAGE);
    }
    let out = exec.out.canonicalize().unwrap_or_else(|_| exec.out.clone());
    let manifest = match workspace::manifest(&spec.root, std::slice::from_ref(&out), &spec.link) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: listing the files of {}: {e:#}", spec.root.display());
            return Err(EXIT_USAGE);
        }
    };
    // Every targeted file must be part of the copy (not ignored by git).
    let mut missing = Diagnostics::default();
    let mut sources = SpecSources::default();
    for m in plan.ready() {
        if manifest.entries.binary_search(&m.file).is_err() {
            let d = Diagnostic::new(
                &m.pos.path,
                m.pos.line,
                m.pos.col,
                format!(
                    "mutation `{}`: {} is not part of the copied tree (ignored by git?)",
                    m.id, m.file
                ),
            )
            .with_fix("mutate a tracked or untracked-but-not-ignored source file");
            missing.push(sources.snippet(d, &m.pos.path));
        }
    }
    if !missing.is_empty() {
        eprint!("{missing}");
        return Err(EXIT_USAGE);
    }
    if let Some(shard) = plan.selection.shard {
        eprintln!(
            "unguard: shard {shard}: {} of {} selected mutation(s)",
            plan.entries.len(),
            plan.selection.planned.len()
        );
    }
    if plan.entries.is_empty() {
        eprintln!(
            "unguard: no mutation selected{}",
            if plan.selection.filters.is_empty() && plan.selection.shard.is_none() {
                String::new()
            } else {
                format!(
                    " by {}",
                    plan.selection
                        .filters
                        .iter()
                        .cloned()
                        .chain(plan.selection.shard.map(|s| format!("--shard {s}")))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        );
    }
    eprintln!(
        "unguard: {} mutation(s) in {} ({} files copied{}{}, {} linked: {})",
        plan.entries.len(),
        root_display,
        manifest.entries.len() + manifest.opaque.len(),
        if manifest.from_git { " from git" } else { "" },
        if manifest.opaque.is_empty() {
            String::new()
        } else {
            format!(
                ", {} of them with names that are not UTF-8",
                manifest.opaque.len()
            )
        },
        manifest.links.len(),
        if manifest.links.is_empty() {
            "-".to_string()
        } else {
            manifest.links.join(", ")
        }
    );
    let jobs = exec.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = EngineOptions {
        out: out.clone(),
        jobs,
        no_canary: exec.no_canary,
        timeout_policy: policy,
        timeout: exec.timeout,
        root_display: root_display.to_string(),
        gate,
        baseline_runs: usize::from(exec.baseline_runs),
        recheck_survivors: usize::from(exec.recheck_survivors),
        thresholds: spec.thresholds,
        selection: plan.selection.clone(),
    };
    let results = match engine::execute(spec, plan, manifest, opts) {
        Ok(r) => r,
        Err(Abort::BaselineRed(msg)) => {
            eprintln!("error: baseline: {msg}");
            return Err(EXIT_BASELINE);
        }
        Err(Abort::Spec(d)) => {
            eprint!("{d}");
            return Err(EXIT_USAGE);
        }
        Err(Abort::Interrupted) => {
            eprintln!("unguard: interrupted; no mutant finished");
            return Err(EXIT_INTERRUPTED);
        }
        Err(Abort::Internal(e)) => {
            eprintln!("error: {e:#}");
            return Err(EXIT_USAGE);
        }
    };

    Ok((out, results))
}

fn read_template(r: &ReportOutputs) -> Result<Option<Template>, i32> {
    read_template_file(r.template.as_deref())
}

fn read_template_file(path: Option<&Path>) -> Result<Option<Template>, i32> {
    match path {
        None => Ok(None),
        Some(p) => std::fs::read_to_string(p)
            .map(|text| {
                Some(Template {
                    name: display(p),
                    text,
                })
            })
            .map_err(|e| {
                eprintln!("error: --template {}: {e}", p.display());
                EXIT_USAGE
            }),
    }
}

/// Write the model and the reports into `out`, print the table and the gate;
/// returns the exit code.
fn publish(
    out: &Path,
    results: &Arc<Results>,
    reports: &ReportOutputs,
    template: Option<&Template>,
) -> i32 {
    let mut exit = results.gate.exit_code;
    let mut fail = |msg: String| {
        eprintln!("error: {msg}");
        exit = exit.max(EXIT_USAGE);
    };
    if let Err(e) = report::write_outcomes(out, results) {
        fail(format!("{e:#}"));
    }
    match report::render(results, Format::Md, template) {
        Ok(md) => {
            for path in [Some(out.join("report.md")), reports.markdown.clone()]
                .into_iter()
                .flatten()
            {
                if let Err(e) = std::fs::write(&path, &md) {
                    fail(format!("writing {}: {e}", path.display()));
                }
            }
            if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty())
            {
                if let Err(e) = append(Path::new(&summary), &md) {
                    fail(format!(
                        "appending to $GITHUB_STEP_SUMMARY ({}): {e}",
                        Path::new(&summary).display()
                    ));
                }
            }
        }
        Err(e) => fail(format!("rendering the Markdown report: {e:#}")),
    }
    // Rendered straight into the file: 10,000 mutants make ~20 MB of HTML.
    let html = out.join("report.html");
    let written = std::fs::File::create(&html)
        .map_err(anyhow::Error::from)
        .and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            report::render_to(results, Format::Html, None, &mut w)?;
            Ok(w.flush()?)
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&html);
        match e.downcast_ref::<std::io::Error>() {
            Some(io) => fail(format!("writing {}: {io}", html.display())),
            None => fail(format!("rendering the HTML report: {e:#}")),
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
    println!("{}", report::table(results));
    println!();
    println!("{}", results.summary.line());
    let findings = report::findings(results);
    if !findings.is_empty() {
        println!();
        for f in findings {
            println!("{f}");
        }
    }
    for n in &results.gate.notes {
        println!("note: {n}");
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
    println!("output: {}", display(out));
    exit
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        f.write_all(b"\n")?;
    }
    Ok(())
}

pub fn report(args: &ReportArgs) -> i32 {
    let template = match read_template_file(args.template.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let results = match report::read_outcomes(&args.dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e:#}");
            return EXIT_USAGE;
        }
    };
    let results = Arc::new(results);
    let rendered = match args.format {
        // Written as they are made (10,000 mutants make ~20 MB of each).
        Format::Json | Format::Html => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            report::render_to(&results, args.format, None, &mut out).and_then(|()| Ok(out.flush()?))
        }
        // The others in full first: a failed render writes nothing.
        _ => report::render(&results, args.format, template.as_ref()).and_then(|text| {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            Ok(out.flush()?)
        }),
    };
    match rendered {
        Ok(()) => EXIT_OK,
        // stdout closed (e.g. `| head`): nothing to say.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some() => EXIT_USAGE,
        Err(e) => {
            eprintln!("error: {e:#}");
            EXIT_USAGE
        }
    }
}

pub fn merge(args: &MergeArgs) -> i32 {
    let template = match read_template(&args.reports) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let merged = match merge::merge(&args.dirs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e:#}");
            return EXIT_USAGE;
        }
    };
    if let Err(e) = engine::prepare_out_dir(&args.out)
        .map_err(|e| format!("{e:#}"))
        .and_then(|_| merge::copy_artifacts(&args.dirs, &args.out).map_err(|e| e.to_string()))
    {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    eprintln!(
        "unguard: merged {} shard(s): {} mutant(s)",
        args.dirs.len(),
        merged.mutants.len()
    );
    publish(
        &args.out,
        &Arc::new(merged),
        &args.reports,
        template.as_ref(),
    )
}

pub fn schema() -> i32 {
    let schema = schemars::schema_for!(Results);
    match serde_json::to_string_pretty(&schema) {
        Ok(s) => {
            println!("{s}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}

/// One repo's audit: survey, run, print; returns (exit code, rows).
fn audit_one(
    path: &Path,
    exec: &ExecArgs,
    reports: &ReportOutputs,
    test_command: Option<&str>,
) -> (i32, Option<(audit::Survey, Vec<audit::ControlRow>)>) {
    let template = match read_template(reports) {
        Ok(t) => t,
        Err(code) => return (code, None),
    };
    let out_abs = exec.out.canonicalize().unwrap_or_else(|_| exec.out.clone());
    let survey = match audit::survey(path, std::slice::from_ref(&out_abs)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return (EXIT_USAGE, None);
        }
    };
    let test = match audit::test_config(&survey.detected, test_command) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", display(path));
            return (EXIT_USAGE, None);
        }
    };
    eprintln!(
        "unguard audit: {}: {}; tests: `{}`; {} catalog operator(s) apply, {} site(s) found",
        display(path),
        if survey.detected.sdks.is_empty() {
            "no MCP SDK import seen".to_string()
        } else {
            survey.detected.sdks.join(", ")
        },
        test.command.display(),
        survey.operators.len(),
        survey.found.len()
    );
    let spec = audit::audit_spec(&survey, test, exec.timeout);
    let plan = match plan::build(&spec, &Filters::default()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return (EXIT_USAGE, None);
        }
    };
    let policy = exec.timeout_is.unwrap_or(TimeoutPolicy::Killed);
    let (out, results) = match execute_plan(
        &spec,
        plan,
        exec,
        policy,
        GateConfig::default(),
        &display(path),
    ) {
        Ok(r) => r,
        Err(code) => return (code, Some((survey, Vec::new()))),
    };
    let results = Arc::new(results);
    let code = publish(&out, &results, reports, template.as_ref());
    let rows = audit::by_control(&survey, Some(&*results));
    let grouped = audit::grouped_markdown(&survey, &rows);
    println!();
    println!("{grouped}");
    if let Err(e) = std::fs::write(out.join("audit.md"), &grouped) {
        eprintln!("error: writing {}: {e}", out.join("audit.md").display());
        return (code.max(EXIT_USAGE), Some((survey, rows)));
    }
    (code, Some((survey, rows)))
}

pub fn audit(args: &AuditArgs) -> i32 {
    let Some(portfolio) = &args.portfolio else {
        return audit_one(
            &args.path,
            &args.exec,
            &args.reports,
            args.test_command.as_deref(),
        )
        .0;
    };
    let text = match std::fs::read_to_string(portfolio) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: --portfolio {}: {e}", portfolio.display());
            return EXIT_USAGE;
        }
    };
    let repos: Vec<String> = match serde_saphyr::from_str(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "error: {}: {e}\n  = fix: the portfolio is a YAML list of repository paths, e.g. `- ../server-a`",
                portfolio.display()
            );
            return EXIT_USAGE;
        }
    };
    if repos.is_empty() {
        eprintln!(
            "error: {}: the portfolio lists no repository",
            portfolio.display()
        );
        return EXIT_USAGE;
    }
    let base = portfolio.parent().unwrap_or(Path::new("."));
    if let Err(e) = engine::prepare_out_dir(&args.exec.out) {
        eprintln!("error: {e:#}");
        return EXIT_USAGE;
    }
    let mut worst = EXIT_OK;
    let mut columns: Vec<(String, Option<Vec<audit::ControlRow>>)> = Vec::new();
    for (i, repo) in repos.iter().enumerate() {
        let path = base.join(repo);
        let name = path
            .file_name()
            .map_or_else(|| repo.clone(), |n| n.to_string_lossy().into_owned());
        let mut exec = args.exec.clone();
        exec.out = args.exec.out.join(format!("{}-{}", i + 1, name));
        eprintln!("\n== {} ({}/{})", display(&path), i + 1, repos.len());
        let (code, found) = audit_one(&path, &exec, &args.reports, args.test_command.as_deref());
        if code == EXIT_INTERRUPTED {
            return code;
        }
        worst = crate::gate::worst(worst, code);
        columns.push((name, found.map(|(_, rows)| rows)));
    }
    println!("\n## unguard audit portfolio\n");
    println!("{}", audit::portfolio_matrix(&columns));
    worst
}

pub fn init(args: &InitArgs) -> i32 {
    let target = args.path.join("unguard.yaml");
    if target.exists() && !args.force && !args.stdout {
        eprintln!(
            "error: {} exists; pass --force to overwrite it, or --stdout to print the starter spec",
            target.display()
        );
        return EXIT_USAGE;
    }
    let survey = match audit::survey(&args.path, &[]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let test = match audit::test_config(&survey.detected, args.test_command.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", display(&args.path));
            return EXIT_USAGE;
        }
    };
    let reason = match (&args.test_command, &survey.detected.test) {
        (Some(_), _) => "given with --test-command".to_string(),
        (None, Some(t)) => format!("detected: {}", t.reason),
        (None, None) => String::new(),
    };
    let yaml = crate::init::render(&survey, &test, &reason);
    if args.stdout {
        print!("{yaml}");
        return EXIT_OK;
    }
    if let Err(e) = std::fs::write(&target, &yaml) {
        eprintln!("error: writing {}: {e}", target.display());
        return EXIT_USAGE;
    }
    eprintln!(
        "unguard init: wrote {} with {} mutation(s); review it, then `unguard check` and `unguard run`",
        target.display(),
        survey.found.len()
    );
    for u in &survey.unanchored {
        eprintln!(
            "warning: {} at {}:{} left out: {}",
            u.operator.id, u.site.file, u.site.line, u.why
        );
    }
    EXIT_OK
}

pub fn catalog(args: &CatalogArgs) -> i32 {
    if args.markdown {
        print!("{}", crate::catalog::readme_section());
        return EXIT_OK;
    }
    let mut out = std::io::stdout().lock();
    for op in crate::catalog::catalog() {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}",
            op.id,
            audit::rule_text(op),
            match op.kind {
                crate::catalog::OperatorKind::Audit => "audit",
                crate::catalog::OperatorKind::Template => "init template",
            },
            op.control
        );
    }
    EXIT_OK
}
