//! The Markdown PR comment and the self-contained HTML report: snapshots of
//! the fixture model, structural checks of hostile strings with a real
//! Markdown parser, user templates, and the HTML page in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use unguard::report;
use unguard::report::Format;
use unguard::results::{MutantResult, Outcome, Results, Summary};

const MARKER: &str = "<!-- unguard -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_dir() -> PathBuf {
    root().join("tests/fixtures/report-model")
}

fn fixture() -> Results {
    let text = std::fs::read_to_string(fixture_dir().join("outcomes.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `unguard report DIR ARGS…` → (exit code, stdout, stderr).
fn report_cmd(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("unguard")
        .unwrap()
        .arg("report")
        .arg(dir)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn render_md(r: &Results) -> String {
    report::render(&Arc::new(r.clone()), Format::Md, None).unwrap()
}

fn render_html(r: &Results) -> String {
    report::render(&Arc::new(r.clone()), Format::Html, None).unwrap()
}

// ---------------------------------------------------------------------------
// A hostile model: every user-controlled string tries to break out.

const EVIL: &str = "a | b `c` ``` <script>alert(1)</script> </details> <!-- unguard --> *x* _y_ [l](javascript:alert(2)) &amp; $m$\r\n# heading\r\n- item\n\n1. one\\|";

fn hostile() -> Results {
    let mut r = fixture();
    for (i, m) in r.mutants.iter_mut().enumerate() {
        m.id = format!("id{i} | `x` ``` <script>alert(1)</script>\r\n</details> <!-- unguard -->");
        m.control = format!("{EVIL} {i}");
        m.rule = Some("rule|`r`<b>".into());
        m.file = "f|<script>alert(1)</script>.py".into();
        m.detail = format!("detail {EVIL}");
        m.red_tests = vec![format!("t::red`|{EVIL}")];
        m.killed_by = vec![
            format!("k::`{EVIL}"),
            "`starts and ends with backticks``".into(),
            " spaces around ".into(),
        ];
        m.tests_ran = (0..25).map(|j| format!("ran{j} `{EVIL}")).collect();
        m.command = Some(format!("cmd `{EVIL}"));
        m.exit = Some(format!("exit {EVIL}"));
        m.spec_pos = format!("u.yaml:1:1 {EVIL}");
        m.diff_file = Some("javascript:alert(3)|`.diff".into());
        m.log_file = Some("</details><script>alert(4)</script>.log".into());
        m.diff = Some(format!(
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n ```\n   ````\n-```\n+````\n </details>\n <script>alert(1)</script>\n <!-- unguard -->\r\n {EVIL}\n"
        ));
        if m.allowed.is_some() {
            m.allowed = Some(format!("allow {EVIL}"));
        }
    }
    r.gate.reasons = vec![
        format!("reason {EVIL}"),
        "# not a heading".into(),
        "- not a nested list".into(),
        "1. not a nested list".into(),
    ];
    r.gate.notes = vec![format!("note {EVIL}")];
    r.spec = format!("spec {EVIL}");
    r.root = format!("root {EVIL}");
    r
}

/// Findings the PR comment gives a `<details>` section, in its order:
/// by outcome, survivors first, spec order within each.
fn finding_ids(r: &Results) -> Vec<String> {
    [
        Outcome::Survived,
        Outcome::Flaky,
        Outcome::WrongReason,
        Outcome::Timeout,
        Outcome::Unreached,
    ]
    .iter()
    .flat_map(|o| r.mutants.iter().filter(move |m| m.outcome == *o))
    .map(|m| m.id.clone())
    .collect()
}

/// What pulldown-cmark (GFM tables) makes of the comment.
#[derive(Default, Debug)]
struct Parsed {
    tables: usize,
    /// Cell texts per row, header first.
    rows: Vec<Vec<String>>,
    /// Every raw HTML chunk, block and inline.
    html: Vec<String>,
    /// Inline code spans.
    code: Vec<String>,
    /// Fenced code blocks (language, text); `open_fences` counts unclosed ones.
    fences: Vec<(String, String)>,
    open_fences: i32,
    /// Text of every heading.
    headings: Vec<String>,
    /// Deepest list nesting seen.
    max_list_depth: usize,
}

fn parse(md: &str) -> Parsed {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    let mut p = Parsed::default();
    let mut row: Option<Vec<String>> = None;
    let mut in_cell = false;
    let mut fence: Option<(String, String)> = None;
    let mut heading: Option<String> = None;
    let mut lists = 0;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => p.headings.extend(heading.take()),
            Event::Start(Tag::List(_)) => {
                lists += 1;
                p.max_list_depth = p.max_list_depth.max(lists);
            }
            Event::End(TagEnd::List(_)) => lists -= 1,
            Event::Start(Tag::Table(_)) => p.tables += 1,
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => row = Some(vec![]),
            Event::End(TagEnd::TableHead) | Event::End(TagEnd::TableRow) => {
                p.rows.extend(row.take());
            }
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                if let Some(r) = row.as_mut() {
                    r.push(String::new());
                }
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) => {
                p.open_fences += 1;
                fence = Some((lang.to_string(), String::new()));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(f) = fence.take() {
                    p.open_fences -= 1;
                    p.fences.push(f);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => p.html.push(h.to_string()),
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
                if let Some(f) = fence.as_mut() {
                    f.1.push_str(&t);
                } else if in_cell {
                    if let Some(c) = row.as_mut().and_then(|r| r.last_mut()) {
                        c.push_str(&t);
                    }
                }
            }
            Event::Code(c) => {
                if in_cell {
                    if let Some(cell) = row.as_mut().and_then(|r| r.last_mut()) {
                        cell.push_str(&c);
                    }
                }
                p.code.push(c.to_string());
            }
            _ => {}
        }
    }
    p
}

/// `md` with every code span and code block blanked out.
fn outside_code(md: &str) -> String {
    let mut keep = vec![true; md.len()];
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    for (ev, range) in Parser::new_ext(md, opts).into_offset_iter() {
        if matches!(ev, Event::Code(_) | Event::Start(Tag::CodeBlock(_))) {
            keep[range].iter_mut().for_each(|k| *k = false);
        }
    }
    md.char_indices()
        .map(|(i, c)| if keep[i] { c } else { ' ' })
        .collect()
}

fn one_line(s: &str) -> String {
    s.replace("\r\n", " ").replace(['\r', '\n'], " ")
}

// ---------------------------------------------------------------------------
// Markdown.

#[test]
fn md_report_of_the_fixture_snapshot() {
    let (code, stdout, stderr) = report_cmd(&fixture_dir(), &["--format", "md"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("md_report", stdout);
}

#[test]
fn md_report_of_the_fixture_has_the_table_and_findings_in_order() {
    let r = fixture();
    let md = render_md(&r);
    assert!(md.starts_with("<!-- unguard -->\n"), "{md}");
    assert!(md.contains(&r.summary.line().replace("; score 77.8% (7/9)", "")));
    assert!(
        md.contains("🟡 **Mutation score 77.8%**"),
        "medium level: {md}"
    );
    for reason in &r.gate.reasons {
        // The reasons are escaped Markdown; their words are there.
        assert!(md.contains(&reason.replace('_', "\\_")), "{reason}");
    }

    let p = parse(&md);
    assert_eq!(p.tables, 1);
    assert_eq!(p.rows.len(), 1 + r.mutants.len(), "{:?}", p.rows);
    assert!(p.rows.iter().all(|row| row.len() == 7), "{:?}", p.rows);
    assert_eq!(
        p.rows[0],
        [
            "mutant",
            "control",
            "rule",
            "file:line",
            "outcome",
            "red tests",
            "time"
        ]
    );
    let survived = p
        .rows
        .iter()
        .find(|row| row[0] == "handle-expiry-checked")
        .unwrap();
    assert_eq!(survived[3], "demo_server/server.py:98");
    assert_eq!(survived[4], "❌ survived");
    assert_eq!(survived[5], "0/26");
    let allowed = p
        .rows
        .iter()
        .find(|row| row[0] == "handle-expiry-skew")
        .unwrap();
    assert_eq!(allowed[4], "🔕 survived (allowed)");

    // One <details> per survived / wrong-reason / timeout / unreached mutant,
    // survivors first.
    let summaries: Vec<&String> = p.html.iter().filter(|h| h.contains("<summary>")).collect();
    let ids = finding_ids(&r);
    assert_eq!(
        ids,
        [
            "handle-expiry-checked",
            "handle-expiry-skew",
            "localhost-allowlist-any-port",
            "origin-allowlist-enforced",
            "legacy-origin-check"
        ]
    );
    assert_eq!(summaries.len(), ids.len(), "{summaries:?}");
    for (s, id) in summaries.iter().zip(&ids) {
        assert!(s.contains(&format!("<code>{id}</code>")), "{s} vs {id}");
    }
    assert!(md.contains("Allowed by `gate.allow`: clock skew is covered"));
    // Every finding's diff is a diff fence; the survivor's test list is capped.
    assert_eq!(p.fences.len(), ids.len());
    assert!(p.fences.iter().all(|(lang, _)| lang == "diff"));
    assert!(md.contains("- … and 6 more"), "26 tests ran, 20 listed");
    // Unviable and no-op are listed, not given a section.
    assert!(md.contains("**no-op** `stale-cors-merge`"));
}

#[test]
fn md_flaky_is_a_finding_and_internal_errors_are_listed() {
    let mut r = fixture();
    r.mutants[0].outcome = Outcome::Flaky;
    r.mutants[0].detail = "survived, then red on a re-check".into();
    r.mutants[1].outcome = Outcome::InternalError;
    r.mutants[1].detail = "could not copy the tree".into();
    let md = render_md(&r);
    let p = parse(&md);
    let summaries: Vec<&String> = p.html.iter().filter(|h| h.contains("<summary>")).collect();
    assert_eq!(summaries.len(), 6, "{md}");
    assert!(summaries[2].contains("🎲 <b>flaky</b> <code>host-allowlist-port-exact</code>"));
    assert!(
        summaries[3].contains("wrong-reason"),
        "flaky before wrong-reason"
    );
    assert!(md.contains("it is flaky here"), "{md}");
    assert!(
        md.contains("- 💥 **internal-error** `host-allowlist-enforced`"),
        "{md}"
    );
    let html = render_html(&r);
    assert!(html.contains("<span class=\"badge o-flaky\">flaky</span>"));
    assert!(html.contains("value=\"internal-error\" checked>"));
}

#[test]
fn an_empty_passing_run_renders() {
    let mut r = fixture();
    r.mutants.clear();
    r.summary = unguard::results::Summary::compute(&[], r.timeout_policy);
    r.gate.passed = true;
    r.gate.exit_code = 0;
    r.gate.reasons.clear();
    r.baselines.clear();
    r.canaries.clear();
    r.selection.shard = Some(unguard::results::Shard { k: 2, n: 3 });
    r.interrupted = true;
    let md = render_md(&r);
    assert!(md.starts_with("<!-- unguard -->\n## ✅ unguard: security-control gate passed"));
    assert!(
        md.contains("⚪ **No mutation score** (no mutant ran) · 0 mutants"),
        "{md}"
    );
    assert!(md.contains("No mutants ran."));
    assert!(md.contains("The run was interrupted"));
    assert!(md.contains("shard 2/3"));
    assert_eq!(parse(&md).tables, 0);
    let html = render_html(&r);
    assert!(html.contains("<span class=\"gate gate-passed\">gate passed</span>"));
    assert!(html.contains("class=\"score level-none\""));
    assert_eq!(html.matches("<tbody class=\"mutant\"").count(), 0);
}

#[test]
fn md_hostile_strings_cannot_break_the_markdown() {
    let r = hostile();
    let md = render_md(&r);
    let p = parse(&md);

    // The marker is the first line and the only HTML comment that is one.
    assert!(md.starts_with("<!-- unguard -->\n"));
    let markers = p.html.iter().filter(|h| h.contains(MARKER)).count();
    assert_eq!(markers, 1, "{:#?}", p.html);

    // One table, header + one row per mutant, 7 cells each, and the cells
    // hold the original text (line breaks as spaces).
    assert_eq!(p.tables, 1);
    assert_eq!(p.rows.len(), 1 + r.mutants.len(), "{:#?}", p.rows);
    for row in &p.rows {
        assert_eq!(row.len(), 7, "{row:?}");
    }
    for (row, m) in p.rows[1..].iter().zip(&r.mutants) {
        assert_eq!(row[0], one_line(&m.id).trim(), "id cell");
        assert_eq!(row[1], one_line(&m.control).trim(), "control cell");
        assert_eq!(row[2], "rule|`r`<b>", "rule cell");
    }

    // Text that starts like a heading or a list item stays text.
    assert_eq!(
        p.headings,
        [
            "❌ unguard: security-control gate failed",
            "Findings",
            "Other outcomes"
        ]
    );
    assert_eq!(p.max_list_depth, 1, "no nested lists");
    assert!(md.contains("- \\# not a heading\n- \\- not a nested list\n- 1\\. not"));

    // Each <summary> is one HTML chunk, closed on its line: a blank line in
    // the text did not end the HTML block.
    let summaries: Vec<&String> = p.html.iter().filter(|h| h.contains("<summary>")).collect();
    assert_eq!(summaries.len(), finding_ids(&r).len());
    for s in summaries {
        assert!(s.trim_end().ends_with("</summary>"), "{s}");
    }

    // <details> opened and closed once per finding; no raw <script>, and no
    // HTML chunk that the hostile text smuggled in.
    let open = p.html.iter().filter(|h| h.contains("<details>")).count();
    let close = p.html.iter().filter(|h| h.contains("</details>")).count();
    assert_eq!(open, finding_ids(&r).len());
    assert_eq!(close, open);
    for h in &p.html {
        let lower = h.to_lowercase();
        assert!(!lower.contains("<script"), "raw script: {h}");
        assert!(
            !lower.contains("<b>") || h.contains("<summary>"),
            "smuggled tag: {h}"
        );
    }
    // Outside code spans and fences (where it is text), the raw Markdown has
    // no <script, one marker, and one <details>/</details> per finding.
    let outside = outside_code(&md);
    assert!(!outside.to_lowercase().contains("<script"), "{outside}");
    assert_eq!(outside.matches(MARKER).count(), 1, "{outside}");
    assert_eq!(outside.matches("<details>").count(), open, "{outside}");
    assert_eq!(outside.matches("</details>").count(), open, "{outside}");

    // Every fence is closed and holds the whole diff (a ``` inside it did not end it).
    assert_eq!(p.open_fences, 0);
    assert_eq!(p.fences.len(), finding_ids(&r).len());
    let want = r.mutants[0].diff.as_deref().unwrap().replace("\r\n", "\n");
    for (lang, text) in &p.fences {
        assert_eq!(lang, "diff");
        assert_eq!(text, &want);
    }

    // Code spans carry the hostile text whole: ids, tests, the command.
    let survivor = r
        .mutants
        .iter()
        .find(|m| m.outcome == Outcome::Survived)
        .unwrap();
    let id = one_line(&survivor.id);
    assert!(p.code.iter().any(|c| c == &id), "{:#?}", p.code);
    for killer in &survivor.killed_by {
        let killer = one_line(killer);
        assert!(p.code.iter().any(|c| c == &killer), "{killer:?}");
    }
    assert!(md.contains("- … and 5 more"), "25 tests, 20 listed");
}

/// Where GitHub would see a mention in text: `@` at the start or after a
/// character that is not a letter, digit or `_`, then a letter or digit.
fn mentions(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    for (i, c) in chars.iter().enumerate() {
        let after_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if *c == '@' && !after_word && chars.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric()) {
            found.push(chars[i..(i + 12).min(chars.len())].iter().collect());
        }
    }
    found
}

#[test]
fn md_never_mentions_anyone_in_control_texts_or_test_names() {
    let mut r = fixture();
    for m in r.mutants.iter_mut() {
        m.control = "only @alice may call admin tools".into();
        m.detail = "red: @org/security-team test failed".into();
        m.red_tests = vec!["tests/t.py::test_@bob_is_refused".into()];
        m.exit = Some("@carol".into());
        if m.allowed.is_some() {
            m.allowed = Some("waived by @dave".into());
        }
    }
    r.gate.reasons = vec!["@erin: 1 survivor".into()];
    r.gate.notes = vec!["cc @frank".into()];
    let md = render_md(&r);
    // Text (outside code spans and fences, where GitHub looks for mentions)
    // mentions no one…
    let outside = outside_code(&md);
    assert_eq!(mentions(&outside), Vec::<String>::new(), "{outside}");
    // … and reads the same once the invisible joiner is dropped.
    let visible = md.replace('\u{2060}', "");
    for text in [
        "only @alice may call admin tools",
        "red: @org/security-team test failed",
        "@erin: 1 survivor",
        "cc @frank",
    ] {
        assert!(visible.contains(text), "{text:?} in:\n{visible}");
    }
    // Code spans keep the text as written: GitHub does not scan them.
    let p = parse(&md);
    assert!(
        p.code
            .iter()
            .any(|c| c == "tests/t.py::test_@bob_is_refused"),
        "{:#?}",
        p.code
    );
}

#[test]
fn md_unit_filters_survive_the_parser() {
    // Each filter's output, parsed, gives back the text it was given.
    let md = report::markdown::code("`a` ``` b`");
    let p = parse(&md);
    assert_eq!(p.code, ["`a` ``` b`"]);
    let md = report::markdown::fence("x\n```\n````\ny", "diff");
    let p = parse(&md);
    assert_eq!(
        p.fences,
        [("diff".to_string(), "x\n```\n````\ny\n".to_string())]
    );
    let table = format!(
        "| a | b |\n|---|---|\n| {} | {} |\n",
        report::markdown::cell(EVIL),
        report::markdown::cell_code("p|q`")
    );
    let p = parse(&table);
    assert_eq!(p.rows.len(), 2, "{table}");
    assert_eq!(p.rows[1], [one_line(EVIL).trim(), "p|q`"]);
}

#[test]
fn template_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "syntax.md",
            "ok\n\n{% if %}yes{% endif %}\nmore\n",
            "line 3",
        ),
        ("undefined.md", "ok\n{{ results.gate.pased }}\n", "line 2"),
        (
            "filter.md",
            "ok\n\n\n{{ marker|no_such_filter }}\n",
            "line 4",
        ),
    ];
    for (name, text, line) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (code, stdout, stderr) = report_cmd(
            &fixture_dir(),
            &["--format", "md", "--template", path.to_str().unwrap()],
        );
        assert_eq!(code, Some(1), "{name}: {stdout}{stderr}");
        assert!(stdout.is_empty(), "{name}: {stdout}");
        let at = format!("{}, {line}:", path.display());
        assert!(stderr.contains(&at), "{name}: want `{at}`: {stderr}");
    }
    let (_, _, stderr) = report_cmd(
        &fixture_dir(),
        &[
            "--format",
            "md",
            "--template",
            dir.path().join("undefined.md").to_str().unwrap(),
        ],
    );
    assert!(stderr.contains("undefined value"), "{stderr}");
    assert!(
        stderr.contains("results.gate.pased"),
        "the line is shown: {stderr}"
    );
}

