//! Warm Python runs: a run of a pytest or unittest suite forked from an
//! interpreter that has already imported what does not change between
//! mutants, instead of a fresh interpreter that imports it all again.
//!
//! Per worker (its socket in the worker's scratch area) and test command,
//! one interpreter ([`server.py`](server.py)) is started the way the
//! command starts its own: the same interpreter, options, environment
//! (unguard's per-run `UNGUARD_*` variables aside), working directory and
//! `sys.path[0]`; under a supervisor of its own (in a network namespace of
//! its own when the command's runs get one); registered with the
//! [`crate::run::reaper`], so every way unguard ends kills it. On request
//! it imports a list of modules: the ones a run of the suite ended with
//! that are not the project's (no file under the copy or the checkout, site
//! packages aside), nor loaded by pytest's assertion rewriter; an import
//! that starts a thread, opens a socket or pulls in a module of the
//! project makes it refuse, and the command runs cold.
//!
//! A warm run is an ordinary run of the run layer whose leader is
//! [`client`] instead of the interpreter: same supervisor, process group,
//! cgroup, log, timeout. The forked child joins the run's process group
//! and cgroup and takes the run's stdin, stdout, stderr, environment, cwd
//! and arguments, then runs the module or script as `python` does; the
//! interpreter kills whatever the run left behind before it reports the
//! end. Whether a command may run warm is the engine's decision (its
//! baseline run both ways, see `engine::baseline`); where anything here
//! cannot be had, the run goes cold and its log says why.

pub mod client;
pub mod entry;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::run::child_env::ChildEnv;
use crate::run::isolation;
use crate::run::reaper;
pub use entry::{Entry, Main};

/// The interpreter's program (run with `-c`).
const SERVER_SOURCE: &str = include_str!("server.py");

/// Variables an interpreter reads once, at its start (prefixes): runs that
/// differ in one of them need another interpreter (`server.py` checks them
/// again against each run). The others are the run's own, set in the fork.
const STARTUP_VARS: &[&str] = &["PYTHON", "HOME", "VIRTUAL_ENV", "LC_", "LANG", "PATH"];

/// How long a warm interpreter may take to say it is ready.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// How long importing the recorded modules may take.
const PRELOAD_WITHIN: Duration = Duration::from_secs(300);

/// The longest socket path a Unix socket address holds, with room.
const MAX_SOCKET_PATH: usize = 100;

/// A run to fork rather than start.
#[derive(Debug, Clone)]
pub struct Warm {
    /// The command read as an interpreter start.
    pub entry: Entry,
    /// The worker's socket (one interpreter per worker).
    pub socket: PathBuf,
    /// The project: the copy and the checkout (their modules are never
    /// imported by the interpreter itself).
    pub roots: Vec<PathBuf>,
    /// The modules to import before forking (empty: none yet).
    pub preload: Arc<Vec<String>>,
    /// Where the child writes the modules it ended with.
    pub record: Option<PathBuf>,
    /// The interpreter gets a network namespace of its own (the command's
    /// runs get one: the worker's runs share it, one at a time).
    pub netns: bool,
}

impl Warm {
    /// In a few words, for the log: the interpreter, and its network.
    pub fn describe(&self) -> String {
        let main = match &self.entry.main {
            Main::Module(m) => format!("-m {m}"),
            Main::Script(p) => p.display().to_string(),
        };
        let net = if self.netns {
            "; in the worker's own network namespace (loopback only)"
        } else {
            ""
        };
        format!("{} {main}{net}", self.entry.python.display())
    }
}

/// What identifies an interpreter: a run with another key gets a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    python: PathBuf,
    options: Vec<String>,
    main: Main,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    roots: Vec<PathBuf>,
    netns: bool,
}

impl Key {
    /// What differs from `other`, in a few words (names only: values may
    /// be secrets).
    fn change(&self, other: &Key) -> String {
        if self.python != other.python || self.options != other.options || self.main != other.main {
            return "the interpreter or what it runs".into();
        }
        if self.cwd != other.cwd || self.roots != other.roots {
            return "the directory".into();
        }
        if self.netns != other.netns {
            return "the network".into();
        }
        let names: Vec<&str> = self
            .env
            .keys()
            .chain(other.env.keys())
            .filter(|k| self.env.get(*k) != other.env.get(*k))
            .map(String::as_str)
            .collect();
        match names.first() {
            Some(n) => format!("`{n}`"),
            None => "nothing".into(),
        }
    }
}

/// One worker's interpreter.
struct Server {
    key: Key,
    process: tokio::process::Child,
    pgid: i32,
    control: std::os::unix::net::UnixStream,
    /// The preload list it imported (by identity), if any.
    preloaded: Option<Arc<Vec<String>>>,
    /// Its stderr (for the reason it died).
    stderr: PathBuf,
}

/// A worker's slot: its interpreter, or why its key runs cold.
#[derive(Default)]
struct Slot {
    server: Option<Server>,
    refused: Option<(Key, String)>,
}

type Pool = Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<Slot>>>>;

fn pool() -> &'static Pool {
    static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    POOL.get_or_init(Pool::default)
}

