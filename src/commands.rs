//! The subcommands: each maps its flags onto the stages and returns the exit
//! code, or the error that stopped it (printed once, by `main`).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::audit::portfolio;
use crate::cli::{
    AuditArgs, CatalogArgs, ExecArgs, FilterArgs, InitArgs, ListArgs, MergeArgs, ReportArgs,
    RunArgs, SuperviseArgs, TargetArgs, WarmArgs,
};
use crate::engine::{self, EngineOptions};
use crate::error::{Context, Error, ExitCode, Result};
use crate::globs::Globs;
use crate::plan::changes;
use crate::plan::{self, Entry, Filters, Plan};
use crate::report::markdown::Template;
use crate::report::publish;
use crate::report::Format;
use crate::results::{GateConfig, Results, TimeoutPolicy};
use crate::run::isolation::Isolation;
use crate::run::network::NetworkIsolation;
use crate::spec::{self, Spec};
use crate::{audit, gate, outdir, report};

pub mod merge;

/// Load the spec of `t` and pre-apply every mutation the filters select.
fn load_plan(t: &TargetArgs, f: &FilterArgs) -> Result<(Spec, Plan)> {
    let spec_path = t
        .config
        .clone()
        .unwrap_or_else(|| t.path.join("unguard.yaml"));
    let spec = spec::load(&t.path, &spec_path)?;
    let plan = plan::build(&spec, &filters(&spec, f)?)?;
    Ok((spec, plan))
}

