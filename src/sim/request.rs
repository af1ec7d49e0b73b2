//! One resolved request: the scenario with its command-line overrides checked against the same limits
//! as the file, and every (model, strategy) pair to simulate, resolved against its model with its
//! prices, once. `run`, `compare`, `whatif`, `advise` and the charts all start from a [`Request`], so
//! model and strategy selection, de-duplication and skips behave the same everywhere.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::model::catalog::{Catalog, ModelSpec, ToolChangeRule};
use crate::model::strategy::{placements, Mode, ResolvedStrategy, Strategy};
use crate::sim::billing::PriceSheet;
use crate::sim::engine::{PreparedSet, SimSetup};

/// Upper bound on the per-call bills a report keeps in memory (about 120 bytes each, plus their rows
/// in the JSON and CSV reports): sessions x calls x simulated (model, strategy) pairs, twice that for
/// `whatif` (the baseline and the changed session). Larger simulations must stream their bills
/// (`engine::simulate_run`).
pub const MAX_BILLS_KEPT: u64 = 2_000_000;

/// Upper bound on the calls simulated by one command over all Monte Carlo runs, counting every
/// (model, strategy) pair: runs x sessions x calls x pairs (x 2 for `whatif`). About 5 s of work on
/// one core of the development machine (see README, "Limits").
pub const MAX_SIMULATED_CALLS: u64 = 100_000_000;

/// Refuses, before any simulation, a request whose bills would not fit in memory or whose Monte
/// Carlo would simulate more than [`MAX_SIMULATED_CALLS`]: `pairs` (model, strategy) pairs on
/// `scenario`, each simulated `copies` times per run (2 for `whatif`). Errors name the scenario file
/// and the field to lower.
pub(crate) fn check_work(scenario: &Scenario, pairs: usize, copies: u64) -> Result<()> {
    let per_run = (scenario.calls as u64)
        .saturating_mul(scenario.sessions as u64)
        .saturating_mul(pairs as u64)
        .saturating_mul(copies);
    let times = if copies > 1 {
        format!(" x {copies} (baseline and change)")
    } else {
        String::new()
    };
    if per_run > MAX_BILLS_KEPT {
        return Err(Error::invalid(
            &scenario.origin,
            "session.calls",
            format!(
                "{} sessions x {} calls x {pairs} (model, strategy) pairs{times} = {per_run} per-call bills, more than the {MAX_BILLS_KEPT} a report keeps in memory; use fewer calls, sessions, models or strategies",
                scenario.sessions, scenario.calls
            ),
        ));
    }
    let all = per_run.saturating_mul(scenario.runs as u64);
    if all > MAX_SIMULATED_CALLS {
        return Err(Error::invalid(
            &scenario.origin,
            "runs",
            format!(
                "{} runs x {} sessions x {} calls x {pairs} (model, strategy) pairs{times} = {all} simulated calls, more than the limit of {MAX_SIMULATED_CALLS}; use fewer runs, calls, sessions, models or strategies",
                scenario.runs, scenario.sessions, scenario.calls
            ),
        ));
    }
    Ok(())
}

/// Where command-line values are reported to come from in errors.
pub(crate) const COMMAND_LINE: &str = "command line";

/// Why a (model, strategy) pair was not simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipKind {
    /// The model does not offer the strategy (or one of its tiers or rules).
    Unsupported,
    /// On this model the strategy resolves to the same one as an earlier requested strategy (given
    /// here as requested), which is simulated once.
    SameAs(String),
}

/// A (model, strategy) that was not simulated, with the reason (stated, never silent).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Skipped {
    /// Model id.
    pub model: String,
    /// Strategy as requested.
    pub strategy: String,
    /// Why it was skipped, in words.
    pub reason: String,
    /// Why it was skipped, for code (the JSON has `reason` only).
    #[serde(skip)]
    pub kind: SkipKind,
}

