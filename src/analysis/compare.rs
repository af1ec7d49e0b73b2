//! `compare`: one session (same event stream, same seed) under several caching strategies, side by
//! side, with savings against no caching.

use serde::Serialize;

use super::uncertainty::{run_totals, share, Interval};
use super::{percent, Skip};
use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::Catalog;
use crate::model::strategy::Mode;
use crate::sim::billing::CallBill;
use crate::sim::engine::PreparedSet;
use crate::sim::request::{Request, Selection};
use crate::sim::simulate::{context_warnings, simulate_pairs};

/// Strategies compared when none are given: no caching, `cached` (the cheapest caching each model
/// allows, so every model has its best row), explicit breakpoints on the tool block, on
/// tools + system, on tools + system + last message (5 min and 1 h TTL variants), automatic and
/// implicit caching. Each is applied to every model that offers it; the rest are stated skips.
pub const DEFAULT_STRATEGIES: [&str; 9] = [
    "none",
    "cached",
    "explicit:tools",
    "explicit:tools+system",
    "explicit:tools+system+last",
    "explicit:tools@1h+system+last",
    "explicit:tools@1h+system@1h+last@1h",
    "automatic",
    "implicit",
];

/// One strategy's outcome on one model.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct StrategyOutcome {
    /// Canonical strategy simulated.
    pub strategy: String,
    /// Strategy as requested (differs for `cached`).
    pub strategy_requested: String,
    /// Total dollars of the session(s).
    pub total_usd: f64,
    /// Dollars saved against no caching (negative: caching costs more).
    pub saving_usd: f64,
    /// `saving_usd` in percent of the no-caching total.
    pub saving_percent: f64,
    /// Tokens written to cache.
    pub cache_write_tokens: u64,
    /// Tokens read from cache.
    pub cache_read_tokens: u64,
    /// Tokens billed at the base input rate.
    pub uncached_tokens: u64,
    /// Prompt tokens over all calls.
    pub prompt_tokens: u64,
    /// Share of prompt tokens read from cache.
    pub cache_hit_ratio: f64,
    /// Over the Monte Carlo runs (`--runs N`, N > 1; absent otherwise): the total, the saving
    /// against no caching run by run, and how often the strategy saves and is the cheapest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<OutcomeRuns>,
    /// Per-call bills in time order, with `cumulative_usd` for the cumulative chart (not in the JSON,
    /// which stays one line per strategy; `run --format json` has the per-call rows).
    #[serde(skip)]
    pub calls: Vec<CallBill>,
}

/// One strategy's figures over the Monte Carlo runs of `compare --runs N`.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRuns {
    /// Total dollars over the runs.
    pub total_usd: Interval,
    /// Saving against no caching over the runs (each run against its own no-caching total).
    pub saving_usd: Interval,
    /// Share of runs (0..=1) in which the strategy costs less than no caching.
    pub share_saving: f64,
    /// Share of runs in which it is the cheapest strategy on this model.
    pub share_cheapest: f64,
}

/// All strategies on one model.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ModelComparison {
    /// Model id.
    pub model: String,
    /// Display name.
    pub model_name: String,
    /// Total dollars without caching (the baseline of every saving).
    pub none_usd: f64,
    /// The cheapest strategy simulated on this model (by the mean over the runs with `--runs`).
    pub cheapest: String,
    /// With `--runs`: the share of runs in which `cheapest` is the cheapest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cheapest_share: Option<f64>,
    /// One entry per simulated strategy, `none` first.
    pub strategies: Vec<StrategyOutcome>,
}

/// Everything `compare` reports.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CompareReport {
    /// Scenario name.
    pub scenario: String,
    /// Scenario description.
    pub description: String,
    /// Seed of the draws (every strategy sees the same sessions).
    pub seed: u64,
    /// Sessions simulated.
    pub sessions: usize,
    /// Calls per session.
    pub calls_per_session: usize,
    /// Monte Carlo runs (1: the figures are those of one run of `seed`; more: every outcome has
    /// `runs`, and the point figures stay those of the first run).
    pub runs: u64,
    /// One entry per model.
    pub comparisons: Vec<ModelComparison>,
    /// (model, strategy) pairs not simulated, with the reason.
    pub skipped: Vec<Skip>,
    /// Models whose simulated prompts exceed their context window (run 0); absent when none do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_warnings: Vec<crate::sim::simulate::ContextWarning>,
}

