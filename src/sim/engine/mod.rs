//! The discrete-event engine: sessions issue calls at simulated times; calls are processed in time
//! order against a cache store, and each call is billed.

pub(crate) mod cache;
pub(crate) mod prompt;
pub(crate) mod queue;

use std::collections::HashMap;

use crate::base::rng::SimRng;
use rand::{Rng, SeedableRng};

use crate::base::hash::{chain, fnv1a};
use crate::base::quantity::{round_u64, Quantity, Sampler};
use crate::input::scenario::{Arrival, Scenario, MAX_TOKENS_PER_MESSAGE};
use crate::model::catalog::{ModelSpec, ToolChangeRule};
use crate::model::render::TemplateKind;
use crate::model::strategy::{Anchor, Mode, ResolvedStrategy};
use crate::model::tools::Tool;
use crate::sim::billing::{CallBill, PriceSheet};
use cache::{
    automatic_call_with_leases, explicit_call, explicit_call_with_own, CacheStore, LeaseIds,
    OwnEntries, PlacedBreakpoint, RuleParams, Split,
};
use prompt::{Prompt, Segment};
use queue::EventQueue;

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
    /// Routing model: requests per minute per prefix that one machine takes.
    routing_rpm: Option<f64>,
    /// The explicit breakpoints in the form the per-call step places them.
    bp_plan: Vec<BreakpointPlan>,
}

/// An explicit breakpoint as the engine places it on each call: its anchor, write slot and TTL.
#[derive(Debug, Clone, Copy)]
struct BreakpointPlan {
    anchor: Anchor,
    slot: usize,
    ttl_ms: u64,
}

/// Explicit breakpoints placed on one prompt: at most one per anchor kind (tools, system, last),
/// so at most three, kept inline.
#[derive(Debug, Clone, Copy)]
struct Placed {
    items: [PlacedBreakpoint; 3],
    len: usize,
}

impl Placed {
    fn as_slice(&self) -> &[PlacedBreakpoint] {
        &self.items[..self.len]
    }

    /// Adds a breakpoint on `boundary` unless an earlier anchor holds it. Three anchor kinds give
    /// at most three distinct boundaries, so there is room whenever the boundary is new.
    #[inline]
    fn add(&mut self, boundary: usize, b: &BreakpointPlan) {
        if self.len < 3 && !self.as_slice().iter().any(|p| p.boundary == boundary) {
            self.items[self.len] = PlacedBreakpoint {
                boundary,
                slot: b.slot,
                ttl_ms: b.ttl_ms,
            };
            self.len += 1;
        }
    }
}

/// Places the planned breakpoints on `prompt`'s boundaries (two anchors on one boundary, e.g. with
/// no system prompt, are one breakpoint: the first keeps it).
#[inline]
fn place_breakpoints(plan: &[BreakpointPlan], prompt: &Prompt) -> Placed {
    let unused = PlacedBreakpoint {
        boundary: usize::MAX,
        slot: 0,
        ttl_ms: 0,
    };
    let mut placed = Placed {
        items: [unused; 3],
        len: 0,
    };
    for b in plan {
        let boundary = match b.anchor {
            Anchor::Tools => prompt.tools_end,
            Anchor::System => prompt.system_end,
            Anchor::Last => prompt.last_boundary(),
        };
        if let Some(boundary) = boundary {
            placed.add(boundary, b);
        }
    }
    placed
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
        let mut routing_rpm = None;
        if let Some(rules) = &strategy.rules {
            prices.read_multiplier = rules.read_multiplier.value;
            prices.long_read_multiplier = model
                .long_context
                .as_ref()
                .and_then(|lc| lc.read_multiplier.as_ref())
                .map_or(rules.read_multiplier.value, |r| r.value);
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
                avail_delay_ms: crate::model::strategy::seconds_to_ms(first_token_seconds),
            });
            if strategy.mode == Mode::Implicit {
                hit_probability = rules.hit_probability.as_ref().map_or(1.0, |p| p.value);
            }
            routing_rpm = rules.routing_rpm_per_prefix.as_ref().map(|r| r.value);
        }
        let bp_plan = strategy
            .breakpoints
            .iter()
            .map(|rb| BreakpointPlan {
                anchor: rb.anchor,
                slot: tier_names.iter().position(|n| *n == rb.tier).unwrap_or(0),
                ttl_ms: rb.ttl_ms,
            })
            .collect();
        SimSetup {
            model,
            strategy,
            prices,
            tier_names,
            params,
            hit_probability,
            routing_rpm,
            bp_plan,
        }
    }
}

/// A tool-list event as the engine applies it.
#[derive(Debug, Clone, Copy)]
enum EventEffect {
    /// The change travels as a message of this many tokens after the cached prefix (`append`).
    Append(u64),
    /// The tool block becomes this version (the prompt is rebuilt).
    Block(usize),
}

