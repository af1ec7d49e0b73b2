//! The discrete-event engine: sessions issue calls at simulated times; calls are processed in time
//! order against a cache store, and each call is billed.

pub mod cache;
pub mod prompt;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::billing::{CallBill, PriceSheet};
use crate::catalog::{ModelSpec, ToolChangeRule};
use crate::hash::{chain, fnv1a};
use crate::scenario::{Arrival, Scenario, MAX_TOKENS_PER_MESSAGE};
use crate::strategy::{Anchor, Mode, ResolvedStrategy};
use crate::tokens::ToolRendering;
use crate::tools::Tool;
use cache::{automatic_call, explicit_call, CacheStore, PlacedBreakpoint, RuleParams, Split};
use prompt::{Prompt, Segment};

/// Tokens of the notice that withdraws one tool under the `append` rule (assumed: a short
/// `tool_removal` block naming the tool).
pub const REMOVAL_NOTICE_TOKENS: u64 = 12;

/// How a simulation of one (model, strategy) is set up.
#[derive(Debug, Clone)]
pub struct SimSetup<'a> {
    /// The model.
    pub model: &'a ModelSpec,
    /// The resolved strategy.
    pub strategy: &'a ResolvedStrategy,
    /// Prices derived from both.
    pub prices: PriceSheet,
    /// Names of the write tiers, by slot.
    pub tier_names: Vec<String>,
    params: Option<RuleParams>,
    hit_probability: f64,
}

impl<'a> SimSetup<'a> {
    /// Prepares a simulation; `first_token_seconds` delays the visibility of writes.
    pub fn new(
        model: &'a ModelSpec,
        strategy: &'a ResolvedStrategy,
        first_token_seconds: f64,
    ) -> Self {
        let mut prices = PriceSheet::uncached(model);
        let mut tier_names = Vec::new();
        let mut params = None;
        let mut hit_probability = 1.0;
        if let Some(rules) = &strategy.rules {
            prices.read_multiplier = rules.read_multiplier.value;
            let storage = rules
                .storage_usd_per_mtok_hour
                .as_ref()
                .map_or(0.0, |s| s.value / 1e6);
            let slots: Vec<_> = match strategy.mode {
                Mode::Explicit => strategy.breakpoints.iter().collect(),
                _ => strategy.default_tier.iter().collect(),
            };
            for bp in slots {
                if !tier_names.contains(&bp.tier) {
                    let slot = tier_names.len();
                    tier_names.push(bp.tier.clone());
                    prices.write_multipliers[slot] = bp.write_multiplier;
                    prices.storage_per_written_token[slot] =
                        storage * bp.ttl_ms as f64 / 3_600_000.0;
                }
            }
            params = Some(RuleParams {
                min_tokens: rules.min_tokens.value,
                granularity: rules.granularity.value.max(1),
                refresh_on_hit: rules.refresh_on_hit.value,
                lookback: rules
                    .lookback_blocks
                    .as_ref()
                    .map_or(usize::MAX, |l| l.value as usize),
                avail_delay_ms: crate::strategy::seconds_to_ms(first_token_seconds),
            });
            if strategy.mode == Mode::Implicit {
                hit_probability = rules.hit_probability.as_ref().map_or(1.0, |p| p.value);
            }
        }
        SimSetup {
            model,
            strategy,
            prices,
            tier_names,
            params,
            hit_probability,
        }
    }
}

/// Per-session state.
struct Session {
    index: u32,
    uid: u64,
    rng: ChaCha8Rng,
    next_call: u32,
    /// The tool list as the client currently sends it.
    tools: Vec<Tool>,
    /// The tool block actually rendered in the prompt (frozen under the `append` rule).
    block: Vec<Tool>,
    /// History segments (messages) in order.
    history: Vec<Segment>,
    /// How many history segments are already in `prompt`.
    pushed: usize,
    prompt: Prompt,
    last_output: u64,
}

/// Caches rendered tool sizes by content so events and sessions do not re-measure.
struct ToolSizer<'r> {
    rendering: &'r ToolRendering,
    sizes: HashMap<u64, u64>,
}

impl ToolSizer<'_> {
    fn tokens(&mut self, t: &Tool) -> (u64, u64) {
        let h = t.content_hash();
        let r = self.rendering;
        let n = *self
            .sizes
            .entry(h)
            .or_insert_with(|| r.tool_tokens(&t.metrics()));
        (n, h)
    }
}

