//! `whatif`: the scenario as it is against the same scenario with one more tool-list change at call
//! K, per model and strategy: the extra dollars, the extra cache writes, and when (if ever) the change
//! pays for itself.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::uncertainty::{share, share_text, Interval};
use super::{calls_word, percent, skip_lines, Skip, COMMAND_LINE};
use crate::base::text::{field, saving_percent, usd, usd_number, TextTable};
use crate::error::{closest, Error, Result};
use crate::input::scenario::{Scenario, ToolEvent};
use crate::input::trim::Trim;
use crate::model::catalog::Catalog;
use crate::model::strategy::Mode;
use crate::model::tools::Tool;
use crate::sim::billing::CallBill;
use crate::sim::engine::PreparedSet;
use crate::sim::request::{Request, Selection};
use crate::sim::simulate::{
    context_warnings, context_warnings_of, merge_context_warnings, simulate_pairs, ContextWarning,
    SimResult,
};

/// Strategies simulated when none are given: no caching and each model's own caching. For every
/// caching strategy, the `append` tool-change rule is added as an extra row where the model offers it.
pub const DEFAULT_STRATEGIES: [&str; 2] = ["none", "cached"];

/// Dollar differences below this are taken as zero (sums of sub-cent floats).
const EPS_USD: f64 = 1e-12;

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

/// The tool list as it stands just before call `at_call` (after the scenario's own events up to it).
pub fn tools_at(scenario: &Scenario, at_call: usize) -> Vec<Tool> {
    let mut tools = scenario.tools.clone();
    for e in scenario.events.iter().filter(|e| e.at_call <= at_call) {
        tools = e.apply(&tools);
    }
    tools
}

fn list_names(tools: &[Tool]) -> String {
    const SHOWN: usize = 12;
    let mut s: Vec<&str> = tools.iter().take(SHOWN).map(|t| t.name.as_str()).collect();
    if tools.len() > SHOWN {
        s.push("...");
    }
    s.join(", ")
}