/// A scenario made ready for one (model, strategy): tool blocks rendered and hashed once, events
/// resolved to their effect, so the per-call loop never touches a tool definition.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    scenario: &'a Scenario,
    setup: &'a SimSetup<'a>,
    /// The prompt head (tool preamble, tools, system prompt) of each tool-list version; 0 = initial.
    bases: Vec<Prompt>,
    /// Tokens of the tool block of each version.
    block_tokens: Vec<u64>,
    /// (call number, effect), in the scenario's event order.
    events: Vec<(u32, EventEffect)>,
    /// Whether a session's prompt is ever rebuilt after its first call (a tool-block event), so
    /// its message history must be kept to re-append.
    keeps_history: bool,
    /// The explicit breakpoints of each head that do not move during a session (tools and system
    /// anchors), with the plan's `last` anchor, when that is its only moving breakpoint and comes
    /// last (always, as breakpoints are in prompt order; otherwise every call places them all).
    head_breakpoints: Option<(Vec<Placed>, Option<BreakpointPlan>)>,
    /// TTL of automatic writes.
    default_ttl: u64,
    /// Whether writes are stored: a best-effort cache that never hits needs no store (nothing
    /// written can be read).
    store_writes: bool,
    /// Whether heads of different tool lists share no entries (every tool-change rule but
    /// `preserve_prefix`), so a head's chain has a lease of its own.
    lease_heads: bool,
}

impl<'a> Prepared<'a> {
    /// Renders and hashes every tool list the scenario goes through.
    pub fn new(scenario: &'a Scenario, setup: &'a SimSetup<'a>) -> Self {
        let model = setup.model;
        let strategy = setup.strategy;
        let rendering = model.rendering();
        let family_id = fnv1a(model.family.as_bytes());
        let system_id = chain(fnv1a(b"system"), scenario.system_tokens);
        // Every tool of every list lives in the scenario: measured (hashed and counted) once per
        // definition, found again by address, so an event costs the pointers of its list.
        let mut sizes: HashMap<u64, u64> = HashMap::new();
        let mut by_address: HashMap<*const Tool, (u64, u64)> = HashMap::new();
        let mut measure = |t: &Tool| -> (u64, u64) {
            *by_address.entry(t as *const Tool).or_insert_with(|| {
                let h = t.content_hash();
                let n = *sizes.entry(h).or_insert_with(|| rendering.tool_tokens(t));
                (n, h)
            })
        };
        // The list's own tokens (wrapper, preamble), once per distinct list: a template family
        // renders the whole list for it.
        let mut preambles: HashMap<u64, u64> = HashMap::new();
        let mut base_of = |list: &[&Tool],
                           measure: &mut dyn FnMut(&Tool) -> (u64, u64),
                           markers: &settings::Markers| {
            let measured: Vec<(u64, u64)> = list.iter().map(|t| measure(t)).collect();
            let list_hash = measured
                .iter()
                .fold(fnv1a(b"tools"), |h, &(_, th)| chain(h, th));
            let salt = if strategy.tool_change == ToolChangeRule::Invalidate {
                list_hash
            } else {
                0
            };
            let tools_sum: u64 = measured.iter().map(|&(n, _)| n).sum();
            let preamble = if list.is_empty() {
                0
            } else if rendering.template == TemplateKind::Linear {
                rendering.preamble(list.len())
            } else {
                *preambles.entry(list_hash).or_insert_with(|| {
                    let owned: Vec<Tool> = list.iter().map(|t| (*t).clone()).collect();
                    rendering.preamble_for(&owned, tools_sum)
                })
            };
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
        let mut bases = vec![base_of(&current, &mut measure, &markers)];
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
                        bases.push(base_of(&head_list, &mut measure, &markers));
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
                    .map(|t| measure(t).0)
                    .sum();
                let removed = current
                    .iter()
                    .filter(|o| !after.contains(o.name.as_str()))
                    .count() as u64;
                EventEffect::Append(added + removed * REMOVAL_NOTICE_TOKENS)
            } else {
                bases.push(base_of(&next, &mut measure, &markers));
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
        }
    }

    /// Simulated calls per run (every session makes every call).
    pub fn calls_per_run(&self) -> usize {
        self.scenario.calls * self.scenario.sessions
    }

    /// Simulates one run (see [`simulate_run`]), reusing the buffers of `ws`.
    pub fn run(&self, run: u64, ws: &mut Workspace, mut sink: impl FnMut(&CallBill)) -> f64 {
        let mut total = [0.0];
        run_members(
            self.scenario,
            std::slice::from_ref(self),
            run,
            ws,
            |_, bill| sink(bill),
            MAX_RECORDED_CALLS,
            &mut total,
        );
        total[0]
    }

    /// Applies call `call` of a session, made at `now` and growing the conversation by `growth`,
    /// to this member's prompt of the session (`lane`), its cache and its bill.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step(
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
        let scenario = self.scenario;
        let setup = self.setup;
        let strategy = setup.strategy;
        let (index, uid) = session;
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
        let tool_block_tokens = self.block_tokens[lane.block];

