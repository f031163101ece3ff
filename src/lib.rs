//! unguard: mutation testing for the security controls of MCP servers.
//!
//! Data flows one way, a folder per stage:
//! [`spec`] (load + validate YAML) → [`plan`] (mutants with sites, diffs,
//! expected killers) → [`workspace`] (scratch copies, restore) → [`mutate`]
//! (match, replace, diff proof) → [`run`] (process groups, timeout, logs; every
//! OS call beyond std in [`run::platform`]) → [`outcome`] (verdict per mutant,
//! from the exit and what [`outcome::reading`] read of the run) → [`results`]
//! (the model every report reads) → [`report`] → [`gate`] (exit code).
//! [`engine`] drives the loop and [`outdir`] names its files; [`catalog`] and
//! [`audit`] find control sites in a project; [`commands`] maps subcommands
//! onto all of it.

#![warn(clippy::too_many_lines)]
#![warn(missing_docs)]

pub mod audit;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod config;
pub mod coverage;
pub mod engine;
pub mod error;
pub mod gate;
pub mod globs;
pub mod mutate;
pub mod outcome;
pub mod outdir;
pub mod plan;
pub mod progress;
pub mod report;
pub mod results;
pub mod run;
pub mod runner;
pub mod spec;
pub mod workspace;