/// Checks `change` against the scenario and returns the scenario with the change added as a tool
/// event at `at_call` (after the scenario's own events at that call), plus a summary.
pub fn apply_change(
    scenario: &Scenario,
    at_call: usize,
    change: &ToolChange,
) -> Result<(Scenario, ChangeSummary)> {
    if at_call < 1 || at_call > scenario.calls {
        return Err(Error::invalid(
            COMMAND_LINE,
            "--at-call",
            format!(
                "value {at_call}: a tool-list change must come before a call from 1 (the list from the start) to {} (the calls per session of {})",
                scenario.calls, scenario.origin
            ),
        ));
    }
    let flag = if change.replace.is_some() {
        "--replace-tools"
    } else if change.keep.is_some() {
        "--keep-tools"
    } else if !change.remove.is_empty() {
        "--remove-tools"
    } else if !change.remove_servers.is_empty() {
        "--remove-servers"
    } else if change.trim.is_some() {
        "--trim"
    } else {
        "--add-tools"
    };
    if change.add.is_empty()
        && change.remove.is_empty()
        && change.keep.is_none()
        && change.replace.is_none()
        && change.remove_servers.is_empty()
        && change.trim.is_none()
    {
        return Err(Error::invalid(
            COMMAND_LINE,
            "--add-tools",
            "no change given: use --add-tools, --remove-tools, --remove-servers, --keep-tools, --replace-tools or --trim",
        ));
    }
    let before = tools_at(scenario, at_call);
    let mut remove = change.remove.clone();
    for name in &change.remove_servers {
        let server = scenario
            .servers
            .iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = scenario.servers.iter().map(|s| s.name.as_str()).collect();
                let hint = closest(name, known.iter().copied())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                Error::invalid(
                    COMMAND_LINE,
                    "--remove-servers",
                    format!(
                        "no server `{name}` in {}{hint} (its servers: {}; servers are named by [[tools.server]] entries)",
                        scenario.origin,
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                )
            })?;
        let present: Vec<String> = server
            .tools
            .iter()
            .filter(|t| before.iter().any(|b| &b.name == *t) && !remove.contains(t))
            .cloned()
            .collect();
        if present.is_empty() {
            return Err(Error::invalid(
                COMMAND_LINE,
                "--remove-servers",
                format!("none of server `{name}`'s tools is in the tool list at call {at_call}"),
            ));
        }
        remove.extend(present);
    }
    for (name, f) in change
        .remove
        .iter()
        .map(|n| (n, "--remove-tools"))
        .chain(change.keep.iter().flatten().map(|n| (n, "--keep-tools")))
    {
        if !before.iter().any(|t| &t.name == name) {
            let hint = closest(name, before.iter().map(|t| t.name.as_str()))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(Error::invalid(
                COMMAND_LINE,
                f,
                format!(
                    "tool `{name}` is not in the tool list at call {at_call}{hint} ({} tools: {})",
                    before.len(),
                    list_names(&before)
                ),
            ));
        }
    }
    let mut event = ToolEvent {
        at_call,
        add: change.add.clone(),
        remove,
        keep: change.keep.clone(),
        replace: change.replace.clone(),
    };
    if let Some(t) = change.trim {
        // A trim rewrites every definition: the change becomes the whole trimmed list.
        event = ToolEvent {
            at_call,
            add: Vec::new(),
            remove: Vec::new(),
            keep: None,
            replace: Some(t.apply(&event.apply(&before))),
        };
    }
    let after = event.apply(&before);
    let mut names = HashSet::new();
    if let Some(t) = after.iter().find(|t| !names.insert(t.name.as_str())) {
        return Err(Error::invalid(
            COMMAND_LINE,
            flag,
            format!(
                "tool `{}` would appear twice in the list at call {at_call}; model APIs reject duplicate names",
                t.name
            ),
        ));
    }
    if after == before {
        return Err(Error::invalid(
            COMMAND_LINE,
            flag,
            format!(
                "the change leaves the tool list at call {at_call} as it is: nothing to compare"
            ),
        ));
    }
    let added: Vec<String> = after
        .iter()
        .filter(|t| !before.contains(t))
        .map(|t| t.name.clone())
        .collect();
    let removed: Vec<String> = before
        .iter()
        .filter(|t| !after.iter().any(|a| a.name == t.name))
        .map(|t| t.name.clone())
        .collect();
    // The one-line description names a few tools; `added` and `removed` list them all.
    let few = |names: &[String]| {
        const SHOWN: usize = 5;
        let mut s = names
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > SHOWN {
            s.push_str(", ...");
        }
        s
    };
    let mut parts = Vec::new();
    if let Some(t) = change.trim {
        parts.push(format!("trim ({})", t.explain()));
    }
    let (redefined, new_names): (Vec<String>, Vec<String>) = added
        .iter()
        .cloned()
        .partition(|n| before.iter().any(|b| &b.name == n));
    if !new_names.is_empty() {
        parts.push(format!(
            "add {} tool(s) ({})",
            new_names.len(),
            few(&new_names)
        ));
    }
    if !redefined.is_empty() {
        parts.push(format!(
            "redefine {} tool(s) ({})",
            redefined.len(),
            few(&redefined)
        ));
    }
    if !removed.is_empty() {
        parts.push(format!(
            "remove {} tool(s) ({})",
            removed.len(),
            few(&removed)
        ));
    }
    if parts.is_empty() {
        parts.push("reorder the tool list".into());
    }
    let summary = ChangeSummary {
        description: format!(
            "before call {at_call}: {} ({} -> {} tools)",
            parts.join(", "),
            before.len(),
            after.len()
        ),
        added,
        removed,
        tools_before: before.len(),
        tools_after: after.len(),
    };
    let mut changed = scenario.clone();
    // Before call 1 the change is the list the session starts with (no event, nothing to
    // invalidate); later, an event after the scenario's own events at that call.
    let pos = if at_call == 1 {
        changed.tools = after.clone();
        0
    } else {
        let pos = changed
            .events
            .iter()
            .position(|e| e.at_call > at_call)
            .unwrap_or(changed.events.len());
        changed.events.insert(pos, event);
        pos + 1
    };
    // The scenario's later events must still make sense: one that adds a tool this change already
    // added would send a duplicate name, which model APIs reject.
    let mut list = after;
    for e in &changed.events[pos..] {
        list = e.apply(&list);
        let mut names = HashSet::new();
        if let Some(t) = list.iter().find(|t| !names.insert(t.name.as_str())) {
            return Err(Error::invalid(
                COMMAND_LINE,
                flag,
                format!(
                    "with this change, the scenario's event at call {} would list tool `{}` twice ({})",
                    e.at_call, t.name, scenario.origin
                ),
            ));
        }
    }
    Ok((changed, summary))
}

