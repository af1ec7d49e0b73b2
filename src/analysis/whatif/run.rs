//! The simulations of a what-if: the baseline and the changed session on one timeline, in run 0
//! and over the Monte Carlo runs.

use super::change::apply_change;
use super::outcome::{outcome, payback};
use super::types::*;
use super::EPS_USD;
use crate::analysis::uncertainty::{share, Interval};
use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::model::strategy::Mode;
use crate::sim::engine::PreparedSet;
use crate::sim::request::{Request, Selection};
use crate::sim::simulate::{
    context_warnings, context_warnings_of, merge_context_warnings, simulate_pairs,
};

/// Runs the baseline and the changed scenario on `models` (empty: the scenario's, else the six
/// measured) under `strategies` (empty: [`DEFAULT_STRATEGIES`](super::DEFAULT_STRATEGIES)), adding the `append` tool-change rule
/// as an extra row for every caching strategy whose model offers it (a stated skip otherwise).
pub fn whatif(
    catalog: &Catalog,
    scenario: &Scenario,
    at_call: usize,
    change: &ToolChange,
    models: &[String],
    strategies: &[String],
) -> Result<WhatifReport> {
    let (changed, summary) = apply_change(scenario, at_call, change)?;
    let request = selection_at(models, strategies, at_call).resolve(catalog, scenario.clone())?;
    whatif_request(&request, &changed, at_call, summary)
}

/// The selection `whatif` resolves: `models` and `strategies` (empty: [`DEFAULT_STRATEGIES`](super::DEFAULT_STRATEGIES)), each
/// caching strategy followed by its `/tool-changes=append` variant.
pub fn selection(models: &[String], strategies: &[String]) -> Selection {
    Selection::new(models, strategies)
        .default_strategies(&super::DEFAULT_STRATEGIES)
        .with_append_variants()
        .simulated_twice()
}

/// [`selection`] for a change before call `at_call`: before call 1 there is no change mid-session
/// for the append rule to carry, so no `append` variants.
pub fn selection_at(models: &[String], strategies: &[String], at_call: usize) -> Selection {
    let mut s = selection(models, strategies);
    s.append_variants = at_call > 1;
    s
}

/// The what-if report of `request` against `changed` (the request's scenario with the change of
/// `summary` at `at_call`, from [`apply_change`]): both simulated with every pair on one timeline,
/// in the request's runs from its seed (overrides included, whatever `changed` says).
pub fn whatif_request(
    request: &Request,
    changed: &Scenario,
    at_call: usize,
    summary: ChangeSummary,
) -> Result<WhatifReport> {
    whatif_request_with_progress(request, changed, at_call, summary, &|_| {})
}

/// One run's what-if of one pair: what the change saves and when it pays back.
#[derive(Debug, Clone, Copy)]
struct RunOutcome {
    saving: f64,
    breakeven: Option<u64>,
    extrapolated: Option<u64>,
}

