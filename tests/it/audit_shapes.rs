//! Controls found by shape (`audit --shapes`, src/catalog/shape/): a refusal
//! guard no catalog operator matches is listed with the control its words
//! name, only when asked for; `--guards` adds the ones no word names, after
//! the named sites.

use crate::common::*;

const SERVER_GO: &str = "package main\n\nimport \"fmt\"\n\nconst maxQueryLength = 4096\n\n\
func runQuery(q string) error {\n\tif n := len(q); n > maxQueryLength {\n\t\treturn fmt.Errorf(\"query too long: %d\", n)\n\t}\n\treturn nil\n}\n\n\
func main() { _ = runQuery(\"x\") }\n";

const APP_PY: &str = "def delete_item(settings, mode, name):\n    \
if mode == \"write\" and settings.read_only_flag:\n        \
raise PermissionError(\"server is in read-only mode\")\n    \
if name.startswith(\"_\"):\n        \
raise ValueError(\"bad name\")\n    \
return name\n";

fn repo() -> Fixture {
    Fixture::git(&[
        ("server.go", SERVER_GO),
        ("go.mod", "module example.com/shp\n\ngo 1.19\n"),
        ("app.py", APP_PY),
    ])
}

#[test]
fn shapes_are_found_only_when_asked_and_named_by_their_words() {
    let fx = repo();
    assert_eq!(fx.audit_sites(&[]), vec![], "no operator spells these");
    let named = fx.audit_sites(&["--shapes"]);
    assert_eq!(
        named,
        vec![
            ("app.py".to_string(), 2, "read-only-enforced".to_string()),
            ("server.go".to_string(), 8, "input-size-limited".to_string()),
        ]
    );
}

#[test]
fn guards_adds_the_unnamed_refusals_after_the_named_ones() {
    let fx = repo();
    let all = fx.audit_sites(&["--guards"]);
    assert_eq!(
        all.last(),
        Some(&("app.py".to_string(), 4, "guard".to_string())),
        "{all:?}"
    );
    assert_eq!(&all[..2], &fx.audit_sites(&["--shapes"])[..], "{all:?}");
}