        let store = if scenario.shared_cache {
            &mut st.shared
        } else {
            &mut st.own[si]
        };
        let split = match (strategy.mode, &setup.params) {
            (Mode::None, _) | (_, None) => Split::uncached_only(lane.prompt.tokens()),
            (mode, Some(p)) => {
                // Routing model: which machine's cache serves this request.
                let salt = match setup.routing_rpm {
                    Some(rpm) => machine_salt(store.route(routing_key(&lane.prompt), now, rpm)),
                    None => 0,
                };
                if mode == Mode::Explicit {
                    // Built in place and only borrowed afterwards: moving the filled struct
                    // would reread the length just written as part of a wider load, a
                    // store-forwarding stall measured at ~9% of an explicit call's time.
                    let mut bps = match &self.head_breakpoints {
                        Some((heads, _)) => heads[lane.block],
                        None => place_breakpoints(&setup.bp_plan, &lane.prompt),
                    };
                    if let Some((_, Some(b))) = &self.head_breakpoints {
                        if let Some(boundary) = lane.prompt.last_boundary() {
                            bps.add(boundary, b);
                        }
                    }
                    explicit_call_with_own(
                        store,
                        &lane.prompt,
                        bps.as_slice(),
                        p,
                        now,
                        salt,
                        fresh_from,
                        Some(&mut lane.own),
                        self.bases[lane.block].cum_hash.len(),
                    )
                } else {
                    let hit_allowed = setup.hit_probability >= 1.0
                        || st.cache_rng.gen::<f64>() < setup.hit_probability;
                    if self.store_writes {
                        let leases = match lane.leases {
                            Some(l) if l.block == lane.block && l.salt == salt => l,
                            _ => {
                                let l = session_leases(
                                    store,
                                    &self.bases[lane.block],
                                    lane.block,
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
                            &lane.prompt,
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
                        automatic_uncacheable(&lane.prompt, p)
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

/// Several (model, strategy) simulations of one scenario, run on one timeline.
///
/// Nothing of a session's timeline depends on the model: arrivals, the amounts of each call and the
/// gaps between calls come from the scenario and the session's own stream. So the event queue and
/// the draws (about 40% of the instructions of a call on one model, and more of its time) are done
/// once per run: the run's calls are recorded in time order, then applied to each member in turn,
/// every member reusing the same per-session buffers (so the working set is that of one model, not
/// of all of them). Runs with more than [`MAX_RECORDED_CALLS`] calls are not recorded: each member
/// is then simulated alone, the timeline redone for each. Either way each member's bills are those
/// of its own [`Prepared::run`], bit for bit (tested).
#[derive(Debug, Clone)]
pub struct PreparedSet<'a> {
    scenario: &'a Scenario,
    members: Vec<Prepared<'a>>,
}

/// Calls of one run (sessions x calls) up to which [`PreparedSet::run`] records the timeline
/// (40 bytes a call: 10 MB at most) and applies it member by member.
pub const MAX_RECORDED_CALLS: usize = 1 << 18;

impl<'a> PreparedSet<'a> {
    /// Prepares `scenario` for every setup.
    pub fn new(scenario: &'a Scenario, setups: &'a [SimSetup<'a>]) -> Self {
        PreparedSet {
            scenario,
            members: setups.iter().map(|s| Prepared::new(scenario, s)).collect(),
        }
    }

    /// The members, in the order of the setups.
    pub fn members(&self) -> &[Prepared<'a>] {
        &self.members
    }

    /// The members split into sets of at most `size` consecutive members (at least one each).
    pub fn parts(&self, size: usize) -> Vec<PreparedSet<'a>> {
        self.members
            .chunks(size.max(1))
            .map(|part| PreparedSet {
                scenario: self.scenario,
                members: part.to_vec(),
            })
            .collect()
    }

    /// Simulated calls per run, over all members.
    pub fn calls_per_run(&self) -> usize {
        self.scenario.calls * self.scenario.sessions * self.members.len()
    }

    /// Simulates one run on every member, reusing the buffers of `ws`: `sink` gets each bill with
    /// its member's index, member after member, each member's bills in time order. Returns each
    /// member's total dollars.
    pub fn run(
        &self,
        run: u64,
        ws: &mut Workspace,
        sink: impl FnMut(usize, &CallBill),
    ) -> Vec<f64> {
        self.run_recording_up_to(run, ws, sink, MAX_RECORDED_CALLS)
    }

    /// [`PreparedSet::run`], recording runs of at most `max_recorded` calls (tests force either
    /// path with it).
    pub(crate) fn run_recording_up_to(
        &self,
        run: u64,
        ws: &mut Workspace,
        sink: impl FnMut(usize, &CallBill),
        max_recorded: usize,
    ) -> Vec<f64> {
        let mut totals = vec![0.0; self.members.len()];
        run_members(
            self.scenario,
            &self.members,
            run,
            ws,
            sink,
            max_recorded,
            &mut totals,
        );
        totals
    }
}

/// One run of `scenario` on every member (all prepared from it), member after member: recorded
/// once and applied to each when it has at most `max_recorded` calls, redone for each otherwise;
/// member `m`'s total goes to `totals[m]`.
#[inline(always)]
fn run_members(
    scenario: &Scenario,
    members: &[Prepared],
    run: u64,
    ws: &mut Workspace,
    mut sink: impl FnMut(usize, &CallBill),
    max_recorded: usize,
    totals: &mut [f64],
) {
    if scenario.sessions.saturating_mul(scenario.calls) > max_recorded {
        // Too long to record: each member alone, the timeline redone for each.
        for (m, member) in members.iter().enumerate() {
            totals[m] = run_as_it_happens(scenario, member, run, ws, &mut |b| sink(m, b));
        }
        return;
    }
    let Workspace {
        sessions,
        lanes,
        queue,
        member: st,
        timeline,
    } = ws;
    timeline.clear();
    drive_timeline(scenario, run, sessions, queue, |_, call| {
        timeline.push(call)
    });
    let n_sessions = scenario.sessions;
    // One lane per session and one member state, reset for each member in turn.
    size_buffers(scenario, lanes, st, n_sessions);
    for (m, member) in members.iter().enumerate() {
        reset_member(scenario, run, lanes, st);
        for call in timeline.iter() {
            let s = &sessions[call.session as usize];
            let lane = &mut lanes[call.session as usize];
            apply_call(member, lane, st, s, call, n_sessions, &mut |b| sink(m, b));
        }
        totals[m] = st.cumulative;
    }
}

/// Messages a session's prompt can hold after its head: two per call, one per event, one spare.
fn history_capacity(scenario: &Scenario) -> usize {
    2 * scenario.calls + scenario.events.len() + 1
}

/// One call as a run's timeline fixes it, whatever the model.
#[derive(Debug, Clone, Copy)]
struct TimedCall {
    /// Request start (ms).
    now: u64,
    /// Session index (0-based).
    session: u32,
    /// Call number (1-based).
    call: u32,
    /// Output tokens of the session's previous call (0 before its first).
    previous_output: u64,
    /// Tokens the conversation grows by after that output: the first user message on call 1, the
    /// tool result plus the user message after it.
    growth: u64,
    /// Output tokens of this call.
    output: u64,
}

/// Runs the timeline of run `run`: session arrivals, then every call in time order (ties to the
/// lower session), each handed to `on_call` with its session before the session moves on to its
/// next call.
#[inline(always)]
fn drive_timeline(
    scenario: &Scenario,
    run: u64,
    sessions: &mut Vec<Session>,
    queue: &mut EventQueue,
    mut on_call: impl FnMut(&Session, TimedCall),
) {
    let n_sessions = scenario.sessions;
    // Session start times.
    let mut arrivals_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xa771)));
    queue.clear();
    let mut t = 0.0f64;
    for i in 0..n_sessions {
        let start = match scenario.arrival {
            Arrival::Every(e) => i as f64 * e,
            Arrival::Poisson(per_hour) => {
                if i > 0 {
                    let u: f64 = arrivals_rng.gen_range(f64::EPSILON..1.0);
                    t += -u.ln() * 3600.0 / per_hour;
                }
                t
            }
        };
        queue.push(crate::model::strategy::seconds_to_ms(start), i as u32);
    }

    let draws = CallDraws::new(scenario);
    sessions.truncate(n_sessions);
    while sessions.len() < n_sessions {
        sessions.push(Session::default());
    }
    for (i, s) in sessions.iter_mut().enumerate() {
        s.index = i as u32 + 1;
        s.uid = chain(chain(scenario.seed, run), i as u64 + 1);
        s.rng = session_rng(scenario.seed, run, i as u64);
        s.next_call = 1;
        s.last_output = 0;
        s.drawn = draws.for_call(&mut s.rng, 1);
    }

    // The session whose call comes next stays at the top of the queue while its call is handled
    // and is then moved to its next call's time in place (one sift instead of a pop and a push);
    // ties in time go to the lower session index, as with pop and push.
    while let Some((now, si)) = queue.peek() {
        let s = &mut sessions[si as usize];
        let call = TimedCall {
            now,
            session: si,
            call: s.next_call,
            previous_output: s.last_output,
            growth: s.drawn.growth,
            output: s.drawn.output,
        };
        on_call(s, call);
        s.last_output = call.output;
        s.next_call += 1;
        if call.call as usize >= scenario.calls {
            queue.pop();
        } else {
            queue.replace_top(now.saturating_add(s.drawn.gap_ms), si);
            s.drawn = draws.for_call(&mut s.rng, s.next_call);
        }
    }
}

/// Applies one call of session `s` to a member: its bill goes to `sink`; the session's own
/// entries and private cache are let go after its last call; expired entries are swept now and
/// then.
#[inline(always)]
fn apply_call(
    member: &Prepared,
    lane: &mut Lane,
    st: &mut MemberState,
    s: &Session,
    c: &TimedCall,
    n_sessions: usize,
    sink: &mut impl FnMut(&CallBill),
) {
    let scenario = member.scenario;
    let si = c.session as usize;
    // Conversation growth before this call (drawn before any event is applied).
    let growth = if c.call == 1 {
        [
            Segment {
                tokens: c.growth,
                id: segment_id(s.uid, 1),
            },
            Segment::default(),
        ]
    } else {
        let k = u64::from(c.call);
        [
            Segment {
                tokens: c.previous_output,
                id: segment_id(s.uid, k * 4 + 2),
            },
            Segment {
                tokens: c.growth,
                id: segment_id(s.uid, k * 4 + 3),
            },
        ]
    };
    let bill = member.step(
        lane,
        st,
        (s.index, s.uid),
        si,
        c.now,
        c.call,
        &growth[..1 + usize::from(c.call > 1)],
        c.output,
    );
    sink(&bill);
    if c.call as usize >= scenario.calls {
        // The conversation is over and nobody else can match its own entries. With many
        // sessions they are freed with its prompt, so memory follows the sessions in progress
        // rather than every session of the run; with few, the allocations are kept for the next
        // run (freeing and regrowing them every run measured ~30% slower on the bench).
        if n_sessions > KEEP_OWN_ENTRIES_UP_TO_SESSIONS {
            lane.own = OwnEntries::default();
            lane.prompt = Prompt::default();
            lane.history = Vec::new();
        }
        if !scenario.shared_cache {
            // Nor does anybody else read its private cache.
            st.own[si].clear();
        }
    }
    st.calls_done += 1;
    // Expired entries are dropped now and then so memory stays bounded on long runs (dropping
    // them changes nothing: an expired entry is never read or refreshed again).
    if st.calls_done % 65_536 == 0 {
        st.shared.sweep(c.now);
    }
    if !scenario.shared_cache && c.call % 4_096 == 0 {
        st.own[si].sweep(c.now);
    }
}

/// Grows or shrinks the per-session buffers to one lane per session, and the member's private
/// caches to one per session when sessions do not share one (allocations are kept for later runs).
fn size_buffers(
    scenario: &Scenario,
    lanes: &mut Vec<Lane>,
    st: &mut MemberState,
    n_sessions: usize,
) {
    lanes.truncate(n_sessions);
    while lanes.len() < n_sessions {
        lanes.push(Lane::default());
    }
    let own_needed = if scenario.shared_cache { 0 } else { n_sessions };
    st.own.truncate(own_needed);
    while st.own.len() < own_needed {
        st.own.push(CacheStore::new());
    }
}

/// Makes the lanes ready for the sessions' first calls, empties the member's caches and restarts
/// its streams and totals for run `run`.
fn reset_member(scenario: &Scenario, run: u64, lanes: &mut [Lane], st: &mut MemberState) {
    for lane in lanes.iter_mut() {
        lane.reset();
    }
    st.shared.clear();
    for store in &mut st.own {
        store.clear();
    }
    st.cache_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xcace)));
    st.cumulative = 0.0;
    st.calls_done = 0;
}

/// The event loop applying each call to one member as it happens, without recording the
/// timeline: one run of `scenario` (which `member` was prepared from); returns its total dollars.
// Always inlined into `run_members`, its one caller: it is the bulk of a run.
#[inline(always)]
fn run_as_it_happens(
    scenario: &Scenario,
    member: &Prepared,
    run: u64,
    ws: &mut Workspace,
    sink: &mut impl FnMut(&CallBill),
) -> f64 {
    debug_assert!(std::ptr::eq(member.scenario, scenario));
    let n_sessions = scenario.sessions;
    let Workspace {
        sessions,
        lanes,
        queue,
        member: st,
        timeline: _,
    } = ws;
    size_buffers(scenario, lanes, st, n_sessions);
    reset_member(scenario, run, lanes, st);
    drive_timeline(scenario, run, sessions, queue, |s, call| {
        let lane = &mut lanes[call.session as usize];
        apply_call(member, lane, st, s, &call, n_sessions, sink);
    });
    st.cumulative
}

/// Reusable buffers of the event loop, so repeated runs (Monte Carlo, benchmarks) allocate nothing
/// once warm. Its contents never influence results.
#[derive(Debug, Default)]
pub struct Workspace {
    sessions: Vec<Session>,
    /// Each session's state on the member being simulated.
    lanes: Vec<Lane>,
    /// Next call of each active session.
    queue: EventQueue,
    /// The state of the member being simulated.
    member: MemberState,
    /// A run's calls in time order, when recorded ([`PreparedSet::run`]).
    timeline: Vec<TimedCall>,
}

impl Workspace {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` with this thread's own workspace, kept warm between calls (e.g. between the chunks
    /// a rayon worker picks up), so parallel runs do not regrow their buffers from empty.
    pub fn with_thread_local<R>(f: impl FnOnce(&mut Workspace) -> R) -> R {
        thread_local! {
            static WS: std::cell::RefCell<Workspace> = std::cell::RefCell::new(Workspace::new());
        }
        WS.with(|ws| match ws.try_borrow_mut() {
            Ok(mut ws) => f(&mut ws),
            // Re-entered on this thread (a nested parallel call): use a fresh one.
            Err(_) => f(&mut Workspace::new()),
        })
    }
}

/// One member's state in a run: its caches, its best-effort stream and its running total.
#[derive(Debug)]
struct MemberState {
    /// The account's cache (when sessions share it).
    shared: CacheStore,
    /// Each session's private cache (when they do not).
    own: Vec<CacheStore>,
    /// Decides best-effort misses.
    cache_rng: SimRng,
    cumulative: f64,
    /// Calls applied in this run (for the periodic sweep).
    calls_done: u64,
}

impl Default for MemberState {
    fn default() -> Self {
        MemberState {
            shared: CacheStore::new(),
            own: Vec::new(),
            cache_rng: SimRng::seed_from_u64(0),
            cumulative: 0.0,
            calls_done: 0,
        }
    }
}

/// A session's state shared by every member: its identity, stream and next call.
#[derive(Debug)]
struct Session {
    index: u32,
    uid: u64,
    rng: SimRng,
    next_call: u32,
    last_output: u64,
    /// The amounts of the session's next call, drawn when its previous call ended.
    drawn: DrawnCall,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            index: 0,
            uid: 0,
            rng: SimRng::seed_from_u64(0),
            next_call: 1,
            last_output: 0,
            drawn: DrawnCall::default(),
        }
    }
}

/// A session's state on one member: its prompt as that model renders it, and its caching.
#[derive(Debug, Default)]
struct Lane {
    /// Index of the next event to apply.
    next_event: usize,
    /// Version of the tool block rendered in the prompt.
    block: usize,
    /// History segments (messages) in order, kept only when the prompt can be rebuilt.
    history: Vec<Segment>,
    prompt: Prompt,
    /// Lease ids of the session's chains in its store, for the head and machine they were made for.
    leases: Option<SessionLeases>,
    /// The cache entries of this conversation's own prefixes (see [`cache::OwnEntries`]).
    own: OwnEntries,
}

/// The lease ids a session's automatic calls use while its head and machine stay the same (looked
/// up once instead of on every call; ids never change while the store lives, and a session's store
/// lives as long as its run).
#[derive(Debug, Clone, Copy)]
struct SessionLeases {
    block: usize,
    salt: u64,
    ids: LeaseIds,
}

/// Leases of a session's chains on a head (tool-list version) and machine (key-space salt): the
/// head's chain, when heads of different tool lists share no entries, and the conversation's.
fn session_leases(
    store: &mut CacheStore,
    base: &Prompt,
    block: usize,
    uid: u64,
    salt: u64,
    lease_heads: bool,
) -> SessionLeases {
    let head = base.cum_hash.last().copied();
    SessionLeases {
        block,
        salt,
        ids: LeaseIds {
            block_len: base.cum_hash.len(),
            block: match (lease_heads, head) {
                (true, Some(h)) => Some(store.lease_id(chain(h, salt))),
                _ => None,
            },
            // The conversation after this head is one chain (history only grows), also when the
            // session comes back to a head it left.
            history: store.lease_id(chain(chain(uid, head.unwrap_or(0)), salt ^ HISTORY_LEASE)),
        },
    }
}

impl Lane {
    /// Makes the lane ready for a session's first call on a member.
    fn reset(&mut self) {
        self.next_event = 0;
        self.block = 0;
        self.history.clear();
        self.prompt.clear();
        self.leases = None;
        self.own.clear();
    }

    /// Appends a message segment to the prompt (and to the history when it is kept).
    #[inline]
    fn append(&mut self, seg: Segment, keep_history: bool) {
        self.prompt.push(seg);
        if keep_history {
            self.history.push(seg);
        }
    }
}

/// Identity of a message segment of a session: `uid` is already a well-mixed random 64-bit value
/// unique to the session and run, so an offset by the segment's number is unique too; the prompt's
/// prefix hash mixes it.
#[inline]
fn segment_id(uid: u64, n: u64) -> u64 {
    uid.wrapping_add(n)
}

/// Runs with at most this many sessions keep each session's own-entry allocation between runs.
const KEEP_OWN_ENTRIES_UP_TO_SESSIONS: usize = 1024;

/// Salt of the conversation leases' keys.
const HISTORY_LEASE: u64 = 0x6869_7374_6f72_7900;

/// Tokens after which the routing key is taken (providers hash about the first 256 tokens).
pub const ROUTING_PREFIX_TOKENS: u64 = 256;

/// The routing key of a prompt: the identity of its prefix at the first boundary at or beyond
/// [`ROUTING_PREFIX_TOKENS`] (the whole prompt when shorter).
fn routing_key(p: &Prompt) -> u64 {
    let i = p.cum_tokens.partition_point(|&t| t < ROUTING_PREFIX_TOKENS);
    let i = i.min(p.cum_hash.len().saturating_sub(1));
    p.cum_hash.get(i).copied().unwrap_or(0)
}

/// Key-space salt of a machine: entries on machine m are keyed `prefix ^ salt(m)`; machine 0 is the
/// unsalted key space, so a model without routing behaves exactly as before.
fn machine_salt(machine: u32) -> u64 {
    if machine == 0 {
        0
    } else {
        chain(0x6d61_6368_696e_6500, u64::from(machine))
    }
}

/// The split of a call on a best-effort cache that never hits: what would be written is billed as
/// a write, nothing is stored (no later request could read it).
fn automatic_uncacheable(prompt: &Prompt, p: &cache::RuleParams) -> Split {
    let total = prompt.tokens();
    let coverage = cache::round_down(total, p.granularity);
    let mut split = Split::uncached_only(total);
    if coverage >= p.min_tokens && coverage > 0 {
        split.written[0] = coverage;
        split.uncached = total - coverage;
    }
    split
}

fn session_rng(seed: u64, run: u64, session: u64) -> SimRng {
    SimRng::seed_from_u64(chain(chain(seed, run.wrapping_add(0x5eed)), session))
}

/// The random amounts of one call of a session, in the order they come from the session's stream.
///
/// They are drawn when the session's previous call ends rather than when the call is simulated:
/// the stream yields the same values in the same order, but the draws (a ziggurat, `exp` and a
/// gamma squeeze, tens of dependent floating-point steps) are then off the call's critical path.
/// The call that uses them comes about one session-count of iterations later, so their latency
/// hides behind other sessions' calls instead of stalling the cache step and the branches that
/// depend on the prompt's size (measured: most of what the draws cost was that wait).
#[derive(Debug, Clone, Copy, Default)]
struct DrawnCall {
    /// Tokens the conversation grows by before the call: the first user message on call 1, the
    /// tool result plus the user message after it.
    growth: u64,
    /// Output tokens of the call.
    output: u64,
    /// Milliseconds to the next call (0 after the last call, for which none is drawn).
    gap_ms: u64,
}

/// How each amount of a call is drawn.
struct CallDraws {
    first_user: Draw,
    tool_result: Draw,
    user: Draw,
    output: Draw,
    gap: GapDraw,
    calls: u32,
}

/// The gap after a call: fixed milliseconds, or a distribution in seconds.
enum GapDraw {
    Fixed(u64),
    Random(Sampler),
}

impl CallDraws {
    fn new(scenario: &Scenario) -> Self {
        CallDraws {
            first_user: Draw::new(&scenario.first_user_tokens),
            tool_result: Draw::new(&scenario.tool_result_tokens),
            user: Draw::new(&scenario.user_tokens),
            output: Draw::new(&scenario.output_tokens),
            gap: match scenario.gap_seconds {
                Quantity::Fixed { value } => {
                    GapDraw::Fixed(crate::model::strategy::seconds_to_ms(value))
                }
                ref q => GapDraw::Random(q.sampler()),
            },
            calls: u32::try_from(scenario.calls).unwrap_or(u32::MAX),
        }
    }

    /// Draws call `call`'s amounts: growth (the first user message, or the tool result then the
    /// user message), output, then the gap to the next call when there is one. This order is the
    /// stream's order for every session; results depend on it.
    #[inline(always)]
    fn for_call(&self, rng: &mut SimRng, call: u32) -> DrawnCall {
        let growth = if call == 1 {
            self.first_user.draw(rng)
        } else {
            self.tool_result.draw(rng) + self.user.draw(rng)
        };
        let output = self.output.draw(rng);
        let gap_ms = if call < self.calls {
            match &self.gap {
                GapDraw::Fixed(ms) => *ms,
                GapDraw::Random(q) => crate::model::strategy::seconds_to_ms(q.sample(rng)),
            }
        } else {
            0
        };
        DrawnCall {
            growth,
            output,
            gap_ms,
        }
    }
}

/// A per-call amount in whole tokens: fixed amounts are rounded once, distributions built once.
enum Draw {
    Fixed(u64),
    Random(Sampler),
}

impl Draw {
    fn new(q: &Quantity) -> Self {
        match *q {
            Quantity::Fixed { value } => Draw::Fixed(round_u64(value).min(MAX_TOKENS_PER_MESSAGE)),
            _ => Draw::Random(q.sampler()),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut SimRng) -> u64 {
        match self {
            Draw::Fixed(v) => *v,
            // Clamped: heavy-tailed distributions can draw huge values; the clamp keeps every token
            // sum of a run far from overflow.
            Draw::Random(q) => round_token_amount(q.sample(rng)),
        }
    }
}

/// `round_u64(x).min(MAX_TOKENS_PER_MESSAGE)`, cheaper: clamped first, so the conversion is the
/// one-instruction signed one instead of the saturating unsigned one (runs three times per call).
#[inline(always)]
fn round_token_amount(x: f64) -> u64 {
    // `max` first: NaN becomes 0, as `round_u64` gives.
    let y = x.max(0.0).min(MAX_TOKENS_PER_MESSAGE as f64);
    let t = y as i64;
    // Exact below 2^52; branch-free (rounding up is a coin flip no predictor learns).
    (t + i64::from(y - t as f64 >= 0.5)) as u64
}

/// Simulates one run of a scenario for one (model, strategy) and hands every billed call, in time
/// order, to `sink`. Draws depend only on (seed, run, session), so every model and strategy sees the
/// same sessions. Returns the total dollars. For repeated runs, build a [`Prepared`] once and call
/// [`Prepared::run`] with a reused [`Workspace`].
pub fn simulate_run(
    scenario: &Scenario,
    setup: &SimSetup,
    run: u64,
    sink: impl FnMut(&CallBill),
) -> f64 {
    Prepared::new(scenario, setup).run(run, &mut Workspace::new(), sink)
}

/// All bills of one run, in time order.
pub fn simulate_collect(scenario: &Scenario, setup: &SimSetup, run: u64) -> Vec<CallBill> {
    let mut out = Vec::with_capacity(scenario.calls * scenario.sessions);
    simulate_run(scenario, setup, run, |b| out.push(*b));
    out
}

/// Bills one prompt against a store under the setup's strategy: the per-call step of
/// [`simulate_run`] for callers that build their own prompts (e.g. replaying a logged session).
/// `rng` decides best-effort misses exactly as in a simulation.
pub fn split_for_prompt(
    setup: &SimSetup,
    store: &mut CacheStore,
    prompt: &Prompt,
    now_ms: u64,
    rng: &mut impl Rng,
) -> Split {
    let strategy = setup.strategy;
    match (strategy.mode, &setup.params) {
        (Mode::None, _) | (_, None) => Split::uncached_only(prompt.tokens()),
        (Mode::Explicit, Some(p)) => {
            let bps = place_breakpoints(&setup.bp_plan, prompt);
            explicit_call(store, prompt, bps.as_slice(), p, now_ms, 0, usize::MAX)
        }
        (Mode::Automatic | Mode::Implicit, Some(p)) => {
            let hit_allowed =
                setup.hit_probability >= 1.0 || rng.gen::<f64>() < setup.hit_probability;
            let ttl = strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms);
            cache::automatic_call(store, prompt, p, ttl, now_ms, hit_allowed, 0)
        }
    }
}

/// Where a prompt sits in a conversation, for [`split_for_conversation`].
#[derive(Debug, Clone, Copy)]
pub struct ConversationPlace {
    /// Boundaries of the prompt head shared by every conversation (tools and system prompt).
    pub head_len: usize,
    /// Identity of this conversation (one per conversation of a log).
    pub conversation: u64,
    /// First boundary that is new in this call (never sent before); `usize::MAX` when unknown.
    pub fresh_from: usize,
}

/// [`split_for_prompt`] for a prompt that extends one conversation call after call (a replayed log):
/// the same bills, but an automatic-caching hit refreshes the conversation's chain through a lease
/// instead of walking every earlier boundary, so a conversation of n calls costs O(n), not O(n^2).
pub fn split_for_conversation(
    setup: &SimSetup,
    store: &mut CacheStore,
    prompt: &Prompt,
    now_ms: u64,
    rng: &mut impl Rng,
    place: &ConversationPlace,
) -> Split {
    let strategy = setup.strategy;
    match (strategy.mode, &setup.params) {
        (Mode::Automatic | Mode::Implicit, Some(p)) => {
            let hit_allowed =
                setup.hit_probability >= 1.0 || rng.gen::<f64>() < setup.hit_probability;
            let ttl = strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms);
            let ids = LeaseIds {
                block_len: place.head_len,
                block: None,
                history: store.lease_id(chain(fnv1a(b"conversation-lease"), place.conversation)),
            };
            automatic_call_with_leases(
                store,
                prompt,
                p,
                ttl,
                now_ms,
                hit_allowed,
                0,
                &ids,
                place.fresh_from,
                None,
            )
        }
        _ => split_for_prompt(setup, store, prompt, now_ms, rng),
    }
}

#[cfg(test)]
mod reference;
mod settings;

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversation billed through its lease gives the plain walk's bills, call by call: growing
    /// prompts, compactions (new conversations), a shared prefix, gaps past the TTL.
    #[test]
    fn conversation_lease_bills_as_the_plain_walk() {
        use crate::model::catalog::Catalog;
        use crate::model::strategy::Strategy;
        let catalog = Catalog::embedded().unwrap();
        for id in ["glm-5.2", "kimi-k3", "gpt-5.2", "deepseek-v3.2"] {
            let model = catalog.model(id).unwrap();
            let r = Strategy::parse("automatic")
                .unwrap()
                .resolve(model)
                .unwrap();
            let setup = SimSetup::new(model, &r, 0.5);
            let (mut plain, mut leased) = (CacheStore::new(), CacheStore::new());
            let mut rng_a = SimRng::seed_from_u64(5);
            let mut rng_b = SimRng::seed_from_u64(5);
            let mut draw = SimRng::seed_from_u64(9);
            let mut prompt = Prompt::default();
            let (mut conversation, mut head_len, mut now) = (0u64, 0usize, 0u64);
            let mut hits = 0;
            for i in 0..600u64 {
                let mut fresh_from = prompt.cum_hash.len();
                if i == 0 || draw.gen_range(0..40) == 0 {
                    conversation += 1;
                    prompt.clear();
                    head_len = 0;
                    if draw.gen_bool(0.5) {
                        prompt.push(Segment {
                            tokens: 3000,
                            id: 77,
                        });
                        prompt.mark_tools_end();
                        prompt.mark_system_end();
                        head_len = 1;
                    }
                    fresh_from = head_len;
                }
                prompt.push(Segment {
                    tokens: draw.gen_range(1..4000),
                    id: chain(conversation, i),
                });
                now += if draw.gen_range(0..10) == 0 {
                    400_000
                } else {
                    20_000
                };
                let a = split_for_prompt(&setup, &mut plain, &prompt, now, &mut rng_a);
                let place = ConversationPlace {
                    head_len,
                    conversation,
                    fresh_from,
                };
                let b =
                    split_for_conversation(&setup, &mut leased, &prompt, now, &mut rng_b, &place);
                assert_eq!(
                    (a.read, a.written, a.uncached),
                    (b.read, b.written, b.uncached),
                    "{id} call {i}"
                );
                hits += usize::from(a.read > 0);
            }
            assert!(hits > 300, "{id}: only {hits} hits");
        }
    }

    /// The clamped fast rounding is the plain one on every kind of amount.
    #[test]
    fn round_token_amount_is_round_then_clamp() {
        use rand::{Rng, SeedableRng};
        let mut rng = SimRng::seed_from_u64(3);
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -3.2,
            0.499_999_999_999_999_94,
            9_999_999.5,
            9_999_999.499_999,
            1e7,
            1e7 + 0.5,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        xs.extend((0..100_000).map(|_| rng.gen::<f64>() * 10f64.powi(rng.gen_range(-3..10))));
        for x in xs {
            assert_eq!(
                round_token_amount(x),
                round_u64(x).min(MAX_TOKENS_PER_MESSAGE),
                "{x}"
            );
        }
    }
}
