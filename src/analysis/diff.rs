//! `diff`: two scenarios, or two tool configurations, side by side. For scenarios, every (model,
//! strategy) both can simulate is run on each and the totals compared; for tool configurations
//! (tool-list files), each model's tool block is priced per call on each side. Savings are
//! positive when B is cheaper than A (the one sign convention of every report).

use serde::Serialize;

use super::{percent, Skip};
use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::{Catalog, ModelSpec};
use crate::model::tools::Tool;
use crate::sim::simulate::{
    merge_context_warnings, run_scenario, tool_block_warning, ContextWarning, SimResult,
};

/// Names that differ between two tool lists.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct ToolListDiff {
    /// Tools in A.
    pub tools_a: usize,
    /// Tools in B.
    pub tools_b: usize,
    /// Names only in B.
    pub added: Vec<String>,
    /// Names only in A.
    pub removed: Vec<String>,
    /// Names in both whose definitions differ.
    pub changed: Vec<String>,
}

impl ToolListDiff {
    /// Compares two lists by name and definition.
    pub(crate) fn of(a: &[Tool], b: &[Tool]) -> Self {
        let find = |list: &[Tool], name: &str| list.iter().position(|t| t.name == name);
        ToolListDiff {
            tools_a: a.len(),
            tools_b: b.len(),
            added: b
                .iter()
                .filter(|t| find(a, &t.name).is_none())
                .map(|t| t.name.clone())
                .collect(),
            removed: a
                .iter()
                .filter(|t| find(b, &t.name).is_none())
                .map(|t| t.name.clone())
                .collect(),
            changed: b
                .iter()
                .filter(|t| find(a, &t.name).is_some_and(|i| a[i] != **t))
                .map(|t| t.name.clone())
                .collect(),
        }
    }
}

/// One model's tool block on each side.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolBlockDiff {
    /// Model id.
    pub model: String,
    /// Tool-block tokens per call with A.
    pub tokens_a: u64,
    /// Tool-block tokens per call with B.
    pub tokens_b: u64,
    /// Dollars per call at the base input rate with A.
    pub usd_per_call_a: f64,
    /// Dollars per call at the base input rate with B.
    pub usd_per_call_b: f64,
    /// `usd_per_call_a - usd_per_call_b` (positive: B is cheaper).
    pub saving_usd_per_call: f64,
    /// The saving in percent of A.
    pub saving_percent: f64,
}

/// One (model, strategy) simulated on both scenarios.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScenarioRowDiff {
    /// Model id.
    pub model: String,
    /// Canonical strategy.
    pub strategy: String,
    /// Total dollars of A (the Monte Carlo mean with more than one run).
    pub total_usd_a: f64,
    /// Total dollars of B (likewise).
    pub total_usd_b: f64,
    /// `total_usd_a - total_usd_b` (positive: B is cheaper).
    pub saving_usd: f64,
    /// The saving in percent of A.
    pub saving_percent: f64,
    /// 5th and 95th percentiles of A's total over the runs (absent with one run).
    pub range_usd_a: Option<[f64; 2]>,
    /// 5th and 95th percentiles of B's total over the runs (absent with one run).
    pub range_usd_b: Option<[f64; 2]>,
    /// Tokens read from cache in A and in B.
    pub cache_read_tokens: [u64; 2],
    /// Tokens written to cache in A and in B.
    pub cache_write_tokens: [u64; 2],
}

/// What `diff` compares.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum DiffReport {
    /// Two tool configurations.
    #[non_exhaustive]
    Tools {
        /// Origin of A.
        a: String,
        /// Origin of B.
        b: String,
        /// Names that differ.
        tools: ToolListDiff,
        /// Per model.
        models: Vec<ToolBlockDiff>,
        /// Models on which a tool block alone exceeds the context window; absent when none do.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        block_warnings: Vec<String>,
    },
    /// Two scenarios.
    #[non_exhaustive]
    Scenarios {
        /// Name of A.
        a: String,
        /// Name of B.
        b: String,
        /// The tool lists at call 1.
        tools: ToolListDiff,
        /// Runs per side (1: a single run of each scenario's seed).
        runs: usize,
        /// Per (model, strategy) simulated on both.
        rows: Vec<ScenarioRowDiff>,
        /// Pairs simulated on one side only or on neither, with the reason.
        skipped: Vec<Skip>,
        /// Models whose simulated prompts exceed their context window (run 0) in A or B
        /// (`variant`); absent when none do.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        context_warnings: Vec<ContextWarning>,
        /// How the two sessions differ besides their tools (calls, sessions, runs): a saving
        /// between sessions of different lengths is not a saving of the tool change alone.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
    },
}

