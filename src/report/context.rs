//! The context every report template renders with (`templates/README.md`
//! documents it for users).
//!
//! Each mutant is a lazy template object ([`MutantView`]): an index into the
//! shared [`Results`], whose fields (the model's own and the computed ones,
//! `diff_lines` included) are built only when a template reads them. A report
//! of 10,000 mutants holds 10,000 small handles, not 10,000 maps of 33 keys.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object};
use minijinja::Value;
use serde::Serialize;
use serde_json::{json, Value as Json};

use super::red_tests_cell;
use crate::error::{Context as _, Result};
use crate::results::{MutantResult, Outcome, Results};

/// First line of every PR comment: a CI step finds its previous comment by it.
pub const MARKER: &str = "<!-- unguard -->";

/// The most findings `findings_shown` holds: the PR comment details at most
/// this many (survivors first) and says how many more there are.
pub const FINDINGS_SHOWN_MAX: usize = 100;

/// The outcomes in report order (that of `Summary::line`), with the icon
/// the reports show for each.
const OUTCOMES: [(Outcome, &str); 11] = [
    (Outcome::Killed, "✅"),
    (Outcome::Survived, "❌"),
    (Outcome::NoCoverage, "🕳️"),
    (Outcome::Timeout, "⏱️"),
    (Outcome::WrongReason, "⚠️"),
    (Outcome::Unreached, "🚫"),
    (Outcome::Unviable, "🧱"),
    (Outcome::NoOp, "➖"),
    (Outcome::Ambiguous, "❓"),
    (Outcome::Flaky, "🎲"),
    (Outcome::InternalError, "💥"),
];

/// The outcomes that get a collapsible section in the PR comment, in the
/// order of the sections: survivors first (they are the findings).
const FINDINGS: [Outcome; 6] = [
    Outcome::Survived,
    Outcome::NoCoverage,
    Outcome::Flaky,
    Outcome::WrongReason,
    Outcome::Timeout,
    Outcome::Unreached,
];

/// The other outcomes that are not a clean kill, listed briefly.
const OTHERS: [Outcome; 4] = [
    Outcome::Unviable,
    Outcome::NoOp,
    Outcome::Ambiguous,
    Outcome::InternalError,
];

/// Icon of an allowed survivor / wrong-reason / timeout.
const ALLOWED_ICON: &str = "🔕";

fn icon(o: Outcome) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(x, _)| *x == o)
        .map(|(_, i)| *i)
        .unwrap_or("")
}

fn is_finding(o: Outcome) -> bool {
    FINDINGS.contains(&o)
}

/// The template context, built once per report; [`Context::value`] gives
/// the value to render with, for a given list limit.
pub(crate) struct Context {
    /// Every top-level variable except the `*_shown` / `*_omitted` ones.
    base: Vec<(String, Value)>,
    mutants: Vec<Value>,
    findings: Vec<Value>,
    others: Vec<Value>,
}