impl Skipped {
    /// A skip of `strategy` on `model` for `reason`.
    pub(crate) fn new(
        model: impl Into<String>,
        strategy: impl Into<String>,
        reason: impl Into<String>,
        kind: SkipKind,
    ) -> Self {
        Skipped {
            model: model.into(),
            strategy: strategy.into(),
            reason: reason.into(),
            kind,
        }
    }
}

/// One (model, strategy) to simulate: the strategy as requested, parsed and resolved against the
/// model, with the prices that follow from both.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Pair<'c> {
    /// The model.
    pub model: &'c ModelSpec,
    /// The strategy as requested (e.g. `cached`).
    pub requested: String,
    /// The strategy as parsed.
    pub strategy: Strategy,
    /// The strategy resolved against the model (its canonical name is `resolved.name`).
    pub resolved: ResolvedStrategy,
    /// Per-token prices of this pair.
    pub prices: PriceSheet,
    /// Names of the write tiers, by slot.
    pub tier_names: Vec<String>,
}

impl<'c> Pair<'c> {
    /// Resolves `strategy` (requested as `requested`) against `model`; `Err` says why the model does
    /// not offer it.
    pub(crate) fn resolve(
        model: &'c ModelSpec,
        requested: &str,
        strategy: &Strategy,
    ) -> Result<Self> {
        let resolved = strategy.resolve(model)?;
        // Prices do not depend on when responses start; the engine's setup derives them.
        let setup = SimSetup::new(model, &resolved, 0.0);
        let (prices, tier_names) = (setup.prices, setup.tier_names);
        Ok(Pair {
            model,
            requested: requested.to_string(),
            strategy: strategy.clone(),
            resolved,
            prices,
            tier_names,
        })
    }

    /// The engine's setup of this pair for a scenario whose responses start after
    /// `first_token_seconds`.
    pub(crate) fn setup(&self, first_token_seconds: f64) -> SimSetup<'_> {
        SimSetup::new(self.model, &self.resolved, first_token_seconds)
    }
}

/// What was asked for: model ids and strategies (from the command line or the caller; empty means
/// the defaults), how the strategy list is completed, and overrides of the scenario's `runs` and
/// `seed`. [`Selection::resolve`] turns it into a [`Request`].
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Model ids; empty: the scenario's models, else the six measured ones. Repeated ids count once.
    pub models: Vec<String>,
    /// Strategies as given on the command line; empty: [`Selection::default_strategies`].
    pub strategies: Vec<String>,
    /// Strategies when none are given; `None`: the scenario's `strategies`.
    pub default_strategies: Option<Vec<String>>,
    /// Put `none` first when no requested strategy is `none` (a baseline for savings).
    pub baseline: bool,
    /// Follow every caching strategy without a tool-change rule by its `/tool-changes=append` variant.
    pub append_variants: bool,
    /// Monte Carlo runs instead of the scenario's `runs` (`--runs`).
    pub runs: Option<u64>,
    /// Seed instead of the scenario's `seed` (`--seed`).
    pub seed: Option<u64>,
    /// `cached` is the model's documented default, not its cheapest placement (see
    /// [`Selection::cached_as_documented_default`]).
    documented_cached: bool,
    /// Times each pair is simulated per run (0 or 1: once; 2 for `whatif`'s baseline and change):
    /// the work limits count every copy, before anything is simulated.
    copies: u64,
    /// Every model is also simulated with no caching, its documented default and every placement
    /// (`advise`'s candidates): the work limits count them before anything is simulated.
    every_placement: bool,
}

impl Selection {
    /// A selection of `models` and `strategies` (empty: the defaults).
    pub fn new(models: &[String], strategies: &[String]) -> Self {
        Selection {
            models: models.to_vec(),
            strategies: strategies.to_vec(),
            ..Selection::default()
        }
    }

