//! Criterion bench of `explain` on a generated trace of about 100 MB: 30 conversations of 40 calls
//! each on 20 tools, every request re-sending its whole history (tool results of a few KB, as real
//! agents send them), Anthropic bodies with `cache_control` and usage. Throughput is reported in
//! bytes of trace.
//!
//! Two measures of the same work: wall time (what a user waits, on a machine of its own), and the
//! CPU time of the thread that explains (`CLOCK_THREAD_CPUTIME_ID`): "MB/s on one core" whatever
//! else the machine runs; on a shared machine wall time counts the time the thread waited for a core.
//! (A tool list seen for the first time may be counted on rayon's threads: once per list, once here.)
//!
//! `cargo bench --bench explain`. The file is left in `$TMPDIR/pcsim-explain-bench.jsonl` so the CLI
//! can be measured on it too: `/usr/bin/time -v target/release/pcsim explain
//! $TMPDIR/pcsim-explain-bench.jsonl --format json > /dev/null` (peak memory: "Maximum resident set
//! size").

use std::fmt::Write as _;
use std::path::PathBuf;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};

use pcsim::analysis::explain::{explain_reader, ExplainOptions};
use pcsim::model::catalog::Catalog;

/// Conversations in the trace.
const CONVERSATIONS: usize = 30;
/// Calls per conversation.
const CALLS: usize = 40;

fn tools() -> Vec<Value> {
    (0..20)
        .map(|i| {
            json!({"name": format!("tool_{i:02}"),
                   "description": format!("Does operation {i} on the workspace and returns what it found, with details."),
                   "input_schema": {"type": "object", "properties": {
                       "path": {"type": "string", "description": "A path in the workspace."},
                       "query": {"type": "string", "description": "What to look for."}},
                       "required": ["path"]}})
        })
        .collect()
}

/// One conversation's records, JSON Lines.
fn conversation(k: usize, out: &mut String) {
    let mut tools = tools();
    if let Some(t) = tools.last_mut() {
        t["cache_control"] = json!({"type": "ephemeral"});
    }
    let system =
        "You are a coding agent working in a repository. Follow the project's rules. ".repeat(40);
    let result = format!("fn main() {{ println!(\"line of a tool result {k}\"); }} // ").repeat(60);
    let mut messages: Vec<Value> = vec![
        json!({"role": "user", "content": [{"type": "text", "text": format!("Task {k}: fix the failing test.")}]}),
    ];
    let mut prompt = 0u64;
    for call in 0..CALLS {
        if call > 0 {
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Reading file {call}.")}, {"type": "tool_use", "id": format!("t{call}"), "name": "tool_01", "input": {"path": format!("src/f{call}.rs")}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{call}"), "content": format!("{call}: {result}")}]}));
        }
        let mut msgs = messages.clone();
        if let Some(part) = msgs
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|c| c.last_mut())
        {
            part["cache_control"] = json!({"type": "ephemeral"});
        }
        let total = 4_000 + 1_200 * call as u64;
        let (read, write) = if call == 0 {
            (0, total)
        } else {
            (prompt, total - prompt)
        };
        prompt = total;
        let secs = call * 15 + k;
        let rec = json!({
            "time": format!("2026-11-30T{:02}:{:02}:{:02}Z", 9 + secs / 3600, (secs / 60) % 60, secs % 60),
            "session": format!("conversation-{k}"),
            "url": "https://api.anthropic.com/v1/messages",
            "request": {"model": "claude-opus-4-8", "max_tokens": 4096, "tools": tools,
                        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                        "messages": msgs},
            "response": {"type": "message", "content": [{"type": "text", "text": "ok"}],
                         "usage": {"input_tokens": 0, "cache_creation_input_tokens": write,
                                   "cache_read_input_tokens": read, "output_tokens": 40}}
        });
        let _ = writeln!(out, "{rec}");
    }
}

/// Writes the trace once (kept between runs) and returns it with its size in bytes.
pub fn trace() -> (PathBuf, u64) {
    let path = std::env::temp_dir().join("pcsim-explain-bench.jsonl");
    if !path.exists() {
        let mut text = String::new();
        for k in 0..CONVERSATIONS {
            conversation(k, &mut text);
        }
        std::fs::write(&path, text).expect("bench trace");
    }
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    (path, bytes)
}

/// CPU time of the calling thread, in nanoseconds (Linux and other Unixes).
struct ThreadCpuTime;

fn thread_cpu_ns() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for clock_gettime to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

impl Measurement for ThreadCpuTime {
    type Intermediate = f64;
    type Value = f64;
    fn start(&self) -> f64 {
        thread_cpu_ns()
    }
    fn end(&self, start: f64) -> f64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, as wall time's: the same units and throughput per second.
        WallTime.formatter()
    }
}

fn explain_once(catalog: &Catalog, path: &std::path::Path) -> f64 {
    let file = std::fs::File::open(path).expect("bench trace");
    let e = explain_reader(catalog, file, "bench", ExplainOptions::default()).expect("explain");
    assert_eq!(e.calls.len(), CONVERSATIONS * CALLS);
    e.billed_usd
}

fn bench(c: &mut Criterion) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let (path, bytes) = trace();
    let mut g = c.benchmark_group("explain_trace");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("30_conversations_of_40_calls", |b| {
        b.iter(|| std::hint::black_box(explain_once(&catalog, &path)))
    });
    g.finish();
}

fn bench_cpu(c: &mut Criterion<ThreadCpuTime>) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let (path, bytes) = trace();
    let mut g = c.benchmark_group("explain_trace_thread_cpu");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("30_conversations_of_40_calls", |b| {
        b.iter(|| std::hint::black_box(explain_once(&catalog, &path)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = bench_cpu
}
criterion_main!(benches, cpu);
