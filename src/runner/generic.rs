//! The generic runner: a command whose runner [`super::recognise`] does not
//! know (a Makefile, a script, `tox`), and a re-check of a kill's red tests
//! where no subset runner is given. Nothing is added to its command; it
//! gets the [`super::Runner`] trait's defaults, what reaches pytest through
//! its environment should the command start it (unguard's report request,
//! pytest's cache expected), and for a re-check pytest's select plugin,
//! loosely: other runners ignore it and run whole. It selects no subset
//! (kill-first needs a known runner or `test.select`).

use super::pytest_select::SelectPlugin;
use super::{Place, Plugin, Runner};
use crate::spec::Command;

/// The generic runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generic;

impl Runner for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }

    fn subset(&self, _ids: &[String], _at: &Place<'_>) -> Option<Command> {
        None
    }

    fn plugin(&self) -> Option<&'static dyn Plugin> {
        Some(&SelectPlugin)
    }
}
