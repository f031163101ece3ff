//! Progress display: a bar on a terminal, plain lines otherwise (CI logs).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// What a run shows while mutants run: a bar with a status message on a
/// terminal, plain lines on stderr otherwise.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress display for `total` steps; a bar only when stderr is a TTY.
    pub fn new(total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .expect("static template is valid"),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        Progress { bar }
    }

    /// A line of output that stays (above the bar on a TTY).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// What is running now (bar message only).
    pub fn status(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_string());
        }
    }

    /// One more mutant done: the bar moves one step (nothing without a bar).
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// Clear the bar at the end of the run (nothing without a bar).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
