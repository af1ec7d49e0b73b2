//! Replay of real usage logs: read logged token buckets per call (see [`crate::input::usagelog`] for
//! the formats), rebuild the call sequence, bill the logged buckets at pcsim's prices, re-simulate the
//! same prompts with pcsim's caching rules, and compare per call and in total.
//!
//! A log is split into conversations: by session id, by agent (a sub-agent's sidechain is its own
//! conversation, with its own cache prefix, and is counted in the totals), and optionally where the
//! gap between two calls of a session exceeds `session_gap_seconds`. Each conversation grows: a call's
//! prompt extends the previous one by the difference in prompt tokens; a prompt shorter than the
//! previous one restarts it (compaction, `/clear`). An optional fixed prefix (`prefix_tokens`: tools
//! plus system prompt) is kept across restarts and shared by the main agent's conversations; that is
//! where the `tools` and `system` breakpoints go. Calls of all conversations are billed in time order
//! against one cache, as an account's calls are.

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::base::hash::{chain, fnv1a};
use crate::error::{Error, Result};
use crate::model::catalog::{CacheRules, Catalog, ModelSpec};
use crate::model::strategy::{seconds_to_ms, Anchor, Strategy};
use crate::sim::billing::PriceSheet;
use crate::sim::engine::cache::CacheStore;
use crate::sim::engine::prompt::{Prompt, Segment};
use crate::sim::engine::{split_for_prompt, SimSetup};

pub use crate::input::usagelog::{
    load_log, parse_log, parse_rfc3339, read_log, utc_date, LoggedCall, UsageLog,
};

