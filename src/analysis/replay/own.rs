//! Each call at its own model: a log split by the model each call names (matched to the catalog),
//! replayed model by model (caches are not shared across models) and merged back in log order. The
//! calls of a model the catalog does not know are named and counted, never billed at another model's
//! rates.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::catalog::ModelSpec;

use super::{conversations, LoggedCall, ModelMatcher, ReplayOptions, ReplayResult, UsageLog};

/// The calls of one model that no catalog entry prices: left out of the totals, with the usage left
/// out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct UnpricedCalls {
    /// The model as the log names it (`(none)` when the calls name no model).
    pub model: String,
    /// Calls left out.
    pub calls: u64,
    /// Their prompt tokens (uncached + written + read).
    pub prompt_tokens: u64,
    /// Of which uncached.
    pub uncached_tokens: u64,
    /// Of which written to cache.
    pub cache_write_tokens: u64,
    /// Of which read from cache.
    pub cache_read_tokens: u64,
    /// Their output tokens.
    pub output_tokens: u64,
}

impl UnpricedCalls {
    fn add_call(&mut self, c: &LoggedCall) {
        self.calls += 1;
        self.prompt_tokens += c.prompt_tokens;
        self.uncached_tokens += c.uncached_tokens;
        self.cache_write_tokens += c.cache_write_5m_tokens + c.cache_write_1h_tokens;
        self.cache_read_tokens += c.cache_read_tokens;
        self.output_tokens += c.output_tokens;
    }

    /// Adds another file's calls of the same model.
    pub(crate) fn add(&mut self, o: &UnpricedCalls) {
        self.calls += o.calls;
        self.prompt_tokens += o.prompt_tokens;
        self.uncached_tokens += o.uncached_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// A log's calls by the catalog model that prices each.
#[derive(Debug)]
pub(crate) struct ModelSplit<'c> {
    /// Catalog models with the indices of their calls (in log order), in order of first call.
    pub priced: Vec<(&'c ModelSpec, Vec<usize>)>,
    /// The model of each call (`None`: left out).
    pub per_call: Vec<Option<&'c ModelSpec>>,
    /// Calls of models the catalog does not know, by logged name, in order of first call.
    pub unpriced: Vec<UnpricedCalls>,
    /// Calls naming no model that took the file's only named model.
    pub unnamed_at_file_model: usize,
    /// Every model the log names, with its call count, in order of first call.
    pub named: Vec<(String, usize)>,
}

impl ModelSplit<'_> {
    /// Calls that a catalog model prices.
    pub(crate) fn priced_calls(&self) -> usize {
        self.priced.iter().map(|(_, v)| v.len()).sum()
    }
}

/// Splits `log` by the model each call names. A call naming no model takes the file's model when the
/// file names exactly one (a transcript whose usage lines and model lines are apart); otherwise it is
/// left out under `(none)`, as a call of a model the catalog does not know is.
pub(crate) fn split_by_model<'c>(log: &UsageLog, matcher: &mut ModelMatcher<'c>) -> ModelSplit<'c> {
    let mut named: Vec<(String, usize)> = Vec::new();
    for m in log.calls.iter().filter_map(|c| c.model.as_ref()) {
        match named.iter_mut().find(|(n, _)| n == m) {
            Some((_, k)) => *k += 1,
            None => named.push((m.clone(), 1)),
        }
    }
    let only = match named.as_slice() {
        [(n, _)] => Some(n.clone()),
        _ => None,
    };
    let mut split = ModelSplit {
        priced: Vec::new(),
        per_call: Vec::with_capacity(log.calls.len()),
        unpriced: Vec::new(),
        unnamed_at_file_model: 0,
        named,
    };
    for (i, c) in log.calls.iter().enumerate() {
        let name = match (&c.model, &only) {
            (Some(n), _) => Some(n.as_str()),
            (None, Some(n)) => {
                split.unnamed_at_file_model += 1;
                Some(n.as_str())
            }
            (None, None) => None,
        };
        let spec = name.and_then(|n| matcher.get(n));
        split.per_call.push(spec);
        match spec {
            Some(m) => match split.priced.iter_mut().find(|(p, _)| p.id == m.id) {
                Some((_, v)) => v.push(i),
                None => split.priced.push((m, vec![i])),
            },
            None => {
                let key = name.unwrap_or("(none)");
                let at = match split.unpriced.iter().position(|u| u.model == key) {
                    Some(at) => at,
                    None => {
                        split.unpriced.push(UnpricedCalls {
                            model: key.to_string(),
                            ..Default::default()
                        });
                        split.unpriced.len() - 1
                    }
                };
                split.unpriced[at].add_call(c);
            }
        }
    }
    split
}

/// The calls `idx` of `log` as a log of their own (same origin; the file's counters stay with the
/// file).
pub(crate) fn sub_log(log: &UsageLog, idx: &[usize]) -> UsageLog {
    UsageLog {
        origin: log.origin.clone(),
        calls: idx.iter().map(|&i| log.calls[i].clone()).collect(),
        ..Default::default()
    }
}

/// Replays of parts of `log` (each the calls `idx`, replayed on its own model) merged into one result
/// in log order: call numbers, conversations and times are those of the whole log, so the totals by
/// day, session, project and model cover the calls of every part.
pub(crate) fn merge_parts(
    log: &UsageLog,
    parts: Vec<(&[usize], ReplayResult)>,
    opts: &ReplayOptions,
) -> ReplayResult {
    let (conv, times) = conversations(&log.calls, opts);
    let mut models: Vec<String> = Vec::new();
    let mut strategies: Vec<String> = Vec::new();
    let mut by_tier: BTreeMap<String, u64> = BTreeMap::new();
    let mut calls = Vec::new();
    for (idx, r) in parts {
        if !models.contains(&r.model) {
            models.push(r.model.clone());
        }
        if !strategies.contains(&r.strategy) {
            strategies.push(r.strategy.clone());
        }
        for (k, n) in &r.predicted_write_tokens_by_tier {
            *by_tier.entry(k.clone()).or_default() += n;
        }
        for mut c in r.calls {
            let i = idx[c.call - 1];
            c.call = i + 1;
            c.conversation = conv[i] + 1;
            c.time_s = times[i];
            calls.push(c);
        }
    }
    calls.sort_by_key(|c| c.call);
    let mut seen: Vec<usize> = calls.iter().map(|c| c.conversation).collect();
    seen.sort_unstable();
    seen.dedup();
    let mut out = ReplayResult {
        model: models.join("+"),
        strategy: strategies.join(" / "),
        conversations: seen.len(),
        logged: Default::default(),
        predicted: Default::default(),
        predicted_write_tokens_by_tier: by_tier,
        calls,
    };
    for c in &out.calls {
        out.logged.add(&c.logged);
        out.predicted.add(&c.predicted);
    }
    out
}
