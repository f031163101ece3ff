//! Package scripts (`npm test`, `pnpm -r test`, `yarn run test:unit`) run
//! through npm: in the package, or in each workspace package that has the
//! script (from `pnpm-workspace.yaml` or `package.json` `workspaces`).

use std::path::Path;

use crate::audit::detect::environment::{self, JsTool};
use crate::run::{shell, shell_line};

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// A package script as unguard runs it.
pub struct ScriptRun {
    /// The npm command(s), from the package's directory.
    pub command: String,
    /// `pnpm install` (…) when the workspace has no `node_modules`.
    pub setup: Option<String>,
    /// How it runs (for the reason).
    pub how: &'static str,
}

/// Package script `script` run through npm, in the package at `workdir`
/// (repo-relative; the root when `None`) or (recursive) in each workspace
/// package that has it; `None` when the script or the packages are
/// missing, or the workspace lies outside `root`.
pub fn script_command(
    root: &Path,
    workdir: Option<&str>,
    script: &str,
    recursive: bool,
) -> Option<ScriptRun> {
    let dir = match workdir {
        Some(w) => root.join(w),
        None => root.to_path_buf(),
    };
    let dir = dir.canonicalize().ok()?;
    let run = |pkg: &str| {
        let prefix = if pkg.is_empty() {
            String::new()
        } else {
            format!(" --prefix {}", shell::quote(pkg))
        };
        if script == "test" {
            format!("npm test --silent{prefix}")
        } else {
            format!("npm run --silent {}{prefix}", shell::quote(script))
        }
    };
    let (command, tool, ws_root) = if recursive {
        let pkgs = workspace_packages(&dir, script);
        if pkgs.is_empty() {
            return None;
        }
        let cmd = pkgs.iter().map(|p| run(p)).collect::<Vec<_>>().join(" && ");
        (cmd, js_tool(&dir), dir.clone())
    } else {
        let js = environment::js_env(&dir)?;
        if !has_script(&dir, script) {
            return None;
        }
        let cmd = if script == "test" {
            js.command()
        } else if js.package_dir.is_empty() {
            run("")
        } else {
            return None;
        };
        (cmd, js.tool, js.root.clone())
    };
    // The copy is of the repo: a workspace above it is out of reach.
    if !ws_root.starts_with(root.canonicalize().ok()?) {
        return None;
    }
    Some(ScriptRun {
        command,
        setup: (!ws_root.join("node_modules").is_dir()).then(|| format!("{} install", tool.name())),
        how: if recursive {
            "run through npm in each workspace package that has the script (its node_modules/.bin on PATH)"
        } else {
            "run through npm (its node_modules/.bin on PATH)"
        },
    })
}

/// A package script call that selects packages (`pnpm -r --filter
/// '!@acme/e2e' test`, `npm test -w packages/server`), run as written with
/// the project's own package manager: its selection is the project's.
/// `None` when no package of the workspace at `workdir` has `script`, or
/// the workspace lies outside `root`.
pub fn as_written(
    root: &Path,
    workdir: Option<&str>,
    script: &str,
    words: &[shell_line::Word],
) -> Option<ScriptRun> {
    let dir = match workdir {
        Some(w) => root.join(w),
        None => root.to_path_buf(),
    };
    let dir = dir.canonicalize().ok()?;
    if !dir.starts_with(root.canonicalize().ok()?) {
        return None;
    }
    if !has_script(&dir, script) && workspace_packages(&dir, script).is_empty() {
        return None;
    }
    let tool = match words
        .first()
        .map(|w| w.value.rsplit('/').next().unwrap_or(""))
    {
        Some("pnpm") => JsTool::Pnpm,
        Some("yarn") => JsTool::Yarn,
        _ => JsTool::Npm,
    };
    Some(ScriptRun {
        command: words
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        setup: (!dir.join("node_modules").is_dir()).then(|| format!("{} install", tool.name())),
        how: "run as written with the project's package manager (its package selection kept)",
    })
}

fn js_tool(dir: &Path) -> JsTool {
    if dir.join("pnpm-workspace.yaml").is_file() || dir.join("pnpm-lock.yaml").is_file() {
        JsTool::Pnpm
    } else if dir.join("yarn.lock").is_file() {
        JsTool::Yarn
    } else {
        JsTool::Npm
    }
}

fn has_script(dir: &Path, script: &str) -> bool {
    let pkg: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")).unwrap_or_default();
    pkg["scripts"][script].is_string()
}

/// The workspace packages of `dir` (from `pnpm-workspace.yaml` or
/// `package.json` `workspaces`) that have `script`, by path.
fn workspace_packages(dir: &Path, script: &str) -> Vec<String> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct PnpmWs {
        packages: Vec<String>,
    }
    let mut globs: Vec<String> =
        serde_saphyr::from_str::<PnpmWs>(&read(dir, "pnpm-workspace.yaml"))
            .map(|w| w.packages)
            .unwrap_or_default();
    let pkg: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")).unwrap_or_default();
    let ws = if pkg["workspaces"].is_array() {
        &pkg["workspaces"]
    } else {
        &pkg["workspaces"]["packages"]
    };
    globs.extend(
        ws.as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string)),
    );
    let mut out = Vec::new();
    for g in globs.iter().filter(|g| !g.starts_with('!')) {
        let pattern = format!("{}/{}/package.json", dir.display(), g.trim_end_matches('/'));
        for p in glob::glob(&pattern).into_iter().flatten().flatten() {
            let Some(pkg_dir) = p.parent() else { continue };
            let Ok(rel) = pkg_dir.strip_prefix(dir) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            if rel.is_empty() || rel.contains("node_modules") || out.contains(&rel) {
                continue;
            }
            if has_script(pkg_dir, script) {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}
