//! A log's calls rebuilt as conversations: which conversation each call belongs to, when it starts,
//! and the fixed prefix the log itself shows.

use crate::base::hash::FastMap;

use super::{LoggedCall, ReplayOptions};

/// Where each call goes: its conversation (0-based, in order of first appearance) and its start time
/// in seconds from the first call. Logged timestamps are used where present (never going backwards
/// within a conversation); a call without one starts `gap` after its conversation's previous call,
/// and a conversation without any starts `gap` after the latest call so far.
pub(crate) fn conversations(calls: &[LoggedCall], opts: &ReplayOptions) -> (Vec<usize>, Vec<f64>) {
    let t0 = calls
        .iter()
        .filter_map(|c| c.unix_time)
        .fold(None::<f64>, |m, t| Some(m.map_or(t, |m| m.min(t))));
    // (session, agent, sidechain) -> (conversation, time of its latest call)
    type Key<'a> = (Option<&'a str>, Option<&'a str>, bool);
    let mut by_key: FastMap<Key, (usize, f64)> = FastMap::default();
    let mut conv = Vec::with_capacity(calls.len());
    let mut times = Vec::with_capacity(calls.len());
    let mut next = 0usize;
    let mut latest: Option<f64> = None;
    let gap = opts.gap_seconds;
    for c in calls {
        let key = (c.session.as_deref(), c.agent.as_deref(), c.sidechain);
        let logged = c.unix_time.zip(t0).map(|(t, t0)| t - t0);
        // One lookup per call: the conversation's entry is updated in place.
        let (idx, t) = match by_key.get_mut(&key) {
            Some(slot) => {
                let (idx, prev) = *slot;
                let t = logged.map_or(prev + gap, |t| t.max(prev));
                let split = opts.session_gap_seconds > 0.0
                    && logged.is_some()
                    && t - prev > opts.session_gap_seconds;
                let idx = if split {
                    next += 1;
                    next - 1
                } else {
                    idx
                };
                *slot = (idx, t);
                (idx, t)
            }
            None => {
                next += 1;
                let t = logged.unwrap_or_else(|| latest.map_or(0.0, |l| l + gap));
                by_key.insert(key, (next - 1, t));
                (next - 1, t)
            }
        };
        latest = Some(latest.map_or(t, |l: f64| l.max(t)));
        conv.push(idx);
        times.push(t);
    }
    (conv, times)
}

/// The stable prefix (tools + system prompt) the log itself shows: the fewest tokens read from
/// cache by a main-agent call that starts a conversation (or restarts one), when any such call reads.
/// A fresh conversation can only read what an earlier one left, which is the shared prefix.
pub fn infer_prefix_tokens(calls: &[LoggedCall], opts: &ReplayOptions) -> Option<u64> {
    let (conv, _) = conversations(calls, opts);
    let mut prev: FastMap<usize, u64> = FastMap::default();
    let mut best: Option<u64> = None;
    for (c, &k) in calls.iter().zip(&conv) {
        let starts = prev.get(&k).is_none_or(|&p| c.prompt_tokens < p);
        prev.insert(k, c.prompt_tokens);
        if starts
            && !c.sidechain
            && c.cache_read_tokens > 0
            && c.cache_read_tokens < c.prompt_tokens
        {
            best = Some(best.map_or(c.cache_read_tokens, |b| b.min(c.cache_read_tokens)));
        }
    }
    best
}
