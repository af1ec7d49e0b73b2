//! Explicit caching: breakpoints placed by the strategy, each looking back for an earlier entry.

use super::store::{CacheStore, OwnEntries, NO_LEASE};
use super::{round_down, RuleParams, Split};
use crate::sim::engine::prompt::Prompt;

/// One explicit breakpoint resolved to a boundary of this prompt.
#[derive(Debug, Clone, Copy)]
pub struct PlacedBreakpoint {
    /// Boundary index.
    pub boundary: usize,
    /// Write slot (tier) index.
    pub slot: usize,
    /// TTL of a write at this breakpoint.
    pub ttl_ms: u64,
}

/// Explicit breakpoints: each looks back over `lookback` boundaries for an entry written earlier; the
/// longest hit is read; every breakpoint past the hit and above the minimum is written, the tokens
/// between consecutive written breakpoints billed in that breakpoint's tier (so with a 1 h breakpoint
/// before a 5 min one: reads up to the hit, 1 h writes up to the 1 h breakpoint, 5 min writes after).
/// `salt` selects the machine's key space under the routing model (0: the primary machine).
/// `fresh_from`: boundaries from this index on are new to every store (`usize::MAX`: no knowledge).
pub fn explicit_call(
    store: &mut CacheStore,
    prompt: &Prompt,
    bps: &[PlacedBreakpoint],
    p: &RuleParams,
    now: u64,
    salt: u64,
    fresh_from: usize,
) -> Split {
    explicit_call_with_own(store, prompt, bps, p, now, salt, fresh_from, None, 0)
}

/// [`explicit_call`] with the conversation's own entries kept beside it for boundaries from
/// `own_from` on ([`OwnEntries`]; `None` keeps every entry in the store), with the same results.
#[allow(clippy::too_many_arguments)]
// Always inlined into the engine loop: it is the bulk of a call, and its arguments there are
// mostly known (measured: ~10% more instructions per call as a separate function).
#[inline(always)]
pub fn explicit_call_with_own(
    store: &mut CacheStore,
    prompt: &Prompt,
    bps: &[PlacedBreakpoint],
    p: &RuleParams,
    now: u64,
    salt: u64,
    fresh_from: usize,
    mut own: Option<&mut OwnEntries>,
    own_from: usize,
) -> Split {
    let total = prompt.tokens();
    let hashes = prompt.cum_hash.as_slice();
    // Boundaries from `fresh_from` on are known to be in no store: they are not looked up.
    let searchable = fresh_from.min(hashes.len());
    let mut hit = 0u64;
    // Breakpoints (by index) whose own boundary was found usable: the write pass below need not
    // look them up again (an entry found usable stays so for the rest of the call). Tracked for
    // the first 64 breakpoints (there are at most three: one per anchor kind).
    let tracked = bps.len() <= 64;
    let mut own_usable = 0u64;
    for (i, bp) in bps.iter().enumerate() {
        let end = (bp.boundary + 1).min(searchable);
        let start = (bp.boundary + 1).saturating_sub(p.lookback);
        let Some(window) = hashes.get(start..end) else {
            continue;
        };
        for (k, &h) in window.iter().enumerate().rev() {
            if let Some(e) = store.find_mut(own.as_deref_mut(), own_from, start + k, h ^ salt) {
                if e.usable(now) {
                    // `min`: only a 64-bit hash collision could make an entry longer than the prompt.
                    hit = hit.max(e.tokens.min(total));
                    if p.refresh_on_hit {
                        e.expires_ms = now.saturating_add(e.ttl_ms);
                    }
                    own_usable |= u64::from(start + k == bp.boundary) << (i & 63);
                    break;
                }
            }
        }
    }
    let mut split = Split {
        prompt: total,
        read: hit,
        ..Default::default()
    };
    let mut covered = hit;
    for (i, bp) in bps.iter().enumerate() {
        let pos = round_down(prompt.cum_tokens[bp.boundary], p.granularity);
        if pos < p.min_tokens || pos == 0 {
            continue;
        }
        let key = prompt.cum_hash[bp.boundary] ^ salt;
        // Already read through a longer hit: this breakpoint still gets its own entry, at no charge
        // (the tokens were billed as a read), unless it has a usable one.
        let already_read = pos <= covered;
        if already_read
            && ((tracked && (own_usable >> (i & 63)) & 1 != 0)
                || store
                    .find(own.as_deref(), own_from, bp.boundary, key)
                    .is_some_and(|e| e.usable(now)))
        {
            continue;
        }
        store.put_at(
            own.as_deref_mut(),
            own_from,
            bp.boundary,
            key,
            pos,
            now,
            p.avail_delay_ms,
            bp.ttl_ms,
            NO_LEASE,
            0,
        );
        if already_read {
            continue;
        }
        split.written[bp.slot] += pos - covered;
        covered = pos;
    }
    split.uncached = total - covered;
    split
}