impl Context {
    pub(crate) fn new(results: &Arc<Results>) -> Result<Context> {
        // One handle per mutant, shared by `results.mutants`, `mutants`,
        // `findings` and `others`.
        let mutants: Vec<Value> = (0..results.mutants.len())
            .map(|index| {
                Value::from_object(MutantView {
                    results: Arc::clone(results),
                    index,
                })
            })
            .collect();
        // By outcome in the given order, spec order within each.
        let by_outcome = |order: &[Outcome]| -> Vec<Value> {
            order
                .iter()
                .flat_map(|o| {
                    results
                        .mutants
                        .iter()
                        .zip(&mutants)
                        .filter(move |(m, _)| m.outcome == *o)
                        .map(|(_, v)| v.clone())
                })
                .collect()
        };
        let findings = by_outcome(&FINDINGS);
        let others = by_outcome(&OTHERS);
        let all = Value::from(mutants.clone());
        let results_value = Value::from_pairs(
            model_without_mutants(results)
                .context("serializing the results for the report template")?
                .into_iter()
                .map(|(k, v)| (k, to_value(v)))
                .chain(std::iter::once(("mutants".to_string(), all.clone()))),
        );

        let s = &results.summary;
        let level = results.thresholds.level(s.score);
        let line = s.line();
        let counts_line = line
            .rsplit_once("; ")
            .map(|(a, _)| a.to_string())
            .unwrap_or_else(|| line.clone());
        let outcomes: Vec<Json> = OUTCOMES
            .iter()
            .filter_map(|(o, i)| {
                let n = results.mutants.iter().filter(|m| m.outcome == *o).count();
                (n > 0).then(|| json!({"name": o.as_str(), "count": n, "icon": i}))
            })
            .collect();
        let passed = results.gate.passed;
        let scalars = json!({
            "marker": MARKER,
            "verdict": if passed { "passed" } else { "failed" },
            "gate_icon": if passed { "✅" } else { "❌" },
            "summary_line": line,
            "counts_line": counts_line,
            "score": s.score.map(|x| format!("{x:.1}%")),
            "score_level": level,
            "score_icon": match level {
                "high" => "🟢",
                "medium" => "🟡",
                "low" => "🔴",
                _ => "⚪",
            },
            "outcomes": outcomes,
            "controls": crate::results::twins::by_control(&results.mutants).iter().map(|t| json!({
                "control": t.control,
                "negative": t.negative.as_str(),
                "negative_cell": t.negative.cell(),
                "positive": t.positive.as_str(),
                "positive_cell": t.positive.cell(),
                "loosen": t.loosen,
                "tighten": t.tighten,
            })).collect::<Vec<_>>(),
            "duration": format!("{:.1}s", results.duration_s),
        });
        let Json::Object(scalars) = scalars else {
            unreachable!("a json! object literal")
        };
        let base = scalars
            .into_iter()
            .map(|(k, v)| (k, to_value(v)))
            .chain([
                ("results".to_string(), results_value),
                ("mutants".to_string(), all),
                ("findings".to_string(), Value::from(findings.clone())),
                ("others".to_string(), Value::from(others.clone())),
            ])
            .collect();
        Ok(Context {
            base,
            mutants,
            findings,
            others,
        })
    }

    /// The most mutants any list can show (`limit` past it changes nothing).
    pub(crate) fn longest(&self) -> usize {
        self.mutants.len().max(self.others.len())
    }

    /// The context with `mutants_shown`, `findings_shown` and `others_shown`
    /// holding the first `limit` of their lists (`findings_shown` never more
    /// than [`FINDINGS_SHOWN_MAX`]) and `*_omitted` counting the rest.
    pub(crate) fn value(&self, limit: usize) -> Value {
        let cut = |name: &str, xs: &[Value], n: usize| {
            let n = n.min(xs.len());
            [
                (format!("{name}_shown"), Value::from(xs[..n].to_vec())),
                (format!("{name}_omitted"), Value::from(xs.len() - n)),
            ]
        };
        Value::from_pairs(
            self.base
                .iter()
                .cloned()
                .chain(cut("mutants", &self.mutants, limit))
                .chain(cut(
                    "findings",
                    &self.findings,
                    limit.min(FINDINGS_SHOWN_MAX),
                ))
                .chain(cut("others", &self.others, limit)),
        )
    }
}

