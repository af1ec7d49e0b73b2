//! The cache store and the per-call rules of each caching mode, as pure functions of the prompt, the
//! store and the clock. One implementation per mode; the numbers come from the model's rules.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::prompt::Prompt;

/// A hasher for keys that are already well-mixed 64-bit prefix identities (see [`crate::base::hash::chain`]):
/// it passes the key through, so a lookup costs no hashing at all. Other input falls back to FNV-1a.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by prefix identities.
pub type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Length of the sliding window of the routing model (rates are per minute).
pub const ROUTING_WINDOW_MS: u64 = 60_000;

/// A cached prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Tokens this entry lets a later request read (the prefix rounded down to the granularity).
    pub tokens: u64,
    /// Clock time (ms) after which the entry is gone.
    pub expires_ms: u64,
    /// Clock time (ms) from which the entry can be read (writes appear when the response starts).
    pub available_ms: u64,
    /// Lifetime given by a write or a refresh.
    pub ttl_ms: u64,
    /// Lease that may extend `expires_ms` ([`NO_LEASE`] for none; see [`automatic_call_leased`]).
    pub lease: u32,
    /// Boundary index of the prefix in its prompt (meaningful for leased entries).
    pub depth: u32,
}

/// The `lease` of an entry that has none.
pub const NO_LEASE: u32 = u32::MAX;

/// An empty slot of [`OwnEntries`] (no stored entry has zero tokens).
const NO_ENTRY: Entry = Entry {
    tokens: 0,
    expires_ms: 0,
    available_ms: 0,
    ttl_ms: 0,
    lease: NO_LEASE,
    depth: 0,
};

impl Entry {
    /// Whether the entry can be read at `now` when it holds no lease (explicit mode never leases).
    fn usable(&self, now: u64) -> bool {
        now < self.expires_ms && now >= self.available_ms
    }
}

/// A shared refresh of a chain of entries: every entry tagged with the lease whose depth is at most
/// `depth` lives at least until `expires_ms`. One lease update stands for refreshing a whole chain.
#[derive(Debug, Clone, Copy, Default)]
struct Lease {
    expires_ms: u64,
    depth: u32,
}

/// Time after which an entry is gone, given the store's leases.
#[inline]
fn entry_expiry(leases: &[Lease], e: &Entry) -> u64 {
    if e.lease != NO_LEASE {
        let l = leases[e.lease as usize];
        if e.depth <= l.depth {
            return e.expires_ms.max(l.expires_ms);
        }
    }
    e.expires_ms
}

/// Cached prefixes of one account (or one session when caches are not shared).
#[derive(Debug, Default, Clone)]
pub struct CacheStore {
    entries: IdMap<Entry>,
    /// Routing model: start times of recent requests per routing key (the first ~256 tokens).
    routes: IdMap<VecDeque<u64>>,
    leases: Vec<Lease>,
    lease_ids: IdMap<u32>,
}

