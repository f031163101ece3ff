//! The collectors, one per kind of runner, behind one face: the engine
//! picks a [`Collector`] from the test config's runner, installs its
//! [`Instrumentation`] beside the copy, applies its variables (and, for
//! Node's and Go's runners, options added to the command) to the coverage
//! run, and [`Instrumentation::collect`]s the map after it.

use std::path::Path;

use super::{go, node, python, Collected};
use crate::error::Result;
use crate::outcome::reading::model::Report;

/// Which collector measures a test config's suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector {
    /// coverage.py under pytest, one context per test.
    Python,
    /// V8's coverage (`NODE_V8_COVERAGE`), per test file: `node --test`,
    /// vitest, jest.
    Node,
    /// `go test -coverprofile`, per package.
    Go,
}

/// What one collector put beside the copy for the coverage run.
#[derive(Debug, Clone)]
pub enum Instrumentation {
    /// See [`python::Instrumentation`].
    Python(python::Instrumentation),
    /// See [`node::Instrumentation`].
    Node(node::Instrumentation),
    /// See [`go::Instrumentation`].
    Go(go::Instrumentation),
}

impl Collector {
    /// Its name in messages and in `outcomes.json` (`coverage_runs[].collector`).
    pub fn name(self) -> &'static str {
        match self {
            Collector::Python => "coverage.py",
            Collector::Node => "V8 coverage (NODE_V8_COVERAGE)",
            Collector::Go => "go test -coverprofile",
        }
    }

    /// Put what it needs beside the copy at `tree` (never into it), with
    /// `out` (made empty) for what the run writes.
    pub fn install(self, tree: &Path, out: &Path) -> Result<Instrumentation> {
        Ok(match self {
            Collector::Python => {
                Instrumentation::Python(python::Instrumentation::install(tree, out)?)
            }
            Collector::Node => Instrumentation::Node(node::Instrumentation::install(tree, out)?),
            Collector::Go => Instrumentation::Go(go::Instrumentation::install(tree, out)?),
        })
    }
}

impl Instrumentation {
    /// Take away what [`Collector::install`] put beside the copy (what the
    /// run wrote stays until collected).
    pub fn remove(&self) {
        match self {
            Instrumentation::Python(i) => i.remove(),
            Instrumentation::Node(i) => i.remove(),
            Instrumentation::Go(i) => i.remove(),
        }
    }

    /// Options the run's command gets: for `node --test`, after `--test`;
    /// for `go test`, at its end. Empty: the command is run as it is.
    pub fn command_options(&self) -> Vec<String> {
        match self {
            Instrumentation::Python(_) => Vec::new(),
            Instrumentation::Node(i) => i.options(),
            Instrumentation::Go(i) => i.options(),
        }
    }

    /// What the run left in the copy at `tree`: the map, or why there is
    /// none. `report`: the baseline's tests (Node and Go name the tests of
    /// a test file or package from it).
    pub fn collect(&self, tree: &Path, report: Option<&Report>) -> Collected {
        match self {
            Instrumentation::Python(i) => i.collect(),
            Instrumentation::Node(i) => i.collect(tree, report),
            Instrumentation::Go(i) => i.collect(tree, report),
        }
    }
}
