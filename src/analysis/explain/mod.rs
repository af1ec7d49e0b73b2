//! `pcsim explain`: why each call of a real trace missed the cache, what it cost, and what fixes it.
//!
//! Each record of a trace (full request and response bodies, see [`crate::input::trace`]) is cut
//! into regions in its provider's cache order, each region fingerprinted and sized; the call is
//! billed by the engine's own caching rules for its model against one account's cache
//! (the engine's cache module), with the breakpoints the request itself sets and the times the
//! trace records; the prediction is set against the usage the response billed; and every token the
//! call re-sent but did not read is named by a cause ([`CAUSES`]) and priced at the call's model.
//! The same trace is billed again with each mechanical fix applied (a frozen tool order, volatile
//! system text after the last breakpoint, a breakpoint on the tools, the 1-hour TTL, a
//! `prompt_cache_key` per conversation, only the tools each conversation calls), in the same pass,
//! and the saving of each is reported. Where the catalog says a model's provider routes requests
//! by prefix and key (`routing_rpm_per_prefix`), every bill routes as `run` routes: calls of one
//! routing key past that rate in a minute overflow to further machines, each with its own cache.
//! The tools each conversation calls are known only at its end: files are read twice, a first
//! pass keeping the names of the tools each conversation calls (`drop_unused_tools` is not
//! simulated on a stream read once).
//!
//! Memory is bounded by the live conversations and cache entries, not by the trace: what outlives a
//! record is fingerprints, positions, tool definitions and the first bytes of system blocks.
//!
//! - `prompt.rs`: regions sized, laid out as an engine prompt, breakpoints placed;
//! - `causes.rs`: the previous call against this one, the cause vocabulary and the details;
//! - `summary.rs`: totals per cause, the ranked summary line, the fixes' savings;
//! - `tracegen.rs`: traces of simulated sessions (`run --trace-out`), with injected causes;
//! - `calibrate.rs`: tool-block sizes from billed input tokens (`--calibrate-out`).
//!
//! One concept: billing a trace call by call against one account's cache and naming the cause of
//! every token re-sent; the steps of that pass that stand alone live in the files listed above.

mod calibrate;
mod causes;
mod prompt;
mod summary;
mod tracegen;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::Serialize;

pub use calibrate::ToolBlockSample;
pub use causes::CAUSES;
pub(crate) use tracegen::{trace_records, Injection, TraceLine};

use crate::analysis::replay::ModelMatcher;
use crate::base::hash::{chain, fnv1a};
use crate::error::Result;
use crate::input::trace::{exchange_of, read_trace_file, Api, Exchange, SkippedRecord, TraceItem};
use crate::model::catalog::Catalog;
use crate::model::strategy::Mode;
use crate::sim::engine::cache::{automatic_call, explicit_call, CacheStore, Split};
use crate::sim::engine::keys::{machine_salt, routing_key};
use prompt::{build, scale_to, Built, Layout, ModelRules, Sizer};

/// How a trace is explained.
#[derive(Debug, Clone, Default)]
pub struct ExplainOptions {
    /// A pause longer than this between two calls of a session starts a new conversation; 0: never.
    pub session_gap_seconds: f64,
    /// Leave every prompt text out of the details (no excerpts).
    pub redact: bool,
    /// Explain every call as this catalog model instead of the model the request names.
    pub model: Option<String>,
}

/// Token buckets of one call, and their dollars (output included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CallBuckets {
    /// Tokens at the base input rate.
    pub uncached_tokens: u64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Dollars of the call.
    pub cost_usd: f64,
}

/// One cause of one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallCause {
    /// The cause (one of [`CAUSES`]).
    pub cause: &'static str,
    /// Tokens it kept from being read.
    pub tokens: u64,
    /// What those tokens cost beyond a read, at the call's model prices.
    pub usd: f64,
    /// What shows it (tools changed and the JSON path, the system block and bytes, the gap, ...).
    pub detail: String,
}