impl CacheStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything (keeping the allocated capacity for the next run).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.routes.clear();
        self.leases.clear();
        self.lease_ids.clear();
    }

    /// Time after which an entry is gone, leases included.
    #[inline]
    fn expiry(&self, e: &Entry) -> u64 {
        entry_expiry(&self.leases, e)
    }

    #[inline]
    fn usable_entry(&self, e: &Entry, now: u64) -> bool {
        now < self.expiry(e) && now >= e.available_ms
    }

    /// The id of the lease with key `key`, made on first use (ids live as long as the store's
    /// contents: until [`CacheStore::clear`]).
    pub fn lease_id(&mut self, key: u64) -> u32 {
        let next = self.leases.len() as u32;
        let id = *self.lease_ids.entry(key).or_insert(next);
        if id == next {
            self.leases.push(Lease::default());
        }
        id
    }

    /// Refreshes, through lease `id`, every entry of its chain up to boundary `depth` (the chain's
    /// entries are prefixes of the prompt that hit at `depth`).
    fn refresh_lease(&mut self, id: u32, depth: usize, expires_ms: u64) {
        // Entries of the chain deeper than `depth` that the lease covered are dead: they were alive
        // and readable at the refresh that moved the lease to them (ancestors of that hit), and an
        // entry that stays alive stays readable, so had one been alive now the hit would be deeper.
        // Dropping them from the lease therefore changes nothing.
        self.leases[id as usize] = Lease {
            expires_ms,
            depth: depth as u32,
        };
    }

    /// The entry for a prefix identity, if stored (alive or not).
    pub fn get(&self, key: u64) -> Option<&Entry> {
        self.entries.get(&key)
    }

    /// Routing model for best-effort caches: a provider sends about `rpm` requests per minute of one
    /// routing key to one machine; the rest overflow to further machines. Returns the machine that
    /// serves a request starting at `now` (0 while the key's rate over the last minute is below `rpm`).
    /// Each machine has its own cache, so the first request that reaches a new machine misses.
    pub fn route(&mut self, key: u64, now: u64, rpm: f64) -> u32 {
        let w = self.routes.entry(key).or_default();
        while w.front().is_some_and(|&t| t + ROUTING_WINDOW_MS <= now) {
            w.pop_front();
        }
        let machine = (w.len() as f64 / rpm).floor();
        w.push_back(now);
        machine.min(f64::from(u32::MAX)) as u32
    }

    /// Number of entries (alive or not yet swept).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops expired entries; called now and then so memory stays bounded on long runs.
    pub fn sweep(&mut self, now: u64) {
        let leases = &self.leases;
        self.entries.retain(|_, e| {
            let mut x = e.expires_ms;
            if e.lease != NO_LEASE && e.depth <= leases[e.lease as usize].depth {
                x = x.max(leases[e.lease as usize].expires_ms);
            }
            x > now
        });
        self.routes
            .retain(|_, w| w.back().is_some_and(|&t| t + ROUTING_WINDOW_MS > now));
    }

    /// Writes an entry at request start `now`: it lives `ttl_ms` from the request start and can be
    /// read once the response starts. Writing over an entry that is still alive but not yet readable
    /// (a parallel request wrote it) keeps the earlier availability and the later expiry: the first
    /// write is readable when its own response starts, whatever a later duplicate does.
    fn put(&mut self, key: u64, tokens: u64, now: u64, avail_delay_ms: u64, ttl_ms: u64) {
        self.put_leased(key, tokens, now, avail_delay_ms, ttl_ms, NO_LEASE, 0);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn put_leased(
        &mut self,
        key: u64,
        tokens: u64,
        now: u64,
        avail_delay_ms: u64,
        ttl_ms: u64,
        lease: u32,
        depth: u32,
    ) {
        let e = new_entry(tokens, now, avail_delay_ms, ttl_ms, lease, depth);
        // One probe of the map for the lookup and the write (this runs for every boundary written).
        match self.entries.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                let merged = merge_write(&self.leases, e, Some(slot.get()), now);
                *slot.get_mut() = merged;
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(e);
            }
        }
    }

    /// [`CacheStore::put_leased`] for boundary `j` of a conversation whose own entries are `own`
    /// from boundary `from` on (see [`OwnEntries`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn put_at(
        &mut self,
        own: Option<&mut OwnEntries>,
        from: usize,
        j: usize,
        key: u64,
        tokens: u64,
        now: u64,
        avail_delay_ms: u64,
        ttl_ms: u64,
        lease: u32,
        depth: u32,
    ) {
        match own {
            Some(own) if j >= from => {
                let e = new_entry(tokens, now, avail_delay_ms, ttl_ms, lease, depth);
                own.put(self, j, key, e, now);
            }
            _ => self.put_leased(key, tokens, now, avail_delay_ms, ttl_ms, lease, depth),
        }
    }

    /// The entry for boundary `j`'s key, wherever it is kept.
    #[inline]
    fn find<'s>(
        &'s self,
        own: Option<&'s OwnEntries>,
        from: usize,
        j: usize,
        key: u64,
    ) -> Option<&'s Entry> {
        if let Some(own) = own {
            if j >= from {
                if let Some(e) = own.get(j, key) {
                    return Some(e);
                }
                if !own.spilled {
                    return None;
                }
            }
        }
        self.entries.get(&key)
    }

    /// [`CacheStore::find`], to change the entry in place.
    #[inline]
    fn find_mut<'s>(
        &'s mut self,
        own: Option<&'s mut OwnEntries>,
        from: usize,
        j: usize,
        key: u64,
    ) -> Option<&'s mut Entry> {
        if let Some(own) = own {
            if j >= from {
                let spilled = own.spilled;
                if let Some(e) = own.get_mut(j, key) {
                    return Some(e);
                }
                if !spilled {
                    return None;
                }
            }
        }
        self.entries.get_mut(&key)
    }
}

