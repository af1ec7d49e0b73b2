//! Replay of real usage logs: read logged token buckets per call (Anthropic usage objects, OpenAI
//! Chat Completions and Responses usage, Claude Code session transcripts), rebuild the call sequence,
//! bill the logged buckets at pcsim's prices, re-simulate the same prompts with pcsim's caching rules,
//! and compare per call and in total.
//!
//! The rebuilt session is a growing conversation: each call's prompt extends the previous one by the
//! difference in prompt tokens; a prompt shorter than the previous one starts a new conversation
//! (compaction, `/clear`). An optional fixed prefix (`prefix_tokens`: tools plus system prompt) is
//! kept across such restarts and is where the `tools` and `system` breakpoints go.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::base::hash::{chain, fnv1a};
use crate::error::{read_text, Error, Result};
use crate::model::catalog::{CacheRules, Catalog, ModelSpec};
use crate::model::strategy::{seconds_to_ms, Strategy};
use crate::sim::billing::PriceSheet;
use crate::sim::engine::cache::CacheStore;
use crate::sim::engine::prompt::{Prompt, Segment};
use crate::sim::engine::{split_for_prompt, SimSetup};

/// One logged call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedCall {
    /// Where it came from: `line N` or `record N`.
    pub at: String,
    /// Which kind of usage record it was (`anthropic`, `openai-chat`, `openai-responses`,
    /// `claude-code`).
    pub format: &'static str,
    /// Model named by the record, if any.
    pub model: Option<String>,
    /// Start time in Unix seconds, if the record has one.
    pub unix_time: Option<f64>,
    /// Prompt tokens (uncached + written + read).
    pub prompt_tokens: u64,
    /// Tokens billed at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache with a 5-minute (or unspecified) lifetime.
    pub cache_write_5m_tokens: u64,
    /// Tokens written with a 1-hour lifetime.
    pub cache_write_1h_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// A parsed log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageLog {
    /// File it came from.
    pub origin: String,
    /// Calls in log order.
    pub calls: Vec<LoggedCall>,
    /// Fields of usage objects pcsim does not know, with how often they appeared (ignored).
    pub unknown_fields: BTreeMap<String, usize>,
    /// Records with no usage (user turns, summaries, tool results).
    pub records_without_usage: usize,
    /// Transcript lines that repeat an earlier response's usage (one line per content block).
    pub duplicates_merged: usize,
    /// Sub-agent (sidechain) calls left out: they run in their own conversation and cache.
    pub sidechain_skipped: usize,
    /// A final line that was cut off mid-write and was ignored.
    pub truncated_last_line: bool,
}

impl UsageLog {
    /// Total warnings worth telling the user about.
    pub fn unknown_field_count(&self) -> usize {
        self.unknown_fields.values().sum()
    }
}

/// Loads a log file.
pub fn load_log(path: &Path) -> Result<UsageLog> {
    parse_log(&read_text(path)?, &path.display().to_string())
}