/// One explained call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallExplanation {
    /// Call number in trace order, 1-based.
    pub call: usize,
    /// Where the record was.
    pub at: String,
    /// Conversation number, 1-based.
    pub conversation: usize,
    /// Seconds since the trace's first call.
    pub time_s: f64,
    /// Catalog model it was billed as.
    pub model: String,
    /// API of the request.
    pub api: &'static str,
    /// Regions of its prompt (tools, system blocks, message parts).
    pub regions: usize,
    /// Prompt tokens billed.
    pub prompt_tokens: u64,
    /// What the response billed.
    pub billed: CallBuckets,
    /// What pcsim's rules predict for the same prompt and cache.
    pub predicted: CallBuckets,
    /// Whether prediction and bill agree (read and write within 1% of the prompt or 8 tokens).
    pub agrees: bool,
    /// Tokens not read that could have been, by cause.
    pub causes: Vec<CallCause>,
}

/// One cause over the whole trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseTotal {
    /// The cause.
    pub cause: &'static str,
    /// Calls it hit.
    pub calls: usize,
    /// Tokens it kept from being read.
    pub tokens: u64,
    /// Their dollars beyond a read.
    pub usd: f64,
    /// The detail seen on most of its calls.
    pub top_detail: String,
    /// Calls with that detail.
    pub top_detail_calls: usize,
}

/// A mechanical fix, simulated on the same trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixSaving {
    /// Name (`freeze_tool_order`, `move_volatile_system`, `tools_breakpoint`, `ttl_1h`,
    /// `prompt_cache_key`, `drop_unused_tools`, `all`).
    pub fix: &'static str,
    /// What it changes.
    pub description: &'static str,
    /// Whether it was simulated (some fixes need what a trace does not show).
    pub simulated: bool,
    /// Predicted input dollars of the whole trace with the fix.
    pub predicted_usd: f64,
    /// Predicted input dollars saved against the trace as sent (positive: saves).
    pub saving_usd: f64,
    /// Why it was not simulated, or where it applies.
    pub note: String,
}

/// The explanation of a trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Explanation {
    /// Files read.
    pub files: Vec<String>,
    /// Bytes read.
    pub bytes: u64,
    /// Records read (explained and skipped).
    pub records: usize,
    /// Conversations the calls were split into.
    pub conversations: usize,
    /// Every explained call.
    pub calls: Vec<CallExplanation>,
    /// Records skipped.
    pub skipped_count: usize,
    /// Skipped records by reason (the reason's first words).
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// The first skipped records, each with its place and reason.
    pub skipped: Vec<SkippedRecord>,
    /// Dollars the responses billed, at pcsim's prices.
    pub billed_usd: f64,
    /// Dollars pcsim predicts.
    pub predicted_usd: f64,
    /// Calls whose prediction and bill disagree.
    pub disagreeing_calls: usize,
    /// Calls with an `unexplained` cause.
    pub unexplained_calls: usize,
    /// Causes ranked by dollars.
    pub causes: Vec<CauseTotal>,
    /// The ranked summary in one line.
    pub summary: String,
    /// Fixes and their simulated savings.
    pub fixes: Vec<FixSaving>,
    /// Tool-block sizes inferred from billed input tokens, per model.
    pub tool_blocks: Vec<ToolBlockSample>,
}

/// Skipped records described one by one (the rest are counted by reason).
const SKIPPED_SHOWN: usize = 20;

/// How long a conversation is remembered after its last call (longer than every TTL).
const CONVERSATION_MEMORY_S: f64 = 86_400.0;

/// Seconds between calls when a record has no time.
const DEFAULT_GAP_S: f64 = 30.0;

/// A layout with no fix applied (the trace as sent).
const AS_SENT: Layout = Layout {
    sort_tools: false,
    move_volatile_system: false,
    tools_breakpoint: false,
    all_1h: false,
    drop_unused_tools: false,
};

