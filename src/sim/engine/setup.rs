//! How a simulation of one (model, strategy) is set up: the price sheet, the rule numbers and the
//! breakpoint plan drawn from the model and the strategy once, and where the plan's breakpoints
//! fall on a prompt.

use super::cache::{PlacedBreakpoint, RuleParams};
use super::prompt::Prompt;
use crate::model::catalog::ModelSpec;
use crate::model::strategy::{Anchor, Mode, ResolvedStrategy};
use crate::sim::billing::PriceSheet;

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
    pub(super) params: Option<RuleParams>,
    pub(super) hit_probability: f64,
    /// Routing model: requests per minute per prefix that one machine takes.
    pub(super) routing_rpm: Option<f64>,
    /// The explicit breakpoints in the form the per-call step places them.
    pub(super) bp_plan: Vec<BreakpointPlan>,
}

/// An explicit breakpoint as the engine places it on each call: its anchor, write slot and TTL.
#[derive(Debug, Clone, Copy)]
pub(super) struct BreakpointPlan {
    pub(super) anchor: Anchor,
    pub(super) slot: usize,
    pub(super) ttl_ms: u64,
}

/// Explicit breakpoints placed on one prompt: at most one per anchor kind (tools, system, last),
/// so at most three, kept inline.
#[derive(Debug, Clone, Copy)]
pub(super) struct Placed {
    pub(super) items: [PlacedBreakpoint; 3],
    pub(super) len: usize,
}

impl Placed {
    pub(super) fn as_slice(&self) -> &[PlacedBreakpoint] {
        &self.items[..self.len]
    }

    /// Adds a breakpoint on `boundary` unless an earlier anchor holds it. Three anchor kinds give
    /// at most three distinct boundaries, so there is room whenever the boundary is new.
    #[inline]
    pub(super) fn add(&mut self, boundary: usize, b: &BreakpointPlan) {
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
pub(super) fn place_breakpoints(plan: &[BreakpointPlan], prompt: &Prompt) -> Placed {
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
