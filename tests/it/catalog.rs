//! The built-in control catalog (`mutations/*.yaml`, `src/catalog`), through
//! the public API only: it loads, its references point at real seed rules,
//! every operator matches its positive snippets with exactly the expected
//! mutants and none of its negative ones, the fixture files under
//! `tests/catalog_fixtures/<operator-id>/` hold, and docs/catalog.md shows the
//! catalog as `readme_section()` renders it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use unguard::catalog::{
    self, find_sites, readme_section, scan, Group, Language, Operator, OperatorKind, Site,
};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The seed documents: `$UNGUARD_SEEDS_DIR`, else the copy in `docs/seeds/`
/// (the catalog's rule references are checked against them).
fn seeds_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("UNGUARD_SEEDS_DIR") {
        return PathBuf::from(d);
    }
    manifest_dir().join("docs/seeds")
}

/// The copy in docs/seeds/ must be the workplace's seeds, where they exist
/// (they do not on CI, which has the repository only).
#[test]
fn vendored_seeds_match_the_workplace_copy() {
    let shared = manifest_dir().join("../shared/seeds");
    let Ok(entries) = std::fs::read_dir(&shared) else {
        crate::common::skip::not_here(&format!(
            "no {} here: nothing to compare docs/seeds with",
            shared.display()
        ));
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let vendored = manifest_dir().join("docs/seeds").join(&name);
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            std::fs::read(&vendored).unwrap_or_default(),
            "docs/seeds/{} differs from {}: copy it again",
            name.to_string_lossy(),
            e.path().display()
        );
    }
}