/// Turn the filter flags into [`Filters`] (reading the git diff for `--in-diff`).
fn filters(spec: &Spec, f: &FilterArgs) -> Result<Filters> {
    let mut files = Vec::new();
    for g in &f.files {
        let text = g.trim_start_matches("./");
        let compiled = Globs::new(&[text])
            .map_err(|(_, e)| Error::Usage(format!("--file {g}: bad glob: {e}")))?;
        files.push((text.to_string(), compiled));
    }
    let in_diff = match &f.in_diff {
        Some(base) => Some((base.clone(), changes::since(&spec.root, base)?)),
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

/// Write to stdout; a closed stdout (`| head`) is not an error of a listing.
fn say(text: std::fmt::Arguments<'_>) {
    let _ = std::io::stdout().lock().write_fmt(text);
}

/// `unguard check`: validate the spec and dry-apply every mutation (no
/// test runs), printing one `ok` line per mutant. Returns exit 0, or the
/// stale-spec error (exit 5) when a mutation does not apply.
pub fn check(t: &TargetArgs) -> Result<ExitCode> {
    let (spec, plan) = load_plan(t, &FilterArgs::default())?;
    engine::check_copyable(&spec, &plan)?;
    for m in plan.ready() {
        let changed = |sign: char, header: &str| {
            m.diff
                .lines()
                .filter(|l| l.starts_with(sign) && !l.starts_with(header))
                .count()
        };
        say(format_args!(
            "ok  {}  {}:{}  ({} site{}, +{} -{} lines{})\n",
            m.id,
            m.file,
            m.line,
            m.sites,
            if m.sites == 1 { "" } else { "s" },
            changed('+', "+++"),
            changed('-', "---"),
            match &m.reindented {
                Some(by) => format!("; `replace` re-indented {by} to the code it replaces"),
                None => String::new(),
            },
        ));
    }
    let reindented: Vec<&str> = plan
        .ready()
        .filter(|m| m.reindented.is_some())
        .map(|m| m.id.as_str())
        .collect();
    let (bad, details) = plan.rejected_report();
    let total = plan.entries.len();
    if bad > 0 {
        return Err(Error::Stale {
            details,
            summary: format!("{bad} of {total} mutations cannot be applied"),
        });
    }
    say(format_args!("{total} mutations apply cleanly\n"));
    if !reindented.is_empty() {
        say(format_args!(
            "{} of them with a multi-line `replace` re-indented to the depth of the code it replaces ({}): `find` matched that code at another indentation than it is written with\n",
            reindented.len(),
            reindented.join(", ")
        ));
    }
    Ok(ExitCode::Ok)
}

/// `unguard list`: one line per selected mutation (id, file:line, control;
/// one that does not apply has line `?` and its problem in brackets).
/// Returns exit 0.
pub fn list(args: &ListArgs) -> Result<ExitCode> {
    let (_, plan) = load_plan(&args.target, &args.filters)?;
    for e in &plan.entries {
        match e {
            Entry::Ready(m) => say(format_args!(
                "{}\t{}:{}\t{}\n",
                m.id, m.file, m.line, m.control
            )),
            Entry::Rejected(r) => say(format_args!(
                "{}\t{}:?\t{}\t[{}]\n",
                r.id,
                r.file,
                r.control,
                r.problem.kind()
            )),
        }
    }
    Ok(ExitCode::Ok)
}

/// `unguard run`: run every selected mutant, write the output dir and the
/// reports, print the table. Returns the gate's exit code (see
/// `docs/exit-codes.md`), or the error that stopped the run.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    crate::run::child_env::shed_action_secrets();
    let (spec, plan) = load_plan(&args.target, &args.filters)?;
    let known: Vec<&str> = spec.mutations.iter().map(|m| m.id.as_str()).collect();
    let gate = gate::with_flags(
        spec.gate.clone(),
        args.min_score,
        args.max_survived,
        &args.allow,
        &known,
        &spec.spec_path,
    )?;
    let template = read_template(args.reports.template.as_deref())?;
    let earlier = match &args.incremental {
        Some(path) => Some(Arc::new(engine::read_earlier(path)?)),
        None => None,
    };
    let (rejected, details) = plan.rejected_report();
    if rejected > 0 && !args.keep_going {
        return Err(Error::Stale {
            details,
            summary: format!("{rejected} mutation(s) cannot be applied; nothing was run (fix the spec, or pass --keep-going to run the others)"),
        });
    }
    eprint!("{details}");
    let policy = args
        .exec
        .timeout_is
        .or(spec.timeout_is)
        .unwrap_or(TimeoutPolicy::Killed);
    let mut opts = engine_options(&args.exec, policy, gate, &spec, &plan, &args.target.path);
    opts.incremental = earlier;
    let (out, results) = run_engine(&spec, plan, opts)?;
    Ok(publish::publish(
        &out,
        &Arc::new(results),
        args.reports.markdown.as_deref(),
        template.as_ref(),
    ))
}

/// Run the engine (it locks and prepares the output dir). A run that a
/// failed write into the output dir stopped fails with that write's error
/// (exit 1), or, when mutants finished, has its results say so; the room
/// set aside for the results is given back on every way out.
fn run_engine(
    spec: &Spec,
    plan: Plan,
    opts: EngineOptions,
) -> Result<(std::path::PathBuf, Results)> {
    let out = opts.out.clone();
    match engine::run_plan(spec, plan, opts) {
        Ok((out, mut results)) => {
            publish::stopped_by_write_failure(&mut results);
            Ok((out, results))
        }
        Err(e) => {
            if !matches!(e, Error::OutDirBusy(_)) {
                outdir::release_reserve(&out);
            }
            Err(outdir::write_failure().map_or(e, |f| f.to_error()))
        }
    }
}

/// How the engine runs `plan`, from the execution flags.
fn engine_options(
    exec: &ExecArgs,
    policy: TimeoutPolicy,
    gate: GateConfig,
    spec: &Spec,
    plan: &Plan,
    root: &Path,
) -> EngineOptions {
    EngineOptions {
        out: exec.out.clone(),
        jobs: exec
            .jobs
            .map(usize::from)
            .unwrap_or_else(engine::default_jobs),
        no_canary: exec.no_canary,
        timeout_policy: policy,
        timeout: exec.timeout,
        root_display: root.display().to_string(),
        gate,
        baseline_runs: usize::from(exec.baseline_runs),
        recheck_survivors: usize::from(exec.recheck_survivors),
        recheck_kills: usize::from(exec.recheck_kills),
        thresholds: spec.thresholds,
        selection: plan.selection.clone(),
        isolation: isolation(exec),
        network: network_isolation(exec),
        full: exec.full,
        cold: exec.cold || std::env::var("UNGUARD_COLD").is_ok_and(|v| !v.is_empty() && v != "0"),
        coverage: !exec.no_coverage && !exec.full,
        incremental: None,
    }
}

/// `--isolation`, else `$UNGUARD_ISOLATION` (`auto`, `cgroup` or
/// `subreaper`; another value is warned about and ignored), else auto.
fn isolation(exec: &ExecArgs) -> Isolation {
    flag_or_env(
        exec.isolation,
        "UNGUARD_ISOLATION",
        "auto, cgroup or subreaper",
    )
}

/// `--network-isolation`, else `$UNGUARD_NETWORK_ISOLATION` (`auto` or
/// `off`; another value is warned about and ignored), else auto.
fn network_isolation(exec: &ExecArgs) -> NetworkIsolation {
    flag_or_env(
        exec.network_isolation,
        "UNGUARD_NETWORK_ISOLATION",
        "auto or off",
    )
}

/// A mode flag's value, else the variable `var`'s (one of `expected`;
/// another value is warned about and ignored), else the default.
fn flag_or_env<T: clap::ValueEnum + Default>(flag: Option<T>, var: &str, expected: &str) -> T {
    flag.or_else(|| {
        let v = std::env::var(var).ok()?;
        match T::from_str(v.trim(), true) {
            Ok(i) => Some(i),
            Err(_) => {
                eprintln!("unguard: warning: {var}={v}: expected {expected}; using auto");
                None
            }
        }
    })
    .unwrap_or_default()
}

/// The hidden `__supervise`: becomes the per-run supervisor of one test
/// command (never returns).
pub fn supervise(args: &SuperviseArgs) -> Result<ExitCode> {
    let grace = std::time::Duration::try_from_secs_f64(args.grace)
        .map_err(|e| Error::Usage(format!("--grace {}: {e}", args.grace)))?;
    crate::run::supervise::main(crate::run::supervise::Options {
        grace,
        cgroup: args.cgroup.clone(),
        netns: args.netns,
        argv: args.argv.clone(),
    })
}

/// The hidden `__warm`: the leader of a run forked from a warm interpreter.
pub fn warm(args: &WarmArgs) -> ! {
    let set = args
        .set
        .iter()
        .filter_map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let code = crate::run::warm::client::main(crate::run::warm::client::Options {
        socket: args.socket.clone(),
        record: args.record.clone(),
        set,
        cold_argc: args.cold_argc,
        argv: args.argv.clone(),
    });
    std::process::exit(code)
}

/// The `--template` file, when given.
fn read_template(path: Option<&Path>) -> Result<Option<Template>> {
    let Some(p) = path else { return Ok(None) };
    let text = std::fs::read_to_string(p)
        .map_err(|e| Error::Usage(format!("--template {}: {e}", p.display())))?;
    Ok(Some(Template {
        name: p.display().to_string(),
        text,
    }))
}

/// `unguard report`: render a finished run's `DIR/outcomes.json` to stdout in
/// `--format`, without running tests. Returns exit 0.
pub fn report(args: &ReportArgs) -> Result<ExitCode> {
    let template = read_template(args.template.as_deref())?;
    let results = Arc::new(report::read_outcomes(&args.dir)?);
    let rendered = match args.format {
        // Written as they are made (10,000 mutants make ~20 MB of each).
        Format::Json | Format::Html => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            report::render_to(&results, args.format, None, &mut out)
                .and_then(|()| out.flush().context("writing to stdout"))
        }
        // The others in full first: a failed render writes nothing.
        _ => report::render(&results, args.format, template.as_ref()).and_then(|text| {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to stdout")
        }),
    };
    match rendered {
        Ok(()) => Ok(ExitCode::Ok),
        // stdout closed (e.g. `| head`): nothing to say.
        Err(Error::Io { .. }) => Err(Error::StdoutClosed),
        Err(e) => Err(e),
    }
}