    /// Each pair is simulated twice per run (`whatif`: the baseline and the change), so the work
    /// limits are checked for both copies before anything is simulated (resolving `cached` simulates
    /// candidates: a request over the limits was refused only after them, in seconds).
    pub fn simulated_twice(mut self) -> Self {
        self.copies = 2;
        self
    }

    /// Each model is also simulated with no caching, its documented default and every placement of
    /// [`placements`] (`advise`), so the work limits count those pairs before anything is
    /// simulated (resolving `cached` simulates them: a request over the limits was refused only
    /// after them, in seconds).
    pub(crate) fn with_every_placement(mut self) -> Self {
        self.every_placement = true;
        self
    }

    /// Uses `list` when no strategy is given (instead of the scenario's).
    pub fn default_strategies(mut self, list: &[&str]) -> Self {
        self.default_strategies = Some(list.iter().map(|s| s.to_string()).collect());
        self
    }

    /// Adds `none` first when it is not requested.
    pub(crate) fn with_baseline(mut self) -> Self {
        self.baseline = true;
        self
    }

    /// Adds the `/tool-changes=append` variant after every caching strategy without a rule.
    pub(crate) fn with_append_variants(mut self) -> Self {
        self.append_variants = true;
        self
    }

    /// Resolves `cached` as the model's documented default (`default_strategy` in the catalog)
    /// rather than its cheapest placement: what a provider does on its own, for a request trace
    /// whose API carries no breakpoints to show another placement (`run --trace-out`).
    pub(crate) fn cached_as_documented_default(mut self, yes: bool) -> Self {
        self.documented_cached = yes;
        self
    }

    /// Overrides the scenario's `runs` and `seed` (`None`: keep the scenario's).
    pub fn overrides(mut self, runs: Option<u64>, seed: Option<u64>) -> Self {
        self.runs = runs;
        self.seed = seed;
        self
    }

    /// Checks the overrides against the scenario's limits, selects the models and parses the
    /// strategies, and resolves every (model, strategy) pair: a model that does not offer a
    /// strategy, and a strategy that resolves on a model to one already listed, become stated
    /// [`Skipped`] entries. Errors name the file and field, or the flag, that holds a bad value.
    pub fn resolve<'c>(&self, catalog: &'c Catalog, scenario: Scenario) -> Result<Request<'c>> {
        let mut scenario = scenario;
        if let Some(runs) = self.runs {
            scenario.set_runs(runs, COMMAND_LINE, "--runs")?;
        }
        if let Some(seed) = self.seed {
            scenario.seed = seed;
        }
        let models = select_models(catalog, &scenario, &self.models)?;
        let strategies = self.strategies(&scenario)?;
        // Resolving `cached` simulates the scenario's seed run once per candidate: refused first if
        // even one pair would be over the limits.
        let copies = self.copies.max(1);
        check_work(&scenario, 1, copies)?;
        if self.every_placement {
            // The pairs known without resolving `cached` (which simulates them): a lower bound of
            // those simulated, so a request over the limits is refused before any simulation.
            let known: usize = models.iter().map(|m| placement_pairs(m, &strategies)).sum();
            check_work(&scenario, known, copies)?;
        }
        let mut pairs: Vec<Pair<'c>> = Vec::new();
        let mut skipped = Vec::new();
        for &model in &models {
            let first = pairs.len();
            for (text, strategy) in &strategies {
                // `cached` is the cheapest caching this model allows on this scenario, by one rule
                // for every command (run, compare, whatif, advise and the charts).
                let best;
                let strategy = if strategy.mode.is_none() && !self.documented_cached {
                    best = best_caching(model, &scenario, strategy.tool_changes);
                    &best
                } else {
                    strategy
                };
                let pair = match Pair::resolve(model, text, strategy) {
                    Ok(p) => p,
                    Err(e) => {
                        skipped.push(Skipped::new(
                            &model.id,
                            text,
                            e.to_string(),
                            SkipKind::Unsupported,
                        ));
                        continue;
                    }
                };
                if let Some(same) = pairs[first..]
                    .iter()
                    .find(|p| p.resolved.name == pair.resolved.name)
                {
                    skipped.push(Skipped::new(
                        &model.id,
                        text,
                        format!(
                            "the same strategy as `{}` on this model (shown once)",
                            same.requested
                        ),
                        SkipKind::SameAs(same.requested.clone()),
                    ));
                    continue;
                }
                pairs.push(pair);
            }
        }
        // Every command starts from a Request: its work is bounded here, before any simulation.
        check_work(&scenario, pairs.len(), copies)?;
        Ok(Request {
            scenario,
            models,
            strategies,
            pairs,
            skipped,
        })
    }

    /// The strategies to resolve, as requested and parsed, completed by the baseline and the
    /// `append` variants.
    fn strategies(&self, scenario: &Scenario) -> Result<Vec<(String, Strategy)>> {
        let (texts, from_file) = if !self.strategies.is_empty() {
            (self.strategies.clone(), false)
        } else if let Some(list) = &self.default_strategies {
            (list.clone(), false)
        } else {
            (scenario.strategies.clone(), true)
        };
        let mut parsed: Vec<(String, Strategy)> = Vec::new();
        for text in texts {
            let strategy = Strategy::parse(&text).map_err(|e| {
                if from_file {
                    Error::invalid(&scenario.origin, "strategies", e.to_string())
                } else {
                    Error::invalid(COMMAND_LINE, "--strategy", e.to_string())
                }
            })?;
            let append = self.append_variants
                && strategy.mode != Some(Mode::None)
                && strategy.tool_changes.is_none();
            if append {
                let mut a = strategy.clone();
                a.tool_changes = Some(ToolChangeRule::Append);
                parsed.push((text, strategy));
                parsed.push((a.to_string(), a));
            } else {
                parsed.push((text, strategy));
            }
        }
        if self.baseline && !parsed.iter().any(|(_, s)| s.mode == Some(Mode::None)) {
            parsed.insert(0, ("none".into(), Strategy::none()));
        }
        Ok(parsed)
    }
}

