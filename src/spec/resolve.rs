//! [`load`]: a spec file and its includes read, parsed and resolved into a
//! [`Spec`], or every problem found; the top-level sections (`test`,
//! `workspace`, `include`, `gate`, `thresholds`) are resolved here, the
//! mutations in [`resolve_mutation`](super::resolve_mutation).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use crate::config::{Allow, GateConfig, Thresholds, TimeoutPolicy, TwinsPolicy};
use crate::spec::diag::{Diagnostic, Diagnostics};
use crate::spec::model::{
    Command, FailCodes, MutationSpec, Preset, Select, Spec, SuiteGit, TestConfig, TimeoutSetting,
};
use crate::spec::paths::{check_rel_path, display_path};
use crate::spec::resolve_mutation::resolve_mutations;
use crate::spec::test_config::resolve_test;
use crate::spec::yaml::{
    parse_yaml, read_source, MutationSource, RawGate, RawInclude, RawSpec, RawTest, RawThresholds,
    RawWorkspace, SourceFile,
};

/// Load `spec_path` (and its includes) for the target `root`; on error, every
/// problem found, each with its position and fix.
pub fn load(root: &Path, spec_path: &Path) -> Result<Spec, Diagnostics> {
    let one = |d: Diagnostic| Diagnostics(vec![d]);
    let root = root.canonicalize().map_err(|e| {
        one(
            Diagnostic::new(display_path(root), 0, 0, format!("target directory: {e}"))
                .with_fix("pass an existing directory as PATH"),
        )
    })?;
    let src = read_source(spec_path).map_err(one)?;
    let raw: RawSpec = parse_yaml(&src).map_err(one)?;

    let mut diags = Diagnostics::default();
    if raw.version.value != 1 {
        diags.push(
            src.at(
                &raw.version,
                format!("unsupported spec version {}", raw.version.value),
            )
            .with_fix("this unguard reads `version: 1`"),
        );
    }
    let global = match &raw.test {
        // No command of its own: every mutation must set one (checked below).
        Some(t) if t.value.command.is_none() => {
            resolve_test(&src, t, Some(&no_command()), &mut diags)
        }
        Some(t) => resolve_test(&src, t, None, &mut diags),
        // Every mutation must set its own `test.command` (checked below).
        None => Some(no_command()),
    };
    let link = resolve_links(&src, raw.workspace.as_ref(), &mut diags);
    let git = resolve_git(&src, raw.workspace.as_ref(), &mut diags);
    let global = global.map(|g| TestConfig { git, ..g });

    // Mutations from the main file and every include, in order.
    let include_files = resolve_includes(&root, spec_path, &src, &raw.include, &mut diags);
    let mut sources: Vec<MutationSource> = vec![(src, raw.mutations)];
    sources.extend(read_includes(include_files, &mut diags));
    let mutations = match &global {
        Some(global) => resolve_mutations(&root, &sources, global, &mut diags),
        None => Vec::new(),
    };

    if let Some(g) = &global {
        check_commands(&sources[0].0, raw.test.as_ref(), g, &mutations, &mut diags);
    }
    let (gate, timeout_is) = resolve_gate(&sources[0].0, raw.gate, &mutations, &mut diags);
    let thresholds = resolve_thresholds(&sources[0].0, raw.thresholds, &mut diags);

    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Spec {
        root,
        spec_path: spec_path.to_path_buf(),
        test: global.expect("global test config is present when there are no diagnostics"),
        link,
        mutations,
        gate,
        timeout_is,
        thresholds,
    })
}

/// The top-level `test` block of a spec that sets no `command` there: every
/// mutation must set its own. (An empty command is never a resolved one:
/// [`resolve_command`] refuses it.)
fn no_command() -> TestConfig {
    TestConfig {
        command: Command::Shell(String::new()),
        junit: None,
        timeout: TimeoutSetting::Auto,
        env: BTreeMap::new(),
        fail_codes: FailCodes::AnyNonZero,
        preset: Preset::Generic,
        check: None,
        git: SuiteGit::default(),
        select: Select::Auto,
    }
}

/// The top-level `test.command` (or the whole `test:` section) may be left
/// out only when every mutation sets its own `test.command` (it would never
/// run); otherwise the spec error names the mutations that need it.
fn check_commands(
    src: &SourceFile,
    t: Option<&Spanned<RawTest>>,
    global: &TestConfig,
    mutations: &[MutationSpec],
    diags: &mut Diagnostics,
) {
    if global.command != no_command().command {
        return;
    }
    let lacking: Vec<String> = mutations
        .iter()
        .filter(|m| m.test.command == global.command)
        .map(|m| format!("`{}`", m.id))
        .collect();
    if lacking.is_empty() {
        return;
    }
    let why = format!(
        "{} mutation(s) set no `test.command` of their own ({})",
        lacking.len(),
        lacking.join(", ")
    );
    let (diag, add) = match t {
        Some(t) => (
            src.at(t, format!("`test` needs a `command`: {why}")),
            "add `command: \"python3 -m pytest -q --junitxml={junit}\"` under `test:`",
        ),
        None => (
            src.diag(1, 1, format!("missing `test:` section: {why}")),
            "add `test: {command: \"python3 -m pytest -q\"}`",
        ),
    };
    diags.push(diag.with_fix(format!(
        "{add} (it runs every mutation without one), or give each of them a `test.command`"
    )));
}