/// `unguard merge`: join the output dirs of `run --shard k/n` into `--out`
/// and publish the merged reports. Returns the merged run's gate exit code.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let template = read_template(args.reports.template.as_deref())?;
    let merged = merge::merge(&args.dirs)?;
    outdir::prepare(&args.out)?;
    merge::copy_artifacts(&args.dirs, &args.out)?;
    eprintln!(
        "unguard: merged {} shard(s): {} mutant(s)",
        args.dirs.len(),
        merged.mutants.len()
    );
    Ok(publish::publish(
        &args.out,
        &Arc::new(merged),
        args.reports.markdown.as_deref(),
        template.as_ref(),
    ))
}

/// `unguard schema`: print the JSON Schema of `outcomes.json`. Returns exit 0.
pub fn schema() -> Result<ExitCode> {
    let schema = schemars::schema_for!(Results);
    let text = serde_json::to_string_pretty(&schema).context("the JSON Schema")?;
    say(format_args!("{text}\n"));
    Ok(ExitCode::Ok)
}

/// One repo's audit: survey, run, print. The rows are there when the
/// run finished (`None`: it stopped early, e.g. at a red baseline).
struct Audited {
    result: Result<ExitCode>,
    rows: Option<Vec<audit::ControlRow>>,
}

/// What one repo of a portfolio sets for itself (empty for a single audit).
#[derive(Debug, Default, Clone)]
struct RepoSettings {
    test_command: Option<String>,
    exclude: Vec<String>,
    controls: Vec<String>,
}

