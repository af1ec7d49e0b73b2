//! The event queue: the next call of every active session, earliest first, ties to the lower
//! session index.
//!
//! The engine moves the session at the top to its next call time once per simulated call, so this
//! is on the hot path. Two choices make it cheap:
//! - a 4-ary min-heap rather than `std::collections::BinaryHeap`: half the levels of a binary heap,
//!   a node's four children side by side in one cache line;
//! - 64-bit keys (`time << 20 | session`) compared in one instruction instead of 128-bit pairs.
//!   They hold every time below 2^44 ms (557 years of simulated time) and every session index below
//!   2^20 (the scenario limit is 10^6); an event beyond either goes to an exact fallback queue, so
//!   the order of calls is the same for any input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bits of the session index in a fast key.
const SESSION_BITS: u32 = 20;
/// Fast keys hold times below this.
const FAST_TIME_LIMIT: u64 = 1 << (64 - SESSION_BITS);
/// Children per node of the fast heap.
const ARITY: usize = 4;

/// A priority queue of (time, session) events with an in-place "move the top" operation.
#[derive(Debug, Default, Clone)]
pub(crate) struct EventQueue {
    /// Events representable as fast keys, as a 4-ary min-heap.
    fast: Vec<u64>,
    /// The rest, as exact (time, session) pairs; the earliest event is the earlier of both tops.
    slow: BinaryHeap<Reverse<(u64, u32)>>,
}

/// The fast key of an event, if it has one.
#[inline]
fn fast_key(time_ms: u64, session: u32) -> Option<u64> {
    (time_ms < FAST_TIME_LIMIT && session < 1 << SESSION_BITS)
        .then_some((time_ms << SESSION_BITS) | u64::from(session))
}

impl EventQueue {
    /// Empties the queue, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.fast.clear();
        self.slow.clear();
    }

    /// Number of queued events (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.fast.len() + self.slow.len()
    }

    /// Whether no event is queued (tests).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The earliest event as (time in ms, session index).
    #[inline]
    pub(crate) fn peek(&self) -> Option<(u64, u32)> {
        let fast = self
            .fast
            .first()
            .map(|&k| (k >> SESSION_BITS, (k & ((1 << SESSION_BITS) - 1)) as u32));
        match (fast, self.slow.peek()) {
            (Some(f), Some(Reverse(s))) => Some(f.min(*s)),
            (Some(f), None) => Some(f),
            (None, s) => s.map(|r| r.0),
        }
    }

    /// Adds an event.
    pub(crate) fn push(&mut self, time_ms: u64, session: u32) {
        match fast_key(time_ms, session) {
            Some(key) => self.push_fast(key),
            None => self.slow.push(Reverse((time_ms, session))),
        }
    }

    /// Moves the earliest event to `time_ms` for session `session` (the engine's step: the session
    /// whose call was just simulated gets its next call). The queue must not be empty.
    #[inline(always)]
    pub(crate) fn replace_top(&mut self, time_ms: u64, session: u32) {
        let top_is_fast = match (self.fast.first(), self.slow.peek()) {
            (Some(&k), Some(Reverse(s))) => {
                (k >> SESSION_BITS, (k & ((1 << SESSION_BITS) - 1)) as u32) < *s
            }
            (Some(_), None) => true,
            _ => false,
        };
        match (top_is_fast, fast_key(time_ms, session)) {
            (true, Some(key)) => self.sift_down_from_root(key),
            _ => {
                self.pop();
                self.push(time_ms, session);
            }
        }
    }

    /// Removes the earliest event.
    pub(crate) fn pop(&mut self) -> Option<(u64, u32)> {
        let top = self.peek()?;
        let top_is_fast = self
            .fast
            .first()
            .is_some_and(|&k| fast_key(top.0, top.1) == Some(k));
        if top_is_fast {
            if let Some(last) = self.fast.pop() {
                if !self.fast.is_empty() {
                    self.sift_down_from_root(last);
                }
            }
        } else {
            self.slow.pop();
        }
        Some(top)
    }

    fn push_fast(&mut self, key: u64) {
        self.fast.push(key);
        let mut i = self.fast.len() - 1;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.fast[parent] <= key {
                break;
            }
            self.fast[i] = self.fast[parent];
            i = parent;
        }
        self.fast[i] = key;
    }

    /// Puts `key` at the root of the fast heap and moves it down to its place.
    #[inline]
    fn sift_down_from_root(&mut self, key: u64) {
        let keys = &mut self.fast[..];
        let n = keys.len();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            let (child, smallest) = if first + ARITY <= n {
                // All four children (the common case): a fixed-size window, one bounds check.
                let c: &[u64; ARITY] = keys[first..first + ARITY]
                    .try_into()
                    .unwrap_or(&[u64::MAX; ARITY]);
                let (a, b) = if c[1] < c[0] { (1, c[1]) } else { (0, c[0]) };
                let (d, e) = if c[3] < c[2] { (3, c[3]) } else { (2, c[2]) };
                if e < b {
                    (first + d, e)
                } else {
                    (first + a, b)
                }
            } else if first < n {
                let mut best = (first, keys[first]);
                for (c, &k) in keys.iter().enumerate().skip(first + 1) {
                    if k < best.1 {
                        best = (c, k);
                    }
                }
                best
            } else {
                break;
            };
            if key <= smallest {
                break;
            }
            keys[i] = smallest;
            i = child;
        }
        keys[i] = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same operations on this queue and on the standard binary heap of (time, session) pairs
    /// give the same events in the same order, also with times and sessions beyond the fast keys.
    #[test]
    fn matches_the_standard_heap() {
        let mut state = 7u64;
        let mut next = || crate::base::rng::splitmix64(&mut state);
        for (size, base) in [
            (1usize, 0u64),
            (2, 0),
            (3, 0),
            (4, 0),
            (5, 0),
            (16, 0),
            (17, 0),
            (100, 0),
            (1000, 0),
            (100, FAST_TIME_LIMIT - 2_000),
            (50, u64::MAX - 5_000),
        ] {
            let mut q = EventQueue::default();
            let mut h = BinaryHeap::new();
            for s in 0..size as u32 {
                // Some sessions beyond the fast keys' index range.
                let s = if next() % 7 == 0 {
                    s + (1 << SESSION_BITS)
                } else {
                    s
                };
                let t = base + next() % 1000;
                q.push(t, s);
                h.push(Reverse((t, s)));
            }
            for _ in 0..20 * size {
                assert_eq!(q.peek(), h.peek().map(|r| r.0));
                let (t, s) = q.peek().unwrap();
                if next() % 5 == 0 {
                    assert_eq!(q.pop(), h.pop().map(|r| r.0));
                    if q.is_empty() {
                        break;
                    }
                } else {
                    // Later time, same session (the engine's move), sometimes the same time.
                    let t2 = t.saturating_add(next() % 3000);
                    q.replace_top(t2, s);
                    h.pop();
                    h.push(Reverse((t2, s)));
                }
                assert_eq!(q.len(), h.len());
            }
            while let Some(e) = h.pop() {
                assert_eq!(q.pop(), Some(e.0));
            }
            assert!(q.is_empty());
        }
    }
}
