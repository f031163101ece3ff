//! Times unguard's workspace set-up on a target tree, without running any
//! suite: the manifest (git index + status), `Scratch::create` (the copy),
//! and dropping the scratch dir. Used by `bench/bench.py`.
//!
//! ```sh
//! cargo bench --bench workspace_copy -- ROOT [--reps N] [--workers N]
//! ```
//!
//! Prints one JSON object per line: `{"rep":0,"workers":1,"manifest_s":…,
//! "create_s":…,"drop_s":…,"entries":…,"bytes":…}`. With `--workers 2` the
//! copies are made at the same time on two threads, as `unguard run -j2` does.

use std::path::PathBuf;
use std::time::Instant;

use unguard::workspace::{self, Scratch};

fn main() {
    let mut root: Option<PathBuf> = None;
    let mut reps = 1usize;
    let mut workers = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--workers" => {
                workers = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--workers N")
            }
            // `cargo bench` passes `--bench`.
            s if s.starts_with("--") => {}
            s => root = Some(PathBuf::from(s)),
        }
    }
    let root = root.expect("usage: workspace_copy ROOT [--reps N] [--workers N]");
    for rep in 0..reps {
        let t = Instant::now();
        let manifest = workspace::manifest(&root, &[], &[]).expect("manifest");
        let manifest_s = t.elapsed().as_secs_f64();
        let bytes: u64 = manifest
            .entries
            .iter()
            .filter_map(|e| manifest.root.join(e).symlink_metadata().ok())
            .map(|m| m.len())
            .sum();
        let t = Instant::now();
        let scratches: Vec<Scratch> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let m = &manifest;
                    s.spawn(move || Scratch::create(m, w).expect("copy"))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let create_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        drop(scratches);
        let drop_s = t.elapsed().as_secs_f64();
        println!(
            "{{\"rep\":{rep},\"workers\":{workers},\"manifest_s\":{manifest_s:.6},\"create_s\":{create_s:.6},\"drop_s\":{drop_s:.6},\"entries\":{},\"bytes\":{bytes}}}",
            manifest.entries.len()
        );
    }
}
