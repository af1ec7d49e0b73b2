//! Runs a scenario on several models and strategies and gathers the results.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::{Catalog, ModelSpec};
use crate::sim::billing::{CallBill, PriceSheet};
use crate::sim::engine::{PreparedSet, Workspace};
use crate::sim::montecarlo::{monte_carlo_set_with_first, MonteCarlo};
use crate::sim::request::{Pair, Request, Selection};

/// Totals of one (model, strategy) simulation.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Totals {
    /// Prompt tokens over all calls.
    pub prompt_tokens: u64,
    /// Base-rate input tokens.
    pub uncached_tokens: u64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Written tokens per TTL tier.
    pub cache_write_tokens_by_tier: std::collections::BTreeMap<String, u64>,
    /// Share of prompt tokens read from cache.
    pub cache_hit_ratio: f64,
    /// Dollars of input (including writes, reads and storage).
    pub input_usd: f64,
    /// Dollars of output.
    pub output_usd: f64,
}

/// The result of one (model, strategy).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SimResult {
    /// Model id.
    pub model: String,
    /// Model display name.
    pub model_name: String,
    /// Canonical strategy that was simulated.
    pub strategy: String,
    /// Strategy as requested (e.g. `cached`).
    pub strategy_requested: String,
    /// Total dollars.
    pub total_usd: f64,
    /// Token and dollar totals.
    pub totals: Totals,
    /// Totals of each session (the account's totals are `totals`).
    pub per_session: Vec<SessionTotals>,
    /// Per-call bills in time order (run 0).
    pub calls: Vec<CallBill>,
    /// Monte Carlo summary when the scenario asks for more than one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub montecarlo: Option<MonteCarlo>,
    /// The prices the calls were billed at (splits a call's dollars into parts for charts; not in
    /// the JSON).
    #[serde(skip)]
    pub prices: PriceSheet,
}

/// Totals of one session of a run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct SessionTotals {
    /// Session number, 1-based.
    pub session: u32,
    /// Calls the session made.
    pub calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Base-rate input tokens.
    pub uncached_tokens: u64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Dollars of the session's calls.
    pub total_usd: f64,
}

pub use crate::sim::request::{SkipKind, Skipped};

/// Everything `run` reports.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RunReport {
    /// Scenario name.
    pub scenario: String,
    /// Scenario description.
    pub description: String,
    /// One entry per simulated (model, strategy).
    pub results: Vec<SimResult>,
    /// Pairs that were not simulated.
    pub skipped: Vec<Skipped>,
    /// Models whose simulated prompts exceed their context window (run 0); absent when none do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_warnings: Vec<ContextWarning>,
}

/// A model whose simulated prompt exceeds its catalog `context_window`: the provider would refuse
/// those calls, so their bills are not real. One per model (every strategy sends the same prompts).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextWarning {
    /// Model id.
    pub model: String,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// Where the window comes from (the catalog's source).
    pub source: String,
    /// Session of the first call above the window.
    pub first_session: u32,
    /// The first call above the window (1-based, within its session).
    pub first_call: u32,
    /// Its prompt tokens.
    pub first_prompt_tokens: u64,
    /// Calls of run 0 above the window.
    pub calls_over: usize,
    /// The largest prompt of run 0.
    pub max_prompt_tokens: u64,
    /// Which of several simulated sessions sends these prompts (`with the change` in `whatif`,
    /// `A` or `B` in `diff`); absent when the command simulates one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl ContextWarning {
    /// One line for standard error and reports.
    pub fn message(&self) -> String {
        format!(
            "{}{}: call {} of session {} sends {} prompt tokens, above the model's context window of {} tokens ({}); {} call(s) exceed it, the largest {} tokens: the provider would refuse them, so their bills are not real",
            self.model,
            self.variant
                .as_ref()
                .map_or(String::new(), |v| format!(" ({v})")),
            self.first_call,
            self.first_session,
            self.first_prompt_tokens,
            self.context_window,
            self.source,
            self.calls_over,
            self.max_prompt_tokens
        )
    }
}

/// The context-window warnings of `results` (run 0's calls), one per model, in result order. Every
/// command that simulates sessions states them from this one check.
pub(crate) fn context_warnings(
    pairs: &[crate::sim::request::Pair],
    results: &[SimResult],
) -> Vec<ContextWarning> {
    context_warnings_of(
        pairs
            .iter()
            .zip(results)
            .map(|(p, r)| (p.model, r.calls.as_slice())),
        None,
    )
}