/// Runs the baseline and the changed scenario on `models` (empty: the scenario's, else the six
/// measured) under `strategies` (empty: [`DEFAULT_STRATEGIES`]), adding the `append` tool-change rule
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

/// The selection `whatif` resolves: `models` and `strategies` (empty: [`DEFAULT_STRATEGIES`]), each
/// caching strategy followed by its `/tool-changes=append` variant.
pub fn selection(models: &[String], strategies: &[String]) -> Selection {
    Selection::new(models, strategies)
        .default_strategies(&DEFAULT_STRATEGIES)
        .with_append_variants()
}

/// [`selection`] for a change before call `at_call`: before call 1 there is no change mid-session
/// for the append rule to carry, so no `append` variants.
pub fn selection_at(models: &[String], strategies: &[String], at_call: usize) -> Selection {
    let mut s = selection(models, strategies);
    s.append_variants = at_call > 1;
    s
}

/// The what-if report of `request` against `changed` (the request's scenario with the change of
/// `summary` at `at_call`, from [`apply_change`]): both simulated with every pair on one timeline.
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

/// Calls from K until the cumulative extra cost of `delta` (per call number, 1..=n) is back to zero
/// or below: within the session, and extrapolated beyond it at the mean per-call effect after K;
/// with that mean.
fn payback(delta: &[f64], k: usize, n: usize) -> (Option<u64>, Option<u64>, f64) {
    let mut cum = vec![0.0; n + 1];
    for c in 1..=n {
        cum[c] = cum[c - 1] + delta[c];
    }
    let breakeven = (k..=n)
        .find(|&c| cum[c] <= EPS_USD)
        .map(|c| (c - k + 1) as u64);
    let last = if n > k {
        delta[k + 1..=n].iter().sum::<f64>() / (n - k) as f64
    } else {
        0.0
    };
    let no_effect = delta.iter().all(|d| d.abs() <= EPS_USD);
    let extrapolated = if breakeven.is_some() || no_effect {
        breakeven
    } else if k < n && last < -EPS_USD {
        Some((n - k + 1) as u64 + (cum[n] / -last).ceil() as u64)
    } else {
        None
    };
    (breakeven, extrapolated, last)
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
        return Err(super::nothing_cacheable(&report.skipped));
    }
    Ok(report)
}

/// Sums of `cost_usd`, `cache_write_tokens` and the first session's tool block, per call number.
fn per_call(calls: &[CallBill], n: usize) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
    let mut usd = vec![0.0; n + 1];
    let mut written = vec![0u64; n + 1];
    let mut block = vec![0u64; n + 1];
    for c in calls {
        let k = c.call as usize;
        if k <= n {
            usd[k] += c.cost_usd;
            written[k] += c.cache_write_tokens;
            if c.session == 1 {
                block[k] = c.tool_block_tokens;
            }
        }
    }
    (usd, written, block)
}

