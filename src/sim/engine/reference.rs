//! A deliberately plain copy of the engine's event loop as it stood before the hot path was
//! optimised (tool lists cloned per session, tool sizes measured per run, events scanned per call).
//! Tests compare the optimised engine against it bill by bill, so an optimisation that changes a
//! result fails a test.
//! It draws from the same generator ([`crate::base::rng::SimRng`]) and samplers as the engine: the
//! comparison is about the engine's logic, not about random streams.
//! Request-setting changes (`[[event]] change = ...`) are applied here the plain way: each session
//! counts the changes that invalidated each prompt part and rebuilds its prompt with those markers
//! (the engine prepares one head per change instead).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::base::rng::SimRng;
use rand::{RngExt, SeedableRng};

use super::cache::{automatic_call, explicit_call, CacheStore, PlacedBreakpoint, Split};
use super::prompt::{Prompt, Segment};
use super::settings::{Markers, Part};
use super::{SimSetup, REMOVAL_NOTICE_TOKENS};
use crate::base::hash::{chain, fnv1a};
use crate::input::scenario::{Arrival, PromptCacheKey, Scenario};
use crate::model::catalog::ToolChangeRule;
use crate::model::strategy::{Anchor, Mode};
use crate::model::tokens::ToolRendering;
use crate::model::tools::Tool;
use crate::sim::billing::CallBill;

/// Per-session state.
struct Session {
    index: u32,
    uid: u64,
    rng: SimRng,
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
    /// The setting changes so far that invalidated each prompt part.
    markers: Markers,
}

/// Caches rendered tool sizes by content, and list preambles by list, so events and sessions do
/// not re-measure.
struct ToolSizer<'r> {
    rendering: &'r ToolRendering,
    sizes: HashMap<u64, u64>,
    preambles: HashMap<u64, u64>,
}

impl ToolSizer<'_> {
    fn tokens(&mut self, t: &Tool) -> (u64, u64) {
        let h = t.content_hash();
        let r = self.rendering;
        let n = *self.sizes.entry(h).or_insert_with(|| r.tool_tokens(t));
        (n, h)
    }

    /// The list's preamble ([`ToolRendering::preamble_for`]), by the list's content hash.
    fn preamble(&mut self, list: &[Tool], list_hash: u64) -> u64 {
        if let Some(&p) = self.preambles.get(&list_hash) {
            return p;
        }
        let sum: u64 = list.iter().map(|t| self.tokens(t).0).sum();
        let p = self.rendering.preamble_for(list, sum);
        self.preambles.insert(list_hash, p);
        p
    }
}

fn session_rng(seed: u64, run: u64, session: u64) -> SimRng {
    SimRng::seed_from_u64(chain(chain(seed, run.wrapping_add(0x5eed)), session))
}

fn draw(q: &crate::base::quantity::Quantity, rng: &mut SimRng) -> u64 {
    q.sample(rng).round() as u64
}

