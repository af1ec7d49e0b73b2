//! Wall throughput of `replay_logs` (what `pcsim replay DIR` runs) on a folder of generated Claude
//! Code transcripts, on one rayon thread and on two (issue 30: files replayed in parallel).
//!
//!     cargo bench --bench replay_folder                     # 1000 MB folder
//!     PCSIM_BENCH_FOLDER_MB=200 cargo bench --bench replay_folder
//!
//! The folder is written into a temporary directory at run time (never committed) and removed after.
//! Each thread count replays it `PCSIM_BENCH_PASSES` times (default 2; the best pass counts), each
//! pass in a fresh process (this binary run again as a child), the thread counts alternating; the
//! outcomes must all agree to the byte (checked here on a digest of their JSON, as the integration
//! test checks the command).
//! The load average before and after is printed beside the figures: on a shared machine a speed-up
//! below the number of threads can be other people's work.

/// The `pcsim` program's allocator (src/main.rs), so the bench times replay as the program runs it.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use pcsim::analysis::bench::{claude_code_transcript, CALLS};
use pcsim::analysis::replay_logs::{replay_logs, ReplayOutcome, ReplayRequest};
use pcsim::Catalog;

/// Writes transcripts into `dir` (in sub-folders of 100, as projects) until `mb` megabytes.
fn write_folder(dir: &Path, mb: u64) -> (Vec<PathBuf>, u64) {
    let (mut files, mut bytes) = (Vec::new(), 0u64);
    let mut f = 0;
    while bytes < mb * 1_000_000 {
        let sub = dir.join(format!("project-{:03}", f / 100));
        std::fs::create_dir_all(&sub).expect("bench folder");
        let path = sub.join(format!("session-{f:06}.jsonl"));
        let text = claude_code_transcript(f, 1 + f % 28);
        std::fs::write(&path, &text).expect("bench transcript");
        bytes += text.len() as u64;
        files.push(path);
        f += 1;
    }
    (files, bytes)
}

/// CPU seconds of this process so far (user + system, every thread), from /proc/self/stat; `None`
/// where there is no /proc.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses: utime and stime are
    // the 12th and 13th of them.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks / hz as f64)
}

/// Seconds the threads of this process have spent runnable but waiting for a core (summed over
/// its threads, from /proc/self/task/*/schedstat); `None` where the kernel does not say.
fn runqueue_wait_seconds() -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        ns += stat.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e9)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The totals that must not depend on the thread count (every figure the report shows comes from
/// these sums).
fn fingerprint(o: &ReplayOutcome) -> String {
    serde_json::to_string(&o.files).expect("files as JSON")
}

/// One pass in this process, as a child of the bench: `PCSIM_BENCH_CHILD=THREADS` with the folder's
/// files on standard input, one path per line; prints `wall cpu waited fingerprint` on one line.
fn child(threads: usize) {
    let files: Vec<std::path::PathBuf> = std::io::read_to_string(std::io::stdin())
        .expect("file list on stdin")
        .lines()
        .map(Into::into)
        .collect();
    let catalog = Catalog::embedded().expect("embedded catalog");
    let request = ReplayRequest::new(files);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool");
    let (t, c, q) = (Instant::now(), cpu_seconds(), runqueue_wait_seconds());
    let o = pool
        .install(|| replay_logs(&catalog, &request))
        .expect("replay of the bench folder");
    let wall = t.elapsed().as_secs_f64();
    let cpu = c.zip(cpu_seconds()).map_or(-1.0, |(a, b)| b - a);
    let waited = q.zip(runqueue_wait_seconds()).map_or(-1.0, |(a, b)| b - a);
    let print = fingerprint(&o);
    // A digest of the outcome, so the child prints one line.
    let digest = pcsim::base::hash::fnv1a(print.as_bytes());
    println!("{wall} {cpu} {waited} {digest:016x}");
}

/// Runs one pass in a fresh process (this bench binary as a child): wall, CPU and wait seconds and
/// the outcome's digest.
fn pass_in_a_fresh_process(threads: usize, list: &str) -> (f64, f64, f64, String) {
    use std::io::Write as _;
    let mut child = std::process::Command::new(std::env::current_exe().expect("bench binary"))
        .env("PCSIM_BENCH_CHILD", threads.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bench child");
    child
        .stdin
        .take()
        .expect("child stdin")
        .write_all(list.as_bytes())
        .expect("file list to the child");
    let out = child.wait_with_output().expect("bench child output");
    assert!(out.status.success(), "bench child failed");
    let line = String::from_utf8(out.stdout).expect("UTF-8");
    let f: Vec<&str> = line.split_whitespace().collect();
    let num = |i: usize| f[i].parse::<f64>().expect("a number");
    (num(0), num(1), num(2), f[3].to_string())
}

fn main() {
    if let Some(threads) = std::env::var("PCSIM_BENCH_CHILD")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return child(threads);
    }
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
    let (mut files, bytes) = write_folder(dir.path(), mb);
    files.sort();
    println!(
        "replay_folder: {} transcripts of {CALLS} calls, {:.1} MB, written in {:.1} s",
        files.len(),
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let list: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
    let mut prints = Vec::new();
    let mut best = [f64::INFINITY; 2];
    let mut at_best = [(0.0, 0.0); 2];
    let before = load_average();
    // Each pass in a fresh process, as `pcsim replay DIR` runs once per process (passes in one
    // long-lived process replay with a heap the previous passes left), the thread counts
    // alternating so that load drifts touch both alike.
    for _ in 0..passes {
        for (i, threads) in [1usize, 2].into_iter().enumerate() {
            let (wall, cpu, waited, print) = pass_in_a_fresh_process(threads, &list);
            if wall < best[i] {
                best[i] = wall;
                at_best[i] = (cpu, waited);
            }
            prints.push((threads, print));
        }
    }
    for (i, threads) in [1usize, 2].into_iter().enumerate() {
        let (cpu, waited) = at_best[i];
        println!(
            "replay_folder: {threads} thread{}: best of {passes} passes (each a fresh process) {:.2} s wall ({cpu:.2} s CPU, {:.2} cores busy; threads waited {waited:.2} s for a core), {:.1} MB/s",
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
        "replay_folder: speed-up 2 threads / 1 thread: {:.2}x (same outcome on both)",
        best[0] / best[1]
    );
}
