//! A scenario made ready for one (model, strategy), and the per-call step that applies one call of a
//! session to that member's prompt, cache and bill.

use std::collections::HashMap;

use rand::RngExt;

use super::cache::{automatic_call_with_leases, explicit_call_with_own, Split};
use super::keys::{machine_salt, routing_key, segment_id};
use super::prompt::{Prompt, Segment};
use super::settings;
use super::setup::{place_breakpoints, BreakpointPlan, Placed, SimSetup};
use super::workspace::{session_leases, Lane, LaneCache, MemberState};
use crate::base::hash::{chain, fnv1a};
use crate::input::scenario::{PromptCacheKey, Scenario};
use crate::model::catalog::ToolChangeRule;
use crate::model::strategy::{Anchor, Mode};
use crate::model::tokens::ListCounter;
use crate::model::tools::Tool;
use crate::sim::billing::CallBill;

#[cfg(test)]
thread_local! {
    /// Prompts rebuilt on this thread, plus the history segments re-appended to them (tests count
    /// prompt work).
    pub(crate) static REBUILT_SEGMENTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Tokens of the notice that withdraws one tool under the `append` rule (assumed: a short
/// `tool_removal` block naming the tool).
pub const REMOVAL_NOTICE_TOKENS: u64 = 12;

/// A tool-list event as the engine applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EventEffect {
    /// The change travels as a message of this many tokens after the cached prefix (`append`).
    Append(u64),
    /// The tool block becomes this version (the prompt is rebuilt).
    Block(usize),
}

/// A scenario made ready for one (model, strategy): tool blocks rendered and hashed once, events
/// resolved to their effect, so the per-call loop never touches a tool definition.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) setup: &'a SimSetup<'a>,
    /// The prompt head (tool preamble, tools, system prompt) of each tool-list version; 0 = initial.
    pub(super) bases: Vec<Prompt>,
    /// Tokens of the tool block of each version.
    pub(super) block_tokens: Vec<u64>,
    /// (call number, effect), in the scenario's event order.
    pub(super) events: Vec<(u32, EventEffect)>,
    /// Whether a session's prompt is ever rebuilt after its first call (a tool-block event), so
    /// its message history must be kept to re-append.
    pub(super) keeps_history: bool,
    /// The explicit breakpoints of each head that do not move during a session (tools and system
    /// anchors), with the plan's `last` anchor, when that is its only moving breakpoint and comes
    /// last (always, as breakpoints are in prompt order; otherwise every call places them all).
    pub(super) head_breakpoints: Option<(Vec<Placed>, Option<BreakpointPlan>)>,
    /// TTL of automatic writes.
    pub(super) default_ttl: u64,
    /// Whether writes are stored: a best-effort cache that never hits needs no store (nothing
    /// written can be read).
    pub(super) store_writes: bool,
    /// Whether heads of different tool lists share no entries (every tool-change rule but
    /// `preserve_prefix`), so a head's chain has a lease of its own.
    pub(super) lease_heads: bool,
    /// Whether each session has a cache of its own: sessions do not share one account's cache,
    /// or each sets its own `prompt_cache_key` on a model that routes by it.
    pub(super) private_caches: bool,
}

impl<'a> Prepared<'a> {
    /// Renders and hashes every tool list the scenario goes through.
    pub fn new(scenario: &'a Scenario, setup: &'a SimSetup<'a>) -> Self {
        Self::with_counter(
            scenario,
            setup,
            &mut ListCounter::new(setup.model.rendering()),
        )
    }

