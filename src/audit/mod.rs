//! `unguard audit` and `unguard init`: find the MCP security controls of a
//! repository with the built-in catalog, and either prove them right away
//! (audit) or write a starter unguard.yaml that does it (init).
//!
//! Both go through [`sites_to_mutations`]: every catalog site becomes one
//! literal single-site mutation (anchored by [`crate::audit::anchor`]), so the spec
//! `init` writes runs exactly the mutants `audit` runs.

pub mod anchor;
pub mod detect;
pub mod doc_trees;
pub mod init;
pub mod portfolio;
pub mod scan_scope;
pub mod server_entry;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::audit::detect::Detected;
use crate::audit::scan_scope::ScanScope;
use crate::catalog::{self, Operator, OperatorKind, Site};
use crate::error::{Context, Error, Result};
use crate::results::twins::Proof;
use crate::results::{Direction, GateConfig, Outcome, Results, Thresholds};
use crate::spec::{
    Command, Count, MutationSpec, Pattern, Spec, SpecPos, TestConfig, TimeoutSetting,
};
use crate::workspace;

/// A catalog site turned into a mutation.
#[derive(Debug, Clone)]
pub struct Found {
    /// The catalog operator that found the site.
    pub operator: &'static Operator,
    /// The site, as the operator's matcher found it.
    pub site: Site,
    /// The mutation id: the operator id, then `-2`, `-3`, … for its further
    /// sites.
    pub id: String,
    /// The literal `find` text that names this one site (see [`anchor`]).
    pub find: String,
    /// The `replace` text: `find` with the site mutated.
    pub replace: String,
}

/// A site left out of the run (reported, not run): no unique text anchors
/// it, or its mutant would not build.
#[derive(Debug, Clone)]
pub struct LeftOutSite {
    /// The catalog operator that found the site.
    pub operator: &'static Operator,
    /// The site, as the operator's matcher found it.
    pub site: Site,
    /// Why it is left out.
    pub why: LeftOut,
}

/// Why a site found is not run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LeftOut {
    /// No unique text anchors its mutation.
    #[error(transparent)]
    Unanchored(#[from] anchor::AnchorError),
    /// Its mutant would not build ([`catalog::viable`]): the compiler, not a
    /// test, would kill it.
    #[error("{0}")]
    Unbuildable(String),
}

impl LeftOut {
    /// The listing's status for a site left out for this reason.
    pub fn status(&self) -> &'static str {
        match self {
            LeftOut::Unanchored(_) => "unanchored",
            LeftOut::Unbuildable(_) => "unbuildable",
        }
    }
}

