//! The rules against their definitions: each fast path is checked call by call against a plain walk.

use super::store::*;
use super::*;
use crate::sim::engine::prompt::{Prompt, Segment};

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
    use rand::{RngExt, SeedableRng};
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
            let si = rng.random_range(0..histories.len());
            now += rng.random_range(0..40_000);
            let h = &mut histories[si];
            if h.len() > 40 {
                h.clear();
            }
            let fresh = h.len();
            for _ in 0..rng.random_range(0..3) {
                h.push((rng.random_range(0..400), step * 10 + si as u64 * 1_000_003));
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
            let fresh_from = if rng.random_range(0..4) == 0 {
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
    use rand::{RngExt, SeedableRng};
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
            let si = rng.random_range(0..sessions.len());
            now += match rng.random_range(0..10) {
                0..=3 => rng.random_range(0..20_000),
                4..=8 => rng.random_range(1_000..60_000),
                _ => rng.random_range(50_000..200_000),
            };
            let s = &mut sessions[si];
            // Switch heads now and then keeping the conversation (a tool-list change; the
            // session may come back to a head it had); start a new conversation when long.
            if rng.random_range(0..25) == 0 {
                s.0 = rng.random_range(0..heads.len());
            }
            if s.2.len() > 60 {
                s.1 += 1;
                s.2.clear();
            }
            let pushed = rng.random_range(0..4);
            for _ in 0..pushed {
                s.2.push((
                    rng.random_range(1..200),
                    step * 8 + si as u64 * 1_000_000 + s.1,
                ));
            }
            let mut pr = Prompt::default();
            for &(t, id) in heads[s.0].iter().chain(&s.2) {
                pr.push(Segment { tokens: t, id });
            }
            let hit_allowed = rng.random_range(0..10) > 0;
            // Now and then another machine's key space (the routing model), with its own leases.
            let salt = if rng.random_range(0..6) == 0 {
                0x6d61_6368
            } else {
                0
            };
            let keys = LeaseKeys {
                block_len: heads[s.0].len(),
                block: (!shared_prefix_heads).then(|| chain(*pr.cum_hash.get(3).unwrap(), salt)),
                history: chain(chain(si as u64, s.1), *pr.cum_hash.get(3).unwrap()) ^ salt,
            };
            let a = automatic_call(&mut plain, &pr, &p, 60_000, now, hit_allowed, salt);
            // This step's new messages are fresh (the engine's hint), now and then unknown.
            let fresh_from = if rng.random_range(0..5) == 0 {
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
