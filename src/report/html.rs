//! Self-contained report.html, rendered from `templates/report.html` with
//! HTML auto-escaping on: inline CSS and JS, no network at view time.

use std::io::Write;
use std::sync::Arc;

use minijinja::ErrorKind;

use super::context::Context;
use super::markdown::environment;
use crate::error::{Context as _, Error, Result};
use crate::results::Results;

const REPORT: &str = include_str!("../../templates/report.html");

/// The template's name in error messages.
const WHAT: &str = "built-in report.html";

/// The self-contained HTML report of a run, in one string (see
/// [`render_to`] to stream it).
pub fn render(results: &Arc<Results>) -> Result<String> {
    let mut out = Vec::new();
    render_to(results, &mut out)?;
    String::from_utf8(out)
        .map_err(|e| Error::Internal(format!("the HTML report is not UTF-8: {e}")))
}

/// Render the page into `w` as it goes (10,000 mutants make ~20 MB of HTML:
/// it is not held in memory). A failed write is an [`Error::Io`] whose
/// `source` is the writer's error; a failed render, an [`Error::Template`]
/// naming the template line.
pub fn render_to(results: &Arc<Results>, w: &mut dyn Write) -> Result<()> {
    let env = environment();
    let tmpl = env
        .template_from_named_str("report.html", REPORT)
        .context(WHAT)?;
    let ctx = Context::new(results)?;
    let rendered = tmpl
        .render_captured_to(ctx.value(ctx.longest()), &mut *w)
        .map(drop);
    match rendered {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::WriteFailure => {
            let io = std::error::Error::source(&e)
                .and_then(|s| s.downcast_ref::<std::io::Error>())
                .map(|io| std::io::Error::new(io.kind(), io.to_string()))
                .unwrap_or_else(|| std::io::Error::other(e.to_string()));
            Err(Error::io("writing the HTML report", io))
        }
        Err(e) => Err(e).context(WHAT),
    }
}