#[test]
fn custom_template_renders_and_gets_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.md");
    std::fs::write(
        &path,
        "Gate {{ verdict }}, score {{ score }} ({{ score_level }})\n\
         {% for m in findings %}\n\
         - {{ m.icon }} {{ m.id|code }}: {{ m.control|cell }}\n\
         {% endfor %}\n",
    )
    .unwrap();
    let (code, stdout, stderr) = report_cmd(
        &fixture_dir(),
        &["--format", "md", "--template", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "<!-- unguard -->\n\
         Gate failed, score 77.8% (medium)\n\
         - ❌ `handle-expiry-checked`: An expired paging handle is rejected\n\
         - 🔕 `handle-expiry-skew`: Handle expiry allows no clock skew\n\
         - ⚠️ `localhost-allowlist-any-port`: The loopback name localhost is allowed on the serving port only\n\
         - ⏱️ `origin-allowlist-enforced`: A request with a foreign Origin gets 403 (POST and the SSE GET)\n\
         - 🚫 `legacy-origin-check`: Legacy transport checks Origin\n"
    );

    // A template that starts with the marker keeps exactly one.
    std::fs::write(&path, "{{ marker }}\n{{ summary_line }}\n").unwrap();
    let (code, stdout, _) = report_cmd(
        &fixture_dir(),
        &["--format", "md", "--template", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(0));
    assert_eq!(stdout.matches(MARKER).count(), 1, "{stdout}");
    assert!(stdout.starts_with(MARKER));
}

#[test]
fn the_readme_example_template_renders() {
    let readme = std::fs::read_to_string(root().join("templates/README.md")).unwrap();
    let start = readme.find("```jinja\n").expect("example block") + "```jinja\n".len();
    let len = readme[start..].find("\n```\n").unwrap() + 1;
    let template = &readme[start..start + len];
    let r = fixture();
    let template = report::markdown::Template {
        name: "templates/README.md example".into(),
        text: template.to_string(),
    };
    let md = report::render(&Arc::new(r), Format::Md, Some(&template)).unwrap();
    assert!(
        md.starts_with("<!-- unguard -->\n🟡 **unguard failed** · 13 mutants"),
        "{md}"
    );
    let p = parse(&md);
    assert_eq!(p.rows.len(), 1 + 5, "{md}");
    assert!(p.rows.iter().all(|row| row.len() == 3));
    assert_eq!(p.rows[1][2], "demo_server/server.py:98");
    // Four <details>: the allowed survivor is left out by the loop filter.
    assert_eq!(p.html.iter().filter(|h| h.contains("<details>")).count(), 4);
}

// ---------------------------------------------------------------------------
// Large runs: at most 100 findings detailed, and the comment within GitHub's
// 65,536-character limit.

const COMMENT_MAX_CHARS: usize = 65_536;

/// The fixture's model with `mutants` instead of its own (summary recomputed).
fn with_mutants(mutants: Vec<MutantResult>) -> Results {
    let mut r = fixture();
    r.summary = Summary::compute(&mutants, r.timeout_policy);
    r.mutants = mutants;
    r
}

/// A mutant with short strings and no diff, logs or test lists.
fn light(id: &str, outcome: Outcome) -> MutantResult {
    let mut m = fixture().mutants[0].clone();
    m.id = id.into();
    m.control = format!("control {id}");
    m.outcome = outcome;
    m.detail = "d".into();
    m.red_tests.clear();
    m.killed_by.clear();
    m.tests_ran.clear();
    (m.diff, m.diff_file, m.log_file, m.command, m.exit) = (None, None, None, None, None);
    m.allowed = None;
    m
}

#[test]
fn md_details_at_most_100_findings_then_says_how_many_more() {
    // 120 survivors and 30 timeouts, interleaved in spec order: the 100
    // detailed are the first 100 survivors.
    let ms: Vec<MutantResult> = (0..150)
        .map(|i| {
            let o = if i % 5 == 4 {
                Outcome::Timeout
            } else {
                Outcome::Survived
            };
            light(&format!("m{i:03}"), o)
        })
        .collect();
    let r = with_mutants(ms);
    let md = render_md(&r);
    assert!(
        md.chars().count() <= COMMENT_MAX_CHARS,
        "the cap is not the size limit's doing"
    );
    let p = parse(&md);
    assert_eq!(p.rows.len(), 1 + 150, "every mutant still has a table row");
    let summaries: Vec<&String> = p.html.iter().filter(|h| h.contains("<summary>")).collect();
    let ids = finding_ids(&r);
    assert_eq!(summaries.len(), 100, "{md}");
    for (s, id) in summaries.iter().zip(&ids[..100]) {
        assert!(s.contains(&format!("<code>{id}</code>")), "{s} vs {id}");
    }
    assert!(ids[..100].iter().all(|id| r
        .mutants
        .iter()
        .any(|m| &m.id == id && m.outcome == Outcome::Survived)));
    assert_eq!(
        md.matches("… and 50 more findings, not detailed here: every finding is in `report.html` and `outcomes.json`.").count(),
        1,
        "{md}"
    );
    assert!(!md.contains("more mutants"), "the table is whole");

    // A user template sees the cap in the context.
    let template = report::markdown::Template {
        name: "counts.md".into(),
        text: "{{ findings|length }} {{ findings_shown|length }} {{ findings_omitted }} \
               {{ mutants_shown|length }} {{ mutants_omitted }} {{ others_shown|length }} {{ others_omitted }}"
            .into(),
    };
    let out = report::render(&Arc::new(r), Format::Md, Some(&template)).unwrap();
    assert_eq!(out, format!("{MARKER}\n150 100 50 150 0 0 0"));
}

#[test]
fn md_of_10000_mutants_stays_within_the_comment_limit_and_says_what_it_left_out() {
    // Every outcome, each mutant with a 40-line diff and 25 tests that ran.
    const ORDER: [Outcome; 10] = [
        Outcome::Killed,
        Outcome::Survived,
        Outcome::Timeout,
        Outcome::Unviable,
        Outcome::WrongReason,
        Outcome::NoOp,
        Outcome::Unreached,
        Outcome::Ambiguous,
        Outcome::Flaky,
        Outcome::InternalError,
    ];
    let base = fixture().mutants[0].clone();
    let diff: String = std::iter::once("--- a/f.py\n+++ b/f.py\n@@ -1,40 +1,40 @@\n".to_string())
        .chain((0..40).map(|i| format!("-line {i} {}\n", "x".repeat(60))))
        .collect();
    let ms: Vec<MutantResult> = (0..10_000)
        .map(|i| {
            let mut m = base.clone();
            m.id = format!("mutant-{i:05}");
            m.control = format!("control number {i} of the large run");
            m.outcome = ORDER[i % ORDER.len()];
            m.diff = Some(diff.clone());
            m.tests_ran = (0..25)
                .map(|t| format!("tests/test_x.py::test_{t}"))
                .collect();
            m.allowed = None;
            m
        })
        .collect();
    let r = with_mutants(ms);
    let md = render_md(&r);
    // UTF-16 units: never fewer than characters (the stricter count).
    let chars = md.encode_utf16().count();
    assert!(chars <= COMMENT_MAX_CHARS, "{chars} characters");
    assert!(md.starts_with(MARKER));
    assert!(md.contains("<sub>unguard "), "the footer is there");

    let p = parse(&md);
    let rows = p.rows.len() - 1;
    let details = p.html.iter().filter(|h| h.contains("<summary>")).count();
    let findings = finding_ids(&r).len();
    let others = r
        .mutants
        .iter()
        .filter(|m| {
            matches!(
                m.outcome,
                Outcome::Unviable | Outcome::NoOp | Outcome::Ambiguous | Outcome::InternalError
            )
        })
        .count();
    let listed = md.matches("\n- 🧱 **unviable**").count()
        + md.matches("\n- ➖ **no-op**").count()
        + md.matches("\n- ❓ **ambiguous**").count()
        + md.matches("\n- 💥 **internal-error**").count();
    assert!(
        rows > 0 && details > 0 && listed > 0,
        "some of each: {rows} {details} {listed}"
    );
    assert!(details <= 100);
    assert!(md.contains(&format!(
        "… and {} more mutants, not in this table (a GitHub comment holds at most 65,536 characters): every mutant is in `report.html` and `outcomes.json`.",
        10_000 - rows
    )), "{md}");
    assert!(md.contains(&format!(
        "… and {} more findings, not detailed here: every finding is in `report.html` and `outcomes.json`.",
        findings - details
    )), "{md}");
    assert!(
        md.contains(&format!(
            "- … and {} more: every one is in `report.html` and `outcomes.json`.",
            others - listed
        )),
        "{md}"
    );
    assert_eq!(p.open_fences, 0, "no fence left open");
}

/// The mutant keys `templates/README.md` documents: the model's fields
/// listed after "has the model's fields:" and the computed fields' table.
fn documented_mutant_keys() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("templates/README.md")).unwrap();
    let start = regex::Regex::new(r"has the model's\s+fields:")
        .unwrap()
        .find(&readme)
        .expect("the model's fields")
        .start();
    let (fields, rest) = readme[start..].split_once("plus:").unwrap();
    // Leave out the parentheses: the outcome names and "(see `unguard schema` …)".
    let fields = regex::Regex::new(r"\([^)]*\)")
        .unwrap()
        .replace_all(fields, "");
    let table = rest
        .split("\n\n")
        .find(|b| b.contains("| field |"))
        .unwrap();
    let first_cells = table
        .lines()
        .skip(2)
        .map(|l| l.split('|').nth(1).unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let tick = regex::Regex::new(r"`([a-z_]+)`").unwrap();
    let keys: Vec<String> = tick
        .captures_iter(&fields)
        .chain(tick.captures_iter(&first_cells))
        .map(|c| c[1].to_string())
        .collect();
    assert!(keys.len() > 30, "{keys:?}");
    keys
}

