//! Server code that lives where helper scripts usually do.
//!
//! The default excludes ([`crate::audit::scan_scope`]) skip `scripts/`: in most
//! repositories it holds release and code-generation helpers. Some servers
//! start from there, though (`"dev": "tsx watch scripts/start-server.ts"`),
//! and then the HTTP entry point, its auth gate and its bind options are in
//! an excluded directory. This module finds those files: the scripts that
//! `package.json` runs to start the server (`start`, `dev`, `serve`, and
//! their `:variant`s), and the files they import by relative path, followed
//! through the excluded directory. Only files the default excludes would
//! skip are returned; everything else is scanned anyway.

use std::collections::BTreeSet;
use std::path::Path;

use crate::audit::scan_scope::default_excluded;

/// Extensions of the files a start script can name.
const SCRIPT_EXTS: &[&str] = &[".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".py"];

/// How deep relative imports are followed from an entry file.
const MAX_DEPTH: usize = 4;

/// Is `name` a script that starts the server (`start`, `dev:http`, `serve`)?
fn starts_server(name: &str) -> bool {
    let head = name.split(':').next().unwrap_or(name);
    matches!(head, "start" | "dev" | "serve")
}

/// The repo-relative entry files of `package_json` (the file at
/// `prefix` + `package.json` under `root`, `prefix` empty or ending in `/`)
/// that the default excludes skip, and the excluded files they import.
fn entry_files(root: &Path, package_json: &str, prefix: &str, files: &[String]) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(package_json) else {
        return Vec::new();
    };
    let Some(scripts) = doc.get("scripts").and_then(|s| s.as_object()) else {
        return Vec::new();
    };
    let known: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let mut found = BTreeSet::new();
    for (name, cmd) in scripts {
        let Some(cmd) = cmd.as_str().filter(|_| starts_server(name)) else {
            continue;
        };
        for word in cmd.split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|') {
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            if !SCRIPT_EXTS.iter().any(|e| word.ends_with(e)) {
                continue;
            }
            let path = normalize(&format!("{prefix}{}", word.trim_start_matches("./")));
            if let Some(p) = path.filter(|p| known.contains(p.as_str()) && default_excluded(p)) {
                found.insert(p);
            }
        }
    }
    let mut queue: Vec<(String, usize)> = found.iter().map(|f| (f.clone(), 0)).collect();
    while let Some((file, depth)) = queue.pop() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else {
            continue;
        };
        for import in relative_imports(&text) {
            if let Some(p) = resolve(&file, &import, &known) {
                if default_excluded(&p) && found.insert(p.clone()) {
                    queue.push((p, depth + 1));
                }
            }
        }
    }
    found.into_iter().collect()
}

/// [`entry_files`] for the package at `root` + `prefix`: reads its
/// `package.json` (none, or not JSON: no entry files).
pub fn entry_files_in(root: &Path, prefix: &str, files: &[String]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(format!("{prefix}package.json"))) else {
        return Vec::new();
    };
    entry_files(root, &text, prefix, files)
}

/// The specifiers of `import … from './x'`, `import('./x')`,
/// `require('../x')` and `export … from './x'` that start with `.`.
fn relative_imports(text: &str) -> Vec<String> {
    let re = regex::Regex::new(
        r#"(?m)(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](\.{1,2}/[^"']+)["']"#,
    )
    .expect("a valid regex");
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

/// The file `spec` (relative to `from`'s directory) names, with the
/// extensions TypeScript and Node try (`./x.js` may be `x.ts`).
pub(crate) fn resolve(from: &str, spec: &str, known: &BTreeSet<&str>) -> Option<String> {
    let dir = from.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let joined = normalize(&if dir.is_empty() {
        spec.to_string()
    } else {
        format!("{dir}/{spec}")
    })?;
    let stem = [".js", ".mjs", ".cjs", ".jsx"]
        .iter()
        .find_map(|e| joined.strip_suffix(e))
        .unwrap_or(&joined);
    let mut candidates = vec![joined.clone()];
    for base in [stem, joined.as_str()] {
        for ext in [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs"] {
            candidates.push(format!("{base}{ext}"));
        }
        candidates.push(format!("{base}/index.ts"));
        candidates.push(format!("{base}/index.js"));
    }
    candidates.into_iter().find(|c| known.contains(c.as_str()))
}

/// `a/./b/../c` → `a/c`; `None` when it climbs above the root.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_scripts_and_their_relative_imports_are_entry_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("scripts/start-server.ts"),
            "import { opts } from './server-options.js'\nimport { x } from '../src/x.js'\n",
        )
        .unwrap();
        std::fs::write(
            root.join("scripts/server-options.ts"),
            "export const opts = 1\n",
        )
        .unwrap();
        std::fs::write(root.join("scripts/release.ts"), "").unwrap();
        std::fs::write(root.join("src/x.ts"), "").unwrap();
        let pkg = r#"{"scripts": {"dev": "tsx watch scripts/start-server.ts", "release": "tsx scripts/release.ts", "build": "tsc && node scripts/release.ts"}}"#;
        std::fs::write(root.join("package.json"), pkg).unwrap();
        let files: Vec<String> = [
            "package.json",
            "scripts/start-server.ts",
            "scripts/server-options.ts",
            "scripts/release.ts",
            "src/x.ts",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            entry_files_in(root, "", &files),
            vec!["scripts/server-options.ts", "scripts/start-server.ts"]
        );
        // No start script, no package.json: nothing.
        assert!(entry_files(
            root,
            r#"{"scripts": {"build": "node scripts/a.js"}}"#,
            "",
            &files
        )
        .is_empty());
        assert!(entry_files_in(&root.join("src"), "", &files).is_empty());
    }

    #[test]
    fn paths_normalize_and_never_climb_out() {
        assert_eq!(
            normalize("scripts/./a/../b.ts").as_deref(),
            Some("scripts/b.ts")
        );
        assert_eq!(normalize("../x.ts"), None);
        assert!(starts_server("dev:http") && starts_server("start") && !starts_server("build"));
    }
}