/// Survey `path` and choose its test command; print the summary line.
fn audit_survey(
    path: &Path,
    exec: &ExecArgs,
    args: &AuditArgs,
    own: &RepoSettings,
) -> Result<(audit::Survey, spec::TestConfig, audit::RanCommand)> {
    let out_abs = exec.out.canonicalize().unwrap_or_else(|_| exec.out.clone());
    let mut scope = args.scope.clone();
    scope.skip_files.extend(own.exclude.iter().cloned());
    scope.controls.extend(own.controls.iter().cloned());
    let survey = audit::survey_in(path, std::slice::from_ref(&out_abs), &scope.scope()?, true)?;
    let given = own.test_command.as_deref().or(args.test_command.as_deref());
    let test = audit::test_config(&survey.detected, given)
        .map_err(|e| e.prefixed(path.display().to_string()))?;
    let ran = audit::RanCommand::new(&test, &survey.detected, given.is_some());
    eprintln!(
        "unguard audit: {}: {}; tests: `{}`{}; {} catalog operator(s) apply, {} site(s) found{}",
        path.display(),
        if survey.detected.sdks.is_empty() {
            "no MCP SDK import seen".to_string()
        } else {
            survey.detected.sdks.join(", ")
        },
        ran.command,
        match (&survey.detected.test, given) {
            (Some(crate::audit::detect::TestCommand { from: Some(at), .. }), None) => {
                format!(" (the project's own, from {at})")
            }
            _ => String::new(),
        },
        survey.operators.len(),
        survey.found.len(),
        skipped_note(survey.skipped_by_default)
    );
    for g in &survey.set_aside {
        eprintln!("unguard audit: {}: {}", path.display(), g.line());
    }
    if let Some(root) =
        (survey.root != path.canonicalize().unwrap_or_default()).then_some(&survey.root)
    {
        eprintln!(
            "unguard audit: {}: every run copies the workspace root {} ({})",
            path.display(),
            root.display(),
            ran.why
        );
    }
    Ok((survey, test, ran))
}

/// A red baseline whose environment is missing says how to set it up
/// (`setup`: the command and the workspace root, when the test command was
/// detected); one whose red tests all need the network proposes the audit
/// of `path` without them.
fn setup_hint(e: Error, path: &Path, setup: Option<(&str, &Path)>) -> Error {
    let Error::Baseline(mut red) = e else {
        return e;
    };
    if let Some(network) = &red.network {
        red.hints.push(format!(
            "  = audit without them: unguard audit {} --test-command {}",
            crate::run::shell::quote(&path.display().to_string()),
            crate::run::shell::quote(&network.command)
        ));
    }
    if let Some((setup, root)) = setup {
        red.hints.push(format!(
            "  = the repo's environment is not set up: run `{setup}` in {}, then audit again \
             (unguard never installs, syncs or creates an environment)",
            root.display()
        ));
    }
    Error::Baseline(red)
}