/// What the catalog found in a repository.
#[derive(Debug)]
pub struct Survey {
    /// The canonical root scanned (the workspace root when the repository is a
    /// package of a JavaScript workspace).
    pub root: PathBuf,
    /// What detection found: languages, SDKs, test command, environment dirs.
    pub detected: Detected,
    /// Catalog operators that apply to the repo's languages.
    pub operators: Vec<&'static Operator>,
    /// The anchored sites, each one mutation, by operator then file.
    pub found: Vec<Found>,
    /// Sites with no unique text to anchor a mutation on.
    pub left_out: Vec<LeftOutSite>,
    /// Sites of presence-only operators (reported, never mutated).
    pub present: Vec<(&'static Operator, Site)>,
    /// Files the default excludes kept out (tests, scripts, docs, …).
    pub skipped_by_default: usize,
    /// Documentation and example code kept out by its content and place
    /// ([`doc_trees`]), by directory or class of files.
    pub set_aside: Vec<doc_trees::SetAside>,
}

/// Scan `root` (its git-visible files, or a plain walk) with every audit
/// operator, within `scope`.
pub fn survey(root: &Path, exclude: &[PathBuf], scope: &ScanScope) -> Result<Survey> {
    survey_in(root, exclude, scope, false)
}

/// [`survey`]; with `workspace`, a package of a JavaScript workspace is
/// surveyed from the workspace root (the copy every run gets, since its
/// dependencies live there), its scan limited to the package's files.
pub fn survey_in(
    root: &Path,
    exclude: &[PathBuf],
    scope: &ScanScope,
    workspace: bool,
) -> Result<Survey> {
    let package = root
        .canonicalize()
        .with_context(|| root.display().to_string())?;
    let js = crate::audit::detect::environment::js_env(&package)
        .filter(|j| workspace && !j.package_dir.is_empty());
    let (root, package_dir) = match &js {
        Some(j) => (j.root.clone(), Some(format!("{}/", j.package_dir))),
        None => (package.clone(), None),
    };
    let in_package = |f: &str| package_dir.as_deref().is_none_or(|p| f.starts_with(p));
    let manifest = workspace::manifest(&root, exclude, &[])
        .map_err(|e| Error::Usage(format!("listing the files of {}: {e:#}", root.display())))?;
    if !manifest.opaque.is_empty() {
        let some: Vec<String> = manifest
            .opaque
            .iter()
            .take(3)
            .map(|p| format!("{:?}", p.display().to_string()))
            .collect();
        eprintln!(
            "unguard: warning: {} file(s) not scanned: their names are not UTF-8, so no spec could name them ({}{})",
            manifest.opaque.len(),
            some.join(", "),
            if manifest.opaque.len() > 3 { ", …" } else { "" }
        );
    }
    let detected = match &package_dir {
        Some(p) => {
            let files: Vec<String> = manifest
                .entries
                .iter()
                .filter_map(|f| f.strip_prefix(p.as_str()).map(str::to_string))
                .collect();
            detect::detect(&package, &files)
        }
        None => detect::detect(&root, &manifest.entries),
    };
    let mut operators: Vec<&'static Operator> = applicable(&detected, OperatorKind::Audit)
        .into_iter()
        .filter(|op| scope.keeps_control(op))
        .collect();
    if scope.generic_guards() {
        operators.push(catalog::shape::guard_operator());
    }
    let entries: Vec<String> = manifest
        .entries
        .iter()
        .filter(|f| in_package(f))
        .cloned()
        .collect();
    let (scope, set_aside) = package_scope(&root, package_dir.as_deref(), &entries, scope);
    let scope = &scope;
    let skipped_by_default = scope.defaults_skipped(&entries).len();
    let (presence, mut sites): (Vec<Site>, Vec<Site>) =
        catalog::scan_where(catalog::catalog(), &root, &entries, |op, file| {
            scope.admits(op, file)
        })
        .into_iter()
        // `--shapes-only`: the matchers' sites go, their presence checks stay.
        .filter(|s| {
            !scope.shapes_only()
                || operators
                    .iter()
                    .any(|o| o.id == s.operator && o.presence_only)
        })
        .partition(|s| {
            operators
                .iter()
                .any(|o| o.id == s.operator && o.presence_only)
        });
    let present = presence
        .into_iter()
        .filter_map(|s| {
            let op = operators.iter().find(|o| o.id == s.operator)?;
            Some((*op, s))
        })
        .collect();
    // Controls found by shape (catalog/shape/), where no operator found one.
    if scope.shapes() {
        let shaped = catalog::shape::scan(
            &root,
            &entries,
            &sites,
            scope.vocabulary(),
            scope.generic_guards(),
            |f| scope.admits_file(f),
            |op, f| scope.admits(op, f),
        );
        sites.extend(shaped);
    }
    let (found, left_out) = sites_to_mutations(&root, &operators, sites);
    Ok(Survey {
        root,
        detected,
        operators,
        found,
        left_out,
        present,
        skipped_by_default,
        set_aside,
    })
}

/// `scope` for the package at `prefix` (a directory ending in `/`; `None`
/// for the whole repository at `root`) with `files`: its start scripts
/// scanned ([`server_entry`]), its documentation and example code set aside
/// ([`doc_trees`]); with the groups set aside that the scope keeps out.
fn package_scope(
    root: &Path,
    prefix: Option<&str>,
    files: &[String],
    scope: &ScanScope,
) -> (ScanScope, Vec<doc_trees::SetAside>) {
    let prefix = prefix.unwrap_or("");
    let starts = server_entry::entry_files_in(root, prefix, files);
    let docs = if scope.sets_aside_docs() {
        doc_trees::find(root, prefix, files, &starts)
    } else {
        doc_trees::DocTrees::default()
    };
    let scope = scope
        .clone()
        .with_entries(starts)
        .with_set_aside(docs.files());
    let set_aside = docs
        .groups
        .into_iter()
        .map(|mut g| {
            g.files.retain(|f| scope.sets_aside(f));
            g
        })
        .filter(|g| !g.files.is_empty())
        .collect();
    (scope, set_aside)
}

/// The catalog operators of `kind` for the languages the repo uses.
pub fn applicable(detected: &Detected, kind: OperatorKind) -> Vec<&'static Operator> {
    catalog::catalog()
        .iter()
        .filter(|op| op.kind == kind)
        .filter(|op| {
            op.languages.iter().any(|l| match l {
                catalog::Language::Python => detected.python,
                catalog::Language::TypeScript => detected.typescript,
                catalog::Language::Go => detected.go,
            })
        })
        .collect()
}