/// The distinct (canonical) strategies `model` is simulated under by a selection with
/// [`Selection::with_every_placement`], as far as they are known before `cached` is resolved: no
/// caching, every requested strategy other than `cached` that the model offers, its documented
/// default and every placement of [`placements`].
fn placement_pairs(model: &ModelSpec, strategies: &[(String, Strategy)]) -> usize {
    let default = Strategy::parse(&model.default_strategy).ok();
    let mut names: Vec<String> = Vec::new();
    let listed = std::iter::once(Strategy::none())
        .chain(strategies.iter().map(|(_, s)| s.clone()))
        .chain(default)
        .chain(placements(model));
    for s in listed.filter(|s| s.mode.is_some()) {
        if let Ok(r) = s.resolve(model) {
            if !names.contains(&r.name) {
                names.push(r.name);
            }
        }
    }
    names.len()
}

/// What `cached` means on `model` for `scenario`: the cheapest caching the model allows, found by
/// simulating the scenario's seed run under the model's documented default (`default_strategy` in
/// the catalog) and every placement of [`placements`] (each breakpoint set and TTL tier, automatic
/// and implicit caching at each tier). Placements that cost the same within rounding are one
/// answer: the one with the fewest breakpoints, then the earlier one (the default first). The
/// tool-change rule asked for (`cached/tool-changes=RULE`) applies to every candidate. When no
/// candidate resolves, the model's default is returned, so resolving it states why. `advise` ranks the same candidates by the same rule, so its best
/// caching placement on one run is this one.
pub(crate) fn best_caching(
    model: &ModelSpec,
    scenario: &Scenario,
    tool_changes: Option<ToolChangeRule>,
) -> Strategy {
    let default = Strategy::parse(&model.default_strategy).ok().map(|mut s| {
        if tool_changes.is_some() {
            s.tool_changes = tool_changes;
        }
        s
    });
    let mut candidates: Vec<(Strategy, ResolvedStrategy)> = Vec::new();
    for mut s in default.clone().into_iter().chain(placements(model)) {
        if s.mode.is_none() || s.mode == Some(Mode::None) {
            continue;
        }
        if tool_changes.is_some() {
            s.tool_changes = tool_changes;
        }
        let Ok(resolved) = s.resolve(model) else {
            continue;
        };
        if !candidates.iter().any(|(_, r)| r.name == resolved.name) {
            candidates.push((s, resolved));
        }
    }
    match candidates.len() {
        // Nothing resolves (no caching, or a tool-change rule the model does not offer): the
        // default, whose resolution then says why, or `none` for a model without caching.
        0 => return default.unwrap_or_else(Strategy::none),
        1 => return candidates.remove(0).0,
        _ => {}
    }
    let setups: Vec<SimSetup> = candidates
        .iter()
        .map(|(_, r)| SimSetup::new(model, r, scenario.first_token_seconds))
        .collect();
    // The placements of one model send the same prompts: each is built once for all of them.
    let totals = PreparedSet::new(scenario, &setups).totals(0);
    let min = totals.iter().copied().fold(f64::INFINITY, f64::min);
    let best = (0..candidates.len())
        .filter(|&k| within_rounding(totals[k], min))
        .min_by_key(|&k| candidates[k].0.breakpoints.len())
        .unwrap_or(0);
    candidates.swap_remove(best).0
}