fn audit_one(path: &Path, exec: &ExecArgs, args: &AuditArgs, own: &RepoSettings) -> Audited {
    let failed = |e| Audited {
        result: Err(e),
        rows: None,
    };
    let template = match read_template(args.reports.template.as_deref()) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let (survey, test, ran) = match audit_survey(path, exec, args, own) {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    let spec = audit::audit_spec(&survey, test, exec.timeout);
    let plan = match plan::build(&spec, &Filters::default()) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let policy = exec.timeout_is.unwrap_or(TimeoutPolicy::Killed);
    let opts = engine_options(exec, policy, GateConfig::default(), &spec, &plan, path);
    let (out, mut results) = match run_engine(&spec, plan, opts) {
        Ok(r) => r,
        Err(e) => {
            let given = own.test_command.is_some() || args.test_command.is_some();
            let setup = (survey.detected.test.as_ref())
                .and_then(|t| t.setup.as_deref())
                .filter(|_| !given)
                .map(|s| (s, survey.root.as_path()));
            return failed(setup_hint(e, path, setup));
        }
    };
    let rows = audit::by_control(&survey, Some(&results));
    results.gate = gate::audit(
        &results.summary,
        policy,
        results.interrupted,
        &audit::findings(&survey, &rows),
    );
    let results = Arc::new(results);
    let code = publish::publish(
        &out,
        &results,
        args.reports.markdown.as_deref(),
        template.as_ref(),
    );
    let grouped = audit::grouped_markdown(&survey, &rows, &ran);
    say(format_args!("\n{grouped}\n"));
    let written = std::fs::write(out.join("audit.md"), &grouped)
        .map_err(|e| Error::at("writing", &out.join("audit.md"), e));
    Audited {
        result: written
            .map(|()| code)
            .or_else(|e| Ok(code.worst_in_audit(e.print()))),
        rows: Some(rows),
    }
}

/// `; N file(s) not scanned: …` for the audit summary line.
fn skipped_note(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        "; {n} file(s) of tests, fixtures, scripts, docs, examples or vendored code not scanned (--no-default-excludes scans them)"
    )
}

/// `unguard audit`: find the catalog's controls in a repository (or each
/// repo of `--portfolio`) and run a mutant per site; `--list` only lists the
/// sites. Returns the audit's exit code (the worst repo's for a portfolio).
pub fn audit(args: &AuditArgs) -> Result<ExitCode> {
    crate::run::child_env::shed_action_secrets();
    if args.list {
        let survey = audit::survey(&args.path, &[], &args.scope.scope()?)?;
        let text = if args.json {
            audit::listing_json(&survey)
        } else {
            audit::listing_text(&survey)
        };
        say(format_args!("{text}"));
        if !args.json {
            eprintln!(
                "unguard audit --list: {} site(s) of {} control(s){}",
                survey.found.len() + survey.left_out.len() + survey.present.len(),
                survey.operators.len(),
                skipped_note(survey.skipped_by_default)
            );
            for g in &survey.set_aside {
                eprintln!("unguard audit --list: {}", g.line());
            }
        }
        return Ok(ExitCode::Ok);
    }
    let Some(file) = &args.portfolio else {
        return audit_one(&args.path, &args.exec, args, &RepoSettings::default()).result;
    };
    let repos = portfolio::load(file, &args.exec.out)?;
    outdir::prepare(&args.exec.out)?;
    let mut codes = Vec::new();
    let mut columns: Vec<(String, Option<Vec<audit::ControlRow>>)> = Vec::new();
    for (i, repo) in repos.iter().enumerate() {
        let mut exec = args.exec.clone();
        exec.out = repo.out.clone();
        eprintln!("\n== {} ({}/{})", repo.path.display(), i + 1, repos.len());
        let own = RepoSettings {
            test_command: repo.test_command.clone(),
            exclude: repo.exclude.clone(),
            controls: repo.controls.clone(),
        };
        let audited = audit_one(&repo.path, &exec, args, &own);
        let code = audited.result.unwrap_or_else(|e| e.print());
        if code == ExitCode::Interrupted {
            return Ok(code);
        }
        codes.push(code);
        columns.push((repo.name.clone(), audited.rows));
    }
    say(format_args!(
        "\n## unguard audit portfolio\n\n{}\n",
        audit::portfolio_matrix(&columns)
    ));
    Ok(portfolio::worst(codes))
}

