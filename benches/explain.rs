//! Criterion bench of `explain` on a generated trace of about 100 MB: 30 conversations of 40 calls
//! each on 20 tools, every request re-sending its whole history (tool results of a few KB, as real
//! agents send them), Anthropic bodies with `cache_control` and usage. Throughput is reported in
//! bytes of trace.
//!
//! The same calls are written twice: as pcsim's JSON Lines (`explain_trace*`) and as a HAR 1.2
//! archive (`explain_har*`: each call an entry as a proxy saves it, pretty-printed, the bodies as
//! escaped JSON strings, the conversation named by Claude Code's `metadata.user_id`).
//!
//! Two measures of the same work: wall time (what a user waits, on a machine of its own), and the
//! CPU time of the thread that explains (`CLOCK_THREAD_CPUTIME_ID`): "MB/s on one core" whatever
//! else the machine runs; on a shared machine wall time counts the time the thread waited for a core.
//! (A tool list seen for the first time may be counted on rayon's threads: once per list, once here.)
//!
//! `cargo bench --bench explain`. The files are left in `$TMPDIR/pcsim-explain-bench.jsonl` and
//! `$TMPDIR/pcsim-explain-bench.har` so the CLI can be measured on them too: `/usr/bin/time -v
//! target/release/pcsim explain $TMPDIR/pcsim-explain-bench.har --format json > /dev/null` (peak
//! memory: "Maximum resident set size"). `PCSIM_BENCH_HAR_COPIES=N` writes the HAR with N copies of
//! the 30 conversations (each copy its own conversations, a day later), for a large archive
//! (`PCSIM_BENCH_HAR_COPIES=10` is about 1 GB; the file is rewritten when N changes).

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

/// One conversation's records (`time`, `session`, `url`, `request`, `response`), its calls
/// starting `day` days after the first.
fn conversation(k: usize, day: usize) -> Vec<Value> {
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
    let mut records = Vec::with_capacity(CALLS);
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
        records.push(json!({
            "time": format!("2026-{}T{:02}:{:02}:{:02}Z", date(day), 9 + secs / 3600, (secs / 60) % 60, secs % 60),
            "session": format!("conversation-{k}"),
            "url": "https://api.anthropic.com/v1/messages",
            "request": {"model": "claude-opus-4-8", "max_tokens": 4096, "tools": tools,
                        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                        "messages": msgs},
            "response": {"type": "message", "content": [{"type": "text", "text": "ok"}],
                         "usage": {"input_tokens": 0, "cache_creation_input_tokens": write,
                                   "cache_read_input_tokens": read, "output_tokens": 40}}
        }));
    }
    records
}

/// `MM-DD` of the trace's day `day` (day 0 is 2026-11-30; up to 31 days).
fn date(day: usize) -> String {
    if day == 0 {
        "11-30".to_string()
    } else {
        format!("12-{day:02}")
    }
}

/// One call as a HAR entry, as a proxy saves it: the request body as `postData.text`, the
/// response as `content.text`, the conversation in `metadata.user_id` (HAR records no session).
fn har_entry(rec: &Value) -> Value {
    let mut request = rec["request"].clone();
    request["metadata"] = json!({"user_id": format!("user_bench_account_0_session_{}", rec["session"].as_str().unwrap_or(""))});
    let request_text = request.to_string();
    let response_text = rec["response"].to_string();
    let header = |name: &str, value: &str| json!({"name": name, "value": value});
    json!({
        "startedDateTime": rec["time"], "time": 2310.5,
        "request": {"method": "POST", "url": rec["url"], "httpVersion": "HTTP/2", "cookies": [],
                    "headers": [header("content-type", "application/json"), header("x-api-key", "[REDACTED]"),
                                header("anthropic-version", "2023-06-01")],
                    "queryString": [], "headersSize": -1, "bodySize": request_text.len(),
                    "postData": {"mimeType": "application/json", "text": request_text}},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/2", "cookies": [],
                     "headers": [header("content-type", "application/json")],
                     "content": {"size": response_text.len(), "mimeType": "application/json", "text": response_text},
                     "redirectURL": "", "headersSize": -1, "bodySize": response_text.len()},
        "cache": {}, "timings": {"send": 0.2, "wait": 2100.1, "receive": 210.2}
    })
}