/// Simulates one run of a scenario for one (model, strategy) and hands every billed call, in time
/// order, to `sink`. Draws depend only on (seed, run, session), so every model and strategy sees the
/// same sessions. Returns the total dollars.
// Over 120 lines: a deliberately plain copy of the engine's event loop (see the module comment)
// that tests compare the optimised engine with, bill by bill; kept whole so it stays plain.
pub(crate) fn reference_run(
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
        preambles: HashMap::new(),
    };
    let family_id = fnv1a(model.family.as_bytes());
    let system_id = chain(fnv1a(b"system"), scenario.system_tokens);

    // Session start times.
    let mut arrivals_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xa771)));
    let mut starts = Vec::with_capacity(scenario.sessions);
    let mut t = 0.0f64;
    for i in 0..scenario.sessions {
        match scenario.arrival {
            Arrival::Every(e) => starts.push(i as f64 * e),
            Arrival::Poisson(per_hour) => {
                if i > 0 {
                    let u: f64 = arrivals_rng.random_range(f64::EPSILON..1.0);
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
            markers: Markers::default(),
        })
        .collect();
    let mut shared_store = CacheStore::new();
    // A cache per session: sessions that share no account cache, or that each set their own
    // `prompt_cache_key` on a model that routes requests by prefix and key.
    let private = !scenario.shared_cache
        || (scenario.prompt_cache_key == PromptCacheKey::PerSession && setup.routing_rpm.is_some());
    let mut own_stores: Vec<CacheStore> = if private {
        (0..scenario.sessions).map(|_| CacheStore::new()).collect()
    } else {
        Vec::new()
    };
    let mut cache_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xcace)));

    let mut queue: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    for (i, s) in starts.iter().enumerate() {
        queue.push(Reverse((
            crate::model::strategy::seconds_to_ms(*s),
            i as u32,
        )));
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
        // Setting changes of this call that the model's caching mode says invalidate a part.
        let mut settings_changed = false;
        for c in scenario
            .setting_events
            .iter()
            .filter(|c| c.at_call == call as usize)
        {
            let part = strategy
                .rules
                .as_ref()
                .and_then(|r| r.invalidated_by(&c.change))
                .and_then(Part::parse);
            if let Some(part) = part {
                s.markers.bump(part);
                settings_changed = true;
            }
        }
        if call == 1 || tools_changed || settings_changed {
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
            let preamble = sizer.preamble(&s.block, list_hash);
            s.markers.push(Part::Tools, &mut s.prompt);
            s.prompt.push(Segment {
                tokens: preamble,
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
            s.markers.push(Part::System, &mut s.prompt);
            s.prompt.push(Segment {
                tokens: scenario.system_tokens,
                id: system_id,
            });
            s.prompt.mark_system_end();
            s.markers.push(Part::Messages, &mut s.prompt);
            s.pushed = 0;
        }
        for seg in &s.history[s.pushed..] {
            s.prompt.push(*seg);
        }
        s.pushed = s.history.len();
        let tool_block_tokens = s.prompt.tools_end.map_or(0, |i| s.prompt.cum_tokens[i]);

        let store = if private {
            &mut own_stores[si as usize]
        } else {
            &mut shared_store
        };
        let split = match (strategy.mode, &setup.params) {
            (Mode::None, _) | (_, None) => Split::uncached_only(s.prompt.tokens()),
            (Mode::Explicit, Some(p)) => {
                let salt = match setup.routing_rpm {
                    Some(rpm) => super::keys::machine_salt(store.route(
                        super::keys::routing_key(&s.prompt),
                        now,
                        rpm,
                    )),
                    None => 0,
                };
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
                explicit_call(store, &s.prompt, &bps, p, now, salt, usize::MAX)
            }
            (Mode::Automatic | Mode::Implicit, Some(p)) => {
                let salt = match setup.routing_rpm {
                    Some(rpm) => super::keys::machine_salt(store.route(
                        super::keys::routing_key(&s.prompt),
                        now,
                        rpm,
                    )),
                    None => 0,
                };
                let hit_allowed = setup.hit_probability >= 1.0
                    || cache_rng.random::<f64>() < setup.hit_probability;
                let ttl = strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms);
                automatic_call(store, &s.prompt, p, ttl, now, hit_allowed, salt)
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
            let gap =
                crate::model::strategy::seconds_to_ms(scenario.gap_seconds.sample(&mut s.rng));
            queue.push(Reverse((now + gap, si)));
        } else {
            // The session is over: free its memory.
            s.history = Vec::new();
            s.prompt = Prompt::default();
        }
        calls_done += 1;
        if calls_done.is_multiple_of(65_536) {
            shared_store.sweep(now);
        }
    }
    cumulative
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog::Catalog;
    use crate::model::strategy::Strategy;
    use crate::sim::engine::{Prepared, PreparedSet, Workspace};

    const BUSY: &str = r#"
name = "busy"
seed = 7
[tools]
synthetic = { count = 12, params = 3 }
[session]
calls = 14
system_tokens = 900
first_user_tokens = { dist = "uniform", min = 100, max = 400 }
tool_result_tokens = { dist = "log_normal", mu = 6.0, sigma = 0.8 }
output_tokens = { dist = "gamma", shape = 2.0, scale = 100.0 }
gap_seconds = { dist = "exponential", mean = 40 }
first_token_seconds = 2.0
[sessions]
count = 6
poisson_per_hour = 120
[[event]]
at_call = 5
add_synthetic = { count = 2 }
[[event]]
at_call = 9
remove = ["synthetic_tool_03"]
"#;

    /// Calls closer together than the first-token time (writes not yet readable), small growth
    /// against 256-token blocks, many sessions on one prefix (routing overflow), a tool added and
    /// removed again (the session returns to a tool list, and prefixes, it had before).
    const TIGHT: &str = r#"
name = "tight"
seed = 3
[tools]
synthetic = { count = 8, params = 4 }
[session]
calls = 12
system_tokens = 700
first_user_tokens = 120
tool_result_tokens = { dist = "uniform", min = 5, max = 300 }
output_tokens = { dist = "uniform", min = 5, max = 120 }
gap_seconds = { dist = "uniform", min = 0.5, max = 400 }
first_token_seconds = 2.0
[sessions]
count = 10
every_seconds = 1.5
[[event]]
at_call = 4
add_synthetic = { count = 1 }
[[event]]
at_call = 8
remove = ["synthetic_tool_1008"]
"#;

    /// Request-setting changes between and at the same calls as tool-list changes: a change that
    /// invalidates the messages (Claude), the whole prompt (OpenAI's `thinking`), the system prompt
    /// on (the test variant below), changes a model does not list, and two changes at one call.
    const SETTINGS: &str = r#"
name = "settings"
seed = 11
[tools]
synthetic = { count = 10, params = 3 }
[session]
calls = 12
system_tokens = 1500
first_user_tokens = { dist = "uniform", min = 100, max = 600 }
tool_result_tokens = { dist = "uniform", min = 20, max = 700 }
output_tokens = { dist = "uniform", min = 20, max = 300 }
gap_seconds = { dist = "exponential", mean = 25 }
first_token_seconds = 2.0
[sessions]
count = 5
every_seconds = 4
[[event]]
at_call = 3
change = "tool_choice"
[[event]]
at_call = 5
add_synthetic = { count = 2 }
[[event]]
at_call = 5
change = "images"
[[event]]
at_call = 7
change = "thinking"
[[event]]
at_call = 9
remove = ["synthetic_tool_02"]
[[event]]
at_call = 10
change = "tool_choice"
[[event]]
at_call = 10
change = "thinking"
"#;

    /// The embedded catalog plus variants that exercise every engine path: automatic caching with
    /// every tool-change rule, a best-effort cache that hits 60% of the time, routing.
    fn test_catalog() -> Catalog {
        let mut c = Catalog::embedded().unwrap();
        // One model per engine path keeps the test fast: explicit with tiers and the append beta,
        // explicit with storage and a never-hitting implicit cache, automatic in blocks, routing.
        let keep = ["claude-opus-4.8", "gemini-3.6-flash", "kimi-k3", "gpt-5.2"];
        c.models.retain(|m| keep.contains(&m.id.as_str()));
        let mut extra = Vec::new();
        for m in &c.models {
            if let Some(a) = &m.cache.automatic {
                let mut v = m.clone();
                v.id = format!("{}-all-rules", m.id);
                let mut rules = a.clone();
                rules.tool_change_options = Some(crate::model::catalog::Sourced {
                    value: vec![ToolChangeRule::PreservePrefix, ToolChangeRule::Append],
                    source: "assumed: test".into(),
                    checked: None,
                    checked_against: None,
                });
                // Every part a setting change can invalidate, on one model.
                rules.invalidates = Some(crate::model::catalog::Sourced {
                    value: [
                        ("tool_choice", "system"),
                        ("images", "messages"),
                        ("thinking", "tools"),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                    source: "assumed: test".into(),
                    checked: None,
                    checked_against: None,
                });
                v.cache.automatic = Some(rules.clone());
                rules.hit_probability = Some(crate::model::catalog::Sourced {
                    value: 0.6,
                    source: "assumed: test".into(),
                    checked: None,
                    checked_against: None,
                });
                v.cache.implicit = Some(rules);
                extra.push(v);
            }
        }
        c.models.extend(extra);
        c
    }

    /// The optimised engine (prepared tool blocks, reused workspace, leased refreshes, no store for
    /// a cache that never hits) bills every call exactly as the plain loop does, on every model and
    /// strategy, over several runs with one workspace reused across them.
    #[test]
    fn optimised_engine_matches_the_plain_loop_bill_by_bill() {
        let catalog = test_catalog();
        let busy = Scenario::from_toml_str(BUSY, "busy.toml", std::path::Path::new(".")).unwrap();
        let tight =
            Scenario::from_toml_str(TIGHT, "tight.toml", std::path::Path::new(".")).unwrap();
        let default = Scenario::builtin_default().unwrap();
        let settings =
            Scenario::from_toml_str(SETTINGS, "settings.toml", std::path::Path::new(".")).unwrap();
        assert_eq!(settings.setting_events.len(), 5);
        let strategies = [
            "none",
            "cached",
            "automatic",
            "implicit",
            "explicit:tools@1h+system+last",
            "explicit:last",
            "cached/tool-changes=append",
            "automatic/tool-changes=preserve_prefix",
            "automatic/tool-changes=append",
            "implicit/tool-changes=preserve_prefix",
        ];
        let mut compared = 0;
        let mut keyed = tight.clone();
        keyed.prompt_cache_key = crate::input::scenario::PromptCacheKey::PerSession;
        let mut invalidated = 0;
        for scenario in [&default, &busy, &tight, &settings, &keyed] {
            let mut ws = Workspace::new();
            for model in &catalog.models {
                for text in strategies {
                    let Ok(resolved) = Strategy::parse(text).unwrap().resolve(model) else {
                        continue;
                    };
                    let setup = SimSetup::new(model, &resolved, scenario.first_token_seconds);
                    let prepared = Prepared::new(scenario, &setup);
                    if scenario.setting_events.iter().any(|c| {
                        resolved
                            .rules
                            .as_ref()
                            .is_some_and(|r| r.invalidated_by(&c.change).is_some())
                    }) {
                        invalidated += 1;
                    }
                    for run in 0..2 {
                        let mut fast = Vec::new();
                        let total = prepared.run(run, &mut ws, |b| fast.push(*b));
                        let mut plain = Vec::new();
                        let expected = reference_run(scenario, &setup, run, |b| plain.push(*b));
                        assert_eq!(fast, plain, "{} {text} run {run}", model.id);
                        assert_eq!(total, expected);
                        compared += plain.len();
                    }
                }
            }
        }
        assert!(compared > 10_000, "only {compared} bills compared");
        // Setting changes took effect on many pairs (explicit, automatic and implicit ones).
        assert!(
            invalidated >= 10,
            "only {invalidated} pairs saw a setting change"
        );
    }

    /// Every member of a set run together gets the bills of its own run, bit for bit, whether the
    /// run is recorded or redone for each member: with shared and private caches, tool-list events,
    /// best-effort misses and routing, one workspace reused across runs, paths and set sizes.
    #[test]
    fn members_run_together_bill_as_they_do_alone() {
        let catalog = test_catalog();
        let busy = Scenario::from_toml_str(BUSY, "busy.toml", std::path::Path::new(".")).unwrap();
        let tight =
            Scenario::from_toml_str(TIGHT, "tight.toml", std::path::Path::new(".")).unwrap();
        let mut private = busy.clone();
        private.shared_cache = false;
        // A key per session: private caches on the routing model only, shared on the others.
        let mut keyed = tight.clone();
        keyed.prompt_cache_key = crate::input::scenario::PromptCacheKey::PerSession;
        let settings =
            Scenario::from_toml_str(SETTINGS, "settings.toml", std::path::Path::new(".")).unwrap();
        let strategies = [
            "none",
            "cached",
            "automatic",
            "implicit",
            "explicit:tools@1h+system+last",
            "cached/tool-changes=append",
            "automatic/tool-changes=preserve_prefix",
        ];
        let mut ws = Workspace::new();
        let mut compared = 0;
        for scenario in [&busy, &tight, &private, &settings, &keyed] {
            let resolved: Vec<_> = catalog
                .models
                .iter()
                .flat_map(|m| {
                    strategies.iter().filter_map(move |t| {
                        Some((m, Strategy::parse(t).unwrap().resolve(m).ok()?))
                    })
                })
                .collect();
            let setups: Vec<SimSetup> = resolved
                .iter()
                .map(|(m, r)| SimSetup::new(m, r, scenario.first_token_seconds))
                .collect();
            // All members at once, then a smaller set in the same workspace; the run recorded
            // and applied member by member, and (recording nothing) redone for each member.
            for (members, max_recorded) in [
                (&setups[..], usize::MAX),
                (&setups[..3], usize::MAX),
                (&setups[..], 0),
                (&setups[..3], 0),
            ] {
                let set = PreparedSet::new(scenario, members);
                assert_eq!(set.members().len(), members.len());
                for run in 0..2 {
                    let mut together = vec![Vec::new(); members.len()];
                    let totals = set.run_recording_up_to(
                        run,
                        &mut ws,
                        |m, b| together[m].push(*b),
                        max_recorded,
                    );
                    for (m, setup) in members.iter().enumerate() {
                        let mut plain = Vec::new();
                        let expected = reference_run(scenario, setup, run, |b| plain.push(*b));
                        assert_eq!(together[m], plain, "member {m} run {run}");
                        assert_eq!(totals[m], expected);
                        compared += plain.len();
                    }
                    assert_eq!(
                        together.iter().map(Vec::len).sum::<usize>(),
                        set.calls_per_run()
                    );
                }
            }
        }
        assert!(compared > 10_000, "only {compared} bills compared");
    }

    /// Members run sharing their prompts (each model's placements and strategies, with those of
    /// every other model, as `cached` resolves them) get the bills of their own runs, bit for bit,
    /// and the totals of `PreparedSet::run`: shared and private caches, tool-list and setting
    /// events, best-effort misses, routing, and past `KEEP_OWN_ENTRIES_UP_TO_SESSIONS` sessions.
    #[test]
    fn members_sharing_prompts_bill_as_they_do_alone() {
        let catalog = test_catalog();
        let parse = |text: &str, name: &str| {
            Scenario::from_toml_str(text, name, std::path::Path::new(".")).unwrap()
        };
        let busy = parse(BUSY, "busy.toml");
        let tight = parse(TIGHT, "tight.toml");
        let mut private = busy.clone();
        private.shared_cache = false;
        let mut keyed = tight.clone();
        keyed.prompt_cache_key = crate::input::scenario::PromptCacheKey::PerSession;
        let settings = parse(SETTINGS, "settings.toml");
        let mut many = tight.clone();
        many.sessions = super::super::timeline::KEEP_OWN_ENTRIES_UP_TO_SESSIONS + 5;
        many.calls = 3;
        let (mut compared, mut shared) = (0, 0);
        for scenario in [&busy, &tight, &private, &settings, &keyed, &many] {
            let resolved: Vec<_> = catalog
                .models
                .iter()
                .flat_map(|m| {
                    crate::model::strategy::placements(m)
                        .into_iter()
                        .chain(
                            ["none", "cached/tool-changes=append"]
                                .map(|t| Strategy::parse(t).unwrap()),
                        )
                        .filter_map(move |s| Some((m, s.resolve(m).ok()?)))
                })
                .collect();
            // Past the session count, a few placements of one model (sessions are many).
            let take = if std::ptr::eq(scenario, &many) {
                4
            } else {
                resolved.len()
            };
            let setups: Vec<SimSetup> = resolved[..take]
                .iter()
                .map(|(m, r)| SimSetup::new(m, r, scenario.first_token_seconds))
                .collect();
            let set = PreparedSet::new(scenario, &setups);
            let members = set.members();
            // Members that share their prompts with an earlier one (so the test shares some).
            shared += (1..members.len())
                .filter(|&m| (0..m).any(|k| members[k].same_prompts(&members[m])))
                .count();
            for run in 0..2 {
                let mut together = vec![Vec::new(); setups.len()];
                let totals = set.run_sharing_prompts(run, |m, b| together[m].push(*b));
                assert_eq!(totals, set.totals(run));
                let alone = set.run(run, &mut Workspace::new(), |_, _| {});
                assert_eq!(totals, alone, "run {run}");
                for (m, setup) in setups.iter().enumerate() {
                    let mut plain = Vec::new();
                    let expected = reference_run(scenario, setup, run, |b| plain.push(*b));
                    assert_eq!(together[m], plain, "member {m} run {run}");
                    assert_eq!(totals[m], expected);
                    compared += plain.len();
                }
            }
        }
        assert!(compared > 10_000, "only {compared} bills compared");
        assert!(
            shared > 50,
            "only {shared} members shared an earlier one's prompts"
        );
    }

    /// Past `KEEP_OWN_ENTRIES_UP_TO_SESSIONS` sessions each conversation's buffers are freed when it
    /// ends (and its history reserved only when it starts): bills unchanged, alone and in a set,
    /// over runs that reuse the workspace.
    #[test]
    fn many_sessions_free_their_buffers_with_the_same_bills() {
        let text = r#"
seed = 9
[tools]
synthetic = { count = 6, params = 3 }
[session]
calls = 3
system_tokens = 600
tool_result_tokens = { dist = "uniform", min = 50, max = 900 }
gap_seconds = { dist = "exponential", mean = 30 }
[sessions]
count = 1100
every_seconds = 0.5
[[event]]
at_call = 2
add_synthetic = { count = 1 }
"#;
        let scenario =
            Scenario::from_toml_str(text, "many.toml", std::path::Path::new(".")).unwrap();
        assert!(scenario.sessions > super::super::timeline::KEEP_OWN_ENTRIES_UP_TO_SESSIONS);
        let catalog = test_catalog();
        let resolved: Vec<_> = ["claude-opus-4.8", "kimi-k3"]
            .iter()
            .map(|id| {
                let m = catalog.model(id).unwrap();
                (m, Strategy::parse("cached").unwrap().resolve(m).unwrap())
            })
            .collect();
        let setups: Vec<SimSetup> = resolved
            .iter()
            .map(|(m, r)| SimSetup::new(m, r, scenario.first_token_seconds))
            .collect();
        let set = PreparedSet::new(&scenario, &setups);
        let mut ws = Workspace::new();
        for run in 0..2 {
            let mut together = vec![Vec::new(); setups.len()];
            set.run(run, &mut ws, |m, b| together[m].push(*b));
            for (m, setup) in setups.iter().enumerate() {
                let mut alone = Vec::new();
                set.members()[m].run(run, &mut ws, |b| alone.push(*b));
                let mut plain = Vec::new();
                reference_run(&scenario, setup, run, |b| plain.push(*b));
                assert_eq!(alone, plain, "member {m} run {run}");
                assert_eq!(together[m], plain, "member {m} run {run}");
            }
        }
    }
}
