//! The re-simulation: the logged prompts grown conversation by conversation and billed in time
//! order against one cache with pcsim's caching rules.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::base::hash::{chain, fnv1a};
use crate::error::{Error, Result};
use crate::model::catalog::ModelSpec;
use crate::model::strategy::{seconds_to_ms, Anchor, Strategy};
use crate::sim::engine::cache::CacheStore;
use crate::sim::engine::prompt::{Prompt, Segment};
use crate::sim::engine::{split_for_conversation, ConversationPlace, SimSetup};

use super::{
    conversations, Buckets, CallComparison, LoggedCall, LoggedRates, ReplayOptions, ReplayResult,
    UsageLog,
};

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
    /// Boundaries of the shared prefix at the start of the prompt (0 or 1).
    head_len: usize,
    /// The cache lifetimes the conversation's latest writing call showed (a call that only reads
    /// refreshes with them).
    lifetimes: LoggedLifetimes,
}

/// The cache lifetimes a logged call's writes show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoggedLifetimes {
    /// 5-minute writes only, or none, or a format that does not say: the strategy as given.
    Default,
    /// 1-hour writes only: every breakpoint the strategy leaves untiered at 1 h.
    OneHour,
    /// Both: the prefix breakpoints (all but the last) at 1 h, the last at the default (a longer
    /// lifetime must come before a shorter one).
    PrefixOneHour,
}

impl LoggedLifetimes {
    fn of(c: &LoggedCall) -> Option<Self> {
        match (c.cache_write_5m_tokens > 0, c.cache_write_1h_tokens > 0) {
            (_, false) if c.cache_write_5m_tokens == 0 => None,
            (_, false) => Some(LoggedLifetimes::Default),
            (false, true) => Some(LoggedLifetimes::OneHour),
            (true, true) => Some(LoggedLifetimes::PrefixOneHour),
        }
    }
}

/// The strategy the log's 1-hour writes ask for: its untiered breakpoints at `1h` (all of them, or
/// all but the last), when the model has a `1h` tier and the strategy is explicit; `None` otherwise
/// (a tier the strategy names is kept as named).
fn one_hour_variant(strategy: &Strategy, model: &ModelSpec, prefix_only: bool) -> Option<Strategy> {
    use crate::model::strategy::Mode;
    let mut concrete = match strategy.mode {
        Some(_) => strategy.clone(),
        None => {
            let mut s = Strategy::parse(&model.default_strategy).ok()?;
            s.tool_changes = strategy.tool_changes.or(s.tool_changes);
            s
        }
    };
    let rules = model.cache.explicit.as_ref()?;
    if concrete.mode != Some(Mode::Explicit) || !rules.tiers.contains_key("1h") {
        return None;
    }
    let n = concrete.breakpoints.len();
    let mut changed = false;
    for (i, b) in concrete.breakpoints.iter_mut().enumerate() {
        if b.tier.is_none() && !(prefix_only && i + 1 == n) {
            b.tier = Some("1h".into());
            changed = true;
        }
    }
    changed.then_some(concrete)
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

/// Replay's random stream (best-effort cache misses), seeded from [`content_seed`] (or the given
/// seed) on its first draw: most models never draw (every hit is certain), and hashing every call
/// of the log for a seed was 5% of a replay of pcsim's own compact log. The stream drawn is the
/// same as when seeded up front.
struct SeededOnFirstDraw<'a> {
    calls: &'a [LoggedCall],
    seed: Option<u64>,
    rng: Option<ChaCha8Rng>,
}

impl SeededOnFirstDraw<'_> {
    fn rng(&mut self) -> &mut ChaCha8Rng {
        let (calls, seed) = (self.calls, self.seed);
        self.rng.get_or_insert_with(|| {
            ChaCha8Rng::seed_from_u64(seed.unwrap_or_else(|| content_seed(calls)))
        })
    }
}

impl rand::TryRng for SeededOnFirstDraw<'_> {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> std::result::Result<u32, Self::Error> {
        self.rng().try_next_u32()
    }

    fn try_next_u64(&mut self) -> std::result::Result<u64, Self::Error> {
        self.rng().try_next_u64()
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> std::result::Result<(), Self::Error> {
        self.rng().try_fill_bytes(dest)
    }
}

