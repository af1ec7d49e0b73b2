//! Wall throughput of `pcsim replay DIR` on a folder of generated Claude Code transcripts, on one
//! thread and on two (issue 30: files replayed in parallel).
//!
//!     cargo bench --bench replay_folder                     # 1000 MB folder
//!     PCSIM_BENCH_FOLDER_MB=200 cargo bench --bench replay_folder
//!
//! The folder is written into a temporary directory at run time (never committed) and removed after.
//! Each thread count replays it `PCSIM_BENCH_PASSES` times (default 2; the best pass counts), each
//! pass the program itself (`pcsim replay DIR --format json`, the release build Cargo builds beside
//! this bench, `RAYON_NUM_THREADS` set), timed whole: start, walk, reading, replay, output (CPU
//! from the children's rusage). The thread counts alternate; the outputs must all agree to the byte
//! (compared on a digest, as the integration test compares the command's output).
//! The load average before and after is printed beside the figures: on a shared machine a speed-up
//! below the number of threads can be other people's work.

use std::path::Path;
use std::time::Instant;

use pcsim::analysis::bench::{claude_code_transcript, CALLS};

/// Writes transcripts into `dir` (in sub-folders of 100, as projects) until `mb` megabytes; the
/// number of files and their bytes.
fn write_folder(dir: &Path, mb: u64) -> (usize, u64) {
    let (mut files, mut bytes) = (0, 0u64);
    while bytes < mb * 1_000_000 {
        let sub = dir.join(format!("project-{:03}", files / 100));
        std::fs::create_dir_all(&sub).expect("bench folder");
        let path = sub.join(format!("session-{files:06}.jsonl"));
        let text = claude_code_transcript(files, 1 + files % 28);
        std::fs::write(&path, &text).expect("bench transcript");
        bytes += text.len() as u64;
        files += 1;
    }
    (files, bytes)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// CPU seconds (user + system) of this process's children that have ended and been waited for.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the rusage given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// One pass: `pcsim replay DIR --format json` on `threads` threads; its wall seconds, CPU seconds
/// (user + system, of the child, from the children's rusage) and a digest of its output.
fn pass(threads: usize, dir: &Path) -> (f64, f64, String) {
    let cpu_before = children_cpu_seconds();
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pcsim"))
        .args([
            "replay",
            dir.to_str().expect("UTF-8 path"),
            "--format",
            "json",
        ])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("pcsim replay");
    let wall = start.elapsed().as_secs_f64();
    assert!(out.status.success(), "pcsim replay failed");
    let cpu = children_cpu_seconds() - cpu_before;
    let digest = pcsim::base::hash::fnv1a(&out.stdout);
    (wall, cpu, format!("{digest:016x}"))
}

fn main() {
    let mb: u64 = std::env::var("PCSIM_BENCH_FOLDER_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let passes: usize = std::env::var("PCSIM_BENCH_PASSES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(1);
    let dir = tempfile::tempdir().expect("temporary folder");
    let t = Instant::now();
    let (files, bytes) = write_folder(dir.path(), mb);
    println!(
        "replay_folder: {files} transcripts of {CALLS} calls, {:.1} MB, written in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let mut prints = Vec::new();
    let mut best = [f64::INFINITY; 2];
    let mut cpu_at_best = [0.0; 2];
    let before = load_average();
    // Each pass is a fresh process, as `pcsim replay DIR` runs once per process; the thread counts
    // alternate so that load drifts touch both alike.
    for _ in 0..passes {
        for (i, threads) in [1usize, 2].into_iter().enumerate() {
            let (wall, cpu, print) = pass(threads, dir.path());
            if wall < best[i] {
                best[i] = wall;
                cpu_at_best[i] = cpu;
            }
            prints.push((threads, print));
        }
    }
    for (i, threads) in [1usize, 2].into_iter().enumerate() {
        let cpu = cpu_at_best[i];
        println!(
            "replay_folder: {threads} thread{}: best of {passes} passes (each `pcsim replay`, whole) {:.2} s wall ({cpu:.2} s CPU, {:.2} cores busy), {:.1} MB/s",
            if threads == 1 { "" } else { "s" },
            best[i],
            cpu / best[i],
            bytes as f64 / 1e6 / best[i],
        );
    }
    println!(
        "replay_folder: load average before {before}, after {}",
        load_average()
    );
    let first = &prints[0].1;
    assert!(
        prints.iter().all(|(_, p)| p == first),
        "1 and 2 threads disagree"
    );
    println!(
        "replay_folder: speed-up 2 threads / 1 thread: {:.2}x (same output on both)",
        best[0] / best[1]
    );
}
