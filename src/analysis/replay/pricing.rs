//! The log's model matched to the catalog, and logged buckets priced at that model's prices.

use crate::model::catalog::{CacheRules, Catalog, ModelSpec};
use crate::sim::billing::PriceSheet;

use super::{LoggedCall, UsageLog};

/// The model a log names, matched to the catalog: exact id, or an API name such as
/// `claude-opus-4-8-20260501` for `claude-opus-4.8` (dots and dashes alike, date suffix ignored),
/// with a gateway's provider prefix (`anthropic/`, Bedrock's `us.anthropic.`) and a version suffix
/// (`-v1:0`) ignored.
pub fn match_model<'c>(catalog: &'c Catalog, log_model: &str) -> Option<&'c ModelSpec> {
    // An available model of that exact id (what `Catalog::model` accepts, without building its
    // error and closest-id hint when there is none: that cost an edit distance per catalog model).
    if let Some(m) = catalog
        .models
        .iter()
        .find(|m| m.id == log_model && m.unavailable.is_none())
    {
        return Some(m);
    }
    let norm = |s: &str| s.to_ascii_lowercase().replace(['.', '_', ':'], "-");
    let bare = log_model.rsplit('/').next().unwrap_or(log_model);
    let candidates: Vec<String> = {
        let mut v = vec![norm(log_model), norm(bare)];
        // Bedrock ids: `[region.]provider.model-id-v1:0`.
        let parts: Vec<&str> = bare.split('.').collect();
        for i in 1..parts.len() {
            v.push(norm(&parts[i..].join(".")));
        }
        v
    };
    catalog
        .models
        .iter()
        .filter(|m| {
            let id = norm(&m.id);
            candidates
                .iter()
                .any(|w| *w == id || w.starts_with(&format!("{id}-")))
        })
        .max_by_key(|m| m.id.len())
}

/// [`match_model`] remembered by logged name: a log names its model on every call, and matching
/// compares the name with every model of the catalog.
#[derive(Debug)]
pub(crate) struct ModelMatcher<'c> {
    catalog: &'c Catalog,
    seen: std::collections::HashMap<String, Option<&'c ModelSpec>>,
}

impl<'c> ModelMatcher<'c> {
    /// A matcher on `catalog`.
    pub(crate) fn new(catalog: &'c Catalog) -> Self {
        ModelMatcher {
            catalog,
            seen: std::collections::HashMap::new(),
        }
    }

    /// [`match_model`] of `log_model`.
    pub(crate) fn get(&mut self, log_model: &str) -> Option<&'c ModelSpec> {
        if let Some(&m) = self.seen.get(log_model) {
            return m;
        }
        let m = match_model(self.catalog, log_model);
        self.seen.insert(log_model.to_string(), m);
        m
    }
}

/// The cache rules used to price logged buckets: the model's explicit, else automatic, else implicit.
fn pricing_rules(model: &ModelSpec) -> Option<&CacheRules> {
    model
        .cache
        .explicit
        .as_ref()
        .or(model.cache.automatic.as_ref())
        .or(model.cache.implicit.as_ref())
}

/// Dollars of a logged call at the model's prices. Writes of unknown lifetime count as the default
/// tier; a model without caching bills cached tokens at the base rate.
pub(crate) fn logged_usd(model: &ModelSpec, c: &LoggedCall) -> f64 {
    LoggedRates::new(model).usd(c)
}

/// A model's multipliers of logged buckets, looked up once for every call of a replay.
pub(crate) struct LoggedRates<'m> {
    model: &'m ModelSpec,
    read: f64,
    write_5m: f64,
    write_1h: f64,
}

impl<'m> LoggedRates<'m> {
    /// The rates of `model`.
    pub(crate) fn new(model: &'m ModelSpec) -> Self {
        let (read, write_5m, write_1h) = match pricing_rules(model) {
            None => (1.0, 1.0, 1.0),
            Some(r) => {
                let default = r.tier(None).map_or(1.0, |(_, t)| t.write_multiplier.value);
                let tier = |n: &str| r.tiers.get(n).map_or(default, |t| t.write_multiplier.value);
                (r.read_multiplier.value, tier("5m"), tier("1h"))
            }
        };
        LoggedRates {
            model,
            read,
            write_5m,
            write_1h,
        }
    }

    /// [`logged_usd`] of `c`.
    pub(crate) fn usd(&self, c: &LoggedCall) -> f64 {
        let weighted = c.uncached_tokens as f64
            + c.cache_write_5m_tokens as f64 * self.write_5m
            + c.cache_write_1h_tokens as f64 * self.write_1h
            + c.cache_read_tokens as f64 * self.read;
        self.model.input_usd(weighted) + self.model.output_usd(c.output_tokens as f64)
    }
}

/// The prices of a model with no caching, for comparisons.
pub(crate) fn uncached_usd(model: &ModelSpec, log: &UsageLog) -> f64 {
    let sheet = PriceSheet::uncached(model);
    log.calls
        .iter()
        .map(|c| c.prompt_tokens as f64 * sheet.input + c.output_tokens as f64 * sheet.output)
        .sum()
}
