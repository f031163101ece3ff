//! The environment a suite inherits, made so that nothing in it points at
//! the user's checkout: git cannot be pointed at (or discover) the user's
//! repository, and every inherited variable whose value is a path under
//! the target root is rewritten to the same path in the copy.
//!
//! - Every variable git reads to locate a repository, its index, object
//!   store or work tree ([`GIT_LOCATORS`]) is dropped, and
//!   `GIT_CEILING_DIRECTORIES` is the copy's parent: `git` run in the copy
//!   finds no repository at all (the copy has no `.git`), not the user's and
//!   not one above the temp dir. git's other variables (author, editor,
//!   `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_COUNT`, …) are the user's settings
//!   and stay.
//! - `PWD` is the run's cwd (in the copy); `OLDPWD` under the root is dropped.
//! - Any other inherited variable whose value is an absolute path under the
//!   root, or a `:`-list with such components (`PYTHONPATH`, `PATH`,
//!   `VIRTUAL_ENV`, `INIT_CWD`, `CARGO_TARGET_DIR`, …), gets the same path
//!   in the copy when the copy has it or could have it (its parent dir is
//!   there); a path with no counterpart is dropped (a `:`-list loses that
//!   component, a single path the variable). Symlinks are resolved for the
//!   comparison, so a checkout reached through a symlinked path is caught.
//! - The GitHub Action's comment token ([`ACTION_SECRETS`]) is dropped: the
//!   suite is the pull request's code and has no use for it.
//! - A variable `test.env` sets is the user's explicit choice and is never
//!   touched, `GIT_DIR` included.
//!
//! Names only are reported (for the run log), never values: they may be
//! secrets.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Variables git reads to find a repository, index, object store or work
/// tree (see `git help environment`), plus those a git process exports to
/// the hooks and aliases it runs (`GIT_PREFIX`, `GIT_QUARANTINE_PATH`,
/// `GIT_CONFIG_PARAMETERS` for its `-c` options, which can carry
/// `core.worktree`). Never inherited by a suite.
pub const GIT_LOCATORS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_INTERNAL_SUPER_PREFIX",
];

/// Variables of unguard's own that hold a credential for something other
/// than the suite (the Action's `pull-requests: write` token): a suite never
/// inherits them.
pub const ACTION_SECRETS: &[&str] = &[
    "UNGUARD_TOKEN",
    // The runner's own credentials: an OIDC token request (`id-token:
    // write`) and the runtime token for caches and artifacts.
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_TOKEN",
];

/// Start this process again without the [`ACTION_SECRETS`] it holds: a
/// suite never inherits them, but it can read the initial environment of
/// every ancestor in `/proc/<pid>/environ`, and unguard is one. Returns
/// only when none is held, or when the new start failed (said on stderr;
/// the run goes on, its suites still without them).
pub fn shed_action_secrets() {
    let held: Vec<&str> = ACTION_SECRETS
        .iter()
        .copied()
        .filter(|k| std::env::var_os(k).is_some())
        .collect();
    if held.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut again = std::process::Command::new(exe);
    again.args(std::env::args_os().skip(1));
    for k in &held {
        again.env_remove(k);
    }
    let err = std::os::unix::process::CommandExt::exec(&mut again);
    eprintln!(
        "warning: could not start again without {} ({err}): the suites do not inherit them, but can read them in /proc",
        held.join(", ")
    );
}

/// Stops git's repository discovery (set to the copy's parent).
pub const GIT_CEILING: &str = "GIT_CEILING_DIRECTORIES";

/// What a run's environment changes about the inherited one.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChildEnv {
    /// Variables set for the run (applied after `remove`, in order: a later
    /// entry wins).
    pub set: Vec<(String, String)>,
    /// Inherited variables the run does not get.
    pub remove: Vec<String>,
    /// Names of inherited variables rewritten to the copy (for the log).
    pub rewritten: Vec<String>,
    /// Names of inherited variables dropped (for the log).
    pub dropped: Vec<String>,
    /// What the log should say besides (e.g. why there is no private
    /// repository).
    pub notes: Vec<String>,
}