/// Anchor every site; ids are the operator id, with `-2`, `-3` … for its
/// further sites (in file order).
pub fn sites_to_mutations(
    root: &Path,
    operators: &[&'static Operator],
    sites: Vec<Site>,
) -> (Vec<Found>, Vec<LeftOutSite>) {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut sites = distinct_mutants(root, sites, &mut sources);
    sites.sort_by(|a, b| (&a.operator, &a.file, a.start).cmp(&(&b.operator, &b.file, b.start)));
    let mut per_op: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = Vec::new();
    let mut left_out = Vec::new();
    let mut checker = catalog::viable::Checker::default();
    for mut site in sites {
        let Some(op) = operators.iter().find(|o| o.id == site.operator) else {
            continue;
        };
        let source = sources
            .entry(site.file.clone())
            .or_insert_with(|| read_source(root, &site.file));
        if let Some(why) = unbuildable(&mut checker, source, &mut site) {
            left_out.push(LeftOutSite {
                operator: op,
                site,
                why: LeftOut::Unbuildable(why),
            });
            continue;
        }
        match anchor::anchor(source, site.start, site.end, &site.replacement) {
            Ok(a) => {
                let n = per_op.entry(op.id.clone()).or_insert(0);
                *n += 1;
                let id = if *n == 1 {
                    op.id.clone()
                } else {
                    format!("{}-{}", op.id, n)
                };
                found.push(Found {
                    operator: op,
                    site,
                    id,
                    find: a.find,
                    replace: a.replace,
                });
            }
            Err(why) => left_out.push(LeftOutSite {
                operator: op,
                site,
                why: why.into(),
            }),
        }
    }
    // Spec order: by file, then position, like a hand-written spec.
    found.sort_by(|a, b| (&a.site.file, a.site.start).cmp(&(&b.site.file, b.site.start)));
    (found, left_out)
}

/// Why the site's mutant would not build, after rewriting the site so that
/// it does where that is possible ([`catalog::viable::rescued`]); `None`
/// when it builds.
fn unbuildable(
    checker: &mut catalog::viable::Checker,
    source: &str,
    site: &mut Site,
) -> Option<String> {
    let mut check = |s: &Site| checker.unbuildable(&s.file, source, s.start, s.end, &s.replacement);
    let why = check(site)?;
    if let Some(replacement) = catalog::viable::rescued(&site.original, &site.replacement) {
        let fixed = Site {
            replacement,
            ..site.clone()
        };
        if check(&fixed).is_none() {
            *site = fixed;
            return None;
        }
    }
    Some(why)
}

/// One site per distinct mutant: two operators whose edits leave the same
/// file (the same removal seen by two controls) give one mutant, labelled by
/// the operator that comes first in the catalog.
fn distinct_mutants(
    root: &Path,
    mut sites: Vec<Site>,
    sources: &mut BTreeMap<String, String>,
) -> Vec<Site> {
    use std::collections::HashSet;
    use std::hash::{DefaultHasher, Hash, Hasher};
    let order = |id: &str| {
        catalog::catalog()
            .iter()
            .position(|o| o.id == id)
            .unwrap_or(usize::MAX)
    };
    sites.sort_by_cached_key(|s| (s.file.clone(), s.start, s.end, order(&s.operator)));
    let mut seen = HashSet::new();
    sites.retain(|site| {
        let source = sources
            .entry(site.file.clone())
            .or_insert_with(|| read_source(root, &site.file));
        let mut h = DefaultHasher::new();
        site.file.hash(&mut h);
        site.apply(source.as_bytes()).hash(&mut h);
        seen.insert(h.finish())
    });
    sites
}

/// A source file's text (lossy; empty when unreadable), as the scan saw it.
fn read_source(root: &Path, file: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(root.join(file)).unwrap_or_default()).into_owned()
}

/// The line a site is reported at (every listing uses this one line).
pub fn site_line(site: &Site) -> usize {
    site.changed_line
}