#[test]
fn a_user_template_reads_every_documented_mutant_key() {
    let keys = documented_mutant_keys();
    for k in [
        "id",
        "allowed",
        "tests_ran",
        "site",
        "diff_lines",
        "diff_href",
        "log_href",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
    }
    // Every documented key on every mutant (undefined is an error), and no
    // undocumented one.
    let mut text =
        String::from("{% for m in mutants %}{% for k, v in m|items %}{{ k }} {% endfor +%}\n");
    for k in &keys {
        text.push_str(&format!("{k}={{{{ m.{k} is defined }}}} "));
    }
    text.push_str("\n{% endfor %}");
    text.push_str(
        "{% for m in findings %}{{ m.id }}:{% for l in m.diff_lines %} {{ l.kind }}{% endfor +%}\n{% endfor %}",
    );
    let r = fixture();
    let template = report::markdown::Template {
        name: "keys.md".into(),
        text,
    };
    let md = report::render(&Arc::new(r.clone()), Format::Md, Some(&template)).unwrap();
    let mut lines = md.lines().skip(1);
    let mut sorted = keys.clone();
    sorted.sort();
    let defined: String = keys.iter().map(|k| format!("{k}=True ")).collect();
    for m in &r.mutants {
        assert_eq!(
            lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
            sorted,
            "{}",
            m.id
        );
        assert_eq!(lines.next().unwrap(), defined, "{}", m.id);
    }
    // diff_lines: one kind per line of the diff.
    for id in finding_ids(&r) {
        let m = r.mutants.iter().find(|m| m.id == id).unwrap();
        let kinds: String = m
            .diff
            .as_deref()
            .unwrap_or("")
            .lines()
            .map(|l| match l {
                l if l.starts_with("---") || l.starts_with("+++") => " meta",
                l if l.starts_with("@@") => " hunk",
                l if l.starts_with('+') => " add",
                l if l.starts_with('-') => " del",
                _ => " ctx",
            })
            .collect();
        assert!(
            kinds.contains("add") && kinds.contains("meta"),
            "{id}: {kinds}"
        );
        assert_eq!(lines.next().unwrap(), format!("{id}:{kinds}"));
    }
}