/// Parses log text: one JSON document (an array of records, or one record) or JSON Lines.
pub fn parse_log(text: &str, origin: &str) -> Result<UsageLog> {
    let mut log = UsageLog {
        origin: origin.to_string(),
        ..Default::default()
    };
    let mut records: Vec<(String, Value)> = Vec::new();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(a)) => {
            records.extend(
                a.into_iter()
                    .enumerate()
                    .map(|(i, v)| (format!("record {}", i + 1), v)),
            );
        }
        Ok(v) => records.push(("record 1".into(), v)),
        Err(_) => {
            let lines: Vec<&str> = text.lines().collect();
            let n = lines.len();
            for (i, line) in lines.iter().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => records.push((format!("line {}", i + 1), v)),
                    // A log being written may end mid-line: that last record is dropped with a warning.
                    Err(_) if i + 1 == n && !text.ends_with('\n') => log.truncated_last_line = true,
                    Err(e) => {
                        return Err(Error::parse(
                            origin,
                            format!("line {}: not valid JSON: {e}", i + 1),
                        ))
                    }
                }
            }
        }
    }
    // Claude Code writes one transcript line per content block, each repeating the response's
    // usage; the response is one call, its usage the last line's (final output count).
    let mut by_response: HashMap<String, usize> = HashMap::new();
    for (at, rec) in records {
        let Some(obj) = rec.as_object() else {
            log.records_without_usage += 1;
            continue;
        };
        let Some((call, response_id, sidechain)) = read_record(obj, &at, origin, &mut log)? else {
            log.records_without_usage += 1;
            continue;
        };
        if sidechain {
            log.sidechain_skipped += 1;
            continue;
        }
        if let Some(id) = response_id {
            if let Some(&i) = by_response.get(&id) {
                let first = &log.calls[i];
                let merged = LoggedCall {
                    at: first.at.clone(),
                    unix_time: first.unix_time.or(call.unix_time),
                    ..call
                };
                log.calls[i] = merged;
                log.duplicates_merged += 1;
                continue;
            }
            by_response.insert(id, log.calls.len());
        }
        log.calls.push(call);
    }
    if log.calls.is_empty() {
        return Err(Error::invalid(
            origin,
            "usage",
            "no usage record found (expected Anthropic `usage` objects, OpenAI usage, or Claude Code transcript lines with message.usage)",
        ));
    }
    Ok(log)
}

type Record = (LoggedCall, Option<String>, bool);