/// One row of `audit --list`.
#[derive(Debug, serde::Serialize)]
pub struct Listed<'a> {
    /// The mutant id `audit` runs and `init` writes (empty when not run).
    pub id: &'a str,
    /// The catalog control (operator id).
    pub control: &'a str,
    /// The operator's seed rule, with its check id when it has one:
    /// `002/4 (FID-003)`.
    pub rule: String,
    /// The file, relative to the survey's root.
    pub file: &'a str,
    /// The site's line (the first line its mutation changes).
    pub line: usize,
    /// `mutant` (run by audit), `present` (presence-only control, never
    /// mutated), `unanchored` (no unique text to anchor a mutation on) or
    /// `unbuildable` (its mutant would not build).
    pub status: &'static str,
    /// Why an unanchored or unbuildable site is left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The original text of the site's line, trimmed.
    pub text: String,
}

/// Every site of a survey, by file and line.
pub fn listed(survey: &Survey) -> Vec<Listed<'_>> {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut text = |file: &str, line: usize| {
        let source = sources
            .entry(file.to_string())
            .or_insert_with(|| read_source(&survey.root, file));
        source
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let mut rows = Vec::new();
    for f in &survey.found {
        let line = site_line(&f.site);
        rows.push(Listed {
            id: &f.id,
            control: &f.operator.id,
            rule: rule_text(f.operator),
            file: &f.site.file,
            line,
            status: "mutant",
            why: None,
            text: text(&f.site.file, line),
        });
    }
    for u in &survey.left_out {
        let line = site_line(&u.site);
        rows.push(Listed {
            id: "",
            control: &u.operator.id,
            rule: rule_text(u.operator),
            file: &u.site.file,
            line,
            status: u.why.status(),
            why: Some(u.why.to_string()),
            text: text(&u.site.file, line),
        });
    }
    for (op, site) in &survey.present {
        let line = site_line(site);
        rows.push(Listed {
            id: "",
            control: &op.id,
            rule: rule_text(op),
            file: &site.file,
            line,
            status: "present",
            why: None,
            text: text(&site.file, line),
        });
    }
    // Generic guards (found by shape, control not named) rank after named sites.
    let generic = |r: &Listed<'_>| r.control == catalog::shape::GUARD;
    rows.sort_by(|a, b| {
        (generic(a), a.file, a.line, a.control).cmp(&(generic(b), b.file, b.line, b.control))
    });
    rows
}

/// `audit --list`: one line per site, `file:line  control  id  text`.
pub fn listing_text(survey: &Survey) -> String {
    let mut s = String::new();
    for r in listed(survey) {
        let what = match r.status {
            "mutant" => r.id.to_string(),
            "present" => "(present; presence-only)".to_string(),
            _ => format!("(not run: {})", r.why.as_deref().unwrap_or("")),
        };
        let text: String = r.text.chars().take(100).collect();
        s.push_str(&format!(
            "{}:{}\t{}\t{}\t{}\n",
            r.file, r.line, r.control, what, text
        ));
    }
    s
}