// ---------------------------------------------------------------------------
// HTML.

#[test]
fn html_report_of_the_fixture_snapshot() {
    let (code, stdout, stderr) = report_cmd(&fixture_dir(), &["--format", "html"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("html_report", stdout);
}

#[test]
fn html_is_self_contained() {
    let html = render_html(&fixture());
    let lower = html.to_lowercase();
    for needle in ["http://", "https://", "src=", "@import", "url(", "<link"] {
        assert!(!lower.contains(needle), "external reference {needle:?}");
    }
    assert!(lower.contains("content-security-policy"));
    assert_eq!(lower.matches("<script").count(), 1, "one inline script");
    assert_eq!(html.matches("<tbody class=\"mutant\"").count(), 13);
}

#[test]
fn html_hostile_strings_are_escaped() {
    let r = hostile();
    let html = render_html(&r);
    assert!(!html.contains("<script>alert"), "raw injected script");
    assert_eq!(html.to_lowercase().matches("<script").count(), 1);
    assert_eq!(
        html.matches("<details").count(),
        html.matches("</details>").count()
    );
    assert!(!html.contains("href=\"javascript"), "links stay relative");
    // minijinja writes `/` as `&#x2f;`; the browser reads `./javascript%3A…`.
    assert!(html.contains("href=\".&#x2f;javascript%3Aalert%283%29%7C%60.diff\""));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert_eq!(html.matches("<tbody class=\"mutant\"").count(), 13);
}

// ---------------------------------------------------------------------------
// Headless Chromium.

/// The Chromium binary, or `None` (test skipped) when it is not installed;
/// under CI a missing Chromium fails the test.
fn chromium() -> Option<PathBuf> {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return Some(PathBuf::from(c));
        }
    }
    crate::common::skip::missing("chromium is not installed (apt-get install -y chromium)");
    None
}