/// The context-window warnings of each model's calls (one per model, the first list of a model
/// above its window counts), marked with `variant` (see [`ContextWarning::variant`]).
pub(crate) fn context_warnings_of<'a>(
    calls: impl IntoIterator<Item = (&'a ModelSpec, &'a [CallBill])>,
    variant: Option<&str>,
) -> Vec<ContextWarning> {
    let mut out: Vec<ContextWarning> = Vec::new();
    for (model, calls) in calls {
        if out.iter().any(|x| x.model == model.id) {
            continue;
        }
        let prompts = calls.iter().map(|c| (c.session, c.call, c.prompt_tokens));
        out.extend(context_warning(model, prompts, variant));
    }
    out
}

/// The context-window warning of one model's prompts, each given as (session, call within the
/// session, prompt tokens) in order; `None` when the model has no window or no prompt exceeds it.
pub(crate) fn context_warning(
    model: &ModelSpec,
    prompts: impl IntoIterator<Item = (u32, u32, u64)>,
    variant: Option<&str>,
) -> Option<ContextWarning> {
    let w = model.context_window.as_ref()?;
    let mut over = prompts.into_iter().filter(|p| p.2 > w.value);
    let (first_session, first_call, first_prompt_tokens) = over.next()?;
    let (mut calls_over, mut max_prompt_tokens) = (1, first_prompt_tokens);
    for (_, _, tokens) in over {
        calls_over += 1;
        max_prompt_tokens = max_prompt_tokens.max(tokens);
    }
    Some(ContextWarning {
        model: model.id.clone(),
        context_window: w.value,
        source: w.source.clone(),
        first_session,
        first_call,
        first_prompt_tokens,
        calls_over,
        max_prompt_tokens,
        variant: variant.map(str::to_string),
    })
}

/// Adds to `warnings` those of `more` that say something new: a model already warned about with
/// the same calls over its window is not repeated for another variant of the session.
pub(crate) fn merge_context_warnings(
    warnings: &mut Vec<ContextWarning>,
    more: Vec<ContextWarning>,
) {
    for w in more {
        let same = |x: &ContextWarning| {
            x.model == w.model
                && x.first_session == w.first_session
                && x.first_call == w.first_call
                && x.calls_over == w.calls_over
                && x.max_prompt_tokens == w.max_prompt_tokens
        };
        if !warnings.iter().any(same) {
            warnings.push(w);
        }
    }
}

/// A warning when `tokens` of tool definitions alone (`what`, e.g. `the tool block of 900
/// tools`) exceed `model`'s context window: no call with them could be sent at all.
pub(crate) fn tool_block_warning(model: &ModelSpec, tokens: u64, what: &str) -> Option<String> {
    let w = model.context_window.as_ref()?;
    (tokens > w.value).then(|| {
        format!(
            "{}: {what} is {tokens} tokens, above the model's context window of {} tokens ({}): the provider would refuse every call that sends it",
            model.id, w.value, w.source
        )
    })
}

/// Simulates `scenario` on `models` (empty: the scenario's, or the six measured models) under
/// `strategies` (empty: the scenario's). Unsupported pairs are skipped with a stated reason, unless
/// nothing at all can be simulated.
pub fn run_scenario(
    catalog: &Catalog,
    scenario: &Scenario,
    models: &[String],
    strategies: &[String],
) -> Result<RunReport> {
    let request = Selection::new(models, strategies).resolve(catalog, scenario.clone())?;
    run_request(&request, &|_| {})
}

/// The `run` report of `request`: every pair on one timeline, plus the Monte Carlo when the
/// scenario has more than one run, telling `progress` how many runs have completed as they complete.
/// Errors when nothing can be simulated, or when the per-call bills would exceed
/// `MAX_BILLS_KEPT`.
pub fn run_request(request: &Request, progress: &(dyn Fn(u64) + Sync)) -> Result<RunReport> {
    let scenario = &request.scenario;
    // Also checked when the request was resolved; a caller may have changed its scenario since.
    crate::sim::request::check_work(scenario, request.pairs.len(), 1)?;
    if request.pairs.is_empty() {
        let reasons: Vec<String> = request.skipped.iter().map(|s| s.reason.clone()).collect();
        return Err(Error::Unsupported(format!(
            "nothing to simulate: {}",
            reasons.join("; ")
        )));
    }
    let setups = request.setups(scenario);
    // All pairs on one timeline (the queue and the draws once for all of them).
    let set = PreparedSet::new(scenario, &setups);
    let results = if scenario.runs > 1 {
        // Run 0's bills, shown call by call, are kept by the Monte Carlo (which simulates run 0
        // anyway) rather than simulated a second time.
        let (montecarlo, first) = monte_carlo_set_with_first(&set, scenario.runs as u64, progress)?;
        request
            .pairs
            .iter()
            .zip(first)
            .zip(montecarlo)
            .map(|((pair, calls), mc)| SimResult {
                montecarlo: Some(mc),
                ..summarise(pair, calls)
            })
            .collect()
    } else {
        simulate_set(request, &set)
    };
    Ok(RunReport {
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        context_warnings: context_warnings(&request.pairs, &results),
        results,
        skipped: request.skipped.clone(),
    })
}