/// `audit --list --json`.
pub fn listing_json(survey: &Survey) -> String {
    let doc = serde_json::json!({
        "root": survey.root.display().to_string(),
        "sdks": survey.detected.sdks,
        "skipped_by_default": survey.skipped_by_default,
        "set_aside": survey.set_aside,
        "sites": listed(survey),
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// The rule text of an operator as it goes into a spec: `002/4 (FID-003)`.
pub fn rule_text(op: &Operator) -> String {
    match &op.check {
        Some(c) => format!("{} ({c})", op.rule),
        None => op.rule.clone(),
    }
}

/// The test configuration for a detected (or given) command.
pub fn test_config(detected: &Detected, command: Option<&str>) -> Result<TestConfig> {
    let (command, junit, preset) = match (command, &detected.test) {
        (Some(c), _) => {
            let junit = c.contains("{junit}").then(|| "{junit}".to_string());
            let preset = crate::runner::preset(&Command::Shell(c.to_string()));
            (c.to_string(), junit, preset)
        }
        (None, Some(t)) => (t.command.clone(), t.junit.clone(), t.preset),
        (None, None) => {
            return Err(Error::Usage(
                "no test command found (no pytest/unittest layout, no package.json `test` script, no Cargo.toml); pass --test-command 'CMD'"
                    .into(),
            ))
        }
    };
    Ok(TestConfig {
        command: Command::Shell(command),
        junit,
        timeout: TimeoutSetting::Auto,
        env: BTreeMap::new(),
        fail_codes: preset.fail_codes(),
        preset,
        check: None,
        git: Default::default(),
        select: Default::default(),
    })
}

/// The spec `audit` runs: one mutation per anchored site.
pub fn audit_spec(survey: &Survey, test: TestConfig, timeout: Option<Duration>) -> Spec {
    let mutations = survey
        .found
        .iter()
        .map(|f| MutationSpec {
            id: f.id.clone(),
            control: f.operator.mutant_control().to_string(),
            rule: Some(rule_text(f.operator)),
            direction: f.operator.direction,
            file: f.site.file.clone(),
            pattern: Pattern::Literal {
                text: f.find.clone(),
                exact_whitespace: true,
            },
            replace: f.replace.clone(),
            count: Count::Exactly(1),
            // Emptying a config file proves nothing about reach: the canary
            // is for source files only.
            canary: catalog::Language::from_path(&f.site.file).is_some(),
            killed_by: Vec::new(),
            timeout,
            test: test.clone(),
            pos: SpecPos {
                path: f.site.file.clone(),
                line: f.site.changed_line as u64,
                col: f.site.changed_col() as u64,
            },
        })
        .collect();
    Spec {
        root: survey.root.clone(),
        spec_path: PathBuf::from("<built-in catalog>"),
        test,
        link: Vec::new(),
        mutations,
        gate: GateConfig::default(),
        timeout_is: None,
        thresholds: Thresholds::default(),
    }
}

/// How one control fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ControlVerdict {
    /// A site survived (or no test executes it, or it was red for the wrong
    /// reason, or flaky): unproven ([`Proof::Unproven`]).
    Unproven,
    /// The suite hung without the control.
    Hung,
    /// Sites exist but no verdict was possible (unreached, unviable, spec error).
    NoVerdict,
    /// Every site killed.
    Proven,
    /// A presence-only control (e.g. a suite timeout) was found.
    Present,
    /// The operator found no site.
    NotPresent,
}

impl ControlVerdict {
    /// The heading of this verdict's section in the grouped report.
    pub fn label(self) -> &'static str {
        match self {
            ControlVerdict::Unproven => "unproven (survived)",
            ControlVerdict::Hung => "hung",
            ControlVerdict::NoVerdict => "no verdict",
            ControlVerdict::Proven => "proven (killed)",
            ControlVerdict::Present => "present (checked by presence only)",
            ControlVerdict::NotPresent => "not present",
        }
    }
    /// Icon and word, for a table cell (the portfolio matrix).
    pub fn cell(self) -> &'static str {
        match self {
            ControlVerdict::Unproven => "❌ unproven",
            ControlVerdict::Hung => "⏱️ hung",
            ControlVerdict::NoVerdict => "⚠️ no verdict",
            ControlVerdict::Proven => "✅ proven",
            ControlVerdict::Present => "✅ present",
            ControlVerdict::NotPresent => "— not present",
        }
    }
}

/// One line of the grouped report.
#[derive(Debug, Clone)]
pub struct ControlRow {
    /// The catalog operator (the control).
    pub operator: &'static Operator,
    /// How the control fared over all its sites.
    pub verdict: ControlVerdict,
    /// `id outcome file:line` per site.
    pub sites: Vec<(String, Outcome, String)>,
    /// For a control with a direction (seed 002 rule 5): (negative proven,
    /// positive proven) over this operator and its twins.
    pub twins: Option<(Proof, Proof)>,
}

/// Negative and positive proof of `op`'s control: its loosening operator's
/// sites and those of every tightening operator paired with it (`twin_of`).
fn twin_proof(survey: &Survey, op: &Operator, results: Option<&Results>) -> Option<(Proof, Proof)> {
    op.direction?;
    let root = op.twin_of.as_deref().unwrap_or(&op.id);
    let in_pair =
        |o: &Operator| o.id == root || o.twin_of.as_deref() == Some(root) || o.id == op.id;
    let outcomes = |d: Direction| -> Vec<Outcome> {
        survey
            .found
            .iter()
            .filter(|f| in_pair(f.operator) && f.operator.direction == Some(d))
            .filter_map(|f| results?.mutants.iter().find(|m| m.id == f.id))
            .map(|m| m.outcome)
            .collect()
    };
    Some((
        Proof::of(&outcomes(Direction::Loosen)),
        Proof::of(&outcomes(Direction::Tighten)),
    ))
}