/// Run headless Chromium with `args` on `url`; stdout. Fails after 90 s.
fn run_chromium(bin: &Path, args: &[&str], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--force-color-profile=srgb",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium: {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 90s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The fixture's report.html in a temp dir.
fn report_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    std::fs::write(&path, render_html(&fixture())).unwrap();
    (dir, path)
}

/// How a hidden row's opening tag ends up in a DOM dump.
const HIDDEN: &str = " hidden=\"\"";

/// The opening `<tbody class="mutant" …>` tags of a DOM dump.
fn mutant_rows(dom: &str) -> Vec<&str> {
    dom.match_indices("<tbody class=\"mutant\"")
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .collect()
}

#[test]
fn html_in_chromium_runs_its_script_and_shows_every_row() {
    let Some(bin) = chromium() else { return };
    let (_dir, path) = report_file();
    let dom = run_chromium(&bin, &["--dump-dom"], &format!("file://{}", path.display()));
    assert!(
        dom.contains("data-ready=\"yes\""),
        "script did not run:\n{dom}"
    );
    assert!(dom.contains("13 of 13 mutants shown"), "{dom}");
    let rows = mutant_rows(&dom);
    assert_eq!(rows.len(), 13);
    assert!(rows.iter().all(|r| !r.contains(HIDDEN)), "{rows:#?}");
}

