//! Criterion bench of `replay` over a folder of 500 generated Claude Code transcripts (about 100 MB):
//! each file read line by line, its calls rebuilt into conversations and replayed on one model, as
//! `pcsim replay DIR` does; beside it, a typed `serde_json` parse of the same files (structs with
//! the fields replay reads, the rest skipped: the floor of a JSON Lines reader). The same pair on
//! logs of pcsim's own compact form (`run --usage-log`). Throughput is reported in bytes of log;
//! replay's time over the typed parse's is the figure issue 30 asks to keep within 2x. The logs and
//! the typed parses are `pcsim bench`'s own (`pcsim::analysis::bench`), on more files.
//!
//! `cargo bench --bench replay`. The folder is left in `$TMPDIR/pcsim-replay-bench` so the CLI can be
//! measured on it too: `/usr/bin/time -v target/release/pcsim replay $TMPDIR/pcsim-replay-bench
//! --model claude-opus-4.8 --format json > /dev/null` (peak memory: "Maximum resident set size").

/// The `pcsim` program's allocator (src/main.rs), so the bench times replay as the program runs it.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use pcsim::analysis::bench::{
    claude_code_transcript, compact_log, typed_parse, typed_parse_compact,
};
use pcsim::analysis::replay::{replay, ReplayOptions};
use pcsim::input::usagelog::{load_log, parse_log};
use pcsim::model::catalog::Catalog;
use pcsim::model::strategy::Strategy;

/// Files in the folder.
pub const FILES: usize = 500;

/// Writes the folder once (kept between runs) and returns it with its size in bytes.
pub fn folder() -> (PathBuf, u64) {
    let dir = std::env::temp_dir().join("pcsim-replay-bench");
    let marker = dir.join(format!("complete-{FILES}"));
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        for f in 0..FILES {
            let sub = dir.join(format!("project-{:02}", f % 20));
            std::fs::create_dir_all(&sub).expect("bench folder");
            std::fs::write(
                sub.join(format!("session-{f:04}.jsonl")),
                claude_code_transcript(f, 30),
            )
            .expect("bench file");
        }
        std::fs::write(&marker, b"").expect("marker");
    }
    let bytes = walk(&dir)
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    (dir, bytes)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("bench folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().and_then(|x| x.to_str()) == Some("jsonl") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn bench(c: &mut Criterion) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let model = catalog.model("claude-opus-4.8").expect("model");
    let strategy = Strategy::parse("cached").expect("strategy");
    let (dir, bytes) = folder();
    let files = walk(&dir);
    let mut g = c.benchmark_group("replay_folder");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("500_claude_code_transcripts", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for f in &files {
                let log = load_log(f).expect("generated log reads");
                let r = replay(&log, model, &strategy, &ReplayOptions::default()).expect("replay");
                total += r.predicted.cost_usd;
            }
            std::hint::black_box(total)
        })
    });
    g.bench_function("500_claude_code_transcripts_typed_parse", |b| {
        b.iter(|| {
            let mut total = 0u64;
            for f in &files {
                let text = std::fs::read_to_string(f).expect("generated log reads");
                total += typed_parse(&text).0;
            }
            std::hint::black_box(total)
        })
    });
    g.finish();
    // pcsim's own log, in memory: replay against the typed parse of the same text.
    let logs: Vec<(String, String)> = (0..24)
        .map(|f| (format!("usage-{f:02}.jsonl"), compact_log(f, 400)))
        .collect();
    let mut g = c.benchmark_group("replay_compact_log");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(
        logs.iter().map(|(_, t)| t.len() as u64).sum(),
    ));
    g.bench_function("24_logs_of_4000_calls", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for (name, text) in &logs {
                let log = parse_log(text, name).expect("generated log reads");
                let r = replay(&log, model, &strategy, &ReplayOptions::default()).expect("replay");
                total += r.predicted.cost_usd;
            }
            std::hint::black_box(total)
        })
    });
    g.bench_function("24_logs_of_4000_calls_typed_parse", |b| {
        b.iter(|| {
            std::hint::black_box(
                logs.iter()
                    .map(|(_, t)| typed_parse_compact(t))
                    .sum::<u64>(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