/// (document number, text) of every seed document.
fn seeds() -> Vec<(String, String)> {
    let dir = seeds_dir();
    let mut out = Vec::new();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "seed documents not found at {} ({e}); set UNGUARD_SEEDS_DIR",
            dir.display()
        )
    });
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".txt") && name.len() > 4 && name.as_bytes()[3] == b'_' {
            out.push((
                name[..3].to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no seed documents in {}", dir.display());
    out
}

fn mutants_of(sites: &[Site], code: &str) -> Vec<String> {
    sites
        .iter()
        .map(|s| String::from_utf8(s.apply(code.as_bytes())).expect("utf-8 mutant"))
        .collect()
}

/// A readable diff of expected and actual mutants for a failure message.
fn describe(expected: &[String], got: &[String]) -> String {
    let mut out = format!("expected {} mutant(s), got {}\n", expected.len(), got.len());
    for (i, g) in got.iter().enumerate() {
        out.push_str(&format!("--- got #{}\n{g}", i + 1));
        if !g.ends_with('\n') {
            out.push('\n');
        }
    }
    for (i, e) in expected.iter().enumerate() {
        out.push_str(&format!("--- expected #{}\n{e}", i + 1));
        if !e.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn audit_ops() -> impl Iterator<Item = &'static Operator> {
    catalog::catalog()
        .iter()
        .filter(|o| o.kind == OperatorKind::Audit)
}

#[test]
fn catalog_loads_with_unique_ids_in_every_group() {
    let ops = catalog::try_catalog().expect("the built-in catalog loads");
    let mut ids = HashSet::new();
    for op in ops {
        assert!(ids.insert(op.id.as_str()), "duplicate id {}", op.id);
        assert!(
            op.id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{} is not kebab-case",
            op.id
        );
        assert!(!op.control.trim().is_empty(), "{}: empty control", op.id);
        assert!(!op.sdk.trim().is_empty(), "{}: no sdk note", op.id);
        if op.kind == OperatorKind::Audit && op.matcher_kinds().is_empty() {
            // A shape twin (`shape_twin:`): the shape finder builds its
            // sites (its unit tests are in src/catalog/shape/limit.rs).
            let base = op
                .twin_of
                .as_deref()
                .expect("a matcher-less operator is a twin");
            assert_eq!(op.id, format!("{base}-twin"), "{}: no matcher", op.id);
            assert!(catalog::operator(base).is_some_and(|b| !b.matcher_kinds().is_empty()));
        } else if op.kind == OperatorKind::Audit {
            assert!(!op.matcher_kinds().is_empty(), "{}: no matcher", op.id);
            assert!(!op.positive.is_empty(), "{}: no positive snippet", op.id);
            assert!(!op.negative.is_empty(), "{}: no negative snippet", op.id);
            assert!(op.template.is_none(), "{}: audit op with a template", op.id);
        } else {
            assert!(op.template.is_some(), "{}: template without text", op.id);
        }
    }
    for g in Group::ALL {
        assert!(
            audit_ops().any(|o| o.group == g),
            "group {} has no audit operator",
            g.name()
        );
    }
    assert!(catalog::operator("transport-security-passed").is_some());
    assert!(ops.iter().any(|o| o.kind == OperatorKind::Template));
}

#[test]
fn rules_name_existing_seed_rules_and_checks_appear_in_the_seeds() {
    let seeds = seeds();
    let doc = |n: &str| {
        seeds
            .iter()
            .find(|(d, _)| d == n)
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("no seed document {n}"))
    };
    for op in catalog::catalog() {
        let (d, rule) = op
            .rule
            .split_once('/')
            .unwrap_or_else(|| panic!("{}: rule {} is not NNN/N", op.id, op.rule));
        assert!(
            ["000", "001", "002", "003"].contains(&d),
            "{}: rule {} names no seed document 000-003",
            op.id,
            op.rule
        );
        let text = doc(d);
        let num: String = rule.chars().take_while(|c| c.is_ascii_digit()).collect();
        let found = if d == "003" {
            // 003 numbers nothing "Regel"; its numbered list of release-gate
            // questions ("1. Kann eine bestehende Sitzung …") is what 003/N cites.
            let gate = text
                .split("Release-Gate")
                .last()
                .expect("003 has a release-gate section");
            gate.lines().any(|l| l.starts_with(&format!("{num}. ")))
        } else {
            text.contains(&format!("Regel {num} "))
        };
        assert!(
            found,
            "{}: rule {} does not exist in seed document {d}",
            op.id, op.rule
        );
        if let Some(check) = &op.check {
            assert!(
                seeds.iter().any(|(_, t)| t.contains(check.as_str())),
                "{}: check {check} appears in no seed document",
                op.id
            );
        }
    }
}

#[test]
fn every_positive_snippet_yields_exactly_the_expected_mutants() {
    let mut failures = Vec::new();
    for op in audit_ops() {
        for (i, snip) in op.positive.iter().enumerate() {
            let sites = find_sites(op, &snip.file, snip.code.as_bytes());
            let got = mutants_of(&sites, &snip.code);
            if got != snip.mutants {
                failures.push(format!(
                    "{} positive #{} ({}): {}",
                    op.id,
                    i + 1,
                    snip.file,
                    describe(&snip.mutants, &got)
                ));
            }
            for s in &sites {
                assert_ne!(s.original, s.replacement, "{}: no-op site", op.id);
                assert_eq!(s.operator, op.id);
                assert_eq!(s.file, snip.file);
                assert_eq!(&snip.code[s.start..s.end], s.original);
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `.js`, `.mjs` and `.tsx` files are parsed with the TSX grammar: every
/// TypeScript positive must hold there too (patterns like `$A < $B` parse
/// differently where JSX is possible).
#[test]
fn typescript_positives_hold_under_the_tsx_grammar() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for op in audit_ops() {
        for (i, snip) in op.positive.iter().enumerate() {
            let Some(stem) = snip.file.strip_suffix(".ts") else {
                continue;
            };
            for ext in ["js", "tsx"] {
                let file = format!("{stem}.{ext}");
                let got = mutants_of(&find_sites(op, &file, snip.code.as_bytes()), &snip.code);
                if got != snip.mutants {
                    failures.push(format!(
                        "{} positive #{} as {file}: {}",
                        op.id,
                        i + 1,
                        describe(&snip.mutants, &got)
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} TypeScript positives");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn no_negative_snippet_matches() {
    let mut failures = Vec::new();
    for op in audit_ops() {
        for (i, snip) in op.negative.iter().enumerate() {
            let sites = find_sites(op, &snip.file, snip.code.as_bytes());
            for s in sites {
                failures.push(format!(
                    "{} negative #{} ({}:{}:{}): `{}` -> `{}`",
                    op.id,
                    i + 1,
                    snip.file,
                    s.line,
                    s.col,
                    s.original,
                    s.replacement
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `tests/catalog_fixtures/<operator-id>/`: every file `NAME` is a positive
/// whose mutants are `NAME.mutant-1`, `NAME.mutant-2`, … (none: no site);
/// files under `negative/` must yield no site. The file name (with its
/// extension) is what the operator's globs and language see.
#[test]
fn fixture_files_hold() {
    let root = manifest_dir().join("tests/catalog_fixtures");
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&root).expect("tests/catalog_fixtures") {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let id = dir.file_name().unwrap().to_string_lossy().to_string();
        let op =
            catalog::operator(&id).unwrap_or_else(|| panic!("fixture dir {id} names no operator"));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| !n.contains(".mutant-") && n != "negative")
            .collect();
        names.sort();
        for name in names {
            let code = std::fs::read_to_string(dir.join(&name)).unwrap();
            let mut expected = Vec::new();
            for n in 1.. {
                match std::fs::read_to_string(dir.join(format!("{name}.mutant-{n}"))) {
                    Ok(t) => expected.push(t),
                    Err(_) => break,
                }
            }
            let got = mutants_of(&find_sites(op, &name, code.as_bytes()), &code);
            if got != expected {
                failures.push(format!("{id}/{name}: {}", describe(&expected, &got)));
            }
            checked += 1;
        }
        let neg = dir.join("negative");
        if neg.is_dir() {
            for e in std::fs::read_dir(&neg).unwrap() {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                let code = std::fs::read_to_string(&path).unwrap();
                for s in find_sites(op, &name, code.as_bytes()) {
                    failures.push(format!(
                        "{id}/negative/{name}:{}:{}: `{}` -> `{}`",
                        s.line, s.col, s.original, s.replacement
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no fixtures found under {}", root.display());
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn templates_are_spec_entries_for_init() {
    for op in catalog::catalog()
        .iter()
        .filter(|o| o.kind == OperatorKind::Template)
    {
        let text = op.template.as_deref().unwrap();
        let v: serde_json::Value = serde_saphyr::from_str(text)
            .unwrap_or_else(|e| panic!("{}: template is not YAML: {e}", op.id));
        let list = v
            .as_array()
            .unwrap_or_else(|| panic!("{}: template must be a `mutations:` list entry", op.id));
        assert_eq!(list.len(), 1, "{}: one entry per template", op.id);
        let m = list[0].as_object().unwrap();
        assert_eq!(m["id"], op.id.as_str(), "{}: entry id", op.id);
        assert_eq!(m["rule"], op.rule.as_str(), "{}: entry rule", op.id);
        for key in ["control", "file", "replace"] {
            assert!(m.contains_key(key), "{}: template lacks `{key}`", op.id);
        }
        assert!(
            m.contains_key("find") || m.contains_key("regex"),
            "{}: template needs `find` or `regex`",
            op.id
        );
        assert!(
            text.contains("# ANCHOR:"),
            "{}: template must say which line to anchor (`# ANCHOR:` comment)",
            op.id
        );
    }
}

#[test]
fn find_sites_respects_language_globs_and_excludes() {
    let op = catalog::operator("transport-security-passed").unwrap();
    let code = b"app = server.sse_app(transport_security=policy)\n";
    assert_eq!(find_sites(op, "src/app.py", code).len(), 1);
    assert_eq!(
        find_sites(op, "app.py", code).len(),
        1,
        "**/ matches top level"
    );
    assert!(
        find_sites(op, "src/app.ts", code).is_empty(),
        "wrong language"
    );
    assert!(
        find_sites(op, "notes.txt", code).is_empty(),
        "no glob match"
    );
    assert!(
        find_sites(op, "tests/test_app.py", code).is_empty(),
        "excluded"
    );
    assert!(
        find_sites(op, "src/conftest.py", code).is_empty(),
        "excluded"
    );
    assert_eq!(Language::from_path("a/b.py"), Some(Language::Python));
    assert_eq!(Language::from_path("a/b.mjs"), Some(Language::TypeScript));
    assert_eq!(Language::from_path("pyproject.toml"), None);
    for t in catalog::catalog()
        .iter()
        .filter(|o| o.kind == OperatorKind::Template)
    {
        assert!(
            find_sites(t, "app.py", code).is_empty(),
            "templates find nothing"
        );
    }
}

#[test]
fn sites_carry_positions_and_survive_bom_crlf_and_bad_bytes() {
    let op = catalog::operator("transport-security-passed").unwrap();
    // BOM + CRLF: offsets are bytes of the file, columns count characters without the BOM.
    let code = "\u{feff}import x\r\napp = server.sse_app(\r\n    host=h,  # é\r\n    transport_security=policy,\r\n)\r\n";
    let sites = find_sites(op, "app.py", code.as_bytes());
    assert_eq!(sites.len(), 1, "{sites:?}");
    let s = &sites[0];
    assert_eq!(&code[s.start..s.end], s.original);
    assert_eq!((s.line, s.col), (4, 1));
    assert_eq!((s.end_line, s.end_col), (5, 1));
    let mutated = String::from_utf8(s.apply(code.as_bytes())).unwrap();
    assert_eq!(
        mutated,
        "\u{feff}import x\r\napp = server.sse_app(\r\n    host=h,  # é\r\n)\r\n"
    );
    assert_eq!(
        s.apply_checked(code.as_bytes()),
        Some(mutated.clone().into_bytes())
    );
    assert_eq!(
        s.apply_checked(mutated.as_bytes()),
        None,
        "file changed since the scan"
    );
    assert_eq!(s.location(), "app.py:4");
    // Not UTF-8 or binary: no structural site, no panic.
    assert!(find_sites(op, "app.py", b"x = f(transport_security=p) \xff\n").is_empty());
    assert!(find_sites(op, "app.py", b"x = f(transport_security=p)\0\n").is_empty());
}

#[test]
fn scan_reads_each_file_once_for_all_operators() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "src/app.py",
        "mcp = FastMCP('x', host=host, port=port, transport_security=policy)\n\
         ordered = sorted(rows, key=lambda r: (-r['score'], r['id']))\n",
    );
    write(
        "tests/test_app.py",
        "FastMCP('x', transport_security=policy)\n",
    );
    write("pytest.ini", "[pytest]\ntimeout = 30\naddopts = -q\n");
    write("README.md", "transport_security=policy\n");
    let files: Vec<String> = [
        "src/app.py",
        "tests/test_app.py",
        "pytest.ini",
        "README.md",
        "gone.py",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sites = scan(dir.path(), &files);
    let got: Vec<(String, String, usize)> = sites
        .iter()
        .map(|s| (s.operator.clone(), s.file.clone(), s.line))
        .collect();
    let want: Vec<(String, String, usize)> = [
        ("transport-security-passed", "src/app.py", 1),
        ("host-forwarded-to-app", "src/app.py", 1),
        ("port-forwarded-to-app", "src/app.py", 1),
        ("total-sort-order", "src/app.py", 2),
        ("suite-timeout", "pytest.ini", 2),
    ]
    .iter()
    .map(|(o, f, l)| (o.to_string(), f.to_string(), *l))
    .collect();
    assert_eq!(got, want);
    let ids = catalog::mutant_ids(&sites);
    assert_eq!(ids[0], "transport-security-passed--src-app-py-l1");
    assert_eq!(ids[4], "suite-timeout--pytest-ini-l2");
    let twice = catalog::mutant_ids(&[sites[0].clone(), sites[0].clone()]);
    assert_eq!(twice[1], "transport-security-passed--src-app-py-l1-2");
    let missing: Vec<&str> = catalog::missing_expected(catalog::catalog(), &sites)
        .iter()
        .map(|o| o.id.as_str())
        .collect();
    assert!(!missing.contains(&"transport-security-passed"));
    assert!(!missing.contains(&"suite-timeout"));
    for o in catalog::missing_expected(catalog::catalog(), &[]) {
        assert!(o.expected && o.kind == OperatorKind::Audit);
    }
}

/// The repository's own MCP example on the real mcp 2.x SDK: the catalog
/// finds the controls its hand-written spec names.
#[test]
fn scan_finds_the_controls_of_the_sdk_example() {
    let root = manifest_dir().join("examples/sdk-server");
    if !root.join("sdk_server/app.py").exists() {
        return; // the example is not part of this checkout
    }
    let files: Vec<String> = ["app.py", "auth.py", "headers.py", "tools.py"]
        .iter()
        .map(|f| format!("sdk_server/{f}"))
        .collect();
    let sites = scan(&root, &files);
    let has = |op: &str, file: &str| {
        sites
            .iter()
            .any(|s| s.operator == op && s.file == format!("sdk_server/{file}"))
    };
    let count = |op: &str| sites.iter().filter(|s| s.operator == op).count();
    assert_eq!(count("transport-security-passed"), 2, "both app paths");
    for (op, file) in [
        ("host-forwarded-to-app", "app.py"),
        ("port-forwarded-to-app", "app.py"),
        ("allowlist-port-exact", "app.py"),
        ("allowlist-loopback-included", "app.py"),
        ("allowlist-no-wildcard", "app.py"),
        ("cors-origins-merged", "app.py"),
        ("dns-rebinding-protection-on", "app.py"),
        ("bearer-token-compared", "auth.py"),
        ("mcp-headers-match-body", "headers.py"),
        ("mcp-header-missing-rejected", "headers.py"),
        ("total-sort-order", "tools.py"),
        ("full-scope-sent", "tools.py"),
        ("transport-error-is-error", "tools.py"),
        ("empty-result-hint", "tools.py"),
    ] {
        assert!(
            has(op, file),
            "{op} finds nothing in {file}; sites: {:#?}",
            sites
                .iter()
                .map(|s| format!("{} {}:{} {}", s.operator, s.file, s.line, s.original))
                .collect::<Vec<_>>()
        );
    }
    // Listener calls are not app factories.
    assert!(!sites
        .iter()
        .any(|s| s.operator == "host-forwarded-to-app" && s.original.contains("uvicorn")));
}

fn readme_block(readme: &str) -> Option<&str> {
    let start = readme.find("<!-- catalog-start -->\n")? + "<!-- catalog-start -->\n".len();
    let end = readme[start..].find("<!-- catalog-end -->")? + start;
    Some(&readme[start..end])
}

#[test]
fn readme_catalog_block_is_current() {
    let readme = std::fs::read_to_string(manifest_dir().join("docs/catalog.md")).unwrap();
    let want = readme_section();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("catalog-readme-section.md");
    std::fs::write(&path, &want).unwrap();
    match readme_block(&readme) {
        Some(block) => assert!(
            block == want,
            "docs/catalog.md's catalog block is stale: replace the text between \
             <!-- catalog-start --> and <!-- catalog-end --> with {}",
            path.display()
        ),
        None => panic!(
            "docs/catalog.md has no <!-- catalog-start --> / <!-- catalog-end --> block; \
             paste {} between the markers",
            path.display()
        ),
    }
}

#[test]
fn readme_section_lists_every_operator_once_by_group() {
    let section = readme_section();
    for op in catalog::catalog() {
        let line = format!("- `{}`: ", op.id);
        assert_eq!(section.matches(&line).count(), 1, "{} listed once", op.id);
        assert!(
            section.contains(&op.control),
            "{}: control in the README",
            op.id
        );
    }
    let positions: Vec<usize> = Group::ALL
        .iter()
        .map(|g| {
            section
                .find(&format!("**{}**", g.title()))
                .expect("group heading")
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "groups in order");
}
