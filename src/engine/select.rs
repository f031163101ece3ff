//! Re-running only some tests of a pytest suite (a kill's confirmation
//! re-runs the tests that went red): a small pytest plugin that unguard
//! writes into its scratch area and loads through `PYTEST_ADDOPTS`, so it
//! works whatever the command (`pytest …`, `python -m pytest`, a wrapper
//! script). Other runners ignore it and run whole.

use std::path::{Path, PathBuf};

use crate::error::{Context, Result};

/// The plugin's module name (on `PYTHONPATH`, loaded with `-p`).
pub(super) const PLUGIN: &str = "unguard_select";

/// Keeps the collected items whose JUnit id (`classname::name`, as pytest's
/// junitxml writes them) is listed in `$UNGUARD_SELECT`; deselects the
/// rest. When none matches (a renamed test, another id scheme), nothing is
/// deselected: the whole suite runs, as without the plugin; unless
/// `$UNGUARD_SELECT_STRICT` is set (a kill-first subset): then every test
/// is deselected, and pytest exits 5 (no tests ran), which never kills.
const PLUGIN_SOURCE: &str = r#"# Written by unguard: keeps only the tests listed in $UNGUARD_SELECT.
import os


def _junit_id(nodeid):
    try:
        from _pytest.junitxml import mangle_test_address
    except ImportError:
        return None
    names = mangle_test_address(nodeid)
    classname = ".".join(names[:-1])
    return classname + "::" + names[-1] if classname else names[-1]


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("UNGUARD_SELECT")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        wanted = {line for line in f.read().split("\n") if line}
    keep = [item for item in items if _junit_id(item.nodeid) in wanted]
    if not keep and not os.environ.get("UNGUARD_SELECT_STRICT"):
        return
    drop = [item for item in items if _junit_id(item.nodeid) not in wanted]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
"#;

/// Where the plugin lives for one scratch copy: `dir/unguard_select.py`.
pub(super) fn install(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(format!("{PLUGIN}.py"));
    std::fs::write(&file, PLUGIN_SOURCE).with_context(|| format!("writing {}", file.display()))?;
    Ok(dir.to_path_buf())
}

/// The environment that makes a pytest run keep only the tests `ids`
/// (JUnit ids), given the run's environment so far (`base`, then the
/// process's own): the plugin directory goes first on `PYTHONPATH`, `-p
/// unguard_select` is added to `PYTEST_ADDOPTS`, and `UNGUARD_SELECT`
/// names the file with the ids (written into `plugin_dir`). `strict`: a
/// list that matches no test runs none (not the whole suite).
pub(super) fn env(
    plugin_dir: &Path,
    ids: &[String],
    label: &str,
    base: &[(String, String)],
    strict: bool,
) -> Result<Vec<(String, String)>> {
    let list = plugin_dir.join(format!("select-{label}.txt"));
    std::fs::write(&list, ids.join("\n") + "\n")
        .with_context(|| format!("writing {}", list.display()))?;
    let inherited = |key: &str| {
        base.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(key).ok())
            .filter(|v| !v.is_empty())
    };
    let pythonpath = match inherited("PYTHONPATH") {
        Some(p) => format!("{}:{p}", plugin_dir.display()),
        None => plugin_dir.display().to_string(),
    };
    let addopts = match inherited("PYTEST_ADDOPTS") {
        Some(a) => format!("{a} -p {PLUGIN}"),
        None => format!("-p {PLUGIN}"),
    };
    let mut env = vec![
        ("PYTHONPATH".into(), pythonpath),
        ("PYTEST_ADDOPTS".into(), addopts),
        ("UNGUARD_SELECT".into(), list.display().to_string()),
    ];
    if strict {
        env.push(("UNGUARD_SELECT_STRICT".into(), "1".into()));
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_extends_what_the_run_already_has() {
        let d = tempfile::tempdir().unwrap();
        let dir = install(d.path()).unwrap();
        assert!(dir.join("unguard_select.py").exists());
        let base = vec![
            ("PYTHONPATH".to_string(), "src".to_string()),
            ("PYTEST_ADDOPTS".to_string(), "-q".to_string()),
        ];
        let env = env(
            &dir,
            &["t.m::a".into(), "t.m::b[::1]".into()],
            "m1",
            &base,
            false,
        )
        .unwrap();
        let get = |k: &str| env.iter().find(|(key, _)| key == k).unwrap().1.clone();
        assert_eq!(get("PYTHONPATH"), format!("{}:src", dir.display()));
        assert_eq!(get("PYTEST_ADDOPTS"), "-q -p unguard_select");
        let list = std::fs::read_to_string(get("UNGUARD_SELECT")).unwrap();
        assert_eq!(list, "t.m::a\nt.m::b[::1]\n");
    }
}