/// `unguard init`: write a starter `unguard.yaml` (or print it with
/// `--stdout`) from the detected test command and the sites the catalog
/// finds. Returns exit 0; an existing spec without `--force` is a usage
/// error.
pub fn init(args: &InitArgs) -> Result<ExitCode> {
    let target = args.path.join("unguard.yaml");
    if target.exists() && !args.force && !args.stdout {
        return Err(Error::Usage(format!(
            "{} exists; pass --force to overwrite it, or --stdout to print the starter spec",
            target.display()
        )));
    }
    let survey = audit::survey(&args.path, &[], &args.scope.scope()?)?;
    let test = audit::test_config(&survey.detected, args.test_command.as_deref())
        .map_err(|e| e.prefixed(args.path.display().to_string()))?;
    let reason = match (&args.test_command, &survey.detected.test) {
        (Some(_), _) => "given with --test-command".to_string(),
        (None, Some(t)) => format!("detected: {}", t.reason),
        (None, None) => String::new(),
    };
    let yaml = crate::audit::init::render(&survey, &test, &reason);
    if args.stdout {
        say(format_args!("{yaml}"));
        return Ok(ExitCode::Ok);
    }
    std::fs::write(&target, &yaml).map_err(|e| Error::at("writing", &target, e))?;
    eprintln!(
        "unguard init: wrote {} with {} mutation(s); review it, then `unguard check` and `unguard run`",
        target.display(),
        survey.found.len()
    );
    for u in &survey.left_out {
        eprintln!(
            "warning: {} at {}:{} left out: {}",
            u.operator.id, u.site.file, u.site.changed_line, u.why
        );
    }
    Ok(ExitCode::Ok)
}

/// `unguard catalog`: list the built-in operators (`--markdown`: the README
/// section). Returns exit 0.
pub fn catalog(args: &CatalogArgs) -> Result<ExitCode> {
    if args.markdown {
        say(format_args!("{}", crate::catalog::readme_section()));
        return Ok(ExitCode::Ok);
    }
    for op in crate::catalog::catalog() {
        say(format_args!(
            "{}\t{}\t{}\t{}\n",
            op.id,
            audit::rule_text(op),
            match op.kind {
                crate::catalog::OperatorKind::Audit => "audit",
                crate::catalog::OperatorKind::Template => "init template",
            },
            op.control
        ));
    }
    Ok(ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{BaselineError, NetworkNote};

    #[test]
    fn setup_hint_proposes_the_command_the_error_carries() {
        let note = NetworkNote {
            text: "  = every red test looks like it needs the network or a live service: t (marked `live`); deselect them with `-m \"not live\"`\n  = run without them: `pytest -m \"not live\"`".into(),
            command: "pytest -m \"not live\"".into(),
        };
        let red = Error::Baseline(BaselineError::red(
            "red\nlog: out/@baseline.log".into(),
            Some(note),
        ));
        let e = setup_hint(
            red,
            Path::new("my repo"),
            Some(("uv sync", Path::new("/r"))),
        );
        assert_eq!(
            e.to_string(),
            "baseline: red\nlog: out/@baseline.log\n  = every red test looks like it needs the network or a live service: t (marked `live`); deselect them with `-m \"not live\"`\n  = run without them: `pytest -m \"not live\"`\n  = audit without them: unguard audit 'my repo' --test-command 'pytest -m \"not live\"'\n  = the repo's environment is not set up: run `uv sync` in /r, then audit again (unguard never installs, syncs or creates an environment)"
        );
        // A log tail that happens to hold the note's words proposes nothing:
        // the proposal is the error's, not read back from its text.
        let tail = "red\nlog: x\n  = run without them: `rm -rf /`".to_string();
        let e = setup_hint(
            Error::Baseline(BaselineError::red(tail.clone(), None)),
            Path::new("."),
            None,
        );
        assert_eq!(e.to_string(), format!("baseline: {tail}"));
        // Flaky keeps the note, and so the proposal.
        let note = NetworkNote {
            text: "n".into(),
            command: "c".into(),
        };
        let flaky = BaselineError::red("d".into(), Some(note)).flaky(2, 3);
        let Error::Baseline(b) = setup_hint(Error::Baseline(flaky), Path::new("."), None) else {
            panic!("not a baseline error");
        };
        assert_eq!(
            b.kind,
            crate::error::BaselineKind::Flaky { run: 2, runs: 3 }
        );
        assert_eq!(
            b.hints,
            ["  = audit without them: unguard audit . --test-command c"]
        );
        // Other errors pass through untouched.
        let e = setup_hint(
            Error::Interrupted,
            Path::new("."),
            Some(("uv sync", Path::new("/r"))),
        );
        assert!(matches!(e, Error::Interrupted));
    }
}
