//! Re-running only some tests of a pytest suite (a kill's confirmation
//! re-runs the tests that went red; a kill-first subset): [`SelectPlugin`],
//! the [`super::Plugin`] of [`super::pytest`] (and of `test.select`'s
//! template and the generic runner), a small pytest
//! plugin that unguard writes as `conftest.py` into its scratch area, the
//! directory that holds the copy, and that pytest loads because
//! `PYTEST_ADDOPTS` moves `--confcutdir` up to that directory. So it works
//! whatever the command (`pytest …`, `python -m pytest`, a wrapper script)
//! and whatever `PYTHONPATH` the command sets itself (`PYTHONPATH=src
//! pytest` in a Makefile would hide a plugin loaded by module name). Other
//! runners ignore it and run whole.

use std::path::{Path, PathBuf};

use super::Plugin;
use crate::error::{Context, Result};
use crate::run::shell;

/// pytest's select plugin (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct SelectPlugin;

impl Plugin for SelectPlugin {
    fn install(
        &self,
        holder: &Path,
        lists: &Path,
        ids: &[String],
        label: &str,
        base: &[(String, String)],
        strict: bool,
    ) -> Result<Vec<(String, String)>> {
        let lists = install(holder, lists)?;
        env(holder, &lists, ids, label, base, strict)
    }

    fn remove(&self, holder: &Path) {
        remove(holder);
    }
}

/// The file pytest loads the plugin from, in the directory holding the copy.
const CONFTEST: &str = "conftest.py";

/// Keeps the collected items whose JUnit id (`classname::name`, as pytest's
/// junitxml writes them) is listed in `$UNGUARD_SELECT`; deselects the
/// rest. When none matches (a renamed test, another id scheme), nothing is
/// deselected: the whole suite runs, as without the plugin; unless
/// `$UNGUARD_SELECT_STRICT` is set (a kill-first subset): then every test
/// is deselected, and pytest exits 5 (no tests ran), which never kills.
const PLUGIN_SOURCE: &str = r#"# Written by unguard (outside your checkout): keeps only the tests listed in $UNGUARD_SELECT.
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

/// Write the plugin as `conftest.py` into `holder`, the directory that
/// holds the copy (pytest loads it when `--confcutdir` is `holder`: see
/// [`env`]), and make `lists` for the id lists. Returns `lists`.
fn install(holder: &Path, lists: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(lists).with_context(|| format!("creating {}", lists.display()))?;
    let file = holder.join(CONFTEST);
    if std::fs::read(&file).ok().as_deref() != Some(PLUGIN_SOURCE.as_bytes()) {
        std::fs::write(&file, PLUGIN_SOURCE)
            .with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(lists.to_path_buf())
}

/// Remove the plugin [`install`] wrote into `holder` (after the run that
/// used it: no other run of the copy loads it).
fn remove(holder: &Path) {
    let _ = std::fs::remove_file(holder.join(CONFTEST));
}

/// The environment that makes a pytest run keep only the tests `ids`
/// (JUnit ids), given the run's environment so far (`base`, then the
/// process's own): `--confcutdir=<holder>` is appended to
/// `PYTEST_ADDOPTS`, so pytest loads the plugin [`install`] wrote there as
/// a conftest of every test, and `UNGUARD_SELECT` names the file with the
/// ids (written into `lists`). `PYTHONPATH` is left alone. `strict`: a list
/// that matches no test runs none (not the whole suite).
fn env(
    holder: &Path,
    lists: &Path,
    ids: &[String],
    label: &str,
    base: &[(String, String)],
    strict: bool,
) -> Result<Vec<(String, String)>> {
    let list = lists.join(format!("select-{label}.txt"));
    std::fs::write(&list, ids.join("\n") + "\n")
        .with_context(|| format!("writing {}", list.display()))?;
    let inherited = base
        .iter()
        .rev()
        .find(|(k, _)| k == "PYTEST_ADDOPTS")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PYTEST_ADDOPTS").ok())
        .filter(|v| !v.trim().is_empty());
    let cut = format!(
        "--confcutdir={}",
        shell::quote(&holder.display().to_string())
    );
    let addopts = match inherited {
        Some(a) => format!("{} {cut}", a.trim()),
        None => cut,
    };
    let mut env = vec![
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
        let lists = install(d.path(), &d.path().join("select")).unwrap();
        assert!(d.path().join("conftest.py").exists());
        let base = vec![
            ("PYTHONPATH".to_string(), "src".to_string()),
            ("PYTEST_ADDOPTS".to_string(), "-q".to_string()),
        ];
        let env = env(
            d.path(),
            &lists,
            &["t.m::a".into(), "t.m::b[::1]".into()],
            "m1",
            &base,
            false,
        )
        .unwrap();
        let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        // PYTHONPATH is the command's business: a subset never depends on it.
        assert_eq!(get("PYTHONPATH"), None);
        assert_eq!(
            get("PYTEST_ADDOPTS").unwrap(),
            format!(
                "-q --confcutdir={}",
                shell::quote(&d.path().display().to_string())
            )
        );
        let list = std::fs::read_to_string(get("UNGUARD_SELECT").unwrap()).unwrap();
        assert_eq!(list, "t.m::a\nt.m::b[::1]\n");
    }
}