fn slot(socket: &Path) -> Arc<tokio::sync::Mutex<Slot>> {
    let mut g = pool().lock().unwrap_or_else(|p| p.into_inner());
    Arc::clone(g.entry(socket.to_path_buf()).or_default())
}

/// The run's whole environment: unguard's, changed as `env` says.
pub fn environment(env: &ChildEnv) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    for k in &env.remove {
        out.remove(k);
    }
    out.extend(env.set.iter().cloned());
    out
}

/// The socket of the worker whose scratch area is `area`, for runs in a
/// network namespace of the worker's own (`netns`) or on the machine's
/// network: one interpreter each, so a confirmation outside the namespace
/// does not cost the other its imports (`None` when the path is too long
/// for a socket address).
pub fn socket_in(area: &Path, netns: bool) -> Option<PathBuf> {
    let p = area.join(if netns { "warm-ns.sock" } else { "warm.sock" });
    (p.as_os_str().len() <= MAX_SOCKET_PATH).then_some(p)
}

/// The leader's argv for the warm run of `argv` (the command as it would
/// start), in `cwd` with `env`: the interpreter is started, or checked, and
/// given `warm.preload` first. `Err`: why this run goes cold.
pub async fn prepare(
    warm: &Warm,
    argv: &[String],
    cwd: &Path,
    env: &ChildEnv,
) -> Result<(Vec<String>, Option<String>), String> {
    let mut full = environment(env);
    full.extend(warm.entry.assigns.iter().cloned());
    full.retain(|k, _| !k.starts_with("UNGUARD_"));
    let key = Key {
        python: warm.entry.python.clone(),
        options: warm.entry.options.clone(),
        main: warm.entry.main.clone(),
        cwd: cwd.to_path_buf(),
        env: full
            .iter()
            .filter(|(k, _)| STARTUP_VARS.iter().any(|p| k.starts_with(p)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        roots: warm.roots.clone(),
        netns: warm.netns,
    };
    let slot = slot(&warm.socket);
    let mut slot = slot.lock().await;
    if let Some((k, why)) = &slot.refused {
        if *k == key {
            return Err(why.clone());
        }
    }
    let ended = slot
        .server
        .as_mut()
        .is_some_and(|s| !matches!(s.process.try_wait(), Ok(None)));
    let (alive, mut started) = match slot.server.as_ref() {
        Some(s) if ended => (
            false,
            Some(format!(
                "started again: the last one ended ({})",
                s.last_words()
            )),
        ),
        Some(s) if s.key != key => (
            false,
            Some(format!("started again: {} changed", s.key.change(&key))),
        ),
        Some(_) => (true, None),
        None => (false, Some("started for this run".to_string())),
    };
    let mut server = match (alive, slot.server.take()) {
        (true, Some(s)) => s,
        (_, old) => {
            if let Some(old) = old {
                old.stop().await;
            }
            match Server::start(key.clone(), &full, warm).await {
                Ok(s) => s,
                Err(why) => {
                    slot.refused = Some((key, why.clone()));
                    return Err(why);
                }
            }
        }
    };
    let wanted = !warm.preload.is_empty()
        && !server
            .preloaded
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &warm.preload));
    if wanted {
        started = Some(match started {
            Some(s) => format!("{s}; it imported the suite's modules first"),
            None => "it imported the suite's modules for this run".into(),
        });
        if server.preloaded.is_some() {
            // Another list: a fresh interpreter imports it.
            server.stop().await;
            server = match Server::start(key.clone(), &full, warm).await {
                Ok(s) => s,
                Err(why) => {
                    slot.refused = Some((key, why.clone()));
                    return Err(why);
                }
            };
        }
        if let Err(why) = server.preload(&warm.socket, &warm.preload).await {
            server.stop().await;
            slot.refused = Some((key, why.clone()));
            return Err(why);
        }
    }
    slot.server = Some(server);
    Ok((client_argv(warm, argv), started))
}

fn client_argv(warm: &Warm, argv: &[String]) -> Vec<String> {
    let mut out = vec![
        client::SUBCOMMAND.to_string(),
        "--socket".into(),
        warm.socket.display().to_string(),
    ];
    if let Some(r) = &warm.record {
        out.push("--record".into());
        out.push(r.display().to_string());
    }
    for (k, v) in &warm.entry.assigns {
        out.push("--set".into());
        out.push(format!("{k}={v}"));
    }
    out.push("--cold-argc".into());
    out.push(argv.len().to_string());
    out.push("--".into());
    out.extend(argv.iter().cloned());
    out.extend(warm.entry.args.iter().cloned());
    let mut full = vec![isolation::self_exe().to_string()];
    full.extend(out);
    full
}