fn read_record(
    obj: &Map<String, Value>,
    at: &str,
    origin: &str,
    log: &mut UsageLog,
) -> Result<Option<Record>> {
    // Claude Code transcript line (or any wrapper with message.usage).
    if let Some(msg) = obj.get("message").and_then(Value::as_object) {
        if let Some(usage) = msg.get("usage").and_then(Value::as_object) {
            let mut call = read_usage(usage, at, origin, "usage", log)?;
            call.format = "claude-code";
            call.model = msg.get("model").and_then(Value::as_str).map(str::to_string);
            call.unix_time = obj.get("timestamp").and_then(parse_time);
            let id = msg
                .get("id")
                .or_else(|| obj.get("requestId"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let side = obj.get("isSidechain").and_then(Value::as_bool) == Some(true);
            return Ok(Some((call, id, side)));
        }
        return Ok(None);
    }
    // An API response with a usage object.
    if let Some(usage) = obj.get("usage").and_then(Value::as_object) {
        let mut call = read_usage(usage, at, origin, "usage", log)?;
        call.model = obj.get("model").and_then(Value::as_str).map(str::to_string);
        call.unix_time = obj
            .get("created")
            .or_else(|| obj.get("created_at"))
            .or_else(|| obj.get("timestamp"))
            .and_then(parse_time);
        let id = obj.get("id").and_then(Value::as_str).map(str::to_string);
        return Ok(Some((call, id, false)));
    }
    // A bare usage object.
    if ["input_tokens", "prompt_tokens"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        let mut call = read_usage(obj, at, origin, "", log)?;
        call.unix_time = obj.get("timestamp").and_then(parse_time);
        call.model = obj.get("model").and_then(Value::as_str).map(str::to_string);
        return Ok(Some((call, None, false)));
    }
    Ok(None)
}

const ANTHROPIC_FIELDS: [&str; 7] = [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "service_tier",
    "server_tool_use",
];
const OPENAI_CHAT_FIELDS: [&str; 7] = [
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
];
const OPENAI_RESPONSES_FIELDS: [&str; 5] = [
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_details",
    "output_tokens_details",
];
/// Keys a bare usage record may carry besides the usage fields.
const RECORD_FIELDS: [&str; 2] = ["timestamp", "model"];

fn read_usage(
    u: &Map<String, Value>,
    at: &str,
    origin: &str,
    prefix: &str,
    log: &mut UsageLog,
) -> Result<LoggedCall> {
    let path = |k: &str| {
        if prefix.is_empty() {
            format!("{at}: {k}")
        } else {
            format!("{at}: {prefix}.{k}")
        }
    };
    let count = |m: &Map<String, Value>, k: &str, field: String| -> Result<u64> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| {
                Error::invalid(origin, field, format!("value {v} is not a token count"))
            }),
        }
    };
    let mut note_unknown = |m: &Map<String, Value>, known: &[&str], within: &str| {
        for k in m.keys() {
            let known_here = known.contains(&k.as_str())
                || (within.is_empty() && RECORD_FIELDS.contains(&k.as_str()));
            if !known_here {
                let name = if within.is_empty() {
                    k.clone()
                } else {
                    format!("{within}.{k}")
                };
                *log.unknown_fields.entry(name).or_default() += 1;
            }
        }
    };
    let mut call = LoggedCall {
        at: at.to_string(),
        format: "anthropic",
        model: None,
        unix_time: None,
        prompt_tokens: 0,
        uncached_tokens: 0,
        cache_write_5m_tokens: 0,
        cache_write_1h_tokens: 0,
        cache_read_tokens: 0,
        output_tokens: 0,
    };
    let details = |k: &str| u.get(k).and_then(Value::as_object);
    if u.contains_key("prompt_tokens") {
        call.format = "openai-chat";
        note_unknown(u, &OPENAI_CHAT_FIELDS, "");
        let prompt = count(u, "prompt_tokens", path("prompt_tokens"))?;
        let mut read = count(
            u,
            "prompt_cache_hit_tokens",
            path("prompt_cache_hit_tokens"),
        )?;
        let mut write = 0;
        if let Some(d) = details("prompt_tokens_details") {
            note_unknown(
                d,
                &["cached_tokens", "cache_write_tokens", "audio_tokens"],
                "prompt_tokens_details",
            );
            read = read.max(count(
                d,
                "cached_tokens",
                path("prompt_tokens_details.cached_tokens"),
            )?);
            write = count(
                d,
                "cache_write_tokens",
                path("prompt_tokens_details.cache_write_tokens"),
            )?;
        }
        if let Some(d) = details("completion_tokens_details") {
            note_unknown(
                d,
                &[
                    "reasoning_tokens",
                    "audio_tokens",
                    "accepted_prediction_tokens",
                    "rejected_prediction_tokens",
                ],
                "completion_tokens_details",
            );
        }
        if read + write > prompt {
            return Err(Error::invalid(
                origin,
                path("prompt_tokens"),
                format!("{prompt} prompt tokens but {read} cached and {write} written"),
            ));
        }
        call.prompt_tokens = prompt;
        call.cache_read_tokens = read;
        call.cache_write_5m_tokens = write;
        call.uncached_tokens = prompt - read - write;
        call.output_tokens = count(u, "completion_tokens", path("completion_tokens"))?;
    } else if u.contains_key("input_tokens_details") || u.contains_key("output_tokens_details") {
        call.format = "openai-responses";
        note_unknown(u, &OPENAI_RESPONSES_FIELDS, "");
        let prompt = count(u, "input_tokens", path("input_tokens"))?;
        let (mut read, mut write) = (0, 0);
        if let Some(d) = details("input_tokens_details") {
            note_unknown(
                d,
                &["cached_tokens", "cache_write_tokens"],
                "input_tokens_details",
            );
            read = count(
                d,
                "cached_tokens",
                path("input_tokens_details.cached_tokens"),
            )?;
            write = count(
                d,
                "cache_write_tokens",
                path("input_tokens_details.cache_write_tokens"),
            )?;
        }
        if let Some(d) = details("output_tokens_details") {
            note_unknown(d, &["reasoning_tokens"], "output_tokens_details");
        }
        if read + write > prompt {
            return Err(Error::invalid(
                origin,
                path("input_tokens"),
                format!("{prompt} input tokens but {read} cached and {write} written"),
            ));
        }
        call.prompt_tokens = prompt;
        call.cache_read_tokens = read;
        call.cache_write_5m_tokens = write;
        call.uncached_tokens = prompt - read - write;
        call.output_tokens = count(u, "output_tokens", path("output_tokens"))?;
    } else if u.contains_key("input_tokens") {
        note_unknown(u, &ANTHROPIC_FIELDS, "");
        let uncached = count(u, "input_tokens", path("input_tokens"))?;
        let written = count(
            u,
            "cache_creation_input_tokens",
            path("cache_creation_input_tokens"),
        )?;
        let read = count(
            u,
            "cache_read_input_tokens",
            path("cache_read_input_tokens"),
        )?;
        let (mut w5, mut w1h) = (written, 0);
        if let Some(cc) = details("cache_creation") {
            note_unknown(
                cc,
                &["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"],
                "cache_creation",
            );
            let a = count(
                cc,
                "ephemeral_5m_input_tokens",
                path("cache_creation.ephemeral_5m_input_tokens"),
            )?;
            let b = count(
                cc,
                "ephemeral_1h_input_tokens",
                path("cache_creation.ephemeral_1h_input_tokens"),
            )?;
            if a + b != written {
                return Err(Error::invalid(
                    origin,
                    path("cache_creation"),
                    format!("the 5m and 1h writes ({a} + {b}) do not add up to cache_creation_input_tokens ({written})"),
                ));
            }
            (w5, w1h) = (a, b);
        }
        call.uncached_tokens = uncached;
        call.cache_write_5m_tokens = w5;
        call.cache_write_1h_tokens = w1h;
        call.cache_read_tokens = read;
        call.prompt_tokens = uncached + written + read;
        call.output_tokens = count(u, "output_tokens", path("output_tokens"))?;
    } else {
        return Err(Error::invalid(
            origin,
            path("input_tokens"),
            "a usage object needs input_tokens (Anthropic, OpenAI Responses) or prompt_tokens (OpenAI Chat)",
        ));
    }
    Ok(call)
}

