//! Wall throughput of `replay_logs` (what `pcsim replay DIR` runs) on a folder of generated Claude
//! Code transcripts, on one rayon thread and on two (issue 30: files replayed in parallel).
//!
//!     cargo bench --bench replay_folder                     # 1000 MB folder
//!     PCSIM_BENCH_FOLDER_MB=200 cargo bench --bench replay_folder
//!
//! The folder is written into a temporary directory at run time (never committed) and removed after.
//! Each thread count replays it `PCSIM_BENCH_PASSES` times (default 2; the best pass counts); the
//! two outcomes must agree to the byte (checked here, as the integration test checks the command).
//! The load average before and after is printed beside the figures: on a shared machine a speed-up
//! below the number of threads can be other people's work.

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
    let (mut files, bytes) = write_folder(dir.path(), mb);
    files.sort();
    println!(
        "replay_folder: {} transcripts of {CALLS} calls, {:.1} MB, written in {:.1} s",
        files.len(),
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let catalog = Catalog::embedded().expect("embedded catalog");
    let request = ReplayRequest::new(files);
    let mut prints = Vec::new();
    let mut best = Vec::new();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("rayon pool");
        let before = load_average();
        let (mut secs, mut cpu, mut waited) = (f64::INFINITY, None, None);
        let mut print = String::new();
        for _ in 0..passes {
            let (t, c, q) = (Instant::now(), cpu_seconds(), runqueue_wait_seconds());
            let o = pool
                .install(|| replay_logs(&catalog, &request))
                .expect("replay of the bench folder");
            let wall = t.elapsed().as_secs_f64();
            if wall < secs {
                secs = wall;
                cpu = c.zip(cpu_seconds()).map(|(a, b)| b - a);
                waited = q.zip(runqueue_wait_seconds()).map(|(a, b)| b - a);
            }
            print = fingerprint(&o);
        }
        // CPU seconds over wall seconds: the cores the pass actually got (on a busy machine, two
        // threads may get little more than one core between them).
        let cores = cpu.map_or("unknown".into(), |c| {
            format!("{c:.2} s CPU, {:.2} cores busy", c / secs)
        });
        let waited = waited.map_or("unknown".into(), |w| format!("{w:.2} s"));
        println!(
            "replay_folder: {threads} thread{}: best of {passes} passes {secs:.2} s wall ({cores}; threads waited {waited} for a core), {:.1} MB/s (load average before {before}, after {})",
            if threads == 1 { "" } else { "s" },
            bytes as f64 / 1e6 / secs,
            load_average()
        );
        prints.push(print);
        best.push(secs);
    }
    assert_eq!(prints[0], prints[1], "1 and 2 threads disagree");
    println!(
        "replay_folder: speed-up 2 threads / 1 thread: {:.2}x (same outcome on both)",
        best[0] / best[1]
    );
}