fn session_rng(seed: u64, run: u64, session: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(chain(chain(seed, run.wrapping_add(0x5eed)), session))
}

/// One token draw, clamped to [`MAX_TOKENS_PER_MESSAGE`]: heavy-tailed distributions can draw huge
/// values, and the clamp keeps every token sum of a run far from overflow.
fn draw(q: &crate::quantity::Quantity, rng: &mut ChaCha8Rng) -> u64 {
    let x = q.sample(rng).round();
    if x.is_nan() {
        return 0;
    }
    (x as u64).min(MAX_TOKENS_PER_MESSAGE)
}

/// Simulates one run of a scenario for one (model, strategy) and hands every billed call, in time
/// order, to `sink`. Draws depend only on (seed, run, session), so every model and strategy sees the
/// same sessions. Returns the total dollars.
pub fn simulate_run(
    scenario: &Scenario,
    setup: &SimSetup,
    run: u64,
    mut sink: impl FnMut(&CallBill),
) -> f64 {
    let model = setup.model;
    let strategy = setup.strategy;
    let mut sizer = ToolSizer {
        rendering: model.rendering(),
        sizes: HashMap::new(),
    };
    let family_id = fnv1a(model.family.as_bytes());
    let system_id = chain(fnv1a(b"system"), scenario.system_tokens);

    // Session start times.
    let mut arrivals_rng =
        ChaCha8Rng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xa771)));
    let mut starts = Vec::with_capacity(scenario.sessions);
    let mut t = 0.0f64;
    for i in 0..scenario.sessions {
        match scenario.arrival {
            Arrival::Every(e) => starts.push(i as f64 * e),
            Arrival::Poisson(per_hour) => {
                if i > 0 {
                    let u: f64 = arrivals_rng.gen_range(f64::EPSILON..1.0);
                    t += -u.ln() * 3600.0 / per_hour;
                }
                starts.push(t);
            }
        }
    }

    let mut sessions: Vec<Session> = (0..scenario.sessions)
        .map(|i| Session {
            index: i as u32 + 1,
            uid: chain(chain(scenario.seed, run), i as u64 + 1),
            rng: session_rng(scenario.seed, run, i as u64),
            next_call: 1,
            tools: scenario.tools.clone(),
            block: scenario.tools.clone(),
            history: Vec::new(),
            pushed: 0,
            prompt: Prompt::default(),
            last_output: 0,
        })
        .collect();
    let mut shared_store = CacheStore::new();
    let mut own_stores: Vec<CacheStore> = if scenario.shared_cache {
        Vec::new()
    } else {
        (0..scenario.sessions).map(|_| CacheStore::new()).collect()
    };
    let mut cache_rng = ChaCha8Rng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xcace)));

    let mut queue: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    for (i, s) in starts.iter().enumerate() {
        queue.push(Reverse((crate::strategy::seconds_to_ms(*s), i as u32)));
    }
    let mut cumulative = 0.0;
    let mut calls_done: u64 = 0;
    let mut bps: Vec<PlacedBreakpoint> = Vec::with_capacity(3);

    while let Some(Reverse((now, si))) = queue.pop() {
        let s = &mut sessions[si as usize];
        let call = s.next_call;
        // Conversation growth and tool-list events before this call.
        if call == 1 {
            s.history.push(Segment {
                tokens: draw(&scenario.first_user_tokens, &mut s.rng),
                id: chain(s.uid, 1),
            });
        } else {
            let result = draw(&scenario.tool_result_tokens, &mut s.rng)
                + draw(&scenario.user_tokens, &mut s.rng);
            let k = u64::from(call);
            s.history.push(Segment {
                tokens: s.last_output,
                id: chain(s.uid, k * 4 + 2),
            });
            s.history.push(Segment {
                tokens: result,
                id: chain(s.uid, k * 4 + 3),
            });
        }
        let mut tools_changed = false;
        for e in scenario
            .events
            .iter()
            .filter(|e| e.at_call == call as usize)
        {
            let next = e.apply(&s.tools);
            if strategy.tool_change == ToolChangeRule::Append && strategy.rules.is_some() {
                let added: u64 = next
                    .iter()
                    .filter(|t| !s.tools.iter().any(|o| o.name == t.name && o == *t))
                    .map(|t| sizer.tokens(t).0)
                    .sum();
                let removed = s
                    .tools
                    .iter()
                    .filter(|o| !next.iter().any(|t| t.name == o.name))
                    .count() as u64;
                s.history.push(Segment {
                    tokens: added + removed * REMOVAL_NOTICE_TOKENS,
                    id: chain(s.uid, u64::from(call) * 4 + 1),
                });
            } else {
                s.block = next.clone();
                tools_changed = true;
            }
            s.tools = next;
        }
        if call == 1 || tools_changed {
            s.prompt.clear();
            let rule = strategy.tool_change;
            let list_hash = s
                .block
                .iter()
                .fold(fnv1a(b"tools"), |h, t| chain(h, t.content_hash()));
            let salt = if rule == ToolChangeRule::Invalidate {
                list_hash
            } else {
                0
            };
            s.prompt.push(Segment {
                tokens: sizer.rendering.preamble(s.block.len()),
                id: chain(chain(family_id, salt), 1),
            });
            for tool in &s.block {
                let (tokens, h) = sizer.tokens(tool);
                s.prompt.push(Segment {
                    tokens,
                    id: chain(salt, h),
                });
            }
            s.prompt.mark_tools_end();
            s.prompt.push(Segment {
                tokens: scenario.system_tokens,
                id: system_id,
            });
            s.prompt.mark_system_end();
            s.pushed = 0;
        }
        for seg in &s.history[s.pushed..] {
            s.prompt.push(*seg);
        }
        s.pushed = s.history.len();
        let tool_block_tokens = s.prompt.tools_end.map_or(0, |i| s.prompt.cum_tokens[i]);

        let store = if scenario.shared_cache {
            &mut shared_store
        } else {
            &mut own_stores[si as usize]
        };
        let split = match (strategy.mode, &setup.params) {
            (Mode::None, _) | (_, None) => Split::uncached_only(s.prompt.tokens()),
            (Mode::Explicit, Some(p)) => {
                bps.clear();
                for rb in &strategy.breakpoints {
                    let boundary = match rb.anchor {
                        Anchor::Tools => s.prompt.tools_end,
                        Anchor::System => s.prompt.system_end,
                        Anchor::Last => s.prompt.last_boundary(),
                    };
                    if let Some(boundary) = boundary {
                        let slot = setup
                            .tier_names
                            .iter()
                            .position(|n| *n == rb.tier)
                            .unwrap_or(0);
                        // Two anchors on one boundary (e.g. no system prompt) are one breakpoint.
                        if !bps.iter().any(|b| b.boundary == boundary) {
                            bps.push(PlacedBreakpoint {
                                boundary,
                                slot,
                                ttl_ms: rb.ttl_ms,
                            });
                        }
                    }
                }
                explicit_call(store, &s.prompt, &bps, p, now)
            }
            (Mode::Automatic | Mode::Implicit, Some(p)) => {
                let hit_allowed =
                    setup.hit_probability >= 1.0 || cache_rng.gen::<f64>() < setup.hit_probability;
                let ttl = strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms);
                automatic_call(store, &s.prompt, p, ttl, now, hit_allowed)
            }
        };
        let output = draw(&scenario.output_tokens, &mut s.rng);
        let cost = setup.prices.call_usd(&split, output);
        cumulative += cost;
        sink(&CallBill {
            session: s.index,
            call,
            time_s: now as f64 / 1000.0,
            prompt_tokens: split.prompt,
            uncached_tokens: split.uncached,
            cache_write_tokens: split.written_total(),
            cache_read_tokens: split.read,
            output_tokens: output,
            tool_block_tokens,
            cost_usd: cost,
            storage_usd: setup.prices.storage_usd(&split),
            cumulative_usd: cumulative,
            written_by_slot: split.written,
        });
        s.last_output = output;
        s.next_call += 1;
        if (s.next_call as usize) <= scenario.calls {
            let gap = crate::strategy::seconds_to_ms(scenario.gap_seconds.sample(&mut s.rng));
            queue.push(Reverse((now.saturating_add(gap), si)));
        } else {
            // The session is over: free its memory.
            s.history = Vec::new();
            s.prompt = Prompt::default();
        }
        calls_done += 1;
        if calls_done % 65_536 == 0 {
            shared_store.sweep(now);
        }
    }
    cumulative
}

/// All bills of one run, in time order.
pub fn simulate_collect(scenario: &Scenario, setup: &SimSetup, run: u64) -> Vec<CallBill> {
    let mut out = Vec::with_capacity(scenario.calls * scenario.sessions);
    simulate_run(scenario, setup, run, |b| out.push(*b));
    out
}