/// Unix seconds from a number (seconds, or milliseconds when very large) or an RFC 3339 string.
fn parse_time(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().map(|x| if x > 1e11 { x / 1000.0 } else { x }),
        Value::String(s) => parse_rfc3339(s),
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` to Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.len() < 19 || !s.is_char_boundary(19) {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if d.len() != 3 || !matches!(&rest[..1], "T" | "t" | " ") {
        return None;
    }
    let time = &rest[1..];
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => (time, ""),
    };
    let mut parts = clock.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let sec: f64 = parts.next()?.parse().ok()?;
    let offset = match zone {
        "" | "Z" | "z" => 0.0,
        z => {
            let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
            let (oh, om) = z[1..].split_once(':')?;
            sign * (oh.parse::<f64>().ok()? * 3600.0 + om.parse::<f64>().ok()? * 60.0)
        }
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, mo, day) = (d[0], d[1], d[2]);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) {
        return None;
    }
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + h * 3600.0 + m * 60.0 + sec - offset)
}

/// The model a log names, matched to the catalog: exact id, or an API name such as
/// `claude-opus-4-8-20260501` for `claude-opus-4.8` (dots and dashes alike, date suffix ignored).
pub fn match_model<'c>(catalog: &'c Catalog, log_model: &str) -> Option<&'c ModelSpec> {
    if let Ok(m) = catalog.model(log_model) {
        return Some(m);
    }
    let norm = |s: &str| s.to_ascii_lowercase().replace(['.', '_'], "-");
    let wanted = norm(log_model);
    catalog
        .models
        .iter()
        .filter(|m| {
            let id = norm(&m.id);
            wanted == id || wanted.starts_with(&format!("{id}-"))
        })
        .max_by_key(|m| m.id.len())
}

/// Token buckets and dollars of one call (or of a total).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Buckets {
    /// Tokens at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Dollars of the call, output included.
    pub cost_usd: f64,
}

impl Buckets {
    fn add(&mut self, o: &Buckets) {
        self.uncached_tokens += o.uncached_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cost_usd += o.cost_usd;
    }
}

/// One call, logged against predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallComparison {
    /// Call number, 1-based.
    pub call: usize,
    /// Seconds since the first call.
    pub time_s: f64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The log's buckets at this model's prices.
    pub logged: Buckets,
    /// pcsim's buckets and dollars for the same prompt.
    pub predicted: Buckets,
}

/// A replay on one (model, strategy).
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    /// Model id.
    pub model: String,
    /// Strategy name (resolved).
    pub strategy: String,
    /// Logged buckets at this model's prices, summed.
    pub logged: Buckets,
    /// Predicted buckets and dollars, summed.
    pub predicted: Buckets,
    /// Per call.
    pub calls: Vec<CallComparison>,
}

/// How the session is rebuilt.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Seconds between calls where the log has no timestamps.
    pub gap_seconds: f64,
    /// Tokens at the start of every prompt that never change (tools + system prompt); 0 = unknown.
    pub prefix_tokens: u64,
    /// Seconds until a response starts (writes become readable then).
    pub first_token_seconds: f64,
    /// Seed of the best-effort hit draws (`--seed`); `None`: derived from the logged calls, so the
    /// same log gives the same prediction whatever its file is called.
    pub seed: Option<u64>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            gap_seconds: 30.0,
            prefix_tokens: 0,
            first_token_seconds: 1.0,
            seed: None,
        }
    }
}

/// The cache rules used to price logged buckets: the model's explicit, else automatic, else implicit.
fn pricing_rules(model: &ModelSpec) -> Option<&CacheRules> {
    model
        .cache
        .explicit
        .as_ref()
        .or(model.cache.automatic.as_ref())
        .or(model.cache.implicit.as_ref())
}

/// Dollars of a logged call at the model's prices. Writes of unknown lifetime count as the default
/// tier; a model without caching bills cached tokens at the base rate.
fn logged_usd(model: &ModelSpec, c: &LoggedCall) -> f64 {
    let (read_m, w5_m, w1h_m) = match pricing_rules(model) {
        None => (1.0, 1.0, 1.0),
        Some(r) => {
            let default = r.tier(None).map_or(1.0, |(_, t)| t.write_multiplier.value);
            let tier = |n: &str| r.tiers.get(n).map_or(default, |t| t.write_multiplier.value);
            (r.read_multiplier.value, tier("5m"), tier("1h"))
        }
    };
    let weighted = c.uncached_tokens as f64
        + c.cache_write_5m_tokens as f64 * w5_m
        + c.cache_write_1h_tokens as f64 * w1h_m
        + c.cache_read_tokens as f64 * read_m;
    model.input_usd(weighted) + model.output_usd(c.output_tokens as f64)
}

/// Call start times in seconds from the first call: logged timestamps where present (in log order,
/// never going backwards), else the previous call plus `gap`.
pub fn call_times(calls: &[LoggedCall], gap: f64) -> Vec<f64> {
    let t0 = calls.iter().find_map(|c| c.unix_time);
    let mut out = Vec::with_capacity(calls.len());
    let mut prev: Option<f64> = None;
    for c in calls {
        let t = match (c.unix_time, t0, prev) {
            (Some(t), Some(t0), p) => (t - t0).max(p.unwrap_or(0.0)),
            (_, _, Some(p)) => p + gap,
            (_, _, None) => 0.0,
        };
        out.push(t);
        prev = Some(t);
    }
    out
}

/// A seed from what the calls logged (not where the log is stored): the same calls, the same seed.
pub fn content_seed(calls: &[LoggedCall]) -> u64 {
    calls.iter().fold(fnv1a(b"replay-seed"), |h, c| {
        let time = c.unix_time.map_or(u64::MAX, f64::to_bits);
        [
            time,
            c.prompt_tokens,
            c.uncached_tokens,
            c.cache_write_5m_tokens,
            c.cache_write_1h_tokens,
            c.cache_read_tokens,
            c.output_tokens,
        ]
        .into_iter()
        .fold(h, chain)
    })
}

/// Replays a log on one model with one strategy.
pub fn replay(
    log: &UsageLog,
    model: &ModelSpec,
    strategy: &Strategy,
    opts: &ReplayOptions,
) -> Result<ReplayResult> {
    if !(opts.gap_seconds.is_finite() && opts.gap_seconds >= 0.0) {
        return Err(Error::invalid(
            "command line",
            "--gap-seconds",
            format!("value {} must be a non-negative number", opts.gap_seconds),
        ));
    }
    let resolved = strategy.resolve(model)?;
    let setup = SimSetup::new(model, &resolved, opts.first_token_seconds);
    let times = call_times(&log.calls, opts.gap_seconds);
    let mut store = CacheStore::new();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed.unwrap_or_else(|| content_seed(&log.calls)));
    let mut prompt = Prompt::default();
    let prefix_id = fnv1a(b"replay-prefix");
    let mut conversation = 0u64;
    let mut prev_prompt = 0u64;
    let mut result = ReplayResult {
        model: model.id.clone(),
        strategy: resolved.name.clone(),
        logged: Buckets::default(),
        predicted: Buckets::default(),
        calls: Vec::with_capacity(log.calls.len()),
    };
    for (i, (c, &t)) in log.calls.iter().zip(&times).enumerate() {
        let p = c.prompt_tokens;
        let conv_id = |conv: u64| chain(fnv1a(b"replay-conversation"), conv);
        if i == 0 || p < prev_prompt {
            // A new conversation (the first, or after compaction): only the fixed prefix survives.
            conversation += 1;
            prompt.clear();
            if opts.prefix_tokens > 0 && p > opts.prefix_tokens {
                prompt.push(Segment {
                    tokens: opts.prefix_tokens,
                    id: prefix_id,
                });
                prompt.mark_tools_end();
                prompt.mark_system_end();
                prompt.push(Segment {
                    tokens: p - opts.prefix_tokens,
                    id: chain(conv_id(conversation), i as u64),
                });
            } else {
                prompt.push(Segment {
                    tokens: p,
                    id: chain(conv_id(conversation), i as u64),
                });
            }
        } else {
            prompt.push(Segment {
                tokens: p - prev_prompt,
                id: chain(conv_id(conversation), i as u64),
            });
        }
        prev_prompt = p;
        let split = split_for_prompt(&setup, &mut store, &prompt, seconds_to_ms(t), &mut rng);
        let predicted = Buckets {
            uncached_tokens: split.uncached,
            cache_write_tokens: split.written_total(),
            cache_read_tokens: split.read,
            cost_usd: setup.prices.call_usd(&split, c.output_tokens),
        };
        let logged = Buckets {
            uncached_tokens: c.uncached_tokens,
            cache_write_tokens: c.cache_write_5m_tokens + c.cache_write_1h_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cost_usd: logged_usd(model, c),
        };
        result.logged.add(&logged);
        result.predicted.add(&predicted);
        result.calls.push(CallComparison {
            call: i + 1,
            time_s: t,
            prompt_tokens: p,
            output_tokens: c.output_tokens,
            logged,
            predicted,
        });
    }
    Ok(result)
}

/// The prices of a model with no caching, for comparisons.
pub fn uncached_usd(model: &ModelSpec, log: &UsageLog) -> f64 {
    let sheet = PriceSheet::uncached(model);
    log.calls
        .iter()
        .map(|c| c.prompt_tokens as f64 * sheet.input + c.output_tokens as f64 * sheet.output)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(
            parse_rfc3339("2026-12-02T10:00:01.500+01:00"),
            parse_rfc3339("2026-12-02T09:00:01.5Z")
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn reads_each_usage_shape() {
        let text = r#"[
          {"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5,
                    "cache_creation":{"ephemeral_5m_input_tokens":40,"ephemeral_1h_input_tokens":60}}},
          {"created":1700000000,"usage":{"prompt_tokens":2000,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":1536}}},
          {"usage":{"input_tokens":3000,"output_tokens":9,"input_tokens_details":{"cached_tokens":2048},"output_tokens_details":{"reasoning_tokens":4}}},
          {"input_tokens":1,"output_tokens":2,"brand_new_counter":3},
          {"type":"user","message":{"role":"user","content":"hi"}}
        ]"#;
        let log = parse_log(text, "t.json").unwrap();
        let got: Vec<_> = log
            .calls
            .iter()
            .map(|c| {
                (
                    c.format,
                    c.prompt_tokens,
                    c.uncached_tokens,
                    c.cache_write_5m_tokens,
                    c.cache_write_1h_tokens,
                    c.cache_read_tokens,
                    c.output_tokens,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("anthropic", 1110, 10, 40, 60, 1000, 5),
                ("openai-chat", 2000, 464, 0, 0, 1536, 7),
                ("openai-responses", 3000, 952, 0, 0, 2048, 9),
                ("anthropic", 1, 1, 0, 0, 0, 2),
            ]
        );
        assert_eq!(log.calls[1].unix_time, Some(1.7e9));
        assert_eq!(log.unknown_fields["brand_new_counter"], 1);
        assert_eq!(log.records_without_usage, 1);
    }

    #[test]
    fn bad_values_name_the_line_and_field() {
        let e = parse_log("{\"usage\":{\"input_tokens\":-3}}\n{\"x\":1}\n", "l.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("l.jsonl") && e.contains("line 1: usage.input_tokens") && e.contains("-3"),
            "{e}"
        );
        let e = parse_log(
            "{\"usage\":{\"input_tokens\":1}}\n{oops\n{\"usage\":{\"input_tokens\":1}}\n",
            "l.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 2"), "{e}");
        let log = parse_log(
            "{\"usage\":{\"input_tokens\":1}}\n{\"usage\":{\"inp",
            "l.jsonl",
        )
        .unwrap();
        assert!(log.truncated_last_line);
        let e = parse_log(r#"{"usage":{"input_tokens":1,"cache_creation_input_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":1}}}"#, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not add up"), "{e}");
    }

    #[test]
    fn matches_api_model_names() {
        let c = Catalog::embedded().unwrap();
        assert_eq!(
            match_model(&c, "claude-opus-4-8-20260501").unwrap().id,
            "claude-opus-4.8"
        );
        assert_eq!(match_model(&c, "gpt-5.6").unwrap().id, "gpt-5.6");
        assert!(match_model(&c, "llama-3").is_none());
    }

    #[test]
    fn growing_conversation_reads_the_previous_prompt() {
        let c = Catalog::embedded().unwrap();
        let m = c.model("claude-opus-4.8").unwrap();
        let line = |p: u64, t: &str| {
            format!(r#"{{"timestamp":"{t}","input_tokens":{p},"output_tokens":100}}"#)
        };
        let text = [
            line(5000, "2026-01-01T00:00:00Z"),
            line(6000, "2026-01-01T00:01:00Z"),
            line(6500, "2026-01-01T00:20:00Z"), // past the 5-minute lifetime
            line(3000, "2026-01-01T00:21:00Z"), // shorter: a new conversation
        ]
        .join("\n");
        let log = parse_log(&text, "s.jsonl").unwrap();
        let r = replay(
            &log,
            m,
            &Strategy::parse("explicit:last").unwrap(),
            &ReplayOptions::default(),
        )
        .unwrap();
        let p: Vec<_> = r
            .calls
            .iter()
            .map(|c| {
                (
                    c.time_s,
                    c.predicted.cache_read_tokens,
                    c.predicted.cache_write_tokens,
                    c.predicted.uncached_tokens,
                )
            })
            .collect();
        assert_eq!(
            p,
            [
                (0.0, 0, 5000, 0),
                (60.0, 5000, 1000, 0),
                (1200.0, 0, 6500, 0),
                (1260.0, 0, 3000, 0)
            ]
        );
        // With a 2,000-token fixed prefix and the tools breakpoint, the restart still reads the prefix.
        let opts = ReplayOptions {
            prefix_tokens: 2000,
            ..Default::default()
        };
        let r = replay(
            &log,
            m,
            &Strategy::parse("explicit:tools+last").unwrap(),
            &opts,
        )
        .unwrap();
        assert_eq!(r.calls[3].predicted.cache_read_tokens, 2000);
        assert_eq!(r.calls[3].predicted.cache_write_tokens, 1000);
        // Logged buckets here are all uncached: logged dollars are the plain input and output prices.
        let want = m.input_usd(20_500.0) + m.output_usd(400.0);
        assert!((r.logged.cost_usd - want).abs() < 1e-12);
        assert!((uncached_usd(m, &log) - want).abs() < 1e-12);
    }
}
