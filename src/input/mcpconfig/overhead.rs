//! The per-call cost of a configuration's tool blocks, per server and for the whole configuration.

use crate::model::catalog::ModelSpec;
use crate::model::strategy::Strategy;
use crate::model::tools::Tool;
use serde::Serialize;

use super::*;

/// The per-call cost of one tool block on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Overhead {
    /// The server, or `None` for the whole configuration.
    pub server: Option<String>,
    /// Model id.
    pub model: String,
    /// Number of tools.
    pub tools: usize,
    /// Tokens of the rendered block (the preamble counted once).
    pub block_tokens: u64,
    /// Dollars per call when the block is sent uncached.
    pub usd_per_call: f64,
    /// Dollars per call when the block is read from cache under the model's default strategy
    /// (`None` when the model has no caching).
    pub usd_per_call_cached: Option<f64>,
}

pub(super) fn overhead_row(model: &ModelSpec, server: Option<&str>, tools: &[Tool]) -> Overhead {
    let block = model.rendering().block_tokens(tools);
    let read = Strategy::parse("cached")
        .and_then(|s| s.resolve(model))
        .ok()
        .and_then(|r| r.rules)
        .map(|r| r.read_multiplier.value);
    Overhead {
        server: server.map(str::to_string),
        model: model.id.clone(),
        tools: tools.len(),
        block_tokens: block,
        usd_per_call: model.input_usd(block as f64),
        usd_per_call_cached: read.map(|m| model.input_usd(block as f64) * m),
    }
}

/// Overhead of each captured server and of all of them together, for each model (models outer).
/// Duplicate tool names across servers are kept in the total (a client would have to rename them)
/// and returned so the caller can warn.
pub(crate) fn overheads(
    models: &[&ModelSpec],
    outcomes: &[ServerOutcome],
) -> (Vec<Overhead>, Vec<String>) {
    let all: Vec<Tool> = outcomes
        .iter()
        .filter_map(|o| o.tools.as_ref().ok())
        .flatten()
        .cloned()
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut dups: Vec<String> = Vec::new();
    for t in &all {
        if !seen.insert(t.name.as_str()) && !dups.contains(&t.name) {
            dups.push(t.name.clone());
        }
    }
    let mut rows = Vec::new();
    for m in models {
        for o in outcomes {
            if let Ok(tools) = &o.tools {
                rows.push(overhead_row(m, Some(&o.entry.name), tools));
            }
        }
        rows.push(overhead_row(m, None, &all));
    }
    (rows, dups)
}
