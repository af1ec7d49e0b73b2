//! Criterion bench of `replay` over a folder of 500 generated Claude Code transcripts (about 100 MB):
//! each file read line by line, its calls rebuilt into conversations and replayed on one model, as
//! `pcsim replay DIR` does; beside it, a typed `serde_json` parse of the same files (structs with
//! the fields replay reads, the rest skipped: the floor of a JSON Lines reader). The same pair on
//! logs of pcsim's own compact form (`run --usage-log`). Throughput is reported in bytes of log;
//! replay's time over the typed parse's is the figure issue 30 asks to keep within 2x.
//!
//! `cargo bench --bench replay`. The folder is left in `$TMPDIR/pcsim-replay-bench` so the CLI can be
//! measured on it too: `/usr/bin/time -v target/release/pcsim replay $TMPDIR/pcsim-replay-bench
//! --model claude-opus-4.8 --format json > /dev/null` (peak memory: "Maximum resident set size").

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;

use pcsim::analysis::bench::claude_code_transcript;
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

/// A transcript or compact-log line as a typed reader takes it: the fields replay reads.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    sent_at: Option<String>,
    #[serde(rename = "sessionId")]
    session: Option<String>,
    session_id: Option<String>,
    #[serde(rename = "requestId")]
    request_id: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// The typed parse of one file: the sum of what was read (so nothing is optimised away).
fn typed_parse(text: &str) -> u64 {
    let mut sum = 0u64;
    let len = |s: &Option<String>| s.as_ref().map_or(0, String::len) as u64;
    let tokens = |u: &Usage| {
        u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens + u.output_tokens
    };
    for line in text.lines() {
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            continue;
        };
        sum += len(&l.kind)
            + len(&l.timestamp)
            + len(&l.sent_at)
            + len(&l.session)
            + len(&l.session_id)
            + len(&l.request_id)
            + len(&l.model)
            + l.usage.as_ref().map_or(0, tokens);
        if let Some(m) = l.message {
            sum += len(&m.id) + len(&m.model) + m.usage.as_ref().map_or(0, tokens);
        }
    }
    sum
}

/// pcsim's own usage log (`run --usage-log`): 10 sessions of 400 calls, interleaved in time, one
/// record per call in the gateway form the command writes.
fn compact_log(file: usize) -> String {
    let mut out = String::new();
    let mut prompts = [9_000u64 + (file as u64 % 5) * 700; 10];
    for call in 0..400usize {
        for (s, prompt) in prompts.iter_mut().enumerate() {
            let ms = (call * 45_000 + s * 1_700 + file * 13) as u64;
            let ts = format!(
                "2026-01-01T{:02}:{:02}:{:02}.{:03}Z",
                ms / 3_600_000,
                (ms / 60_000) % 60,
                (ms / 1000) % 60,
                ms % 1000
            );
            let grow = 300 + (call as u64 * 53 + s as u64 * 11) % 700;
            let (uncached, write, read) = if call == 0 {
                (*prompt, 0, 0)
            } else {
                (0, grow, *prompt)
            };
            let _ = writeln!(
                out,
                r#"{{"sent_at":"{ts}","session_id":"session-{s}","model":"claude-opus-4.8","usage":{{"input_tokens":{uncached},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":{}}}}}"#,
                150 + (call * 7) % 400
            );
            if call > 0 {
                *prompt += grow;
            }
        }
    }
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
                total += typed_parse(&text);
            }
            std::hint::black_box(total)
        })
    });
    g.finish();
    // pcsim's own log, in memory: replay against the typed parse of the same text.
    let logs: Vec<(String, String)> = (0..24)
        .map(|f| (format!("usage-{f:02}.jsonl"), compact_log(f)))
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
        b.iter(|| std::hint::black_box(logs.iter().map(|(_, t)| typed_parse(t)).sum::<u64>()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
