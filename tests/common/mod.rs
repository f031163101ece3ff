//! Shared helpers for integration tests: real fixture repos in temp dirs,
//! the real `unguard` binary, tree hashing.
#![allow(dead_code)]

pub mod node_tools;
pub mod packaging;
pub mod skip;
pub mod spec;

pub use spec::{mutation, six_fn_mutations, six_fn_spec, six_fn_spec_of, Mutation, SpecBuilder};

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// A fixture target in a temp dir (removed on drop).
pub struct Fixture {
    pub dir: tempfile::TempDir,
    /// TMPDIR for the unguard process: its scratch copies land here, so a test
    /// can check that none is left behind.
    pub tmp: tempfile::TempDir,
}

impl Fixture {
    /// An empty plain directory.
    pub fn new() -> Fixture {
        Fixture {
            dir: tempfile::Builder::new()
                .prefix("ug-fixture-")
                .tempdir()
                .unwrap(),
            tmp: tempfile::Builder::new()
                .prefix("ug-tmp-")
                .tempdir()
                .unwrap(),
        }
    }

    /// A git repo with `files` committed.
    pub fn git(files: &[(&str, &str)]) -> Fixture {
        let f = Fixture::new();
        f.write_all(files);
        f.git_cmd(&["init", "-q", "-b", "main"]);
        f.git_cmd(&["add", "-A"]);
        f.commit("init");
        f
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn write_all(&self, files: &[(&str, &str)]) {
        for (rel, content) in files {
            self.write(rel, content);
        }
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    /// Commit what is staged, with a fixed test identity.
    pub fn commit(&self, message: &str) {
        self.git_cmd(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            message,
        ]);
    }

    pub fn git_cmd(&self, args: &[&str]) {
        let st = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?} failed");
    }

