//! The cache store and the per-call rules of each caching mode, as pure functions of the prompt, the
//! store and the clock. One implementation per mode; the numbers come from the model's rules.

use std::collections::HashMap;

use super::prompt::Prompt;

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
}

impl Entry {
    fn usable(&self, now: u64) -> bool {
        now < self.expires_ms && now >= self.available_ms
    }
}

/// Cached prefixes of one account (or one session when caches are not shared).
#[derive(Debug, Default, Clone)]
pub struct CacheStore {
    entries: HashMap<u64, Entry>,
}

impl CacheStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
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
        self.entries.retain(|_, e| e.expires_ms > now);
    }

    fn put(&mut self, key: u64, tokens: u64, now: u64, avail_delay_ms: u64, ttl_ms: u64) {
        self.entries.insert(
            key,
            Entry {
                tokens,
                expires_ms: now.saturating_add(ttl_ms),
                available_ms: now.saturating_add(avail_delay_ms.max(1)),
                ttl_ms,
            },
        );
    }
}

/// Token buckets of one request's prompt: `uncached + written + read == prompt`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    /// Prompt tokens.
    pub prompt: u64,
    /// Tokens read from cache.
    pub read: u64,
    /// Tokens written, per write slot (the strategy's tiers, in prompt order).
    pub written: [u64; 3],
    /// Tokens billed at the base rate.
    pub uncached: u64,
}

impl Split {
    /// All tokens written.
    pub fn written_total(&self) -> u64 {
        self.written.iter().sum()
    }

    /// Everything at the base rate (no caching).
    pub fn uncached_only(prompt: u64) -> Self {
        Split {
            prompt,
            uncached: prompt,
            ..Default::default()
        }
    }
}

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