impl Server {
    /// Start an interpreter for `key` and wait until it listens.
    async fn start(
        key: Key,
        env: &BTreeMap<String, String>,
        warm: &Warm,
    ) -> Result<Server, String> {
        let _ = std::fs::remove_file(&warm.socket);
        let stderr = warm.socket.with_extension("log");
        let err_file = std::fs::File::create(&stderr)
            .map_err(|e| format!("cannot create {}: {e}", stderr.display()))?;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| format!("no control socket: {e}"))?;
        let entry = match &key.main {
            Main::Module(m) => serde_json::json!({"kind": "module", "module": m}),
            Main::Script(p) => serde_json::json!({"kind": "script", "path": p}),
        };
        let mut interpreter = vec![key.python.display().to_string()];
        interpreter.extend(key.options.iter().cloned());
        interpreter.extend([
            "-c".into(),
            SERVER_SOURCE.into(),
            warm.socket.display().to_string(),
            entry.to_string(),
            serde_json::json!(key.roots).to_string(),
            serde_json::json!(env).to_string(),
        ]);
        // Its own supervisor, as a run has (no cgroup: it lives for the
        // whole run of unguard; each fork joins its run's).
        let supervisor = isolation::Setup {
            netns: key.netns,
            ..isolation::Setup::direct()
        };
        let args = supervisor.supervisor_args(&interpreter, Duration::from_millis(500));
        let token = reaper::new_run_token();
        let control = ours
            .try_clone()
            .map_err(|e| format!("no control socket: {e}"))?;
        let mut cmd = tokio::process::Command::new(isolation::self_exe());
        cmd.args(&args)
            .env_clear()
            .envs(env)
            .env(reaper::RUN_TOKEN_VAR, &token)
            .current_dir(&key.cwd)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err_file))
            .process_group(0)
            .kill_on_drop(true);
        let process = reaper::spawn_registered(&mut cmd, &token, Some(control), None)
            .map_err(|e| format!("cannot start {}: {e}", key.python.display()))?;
        let pgid = process.id().map_or(0, |p| p as i32);
        let mut server = Server {
            key,
            process,
            pgid,
            control: ours,
            preloaded: None,
            stderr,
        };
        let stdout = server.process.stdout.take();
        let ready = async {
            let mut line = String::new();
            if let Some(out) = stdout {
                let _ = BufReader::new(out).read_line(&mut line).await;
            }
            line
        };
        match tokio::time::timeout(READY_WITHIN, ready).await {
            Ok(line) if line.trim() == "ready" => Ok(server),
            Ok(_) => {
                let why = server.last_words();
                server.stop().await;
                Err(format!("the warm interpreter did not start: {why}"))
            }
            Err(_) => {
                server.stop().await;
                Err(format!(
                    "the warm interpreter was not ready within {READY_WITHIN:?}"
                ))
            }
        }
    }

    /// The end of its stderr, in one line.
    fn last_words(&self) -> String {
        let tail = crate::run::log_tail(&self.stderr, 3);
        let tail = tail.split_whitespace().collect::<Vec<_>>().join(" ");
        if tail.is_empty() {
            "it exited without a word".into()
        } else {
            tail
        }
    }

    /// Import `names` in the interpreter.
    async fn preload(&mut self, socket: &Path, names: &Arc<Vec<String>>) -> Result<(), String> {
        let ask = async {
            let mut s = tokio::net::UnixStream::connect(socket)
                .await
                .map_err(|e| format!("no warm interpreter: {e}"))?;
            let body = serde_json::json!({"op": "preload", "names": names.as_slice()}).to_string();
            let mut msg = u32::try_from(body.len())
                .map_err(|_| "too many modules".to_string())?
                .to_be_bytes()
                .to_vec();
            msg.extend_from_slice(body.as_bytes());
            s.write_all(&msg).await.map_err(|e| e.to_string())?;
            let mut reply = String::new();
            s.read_to_string(&mut reply)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<String, String>(reply)
        };
        let reply = match tokio::time::timeout(PRELOAD_WITHIN, ask).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(format!("importing the suite's modules failed: {e}")),
            Err(_) => {
                return Err(format!(
                    "importing the suite's modules took over {PRELOAD_WITHIN:?}"
                ))
            }
        };
        let v: serde_json::Value = serde_json::from_str(reply.trim()).unwrap_or_default();
        if let Some(why) = v.get("unsafe").and_then(|u| u.as_str()) {
            return Err(why.to_string());
        }
        if v.get("preloaded").is_none() {
            return Err(format!(
                "the warm interpreter did not import the suite's modules: {}",
                self.last_words()
            ));
        }
        self.preloaded = Some(Arc::clone(names));
        Ok(())
    }

    /// Kill it (its supervisor kills its subtree when the control socket
    /// closes) and wait for it.
    async fn stop(mut self) {
        let _ = self.control.shutdown(std::net::Shutdown::Both);
        drop(self.control);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.process.wait()).await;
        let _ = self.process.start_kill();
        reaper::unregister(self.pgid);
        let _ = std::fs::remove_file(self.stderr.with_extension("sock"));
    }
}

/// Stop every warm interpreter (the end of a run of unguard).
pub async fn stop_all() {
    let slots: Vec<_> = {
        let mut g = pool().lock().unwrap_or_else(|p| p.into_inner());
        g.drain().map(|(_, s)| s).collect()
    };
    for s in slots {
        let mut s = s.lock().await;
        if let Some(server) = s.server.take() {
            server.stop().await;
        }
    }
}