/// The model a log names, matched to the catalog: exact id, or an API name such as
/// `claude-opus-4-8-20260501` for `claude-opus-4.8` (dots and dashes alike, date suffix ignored),
/// with a gateway's provider prefix (`anthropic/`, Bedrock's `us.anthropic.`) and a version suffix
/// (`-v1:0`) ignored.
pub fn match_model<'c>(catalog: &'c Catalog, log_model: &str) -> Option<&'c ModelSpec> {
    if let Ok(m) = catalog.model(log_model) {
        return Some(m);
    }
    let norm = |s: &str| s.to_ascii_lowercase().replace(['.', '_', ':'], "-");
    let bare = log_model.rsplit('/').next().unwrap_or(log_model);
    let candidates: Vec<String> = {
        let mut v = vec![norm(log_model), norm(bare)];
        // Bedrock ids: `[region.]provider.model-id-v1:0`.
        let parts: Vec<&str> = bare.split('.').collect();
        for i in 1..parts.len() {
            v.push(norm(&parts[i..].join(".")));
        }
        v
    };
    catalog
        .models
        .iter()
        .filter(|m| {
            let id = norm(&m.id);
            candidates
                .iter()
                .any(|w| *w == id || w.starts_with(&format!("{id}-")))
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
    /// Adds another call's (or total's) buckets.
    pub fn add(&mut self, o: &Buckets) {
        self.uncached_tokens += o.uncached_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cost_usd += o.cost_usd;
    }
}

/// One call, logged against predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallComparison {
    /// Call number, 1-based, in log order.
    pub call: usize,
    /// Conversation number, 1-based (session, agent, time gap).
    pub conversation: usize,
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
    /// Conversations the log was split into.
    pub conversations: usize,
    /// Logged buckets at this model's prices, summed.
    pub logged: Buckets,
    /// Predicted buckets and dollars, summed.
    pub predicted: Buckets,
    /// Predicted cache writes per TTL tier (`5m`, `1h`, ...).
    pub predicted_write_tokens_by_tier: BTreeMap<String, u64>,
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
    /// A pause longer than this between two calls of a session starts a new conversation; 0 = never.
    pub session_gap_seconds: f64,
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
            session_gap_seconds: 0.0,
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
pub fn logged_usd(model: &ModelSpec, c: &LoggedCall) -> f64 {
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

/// Where each call goes: its conversation (0-based, in order of first appearance) and its start time
/// in seconds from the first call. Logged timestamps are used where present (never going backwards
/// within a conversation); a call without one starts `gap` after its conversation's previous call,
/// and a conversation without any starts `gap` after the latest call so far.
pub fn conversations(calls: &[LoggedCall], opts: &ReplayOptions) -> (Vec<usize>, Vec<f64>) {
    let t0 = calls
        .iter()
        .filter_map(|c| c.unix_time)
        .fold(None::<f64>, |m, t| Some(m.map_or(t, |m| m.min(t))));
    // (session, agent, sidechain) -> (conversation, time of its latest call)
    type Key<'a> = (Option<&'a str>, Option<&'a str>, bool);
    let mut by_key: HashMap<Key, (usize, f64)> = HashMap::new();
    let mut conv = Vec::with_capacity(calls.len());
    let mut times = Vec::with_capacity(calls.len());
    let mut next = 0usize;
    let mut latest: Option<f64> = None;
    let gap = opts.gap_seconds;
    for c in calls {
        let key = (c.session.as_deref(), c.agent.as_deref(), c.sidechain);
        let logged = c.unix_time.zip(t0).map(|(t, t0)| t - t0);
        let (idx, t) = match by_key.get(&key) {
            Some(&(idx, prev)) => {
                let t = logged.map_or(prev + gap, |t| t.max(prev));
                let split = opts.session_gap_seconds > 0.0
                    && logged.is_some()
                    && t - prev > opts.session_gap_seconds;
                if split {
                    next += 1;
                    (next - 1, t)
                } else {
                    (idx, t)
                }
            }
            None => {
                next += 1;
                let t = logged.unwrap_or_else(|| latest.map_or(0.0, |l| l + gap));
                (next - 1, t)
            }
        };
        by_key.insert(key, (idx, t));
        latest = Some(latest.map_or(t, |l: f64| l.max(t)));
        conv.push(idx);
        times.push(t);
    }
    (conv, times)
}

/// Call start times in seconds from the first call (see [`conversations`]).
pub fn call_times(calls: &[LoggedCall], gap: f64) -> Vec<f64> {
    let opts = ReplayOptions {
        gap_seconds: gap,
        ..ReplayOptions::default()
    };
    conversations(calls, &opts).1
}

/// The stable prefix (tools + system prompt) the log itself shows: the fewest tokens read from
/// cache by a main-agent call that starts a conversation (or restarts one), when any such call reads.
/// A fresh conversation can only read what an earlier one left, which is the shared prefix.
pub fn infer_prefix_tokens(calls: &[LoggedCall], opts: &ReplayOptions) -> Option<u64> {
    let (conv, _) = conversations(calls, opts);
    let mut prev: HashMap<usize, u64> = HashMap::new();
    let mut best: Option<u64> = None;
    for (c, &k) in calls.iter().zip(&conv) {
        let starts = prev.get(&k).is_none_or(|&p| c.prompt_tokens < p);
        prev.insert(k, c.prompt_tokens);
        if starts
            && !c.sidechain
            && c.cache_read_tokens > 0
            && c.cache_read_tokens < c.prompt_tokens
        {
            best = Some(best.map_or(c.cache_read_tokens, |b| b.min(c.cache_read_tokens)));
        }
    }
    best
}

/// True when the strategy places a breakpoint on the tool block or the system prompt, which a replay
/// can only place with a known prefix.
pub fn uses_prefix_anchors(strategy: &Strategy) -> bool {
    strategy
        .breakpoints
        .iter()
        .any(|b| matches!(b.anchor, Anchor::Tools | Anchor::System))
}

struct ConvState {
    prompt: Prompt,
    prev_prompt: u64,
    restarts: u64,
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
    for (flag, v) in [
        ("--gap-seconds", opts.gap_seconds),
        ("--session-gap-minutes", opts.session_gap_seconds),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::invalid(
                "command line",
                flag,
                format!("value {v} must be a non-negative number"),
            ));
        }
    }
    let resolved = strategy.resolve(model)?;
    let setup = SimSetup::new(model, &resolved, opts.first_token_seconds);
    let (conv, times) = conversations(&log.calls, opts);
    let mut order: Vec<usize> = (0..log.calls.len()).collect();
    // Calls are billed in time order (one account's cache); equal times keep log order.
    order.sort_by(|&a, &b| times[a].total_cmp(&times[b]).then(a.cmp(&b)));
    let mut store = CacheStore::new();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed.unwrap_or_else(|| content_seed(&log.calls)));
    let mut states: HashMap<usize, ConvState> = HashMap::new();
    let mut out: Vec<Option<CallComparison>> = vec![None; log.calls.len()];
    let mut by_tier: BTreeMap<String, u64> = BTreeMap::new();
    let mut result = ReplayResult {
        model: model.id.clone(),
        strategy: resolved.name.clone(),
        conversations: conv.iter().max().map_or(0, |m| m + 1),
        logged: Buckets::default(),
        predicted: Buckets::default(),
        predicted_write_tokens_by_tier: BTreeMap::new(),
        calls: Vec::new(),
    };
    for &i in &order {
        let c = &log.calls[i];
        let t = times[i];
        let k = conv[i];
        let p = c.prompt_tokens;
        let st = states.entry(k).or_insert_with(|| ConvState {
            prompt: Prompt::default(),
            prev_prompt: 0,
            restarts: 0,
        });
        let fresh = st.prompt.tokens() == 0 || p < st.prev_prompt;
        if fresh {
            // A new conversation (or a restart after compaction): only the fixed prefix survives.
            st.restarts += 1;
            st.prompt.clear();
        }
        let conv_id = chain(chain(fnv1a(b"replay-conversation"), k as u64), st.restarts);
        let seg = Segment {
            tokens: if fresh { p } else { p - st.prev_prompt },
            id: chain(conv_id, i as u64),
        };
        if fresh && opts.prefix_tokens > 0 && p > opts.prefix_tokens {
            // The main agent's conversations share one prefix; a sub-agent has its own.
            let owner = if c.sidechain {
                c.agent.as_deref().unwrap_or("sidechain")
            } else {
                "main"
            };
            st.prompt.push(Segment {
                tokens: opts.prefix_tokens,
                id: chain(fnv1a(b"replay-prefix"), fnv1a(owner.as_bytes())),
            });
            st.prompt.mark_tools_end();
            st.prompt.mark_system_end();
            st.prompt.push(Segment {
                tokens: p - opts.prefix_tokens,
                id: seg.id,
            });
        } else {
            st.prompt.push(seg);
        }
        st.prev_prompt = p;
        let split = split_for_prompt(&setup, &mut store, &st.prompt, seconds_to_ms(t), &mut rng);
        for (slot, n) in split.written.iter().enumerate() {
            if *n > 0 {
                let name = setup
                    .tier_names
                    .get(slot)
                    .cloned()
                    .unwrap_or_else(|| "default".into());
                *by_tier.entry(name).or_default() += n;
            }
        }
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
        out[i] = Some(CallComparison {
            call: i + 1,
            conversation: k + 1,
            time_s: t,
            prompt_tokens: p,
            output_tokens: c.output_tokens,
            logged,
            predicted,
        });
    }
    // Totals summed in log order, so a file's figures do not depend on how calls interleave.
    result.calls = out.into_iter().flatten().collect();
    for c in &result.calls {
        result.logged.add(&c.logged);
        result.predicted.add(&c.predicted);
    }
    result.predicted_write_tokens_by_tier = by_tier;
    Ok(result)
}

