//! The discrete-event engine: sessions issue calls at simulated times; calls are processed in time
//! order against a cache store, and each call is billed.
//!
//! - `setup`: a (model, strategy) as the engine uses it (prices, rule numbers, breakpoint plan);
//! - `prepared`: a scenario made ready for one setup, and the per-call step;
//! - `timeline`: runs (the shared timeline of a run applied to each member of a set);
//! - `workspace`: the event loop's reusable buffers and per-run state;
//! - `draws`: the random amounts of each call; `keys`: segment ids, routing keys, machine salts;
//! - `cache`: the cache store and each mode's per-call rules; `prompt`, `queue`: their data;
//! - here: the entry points for one run and for billing a single prompt (replay).

pub(crate) mod cache;
mod draws;
pub(crate) mod keys;
mod prepared;
pub(crate) mod prompt;
pub(crate) mod queue;
mod settings;
mod setup;
mod timeline;
mod workspace;

pub use setup::SimSetup;
// The engine's prepared state and buffers, public for the benches and the integration tests only
// (not the API: they change with the engine).
#[cfg(test)]
pub(crate) use prepared::REBUILT_SEGMENTS;
#[doc(hidden)]
pub use prepared::{Prepared, REMOVAL_NOTICE_TOKENS};
#[doc(hidden)]
pub use timeline::{PreparedSet, ToolCounts, MAX_RECORDED_CALLS};
#[doc(hidden)]
pub use workspace::Workspace;

use rand::{Rng, RngExt};

use crate::base::hash::{chain, fnv1a};
use crate::input::scenario::Scenario;
use crate::model::strategy::Mode;
use crate::sim::billing::CallBill;
use cache::{automatic_call_with_leases, explicit_call, CacheStore, LeaseIds, Split};
use prompt::Prompt;
use setup::place_breakpoints;

/// Simulates one run of a scenario for one (model, strategy) and hands every billed call, in time
/// order, to `sink`. Draws depend only on (seed, run, session), so every model and strategy sees the
/// same sessions. Returns the total dollars. For repeated runs, build a [`Prepared`] once and call
/// [`Prepared::run`] with a reused [`Workspace`].
pub(crate) fn simulate_run(
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
pub(crate) fn split_for_prompt(
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
                setup.hit_probability >= 1.0 || rng.random::<f64>() < setup.hit_probability;
            let ttl = strategy.default_tier.as_ref().map_or(300_000, |t| t.ttl_ms);
            cache::automatic_call(store, prompt, p, ttl, now_ms, hit_allowed, 0)
        }
    }
}

/// Where a prompt sits in a conversation, for [`split_for_conversation`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConversationPlace {
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
pub(crate) fn split_for_conversation(
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
                setup.hit_probability >= 1.0 || rng.random::<f64>() < setup.hit_probability;
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

#[cfg(test)]
mod tests {
    use super::prompt::Segment;
    use super::*;
    use crate::base::rng::SimRng;
    use rand::SeedableRng;

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
                if i == 0 || draw.random_range(0..40) == 0 {
                    conversation += 1;
                    prompt.clear();
                    head_len = 0;
                    if draw.random_bool(0.5) {
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
                    tokens: draw.random_range(1..4000),
                    id: chain(conversation, i),
                });
                now += if draw.random_range(0..10) == 0 {
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
}
