//! Self-contained report.html, rendered from `templates/report.html` with
//! HTML auto-escaping on: inline CSS and JS, no network at view time.

use std::io::Write;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use minijinja::ErrorKind;

use super::context::Context;
use super::markdown::{describe_error, environment};
use crate::results::Results;

const REPORT: &str = include_str!("../../templates/report.html");

pub fn render(results: &Arc<Results>) -> Result<String> {
    let mut out = Vec::new();
    render_to(results, &mut out)?;
    Ok(String::from_utf8(out)?)
}

/// Render the page into `w` as it goes (10,000 mutants make ~20 MB of HTML:
/// it is not held in memory). A failed write is an [`std::io::Error`] (find it
/// with `downcast_ref`); a failed render, a message naming the template line.
pub fn render_to(results: &Arc<Results>, w: &mut dyn Write) -> Result<()> {
    let env = environment();
    let describe =
        |e: &minijinja::Error| anyhow!(describe_error(e, REPORT, "built-in report.html"));
    let tmpl = env
        .template_from_named_str("report.html", REPORT)
        .map_err(|e| describe(&e))?;
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
            Err(io.into())
        }
        Err(e) => Err(describe(&e)),
    }
}
