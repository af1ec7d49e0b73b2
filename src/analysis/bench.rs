//! Replay's throughput for `pcsim bench`: generated Claude Code transcripts, and logs in the form
//! `pcsim run --usage-log` writes, parsed and replayed on one model, one file after another on one
//! thread (as `pcsim replay DIR` reads each file), timed in CPU and wall seconds, each beside a typed
//! `serde_json` parse of the same lines.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::analysis::replay::{replay, ReplayOptions};
use crate::error::Result;
use crate::input::usagelog::parse_log;
use crate::model::catalog::Catalog;
use crate::model::strategy::Strategy;
use crate::sim::bench::{timed, ReplaySpeed};

/// Transcripts per pass (about 175 KB each).
const FILES: usize = 24;
/// Calls per transcript.
pub const CALLS: usize = 40;
/// The model replayed on (the transcripts' own).
const MODEL: &str = "claude-opus-4.8";

/// One generated Claude Code transcript, number `file`, dated November `day_of_month` 2026: per call
/// a user line carrying a tool result of a few KB, as real ones do, and two assistant lines (one
/// per content block) repeating the response's usage. `pcsim bench` and the replay benches
/// (benches/replay.rs, benches/replay_folder.rs) read these. Not part of the documented API.
pub fn claude_code_transcript(file: usize, day_of_month: usize) -> String {
    let session = format!("5e55{file:04}-0000-4000-8000-{file:012}");
    let mut out = String::new();
    let mut prompt = 12_000u64 + (file as u64 % 7) * 500;
    let filler = "fn main() { println!(\\\"line of a tool result\\\"); } // ".repeat(60);
    for call in 0..CALLS {
        let secs = call * 20 + (file % 5);
        let ts = format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.000Z",
            day_of_month,
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
        for (block, out_tok) in [(0, 12), (1, 180 + call as u64)] {
            let _ = writeln!(
                out,
                r#"{{"isSidechain":false,"userType":"external","cwd":"/home/dev/p{}","sessionId":"{session}","version":"2.0.31","type":"assistant","uuid":"a-{file}-{call}-{block}","requestId":"req_{file}_{call}","timestamp":"{ts}","message":{{"id":"msg_{file}_{call}","type":"message","role":"assistant","model":"claude-opus-4-8-20260501","content":[{{"type":"text","text":"Working on it."}}],"usage":{{"input_tokens":4,"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"cache_creation":{{"ephemeral_5m_input_tokens":{write},"ephemeral_1h_input_tokens":0}},"output_tokens":{out_tok},"service_tier":"standard"}}}}}}"#,
                file % 20
            );
        }
        prompt = if call == 0 { prompt } else { prompt + grow + 4 };
    }
    out
}

/// A transcript line as a typed reader would take it: the fields replay reads, the rest skipped.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    timestamp: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(rename = "requestId")]
    request_id: Option<String>,
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

/// The typed parse of one transcript: every line into a struct of the fields replay reads; the
/// sum of the usage read (so that nothing is optimised away) and the assistant lines.
pub fn typed_parse(text: &str) -> (u64, u64) {
    let (mut tokens, mut assistant) = (0u64, 0u64);
    for line in text.lines() {
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            continue;
        };
        let keys = [&l.timestamp, &l.session_id, &l.request_id]
            .iter()
            .map(|k| k.as_ref().map_or(0, String::len) as u64)
            .sum::<u64>();
        if let Some(m) = l.message {
            let named = m.id.map_or(0, |x| x.len()) + m.model.map_or(0, |x| x.len());
            if let Some(u) = m.usage {
                tokens += u.input_tokens
                    + u.cache_creation_input_tokens
                    + u.cache_read_input_tokens
                    + u.output_tokens;
            }
            tokens += named as u64;
        }
        tokens += keys;
        assistant += u64::from(l.kind == "assistant");
    }
    (tokens, assistant)
}

/// pcsim's own usage log (`run --usage-log`): [`SESSIONS`] sessions of [`CALLS`] calls each, one
/// record per call in the gateway form the command writes (`sent_at`, `session_id`, `model`, the
/// cache buckets under Anthropic's `usage` keys), calls of the sessions interleaved in time.
/// `pcsim bench` writes [`CALLS`] calls per session; benches/replay.rs more.
pub fn compact_log(file: usize, calls: usize) -> String {
    let mut out = String::new();
    let mut prompts = [9_000u64 + (file as u64 % 5) * 700; SESSIONS];
    for call in 0..calls {
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
                r#"{{"sent_at":"{ts}","session_id":"session-{s}","model":"{MODEL}","usage":{{"input_tokens":{uncached},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":{}}}}}"#,
                150 + (call * 7) % 400
            );
            if call > 0 {
                *prompt += grow;
            }
        }
    }
    out
}

/// Sessions per compact log.
pub const SESSIONS: usize = 10;

