//! The cache store and the per-call rules of each caching mode, as pure functions of the prompt, the
//! store and the clock. One implementation per mode; the numbers come from the model's rules.
//!
//! - `store`: the entries, leases and routing windows of one account (no mode logic);
//! - `explicit`: explicit breakpoints;
//! - `automatic`: automatic and implicit caching (the plain walk and the leased form);
//! - here: the numbers of a mode's rules that both need.

mod automatic;
mod explicit;
mod store;

pub(crate) use crate::sim::billing::Split;
#[cfg(test)]
pub use automatic::walk_steps;
pub use automatic::{automatic_call, automatic_call_with_leases, LeaseIds};
#[cfg(test)]
pub use automatic::{automatic_call_leased, LeaseKeys};
pub use explicit::{explicit_call, explicit_call_with_own, PlacedBreakpoint};
pub use store::{CacheStore, OwnEntries};

/// Numbers of a mode's rules that the per-call functions need.
#[derive(Debug, Clone, Copy)]
pub struct RuleParams {
    /// Minimum cacheable tokens.
    pub min_tokens: u64,
    /// Block size.
    pub granularity: u64,
    /// Whether a hit restarts the TTL.
    pub refresh_on_hit: bool,
    /// Boundaries a breakpoint looks back over (explicit mode).
    pub lookback: usize,
    /// Delay before a write can be read.
    pub avail_delay_ms: u64,
}

/// `tokens` rounded down to a multiple of `g` (> 0).
#[inline]
pub(crate) fn round_down(tokens: u64, g: u64) -> u64 {
    // Every catalog granularity is 1 or a power of two: a mask instead of a 64-bit division
    // (tens of cycles), called for every boundary written.
    if g.is_power_of_two() {
        tokens & !(g - 1)
    } else {
        tokens / g * g
    }
}

#[cfg(test)]
mod tests;
