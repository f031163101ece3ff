//! Every integration test of unguard, as one test crate (one binary, one
//! link of the library) with a module per area. The shared scaffolding is
//! `tests/common/`: fixture repos, the real binary, the spec builder and the
//! visible skips (`common::skip`).

#[path = "../common/mod.rs"]
mod common;

mod action;
mod audit_and_init;
mod audit_environments;
mod audit_scope;
mod audit_shapes;
mod catalog;
mod clean_runs;
mod confirmations;
mod coverage_blind_spots;
mod coverage_gates;
mod fifo_report;
mod flaky_and_panics;
mod fuzz_spec_and_matcher;
mod gate_and_selection;
mod github_workflow;
mod go_test_json;
mod honest_verdicts;
mod hostile_inputs;
mod incremental_runs;
mod interrupts_and_user_tree;
mod junit_reports;
mod kill_first;
mod kill_first_adapters;
mod kill_first_confirm;
mod kill_first_jest_cargo;
mod kill_first_sdk;
mod layout;
mod leaked_daemons;
mod load_failures;
mod no_coverage_reports;
mod one_line_per_site;
mod out_dir;
mod own_test_command;
mod package_scripts;
mod package_workspaces;
mod packaging;
mod per_test_coverage;
mod per_test_coverage_js_go;
mod process_cleanup;
mod process_trees_and_signals;
mod readme_demo;
mod reports_machine;
mod reports_md_html;
mod run_loop;
mod several_commands;
mod skips;
mod spec_and_check;
mod spec_refusals;
mod stale_scratch;
mod suite_environment;
mod transparent_runs;
mod twins;
mod user_tree_safety;
mod warm_runs;
mod workspace_and_baselines;
mod wrappers_and_small_rules;
