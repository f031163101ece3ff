//! Reading a test command as one start of a Python interpreter: `[VAR=v …]
//! PYTHON [options] -m MODULE args…`, or `[VAR=v …] SCRIPT args…` where
//! SCRIPT is a console script whose first line starts a Python interpreter
//! (`#!/…/python3`, `#!/usr/bin/env python3`). Anything else (a wrapper such
//! as `uv run`, `make`, `tox`; a list of commands; an expansion, a glob or a
//! redirection the shell would do) is not one, and runs cold.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::run::shell_line;

/// What the interpreter runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Main {
    /// `-m MODULE`.
    Module(String),
    /// A script, by the path it is started with (absolute).
    Script(PathBuf),
}

/// One start of a Python interpreter, as a test command writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The interpreter, absolute (as found, symlinks kept: a virtual
    /// environment is known by the path it is started through).
    pub python: PathBuf,
    /// Its options before `-m` / the script (`-B`, `-X dev`, …).
    pub options: Vec<String>,
    /// What it runs.
    pub main: Main,
    /// The arguments after the module or script.
    pub args: Vec<String>,
    /// Variables the command line sets for it (`VAR=v` words).
    pub assigns: Vec<(String, String)>,
}

/// Interpreter options that take the next word as their value.
const WITH_VALUE: &[&str] = &["-W", "-X"];
/// Interpreter options that take none (combined forms like `-Bu` are not read).
const FLAGS: &[&str] = &[
    "-B", "-b", "-bb", "-d", "-E", "-I", "-O", "-OO", "-P", "-q", "-R", "-s", "-u", "-v",
];

/// Characters the shell would act on in a word (expansions, globs,
/// redirections, grouping): a command with one of them is not read.
const SHELL_SPECIAL: &[char] = &[
    '$', '`', '*', '?', '[', '~', '<', '>', '(', ')', '{', '}', '!',
];

/// The interpreter start `argv` makes (`sh -c LINE` or an argv), for one of
/// `mains` (module or console-script names), with `env` the run's
/// environment (for `PATH`) and `cwd` its directory. `None`: not one.
pub fn read(
    argv: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    mains: &[&str],
) -> Option<Entry> {
    let (assigns, words) = match argv {
        [sh, c, line] if sh == "sh" && c == "-c" => simple_command(line)?,
        _ => (Vec::new(), argv.to_vec()),
    };
    let mut env = env.clone();
    env.extend(assigns.iter().cloned());
    let (program, rest) = words.split_first()?;
    let found = locate(program, &env, cwd)?;
    let name = found.file_name()?.to_str()?;
    if is_python(name) {
        let (options, main, args) = after_python(rest, cwd, mains)?;
        return Some(Entry {
            python: found,
            options,
            main,
            args,
            assigns,
        });
    }
    if !mains.contains(&name) {
        return None;
    }
    let (python, options) = shebang(&found, &env, cwd)?;
    Some(Entry {
        python,
        options,
        main: Main::Script(found),
        args: rest.to_vec(),
        assigns,
    })
}

/// A command line's `VAR=v` assignments, then its words.
type Split = (Vec<(String, String)>, Vec<String>);

/// The assignments and words of `line` when it is one simple command the
/// shell would run as written.
fn simple_command(line: &str) -> Option<Split> {
    let cmds = shell_line::commands(line)?;
    let [one] = cmds.as_slice() else {
        return None;
    };
    if one.then.is_some_and(|t| t != ";") {
        return None;
    }
    let mut assigns = Vec::new();
    let mut words = Vec::new();
    for w in &one.words {
        if w.raw.contains(SHELL_SPECIAL) {
            return None;
        }
        match w.value.split_once('=') {
            Some((k, v)) if words.is_empty() && is_name(k) && w.raw.starts_with(k) => {
                assigns.push((k.to_string(), v.to_string()));
            }
            _ => words.push(w.value.clone()),
        }
    }
    (!words.is_empty() && words[0] != "exec" && words[0] != "env").then_some((assigns, words))
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f == '_' || f.is_ascii_alphabetic())
        && c.all(|x| x == '_' || x.is_ascii_alphanumeric())
}