/// The model's top-level fields as JSON, `mutants` left out (they are
/// [`MutantView`]s). The destructuring names every field, so a field added to
/// [`Results`] does not compile until it is added here too.
fn model_without_mutants(r: &Results) -> serde_json::Result<serde_json::Map<String, Json>> {
    let Results {
        schema,
        unguard_version,
        fingerprint,
        started_at,
        root,
        spec,
        timeout_policy,
        jobs,
        interrupted,
        duration_s,
        baselines,
        canaries,
        subset_checks,
        coverage_files,
        mutants: _,
        summary,
        gate,
        gate_config,
        thresholds,
        selection,
        sources,
        hashes,
    } = r;
    let mut m = serde_json::Map::new();
    let mut put = |k: &str, v: Json| {
        m.insert(k.to_string(), v);
    };
    put("schema", serde_json::to_value(schema)?);
    put("unguard_version", serde_json::to_value(unguard_version)?);
    if let Some(f) = fingerprint {
        put("fingerprint", serde_json::to_value(f)?);
    }
    put("started_at", serde_json::to_value(started_at)?);
    put("root", serde_json::to_value(root)?);
    put("spec", serde_json::to_value(spec)?);
    put("timeout_policy", serde_json::to_value(timeout_policy)?);
    put("jobs", serde_json::to_value(jobs)?);
    put("interrupted", serde_json::to_value(interrupted)?);
    put("duration_s", serde_json::to_value(duration_s)?);
    put("baselines", serde_json::to_value(baselines)?);
    put("canaries", serde_json::to_value(canaries)?);
    put("subset_checks", serde_json::to_value(subset_checks)?);
    if !coverage_files.is_empty() {
        put("coverage_files", serde_json::to_value(coverage_files)?);
    }
    put("summary", serde_json::to_value(summary)?);
    put("gate", serde_json::to_value(gate)?);
    put("gate_config", serde_json::to_value(gate_config)?);
    put("thresholds", serde_json::to_value(thresholds)?);
    put("selection", serde_json::to_value(selection)?);
    put("sources", serde_json::to_value(sources)?);
    if !hashes.is_empty() {
        put("hashes", serde_json::to_value(hashes)?);
    }
    Ok(m)
}

/// Every key of a mutant in a template, sorted (the order `|items` and
/// `|dictsort` see, as for a map): the model's fields, then the computed ones.
pub(crate) const MUTANT_KEYS: [&str; 45] = [
    "allowed",
    "command",
    "control",
    "detail",
    "diff",
    "diff_file",
    "diff_href",
    "diff_lines",
    "direction",
    "duration_s",
    "exit",
    "file",
    "fingerprint",
    "full_suite",
    "icon",
    "id",
    "inputs",
    "is_allowed",
    "is_finding",
    "killed_by",
    "label",
    "line",
    "location",
    "log_file",
    "log_href",
    "network",
    "outcome",
    "reason",
    "red",
    "red_count",
    "red_counted",
    "red_tests",
    "replacement",
    "reset_paths",
    "reused",
    "rule",
    "runs",
    "site",
    "sites",
    "spec_pos",
    "subset_runs",
    "tests_ran",
    "tests_total",
    "time",
    "twin_reported",
];

/// A mutant's outcome as the tables show it: `killed`, `survived (allowed)`,
/// `killed (reused)` (its verdict comes from an earlier run).
pub(crate) fn label(m: &MutantResult) -> String {
    let o = m.outcome.as_str();
    let mut out = if m.is_allowed() {
        format!("{o} (allowed)")
    } else if m.is_twin_reported() {
        format!("{o} (twin reported)")
    } else {
        o.to_string()
    };
    if m.reused.is_some() {
        out.push_str(" (reused)");
    }
    out
}

/// One mutant in a template: its fields are made when a template reads them.
pub(crate) struct MutantView {
    results: Arc<Results>,
    index: usize,
}

impl fmt::Debug for MutantView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutantView")
            .field("id", &self.mutant().id)
            .finish()
    }
}

impl MutantView {
    fn mutant(&self) -> &MutantResult {
        &self.results.mutants[self.index]
    }