/// Prices two tool configurations on `models` (empty: the six measured).
pub(crate) fn diff_tools(
    catalog: &Catalog,
    a: (&str, &[Tool]),
    b: (&str, &[Tool]),
    models: &[String],
) -> Result<DiffReport> {
    let models = catalog.select(models)?;
    let block_warnings = models
        .iter()
        .flat_map(|m| {
            let r = m.rendering();
            [("A", a), ("B", b)]
                .into_iter()
                .filter_map(move |(side, (name, tools))| {
                    tool_block_warning(
                        m,
                        r.block_tokens(tools),
                        &format!("the tool block of {side} ({name})"),
                    )
                })
        })
        .collect();
    let row = |m: &ModelSpec| {
        let r = m.rendering();
        let (ta, tb) = (r.block_tokens(a.1), r.block_tokens(b.1));
        let (ua, ub) = (m.input_usd(ta as f64), m.input_usd(tb as f64));
        ToolBlockDiff {
            model: m.id.clone(),
            tokens_a: ta,
            tokens_b: tb,
            usd_per_call_a: ua,
            usd_per_call_b: ub,
            saving_usd_per_call: ua - ub,
            saving_percent: percent(ua - ub, ua),
        }
    };
    Ok(DiffReport::Tools {
        a: a.0.to_string(),
        b: b.0.to_string(),
        tools: ToolListDiff::of(a.1, b.1),
        models: models.into_iter().map(row).collect(),
        block_warnings,
    })
}

/// Simulates both scenarios on `models` and `strategies` (empty: each scenario's own; A's models
/// and strategies are used for both so that the rows pair up) and compares them row by row.
pub(crate) fn diff_scenarios(
    catalog: &Catalog,
    a: &Scenario,
    b: &Scenario,
    models: &[String],
    strategies: &[String],
) -> Result<DiffReport> {
    let models: Vec<String> = if models.is_empty() {
        a.models.clone()
    } else {
        models.to_vec()
    };
    let strategies: Vec<String> = if strategies.is_empty() {
        a.strategies.clone()
    } else {
        strategies.to_vec()
    };
    let ra = run_scenario(catalog, a, &models, &strategies)?;
    let rb = run_scenario(catalog, b, &models, &strategies)?;
    let side = |warnings: &[ContextWarning], v: &str| -> Vec<ContextWarning> {
        warnings
            .iter()
            .map(|w| ContextWarning {
                variant: Some(v.into()),
                ..w.clone()
            })
            .collect()
    };
    let mut context_warnings = side(&ra.context_warnings, "A");
    merge_context_warnings(&mut context_warnings, side(&rb.context_warnings, "B"));
    // Rows pair by the strategy as requested: `cached` may resolve to different placements on A and
    // B (each its own cheapest), and is still the one answer to compare.
    let key = |r: &SimResult| (r.model.clone(), r.strategy_requested.clone());
    let range = |r: &SimResult| r.montecarlo.as_ref().map(|m| [m.p5_usd, m.p95_usd]);
    let total = |r: &SimResult| r.montecarlo.as_ref().map_or(r.total_usd, |m| m.mean_usd);
    let mut rows = Vec::new();
    let mut skipped: Vec<Skip> = ra.skipped.clone();
    for s in rb.skipped {
        if !skipped
            .iter()
            .any(|x| x.model == s.model && x.strategy == s.strategy)
        {
            skipped.push(s);
        }
    }
    for x in &ra.results {
        let Some(y) = rb.results.iter().find(|y| key(y) == key(x)) else {
            skipped.push(Skip::new(
                &x.model,
                &x.strategy,
                format!("simulated on {} only", a.name),
                crate::sim::request::SkipKind::Unsupported,
            ));
            continue;
        };
        let (ta, tb) = (total(x), total(y));
        let strategy = if x.strategy == y.strategy {
            x.strategy.clone()
        } else {
            format!(
                "{} (A: {}, B: {})",
                x.strategy_requested, x.strategy, y.strategy
            )
        };
        rows.push(ScenarioRowDiff {
            model: x.model.clone(),
            strategy,
            total_usd_a: ta,
            total_usd_b: tb,
            saving_usd: ta - tb,
            saving_percent: percent(ta - tb, ta),
            range_usd_a: range(x),
            range_usd_b: range(y),
            cache_read_tokens: [x.totals.cache_read_tokens, y.totals.cache_read_tokens],
            cache_write_tokens: [x.totals.cache_write_tokens, y.totals.cache_write_tokens],
        });
    }
    if rows.is_empty() {
        return Err(Error::Unsupported(format!(
            "no (model, strategy) can be simulated on both {} and {}",
            a.origin, b.origin
        )));
    }
    let mut notes = Vec::new();
    for (what, va, vb) in [
        ("calls per session", a.calls, b.calls),
        ("sessions", a.sessions, b.sessions),
    ] {
        if va != vb {
            notes.push(format!(
                "A ({}) has {va} {what}, B ({}) {vb}: the saving compares sessions of different sizes, not only their tools",
                a.name, b.name
            ));
        }
    }
    Ok(DiffReport::Scenarios {
        notes,
        a: a.name.clone(),
        b: b.name.clone(),
        tools: ToolListDiff::of(&a.tools, &b.tools),
        runs: a.runs.max(b.runs),
        rows,
        skipped,
        context_warnings,
    })
}

impl DiffReport {
    /// The context-window warnings, one line each (for standard error and reports).
    pub(crate) fn warnings(&self) -> Vec<String> {
        match self {
            DiffReport::Tools { block_warnings, .. } => block_warnings.clone(),
            DiffReport::Scenarios {
                context_warnings,
                notes,
                ..
            } => notes
                .iter()
                .cloned()
                .chain(context_warnings.iter().map(|w| w.message()))
                .collect(),
        }
    }
}