/// Group the results by control (catalog operator).
pub fn by_control(survey: &Survey, results: Option<&Results>) -> Vec<ControlRow> {
    let mut rows = Vec::new();
    for op in &survey.operators {
        let mut sites = Vec::new();
        for f in survey.found.iter().filter(|f| f.operator.id == op.id) {
            let outcome = results
                .and_then(|r| r.mutants.iter().find(|m| m.id == f.id))
                .map(|m| m.outcome);
            if let Some(o) = outcome {
                sites.push((f.id.clone(), o, f.site.location()));
            }
        }
        let verdict = if op.presence_only {
            if survey.present.iter().any(|(o, _)| o.id == op.id) {
                ControlVerdict::Present
            } else {
                ControlVerdict::NotPresent
            }
        } else {
            // The sites' verdict is one direction's proof (the same rule).
            let outcomes: Vec<Outcome> = sites.iter().map(|(_, o, _)| *o).collect();
            match Proof::of(&outcomes) {
                Proof::Unproven => ControlVerdict::Unproven,
                Proof::Hung => ControlVerdict::Hung,
                Proof::NoVerdict => ControlVerdict::NoVerdict,
                Proof::Proven => ControlVerdict::Proven,
                Proof::None => ControlVerdict::NotPresent,
            }
        };
        rows.push(ControlRow {
            operator: op,
            verdict,
            sites,
            twins: twin_proof(survey, op, results),
        });
    }
    rows.sort_by(|a, b| (a.verdict, &a.operator.id).cmp(&(b.verdict, &b.operator.id)));
    rows
}

/// Whether an operator's control is expected of this server: it is marked
/// `expected`, and its transport applies (the transport group's controls,
/// Host/Origin allow-lists and their kin, only when an HTTP transport is
/// served; a stdio-only server has no Host header to check).
pub fn expected_here(op: &Operator, detected: &Detected) -> bool {
    op.expected && (op.group != catalog::Group::Transport || detected.serves_http)
}

/// The expected controls with no site, as the gate's findings.
pub fn findings(survey: &Survey, rows: &[ControlRow]) -> crate::gate::AuditFindings {
    crate::gate::AuditFindings {
        expected_absent: rows
            .iter()
            .filter(|r| {
                r.verdict == ControlVerdict::NotPresent
                    && expected_here(r.operator, &survey.detected)
            })
            .map(|r| format!("{} ({})", r.operator.id, rule_text(r.operator)))
            .collect(),
    }
}

/// The test command a report names: the one that ran, and why.
#[derive(Debug, Clone)]
pub struct RanCommand {
    /// The test command, as run.
    pub command: String,
    /// Why this command: `given with --test-command`, or the detection's reason.
    pub why: String,
}

impl RanCommand {
    /// `command` as given with `--test-command` (or a portfolio entry), or
    /// the detected one with the reason it was chosen.
    pub fn new(test: &TestConfig, detected: &Detected, given: bool) -> RanCommand {
        let why = match (&detected.test, given) {
            (Some(t), false) => t.reason.clone(),
            _ => "given with --test-command".into(),
        };
        RanCommand {
            command: test.command.display(),
            why,
        }
    }
}