/// `workspace.git`: `private` or `none` (the default).
fn resolve_git(
    src: &SourceFile,
    workspace: Option<&RawWorkspace>,
    diags: &mut Diagnostics,
) -> SuiteGit {
    let Some(g) = workspace.and_then(|ws| ws.git.as_ref()) else {
        return SuiteGit::None;
    };
    match g.value.as_str() {
        "private" => SuiteGit::Private,
        "none" => SuiteGit::None,
        other => {
            diags.push(
                src.at(g, format!("unknown `workspace.git` value `{other}`"))
                    .with_fix(
                        "use `git: private` (the suite gets a fresh repository of its copy for each run) \
                         or leave it out (git finds no repository: never the user's)",
                    ),
            );
            SuiteGit::None
        }
    }
}

/// `workspace.link`: ignored directories to symlink into every copy: a
/// name (linked at the top of the target and, where git ignores it, deeper
/// down) or a path relative to the root (`packages/a/.venv`). Never `.git`:
/// a copy never leads git back to the user's repository.
fn resolve_links(
    src: &SourceFile,
    workspace: Option<&RawWorkspace>,
    diags: &mut Diagnostics,
) -> Vec<String> {
    let mut link = Vec::new();
    for l in workspace.map_or(&[][..], |ws| &ws.link) {
        match check_rel_path(&l.value) {
            Ok(p) if p.split('/').any(|c| c == ".git") => diags.push(
                src.at(l, "`workspace.link` cannot name `.git`: a copy never reaches the user's repository")
                    .with_fix("remove it; a suite that needs git metadata opts in with `workspace.git: private`"),
            ),
            Ok(p) => link.push(p),
            Err(why) => diags.push(src.at(l, why.to_string()).with_fix(
                "name an ignored directory relative to the target root (e.g. `.venv` or `packages/a/node_modules`)",
            )),
        }
    }
    link
}

/// The files the `include:` globs match, sorted and without duplicates; each
/// must stay inside the target root. The spec itself is never one of them
/// (a glob like `*.yaml` that also matches it includes the others); an
/// entry that matches only the spec is a diagnostic.
fn resolve_includes(
    root: &Path,
    spec_path: &Path,
    src: &SourceFile,
    include: &[Spanned<String>],
    diags: &mut Diagnostics,
) -> Vec<PathBuf> {
    let itself = spec_path.canonicalize().ok();
    let mut include_files: Vec<PathBuf> = Vec::new();
    for inc in include {
        if let Err(why) = check_rel_path(&inc.value) {
            diags.push(
                src.at(inc, format!("include: {why}"))
                    .with_fix("include paths are relative to the target root and stay inside it"),
            );
            continue;
        }
        let rel = inc.value.trim_start_matches("./");
        // Checked as written, so a position counts in the user's pattern,
        // not in the root it is joined to.
        if let Err(e) = glob::Pattern::new(rel) {
            let at = e.pos + (inc.value.len() - rel.len());
            let near = inc.value[at.min(inc.value.len())..]
                .chars()
                .next()
                .map_or(String::new(), |c| format!(" (`{c}`)"));
            diags.push(
                src.at(
                    inc,
                    format!(
                        "bad include pattern `{}`: {} at character {}{near} of the pattern",
                        inc.value,
                        e.msg,
                        inc.value[..at.min(inc.value.len())].chars().count() + 1
                    ),
                )
                .with_fix("use a glob like `mutations/*.yaml` (`[` opens a character class: write `[[]` for a literal `[`)"),
            );
            continue;
        }
        // The root may contain glob metacharacters (`[`, `*`): escape it.
        let pattern = format!("{}/{rel}", glob::Pattern::escape(&root.to_string_lossy()));
        let mut matched: Vec<PathBuf> = match glob::glob(&pattern) {
            Ok(paths) => paths.filter_map(Result::ok).collect(),
            Err(e) => {
                diags.push(
                    src.at(
                        inc,
                        format!("bad include pattern `{}`: {}", inc.value, e.msg),
                    )
                    .with_fix("use a glob like `mutations/*.yaml`"),
                );
                continue;
            }
        };
        let before = matched.len();
        matched.retain(|m| m.canonicalize().ok() != itself);
        if matched.is_empty() && before > 0 {
            diags.push(
                src.at(
                    inc,
                    format!(
                        "include `{}` matches this spec file itself (and nothing else): its mutations are loaded already, and an included file holds only a `mutations:` list",
                        inc.value
                    ),
                )
                .with_fix("remove the entry, or name the files that hold more mutations (e.g. `mutations/*.yaml`)"),
            );
            continue;
        }
        if matched.is_empty() {
            diags.push(
                src.at(inc, format!("include `{}` matches no file", inc.value))
                    .with_fix("correct the path or remove the entry"),
            );
        }
        for m in matched {
            match m.canonicalize() {
                Ok(c) if c.starts_with(root) => include_files.push(c),
                _ => diags.push(
                    src.at(
                        inc,
                        format!("include `{}` leaves the target root", m.display()),
                    )
                    .with_fix("keep included spec files inside the target"),
                ),
            }
        }
    }
    include_files.sort();
    include_files.dedup();
    include_files
}