impl ChildEnv {
    /// Only `set`, nothing inherited changed.
    pub fn with(set: Vec<(String, String)>) -> ChildEnv {
        ChildEnv {
            set,
            ..ChildEnv::default()
        }
    }

    /// `set` preceded by every removed variable set empty: for code that
    /// looks a variable up there before unguard's own environment, and
    /// takes an empty value for none.
    pub fn visible(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .remove
            .iter()
            .map(|k| (k.clone(), String::new()))
            .collect();
        v.extend(self.set.iter().cloned());
        v
    }

    /// One line for the run log naming what was rewritten and dropped
    /// (names only), and the notes; `None` when there is nothing to say.
    pub fn describe(&self) -> Option<String> {
        if self.rewritten.is_empty() && self.dropped.is_empty() {
            return (!self.notes.is_empty()).then(|| self.notes.join("; "));
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        let mut line = format!(
            "rewritten to the copy: {}; dropped: {}",
            list(&self.rewritten),
            list(&self.dropped)
        );
        for n in &self.notes {
            line.push_str("; ");
            line.push_str(n);
        }
        Some(line)
    }
}

/// Where a run happens: the user's checkout (`root`, canonical), the copy
/// standing in for it and the run's cwd in the copy.
pub struct Place<'a> {
    /// The user's checkout (the target root), canonical.
    pub root: &'a Path,
    /// The scratch copy standing in for `root`.
    pub copy: &'a Path,
    /// The run's working directory, in the copy.
    pub cwd: &'a Path,
}

/// Add to `env` (whose `set` holds `test.env` and unguard's own variables,
/// never touched) what makes `inherited` safe for a run at `place`: see the
/// module doc.
pub fn confine(
    env: &mut ChildEnv,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    place: &Place<'_>,
) {
    let explicit: Vec<String> = env.set.iter().map(|(k, _)| k.clone()).collect();
    let is_explicit = |k: &str| explicit.iter().any(|e| e == k);
    let mut inherited: Vec<(String, OsString)> = inherited
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .filter(|(k, _)| !is_explicit(k))
        .collect();
    inherited.sort_by(|a, b| a.0.cmp(&b.0));
    let mut set = Vec::new();
    for (key, value) in &inherited {
        if GIT_LOCATORS.contains(&key.as_str()) {
            env.remove.push(key.clone());
            if key != GIT_CEILING {
                env.dropped.push(key.clone());
            }
            continue;
        }
        if ACTION_SECRETS.contains(&key.as_str()) {
            env.remove.push(key.clone());
            env.dropped.push(key.clone());
            continue;
        }
        if key == "PWD" {
            continue; // set below
        }
        match rewrite(value, key == "OLDPWD", place) {
            Rewrite::Keep => {}
            Rewrite::To(v) => {
                env.rewritten.push(key.clone());
                set.push((key.clone(), v));
            }
            Rewrite::Drop => {
                env.dropped.push(key.clone());
                env.remove.push(key.clone());
            }
        }
    }
    let cwd = place.cwd.display().to_string();
    if !is_explicit("PWD") {
        let old = inherited.iter().find(|(k, _)| k == "PWD");
        if old.is_some_and(|(_, v)| v.as_bytes() != cwd.as_bytes()) {
            env.rewritten.push("PWD".into());
        }
        set.push(("PWD".into(), cwd));
    }
    if !is_explicit(GIT_CEILING) {
        let parent = place.copy.parent().unwrap_or(place.copy);
        set.push((GIT_CEILING.into(), parent.display().to_string()));
    }
    env.rewritten.sort();
    env.dropped.sort();
    // unguard's own and `test.env` values come last: they win.
    set.append(&mut env.set);
    env.set = set;
}