/// Whether a total `x` is no more than `best` (within rounding: a tie counts). Placements that cost
/// the same are one answer, by this rule in `cached` and in `advise`.
pub(crate) fn within_rounding(x: f64, best: f64) -> bool {
    x - best <= 1e-9 * best.abs().max(1e-9)
}

/// The models of `ids` (empty: the scenario's, else the six measured), each once, in order. An
/// unknown id from the scenario file names the file and field.
fn select_models<'c>(
    catalog: &'c Catalog,
    scenario: &Scenario,
    ids: &[String],
) -> Result<Vec<&'c ModelSpec>> {
    let from_file = ids.is_empty() && !scenario.models.is_empty();
    let ids = if ids.is_empty() {
        &scenario.models
    } else {
        ids
    };
    let models = catalog.select(ids).map_err(|e| match e {
        Error::UnknownModel { id, hint } if from_file => Error::invalid(
            &scenario.origin,
            "models",
            format!("unknown model id `{id}`{hint} (run `pcsim models` for the list)"),
        ),
        other => other,
    })?;
    let mut unique: Vec<&ModelSpec> = Vec::with_capacity(models.len());
    for m in models {
        if !unique.iter().any(|u| u.id == m.id) {
            unique.push(m);
        }
    }
    Ok(unique)
}

/// A scenario with every (model, strategy) pair to simulate on it, resolved once. Built by
/// [`Selection::resolve`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request<'c> {
    /// The scenario, with the overrides applied and checked.
    pub scenario: Scenario,
    /// The models, each once, in the order asked.
    pub models: Vec<&'c ModelSpec>,
    /// The strategies as requested and parsed (with the baseline and variants added), in order.
    pub strategies: Vec<(String, Strategy)>,
    /// Every pair to simulate, model by model in the order of `strategies`.
    pub pairs: Vec<Pair<'c>>,
    /// Pairs not simulated, with the reason.
    pub skipped: Vec<Skipped>,
}