#[test]
fn html_in_chromium_filters_by_the_url_fragment() {
    let Some(bin) = chromium() else { return };
    let (_dir, path) = report_file();
    let url = format!("file://{}#filter=survived", path.display());
    let dom = run_chromium(&bin, &["--dump-dom"], &url);
    assert!(dom.contains("2 of 13 mutants shown"), "{dom}");
    let rows = mutant_rows(&dom);
    assert_eq!(rows.len(), 13);
    for r in &rows {
        let survived = r.contains("data-outcome=\"survived\"");
        assert_eq!(!r.contains(HIDDEN), survived, "{r}");
    }
    // Free text narrows further: only the allowed survivor mentions "skew".
    let url = format!("file://{}#filter=survived,killed&q=skew", path.display());
    let dom = run_chromium(&bin, &["--dump-dom"], &url);
    assert!(dom.contains("1 of 13 mutants shown"), "{dom}");
    let visible: Vec<&str> = mutant_rows(&dom)
        .into_iter()
        .filter(|r| !r.contains(HIDDEN))
        .collect();
    assert_eq!(visible.len(), 1);
    assert!(visible[0].contains("data-allowed=\"yes\""), "{visible:?}");
}

#[test]
fn html_screenshot_is_not_blank_and_shows_the_outcome_colours() {
    let Some(bin) = chromium() else { return };
    let (dir, path) = report_file();
    let png_path = dir.path().join("shot.png");
    run_chromium(
        &bin,
        &[
            &format!("--screenshot={}", png_path.display()),
            "--window-size=1280,2000",
        ],
        &format!("file://{}", path.display()),
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 2000));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let mut colours = std::collections::HashMap::<[u8; 3], usize>::new();
    for px in buf[..info.buffer_size()].chunks_exact(channels) {
        *colours.entry([px[0], px[1], px[2]]).or_default() += 1;
    }
    assert!(colours.len() > 200, "blank page? {} colours", colours.len());
    let count = |rgb: [u8; 3]| colours.get(&rgb).copied().unwrap_or(0);
    // #cf222e survived badge / failed gate, #1a7f37 killed badge, #dafbe1 added diff line.
    assert!(
        count([0xcf, 0x22, 0x2e]) > 500,
        "survived red: {}",
        count([0xcf, 0x22, 0x2e])
    );
    assert!(
        count([0x1a, 0x7f, 0x37]) > 500,
        "killed green: {}",
        count([0x1a, 0x7f, 0x37])
    );
    assert!(
        count([0xda, 0xfb, 0xe1]) > 500,
        "diff +line: {}",
        count([0xda, 0xfb, 0xe1])
    );
}