fn outcome(
    model_name: &str,
    rule: &str,
    k: usize,
    n: usize,
    base: SimResult,
    chg: SimResult,
) -> WhatifOutcome {
    let (bu, bw, bb) = per_call(&base.calls, n);
    let (cu, cw, cb) = per_call(&chg.calls, n);
    let delta: Vec<f64> = (0..=n).map(|c| cu[c] - bu[c]).collect();
    // Cumulative extra cost over call numbers (all sessions; calls before K only differ when
    // sessions share a cache); `last` is the steady effect, the mean over the calls after K (K
    // itself carries the one-off re-write).
    let (breakeven, extrapolated_calls, last) = payback(&delta, k, n);
    // Messages quote the same session total as `extra_usd` (the per-call sums differ in the last bits).
    let total = chg.total_usd - base.total_usd;
    let no_effect = delta.iter().all(|d| d.abs() <= EPS_USD);
    let (extrapolated, verdict) = if no_effect {
        (breakeven, "no effect on cost".to_string())
    } else if let Some(b) = breakeven {
        let v = if b == 1 {
            format!(
                "cheaper from call {k} on: saves {} over the session",
                usd(-total)
            )
        } else {
            format!(
                "pays for itself after {} (by call {}); net {} over the session",
                calls_word(b),
                k + b as usize - 1,
                signed(total)
            )
        };
        (Some(b), v)
    } else if k == n {
        (
            None,
            format!(
                "costs {} and comes at the last call: no later call to recover it",
                usd(total)
            ),
        )
    } else if let Some(needed) = extrapolated_calls {
        (
            Some(needed),
            format!(
                "not paid back within the session ({} left); at the mean saving of {} per call after the change, after about {needed} calls from call {k}",
                usd(total),
                usd(-last)
            ),
        )
    } else if last > EPS_USD {
        (
            None,
            format!(
                "never pays back: costs {} more over the session and {} more per call after it",
                usd(total),
                usd(last)
            ),
        )
    } else {
        (
            None,
            format!(
                "never pays back: a one-off {} with no per-call saving afterwards",
                usd(total)
            ),
        )
    };
    WhatifOutcome {
        model: base.model.clone(),
        model_name: model_name.to_string(),
        strategy: base.strategy.clone(),
        strategy_requested: base.strategy_requested.clone(),
        tool_change_rule: if base.strategy == "none" {
            "none".into()
        } else {
            rule.to_string()
        },
        baseline_usd: base.total_usd,
        changed_usd: chg.total_usd,
        extra_usd: chg.total_usd - base.total_usd,
        extra_percent: percent(chg.total_usd - base.total_usd, base.total_usd),
        baseline_cache_write_tokens: base.totals.cache_write_tokens,
        changed_cache_write_tokens: chg.totals.cache_write_tokens,
        extra_cache_write_tokens: chg.totals.cache_write_tokens as i64
            - base.totals.cache_write_tokens as i64,
        baseline_write_at_change_tokens: bw[k],
        write_at_change_tokens: cw[k],
        tool_block_tokens_before: bb[k],
        tool_block_tokens_after: cb[k],
        extra_usd_at_change: delta[k],
        extra_usd_per_call_after: last,
        breakeven_calls: breakeven,
        breakeven_calls_extrapolated: extrapolated,
        append_saving_usd: None,
        verdict,
        saving_usd: base.total_usd - chg.total_usd,
        saving_percent: percent(base.total_usd - chg.total_usd, base.total_usd),
        runs: None,
        baseline_calls: base.calls,
        changed_calls: chg.calls,
    }
}

fn signed(x: f64) -> String {
    if x <= 0.0 {
        format!("saves {}", usd(-x))
    } else {
        format!("costs {}", usd(x))
    }
}

