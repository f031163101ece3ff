//! unguard: mutation testing for the security controls of MCP servers.
//!
//! Data flows one way through one module per stage:
//! [`spec`] (load + validate YAML) → [`plan`] (mutants with sites, diffs,
//! expected killers) → [`workspace`] (scratch copies, restore) → [`mutate`]
//! (match, replace, diff proof) → [`run`] (process groups, timeout, logs) →
//! [`outcome`] (verdict per mutant, from exit code and [`junit`]) →
//! [`results`] (the model every report reads) → [`report`] → [`gate`] (exit code).
//! [`engine`] drives the loop; [`commands`] maps subcommands onto it.
//! [`platform`] holds every call into the OS beyond std.

#![warn(clippy::too_many_lines)]

pub mod anchor;
pub mod audit;
pub mod capture;
pub mod catalog;
pub mod changes;
pub mod child_env;
pub mod ci_workflow;
pub mod cli;
pub mod commands;
pub mod detect;
pub mod diag;
pub mod engine;
pub mod environment;
pub mod error;
pub mod fingerprint;
pub mod gate;
pub mod go_test_json;
pub mod init;
pub mod isolation;
pub mod junit;
pub mod libtest_text;
pub mod merge;
pub mod mutate;
pub mod network_hint;
pub mod outcome;
pub mod outdir;
pub mod plan;
pub mod platform;
pub mod portfolio;
pub mod progress;
pub mod project_command;
pub mod publish;
pub mod reaper;
pub mod report;
pub mod results;
pub mod run;
pub mod scan_scope;
pub mod server_entry;
pub mod shell_line;
pub mod spec;
pub mod suite_log;
pub mod supervise;
pub mod tree_state;
pub mod twins;
pub mod workspace;
