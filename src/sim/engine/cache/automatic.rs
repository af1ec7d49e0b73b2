//! Automatic (and implicit) caching: the longest live prefix is read and the prompt cached in
//! whole blocks; the plain walk that defines it, and the leased form the engine runs.

use super::store::{CacheStore, OwnEntries, NO_LEASE};
use super::{round_down, RuleParams, Split};
use crate::sim::engine::prompt::Prompt;

/// Boundaries visited by [`automatic_call_with_leases`] (scanned for a hit, refreshed one by one, or
/// considered for a write), counted on this thread in test builds only, so a test can tell a walk
/// that is linear over a conversation from a quadratic one without timing it. Release builds keep
/// no counter.
#[cfg(test)]
pub mod walk_steps {
    use std::cell::Cell;
    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }
    /// Steps counted on this thread since it started.
    pub fn get() -> u64 {
        STEPS.with(Cell::get)
    }
    pub(super) fn step() {
        STEPS.with(|c| c.set(c.get() + 1));
    }
}

/// One visited boundary ([`walk_steps`]); nothing outside test builds.
#[inline(always)]
fn step() {
    #[cfg(test)]
    walk_steps::step();
}

/// Automatic (and implicit) caching: the longest live cached prefix is read, in whole blocks; the
/// prompt is then cached in whole blocks, every boundary becoming a prefix later requests can match.
/// `hit_allowed` is false when a best-effort cache misses by chance.
pub fn automatic_call(
    store: &mut CacheStore,
    prompt: &Prompt,
    p: &RuleParams,
    ttl_ms: u64,
    now: u64,
    hit_allowed: bool,
    salt: u64,
) -> Split {
    let total = prompt.tokens();
    let n = prompt.cum_hash.len();
    let mut hit = 0u64;
    let mut hit_at: Option<usize> = None;
    if hit_allowed {
        for j in (0..n).rev() {
            if let Some(e) = store.entries.get(&(prompt.cum_hash[j] ^ salt)) {
                if store.usable_entry(e, now) {
                    hit = e.tokens.min(total);
                    hit_at = Some(j);
                    break;
                }
            }
        }
    }
    if let (Some(h), true) = (hit_at, p.refresh_on_hit) {
        // A block chain is refreshed as a whole: every shorter prefix of the hit is touched too.
        // (This plain walk is the definition; `automatic_call_leased` gets the same result in O(1).)
        for j in 0..=h {
            if let Some(e) = store.entries.get_mut(&(prompt.cum_hash[j] ^ salt)) {
                if e.expires_ms > now {
                    e.expires_ms = now.saturating_add(e.ttl_ms);
                }
            }
        }
    }
    let coverage = round_down(total, p.granularity);
    let mut split = Split {
        prompt: total,
        read: hit,
        ..Default::default()
    };
    if coverage >= p.min_tokens && coverage > hit {
        let from = hit_at.map_or(0, |h| h + 1);
        for j in from..n {
            let t = round_down(prompt.cum_tokens[j], p.granularity);
            if t >= p.min_tokens && t > 0 {
                store.put(prompt.cum_hash[j] ^ salt, t, now, p.avail_delay_ms, ttl_ms);
            }
        }
        split.written[0] = coverage - hit;
    }
    split.uncached = total - split.read - split.written[0];
    split
}

/// Lease keys of one automatic call (see [`automatic_call_leased`]).
// Test-only: the engine calls `automatic_call_with_leases`; this form is checked against the walk.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
pub struct LeaseKeys {
    /// Boundaries of the prompt head (tool block and system prompt) shared between sessions.
    pub block_len: usize,
    /// Lease of the head's chain, when the head's entries form one chain per key (every tool-list
    /// version has its own key space); `None` refreshes the head by walking it.
    pub block: Option<u64>,
    /// Lease of this session's conversation chain (one per session, prompt head and machine).
    pub history: u64,
}

/// [`automatic_call`] with the same results, without its walk over every prefix of the hit.
///
/// A hit refreshes every shorter prefix of the hit. Those prefixes form chains: the prompt head
/// (tools, system prompt), shared by the sessions with the same head, and each session's own
/// conversation after it. Entries are tagged with their chain's lease and their depth; a refresh
/// moves the lease (expiry, depth) instead of touching each entry, and an entry's lifetime is the
/// later of its own and its lease's when its depth is within the lease's. Correct because in
/// automatic mode every entry of a chain up to the hit is alive whenever the hit is (entries are
/// written and refreshed a whole prefix at a time), exactly what the plain walk refreshes.
///
/// `fresh_from`: boundaries from this index on are this call's new messages, in no store yet and
/// only ever found again in this conversation's later prompts, which contain them all up to the
/// last (`usize::MAX`: no such knowledge). They are not looked up, and only the last gets an entry.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub fn automatic_call_leased(
    store: &mut CacheStore,
    prompt: &Prompt,
    p: &RuleParams,
    ttl_ms: u64,
    now: u64,
    hit_allowed: bool,
    salt: u64,
    keys: &LeaseKeys,
    fresh_from: usize,
) -> Split {
    let block_lease = keys.block.map(|k| store.lease_id(k));
    let history_lease = store.lease_id(keys.history);
    let ids = LeaseIds {
        block_len: keys.block_len,
        block: block_lease,
        history: history_lease,
    };
    automatic_call_with_leases(
        store,
        prompt,
        p,
        ttl_ms,
        now,
        hit_allowed,
        salt,
        &ids,
        fresh_from,
        None,
    )
}