/// Every pair's what-if in runs `0..runs`: the baseline and the changed session of each run on one
/// timeline (the tool lists differ, the timing does not). `out[run][pair]`.
fn run_outcomes(
    request: &Request,
    changed: &Scenario,
    at_call: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Vec<RunOutcome>>> {
    let scenario = &request.scenario;
    let n = scenario.calls;
    let (base_setups, chg_setups) = (request.setups(scenario), request.setups(changed));
    let base = PreparedSet::new(scenario, &base_setups);
    let chg = PreparedSet::new(changed, &chg_setups);
    let pairs = request.pairs.len();
    crate::sim::montecarlo::map_runs(
        scenario.runs as u64,
        2 * pairs as u64,
        progress,
        &|run, ws| {
            // Per pair, the dollars of each call number (all sessions), baseline then changed.
            let mut usd = vec![vec![0.0; n + 1]; 2 * pairs];
            let tb = base.run(run, ws, |m, b| usd[m][b.call as usize] += b.cost_usd);
            let tc = chg.run(run, ws, |m, b| {
                usd[pairs + m][b.call as usize] += b.cost_usd
            });
            (0..pairs)
                .map(|m| {
                    let delta: Vec<f64> = (0..=n).map(|c| usd[pairs + m][c] - usd[m][c]).collect();
                    let (breakeven, extrapolated, _) = payback(&delta, at_call, n);
                    RunOutcome {
                        saving: tb[m] - tc[m],
                        breakeven,
                        extrapolated,
                    }
                })
                .collect()
        },
    )
}

/// [`whatif_request`], telling `progress` how many (run, pair) simulations are done when the
/// scenario has more than one run (each run simulates the baseline and the changed session).
pub fn whatif_request_with_progress(
    request: &Request,
    changed: &Scenario,
    at_call: usize,
    summary: ChangeSummary,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WhatifReport> {
    let scenario = &request.scenario;
    // The runs and the seed are the request's (its overrides included): the changed session is the
    // same session with other tools, so it is simulated in the same runs from the same seed.
    let aligned;
    let changed = if changed.seed != scenario.seed || changed.runs != scenario.runs {
        let mut c = changed.clone();
        (c.seed, c.runs) = (scenario.seed, scenario.runs);
        aligned = c;
        &aligned
    } else {
        changed
    };
    // The baseline and the changed session: twice the bills and the calls of the request.
    crate::sim::request::check_work(scenario, request.pairs.len(), 2)?;
    let base = simulate_pairs(request, scenario);
    let chg = simulate_pairs(request, changed);
    let mut warnings = context_warnings(&request.pairs, &base);
    let with_change = request
        .pairs
        .iter()
        .zip(&chg)
        .map(|(p, r)| (p.model, r.calls.as_slice()));
    merge_context_warnings(
        &mut warnings,
        context_warnings_of(with_change, Some("with the change")),
    );
    let runs = if scenario.runs > 1 {
        Some(run_outcomes(request, changed, at_call, progress)?)
    } else {
        None
    };
    let mut report = WhatifReport {
        scenario: scenario.name.clone(),
        at_call,
        calls_per_session: scenario.calls,
        sessions: scenario.sessions,
        change: summary,
        outcomes: Vec::new(),
        skipped: request.skipped.clone(),
        runs: scenario.runs as u64,
        seed: scenario.seed,
        context_warnings: warnings,
    };
    for (i, ((pair, b), c)) in request.pairs.iter().zip(base).zip(chg).enumerate() {
        let mut o = outcome(
            &pair.model.name,
            pair.resolved.tool_change.as_str(),
            at_call,
            scenario.calls,
            b,
            c,
        );
        if let Some(runs) = &runs {
            let mine: Vec<RunOutcome> = runs.iter().map(|r| r[i]).collect();
            let paying: Vec<f64> = mine
                .iter()
                .filter_map(|r| r.extrapolated.map(|x| x as f64))
                .collect();
            o.runs = Some(WhatifRuns {
                saving_usd: Interval::over(&mine, |r| r.saving)
                    .ok_or_else(|| Error::Internal("whatif: a Monte Carlo gave no runs".into()))?,
                share_saving: share(&mine, |r| r.saving > EPS_USD),
                share_pays_back: share(&mine, |r| r.breakeven.is_some()),
                share_pays_back_extrapolated: share(&mine, |r| r.extrapolated.is_some()),
                breakeven_calls_extrapolated: Interval::over(&paying, |x| *x),
            });
        }
        report.outcomes.push(o);
    }
    // What the append rule is worth: against the same strategy under the model's default rule.
    let extras: Vec<(String, String, f64)> = report
        .outcomes
        .iter()
        .map(|o| (o.model.clone(), o.strategy.clone(), o.extra_usd))
        .collect();
    for o in &mut report.outcomes {
        if let Some(plain) = o.strategy.strip_suffix("/tool-changes=append") {
            o.append_saving_usd = extras
                .iter()
                .find(|(m, s, _)| *m == o.model && s == plain)
                .map(|(_, _, x)| x - o.extra_usd);
        }
    }
    let wanted_caching = request
        .strategies
        .iter()
        .any(|(_, s)| s.mode != Some(Mode::None));
    let got_caching = report.outcomes.iter().any(|o| o.strategy != "none");
    if report.outcomes.is_empty() || (wanted_caching && !got_caching) {
        return Err(crate::analysis::nothing_cacheable(&report.skipped));
    }
    Ok(report)
}
