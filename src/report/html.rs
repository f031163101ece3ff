//! Self-contained report.html, rendered from `templates/report.html` with
//! HTML auto-escaping on: inline CSS and JS, no network at view time.

use anyhow::{anyhow, Result};

use super::markdown::{context, describe_error, environment};
use crate::results::Results;

const REPORT: &str = include_str!("../../templates/report.html");

pub fn render(results: &Results) -> Result<String> {
    let env = environment();
    let ctx = context(results)?;
    env.render_named_str("report.html", REPORT, ctx)
        .map_err(|e| anyhow!(describe_error(&e, REPORT, "built-in report.html")))
}