    /// The value of `key`, as the eager map of each mutant held it: the
    /// model's fields as `outcomes.json` has them, and the computed fields.
    fn field(&self, key: &str) -> Option<Value> {
        let m = self.mutant();
        let MutantResult {
            id,
            control,
            rule,
            file,
            line,
            outcome,
            red_tests,
            tests_total,
            red_counted,
            duration_s,
            detail,
            killed_by,
            exit,
            diff_file,
            log_file,
            spec_pos,
            location,
            replacement,
            sites,
            command,
            diff,
            tests_ran,
            allowed,
            reset_paths,
            subset_runs,
            full_suite,
            direction,
            reason,
            twin_reported: _,
            fingerprint,
            inputs,
            reused,
            network,
        } = m;
        let is_allowed = m.is_allowed();
        Some(match key {
            // The model's fields.
            "id" => Value::from(id.as_str()),
            "control" => Value::from(control.as_str()),
            "rule" => opt_str(rule),
            "file" => Value::from(file.as_str()),
            "line" => model(line),
            "outcome" => Value::from(outcome.as_str()),
            "red_tests" => strs(red_tests),
            "tests_total" => model(tests_total),
            "red_counted" => red_counted.map(Value::from).into(),
            "duration_s" => model(duration_s),
            "detail" => Value::from(detail.as_str()),
            "killed_by" => strs(killed_by),
            "exit" => opt_str(exit),
            "diff_file" => opt_str(diff_file),
            "log_file" => opt_str(log_file),
            "spec_pos" => Value::from(spec_pos.as_str()),
            "location" => model(location),
            "replacement" => opt_str(replacement),
            "sites" => model(sites),
            "command" => opt_str(command),
            "diff" => opt_str(diff),
            "tests_ran" => strs(tests_ran),
            "allowed" => opt_str(allowed),
            "reset_paths" => model(reset_paths),
            "subset_runs" => model(subset_runs),
            "full_suite" => Value::from(*full_suite),
            "direction" => direction.map(|d| Value::from(d.as_str())).into(),
            "reason" => reason.map(|k| Value::from(k.as_str())).into(),
            "twin_reported" => Value::from(m.is_twin_reported()),
            "fingerprint" => opt_str(fingerprint),
            "inputs" => strs(inputs),
            "reused" => model(reused),
            "network" => model(network),
            // The computed ones.
            "site" => Value::from(if *line > 0 {
                format!("{file}:{line}")
            } else {
                file.clone()
            }),
            "red" => Value::from(red_tests_cell(m)),
            "red_count" => Value::from(m.red_of_total()),
            "time" => Value::from(format!("{duration_s:.1}s")),
            "icon" => Value::from(if is_allowed || m.is_twin_reported() {
                ALLOWED_ICON
            } else {
                icon(*outcome)
            }),
            "label" => Value::from(label(m)),
            "is_allowed" => Value::from(is_allowed),
            "is_finding" => Value::from(is_finding(*outcome)),
            "diff_lines" => diff.as_deref().map(diff_lines).unwrap_or_default().into(),
            "diff_href" => diff_file.as_deref().map(href).into(),
            "log_href" => log_file.as_deref().map(href).into(),
            "runs" => Value::from(super::runs_cell(m)),
            _ => return None,
        })
    }
}

impl Object for MutantView {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.field(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.field(key)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&MUTANT_KEYS)
    }
}

fn opt_str(s: &Option<String>) -> Value {
    s.as_deref().map(Value::from).into()
}

fn strs(xs: &[String]) -> Value {
    xs.iter().map(|s| Value::from(s.as_str())).collect()
}

/// A model field as the template sees `outcomes.json`'s value of it.
fn model<T: Serialize>(x: &T) -> Value {
    serde_json::to_value(x).map(to_value).unwrap_or_default()
}

/// A unified diff as `{kind, text}` lines; kind is `add`, `del`, `hunk`,
/// `meta` (the `---`/`+++` header) or `ctx`.
fn diff_lines(diff: &str) -> Vec<Value> {
    diff.lines()
        .map(|l| {
            Value::from_pairs([
                ("kind", Value::from(diff_line_kind(l))),
                ("text", Value::from(l)),
            ])
        })
        .collect()
}

/// The kind of one unified-diff line.
fn diff_line_kind(l: &str) -> &'static str {
    if l.starts_with("+++") || l.starts_with("---") {
        "meta"
    } else if l.starts_with("@@") {
        "hunk"
    } else if l.starts_with('+') {
        "add"
    } else if l.starts_with('-') {
        "del"
    } else {
        "ctx"
    }
}

