//! Times unguard's workspace set-up on a target tree, without running any
//! suite: the manifest (git index + status), `Pristine::create` and
//! `Scratch::create` (the run's pristine copy, then the worker copies made
//! from it), the walk that puts a copy back after each run (on a clean
//! copy: the cost every run pays), and dropping the scratch dirs. Used by
//! `bench/bench.py`.
//!
//! ```sh
//! cargo bench --bench workspace_copy -- ROOT [--reps N] [--workers N] [--resets N] [--walk]
//! ```
//!
//! Prints one JSON object per line: `{"rep":0,"workers":1,"manifest_s":…,
//! "pristine_s":…,"create_s":…,"reset_ms":…,"reset_min_ms":…,"drop_s":…,
//! "entries":…,
//! "env_links":…,"bytes":…}`; `env_links`: the links made for the env dirs
//! (`node_modules`, `.venv`) in each copy; `create_s` includes `pristine_s`; `reset_ms` is the median
//! time of one run's reset (its own dirs made and removed, the walk), and
//! `reset_min_ms` the fastest; `watching`: whether the kernel said which
//! entries to compare (else every entry is). `--walk` compares every
//! entry on every reset, as where nothing can be watched.
//! With `--workers 2` the worker copies are made at the same time on two
//! threads, as `unguard run -j2` does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use unguard::workspace::{self, Pristine, Scratch};

fn main() {
    let mut root: Option<PathBuf> = None;
    let mut reps = 1usize;
    let mut workers = 1usize;
    let mut resets = 20usize;
    let mut walk = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--walk" => walk = true,
            "--resets" => {
                resets = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--resets N")
            }
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
        let pristine = Arc::new(Pristine::create(Arc::new(manifest.clone())).expect("pristine"));
        let pristine_s = t.elapsed().as_secs_f64();
        let mut scratches: Vec<Scratch> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let p = &pristine;
                    s.spawn(move || Scratch::create(p, w).expect("copy"))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let create_s = t.elapsed().as_secs_f64();
        if walk {
            scratches[0].stop_watching();
        }
        // The reset after every run: a clean copy, nothing to put back.
        let mut times: Vec<f64> = (0..resets)
            .map(|_| {
                let s = &mut scratches[0];
                let t = Instant::now();
                s.begin_run().expect("begin");
                let r = s.end_run(&[]).expect("reset");
                assert!(r.paths.is_empty(), "{:?}", r.paths);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let watching = scratches[0].watching();
        let reset_ms = times.get(times.len() / 2).copied().unwrap_or(0.0);
        let reset_min_ms = times.first().copied().unwrap_or(0.0);
        drop(pristine);
        let t = Instant::now();
        drop(scratches);
        let drop_s = t.elapsed().as_secs_f64();
        println!(
            "{{\"rep\":{rep},\"workers\":{workers},\"manifest_s\":{manifest_s:.6},\"pristine_s\":{pristine_s:.6},\"create_s\":{create_s:.6},\"reset_ms\":{reset_ms:.3},\"reset_min_ms\":{reset_min_ms:.3},\"watching\":{watching},\"drop_s\":{drop_s:.6},\"entries\":{},\"env_links\":{},\"bytes\":{bytes}}}",
            manifest.entries.len(),
            manifest.env_links.len()
        );
    }
}