impl<'c> Request<'c> {
    /// The pairs of one model.
    pub(crate) fn pairs_of<'r>(
        &'r self,
        model: &'r ModelSpec,
    ) -> impl Iterator<Item = &'r Pair<'c>> + 'r {
        self.pairs.iter().filter(move |p| p.model.id == model.id)
    }

    /// The skips of one model.
    pub(crate) fn skipped_of<'r>(
        &'r self,
        model: &'r ModelSpec,
    ) -> impl Iterator<Item = &'r Skipped> + 'r {
        self.skipped.iter().filter(move |s| s.model == model.id)
    }

    /// The engine's setups of every pair for `scenario` (the request's, or a variant of it).
    pub(crate) fn setups(&self, scenario: &Scenario) -> Vec<SimSetup<'_>> {
        self.pairs
            .iter()
            .map(|p| p.setup(scenario.first_token_seconds))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::Prepared;

    /// A scenario of `sessions` sessions of `calls` calls whose tool list changes at every call
    /// from the second when `churn` (so each prompt is rebuilt from its history).
    fn churning(sessions: usize, calls: usize, churn: bool) -> Scenario {
        let mut text = format!(
            "name = \"churn\"\nmodels = [\"claude-opus-4.8\"]\n[tools]\nsynthetic = {{ count = 9, params = 1 }}\n[session]\ncalls = {calls}\n[sessions]\ncount = {sessions}\nevery_seconds = 7\n"
        );
        for i in (0..calls - 1).filter(|_| churn) {
            if i % 2 == 0 {
                text.push_str(&format!(
                    "[[event]]\nat_call = {}\nadd_synthetic = {{ count = 1, params = 1 }}\n",
                    2 + i
                ));
            } else {
                text.push_str(&format!(
                    "[[event]]\nat_call = {}\ndrop = [\"synthetic_tool_{}\"]\n",
                    2 + i,
                    9 + 1000 * i
                ));
            }
        }
        Scenario::from_toml_str(&text, "churn.toml", std::path::Path::new(".")).unwrap()
    }

    /// Prompts rebuilt on this thread while `f` runs, plus the history segments re-appended to
    /// them.
    fn rebuilt<R>(f: impl FnOnce() -> R) -> (u64, R) {
        use crate::sim::engine::REBUILT_SEGMENTS;
        let before = REBUILT_SEGMENTS.with(|n| n.get());
        let r = f();
        (REBUILT_SEGMENTS.with(|n| n.get()) - before, r)
    }

    /// Resolving `cached` compares every placement of the model, whose prompts are the same call
    /// by call: each prompt is rebuilt once for all of them, as for one simulation of the scenario
    /// (it was rebuilt once per placement: with 10,000 tool-list events that was most of the
    /// work), and the answer is that of comparing each placement's own simulation.
    #[test]
    fn resolving_cached_builds_each_prompt_once_for_every_placement() {
        let catalog = Catalog::embedded().unwrap();
        let model = catalog.model("claude-opus-4.8").unwrap();
        let scenario = churning(3, 40, true);
        let candidates = placements(model).len();
        assert!(candidates > 10, "{candidates} placements");
        let (all, best) = rebuilt(|| best_caching(model, &scenario, None));
        let resolved = best.resolve(model).unwrap();
        let setup = SimSetup::new(model, &resolved, scenario.first_token_seconds);
        let (one, alone) = rebuilt(|| {
            Prepared::new(&scenario, &setup).run(
                0,
                &mut crate::sim::engine::Workspace::new(),
                |_| {},
            )
        });
        assert!(
            one > 3 * 40 * 20,
            "one simulation re-appends {one} segments"
        );
        assert_eq!(
            all, one,
            "{candidates} placements re-appended {all} segments"
        );
        // The cheapest of the placements, each simulated alone.
        let cheapest = placements(model)
            .iter()
            .filter_map(|s| {
                let r = s.resolve(model).ok()?;
                let setup = SimSetup::new(model, &r, scenario.first_token_seconds);
                Some(Prepared::new(&scenario, &setup).run(
                    0,
                    &mut crate::sim::engine::Workspace::new(),
                    |_| {},
                ))
            })
            .fold(f64::INFINITY, f64::min);
        assert!(within_rounding(alone, cheapest), "{alone} vs {cheapest}");
    }
}