/// Writes the trace once (kept between runs) and returns it with its size in bytes.
pub fn trace() -> (PathBuf, u64) {
    let path = std::env::temp_dir().join("pcsim-explain-bench.jsonl");
    if !path.exists() {
        let mut text = String::new();
        for k in 0..CONVERSATIONS {
            for rec in conversation(k, 0) {
                let _ = writeln!(text, "{rec}");
            }
        }
        std::fs::write(&path, text).expect("bench trace");
    }
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    (path, bytes)
}

/// Copies of the 30 conversations in the HAR (`PCSIM_BENCH_HAR_COPIES`, default 1).
fn har_copies() -> usize {
    std::env::var("PCSIM_BENCH_HAR_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| (1..=31).contains(&n))
        .unwrap_or(1)
}

/// Writes the same calls as a HAR 1.2 archive, pretty-printed as proxies save them (kept between
/// runs, rewritten when the number of copies changes), and returns it with its size in bytes.
pub fn har_trace(copies: usize) -> (PathBuf, u64) {
    use std::io::Write as _;
    let path = std::env::temp_dir().join("pcsim-explain-bench.har");
    let stamp = std::env::temp_dir().join("pcsim-explain-bench.har.copies");
    let written = std::fs::read_to_string(&stamp).ok();
    if !path.exists() || written.as_deref() != Some(copies.to_string().as_str()) {
        let file = std::fs::File::create(&path).expect("bench HAR");
        let mut out = std::io::BufWriter::new(file);
        out.write_all(b"{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": {\"name\": \"pcsim bench\", \"version\": \"1\"},\n    \"pages\": [],\n    \"entries\": [")
            .expect("bench HAR");
        let mut first = true;
        for copy in 0..copies {
            for k in 0..CONVERSATIONS {
                for rec in conversation(k + copy * CONVERSATIONS, copy) {
                    let text = serde_json::to_string_pretty(&har_entry(&rec)).expect("entry");
                    let sep = if first { "\n" } else { ",\n" };
                    first = false;
                    write!(out, "{sep}{text}").expect("bench HAR");
                }
            }
        }
        out.write_all(b"\n    ]\n  }\n}\n").expect("bench HAR");
        out.flush().expect("bench HAR");
        std::fs::write(&stamp, copies.to_string()).expect("bench HAR");
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

fn explain_once(catalog: &Catalog, path: &std::path::Path, copies: usize) -> f64 {
    let file = std::fs::File::open(path).expect("bench trace");
    let e = explain_reader(catalog, file, "bench", ExplainOptions::default()).expect("explain");
    assert_eq!(e.calls.len(), copies * CONVERSATIONS * CALLS);
    assert_eq!(e.skipped_count, 0);
    e.billed_usd
}

/// The JSONL trace and the HAR of the same calls, each timed under `measure`.
fn bench_both<M: Measurement>(c: &mut Criterion<M>, suffix: &str) {
    let catalog = Catalog::embedded().expect("embedded catalog");
    let copies = har_copies();
    for (group, (path, bytes), n) in [
        ("explain_trace", trace(), 1),
        ("explain_har", har_trace(copies), copies),
    ] {
        let mut g = c.benchmark_group(format!("{group}{suffix}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes));
        let name = format!("{}_conversations_of_{CALLS}_calls", n * CONVERSATIONS);
        g.bench_function(name, |b| {
            b.iter(|| std::hint::black_box(explain_once(&catalog, &path, n)))
        });
        g.finish();
    }
}

fn bench(c: &mut Criterion) {
    bench_both(c, "");
}

fn bench_cpu(c: &mut Criterion<ThreadCpuTime>) {
    bench_both(c, "_thread_cpu");
}

criterion_group!(benches, bench);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = bench_cpu
}
criterion_main!(benches, cpu);