/// The grouped report in Markdown: one section per verdict, unproven first.
pub fn grouped_markdown(survey: &Survey, rows: &[ControlRow], ran: &RanCommand) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "## unguard audit: {}\n\n",
        survey.root.file_name().map_or_else(
            || survey.root.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        )
    ));
    let sdks = if survey.detected.sdks.is_empty() {
        "no MCP SDK import seen".to_string()
    } else {
        survey.detected.sdks.join(", ")
    };
    s.push_str(&format!(
        "SDK: {sdks}. Test command: `{}` ({}).\n",
        ran.command, ran.why
    ));
    for verdict in [
        ControlVerdict::Unproven,
        ControlVerdict::Hung,
        ControlVerdict::NoVerdict,
        ControlVerdict::Proven,
        ControlVerdict::Present,
        ControlVerdict::NotPresent,
    ] {
        let group: Vec<&ControlRow> = rows.iter().filter(|r| r.verdict == verdict).collect();
        if group.is_empty() {
            continue;
        }
        s.push_str(&format!("\n### {} ({})\n\n", verdict.label(), group.len()));
        for r in group {
            let op = r.operator;
            let mut line = format!(
                "- **{}** ({}): {}",
                op.id,
                rule_text(op),
                crate::report::cell(&op.control)
            );
            if verdict == ControlVerdict::Present {
                let at: Vec<String> = survey
                    .present
                    .iter()
                    .filter(|(o, _)| o.id == op.id)
                    .map(|(_, site)| site.location())
                    .collect();
                line.push_str(&format!(" — at {}", at.join(", ")));
            } else if verdict == ControlVerdict::NotPresent {
                line.push_str(if expected_here(op, &survey.detected) {
                    " — *a server should have this control: its absence is a finding*"
                } else if op.expected {
                    " — expected of servers that serve HTTP; no HTTP transport seen here"
                } else {
                    " — not used here"
                });
            } else {
                let sites: Vec<String> = r
                    .sites
                    .iter()
                    .map(|(id, o, at)| format!("`{id}` {} at {at}", o.as_str()))
                    .collect();
                line.push_str(&format!(" — {}", sites.join("; ")));
            }
            if let Some((neg, pos)) = r.twins.filter(|_| !r.sites.is_empty()) {
                line.push_str(&format!(
                    " — negative proven: {} · positive proven: {}",
                    neg.cell(),
                    pos.cell()
                ));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    unreached_section(&mut s, rows);
    if !survey.left_out.is_empty() {
        s.push_str("\n### sites left out (no unique anchor, or a mutant that would not build)\n\n");
        for u in &survey.left_out {
            s.push_str(&format!(
                "- {} at {}:{}: {}\n",
                u.operator.id, u.site.file, u.site.changed_line, u.why
            ));
        }
    }
    s
}

/// The files no test loads, apart from the verdicts: a canary emptied each
/// file and the suite stayed green, so its sites prove nothing either way.
fn unreached_section(s: &mut String, rows: &[ControlRow]) {
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in rows {
        for (id, o, at) in &r.sites {
            if *o == Outcome::Unreached {
                let file = at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f);
                files.entry(file.to_string()).or_default().push(id.clone());
            }
        }
    }
    if files.is_empty() {
        return;
    }
    s.push_str(&format!("\n### files no test loads ({})\n\n", files.len()));
    for (file, ids) in files {
        s.push_str(&format!(
            "- {file}: emptied, the suite stayed green; its sites ({}) prove nothing until a test imports it\n",
            ids.join(", ")
        ));
    }
}

/// One cell of the portfolio matrix: the verdict, and for a control with a
/// direction both proofs (`neg ✅ · pos ❌`).
fn matrix_cell(r: &ControlRow) -> String {
    match r.twins {
        Some((neg, pos)) if !r.sites.is_empty() => format!(
            "{} (neg {} · pos {})",
            r.verdict.cell(),
            neg.icon(),
            pos.icon()
        ),
        _ => r.verdict.cell().to_string(),
    }
}

/// The portfolio matrix: one row per control, one column per repository.
/// A repository whose audit stopped early (red baseline, no test command)
/// shows `stopped` in every cell.
pub fn portfolio_matrix(columns: &[(String, Option<Vec<ControlRow>>)]) -> String {
    let mut ids: Vec<&'static Operator> = Vec::new();
    for (_, rows) in columns {
        for r in rows.iter().flatten() {
            if !ids.iter().any(|o| o.id == r.operator.id) {
                ids.push(r.operator);
            }
        }
    }
    let order: Vec<&str> = catalog::catalog().iter().map(|o| o.id.as_str()).collect();
    ids.sort_by_key(|o| order.iter().position(|i| *i == o.id).unwrap_or(usize::MAX));
    let mut b = tabled::builder::Builder::default();
    let mut head = vec!["control".to_string(), "rule".to_string()];
    head.extend(columns.iter().map(|(name, _)| crate::report::cell(name)));
    b.push_record(head);
    for op in ids {
        let mut row = vec![
            crate::report::cell(&op.id),
            crate::report::cell(&rule_text(op)),
        ];
        for (_, rows) in columns {
            row.push(match rows {
                None => "stopped".to_string(),
                Some(rows) => rows
                    .iter()
                    .find(|r| r.operator.id == op.id)
                    .map_or("n/a".to_string(), matrix_cell),
            });
        }
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(tabled::settings::Style::markdown());
    t.to_string()
}