/// `workspace.git: private`: make a fresh repository of `copy` at
/// `git_dir` (outside the copy, in the run's own dir: gone after the run,
/// so no run sees another's commits and the copy stays as recorded), its
/// one commit what `git add -A` takes from the copy as the run starts
/// (the mutant included). Returns the variables that point the suite's git
/// at it; an error says why there is none. git runs with none of the
/// inherited locators, no hooks and a fixed identity.
pub fn private_repo(git_dir: &Path, copy: &Path) -> Result<Vec<(String, String)>, String> {
    let vars = vec![
        ("GIT_DIR".to_string(), git_dir.display().to_string()),
        ("GIT_WORK_TREE".to_string(), copy.display().to_string()),
    ];
    let steps: [&[&str]; 3] = [
        &["init", "-q"],
        &["add", "-A"],
        &[
            "commit",
            "-q",
            "--no-verify",
            "--allow-empty",
            "-m",
            "unguard: the copy under test",
        ],
    ];
    for args in steps {
        let mut cmd = std::process::Command::new("git");
        cmd.args([
            "-c",
            "user.name=unguard",
            "-c",
            "user.email=unguard@localhost",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(copy)
        .stdin(std::process::Stdio::null());
        for k in GIT_LOCATORS {
            cmd.env_remove(k);
        }
        cmd.envs(vars.iter().map(|(k, v)| (k, v)));
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run `git {}`: {e}", args[0]))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("`git {}` failed: {}", args[0], err.trim()));
        }
    }
    Ok(vars)
}

/// What becomes of one inherited value.
#[derive(Debug, PartialEq, Eq)]
enum Rewrite {
    Keep,
    To(String),
    Drop,
}

/// `value` with every absolute path under the root replaced by its
/// counterpart in the copy (a component without one left out); `drop_all`:
/// a value under the root is dropped rather than rewritten.
fn rewrite(value: &OsString, drop_all: bool, place: &Place<'_>) -> Rewrite {
    let Some(text) = value.to_str() else {
        return Rewrite::Keep;
    };
    if !text.contains('/') {
        return Rewrite::Keep;
    }
    let mut changed = false;
    let mut parts = Vec::new();
    for part in text.split(':') {
        match under_root(part, place.root) {
            None => parts.push(part.to_string()),
            Some(rel) => {
                changed = true;
                let there = place.copy.join(&rel);
                if !drop_all && has_counterpart(&there, place.copy) {
                    parts.push(there.display().to_string());
                }
            }
        }
    }
    if !changed {
        Rewrite::Keep
    } else if parts.is_empty() || parts.iter().all(String::is_empty) {
        Rewrite::Drop
    } else {
        Rewrite::To(parts.join(":"))
    }
}

/// The path of `part` relative to `root` when it is an absolute path at or
/// under it, as written or with its symlinks resolved (for a path that does
/// not exist, those of its longest existing ancestor).
fn under_root(part: &str, root: &Path) -> Option<PathBuf> {
    let p = Path::new(part);
    if !p.is_absolute() {
        return None;
    }
    let p = normalize(p);
    if let Ok(rel) = p.strip_prefix(root) {
        return Some(rel.to_path_buf());
    }
    let resolved = resolve(&p)?;
    resolved.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// `p` without `.` components and with `..` applied lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `p` with the symlinks of its longest existing ancestor resolved.
fn resolve(p: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut cur = p;
    loop {
        if let Ok(real) = cur.canonicalize() {
            let mut out = real;
            for c in rest.iter().rev() {
                out.push(c);
            }
            return Some(out);
        }
        rest.push(cur.file_name()?.to_os_string());
        cur = cur.parent()?;
    }
}

/// Whether `there` (in the copy) exists, or could be made: its parent
/// does (e.g. a `CARGO_TARGET_DIR` the build will create). Not followed
/// out of the copy: a link into the checkout is still a counterpart.
fn has_counterpart(there: &Path, copy: &Path) -> bool {
    there == copy || there.symlink_metadata().is_ok() || there.parent().is_some_and(|d| d.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(k: &str, v: &str) -> (OsString, OsString) {
        (k.into(), v.into())
    }

    #[test]
    fn paths_under_the_root_point_into_the_copy_and_git_locators_go() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/pkg")).unwrap();
        let area = tempfile::tempdir().unwrap();
        let copy = area.path().join("tree");
        std::fs::create_dir_all(copy.join("src/pkg")).unwrap();
        let r = root.display().to_string();
        let mut env = ChildEnv::with(vec![("KEEP_ME".into(), format!("{r}/src"))]);
        confine(
            &mut env,
            vec![
                os("PYTHONPATH", &format!("/usr/lib:{r}/src:{r}/gone/x")),
                os("VIRTUAL_ENV", &format!("{r}/gone/venv")),
                os("CARGO_TARGET_DIR", &format!("{r}/target")),
                os("OLDPWD", &format!("{r}/src")),
                os("PWD", &r),
                os("GIT_DIR", "/elsewhere/.git"),
                os("GIT_AUTHOR_NAME", "me"),
                os("HOME", "/home/u"),
                os("KEEP_ME", "/inherited"),
            ],
            &Place {
                root: &root,
                copy: &copy,
                cwd: &copy,
            },
        );
        let c = copy.display().to_string();
        let get = |k: &str| {
            env.set
                .iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("PYTHONPATH"), Some(format!("/usr/lib:{c}/src")));
        assert_eq!(get("CARGO_TARGET_DIR"), Some(format!("{c}/target")));
        assert_eq!(get("PWD"), Some(c.clone()));
        assert_eq!(get("KEEP_ME"), Some(format!("{r}/src")));
        assert_eq!(get("GIT_AUTHOR_NAME"), None);
        assert_eq!(get(GIT_CEILING), Some(area.path().display().to_string()));
        assert_eq!(env.rewritten, vec!["CARGO_TARGET_DIR", "PWD", "PYTHONPATH"]);
        assert_eq!(env.dropped, vec!["GIT_DIR", "OLDPWD", "VIRTUAL_ENV"]);
        assert!(env.remove.contains(&"GIT_DIR".to_string()));
        assert!(!env.remove.contains(&"HOME".to_string()));
        let line = env.describe().unwrap();
        assert!(!line.contains(&r), "{line}");
    }

    #[test]
    fn the_action_token_is_never_inherited_but_test_env_may_set_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let copy = tempfile::tempdir().unwrap();
        let place = Place {
            root: &root,
            copy: copy.path(),
            cwd: copy.path(),
        };
        let mut env = ChildEnv::default();
        confine(
            &mut env,
            vec![os("UNGUARD_TOKEN", "ghs_fake"), os("HOME", "/home/u")],
            &place,
        );
        assert!(env.remove.contains(&"UNGUARD_TOKEN".to_string()), "{env:?}");
        assert_eq!(env.dropped, vec!["UNGUARD_TOKEN"]);
        let mut runner = ChildEnv::with(vec![]);
        confine(
            &mut runner,
            vec![
                os("ACTIONS_RUNTIME_TOKEN", "rt"),
                os("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc"),
                os("ACTIONS_ID_TOKEN_REQUEST_URL", "https://oidc"),
            ],
            &place,
        );
        for k in [
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
        ] {
            assert!(runner.remove.contains(&k.to_string()), "{k}: {runner:?}");
        }
        assert!(env.set.iter().all(|(k, _)| k != "UNGUARD_TOKEN"), "{env:?}");
        assert!(!env.describe().unwrap().contains("ghs_fake"));

        let mut env = ChildEnv::with(vec![("UNGUARD_TOKEN".into(), "mine".into())]);
        confine(&mut env, vec![os("UNGUARD_TOKEN", "ghs_fake")], &place);
        assert!(env.remove.is_empty(), "{env:?}");
        assert!(env.set.contains(&("UNGUARD_TOKEN".into(), "mine".into())));
    }

    #[test]
    fn a_symlinked_path_to_the_root_is_recognised() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("lib")).unwrap();
        let other = tempfile::tempdir().unwrap();
        let alias = other.path().join("alias");
        std::os::unix::fs::symlink(&real, &alias).unwrap();
        let copy = other.path().join("copy");
        std::fs::create_dir_all(copy.join("lib")).unwrap();
        let place = Place {
            root: &real,
            copy: &copy,
            cwd: &copy,
        };
        let v = OsString::from(format!("{}/lib/../lib/new", alias.display()));
        assert_eq!(
            rewrite(&v, false, &place),
            Rewrite::To(format!("{}/lib/new", copy.display()))
        );
        assert_eq!(
            rewrite(&OsString::from("/usr/bin:/bin"), false, &place),
            Rewrite::Keep
        );
    }
}