/// An entry written at `now`: it lives `ttl_ms` from the request start and can be read once the
/// response starts.
#[inline]
fn new_entry(
    tokens: u64,
    now: u64,
    avail_delay_ms: u64,
    ttl_ms: u64,
    lease: u32,
    depth: u32,
) -> Entry {
    Entry {
        tokens,
        expires_ms: now.saturating_add(ttl_ms),
        available_ms: now.saturating_add(avail_delay_ms.max(1)),
        ttl_ms,
        lease,
        depth,
    }
}

/// A write `e` over the entry already stored for its key (if any): over one still alive but not yet
/// readable (a parallel request wrote it), the earlier availability and the later expiry win.
#[inline]
fn merge_write(leases: &[Lease], mut e: Entry, old: Option<&Entry>, now: u64) -> Entry {
    if let Some(old) = old {
        let old_expiry = entry_expiry(leases, old);
        if old_expiry > now {
            e.available_ms = e.available_ms.min(old.available_ms);
            if old_expiry > e.expires_ms {
                e.expires_ms = old_expiry;
                e.ttl_ms = old.ttl_ms;
            }
        }
    }
    e
}

/// The entries of one conversation's own prefixes, the boundaries after its prompt head. Only this
/// conversation's later requests can ever match them (their content includes messages unique to
/// it), so they are kept beside it, indexed by boundary, instead of in the account's map: a lookup
/// or a write is an array access instead of a probe of a table shared by every session. Results
/// are those of keeping them in the map: each boundary holds the entry last written at it, and an
/// entry displaced by another key at the same boundary (after a tool-list change, or on another
/// machine under the routing model) moves to the map, which lookups then also consult.
#[derive(Debug, Default, Clone)]
pub struct OwnEntries {
    /// (key, entry) by boundary; an entry without tokens is an empty slot.
    slots: Vec<(u64, Entry)>,
    /// Whether an entry was ever moved to the map.
    spilled: bool,
}

impl OwnEntries {
    /// Forgets every entry (the conversation is over or the store was cleared).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.spilled = false;
    }

    #[inline]
    fn get(&self, j: usize, key: u64) -> Option<&Entry> {
        self.slots
            .get(j)
            .filter(|(k, e)| *k == key && e.tokens > 0)
            .map(|(_, e)| e)
    }

    #[inline]
    fn get_mut(&mut self, j: usize, key: u64) -> Option<&mut Entry> {
        self.slots
            .get_mut(j)
            .filter(|(k, e)| *k == key && e.tokens > 0)
            .map(|(_, e)| e)
    }

    /// Writes `e` for `key` at boundary `j`, merged with the entry already stored for `key` here
    /// or in the map, moving any other key's entry at `j` to the map.
    fn put(&mut self, store: &mut CacheStore, j: usize, key: u64, e: Entry, now: u64) {
        if j >= self.slots.len() {
            self.slots.resize(j + 1, (0, NO_ENTRY));
        }
        let (slot_key, slot) = self.slots[j];
        let held = slot.tokens > 0;
        let old = if held && slot_key == key {
            Some(slot)
        } else if self.spilled {
            store.entries.remove(&key)
        } else {
            None
        };
        if held && slot_key != key {
            store.entries.insert(slot_key, slot);
            self.spilled = true;
        }
        self.slots[j] = (key, merge_write(&store.leases, e, old.as_ref(), now));
    }
}

pub use crate::sim::billing::Split;

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
        if pos <= covered {
            // Already read through a longer hit: make sure this breakpoint has its own entry, at no
            // charge, as the tokens were billed as a read.
            let known_usable = tracked && (own_usable >> (i & 63)) & 1 != 0;
            if !known_usable
                && !store
                    .find(own.as_deref(), own_from, bp.boundary, key)
                    .is_some_and(|e| e.usable(now))
            {
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
            }
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
        split.written[bp.slot] += pos - covered;
        covered = pos;
    }
    split.uncached = total - covered;
    split
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