/// Calls, tokens and dollars of a set of calls, logged against predicted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tally {
    /// Calls.
    pub calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The log's buckets at the replay model's prices.
    pub logged: Buckets,
    /// pcsim's prediction.
    pub predicted: Buckets,
}

impl Tally {
    /// Adds one call.
    pub fn add_call(&mut self, c: &CallComparison) {
        self.calls += 1;
        self.prompt_tokens += c.prompt_tokens;
        self.output_tokens += c.output_tokens;
        self.logged.add(&c.logged);
        self.predicted.add(&c.predicted);
    }

    /// Adds another tally.
    pub fn add(&mut self, o: &Tally) {
        self.calls += o.calls;
        self.prompt_tokens += o.prompt_tokens;
        self.output_tokens += o.output_tokens;
        self.logged.add(&o.logged);
        self.predicted.add(&o.predicted);
    }
}

/// The groupings totals are reported by.
pub const GROUPINGS: [&str; 4] = ["day", "session", "project", "model"];

/// A replay's calls grouped by UTC day, session, project and logged model: `(grouping, key)` to
/// tally. Calls without the field are grouped under `(none)`.
pub fn tally_groups(log: &UsageLog, r: &ReplayResult) -> BTreeMap<(&'static str, String), Tally> {
    let mut out: BTreeMap<(&'static str, String), Tally> = BTreeMap::new();
    let none = || "(none)".to_string();
    for c in &r.calls {
        let Some(l) = log.calls.get(c.call - 1) else {
            continue;
        };
        let keys = [
            l.unix_time.map_or_else(none, utc_date),
            l.session.clone().unwrap_or_else(none),
            l.project.clone().unwrap_or_else(none),
            l.model.clone().unwrap_or_else(none),
        ];
        for (by, key) in GROUPINGS.iter().zip(keys) {
            out.entry((by, key)).or_default().add_call(c);
        }
    }
    out
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
    fn bad_rows_are_counted_and_named_never_fatal() {
        let log = parse_log(
            "{\"usage\":{\"input_tokens\":-3}}\n{\"x\":1}\n{oops\n{\"usage\":{\"input_tokens\":7}}\n",
            "l.jsonl",
        )
        .unwrap();
        assert_eq!(log.calls.len(), 1);
        assert_eq!(log.unreadable, 2);
        let e = &log.unreadable_examples;
        assert!(
            e[0].contains("l.jsonl")
                && e[0].contains("line 1: usage.input_tokens")
                && e[0].contains("-3"),
            "{e:?}"
        );
        assert!(
            e[1].contains("line 3") && e[1].contains("not valid JSON"),
            "{e:?}"
        );
        let log = parse_log(
            "{\"usage\":{\"input_tokens\":1}}\n{\"usage\":{\"inp",
            "l.jsonl",
        )
        .unwrap();
        assert!(log.truncated_last_line);
        assert_eq!(log.unreadable, 0);
        let log = parse_log(
            "{\"usage\":{\"input_tokens\":1,\"cache_creation_input_tokens\":5,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1}}}\n{\"usage\":{\"input_tokens\":1}}\n",
            "x",
        )
        .unwrap();
        assert!(
            log.unreadable_examples[0].contains("do not add up"),
            "{log:?}"
        );
        // Nothing readable at all: an error that says why, with the rows it could not read.
        let e = parse_log("{\"usage\":{\"input_tokens\":\"ten\"}}\n", "b.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no usage record") && e.contains("\"ten\""),
            "{e}"
        );
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
