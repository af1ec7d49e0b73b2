//! Criterion bench of `replay` over a folder of 500 generated Claude Code transcripts (about 100 MB):
//! each file read line by line, its calls rebuilt into conversations and replayed on one model, as
//! `pcsim replay DIR` does. Throughput is reported in bytes of log.
//!
//! `cargo bench --bench replay`. The folder is left in `$TMPDIR/pcsim-replay-bench` so the CLI can be
//! measured on it too: `/usr/bin/time -v target/release/pcsim replay $TMPDIR/pcsim-replay-bench
//! --model claude-opus-4.8 --format json > /dev/null` (peak memory: "Maximum resident set size").

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use pcsim::analysis::replay::{replay, ReplayOptions};
use pcsim::input::usagelog::load_log;
use pcsim::model::catalog::Catalog;
use pcsim::model::strategy::Strategy;

/// Files in the folder.
pub const FILES: usize = 500;
/// Calls per transcript.
const CALLS: usize = 40;

/// One transcript: per call a user line carrying a tool result (a few KB of text, as real ones do)
/// and two assistant lines (one per content block) repeating the response's usage.
fn transcript(file: usize) -> String {
    let session = format!("5e55{file:04}-0000-4000-8000-{file:012}");
    let mut out = String::new();
    let mut prompt = 12_000u64 + (file as u64 % 7) * 500;
    let filler = "fn main() { println!(\"line of a tool result\"); } // ".repeat(60);
    for call in 0..CALLS {
        let secs = call * 20 + (file % 5);
        let ts = format!(
            "2026-11-30T{:02}:{:02}:{:02}.000Z",
            9 + secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
        let _ = writeln!(
            out,
            r#"{{"isSidechain":false,"userType":"external","cwd":"/home/dev/p{}","sessionId":"{session}","version":"2.0.31","type":"user","uuid":"u-{file}-{call}","timestamp":"{ts}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{call}","content":"{filler}"}}]}}}}"#,
            file % 20
        );
        let grow = 600 + (call as u64 * 37) % 900;
        let (write, read) = if call == 0 {
            (prompt - 4, 0)
        } else {
            (grow, prompt)
        };
        let total = if call == 0 { prompt } else { prompt + grow + 4 };
        for (block, out_tok) in [(0, 12), (1, 180 + call as u64)] {
            let _ = writeln!(
                out,
                r#"{{"isSidechain":false,"userType":"external","cwd":"/home/dev/p{}","sessionId":"{session}","version":"2.0.31","type":"assistant","uuid":"a-{file}-{call}-{block}","requestId":"req_{file}_{call}","timestamp":"{ts}","message":{{"id":"msg_{file}_{call}","type":"message","role":"assistant","model":"claude-opus-4-8-20260501","content":[{{"type":"text","text":"Working on it."}}],"usage":{{"input_tokens":4,"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"cache_creation":{{"ephemeral_5m_input_tokens":{write},"ephemeral_1h_input_tokens":0}},"output_tokens":{out_tok},"service_tier":"standard"}}}}}}"#,
                file % 20
            );
        }
        prompt = total;
    }
    out
}

/// Writes the folder once (kept between runs) and returns it with its size in bytes.
pub fn folder() -> (PathBuf, u64) {
    let dir = std::env::temp_dir().join("pcsim-replay-bench");
    let marker = dir.join(format!("complete-{FILES}"));
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        for f in 0..FILES {
            let sub = dir.join(format!("project-{:02}", f % 20));
            std::fs::create_dir_all(&sub).expect("bench folder");
            std::fs::write(sub.join(format!("session-{f:04}.jsonl")), transcript(f))
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
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