    /// [`Self::new`] with the tool counts of `counter` (see [`super::ToolCounts`]), which must
    /// count with the setup model's rendering: simulations of models that render alike share one,
    /// so each tool and list is counted once.
    // Over 120 lines: prepares every tool-list version of a scenario for one member (tools measured
    // once by address, markers, bases per event); the closures share the measurement cache.
    pub(crate) fn with_counter(
        scenario: &'a Scenario,
        setup: &'a SimSetup<'a>,
        counter: &mut ListCounter,
    ) -> Self {
        let model = setup.model;
        let strategy = setup.strategy;
        debug_assert!(counter.rendering() == model.rendering());
        let family_id = fnv1a(model.family.as_bytes());
        let system_id = chain(fnv1a(b"system"), scenario.system_tokens);
        // Every tool of every list lives in the scenario: measured (hashed and counted) once per
        // definition, found again by address, so an event costs the pointers of its list.
        let mut by_address: HashMap<*const Tool, (u64, u64)> = HashMap::new();
        let mut measure = |t: &Tool, counter: &mut ListCounter| -> (u64, u64) {
            *by_address.entry(t as *const Tool).or_insert_with(|| {
                let h = t.content_hash();
                (counter.tool_tokens(t, h), h)
            })
        };
        // The list's own tokens (wrapper, preamble), once per distinct list, from the counts of
        // its tools and neighbouring pairs (`ListCounter`): an event costs a lookup per tool.
        let base_of = |list: &[&Tool],
                       measure: &mut dyn FnMut(&Tool, &mut ListCounter) -> (u64, u64),
                       counter: &mut ListCounter,
                       markers: &settings::Markers| {
            let measured: Vec<(u64, u64)> = list.iter().map(|t| measure(t, counter)).collect();
            let list_hash = measured
                .iter()
                .fold(fnv1a(b"tools"), |h, &(_, th)| chain(h, th));
            let salt = if strategy.tool_change == ToolChangeRule::Invalidate {
                list_hash
            } else {
                0
            };
            let tools_sum: u64 = measured.iter().map(|&(n, _)| n).sum();
            let hashes: Vec<u64> = measured.iter().map(|&(_, h)| h).collect();
            let preamble = counter
                .block(list, &hashes, tools_sum)
                .saturating_sub(tools_sum);
            let mut p = Prompt::default();
            markers.push(settings::Part::Tools, &mut p);
            p.push(Segment {
                tokens: preamble,
                id: chain(chain(family_id, salt), 1),
            });
            for &(tokens, h) in &measured {
                p.push(Segment {
                    tokens,
                    id: chain(salt, h),
                });
            }
            p.mark_tools_end();
            markers.push(settings::Part::System, &mut p);
            p.push(Segment {
                tokens: scenario.system_tokens,
                id: system_id,
            });
            p.mark_system_end();
            markers.push(settings::Part::Messages, &mut p);
            p
        };
        let mut markers = settings::Markers::default();
        let mut current: Vec<&Tool> = scenario.tools.iter().collect();
        let mut bases = vec![base_of(&current, &mut measure, counter, &markers)];
        let mut events = Vec::with_capacity(scenario.events.len() + scenario.setting_events.len());
        let append = strategy.tool_change == ToolChangeRule::Append && strategy.rules.is_some();
        // The tool list of the latest head (in `append` mode the initial one for good).
        let mut head_list: Vec<&Tool> = current.clone();
        for step in settings::in_call_order(scenario) {
            let e = match step {
                settings::Step::Tools(e) => e,
                settings::Step::Setting(c) => {
                    // A documented invalidation makes a new head: the same tools and system
                    // prompt, with the invalidated part (and all after it) new to the cache.
                    let part = strategy
                        .rules
                        .as_ref()
                        .and_then(|r| r.invalidated_by(&c.change))
                        .and_then(settings::Part::parse);
                    if let Some(part) = part {
                        markers.bump(part);
                        bases.push(base_of(&head_list, &mut measure, counter, &markers));
                        events.push((c.at_call as u32, EventEffect::Block(bases.len() - 1)));
                    }
                    continue;
                }
            };
            let next = e.apply_refs(&current);
            let effect = if append {
                let before: HashMap<&str, &Tool> =
                    current.iter().map(|t| (t.name.as_str(), *t)).collect();
                let after: std::collections::HashSet<&str> =
                    next.iter().map(|t| t.name.as_str()).collect();
                let added: u64 = next
                    .iter()
                    .filter(|t| {
                        before
                            .get(t.name.as_str())
                            .is_none_or(|o| !std::ptr::eq(*o, **t) && *o != **t)
                    })
                    .map(|t| measure(t, counter).0)
                    .sum();
                let removed = current
                    .iter()
                    .filter(|o| !after.contains(o.name.as_str()))
                    .count() as u64;
                EventEffect::Append(added + removed * REMOVAL_NOTICE_TOKENS)
            } else {
                bases.push(base_of(&next, &mut measure, counter, &markers));
                head_list.clone_from(&next);
                EventEffect::Block(bases.len() - 1)
            };
            events.push((e.at_call as u32, effect));
            current = next;
        }
        let block_tokens = bases
            .iter()
            .map(|b| b.tools_end.map_or(0, |i| b.cum_tokens[i]))
            .collect();
        let keeps_history = events
            .iter()
            .any(|(_, e)| matches!(e, EventEffect::Block(_)));
        // Breakpoints are in prompt order, so a `last` anchor comes last; the head's anchors are
        // then placed once per head, and each call only adds its last boundary.
        let plan = &setup.bp_plan;
        let moving = plan.iter().filter(|b| b.anchor == Anchor::Last).count();
        let head_breakpoints = (moving == 0
            || (moving == 1 && plan.last().is_some_and(|b| b.anchor == Anchor::Last)))
        .then(|| {
            let fixed = &plan[..plan.len() - moving];
            let heads = bases.iter().map(|b| place_breakpoints(fixed, b)).collect();
            (
                heads,
                plan.last().copied().filter(|b| b.anchor == Anchor::Last),
            )
        });
        Prepared {
            scenario,
            setup,
            bases,
            block_tokens,
            events,
            keeps_history,
            head_breakpoints,
            default_ttl: strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms),
            store_writes: setup.hit_probability > 0.0,
            lease_heads: strategy.tool_change != ToolChangeRule::PreservePrefix,
            private_caches: private_caches(scenario, setup),
        }
    }

    /// Simulated calls per run (every session makes every call).
    pub fn calls_per_run(&self) -> usize {
        self.scenario.calls * self.scenario.sessions
    }

    /// Applies call `call` of a session, made at `now` and growing the conversation by `growth`,
    /// to this member's prompt of the session (`lane`), its cache and its bill.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    // Over 120 lines: the engine's per-call step, inlined into the hot loop (`#[inline(always)]`):
    // one call's prompt, cache lookups and bill, kept together as the simulation's core.
    pub(super) fn step(
        &self,
        lane: &mut Lane,
        st: &mut MemberState,
        session: (u32, u64),
        si: usize,
        now: u64,
        call: u32,
        growth: &[Segment],
        output: u64,
    ) -> CallBill {
        let fresh_from = self.advance(lane, session.1, call, growth);
        self.bill(
            (lane.block, &lane.prompt),
            &mut lane.cache,
            st,
            session,
            si,
            now,
            call,
            fresh_from,
            output,
        )
    }

    /// Whether this member's prompts are those of `other` call by call (the same scenario, heads
    /// and events: the placements of one model, for instance), so one prompt per session can serve
    /// both ([`Prepared::advance`] on one, [`Prepared::bill`] on each).
    pub(super) fn same_prompts(&self, other: &Prepared) -> bool {
        std::ptr::eq(self.scenario, other.scenario)
            && self.keeps_history == other.keeps_history
            && self.events == other.events
            && self.block_tokens == other.block_tokens
            && self.bases == other.bases
    }

    /// The prompt part of [`Prepared::step`]: applies the tool-list events of call `call` of the
    /// session `uid` and its growth to the session's prompt (`lane`), rebuilding it from its head
    /// when the head changed. Returns the first boundary that is new in this call.
    #[inline(always)]
    pub(super) fn advance(
        &self,
        lane: &mut Lane,
        uid: u64,
        call: u32,
        growth: &[Segment],
    ) -> usize {
        let scenario = self.scenario;
        // Tool-list events of this call: a rebuilt head, and notices appended after the growth.
        let mut rebuild = call == 1;
        let first_event = lane.next_event;
        while let Some(&(at, effect)) = self.events.get(lane.next_event) {
            if at != call {
                break;
            }
            lane.next_event += 1;
            if let EventEffect::Block(v) = effect {
                lane.block = v;
                rebuild = true;
            }
        }
        if rebuild {
            if call == 1 && self.keeps_history {
                // Reserved when the session starts (not for every session when the run starts,
                // so memory follows the sessions in progress), once, so the loop never
                // reallocates.
                lane.history.reserve(history_capacity(scenario));
            }
            lane.prompt.clone_from(&self.bases[lane.block]);
            lane.prompt.reserve(history_capacity(scenario));
            for seg in &lane.history {
                lane.prompt.push(*seg);
            }
            #[cfg(test)]
            REBUILT_SEGMENTS.with(|n| n.set(n.get() + 1 + lane.history.len() as u64));
        }
        // Boundaries from here on carry content identities made for this call (session id and
        // call number), so no store can hold them: cache lookups start below.
        let fresh_from = lane.prompt.cum_hash.len();
        for &seg in growth {
            lane.append(seg, self.keeps_history);
        }
        for &(_, effect) in &self.events[first_event..lane.next_event] {
            if let EventEffect::Append(tokens) = effect {
                let id = segment_id(uid, u64::from(call) * 4 + 1);
                lane.append(Segment { tokens, id }, self.keeps_history);
            }
        }
        fresh_from
    }

    /// The cache part of [`Prepared::step`]: bills call `call` of a session, made at `now`, whose
    /// prompt is `prompt` on head `block` after [`Prepared::advance`] (new from boundary
    /// `fresh_from`), against this member's caching of the session (`lane`) and its state.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn bill(
        &self,
        (block, prompt): (usize, &Prompt),
        lane: &mut LaneCache,
        st: &mut MemberState,
        session: (u32, u64),
        si: usize,
        now: u64,
        call: u32,
        fresh_from: usize,
        output: u64,
    ) -> CallBill {
        let setup = self.setup;
        let strategy = setup.strategy;
        let (index, uid) = session;
        let tool_block_tokens = self.block_tokens[block];

        let store = if self.private_caches {
            &mut st.own[si]
        } else {
            &mut st.shared
        };
        let split = match (strategy.mode, &setup.params) {
            (Mode::None, _) | (_, None) => Split::uncached_only(prompt.tokens()),
            (mode, Some(p)) => {
                // Routing model: which machine's cache serves this request.
                let salt = match setup.routing_rpm {
                    Some(rpm) => machine_salt(store.route(routing_key(prompt), now, rpm)),
                    None => 0,
                };
                if mode == Mode::Explicit {
                    // Built in place and only borrowed afterwards: moving the filled struct
                    // would reread the length just written as part of a wider load, a
                    // store-forwarding stall measured at ~9% of an explicit call's time.
                    let mut bps = match &self.head_breakpoints {
                        Some((heads, _)) => heads[block],
                        None => place_breakpoints(&setup.bp_plan, prompt),
                    };
                    if let Some((_, Some(b))) = &self.head_breakpoints {
                        if let Some(boundary) = prompt.last_boundary() {
                            bps.add(boundary, b);
                        }
                    }
                    explicit_call_with_own(
                        store,
                        prompt,
                        bps.as_slice(),
                        p,
                        now,
                        salt,
                        fresh_from,
                        Some(&mut lane.own),
                        self.bases[block].cum_hash.len(),
                    )
                } else {
                    let hit_allowed = setup.hit_probability >= 1.0
                        || st.cache_rng.random::<f64>() < setup.hit_probability;
                    if self.store_writes {
                        let leases = match lane.leases {
                            Some(l) if l.block == block && l.salt == salt => l,
                            _ => {
                                let l = session_leases(
                                    store,
                                    &self.bases[block],
                                    block,
                                    uid,
                                    salt,
                                    self.lease_heads,
                                );
                                lane.leases = Some(l);
                                l
                            }
                        };
                        automatic_call_with_leases(
                            store,
                            prompt,
                            p,
                            self.default_ttl,
                            now,
                            hit_allowed,
                            salt,
                            &leases.ids,
                            fresh_from,
                            Some(&mut lane.own),
                        )
                    } else {
                        automatic_uncacheable(prompt, p)
                    }
                }
            }
        };
        let (cost, storage_usd) = setup.prices.call_and_storage_usd(&split, output);
        st.cumulative += cost;
        CallBill {
            session: index,
            call,
            time_s: now as f64 / 1000.0,
            prompt_tokens: split.prompt,
            uncached_tokens: split.uncached,
            cache_write_tokens: split.written_total(),
            cache_read_tokens: split.read,
            output_tokens: output,
            tool_block_tokens,
            cost_usd: cost,
            storage_usd,
            cumulative_usd: st.cumulative,
            // Element by element: one wide copy of the array, written a slot at a time just
            // before, stalls on store forwarding.
            written_by_slot: [split.written[0], split.written[1], split.written[2]],
        }
    }
}

