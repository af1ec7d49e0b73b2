//! The what-if's inputs and results: the change, its summary, and the outcomes per pair.

use serde::Serialize;

use crate::analysis::uncertainty::Interval;
use crate::analysis::Skip;
use crate::input::trim::Trim;
use crate::model::tools::Tool;
use crate::sim::billing::CallBill;
use crate::sim::simulate::ContextWarning;

/// A change of the tool list, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolChange {
    /// Tools added at the end of the list (`--add-tools FILE`).
    pub add: Vec<Tool>,
    /// Names removed (`--remove-tools NAMES`).
    pub remove: Vec<String>,
    /// Only these names are kept (`--keep-tools NAMES`).
    pub keep: Option<Vec<String>>,
    /// The whole list is replaced (`--replace-tools FILE`).
    pub replace: Option<Vec<Tool>>,
    /// Every tool of these servers (named in the scenario's `[[tools.server]]`) is removed
    /// (`--remove-servers NAMES`).
    pub remove_servers: Vec<String>,
    /// The list after the other changes is trimmed (`--trim NAME`).
    pub trim: Option<Trim>,
}

/// What the change does to the tool list at call K.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ChangeSummary {
    /// One line, e.g. `add 1 tool (x)`.
    pub description: String,
    /// Names added (new names, or names whose definition changed).
    pub added: Vec<String>,
    /// Names no longer present.
    pub removed: Vec<String>,
    /// Tools in the list just before the change.
    pub tools_before: usize,
    /// Tools in the list just after it.
    pub tools_after: usize,
}

/// Baseline against changed session for one (model, strategy).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct WhatifOutcome {
    /// Model id.
    pub model: String,
    /// Display name.
    pub model_name: String,
    /// Canonical strategy simulated.
    pub strategy: String,
    /// Strategy as requested (or as derived for the extra `append` row).
    pub strategy_requested: String,
    /// What a tool-list change does under this strategy: `invalidate`, `preserve_prefix`, `append`.
    pub tool_change_rule: String,
    /// Total dollars of the scenario as it is.
    pub baseline_usd: f64,
    /// Total dollars with the change.
    pub changed_usd: f64,
    /// `changed_usd - baseline_usd` (negative: the change saves).
    pub extra_usd: f64,
    /// `extra_usd` in percent of the baseline.
    pub extra_percent: f64,
    /// Tokens written to cache in the baseline.
    pub baseline_cache_write_tokens: u64,
    /// Tokens written to cache with the change.
    pub changed_cache_write_tokens: u64,
    /// Difference of the two (may be negative).
    pub extra_cache_write_tokens: i64,
    /// Tokens written at call K in the baseline (all sessions).
    pub baseline_write_at_change_tokens: u64,
    /// Tokens written at call K with the change (all sessions): the re-write the change causes.
    pub write_at_change_tokens: u64,
    /// Tool-block tokens in the prompt at call K in the baseline (first session).
    pub tool_block_tokens_before: u64,
    /// Tool-block tokens in the prompt at call K with the change (first session; unchanged under
    /// `append`, where new tools travel in the conversation instead).
    pub tool_block_tokens_after: u64,
    /// Extra dollars of call K itself (all sessions).
    pub extra_usd_at_change: f64,
    /// Mean extra dollars per call over the calls after K (all sessions; 0 when K is the last call):
    /// the steady per-call effect of the change, used to extrapolate beyond the session.
    pub extra_usd_per_call_after: f64,
    /// Calls, counting call K as the first, until the cumulative extra cost is back to zero or below;
    /// `null` when that does not happen within the session.
    pub breakeven_calls: Option<u64>,
    /// The same count when it is reached within the session; otherwise an extrapolation beyond the
    /// session at the mean saving per call after K (`null` when the calls after K save nothing).
    pub breakeven_calls_extrapolated: Option<u64>,
    /// On an `append` row: how much less the change costs than under the same strategy with the
    /// model's default rule (`extra_usd` there minus `extra_usd` here), i.e. what the beta is worth
    /// for this change. Absent on other rows.
    pub append_saving_usd: Option<f64>,
    /// One sentence saying what the figures mean.
    pub verdict: String,
    /// `baseline_usd - changed_usd`: what the change saves over the session (positive: it saves;
    /// the sign of every saving pcsim reports).
    pub saving_usd: f64,
    /// `saving_usd` in percent of the baseline.
    pub saving_percent: f64,
    /// Over the Monte Carlo runs (`--runs N`, N > 1; absent otherwise): the saving and the pay-back,
    /// and how often each verdict holds. The point figures above stay those of the first run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<WhatifRuns>,
    /// Baseline per-call bills (for charts; not in the JSON).
    #[serde(skip)]
    pub baseline_calls: Vec<CallBill>,
    /// Changed per-call bills (for charts; not in the JSON).
    #[serde(skip)]
    pub changed_calls: Vec<CallBill>,
}

/// One (model, strategy)'s what-if over the Monte Carlo runs of `whatif --runs N`: each run
/// simulates the baseline and the changed session on the same timeline.
#[derive(Debug, Clone, Serialize)]
pub struct WhatifRuns {
    /// What the change saves over the session (positive: it saves), over the runs.
    pub saving_usd: Interval,
    /// Share of runs (0..=1) in which the change saves over the session.
    pub share_saving: f64,
    /// Share of runs in which the change has paid for itself within the session.
    pub share_pays_back: f64,
    /// Share of runs in which it pays for itself within the session or, extrapolated at the mean
    /// saving per call after K, beyond it (the rest: never).
    pub share_pays_back_extrapolated: f64,
    /// Calls from K until it has paid for itself (extrapolated beyond the session where needed),
    /// over the runs in which it does; `null` when it never does.
    pub breakeven_calls_extrapolated: Option<Interval>,
}

/// Everything `whatif` reports.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct WhatifReport {
    /// Scenario name.
    pub scenario: String,
    /// Call before which the change applies (1-based, in every session).
    pub at_call: usize,
    /// Calls per session.
    pub calls_per_session: usize,
    /// Sessions simulated.
    pub sessions: usize,
    /// The change.
    pub change: ChangeSummary,
    /// One entry per simulated (model, strategy).
    pub outcomes: Vec<WhatifOutcome>,
    /// Pairs not simulated, with the reason.
    pub skipped: Vec<Skip>,
    /// Monte Carlo runs (1: one run of the scenario's seed).
    pub runs: u64,
    /// Seed of the draws.
    pub seed: u64,
    /// Models whose simulated prompts exceed their context window (run 0), as it is or with the
    /// change (`variant`); absent when none do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_warnings: Vec<ContextWarning>,
}