impl WhatifReport {
    /// The table of `--runs N`: the saving as a mean with the range of 90% of runs, how often the
    /// change saves and pays back, and the pay-back calls over the runs in which it does.
    fn table_of_runs(&self) -> String {
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "saving USD (mean)",
                "saving, 90% of runs",
                "saves in",
                "pays back in",
                "pays back after (median [p5, p95])",
            ],
            &[false, false, true, true, true, true, true],
        );
        for o in &self.outcomes {
            let Some(r) = &o.runs else { continue };
            let calls = |x: f64| format!("{x:.0}");
            t.row(vec![
                o.model.clone(),
                o.strategy.clone(),
                usd(r.saving_usd.mean),
                format!("[{}, {}]", usd(r.saving_usd.p5), usd(r.saving_usd.p95)),
                share_text(r.share_saving),
                format!(
                    "{} ({} in session)",
                    share_text(r.share_pays_back_extrapolated),
                    share_text(r.share_pays_back)
                ),
                match &r.breakeven_calls_extrapolated {
                    Some(i) => format!(
                        "{} [{}, {}]",
                        calls_word(i.median.round() as u64),
                        calls(i.p5),
                        calls(i.p95)
                    ),
                    None => "never".into(),
                },
            ]);
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls), {} runs from seed {}; what if {}\n",
            self.scenario,
            self.sessions,
            self.calls_per_session,
            self.runs,
            self.seed,
            self.change.description
        );
        out.push_str(&t.render());
        out.push_str("saving: baseline minus changed, run by run on the same timeline (negative: the change costs more); pays back: calls from K until the change has paid for itself, beyond the session at the mean saving per call after K\n");
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    /// Column names of [`WhatifReport::csv`].
    pub const CSV_COLUMNS: [&'static str; 17] = [
        "model",
        "strategy",
        "tool_change_rule",
        "baseline_usd",
        "changed_usd",
        "extra_usd",
        "extra_percent",
        "baseline_cache_write_tokens",
        "changed_cache_write_tokens",
        "extra_cache_write_tokens",
        "write_at_change_tokens",
        "extra_usd_per_call_after",
        "breakeven_calls",
        "breakeven_calls_extrapolated",
        "append_saving_usd",
        "saving_usd",
        "saving_percent",
    ];

    /// One CSV row per outcome (empty cells for "never").
    pub fn csv(&self) -> String {
        let opt = |o: Option<u64>| o.map(|v| v.to_string()).unwrap_or_default();
        let mut out = Self::CSV_COLUMNS.join(",");
        out.push('\n');
        for o in &self.outcomes {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.3},{},{},{},{},{},{},{},{},{},{:.3}",
                field(&o.model),
                field(&o.strategy),
                o.tool_change_rule,
                usd_number(o.baseline_usd),
                usd_number(o.changed_usd),
                usd_number(o.extra_usd),
                o.extra_percent,
                o.baseline_cache_write_tokens,
                o.changed_cache_write_tokens,
                o.extra_cache_write_tokens,
                o.write_at_change_tokens,
                usd_number(o.extra_usd_per_call_after),
                opt(o.breakeven_calls),
                opt(o.breakeven_calls_extrapolated),
                o.append_saving_usd.map(usd_number).unwrap_or_default(),
                usd_number(o.saving_usd),
                o.saving_percent,
            );
        }
        out
    }

    /// The terminal table, one verdict per row below it, then the stated skips.
    pub fn table(&self) -> String {
        if self.runs > 1 {
            return self.table_of_runs();
        }
        let mut t = TextTable::new(
            &[
                "model",
                "strategy",
                "baseline USD",
                "changed USD",
                "saving USD",
                "saving %",
                "extra write",
                "write at K",
                "pays back",
            ],
            &[false, false, true, true, true, true, true, true, true],
        );
        for o in &self.outcomes {
            let pays = match (o.breakeven_calls, o.breakeven_calls_extrapolated) {
                (Some(b), _) => calls_word(b),
                (None, Some(x)) => format!("~{}*", calls_word(x)),
                (None, None) => "never".into(),
            };
            t.row(vec![
                o.model.clone(),
                o.strategy.clone(),
                usd(o.baseline_usd),
                usd(o.changed_usd),
                usd(o.saving_usd),
                saving_percent(o.saving_percent),
                o.extra_cache_write_tokens.to_string(),
                o.write_at_change_tokens.to_string(),
                pays,
            ]);
        }
        let mut out = format!(
            "scenario: {} ({} session(s) x {} calls); what if {}\n",
            crate::base::terminal::escape_inline(&self.scenario),
            self.sessions,
            self.calls_per_session,
            crate::base::terminal::escape_inline(&self.change.description)
        );
        out.push_str(&t.render());
        out.push_str("pays back: calls counted from K until the change has paid for itself; * = beyond the session, at the mean saving per call after K\n");
        for o in &self.outcomes {
            let _ = writeln!(out, "{} / {}: {}", o.model, o.strategy, o.verdict);
            if let Some(v) = o.append_saving_usd {
                let _ = writeln!(
                    out,
                    "{} / {}: the append rule makes this change {} than the default rule",
                    o.model,
                    o.strategy,
                    if v >= 0.0 {
                        format!("{} cheaper", usd(v))
                    } else {
                        format!("{} dearer", usd(-v))
                    }
                );
            }
        }
        for line in skip_lines(&self.skipped) {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::scenario;
    use crate::model::tools::{synthetic_tool, synthetic_tools};

    fn session(calls: usize) -> Scenario {
        scenario(&format!(
            "name = \"t\"\n[tools]\nsynthetic = {{ count = 20, params = 3 }}\n\
             [session]\ncalls = {calls}\nsystem_tokens = 500\nfirst_user_tokens = 100\n\
             tool_result_tokens = 300\noutput_tokens = 50\ngap_seconds = 10\n"
        ))
    }

    fn add_one() -> ToolChange {
        ToolChange {
            add: vec![synthetic_tool(21, 3)],
            ..Default::default()
        }
    }

    #[test]
    fn opus5_adding_one_tool_rewrites_the_whole_block() {
        // Measured: adding one tool to a cached 20-tool set re-wrote the whole 4,082-token block at
        // 1.25x on Claude Opus 5.
        let catalog = Catalog::embedded().unwrap();
        let sc = session(8);
        let k = 4;
        let rep = whatif(
            &catalog,
            &sc,
            k,
            &add_one(),
            &["claude-opus-5".into()],
            &["explicit:tools".into()],
        )
        .unwrap();
        let m = catalog.model("claude-opus-5").unwrap();
        let old_block = m.rendering().block_tokens(&synthetic_tools(1, 20, 3));
        let new_block = m.rendering().block_tokens(&synthetic_tools(1, 21, 3));
        let o = &rep.outcomes[0];
        assert_eq!(o.strategy, "explicit:tools");
        assert_eq!(o.tool_change_rule, "invalidate");
        assert_eq!(o.tool_block_tokens_before, old_block);
        assert_eq!(o.tool_block_tokens_after, new_block);
        // The call-K write is the whole new block, not just the added tool.
        assert_eq!(o.baseline_write_at_change_tokens, 0);
        assert_eq!(o.write_at_change_tokens, new_block);
        let rel = (new_block as f64 - 4082.0).abs() / 4082.0;
        assert!(rel < 0.01, "modelled block {new_block} vs measured 4,082");
        // Dollars of call K: the new block at 1.25x instead of the old one at 0.1x; the added tool's
        // tokens at 0.1x on every later call.
        let price = m.input_usd_per_mtok.value / 1e6;
        let at_k = (new_block as f64 * 1.25 - old_block as f64 * 0.1) * price;
        assert!(
            (o.extra_usd_at_change - at_k).abs() < 1e-12,
            "{}",
            o.extra_usd_at_change
        );
        let later = (new_block - old_block) as f64 * 0.1 * price;
        assert!((o.extra_usd_per_call_after - later).abs() < 1e-12);
        let total = at_k + later * (8 - k) as f64;
        assert!((o.extra_usd - total).abs() < 1e-12);
        assert_eq!(o.breakeven_calls, None);
        assert_eq!(o.breakeven_calls_extrapolated, None);
        assert!(o.verdict.contains("never"), "{}", o.verdict);
        // The beta rule: the block stays cached; the new tool is sent after it, nothing re-written.
        let a = &rep.outcomes[1];
        assert_eq!(a.strategy, "explicit:tools/tool-changes=append");
        assert_eq!(a.tool_change_rule, "append");
        assert_eq!(a.write_at_change_tokens, 0);
        assert_eq!(a.tool_block_tokens_after, old_block);
        // What the beta is worth here: only the new tool's tokens, at the base rate, from call K on.
        let tool = m.rendering().tool_tokens(&synthetic_tool(21, 3));
        let append_extra = tool as f64 * price * (8 - k + 1) as f64;
        assert!(
            (a.extra_usd - append_extra).abs() < 1e-12,
            "{} vs {append_extra}",
            a.extra_usd
        );
        assert!(a.extra_usd < o.extra_usd);
        let worth = a.append_saving_usd.unwrap();
        assert!((worth - (o.extra_usd - a.extra_usd)).abs() < 1e-15);
        assert_eq!(o.append_saving_usd, None);
    }

    /// Calls, counting call K, until removing 10 of 20 tools pays back under explicit:tools on Opus
    /// 4.8, worked out from the formula: call K writes the new block at 1.25x instead of reading the
    /// old one at 0.1x; every later call reads the smaller block.
    fn hand_breakeven(old: u64, new: u64) -> u64 {
        let first = 1.25 * new as f64 - 0.1 * old as f64;
        let per_call = 0.1 * (old - new) as f64;
        let mut m = 1;
        while first - (m - 1) as f64 * per_call > 0.0 {
            m += 1;
        }
        m
    }

    #[test]
    fn removing_tools_pays_back_after_the_rewrite() {
        let catalog = Catalog::embedded().unwrap();
        let m = catalog.model("claude-opus-4.8").unwrap();
        let old = m.rendering().block_tokens(&synthetic_tools(1, 20, 3));
        let new = m.rendering().block_tokens(&synthetic_tools(1, 10, 3));
        // The measured Opus 4.8 20-tool block is 3,682 tokens; the fitted family gives it within 1%.
        assert!((old as f64 / 3682.0 - 1.0).abs() < 0.01, "{old}");
        let expected = hand_breakeven(old, new);
        let change = ToolChange {
            remove: (11..=20)
                .map(|i| format!("synthetic_tool_{i:02}"))
                .collect(),
            ..Default::default()
        };
        let k = 3;
        let strategies = ["none".to_string(), "explicit:tools".to_string()];
        let ids = ["claude-opus-4.8".to_string()];
        // Long enough: paid back inside the session.
        let long = whatif(&catalog, &session(20), k, &change, &ids, &strategies).unwrap();
        let none = &long.outcomes[0];
        assert_eq!(none.strategy, "none");
        assert_eq!(none.breakeven_calls, Some(1), "{}", none.verdict);
        let price = m.input_usd_per_mtok.value / 1e6;
        let saved = (old - new) as f64 * price * (20 - k + 1) as f64;
        assert!((none.extra_usd + saved).abs() < 1e-12);
        let e = &long.outcomes[1];
        assert_eq!(e.strategy, "explicit:tools");
        assert_eq!(e.write_at_change_tokens, new);
        assert_eq!(e.breakeven_calls, Some(expected), "{}", e.verdict);
        assert_eq!(e.breakeven_calls_extrapolated, Some(expected));
        // Too short: not paid back, but the extrapolation at the steady saving gives the same count.
        let short = whatif(&catalog, &session(10), k, &change, &ids, &strategies).unwrap();
        let e = &short.outcomes[1];
        assert!(expected > (10 - k + 1) as u64);
        assert_eq!(e.breakeven_calls, None);
        assert_eq!(
            e.breakeven_calls_extrapolated,
            Some(expected),
            "{}",
            e.verdict
        );
        assert!(e.extra_usd > 0.0);
    }

    #[test]
    fn bad_changes_are_errors_naming_the_flag() {
        let catalog = Catalog::embedded().unwrap();
        let sc = session(6);
        let ids = ["claude-opus-4.8".to_string()];
        let err = |k: usize, c: &ToolChange| {
            whatif(&catalog, &sc, k, c, &ids, &[])
                .unwrap_err()
                .to_string()
        };
        for k in [0, 7] {
            let e = err(k, &add_one());
            assert!(
                e.contains("--at-call") && e.contains(&format!("value {k}")),
                "{e}"
            );
        }
        let e = err(
            3,
            &ToolChange {
                remove: vec!["synthetic_tool_2".into()],
                ..Default::default()
            },
        );
        assert!(
            e.contains("--remove-tools")
                && e.contains("`synthetic_tool_2`")
                && e.contains("did you mean"),
            "{e}"
        );
        let e = err(
            3,
            &ToolChange {
                add: vec![synthetic_tool(5, 3)],
                ..Default::default()
            },
        );
        assert!(e.contains("twice"), "{e}");
        let all: Vec<String> = (1..=20).map(|i| format!("synthetic_tool_{i:02}")).collect();
        let e = err(
            3,
            &ToolChange {
                keep: Some(all),
                ..Default::default()
            },
        );
        assert!(e.contains("--keep-tools") && e.contains("as it is"), "{e}");
        // A later event of the scenario that adds the same tool again.
        let mut later = sc.clone();
        later.events.push(ToolEvent {
            at_call: 5,
            add: vec![synthetic_tool(21, 3)],
            remove: vec![],
            keep: None,
            replace: None,
        });
        let e = whatif(&catalog, &later, 3, &add_one(), &ids, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("event at call 5") && e.contains("`synthetic_tool_21` twice"),
            "{e}"
        );
        // Removing earlier a tool that a later event removes is a fair question: the later removal
        // then has nothing to do.
        let mut later = sc.clone();
        later.events.push(ToolEvent {
            at_call: 5,
            add: vec![],
            remove: vec!["synthetic_tool_03".into()],
            keep: None,
            replace: None,
        });
        let earlier = ToolChange {
            remove: vec!["synthetic_tool_03".into()],
            ..Default::default()
        };
        let rep = whatif(&catalog, &later, 3, &earlier, &ids, &["none".into()]).unwrap();
        // Two calls (3 and 4) without the tool's tokens at the base rate.
        let m = catalog.model("claude-opus-4.8").unwrap();
        let r = m.rendering();
        let without: Vec<Tool> = sc
            .tools
            .iter()
            .filter(|t| t.name != "synthetic_tool_03")
            .cloned()
            .collect();
        let t = r.block_tokens(&sc.tools) - r.block_tokens(&without);
        let saved = 2.0 * t as f64 * m.input_usd_per_mtok.value / 1e6;
        assert!(
            (rep.outcomes[0].extra_usd + saved).abs() < 1e-12,
            "{}",
            rep.outcomes[0].extra_usd
        );
        // A strategy no chosen model offers: an error, not a table of baselines.
        let e = whatif(&catalog, &sc, 3, &add_one(), &ids, &["automatic".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no automatic caching"), "{e}");
    }

    #[test]
    fn append_variant_is_a_stated_skip_where_not_offered() {
        let catalog = Catalog::embedded().unwrap();
        let rep = whatif(
            &catalog,
            &session(6),
            3,
            &add_one(),
            &["gpt-5.6".into()],
            &[],
        )
        .unwrap();
        assert_eq!(rep.outcomes.len(), 2);
        let s = &rep.skipped[0];
        assert!(s.strategy.ends_with("/tool-changes=append"), "{s:?}");
        assert!(s.reason.contains("not offered"), "{}", s.reason);
        assert_eq!(rep.csv().lines().count(), 3);
    }
}