/// `python`, `python3`, `python3.12` (not `python3-config`, `pythonw`).
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The options, the main and the arguments after the interpreter's name.
fn after_python(
    rest: &[String],
    cwd: &Path,
    mains: &[&str],
) -> Option<(Vec<String>, Main, Vec<String>)> {
    let mut options = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].as_str();
        if w == "-m" {
            let module = rest.get(i + 1)?;
            return mains.contains(&module.as_str()).then(|| {
                (
                    options,
                    Main::Module(module.clone()),
                    rest[i + 2..].to_vec(),
                )
            });
        }
        if WITH_VALUE.contains(&w) {
            options.push(w.to_string());
            options.push(rest.get(i + 1)?.clone());
            i += 2;
            continue;
        }
        if FLAGS.contains(&w) {
            options.push(w.to_string());
            i += 1;
            continue;
        }
        if w.starts_with('-') {
            return None; // -c, -, or an option not read here
        }
        // A script: only a console script of one of `mains`.
        let script = cwd.join(w);
        let name = script.file_name()?.to_str()?;
        return mains
            .contains(&name)
            .then(|| (options, Main::Script(script), rest[i + 1..].to_vec()));
    }
    None
}

/// `program` as the run would find it: a path (relative to `cwd`) or the
/// first executable of that name on the run's `PATH`.
fn locate(program: &str, env: &BTreeMap<String, String>, cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let p = cwd.join(program);
        return p.is_file().then_some(p);
    }
    let path = env.get("PATH")?;
    path.split(':').find_map(|dir| {
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let p = dir.join(program);
        executable(&p).then_some(p)
    })
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The interpreter a script's first line starts, when it is a Python
/// interpreter without options (`#!/path/python3` or `#!/usr/bin/env python3`).
fn shebang(
    script: &Path,
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Option<(PathBuf, Vec<String>)> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(script)
        .ok()?
        .take(512)
        .read_to_end(&mut head)
        .ok()?;
    let first = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?.strip_prefix("#!")?.trim();
    let mut parts = line.split_whitespace();
    let interp = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    let python = match (Path::new(interp).file_name()?.to_str()?, rest.as_slice()) {
        ("env", [name]) if is_python(name) => locate(name, env, cwd)?,
        (name, []) if is_python(name) && interp.starts_with('/') => PathBuf::from(interp),
        _ => return None,
    };
    Some((python, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with_path(dir: &Path) -> BTreeMap<String, String> {
        BTreeMap::from([("PATH".to_string(), dir.display().to_string())])
    }

    fn exe(p: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn python_dash_m_with_assignments_and_options_is_read() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        exe(&bin.join("python3"), "");
        let argv = vec![
            "sh".into(),
            "-c".into(),
            "PYTHONPATH=src python3 -B -X dev -m pytest -q 'tests/a b.py' --junitxml=/j.xml".into(),
        ];
        let e = read(&argv, &env_with_path(&bin), d.path(), &["pytest"]).unwrap();
        assert_eq!(e.python, bin.join("python3"));
        assert_eq!(e.options, vec!["-B", "-X", "dev"]);
        assert_eq!(e.main, Main::Module("pytest".into()));
        assert_eq!(e.args, vec!["-q", "tests/a b.py", "--junitxml=/j.xml"]);
        assert_eq!(
            e.assigns,
            vec![("PYTHONPATH".to_string(), "src".to_string())]
        );
    }

    #[test]
    fn a_console_script_is_read_through_its_first_line() {
        let d = tempfile::tempdir().unwrap();
        exe(&d.path().join("python3.11"), "");
        exe(
            &d.path().join("pytest"),
            &format!("#!{}/python3.11\nimport sys\n", d.path().display()),
        );
        let argv = vec!["pytest".to_string(), "-x".to_string()];
        let e = read(
            &argv,
            &env_with_path(d.path()),
            d.path(),
            &["pytest", "py.test"],
        )
        .unwrap();
        assert_eq!(e.python, d.path().join("python3.11"));
        assert_eq!(e.main, Main::Script(d.path().join("pytest")));
        assert_eq!(e.args, vec!["-x"]);
    }

    #[test]
    fn wrappers_lists_expansions_and_other_modules_are_not_read() {
        let d = tempfile::tempdir().unwrap();
        exe(&d.path().join("python3"), "");
        exe(
            &d.path().join("pytest"),
            "#!/bin/bash\nexec python3 -m pytest \"$@\"\n",
        );
        exe(&d.path().join("uv"), "");
        let env = env_with_path(d.path());
        let no = |line: &str| {
            let argv = vec!["sh".into(), "-c".into(), line.to_string()];
            assert_eq!(read(&argv, &env, d.path(), &["pytest"]), None, "{line}");
        };
        no("uv run pytest");
        no("cd x && python3 -m pytest");
        no("python3 -m pytest $ARGS");
        no("python3 -m pytest tests/*.py");
        no("python3 -m pytest > out.txt");
        no("python3 -m unittest");
        no("python3 -c 'import pytest'");
        no("python3 -m pytest | tee log");
        // a bash wrapper named pytest (pyenv's shim) is not a Python start
        no("pytest -q");
        assert!(is_python("python3.12") && !is_python("python3-config") && !is_python("pythonw"));
    }
}
