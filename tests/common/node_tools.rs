//! The jest and vitest the JavaScript fixtures run, installed once per
//! lockfile instead of once per test (issue 51).
//!
//! `tests/fixtures/node-tools/` pins them (package.json and its
//! package-lock.json). The first test that needs them runs `npm ci` into
//! `<target>/tmp/node-tools-<hash of the lockfile>/` under an exclusive file
//! lock (nextest runs every test in its own process); every fixture then gets
//! a `node_modules` symlink to that install. A changed lockfile is a new
//! directory, so a stale install is never used.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

const PACKAGE_JSON: &str = include_str!("../fixtures/node-tools/package.json");
const LOCKFILE: &str = include_str!("../fixtures/node-tools/package-lock.json");

/// Where the install for this lockfile lives (it may not exist yet).
fn install_dir() -> PathBuf {
    let hash = Sha256::digest(format!("{PACKAGE_JSON}\0{LOCKFILE}").as_bytes());
    let key: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("node-tools-{key}"))
}

/// The marker written after a complete `npm ci`: a directory without it is a
/// half-done install (a test killed mid-install) and is made again.
const COMPLETE: &str = ".unguard-install-complete";

/// `node_modules` with the pinned jest, jest-junit and vitest: installed on
/// first use, shared by every later test and run. `Err` says why it could not
/// be installed (npm missing, registry unreachable).
pub fn node_modules() -> Result<PathBuf, String> {
    let dir = install_dir();
    let modules = dir.join("node_modules");
    if modules.join(COMPLETE).is_file() {
        return Ok(modules);
    }
    std::fs::create_dir_all(dir.parent().unwrap()).map_err(|e| e.to_string())?;
    let lock_path = dir.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| format!("{lock_path:?}: {e}"))?;
    lock.lock()
        .map_err(|e| format!("locking {lock_path:?}: {e}"))?;
    // Another process may have finished the install while this one waited.
    if modules.join(COMPLETE).is_file() {
        return Ok(modules);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("package.json"), PACKAGE_JSON).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("package-lock.json"), LOCKFILE).map_err(|e| e.to_string())?;
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--silent"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("npm is not installed: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "npm ci of tests/fixtures/node-tools failed (is the registry reachable?): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::File::create(modules.join(COMPLETE))
        .and_then(|mut f| f.write_all(b"npm ci of tests/fixtures/node-tools\n"))
        .map_err(|e| e.to_string())?;
    Ok(modules)
    // `lock` is released when it is dropped here.
}

/// Give the fixture at `root` the shared `node_modules` (a symlink); false
/// when it cannot be installed or linked: the calling test is skipped (it
/// fails under `CI`, see [`super::skip::missing`]) and returns.
pub fn link_into(root: &Path) -> bool {
    let linked = node_modules().and_then(|modules| {
        std::os::unix::fs::symlink(&modules, root.join("node_modules"))
            .map_err(|e| format!("linking node_modules into {root:?}: {e}"))
    });
    match linked {
        Ok(()) => true,
        Err(e) => {
            super::skip::missing(&format!(
                "jest and vitest from tests/fixtures/node-tools: {e}"
            ));
            false
        }
    }
}