/// A line of pcsim's own log as a typed reader would take it.
#[derive(Deserialize)]
struct CompactLine {
    sent_at: Option<String>,
    session_id: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
}

/// The typed parse of one compact log: every line into a struct of the fields replay reads; the
/// sum of what was read.
pub fn typed_parse_compact(text: &str) -> u64 {
    let mut sum = 0u64;
    for line in text.lines() {
        let Ok(l) = serde_json::from_str::<CompactLine>(line) else {
            continue;
        };
        sum += [&l.sent_at, &l.session_id, &l.model]
            .iter()
            .map(|k| k.as_ref().map_or(0, String::len) as u64)
            .sum::<u64>();
        if let Some(u) = l.usage {
            sum += u.input_tokens
                + u.cache_creation_input_tokens
                + u.cache_read_input_tokens
                + u.output_tokens;
        }
    }
    sum
}

/// Replays the generated transcripts on [`MODEL`] with its `cached` strategy, pass after pass for at
/// least `min_seconds` (one pass at least), then parses them typed for half as long.
pub(crate) fn replay_speed(catalog: &Catalog, min_seconds: f64) -> Result<ReplaySpeed> {
    let files: Vec<(String, String)> = (0..FILES)
        .map(|f| (format!("bench-{f:02}.jsonl"), claude_code_transcript(f, 30)))
        .collect();
    measure(
        catalog,
        min_seconds,
        &files,
        |t| typed_parse(t).0,
        format!("{FILES} generated Claude Code transcripts of {CALLS} calls, replayed on {MODEL} (cached)"),
    )
}

/// The same on logs as `pcsim run --usage-log` writes them (pcsim's own compact records).
pub(crate) fn compact_replay_speed(catalog: &Catalog, min_seconds: f64) -> Result<ReplaySpeed> {
    let files: Vec<(String, String)> = (0..FILES)
        .map(|f| (format!("usage-{f:02}.jsonl"), compact_log(f, CALLS)))
        .collect();
    measure(
        catalog,
        min_seconds,
        &files,
        typed_parse_compact,
        format!("{FILES} generated logs of pcsim's own form (run --usage-log), {SESSIONS} sessions of {CALLS} calls each, replayed on {MODEL} (cached)"),
    )
}

/// Replays `files` pass after pass for at least `min_seconds` (one pass at least), then parses them
/// with `typed` for half as long.
fn measure(
    catalog: &Catalog,
    min_seconds: f64,
    files: &[(String, String)],
    typed: fn(&str) -> u64,
    input: String,
) -> Result<ReplaySpeed> {
    let bytes: u64 = files.iter().map(|(_, t)| t.len() as u64).sum();
    let model = catalog.model(MODEL)?;
    let strategy = Strategy::parse("cached")?;
    let opts = ReplayOptions::default();
    let pass = || -> Result<(u64, f64)> {
        let (mut calls, mut dollars) = (0u64, 0.0);
        for (name, text) in files {
            let log = parse_log(text, name)?;
            let r = replay(&log, model, &strategy, &opts)?;
            calls += r.calls.len() as u64;
            dollars += r.predicted.cost_usd;
        }
        Ok((calls, dollars))
    };
    let min = min_seconds.max(0.0);
    let (mut passes, mut cpu, mut wall, mut calls) = (0u64, Some(0.0), 0.0, 0);
    while passes == 0 || wall < min {
        let (r, c, w) = timed(pass);
        let (n, dollars) = r?;
        std::hint::black_box(dollars);
        calls = n;
        passes += 1;
        cpu = cpu.zip(c).map(|(a, b)| a + b);
        wall += w;
    }
    let (mut typed_passes, mut typed_cpu, mut typed_wall) = (0u64, Some(0.0), 0.0);
    while typed_passes == 0 || typed_wall < min / 2.0 {
        let (r, c, w) = timed(|| files.iter().map(|(_, t)| typed(t)).sum::<u64>());
        std::hint::black_box(r);
        typed_passes += 1;
        typed_cpu = typed_cpu.zip(c).map(|(a, b)| a + b);
        typed_wall += w;
    }
    let mb = |passes: u64, secs: f64| passes as f64 * bytes as f64 / 1e6 / secs.max(1e-9);
    let per_pass = |secs: Option<f64>, wall: f64, passes: u64| secs.unwrap_or(wall) / passes as f64;
    Ok(ReplaySpeed {
        input,
        files: files.len(),
        bytes,
        calls,
        passes,
        mb_per_cpu_second: cpu.filter(|&c| c > 0.0).map(|c| mb(passes, c)),
        mb_per_second: mb(passes, wall),
        typed_parse_mb_per_cpu_second: typed_cpu.filter(|&c| c > 0.0).map(|c| mb(typed_passes, c)),
        typed_parse_mb_per_second: mb(typed_passes, typed_wall),
        times_typed_parse: per_pass(cpu, wall, passes)
            / per_pass(typed_cpu, typed_wall, typed_passes).max(1e-12),
    })
}
