//! Loading and validating `unguard.yaml` (version 1) and the files it includes.
//!
//! The raw serde types mirror the YAML one to one (`deny_unknown_fields`
//! everywhere); [`load`] turns them into a validated [`Spec`] or a list of
//! [`Diagnostic`](diag::Diagnostic)s, each with file, line, column and a fix.
//!
//! `yaml` reads and parses a file (the raw types, positions, the parser's
//! messages in words); `resolve` is [`load`] and the top-level sections,
//! `test_config` a `test:` block, `resolve_mutation` the `mutations:`
//! entries; `model` is the validated [`Spec`]; `duration` and `paths` read
//! and check durations and paths; `diag` holds the diagnostics.

pub mod diag;
mod duration;
mod model;
mod paths;
mod resolve;
mod resolve_mutation;
mod test_config;
mod yaml;

pub use crate::mutate::pattern::{Count, Pattern};
pub use duration::{parse_duration, BadDuration};
pub use model::{
    Command, FailCodes, MutationSpec, Preset, Select, Spec, SpecPos, SuiteGit, TestConfig,
    TimeoutSetting,
};
pub use paths::{check_rel_path, display_path, BadRelPath};
pub use resolve::load;