fn round_down(tokens: u64, g: u64) -> u64 {
    tokens / g * g
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
/// between consecutive written breakpoints billed in that breakpoint's tier.
pub fn explicit_call(
    store: &mut CacheStore,
    prompt: &Prompt,
    bps: &[PlacedBreakpoint],
    p: &RuleParams,
    now: u64,
) -> Split {
    let total = prompt.tokens();
    let mut hit = 0u64;
    for bp in bps {
        let lo = (bp.boundary + 1).saturating_sub(p.lookback);
        for j in (lo..=bp.boundary).rev() {
            if let Some(e) = store.entries.get_mut(&prompt.cum_hash[j]) {
                if e.usable(now) {
                    // `min`: only a 64-bit hash collision could make an entry longer than the prompt.
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
            // Already read through a longer hit: make sure this breakpoint has its own entry, at no
            // charge, as the tokens were billed as a read.
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
) -> Split {
    let total = prompt.tokens();
    let n = prompt.cum_hash.len();
    let mut hit = 0u64;
    let mut hit_at: Option<usize> = None;
    if hit_allowed {
        for j in (0..n).rev() {
            if let Some(e) = store.entries.get(&prompt.cum_hash[j]) {
                if e.usable(now) {
                    hit = e.tokens.min(total);
                    hit_at = Some(j);
                    break;
                }
            }
        }
    }
    if let (Some(h), true) = (hit_at, p.refresh_on_hit) {
        // A block chain is refreshed as a whole: every shorter prefix of the hit is touched too.
        for j in 0..=h {
            if let Some(e) = store.entries.get_mut(&prompt.cum_hash[j]) {
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
                store.put(prompt.cum_hash[j], t, now, p.avail_delay_ms, ttl_ms);
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
    use crate::engine::prompt::Segment;

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
    fn explicit_writes_then_reads_the_tool_block() {
        let mut s = CacheStore::new();
        let p1 = prompt(&[(3000, 1), (100, 2)]);
        let a = explicit_call(&mut s, &p1, &[bp(0, 0, 300_000)], &params(1024, 1), 0);
        assert_eq!((a.read, a.written[0], a.uncached), (0, 3000, 100));
        let p2 = prompt(&[(3000, 1), (250, 3)]);
        let b = explicit_call(&mut s, &p2, &[bp(0, 0, 300_000)], &params(1024, 1), 10_000);
        assert_eq!((b.read, b.written_total(), b.uncached), (3000, 0, 250));
    }

    #[test]
    fn explicit_below_minimum_is_not_cached() {
        let mut s = CacheStore::new();
        let p1 = prompt(&[(655, 1), (10, 2)]);
        for t in [0, 5_000] {
            let a = explicit_call(&mut s, &p1, &[bp(0, 0, 300_000)], &params(1024, 1), t);
            assert_eq!((a.read, a.written_total(), a.uncached), (0, 0, 665));
        }
    }

    #[test]
    fn explicit_entry_expires_after_ttl_and_hit_refreshes() {
        let mut s = CacheStore::new();
        let p = prompt(&[(2000, 1)]);
        let bps = [bp(0, 0, 300_000)];
        explicit_call(&mut s, &p, &bps, &params(1024, 1), 0);
        // Read at 4 min refreshes to 9 min; read at 8 min still hits; at 13 min 1 s it is gone.
        assert_eq!(
            explicit_call(&mut s, &p, &bps, &params(1024, 1), 240_000).read,
            2000
        );
        assert_eq!(
            explicit_call(&mut s, &p, &bps, &params(1024, 1), 480_000).read,
            2000
        );
        let late = explicit_call(&mut s, &p, &bps, &params(1024, 1), 781_000);
        assert_eq!((late.read, late.written[0]), (0, 2000));
    }

    #[test]
    fn explicit_lookback_is_bounded() {
        let mut s = CacheStore::new();
        // 30 small message blocks after a 2000-token block; the entry is only at boundary 0.
        let mut segs = vec![(2000, 1)];
        segs.extend((0..30).map(|i| (10, 100 + i)));
        let p = prompt(&segs);
        explicit_call(&mut s, &p, &[bp(0, 0, 300_000)], &params(1024, 1), 0);
        let last = p.last_boundary().unwrap();
        // A lone breakpoint on the last block looks back 20 boundaries: boundary 0 is out of reach.
        let far = explicit_call(&mut s, &p, &[bp(last, 0, 300_000)], &params(1024, 1), 5_000);
        assert_eq!(far.read, 0);
        assert_eq!(far.written[0], 2300);
    }

    #[test]
    fn parallel_requests_miss() {
        let mut s = CacheStore::new();
        let p = prompt(&[(3000, 1)]);
        let a = explicit_call(&mut s, &p, &[bp(0, 0, 300_000)], &params(1024, 1), 0);
        let b = explicit_call(&mut s, &p, &[bp(0, 0, 300_000)], &params(1024, 1), 500);
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
        );
        assert_eq!((x.written[0], x.written[1], x.uncached), (2000, 2200, 0));
    }

    #[test]
    fn automatic_reads_whole_blocks_of_a_shared_prefix() {
        // Kimi K3 fact: 2,048 of a 2,112-token tool block read on the second call, 256-token blocks.
        let mut s = CacheStore::new();
        let p1 = prompt(&[(2112, 1), (20, 2)]);
        let a = automatic_call(&mut s, &p1, &params(256, 256), 600_000, 0, true);
        assert_eq!((a.read, a.written[0], a.uncached), (0, 2048, 84));
        let p2 = prompt(&[(2112, 1), (30, 3)]);
        let b = automatic_call(&mut s, &p2, &params(256, 256), 600_000, 10_000, true);
        assert_eq!((b.read, b.written[0], b.uncached), (2048, 0, 94));
    }

    #[test]
    fn automatic_miss_by_chance_writes_again() {
        let mut s = CacheStore::new();
        let p = prompt(&[(4096, 1)]);
        automatic_call(&mut s, &p, &params(1024, 1), 600_000, 0, true);
        let b = automatic_call(&mut s, &p, &params(1024, 1), 600_000, 5_000, false);
        assert_eq!((b.read, b.written[0]), (0, 4096));
    }
}