/// Lease ids of one automatic call, resolved from [`LeaseKeys`] by [`CacheStore::lease_id`].
#[derive(Debug, Clone, Copy)]
pub struct LeaseIds {
    /// Boundaries of the prompt head (see [`LeaseKeys::block_len`]).
    pub block_len: usize,
    /// Lease of the head's chain (see [`LeaseKeys::block`]).
    pub block: Option<u32>,
    /// Lease of the conversation chain.
    pub history: u32,
}

/// [`automatic_call_leased`] with its leases already looked up (the engine keeps a session's ids
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::prompt::Segment;

    fn prompt(sizes: &[(u64, u64)]) -> Prompt {
        let mut p = Prompt::default();
        for &(tokens, id) in sizes {
            p.push(Segment { tokens, id });
        }
        p
    }

    fn params(min: u64, g: u64) -> RuleParams {
        RuleParams {
            min_tokens: min,
            granularity: g,
            refresh_on_hit: true,
            lookback: 20,
            avail_delay_ms: 1000,
        }
    }

    fn bp(boundary: usize, slot: usize, ttl_ms: u64) -> PlacedBreakpoint {
        PlacedBreakpoint {
            boundary,
            slot,
            ttl_ms,
        }
    }

    #[test]
    fn round_down_is_division() {
        for g in [1u64, 2, 3, 64, 100, 128, 256, 1000, 1024, 1 << 40] {
            for t in (0..5_000u64).chain([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1]) {
                assert_eq!(round_down(t, g), t / g * g, "{t} {g}");
            }
        }
    }

    #[test]
    fn explicit_writes_then_reads_the_tool_block() {
        let mut s = CacheStore::new();
        let p1 = prompt(&[(3000, 1), (100, 2)]);
        let a = explicit_call(
            &mut s,
            &p1,
            &[bp(0, 0, 300_000)],
            &params(1024, 1),
            0,
            0,
            usize::MAX,
        );
        assert_eq!((a.read, a.written[0], a.uncached), (0, 3000, 100));
        let p2 = prompt(&[(3000, 1), (250, 3)]);
        let b = explicit_call(
            &mut s,
            &p2,
            &[bp(0, 0, 300_000)],
            &params(1024, 1),
            10_000,
            0,
            usize::MAX,
        );
        assert_eq!((b.read, b.written_total(), b.uncached), (3000, 0, 250));
    }

    #[test]
    fn explicit_below_minimum_is_not_cached() {
        let mut s = CacheStore::new();
        let p1 = prompt(&[(655, 1), (10, 2)]);
        for t in [0, 5_000] {
            let a = explicit_call(
                &mut s,
                &p1,
                &[bp(0, 0, 300_000)],
                &params(1024, 1),
                t,
                0,
                usize::MAX,
            );
            assert_eq!((a.read, a.written_total(), a.uncached), (0, 0, 665));
        }
    }

    #[test]
    fn explicit_entry_expires_after_ttl_and_hit_refreshes() {
        let mut s = CacheStore::new();
        let p = prompt(&[(2000, 1)]);
        let bps = [bp(0, 0, 300_000)];
        explicit_call(&mut s, &p, &bps, &params(1024, 1), 0, 0, usize::MAX);
        // Read at 4 min refreshes to 9 min; read at 8 min still hits; at 13 min 1 s it is gone.
        assert_eq!(
            explicit_call(&mut s, &p, &bps, &params(1024, 1), 240_000, 0, usize::MAX).read,
            2000
        );
        assert_eq!(
            explicit_call(&mut s, &p, &bps, &params(1024, 1), 480_000, 0, usize::MAX).read,
            2000
        );
        let late = explicit_call(&mut s, &p, &bps, &params(1024, 1), 781_000, 0, usize::MAX);
        assert_eq!((late.read, late.written[0]), (0, 2000));
    }

    #[test]
    fn explicit_lookback_is_bounded() {
        let mut s = CacheStore::new();
        // 30 small message blocks after a 2000-token block; the entry is only at boundary 0.
        let mut segs = vec![(2000, 1)];
        segs.extend((0..30).map(|i| (10, 100 + i)));
        let p = prompt(&segs);
        explicit_call(
            &mut s,
            &p,
            &[bp(0, 0, 300_000)],
            &params(1024, 1),
            0,
            0,
            usize::MAX,
        );
        let last = p.last_boundary().unwrap();
        // A lone breakpoint on the last block looks back 20 boundaries: boundary 0 is out of reach.
        let far = explicit_call(
            &mut s,
            &p,
            &[bp(last, 0, 300_000)],
            &params(1024, 1),
            5_000,
            0,
            usize::MAX,
        );
        assert_eq!(far.read, 0);
        assert_eq!(far.written[0], 2300);
    }

    #[test]
    fn parallel_requests_miss() {
        let mut s = CacheStore::new();
        let p = prompt(&[(3000, 1)]);
        let a = explicit_call(
            &mut s,
            &p,
            &[bp(0, 0, 300_000)],
            &params(1024, 1),
            0,
            0,
            usize::MAX,
        );
        let b = explicit_call(
            &mut s,
            &p,
            &[bp(0, 0, 300_000)],
            &params(1024, 1),
            500,
            0,
            usize::MAX,
        );
        assert_eq!((a.written[0], b.written[0], b.read), (3000, 3000, 0));
    }

    #[test]
    fn tiered_writes_split_by_breakpoint() {
        let mut s = CacheStore::new();
        let p = prompt(&[(2000, 1), (1500, 2), (700, 3)]);
        let x = explicit_call(
            &mut s,
            &p,
            &[bp(0, 0, 3_600_000), bp(1, 1, 300_000), bp(2, 1, 300_000)],
            &params(1024, 1),
            0,
            0,
            usize::MAX,
        );
        assert_eq!((x.written[0], x.written[1], x.uncached), (2000, 2200, 0));
    }

    #[test]
    fn automatic_reads_whole_blocks_of_a_shared_prefix() {
        // Kimi K3 fact: 2,048 of a 2,112-token tool block read on the second call, 256-token blocks.
        let mut s = CacheStore::new();
        let p1 = prompt(&[(2112, 1), (20, 2)]);
        let a = automatic_call(&mut s, &p1, &params(256, 256), 600_000, 0, true, 0);
        assert_eq!((a.read, a.written[0], a.uncached), (0, 2048, 84));
        let p2 = prompt(&[(2112, 1), (30, 3)]);
        let b = automatic_call(&mut s, &p2, &params(256, 256), 600_000, 10_000, true, 0);
        assert_eq!((b.read, b.written[0], b.uncached), (2048, 0, 94));
    }

    #[test]
    fn automatic_miss_by_chance_writes_again() {
        let mut s = CacheStore::new();
        let p = prompt(&[(4096, 1)]);
        automatic_call(&mut s, &p, &params(1024, 1), 600_000, 0, true, 0);
        let b = automatic_call(&mut s, &p, &params(1024, 1), 600_000, 5_000, false, 0);
        assert_eq!((b.read, b.written[0]), (0, 4096));
    }

    /// The definition of [`explicit_call`] without its shortcuts (no skipped lookups of entries the
    /// read pass already found): the oracle the optimised function is checked against.
    fn explicit_call_plain(
        store: &mut CacheStore,
        prompt: &Prompt,
        bps: &[PlacedBreakpoint],
        p: &RuleParams,
        now: u64,
        fresh_from: usize,
    ) -> Split {
        let total = prompt.tokens();
        let mut hit = 0u64;
        for bp in bps {
            let lo = (bp.boundary + 1).saturating_sub(p.lookback);
            let hi = bp.boundary.min(fresh_from.wrapping_sub(1));
            if fresh_from == 0 || hi < lo {
                continue;
            }
            for j in (lo..=hi).rev() {
                if let Some(e) = store.entries.get_mut(&prompt.cum_hash[j]) {
                    if e.usable(now) {
                        hit = hit.max(e.tokens.min(total));
                        if p.refresh_on_hit {
                            e.expires_ms = now.saturating_add(e.ttl_ms);
                        }
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
        for bp in bps {
            let pos = round_down(prompt.cum_tokens[bp.boundary], p.granularity);
            if pos < p.min_tokens || pos == 0 {
                continue;
            }
            let key = prompt.cum_hash[bp.boundary];
            if pos <= covered {
                if !store.entries.get(&key).is_some_and(|e| e.usable(now)) {
                    store.put(key, pos, now, p.avail_delay_ms, bp.ttl_ms);
                }
                continue;
            }
            store.put(key, pos, now, p.avail_delay_ms, bp.ttl_ms);
            split.written[bp.slot] += pos - covered;
            covered = pos;
        }
        split.uncached = total - covered;
        split
    }

    /// The explicit rules give the plain definition's splits on random timelines: sessions on
    /// shared heads, breakpoints on the head, the system prompt and the last message in two tiers,
    /// short lookbacks, parallel requests, expiry, and the engine's `fresh_from` hint.
    #[test]
    fn explicit_call_matches_its_definition() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for lookback in [1usize, 3, 20] {
            let p = RuleParams {
                min_tokens: 700,
                granularity: 1,
                refresh_on_hit: lookback != 3,
                lookback,
                avail_delay_ms: 2_000,
            };
            let (mut fast, mut plain) = (CacheStore::new(), CacheStore::new());
            let mut kept = CacheStore::new();
            let mut own = vec![OwnEntries::default(); 6];
            let mut histories: Vec<Vec<(u64, u64)>> = vec![vec![]; 6];
            let mut now = 0u64;
            let mut reads = 0;
            for step in 0..6_000u64 {
                let si = rng.gen_range(0..histories.len());
                now += rng.gen_range(0..40_000);
                let h = &mut histories[si];
                if h.len() > 40 {
                    h.clear();
                }
                let fresh = h.len();
                for _ in 0..rng.gen_range(0..3) {
                    h.push((rng.gen_range(0..400), step * 10 + si as u64 * 1_000_003));
                }
                let mut pr = Prompt::default();
                for &(t, id) in [(500u64, 1u64), (300, 2), (400, 3)].iter().chain(h.iter()) {
                    pr.push(Segment { tokens: t, id });
                }
                let head = 2;
                let last = pr.last_boundary().unwrap();
                let mut bps = vec![bp(1, 0, 3_600_000), bp(head, 1, 300_000)];
                if last != head {
                    bps.push(bp(last, 1, 300_000));
                }
                // Boundaries of this call's new segments are new to the store (when any was
                // pushed: zero-token segments are skipped, so count from the prompt).
                let fresh_from = if rng.gen_range(0..4) == 0 {
                    usize::MAX
                } else {
                    3 + h[..fresh].iter().filter(|s| s.0 > 0).count()
                };
                let a = explicit_call(&mut fast, &pr, &bps, &p, now, 0, fresh_from);
                let b = explicit_call_plain(&mut plain, &pr, &bps, &p, now, fresh_from);
                assert_eq!(a, b, "step {step} lookback {lookback}");
                // The same with each conversation's own entries kept beside it (after the head's
                // three segments); a new conversation reuses the boundaries of the last.
                let c = explicit_call_with_own(
                    &mut kept,
                    &pr,
                    &bps,
                    &p,
                    now,
                    0,
                    fresh_from,
                    Some(&mut own[si]),
                    3,
                );
                assert_eq!(a, c, "step {step} lookback {lookback} (own entries)");
                reads += usize::from(a.read > 0);
            }
            assert!(reads > 1_000, "only {reads} reads");
            assert!(
                own.iter().any(|o| o.spilled),
                "the spill path is not exercised"
            );
        }
    }

    /// The leased refresh gives exactly the plain walk's splits on random timelines: sessions on
    /// shared heads, tool-list switches, gaps shorter than the first-token delay, chance misses and
    /// block granularity larger than some growth steps.
    #[test]
    fn leased_refresh_matches_the_plain_walk() {
        use crate::base::hash::chain;
        use rand::{Rng, SeedableRng};
        for shared_prefix_heads in [false, true] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
            let heads: Vec<Vec<(u64, u64)>> = (0..3u64)
                .map(|v| {
                    (0..4u64)
                        .map(|i| {
                            // With shared prefixes, heads differ only in their last segment
                            // (preserve_prefix); otherwise every segment differs (invalidate).
                            let id = if shared_prefix_heads && i < 3 {
                                i
                            } else {
                                v * 100 + i
                            };
                            (300, id + 1)
                        })
                        .collect()
                })
                .collect();
            let p = RuleParams {
                min_tokens: 512,
                granularity: 256,
                refresh_on_hit: true,
                lookback: usize::MAX,
                avail_delay_ms: 20_000,
            };
            let (mut plain, mut leased) = (CacheStore::new(), CacheStore::new());
            let mut kept = CacheStore::new();
            // (head version, rebuilds, own segments) per session.
            type Sess = (usize, u64, Vec<(u64, u64)>);
            let mut sessions: Vec<Sess> = vec![(0, 0, vec![]); 5];
            let mut own = vec![OwnEntries::default(); 5];
            let mut now = 0u64;
            let mut reads = 0;
            for step in 0..8_000u64 {
                let si = rng.gen_range(0..sessions.len());
                now += match rng.gen_range(0..10) {
                    0..=3 => rng.gen_range(0..20_000),
                    4..=8 => rng.gen_range(1_000..60_000),
                    _ => rng.gen_range(50_000..200_000),
                };
                let s = &mut sessions[si];
                // Switch heads now and then keeping the conversation (a tool-list change; the
                // session may come back to a head it had); start a new conversation when long.
                if rng.gen_range(0..25) == 0 {
                    s.0 = rng.gen_range(0..heads.len());
                }
                if s.2.len() > 60 {
                    s.1 += 1;
                    s.2.clear();
                }
                let pushed = rng.gen_range(0..4);
                for _ in 0..pushed {
                    s.2.push((
                        rng.gen_range(1..200),
                        step * 8 + si as u64 * 1_000_000 + s.1,
                    ));
                }
                let mut pr = Prompt::default();
                for &(t, id) in heads[s.0].iter().chain(&s.2) {
                    pr.push(Segment { tokens: t, id });
                }
                let hit_allowed = rng.gen_range(0..10) > 0;
                // Now and then another machine's key space (the routing model), with its own leases.
                let salt = if rng.gen_range(0..6) == 0 {
                    0x6d61_6368
                } else {
                    0
                };
                let keys = LeaseKeys {
                    block_len: heads[s.0].len(),
                    block: (!shared_prefix_heads)
                        .then(|| chain(*pr.cum_hash.get(3).unwrap(), salt)),
                    history: chain(chain(si as u64, s.1), *pr.cum_hash.get(3).unwrap()) ^ salt,
                };
                let a = automatic_call(&mut plain, &pr, &p, 60_000, now, hit_allowed, salt);
                // This step's new messages are fresh (the engine's hint), now and then unknown.
                let fresh_from = if rng.gen_range(0..5) == 0 {
                    usize::MAX
                } else {
                    heads[s.0].len() + s.2.len() - pushed
                };
                let b = automatic_call_leased(
                    &mut leased,
                    &pr,
                    &p,
                    60_000,
                    now,
                    hit_allowed,
                    salt,
                    &keys,
                    fresh_from,
                );
                assert_eq!(a, b, "step {step} (shared heads {shared_prefix_heads})");
                // The same with each conversation's own entries kept beside it.
                let ids = LeaseIds {
                    block_len: keys.block_len,
                    block: keys.block.map(|k| kept.lease_id(k)),
                    history: kept.lease_id(keys.history),
                };
                let c = automatic_call_with_leases(
                    &mut kept,
                    &pr,
                    &p,
                    60_000,
                    now,
                    hit_allowed,
                    salt,
                    &ids,
                    fresh_from,
                    Some(&mut own[si]),
                );
                assert_eq!(
                    a, c,
                    "step {step} (own entries, shared heads {shared_prefix_heads})"
                );
                reads += usize::from(a.read > 0);
                if step % 2_000 == 0 {
                    plain.sweep(now);
                    leased.sweep(now);
                    kept.sweep(now);
                }
            }
            assert!(
                own.iter().any(|o| o.spilled),
                "no entry was ever displaced: the spill path is not exercised"
            );
            assert!(
                reads > 1_000,
                "only {reads} reads: the timeline does not exercise hits"
            );
        }
    }
}