/// Lease ids of one automatic call, resolved from `LeaseKeys` (test-only) by [`CacheStore::lease_id`].
#[derive(Debug, Clone, Copy)]
pub struct LeaseIds {
    /// Boundaries of the prompt head (see `LeaseKeys::block_len`).
    pub block_len: usize,
    /// Lease of the head's chain (see `LeaseKeys::block`).
    pub block: Option<u32>,
    /// Lease of the conversation chain.
    pub history: u32,
}

/// `automatic_call_leased` (the tested form) with its leases already looked up (the engine keeps a session's ids
/// between calls).
#[allow(clippy::too_many_arguments)]
// Always inlined into the engine loop: it is the bulk of a call, and its arguments there are
// mostly known (measured: ~10% more instructions per call as a separate function).
#[inline(always)]
pub fn automatic_call_with_leases(
    store: &mut CacheStore,
    prompt: &Prompt,
    p: &RuleParams,
    ttl_ms: u64,
    now: u64,
    hit_allowed: bool,
    salt: u64,
    ids: &LeaseIds,
    fresh_from: usize,
    mut own: Option<&mut OwnEntries>,
) -> Split {
    let total = prompt.tokens();
    let n = prompt.cum_hash.len();
    let block_len = ids.block_len.min(n);
    let mut hit = 0u64;
    let mut hit_at: Option<usize> = None;
    if hit_allowed {
        // Boundaries from `fresh_from` on are new to every store: the scan starts below them.
        for j in (0..n.min(fresh_from)).rev() {
            step();
            let key = prompt.cum_hash[j] ^ salt;
            if let Some(e) = store.find(own.as_deref(), block_len, j, key) {
                if store.usable_entry(e, now) {
                    hit = e.tokens.min(total);
                    hit_at = Some(j);
                    break;
                }
            }
        }
    }
    let block_lease = ids.block;
    let history_lease = ids.history;
    if let (Some(h), true) = (hit_at, p.refresh_on_hit) {
        let expires = now.saturating_add(ttl_ms);
        if h >= block_len {
            store.refresh_lease(history_lease, h, expires);
        }
        if block_len > 0 {
            let head_depth = h.min(block_len - 1);
            match block_lease {
                Some(id) => store.refresh_lease(id, head_depth, expires),
                None => {
                    for j in 0..=head_depth {
                        step();
                        let key = prompt.cum_hash[j] ^ salt;
                        let alive = store.entries.get(&key).map(|e| store.expiry(e) > now);
                        if alive == Some(true) {
                            if let Some(e) = store.entries.get_mut(&key) {
                                e.expires_ms = now.saturating_add(e.ttl_ms);
                            }
                        }
                    }
                }
            }
        }
    }
    let coverage = round_down(total, p.granularity);
    let mut split = Split {
        prompt: total,
        read: hit,
        ..Default::default()
    };
    if coverage >= p.min_tokens && coverage > hit {
        let from = hit_at.map_or(0, |h| h + 1);
        for j in from..n {
            step();
            // A fresh boundary before the last is never worth an entry: only later prompts of this
            // conversation contain it, and they contain the last boundary too, written with it in
            // the same call (same availability and expiry, same lease, deeper), so whenever its
            // entry could be read the last one is readable and longer. Leaving it out changes no
            // read and saves a table insertion per message.
            if j >= fresh_from && j + 1 < n {
                continue;
            }
            let t = round_down(prompt.cum_tokens[j], p.granularity);
            if t >= p.min_tokens && t > 0 {
                let lease = if j >= block_len {
                    history_lease
                } else {
                    block_lease.unwrap_or(NO_LEASE)
                };
                store.put_at(
                    own.as_deref_mut(),
                    block_len,
                    j,
                    prompt.cum_hash[j] ^ salt,
                    t,
                    now,
                    p.avail_delay_ms,
                    ttl_ms,
                    lease,
                    j as u32,
                );
            }
        }
        split.written[0] = coverage - hit;
    }
    split.uncached = total - split.read - split.written[0];
    split
}