/// Run 0 of every pair of `request` on `scenario` (the request's or a variant of it with the same
/// timing, e.g. a changed tool list), on one shared timeline: one result per pair, in order.
pub(crate) fn simulate_pairs(request: &Request, scenario: &Scenario) -> Vec<SimResult> {
    let setups = request.setups(scenario);
    simulate_set(request, &PreparedSet::new(scenario, &setups))
}

/// Run 0 of `set`, whose members are the pairs of `request`, summarised.
fn simulate_set(request: &Request, set: &PreparedSet) -> Vec<SimResult> {
    let scenario = &request.scenario;
    let mut bills: Vec<Vec<CallBill>> = request
        .pairs
        .iter()
        .map(|_| Vec::with_capacity(scenario.calls * scenario.sessions))
        .collect();
    set.run(0, &mut Workspace::new(), |m, b| bills[m].push(*b));
    request
        .pairs
        .iter()
        .zip(bills)
        .map(|(pair, calls)| summarise(pair, calls))
        .collect()
}

/// Totals of one pair's per-call bills.
pub(crate) fn summarise(pair: &Pair, calls: Vec<CallBill>) -> SimResult {
    let (model, tiers) = (pair.model, &pair.tier_names);
    let mut t = Totals {
        prompt_tokens: 0,
        uncached_tokens: 0,
        cache_write_tokens: 0,
        cache_read_tokens: 0,
        output_tokens: 0,
        cache_write_tokens_by_tier: tiers.iter().map(|n| (n.clone(), 0)).collect(),
        cache_hit_ratio: 0.0,
        input_usd: 0.0,
        output_usd: 0.0,
    };
    let mut total = 0.0;
    let mut per_session: Vec<SessionTotals> = Vec::new();
    for c in &calls {
        let i = c.session as usize - 1;
        if per_session.len() <= i {
            per_session.resize(i + 1, SessionTotals::default());
        }
        let st = &mut per_session[i];
        st.session = c.session;
        st.calls += 1;
        st.prompt_tokens = st.prompt_tokens.saturating_add(c.prompt_tokens);
        st.uncached_tokens = st.uncached_tokens.saturating_add(c.uncached_tokens);
        st.cache_write_tokens = st.cache_write_tokens.saturating_add(c.cache_write_tokens);
        st.cache_read_tokens = st.cache_read_tokens.saturating_add(c.cache_read_tokens);
        st.total_usd += c.cost_usd;
        t.prompt_tokens = t.prompt_tokens.saturating_add(c.prompt_tokens);
        t.uncached_tokens = t.uncached_tokens.saturating_add(c.uncached_tokens);
        t.cache_write_tokens = t.cache_write_tokens.saturating_add(c.cache_write_tokens);
        t.cache_read_tokens = t.cache_read_tokens.saturating_add(c.cache_read_tokens);
        t.output_tokens = t.output_tokens.saturating_add(c.output_tokens);
        for (i, n) in tiers.iter().enumerate() {
            let e = t.cache_write_tokens_by_tier.entry(n.clone()).or_default();
            *e = e.saturating_add(c.written_by_slot[i]);
        }
        total += c.cost_usd;
    }
    t.output_usd = model.output_usd(t.output_tokens as f64);
    t.input_usd = total - t.output_usd;
    t.cache_hit_ratio = if t.prompt_tokens > 0 {
        t.cache_read_tokens as f64 / t.prompt_tokens as f64
    } else {
        0.0
    };
    SimResult {
        model: model.id.clone(),
        model_name: model.name.clone(),
        strategy: pair.resolved.name.clone(),
        strategy_requested: pair.requested.clone(),
        total_usd: total,
        totals: t,
        per_session,
        calls,
        montecarlo: None,
        prices: pair.prices,
    }
}
