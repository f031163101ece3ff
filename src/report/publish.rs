//! After a run or merge: the results model and the reports written into the
//! output dir (and `$GITHUB_STEP_SUMMARY`), the table, the summary and the
//! gate printed. A report that cannot be written does not hide the others.
//! The room set aside for the results ([`crate::outdir::space`]) is given
//! back first; a run that a failed write stopped says so last, and exits 1.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Context, Error, ExitCode};
use crate::outdir;
use crate::report::markdown::Template;
use crate::report::{self, Format};
use crate::results::{Outcome, Results};

/// The gate's reason when the run was interrupted ([`crate::gate`]).
const INTERRUPTED_REASON: &str = "interrupted before all mutants ran";

/// A run that a failed write into the output dir stopped: its gate fails
/// with exit 1 and names the file, instead of calling it interrupted (the
/// results stay marked `interrupted`: not every mutant ran).
pub fn stopped_by_write_failure(results: &mut Results) {
    let Some(f) = outdir::write_failure() else {
        return;
    };
    let reason = format!(
        "stopped before all mutants ran: writing {} failed ({})",
        f.path.display(),
        f.error
    );
    let gate = &mut results.gate;
    gate.reasons.retain(|r| r != INTERRUPTED_REASON);
    gate.reasons.insert(0, reason);
    gate.passed = false;
    gate.exit_code = ExitCode::Failure.code();
}

/// Write the model and the reports into `out` (and the Markdown report to
/// `markdown` too), print the table and the gate; returns the gate's exit
/// code, or 1 when a report could not be written.
pub fn publish(
    out: &Path,
    results: &Arc<Results>,
    markdown: Option<&Path>,
    template: Option<&Template>,
) -> ExitCode {
    let mut exit = ExitCode::from_code(results.gate.exit_code).unwrap_or(ExitCode::Failure);
    let mut fail = |e: Error| exit = exit.worst(e.print());
    outdir::release_reserve(out);
    if let Err(e) = report::write_outcomes(out, results) {
        fail(e);
    }
    if let Err(e) = write_markdown(out, results, markdown, template) {
        e.into_iter().for_each(&mut fail);
    }
    if let Err(e) = write_html(out, results) {
        fail(e);
    }
    print_summary(out, results);
    if let Some(f) = outdir::write_failure() {
        exit = exit.worst(f.to_error().print());
    }
    exit
}

/// report.md, the `--markdown` copy and the step summary; every failure.
fn write_markdown(
    out: &Path,
    results: &Arc<Results>,
    markdown: Option<&Path>,
    template: Option<&Template>,
) -> Result<(), Vec<Error>> {
    let md = report::render(results, Format::Md, template)
        .context("rendering the Markdown report")
        .map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    for path in std::iter::once(out.join("report.md")).chain(markdown.map(Path::to_path_buf)) {
        if let Err(e) = std::fs::write(&path, &md) {
            errors.push(Error::at("writing", &path, e));
        }
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        let summary = Path::new(&summary);
        if let Err(e) = append(summary, &md) {
            errors.push(Error::io(
                format!("appending to $GITHUB_STEP_SUMMARY ({})", summary.display()),
                e,
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// report.html, rendered straight into the file (10,000 mutants make ~20 MB
/// of HTML); removed when it could not be finished.
fn write_html(out: &Path, results: &Arc<Results>) -> Result<(), Error> {
    let html = out.join("report.html");
    let written = std::fs::File::create(&html)
        .context("creating report.html")
        .and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            report::render_to(results, Format::Html, None, &mut w)?;
            w.flush().context("writing report.html")
        });
    written.map_err(|e| {
        let _ = std::fs::remove_file(&html);
        match e {
            Error::Io { source, .. } => Error::at("writing", &html, source),
            e => e.prefixed("rendering the HTML report".into()),
        }
    })
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

/// The table, the summary line, the findings, the gate and the output dir.
fn print_summary(out: &Path, results: &Results) {
    if results.interrupted {
        eprintln!(
            "unguard: {}; {} mutant(s) finished",
            if outdir::write_failure().is_some() {
                "stopped: a write into the output dir failed"
            } else {
                "interrupted"
            },
            results
                .mutants
                .iter()
                .filter(|m| !matches!(m.outcome, Outcome::NoOp | Outcome::Ambiguous))
                .count()
        );
    }
    let mut text = format!("{}\n\n{}\n", report::table(results), results.summary.line());
    let findings = report::findings(results);
    if !findings.is_empty() {
        text.push('\n');
        for f in findings {
            text.push_str(&format!("{f}\n"));
        }
    }
    for n in &results.gate.notes {
        text.push_str(&format!("note: {n}\n"));
    }
    text.push('\n');
    if results.gate.passed {
        text.push_str("gate: passed\n");
    } else {
        text.push_str(&format!(
            "gate: failed (exit {}): {}\n",
            results.gate.exit_code,
            results.gate.reasons.join("; ")
        ));
    }
    text.push_str(&format!("output: {}\n", out.display()));
    // A closed stdout (`unguard run . | true`) must not cost the gate's
    // exit code: what cannot be printed is in the output dir anyway.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
