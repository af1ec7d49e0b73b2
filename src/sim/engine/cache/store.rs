//! The cache store: prefix entries of one account, their leases (shared refreshes of a chain) and
//! the routing model's per-key windows, plus a conversation's own entries kept beside it. It knows
//! nothing of modes: the per-call rules that read and write it are in the sibling files.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for keys that are already well-mixed 64-bit prefix identities (see [`crate::base::hash::chain`]):
/// it passes the key through, so a lookup costs no hashing at all. Other input falls back to FNV-1a.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

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
pub(crate) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Length of the sliding window of the routing model (rates are per minute).
pub(crate) const ROUTING_WINDOW_MS: u64 = 60_000;

/// A cached prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Tokens this entry lets a later request read (the prefix rounded down to the granularity).
    pub tokens: u64,
    /// Clock time (ms) after which the entry is gone.
    pub expires_ms: u64,
    /// Clock time (ms) from which the entry can be read (writes appear when the response starts).
    pub available_ms: u64,
    /// Lifetime given by a write or a refresh.
    pub ttl_ms: u64,
    /// Lease that may extend `expires_ms` ([`NO_LEASE`] for none; see `automatic_call_with_leases`).
    pub lease: u32,
    /// Boundary index of the prefix in its prompt (meaningful for leased entries).
    pub depth: u32,
}

/// The `lease` of an entry that has none.
pub(crate) const NO_LEASE: u32 = u32::MAX;

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
    pub(super) fn usable(&self, now: u64) -> bool {
        now < self.expires_ms && now >= self.available_ms
    }
}

/// A shared refresh of a chain of entries: every entry tagged with the lease whose depth is at most
/// `depth` lives at least until `expires_ms`. One lease update stands for refreshing a whole chain.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Lease {
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
    pub(super) entries: IdMap<Entry>,
    /// Routing model: start times of recent requests per routing key (the first ~256 tokens).
    routes: IdMap<VecDeque<u64>>,
    pub(super) leases: Vec<Lease>,
    lease_ids: IdMap<u32>,
}

impl CacheStore {
    /// An empty store.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Forgets everything (keeping the allocated capacity for the next run).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.routes.clear();
        self.leases.clear();
        self.lease_ids.clear();
    }

    /// Time after which an entry is gone, leases included.
    #[inline]
    pub(super) fn expiry(&self, e: &Entry) -> u64 {
        entry_expiry(&self.leases, e)
    }

    #[inline]
    pub(super) fn usable_entry(&self, e: &Entry, now: u64) -> bool {
        now < self.expiry(e) && now >= e.available_ms
    }

    /// The id of the lease with key `key`, made on first use (ids live as long as the store's
    /// contents: until [`CacheStore::clear`]).
    pub(crate) fn lease_id(&mut self, key: u64) -> u32 {
        let next = self.leases.len() as u32;
        let id = *self.lease_ids.entry(key).or_insert(next);
        if id == next {
            self.leases.push(Lease::default());
        }
        id
    }

    /// Refreshes, through lease `id`, every entry of its chain up to boundary `depth` (the chain's
    /// entries are prefixes of the prompt that hit at `depth`).
    pub(super) fn refresh_lease(&mut self, id: u32, depth: usize, expires_ms: u64) {
        // Entries of the chain deeper than `depth` that the lease covered are dead: they were alive
        // and readable at the refresh that moved the lease to them (ancestors of that hit), and an
        // entry that stays alive stays readable, so had one been alive now the hit would be deeper.
        // Dropping them from the lease therefore changes nothing.
        self.leases[id as usize] = Lease {
            expires_ms,
            depth: depth as u32,
        };
    }

    /// Routing model for best-effort caches: a provider sends about `rpm` requests per minute of one
    /// routing key to one machine; the rest overflow to further machines. Returns the machine that
    /// serves a request starting at `now` (0 while the key's rate over the last minute is below `rpm`).
    /// Each machine has its own cache, so the first request that reaches a new machine misses.
    pub(crate) fn route(&mut self, key: u64, now: u64, rpm: f64) -> u32 {
        let w = self.routes.entry(key).or_default();
        while w.front().is_some_and(|&t| t + ROUTING_WINDOW_MS <= now) {
            w.pop_front();
        }
        let machine = (w.len() as f64 / rpm).floor();
        w.push_back(now);
        machine.min(f64::from(u32::MAX)) as u32
    }

    /// Whether nothing is cached and no routing window is open (after [`CacheStore::sweep`]: the
    /// store can be dropped).
    pub(crate) fn is_idle(&self) -> bool {
        self.entries.is_empty() && self.routes.is_empty()
    }

    /// Drops expired entries; called now and then so memory stays bounded on long runs.
    pub(crate) fn sweep(&mut self, now: u64) {
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
    pub(super) fn put(
        &mut self,
        key: u64,
        tokens: u64,
        now: u64,
        avail_delay_ms: u64,
        ttl_ms: u64,
    ) {
        self.put_leased(key, tokens, now, avail_delay_ms, ttl_ms, NO_LEASE, 0);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn put_leased(
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
    /// from boundary `from` on (see [`OwnEntries`]). Always inlined: called from more engine loops
    /// (members run alone and sharing their prompts), it was left out of line, 3% more
    /// instructions per simulated call.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn put_at(
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
    pub(super) fn find<'s>(
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
    pub(super) fn find_mut<'s>(
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
    pub(super) spilled: bool,
}

impl OwnEntries {
    /// Forgets every entry (the conversation is over or the store was cleared).
    pub(crate) fn clear(&mut self) {
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