/// Replays a log on one model with one strategy.
// Over 120 lines: the replay loop over the log's calls in time order: every call reads and updates
// the same cache store, random stream and per-conversation state.
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
    // The log's own cache lifetimes: a call that wrote 1-hour entries is replayed with 1-hour
    // breakpoints (where the strategy leaves the tier to the model).
    let one_hour = one_hour_variant(strategy, model, false)
        .map(|s| s.resolve(model))
        .transpose()?;
    let prefix_one_hour = one_hour_variant(strategy, model, true)
        .map(|s| s.resolve(model))
        .transpose()?;
    let setup = SimSetup::new(model, &resolved, opts.first_token_seconds);
    let setup_1h = one_hour
        .as_ref()
        .map(|r| SimSetup::new(model, r, opts.first_token_seconds));
    let setup_prefix_1h = prefix_one_hour
        .as_ref()
        .map(|r| SimSetup::new(model, r, opts.first_token_seconds));
    let (conv, times) = conversations(&log.calls, opts);
    let mut order: Vec<usize> = (0..log.calls.len()).collect();
    // Calls are billed in time order (one account's cache); equal times keep log order.
    order.sort_by(|&a, &b| times[a].total_cmp(&times[b]).then(a.cmp(&b)));
    let mut store = CacheStore::new();
    let mut rng = SeededOnFirstDraw {
        calls: &log.calls,
        seed: opts.seed,
        rng: None,
    };
    // Calls billed in log order (the common case: a log is put in time order when it is read) are
    // kept as they come; otherwise they are put back in log order at the end.
    let in_order = order.iter().enumerate().all(|(n, &i)| n == i);
    let mut out: Vec<Option<CallComparison>> = if in_order {
        Vec::new()
    } else {
        vec![None; log.calls.len()]
    };
    let mut by_tier: BTreeMap<String, u64> = BTreeMap::new();
    let rates = LoggedRates::new(model);
    let conversations = conv.iter().max().map_or(0, |m| m + 1);
    // Conversations are numbered densely from 0: their states are a list, not a map.
    let mut states: Vec<Option<ConvState>> = Vec::new();
    states.resize_with(conversations, || None);
    let mut result = ReplayResult {
        model: model.id.clone(),
        strategy: resolved.name.clone(),
        conversations,
        logged: Buckets::default(),
        predicted: Buckets::default(),
        predicted_write_tokens_by_tier: BTreeMap::new(),
        calls: Vec::with_capacity(if in_order { log.calls.len() } else { 0 }),
    };
    for &i in &order {
        let c = &log.calls[i];
        let t = times[i];
        let k = conv[i];
        let p = c.prompt_tokens;
        let st = states[k].get_or_insert_with(|| ConvState {
            prompt: Prompt::default(),
            prev_prompt: 0,
            restarts: 0,
            head_len: 0,
            lifetimes: LoggedLifetimes::Default,
        });
        if let Some(l) = LoggedLifetimes::of(c) {
            st.lifetimes = l;
        }
        let setup = match st.lifetimes {
            LoggedLifetimes::Default => &setup,
            LoggedLifetimes::OneHour => setup_1h.as_ref().unwrap_or(&setup),
            LoggedLifetimes::PrefixOneHour => setup_prefix_1h.as_ref().unwrap_or(&setup),
        };
        let fresh = st.prompt.tokens() == 0 || p < st.prev_prompt;
        if fresh {
            // A new conversation (or a restart after compaction): only the fixed prefix survives.
            st.restarts += 1;
            st.prompt.clear();
            st.head_len = 0;
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
            st.head_len = 1;
            st.prompt.push(Segment {
                tokens: p - opts.prefix_tokens,
                id: seg.id,
            });
        } else {
            st.prompt.push(seg);
        }
        st.prev_prompt = p;
        // The conversation's chain refreshed through its lease: O(1) per call rather than a walk
        // over every earlier call (replays of 100,000 calls were quadratic). Same bills.
        let place = ConversationPlace {
            head_len: st.head_len,
            conversation: conv_id,
            fresh_from: if fresh {
                st.head_len
            } else {
                st.prompt.cum_hash.len() - 1
            },
        };
        let split = split_for_conversation(
            setup,
            &mut store,
            &st.prompt,
            seconds_to_ms(t),
            &mut rng,
            &place,
        );
        for (slot, n) in split.written.iter().enumerate() {
            if *n > 0 {
                let name = setup.tier_names.get(slot).map_or("default", String::as_str);
                // The tier's name is copied once, not per call.
                match by_tier.get_mut(name) {
                    Some(total) => *total += n,
                    None => {
                        by_tier.insert(name.to_string(), *n);
                    }
                }
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
            cost_usd: rates.usd(c),
        };
        let compared = CallComparison {
            call: i + 1,
            conversation: k + 1,
            time_s: t,
            prompt_tokens: p,
            output_tokens: c.output_tokens,
            logged,
            predicted,
        };
        if in_order {
            result.calls.push(compared);
        } else {
            out[i] = Some(compared);
        }
    }
    // Totals summed in log order, so a file's figures do not depend on how calls interleave.
    if !in_order {
        result.calls = out.into_iter().flatten().collect();
    }
    for c in &result.calls {
        result.logged.add(&c.logged);
        result.predicted.add(&c.predicted);
    }
    result.predicted_write_tokens_by_tier = by_tier;
    Ok(result)
}