/// Whether each session of `scenario` has a cache of its own on `setup`'s model: when sessions do
/// not share one account's cache (`shared_cache = false`), or when each sets its own
/// `prompt_cache_key` and the model routes requests by prefix and key (`routing_rpm_per_prefix`):
/// a session's key then sends it to machines of its own, with their own request budget, and no
/// other session's writes are there to read.
pub(super) fn private_caches(scenario: &Scenario, setup: &SimSetup) -> bool {
    !scenario.shared_cache
        || (scenario.prompt_cache_key == PromptCacheKey::PerSession && setup.routing_rpm.is_some())
}

/// The split of a call on a best-effort cache that never hits: what would be written is billed as
/// a write, nothing is stored (no later request could read it).
pub(super) fn automatic_uncacheable(prompt: &Prompt, p: &super::cache::RuleParams) -> Split {
    let total = prompt.tokens();
    let coverage = super::cache::round_down(total, p.granularity);
    let mut split = Split::uncached_only(total);
    if coverage >= p.min_tokens && coverage > 0 {
        split.written[0] = coverage;
        split.uncached = total - coverage;
    }
    split
}

/// Messages a session's prompt can hold after its head: two per call, one per event, one spare.
fn history_capacity(scenario: &Scenario) -> usize {
    2 * scenario.calls + scenario.events.len() + 1
}