/// Read and parse the included spec files; one that fails is a diagnostic.
fn read_includes(paths: Vec<PathBuf>, diags: &mut Diagnostics) -> Vec<MutationSource> {
    let mut sources = Vec::new();
    for path in paths {
        match read_source(&path).and_then(|s| parse_yaml::<RawInclude>(&s).map(|r| (s, r))) {
            Ok((s, r)) => sources.push((s, r.mutations)),
            Err(d) => diags.push(d),
        }
    }
    sources
}

/// Validate `gate:`; every allowed id must name a declared mutation and carry a reason.
fn resolve_gate(
    src: &SourceFile,
    raw: Option<RawGate>,
    mutations: &[MutationSpec],
    diags: &mut Diagnostics,
) -> (GateConfig, Option<TimeoutPolicy>) {
    let raw = raw.unwrap_or_default();
    let mut gate = GateConfig {
        max_survived: raw.max_survived.unwrap_or(0) as usize,
        ..GateConfig::default()
    };
    if let Some(ms) = &raw.min_score {
        if (0.0..=100.0).contains(&ms.value) {
            gate.min_score = Some(ms.value);
        } else {
            diags.push(
                src.at(ms, format!("min_score {} is not a percentage", ms.value))
                    .with_fix("write a number from 0 to 100, e.g. `min_score: 90`"),
            );
        }
    }
    let timeout_is = raw
        .timeout_is
        .as_ref()
        .and_then(|t| match t.value.as_str() {
            "killed" => Some(TimeoutPolicy::Killed),
            "survived" => Some(TimeoutPolicy::Survived),
            "error" => Some(TimeoutPolicy::Error),
            other => {
                diags.push(
                    src.at(t, format!("unknown timeout_is `{other}`"))
                        .with_fix("use `killed`, `survived` or `error`"),
                );
                None
            }
        });
    if let Some(t) = &raw.twins {
        match t.value.trim() {
            "count" => gate.twins = TwinsPolicy::Count,
            "report" => gate.twins = TwinsPolicy::Report,
            other => diags.push(
                src.at(t, format!("unknown twins `{other}`"))
                    .with_fix("use `count` (tightening survivors fail the gate, the default) or `report` (listed as findings, gate unaffected)"),
            ),
        }
    }
    let mut seen: HashMap<String, u64> = HashMap::new();
    for a in &raw.allow {
        let id = &a.value.id;
        let reason = a.value.reason.as_deref().unwrap_or("").trim();
        if reason.is_empty() {
            diags.push(
                src.at(
                    &a.value.id,
                    format!("allow entry for `{}` has no reason", id.value),
                )
                .with_fix("add `reason: …`: say why this surviving mutant is acceptable"),
            );
        }
        if !mutations.iter().any(|m| m.id == id.value) {
            diags.push(
                src.at(
                    id,
                    format!("allow names `{}`, but no mutation has that id", id.value),
                )
                .with_fix("use an id from `unguard list`, or remove the entry"),
            );
        }
        if let Some(line) = seen.insert(id.value.clone(), id.referenced.line()) {
            diags.push(
                src.at(
                    id,
                    format!("`{}` is allowed twice (first on line {line})", id.value),
                )
                .with_fix("keep one allow entry per mutant"),
            );
        }
        gate.allow.push(Allow {
            id: id.value.clone(),
            reason: reason.to_string(),
        });
    }
    (gate, timeout_is)
}

fn resolve_thresholds(
    src: &SourceFile,
    raw: Option<Spanned<RawThresholds>>,
    diags: &mut Diagnostics,
) -> Thresholds {
    let Some(t) = raw else {
        return Thresholds::default();
    };
    let (high, low) = (t.value.high, t.value.low);
    if !(0.0..=100.0).contains(&low) || !(0.0..=100.0).contains(&high) || low > high {
        diags.push(
            src.at(
                &t,
                format!("thresholds high {high} / low {low} are not 0 ≤ low ≤ high ≤ 100"),
            )
            .with_fix("e.g. `thresholds: {high: 80, low: 60}`"),
        );
        return Thresholds::default();
    }
    Thresholds { high, low }
}