    /// `unguard <args>` with the fixture as cwd.
    pub fn unguard(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("unguard").unwrap();
        c.args(args)
            .current_dir(self.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("GITHUB_STEP_SUMMARY");
        c
    }

    /// Run `unguard` and return (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.unguard(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `(file, line, control)` of every site `audit --list --json [extra] .`
    /// reports (the command must exit 0).
    pub fn audit_sites(&self, extra: &[&str]) -> Vec<(String, u64, String)> {
        let mut args = vec!["audit", "--list", "--json"];
        args.extend_from_slice(extra);
        args.push(".");
        let (code, out, err) = self.run(&args);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        doc["sites"]
            .as_array()
            .expect("sites")
            .iter()
            .map(|s| {
                (
                    s["file"].as_str().unwrap().to_string(),
                    s["line"].as_u64().unwrap(),
                    s["control"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Parsed `outcomes.json` of an output dir (relative to the fixture).
    pub fn outcomes(&self, out_dir: &str) -> serde_json::Value {
        let text =
            std::fs::read_to_string(self.path().join(out_dir).join("outcomes.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// How many whole-suite runs of the unmutated copy the baseline of
    /// `out_dir` forked to check warm runs (tests/it/warm_runs.rs): counted
    /// like the baseline by tests that count a suite's runs.
    pub fn warm_checks(&self, out_dir: &str) -> usize {
        ["@baseline.warm.log", "@baseline.warm-preloaded.log"]
            .iter()
            .filter(|f| self.path().join(out_dir).join(f).exists())
            .count()
    }

    /// `id -> outcome` from `outcomes.json`.
    pub fn verdicts(&self, out_dir: &str) -> BTreeMap<String, String> {
        verdicts_in(&self.path().join(out_dir))
    }

    /// `id -> reason` (the verdict rule's name, see [`reason`]) from
    /// `outcomes.json`.
    pub fn reasons(&self, out_dir: &str) -> BTreeMap<String, String> {
        let o = self.outcomes(out_dir);
        o["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let id = m["id"].as_str().unwrap().to_string();
                (id.clone(), reason(&o, &id).to_string())
            })
            .collect()
    }
}

/// `id -> outcome` from `outcomes.json` in the output dir `out` (any path).
pub fn verdicts_in(out: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(out.join("outcomes.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Whether this test process runs with effective uid 0
/// (`/proc/self/status`: "Uid:\treal\teffective\t...").
pub fn euid_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        .unwrap_or(false)
}

/// Every file, symlink and directory under `root` (excluding `skip` names at
/// any depth) with its content hash and mode bits: equal maps mean an
/// untouched tree.
pub fn tree_state(root: &Path, skip: &[&str]) -> BTreeMap<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if skip.contains(&name.as_str()) {
                continue;
            }
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                out.insert(rel, format!("link {:?}", std::fs::read_link(&p).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {mode:o}"));
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                let mut h = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut h);
                out.insert(
                    rel,
                    format!("file {mode:o} {} {:x}", bytes.len(), h.finish()),
                );
            }
        }
    }
    out
}

impl Fixture {
    /// Whatever unguard left in its TMPDIR (must be empty after any run).
    pub fn leftover_tmp(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    }
}

/// A unique marker for process-leak checks (goes into a process's argv, so
/// [`processes_matching`] finds exactly this test's processes).
pub fn marker(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("ugmark_{tag}_{}_{nanos}", std::process::id())
}

/// Pids of live (non-zombie) processes whose command line contains `marker`.
pub fn processes_matching(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !cmd.contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim().chars().next();
        if state != Some('Z') {
            out.push(pid);
        }
    }
    out
}

pub fn python() -> &'static str {
    "python3"
}

/// Poll `cond` every 50 ms for up to `limit`; whether it came true.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Poll `done` every 50 ms until it holds; fails after `limit`, naming `what`.
pub fn wait_for(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    assert!(eventually(limit, done), "gave up waiting for {what}");
}

/// Fail when a process carrying `marker` is alive (after 3 s for reaping);
/// kills them first so a failing test leaves nothing behind.
pub fn assert_no_processes(marker: &str, what: &str) {
    // Killed processes may take a moment to be reaped by init.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let live = processes_matching(marker);
        if live.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for pid in &live {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
            panic!("{what}: processes of the suite survived unguard: {live:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A spawned unguard whose stdout/stderr are drained by threads.
pub struct Spawned {
    pub child: Child,
    pub out: std::thread::JoinHandle<String>,
    pub err: std::thread::JoinHandle<String>,
}

pub fn spawn(mut c: std::process::Command) -> Spawned {
    c.env_remove("PYTHONDONTWRITEBYTECODE");
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawning unguard");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    Spawned { child, out, err }
}

impl Spawned {
    /// Wait up to `limit`; on overrun kill unguard and fail.
    pub fn wait(mut self, limit: Duration) -> (i32, String, String, Duration) {
        let start = Instant::now();
        let status: ExitStatus = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let out = self.out.join().unwrap_or_default();
                let err = self.err.join().unwrap_or_default();
                panic!(
                    "unguard still running after {limit:?}\n--- stdout\n{out}\n--- stderr\n{err}"
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let elapsed = start.elapsed();
        let out = self.out.join().unwrap();
        let err = self.err.join().unwrap();
        (status.code().unwrap_or(-1), out, err, elapsed)
    }
}

/// `exit N` plus both streams, for assertion messages.
pub fn ctx(code: i32, out: &str, err: &str) -> String {
    format!("exit {code}\n--- stdout\n{out}\n--- stderr\n{err}")
}

/// The mutant `id` in an `outcomes.json` document (panics, showing the
/// document, when there is none).
pub fn mutant<'a>(o: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no mutant {id}: {o}"))
}

/// The `reason` of mutant `id` in an `outcomes.json` document: the stable
/// name of the verdict rule that decided it (`killed-by-expected`,
/// `load-error`, …; see docs/outcomes-and-gate.md). Panics, showing the
/// mutant, when it has none.
pub fn reason<'a>(o: &'a serde_json::Value, id: &str) -> &'a str {
    let m = mutant(o, id);
    m["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("mutant {id} has no reason: {m}"))
}

/// The SDK example's venv, or `None` after a visible skip (a failure
/// under `CI`, whose `.ci/run` builds it).
pub fn sdk_venv() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sdk-server/.venv");
    if venv.join("bin/python").exists() {
        return Some(venv);
    }
    skip::missing("examples/sdk-server/.venv is missing: run `bash examples/sdk-server/setup.sh`");
    None
}

/// A six-function module for gate, selection and workflow fixtures; `SIX_FN_CHECK`
/// (a `python3 check.py` suite) covers all but `f`, so a mutant of `f` survives.
pub const SIX_FN_APP: &str = "\
def a():
    return 1
def b():
    return 2
def c():
    return 3
def d():
    return 4
def e():
    return 5
def f():
    return 6
";

pub const SIX_FN_CHECK: &str = "\
import sys, app
ok = app.a() == 1 and app.b() == 2 and app.c() == 3 and app.d() == 4 and app.e() == 5
sys.exit(0 if ok else 1)
";