/// Which `prompt_cache_key` a variant's calls carry, on a model that routes requests by prefix and
/// key (`routing_rpm_per_prefix` in the catalog; on the others the key changes nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keying {
    /// The key the request set, if any.
    AsSent,
    /// One key per conversation.
    PerConversation,
}

/// The variants billed in the same pass: the trace as sent, then each fix.
const VARIANTS: [(&str, Layout, Keying); 7] = [
    (
        "freeze_tool_order",
        Layout {
            sort_tools: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
    (
        "move_volatile_system",
        Layout {
            move_volatile_system: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
    (
        "tools_breakpoint",
        Layout {
            tools_breakpoint: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
    (
        "ttl_1h",
        Layout {
            all_1h: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
    (
        "all",
        Layout {
            sort_tools: true,
            move_volatile_system: true,
            tools_breakpoint: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
    ("prompt_cache_key", AS_SENT, Keying::PerConversation),
    (
        "drop_unused_tools",
        Layout {
            drop_unused_tools: true,
            ..AS_SENT
        },
        Keying::AsSent,
    ),
];

/// One account's caches as a variant sees them: the shared store, and a store of its own per
/// `prompt_cache_key` on a model that routes by key (the key sends its requests to machines of
/// their own, as `run` simulates a key per session).
#[derive(Debug, Default, Clone)]
struct Caches {
    shared: CacheStore,
    keyed: HashMap<u64, CacheStore>,
}

impl Caches {
    fn store(&mut self, key: Option<u64>) -> &mut CacheStore {
        match key {
            None => &mut self.shared,
            Some(k) => self.keyed.entry(k).or_default(),
        }
    }

    fn sweep(&mut self, ms: u64) {
        self.shared.sweep(ms);
        self.keyed.retain(|_, s| {
            s.sweep(ms);
            !s.is_idle()
        });
    }
}

/// Conversation numbers: by session id, a new conversation after a pause longer than the session
/// gap, or once a conversation idle past every TTL is forgotten; and each call's time. Both passes
/// (the survey of the tools each conversation calls, then the explanation) number alike.
#[derive(Debug, Default)]
struct Threads {
    /// Last call's time and number per session id.
    last: HashMap<String, (f64, usize)>,
    next: usize,
    last_time: Option<f64>,
    t0: Option<f64>,
    swept_at: f64,
}

impl Threads {
    /// The call's time (the record's, else a default gap after the latest), in Unix seconds.
    fn time_of(&mut self, ex: &Exchange) -> f64 {
        let time = ex
            .time
            .or_else(|| self.last_time.map(|t| t + DEFAULT_GAP_S))
            .unwrap_or(0.0);
        self.last_time = Some(self.last_time.map_or(time, |t: f64| t.max(time)));
        self.t0.get_or_insert(time);
        time
    }

    /// The conversation of a call of session `key` at `time`, and whether it continues one.
    fn place(&mut self, key: &str, time: f64, gap_s: f64) -> (usize, bool) {
        let continued = self
            .last
            .get(key)
            .filter(|(t, _)| !(gap_s > 0.0 && time - t > gap_s))
            .map(|&(_, n)| n);
        let number = continued.unwrap_or(self.next + 1);
        self.next = self.next.max(number);
        self.last.insert(key.to_string(), (time, number));
        (number, continued.is_some())
    }

    /// Forgets conversations idle past every TTL, every 10 minutes of trace time; whether it did.
    fn sweep(&mut self, now: f64) -> bool {
        if now - self.swept_at < 600.0 {
            return false;
        }
        self.swept_at = now;
        self.last
            .retain(|_, (t, _)| now - *t < CONVERSATION_MEMORY_S);
        true
    }
}

struct Conversation {
    prev: causes::Previous,
}

/// Explains traces record by record (see the module docs).
pub(crate) struct Explainer<'c> {
    opts: ExplainOptions,
    matcher: ModelMatcher<'c>,
    catalog: &'c Catalog,
    rules: HashMap<String, ModelRules<'c>>,
    sizer: Sizer,
    store: Caches,
    variant_stores: Vec<Caches>,
    variant_usd: Vec<f64>,
    conversations: HashMap<String, Conversation>,
    threads: Threads,
    /// Per conversation (number - 1), the tools it calls, sorted: from a first pass over the
    /// files; `None` when the input is read once (then `drop_unused_tools` is not simulated).
    called: Option<Vec<Vec<String>>>,
    calibration: calibrate::Collector,
    base_input_usd: f64,
    out: Explanation,
}

impl<'c> Explainer<'c> {
    /// An explainer on `catalog`.
    pub(crate) fn new(catalog: &'c Catalog, opts: ExplainOptions) -> Result<Self> {
        if let Some(m) = &opts.model {
            catalog.model(m)?;
        }
        if !(opts.session_gap_seconds.is_finite() && opts.session_gap_seconds >= 0.0) {
            return Err(crate::error::Error::invalid(
                "command line",
                "--session-gap-minutes",
                "must be a non-negative number",
            ));
        }
        Ok(Explainer {
            opts,
            matcher: ModelMatcher::new(catalog),
            catalog,
            rules: HashMap::new(),
            sizer: Sizer::default(),
            store: Caches::default(),
            variant_stores: vec![Caches::default(); VARIANTS.len()],
            variant_usd: vec![0.0; VARIANTS.len()],
            conversations: HashMap::new(),
            threads: Threads::default(),
            called: None,
            calibration: calibrate::Collector::default(),
            base_input_usd: 0.0,
            out: Explanation::default(),
        })
    }

    /// Reads and explains one file.
    pub(crate) fn file(&mut self, path: &std::path::Path) -> Result<()> {
        self.out.files.push(path.display().to_string());
        let bytes = read_trace_file(path, &mut |item| self.item(item))?;
        self.out.bytes += bytes;
        Ok(())
    }

    /// Explains one record (or counts a skipped one).
    pub(crate) fn item(&mut self, item: TraceItem) {
        self.out.records += 1;
        let ex = match item {
            TraceItem::Skipped(s) => return self.skip(s),
            TraceItem::Record(r) => match exchange_of(*r) {
                Ok(ex) => ex,
                Err(s) => return self.skip(s),
            },
        };
        self.call(&ex);
    }

    fn skip(&mut self, s: SkippedRecord) {
        self.out.skipped_count += 1;
        let key: String = s
            .reason
            .split([':', '(', '`'])
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        *self.out.skipped_by_reason.entry(key).or_default() += 1;
        if self.out.skipped.len() < SKIPPED_SHOWN {
            self.out.skipped.push(s);
        }
    }

    fn model_of(&mut self, ex: &Exchange) -> std::result::Result<String, String> {
        let id = match &self.opts.model {
            Some(m) => self.catalog.model(m).map(|m| m.id.clone()).map_err(|e| e.to_string())?,
            None => match self.matcher.get(&ex.model) {
                Some(m) => m.id.clone(),
                None => return Err(format!("model `{}` is not in the catalog (give --model ID to explain it as one that is)", ex.model)),
            },
        };
        if !self.rules.contains_key(&id) {
            let spec = self.catalog.model(&id).map_err(|e| e.to_string())?;
            let rules = ModelRules::new(spec).map_err(|e| e.to_string())?;
            self.rules.insert(id.clone(), rules);
        }
        Ok(id)
    }

    /// The first pass over `files`: the tools each conversation calls (names only, per
    /// conversation), numbered as the explaining pass will number them.
    fn survey(&mut self, files: &[PathBuf]) -> Result<()> {
        let mut threads = Threads::default();
        let mut called: Vec<Vec<String>> = Vec::new();
        let gap = self.opts.session_gap_seconds;
        for f in files {
            read_trace_file(f, &mut |item| {
                let TraceItem::Record(r) = item else { return };
                let Ok(ex) = exchange_of(*r) else { return };
                if self.model_of(&ex).is_err() {
                    return;
                }
                let time = threads.time_of(&ex);
                let key = ex.session.clone().unwrap_or_default();
                let (number, _) = threads.place(&key, time, gap);
                if called.len() < number {
                    called.resize_with(number, Vec::new);
                }
                let set = &mut called[number - 1];
                for name in ex.called_tools {
                    if let Err(i) = set.binary_search(&name) {
                        set.insert(i, name);
                    }
                }
                threads.sweep(time);
            })?;
        }
        self.called = Some(called);
        Ok(())
    }

    fn call(&mut self, ex: &Exchange) {
        let id = match self.model_of(ex) {
            Ok(id) => id,
            Err(reason) => {
                return self.skip(SkippedRecord {
                    at: ex.at.clone(),
                    reason,
                })
            }
        };
        let time = self.threads.time_of(ex);
        let now_ms = (time.max(0.0) * 1000.0) as u64;
        let m = &self.rules[&id];
        let (mut sizes, mut preamble) = self.sizer.estimate(ex, m.model);
        self.calibration.observe(ex, m.model, &sizes, preamble);
        let estimated = sizes.iter().sum::<u64>() + preamble;
        scale_to(&mut sizes, &mut preamble, ex.billed.prompt_tokens);
        // The conversation: by session id, split by a long pause.
        let key = ex.session.clone().unwrap_or_default();
        let (number, continued) = self
            .threads
            .place(&key, time, self.opts.session_gap_seconds);
        let prev = self.conversations.get(&key).filter(|_| continued);
        let volatile: Vec<usize> = prev
            .map(|c| c.prev.volatile_system.clone())
            .unwrap_or_default();
        // The routing keys (where the model routes by key): the request's own, or one per
        // conversation.
        let routes = routing_rpm(m).is_some();
        let own_key = ex
            .prompt_cache_key
            .as_deref()
            .filter(|_| routes)
            .map(|k| chain(fnv1a(b"prompt_cache_key"), fnv1a(k.as_bytes())));
        let conversation_key =
            Some(chain(fnv1a(b"conversation"), number as u64)).filter(|_| routes);
        let called: &[String] = self
            .called
            .as_ref()
            .and_then(|c| c.get(number - 1))
            .map_or(&[], Vec::as_slice);
        let base = build(ex, m, &sizes, preamble, AS_SENT, &volatile, &[]);
        let (split, machine) =
            predict_routed(m, self.store.store(own_key), &base, now_ms, likely_hit(m));
        self.base_input_usd += m.input_usd(split.read, split.written, split.uncached);
        for (v, (name, layout, keying)) in VARIANTS.iter().enumerate() {
            if *name == "drop_unused_tools" && self.called.is_none() {
                continue;
            }
            let b = if layout.drop_unused_tools {
                // The kept list's own tokens in the token model, scaled as the bill scaled the
                // rest of the prompt.
                let kept = self.sizer.kept_preamble(ex, m.model, called);
                let scaled = if estimated == 0 {
                    kept
                } else {
                    (kept as f64 * ex.billed.prompt_tokens as f64 / estimated as f64).round() as u64
                };
                build(ex, m, &sizes, scaled, *layout, &volatile, called)
            } else {
                build(ex, m, &sizes, preamble, *layout, &volatile, &[])
            };
            let key = match keying {
                Keying::AsSent => own_key,
                Keying::PerConversation => conversation_key,
            };
            let store = self.variant_stores[v].store(key);
            let s = predict(m, store, &b, now_ms, likely_hit(m));
            self.variant_usd[v] += m.input_usd(s.read, s.written, s.uncached);
        }

        let compared = compare(ex, m, &split);
        let current = causes::Current {
            ex,
            m,
            items: &base.items,
            breakpoints: &base.breakpoints,
            time,
            billed_read: compared.billed.cache_read_tokens,
            billed_prompt: ex.billed.prompt_tokens,
            redact: self.opts.redact,
        };
        let shares = causes::attribute(prev.map(|c| &c.prev), &current);
        let mut call_causes = priced(shares, m, &compared);
        if machine > 0 {
            say_routed(&mut call_causes, m, machine, own_key.is_some());
        }
        let Compared {
            billed,
            predicted,
            agrees,
            ..
        } = compared;
        let volatile_next = with_changed_system_blocks(volatile, &call_causes);
        let prev = causes::remember(ex, m, base.items, &base.breakpoints, time, volatile_next);
        let model_id = m.model.id.clone();
        self.conversations.insert(key, Conversation { prev });
        self.out.billed_usd += billed.cost_usd;
        self.out.predicted_usd += predicted.cost_usd;
        self.out.calls.push(CallExplanation {
            call: self.out.calls.len() + 1,
            at: ex.at.clone(),
            conversation: number,
            time_s: time - self.threads.t0.unwrap_or(time),
            model: model_id,
            api: ex.api.as_str(),
            regions: ex.regions.len(),
            prompt_tokens: ex.billed.prompt_tokens,
            billed,
            predicted,
            agrees,
            causes: call_causes,
        });
        self.forget_old(time);
    }

    /// Drops conversations idle past every TTL and expired cache entries (bounded memory).
    fn forget_old(&mut self, now: f64) {
        if !self.threads.sweep(now) {
            return;
        }
        self.conversations
            .retain(|_, c| now - c.prev.time < CONVERSATION_MEMORY_S);
        let ms = (now.max(0.0) * 1000.0) as u64;
        self.store.sweep(ms);
        for s in &mut self.variant_stores {
            s.sweep(ms);
        }
    }

    /// The explanation of everything read.
    pub(crate) fn finish(mut self) -> Explanation {
        self.out.conversations = self.threads.next;
        let variant_usd: Vec<(&'static str, f64)> = VARIANTS
            .iter()
            .map(|(n, _, _)| *n)
            .zip(self.variant_usd.iter().copied())
            .filter(|(n, _)| *n != "drop_unused_tools" || self.called.is_some())
            .collect();
        summary::summarise(&mut self.out, &variant_usd, self.base_input_usd);
        self.out.tool_blocks = self.calibration.samples();
        self.out
    }
}

/// A call's bill set against its prediction.
struct Compared {
    billed: CallBuckets,
    predicted: CallBuckets,
    /// Read and write within 1% of the prompt or 8 tokens.
    agrees: bool,
    /// What the call paid per token it did not read, less a read.
    unread_usd_per_token: f64,
    /// Tokens within which prediction and bill agree.
    tolerance: u64,
}

/// The billed and predicted buckets of a call and whether they agree.
fn compare(ex: &Exchange, m: &ModelRules, split: &Split) -> Compared {
    let b = &ex.billed;
    let output_usd = m.model.output_usd(b.output_tokens as f64);
    // OpenAI and Gemini usage reports reads only: the tokens it bills as input include the writes,
    // which are taken from the prediction (at most what the usage leaves).
    let (mut uncached, mut w5, w1h) = (
        b.uncached_tokens,
        b.cache_write_5m_tokens,
        b.cache_write_1h_tokens,
    );
    if ex.api != Api::AnthropicMessages {
        w5 = split.written_total().min(uncached);
        uncached -= w5;
    }
    let billed = CallBuckets {
        uncached_tokens: uncached,
        cache_write_tokens: w5 + w1h,
        cache_read_tokens: b.cache_read_tokens,
        cost_usd: m.input_usd(b.cache_read_tokens, [w5, w1h, 0], uncached) + output_usd,
    };
    let predicted = CallBuckets {
        uncached_tokens: split.uncached,
        cache_write_tokens: split.written_total(),
        cache_read_tokens: split.read,
        cost_usd: m.input_usd(split.read, split.written, split.uncached) + output_usd,
    };
    let tol = (b.prompt_tokens / 100).max(8);
    let agrees = predicted
        .cache_read_tokens
        .abs_diff(billed.cache_read_tokens)
        <= tol
        && predicted
            .cache_write_tokens
            .abs_diff(billed.cache_write_tokens)
            <= tol;
    let unread = uncached + w5 + w1h;
    let unread_usd_per_token = if unread == 0 {
        0.0
    } else {
        let paid = m.input_usd(0, [w5, w1h, 0], uncached) / unread as f64;
        (paid - m.read_multiplier * m.input_usd).max(0.0)
    };
    Compared {
        billed,
        predicted,
        agrees,
        unread_usd_per_token,
        tolerance: tol,
    }
}

/// The causes priced, with `unexplained` added where prediction and bill disagree (unless a
/// best-effort cache's miss on a stable prefix, `provider_miss`, already says why). A token not
/// read costs what the call paid for its unread tokens, per token, less a read.
fn priced(mut shares: Vec<causes::Share>, m: &ModelRules, c: &Compared) -> Vec<CallCause> {
    let (billed, predicted, agrees) = (&c.billed, &c.predicted, c.agrees);
    let per_token = c.unread_usd_per_token;
    // Where prediction and bill agree, a span within the tolerance is the provider's framing or the
    // estimate's rounding (region sizes of a real trace are scaled to its bill), not a miss.
    if agrees {
        shares.retain(|s| s.tokens > c.tolerance);
    }
    let read_more = predicted.cache_read_tokens < billed.cache_read_tokens;
    if !agrees {
        let labelled = !read_more
            && m.mode() == Mode::Implicit
            && shares.iter().any(|s| s.cause == "provider_miss");
        if !labelled {
            shares.push(causes::Share {
                cause: "unexplained",
                tokens: predicted
                    .cache_read_tokens
                    .abs_diff(billed.cache_read_tokens)
                    .max(
                        predicted
                            .cache_write_tokens
                            .abs_diff(billed.cache_write_tokens),
                    ),
                detail: format!(
                    "predicted read {} write {}, billed read {} write {}",
                    predicted.cache_read_tokens,
                    predicted.cache_write_tokens,
                    billed.cache_read_tokens,
                    billed.cache_write_tokens
                ),
            });
        }
    }
    shares
        .into_iter()
        .map(|s| CallCause {
            cause: s.cause,
            tokens: s.tokens,
            // A read pcsim did not expect lost nothing.
            usd: if s.cause == "unexplained" && read_more {
                0.0
            } else {
                s.tokens as f64 * per_token
            },
            detail: s.detail,
        })
        .collect()
}

/// `N - 1` of a detail `system block N ...`.
fn system_block_of(detail: &str) -> Option<usize> {
    let rest = detail.strip_prefix("system block ")?;
    let n: usize = rest.split(' ').next()?.parse().ok()?;
    n.checked_sub(1)
}

/// The engine's bill of a built prompt against `store`; `hit_allowed` is false when a best-effort
/// cache misses by chance.
fn predict(
    m: &ModelRules,
    store: &mut CacheStore,
    b: &Built,
    now_ms: u64,
    hit_allowed: bool,
) -> Split {
    predict_routed(m, store, b, now_ms, hit_allowed).0
}

/// [`predict`], and the machine the routing model sent the call to (0: the prefix's first; more:
/// the call overflowed, its prefix past the model's `routing_rpm_per_prefix` in the last minute).
fn predict_routed(
    m: &ModelRules,
    store: &mut CacheStore,
    b: &Built,
    now_ms: u64,
    hit_allowed: bool,
) -> (Split, u32) {
    let routed = |store: &mut CacheStore| match routing_rpm(m) {
        Some(rpm) => store.route(routing_key(&b.prompt), now_ms, rpm),
        None => 0,
    };
    match (m.mode(), &m.params) {
        (Mode::None, _) | (_, None) => (Split::uncached_only(b.prompt.tokens()), 0),
        (Mode::Explicit, Some(p)) => {
            let machine = routed(store);
            let salt = machine_salt(machine);
            let split = explicit_call(
                store,
                &b.prompt,
                &b.breakpoints,
                p,
                now_ms,
                salt,
                usize::MAX,
            );
            (split, machine)
        }
        (Mode::Automatic | Mode::Implicit, Some(p)) => {
            let ttl = m
                .resolved
                .default_tier
                .as_ref()
                .map_or(300_000, |t| t.ttl_ms);
            let machine = routed(store);
            let salt = machine_salt(machine);
            let split = automatic_call(store, &b.prompt, p, ttl, now_ms, hit_allowed, salt);
            (split, machine)
        }
    }
}

/// Requests per minute per routing key (prefix and `prompt_cache_key`) above which the model's
/// provider overflows requests to other machines (the catalog's `routing_rpm_per_prefix`).
fn routing_rpm(m: &ModelRules) -> Option<f64> {
    m.rules()
        .and_then(|r| r.routing_rpm_per_prefix.as_ref())
        .map(|r| r.value)
}

/// The routing model sent the call past its prefix's first machine (`machine` counts from 0): the
/// call's `provider_miss` causes say which machine and why.
fn say_routed(causes: &mut [CallCause], m: &ModelRules, machine: u32, keyed: bool) {
    let rpm = routing_rpm(m).unwrap_or(0.0);
    for c in causes.iter_mut().filter(|c| c.cause == "provider_miss") {
        c.detail.push_str(&format!(
            "; routed to machine {} of its prefix{}: over the ~{rpm} requests a minute one machine takes",
            machine + 1,
            if keyed { " and key" } else { "" },
        ));
    }
}

/// The system blocks known to change between calls: `volatile` and those a `system_changed` cause
/// of this call names (the `move_volatile_system` fix moves them after the last breakpoint).
fn with_changed_system_blocks(mut volatile: Vec<usize>, causes: &[CallCause]) -> Vec<usize> {
    for c in causes.iter().filter(|c| c.cause == "system_changed") {
        if let Some(i) = system_block_of(&c.detail) {
            if !volatile.contains(&i) {
                volatile.push(i);
            }
        }
    }
    volatile
}

/// A best-effort cache's most likely outcome: a hit when its hit probability is at least one half.
fn likely_hit(m: &ModelRules) -> bool {
    m.mode() != Mode::Implicit
        || m.rules()
            .and_then(|r| r.hit_probability.as_ref())
            .is_none_or(|p| p.value >= 0.5)
}

/// Explains trace files and folders (see the module docs).
pub fn explain_paths(
    catalog: &Catalog,
    paths: &[PathBuf],
    opts: ExplainOptions,
) -> Result<Explanation> {
    let walked = crate::input::walk::input_files(paths, &crate::input::trace::TRACE_EXTENSIONS)?;
    let mut e = Explainer::new(catalog, opts)?;
    // Links and special files the walk did not follow or open are skipped records, with the reason.
    for (path, reason) in walked.left_out {
        e.item(TraceItem::Skipped(SkippedRecord {
            at: path.display().to_string(),
            reason: reason.to_string(),
        }));
    }
    e.survey(&walked.files)?;
    for f in &walked.files {
        e.file(f)?;
    }
    Ok(e.finish())
}

/// Explains one trace from any reader (a bench or a library caller); `origin` names it.
pub fn explain_reader(
    catalog: &Catalog,
    input: impl std::io::Read,
    origin: &str,
    opts: ExplainOptions,
) -> Result<Explanation> {
    let mut e = Explainer::new(catalog, opts)?;
    e.out.files.push(origin.to_string());
    let bytes = crate::input::trace::read_trace(input, origin, &mut |item| e.item(item))?;
    e.out.bytes += bytes;
    Ok(e.finish())
}

#[cfg(test)]
mod tests;