/// A relative link to a file in the output dir: `./` first (a name like
/// `javascript:x` stays a path) and every byte outside `[A-Za-z0-9._~-]`
/// percent-encoded.
pub(crate) fn href(name: &str) -> String {
    let mut out = String::from("./");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// serde_json → minijinja (the `serde` feature of minijinja is not on).
pub(crate) fn to_value(j: Json) -> Value {
    match j {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::from(s),
        Json::Array(a) => a.into_iter().map(to_value).collect(),
        Json::Object(o) => Value::from_pairs(o.into_iter().map(|(k, v)| (k, to_value(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{mutant, results};
    use crate::results::{Location, Position};

    #[test]
    fn diff_lines_are_classified_by_their_first_characters() {
        let kinds: Vec<&str> = [
            "--- a/f.py",
            "+++ b/f.py",
            "@@ -1 +1 @@",
            "-old",
            "+new",
            " same",
        ]
        .iter()
        .map(|l| diff_line_kind(l))
        .collect();
        assert_eq!(kinds, ["meta", "meta", "hunk", "del", "add", "ctx"]);
    }

    /// A mutant with every optional field set.
    fn full(outcome: Outcome, allowed: bool) -> MutantResult {
        MutantResult {
            rule: Some("rule-1".into()),
            red_tests: vec!["a::t1".into(), "b::t2".into()],
            tests_total: Some(7),
            duration_s: 1.25,
            killed_by: vec!["a::t1".into()],
            exit: Some("exit code 1".into()),
            diff_file: Some("m 1.diff".into()),
            log_file: Some("m:1.log".into()),
            location: Some(Location {
                start: Position { line: 3, column: 5 },
                end: Position { line: 3, column: 9 },
            }),
            replacement: Some("True".into()),
            sites: 2,
            command: Some("pytest -x".into()),
            diff: Some("--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n".into()),
            tests_ran: vec!["a::t1".into(), "c::t3".into()],
            allowed: allowed.then(|| "covered elsewhere".into()),
            reason: Some(crate::results::ReasonKind::TestsFailed),
            ..mutant("m-1", outcome)
        }
    }

    /// What each mutant was before it became lazy: the model's JSON plus the
    /// computed fields, converted whole (the reference the view must match).
    fn eager(m: &MutantResult) -> Value {
        let allowed = m.is_allowed();
        let lines: Vec<Json> = m
            .diff
            .as_deref()
            .unwrap_or("")
            .lines()
            .map(|l| json!({"kind": diff_line_kind(l), "text": l}))
            .collect();
        let mut j = serde_json::to_value(m).unwrap();
        j.as_object_mut().unwrap().extend(
            json!({
                "site": if m.line > 0 { format!("{}:{}", m.file, m.line) } else { m.file.clone() },
                "red": red_tests_cell(m),
                "red_count": m.red_of_total(),
                "time": format!("{:.1}s", m.duration_s),
                "runs": crate::report::runs_cell(m),
                "icon": if allowed { ALLOWED_ICON } else { icon(m.outcome) },
                "label": if allowed { format!("{} (allowed)", m.outcome.as_str()) } else { m.outcome.as_str().to_string() },
                "is_allowed": allowed,
                "is_finding": is_finding(m.outcome),
                "diff_lines": lines,
                "direction": m.direction.map(|d| d.as_str()),
                "reason": m.reason.map(|k| k.as_str()),
                "red_counted": m.red_counted,
                "twin_reported": m.is_twin_reported(),
                "fingerprint": m.fingerprint,
                "inputs": m.inputs,
                "reused": m.reused,
                "network": m.network,
                "diff_href": m.diff_file.as_deref().map(href),
                "log_href": m.log_file.as_deref().map(href),
            })
            .as_object()
            .unwrap()
            .clone(),
        );
        to_value(j)
    }

    #[test]
    fn a_lazy_mutant_has_every_key_and_value_of_the_eager_one() {
        let mut ms = Vec::new();
        for (o, _) in OUTCOMES {
            ms.push(full(o, false));
            ms.push(full(o, true));
            let mut bare = mutant("bare", o);
            (bare.line, bare.tests_total, bare.duration_s) = (0, None, 2.0);
            ms.push(bare);
        }
        let r = Arc::new(results(ms));
        let mut sorted = MUTANT_KEYS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, MUTANT_KEYS, "sorted, as a map's keys are");
        for index in 0..r.mutants.len() {
            let reference = eager(&r.mutants[index]);
            let keys: Vec<String> = reference
                .try_iter()
                .unwrap()
                .map(|k| k.to_string())
                .collect();
            assert_eq!(keys, MUTANT_KEYS, "the same keys as before");
            let view = Arc::new(MutantView {
                results: Arc::clone(&r),
                index,
            });
            for key in MUTANT_KEYS {
                let want = reference.get_attr(key).unwrap();
                let got = view.get_value_by_str(key).unwrap();
                assert_eq!(
                    (format!("{got:?}"), got.kind()),
                    (format!("{want:?}"), want.kind()),
                    "mutant {index}, key {key}"
                );
                assert_eq!(view.get_value(&Value::from(key)), Some(got));
            }
            assert_eq!(view.get_value_by_str("no_such_key"), None);
        }
    }

    #[test]
    fn templates_see_lazy_mutants_as_maps() {
        let r = Arc::new(results(vec![full(Outcome::Survived, false)]));
        let env = minijinja::Environment::new();
        let ctx = Context::new(&r).unwrap().value(usize::MAX);
        let render = |src: &str| env.render_str(src, ctx.clone()).unwrap();
        assert_eq!(
            render("{% for k, v in mutants[0]|items %}{{ k }} {% endfor %}"),
            MUTANT_KEYS.join(" ") + " "
        );
        assert_eq!(render("{{ mutants[0]|length }}"), "45");
        assert_eq!(
            render("{% for l in findings[0].diff_lines %}{{ l.kind }}:{{ l.text }}|{% endfor %}"),
            "meta:--- a/f.py|meta:+++ b/f.py|hunk:@@ -1,2 +1,2 @@|ctx: ctx|del:-old|add:+new|"
        );
        assert_eq!(
            render("{{ results.mutants[0].location.start.column }} {{ mutants[0].diff_href }}"),
            "5 ./m%201.diff"
        );
        assert_eq!(
            render("{{ mutants[0] == results.mutants[0] }} {{ mutants[0] is mapping }}"),
            "True True"
        );
    }

    #[test]
    fn results_hold_every_model_field() {
        let mut r = results(vec![full(Outcome::Killed, false)]);
        r.started_at = Some("2025-01-01T00:00:00Z".into());
        r.fingerprint = Some("sha256:00".into());
        r.sources.insert("f.py".into(), "x = 1\n".into());
        let r = Arc::new(r);
        let mut want = serde_json::to_value(&*r).unwrap();
        want.as_object_mut().unwrap().remove("mutants");
        assert_eq!(Json::Object(model_without_mutants(&r).unwrap()), want);
    }

    #[test]
    fn the_shown_lists_are_cut_at_the_limit_and_findings_at_100() {
        let mut ms: Vec<MutantResult> = (0..150)
            .map(|i| mutant(&format!("s{i}"), Outcome::Survived))
            .collect();
        ms.extend((0..5).map(|i| mutant(&format!("u{i}"), Outcome::Unviable)));
        ms.push(mutant("k", Outcome::Killed));
        let ctx = Context::new(&Arc::new(results(ms))).unwrap();
        let env = minijinja::Environment::new();
        let counts = |limit: usize| {
            env.render_str(
                "{{ mutants_shown|length }}+{{ mutants_omitted }} \
                 {{ findings_shown|length }}+{{ findings_omitted }} \
                 {{ others_shown|length }}+{{ others_omitted }} \
                 {% if findings_shown %}{{ (findings_shown|last).id }}{% endif %}",
                ctx.value(limit),
            )
            .unwrap()
        };
        assert_eq!(ctx.longest(), 156);
        assert_eq!(counts(ctx.longest()), "156+0 100+50 5+0 s99");
        assert_eq!(counts(3), "3+153 3+147 3+2 s2");
        assert_eq!(counts(0), "0+156 0+150 0+5 ");
    }

    #[test]
    fn hrefs_stay_relative() {
        assert_eq!(href("a b.diff"), "./a%20b.diff");
        assert_eq!(href("javascript:x"), "./javascript%3Ax");
    }
}