/// Runs `scenario` on `models` (empty: the scenario's models, else the six measured ones) under
/// `strategies` (empty: [`DEFAULT_STRATEGIES`]); `none` is always simulated as the baseline. Pairs a
/// model does not offer are stated skips; if no requested caching strategy can be simulated on any
/// model, that is an error rather than a table of baselines.
pub fn compare(
    catalog: &Catalog,
    scenario: &Scenario,
    models: &[String],
    strategies: &[String],
) -> Result<CompareReport> {
    compare_request(&selection(models, strategies).resolve(catalog, scenario.clone())?)
}

/// The selection `compare` resolves: `models` and `strategies` (empty: [`DEFAULT_STRATEGIES`]), with
/// `none` added as the baseline.
pub fn selection(models: &[String], strategies: &[String]) -> Selection {
    Selection::new(models, strategies)
        .default_strategies(&DEFAULT_STRATEGIES)
        .with_baseline()
}

/// The comparison of every pair of `request` (resolved from [`selection`], so it has the `none`
/// baseline), all simulated on the scenario's one timeline.
pub fn compare_request(request: &Request) -> Result<CompareReport> {
    compare_request_with_progress(request, &|_| {})
}

/// [`compare_request`], telling `progress` how many (run, pair) simulations are done when the
/// scenario has more than one run.
// Over 120 lines: one loop over the requested models that pairs each simulation with its run totals
// by position (`next_pair`), building each model's comparison; split, the position would have to
// travel between functions.
pub fn compare_request_with_progress(
    request: &Request,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CompareReport> {
    let scenario = &request.scenario;
    let results = simulate_pairs(request, scenario);
    let context_warnings = context_warnings(&request.pairs, &results);
    let mut results = results.into_iter();
    // totals[run][pair], every pair on each run's one timeline.
    let totals = if scenario.runs > 1 {
        let setups = request.setups(scenario);
        let set = PreparedSet::new(scenario, &setups);
        Some(run_totals(&set, scenario.runs as u64, progress)?)
    } else {
        None
    };
    let mut next_pair = 0;
    let mut report = CompareReport {
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        seed: scenario.seed,
        sessions: scenario.sessions,
        calls_per_session: scenario.calls,
        runs: scenario.runs as u64,
        comparisons: Vec::new(),
        skipped: request.skipped.clone(),
        context_warnings,
    };
    let mut cached_outcomes = 0;
    for &model in &request.models {
        // Results come in the order of the pairs: model by model.
        let count = request.pairs_of(model).count();
        let mut outcomes: Vec<StrategyOutcome> = Vec::with_capacity(count);
        // Index of each outcome's pair, for its run totals.
        let mut index: Vec<usize> = Vec::with_capacity(count);
        for r in results.by_ref().take(count) {
            if r.strategy != "none" {
                cached_outcomes += 1;
            }
            index.push(next_pair);
            next_pair += 1;
            outcomes.push(StrategyOutcome {
                strategy: r.strategy,
                strategy_requested: r.strategy_requested,
                total_usd: r.total_usd,
                saving_usd: 0.0,
                saving_percent: 0.0,
                cache_write_tokens: r.totals.cache_write_tokens,
                cache_read_tokens: r.totals.cache_read_tokens,
                uncached_tokens: r.totals.uncached_tokens,
                prompt_tokens: r.totals.prompt_tokens,
                cache_hit_ratio: r.totals.cache_hit_ratio,
                runs: None,
                calls: r.calls,
            });
        }
        // `none` needs no caching support, so it is always simulated and sorts first.
        let mut order: Vec<usize> = (0..outcomes.len()).collect();
        order.sort_by_key(|&i| outcomes[i].strategy != "none");
        let index: Vec<usize> = order.iter().map(|&i| index[i]).collect();
        let mut sorted: Vec<Option<StrategyOutcome>> = outcomes.into_iter().map(Some).collect();
        let mut outcomes: Vec<StrategyOutcome> =
            order.iter().filter_map(|&i| sorted[i].take()).collect();
        let none_usd = outcomes
            .iter()
            .find(|o| o.strategy == "none")
            .map(|o| o.total_usd)
            .ok_or_else(|| {
                Error::Internal(format!(
                    "compare: no `none` baseline among the pairs of `{}`",
                    model.id
                ))
            })?;
        for o in &mut outcomes {
            o.saving_usd = none_usd - o.total_usd;
            o.saving_percent = percent(o.saving_usd, none_usd);
        }
        let mut cheapest = outcomes
            .iter()
            .min_by(|a, b| a.total_usd.total_cmp(&b.total_usd))
            .map(|o| o.strategy.clone())
            .unwrap_or_else(|| "none".into());
        let mut cheapest_share = None;
        if let Some(totals) = &totals {
            let none_i = index[0];
            // The cheapest of this model's strategies in each run (first listed on a tie).
            let best_in: Vec<usize> = totals
                .iter()
                .map(|run| {
                    (0..index.len())
                        .min_by(|&a, &b| run[index[a]].total_cmp(&run[index[b]]))
                        .unwrap_or(0)
                })
                .collect();
            for (k, o) in outcomes.iter_mut().enumerate() {
                let i = index[k];
                o.runs = Some(OutcomeRuns {
                    total_usd: Interval::over(totals, |run| run[i]).ok_or_else(no_runs)?,
                    saving_usd: Interval::over(totals, |run| run[none_i] - run[i])
                        .ok_or_else(no_runs)?,
                    share_saving: share(totals, |run| run[i] < run[none_i]),
                    share_cheapest: share(&best_in, |&b| b == k),
                });
            }
            if let Some((k, o)) = outcomes.iter().enumerate().min_by(|a, b| {
                let mean =
                    |o: &StrategyOutcome| o.runs.as_ref().map_or(o.total_usd, |r| r.total_usd.mean);
                mean(a.1).total_cmp(&mean(b.1))
            }) {
                cheapest = o.strategy.clone();
                cheapest_share = Some(share(&best_in, |&b| b == k));
            }
        }
        report.comparisons.push(ModelComparison {
            model: model.id.clone(),
            model_name: model.name.clone(),
            none_usd,
            cheapest,
            cheapest_share,
            strategies: outcomes,
        });
    }
    let wanted_caching = request
        .strategies
        .iter()
        .any(|(_, s)| s.mode != Some(Mode::None));
    if wanted_caching && cached_outcomes == 0 {
        return Err(super::nothing_cacheable(&report.skipped));
    }
    Ok(report)
}

fn no_runs() -> Error {
    Error::Internal("compare: a Monte Carlo gave no runs".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::scenario;
    use crate::model::tools::synthetic_tools;

    /// Two calls, 20 synthetic tools, fixed sizes, 10 s apart: every figure can be worked out by hand.
    const TWO_CALLS: &str = "name = \"two\"\n[tools]\nsynthetic = { count = 20, params = 3 }\n\
        [session]\ncalls = 2\nsystem_tokens = 1000\nfirst_user_tokens = 100\n\
        tool_result_tokens = 300\noutput_tokens = 50\ngap_seconds = 10\nfirst_token_seconds = 1\n";

    #[test]
    fn two_call_session_matches_hand_computation() {
        let catalog = Catalog::embedded().unwrap();
        let sc = scenario(TWO_CALLS);
        let rep = compare(
            &catalog,
            &sc,
            &["claude-opus-4.8".into()],
            &["explicit:tools+system".into()],
        )
        .unwrap();
        let m = catalog.model("claude-opus-4.8").unwrap();
        let price = m.input_usd_per_mtok.value / 1e6;
        let out_price = m.output_usd_per_mtok.value / 1e6;
        let block = m.rendering().block_tokens(&synthetic_tools(1, 20, 3));
        let prefix = block + 1000;
        // Call 1: tools + system + 100 user tokens. Call 2 adds 50 output + 300 result tokens.
        let p1 = prefix + 100;
        let p2 = p1 + 50 + 300;
        let none = (p1 + p2) as f64 * price + 2.0 * 50.0 * out_price;
        // Cached: call 1 writes the prefix at 1.25x, call 2 reads it at 0.1x; the rest at base rate.
        let cached = (prefix as f64 * 1.25 + 100.0) * price
            + (prefix as f64 * 0.1 + (p2 - prefix) as f64) * price
            + 2.0 * 50.0 * out_price;
        let c = &rep.comparisons[0];
        assert_eq!(c.strategies[0].strategy, "none");
        assert!(
            (c.none_usd - none).abs() < 1e-12,
            "{} vs {none}",
            c.none_usd
        );
        let e = &c.strategies[1];
        assert_eq!(e.strategy, "explicit:tools+system");
        assert!(
            (e.total_usd - cached).abs() < 1e-12,
            "{} vs {cached}",
            e.total_usd
        );
        assert!((e.saving_usd - (none - cached)).abs() < 1e-12);
        assert!((e.saving_percent - (none - cached) / none * 100.0).abs() < 1e-9);
        assert_eq!(e.cache_write_tokens, prefix);
        assert_eq!(e.cache_read_tokens, prefix);
        // The per-call data for the cumulative chart ends at the total.
        assert_eq!(e.calls.len(), 2);
        assert!((e.calls[1].cumulative_usd - e.total_usd).abs() < 1e-12);
    }

    #[test]
    fn default_set_states_every_unsupported_pair() {
        let catalog = Catalog::embedded().unwrap();
        let sc = scenario(TWO_CALLS);
        let rep = compare(
            &catalog,
            &sc,
            &["claude-opus-4.8".into(), "gpt-5.6".into()],
            &[],
        )
        .unwrap();
        let claude = &rep.comparisons[0];
        // Claude offers explicit caching with 5 min and 1 h tiers, neither automatic nor implicit:
        // none, cached (its cheapest placement on this session, which is none of the default
        // set's explicit strategies) and the five explicit strategies of the default set.
        assert_eq!(claude.strategies.len(), 7);
        assert_eq!(claude.strategies[1].strategy_requested, "cached");
        assert!(!DEFAULT_STRATEGIES.contains(&claude.strategies[1].strategy.as_str()));
        let gpt = &rep.comparisons[1];
        // GPT-5.6 allows breakpoints only inside messages (none after the tools): every explicit
        // strategy of the default set anchors at the tools, so the baseline and `cached` (its best
        // placement inside the messages) are simulated.
        assert_eq!(gpt.strategies.len(), 2);
        assert_eq!(gpt.strategies[1].strategy_requested, "cached");
        for (model, strategy) in [
            ("claude-opus-4.8", "automatic"),
            ("claude-opus-4.8", "implicit"),
            ("gpt-5.6", "explicit:tools@1h+system+last"),
            ("gpt-5.6", "explicit:tools"),
            ("gpt-5.6", "automatic"),
        ] {
            let s = rep
                .skipped
                .iter()
                .find(|s| s.model == model && s.strategy == strategy)
                .unwrap_or_else(|| panic!("{model} / {strategy} not stated"));
            assert!(s.reason.contains(model), "{}", s.reason);
        }
        // Every (model, default strategy) pair is either simulated or stated.
        let total: usize = rep.comparisons.iter().map(|c| c.strategies.len()).sum();
        assert_eq!(total + rep.skipped.len(), 2 * DEFAULT_STRATEGIES.len());
        let csv = rep.csv();
        assert_eq!(csv.lines().count(), 1 + total);
    }

    #[test]
    fn nothing_supported_is_an_error_and_bad_strategy_names_the_flag() {
        let catalog = Catalog::embedded().unwrap();
        let sc = scenario(TWO_CALLS);
        let e = compare(
            &catalog,
            &sc,
            &["claude-opus-4.8".into()],
            &["automatic".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no automatic caching"), "{e}");
        let e = compare(&catalog, &sc, &[], &["explicit:often".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--strategy") && e.contains("often"), "{e}");
    }
}
