//! Each call at its own model: a log split by the model each call names (matched to the catalog),
//! replayed model by model (caches are not shared across models) and merged back in log order. The
//! calls of a model the catalog does not know are named and counted, never billed at another model's
//! rates.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

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

/// Values by key in order of first appearance, each key found by hash: the bookkeeping of model
/// names (per file, per folder, per history). A search of a list per call made a log of `n` distinct
/// names cost `n²/2` comparisons of names (100,000 names: 28 s; issue 29); here each call costs
/// one hash and, expected, about one comparison.
#[derive(Debug, Clone)]
pub(crate) struct FirstSeen<K, V> {
    keys: Vec<K>,
    values: Vec<V>,
    index: HashMap<K, usize>,
}

impl<K, V> Default for FirstSeen<K, V> {
    fn default() -> Self {
        FirstSeen {
            keys: Vec::new(),
            values: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone, V> FirstSeen<K, V> {
    /// The value of `key`, made by `make` (and placed last) when the key is new.
    pub(crate) fn get_or_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> V) -> &mut V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let at = match self.index.get(key) {
            Some(&at) => at,
            None => {
                let k = key.to_owned();
                self.index.insert(k.clone(), self.values.len());
                self.keys.push(k);
                self.values.push(make());
                self.values.len() - 1
            }
        };
        &mut self.values[at]
    }

    /// Keys seen.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no key was seen.
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values in order of first appearance of their keys.
    pub(crate) fn values(&self) -> &[V] {
        &self.values
    }

    /// `(key, value)` in order of first appearance.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.keys.iter().zip(&self.values)
    }

    /// `(key, value)` in order of first appearance.
    pub(crate) fn into_pairs(self) -> impl Iterator<Item = (K, V)> {
        self.keys.into_iter().zip(self.values)
    }
}

/// Serialised as the list of its values (what a `Vec` of them was).
impl<K, V: Serialize> Serialize for FirstSeen<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.values.serialize(s)
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
    let mut named: FirstSeen<&str, usize> = FirstSeen::default();
    for m in log.calls.iter().filter_map(|c| c.model.as_deref()) {
        *named.get_or_insert_with(&m, || 0) += 1;
    }
    let only = match named.len() {
        1 => named.iter().next().map(|(n, _)| *n),
        _ => None,
    };
    let mut priced: FirstSeen<&str, (&'c ModelSpec, Vec<usize>)> = FirstSeen::default();
    let mut unpriced: FirstSeen<&str, UnpricedCalls> = FirstSeen::default();
    let mut per_call = Vec::with_capacity(log.calls.len());
    let mut unnamed_at_file_model = 0;
    for (i, c) in log.calls.iter().enumerate() {
        let name = match (&c.model, only) {
            (Some(n), _) => Some(n.as_str()),
            (None, Some(n)) => {
                unnamed_at_file_model += 1;
                Some(n)
            }
            (None, None) => None,
        };
        let spec = name.and_then(|n| matcher.get(n));
        per_call.push(spec);
        match spec {
            Some(m) => priced
                .get_or_insert_with(&m.id.as_str(), || (m, Vec::new()))
                .1
                .push(i),
            None => {
                let key = name.unwrap_or("(none)");
                unpriced
                    .get_or_insert_with(&key, || UnpricedCalls {
                        model: key.to_string(),
                        ..Default::default()
                    })
                    .add_call(c);
            }
        }
    }
    ModelSplit {
        priced: priced.into_pairs().map(|(_, v)| v).collect(),
        per_call,
        unpriced: unpriced.into_pairs().map(|(_, v)| v).collect(),
        unnamed_at_file_model,
        named: named
            .into_pairs()
            .map(|(n, k)| (n.to_string(), k))
            .collect(),
    }
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::hash::{Hash, Hasher};

    use super::FirstSeen;

    thread_local! {
        static COMPARED: Cell<u64> = const { Cell::new(0) };
    }

    /// A name whose comparisons are counted.
    #[derive(Debug, Clone)]
    struct Counted(String);

    impl PartialEq for Counted {
        fn eq(&self, o: &Self) -> bool {
            COMPARED.with(|c| c.set(c.get() + 1));
            self.0 == o.0
        }
    }
    impl Eq for Counted {}
    impl Hash for Counted {
        fn hash<H: Hasher>(&self, h: &mut H) {
            self.0.hash(h);
        }
    }

    /// Issue 29: a log of `n` distinct model names cost `n²/2` comparisons of names (28 s for
    /// 100,000). Counted here, not timed: each name, new or seen, costs about one comparison.
    #[test]
    fn distinct_names_cost_about_one_comparison_each() {
        let n = 20_000u64;
        let mut seen: FirstSeen<Counted, u64> = FirstSeen::default();
        COMPARED.with(|c| c.set(0));
        // Every name once, then every name again.
        for round in 0..2 {
            for i in 0..n {
                *seen.get_or_insert_with(&Counted(format!("model-{i}")), || 0) += 1 + round;
            }
        }
        let compared = COMPARED.with(Cell::get);
        // A search of a list: n²/2 comparisons for the first round alone (2 * 10^8).
        assert!(
            compared <= 3 * n,
            "{compared} comparisons for {} lookups",
            2 * n
        );
        assert!(
            compared >= n,
            "the second round finds every name: {compared}"
        );
        assert_eq!(seen.len(), n as usize);
        // Order of first appearance, counts added.
        let pairs: Vec<_> = seen
            .iter()
            .take(2)
            .map(|(k, v)| (k.0.clone(), *v))
            .collect();
        assert_eq!(pairs, [("model-0".into(), 3), ("model-1".into(), 3)]);
        assert_eq!(seen.values().len(), n as usize);
    }
}
